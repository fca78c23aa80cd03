// gpu_norm: layer normalisations (LayerNorm, RMSNorm, their skip forms),
// fp32 statistics. Rows of up to 1024 values: a group of 1-32 lanes per row
// holding the row in registers (norm_rows_kernel) when it is made of aligned
// 16-byte pieces, else one 32-lane group per row; wider rows: one block per
// row. A row of up to GPU_NORM_CACHE_COLS values stays in shared memory
// between the passes; longer rows are read again. Rows stored channel-major
// (the normalised axis in the middle of [outer, cols, inner]: a Transpose
// fused into the norm) go through shared-memory tiles (norm_cm_kernel).
// x and the skip are read, and y written, through row maps (where each row
// starts: a broadcast, a fused transpose of the leading dims); the register
// kernels take them where every row is packed and starts on a 16-byte piece.
#include "gpu/gpu_common.cuh"

namespace {

using gpu::ld;
using gpu::st;

constexpr int kThreads = 256;

// Where row r of a mapped tensor starts (gpu_norm_rows): the sum over its
// dims. Kept small: a latency-bound kernel waits on fetching its code, and
// the sum unrolled over every dim at every call site tripled the vector
// kernel's code (23 -> 75 KB: an LLM decode step's 33 norms took ~2 us more
// each). So the kernels take maps of one or two dims, in 32-bit arithmetic
// (gpu_layernorm refuses 2^32 rows); more dims only norm_strided_kernel
// (ANY).
template <bool ANY>
__device__ __forceinline__ int64_t row_at(const gpu_norm_rows &m, int64_t r) {
  if (ANY) {
    int64_t o = 0;
#pragma unroll
    for (int i = 0; i < GPU_MAX_DIMS; ++i)
      if (i < m.nd) o += r / m.div[i] % m.dim[i] * m.stride[i];
    return o;
  }
  if (m.nd <= 1) return m.nd ? r * m.stride[0] : 0;
  const uint32_t hi = (uint32_t)r / (uint32_t)m.div[0], lo = (uint32_t)r - hi * (uint32_t)m.div[0];  // div[0] = dim[1]
  return (int64_t)hi * m.stride[0] + (int64_t)lo * m.stride[1];
}
// Column c of an addend's row (c < cols < 2^31).
__device__ __forceinline__ int64_t col_at(const gpu_norm_desc &d, const gpu_norm_rows &m, int64_t c) {
  return !d.mapped || c < m.col_n ? c : (int64_t)((uint32_t)c % (uint32_t)m.col_n);
}

// Where row r of x, of the skip and of y start: one multiply each unless
// a map says otherwise (d.mapped).
struct row_starts {
  int64_t x, skip;
};
template <bool ANY = false>
__device__ __forceinline__ row_starts starts_of(const gpu_norm_desc &d, int64_t r) {
  if (!d.mapped) return {r * d.x_rs, r * d.s_rs};
  return {row_at<ANY>(d.xm, r), d.skip ? row_at<ANY>(d.sm, r) : 0};
}
template <bool ANY = false>
__device__ __forceinline__ int64_t y_start(const gpu_norm_desc &d, int64_t r) {
  return d.mapped ? row_at<ANY>(d.ym, r) : r * d.y_rs;
}

template <typename T>
__device__ __forceinline__ float row_value(const T *x, const gpu_norm_desc &d, row_starts at, int64_t c) {
  float v = ld(x, at.x + col_at(d, d.xm, c));
  if (d.skip) v += ld((const T *)d.skip, at.skip + col_at(d, d.sm, c));
  if (d.sbias) v += ld((const T *)d.sbias, c);
  return v;
}

template <typename T, bool CACHE>
__global__ void norm_kernel(const T *x, T *y, gpu_norm_desc d) {
  gpu::wait_prior();
  gpu::start_next();
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
    const row_starts at = starts_of(d, r);
    const int64_t yr = y_start(d, r);
    float sum = 0.f;
    for (int64_t c = threadIdx.x; c < d.cols; c += blockDim.x) {
      const float v = row_value(x, d, at, c);
      if (CACHE) row[c] = v;
      if (d.sum) st((T *)d.sum, r * d.cols + c, v);
      sum += v;
    }
    const float mean = d.rms ? 0.f : gpu::block_reduce(sum, false, sh) * inv_cols;
    float sq = 0.f;
    for (int64_t c = threadIdx.x; c < d.cols; c += blockDim.x) {
      const float v = (CACHE ? row[c] : row_value(x, d, at, c)) - mean;
      sq += v * v;
    }
    const float inv = rsqrtf(gpu::block_reduce(sq, false, sh) * inv_cols + d.eps);
    if (held) {
#pragma unroll
      for (int i = 0; i < kHeld; ++i) {
        const int64_t c = threadIdx.x + (int64_t)i * blockDim.x;
        if (c < d.cols) st(y, yr + c, ((CACHE ? row[c] : row_value(x, d, at, c)) - mean) * inv * scl[i] + bia[i]);
      }
    } else {
      for (int64_t c = threadIdx.x; c < d.cols; c += blockDim.x) {
        const float v = CACHE ? row[c] : row_value(x, d, at, c);
        float o = (v - mean) * inv * ld((const T *)d.scale, c);
        if (d.bias) o += ld((const T *)d.bias, c);
        st(y, yr + c, o);
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
  gpu::wait_prior();
  gpu::start_next();
  extern __shared__ float rows_sh[];
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  float *row = rows_sh + w * d.cols;
  const float inv_cols = 1.f / (float)d.cols;
  for (int64_t r = (int64_t)blockIdx.x * 8 + w; r < d.rows; r += (int64_t)gridDim.x * 8) {
    const row_starts at = starts_of(d, r);
    const int64_t yr = y_start(d, r);
    float sum = 0.f;
    for (int64_t c = lane; c < d.cols; c += 32) {
      const float v = row_value(x, d, at, c);
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
      st(y, yr + c, o);
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
  const uint4 z = make_uint4(0, 0, 0, 0);
  // constant scale and bias are loaded while the kernel before may still
  // run (gpu::launch), x and skip after it ends
  if (!d.params_const) gpu::wait_prior();
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int64_t c = threadIdx.x + (int64_t)i * kVecThreads;
    sr[i] = c < nv ? ((const uint4 *)d.scale)[c] : z;
    br[i] = c < nv && d.bias ? ((const uint4 *)d.bias)[c] : z;
  }
  gpu::wait_prior();
  gpu::start_next();
  const row_starts at = starts_of(d, r);
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int64_t c = threadIdx.x + (int64_t)i * kVecThreads;
    xr[i] = c < nv ? ((const uint4 *)(x + at.x))[c] : z;
    kr[i] = c < nv && d.skip ? ((const uint4 *)((const T *)d.skip + at.skip))[c] : z;
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
    ((uint4 *)(y + y_start(d, r)))[c] = pack<T>(o);
  }
  if (threadIdx.x == 0) {
    if (d.mean) ((float *)d.mean)[r] = mean;
    if (d.inv) ((float *)d.inv)[r] = inv;
  }
}

inline bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

// An addend read in 16-byte pieces (e elements): packed along its rows,
// every row starting on a piece.
inline bool map_in_pieces(const void *base, const gpu_norm_rows &m, int64_t cols, int64_t e) {
  if (!aligned16(base) || m.col_n != cols) return false;
  for (int i = 0; i < m.nd; ++i)
    if (m.stride[i] % e) return false;
  return true;
}

// Whether x and the skip are read, and y written, in 16-byte pieces.
template <typename T>
bool addends_in_pieces(const void *x, const void *y, const gpu_norm_desc *d) {
  const int64_t e = vec<T>::n;
  return map_in_pieces(x, d->xm, d->cols, e) && map_in_pieces(y, d->ym, d->cols, e) &&
         (!d->skip || map_in_pieces(d->skip, d->sm, d->cols, e));
}

// The vector kernel takes the row: pieces whole and aligned, no skip bias.
template <typename T>
bool vec_fits(const void *x, const void *y, const gpu_norm_desc *d) {
  const int64_t e = vec<T>::n;
  return d->rows <= 0x7fffffff && d->cols % e == 0 && d->cols / e <= (int64_t)kVecThreads * kVecs &&
         d->cols > kWarpCols && !d->sbias && aligned16(d->scale) && aligned16(d->bias) && aligned16(d->sum) &&
         addends_in_pieces<T>(x, y, d);
}


// Rows of up to 32 * kRowVecs 16-byte pieces (transformer widths: 96-1024
// fp32): a group of `lanes` lanes per row (a power of two, so a short row
// does not idle most of a warp), each lane's V pieces of x, skip, skip bias,
// scale and bias loaded at once as 16-byte vectors and kept in registers
// across the passes: one trip to memory. norm_warp_kernel's per-element loop
// stores each value (shared memory, the sum output) between its loads, which
// the compiler may not move past each other: a 768-wide row made 24
// dependent trips, 12-15 us per GPT-2 LayerNorm on an H100.
constexpr int kRowVecs = 8;

template <typename T, int V>
__global__ void __launch_bounds__(kThreads) norm_rows_kernel(const T *__restrict__ x, T *__restrict__ y,
                                                             gpu_norm_desc d, int lanes) {
  gpu::wait_prior();
  gpu::start_next();
  constexpr int E = vec<T>::n;
  const int64_t nv = d.cols / E;
  const int lane = (int)threadIdx.x & (lanes - 1);
  const uint4 z = make_uint4(0, 0, 0, 0);
  const float inv_cols = 1.f / (float)d.cols;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  // warp-uniform trip count: every lane of a warp takes part in its shuffles
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t - (threadIdx.x & 31) < d.rows * lanes;
       t += step) {
    const int64_t r = t / lanes;
    const bool live = r < d.rows;
    const row_starts at = starts_of(d, live ? r : 0);
    uint4 xr[V], kr[V], br[V], sr[V], hr[V];
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int64_t c = lane + (int64_t)i * lanes;
      const bool in = live && c < nv;
      xr[i] = in ? ((const uint4 *)(x + at.x))[c] : z;
      kr[i] = in && d.skip ? ((const uint4 *)((const T *)d.skip + at.skip))[c] : z;
      br[i] = in && d.sbias ? ((const uint4 *)d.sbias)[c] : z;
      sr[i] = in ? ((const uint4 *)d.scale)[c] : z;
      hr[i] = in && d.bias ? ((const uint4 *)d.bias)[c] : z;
    }
    float v[V][E];
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < V; ++i) {
      float k[E], b[E];
      unpack<T>(xr[i], v[i]);
      unpack<T>(kr[i], k);
      unpack<T>(br[i], b);
#pragma unroll
      for (int j = 0; j < E; ++j) v[i][j] += k[j] + b[j], sum += v[i][j];  // zeros past the row
      const int64_t c = lane + (int64_t)i * lanes;
      if (d.sum && live && c < nv) ((uint4 *)((T *)d.sum + r * d.cols))[c] = pack<T>(v[i]);
    }
    for (int off = lanes / 2; off > 0; off /= 2) sum += gpu::shfl_xor32(sum, off);
    const float mean = d.rms ? 0.f : sum * inv_cols;
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const bool in = lane + (int64_t)i * lanes < nv;
#pragma unroll
      for (int j = 0; j < E; ++j) sq += in ? (v[i][j] - mean) * (v[i][j] - mean) : 0.f;
    }
    for (int off = lanes / 2; off > 0; off /= 2) sq += gpu::shfl_xor32(sq, off);
    const float inv = rsqrtf(sq * inv_cols + d.eps);
    const int64_t yr = y_start(d, live ? r : 0);
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const int64_t c = lane + (int64_t)i * lanes;
      if (!live || c >= nv) continue;
      float sc[E], bi[E], o[E];
      unpack<T>(sr[i], sc);
      unpack<T>(hr[i], bi);
#pragma unroll
      for (int j = 0; j < E; ++j) o[j] = (v[i][j] - mean) * inv * sc[j] + bi[j];
      ((uint4 *)(y + yr))[c] = pack<T>(o);
    }
    if (live && lane == 0) {
      if (d.mean) ((float *)d.mean)[r] = mean;
      if (d.inv) ((float *)d.inv)[r] = inv;
    }
  }
}

