// gpu_common: device helpers shared by the kernel files (gpu_*.cu): element
// loads/stores in fp32 for every element type, activations, block launch
// sizes. Included by .cu files only; compiles with nvcc and hipcc.
#ifndef GPU_COMMON_CUH
#define GPU_COMMON_CUH

#include "gpu/gpu_kernels.h"
#include "gpu/gpu_vendor.h"

namespace gpu {

struct bf16 {
  unsigned short bits;
};

__device__ __forceinline__ float ld(const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ void st(float *p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ float ld(const gpu_half *p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ void st(gpu_half *p, int64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ __forceinline__ float ld(const bf16 *p, int64_t i) {
  return __uint_as_float(((unsigned int)p[i].bits) << 16);
}
__device__ __forceinline__ void st(bf16 *p, int64_t i, float v) {
  unsigned int u = __float_as_uint(v);
  unsigned short b;
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) {
    b = (unsigned short)((u >> 16) | 0x40u);  // quiet NaN
  } else {
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    b = (unsigned short)(u >> 16);
  }
  p[i].bits = b;
}

__device__ __forceinline__ float act(int kind, float x, float a, float b) {
  switch (kind) {
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

// A grid-stride launch size for n elements.
inline unsigned blocks_for(int64_t n, int threads) {
  int64_t b = (n + threads - 1) / threads;
  if (b > 65535 * 8) b = 65535 * 8;
  if (b < 1) b = 1;
  return (unsigned)b;
}

// Butterfly exchange within groups of 32 lanes (a CUDA warp; half an AMD
// wave64, which __shfl_xor's width argument handles).
__device__ __forceinline__ float shfl_xor32(float v, int off) {
#if defined(GPU_VENDOR_HIP)
  return __shfl_xor(v, off, 32);
#else
  return __shfl_xor_sync(0xffffffffu, v, off);
#endif
}

inline int last_error() { return (int)gpuGetLastError(); }

}  // namespace gpu

// Instantiates F<T>(args) for the element type named by dtype; -1 for others.
#define GPU_DISPATCH(dtype, F, ...)                                  \
  switch (dtype) {                                                   \
    case GPU_DT_F32: return F<float>(__VA_ARGS__);                   \
    case GPU_DT_F16: return F<gpu_half>(__VA_ARGS__);                \
    case GPU_DT_BF16: return F<gpu::bf16>(__VA_ARGS__);              \
    default: return -1;                                              \
  }

#endif
