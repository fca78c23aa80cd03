// gpu_nbits: MatMulNBits over 4-bit weights left as the model packs them.
//
// gemv_rows (decode: a few rows of A) is a pass over B, which is what the
// step costs: half a byte a weight. A block of kWarps 32-lane groups takes
// one slice of K and walks column blocks (C rows of B, output columns, a
// group: 2 at one or two rows of A, 4 at more). It first stages that slice
// of up to 8 rows of A in shared memory as fp32, once (padded 4 floats
// every 32, so the lanes' 16-byte reads, 128 bytes apart, hit distinct
// banks); before that it issues its first loads of B so they overlap the
// staging. Each lane reads its columns with 16-byte streaming loads (8
// when a block is 16 codes; ld.global.nc, no L1 allocation), one block's
// codes a load, so one scale and zero point a load, several steps of loads
// at a time (usually a lane's whole slice), and the next column block's
// loads are issued before this one's lane sums are reduced.
// With fp32 A, codes become fp32 with the 2^23 trick (OR into a float's
// mantissa, one subtract that also removes the zero point) and are dotted
// with the rows of A, each A value read from shared memory serving C
// columns; fp32 sums throughout. With fp16 A (and blocks of 32 codes or
// more) the block stages A as int16 with a scale every 32 values, and the
// codes meet it in dp2a instructions (two products each into exact int32
// sums: the integer form, Q16, below): about a quarter of the instructions
// a code, and the grid is what the GPU holds at once (no partial second
// wave). When the columns alone make too few blocks, a slice of A would
// not fit or one row's A is long (kOneRowSlice), K is split over blocks
// that write fp32 partial sums; the last block to arrive at a column block
// (d.arrivals) adds them in slice order, so whichever block it is the sums
// are the same (gemv_sum, a second kernel, where no counts are given).
//
// Measured on an H100 (test_backend_cuda --bench-nbits, fp16, block 32,
// zero points, graph replay, us per run, M = 1/2/4/8), the float form,
// then the integer form in the same session: Llama-3.2-1B gate/up (K 2048,
// N 2 x 8192) 8.3, 10.9, 17.8, 31.1 -> 6.7, 8.9, 14.6, 25.3; lm_head (N
// 128256) 82.1, 105.2, 185.6, 284.5 -> 55.7, 65.7, 98.5, 175.5 (2.7 TB/s
// at M = 1); the decode chain (16 layers + head, weights cold) 641 -> 568
// us. qkv, o_proj and down (5, 4.5, 10 us at M = 1) did not move: at one
// row they are bound by latency (a graph launch, A's staging, one column
// block a block), not by instructions.
// At one row of fp16 A on sm_90 and up, where a column block's weights fit
// shared memory (every layer of a 1B-shaped decoder, not its head),
// gemv_bulk replaces gemv_rows: see there.
// Under d.norm_scale the staging first applies the RMS norm that made A
// (pre_norm: one row, K not split), and the row's 1 / rms multiplies the
// finished sums: the norm's kernel is gone (gb_nbits.c, nbits_link).
// dequant_rows writes rows of B as dtype for a BLAS GEMM (prefill).
// Under glu (op_nbits.glu: B's rows gate, up, gate, up, ...) a group's two
// columns are one pair and lane 0 stores act(gate) * up; the GEMM path's
// products are paired by glu_cols.
#include "gpu/gpu_common.cuh"

namespace {

using gpu::ld;
using gpu::st;

constexpr int kWarps = 4;  // 32-lane groups a block
constexpr int kThreads = kWarps * 32;
constexpr int kTargetBlocks = 256;  // split K until the grid has this many (2 an H100 SM)
constexpr int64_t kSplitQuantum = 1024;  // K slices are multiples of this (32 lanes x 32 codes)
constexpr int64_t kMaxColBlocks = 132 * 8;  // blocks a slice: a few waves of an H100's SMs
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

// The norm's prologue on elements k .. k + 7 of row m of A, o as load8 made
// them (zeros from d.k on): o = (a + skip + skip bias) * scale, ss += the
// sum of squares before the scale; the grid's first block stores the sum.
// vec: every row and vector here starts 16-byte aligned.
template <typename T>
__device__ __forceinline__ void pre_norm(const gpu_nbits_desc &d, int64_t m, int64_t k, bool vec, float *o, float &ss) {
  float add[8], g[8];
  if (d.norm_skip) {
    load8((const T *)d.norm_skip + m * d.k, k, d.k, vec, add);
#pragma unroll
    for (int i = 0; i < 8; ++i) o[i] += add[i];
  }
  if (d.norm_sbias) {
    load8((const T *)d.norm_sbias, k, d.k, vec, add);
#pragma unroll
    for (int i = 0; i < 8; ++i) o[i] += add[i];
  }
  load8((const T *)d.norm_scale, k, d.k, vec, g);
  if (d.norm_sum && blockIdx.x == 0 && blockIdx.y == 0) {
    T *sum = (T *)d.norm_sum + m * d.k;
#pragma unroll
    for (int i = 0; i < 8; ++i)
      if (k + i < d.k) st(sum, k + i, o[i]);
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) ss = fmaf(o[i], o[i], ss), o[i] *= g[i];
}

// VB bytes of codes (VB / 4 words of eight), read once: not kept in L1.
template <int VB>
__device__ __forceinline__ void load_codes(const uint8_t *p, uint32_t *w);
template <>
__device__ __forceinline__ void load_codes<16>(const uint8_t *p, uint32_t *w) {
#if defined(GPU_VENDOR_HIP)
  const uint4 u = *(const uint4 *)p;
#else
  uint4 u;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w) : "l"(p));
#endif
  w[0] = u.x, w[1] = u.y, w[2] = u.z, w[3] = u.w;
}
template <>
__device__ __forceinline__ void load_codes<8>(const uint8_t *p, uint32_t *w) {
#if defined(GPU_VENDOR_HIP)
  const uint2 u = *(const uint2 *)p;
#else
  uint2 u;
  asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(u.x), "=r"(u.y) : "l"(p));
#endif
  w[0] = u.x, w[1] = u.y;
}

// Element k of a staged slice of A: 4 floats of padding every 32.
__device__ __forceinline__ int pidx(int k) { return k + (k >> 5) * 4; }
__host__ __device__ inline int64_t padded(int64_t k) { return k + k / 32 * 4; }

// Columns a 32-lane group takes and steps (32 chunks of K each) a lane
// loads at once, by the rows of A: at one or two rows more groups and
// every load of a lane issued together (usually its whole slice); at four
// and eight each A value read from shared memory serves four columns.
// One row takes two steps: a whole slice at K = 2048. Four steps held
// registers such a slice never used, and at 118 registers a thread an SM
// held 4 blocks; at two steps, 80 registers, it holds 6 (kOneRowBlocks).
// H200, --bench-nbits in one session: the one-row chain 485 -> 475 us,
// lm_head alone 54.1 -> 48.0 us; held to 64 registers (8 blocks, some
// spilled) 525 us and 60.6 us (2026-11-29).
__host__ __device__ constexpr int cols_for(int rows) { return rows <= 2 ? 2 : 4; }
__host__ __device__ constexpr int steps_for(int rows) { return rows <= 1 ? 2 : rows <= 2 ? 4 : rows <= 4 ? 2 : 1; }
#if defined(GPU_VENDOR_HIP)
constexpr int kOneRowBlocks = 1;  // HIP reads launch bounds' second value as waves an EU: not measured there
#else
constexpr int kOneRowBlocks = 6;  // blocks an SM holds at one row (__launch_bounds__ below)
#endif

// One lane's loads for one step: C columns' codes at one chunk of K.
template <int VB, int C>
struct step_regs {
  uint32_t w[C][VB / 4];
  float sc[C], zf[C];
};

template <typename T, int VB, int C>
__device__ __forceinline__ void load_step(const gpu_nbits_desc &d, int64_t col0, int ncols, int64_t row_bytes,
                                          int64_t ch, int bs_log2, step_regs<VB, C> &r) {
  const T *scales = (const T *)d.scales;
  const int64_t blk = (ch * (2 * VB)) >> bs_log2;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int64_t j = col0 + (c < ncols ? c : 0);  // a missing column repeats the first, then is dropped
    load_codes<VB>(d.b + j * row_bytes + ch * VB, r.w[c]);
    r.sc[c] = ld(scales, j * d.k_blocks + blk);
    r.zf[c] = zero_f(d.zp, d.zp_bytes, j, blk);
  }
}

// The integer form (Q16): each row of A is staged as int16 with one fp32
// scale a 32-element A-block (scale = max |a| / 32767): a value moves by
// at most 1/65534 of its A-block's largest, 1/32 of fp16's rounding of
// that largest value, so a dot loses less than A's own rounding unless an
// A-block mixes magnitudes far apart (a value 1000x below its block's
// largest keeps ~5 bits; accuracy_level 1 takes the float form instead).
// A 16-byte chunk of codes (32 codes: one A-block inside one weight block)
// is dotted with it by dp2a, two code-times-A products an instruction into
// an exact int32 sum. The zero point comes off once a chunk as zp * (the
// A-block's integer sum), then one fp32 multiply-add applies both scales.
// An A-block is kQWords words: its 32 values as 16 int16 pairs in the
// order the dp2a operands take them (codes 0,2 | 4,6 | 1,3 | 5,7 of each
// word of eight), its scale, its sum and two spare words, which also put
// the lanes' 16-byte reads 80 bytes apart: distinct banks.
constexpr int kQWords = 20;

