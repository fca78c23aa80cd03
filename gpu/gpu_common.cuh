// gpu_common: device helpers shared by the kernel files (gpu_*.cu): element
// loads/stores in fp32 for every element type, activations, block launch
// sizes. Included by .cu files only; compiles with nvcc and hipcc.
#ifndef GPU_COMMON_CUH
#define GPU_COMMON_CUH

#include <atomic>

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

// V consecutive elements from p[i..] (to fp32) and back; a 16-byte vector
// access for four floats (the caller guarantees the alignment).
template <int V, typename T>
__device__ __forceinline__ void ldv(const T *p, int64_t i, float *o) {
#pragma unroll
  for (int v = 0; v < V; ++v) o[v] = ld(p, i + v);
}
template <>
__device__ __forceinline__ void ldv<4, float>(const float *p, int64_t i, float *o) {
  const float4 q = *(const float4 *)(p + i);
  o[0] = q.x;
  o[1] = q.y;
  o[2] = q.z;
  o[3] = q.w;
}
template <int V, typename T>
__device__ __forceinline__ void stv(T *p, int64_t i, const float *o) {
#pragma unroll
  for (int v = 0; v < V; ++v) st(p, i + v, o[v]);
}
template <>
__device__ __forceinline__ void stv<4, float>(float *p, int64_t i, const float *o) {
  *(float4 *)(p + i) = make_float4(o[0], o[1], o[2], o[3]);
}

// Eight halves (fp16 or bf16) in one 16-byte access.
__device__ __forceinline__ float from_bits(const gpu_half *, unsigned b) {
  return __half2float(__ushort_as_half((unsigned short)b));
}
__device__ __forceinline__ float from_bits(const bf16 *, unsigned b) { return __uint_as_float(b << 16); }
__device__ __forceinline__ unsigned to_bits(gpu_half *, float v) { return __half_as_ushort(__float2half_rn(v)); }
__device__ __forceinline__ unsigned to_bits(bf16 *, float v) {
  bf16 h;
  st(&h, 0, v);
  return h.bits;
}
template <typename T>
__device__ __forceinline__ void ldv8_halves(const T *p, int64_t i, float *o) {
  const uint4 q = *(const uint4 *)(p + i);
  const unsigned w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    o[2 * k] = from_bits(p, w[k] & 0xffffu);
    o[2 * k + 1] = from_bits(p, w[k] >> 16);
  }
}
template <typename T>
__device__ __forceinline__ void stv8_halves(T *p, int64_t i, const float *o) {
  unsigned w[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) w[k] = to_bits(p, o[2 * k]) | (to_bits(p, o[2 * k + 1]) << 16);
  *(uint4 *)(p + i) = make_uint4(w[0], w[1], w[2], w[3]);
}
template <>
__device__ __forceinline__ void ldv<8, gpu_half>(const gpu_half *p, int64_t i, float *o) { ldv8_halves(p, i, o); }
template <>
__device__ __forceinline__ void stv<8, gpu_half>(gpu_half *p, int64_t i, const float *o) { stv8_halves(p, i, o); }
template <>
__device__ __forceinline__ void ldv<8, bf16>(const bf16 *p, int64_t i, float *o) { ldv8_halves(p, i, o); }
template <>
__device__ __forceinline__ void stv<8, bf16>(bf16 *p, int64_t i, const float *o) { stv8_halves(p, i, o); }

__device__ __forceinline__ float act(int kind, float x, float a, float b) { return op_act_apply(kind, x, a, b); }

// Division of 32-bit indices below 2^31 by a divisor fixed at launch: a
// multiply-high and a shift instead of the ~20 instructions of a runtime
// division (which dominated small depthwise layers). The magic number m and
// shift s satisfy n / d == (umulhi(n, m) + n) >> s for every n < 2^31
// (round-up reciprocal; Granlund and Montgomery, PLDI 1994).
struct divider {
  unsigned d, m, s;
};
inline divider make_divider(unsigned d) {
  divider v;
  v.d = d;
  v.s = 0;
  while (v.s < 32 && (1ull << v.s) < d) ++v.s;
  v.m = (unsigned)(((1ull << 32) * ((1ull << v.s) - d)) / d + 1);
  return v;
}
__device__ __forceinline__ int div(int n, const divider &v) {
  return (int)((__umulhi((unsigned)n, v.m) + (unsigned)n) >> v.s);
}