// The statistics of a channel-major tile's R rows ([cols][R + 1] floats;
// warp w takes rows w, w + 8, ...) into s_mean / s_inv, and the mean / inv
// outputs of its nr live rows, which start at row r0.
template <int R>
__device__ __forceinline__ void cm_tile_stats(const float *tile, int cols, const gpu_norm_desc &d, int64_t r0,
                                              int nr, float *s_mean, float *s_inv) {
  const int w = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;
  const float inv_cols = 1.f / (float)cols;
  for (int k = w; k < R; k += kThreads / 32) {
    float sum = 0.f;
    for (int c = lane; c < cols; c += 32) sum += tile[c * (R + 1) + k];
    for (int off = 16; off > 0; off /= 2) sum += gpu::shfl_xor32(sum, off);
    const float mean = d.rms ? 0.f : sum * inv_cols;
    float sq = 0.f;
    for (int c = lane; c < cols; c += 32) {
      const float v = tile[c * (R + 1) + k] - mean;
      sq += v * v;
    }
    for (int off = 16; off > 0; off /= 2) sq += gpu::shfl_xor32(sq, off);
    if (lane == 0) {
      s_mean[k] = mean;
      s_inv[k] = rsqrtf(sq * inv_cols + d.eps);
      if (k < nr && d.mean) ((float *)d.mean)[r0 + k] = mean;
      if (k < nr && d.inv) ((float *)d.inv)[r0 + k] = s_inv[k];
    }
  }
}

