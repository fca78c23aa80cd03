// gpu_nbits: MatMulNBits over 4-bit weights left as the model packs them.
//
// gemv_rows (decode: a few rows of A) is a pass over B, which is what the
// step costs: half a byte a weight. Each 32-lane group owns kCols rows of B
// (output columns) and walks them with 16-byte loads (8 when a block is 16
// codes), one block's codes a load, so one scale and zero point a load.
// Codes become fp32 with the 2^23 trick (OR into a float's mantissa, one
// subtract that also removes the zero point), are dotted with up to 8 rows
// of A, and the block's sum is scaled once. A is read straight from global
// memory by every group. Measured on an H100 (K = N = 4096, fp16): 8.4 us
// at one row (B read at 1.2 TB/s), then about 3.5 us more per row: each
// group re-reads all of A at about L2 speed, so A's reads, not B's, bound
// it past one row. The known next step: A staged once per block in shared
// memory as fp32, for more columns a block (docs/architecture.md).
//
// dequant_rows writes rows of B as dtype for a BLAS GEMM (prefill).
#include "gpu/gpu_common.cuh"

namespace {

using gpu::ld;
using gpu::st;

constexpr int kWarps = 4;  // 32-lane groups a block
constexpr int kCols = 2;   // rows of B a group: A's values serve both
constexpr float kMagic = 8388608.f;  // 2^23: a float whose mantissa is an integer

// Code i (0..7) of a word of eight, minus zf = 2^23 + zero point: exact.
__device__ __forceinline__ float code(uint32_t word, int i, float zf) {
  return __uint_as_float(0x4B000000u | ((word >> (4 * i)) & 15u)) - zf;
}

__device__ __forceinline__ float zero_f(const uint8_t *zp, int64_t zp_bytes, int64_t j, int64_t blk) {
  return kMagic + (float)(zp ? (zp[j * zp_bytes + blk / 2] >> ((blk & 1) * 4)) & 15 : 8);
}

// Elements k .. k + 7 of a row of A as fp32, zeros from kend on. vec: a
// 16-byte load at k is aligned (the launcher checked the row starts).
__device__ __forceinline__ void load8(const float *p, int64_t k, int64_t kend, bool vec, float *o) {
  if (vec && k + 8 <= kend) {
    const float4 x = *(const float4 *)(p + k), y = *(const float4 *)(p + k + 4);
    o[0] = x.x, o[1] = x.y, o[2] = x.z, o[3] = x.w, o[4] = y.x, o[5] = y.y, o[6] = y.z, o[7] = y.w;
    return;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) o[i] = k + i < kend ? p[k + i] : 0.f;
}
// The two halves packed in a 32-bit word, low first, as fp32.
__device__ __forceinline__ void halves(uint32_t v, float *o) {
  o[0] = __half2float(__ushort_as_half((unsigned short)(v & 0xffffu)));
  o[1] = __half2float(__ushort_as_half((unsigned short)(v >> 16)));
}
__device__ __forceinline__ void load8(const gpu_half *p, int64_t k, int64_t kend, bool vec, float *o) {
  if (vec && k + 8 <= kend) {
    const uint4 u = *(const uint4 *)(p + k);
    halves(u.x, o), halves(u.y, o + 2), halves(u.z, o + 4), halves(u.w, o + 6);
    return;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) o[i] = k + i < kend ? __half2float(p[k + i]) : 0.f;
}

// VB bytes of codes (VB / 4 words of eight).
template <int VB>
__device__ __forceinline__ void load_codes(const uint8_t *p, uint32_t *w);
template <>
__device__ __forceinline__ void load_codes<16>(const uint8_t *p, uint32_t *w) {
  const uint4 u = *(const uint4 *)p;
  w[0] = u.x, w[1] = u.y, w[2] = u.z, w[3] = u.w;
}
template <>
__device__ __forceinline__ void load_codes<8>(const uint8_t *p, uint32_t *w) {
  const uint2 u = *(const uint2 *)p;
  w[0] = u.x, w[1] = u.y;
}

// y[m, j] for rows m < rows (<= R) of A and kCols columns j per group.
template <typename T, int R, int VB>
__global__ void __launch_bounds__(kWarps * 32) gemv_rows(gpu_nbits_desc d, int rows, bool vec) {
  const int lane = threadIdx.x & 31;
  const int64_t col0 = ((int64_t)blockIdx.x * kWarps + (threadIdx.x >> 5)) * kCols;
  if (col0 >= d.n) return;  // the whole group: no barrier below
  const int ncols = d.n - col0 < kCols ? (int)(d.n - col0) : kCols;
  const T *a = (const T *)d.a, *scales = (const T *)d.scales;
  const int64_t row_bytes = d.k_blocks * (d.block_size / 2), loads = row_bytes / VB;
  const int bs_log2 = __ffsll((long long)d.block_size) - 1;  // a power of two: no 64-bit division
  float acc[R][kCols];
#pragma unroll
  for (int m = 0; m < R; ++m)
#pragma unroll
    for (int c = 0; c < kCols; ++c) acc[m][c] = 0.f;
  for (int64_t l = lane; l < loads; l += 32) {
    const int64_t k0 = l * (2 * VB), blk = k0 >> bs_log2;
    uint32_t w[kCols][VB / 4];
    float zf[kCols], sc[kCols];
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const int64_t j = col0 + (c < ncols ? c : 0);  // a missing column repeats the first, then is dropped
      load_codes<VB>(d.b + j * row_bytes + l * VB, w[c]);
      sc[c] = ld(scales, j * d.k_blocks + blk);
      zf[c] = zero_f(d.zp, d.zp_bytes, j, blk);
    }
    float part[R][kCols];
#pragma unroll
    for (int m = 0; m < R; ++m)
#pragma unroll
      for (int c = 0; c < kCols; ++c) part[m][c] = 0.f;
#pragma unroll
    for (int q = 0; q < VB / 4; ++q) {
      float wf[kCols][8];
#pragma unroll
      for (int c = 0; c < kCols; ++c)
#pragma unroll
        for (int i = 0; i < 8; ++i) wf[c][i] = code(w[c][q], i, zf[c]);
#pragma unroll
      for (int m = 0; m < R; ++m) {
        if (m < rows) {
          float av[8];
          load8(a + m * d.k, k0 + 8 * q, d.k, vec, av);
#pragma unroll
          for (int c = 0; c < kCols; ++c)
#pragma unroll
            for (int i = 0; i < 8; ++i) part[m][c] = fmaf(av[i], wf[c][i], part[m][c]);
        }
      }
    }
#pragma unroll
    for (int m = 0; m < R; ++m)
#pragma unroll
      for (int c = 0; c < kCols; ++c) acc[m][c] = fmaf(part[m][c], sc[c], acc[m][c]);
  }
#pragma unroll
  for (int m = 0; m < R; ++m)
#pragma unroll
    for (int c = 0; c < kCols; ++c)
#pragma unroll
      for (int off = 16; off > 0; off /= 2) acc[m][c] += gpu::shfl_xor32(acc[m][c], off);
  if (lane != 0) return;
  const T *bias = (const T *)d.bias;
#pragma unroll
  for (int m = 0; m < R; ++m)
#pragma unroll
    for (int c = 0; c < kCols; ++c)
      if (m < rows && c < ncols)
        st((T *)d.y, m * d.n + col0 + c, acc[m][c] + (bias ? ld(bias, col0 + c) : 0.f));
}