// A 2D convolution's tensors, fused epilogue (y = act(conv + bias + res))
// and sizes as 32-bit ints (the launcher checked that they fit): the common
// part of the conv kernels' parameters.
struct conv2d_args {
  const void *x, *w, *bias, *res;
  void *y;
  int act;
  float a, b;
  int c, co, ih, iw, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
};
// Every size of s in [0, 2^30): the conv kernels' 32-bit index math holds.
inline bool conv2d_fits(const gpu_conv2d_shape *s) {
  const int64_t v[] = {s->n, s->c, s->co, s->ih, s->iw, s->oh, s->ow, s->kh,
                       s->kw, s->sh, s->sw, s->ph, s->pw, s->dh, s->dw};
  for (int64_t x : v)
    if (x < 0 || x >= ((int64_t)1 << 30)) return false;
  return true;
}

// Fills k; false when a size is outside [0, 2^30) (no 32-bit kernel then).
inline bool make_conv2d_args(const void *x, const void *w, const void *bias, const void *res,
                             void *y, const gpu_conv2d_shape *s, int act, float a, float b,
                             conv2d_args &k) {
  k.x = x;
  k.w = w;
  k.bias = bias;
  k.res = res;
  k.y = y;
  k.act = act;
  k.a = a;
  k.b = b;
  if (!conv2d_fits(s)) return false;
  const int64_t *v[] = {&s->c, &s->co, &s->ih, &s->iw, &s->oh, &s->ow, &s->kh, &s->kw,
                        &s->sh, &s->sw, &s->ph, &s->pw, &s->dh, &s->dw};
  int *o[] = {&k.c, &k.co, &k.ih, &k.iw, &k.oh, &k.ow, &k.kh, &k.kw,
              &k.sh, &k.sw, &k.ph, &k.pw, &k.dh, &k.dw};
  for (int i = 0; i < 14; ++i) *o[i] = (int)*v[i];
  return true;
}

// Blocks a grid needs to keep every SM busy: two per SM on a 132-SM GPU
// (H100, H200). Kernels that can split their work finer (bands, smaller
// tiles, split keys) do so below this.
constexpr int64_t kFillBlocks = 264;

// A grid-stride launch size for n elements.
inline unsigned blocks_for(int64_t n, int threads) {
  int64_t b = (n + threads - 1) / threads;
  if (b > 65535 * 8) b = 65535 * 8;
  if (b < 1) b = 1;
  return (unsigned)b;
}

// A float another block of this kernel wrote (after a fence): read from
// L2, not from a line this SM's L1 may hold from before.
__device__ __forceinline__ float ld_cg(const float *p) {
#if defined(GPU_VENDOR_HIP)
  return __builtin_nontemporal_load(p);
#else
  return __ldcg(p);
#endif
}

// Counts the calling block in at *count once its threads have stored what
// other blocks will read; true, in every thread, for the block that
// arrives as the total-th, which may then read those stores (ld_cg). Only
// thread 0 orders memory, after the block's barrier has made the others'
// stores part of what its release covers (and, arriving last, of what its
// acquire sees): one fence a block, not one a thread. reset: the last
// block sets the count back to zero for the next launch.
__device__ __forceinline__ bool arrive_last(unsigned *count, unsigned total, bool reset) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
#if defined(GPU_VENDOR_HIP)
    __threadfence();
    const unsigned was = atomicAdd(count, 1u);
    __threadfence();
#else
    unsigned was;
    asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(was) : "l"(count) : "memory");
#endif
    last = was == total - 1;
    if (last && reset) *count = 0;
  }
  __syncthreads();
  return last;
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

// Lane src's v, within the same group of 32 lanes.
__device__ __forceinline__ float shfl32(float v, int src) {
#if defined(GPU_VENDOR_HIP)
  return __shfl(v, src, 32);
#else
  return __shfl_sync(0xffffffffu, v, src);
#endif
}

// The max (is_max) or sum of v over a block of 256 threads (8 groups of
// 32), returned to every thread; sh holds 8 floats. Every thread calls it.
__device__ __forceinline__ float block_reduce(float v, bool is_max, float *sh) {
  for (int off = 16; off > 0; off /= 2) {
    float o = shfl_xor32(v, off);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  int g = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) sh[g] = v;
  __syncthreads();
  float r = sh[0];
  const int groups = (int)(blockDim.x + 31) / 32;  // sh holds one value per group
  for (int i = 1; i < groups; ++i) r = is_max ? fmaxf(r, sh[i]) : r + sh[i];
  return r;
}

