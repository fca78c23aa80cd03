// gpu_reduce: the ONNX reductions over any set of axes, one kernel templated
// on the op (a functor: init, map, combine, finalize) and the element type.
// When the innermost reduced dim is contiguous, one 32-lane group per output
// reads along it (a block of 256 for a few long outputs); otherwise one thread per output (neighbouring outputs read
// neighbouring elements). Floats accumulate in fp32, integers in int64 (with
// two's-complement wrap, as the CPU EP's int sums and products wrap).
#include <stdint.h>

#include "gpu/gpu_common.cuh"

namespace {

// The accumulator of an element type.
template <typename T> struct acc_of { using type = float; };
template <> struct acc_of<int32_t> { using type = int64_t; };
template <> struct acc_of<int64_t> { using type = int64_t; };
template <typename T> using acc_t = typename acc_of<T>::type;

__device__ __forceinline__ float load(const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const gpu_half *p, int64_t i) { return gpu::ld(p, i); }
__device__ __forceinline__ float load(const gpu::bf16 *p, int64_t i) { return gpu::ld(p, i); }
__device__ __forceinline__ int64_t load(const int32_t *p, int64_t i) { return p[i]; }
__device__ __forceinline__ int64_t load(const int64_t *p, int64_t i) { return p[i]; }

__device__ __forceinline__ void store(float *p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(gpu_half *p, int64_t i, float v) { gpu::st(p, i, v); }
__device__ __forceinline__ void store(gpu::bf16 *p, int64_t i, float v) { gpu::st(p, i, v); }
__device__ __forceinline__ void store(int32_t *p, int64_t i, int64_t v) { p[i] = (int32_t)v; }
__device__ __forceinline__ void store(int64_t *p, int64_t i, int64_t v) { p[i] = v; }

// The element type's lowest and highest values (infinities for floats): the
// empty Max and Min.
template <typename T> struct lim {
  __device__ static float lo() { return -INFINITY; }
  __device__ static float hi() { return INFINITY; }
};
template <> struct lim<int32_t> {
  __device__ static int64_t lo() { return INT32_MIN; }
  __device__ static int64_t hi() { return INT32_MAX; }
};
template <> struct lim<int64_t> {
  __device__ static int64_t lo() { return INT64_MIN; }
  __device__ static int64_t hi() { return INT64_MAX; }
};

// Integer sums and products wrap instead of overflowing (undefined in C++).
__device__ __forceinline__ float add(float a, float b) { return a + b; }
__device__ __forceinline__ int64_t add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
__device__ __forceinline__ float mul(float a, float b) { return a * b; }
__device__ __forceinline__ int64_t mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

__device__ __forceinline__ float shfl_xor(float v, int off) { return gpu::shfl_xor32(v, off); }
__device__ __forceinline__ int64_t shfl_xor(int64_t v, int off) {
#if defined(GPU_VENDOR_HIP)
  return (int64_t)__shfl_xor((long long)v, off, 32);
#else
  return (int64_t)__shfl_xor_sync(0xffffffffu, (long long)v, off);
#endif
}

// The ops. map(x, shift) turns an element into what is combined; shift is
// LogSumExp's max (0 for the others, kShift false).
struct op_sum {
  static const bool kShift = false;
  template <typename T> __device__ static acc_t<T> init() { return 0; }
  template <typename A> __device__ static A map(A x, A) { return x; }
  template <typename A> __device__ static A combine(A a, A b) { return add(a, b); }
  template <typename A> __device__ static A finalize(A a, int64_t, A) { return a; }
};
struct op_mean : op_sum {
  // An empty mean is 0, as ONNX Runtime's kernel gives.
  __device__ static float finalize(float a, int64_t n, float) { return n > 0 ? a / (float)n : 0.f; }
};
// NaN wins (ONNX Runtime's Max/Min propagate it).
struct op_max {
  static const bool kShift = false;
  template <typename T> __device__ static acc_t<T> init() { return lim<T>::lo(); }
  template <typename A> __device__ static A map(A x, A) { return x; }
  template <typename A> __device__ static A combine(A a, A b) { return (a != a || a >= b) ? a : b; }
  template <typename A> __device__ static A finalize(A a, int64_t, A) { return a; }
};
struct op_min : op_max {
  template <typename T> __device__ static acc_t<T> init() { return lim<T>::hi(); }
  template <typename A> __device__ static A combine(A a, A b) { return (a != a || a <= b) ? a : b; }
};
struct op_prod : op_sum {
  template <typename T> __device__ static acc_t<T> init() { return 1; }
  template <typename A> __device__ static A combine(A a, A b) { return mul(a, b); }
};
struct op_l1 : op_sum {
  __device__ static float map(float x, float) { return fabsf(x); }
};
struct op_sum_square : op_sum {
  __device__ static float map(float x, float) { return x * x; }
};
struct op_l2 : op_sum_square {
  __device__ static float finalize(float a, int64_t, float) { return sqrtf(a); }
};
struct op_log_sum : op_sum {
  __device__ static float finalize(float a, int64_t, float) { return logf(a); }
};
// Stable: exp(x - m) summed, m the largest finite element (0 if none, so
// infinities and NaN pass through exp unchanged).
struct op_log_sum_exp : op_sum {
  static const bool kShift = true;
  __device__ static float map(float x, float m) { return expf(x - m); }
  __device__ static float finalize(float a, int64_t, float m) { return logf(a) + m; }
};
// LogSumExp's shift pass (also compiled, never run, for the other ops). x - x
// is 0 only for finite x.
__device__ __forceinline__ float lowest(float) { return -INFINITY; }
__device__ __forceinline__ int64_t lowest(int64_t) { return INT64_MIN; }
struct op_finite_max : op_max {
  template <typename A> __device__ static A map(A x, A) { return x - x == 0 ? x : lowest(x); }
  template <typename A> __device__ static A combine(A a, A b) { return a >= b ? a : b; }
  template <typename A> __device__ static A finalize(A a, int64_t, A) { return a - a == 0 ? a : (A)0; }
};

__device__ __forceinline__ int64_t offset_of(int64_t idx, int n, const int64_t *dims,
                                             const int64_t *strides) {
  int64_t off = 0;
  for (int d = n - 1; d >= 0; --d) {
    int64_t q = idx / dims[d];
    off += (idx - q * dims[d]) * strides[d];
    idx = q;
  }
  return off;
}

// Op over elements first, first + step, ... of one output's reduced set.
template <typename Op, typename T>
__device__ __forceinline__ acc_t<T> fold(const T *xp, int64_t first, int64_t step, int64_t nred,
                                         const gpu_reduce_desc &d, acc_t<T> shift) {
  acc_t<T> acc = Op::template init<T>();
  int64_t r = first;
  if (d.nred == 1 && d.red_strides[0] == 1) {
    // one contiguous run: eight loads in flight per round, not one (the
    // combine order is unchanged)
    for (; r + 7 * step < nred; r += 8 * step) {
      acc_t<T> v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) v[u] = Op::map(load(xp, r + u * step), shift);
#pragma unroll
      for (int u = 0; u < 8; ++u) acc = Op::combine(acc, v[u]);
    }
  }
  for (; r < nred; r += step)
    acc = Op::combine(acc, Op::map(load(xp, offset_of(r, d.nred, d.red_dims, d.red_strides)), shift));
  return acc;
}

// Op's value over all 32 lanes, in every lane.
template <typename Op, typename A>
__device__ __forceinline__ A lanes(A v) {
  for (int off = 16; off > 0; off /= 2) v = Op::combine(v, shfl_xor(v, off));
  return v;
}

template <typename Op, typename T>
__global__ void reduce_warp(const T *x, T *y, int64_t nout, int64_t nred, gpu_reduce_desc d) {
  gpu::wait_prior();
  gpu::start_next();
  using A = acc_t<T>;
  int64_t o = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (o >= nout) return;
  const T *xp = x + offset_of(o, d.nkeep, d.keep_dims, d.keep_strides);
  A shift = 0;
  if (Op::kShift)
    shift = op_finite_max::finalize(lanes<op_finite_max>(fold<op_finite_max>(xp, lane, 32, nred, d, shift)),
                                    nred, shift);
  A acc = lanes<Op>(fold<Op>(xp, lane, 32, nred, d, shift));
  if (lane == 0) store(y, o, Op::finalize(acc, nred, shift));
}

// Few long outputs (an attention mask's row sums): a block of 256 per output.
template <typename Op, typename A>
__device__ __forceinline__ A block_all(A v, A *sh) {
  v = lanes<Op>(v);
  __syncthreads();  // sh's previous use is done
  if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = v;
  __syncthreads();
  A r = sh[0];
  for (int i = 1; i < 8; ++i) r = Op::combine(r, sh[i]);
  return r;
}

template <typename Op, typename T>
__global__ void __launch_bounds__(256) reduce_block(const T *x, T *y, int64_t nred, gpu_reduce_desc d) {
  gpu::wait_prior();
  gpu::start_next();
  using A = acc_t<T>;
  __shared__ A sh[8];
  const int64_t o = blockIdx.x;
  const T *xp = x + offset_of(o, d.nkeep, d.keep_dims, d.keep_strides);
  A shift = 0;
  if (Op::kShift)
    shift = op_finite_max::finalize(block_all<op_finite_max>(fold<op_finite_max>(xp, threadIdx.x, 256, nred, d, shift), sh),
                                    nred, shift);
  A acc = block_all<Op>(fold<Op>(xp, threadIdx.x, 256, nred, d, shift), sh);
  if (threadIdx.x == 0) store(y, o, Op::finalize(acc, nred, shift));
}

template <typename Op, typename T>
__global__ void reduce_thread(const T *x, T *y, int64_t nout, int64_t nred, gpu_reduce_desc d) {
  gpu::wait_prior();
  gpu::start_next();
  using A = acc_t<T>;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < nout; o += stride) {
    const T *xp = x + offset_of(o, d.nkeep, d.keep_dims, d.keep_strides);
    A shift = 0;
    if (Op::kShift) shift = op_finite_max::finalize(fold<op_finite_max>(xp, 0, 1, nred, d, shift), nred, shift);
    store(y, o, Op::finalize(fold<Op>(xp, 0, 1, nred, d, shift), nred, shift));
  }
}