// c + a.lo * byte X of b + a.hi * byte Y of b: (X, Y) = (0, 1), or (2, 3) when Hi.
template <bool Hi>
__device__ __forceinline__ int dp2(int a, uint32_t b, int c) {
#if defined(GPU_VENDOR_HIP)
  const int b0 = (int)((b >> (Hi ? 16 : 0)) & 255u), b1 = (int)((b >> (Hi ? 24 : 8)) & 255u);
  return c + (int)(short)(a & 0xffff) * b0 + (int)(short)((uint32_t)a >> 16) * b1;
#else
  int d;
  if (Hi) asm("dp2a.hi.s32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  else asm("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#endif
}

__device__ __forceinline__ int pack16(int lo, int hi) { return (int)(((uint32_t)lo & 0xffffu) | ((uint32_t)hi << 16)); }

// Sum over one word of eight codes times the A values of its pairs p.
__device__ __forceinline__ int dot_word(uint32_t w, int4 p, int acc) {
  const uint32_t even = w & 0x0F0F0F0Fu, odd = (w >> 4) & 0x0F0F0F0Fu;  // codes 0,2,4,6 and 1,3,5,7
  acc = dp2<false>(p.x, even, acc);
  acc = dp2<true>(p.y, even, acc);
  acc = dp2<false>(p.z, odd, acc);
  return dp2<true>(p.w, odd, acc);
}

// Stages elements k0 + t .. k0 + t + 7 of a row of A (o, zeros past kn)
// as part of A-block t / 32 at q (every thread of the block calls it at
// once: four lanes share an A-block's scale and sum).
__device__ __forceinline__ void stage_q16(int *q, int t, int kn, const float *o) {
  float amax = 0.f;
  bool nan = false;
#pragma unroll
  for (int i = 0; i < 8; ++i) amax = fmaxf(amax, fabsf(o[i])), nan |= o[i] != o[i];
  amax = fmaxf(amax, gpu::shfl_xor32(amax, 1));
  amax = fmaxf(amax, gpu::shfl_xor32(amax, 2));
  float bad = gpu::shfl_xor32(nan ? 1.f : 0.f, 1) + (nan ? 1.f : 0.f);
  bad += gpu::shfl_xor32(bad, 2);
  const float inv = amax > 0.f && amax <= 3.0e38f ? 32767.f / amax : 0.f;
  int v[8], sum = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = __float2int_rn(o[i] * inv), sum += v[i];
  float fs = (float)sum;  // |sum| < 2^24 (32 values of at most 32767): exact as a float
  fs += gpu::shfl_xor32(fs, 1);
  fs += gpu::shfl_xor32(fs, 2);
  if (t >= kn) return;
  int *blk = q + (t / 32) * kQWords;
  ((int4 *)blk)[(t / 8) & 3] = make_int4(pack16(v[0], v[2]), pack16(v[4], v[6]), pack16(v[1], v[3]), pack16(v[5], v[7]));
  // a NaN or an infinity in the A-block makes its products NaN (the float
  // form gives +-inf for an infinity times a nonzero weight)
  if ((t & 31) == 0) blk[16] = __float_as_int(bad > 0.f || amax > 3.0e38f ? __int_as_float(0x7fc00000) : amax / 32767.f), blk[17] = (int)fs;
}

// acc plus one 32-code chunk's term: a column's four words of codes w
// dotted with the A-block's pairs p in int32, its zero point off as zp x
// the A-block's integer sum (sc.y), both scales applied once (sc.x: A's).
__device__ __forceinline__ float q16_term(const uint32_t *w, const int4 *p, int2 sc, int zp, float scale, float acc) {
  int dot = 0;
#pragma unroll
  for (int q = 0; q < 4; ++q) dot = dot_word(w[q], p[q], dot);
  return fmaf((float)(dot - zp * sc.y), __int_as_float(sc.x) * scale, acc);
}

// Stages codes k0 .. k0 + kn - 1 of row m of A (zeros past K) in the
// integer form at q, under a norm its prologue first (ss: this thread's
// sum of squares). Every one of the block's NT threads calls it at once
// (stage_q16 exchanges lanes). kStageRounds rounds of loads are in flight
// together: a long row (K = 8192) is two trips to memory, not eight.
template <typename T, int NT>
__device__ __forceinline__ void stage_row_q16(const gpu_nbits_desc &d, int m, int64_t k0, int kn, bool vec, int *q,
                                              float &ss) {
  constexpr int kStageRounds = 4;
  const T *a = (const T *)d.a + m * d.k;
  for (int t0 = 0; t0 < kn; t0 += NT * 8 * kStageRounds) {
    float o[kStageRounds][8];
#pragma unroll
    for (int u = 0; u < kStageRounds; ++u) {
      const int t = t0 + u * NT * 8 + threadIdx.x * 8;
#pragma unroll
      for (int i = 0; i < 8; ++i) o[u][i] = 0.f;
      if (t < kn) load8(a, k0 + t, d.k, vec, o[u]);
      if (d.norm_scale && t < kn) pre_norm<T>(d, m, k0 + t, vec, o[u], ss);
    }
#pragma unroll
    for (int u = 0; u < kStageRounds; ++u)
      if (t0 + u * NT * 8 < kn) stage_q16(q, t0 + u * NT * 8 + threadIdx.x * 8, kn, o[u]);
  }
}

// The barrier that ends A's staging; then, under a norm, the row's 1 / rms
// from the threads' sums of squares ss (1 without one). Every thread of
// the block's W warps calls it.
template <int W>
__device__ __forceinline__ float staged_rinv(const gpu_nbits_desc &d, float ss) {
  __shared__ float ss_warp[W];
  if (d.norm_scale) {
#pragma unroll
    for (int off = 16; off > 0; off /= 2) ss += gpu::shfl_xor32(ss, off);
    if ((threadIdx.x & 31) == 0) ss_warp[threadIdx.x >> 5] = ss;
  }
  __syncthreads();
  if (!d.norm_scale) return 1.f;
  float v = 0.f;
#pragma unroll
  for (int w = 0; w < W; ++w) v += ss_warp[w];
  return rsqrtf(v / (float)d.k + d.norm_eps);
}

// y[m, j] (+ bias) from the sums v (bias not added) of rows m of A and
// columns j, j + 1 of B; under glu the pair is (gate, up) and makes one
// output, else two.
template <typename T>
__device__ __forceinline__ void store_pair(const gpu_nbits_desc &d, int64_t m, int64_t j, float v0, float v1,
                                           bool second) {
  const T *bias = (const T *)d.bias;
  if (bias) v0 += ld(bias, j), v1 += second ? ld(bias, j + 1) : 0.f;
  if (d.glu_act) {
    st((T *)d.y, m * (d.n / 2) + j / 2, gpu::act(d.glu_act, v0, d.glu_alpha, d.glu_beta) * v1);
    return;
  }
  st((T *)d.y, m * d.n + j, v0);
  if (second) st((T *)d.y, m * d.n + j + 1, v1);
}

// After a block of a K split has written its partial sums of column block
// cb (this group's columns col0 .. col0 + ncols - 1): the block that
// arrives there last adds every slice's sums, in slice order, and stores
// them, then sets the count back to zero for the next pass. Every thread of
// the block calls it at once.
template <typename T>
__device__ __forceinline__ void add_slices(const gpu_nbits_desc &d, int rows, int64_t cb, int64_t col0, int ncols,
                                           int lane) {
  if (!gpu::arrive_last(&d.arrivals[cb], gridDim.y, true) || lane != 0) return;
  const int64_t count = (int64_t)rows * d.n;
  for (int m = 0; m < rows; ++m)
    for (int c = 0; c < ncols; c += 2) {
      const float *w = d.ws + m * d.n + col0 + c;
      const bool second = c + 1 < ncols;
      float v0 = 0.f, v1 = 0.f;
#pragma unroll 4
      for (unsigned s = 0; s < gridDim.y; ++s) {  // L2 reads: another SM wrote them
        v0 += gpu::ld_cg(w + s * count);
        if (second) v1 += gpu::ld_cg(w + s * count + 1);
      }
      store_pair<T>(d, m, col0 + c, v0, v1, second);
    }
}

// Sums over K slice blockIdx.y (ks codes long) of y[m, j] for rows m < rows
// (<= R) of A and C columns j a group: to y (+ bias, glu) when the grid has
// one slice, else to ws[slice][m][j] (fp32).
template <typename T, int R, int VB, bool Q16>
__global__ void __launch_bounds__(kThreads, R == 4 ? 3 : R == 1 ? kOneRowBlocks : 1)
    gemv_rows(gpu_nbits_desc d, int rows, bool vec, int ks, int64_t col_blocks) {
  constexpr int C = cols_for(R), NS = steps_for(R);
  // kScaled: each code scaled as it is made (one multiply a code, R rows of
  // use), so no per-step sums: the registers many rows need.
  constexpr bool kScaled = R >= 4 && !Q16;
  extern __shared__ float4 sh4[];
  float *sa = (float *)sh4;  // [R][padded(ks)]
  int *sq = (int *)sh4;      // Q16: [R][ks / 32][kQWords]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t row_bytes = d.k_blocks * (d.block_size / 2), row_codes = row_bytes * 2;
  const int64_t k0 = (int64_t)blockIdx.y * ks;  // this slice: codes k0 .. k0 + kn - 1
  const int kn = (int)(row_codes - k0 < ks ? row_codes - k0 : ks);
  const int bs_log2 = __ffsll((long long)d.block_size) - 1;  // a power of two: no 64-bit division
  const int64_t ch0 = k0 / (2 * VB);
  const int chunks = kn / (2 * VB);

  // The block walks column blocks cb, cb + gridDim.x, ..., each C columns a
  // group, NS steps of loads at a time (g0: the first chunk of the next
  // NS), the next loads issued before this one's sums are used.
  int64_t cb = blockIdx.x;
  int g0 = 0;
  int64_t col0 = (cb * kWarps + warp) * C;
  int ncols = col0 >= d.n ? 0 : d.n - col0 < C ? (int)(d.n - col0) : C;
  step_regs<VB, C> r[NS];
#pragma unroll
  for (int u = 0; u < NS; ++u)
    if (ncols && u * 32 + lane < chunks) load_step<T, VB, C>(d, col0, ncols, row_bytes, ch0 + u * 32 + lane, bs_log2, r[u]);
  // B, scales and zero points are constants (ops/nbits.c): the loads above
  // may run ahead of the kernel before (gpu::launch); A may not.
  gpu::wait_prior();
  // The next kernel's blocks may then take the room this grid leaves and
  // issue their loads of constants during this one's sums (d.next_early), or
  // start at the end of the loop below. The one-row chain of --bench-nbits:
  // H100 680 us early against 653 late (2026-11-24); H200 504 early against
  // 544 late, 461 early with one-row slices of kOneRowSlice, 519 late with
  // them; the int4 1B-shaped decoder's replayed step 0.78 / 0.78 ms late,
  // 0.77 / 0.80 early, 0.73 / 0.71 early with those slices (2026-11-29).
  // Early by default.
  if (d.next_early) gpu::start_next();

  // Stage rows of A, codes k0 .. k0 + kn - 1 (zeros past K), as fp32, while
  // the first loads are in flight; under a norm, its prologue on each
  // element and each row's sum of squares (ss).
  const int stride = Q16 ? ks / 32 * kQWords : (int)padded(ks);
  const T *a = (const T *)d.a;
  float ss = 0.f;  // a norm takes one row (gpu_nbits_gemv_norm_ok)
  if (Q16) {
    for (int m = 0; m < rows; ++m) stage_row_q16<T, kThreads>(d, m, k0, kn, vec, sq + m * stride, ss);
  } else {
    for (int m = 0; m < rows; ++m)
      for (int t = threadIdx.x * 8; t < kn; t += kThreads * 8) {
        float o[8];
        load8(a + m * d.k, k0 + t, d.k, vec, o);
        if (d.norm_scale) pre_norm<T>(d, m, k0 + t, vec, o, ss);
        float4 *p = (float4 *)(sa + m * stride + pidx(t));
        p[0] = make_float4(o[0], o[1], o[2], o[3]);
        p[1] = make_float4(o[4], o[5], o[6], o[7]);
      }
  }
  const float rinv = staged_rinv<kWarps>(d, ss);  // the only barrier

  float acc[R][C];
#pragma unroll
  for (int m = 0; m < R; ++m)
#pragma unroll
    for (int c = 0; c < C; ++c) acc[m][c] = 0.f;
  for (;;) {
    if (ncols) {
#pragma unroll
      for (int u = 0; u < NS; ++u) {
        const int lc = g0 + u * 32 + lane;  // this lane's chunk in the slice
        if (lc >= chunks) break;
        const step_regs<VB, C> &cur = r[u];
        if constexpr (Q16) {
#pragma unroll
          for (int m = 0; m < R; ++m) {
            if (m < rows) {
              const int *ab = sq + m * stride + lc * kQWords;
              const int2 sc = *(const int2 *)(ab + 16);
              int4 p[4];
#pragma unroll
              for (int q = 0; q < 4; ++q) p[q] = ((const int4 *)ab)[q];
#pragma unroll
              for (int c = 0; c < C; ++c)
                acc[m][c] = q16_term(cur.w[c], p, sc, (int)(cur.zf[c] - kMagic), cur.sc[c], acc[m][c]);
            }
          }
        } else {
          const int base = pidx(lc * (2 * VB));
          float part[R][C];
#pragma unroll
          for (int m = 0; m < R; ++m)
#pragma unroll
            for (int c = 0; c < C; ++c) part[m][c] = kScaled ? acc[m][c] : 0.f;
#pragma unroll
          for (int q = 0; q < VB / 4; ++q) {
            float wf[C][8];
#pragma unroll
            for (int c = 0; c < C; ++c)
#pragma unroll
              for (int i = 0; i < 8; ++i) {
                wf[c][i] = code(cur.w[c][q], i, cur.zf[c]);
                if (kScaled) wf[c][i] *= cur.sc[c];
              }
#pragma unroll
            for (int m = 0; m < R; ++m) {
              if (m < rows) {
                const float4 x = *(const float4 *)(sa + m * stride + base + 8 * q);
                const float4 y = *(const float4 *)(sa + m * stride + base + 8 * q + 4);
                const float av[8] = {x.x, x.y, x.z, x.w, y.x, y.y, y.z, y.w};
#pragma unroll
                for (int c = 0; c < C; ++c)
#pragma unroll
                  for (int i = 0; i < 8; ++i) part[m][c] = fmaf(av[i], wf[c][i], part[m][c]);
              }
            }
          }
#pragma unroll
          for (int m = 0; m < R; ++m)
#pragma unroll
            for (int c = 0; c < C; ++c) acc[m][c] = kScaled ? part[m][c] : fmaf(part[m][c], cur.sc[c], acc[m][c]);
        }
      }
    }
    // The next NS steps: later in this column block, or the next one's first.
    const int64_t pcol0 = col0;
    const int pcols = ncols;
    g0 += NS * 32;
    const bool done = g0 >= chunks;
    if (done) {
      g0 = 0;
      cb += gridDim.x;
      col0 = (cb * kWarps + warp) * C;
      ncols = cb >= col_blocks || col0 >= d.n ? 0 : d.n - col0 < C ? (int)(d.n - col0) : C;
    }
    if (ncols) {
#pragma unroll
      for (int u = 0; u < NS; ++u)
        if (g0 + u * 32 + lane < chunks)
          load_step<T, VB, C>(d, col0, ncols, row_bytes, ch0 + g0 + u * 32 + lane, bs_log2, r[u]);
    }
    if (!done) continue;
    // Column block finished: sums over the lanes (times the norm's 1 /
    // rms), lane 0 writes.
#pragma unroll
    for (int m = 0; m < R; ++m)
#pragma unroll
      for (int c = 0; c < C; ++c) {
#pragma unroll
        for (int off = 16; off > 0; off /= 2) acc[m][c] += gpu::shfl_xor32(acc[m][c], off);
        acc[m][c] *= rinv;
      }
    if (lane == 0) {
#pragma unroll
      for (int m = 0; m < R; ++m)
#pragma unroll
        for (int c = 0; c < C; c += 2)  // C is even, and so is every group's first column
          if (m < rows && c < pcols) {
            if (gridDim.y == 1) {
              store_pair<T>(d, m, pcol0 + c, acc[m][c], acc[m][c + 1], c + 1 < pcols);
            } else {
              float *w = d.ws + ((int64_t)blockIdx.y * rows + m) * d.n + pcol0 + c;
              w[0] = acc[m][c];
              if (c + 1 < pcols) w[1] = acc[m][c + 1];
            }
          }
    }
    if (gridDim.y > 1 && d.arrivals) add_slices<T>(d, rows, cb - gridDim.x, pcol0, pcols, lane);
#pragma unroll
    for (int m = 0; m < R; ++m)
#pragma unroll
      for (int c = 0; c < C; ++c) acc[m][c] = 0.f;
    if (cb >= col_blocks) break;
  }
  if (!d.next_early) gpu::start_next();
}

#if !defined(GPU_VENDOR_HIP)
// The one-row GEMV from shared memory (gemv_bulk; CUDA, sm_90 and up).
// gemv_rows keeps a lane's next loads in registers: ~8 KiB in flight a
// block, so a block's share of a 19 MB gate/up projection is several
// dependent trips to memory and the GEMV runs at ~2 TB/s (9-10 us on an
// H200 for 3.9 us of bytes at peak). Here a block owns a run of column
// pairs whose codes, scales and zero points fit its shared memory, and its
// first thread starts copying all of them at once (the copy engine's
// cp.async.bulk, in kBulkPieces pieces, each landing on its own mbarrier)
// before the kernel waits for the one before: B is a constant, so the
// copies run under the previous kernel's tail and A's staging. Warps then
// take the pairs in order, each waiting only for its pair's piece; a
// pair's sums are gemv_rows's integer form at one row (q16_term). Where a
// block's pairs would take more than kBulkSmem, its pieces take turns in
// a ring of slots, refilled by thread 0 after each round of pairs; past
// twice what a block may hold (a 128k-vocabulary head) gemv_rows runs.
// Measured on H200s (2026-11-29; --bench-nbits' one-row chain of the
// 1B-shaped decoder's GEMVs, gemv_rows 472-474 us in each session): 256
// threads 488 us; 512 threads 424 (and two blocks of 256 an SM 438 in the
// same session). Slower than one copy a region a piece (465 us in that
// session): bulk copies of at most 4 KiB (479), per-thread 16-byte
// cp.async landing on the same mbarriers (542).
constexpr int kBulkThreads = 512, kBulkWarps = kBulkThreads / 32;
constexpr int kBulkPieces = 8;  // pieces a block's pairs are cut into where they all fit
constexpr int kBulkSlots = 8;   // mbarriers: at most kBulkPieces, or a ring's slots
// A block's shared memory past which its pieces take turns in a ring of
// slots: at most half an SM's, so the next kernel's block fits beside it
// (the down projection's 94 KB beside gate/up, whose 154 KB it had waited
// for). H200, one session: chain 461 -> 445 us; the replayed step within
// noise (0.656-0.680 -> 0.666-0.675 ms, gemv_rows 0.683). Registers still
// keep a second gemv_bulk block off the SM (74 a thread: 38k of 64k); held
// to 61 (__launch_bounds__ for two blocks, no spills) so the next GEMV's
// block fits and starts its copies early, it was slower: chain 445 -> 480
// us, step at prompt 128 0.62-0.63 -> 0.68-0.72 ms (H200, 2026-11-29).
constexpr int64_t kBulkSmem = 112 << 10;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
using gpu::smem_addr;
__device__ __forceinline__ void mbar_init(uint64_t *m) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(m)) : "memory");
}
__device__ __forceinline__ void mbar_expect(uint64_t *m, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(m)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, unsigned bytes, uint64_t *m) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(m))
      : "memory");
}
// Waits until the mbarrier's phase of this parity (its one arrival and its
// bytes) is done.
__device__ __forceinline__ void mbar_wait(uint64_t *m, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_addr(m)), "r"(parity)
                 : "memory");
  } while (!done);
}
#endif

