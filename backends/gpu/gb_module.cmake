# hd_gpu_module(TARGET SOURCES...): the GPU backend module of one vendor,
# lib<TARGET>.so: the shared host code (backends/gpu/gb_*.c) plus the vendor's
# SOURCES, exporting only hipdnn_ep_backend_open (gb_exports.map). The caller
# adds the vendor's include folders, kernels and runtime library.
file(GLOB HD_GB_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/backends/gpu/gb_*.c)
set(HD_GB_EXPORTS ${CMAKE_SOURCE_DIR}/backends/gpu/gb_exports.map)

function(hd_gpu_module target)
  add_library(${target} MODULE ${HD_GB_SOURCES} ${ARGN})
  target_link_libraries(${target} PRIVATE hd_dnn hd_ir hd_ops hd_common
    ${CMAKE_DL_LIBS} m)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib" OUTPUT_NAME ${target}
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_LIBRARY_OUTPUT_DIRECTORY}
    LINKER_LANGUAGE C
    C_VISIBILITY_PRESET hidden
    LINK_DEPENDS ${HD_GB_EXPORTS})
  target_link_options(${target} PRIVATE -Wl,--version-script=${HD_GB_EXPORTS})
  # The engine cache's keys name the EP version (gb_engcache.c).
  target_compile_definitions(${target} PRIVATE HIPDNN_EP_VERSION="${PROJECT_VERSION}")
  if(NOT HIPDNN_EP_SANITIZE)
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
endfunction()
