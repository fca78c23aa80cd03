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