// Bytes a column takes in each region of a block's shared memory: codes,
// scales, zero points (multiples of 16: bulk_plan).
struct bulk_sizes {
  int64_t codes, scales, zp;
};
template <typename T>
__host__ __device__ inline bulk_sizes bulk_col(const gpu_nbits_desc &d) {
  return {d.k_blocks * (d.block_size / 2), d.k_blocks * (int64_t)sizeof(T), d.zp ? d.zp_bytes : 0};
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Thread 0 starts copying piece i (pairs i ppp .. of the block's np, whose
// first column is j0) into slot `slot` of the regions, to land on bar.
template <typename T>
__device__ void start_piece(const gpu_nbits_desc &d, int64_t j0, int np, int ppp, int i, int slot, uint8_t *codes,
                            uint8_t *scl, uint8_t *zps, uint64_t *bar) {
  const bulk_sizes cs = bulk_col<T>(d);
  const int64_t lo = 2 * (int64_t)i * ppp, hi = 2 * (int64_t)((i + 1) * ppp < np ? (i + 1) * ppp : np);
  const int64_t cols = (j0 + hi < d.n ? hi : d.n - j0) - lo, at = 2 * (int64_t)slot * ppp;
  mbar_expect(bar, (unsigned)(cols * (cs.codes + cs.scales + cs.zp)));
  const uint8_t *src[3] = {d.b + (j0 + lo) * cs.codes, (const uint8_t *)d.scales + (j0 + lo) * cs.scales,
                           d.zp ? d.zp + (j0 + lo) * cs.zp : nullptr};
  uint8_t *dst[3] = {codes + at * cs.codes, scl + at * cs.scales, zps + at * cs.zp};
  const int64_t bytes[3] = {cols * cs.codes, cols * cs.scales, cols * cs.zp};
  for (int r = 0; r < 3; ++r)
    if (bytes[r]) bulk_copy(dst[r], src[r], (unsigned)bytes[r], bar);
}
#endif

// Pairs p0 .. p0 + ppb - 1 of y's columns (a glu pair makes one output),
// pieces of ppp pairs in `slots` slots of shared memory (piece i in slot i
// % slots: a ring where the block's pieces outnumber them); A staged in
// a_words ints.
template <typename T>
__global__ void __launch_bounds__(kBulkThreads, 1)
    gemv_bulk(gpu_nbits_desc d, bool vec, int ppb, int ppp, int slots, int a_words) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ float4 sh4[];
  uint64_t *bar = (uint64_t *)sh4;
  int *sq = (int *)(bar + kBulkSlots);
  const bulk_sizes cs = bulk_col<T>(d);
  const int64_t slot_cols = 2 * (int64_t)ppp;
  uint8_t *codes = (uint8_t *)(sq + a_words);
  uint8_t *scl = codes + slots * slot_cols * cs.codes, *zps = scl + slots * slot_cols * cs.scales;
  const int64_t pairs = (d.n + 1) / 2, p0 = (int64_t)blockIdx.x * ppb, j0 = 2 * p0;
  const int np = (int)(pairs - p0 < ppb ? pairs - p0 : ppb), pieces = (np + ppp - 1) / ppp;
  const bool ring = pieces > slots;
  int started = 0;  // thread 0's
  if (threadIdx.x == 0) {
    for (int i = 0; i < slots && i < pieces; ++i) mbar_init(bar + i);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (; started < slots && started < pieces; ++started)
      start_piece<T>(d, j0, np, ppp, started, started, codes, scl, zps, bar + started);
  }
  __syncthreads();  // the mbarriers made before any thread waits on one
#endif
  gpu::wait_prior();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (d.next_early) gpu::start_next();
  const int row_codes = (int)(d.k_blocks * d.block_size), chunks = row_codes / 32;
  float ss = 0.f;
  stage_row_q16<T, kBulkThreads>(d, 0, 0, row_codes, vec, sq, ss);
  const float rinv = staged_rinv<kBulkWarps>(d, ss);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int bs_log2 = __ffs((int)d.block_size) - 1;
  const T *scales = (const T *)scl;
  // With fewer pairs than warps, wpp warps share a pair, each taking every
  // wpp-th 32 chunks of K (then a pair a group: one round), their sums
  // added in warp order after the block's barrier: o_proj and down (8
  // pairs a block) used half the warps. H200, one session: chain 465 ->
  // 438 us (o_proj 6.3 -> 5.7, down 9.5 -> 8.8 us alone).
  int wpp = 1;
  while (wpp * 2 * np <= kBulkWarps) wpp *= 2;
  const int group = warp / wpp, part = warp % wpp, groups = kBulkWarps / wpp, rounds = (np + groups - 1) / groups;
  __shared__ float2 part_sums[kBulkWarps];
  for (int r = 0; r < rounds; ++r) {
    const int p = r * groups + group;
    if (p < np) {
      const int i = p / ppp;
      mbar_wait(bar + i % slots, (unsigned)(i / slots) & 1u);
      const int64_t jl = 2 * (int64_t)p, js = (i % slots) * slot_cols + 2 * (int64_t)(p - i * ppp);
      const bool second = j0 + jl + 1 < d.n;
      float acc[2] = {0.f, 0.f};
#pragma unroll 2
      for (int lc = part * 32 + lane; lc < chunks; lc += 32 * wpp) {
        const int *ab = sq + lc * kQWords;
        const int2 sc = *(const int2 *)(ab + 16);
        int4 pa[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) pa[q] = ((const int4 *)ab)[q];
        const int blk = (lc * 32) >> bs_log2;
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          if (c == 1 && !second) break;
          const int64_t jc = js + c;
          const uint4 u = *(const uint4 *)(codes + jc * cs.codes + lc * 16);
          const uint32_t w[4] = {u.x, u.y, u.z, u.w};
          const int zp = d.zp ? (zps[jc * cs.zp + blk / 2] >> ((blk & 1) * 4)) & 15 : 8;
          acc[c] = q16_term(w, pa, sc, zp, ld(scales, jc * d.k_blocks + blk), acc[c]);
        }
      }
#pragma unroll
      for (int c = 0; c < 2; ++c) {
#pragma unroll
        for (int off = 16; off > 0; off /= 2) acc[c] += gpu::shfl_xor32(acc[c], off);
      }
      if (lane == 0 && wpp == 1) store_pair<T>(d, 0, j0 + jl, acc[0] * rinv, acc[1] * rinv, second);
      if (lane == 0 && wpp > 1) part_sums[warp] = make_float2(acc[0], acc[1]);
    }
    if (ring && r + 1 < rounds) {
      // every warp is done with this round's pairs: the pieces they held
      // are free, and thread 0 refills their slots with the next pieces
      __syncthreads();
      if (threadIdx.x == 0) {
        const int done = (r + 1) * groups;
        for (; started < pieces && (started - slots + 1) * ppp <= done; ++started)
          start_piece<T>(d, j0, np, ppp, started, started % slots, codes, scl, zps, bar + started % slots);
      }
    }
  }
  if (wpp > 1) {
    __syncthreads();
    if (part == 0 && lane == 0 && group < np) {
      float2 v = part_sums[warp];
      for (int i = 1; i < wpp; ++i) v.x += part_sums[warp + i].x, v.y += part_sums[warp + i].y;
      const int64_t jl = 2 * (int64_t)group;
      store_pair<T>(d, 0, j0 + jl, v.x * rinv, v.y * rinv, j0 + jl + 1 < d.n);
    }
  }
  if (!d.next_early) gpu::start_next();
#endif
}
#endif

