# Runs a program, then check_profile.py over what it wrote; fails when
# either fails. tests/profile.cmake's tests use it.
#
#   cmake -DPY=<python3> -DCHECK=<check_profile.py> -DCHECK_ARGS=<;-list>
#         -DRUN=<program> -DRUN_ARGS=<;-list> -P run_checked.cmake
#
# The environment (HIPDNN_EP_LIB, HIPDNN_EP_ORT_LIB, sanitizer options)
# reaches the program as is.
cmake_minimum_required(VERSION 3.25)
foreach(v PY CHECK RUN)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "run_checked: -D${v}=... is required")
  endif()
endforeach()
# A tree carried to another machine (scripts/gpu-check.sh) may have its
# python3 elsewhere.
if(NOT EXISTS "${PY}")
  find_program(PY_ON_PATH NAMES python3)
  if(PY_ON_PATH)
    set(PY "${PY_ON_PATH}")
  endif()
endif()
execute_process(COMMAND "${RUN}" ${RUN_ARGS} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_checked: ${RUN} exited ${rc}")
endif()
execute_process(COMMAND "${PY}" "${CHECK}" ${CHECK_ARGS} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_checked: check_profile.py failed (${rc})")
endif()
