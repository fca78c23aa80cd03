// gpu_flash: attention on tensor cores (NVIDIA, sm_80 and up): fp16/bf16
// through mma.sync m16n8k16, fp32 through TF32 m16n8k8 where the context
// allows TF32 (as for matmuls); fp32 accumulation either way. A block takes
// 64 query rows of one (batch, head) (32 when that leaves the GPU idle),
// 16 per warp (or, for still smaller grids, 16 rows whose key tiles its
// warps split: flash_rows' SPLIT), and walks the keys in tiles (fp16: 64 keys for head
// sizes up to 64, else 32; fp32: 32), two stages of K and V in 48 KB of
// shared memory, the next tile loading by cp.async while this one is used:
// S = Q K^T from shared-memory fragments, the online softmax in registers
// (a lane holds two rows' scores; the four lanes of a quad hold the rest of
// those rows), then O += P V with P's A fragments made from S's
// accumulators in registers, never written to memory. Tiles that every row
// of the block sees whole skip the per-score masks; the others take
// gpu_attention.cu's masks, lengths, softcap and bias (gpu_attn.cuh). What
// it does not take (head sizes other than 32/64/80/96/128 — fp32: 32/64 —,
// strided inner dims, rows or starts not on 16 bytes, fewer than 16 rows,
// the split and fold forms of decode) returns -1 and runs on
// gpu_attention.cu's kernel; on HIP it takes nothing yet.
#include <atomic>
#include <cstdlib>

#include "gpu/gpu_attn.cuh"

#if defined(GPU_VENDOR_HIP)

int gpu::flash_attention(const gpu_attn_desc *, int, gpuStream_t) { return -1; }

#else

namespace {

using gpu::attn_span;
using gpu::smem_addr;

// W warps a block, 16 query rows each (4; fewer when there are too few
// rows to fill the GPU with 64-row blocks: an encoder's 128-token sequence)

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// c += a b for one 16x8 tile: a 16x16 (row), b 16x8 (col), c fp32
template <typename T>
__device__ __forceinline__ void mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1);

