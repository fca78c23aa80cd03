// gpu_cast: Cast between the element types the GPU backend takes, with the
// reference backend's rules: integer to integer through int64 (narrowing
// wraps), anything else through double; floats to integers truncate and
// saturate, NaN gives 0; to bool is x != 0.
#include "gpu/gpu_common.cuh"

namespace {

template <typename T> struct is_int { static constexpr bool v = false; };
template <> struct is_int<signed char> { static constexpr bool v = true; };
template <> struct is_int<unsigned char> { static constexpr bool v = true; };
template <> struct is_int<int> { static constexpr bool v = true; };
template <> struct is_int<long long> { static constexpr bool v = true; };
struct boolean {  // ONNX bool: one byte, 0 or 1
  unsigned char b;
};
template <> struct is_int<boolean> { static constexpr bool v = true; };

// Saturation bounds: lo and hi as integers; at or past dlo / dhi (doubles
// exactly representable) the result is lo / hi.
template <typename T> struct limits;
template <> struct limits<signed char> {
  static constexpr long long lo = -128, hi = 127;
  static constexpr double dlo = -128.0, dhi = 127.0;
};
template <> struct limits<unsigned char> {
  static constexpr long long lo = 0, hi = 255;
  static constexpr double dlo = 0.0, dhi = 255.0;
};
template <> struct limits<int> {
  static constexpr long long lo = -2147483647LL - 1, hi = 2147483647;
  static constexpr double dlo = -2147483648.0, dhi = 2147483647.0;
};
template <> struct limits<long long> {
  static constexpr long long lo = -9223372036854775807LL - 1, hi = 9223372036854775807LL;
  static constexpr double dlo = -9223372036854775808.0, dhi = 9223372036854775808.0;
};

template <typename T> __device__ __forceinline__ double to_f64(T v) { return (double)v; }
template <> __device__ __forceinline__ double to_f64(gpu_half v) { return (double)__half2float(v); }
template <> __device__ __forceinline__ double to_f64(gpu::bf16 v) { return (double)__uint_as_float(((unsigned)v.bits) << 16); }
template <> __device__ __forceinline__ double to_f64(boolean v) { return v.b ? 1.0 : 0.0; }

template <typename T> __device__ __forceinline__ long long to_i64(T v) { return (long long)v; }
template <> __device__ __forceinline__ long long to_i64(boolean v) { return v.b != 0; }

template <typename T> __device__ __forceinline__ T from_i64(long long v) { return (T)v; }
template <> __device__ __forceinline__ boolean from_i64<boolean>(long long v) { return boolean{(unsigned char)(v != 0)}; }

template <typename T> __device__ __forceinline__ T from_f64(double v) {
  if (v != v) return (T)0;
  if (v <= limits<T>::dlo) return (T)limits<T>::lo;
  if (v >= limits<T>::dhi) return (T)limits<T>::hi;
  return (T)v;
}
template <> __device__ __forceinline__ float from_f64<float>(double v) { return (float)v; }
template <> __device__ __forceinline__ double from_f64<double>(double v) { return v; }
template <> __device__ __forceinline__ gpu_half from_f64<gpu_half>(double v) { return __float2half_rn((float)v); }
template <> __device__ __forceinline__ gpu::bf16 from_f64<gpu::bf16>(double v) {
  gpu::bf16 r;
  gpu::st(&r, 0, (float)v);
  return r;
}
template <> __device__ __forceinline__ boolean from_f64<boolean>(double v) { return boolean{(unsigned char)(v != 0.0)}; }

template <typename S, typename D>
__global__ void cast_kernel(const S *x, D *y, int64_t n) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    if constexpr (is_int<S>::v && is_int<D>::v) y[i] = from_i64<D>(to_i64(x[i]));
    else y[i] = from_f64<D>(to_f64(x[i]));
  }
}

// float, fp16 and bf16 among themselves (a model's boundary casts under
// precision=fp16: its input in, its output out) where both buffers are on
// 16 bytes: 8 elements a thread in 16-byte accesses, the last n % 8 one a
// thread. Through float, which holds every value of either side, so the
// roundings are cast_kernel's.
template <typename T> struct is_float { static constexpr bool v = false; };
template <> struct is_float<float> { static constexpr bool v = true; };
template <> struct is_float<gpu_half> { static constexpr bool v = true; };
template <> struct is_float<gpu::bf16> { static constexpr bool v = true; };