template <typename Op, typename T>
int launch(const void *x, void *y, const gpu_reduce_desc *d, gpuStream_t s) {
  int64_t nout = 1, nred = 1;
  for (int i = 0; i < d->nkeep; ++i) nout *= d->keep_dims[i];
  for (int i = 0; i < d->nred; ++i) nred *= d->red_dims[i];
  if (nout <= 0) return 0;
  if (nred < 0) return -1;
  bool inner_contig = d->nred > 0 && d->red_strides[d->nred - 1] == 1;
  if (inner_contig && nred >= 1024 && nout <= 1024) {
    gpu::launch(reduce_block<Op, T>, (unsigned)nout, 256, 0, s, (const T *)x, (T *)y, nred, *d);
  } else if (inner_contig && nred >= 32) {
    int64_t blocks = (nout + 7) / 8;
    if (blocks > 0x7fffffff) return -1;
    gpu::launch(reduce_warp<Op, T>, (unsigned)blocks, 256, 0, s, (const T *)x, (T *)y, nout, nred, *d);
  } else {
    gpu::launch(reduce_thread<Op, T>, gpu::blocks_for(nout, 256), 256, 0, s, (const T *)x, (T *)y, nout, nred, *d);
  }
  return gpu::last_error();
}

template <typename T>
int reduce_float(int op, const void *x, void *y, const gpu_reduce_desc *d, gpuStream_t s) {
  switch (op) {
    case GPU_REDUCE_SUM: return launch<op_sum, T>(x, y, d, s);
    case GPU_REDUCE_MEAN: return launch<op_mean, T>(x, y, d, s);
    case GPU_REDUCE_MAX: return launch<op_max, T>(x, y, d, s);
    case GPU_REDUCE_MIN: return launch<op_min, T>(x, y, d, s);
    case GPU_REDUCE_PROD: return launch<op_prod, T>(x, y, d, s);
    case GPU_REDUCE_L1: return launch<op_l1, T>(x, y, d, s);
    case GPU_REDUCE_L2: return launch<op_l2, T>(x, y, d, s);
    case GPU_REDUCE_SUM_SQUARE: return launch<op_sum_square, T>(x, y, d, s);
    case GPU_REDUCE_LOG_SUM: return launch<op_log_sum, T>(x, y, d, s);
    case GPU_REDUCE_LOG_SUM_EXP: return launch<op_log_sum_exp, T>(x, y, d, s);
    default: return -1;
  }
}

