// gpu_norm: layer normalisations (LayerNorm, RMSNorm, their skip forms),
// fp32 statistics: one 32-lane group per row of up to 1024 values, else one
// 256-thread block per row. A row of up to
// GPU_NORM_CACHE_COLS values stays in shared memory between the passes;
// longer rows are read again.
#include "gpu/gpu_common.cuh"

namespace {

using gpu::ld;
using gpu::st;

constexpr int kThreads = 256;

template <typename T>
__device__ __forceinline__ float row_value(const T *x, const gpu_norm_desc &d, int64_t r, int64_t c) {
  const int64_t i = r * d.cols + c;
  float v = ld(x, i);
  if (d.skip) v += ld((const T *)d.skip, i % d.skip_n);
  if (d.sbias) v += ld((const T *)d.sbias, c);
  return v;
}

template <typename T, bool CACHE>
__global__ void norm_kernel(const T *x, T *y, gpu_norm_desc d) {
  extern __shared__ float row[];
  __shared__ float sh[32];
  const float inv_cols = 1.f / (float)d.cols;
  // scale and bias held in registers when a thread's share of a row fits:
  // loaded with the first row, not one memory trip after the statistics
  constexpr int kHeld = 4;
  const bool held = d.cols <= (int64_t)kHeld * blockDim.x;
  float scl[kHeld], bia[kHeld];
  if (held) {
#pragma unroll
    for (int i = 0; i < kHeld; ++i) {
      const int64_t c = threadIdx.x + (int64_t)i * blockDim.x;
      scl[i] = c < d.cols ? ld((const T *)d.scale, c) : 0.f;
      bia[i] = c < d.cols && d.bias ? ld((const T *)d.bias, c) : 0.f;
    }
  }
  for (int64_t r = blockIdx.x; r < d.rows; r += gridDim.x) {
    float sum = 0.f;
    for (int64_t c = threadIdx.x; c < d.cols; c += blockDim.x) {
      const float v = row_value(x, d, r, c);
      if (CACHE) row[c] = v;
      if (d.sum) st((T *)d.sum, r * d.cols + c, v);
      sum += v;
    }
    const float mean = d.rms ? 0.f : gpu::block_reduce(sum, false, sh) * inv_cols;
    float sq = 0.f;
    for (int64_t c = threadIdx.x; c < d.cols; c += blockDim.x) {
      const float v = (CACHE ? row[c] : row_value(x, d, r, c)) - mean;
      sq += v * v;
    }
    const float inv = rsqrtf(gpu::block_reduce(sq, false, sh) * inv_cols + d.eps);
    if (held) {
#pragma unroll
      for (int i = 0; i < kHeld; ++i) {
        const int64_t c = threadIdx.x + (int64_t)i * blockDim.x;
        if (c < d.cols) st(y, r * d.cols + c, ((CACHE ? row[c] : row_value(x, d, r, c)) - mean) * inv * scl[i] + bia[i]);
      }
    } else {
      for (int64_t c = threadIdx.x; c < d.cols; c += blockDim.x) {
        const float v = CACHE ? row[c] : row_value(x, d, r, c);
        float o = (v - mean) * inv * ld((const T *)d.scale, c);
        if (d.bias) o += ld((const T *)d.bias, c);
        st(y, r * d.cols + c, o);
      }
    }
    if (threadIdx.x == 0) {
      if (d.mean) ((float *)d.mean)[r] = mean;
      if (d.inv) ((float *)d.inv)[r] = inv;
    }
    __syncthreads();  // the next row reuses row[] and sh[]
  }
}

// Rows of at most kWarpCols: one 32-lane group per row, 8 rows a block;
// each lane keeps its own elements in its slice of shared memory (it reads
// back only what it wrote: no barrier needed).
constexpr int kWarpCols = 1024;

template <typename T>
__global__ void norm_warp_kernel(const T *x, T *y, gpu_norm_desc d) {
  extern __shared__ float rows_sh[];
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  float *row = rows_sh + w * d.cols;
  const float inv_cols = 1.f / (float)d.cols;
  for (int64_t r = (int64_t)blockIdx.x * 8 + w; r < d.rows; r += (int64_t)gridDim.x * 8) {
    float sum = 0.f;
    for (int64_t c = lane; c < d.cols; c += 32) {
      const float v = row_value(x, d, r, c);
      row[c] = v;
      if (d.sum) st((T *)d.sum, r * d.cols + c, v);
      sum += v;
    }
    for (int off = 16; off > 0; off /= 2) sum += gpu::shfl_xor32(sum, off);
    const float mean = d.rms ? 0.f : sum * inv_cols;
    float sq = 0.f;
    for (int64_t c = lane; c < d.cols; c += 32) {
      const float v = row[c] - mean;
      sq += v * v;
    }
    for (int off = 16; off > 0; off /= 2) sq += gpu::shfl_xor32(sq, off);
    const float inv = rsqrtf(sq * inv_cols + d.eps);
    for (int64_t c = lane; c < d.cols; c += 32) {
      float o = (row[c] - mean) * inv * ld((const T *)d.scale, c);
      if (d.bias) o += ld((const T *)d.bias, c);
      st(y, r * d.cols + c, o);
    }
    if (lane == 0) {
      if (d.mean) ((float *)d.mean)[r] = mean;
      if (d.inv) ((float *)d.inv)[r] = inv;
    }
  }
}

// Few rows of up to 256 * kVecs 16-byte pieces (an LLM decode step: one
// row of 2048-8192 per token): a block of 256 per row, each thread's pieces
// of x, skip, scale and bias loaded as 16-byte vectors at once and kept in
// registers across the passes: one trip to memory, then the reductions.
constexpr int kVecThreads = 256, kVecs = 4;

template <typename T>
struct vec {
  static constexpr int n = 16 / (int)sizeof(T);
};

template <typename T>
__device__ __forceinline__ void unpack(const uint4 &u, float *f) {
  const T *e = (const T *)&u;
#pragma unroll
  for (int j = 0; j < vec<T>::n; ++j) f[j] = ld(e, j);
}

template <typename T>
__device__ __forceinline__ uint4 pack(const float *f) {
  uint4 u;
  T *e = (T *)&u;
#pragma unroll
  for (int j = 0; j < vec<T>::n; ++j) st(e, j, f[j]);
  return u;
}

template <typename T>
__global__ void __launch_bounds__(kVecThreads) norm_vec_kernel(const T *x, T *y, gpu_norm_desc d) {
  constexpr int E = vec<T>::n;
  __shared__ float sh[kVecThreads / 32];
  const int64_t r = blockIdx.x, nv = d.cols / E;
  float v[kVecs][E], sc[kVecs][E], bi[kVecs][E];
  uint4 xr[kVecs], kr[kVecs], sr[kVecs], br[kVecs];
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int64_t c = threadIdx.x + (int64_t)i * kVecThreads;
    const uint4 z = make_uint4(0, 0, 0, 0);
    xr[i] = c < nv ? ((const uint4 *)(x + r * d.cols))[c] : z;
    kr[i] = c < nv && d.skip ? ((const uint4 *)((const T *)d.skip + (r * d.cols) % d.skip_n))[c] : z;
    sr[i] = c < nv ? ((const uint4 *)d.scale)[c] : z;
    br[i] = c < nv && d.bias ? ((const uint4 *)d.bias)[c] : z;
  }
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int64_t c = threadIdx.x + (int64_t)i * kVecThreads;
    float k[E];
    unpack<T>(xr[i], v[i]);
    unpack<T>(kr[i], k);
    unpack<T>(sr[i], sc[i]);
    unpack<T>(br[i], bi[i]);
#pragma unroll
    for (int j = 0; j < E; ++j) v[i][j] += k[j], sum += c < nv ? v[i][j] : 0.f;
    if (d.sum && c < nv) ((uint4 *)((T *)d.sum + r * d.cols))[c] = pack<T>(v[i]);
  }
  const float inv_cols = 1.f / (float)d.cols;
  const float mean = d.rms ? 0.f : gpu::block_reduce(sum, false, sh) * inv_cols;
  float sq = 0.f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int64_t c = threadIdx.x + (int64_t)i * kVecThreads;
