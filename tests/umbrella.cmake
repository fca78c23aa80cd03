# Our EP behind AMD's umbrella EP (issue 18). The shim is a test double of
# the umbrella and its HIP backend shim: a plugin EP library that dlopens ours
# (HIPDNN_EP_LIB, which hh_add_ort_test sets) and calls it as the umbrella
# does; test_umbrella registers it with ORT as AMDGPUExecutionProvider.
find_package(Threads REQUIRED)
add_library(hipdnn_umbrella_shim SHARED ${CMAKE_CURRENT_SOURCE_DIR}/umbrella_shim/umbrella_shim.c)
target_include_directories(hipdnn_umbrella_shim PRIVATE ${ORT_INCLUDE_DIR})
target_compile_options(hipdnn_umbrella_shim PRIVATE -fvisibility=hidden)
target_compile_definitions(hipdnn_umbrella_shim PRIVATE
  UMBRELLA_SHIM_BACKEND_LIB="${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/libhipdnn_ep.so")
target_link_libraries(hipdnn_umbrella_shim PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
# The same two exports as a real plugin EP library.
target_link_options(hipdnn_umbrella_shim PRIVATE
  -Wl,--version-script=${CMAKE_SOURCE_DIR}/ep/exports.map -Wl,--no-undefined)

add_executable(test_umbrella ${CMAKE_CURRENT_SOURCE_DIR}/test_umbrella.c)
target_link_libraries(test_umbrella PRIVATE hh_harness)
# HIPDNN_EP_SHIM_LIB overrides the path (a build moved elsewhere).
target_compile_definitions(test_umbrella PRIVATE UMBRELLA_SHIM_LIB="$<TARGET_FILE:hipdnn_umbrella_shim>")
add_dependencies(test_umbrella hipdnn_umbrella_shim hipdnn_ep)
hh_add_ort_test(umbrella test_umbrella)