template <typename T>
int reduce_int(int op, const void *x, void *y, const gpu_reduce_desc *d, gpuStream_t s) {
  switch (op) {
    case GPU_REDUCE_SUM: return launch<op_sum, T>(x, y, d, s);
    case GPU_REDUCE_MAX: return launch<op_max, T>(x, y, d, s);
    case GPU_REDUCE_MIN: return launch<op_min, T>(x, y, d, s);
    case GPU_REDUCE_PROD: return launch<op_prod, T>(x, y, d, s);
    default: return -1;
  }
}

}  // namespace

extern "C" int gpu_reduce(const void *x, void *y, int dtype, int op, const gpu_reduce_desc *d, void *stream) {
  if (d->nkeep < 0 || d->nkeep > GPU_MAX_DIMS || d->nred < 0 || d->nred > GPU_MAX_DIMS) return -1;
  gpuStream_t s = (gpuStream_t)stream;
  switch (dtype) {
    case GPU_DT_F32: return reduce_float<float>(op, x, y, d, s);
    case GPU_DT_F16: return reduce_float<gpu_half>(op, x, y, d, s);
    case GPU_DT_BF16: return reduce_float<gpu::bf16>(op, x, y, d, s);
    case GPU_DT_I32: return reduce_int<int32_t>(op, x, y, d, s);
    case GPU_DT_I64: return reduce_int<int64_t>(op, x, y, d, s);
    default: return -1;
  }
}
