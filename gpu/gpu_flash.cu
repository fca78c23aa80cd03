// gpu_flash: attention on tensor cores for fp16/bf16 (NVIDIA, sm_80 and
// up: mma.sync m16n8k16, fp32 accumulation). A block takes 64 query rows of
// one (batch, head) (16 or 32 when that leaves the GPU idle), 16 per warp,
// and walks the keys in tiles (64 keys for
// head sizes up to 64, else 32, so a block's tiles fit in 48 KB of shared
// memory; two of each, the next tile loading by cp.async while this one is
// used): S = Q K^T from ldmatrix'd fragments, the online softmax in
// registers (a lane holds two rows' scores; the four lanes of a quad hold
// the rest of those rows), then O += P V with S's accumulators repacked as
// the A fragments of P, never written to memory. Masks, lengths, softcap
// and bias are gpu_attention.cu's (gpu_attn.cuh). What it does not take
// (fp32, head sizes other than 32/64/80/96/128, strided inner dims, rows or
// starts not 16-byte aligned, the split and fold forms of decode) returns
// -1 and runs on gpu_attention.cu's kernel; on HIP it takes nothing yet.
#include "gpu/gpu_attn.cuh"

#if defined(GPU_VENDOR_HIP)

int gpu::flash_attention(const gpu_attn_desc *, int, gpuStream_t) { return -1; }

#else

namespace {

using gpu::attn_span;

// W warps a block, 16 query rows each (4; fewer when there are too few
// rows to fill the GPU with 64-row blocks: an encoder's 128-token sequence)

template <int D>
struct tile_dims {
  static constexpr int keys = D <= 64 ? 64 : 32;  // keys per tile
  static constexpr int ld = D + 8;                // row pitch in elements: ldmatrix rows on distinct banks
};

__device__ __forceinline__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

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

// rows [r0, r0 + n) of an operand into sm (pitch ld), 16 bytes a thread at
// a time without waiting (cp.async; rows at or past lim are zero-filled);
// the caller commits them as a group
template <int D, int W>
__device__ __forceinline__ void load_rows(uint16_t *sm, const uint16_t *src, int64_t base, int64_t pitch, int64_t r0,
                                          int n, int64_t lim) {
  constexpr int chunks = D / 8;
  for (int c = threadIdx.x; c < n * chunks; c += 32 * W) {
    const int r = c / chunks, col = (c % chunks) * 8;
    const bool in = r0 + r < lim;
    const uint16_t *from = src + (in ? base + (r0 + r) * pitch + col : 0);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(sm + r * tile_dims<D>::ld + col)),
                 "l"(from), "r"(in ? 16 : 0));
  }
}

