// gpu_attention: fused attention, one 32-lane group per 1, 2 or 4 query
// rows and the rows of a block sharing tiles of 32 keys in shared memory.
// Per tile, lane j scores key j against the rows (q from shared memory,
// broadcast), the group folds the tile into a running max and sum per row
// (an online softmax), then each lane accumulates its output columns from
// the tile of V rows, which reuses the K tile's memory. Scores never leave the chip; any strides, so
// transposed, packed or head-split operands are read in place.
// Why our own kernel: the library SDPA engines take fp16/bf16 only, and for
// the sequence lengths of encoders (S, L <= 512) one pass over K and V per
// block of rows costs less than two GEMM launches, a softmax and the score
// tensor's round trip through memory.
#include <math.h>

#include "gpu/gpu_attn.cuh"

namespace {

using gpu::attn_span;
using gpu::ld;
using gpu::st;

template <typename T>
__device__ __forceinline__ float ld_elem(const T *p, int64_t i) { return ld(p, i); }

constexpr int kTile = 32;  // keys per tile: one per lane
constexpr int kWarps = 4;  // 32-lane groups per block

// Rows k0 .. k0 + 31 (zeros past len) of cols elements each, from src at
// base + row * row_st + col * col_st, into tile[row - k0][col] (ld floats
// apart). Lanes run along whichever dim is contiguous in memory (exporters
// often store K transposed), so the reads coalesce.
template <typename T>
__device__ __forceinline__ void load_tile(float *tile, int ld, const T *src, int64_t base, int64_t k0, int64_t len,
                                          int cols, int64_t row_st, int64_t col_st, int w, int lane) {
  if (row_st == 1 && col_st != 1) {
    const int64_t row = k0 + lane;
    for (int i = w; i < cols; i += kWarps) tile[lane * ld + i] = row < len ? ld_elem(src, base + row + i * col_st) : 0.f;
    return;
  }
  for (int kk = w; kk < kTile; kk += kWarps) {
    const int64_t row = k0 + kk;
    for (int i = lane; i < cols; i += 32)
      tile[kk * ld + i] = row < len ? ld_elem(src, base + row * row_st + i * col_st) : 0.f;
  }
}

// q . k over D elements from shared memory, R query rows against one key
// row: four at a time (16-byte reads; K rows padded to keep them aligned
// and conflict-free) when D allows.
template <int R>
__device__ __forceinline__ void dots(const float *q, const float *kr, int D, float *dot) {
  if ((D & 3) == 0) {
    for (int i = 0; i < D; i += 4) {
      const float4 k4 = *(const float4 *)(kr + i);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float4 q4 = *(const float4 *)(q + r * D + i);
        dot[r] = fmaf(q4.x, k4.x, fmaf(q4.y, k4.y, fmaf(q4.z, k4.z, fmaf(q4.w, k4.w, dot[r]))));
      }
    }
  } else {
    for (int i = 0; i < D; ++i) {
      const float k = kr[i];
#pragma unroll
      for (int r = 0; r < R; ++r) dot[r] = fmaf(q[r * D + i], k, dot[r]);
    }
  }
}

