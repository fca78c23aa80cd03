# Decides HIPDNN_EP_CUDA: ON by default when nvcc, the CUDA toolkit and the
# cuDNN headers are found (cuDNN is only dlopen'ed at run time, never linked).
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
endif()
include(CheckLanguage)
check_language(CUDA)
find_package(CUDAToolkit QUIET)
find_path(HIPDNN_EP_CUDNN_INCLUDE_DIR cudnn_backend.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include /usr/include)
set(_hd_cuda_default OFF)
if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND HIPDNN_EP_CUDNN_INCLUDE_DIR)
  set(_hd_cuda_default ON)
endif()
option(HIPDNN_EP_CUDA "build the CUDA/cuDNN backend module (libhipdnn_ep_cuda.so)" ${_hd_cuda_default})
if(HIPDNN_EP_CUDA AND NOT _hd_cuda_default)
  message(FATAL_ERROR "HIPDNN_EP_CUDA=ON but nvcc, the CUDA toolkit or cudnn_backend.h is missing")
endif()
message(STATUS "hipdnn-ep: CUDA backend module: ${HIPDNN_EP_CUDA}")