__device__ __forceinline__ void commit_loads() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void wait_loads() {  // all but the newest N groups of this thread's loads are done
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

template <typename T, int D, int W>
__global__ void __launch_bounds__(32 * W) flash_rows(gpu_attn_desc d) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int kRows = 16 * W, BN = tile_dims<D>::keys, LD = tile_dims<D>::ld, STAGE = 2 * BN * LD;
  static_assert(2 * BN >= kRows, "the Q tile is staged in a K/V stage");
  // two stages of K and V tiles: the next tile loads while this one is used (Q is staged in the second)
  __shared__ __align__(16) uint16_t sm[2 * STAGE];
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t4 = lane % 4;
  const int64_t nrb = (d.seq + kRows - 1) / kRows;
  const int64_t rb = nrb - 1 - blockIdx.x;  // the last rows first: under a causal mask they see the most keys
  const int64_t b = blockIdx.z, h = blockIdx.y, kh = h / (d.heads / d.kv_heads), row0 = rb * kRows;
  const int64_t last = row0 + kRows - 1 < d.seq - 1 ? row0 + kRows - 1 : d.seq - 1;
  const attn_span a = gpu::attn_keys(d, b, row0, last, BN);
  const uint16_t *Q = (const uint16_t *)d.q, *K = (const uint16_t *)d.k, *V = (const uint16_t *)d.v;
  const int64_t kbase = d.k_off + b * d.k_st[0] + kh * d.k_st[1], vbase = d.v_off + b * d.v_st[0] + kh * d.v_st[1];
  // keys from klim on load as zeros: a cache's unwritten rows may hold inf or NaN bits, and 0 * inf is NaN
  const auto load_kv = [&](int64_t k0, uint16_t *stage) {
    load_rows<D, W>(stage, K, kbase, d.k_st[2], k0, BN, a.klim);
    load_rows<D, W>(stage + BN * LD, V, vbase, d.v_st[2], k0, BN, a.klim);
    commit_loads();
  };
  load_rows<D, W>(sm + STAGE, Q, d.q_off + b * d.q_st[0] + h * d.q_st[1], d.q_st[2], row0, kRows, d.seq);
  commit_loads();
  if (a.kfirst < a.klim) load_kv(a.kfirst, sm);
  wait_loads<0>();
  __syncthreads();
  uint32_t qf[D / 16][4];  // this warp's 16 rows as A fragments, one per 16 columns
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    ldmatrix_x4(qf[kk], sm + STAGE + (w * 16 + lane % 16) * LD + kk * 16 + (lane / 16) * 8);
  float o[D / 8][4];  // output accumulators: rows g and g + 8, columns 8j + 2 t4 (+1)
#pragma unroll
  for (int j = 0; j < D / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // per row: running max, this lane's share of the sum
  const int64_t rows[2] = {row0 + w * 16 + g, row0 + w * 16 + g + 8};
  // tiles every row of the block sees whole: no per-score masking (most tiles of a long sequence)
  const bool plain = !d.bias && !(d.mask && !d.mask_lens);
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
    __syncthreads();  // this stage's tile is in
    const uint16_t *ks = sm + stage * STAGE, *vs = ks + BN * LD;
    float s[BN / 8][4];  // scores: rows g, g + 8; keys 8j + 2 t4 (+1)
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
      for (int j = 0; j < BN / 16; ++j) {  // keys 16j .. 16j + 15: two 8-key tiles from one ldmatrix
        uint32_t kf[4];
        ldmatrix_x4(kf, ks + (j * 16 + (lane / 16) * 8 + lane % 8) * LD + kk * 16 + ((lane / 8) % 2) * 8);
        mma<T>(s[2 * j], qf[kk], kf[0], kf[1]);
        mma<T>(s[2 * j + 1], qf[kk], kf[2], kf[3]);
      }
    }
    float tmax[2] = {-INFINITY, -INFINITY};
    if (plain && k0 >= whole_lo && k0 + BN <= whole_hi) {
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float x = d.scale * s[j][e];
          if (d.softcap > 0.f) x = d.softcap * tanhf(x / d.softcap);
          s[j][e] = x;
          tmax[e / 2] = fmaxf(tmax[e / 2], x);
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = e / 2;
          const int64_t row = rows[r], key = k0 + j * 8 + 2 * t4 + (e & 1);
          const bool valid = row < d.seq && key < d.kv_len;
          s[j][e] = valid ? gpu::attn_score<T>(d, a, s[j][e], b, h, row, row + a.past, key) : -INFINITY;
          tmax[r] = fmaxf(tmax[r], s[j][e]);
        }
      }
    }
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
    for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[j][e] = __expf(s[j][e] - mu[e / 2]);
        l[e / 2] += s[j][e];
      }
    }