// R query rows per 32-lane group (more rows: each K and V element read
// from shared memory serves more of them); NV output columns per lane.
template <typename T, int R, int NV>
__global__ void __launch_bounds__(32 * kWarps) attention_rows(gpu_attn_desc d) {
  gpu::wait_prior();
  gpu::start_next();
  extern __shared__ float4 sm4[];
  float *sm = (float *)sm4;
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int D = (int)d.head_dim, Dv = (int)d.v_dim;
  const int ldk = (D + 3) / 4 * 4 + 4;  // K rows: 16-byte aligned, banks shifted by 4 per row
  const int tile_floats = kTile * (ldk > Dv ? ldk : Dv);
  float *tile = sm;
  float *qs = sm + tile_floats + w * R * D;  // this group's R query rows
  const int64_t b = blockIdx.z, h = blockIdx.y, kh = h / (d.heads / d.kv_heads);
  const int64_t nrb = (d.seq + kWarps * R - 1) / (kWarps * R), rb = blockIdx.x % nrb, split = blockIdx.x / nrb;
  const int64_t row0 = rb * kWarps * R + w * R;  // this group's first row
  const T *Q = (const T *)d.q, *K = (const T *)d.k, *V = (const T *)d.v;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t row = row0 + r;
    const int64_t base = d.q_off + b * d.q_st[0] + h * d.q_st[1] + row * d.q_st[2];
    for (int i = lane; i < D; i += 32) qs[r * D + i] = row < d.seq ? ld(Q, base + i * d.q_st[3]) : 0.f;
  }
  int64_t last = (rb + 1) * kWarps * R - 1;  // the block's last row
  if (last > d.seq - 1) last = d.seq - 1;
  const attn_span a = gpu::attn_keys(d, b, d.fold ? 0 : rb * kWarps * R, d.fold ? 0 : last, kTile);
  int64_t kfirst = a.kfirst, klim = a.klim;
  if (d.split > 1) {  // this block's range of keys
    if (split * d.split_len > kfirst) kfirst = split * d.split_len;
    if ((split + 1) * d.split_len < klim) klim = (split + 1) * d.split_len;
  }
  const int64_t kbase = d.k_off + b * d.k_st[0] + kh * d.k_st[1];
  const int64_t vbase = d.v_off + b * d.v_st[0] + kh * d.v_st[1];
  float acc[R][NV], m[R], l[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.f;
#pragma unroll
    for (int t = 0; t < NV; ++t) acc[r][t] = 0.f;
  }
  for (int64_t k0 = kfirst; k0 < klim; k0 += kTile) {
    __syncthreads();  // the previous tile's V reads (and the q rows) are done
    // keys from klim on load as zeros: a cache's unwritten rows may hold inf
    // or NaN bits, and their weight 0 times inf is NaN
    load_tile(tile, ldk, K, kbase, k0, klim, D, d.k_st[2], d.k_st[3], w, lane);
    __syncthreads();
    const int64_t key = k0 + lane;
    float dot[R];
#pragma unroll
    for (int r = 0; r < R; ++r) dot[r] = 0.f;
    dots<R>(qs, tile + lane * ldk, D, dot);
    float p[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t row = row0 + r;
      const bool valid = row < d.seq && key < d.kv_len;
      const float s = valid ? gpu::attn_score<T>(d, a, dot[r], b, h, row, (d.fold ? 0 : row) + a.past, key) : -INFINITY;
      float tmax = s;
      for (int off = 16; off > 0; off /= 2) tmax = fmaxf(tmax, gpu::shfl_xor32(tmax, off));
      const float mnew = fmaxf(m[r], tmax);
      const float mu = mnew == -INFINITY ? 0.f : mnew;  // all -inf so far: weights 0, not NaN
      p[r] = valid ? __expf(s - mu) : 0.f;
      const float alpha = __expf(m[r] - mu);
      float psum = p[r];
      for (int off = 16; off > 0; off /= 2) psum += gpu::shfl_xor32(psum, off);
      l[r] = l[r] * alpha + psum;
      m[r] = mnew;
#pragma unroll
      for (int t = 0; t < NV; ++t) acc[r][t] *= alpha;
    }
    __syncthreads();  // every lane's K reads are done
    load_tile(tile, Dv, V, vbase, k0, klim, Dv, d.v_st[2], d.v_st[3], w, lane);
    __syncthreads();
    const int n = d.kv_len - k0 < kTile ? (int)(d.kv_len - k0) : kTile;
    for (int j = 0; j < n; ++j) {
      float vj[NV];
#pragma unroll
      for (int t = 0; t < NV; ++t) vj[t] = lane + 32 * t < Dv ? tile[j * Dv + lane + 32 * t] : 0.f;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float pj = gpu::shfl32(p[r], j);
#pragma unroll
        for (int t = 0; t < NV; ++t) acc[r][t] = fmaf(pj, vj[t], acc[r][t]);
      }
    }
  }
  if (d.split > 1) {  // unnormalised: the combine kernel weighs the ranges
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t row = row0 + r;
      if (row >= d.seq) break;
      float *part = d.partial + (((b * d.heads + h) * d.seq + row) * d.split + split) * (Dv + 2);
      if (lane == 0) part[0] = m[r], part[1] = l[r];
#pragma unroll
      for (int t = 0; t < NV; ++t)
        if (lane + 32 * t < Dv) part[2 + lane + 32 * t] = acc[r][t];
    }
    return;
  }
  T *O = (T *)d.out;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t row = row0 + r;
    if (row >= d.seq) break;
    const int64_t obase = b * d.o_st[0] + h * d.o_st[1] + row * d.o_st[2];
    const float inv = 1.f / l[r];  // l == 0: every key masked with -inf