template <>
__device__ __forceinline__ void mma<gpu_half>(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void mma<gpu::bf16>(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// two floats as one register of the element type, lo in the low half
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi);

template <>
__device__ __forceinline__ uint32_t pack2<gpu_half>(float lo, float hi) {
  const __half2 v = __floats2half2_rn(lo, hi);
  return *(const uint32_t *)&v;
}

template <>
__device__ __forceinline__ uint32_t pack2<gpu::bf16>(float lo, float hi) {
  gpu::bf16 b[2];
  gpu::st(b, 0, lo);
  gpu::st(b, 1, hi);
  return (uint32_t)b[0].bits | ((uint32_t)b[1].bits << 16);
}

// fp32 as TF32 (round to nearest, as the BLAS does): 10 bits of mantissa, fp32's range
__device__ __forceinline__ uint32_t tf32(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// c += a b for one 16x8 tile: a 16x8 (row), b 8x8 (col), TF32 in, fp32 out
__device__ __forceinline__ void mma_tf32(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// What differs by element type: the tiles' shape in shared memory, and
// how a warp's fragments are read from it and multiplied. Scores s and
// outputs o are m16n8 accumulators either way: a lane holds rows g and
// g + 8 (g = lane / 4), columns 2 t4 and 2 t4 + 1 (t4 = lane % 4) of each
// 8-column tile.
template <typename T, int D>
struct frags;

// fp16 / bf16: m16n8k16, fragments by ldmatrix (rows padded by 16 bytes so
// the 8 row addresses of a matrix fall on distinct banks)
template <typename T, int D>
struct frags {
  typedef uint16_t E;
  static constexpr int BN = D <= 64 ? 64 : 32;  // keys a tile (two stages of K and V fit in 48 KB)
  static constexpr int LDK = D + 8, LDV = D + 8, KQ = D / 16, LDKT = BN + 8;
  static constexpr int KMIN = 16;  // the fewest keys a warp's share of a tile can be (one k16 step of P V)

  __device__ static void q(uint32_t qf[KQ][4], const E *qs, int w, int lane) {
#pragma unroll
    for (int kk = 0; kk < KQ; ++kk) ldmatrix_x4(qf[kk], qs + (w * 16 + lane % 16) * LDK + kk * 16 + (lane / 16) * 8);
  }
  template <int NK>
  __device__ static void scores(float s[NK / 8][4], const uint32_t qf[KQ][4], const E *ks, int kofs, int lane) {
#pragma unroll
    for (int kk = 0; kk < KQ; ++kk) {
#pragma unroll
      for (int j = 0; j < NK / 16; ++j) {  // keys 16j .. 16j + 15: two 8-key tiles from one ldmatrix
        uint32_t kf[4];
        ldmatrix_x4(kf, ks + (kofs + j * 16 + (lane / 16) * 8 + lane % 8) * LDK + kk * 16 + ((lane / 8) % 2) * 8);
        mma<T>(s[2 * j], qf[kk], kf[0], kf[1]);
        mma<T>(s[2 * j + 1], qf[kk], kf[2], kf[3]);
      }
    }
  }
  // the same from K stored transposed (kts: D rows of BN keys), read as V is
  template <int NK>
  __device__ static void scores_t(float s[NK / 8][4], const uint32_t qf[KQ][4], const E *kts, int kofs, int lane) {
#pragma unroll
    for (int kk = 0; kk < KQ; ++kk) {
#pragma unroll
      for (int j = 0; j < NK / 16; ++j) {
        uint32_t kf[4];
        ldmatrix_x4_trans(kf,
                          kts + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * LDKT + kofs + j * 16 + (lane / 16) * 8);
        mma<T>(s[2 * j], qf[kk], kf[0], kf[1]);
        mma<T>(s[2 * j + 1], qf[kk], kf[2], kf[3]);
      }
    }
  }
  // o += p v: p's A fragments are two score tiles' accumulators, repacked
  template <int NK>
  __device__ static void accumulate(float o[D / 8][4], const float s[NK / 8][4], const E *vs, int kofs, int lane) {
#pragma unroll
    for (int kc = 0; kc < NK / 16; ++kc) {
      const uint32_t pa[4] = {pack2<T>(s[2 * kc][0], s[2 * kc][1]), pack2<T>(s[2 * kc][2], s[2 * kc][3]),
                              pack2<T>(s[2 * kc + 1][0], s[2 * kc + 1][1]),
                              pack2<T>(s[2 * kc + 1][2], s[2 * kc + 1][3])};
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {  // columns 16 dp .. 16 dp + 15: two 8-column tiles from one ldmatrix
        uint32_t vf[4];
        ldmatrix_x4_trans(vf,
                          vs + (kofs + kc * 16 + ((lane / 8) % 2) * 8 + lane % 8) * LDV + dp * 16 + (lane / 16) * 8);
        mma<T>(o[2 * dp], pa, vf[0], vf[1]);
        mma<T>(o[2 * dp + 1], pa, vf[2], vf[3]);
      }
    }
  }
};

// fp32: m16n8k8 in TF32, fragments read as words (K's rows pitched 4 words
// past a multiple of 32 banks, V's 8: each read of a warp hits 32 banks);
// P's A fragment needs keys t4 and t4 + 4 of a row, held by other lanes of
// the quad, so it comes through shuffles
template <int D>
struct frags<float, D> {
  typedef float E;
  static constexpr int BN = 32, LDK = D + 4, LDV = D + 8, KQ = D / 8, LDKT = BN + 8, KMIN = 8;

  __device__ static void q(uint32_t qf[KQ][4], const E *qs, int w, int lane) {
    const E *r = qs + (w * 16 + lane / 4) * LDK + lane % 4;
#pragma unroll
    for (int kk = 0; kk < KQ; ++kk) {
      qf[kk][0] = tf32(r[kk * 8]), qf[kk][1] = tf32(r[8 * LDK + kk * 8]);
      qf[kk][2] = tf32(r[kk * 8 + 4]), qf[kk][3] = tf32(r[8 * LDK + kk * 8 + 4]);
    }
  }
  template <int NK>
  __device__ static void scores(float s[NK / 8][4], const uint32_t qf[KQ][4], const E *ks, int kofs, int lane) {
#pragma unroll
    for (int j = 0; j < NK / 8; ++j) {
      const E *r = ks + (kofs + j * 8 + lane / 4) * LDK + lane % 4;
#pragma unroll
      for (int kk = 0; kk < KQ; ++kk) mma_tf32(s[j], qf[kk], tf32(r[kk * 8]), tf32(r[kk * 8 + 4]));
    }
  }
  // K stored transposed (kts: D rows of BN keys, pitched 8 words past 32
  // banks: a warp's 8 keys by 4 dims hit 32 banks)
  template <int NK>
  __device__ static void scores_t(float s[NK / 8][4], const uint32_t qf[KQ][4], const E *kts, int kofs, int lane) {
#pragma unroll
    for (int j = 0; j < NK / 8; ++j) {
      const E *r = kts + (lane % 4) * LDKT + kofs + j * 8 + lane / 4;
#pragma unroll
      for (int kk = 0; kk < KQ; ++kk) mma_tf32(s[j], qf[kk], tf32(r[kk * 8 * LDKT]), tf32(r[(kk * 8 + 4) * LDKT]));
    }
  }
  template <int NK>
  __device__ static void accumulate(float o[D / 8][4], const float s[NK / 8][4], const E *vs, int kofs, int lane) {
    const int t4 = lane % 4, lo = (lane & ~3) | (t4 >> 1), hi = lo + 2;  // lanes holding keys t4, t4 + 4
#pragma unroll
    for (int kc = 0; kc < NK / 8; ++kc) {
      uint32_t pa[4];
#pragma unroll
      for (int r = 0; r < 2; ++r) {  // rows g, g + 8
        const float a0 = gpu::shfl32(s[kc][2 * r], lo), a1 = gpu::shfl32(s[kc][2 * r + 1], lo);
        const float b0 = gpu::shfl32(s[kc][2 * r], hi), b1 = gpu::shfl32(s[kc][2 * r + 1], hi);
        pa[r] = tf32(t4 & 1 ? a1 : a0);
        pa[2 + r] = tf32(t4 & 1 ? b1 : b0);
      }
      const E *r = vs + (kofs + kc * 8 + t4) * LDV + lane / 4;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) mma_tf32(o[dt], pa, tf32(r[dt * 8]), tf32(r[4 * LDV + dt * 8]));
    }
  }
};

// rows [r0, r0 + n) of an operand into sm (pitch ld), 16 bytes a thread at
// a time without waiting (cp.async; rows at or past lim are zero-filled);
// the caller commits them as a group
template <typename E, int D, int W>
__device__ __forceinline__ void load_rows(E *sm, int ld, const E *src, int64_t base, int64_t pitch, int64_t r0, int n,
                                          int64_t lim) {
  constexpr int per = 16 / sizeof(E), chunks = D / per;
  for (int c = threadIdx.x; c < n * chunks; c += 32 * W) {
    const int r = c / chunks, col = (c % chunks) * per;
    const bool in = r0 + r < lim;
    const E *from = src + (in ? base + (r0 + r) * pitch + col : 0);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(sm + r * ld + col)), "l"(from),
                 "r"(in ? 16 : 0));
  }
}

