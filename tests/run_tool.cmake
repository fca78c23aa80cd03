# hipdnn-ep-run's own tests beyond run_default and run_threads (included by
# tests/CMakeLists.txt): timing by count and by duration, latency
# percentiles, provider options passed through, the report of the nodes the
# EP leaves and why, and IO binding. Each runs the tool and checks its
# output and --json report (run_tool_check.cmake), on both runtimes, on the
# device the tool picks (the reference backend here).
if(NOT TARGET hipdnn-ep-run)
  return()
endif()

find_program(HIPDNN_EP_RUN_TOOL_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH
             DOC "python3 with numpy + onnx, for tests/models/gen_partial.py")
if(NOT HIPDNN_EP_RUN_TOOL_PYTHON)
  find_program(HIPDNN_EP_RUN_TOOL_PYTHON NAMES python3)
endif()

set(HH_RUN_TOOL_DIR ${CMAKE_BINARY_DIR}/run_tool)
# Fixture: the partly supported model.
add_test(NAME run_tool_model
  COMMAND ${HIPDNN_EP_RUN_TOOL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/models/gen_partial.py
          ${HH_RUN_TOOL_DIR}/partial.onnx)
set_tests_properties(run_tool_model PROPERTIES FIXTURES_SETUP hh_run_tool_model TIMEOUT 120)

foreach(check iters duration option_unknown option_known unsupported io_binding)
  foreach(v 129 130)
    set(name run_${check}_ort${v})
    add_test(NAME ${name}
      COMMAND ${CMAKE_COMMAND}
              -DRUN=$<TARGET_FILE:hipdnn-ep-run> -DCHECK=${check}
              -DOUT=${HH_RUN_TOOL_DIR}/ort${v} -DMODEL=${HH_RUN_TOOL_DIR}/partial.onnx
              -P ${CMAKE_CURRENT_SOURCE_DIR}/run_tool_check.cmake)
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT "HIPDNN_EP_ORT_LIB=${ORT_LIB_${v}};HIPDNN_EP_LIB=${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/libhipdnn_ep.so;${HH_SAN_ENV}"
      TIMEOUT 300
      LABELS "ort;ort${v}")
    if(check STREQUAL "unsupported")
      set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED hh_run_tool_model)
    endif()
  endforeach()
endforeach()