#pragma unroll
    for (int t = 0; t < NV; ++t) {
      const int dd = lane + 32 * t;
      if (dd < Dv) st(O, obase + dd * d.o_st[3], l[r] > 0.f ? acc[r][t] * inv : d.empty_zero ? 0.f : NAN);
    }
  }
}

// The scores of the GEMM form, x[b, h][s, l] (fp32, heads sstride apart, already
// scaled), masked, biased and turned into probabilities in place: one
// 32-lane group per row.
__global__ void scores_softmax(gpu_attn_desc d, float *x, int64_t sstride) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t rows = d.batch * d.heads * d.seq;
  const int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int64_t s = row % d.seq, bh = row / d.seq, h = bh % d.heads, b = bh / d.heads;
  float *xr = x + bh * sstride + s * d.kv_len;
  int64_t lens = d.kv_len;
  if (d.mask && d.mask_lens) lens = gpu::attn_mask_len(d.mask, d.mask_dtype, b * d.mask_st[0]);
  float m = -INFINITY;
  for (int64_t k = lane; k < d.kv_len; k += 32) {
    float v = xr[k];
    bool masked = (d.causal && k > s) || (d.mask && d.mask_lens && k >= lens);
    if (d.mask && !d.mask_lens)
      masked = masked || gpu::attn_mask_keeps(d.mask, d.mask_dtype,
                                              b * d.mask_st[0] + h * d.mask_st[1] + s * d.mask_st[2] + k * d.mask_st[3]) ==
                             (bool)d.mask_invert;
    if (masked) v = d.mask_add ? v + d.fill : d.fill;
    if (gpu::attn_lowest(d, s, k)) v = -FLT_MAX;
    if (d.bias) v += ld((const float *)d.bias, b * d.bias_st[0] + h * d.bias_st[1] + s * d.bias_st[2] + k * d.bias_st[3]);
    xr[k] = v;
    m = fmaxf(m, v);
  }
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, gpu::shfl_xor32(m, off));
  const float mu = m == -INFINITY ? 0.f : m;
  float sum = 0.f;
  for (int64_t k = lane; k < d.kv_len; k += 32) sum += __expf(xr[k] - mu);
  for (int off = 16; off > 0; off /= 2) sum += gpu::shfl_xor32(sum, off);
  const float inv = sum > 0.f ? 1.f / sum : (d.empty_zero ? 0.f : NAN);
  for (int64_t k = lane; k < d.kv_len; k += 32) xr[k] = __expf(xr[k] - mu) * inv;
}

// The key ranges of a split attention merged per row: out = sum_i e^(m_i - M)
// acc_i / sum_i e^(m_i - M) l_i, one 32-lane group per row. Lane i holds range
// i's weight (ranges past 32 fold into lanes); the column sums then read the
// ranges' partial rows with independent loads (unrolled), not one chain.
template <typename T>
__global__ void combine_splits(gpu_attn_desc d) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t rows = d.batch * d.heads * d.seq;
  const int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int64_t s = row % d.seq, bh = row / d.seq, h = bh % d.heads, b = bh / d.heads;
  const int n = (int)d.split, Dv = (int)d.v_dim, w = Dv + 2;
  const float *part = d.partial + row * (int64_t)n * w;
  float M = -INFINITY;
  for (int i = lane; i < n; i += 32) M = fmaxf(M, part[i * w]);
  for (int off = 16; off > 0; off /= 2) M = fmaxf(M, gpu::shfl_xor32(M, off));
  const float mu = M == -INFINITY ? 0.f : M;
  float L = 0.f;
  for (int i = lane; i < n; i += 32) L += part[i * w + 1] * __expf(part[i * w] - mu);
  for (int off = 16; off > 0; off /= 2) L += gpu::shfl_xor32(L, off);
  const float inv = L > 0.f ? 1.f / L : 0.f;
  const int64_t obase = b * d.o_st[0] + h * d.o_st[1] + s * d.o_st[2];
  for (int c = lane; c < Dv; c += 32) {
    float acc = 0.f;
#pragma unroll 8
    for (int i = 0; i < n; ++i) acc += part[i * w + 2 + c] * __expf(part[i * w] - mu);
    st((T *)d.out, obase + c * d.o_st[3], L > 0.f ? acc * inv : d.empty_zero ? 0.f : NAN);
  }
}

