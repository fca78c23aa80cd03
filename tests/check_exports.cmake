# cmake -DLIB=path/to/libhipdnn_ep.so -P check_exports.cmake
# Passes when the library's dynamic symbol table defines exactly
# CreateEpFactories and ReleaseEpFactory.
#
# Ignored: symbols of type A (absolute), which a linker version script adds
# as version-node names (e.g. "VERS_1.0"), and the linker-made section
# markers _init, _fini, _edata, _end, __bss_start: none is code or data of
# ours that a host could call into.
if(NOT LIB OR NOT EXISTS "${LIB}")
  message(FATAL_ERROR "exports: EP library not found: '${LIB}'")
endif()
find_program(NM nm REQUIRED)
execute_process(COMMAND ${NM} -D --defined-only "${LIB}"
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exports: nm failed (${rc}): ${err}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(found "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-fA-F]* *([A-Za-z]) +([^ @]+)")
    set(type ${CMAKE_MATCH_1})
    set(sym ${CMAKE_MATCH_2})
    if(type STREQUAL "A" OR sym MATCHES "^(_init|_fini|_edata|_end|__bss_start)$")
      continue()
    endif()
    list(APPEND found ${sym})
  endif()
endforeach()
list(SORT found)
set(want CreateEpFactories ReleaseEpFactory)
if(NOT found STREQUAL want)
  message(FATAL_ERROR "exports: expected exactly '${want}', found: '${found}'")
endif()
message(STATUS "exports: ${found}")