// Channel-major rows: x and/or y stored [outer, cols, inner] (x_inner /
// y_inner > 0; row r = o * inner + i), the other side packed rows. A block
// of 256 takes R positions i of one o: it stages their cols values in
// shared memory (loads coalesced along i, or along the rows when x is
// packed), each warp reduces the statistics of R / 8 rows there, and the
// output is written coalesced the same way. Skip, skip bias and the sum
// output are read and written packed (the fusion leaves them only when x is
// packed). R is 32, 16 or 8 positions (norm() picks). With 8 always, a
// warp's load was 16 bytes of a channel, a thread had three loads in
// flight, and the packed side's loops idled 160 of 256 threads at 96
// channels: ConvNeXt-T's first-stage norm (fp16, batch 32, H100) took ~80
// us, now ~50.
constexpr int kCmTileBytes = 48 * 1024;

template <int R>
constexpr int64_t cm_max_cols() {
  return kCmTileBytes / (int64_t)sizeof(float) / (R + 1);
}

template <typename T, int R>
__global__ void __launch_bounds__(kThreads) norm_cm_kernel(const T *__restrict__ x, T *__restrict__ y,
                                                           gpu_norm_desc d, int64_t inner, int64_t tiles) {
  gpu::wait_prior();
  gpu::start_next();
  extern __shared__ float tile[];  // [cols][R + 1]
  __shared__ float s_mean[R], s_inv[R];
  const int64_t cols = d.cols;
  const unsigned tiles32 = (unsigned)tiles;  // blocks < 2^31: 32-bit, no 64-bit division routine
  const int64_t o = blockIdx.x / tiles32, i0 = (int64_t)(blockIdx.x % tiles32) * R;
  const int nr = inner - i0 < R ? (int)(inner - i0) : R;
  const int tr = (int)threadIdx.x % R, tc = (int)threadIdx.x / R;
  constexpr int kColStep = kThreads / R;
  const int cells = nr * (int)cols, cols32 = (int)cols;  // packed side: (row k, column c), c fastest
  if (d.x_inner) {
    // 8 loads in flight a thread before their shared stores
    const T *xo = x + o * cols * inner + i0 + tr;
    for (int c0 = tc; c0 < cols32; c0 += 8 * kColStep) {
      float v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int c = c0 + u * kColStep;
        v[u] = tr < nr && c < cols32 ? ld(xo, (int64_t)c * inner) : 0.f;
      }
#pragma unroll
      for (int u = 0; u < 8; ++u)
        if (c0 + u * kColStep < cols32) tile[(c0 + u * kColStep) * (R + 1) + tr] = v[u];
    }
  } else {
    for (int e = threadIdx.x; e < cells; e += kThreads) {
      const int k = e / cols32, c = e - k * cols32;
      const int64_t r = o * inner + i0 + k;
      const float v = row_value(x, d, starts_of(d, r), c);
      if (d.sum) st((T *)d.sum, r * cols + c, v);
      tile[c * (R + 1) + k] = v;
    }
  }
  __syncthreads();
  cm_tile_stats<R>(tile, (int)cols, d, o * inner + i0, nr, s_mean, s_inv);
  __syncthreads();
  const T *scale = (const T *)d.scale, *bias = (const T *)d.bias;
  if (d.y_inner) {
    if (tr < nr) {
      const float m = s_mean[tr], iv = s_inv[tr];
#pragma unroll 4
      for (int64_t c = tc; c < cols; c += kColStep) {
        const float v = (tile[c * (R + 1) + tr] - m) * iv * ld(scale, c) + (bias ? ld(bias, c) : 0.f);
        st(y, (o * cols + c) * inner + i0 + tr, v);
      }
    }
  } else {
    // (k, c) of e = threadIdx.x + j * kThreads, stepped without a division
    const int dk = kThreads / cols32, dc = kThreads - dk * cols32;
    int k = (int)threadIdx.x / cols32, c = (int)threadIdx.x - k * cols32;
    for (; k < nr; k += dk, c += dc) {
      if (c >= cols32) {
        c -= cols32;
        ++k;
        if (k >= nr) break;
      }
      const int64_t r = o * inner + i0 + k;
      st(y, y_start(d, r) + c,
         (tile[c * (R + 1) + k] - s_mean[k]) * s_inv[k] * ld(scale, c) + (bias ? ld(bias, c) : 0.f));
    }
  }
}