template <typename T, int R, int NV>
int launch(const gpu_attn_desc *d, gpuStream_t s) {
  const int rows = kWarps * R;
  const int64_t gx = (d->seq + rows - 1) / rows * (d->split > 1 ? d->split : 1);
  if (gx > 0x7fffffff) return -1;
  const int ldk = (int)((d->head_dim + 3) / 4 * 4 + 4);
  const int tile = kTile * (ldk > d->v_dim ? ldk : (int)d->v_dim);
  const size_t smem = sizeof(float) * ((size_t)tile + (size_t)rows * d->head_dim);
  if (smem > 48 * 1024) return -1;
  dim3 grid((unsigned)gx, (unsigned)d->heads, (unsigned)d->batch);
  gpu::launch(attention_rows<T, R, NV>, grid, 32 * kWarps, smem, s, *d);
  if (d->split > 1) {
    const int64_t nrows = d->batch * d->heads * d->seq, blocks = (nrows + 7) / 8;
    if (blocks > 0x7fffffff) return -1;
    gpu::launch(combine_splits<T>, (unsigned)blocks, 256, 0, s, *d);
  }
  return gpu::last_error();
}

template <typename T, int R>
int launch_rows(const gpu_attn_desc *d, gpuStream_t s) {
  if (d->v_dim <= 64) return launch<T, R, 2>(d, s);
  if (d->v_dim <= 128) return launch<T, R, 4>(d, s);
  return launch<T, R, 8>(d, s);
}

// Rows per group: as many as keep at least ~2 blocks per multiprocessor
// of a large GPU busy (256 blocks), so short sequences still spread out.
template <typename T>
int attention(const gpu_attn_desc *d, gpuStream_t s) {
  if (d->batch <= 0 || d->heads <= 0 || d->seq <= 0 || d->v_dim <= 0) return 0;
  if (d->head_dim < 1 || d->head_dim > GPU_ATTN_MAX_DIM || d->v_dim > GPU_ATTN_MAX_DIM || d->kv_heads < 1 ||
      d->heads % d->kv_heads != 0 || d->heads > 65535 || d->batch > 65535)
    return -1;
  const int64_t heads = d->batch * d->heads;
  if (heads * ((d->seq + 4 * kWarps - 1) / (4 * kWarps)) >= 256 && d->head_dim <= 128) return launch_rows<T, 4>(d, s);
  if (heads * ((d->seq + 2 * kWarps - 1) / (2 * kWarps)) >= 256) return launch_rows<T, 2>(d, s);
  return launch_rows<T, 1>(d, s);
}

// The keys' additive bias of a key mask: fill where the mask drops the key,
// else 0 (the mask read at row 0 and head 0: it broadcasts over both).
template <typename T>
__global__ void key_bias_kernel(gpu_attn_desc d, T *bias) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t n = d.batch * d.kv_len;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    st(bias, i, gpu::attn_mask_drops(d, i / d.kv_len, 0, 0, i % d.kv_len) ? d.fill : 0.f);
}

template <typename T>
int key_bias(const gpu_attn_desc *d, void *bias, gpuStream_t s) {
  const int64_t n = d->batch * d->kv_len;
  if (n <= 0) return 0;
  gpu::launch(key_bias_kernel<T>, gpu::blocks_for(n, 256), 256, 0, s, *d, (T *)bias);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_attention_key_bias(const gpu_attn_desc *d, void *bias, int dtype, void *stream) {
  if (!d->mask || d->mask_lens) return -1;
  GPU_DISPATCH(dtype, key_bias, d, bias, (gpuStream_t)stream)
}

extern "C" int gpu_attention_softmax(const gpu_attn_desc *d, float *scores, int64_t head_stride, void *stream) {
  const int64_t rows = d->batch * d->heads * d->seq;
  if (rows <= 0 || d->kv_len <= 0) return 0;
  const int64_t blocks = (rows + 7) / 8;
  if (blocks > 0x7fffffff) return -1;
  gpu::launch(scores_softmax, (unsigned)blocks, 256, 0, (gpuStream_t)stream, *d, scores, head_stride);
  return gpu::last_error();
}

extern "C" int gpu_attention(const gpu_attn_desc *d, int dtype, void *stream) {
  const int rc = gpu::flash_attention(d, dtype, (gpuStream_t)stream);  // tensor cores, where it takes the shape
  if (rc != -1) return rc;
  GPU_DISPATCH(dtype, attention, d, (gpuStream_t)stream)
}
