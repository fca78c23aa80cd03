# LLM decoders in onnxruntime-genai's layout (included by tests/CMakeLists.txt).
#
# tools/llm/gen_decoder.py writes each model at build time into
# build/llm/<name>/ (model.onnx + model.onnx.data, genai_config.json, and
# reference.bin: the numpy greedy decode the tests check the CPU EP
# against). A python3 that cannot import onnx writes build/llm/<name>/SKIP
# with the reason instead, and every test of that model exits 77 (SKIP).
#
# decoder_<name>          the model on our EP with CPU fallback against the
#                         CPU EP: prefill of 12 tokens at batch 1 and 2, then
#                         50 greedy steps with the KV cache, shared and
#                         separate past/present; logits and tokens per step.
# decoder_full_ep_<name>  the same, then a session with CPU fallback off: it
#                         must hold every node. SKIP while the only nodes left
#                         to the CPU EP are of the op types in HH_LLM_PENDING
#                         (any other unclaimed op, wrong token or logits
#                         mismatch FAILS). Empty now: every op is ours.
if(NOT TARGET hh_harness)
  return()
endif()

# Op types our EP does not claim yet in these models: the contrib ops being
# added on other branches, and ReduceSum (the sum over the int64
# attention_mask that becomes GroupQueryAttention's seqlens_k; the EP has
# ReduceMean only). Sub and Cast after it are already ours.
set(HH_LLM_PENDING "")

# Debian's interpreter first (python3-onnx); a pyenv/venv python3 earlier on
# PATH usually has no onnx.
find_program(HIPDNN_EP_LLM_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH
             DOC "python3 with numpy + onnx, for tools/llm/gen_decoder.py")
if(NOT HIPDNN_EP_LLM_PYTHON)
  find_program(HIPDNN_EP_LLM_PYTHON NAMES python3)
endif()

add_executable(test_decoder test_decoder.c llm_model.c)
target_link_libraries(test_decoder PRIVATE hh_harness m)

set(HH_LLM_DIR ${CMAKE_BINARY_DIR}/llm)
set(HH_LLM_GEN ${CMAKE_SOURCE_DIR}/tools/llm/gen_decoder.py)
# Batch sizes, prompt length and steps of the tests; the numpy reference is
# decoded for the same cases. 12 + 60 tokens cross the first width bucket
# (64) a growing attention mask is planned at (plan/plan_pad.c).
set(HH_LLM_CASES 1:12:60,2:12:60)
set(HH_LLM_STAMPS "")

# hh_llm_model(NAME TEST_ARGS GEN_ARGS...): generates build/llm/NAME and
# registers decoder_NAME and decoder_full_ep_NAME (both runtimes).
function(hh_llm_model name test_args)
  set(dir ${HH_LLM_DIR}/${name})
  if(HIPDNN_EP_LLM_PYTHON)
    add_custom_command(OUTPUT ${dir}/gen.stamp
      COMMAND ${HIPDNN_EP_LLM_PYTHON} ${HH_LLM_GEN} --out ${dir} --skip-marker ${dir}/SKIP
              --reference ${HH_LLM_CASES} ${ARGN}
      COMMAND ${CMAKE_COMMAND} -E touch ${dir}/gen.stamp
      DEPENDS ${HH_LLM_GEN}
      COMMENT "gen_decoder.py: ${name}"
      VERBATIM)
    set(HH_LLM_STAMPS ${HH_LLM_STAMPS} ${dir}/gen.stamp PARENT_SCOPE)
  else()
    file(WRITE ${dir}/SKIP "no python3 found when CMake configured this build\n")
  endif()
  set(args --model ${dir} --batch 1,2 --prompt 12 --gen 60 ${test_args})
  hh_add_ort_test(decoder_${name} test_decoder ${args})
  set(pending "")
  if(HH_LLM_PENDING)
    set(pending --pending ${HH_LLM_PENDING})
  endif()
  hh_add_ort_test(decoder_full_ep_${name} test_decoder ${args} --full-ep ${pending})
endfunction()

