// gpu_epilogue: bias + residual + activation applied in place after a
// convolution the DNN library could not fuse. CUDA C behind an extern "C"
// launcher; compiles as HIP through gpu_vendor.h.
#include "gpu/gpu_common.cuh"

namespace {

template <typename T>
__global__ void epilogue_kernel(T *y, const T *bias, const T *res, int64_t n, int64_t channels,
                                int64_t inner, int act, float a, float b) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = gpu::ld(y, i);
    if (bias) v += gpu::ld(bias, (i / inner) % channels);
    if (res) v += gpu::ld(res, i);
    gpu::st(y, i, gpu::act(act, v, a, b));
  }
}

template <typename T>
int launch(void *y, const void *bias, const void *res, int64_t n, int64_t channels, int64_t inner,
           int act, float a, float b, gpuStream_t s) {
  const int threads = 256;
  epilogue_kernel<T><<<gpu::blocks_for(n, threads), threads, 0, s>>>(
      (T *)y, (const T *)bias, (const T *)res, n, channels, inner, act, a, b);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_conv_epilogue(void *y, const void *bias, const void *residual, int dtype,
                                 int64_t n, int64_t channels, int64_t inner, int act,
                                 float alpha, float beta, void *stream) {
  if (n <= 0) return 0;
  if (channels <= 0 || inner <= 0) bias = nullptr;
  GPU_DISPATCH(dtype, launch, y, bias, residual, n, channels, inner, act, alpha, beta,
               (gpuStream_t)stream);
}