// The slices' partial sums (slice 0 first) of columns j, j + 1 of rows m
// (rows x n of them a slice), stored as gemv_rows does.
template <typename T>
__global__ void gemv_sum(gpu_nbits_desc d, int64_t rows, int slices) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t half = d.n / 2 + d.n % 2, count = rows * d.n;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows * half; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t m = i / half, j = 2 * (i % half);
    const bool second = j + 1 < d.n;
    float v0 = d.ws[m * d.n + j], v1 = second ? d.ws[m * d.n + j + 1] : 0.f;
    for (int s = 1; s < slices; ++s) {
      v0 += d.ws[s * count + m * d.n + j];
      if (second) v1 += d.ws[s * count + m * d.n + j + 1];
    }
    store_pair<T>(d, m, j, v0, v1, second);
  }
}

// Shared memory a block may take: opting in past 48 KiB where the runtime
// has the call (CUDA), so more rows of A fit a slice.
#if defined(GPU_VENDOR_HIP)
constexpr int64_t kSharedMax = 48 << 10;
#else
constexpr int64_t kSharedMax = 96 << 10;
#endif

// The longest K slice a block takes at `rows` rows of A: rows x padded(ks)
// floats within kSharedMax (36 KiB a block at one row: more would only
// cost blocks an SM).
__host__ __device__ constexpr int64_t slice_max(int rows) {
  return rows <= 1 ? 8192
                   : kSharedMax / (int64_t)((rows <= 2 ? 2 : rows <= 4 ? 4 : 8) * 4 * 9 / 8) / kSplitQuantum * kSplitQuantum;
}