template <typename T, int R>
int launch_cm(const void *x, void *y, const gpu_norm_desc *d, int64_t inner, gpuStream_t s) {
  const int64_t tiles = (inner + R - 1) / R, blocks = d->rows / inner * tiles;  // < INT32_MAX: checked
  return gpu::launch(norm_cm_kernel<T, R>, dim3((unsigned)blocks), dim3(kThreads),
                     (size_t)d->cols * (R + 1) * sizeof(float), s, (const T *)x, (T *)y, *d, inner, tiles);
}

// The common channel-major case in pieces: x [outer, cols, inner] in,
// packed contiguous rows out (ConvNeXt's norm before each block's first
// matmul), cols whole 16-byte pieces. A thread loads a piece of L
// positions of one channel (16 bytes, or 8 or 4 where inner is not whole
// 16-byte pieces) and stores 16 bytes of one row with its scale and bias.
// norm_cm_kernel's 2-byte loads and stores, with the row and column worked
// out per element, were most of its instructions (ncu, ConvNeXt-T's first
// stage at b32 fp16: 145 an element, the statistics a quarter of them).
template <typename T, int L>
struct alignas(sizeof(T) * L) cm_piece {
  T v[L];
};

template <typename T, int R, int L>
__global__ void __launch_bounds__(kThreads) norm_cm_rows_kernel(const T *__restrict__ x, T *__restrict__ y,
                                                                gpu_norm_desc d, int64_t inner, unsigned tiles) {
  gpu::wait_prior();
  gpu::start_next();
  constexpr int V = vec<T>::n, kPieces = R / L;  // loaded pieces of a channel's R positions
  extern __shared__ float tile[];              // [cols][R + 1]
  __shared__ float s_mean[R], s_inv[R];
  const int cols = (int)d.cols, row_pieces = cols / V;
  const int64_t o = blockIdx.x / tiles, i0 = (int64_t)(blockIdx.x % tiles) * R;
  const int nr = inner - i0 < R ? (int)(inner - i0) : R;  // a multiple of L: inner is
  const T *xo = x + o * cols * inner + i0;
  for (int e = threadIdx.x; e < cols * kPieces; e += kThreads) {
    const int c = e / kPieces, k0 = (e - c * kPieces) * L;
    cm_piece<T, L> pc = {};
    if (k0 < nr) pc = *(const cm_piece<T, L> *)(xo + (int64_t)c * inner + k0);
#pragma unroll
    for (int q = 0; q < L; ++q) tile[c * (R + 1) + k0 + q] = k0 < nr ? ld(pc.v, q) : 0.f;
  }
  __syncthreads();
  cm_tile_stats<R>(tile, cols, d, o * inner + i0, nr, s_mean, s_inv);
  __syncthreads();
  uint4 *yb = (uint4 *)(y + (o * inner + i0) * cols);  // the tile's rows: one contiguous run
  for (int e = threadIdx.x; e < nr * row_pieces; e += kThreads) {
    const int k = e / row_pieces, c0 = (e - k * row_pieces) * V;
    float sc[V], bi[V], out[V];
    unpack<T>(((const uint4 *)d.scale)[c0 / V], sc);
    if (d.bias) {
      unpack<T>(((const uint4 *)d.bias)[c0 / V], bi);
    } else {
#pragma unroll
      for (int q = 0; q < V; ++q) bi[q] = 0.f;
    }
    const float m = s_mean[k], iv = s_inv[k];
#pragma unroll
    for (int q = 0; q < V; ++q) out[q] = (tile[(c0 + q) * (R + 1) + k] - m) * iv * sc[q] + bi[q];
    yb[e] = pack<T>(out);
  }
}