template <typename T, int R>
void launch_rows(const gpu_nbits_desc &d, int rows, bool v16, bool vec, unsigned blocks, gpuStream_t s) {
  if (v16) gemv_rows<T, R, 16><<<blocks, kWarps * 32, 0, s>>>(d, rows, vec);
  else gemv_rows<T, R, 8><<<blocks, kWarps * 32, 0, s>>>(d, rows, vec);
}

template <typename T>
int gemv(const gpu_nbits_desc *d, gpuStream_t s) {
  if (d->m <= 0 || d->n <= 0) return 0;
  const int64_t blob = d->block_size / 2, per_block = kWarps * kCols;
  const uintptr_t bp = (uintptr_t)d->b;
  if (d->block_size < 16 || (d->block_size & (d->block_size - 1)) != 0 || bp % 8 != 0 || d->k < 1) return -1;
  const int64_t blocks = (d->n + per_block - 1) / per_block;
  if (blocks > 0x7fffffff) return -1;
  const bool v16 = blob % 16 == 0 && bp % 16 == 0;
  const bool vec = (uintptr_t)d->a % 16 == 0 && (d->k * (int64_t)sizeof(T)) % 16 == 0;
  for (int64_t m0 = 0; m0 < d->m; m0 += GPU_NBITS_GEMV_ROWS) {
    gpu_nbits_desc p = *d;
    const int rows = d->m - m0 < GPU_NBITS_GEMV_ROWS ? (int)(d->m - m0) : GPU_NBITS_GEMV_ROWS;
    p.a = (const T *)d->a + m0 * d->k;
    p.y = (T *)d->y + m0 * d->n;
    if (rows == 1) launch_rows<T, 1>(p, rows, v16, vec, (unsigned)blocks, s);
    else if (rows == 2) launch_rows<T, 2>(p, rows, v16, vec, (unsigned)blocks, s);
    else if (rows <= 4) launch_rows<T, 4>(p, rows, v16, vec, (unsigned)blocks, s);
    else launch_rows<T, GPU_NBITS_GEMV_ROWS>(p, rows, v16, vec, (unsigned)blocks, s);
  }
  return gpu::last_error();
}