// The longest slice at one row: K = 8192 (a down projection) in two
// slices, twice the blocks, each staging half of A before its sums (H200,
// with gemv_rows' early start: the one-row chain of --bench-nbits 504 ->
// 461 us; four slices of 2048, 501).
constexpr int64_t kOneRowSlice = 4096;

// How a pass of `rows` rows splits K: slices of *ks codes, returned count.
int64_t plan_split(const gpu_nbits_desc *d, int rows, int64_t *ks) {
  const int64_t row_codes = d->k_blocks * d->block_size;
  const int64_t per_block = kWarps * cols_for(rows), bx = (d->n + per_block - 1) / per_block;
  int64_t ks_max = slice_max(rows);
  const int64_t cap = d->slice_max >= kSplitQuantum ? d->slice_max / kSplitQuantum * kSplitQuantum
                      : rows <= 1                   ? kOneRowSlice
                                                    : ks_max;
  if (cap < ks_max) ks_max = cap;
  int64_t sl = (row_codes + ks_max - 1) / ks_max;
  const int64_t want = (kTargetBlocks + bx - 1) / bx, most = (row_codes + kSplitQuantum - 1) / kSplitQuantum;
  const int64_t par = want < most ? want : most;
  if (par > sl) sl = par;
  int64_t k = (row_codes + sl - 1) / sl;
  k = (k + kSplitQuantum - 1) / kSplitQuantum * kSplitQuantum;
  if (k > ks_max) k = ks_max;
  *ks = k;
  return (row_codes + k - 1) / k;
}

constexpr int kMaxDevices = gpu::kCachedDevices;  // per-device caches below; devices past this are asked each launch

// Lets kernel f take `bytes` of shared memory (past the default 48 KiB;
// CUDA asks for the opt-in), once a device (opted: the caller's
// flags for f): a function's attributes are the device's, and a benign
// race sets the same value twice. 0, or -1 when the runtime refused.
template <typename F>
int opt_in_shared(F *f, bool *opted, int64_t bytes = kSharedMax) {
#if defined(GPU_VENDOR_HIP)
  (void)f, (void)opted, (void)bytes;
  return 0;
#else
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return -1;
  if (dev >= 0 && dev < kMaxDevices && opted[dev]) return 0;
  if (cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess) return -1;
  if (dev >= 0 && dev < kMaxDevices) opted[dev] = true;
  return 0;
#endif
}

// Adds the K slices' partial sums in d.ws into y (gemv_sum), when a pass
// split K.
template <typename T>
int sum_slices(const gpu_nbits_desc &d, int rows, int64_t slices, gpuStream_t s) {
  if (slices <= 1) return 0;
  return gpu::launch(gemv_sum<T>, dim3(gpu::blocks_for((int64_t)rows * (d.n / 2 + 1), 256)), dim3(256), 0, s, d,
                     (int64_t)rows, (int)slices);
}

// The blocks of kernel f (threads a block, sh bytes of dynamic shared
// memory) the current GPU holds at once (0: unknown), asked once a device
// (cached: the caller's counts + 1 for f at sh): the grid of a kernel whose
// blocks walk column blocks, so no second partial wave.
template <typename F>
int64_t resident_blocks(F *f, int threads, size_t sh, int64_t *cached) {
  int per_sm = 0, sms = 0, dev = 0;
  if (gpuGetDevice(&dev) != gpuSuccess) return 0;
  if (dev >= 0 && dev < kMaxDevices && cached[dev]) return cached[dev] - 1;
  if (gpuDeviceGetAttribute(&sms, gpuDevAttrMultiProcessorCount, dev) != gpuSuccess ||
      gpuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, threads, sh) != gpuSuccess)
    return 0;
  const int64_t fit = (int64_t)per_sm * sms;
  if (dev >= 0 && dev < kMaxDevices) cached[dev] = fit + 1;
  return fit;
}

// The current GPU's SMs, the shared memory one has and the most a block
// may opt into (false: unknown), asked once a device.
bool sm_info(int64_t *sms, int64_t *smem, int64_t *smem_block = nullptr) {
  static int64_t cached[kMaxDevices][3];  // SMs + 1, bytes an SM, bytes a block
  int dev = 0, n = 0, b = 0, bb = 0;
  if (gpuGetDevice(&dev) != gpuSuccess) return false;
  if (dev >= 0 && dev < kMaxDevices && cached[dev][0]) {
    *sms = cached[dev][0] - 1, *smem = cached[dev][1];
    if (smem_block) *smem_block = cached[dev][2];
    return true;
  }
  if (gpuDeviceGetAttribute(&n, gpuDevAttrMultiProcessorCount, dev) != gpuSuccess ||
      gpuDeviceGetAttribute(&b, gpuDevAttrMaxSharedMemoryPerMultiprocessor, dev) != gpuSuccess ||
      gpuDeviceGetAttribute(&bb, gpuDevAttrMaxSharedMemoryPerBlockOptin, dev) != gpuSuccess)
    return false;
  if (dev >= 0 && dev < kMaxDevices) cached[dev][1] = b, cached[dev][2] = bb, cached[dev][0] = (int64_t)n + 1;
  *sms = n, *smem = b;
  if (smem_block) *smem_block = bb;
  return true;
}

template <typename T, int R, int VB, bool Q16>
int launch_vb(const gpu_nbits_desc &d, int rows, bool vec, dim3 grid, int64_t ks, int64_t col_blocks, gpuStream_t s) {
  const size_t sh = Q16 ? (size_t)R * (size_t)(ks / 32 * kQWords) * sizeof(int) : (size_t)R * (size_t)padded(ks) * sizeof(float);
  // Q16: the occupancy at the longest slice, so one value serves every shape
  const size_t sh_most = Q16 ? (size_t)R * (size_t)(slice_max(R) / 32 * kQWords) * sizeof(int) : sh;
  static bool opted[kMaxDevices];
  if (sh_most > (48 << 10) && opt_in_shared(gemv_rows<T, R, VB, Q16>, opted)) return -1;
  if (Q16) {
    static int64_t cached[kMaxDevices];
    const int64_t fit = resident_blocks(gemv_rows<T, R, VB, Q16>, kThreads, sh_most, cached);
    if (fit > 0 && (int64_t)grid.x > fit) grid.x = (unsigned)fit;
  }
  return gpu::launch(gemv_rows<T, R, VB, Q16>, grid, dim3(kThreads), sh, s, d, rows, vec, (int)ks, col_blocks);
}

template <typename T, int R>
int launch_rows(const gpu_nbits_desc &d, int rows, bool v16, bool vec, gpuStream_t s) {
  const int64_t per_block = kWarps * cols_for(R), col_blocks = (d.n + per_block - 1) / per_block;
  int64_t ks = 0;
  const int64_t slices = plan_split(&d, rows, &ks);
  if (slices > 65535) return -1;
  if (slices > 1 && !d.ws) return -1;
  if (d.norm_scale && (slices > 1 || rows != 1)) return -1;  // a norm needs whole rows (gpu_nbits_gemv_norm_ok)
  // Enough blocks to fill the GPU a few times over; each walks column blocks.
  const int64_t bx = col_blocks < kMaxColBlocks ? col_blocks : kMaxColBlocks;
  const dim3 grid((unsigned)bx, (unsigned)slices);
  // fp16 A: the integer form unless d.exact (accuracy_level 1). fp32 A
  // keeps fp32.
  constexpr bool q16 = sizeof(T) == 2;
  const int rc = v16 && !d.exact ? launch_vb<T, R, 16, q16>(d, rows, vec, grid, ks, col_blocks, s)
               : v16             ? launch_vb<T, R, 16, false>(d, rows, vec, grid, ks, col_blocks, s)
                                 : launch_vb<T, R, 8, false>(d, rows, vec, grid, ks, col_blocks, s);
  return rc || d.arrivals ? rc : sum_slices<T>(d, rows, slices, s);
}

