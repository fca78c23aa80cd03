# The vendor tables against the descriptor builder (tests/test_dnn_tables.c):
# no GPU, no cuDNN or hipDNN library needed, so it runs in CI. Included by
# tests/CMakeLists.txt (OPTIONAL).
# A test of the builder over both vendors' tables (and a mock library).
function(hd_dnn_unit_test name test)
  add_executable(${name} ${name}.c)
  target_link_libraries(${name} PRIVATE hd_dnn_table_hip hd_dnn hd_common m)
  if(TARGET hd_dnn_table_cuda)
    target_link_libraries(${name} PRIVATE hd_dnn_table_cuda)
    target_compile_definitions(${name} PRIVATE HD_HAVE_CUDNN_TABLE=1)
  endif()
  add_test(NAME ${test} COMMAND ${name})
  set_tests_properties(${test} PROPERTIES LABELS "unit" ENVIRONMENT "${HH_SAN_ENV}")
endfunction()
hd_dnn_unit_test(test_dnn_tables unit_dnn_tables)

# The HIP module's handshake with the core (API version, build layout) and
# its clean NOT_FOUND where there is no AMD GPU: runs on any machine.
if(TARGET hipdnn_ep_hip)
  add_executable(test_backend_hip test_backend_hip.c)
  target_link_libraries(test_backend_hip PRIVATE hd_ops hd_ir hd_common ${CMAKE_DL_LIBS})
  target_compile_definitions(test_backend_hip PRIVATE
    HD_HIP_MODULE_PATH="$<TARGET_FILE:hipdnn_ep_hip>")
  add_dependencies(test_backend_hip hipdnn_ep_hip)
  add_test(NAME backend_hip_handshake COMMAND test_backend_hip)
  set_tests_properties(backend_hip_handshake PROPERTIES LABELS "unit;hip" ENVIRONMENT "${HH_SAN_ENV}")
endif()

# The engine cache's file (common/hd_diskcache) and the builder's recorded,
# replayed engine choices (tests/test_engine_cache.c): no GPU needed.
hd_dnn_unit_test(test_engine_cache unit_engine_cache)