template <typename T>
struct eight {  // 8 elements as 16-byte words
  uint4 w[sizeof(T) / 2];
};

template <typename S, typename D>
__global__ void cast_float8_kernel(const S *x, D *y, int64_t n) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t n8 = n / 8, step = (int64_t)gridDim.x * blockDim.x;
  const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int64_t i = first; i < n8; i += step) {
    eight<S> a;
    eight<D> b;
#pragma unroll
    for (int k = 0; k < (int)(sizeof(S) / 2); ++k) a.w[k] = ((const uint4 *)(x + 8 * i))[k];
#pragma unroll
    for (int j = 0; j < 8; ++j) gpu::st((D *)b.w, j, gpu::ld((const S *)a.w, j));
#pragma unroll
    for (int k = 0; k < (int)(sizeof(D) / 2); ++k) ((uint4 *)(y + 8 * i))[k] = b.w[k];
  }
  if (first < n - 8 * n8) gpu::st(y, 8 * n8 + first, gpu::ld(x, 8 * n8 + first));
}

template <typename S, typename D>
int cast2(const void *x, void *y, int64_t n, gpuStream_t s) {
  if constexpr (is_float<S>::v && is_float<D>::v) {
    if ((uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0) {
      // at least one block of 256 threads: enough for the n % 8 left over
      gpu::launch(cast_float8_kernel<S, D>, gpu::blocks_for(n / 8, 256), 256, 0, s, (const S *)x, (D *)y, n);
      return gpu::last_error();
    }
  }
  gpu::launch(cast_kernel<S, D>, gpu::blocks_for(n, 256), 256, 0, s, (const S *)x, (D *)y, n);
  return gpu::last_error();
}

#define CAST_TO(S, dst)                                      \
  switch (dst) {                                             \
    case GPU_DT_F32: return cast2<S, float>(x, y, n, s);     \
    case GPU_DT_F16: return cast2<S, gpu_half>(x, y, n, s);  \
    case GPU_DT_BF16: return cast2<S, gpu::bf16>(x, y, n, s); \
    case GPU_DT_F64: return cast2<S, double>(x, y, n, s);    \
    case GPU_DT_I8: return cast2<S, signed char>(x, y, n, s); \
    case GPU_DT_U8: return cast2<S, unsigned char>(x, y, n, s); \
    case GPU_DT_I32: return cast2<S, int>(x, y, n, s);       \
    case GPU_DT_I64: return cast2<S, long long>(x, y, n, s); \
    case GPU_DT_BOOL: return cast2<S, boolean>(x, y, n, s);  \
    default: return -1;                                      \
  }

}  // namespace

extern "C" int gpu_cast_takes(int dtype) {
  switch (dtype) {
    case GPU_DT_F32: case GPU_DT_F16: case GPU_DT_BF16: case GPU_DT_F64: case GPU_DT_I8:
    case GPU_DT_U8: case GPU_DT_I32: case GPU_DT_I64: case GPU_DT_BOOL: return 1;
    default: return 0;
  }
}

extern "C" int gpu_cast(const void *x, int src, void *y, int dst, int64_t n, void *stream) {
  if (n <= 0) return 0;
  gpuStream_t s = (gpuStream_t)stream;
  switch (src) {
    case GPU_DT_F32: CAST_TO(float, dst)
    case GPU_DT_F16: CAST_TO(gpu_half, dst)
    case GPU_DT_BF16: CAST_TO(gpu::bf16, dst)
    case GPU_DT_F64: CAST_TO(double, dst)
    case GPU_DT_I8: CAST_TO(signed char, dst)
    case GPU_DT_U8: CAST_TO(unsigned char, dst)
    case GPU_DT_I32: CAST_TO(int, dst)
    case GPU_DT_I64: CAST_TO(long long, dst)
    case GPU_DT_BOOL: CAST_TO(boolean, dst)
    default: return -1;
  }
}