// The tensor-core form (fp16 A, 2 to kMmaMaxRows rows; CUDA, sm_80 and up):
// dequantising costs the same at any M, so several rows of A should share
// it. A 32-lane group takes 16 rows of B (output columns) and multiplies
// them with up to 8 * NT rows of A in mma.sync m16n8k16 steps, B as the
// 16 x 16 operand, A as the 16 x 8 one (NT of them), fp32 sums: at 8 rows
// as many instructions a code as at one. Each lane of a quad loads 32
// codes (16 bytes) of its two B rows a 128-code chunk, kMmaLoads chunks in
// flight and the next group's loads issued before this one's MMAs. A
// step's 16 k positions need not be consecutive, only the same in both
// operands: a word of eight codes c0..c7 gives half2 (c0, c4), (c1, c5),
// (c2, c6), (c3, c7) by masking nibbles into fp16 1024's mantissa (dq_word:
// five integer and eight half2 instructions a word), so A is
// staged in shared memory once a block, its pairs permuted to match
// (x0, x4), (x1, x5), ... 16 bytes a lane a word, rows 64 bytes apart mod
// 128 so a quarter warp's loads hit distinct banks. A weight is (code -
// zp) * scale rounded to fp16 once, as the dequantising GEMM path stores
// it; accuracy_level 1 keeps the float GEMV.
constexpr int kMmaWarps = 4;  // a block: 4 groups of 16 B rows
constexpr int kMmaCols = 16 * kMmaWarps;
constexpr int kMmaChunk = 128;  // codes of a B row a group takes a step (32 a lane)
constexpr int kMmaPad = 4;      // uint4s after a staged row of A
constexpr int kMmaMaxRows = 32;

// uint4s a staged row of A takes (ks codes), and the longest slice that
// fits kSharedMax with 8 * nt rows.
__host__ __device__ constexpr int64_t mma_row_u4(int64_t ks) { return ks / kMmaChunk * 16 + kMmaPad; }
__host__ __device__ constexpr int64_t mma_slice_max(int nt) {
  return (kSharedMax / (8 * nt * 16) - kMmaPad) / 16 * kMmaChunk;
}
__host__ __device__ constexpr int mma_tiles(int64_t rows) { return rows <= 8 ? 1 : rows <= 16 ? 2 : 4; }

// How the tensor-core form splits K at nt tiles of rows: slices of *ks
// codes (whole chunks, at least two a slice), returned count.
int64_t mma_split(const gpu_nbits_desc *d, int nt, int64_t *ks) {
  const int64_t chunks = (d->k_blocks * d->block_size + kMmaChunk - 1) / kMmaChunk;
  const int64_t bx = (d->n + kMmaCols - 1) / kMmaCols, most = mma_slice_max(nt) / kMmaChunk;
  int64_t sl = (chunks + most - 1) / most;
  const int64_t want = (kTargetBlocks + bx - 1) / bx, cap = (chunks + 1) / 2;
  const int64_t par = want < cap ? want : cap;
  if (par > sl) sl = par;
  const int64_t per = (chunks + sl - 1) / sl;
  *ks = per * kMmaChunk;
  return (chunks + per - 1) / per;
}

#if !defined(GPU_VENDOR_HIP)

constexpr int kMmaLoads = 4;  // chunks of loads a lane has in flight

__device__ __forceinline__ void mma_f16(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t h2_bits(__half2 v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  return u;
}
__device__ __forceinline__ __half2 bits_h2(uint32_t u) {
  __half2 v;
  memcpy(&v, &u, 4);
  return v;
}

// A word of eight codes as half2 (c0, c4), (c1, c5), (c2, c6), (c3, c7) of
// (code - zp) * scale: the low nibbles of each half masked into fp16 1024's
// mantissa (1024 + code), the high ones as 1024 + 16 code (times 1/16, exact:
// 64 + code); z2 = 1024 + zp and f2 = -(64 + zp) off exactly, one rounding in
// the multiply by s2.
__device__ __forceinline__ void dq_word(uint32_t w, __half2 z2, __half2 f2, __half2 s2, uint32_t o[4]) {
  const __half2 k16 = __float2half2_rn(0.0625f);
  const uint32_t w8 = w >> 8;
  o[0] = h2_bits(__hmul2(__hsub2(bits_h2((w & 0x000F000Fu) | 0x64006400u), z2), s2));
  o[1] = h2_bits(__hmul2(__hfma2(bits_h2((w & 0x00F000F0u) | 0x64006400u), k16, f2), s2));
  o[2] = h2_bits(__hmul2(__hsub2(bits_h2((w8 & 0x000F000Fu) | 0x64006400u), z2), s2));
  o[3] = h2_bits(__hmul2(__hfma2(bits_h2((w8 & 0x00F000F0u) | 0x64006400u), k16, f2), s2));
}

// One lane's loads for kMmaLoads chunks: its two B rows' codes, and each
// one's scale (fp16 bits) and zero point (<< 16).
struct mma_regs {
  uint32_t w[kMmaLoads][2][4];
  uint32_t sz[kMmaLoads][2];
};

// Chunks c0 .. c0 + kMmaLoads - 1 of rows j0, j1 of B at this lane's codes kc +
// 128 c; past the slice (chunks) or the row, zeros with scale 0.
__device__ __forceinline__ void mma_fetch(const gpu_nbits_desc &d, int64_t j0, int64_t j1, int64_t row_bytes,
                                          int64_t kc, int c0, int chunks, int bs_log2, mma_regs &r) {
  const unsigned short *scales = (const unsigned short *)d.scales;
  const int64_t j[2] = {j0, j1};
#pragma unroll
  for (int u = 0; u < kMmaLoads; ++u) {
    const int64_t kk = kc + (int64_t)(c0 + u) * kMmaChunk, blk = kk >> bs_log2;
    const bool in = c0 + u < chunks && kk < 2 * row_bytes;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      if (in) {
        load_codes<16>(d.b + j[i] * row_bytes + kk / 2, r.w[u][i]);
        const uint32_t zp = d.zp ? (d.zp[j[i] * d.zp_bytes + blk / 2] >> ((blk & 1) * 4)) & 15u : 8u;
        r.sz[u][i] = scales[j[i] * d.k_blocks + blk] | (zp << 16);
      } else {
        r.w[u][i][0] = r.w[u][i][1] = r.w[u][i][2] = r.w[u][i][3] = 0u;
        r.sz[u][i] = 0u;
      }
    }
  }
}

// The MMAs of the loaded chunks c0 ... (those before `chunks`) against the
// staged rows of A: xs at this lane's first (row g, chunk 0, lane t), rs
// uint4s a row.
template <int NT>
__device__ __forceinline__ void mma_group(const mma_regs &r, int c0, int chunks, const uint4 *xs, int64_t rs,
                                          float acc[NT][4]) {
#pragma unroll
  for (int u = 0; u < kMmaLoads; ++u) {
    if (c0 + u >= chunks) break;  // the same in every lane
    __half2 s2[2], z2[2], f2[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      s2[i] = __half2half2(__ushort_as_half((unsigned short)(r.sz[u][i] & 0xffffu)));
      z2[i] = __float2half2_rn(1024.f + (float)(r.sz[u][i] >> 16));
      f2[i] = __float2half2_rn(-64.f - (float)(r.sz[u][i] >> 16));
    }
    const uint4 *x = xs + (int64_t)(c0 + u) * 16;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      uint4 xv[NT];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) xv[nt] = x[nt * 8 * rs + q * 4];
      const uint32_t w0 = r.w[u][0][q], w1 = r.w[u][1][q];
      uint32_t o0[4], o1[4];
      dq_word(w0, z2[0], f2[0], s2[0], o0);
      dq_word(w1, z2[1], f2[1], s2[1], o1);
      uint32_t a[4] = {o0[0], o1[0], o0[1], o1[1]};
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) mma_f16(acc[nt], a, xv[nt].x, xv[nt].y);
      a[0] = o0[2], a[1] = o1[2], a[2] = o0[3], a[3] = o1[3];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) mma_f16(acc[nt], a, xv[nt].z, xv[nt].w);
    }
  }
}

// A column block's sums in a lane (acc[nt]: B rows col (0, 1) and col + 8
// (2, 3) at A rows 8 nt + 2 t (0, 2) and + 1 (1, 3)) to y as gemv_rows
// stores them (a B row's neighbour col ^ 1 is in lane ^ 4), or to
// ws[slice][m][col] when K is split.
template <int NT>
__device__ __forceinline__ void mma_store(const gpu_nbits_desc &d, const float acc[NT][4], int64_t col, int rows, int g,
                                          int t) {
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    float o[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) o[i] = gpu::shfl_xor32(acc[nt][i], 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t jc = col + 8 * h;
#pragma unroll
      for (int rr = 0; rr < 2; ++rr) {
        const int m = 8 * nt + 2 * t + rr;
        if (m >= rows || jc >= d.n) continue;
        if (gridDim.y > 1) {
          d.ws[((int64_t)blockIdx.y * rows + m) * d.n + jc] = acc[nt][2 * h + rr];
        } else if (!(g & 1)) {
          store_pair<gpu_half>(d, m, jc, acc[nt][2 * h + rr], o[2 * h + rr], jc + 1 < d.n);
        }
      }
    }
  }
}
#endif

