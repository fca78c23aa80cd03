# GPU backend tests (included by tests/CMakeLists.txt when present).
# test_backend_cuda needs no ORT: the cuda module against the ref backend.
# Without a GPU it exits 77 (SKIP).
if(TARGET hipdnn_ep_cuda)
  add_executable(test_backend_cuda test_backend_cuda.c)
  target_link_libraries(test_backend_cuda PRIVATE hd_backend hd_plan hd_ops hd_ir hd_common
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

# Kernels no model reaches on demand (the generic conv fallback), called
# directly against CPU loops. Without a GPU it exits 77 (SKIP).
if(TARGET hd_gpu_kernels_cuda)
  find_package(CUDAToolkit REQUIRED)
  add_executable(test_gpu_kernels test_gpu_kernels.c)
  target_include_directories(test_gpu_kernels PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(test_gpu_kernels PRIVATE hd_gpu_kernels_cuda CUDA::cudart_static stdc++
    ${CMAKE_DL_LIBS} m)
  set_target_properties(test_gpu_kernels PROPERTIES LINKER_LANGUAGE C)
  add_test(NAME gpu_kernels COMMAND test_gpu_kernels)
  set_tests_properties(gpu_kernels PROPERTIES SKIP_RETURN_CODE 77 LABELS "gpu" ENVIRONMENT "${HH_SAN_ENV}")
endif()
