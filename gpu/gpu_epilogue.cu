// gpu_epilogue: bias + residual + activation applied in place after a
// convolution the DNN library could not fuse (or a 1x1 convolution run as a
// matmul). Each block walks one channel plane at a time, so the channel is
// found once per plane and the inner loop is 32-bit. CUDA C behind an
// extern "C" launcher; compiles as HIP through gpu_vendor.h.
#include "gpu/gpu_common.cuh"

namespace {

template <typename T>
__global__ void epilogue_kernel(T *y, const T *bias, const T *res, int64_t planes, int64_t channels,
                                int inner, int act, float a, float b) {
  for (int64_t plane = blockIdx.y; plane < planes; plane += gridDim.y) {
    const float b0 = bias ? gpu::ld(bias, plane % channels) : 0.f;
    T *yp = y + plane * (int64_t)inner;
    const T *rp = res ? res + plane * (int64_t)inner : nullptr;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < inner; i += gridDim.x * blockDim.x) {
      float v = gpu::ld(yp, i) + b0;
      if (rp) v += gpu::ld(rp, i);
      gpu::st(yp, i, gpu::act(act, v, a, b));
    }
  }
}

template <typename T>
int launch(void *y, const void *bias, const void *res, int64_t n, int64_t channels, int64_t inner,
           int act, float a, float b, gpuStream_t s) {
  const int threads = 256;
  int64_t planes = n / inner;
  dim3 grid((unsigned)((inner + threads - 1) / threads), (unsigned)(planes < 65535 ? planes : 65535));
  if (grid.x > 1024) grid.x = 1024;
  epilogue_kernel<T><<<grid, threads, 0, s>>>((T *)y, (const T *)bias, (const T *)res, planes,
                                                channels, (int)inner, act, a, b);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_conv_epilogue(void *y, const void *bias, const void *residual, int dtype,
                                 int64_t n, int64_t channels, int64_t inner, int act,
                                 float alpha, float beta, void *stream) {
  if (n <= 0) return 0;
  if (channels <= 0 || inner <= 0 || n % inner != 0) {
    bias = nullptr;
    inner = n;  // one plane: no per-channel bias to find
  }
  if (inner >= ((int64_t)1 << 31)) return -1;
  GPU_DISPATCH(dtype, launch, y, bias, residual, n, channels > 0 ? channels : 1, inner, act, alpha,
               beta, (gpuStream_t)stream);
}