#pragma unroll
    for (int j = 0; j < E; ++j) sq += c < nv ? (v[i][j] - mean) * (v[i][j] - mean) : 0.f;
  }
  const float inv = rsqrtf(gpu::block_reduce(sq, false, sh) * inv_cols + d.eps);
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int64_t c = threadIdx.x + (int64_t)i * kVecThreads;
    if (c >= nv) continue;
    float o[E];
#pragma unroll
    for (int j = 0; j < E; ++j) o[j] = (v[i][j] - mean) * inv * sc[i][j] + bi[i][j];
    ((uint4 *)(y + r * d.cols))[c] = pack<T>(o);
  }
  if (threadIdx.x == 0) {
    if (d.mean) ((float *)d.mean)[r] = mean;
    if (d.inv) ((float *)d.inv)[r] = inv;
  }
}

inline bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

// The vector kernel takes the row: pieces whole and aligned, no skip bias.
template <typename T>
bool vec_fits(const void *x, const void *y, const gpu_norm_desc *d) {
  const int64_t e = vec<T>::n;
  return d->rows <= 0x7fffffff && d->cols % e == 0 && d->cols / e <= (int64_t)kVecThreads * kVecs &&
         d->cols > kWarpCols && !d->sbias && aligned16(x) && aligned16(y) && aligned16(d->scale) &&
         aligned16(d->bias) && aligned16(d->sum) && (!d->skip || (aligned16(d->skip) && d->skip_n % d->cols == 0));
}