inline int last_error() { return (int)gpuGetLastError(); }

// Early launch (CUDA's programmatic dependent launch, sm_90 and later):
// every kernel in gpu/ is launched by gpu::launch, which lets it start while
// the kernel before it in the stream still runs, so its launch and its
// first loads of constants hide behind its predecessor. So every kernel
// calls wait_prior() in every thread before it reads anything earlier work
// wrote, and before it writes anything at all: before that it may only read
// constants (weights). After wait_prior() it calls start_next(), which lets
// the next kernel start (not sooner: at most two kernels overlap; a long
// kernel may call it later, when its own loads are done).
// tests/check_kernels.py checks this in source. On HIP, on older GPUs and
// under HIPDNN_EP_EARLY_LAUNCH=0 these are plain launches and no-ops.
__device__ __forceinline__ void wait_prior() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void start_next() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

#if !defined(GPU_VENDOR_HIP)
// p's address in the shared window, as PTX's .shared operands take it.
__device__ __forceinline__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
#endif

// Whether launches on the current device may overlap (gpu_common.cu).
bool early_launch_on();

// An A/B switch of the environment: false when `name` is "0", else true;
// read once into `cache` (-1 until then).
bool env_switch_on(const char *name, std::atomic<int> &cache);

// Was kernel's code for the current device built from PTX of `arch` (80:
// sm_80) or later, i.e. are its `__CUDA_ARCH__ >= arch` branches the ones
// that run? cached: the caller's answers for that kernel, kCachedDevices of
// them (gpu_common.cu).
constexpr int kCachedDevices = 64;
bool built_for(const void *kernel, int arch, std::atomic<int> *cached);

// kernel<<<grid, block, shared, s>>>(args), early where early_launch_on();
// a failed launch is also left for last_error(), as <<< >>> leaves it.
template <typename... P, typename... A>
int launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, gpuStream_t s, A... args) {
#if !defined(GPU_VENDOR_HIP)
  if (early_launch_on()) {
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = shared;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return (int)cudaLaunchKernelEx(&cfg, kernel, args...);
  }
#endif
  kernel<<<grid, block, shared, s>>>(args...);
  return last_error();
}

}  // namespace gpu

// Instantiates F<T>(args) for the element type named by dtype; -1 for others.
#define GPU_DISPATCH(dtype, F, ...)                                  \
  switch (dtype) {                                                   \
    case GPU_DT_F32: return F<float>(__VA_ARGS__);                   \
    case GPU_DT_F16: return F<gpu_half>(__VA_ARGS__);                \
    case GPU_DT_BF16: return F<gpu::bf16>(__VA_ARGS__);              \
    default: return -1;                                              \
  }

// Instantiates F<T, TO>(args) for a kernel that reads type T and stores TO:
// TO = T for each element type, or fp16 / bf16 from fp32 (the result
// narrowed as it is stored, as a Cast after it would); -1 for other pairs.
#define GPU_DISPATCH_TO(dtype, out_dtype, F, ...)                                         \
  switch ((dtype) == (out_dtype) ? (dtype) : (dtype) == GPU_DT_F32 ? -(out_dtype) : 0) { \
    case GPU_DT_F32: return F<float, float>(__VA_ARGS__);                                 \
    case GPU_DT_F16: return F<gpu_half, gpu_half>(__VA_ARGS__);                           \
    case GPU_DT_BF16: return F<gpu::bf16, gpu::bf16>(__VA_ARGS__);                        \
    case -GPU_DT_F16: return F<float, gpu_half>(__VA_ARGS__);                             \
    case -GPU_DT_BF16: return F<float, gpu::bf16>(__VA_ARGS__);                           \
    default: return -1;                                                                   \
  }

// Instantiates F<T>(args) for an unsigned type of esize bytes (1, 2, 4, 8):
// kernels that move elements without reading them; -1 for other sizes.
#define GPU_DISPATCH_BYTES(esize, F, ...)                        \
  switch (esize) {                                               \
    case 1: return F<unsigned char>(__VA_ARGS__);                \
    case 2: return F<unsigned short>(__VA_ARGS__);               \
    case 4: return F<unsigned>(__VA_ARGS__);                     \
    case 8: return F<unsigned long long>(__VA_ARGS__);           \
    default: return -1;                                          \
  }

#endif