# The builder's CPU model (fp32, GroupQueryAttention), its CUDA model (fp16),
# the int4 models (MatMulNBits, block 32; symmetric as the builder's default,
# and with zero points; accuracy_level 0 so MatMulNBits is exact dequant-then-
# fp32 and the numpy reference holds at 1e-4), and the packed com.microsoft
# Attention form (equal Q and KV heads: ORT's Attention needs them equal).
hh_llm_model(tiny_fp32 "--reference")
hh_llm_model(tiny_fp16 "" --dtype fp16)
hh_llm_model(tiny_int4 "--reference" --quant int4 --accuracy-level 0)
hh_llm_model(tiny_int4_zp "--reference" --quant int4 --zero-points --accuracy-level 0 --seed 2)
hh_llm_model(tiny_int4_fp16 "" --quant int4 --dtype fp16 --seed 3)
hh_llm_model(tiny_ms "--reference" --attention ms --kv-heads 4 --seed 4)
# int4 fp16 at K = 256 and 512: each column's scales are whole 16-byte
# runs, so on an sm_90 GPU every one-row GEMV of a decode step copies its
# weights to shared memory (gemv_bulk; tiny_int4_fp16's K = 64 does not)
hh_llm_model(int4_fp16_k256 "" --quant int4 --dtype fp16 --seed 5 --hidden 256 --heads 4 --kv-heads 2 --head-dim 64
             --mlp 512 --vocab 512)

# A KV cache of 700 rows with head size 64 (no numpy reference): on a GPU,
# decode's kernel then cuts the keys into 11 (fp16) or 22 (fp32) ranges, and
# GenAI's in-place buffers make it append the new row into whichever range
# holds it; genai_contract_long_kv_* below decode across a range boundary.
set(HH_LLM_LONG_KV --layers 2 --hidden 256 --heads 8 --kv-heads 2 --head-dim 64 --mlp 256 --vocab 512 --max-len 700)
foreach(dt fp32 fp16)
  set(dir ${HH_LLM_DIR}/long_kv_${dt})
  if(HIPDNN_EP_LLM_PYTHON)
    add_custom_command(OUTPUT ${dir}/gen.stamp
      COMMAND ${HIPDNN_EP_LLM_PYTHON} ${HH_LLM_GEN} --out ${dir} --skip-marker ${dir}/SKIP --dtype ${dt} ${HH_LLM_LONG_KV}
      COMMAND ${CMAKE_COMMAND} -E touch ${dir}/gen.stamp
      DEPENDS ${HH_LLM_GEN}
      COMMENT "gen_decoder.py: long_kv_${dt}"
      VERBATIM)
    list(APPEND HH_LLM_STAMPS ${dir}/gen.stamp)
  else()
    file(WRITE ${dir}/SKIP "no python3 found when CMake configured this build\n")
  endif()
endforeach()
add_custom_target(hh_llm_models ALL DEPENDS ${HH_LLM_STAMPS})

# onnxruntime-genai's calling contract (issue 18): registered as
# AMDGPUExecutionProvider, init session + allocator lookup, KV cache from that
# allocator bound as past and present through IoBinding, 60 greedy steps
# against the CPU EP (tests/test_genai_contract.c); then 4 generators on one
# session at once, each against itself run alone (prompts 12-36: their
# masks cross the 64-column bucket at different steps).
find_package(Threads REQUIRED)
add_executable(test_genai_contract test_genai_contract.c llm_model.c)
target_link_libraries(test_genai_contract PRIVATE hh_harness m Threads::Threads)
hh_add_ort_test(genai_contract test_genai_contract --model ${HH_LLM_DIR}/tiny_fp32 --steps 60 --generators 4)
hh_add_ort_test(genai_contract_fp16 test_genai_contract --model ${HH_LLM_DIR}/tiny_fp16 --steps 60 --generators 4)
# in place over many key ranges (above): positions 150-249 (fp32's ranges are
# 32 rows), 180-209 (fp16's are 64: 191 -> 192 crosses one)
hh_add_ort_test(genai_contract_long_kv test_genai_contract --model ${HH_LLM_DIR}/long_kv_fp32 --prompt 150 --steps 100)
hh_add_ort_test(genai_contract_long_kv_fp16 test_genai_contract --model ${HH_LLM_DIR}/long_kv_fp16 --prompt 180 --steps 30)