// K stored transposed: its D rows (pitch apart) of keys [k0, k0 + BN) into
// sm (pitch ld), keys at or past lim zero-filled, 16 bytes a thread at a
// time without waiting
template <typename E, int D, int BN, int W>
__device__ __forceinline__ void load_cols(E *sm, int ld, const E *src, int64_t base, int64_t pitch, int64_t k0,
                                          int64_t lim) {
  constexpr int per = 16 / sizeof(E), chunks = BN / per;
  for (int c = threadIdx.x; c < D * chunks; c += 32 * W) {
    const int r = c / chunks, col = (c % chunks) * per;
    const int64_t left = lim - (k0 + col);
    const int bytes = left >= per ? 16 : left > 0 ? (int)left * (int)sizeof(E) : 0;
    const E *from = src + (bytes ? base + r * pitch + k0 + col : 0);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(sm + r * ld + col)), "l"(from),
                 "r"(bytes));
  }
}

__device__ __forceinline__ void commit_loads() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void wait_loads() {  // all but the newest N groups of this thread's loads are done
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// The W warps' states for the same 16 rows (each over its slices of the
// key tiles: a running max m, the sum l and outputs o relative to it) into
// the rows' outputs: each warp's share weighted by exp(m - the rows' max).
// Through shared memory where the tiles were, one output element a thread
// at a time (the writes coalesce over the head dimension).
template <typename T, int D, int W>
__device__ __forceinline__ void merge_slices(const gpu_attn_desc &d, float *cm, const float m[2], const float l[2],
                                             const float o[D / 8][4], int64_t b, int64_t h, int64_t row0) {
  constexpr int LDO = D + 8;  // 2-way bank conflicts at most on the float2 writes
  float *cmax = cm, *csum = cm + 16 * W, *co = cm + 32 * W;
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
  __syncthreads();  // every warp is done with the tiles
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = l[r];
    sum += gpu::shfl_xor32(sum, 1);
    sum += gpu::shfl_xor32(sum, 2);
    const int row = w * 16 + g + 8 * r;
    if (t4 == 0) cmax[row] = m[r], csum[row] = sum;
#pragma unroll
    for (int j = 0; j < D / 8; ++j) *(float2 *)&co[row * LDO + j * 8 + 2 * t4] = make_float2(o[j][2 * r], o[j][2 * r + 1]);
  }
  __syncthreads();
  T *O = (T *)d.out;
  for (int i = threadIdx.x; i < 16 * D; i += 32 * W) {
    const int row = i / D, col = i % D;
    if (row0 + row >= d.seq) continue;
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < W; ++k) mx = fmaxf(mx, cmax[k * 16 + row]);
    float sum = 0.f, acc = 0.f;
#pragma unroll
    for (int k = 0; k < W; ++k) {
      const float mk = cmax[k * 16 + row];
      if (mk == -INFINITY) continue;  // no key of this slice seen: nothing to add (its sum is 0)
      const float f = __expf(mk - mx);
      sum += csum[k * 16 + row] * f;
      acc += co[(k * 16 + row) * LDO + col] * f;
    }
    const float v = sum > 0.f ? acc / sum : d.empty_zero ? 0.f : NAN;  // sum == 0: every key masked with -inf
    gpu::st(O, b * d.o_st[0] + h * d.o_st[1] + (row0 + row) * d.o_st[2] + col * d.o_st[3], v);
  }
}

