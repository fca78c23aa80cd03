# Model tests (CI, no GPU): torchvision ResNet-50 and MobileNetV2 with random
# weights, exported to ONNX (opset 17, dynamic batch) by Debian's python3
# (python3-torchvision + python3-onnx: torch 1.13 CPU; scripts/fetch-deps.sh
# installs them), then run by hipdnn-ep-run on the reference backend, batch 1:
# MobileNetV2 on both runtimes, ResNet-50 on ORT 1.30 only (the reference
# backend's plain-C convolutions take ~25 s per ResNet-50 run and the tool runs
# the model four times: one checked run, two warm-ups, one timed run).
# Each test requires 100% of the nodes on
# HipDNNExecutionProvider AND outputs that match the CPU EP
# (tests/models/check_model.cmake reads the tool's --json report).
#
# Labels: "models" (ctest -L models runs just these) and "no-asan" (too slow
# under AddressSanitizer: `make asan` runs ctest -LE no-asan).
# Included by tests/CMakeLists.txt (OPTIONAL).
if(NOT TARGET hipdnn-ep-run)
  return()
endif()

# Debian's interpreter first: it is the one with torch/torchvision on the CI
# machine (a pyenv or venv python3 earlier on PATH usually has neither).
find_program(HIPDNN_EP_MODELS_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH
             DOC "python3 with torch + torchvision + onnx, for the model tests' export")
if(NOT HIPDNN_EP_MODELS_PYTHON)
  find_program(HIPDNN_EP_MODELS_PYTHON NAMES python3)
endif()
if(NOT HIPDNN_EP_MODELS_PYTHON)
  message(WARNING "models.cmake: no python3 found: the model tests will fail (install python3-torchvision python3-onnx)")
  set(HIPDNN_EP_MODELS_PYTHON python3)
endif()

set(HH_MODELS_DIR ${CMAKE_BINARY_DIR}/models)
set(HH_MODELS resnet50 mobilenet_v2)
set(HH_MODEL_RUNTIMES_resnet50 130)
set(HH_MODEL_RUNTIMES_mobilenet_v2 129 130)

# Fixture: export once (a file newer than the export script is kept).
add_test(NAME models_export
  COMMAND ${HIPDNN_EP_MODELS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/models/export_torchvision.py
          --out ${HH_MODELS_DIR} --opset 17 ${HH_MODELS})
set_tests_properties(models_export PROPERTIES
  FIXTURES_SETUP hh_models
  TIMEOUT 300
  LABELS "models;no-asan")

# hh_model_test(MODEL RUNTIME FIXTURE TIMEOUT LABELS CHECK_ARGS...): one
# check_model.cmake run of MODEL.onnx on the reference backend, named
# model_MODEL<hh_model_suffix>_ortRUNTIME.
function(hh_model_test m v fixture timeout labels)
  set(name model_${m}${hh_model_suffix}_ort${v})
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND}
            -DRUN=$<TARGET_FILE:hipdnn-ep-run>
            -DMODEL=${HH_MODELS_DIR}/${m}.onnx
            -DJSON=${HH_MODELS_DIR}/${m}${hh_model_suffix}-ort${v}.run.json
            -DBACKEND=ref ${ARGN}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/models/check_model.cmake)
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "HIPDNN_EP_ORT_LIB=${ORT_LIB_${v}};HIPDNN_EP_LIB=${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/libhipdnn_ep.so;${HH_SAN_ENV}"
    FIXTURES_REQUIRED ${fixture}
    TIMEOUT ${timeout}
    LABELS "${labels};ort;ort${v}")
endfunction()

foreach(m ${HH_MODELS})
  foreach(v ${HH_MODEL_RUNTIMES_${m}})
    hh_model_test(${m} ${v} hh_models 600 "models;no-asan" -DBATCH=1)
  endforeach()
endforeach()

# Transformer-family models (tests/models/export_transformers.py: toy BERT,
# GPT, ViT, ConvNeXt and torch.nn.TransformerEncoder from Debian's torch):
# every node on the EP, in ONE partition (shape arithmetic computed when
# plans are built), outputs matching the CPU EP; both runtimes; two
# sequence lengths per run (batch 1 and 2 through --batch).
set(HH_TX_MODELS bert gpt vit convnext torch_encoder)
add_test(NAME models_export_transformers
  COMMAND ${HIPDNN_EP_MODELS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/models/export_transformers.py
          --out ${HH_MODELS_DIR} --opset 17 ${HH_TX_MODELS})
set_tests_properties(models_export_transformers PROPERTIES
  FIXTURES_SETUP hh_tx_models
  TIMEOUT 300
  LABELS "models")
foreach(m ${HH_TX_MODELS})
  foreach(v 129 130)
    hh_model_test(${m} ${v} hh_tx_models 300 "models" -DBATCH=2,1 -DPARTITIONS=1 -DSEQ=11)
  endforeach()
endforeach()

# Provider option precision (fp16, bf16) on the same models: every node on
# the EP in one partition, outputs within half precision's relative L2 of
# the CPU EP's fp32 ones (1e-2 fp16, 5e-2 bf16; hipdnn-ep-run --precision);
# and MobileNetV2 (depthwise and 1x1 convolutions, Clip) at bf16, ORT 1.30.
# Not MobileNetV2 at fp16: with torchvision's random initialisation its
# logits are of order 1e-9, below fp16's smallest number (6e-8), so they
# flush to zero (trained weights give logits of order 1-10); bf16 has
# fp32's range.
foreach(p fp16 bf16)
  set(hh_model_suffix _${p})
  foreach(m ${HH_TX_MODELS})
    hh_model_test(${m} 130 hh_tx_models 300 "models" -DBATCH=2,1 -DPARTITIONS=1 -DSEQ=11 -DPRECISION=${p})
  endforeach()
endforeach()
set(hh_model_suffix _bf16)
hh_model_test(mobilenet_v2 130 hh_models 600 "models;no-asan" -DBATCH=1 -DPRECISION=bf16)
unset(hh_model_suffix)