template <typename T, int R, int L>
int launch_cm_rows_l(const void *x, void *y, const gpu_norm_desc *d, int64_t inner, gpuStream_t s) {
  const int64_t tiles = (inner + R - 1) / R, blocks = d->rows / inner * tiles;  // < INT32_MAX: checked
  return gpu::launch(norm_cm_rows_kernel<T, R, L>, dim3((unsigned)blocks), dim3(kThreads),
                     (size_t)d->cols * (R + 1) * sizeof(float), s, (const T *)x, (T *)y, *d, inner, (unsigned)tiles);
}

// Positions a load of norm_cm_rows_kernel takes (16, 8 or 4 bytes' worth,
// inner and x allowing), or 0 when the kernel does not take d: x
// channel-major, y packed contiguous rows of whole 16-byte pieces.
template <typename T>
int cm_rows_piece(const void *x, const void *y, const gpu_norm_desc *d, int64_t inner) {
  if (!d->x_inner || d->y_inner || d->mapped || d->y_rs != d->cols || d->cols % vec<T>::n || !aligned16(y) ||
      !aligned16(d->scale) || !aligned16(d->bias))
    return 0;
  for (int l = vec<T>::n; l * (int)sizeof(T) >= 4; l /= 2)
    if (inner % l == 0 && (uintptr_t)x % (l * sizeof(T)) == 0) return l;
  return 0;
}