#pragma unroll
    for (int kc = 0; kc < BN / 16; ++kc) {  // keys 16 kc .. 16 kc + 15: P's A fragment from two score tiles
      const uint32_t pa[4] = {pack2<T>(s[2 * kc][0], s[2 * kc][1]), pack2<T>(s[2 * kc][2], s[2 * kc][3]),
                              pack2<T>(s[2 * kc + 1][0], s[2 * kc + 1][1]),
                              pack2<T>(s[2 * kc + 1][2], s[2 * kc + 1][3])};
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {  // columns 16 dp .. 16 dp + 15: two 8-column tiles from one ldmatrix
        uint32_t vf[4];
        ldmatrix_x4_trans(vf, vs + (kc * 16 + ((lane / 8) % 2) * 8 + lane % 8) * LD + dp * 16 + (lane / 16) * 8);
        mma<T>(o[2 * dp], pa, vf[0], vf[1]);
        mma<T>(o[2 * dp + 1], pa, vf[2], vf[3]);
      }
    }
  }
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
#endif
}

// Built for a GPU with mma.sync m16n8k16 (sm_80 and up)? The kernels are
// empty otherwise; the answer is the binary's, asked once per element type.
template <typename T>
bool flash_built() {
  static const bool ok = [] {
    gpuFuncAttributes fa;
    return gpuFuncGetAttributes(&fa, (const void *)flash_rows<T, 64, 4>) == gpuSuccess && fa.binaryVersion >= 80;
  }();
  return ok;
}

bool aligned16(const void *p, int64_t off, const int64_t st[4]) {
  return ((uintptr_t)p % 16) == 0 && off % 8 == 0 && st[0] % 8 == 0 && st[1] % 8 == 0 && st[2] % 8 == 0 && st[3] == 1;
}

template <typename T, int D, int W>
int launch(const gpu_attn_desc *d, gpuStream_t s) {
  const int64_t rows = 16 * W;
  if ((d->seq + rows - 1) / rows > 0x7fffffff) return -1;
  const dim3 grid((unsigned)((d->seq + rows - 1) / rows), (unsigned)d->heads, (unsigned)d->batch);
  flash_rows<T, D, W><<<grid, 32 * W, 0, s>>>(*d);
  return gpu::last_error();
}

// Warps a block: 4 (64 rows) while that still makes about two blocks per
// multiprocessor of a large GPU, else fewer rows a block and more blocks.
template <typename T, int D>
int launch_rows(const gpu_attn_desc *d, gpuStream_t s) {
  const int64_t heads = d->batch * d->heads, wanted = 264;
  if (heads * ((d->seq + 63) / 64) >= wanted) return launch<T, D, 4>(d, s);
  if (heads * ((d->seq + 31) / 32) >= wanted) return launch<T, D, 2>(d, s);
  return launch<T, D, 1>(d, s);
}

template <typename T>
int flash(const gpu_attn_desc *d, gpuStream_t s) {
  if (!flash_built<T>()) return -1;
  const int64_t D = d->head_dim;
  if (d->batch <= 0 || d->heads <= 0 || d->seq <= 0 || d->kv_len <= 0 || d->fold || d->split > 1 || d->v_dim != D ||
      d->kv_heads < 1 || d->heads % d->kv_heads != 0 || d->heads > 65535 || d->batch > 65535)
    return -1;
  // a handful of rows fill few of a warp's 16: the CUDA-core kernel packs them tighter
  if (d->seq < 16 || !aligned16(d->q, d->q_off, d->q_st) || !aligned16(d->k, d->k_off, d->k_st) ||
      !aligned16(d->v, d->v_off, d->v_st))
    return -1;
  switch (D) {
    case 32: return launch_rows<T, 32>(d, s);
    case 64: return launch_rows<T, 64>(d, s);
    case 80: return launch_rows<T, 80>(d, s);
    case 96: return launch_rows<T, 96>(d, s);
    case 128: return launch_rows<T, 128>(d, s);
    default: return -1;
  }
}

}  // namespace

int gpu::flash_attention(const gpu_attn_desc *d, int dtype, gpuStream_t s) {
  switch (dtype) {
    case GPU_DT_F16: return flash<gpu_half>(d, s);
    case GPU_DT_BF16: return flash<gpu::bf16>(d, s);
    default: return -1;
  }
}

#endif