// Sums over K slice blockIdx.y (ks codes) of y[m, j], rows m < rows (<= 8 *
// NT) of A and kMmaCols columns j a column block, the block walking column
// blocks blockIdx.x, + gridDim.x, ... (col_blocks of them). The loads run
// on across column blocks: each lane walks items (column block, group of
// kMmaLoads chunks), the next item's loads issued before this one's MMAs.
template <int NT>
__global__ void __launch_bounds__(kMmaWarps * 32) gemv_mma(gpu_nbits_desc d, int rows, bool vec, int ks,
                                                           int64_t col_blocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ uint4 sx[];  // [8 NT rows][rs]: chunk c, word q, lane t at c * 16 + q * 4 + t
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int64_t row_bytes = d.k_blocks * (d.block_size / 2), row_codes = 2 * row_bytes;
  const int64_t k0 = (int64_t)blockIdx.y * ks, rs = mma_row_u4(ks);
  const int kn = (int)(row_codes - k0 < ks ? row_codes - k0 : ks);
  const int chunks = (kn + kMmaChunk - 1) / kMmaChunk, groups = (chunks + kMmaLoads - 1) / kMmaLoads;
  const int bs_log2 = __ffsll((long long)d.block_size) - 1;
  const int64_t kc = k0 + 32 * t;
  // this lane's B rows in column block cb: col, col + 8 (the last row repeated past N)
  auto rows_of = [&](int64_t cb, int64_t &j0, int64_t &j1) {
    const int64_t col = cb * kMmaCols + warp * 16 + g;
    j0 = col < d.n ? col : d.n - 1;
    j1 = col + 8 < d.n ? col + 8 : d.n - 1;
  };
  // items: (column block cb, group gi); next: the one after
  auto next = [&](int64_t &cb, int &gi) {
    if (++gi == groups) gi = 0, cb += gridDim.x;
  };
  int64_t cb = blockIdx.x, fcb = cb, j0, j1;
  int gi = 0, fgi = 0;
  mma_regs r[2];
  rows_of(fcb, j0, j1);
  mma_fetch(d, j0, j1, row_bytes, kc, 0, chunks, bs_log2, r[0]);
  next(fcb, fgi);
  // B, scales and zero points are constants: loaded ahead of the kernel
  // before; A only after it.
  gpu::wait_prior();

  // Stage A once: 8 elements a thread, rows past `rows` and codes past K zero.
  const gpu_half *a = (const gpu_half *)d.a;
  const int units = chunks * 16;
  for (int i = threadIdx.x; i < 8 * NT * units; i += blockDim.x) {
    const int m = i / units, e = i % units;  // e: 8-element unit of the slice, in K order
    const int64_t k = k0 + 8 * e;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (m < rows) {
      const gpu_half *p = a + m * d.k + k;
      if (vec && k + 8 <= d.k) {
        v = *(const uint4 *)p;
      } else {
        uint32_t h[8];
#pragma unroll
        for (int c = 0; c < 8; ++c) h[c] = k + c < d.k ? __half_as_ushort(p[c]) : 0u;
        v = make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16, h[6] | h[7] << 16);
      }
    }
    // (x0, x4), (x1, x5), (x2, x6), (x3, x7): the pairs a word's codes make
    sx[m * rs + (e / 16) * 16 + (e % 4) * 4 + (e / 4) % 4] =
        make_uint4(__byte_perm(v.x, v.z, 0x5410), __byte_perm(v.x, v.z, 0x7632), __byte_perm(v.y, v.w, 0x5410),
                   __byte_perm(v.y, v.w, 0x7632));
  }
  __syncthreads();

  float acc[NT][4];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.f;
  const uint4 *xs = sx + g * rs + t;
  // One item from r[b]: its MMAs, and at a column block's last group its
  // stores. False past the last item.
  auto step = [&](const mma_regs &rb) {
    mma_group<NT>(rb, gi * kMmaLoads, chunks, xs, rs, acc);
    if (gi == groups - 1) {
      mma_store<NT>(d, acc, cb * kMmaCols + warp * 16 + g, rows, g, t);
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.f;
    }
    next(cb, gi);
    return cb < col_blocks;
  };
  // The next item's loads into r[b]
  auto fetch_next = [&](mma_regs &rb) {
    if (fcb < col_blocks) {
      rows_of(fcb, j0, j1);
      mma_fetch(d, j0, j1, row_bytes, kc, fgi * kMmaLoads, chunks, bs_log2, rb);
    }
    next(fcb, fgi);
  };
  for (;;) {
    fetch_next(r[1]);
    if (!step(r[0])) break;
    fetch_next(r[0]);
    if (!step(r[1])) break;
  }
#else
  (void)d, (void)rows, (void)vec, (void)ks, (void)col_blocks;  // built for a GPU without mma.sync: never launched (mma_built)
#endif
  // The next kernel may start only now (as gemv_rows).
  gpu::start_next();
}

// Built for a GPU with mma.sync m16n8k16 (sm_80 and up)? The kernel is
// empty otherwise.
bool mma_built() {
#if defined(GPU_VENDOR_HIP)
  return false;
#else
  static std::atomic<int> cached[gpu::kCachedDevices];
  return gpu::built_for((const void *)gemv_mma<1>, 80, cached);
#endif
}

// Does the tensor-core form take d (its element type and blocks, and the
// GPU's build; d->m against d->mma_min_m and pointers are the caller's)?
bool mma_takes(const gpu_nbits_desc *d, int dtype) {
  return dtype == GPU_DT_F16 && !d->exact && d->mma_min_m > 0 && d->block_size >= 32 &&
         (d->block_size & (d->block_size - 1)) == 0 && mma_built();
}

template <int NT>
int launch_mma(const gpu_nbits_desc &d, int rows, bool vec, gpuStream_t s) {
  int64_t ks = 0;
  const int64_t slices = mma_split(&d, NT, &ks);
  const int64_t col_blocks = (d.n + kMmaCols - 1) / kMmaCols;
  if (slices > 65535 || (slices > 1 && !d.ws)) return -1;
  const size_t sh = (size_t)(8 * NT) * (size_t)mma_row_u4(ks) * sizeof(uint4);
  static bool opted[kMaxDevices];
  if (sh > (48 << 10) && opt_in_shared(gemv_mma<NT>, opted)) return -1;
  // The grid: what the GPU holds at once (by registers, and by this
  // launch's shared memory with the 1 KiB an SM reserves a block), each
  // block walking column blocks.
  static int64_t cached[kMaxDevices];
  const int64_t by_regs = resident_blocks(gemv_mma<NT>, kMmaWarps * 32, 0, cached);
  int64_t sms = 0, smem = 0, bx = col_blocks;
  if (by_regs > 0 && sm_info(&sms, &smem)) {
    int64_t fit = sms * (smem / (int64_t)(sh + 1024));
    if (fit > by_regs) fit = by_regs;
    fit /= slices;  // the slices share the GPU
    if (fit < 1) fit = 1;
    if (bx > fit) bx = fit;
  }
  if (bx > 0x7fffffff) bx = 0x7fffffff;
  const int rc = gpu::launch(gemv_mma<NT>, dim3((unsigned)bx, (unsigned)slices), dim3(kMmaWarps * 32), sh, s, d, rows,
                             vec, (int)ks, col_blocks);
  return rc ? rc : sum_slices<gpu_half>(d, rows, slices, s);
}

#if !defined(GPU_VENDOR_HIP)
// How gemv_bulk takes a one-row pass of d: a block an SM, each owning
// whole pairs of columns whose weights fit its shared memory (every layer
// of a 1B-parameter decoder; not a 128k-vocabulary head, which gemv_rows
// streams at ~3 TB/s). false where it does not take d.
struct bulk_shape {
  unsigned grid;
  int ppb, ppp, slots, a_words;
  size_t sh;
  int64_t optin;  // the dynamic shared memory the kernel opts into
};
template <typename T>
bool bulk_plan(const gpu_nbits_desc &d, bulk_shape *out) {
  static std::atomic<int> built[kMaxDevices];
  if (sizeof(T) != 2 || !d.bulk || d.exact || d.block_size < 32 || (d.block_size & (d.block_size - 1))) return false;
  const bulk_sizes cs = bulk_col<T>(d);  // the copies' sizes and sources: multiples of 16 bytes (codes: blocks of 32+)
  if (cs.scales % 16 || cs.zp % 16 || (uintptr_t)d.b % 16 || (uintptr_t)d.scales % 16 || (uintptr_t)d.zp % 16)
    return false;
  int64_t sms = 0, smem = 0, smem_block = 0;
  if (!gpu::built_for((const void *)gemv_bulk<T>, 90, built) || !sm_info(&sms, &smem, &smem_block)) return false;
  const int64_t pairs = (d.n + 1) / 2, chunks = d.k_blocks * d.block_size / 32;
  const int64_t a_words = chunks * kQWords, pair_bytes = 2 * (cs.codes + cs.scales + cs.zp);
  int64_t blocks = pairs < sms ? pairs : sms;  // one an SM
  const int64_t ppb = (pairs + blocks - 1) / blocks;
  blocks = (pairs + ppb - 1) / ppb;
  const int64_t optin = smem_block - 1024;  // dynamic: 1 KiB left for the kernel's own (static) shared memory
  const int64_t budget = kBulkSmem < optin ? kBulkSmem : optin, fixed = kBulkSlots * 8 + a_words * 4;
  int64_t ppp = (ppb + kBulkPieces - 1) / kBulkPieces, slots = (ppb + ppp - 1) / ppp;
  if (fixed + slots * ppp * pair_bytes > budget) {
    // a ring: the most pairs a piece (at most a round's 16) with enough
    // slots that a round's pieces are in place while the next ones load
    if (ppb * pair_bytes > 2 * optin) return false;  // (a 128k-vocabulary head: gemv_rows)
    for (ppp = kBulkWarps; ppp >= 1; ppp /= 2) {
      slots = (budget - fixed) / (ppp * pair_bytes);
      if (slots > kBulkSlots) slots = kBulkSlots;
      if (slots * ppp >= kBulkWarps + ppp) break;
    }
    if (ppp < 1) return false;
  }
  const int64_t sh = fixed + slots * ppp * pair_bytes;
  if (sh > optin) return false;
  out->grid = (unsigned)blocks;
  out->ppb = (int)ppb;
  out->ppp = (int)ppp;
  out->slots = (int)slots;
  out->a_words = (int)a_words;
  out->sh = (size_t)sh;
  out->optin = optin;
  return true;
}