template <typename T, int R>
int launch_cm_rows(const void *x, void *y, const gpu_norm_desc *d, int64_t inner, int piece, gpuStream_t s) {
  constexpr int V = vec<T>::n;
  if (piece == V) return launch_cm_rows_l<T, R, V>(x, y, d, inner, s);
  if (piece == V / 2) return launch_cm_rows_l<T, R, V / 2>(x, y, d, inner, s);
  return launch_cm_rows_l<T, R, (V / 4 > 0 ? V / 4 : 1)>(x, y, d, inner, s);
}

// Channel-major rows too wide for the tile: a thread per row, three passes
// over strided memory. Slow, and only for shapes no fused model has met.
template <typename T>
__global__ void norm_strided_kernel(const T *x, T *y, gpu_norm_desc d) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < d.rows; r += step) {
    const int64_t yo = d.y_inner ? r / d.y_inner : r, yi = d.y_inner ? r % d.y_inner : 0;
    const int64_t ys = d.y_inner ? d.y_inner : 1, yb = d.y_inner ? yo * d.cols * ys + yi : y_start<true>(d, r);
    const row_starts at = d.x_inner ? row_starts{(r / d.x_inner) * d.cols * d.x_inner + r % d.x_inner, 0} : starts_of<true>(d, r);
    auto val = [&](int64_t c) {
      if (d.x_inner) return ld(x, at.x + c * d.x_inner);  // channel-major: no skip
      return row_value(x, d, at, c);
    };
    float sum = 0.f;
    for (int64_t c = 0; c < d.cols; ++c) {
      const float v = val(c);
      if (d.sum) st((T *)d.sum, r * d.cols + c, v);
      sum += v;
    }
    const float mean = d.rms ? 0.f : sum / (float)d.cols;
    float sq = 0.f;
    for (int64_t c = 0; c < d.cols; ++c) sq += (val(c) - mean) * (val(c) - mean);
    const float inv = rsqrtf(sq / (float)d.cols + d.eps);
    for (int64_t c = 0; c < d.cols; ++c)
      st(y, yb + c * ys, (val(c) - mean) * inv * ld((const T *)d.scale, c) + (d.bias ? ld((const T *)d.bias, c) : 0.f));
    if (d.mean) ((float *)d.mean)[r] = mean;
    if (d.inv) ((float *)d.inv)[r] = inv;
  }
}