// This lane's mask verdicts over a tile (bit 4 j + e: rows[e / 2], key kb +
// 8 j + (e & 1)), mask elements of type M; mrow: where the rows start.
template <typename M, int NK>
__device__ __forceinline__ uint32_t tile_drops(const gpu_attn_desc &d, const int64_t mrow[2], const int64_t rows[2],
                                               int64_t kb) {
  const M *mask = (const M *)d.mask;
  uint32_t drops = 0;
#pragma unroll
  for (int j = 0; j < NK / 8; ++j) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t key = kb + j * 8 + (e & 1);
      const bool valid = rows[e / 2] < d.seq && key < d.kv_len;
      const bool keeps = valid && gpu::attn_keeps(mask[mrow[e / 2] + key * d.mask_st[3]]);
      drops |= (uint32_t)(valid && keeps == (bool)d.mask_invert) << (4 * j + e);
    }
  }
  return drops;
}

// SPLIT: the W warps share 16 query rows and split each key tile W ways
// (the slices' softmax states merged through shared memory at the end),
// for grids too small to fill the GPU with one warp per 16 rows: a warp's
// walk over the keys is W times shorter. Otherwise each warp has its own
// 16 rows and the whole tile.
// LEAN: no mask or bias but along the keys (flash_lean says when), so no
// per-score masking, softcap or causal cut is compiled in. With few tiles
// a block the kernel is bound by fetching its code, which it runs about
// once (ncu, BERT b8: ~40% of a warp's cycles): the general fp16 kernel for
// head size 64 is 150 KB of code, the lean one a fraction of it.
template <typename T, int D, int W, bool SPLIT, bool LEAN>
__global__ void __launch_bounds__(32 * W) flash_rows(gpu_attn_desc d) {
  gpu::wait_prior();
  gpu::start_next();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  typedef frags<T, D> F;
  typedef typename F::E E;
  // a stage: the K tile (keys by D, or D by keys when K is stored transposed), then V's
  constexpr int kRows = SPLIT ? 16 : 16 * W, BN = F::BN, NK = SPLIT ? BN / W : BN, KELEMS = BN * F::LDK > D * F::LDKT ? BN * F::LDK : D * F::LDKT,
                STAGE = KELEMS + BN * F::LDV;
  static_assert(kRows * F::LDK <= STAGE, "the Q tile is staged in a K/V stage");
  static_assert(NK >= F::KMIN && (!SPLIT || NK * W == BN), "a warp's slice of a tile is whole k steps");
  static_assert(!SPLIT || (32 * W + 16 * W * (D + 8)) * sizeof(float) <= 2 * STAGE * sizeof(E),
                "the slices' states fit where the tiles were");
  // two stages of K and V tiles: the next tile loads while this one is used (Q is staged in the second)
  __shared__ __align__(16) E sm[2 * STAGE];
  // a key-only mask's terms for each stage's tile (see keyed below)
  __shared__ __align__(16) float2 kterm[2][BN];
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
  const int wrow = SPLIT ? 0 : 16 * w, kofs = SPLIT ? NK * w : 0;  // this warp's rows and keys in a tile
  const int64_t nrb = (d.seq + kRows - 1) / kRows;
  const int64_t rb = nrb - 1 - blockIdx.x;  // the last rows first: under a causal mask they see the most keys
  const int64_t b = blockIdx.z, h = blockIdx.y, kh = h / (d.heads / d.kv_heads), row0 = rb * kRows;
  const int64_t last = row0 + kRows - 1 < d.seq - 1 ? row0 + kRows - 1 : d.seq - 1;
  const attn_span a = gpu::attn_keys(d, b, row0, last, BN);
  const E *Q = (const E *)d.q, *K = (const E *)d.k, *V = (const E *)d.v;
  const int64_t kbase = d.k_off + b * d.k_st[0] + kh * d.k_st[1], vbase = d.v_off + b * d.v_st[0] + kh * d.v_st[1];
  // keys from klim on load as zeros: a cache's unwritten rows may hold inf or NaN bits, and 0 * inf is NaN
  const bool kt = d.k_st[3] != 1;  // K stored transposed: keys contiguous (flash_takes saw k_st[2] == 1)
  const auto load_kv = [&](int64_t k0, E *stage) {
    if (kt)
      load_cols<E, D, BN, W>(stage, F::LDKT, K, kbase, d.k_st[3], k0, a.klim);
    else
      load_rows<E, D, W>(stage, F::LDK, K, kbase, d.k_st[2], k0, BN, a.klim);
    load_rows<E, D, W>(stage + KELEMS, F::LDV, V, vbase, d.v_st[2], k0, BN, a.klim);
    commit_loads();
  };
  load_rows<E, D, W>(sm + STAGE, F::LDK, Q, d.q_off + b * d.q_st[0] + h * d.q_st[1], d.q_st[2], row0, kRows, d.seq);
  commit_loads();
  if (a.kfirst < a.klim) load_kv(a.kfirst, sm);
  wait_loads<0>();
  __syncthreads();
  uint32_t qf[F::KQ][4];  // this warp's 16 rows as A fragments
  F::q(qf, sm + STAGE, wrow / 16, lane);
  float o[D / 8][4];  // output accumulators: rows g and g + 8, columns 8j + 2 t4 (+1)
#pragma unroll
  for (int j = 0; j < D / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // per row: running max, this lane's share of the sum
  const int64_t rows[2] = {row0 + wrow + g, row0 + wrow + g + 8};
  // tiles every row of the block sees whole: no per-score masking (most tiles of a long sequence)
  const bool plain = !d.bias && !(d.mask && !d.mask_lens);
  // Keyed: the mask and bias vary along the keys only (BERT's key padding,
  // [B, 1, 1, S]) and no causal, length or window cut: a key's verdict and
  // bias are the same for every row, so the block works out each key's
  // once a tile (kterm: the factor on the raw score, 0 where the mask
  // replaces it, and what is added) and a score takes one multiply-add.
  // The per-score path read and tested the mask for every score (BERT b8
  // with its mask 24.6 us a call, unmasked 10.2).
  const bool keyed = LEAN ? !plain
                          : !plain && !d.causal && !a.use_lens && !a.windowed &&
                                (!d.mask || d.mask_lens || d.mask_st[2] == 0) && (!d.bias || d.bias_st[2] == 0);
  const float kscale = d.softcap > 0.f ? 1.f : d.scale;  // the scale rides on the factor without a softcap
  const int64_t whole_lo = a.windowed ? last + a.past - d.window + 1 : 0;
  const int64_t whole_hi = d.causal && row0 + a.past + 1 < a.klim ? row0 + a.past + 1 : a.klim;
  int stage = 0;
  for (int64_t k0 = a.kfirst; k0 < a.klim; k0 += BN, stage ^= 1) {
    __syncthreads();  // every warp is done with the other stage (or with Q in it)
    if (k0 + BN < a.klim) {
      load_kv(k0 + BN, sm + (stage ^ 1) * STAGE);
      wait_loads<1>();
    } else {
      wait_loads<0>();
    }
    // lean and unmasked, the last tile takes key terms too: its keys past the last are out
    const bool terms = keyed || (LEAN && k0 + BN > a.klim);
    if (terms) {  // this tile's key terms; the stage's last readers were two tiles ago
      const int64_t mb = b * d.mask_st[0] + h * d.mask_st[1], bb = b * d.bias_st[0] + h * d.bias_st[1];
      for (int i = threadIdx.x; i < BN; i += 32 * W) {
        const int64_t key = k0 + i;
        float f = 0.f, add = -INFINITY;  // keys past the last: out
        if (key < a.klim) {
          const bool drop = d.mask && !d.mask_lens &&
                            gpu::attn_mask_keeps(d.mask, d.mask_dtype, mb + key * d.mask_st[3]) == (bool)d.mask_invert;
          // gpu::attn_masked's rule on a score of 0, written out: called, its
          // causal and window tests cost registers (252 -> 254, split 142 -> 162)
          add = (drop ? d.fill : 0.f) + (d.bias ? gpu::ld((const T *)d.bias, bb + key * d.bias_st[3]) : 0.f);
          f = drop && !d.mask_add ? 0.f : kscale;
        }
        kterm[stage][i] = make_float2(f, add);
      }
    }
    __syncthreads();  // this stage's tile (and its key terms) is in
    const E *ks = sm + stage * STAGE, *vs = ks + KELEMS;
    // a tile some row sees part of: this lane's mask verdicts (bits 4 j + e)
    // and biases (in the element type: fewer registers) are read first,
    // every load in flight at once and under the products (waited on one
    // score at a time, BERT's masked attention took 4x as long)
    const bool whole = LEAN ? !terms : plain && k0 >= whole_lo && k0 + BN <= whole_hi;
    const int64_t kb = k0 + kofs + 2 * t4;  // this lane's first key in the tile
    uint32_t drops = 0;
    T bias[NK / 8][4];
    if (!LEAN && !whole && !keyed) {
      // where this lane's rows start in the mask and the bias (a key adds
      // key * st[3]; not kept across tiles: registers)
      int64_t mrow[2], brow[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        mrow[r] = b * d.mask_st[0] + h * d.mask_st[1] + rows[r] * d.mask_st[2];
        brow[r] = b * d.bias_st[0] + h * d.bias_st[1] + rows[r] * d.bias_st[2];
      }
      if (d.mask && !d.mask_lens) {
        // one loop a mask type, chosen once a tile (not a score: that made
        // the unrolled loop three interleaved ones, more code to fetch)
        if (d.mask_dtype == GPU_DT_I32) drops = tile_drops<int32_t, NK>(d, mrow, rows, kb);
        else if (d.mask_dtype == GPU_DT_I64) drops = tile_drops<int64_t, NK>(d, mrow, rows, kb);
        else drops = tile_drops<unsigned char, NK>(d, mrow, rows, kb);
      }
#pragma unroll
      for (int j = 0; j < NK / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int64_t key = kb + j * 8 + (e & 1);
          bias[j][e] = d.bias && rows[e / 2] < d.seq && key < d.kv_len
                           ? ((const T *)d.bias)[brow[e / 2] + key * d.bias_st[3]]
                           : T();
        }
      }
    }
    float s[NK / 8][4];  // scores: rows g, g + 8; keys kofs + 8j + 2 t4 (+1)
#pragma unroll
    for (int j = 0; j < NK / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
    if (kt)
      F::template scores_t<NK>(s, qf, ks, kofs, lane);
    else
      F::template scores<NK>(s, qf, ks, kofs, lane);
    // scaled (softcapped in a loop of its own, skipped whole without one),
    // then masked where some row sees part of the tile: compact loops. The
    // kernel is bound by fetching its unrolled code (ncu, BERT b8: ~40% of
    // a warp's cycles), so less code a tile is time: with the scale, cap
    // and masks in one loop a score, the masked BERT b1 took 13.3 us, 11.3
    // like this (architecture.md)
    if (!terms || (!LEAN && d.softcap > 0.f)) {
#pragma unroll
      for (int j = 0; j < NK / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[j][e] *= d.scale;
    }
    if (!LEAN && d.softcap > 0.f) {
#pragma unroll
      for (int j = 0; j < NK / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[j][e] = d.softcap * tanhf(s[j][e] / d.softcap);
    }
    if (terms) {
      // keys kb + 8 j and the next: (factor, add) twice in one 16-byte read;
      // a factor of 0 replaces the score (not a product: 0 * inf is NaN)
#pragma unroll
      for (int j = 0; j < NK / 8; ++j) {
        const float4 kv = *(const float4 *)&kterm[stage][kofs + 8 * j + 2 * t4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float f = e & 1 ? kv.z : kv.x, add = e & 1 ? kv.w : kv.y;
          s[j][e] = f != 0.f ? fmaf(s[j][e], f, add) : add;
        }
      }
    } else if (!LEAN && !whole) {
#pragma unroll
      for (int j = 0; j < NK / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int64_t row = rows[e / 2], key = kb + j * 8 + (e & 1);
          s[j][e] = row < d.seq && key < d.kv_len ? gpu::attn_masked(d, a, s[j][e], row + a.past, key,
                                                                     (drops >> (4 * j + e)) & 1u, gpu::ld(&bias[j][e], 0))
                                                  : -INFINITY;
        }
      }
    }
    float tmax[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int j = 0; j < NK / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) tmax[e / 2] = fmaxf(tmax[e / 2], s[j][e]);
    float mu[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      tmax[r] = fmaxf(tmax[r], gpu::shfl_xor32(tmax[r], 1));
      tmax[r] = fmaxf(tmax[r], gpu::shfl_xor32(tmax[r], 2));
      const float mnew = fmaxf(m[r], tmax[r]);
      mu[r] = mnew == -INFINITY ? 0.f : mnew;  // all -inf so far: weights 0, not NaN
      const float alpha = __expf(m[r] - mu[r]);
      m[r] = mnew;
      l[r] *= alpha;
#pragma unroll
      for (int j = 0; j < D / 8; ++j) o[j][2 * r] *= alpha, o[j][2 * r + 1] *= alpha;
    }
#pragma unroll
    for (int j = 0; j < NK / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[j][e] = __expf(s[j][e] - mu[e / 2]);
        l[e / 2] += s[j][e];
      }
    }
    F::template accumulate<NK>(o, s, vs, kofs, lane);
  }
  if (SPLIT) {
    merge_slices<T, D, W>(d, (float *)sm, m, l, o, b, h, row0);
  } else {
    T *O = (T *)d.out;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float sum = l[r];
      sum += gpu::shfl_xor32(sum, 1);
      sum += gpu::shfl_xor32(sum, 2);
      if (rows[r] >= d.seq) continue;
      const float inv = 1.f / sum;  // sum == 0: every key masked with -inf
      const int64_t obase = b * d.o_st[0] + h * d.o_st[1] + rows[r] * d.o_st[2];
#pragma unroll
      for (int j = 0; j < D / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float v = sum > 0.f ? o[j][2 * r + e] * inv : d.empty_zero ? 0.f : NAN;
          gpu::st(O, obase + (j * 8 + 2 * t4 + e) * d.o_st[3], v);
        }
      }
    }
  }