// gemv_bulk for a one-row pass where bulk_plan takes it: *rc its launch's
// result; false (nothing launched) where it does not take d.
template <typename T>
bool launch_bulk(const gpu_nbits_desc &d, bool vec, gpuStream_t s, int *rc) {
  bulk_shape b;
  if (!bulk_plan<T>(d, &b)) return false;
  static bool opted[kMaxDevices];
  if (opt_in_shared(gemv_bulk<T>, opted, b.optin)) {
    gpu::last_error();  // refused: gemv_rows takes the pass, and the error is not left for the next launch
    return false;
  }
  *rc = gpu::launch(gemv_bulk<T>, dim3(b.grid), dim3(kBulkThreads), b.sh, s, d, vec, b.ppb, b.ppp, b.slots, b.a_words);
  return true;
}
#endif

template <typename T>
int gemv(const gpu_nbits_desc *d, gpuStream_t s) {
  if (d->m <= 0 || d->n <= 0) return 0;
  const int64_t blob = d->block_size / 2;
  const uintptr_t bp = (uintptr_t)d->b;
  if (d->block_size < 16 || (d->block_size & (d->block_size - 1)) != 0 || bp % 8 != 0 || d->k < 1) return -1;
  const bool v16 = blob % 16 == 0 && bp % 16 == 0;
  const bool vec = (uintptr_t)d->a % 16 == 0 && (d->k * (int64_t)sizeof(T)) % 16 == 0 &&
                   (!d->norm_scale || ((uintptr_t)d->norm_skip % 16 == 0 && (uintptr_t)d->norm_sbias % 16 == 0 &&
                                       (uintptr_t)d->norm_scale % 16 == 0 && (uintptr_t)d->norm_sum % 16 == 0));
  if (sizeof(T) == 2 && v16 && !d->norm_scale && d->m >= d->mma_min_m && mma_takes(d, GPU_DT_F16)) {
    for (int64_t m0 = 0; m0 < d->m; m0 += kMmaMaxRows) {  // passes of up to 32 rows
      gpu_nbits_desc p = *d;
      const int rows = d->m - m0 < kMmaMaxRows ? (int)(d->m - m0) : kMmaMaxRows;
      p.a = (const T *)d->a + m0 * d->k;
      p.y = (T *)d->y + m0 * (d->glu_act ? d->n / 2 : d->n);
      const int nt = mma_tiles(rows);
      const int rc = nt == 1 ? launch_mma<1>(p, rows, vec, s) : nt == 2 ? launch_mma<2>(p, rows, vec, s)
                                                                       : launch_mma<4>(p, rows, vec, s);
      if (rc) return rc;
    }
    return 0;
  }
  for (int64_t m0 = 0; m0 < d->m; m0 += GPU_NBITS_GEMV_ROWS) {
    gpu_nbits_desc p = *d;
    const int rows = d->m - m0 < GPU_NBITS_GEMV_ROWS ? (int)(d->m - m0) : GPU_NBITS_GEMV_ROWS;
    p.a = (const T *)d->a + m0 * d->k;
    p.y = (T *)d->y + m0 * (d->glu_act ? d->n / 2 : d->n);
    int rc = 0;
#if !defined(GPU_VENDOR_HIP)
    if constexpr (sizeof(T) == 2) {
      if (rows == 1 && launch_bulk<T>(p, vec, s, &rc)) {
        if (rc) return rc;
        continue;
      }
    }
#endif
    if (rows == 1) rc = launch_rows<T, 1>(p, rows, v16, vec, s);
    else if (rows == 2) rc = launch_rows<T, 2>(p, rows, v16, vec, s);
    else if (rows <= 4) rc = launch_rows<T, 4>(p, rows, v16, vec, s);
    else rc = launch_rows<T, GPU_NBITS_GEMV_ROWS>(p, rows, v16, vec, s);
    if (rc) return rc;
  }
  return 0;
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
  gpu::wait_prior();
  gpu::start_next();
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
  gpu::launch(dequant_rows<T>, grid, threads, 0, s, *d, n0, nc, (T *)w, vec);
  return gpu::last_error();
}

// Under glu: y[mm, (n0 + c) / 2] = act(v[mm, c]) * v[mm, c + 1], c even.
template <typename T>
__global__ void glu_cols(gpu_nbits_desc d, const T *v, int64_t n0, int64_t nc) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t half = nc / 2;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < d.m * half; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t mm = i / half, c = 2 * (i % half);
    const float g = ld(v, mm * nc + c), u = ld(v, mm * nc + c + 1);
    st((T *)d.y, mm * (d.n / 2) + (n0 + c) / 2, gpu::act(d.glu_act, g, d.glu_alpha, d.glu_beta) * u);
  }
}

template <typename T>
int glu(const gpu_nbits_desc *d, const void *v, int64_t n0, int64_t nc, gpuStream_t s) {
  if (!d->glu_act || n0 % 2 || nc % 2 || n0 < 0 || n0 + nc > d->n) return -1;
  if (nc == 0 || d->m <= 0) return 0;
  gpu::launch(glu_cols<T>, gpu::blocks_for(d->m * (nc / 2), 256), 256, 0, s, *d, (const T *)v, n0, nc);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_nbits_glu(const gpu_nbits_desc *d, const void *v, int64_t n0, int64_t nc, int dtype, void *stream) {
  switch (dtype) {
    case GPU_DT_F32: return glu<float>(d, v, n0, nc, (gpuStream_t)stream);
    case GPU_DT_F16: return glu<gpu_half>(d, v, n0, nc, (gpuStream_t)stream);
    default: return -1;
  }
}

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

extern "C" size_t gpu_nbits_gemv_ws(const gpu_nbits_desc *d, int dtype) {
  if (d->m <= 0 || d->n <= 0 || d->block_size < 16) return 0;
  size_t most = 0;
  if (d->m >= d->mma_min_m && mma_takes(d, dtype)) {
    // passes of kMmaMaxRows rows, the last with fewer tiles (a shorter slice)
    const int rows = d->m < kMmaMaxRows ? (int)d->m : kMmaMaxRows;
    for (int nt = 1; nt <= mma_tiles(rows); nt *= 2) {
      int64_t ks = 0;
      const int64_t sl = mma_split(d, nt, &ks);
      const size_t b = sl > 1 ? (size_t)sl * (size_t)rows * (size_t)d->n * sizeof(float) : 0;
      if (b > most) most = b;
    }
    // a GEMV pass when B's pointer is not 16-byte aligned at the launch
  }
  const int rows = d->m < GPU_NBITS_GEMV_ROWS ? (int)d->m : GPU_NBITS_GEMV_ROWS;
  for (int r = rows; r >= 1; --r) {  // a last pass may have fewer rows, so more slices
    int64_t ks = 0;
    const int64_t sl = plan_split(d, r, &ks);
    const size_t b = sl > 1 ? (size_t)sl * (size_t)r * (size_t)d->n * sizeof(float) : 0;
    if (b > most) most = b;
    if (d->m <= GPU_NBITS_GEMV_ROWS) break;  // one pass of exactly m rows
  }
  return most;
}

extern "C" int64_t gpu_nbits_gemv_arrivals(const gpu_nbits_desc *d, int dtype) {
  // column blocks of the passes that split K; one row has the most (2 columns a group)
  return gpu_nbits_gemv_ws(d, dtype) ? (d->n + kWarps * cols_for(1) - 1) / (kWarps * cols_for(1)) : 0;
}

extern "C" int gpu_nbits_gemv_norm_ok(const gpu_nbits_desc *d, int dtype) {
  if (d->m != 1 || d->n <= 0 || d->block_size < 16 || (dtype != GPU_DT_F16 && dtype != GPU_DT_F32)) return 0;
  if (d->m >= d->mma_min_m && mma_takes(d, dtype)) return 0;  // the tensor-core form at one row
  int64_t ks = 0;
  return plan_split(d, 1, &ks) == 1;
}

extern "C" int gpu_nbits_gemv_bulk(const gpu_nbits_desc *d, int dtype) {
#if defined(GPU_VENDOR_HIP)
  (void)d, (void)dtype;
  return 0;
#else
  bulk_shape b;
  return dtype == GPU_DT_F16 && d->m >= 1 && d->n > 0 && d->k > 0 && bulk_plan<gpu_half>(*d, &b);
#endif
}

extern "C" int64_t gpu_nbits_gemv_max_m(const gpu_nbits_desc *d, int dtype) {
  // a start past 32 rows (HIPDNN_EP_NBITS_MMA_MIN_M) leaves every pass on the CUDA-core form
  return mma_takes(d, dtype) && d->mma_min_m <= kMmaMaxRows ? (int64_t)kMmaMaxRows : GPU_NBITS_GEMV_ROWS;
}
