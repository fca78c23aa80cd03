// gpu_epilogue: bias + residual + activation applied in place after a
// convolution the DNN library could not fuse. CUDA C behind an extern "C"
// launcher; compiles as HIP through gpu_vendor.h.
#include "gpu/gpu_vendor.h"
#include "gpu/gpu_kernels.h"

namespace {

__device__ __forceinline__ float ld(const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ void st(float *p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ float ld(const gpu_half *p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ void st(gpu_half *p, int64_t i, float v) { p[i] = __float2half_rn(v); }

struct bf16_t {
  unsigned short bits;
};
__device__ __forceinline__ float ld(const bf16_t *p, int64_t i) {
  return __uint_as_float(((unsigned int)p[i].bits) << 16);
}
__device__ __forceinline__ void st(bf16_t *p, int64_t i, float v) {
  unsigned int u = __float_as_uint(v);
  unsigned short b;
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) {
    b = (unsigned short)((u >> 16) | 0x40u); // quiet NaN
  } else {
    u += 0x7fffu + ((u >> 16) & 1u); // round to nearest even
    b = (unsigned short)(u >> 16);
  }
  p[i].bits = b;
}

__device__ __forceinline__ float act_apply(int act, float x, float a, float b) {
  switch (act) {
    case GPU_ACT_RELU: return x > 0.f ? x : 0.f;
    case GPU_ACT_LEAKY_RELU: return x >= 0.f ? x : a * x;
    case GPU_ACT_CLIP: return fminf(fmaxf(x, a), b);
    case GPU_ACT_SIGMOID: return 1.f / (1.f + expf(-x));
    case GPU_ACT_HARD_SIGMOID: return fminf(fmaxf(a * x + b, 0.f), 1.f);
    case GPU_ACT_HARD_SWISH: return x * fminf(fmaxf(x / 6.f + 0.5f, 0.f), 1.f);
    case GPU_ACT_TANH: return tanhf(x);
    default: return x;
  }
}

template <typename T>
__global__ void epilogue_kernel(T *y, const T *bias, const T *res, int64_t n, int64_t channels,
                                int64_t inner, int act, float a, float b) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = ld(y, i);
    if (bias) v += ld(bias, (i / inner) % channels);
    if (res) v += ld(res, i);
    st(y, i, act_apply(act, v, a, b));
  }
}

template <typename T>
int launch(void *y, const void *bias, const void *res, int64_t n, int64_t channels,
           int64_t inner, int act, float a, float b, gpuStream_t s) {
  const int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 65535) blocks = 65535;
  if (blocks < 1) blocks = 1;
  epilogue_kernel<T><<<(unsigned)blocks, threads, 0, s>>>(
      (T *)y, (const T *)bias, (const T *)res, n, channels, inner, act, a, b);
  return (int)gpuGetLastError();
}

}  // namespace

extern "C" int gpu_conv_epilogue(void *y, const void *bias, const void *residual, int dtype,
                                 int64_t n, int64_t channels, int64_t inner, int act,
                                 float alpha, float beta, void *stream) {
  if (n <= 0) return 0;
  if (channels <= 0 || inner <= 0) bias = nullptr;
  gpuStream_t s = (gpuStream_t)stream;
  switch (dtype) {
    case GPU_DT_F32:
      return launch<float>(y, bias, residual, n, channels, inner, act, alpha, beta, s);
    case GPU_DT_F16:
      return launch<gpu_half>(y, bias, residual, n, channels, inner, act, alpha, beta, s);
    case GPU_DT_BF16:
      return launch<bf16_t>(y, bias, residual, n, channels, inner, act, alpha, beta, s);
    default:
      return -1; // a dtype this kernel does not take
  }
}