template <typename T>
int norm(const void *x, void *y, const gpu_norm_desc *d, gpuStream_t s) {
  if (d->cols <= kWarpCols) {
    const int64_t groups = (d->rows + 7) / 8;
    const unsigned blocks = (unsigned)(groups < 65535 * 8 ? groups : 65535 * 8);
    norm_warp_kernel<T><<<blocks, kThreads, (size_t)d->cols * 8 * sizeof(float), s>>>((const T *)x, (T *)y, *d);
    return gpu::last_error();
  }
  // few rows, or rows with a piece for every thread (an LLM prompt's: 2048+ wide)
  if ((d->rows < 256 || d->cols / vec<T>::n >= kVecThreads) && vec_fits<T>(x, y, d)) {
    norm_vec_kernel<T><<<(unsigned)d->rows, kVecThreads, 0, s>>>((const T *)x, (T *)y, *d);
    return gpu::last_error();
  }
  const unsigned blocks = (unsigned)(d->rows < 65535 * 8 ? d->rows : 65535 * 8);
  // Few wide rows (an LLM decode step: one row of 2048+ per token): a block
  // of 1024 threads, so each thread's loads are few and in flight together;
  // 256 threads took ~14 us per 2048-wide row on an H100, latency-bound.
  const int threads = d->rows < 256 ? 1024 : kThreads;
  if (d->cols <= GPU_NORM_CACHE_COLS)
    norm_kernel<T, true><<<blocks, threads, (size_t)d->cols * sizeof(float), s>>>((const T *)x, (T *)y, *d);
  else
    norm_kernel<T, false><<<blocks, threads, 0, s>>>((const T *)x, (T *)y, *d);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_layernorm(const void *x, void *y, int dtype, const gpu_norm_desc *d, void *stream) {
  if (d->rows <= 0 || d->cols <= 0) return 0;
  if (d->skip && d->skip_n <= 0) return -1;
  GPU_DISPATCH(dtype, norm, x, y, d, (gpuStream_t)stream)
}