#endif
}

// Built for a GPU with mma.sync m16n8k16 (sm_80 and up)? The kernels are
// empty otherwise; asked once a device and element type.
template <typename T>
bool flash_built() {
  static std::atomic<int> cached[gpu::kCachedDevices];
  return gpu::built_for((const void *)flash_rows<T, 64, 4, false, false>, 80, cached);
}

// rows of unit-stride elements starting on 16 bytes (n elements); with
// inner 2, unit-stride keys (K stored transposed)
bool aligned16(const void *p, int64_t off, const int64_t st[4], int64_t n, int inner = 3) {
  for (int i = 0; i < 4; ++i)
    if (i != inner && st[i] % n != 0) return false;
  return ((uintptr_t)p % 16) == 0 && off % n == 0 && st[inner] == 1;
}

// The lean kernel's cases: a mask and a bias that vary along the keys alone
// (or none), and no causal cut, lengths, window or softcap.
bool flash_lean(const gpu_attn_desc *d) {
  return !d->causal && !d->seqlens && d->softcap <= 0.f && (!d->mask || (!d->mask_lens && d->mask_st[2] == 0)) &&
         (!d->bias || d->bias_st[2] == 0);
}

template <typename T, int D, int W, bool SPLIT>
int launch(const gpu_attn_desc *d, gpuStream_t s) {
  const int64_t rows = SPLIT ? 16 : 16 * W;
  if ((d->seq + rows - 1) / rows > 0x7fffffff) return -1;
  const dim3 grid((unsigned)((d->seq + rows - 1) / rows), (unsigned)d->heads, (unsigned)d->batch);
  if (flash_lean(d))
    gpu::launch(flash_rows<T, D, W, SPLIT, true>, grid, 32 * W, 0, s, *d);
  else
    gpu::launch(flash_rows<T, D, W, SPLIT, false>, grid, 32 * W, 0, s, *d);
  return gpu::last_error();
}