// 16 consecutive elements at p; vec: p is 16-byte aligned.
__device__ __forceinline__ void store16(float *p, const float *v) {
#pragma unroll
  for (int i = 0; i < 16; i += 4) gpu::stv<4, float>(p, i, v + i);
}
__device__ __forceinline__ uint32_t pack_halves(float lo, float hi) {
  return (uint32_t)__half_as_ushort(__float2half_rn(lo)) | ((uint32_t)__half_as_ushort(__float2half_rn(hi)) << 16);
}
__device__ __forceinline__ void store16(gpu_half *p, const float *v) {
  uint32_t w[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) w[i] = pack_halves(v[2 * i], v[2 * i + 1]);
  ((uint4 *)p)[0] = make_uint4(w[0], w[1], w[2], w[3]);
  ((uint4 *)p)[1] = make_uint4(w[4], w[5], w[6], w[7]);
}

// w[jj, :] = row n0 + jj of B dequantised, 16 codes (8 bytes) a thread.
template <typename T>
__global__ void dequant_rows(gpu_nbits_desc d, int64_t n0, int64_t nc, T *w, bool vec) {
  const T *scales = (const T *)d.scales;
  const int64_t row_bytes = d.k_blocks * (d.block_size / 2), words = row_bytes / 8;
  const int bs_log2 = __ffsll((long long)d.block_size) - 1;
  for (int64_t jj = blockIdx.y; jj < nc; jj += gridDim.y) {
    const int64_t j = n0 + jj;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < words; q += (int64_t)gridDim.x * blockDim.x) {
      const int64_t k0 = q * 16, blk = k0 >> bs_log2;
      if (k0 >= d.k) continue;  // only the last block's padding
      const uint2 u = *(const uint2 *)(d.b + j * row_bytes + q * 8);
      const float sc = ld(scales, j * d.k_blocks + blk), zf = zero_f(d.zp, d.zp_bytes, j, blk);
      float v[16];
#pragma unroll
      for (int i = 0; i < 8; ++i) v[i] = code(u.x, i, zf) * sc, v[8 + i] = code(u.y, i, zf) * sc;
      T *out = w + jj * d.k + k0;
      if (vec && k0 + 16 <= d.k) {
        store16(out, v);
      } else {
        for (int i = 0; i < 16 && k0 + i < d.k; ++i) st(out, i, v[i]);
      }
    }
  }
}

template <typename T>
int dequant(const gpu_nbits_desc *d, int64_t n0, int64_t nc, void *w, gpuStream_t s) {
  if (nc <= 0) return 0;
  const int64_t row_bytes = d->k_blocks * (d->block_size / 2), words = row_bytes / 8;
  if (d->block_size < 16 || (d->block_size & (d->block_size - 1)) != 0 || (uintptr_t)d->b % 8 != 0 || n0 < 0 ||
      n0 + nc > d->n)
    return -1;
  const bool vec = (uintptr_t)w % 16 == 0 && (d->k * (int64_t)sizeof(T)) % 16 == 0;
  const int threads = 128;
  int64_t gx = (words + threads - 1) / threads;
  if (gx > 1024) gx = 1024;
  const dim3 grid((unsigned)gx, (unsigned)(nc < 65535 ? nc : 65535));
  dequant_rows<T><<<grid, threads, 0, s>>>(*d, n0, nc, (T *)w, vec);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_nbits_gemv(const gpu_nbits_desc *d, int dtype, void *stream) {
  switch (dtype) {
    case GPU_DT_F32: return gemv<float>(d, (gpuStream_t)stream);
    case GPU_DT_F16: return gemv<gpu_half>(d, (gpuStream_t)stream);
    default: return -1;
  }
}

extern "C" int gpu_nbits_dequant(const gpu_nbits_desc *d, int64_t n0, int64_t nc, void *w, int dtype, void *stream) {
  switch (dtype) {
    case GPU_DT_F32: return dequant<float>(d, n0, nc, w, (gpuStream_t)stream);
    case GPU_DT_F16: return dequant<gpu_half>(d, n0, nc, w, (gpuStream_t)stream);
    default: return -1;
  }
}
