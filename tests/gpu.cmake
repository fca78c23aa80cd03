# GPU backend tests (included by tests/CMakeLists.txt when present).
# test_backend_cuda needs no ORT: the cuda module against the ref backend.
# Without a GPU it exits 77 (SKIP).
if(TARGET hipdnn_ep_cuda)
  add_executable(test_backend_cuda test_backend_cuda.c)
  target_link_libraries(test_backend_cuda PRIVATE hd_backend hd_ir hd_ops hd_common
    ${CMAKE_DL_LIBS} m)
  target_compile_definitions(test_backend_cuda PRIVATE
    HD_CUDA_MODULE_PATH="$<TARGET_FILE:hipdnn_ep_cuda>")
  add_dependencies(test_backend_cuda hipdnn_ep_cuda)
  add_test(NAME backend_cuda COMMAND test_backend_cuda)
  set_tests_properties(backend_cuda PROPERTIES
    SKIP_RETURN_CODE 77
    LABELS "gpu"
    ENVIRONMENT "${HH_SAN_ENV}")
endif()