// HIPDNN_EP_FLASH_SPLIT: 0 never splits the keys among a block's warps, 2
// splits them for 32-row grids too (switches for A/B runs); read once.
int split_wanted() {
  static std::atomic<int> wanted{-1};
  int w = wanted.load(std::memory_order_relaxed);
  if (w < 0) {
    const char *v = getenv("HIPDNN_EP_FLASH_SPLIT");
    w = v && (v[0] == '0' || v[0] == '2') && !v[1] ? v[0] - '0' : 1;
    wanted.store(w, std::memory_order_relaxed);
  }
  return w;
}

// Warps a block: 4 (64 rows) while that still makes about two blocks per
// multiprocessor of a large GPU, else 2 (32 rows); fewer blocks than that
// (an encoder's 128-token sequence at batch 1) and the warps of a block
// share 16 rows and split the keys.
template <typename T, int D>
int launch_rows(const gpu_attn_desc *d, gpuStream_t s) {
  typedef frags<T, D> F;
  constexpr int SW = F::BN / F::KMIN >= 4 ? 4 : 2;
  const int64_t heads = d->batch * d->heads, wanted = gpu::kFillBlocks;
  const int split = split_wanted();
  if (heads * ((d->seq + 63) / 64) >= wanted) return launch<T, D, 4, false>(d, s);
  if (heads * ((d->seq + 31) / 32) >= wanted)
    return split == 2 ? launch<T, D, SW, true>(d, s) : launch<T, D, 2, false>(d, s);
  return split ? launch<T, D, SW, true>(d, s) : launch<T, D, 1, false>(d, s);
}

