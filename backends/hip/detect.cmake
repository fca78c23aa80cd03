# Decides HIPDNN_EP_HIP: ON by default when hipcc, the HIP headers and the HIP
# runtime library are found (hipDNN is only dlopen'ed at run time, never
# linked). Looks in $ROCM_PATH / $HIP_PATH / /opt/rocm first (a ROCm or TheRock
# install), then the system (Debian's hipcc + libamdhip64-dev, what CI uses).
# Then probes which GPU targets (HIPDNN_EP_HIP_ARCHS) this hipcc can build:
# HIPDNN_EP_HIP_ARCHS_BUILT lists the ones it can; the others are dropped with
# a message (Debian's clang-15 knows no gfx942 and has no gfx1100 device library).
set(_hd_rocm_hints $ENV{ROCM_PATH} $ENV{HIP_PATH} /opt/rocm)
find_program(HIPDNN_EP_HIPCC hipcc HINTS ${_hd_rocm_hints} PATH_SUFFIXES bin)
find_path(HIPDNN_EP_HIP_INCLUDE_DIR hip/hip_runtime_api.h HINTS ${_hd_rocm_hints}
  PATH_SUFFIXES include)
find_library(HIPDNN_EP_AMDHIP64 amdhip64 HINTS ${_hd_rocm_hints} PATH_SUFFIXES lib lib64)
set(_hd_hip_default OFF)
if(HIPDNN_EP_HIPCC AND HIPDNN_EP_HIP_INCLUDE_DIR AND HIPDNN_EP_AMDHIP64)
  set(_hd_hip_default ON)
endif()
option(HIPDNN_EP_HIP "build the HIP/hipDNN backend module (libhipdnn_ep_hip.so)" ${_hd_hip_default})
if(HIPDNN_EP_HIP AND NOT _hd_hip_default)
  message(FATAL_ERROR "HIPDNN_EP_HIP=ON but hipcc, hip/hip_runtime_api.h or libamdhip64 is "
                      "missing (set ROCM_PATH, or install hipcc and libamdhip64-dev)")
endif()

set(HIPDNN_EP_HIP_ARCHS "gfx90a;gfx942;gfx1100" CACHE STRING
  "AMD GPU targets to build the kernels for (those hipcc cannot build are dropped)")
if(HIPDNN_EP_HIP)
  # One probe per target, cached by compiler and target list.
  set(_hd_key "2|${HIPDNN_EP_HIPCC}|${HIPDNN_EP_HIP_ARCHS}")
  if(NOT _hd_key STREQUAL HIPDNN_EP_HIP_PROBE_KEY)
    set(_dir ${CMAKE_BINARY_DIR}/hip_probe)
    file(WRITE ${_dir}/probe.hip
      "#include <hip/hip_runtime.h>\n__global__ void hd_probe(float *p) { p[threadIdx.x] = 1.f; }\n")
    set(_built "")
    set(_dropped "")
    foreach(_arch IN LISTS HIPDNN_EP_HIP_ARCHS)
      execute_process(
        COMMAND ${HIPDNN_EP_HIPCC} -x hip -c --offload-arch=${_arch} -D__HIP_PLATFORM_AMD__=1
                ${_dir}/probe.hip -o ${_dir}/probe_${_arch}.o
        RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
      if(_rc EQUAL 0)
        list(APPEND _built ${_arch})
      else()
        string(REGEX REPLACE "\n.*" "" _why "${_err}")
        string(REPLACE ";" "," _why "${_why}")
        list(APPEND _dropped "${_arch} (${_why})")
      endif()
    endforeach()
    set(HIPDNN_EP_HIP_ARCHS_BUILT "${_built}" CACHE INTERNAL "")
    set(HIPDNN_EP_HIP_ARCHS_DROPPED "${_dropped}" CACHE INTERNAL "")
    set(HIPDNN_EP_HIP_PROBE_KEY "${_hd_key}" CACHE INTERNAL "")
  endif()
  if(NOT HIPDNN_EP_HIP_ARCHS_BUILT)
    message(FATAL_ERROR "HIPDNN_EP_HIP: ${HIPDNN_EP_HIPCC} builds none of HIPDNN_EP_HIP_ARCHS "
                        "(${HIPDNN_EP_HIP_ARCHS}): ${HIPDNN_EP_HIP_ARCHS_DROPPED}")
  endif()
  message(STATUS "hipdnn-ep: HIP backend module: ON (${HIPDNN_EP_HIPCC}); kernels for "
                 "${HIPDNN_EP_HIP_ARCHS_BUILT}")
  foreach(_d IN LISTS HIPDNN_EP_HIP_ARCHS_DROPPED)
    message(STATUS "hipdnn-ep: HIP target dropped, this hipcc cannot build it: ${_d}")
  endforeach()
else()
  message(STATUS "hipdnn-ep: HIP backend module: OFF")
endif()
