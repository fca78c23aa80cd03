# Runs hipdnn-ep-run on one model and checks its --json report: every node on
# HipDNNExecutionProvider, and the outputs match the CPU EP (PASS).
#
#   cmake -DRUN=<hipdnn-ep-run> -DMODEL=<model.onnx> -DJSON=<report.json>
#         [-DBACKEND=ref] [-DBATCH=1] [-DPARTITIONS=N] [-DSEQ=N]
#         [-DPRECISION=fp16|bf16] -P check_model.cmake
# PARTITIONS: the number of partitions the EP must get; SEQ: hipdnn-ep-run's
# --seq (symbolic dims past the first); PRECISION: its --precision (the
# outputs are then judged by their relative L2 error).
#
# The environment (HIPDNN_EP_LIB, HIPDNN_EP_ORT_LIB) reaches the tool as is.
# Fails (FATAL_ERROR) when the tool fails, writes no report, leaves any node
# to another EP, or the comparison fails.
cmake_minimum_required(VERSION 3.25) # string(JSON)

foreach(v RUN MODEL JSON)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "check_model: -D${v}=... is required")
  endif()
endforeach()
if(NOT DEFINED BACKEND)
  set(BACKEND ref)
endif()
if(NOT DEFINED BATCH)
  set(BATCH 1)
endif()
set(EP HipDNNExecutionProvider)

if(NOT EXISTS "${MODEL}")
  message(FATAL_ERROR "check_model: model ${MODEL} does not exist (the models_export fixture makes it)")
endif()

file(REMOVE "${JSON}")
string(TIMESTAMP t0 "%s" UTC)
set(extra "")
if(DEFINED SEQ)
  list(APPEND extra --seq ${SEQ})
endif()
if(DEFINED PRECISION)
  list(APPEND extra --precision ${PRECISION})
endif()
execute_process(
  COMMAND "${RUN}" "${MODEL}" --backend ${BACKEND} --batch ${BATCH} --iters 1 --json "${JSON}" ${extra}
  RESULT_VARIABLE rc)
string(TIMESTAMP t1 "%s" UTC)
math(EXPR wall "${t1} - ${t0}")
get_filename_component(name "${MODEL}" NAME_WE)

if(NOT EXISTS "${JSON}")
  message(FATAL_ERROR "check_model: ${name}: hipdnn-ep-run exited ${rc} and wrote no report ${JSON}")
endif()
file(READ "${JSON}" j)

string(JSON nrows ERROR_VARIABLE jerr LENGTH "${j}" assignment)
if(jerr)
  message(FATAL_ERROR "check_model: ${name}: bad report ${JSON}: ${jerr}")
endif()
set(total 0)
set(on_ep 0)
set(elsewhere "")
if(nrows GREATER 0)
  math(EXPR last "${nrows} - 1")
  foreach(i RANGE ${last})
    string(JSON ep GET "${j}" assignment ${i} ep)
    string(JSON op GET "${j}" assignment ${i} op)
    string(JSON n GET "${j}" assignment ${i} count)
    math(EXPR total "${total} + ${n}")
    if(ep STREQUAL EP)
      math(EXPR on_ep "${on_ep} + ${n}")
    else()
      list(APPEND elsewhere "${op} x${n} on ${ep}")
    endif()
  endforeach()
endif()

string(JSON cmp_type ERROR_VARIABLE jerr TYPE "${j}" compare)
set(pass OFF)
if(NOT jerr AND cmp_type STREQUAL "OBJECT")
  string(JSON pass GET "${j}" compare pass)
endif()

string(JSON parts ERROR_VARIABLE jerr GET "${j}" partitions)
if(jerr)
  set(parts "?")
endif()
set(summary "${name}: ${on_ep}/${total} nodes on ${EP} in ${parts} partition(s), compare vs CPU EP: ")
if(pass)
  string(APPEND summary "PASS")
else()
  string(APPEND summary "FAIL")
endif()
string(APPEND summary ", hipdnn-ep-run exit ${rc}, ${wall} s")
message(STATUS "check_model: ${summary}")

set(problems "")
if(total EQUAL 0)
  list(APPEND problems "no nodes in the assignment report")
endif()
if(NOT on_ep EQUAL total)
  list(JOIN elsewhere ", " e)
  list(APPEND problems "nodes not on ${EP}: ${e}")
endif()
if(DEFINED PARTITIONS AND NOT parts STREQUAL "${PARTITIONS}")
  list(APPEND problems "${parts} partitions, expected ${PARTITIONS}")
endif()
if(NOT pass)
  list(APPEND problems "outputs differ from the CPU EP (or carry no signal)")
endif()
if(NOT rc EQUAL 0)
  list(APPEND problems "hipdnn-ep-run exited ${rc}")
endif()
if(problems)
  list(JOIN problems "; " p)
  message(FATAL_ERROR "check_model: ${name}: FAIL: ${p}")
endif()
