# ONNX node test conformance gate (included by tests/CMakeLists.txt).
#
# hipdnn-ep-conformance runs every case of ../shared/onnx-node-tests/node
# through ORT with the EP's ref backend, once per runtime (1.29 and 1.30);
# any claimed case that is wrong, crashes or times out fails the test (the
# tool exits 1; its last line is "N passed, N failed"). A missing cases
# folder makes the tool exit 2: the test fails, it never passes silently.
#
# Sanitizer build (HIPDNN_EP_SANITIZE): the Conv-family cases only (--filter
# conv, about 50 cases), so AddressSanitizer/UBSan cover the EP's main path
# and the runner without multiplying the full suite's time.
if(NOT TARGET hipdnn-ep-conformance)
  return()
endif()

set(CF_CASES_DIR ${CMAKE_SOURCE_DIR}/../shared/onnx-node-tests/node)
if(NOT EXISTS ${CF_CASES_DIR})
  message(WARNING "ONNX node tests not found at ${CF_CASES_DIR}: the conformance tests will fail")
endif()

set(CF_ARGS --cases ${CF_CASES_DIR} --backend ref --jobs 2 --timeout 60 --no-table)
if(HIPDNN_EP_SANITIZE)
  list(APPEND CF_ARGS --filter conv)
endif()

foreach(v 129 130)
  set(name conformance_ort${v})
  add_test(NAME ${name} COMMAND hipdnn-ep-conformance ${CF_ARGS}
           --json ${CMAKE_BINARY_DIR}/conformance-ref-ort${v}.json)
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "HIPDNN_EP_ORT_LIB=${ORT_LIB_${v}};HIPDNN_EP_LIB=${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/libhipdnn_ep.so;${HH_SAN_ENV}"
    PROCESSORS 2
    TIMEOUT 600
    LABELS "ort;ort${v};conformance")
endforeach()

# The runner's reader and comparator on their own (no ORT).
add_test(NAME conformance_unit COMMAND cf_test ${CF_CASES_DIR})
set_tests_properties(conformance_unit PROPERTIES
  ENVIRONMENT "${HH_SAN_ENV}" LABELS "conformance")

# Fuzz: mutants of the node tests of the ops we run (bit flips, truncated
# files, extreme attribute values, shapes that disagree) through session
# creation and one Run with the ref backend, each in its own process. Any
# crash, hang or answer that differs from the CPU EP's fails the test
# (ONNX Runtime's own crashes, without our EP, are told apart). A fixed seed
# keeps CI reproducible; the sanitizer build runs fewer, under ASan/UBSan.
set(CF_FUZZ_OPS "conv|pool|relu|gemm|matmul|softmax|reduce_mean|concat|_add|_sub|_mul|_div|batchnorm|flatten|reshape|squeeze|sigmoid|tanh|clip|leakyrelu|hardsigmoid|hardswish|identity|dropout")
set(CF_FUZZ_N 600)
if(HIPDNN_EP_SANITIZE)
  set(CF_FUZZ_N 200)
endif()
add_test(NAME fuzz_ort130 COMMAND hipdnn-ep-conformance --cases ${CF_CASES_DIR} --backend ref
         --fuzz ${CF_FUZZ_N} --seed 20261123 --jobs 2 --timeout 60 --filter ${CF_FUZZ_OPS})
set_tests_properties(fuzz_ort130 PROPERTIES
  ENVIRONMENT "HIPDNN_EP_ORT_LIB=${ORT_LIB_130};HIPDNN_EP_LIB=${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/libhipdnn_ep.so;${HH_SAN_ENV}"
  PROCESSORS 2
  TIMEOUT 900
  LABELS "ort;ort130;conformance;fuzz")