template <typename T, int V>
int launch_rows(const void *x, void *y, const gpu_norm_desc *d, int lanes, gpuStream_t s) {
  const int64_t threads = d->rows * lanes;
  return gpu::launch(norm_rows_kernel<T, V>, dim3(gpu::blocks_for(threads, kThreads)), dim3(kThreads), 0, s,
                     (const T *)x, (T *)y, *d, lanes);
}

// The register kernel takes the rows: whole aligned 16-byte pieces, at most
// 32 * kRowVecs of them. lanes: the fewest (a power of two) that leave each
// lane at most 4 pieces, up to 32.
template <typename T>
int rows_lanes(const void *x, const void *y, const gpu_norm_desc *d) {
  const int64_t e = vec<T>::n, nv = d->cols / e;
  if (d->cols % e || nv > 32 * kRowVecs || !aligned16(d->scale) || !aligned16(d->bias) || !aligned16(d->sum) ||
      !aligned16(d->sbias) || !addends_in_pieces<T>(x, y, d))
    return 0;
  int lanes = 1;
  while (lanes < 32 && (int64_t)lanes * 4 < nv) lanes *= 2;
  return lanes;
}

template <typename T>
int norm(const void *x, void *y, const gpu_norm_desc *d, gpuStream_t s) {
  if ((!d->x_inner && d->xm.nd > 2) || (d->skip && d->sm.nd > 2) || (!d->y_inner && d->ym.nd > 2))  // maps of 3+ dims
    return gpu::launch(norm_strided_kernel<T>, dim3(gpu::blocks_for(d->rows, kThreads)), dim3(kThreads), 0, s,
                       (const T *)x, (T *)y, *d);
  if (d->x_inner || d->y_inner) {
    const int64_t inner = d->x_inner ? d->x_inner : d->y_inner;
    if ((d->x_inner && d->y_inner && d->x_inner != d->y_inner) || d->rows % inner) return -1;
    // The most positions a block whose tile fits, while the grid still has
    // two blocks an SM (batch 1 has few positions to share out).
    int rows = d->cols <= cm_max_cols<32>() ? 32 : d->cols <= cm_max_cols<16>() ? 16
               : d->cols <= cm_max_cols<8>()    ? 8
                                                : 0;
    while (rows > 8 && d->rows / inner * ((inner + rows - 1) / rows) < gpu::kFillBlocks) rows /= 2;
    if (rows && (!d->x_inner || (!d->skip && !d->sbias && !d->sum)) &&
        d->rows / inner * ((inner + rows - 1) / rows) < INT32_MAX) {
      if (const int piece = cm_rows_piece<T>(x, y, d, inner)) {
        if (rows == 32) return launch_cm_rows<T, 32>(x, y, d, inner, piece, s);
        if (rows == 16) return launch_cm_rows<T, 16>(x, y, d, inner, piece, s);
        return launch_cm_rows<T, 8>(x, y, d, inner, piece, s);
      }
      if (rows == 32) return launch_cm<T, 32>(x, y, d, inner, s);
      if (rows == 16) return launch_cm<T, 16>(x, y, d, inner, s);
      return launch_cm<T, 8>(x, y, d, inner, s);
    }
    return gpu::launch(norm_strided_kernel<T>, dim3(gpu::blocks_for(d->rows, kThreads)), dim3(kThreads), 0, s,
                       (const T *)x, (T *)y, *d);
  }
  if (d->cols <= kWarpCols) {
    const int lanes = rows_lanes<T>(x, y, d);
    if (lanes) {
      const int64_t v = (d->cols / vec<T>::n + lanes - 1) / lanes;
      switch (v) {
        case 1: return launch_rows<T, 1>(x, y, d, lanes, s);
        case 2: return launch_rows<T, 2>(x, y, d, lanes, s);
        case 3: return launch_rows<T, 3>(x, y, d, lanes, s);
        case 4: return launch_rows<T, 4>(x, y, d, lanes, s);
        case 5: return launch_rows<T, 5>(x, y, d, lanes, s);
        case 6: return launch_rows<T, 6>(x, y, d, lanes, s);
        case 7: return launch_rows<T, 7>(x, y, d, lanes, s);
        case 8: return launch_rows<T, 8>(x, y, d, lanes, s);
        default: break;
      }
    }
    const int64_t groups = (d->rows + 7) / 8;
    const unsigned blocks = (unsigned)(groups < 65535 * 8 ? groups : 65535 * 8);
    return gpu::launch(norm_warp_kernel<T>, dim3(blocks), dim3(kThreads), (size_t)d->cols * 8 * sizeof(float), s,
                       (const T *)x, (T *)y, *d);
  }
  // few rows, or rows with a piece for every thread (an LLM prompt's: 2048+ wide)
  if ((d->rows < 256 || d->cols / vec<T>::n >= kVecThreads) && vec_fits<T>(x, y, d)) {
    return gpu::launch(norm_vec_kernel<T>, dim3((unsigned)d->rows), dim3(kVecThreads), 0, s, (const T *)x, (T *)y, *d);
  }
  const unsigned blocks = (unsigned)(d->rows < 65535 * 8 ? d->rows : 65535 * 8);
  // Few wide rows (an LLM decode step: one row of 2048+ per token): a block
  // of 1024 threads, so each thread's loads are few and in flight together;
  // 256 threads took ~14 us per 2048-wide row on an H100, latency-bound.
  const int threads = d->rows < 256 ? 1024 : kThreads;
  if (d->cols <= GPU_NORM_CACHE_COLS)
    return gpu::launch(norm_kernel<T, true>, dim3(blocks), dim3(threads), (size_t)d->cols * sizeof(float), s,
                       (const T *)x, (T *)y, *d);
  return gpu::launch(norm_kernel<T, false>, dim3(blocks), dim3(threads), 0, s, (const T *)x, (T *)y, *d);
}

}  // namespace

