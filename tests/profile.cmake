# Profiles and memory figures (ep/ep_profile.c), on the reference backend in
# CI and on the GPU under HIPDNN_EP_TEST_BACKEND=auto:
#   profile_ort*       tests/test_profile.c writes ORT's session and run
#                      profiles and the profile_file trace while 4 threads
#                      run one session; check_profile.py checks them
#   profile_tool_ort*  hipdnn-ep-run --profile on its built-in CNN, and its
#                      memory figures in the --json report
#   profile_tool_late_start_ort*  the same with the EP's clock read late
#                      at the profiling start (HIPDNN_EP_PROFILE_START_DELAY_US)
# Included by tests/CMakeLists.txt (OPTIONAL).
if(NOT TARGET hipdnn-ep-run)
  return()
endif()

find_program(HIPDNN_EP_PROFILE_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH
             DOC "python3 (standard library only) for tests/profile/check_profile.py")
if(NOT HIPDNN_EP_PROFILE_PYTHON)
  find_program(HIPDNN_EP_PROFILE_PYTHON NAMES python3)
endif()
if(NOT HIPDNN_EP_PROFILE_PYTHON)
  message(WARNING "profile.cmake: no python3 found: the profile tests will fail")
  set(HIPDNN_EP_PROFILE_PYTHON python3)
endif()

add_executable(test_profile test_profile.c)
target_link_libraries(test_profile PRIVATE hh_harness)

set(HH_PROFILE_CHECK ${CMAKE_CURRENT_SOURCE_DIR}/profile/check_profile.py)
# The built-in CNN of hipdnn-ep-run: its six Conv nodes and their weights
# and biases in bytes (tools/run/hipdnn_ep_run.c, k_layers: 2368 + 160 +
# 512 + 6432 + 18496 + 650 floats).
set(HH_PROFILE_TOOL_NODES "conv7x7_s2_asym,dw3x3,pw1x1_nobias,g4_5x5_s2_asym,conv3x3_s2_same,head1x1")
set(HH_PROFILE_TOOL_WEIGHTS 114472)

foreach(v 129 130)
  set(dir ${CMAKE_BINARY_DIR}/profile-ort${v})
  add_test(NAME profile_ort${v}
    COMMAND ${CMAKE_COMMAND}
            -DPY=${HIPDNN_EP_PROFILE_PYTHON} -DCHECK=${HH_PROFILE_CHECK}
            "-DCHECK_ARGS=expect;${dir}/expect.json"
            -DRUN=$<TARGET_FILE:test_profile> "-DRUN_ARGS=--dir;${dir}"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/profile/run_checked.cmake)
  set(tool_dir ${CMAKE_BINARY_DIR}/profile-tool-ort${v})
  file(MAKE_DIRECTORY ${tool_dir})
  add_test(NAME profile_tool_ort${v}
    COMMAND ${CMAKE_COMMAND}
            -DPY=${HIPDNN_EP_PROFILE_PYTHON} -DCHECK=${HH_PROFILE_CHECK}
            "-DCHECK_ARGS=tool;--profile;${tool_dir}/profile.json;--report;${tool_dir}/run.json;--nodes;${HH_PROFILE_TOOL_NODES};--weights;${HH_PROFILE_TOOL_WEIGHTS}"
            -DRUN=$<TARGET_FILE:hipdnn-ep-run>
            "-DRUN_ARGS=--iters;2;--profile;${tool_dir}/profile.json;--json;${tool_dir}/run.json"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/profile/run_checked.cmake)
  # The same with our clock read 3 ms late at the profiling start (a thread
  # preempted there): the steps still lie inside ORT's node events.
  set(late_dir ${CMAKE_BINARY_DIR}/profile-tool-late-ort${v})
  file(MAKE_DIRECTORY ${late_dir})
  add_test(NAME profile_tool_late_start_ort${v}
    COMMAND ${CMAKE_COMMAND} -E env HIPDNN_EP_PROFILE_START_DELAY_US=3000
            ${CMAKE_COMMAND}
            -DPY=${HIPDNN_EP_PROFILE_PYTHON} -DCHECK=${HH_PROFILE_CHECK}
            "-DCHECK_ARGS=tool;--profile;${late_dir}/profile.json;--report;${late_dir}/run.json;--nodes;${HH_PROFILE_TOOL_NODES};--weights;${HH_PROFILE_TOOL_WEIGHTS}"
            -DRUN=$<TARGET_FILE:hipdnn-ep-run>
            "-DRUN_ARGS=--iters;2;--profile;${late_dir}/profile.json;--json;${late_dir}/run.json"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/profile/run_checked.cmake)
  set_tests_properties(profile_ort${v} profile_tool_ort${v} profile_tool_late_start_ort${v} PROPERTIES
    ENVIRONMENT "HIPDNN_EP_ORT_LIB=${ORT_LIB_${v}};HIPDNN_EP_LIB=${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/libhipdnn_ep.so;${HH_SAN_ENV}"
    SKIP_RETURN_CODE ${HH_TEST_SKIP_CODE}
    TIMEOUT 300
    LABELS "ort;ort${v};profile")
endforeach()