// Shapes and layouts it takes: rows of unit-stride elements on 16 bytes,
// at least 16 query rows (a handful fill few of a warp's 16: the CUDA-core
// kernel packs them tighter), one head size for Q/K and V, no split or fold,
// and not the contrib kernels' causal cut (gpu::attn_lowest: the CUDA-core
// kernel's; a loop for it in the tiles cost every masked tile, BERT b8 +7%
// and a causal prefill of 1024 tokens +6%, though it ran only for it).
template <typename T>
bool flash_takes(const gpu_attn_desc *d) {
  const int64_t n = 16 / (int64_t)sizeof(T);
  return flash_built<T>() && d->batch > 0 && d->heads > 0 && d->seq >= 16 && d->kv_len > 0 && !d->fold &&
         !(d->mask_add && d->causal) &&
         d->split <= 1 && d->v_dim == d->head_dim && d->kv_heads >= 1 && d->heads % d->kv_heads == 0 &&
         d->heads <= 65535 && d->batch <= 65535 && aligned16(d->q, d->q_off, d->q_st, n) &&
         (aligned16(d->k, d->k_off, d->k_st, n) || aligned16(d->k, d->k_off, d->k_st, n, 2)) &&
         aligned16(d->v, d->v_off, d->v_st, n);
}

template <typename T>
int flash_half(const gpu_attn_desc *d, gpuStream_t s) {
  if (!flash_takes<T>(d)) return -1;
  switch (d->head_dim) {
    case 32: return launch_rows<T, 32>(d, s);
    case 64: return launch_rows<T, 64>(d, s);
    case 80: return launch_rows<T, 80>(d, s);
    case 96: return launch_rows<T, 96>(d, s);
    case 128: return launch_rows<T, 128>(d, s);
    default: return -1;
  }
}

// fp32 through TF32 when the context allows it (as for matmuls); its
// tiles take head sizes up to 64
int flash_tf32(const gpu_attn_desc *d, gpuStream_t s) {
  if (!d->tf32 || !flash_takes<float>(d)) return -1;
  switch (d->head_dim) {
    case 32: return launch_rows<float, 32>(d, s);
    case 64: return launch_rows<float, 64>(d, s);
    default: return -1;
  }
}

}  // namespace

int gpu::flash_attention(const gpu_attn_desc *d, int dtype, gpuStream_t s) {
  switch (dtype) {
    case GPU_DT_F32: return flash_tf32(d, s);
    case GPU_DT_F16: return flash_half<gpu_half>(d, s);
    case GPU_DT_BF16: return flash_half<gpu::bf16>(d, s);
    default: return -1;
  }
}

#endif