// Whether map m is one dim of packed rows (or none: one row); *rs: its
// row stride.
static bool packed_rows(const gpu_norm_rows &m, int64_t cols, int64_t *rs) {
  *rs = m.nd == 1 ? m.stride[0] : 0;
  return m.nd <= 1 && m.col_n == cols;
}

extern "C" int gpu_layernorm(const void *x, void *y, int dtype, const gpu_norm_desc *d, void *stream) {
  if (d->rows <= 0 || d->cols <= 0) return 0;
  if ((!d->x_inner && d->xm.col_n <= 0) || (d->skip && d->sm.col_n <= 0) || (!d->y_inner && d->ym.col_n != d->cols) ||
      d->xm.nd > GPU_MAX_DIMS || d->sm.nd > GPU_MAX_DIMS || d->ym.nd > GPU_MAX_DIMS || d->rows > (int64_t)UINT32_MAX ||
      d->cols > INT32_MAX)
    return -1;
  gpu_norm_desc k = *d;
  const bool simple = (k.x_inner || packed_rows(k.xm, k.cols, &k.x_rs)) &&
                      (!k.skip || packed_rows(k.sm, k.cols, &k.s_rs)) && (k.y_inner || packed_rows(k.ym, k.cols, &k.y_rs));
  k.mapped = !simple;
  GPU_DISPATCH(dtype, norm, x, y, &k, (gpuStream_t)stream)
}
