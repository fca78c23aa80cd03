// gpu_gqa_decode: GroupQueryAttention's attention for one new token per
// batch (decode), over the KV cache in present [B, kv_heads, present_len, D].
//
// Decode attention is latency-bound: a step reads a few hundred KB per KV
// head, so what costs is how many dependent trips to memory a block makes.
// Here a block (one KV head, one range of CH keys) issues every load it
// needs at once — its keys' K and V rows as 16-byte vectors, LPK lanes a
// row — then scores the group's query heads against them (the rows of one
// KV head serve all the query heads that share it), takes the softmax of
// the range in shared memory and sums the V rows: one round trip. The
// ranges cover the whole present buffer (its length is what the plan
// knows); a block past its batch's key count only counts itself in after
// reading seqlens_k. When there is more than one range, each block writes its
// partial softmax sums, counts itself in (an atomic a KV head:
// gpu::arrive_last), and the block that arrives last merges the ranges:
// one launch a step, not two (the merge kernel cost ~4 us a layer of a
// decode step).
// The append is here too: each block rotates the group's query heads as it
// stages them, and the block whose range holds the new token's row makes
// that K row (rotated) and V row from the inputs in registers, in place of
// loading them, and writes them into present: no append kernel before it
// (gpu_gqa_append cost ~4 us a layer too).
#include <math.h>

#include "gpu/gpu_rope.cuh"

namespace {

// A block takes a range of kRangeLanes / LPK keys (LPK lanes a key row):
// 256 threads loading two rows each, or 128 loading four where eight warps'
// sums would not fit static shared memory (red below, at LPK x GM >= 256).
// Two rows a thread, not four, halve a thread's chain of dependent sums,
// and the merge then takes 1024 keys of D 64 in one round, not two; the
// ranges stay the same. Registers matter too: the same block with a merge
// keeping 64 loads in flight (158 a thread, against 95) lost the gain (our
// reading: at 95 a block fits on an SM beside the one-row GEMV's,
// gemv_bulk's 512 x 74, and can start early there). H200, the int4
// 1B-shaped decoder's replayed step, alternating in one session (3 runs
// each): prompt 128 0.625-0.629 -> 0.609-0.614 ms, prompt 1024
// 0.690-0.697 -> 0.624-0.640 (2026-11-29).
constexpr int kRangeLanes = 512;
template <int LPK, int GM>
__host__ __device__ constexpr int threads_for() { return LPK * GM >= 256 ? 128 : 256; }

template <typename T>
struct vec {
  static constexpr int n = 16 / (int)sizeof(T);  // elements in 16 bytes
};

template <typename T>
__device__ __forceinline__ void unpack(const uint4 &u, float *f) {
  const T *e = (const T *)&u;
#pragma unroll
  for (int j = 0; j < vec<T>::n; ++j) f[j] = gpu::ld(e, j);
}

// The new token's row in present (gpu_gqa.cu's past_b): its position.
__device__ __forceinline__ int64_t new_row(const gpu_gqa_decode_desc &d, int64_t b) {
  return gpu::gqa_past(d.first_prompt, d.seqlens[b], 1);
}

// The keys a batch's new token sees: [first, lim).
__device__ __forceinline__ void key_range(const gpu_gqa_decode_desc &d, int64_t b, int64_t *first, int64_t *lim) {
  const int64_t keys = (int64_t)d.seqlens[b] + 1;
  const int64_t pos = new_row(d, b);
  int64_t l = keys < pos + 1 ? keys : pos + 1;
  if (l > d.present_len) l = d.present_len;
  *lim = l > 0 ? l : 0;
  *first = d.window >= 0 && pos - d.window + 1 > 0 ? pos - d.window + 1 : 0;
}

// Reduces v over the lanes of a 32-lane group that differ in the bits from
// `from` up (the other key rows of this lane's column chunk).
template <int From>
__device__ __forceinline__ float over_keys(float v, bool is_max) {
#pragma unroll
  for (int off = 16; off >= From; off /= 2) {
    const float o = gpu::shfl_xor32(v, off);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  return v;
}

// The softmax sums of one range of keys [k0, k0 + CH) for the query heads
// of KV head kh: out when it is the only range, else partial / partial_ml.
// The new token's row `to`, when in the range, is made and written here.
template <typename T, int LPK, int GM>
__device__ __forceinline__ void range_sums(const gpu_gqa_decode_desc &d, int64_t b, int64_t kh, int64_t split,
                                           int64_t nsplit, int64_t k0, int64_t kfirst, int64_t klim, int64_t to,
                                           int64_t row) {
  constexpr int NT = threads_for<LPK, GM>(), NP = kRangeLanes / NT;  // rows a thread loads per K and V
  constexpr int EPL = vec<T>::n, D = LPK * EPL, KPP = NT / LPK, W = NT / 32;
  __shared__ float q_sm[GM][D];
  __shared__ float red[W][GM][D];
  __shared__ float wm[W][GM], wl[W][GM];
  const int t = threadIdx.x, kg = t / LPK, c = t % LPK, w = t / 32, lane = t % 32;
  const int G = (int)d.group;
  const int64_t row0 = (b * d.kv_heads + kh) * d.present_len;
  uint4 kr[NP], vr[NP];
#pragma unroll
  for (int p = 0; p < NP; ++p) {
    const int64_t key = k0 + p * KPP + kg;
    if (key >= kfirst && key < klim && key != to) {
      const int64_t at = (row0 + key) * D + c * EPL;
      kr[p] = *(const uint4 *)((const T *)d.k + at);
      vr[p] = *(const uint4 *)((const T *)d.v + at);
    } else {
      kr[p] = vr[p] = make_uint4(0, 0, 0, 0);
    }
  }
  // The group's query heads, rotated as gpu_gqa_append would and rounded
  // to T; where the range holds the new token's row, its K (rotated) and V
  // too, into new_sm: one loop, so every thread's loads go out together.
  __shared__ float new_sm[2][D];
  const bool holds = to >= k0 && to < k0 + KPP * NP && to < d.present_len;
  const int items = G * D + (holds ? 2 * D : 0);
  const T *Q = (const T *)d.q + b * d.q_batch_stride + kh * G * D;
  const int64_t kv_at = b * d.kv_batch_stride + kh * D;
#pragma unroll
  for (int u = 0; u < ((GM + 2) * D + NT - 1) / NT; ++u) {
    const int i = t + u * NT;
    if (i < items) {
      const bool q = i < G * D;
      const int j = q ? i : i - G * D, g = j / D, dd = j % D;  // not q: g 0 is K, 1 is V
      const T *src = q ? Q : g == 0 ? (const T *)d.k_new : (const T *)d.v_new;
      const int64_t at = q ? (int64_t)g * D : kv_at;
      T r;
      gpu::st(&r, 0, d.rot_dim > 0 && (q || g == 0) ? gpu::rope_elem(src, at, dd, (const T *)d.cos, (const T *)d.sin, row,
                                                                    d.rot_dim, d.interleaved != 0)
                                                    : gpu::ld(src, at + dd));
      if (q) q_sm[g][dd] = gpu::ld(&r, 0);
      else new_sm[g][dd] = gpu::ld(&r, 0);
    }
  }
  __syncthreads();
  // the new row's lanes write it to present and use it
  if (holds && (to - k0) % KPP == kg) {
    alignas(16) T kk[EPL], vv[EPL];
#pragma unroll
    for (int e = 0; e < EPL; ++e) gpu::st(kk, e, new_sm[0][c * EPL + e]), gpu::st(vv, e, new_sm[1][c * EPL + e]);
    const uint4 nk = *(const uint4 *)kk, nv = *(const uint4 *)vv;
    const int64_t at = (row0 + to) * D + c * EPL;
    *(uint4 *)((T *)d.k + at) = nk;
    *(uint4 *)((T *)d.v + at) = nv;
    const int pn = (int)((to - k0) / KPP);
    if (to >= kfirst && to < klim) {
#pragma unroll
      for (int p = 0; p < NP; ++p)
        if (p == pn) kr[p] = nk, vr[p] = nv;
    }
  }
  // scores of this thread's keys (every lane of a key's LPK holds them)
  float s[NP][GM];
#pragma unroll
  for (int p = 0; p < NP; ++p) {
    float kv[EPL];
    unpack<T>(kr[p], kv);
    const int64_t key = k0 + p * KPP + kg;
    const bool ok = key >= kfirst && key < klim;
#pragma unroll
    for (int g = 0; g < GM; ++g) {
      float dot = 0.f;
      if (g < G) {
#pragma unroll
        for (int j = 0; j < EPL; ++j) dot = fmaf(q_sm[g][c * EPL + j], kv[j], dot);
      }
#pragma unroll
      for (int off = LPK / 2; off > 0; off /= 2) dot += gpu::shfl_xor32(dot, off);
      float sc = d.scale * dot;
      if (d.softcap > 0.f) sc = d.softcap * tanhf(sc / d.softcap);
      s[p][g] = ok && g < G ? sc : -INFINITY;
    }
  }
  // the range's max and sum per query head: over this lane's keys, the
  // group's other key rows, then the block's groups
  float m[GM];
#pragma unroll
  for (int g = 0; g < GM; ++g) {
    float v = s[0][g];
#pragma unroll
    for (int p = 1; p < NP; ++p) v = fmaxf(v, s[p][g]);
    v = over_keys<LPK>(v, true);
    if (lane == 0) wm[w][g] = v;
  }
  __syncthreads();
#pragma unroll
  for (int g = 0; g < GM; ++g) {
    float v = wm[0][g];
#pragma unroll
    for (int i = 1; i < W; ++i) v = fmaxf(v, wm[i][g]);
    m[g] = v;
    const float mu = v == -INFINITY ? 0.f : v;
    float sum = 0.f;
#pragma unroll
    for (int p = 0; p < NP; ++p) {
      s[p][g] = s[p][g] == -INFINITY ? 0.f : __expf(s[p][g] - mu);
      sum += s[p][g];
    }
    sum = over_keys<LPK>(sum, false);
    if (lane == 0) wl[w][g] = sum;
  }
  // this thread's share of P V, then summed over the key rows of its warp
  float acc[GM][EPL];
#pragma unroll
  for (int g = 0; g < GM; ++g)
#pragma unroll
    for (int j = 0; j < EPL; ++j) acc[g][j] = 0.f;
#pragma unroll
  for (int p = 0; p < NP; ++p) {
    float vv[EPL];
    unpack<T>(vr[p], vv);
#pragma unroll
    for (int g = 0; g < GM; ++g)
#pragma unroll
      for (int j = 0; j < EPL; ++j) acc[g][j] = fmaf(s[p][g], vv[j], acc[g][j]);
  }
#pragma unroll
  for (int g = 0; g < GM; ++g)
#pragma unroll
    for (int j = 0; j < EPL; ++j) acc[g][j] = over_keys<LPK>(acc[g][j], false);
  if (lane < LPK) {
#pragma unroll
    for (int g = 0; g < GM; ++g)
#pragma unroll
      for (int j = 0; j < EPL; ++j) red[w][g][c * EPL + j] = acc[g][j];
  }
  __syncthreads();
  for (int i = t; i < G * D; i += NT) {
    const int g = i / D, dd = i % D;
    float a = 0.f, sum = 0.f;
#pragma unroll
    for (int k = 0; k < W; ++k) a += red[k][g][dd], sum += wl[k][g];
    const int64_t bkg = (b * d.kv_heads + kh) * G + g;
    if (nsplit == 1) {
      gpu::st((T *)d.out, b * d.out_batch_stride + (kh * G + g) * D + dd, sum > 0.f ? a / sum : 0.f);
    } else {
      d.partial[(bkg * nsplit + split) * D + dd] = a;
      if (dd == 0) d.partial_ml[(bkg * nsplit + split) * 2] = m[g], d.partial_ml[(bkg * nsplit + split) * 2 + 1] = sum;
    }
  }
}

// out = sum_i e^(m_i - M) acc_i / sum_i e^(m_i - M) l_i over the ranges
// that hold keys of the batch (the others wrote nothing), for KV head kh of
// batch b, by the calling block's threads. The partial sums were written by
// other blocks: read past L1. Each round of R ranges is one trip to L2:
// every thread issues the loads of its outputs' partial sums for all R at
// once while G * R threads bring the ranges' maxima and sums into shared
// memory; the running max rescales what came before. (A loop of four
// ranges an output, an output at a time, made 8 dependent trips at 1024
// keys: ~12.5 us a layer of the 1B decoder's step against ~7.5 at 128.)
template <typename T, int D, int GM, int NT>
__device__ void merge_ranges(const gpu_gqa_decode_desc &d, int64_t b, int64_t kh, int ch, int nsplit) {
  constexpr int IPT = (GM * D + NT - 1) / NT;  // outputs a thread makes (at most 16)
  constexpr int R = 32 / IPT < NT / GM ? 32 / IPT : NT / GM;  // ranges a round: 32 loads in flight a thread, G * R <= NT
  __shared__ float m_sm[GM][R], l_sm[GM][R];
  const int64_t bk = b * d.kv_heads + kh;
  const int G = (int)d.group, t = threadIdx.x;
  int64_t kfirst, klim;
  key_range(d, b, &kfirst, &klim);
  const int s0 = (int)(kfirst / ch), s1 = klim > kfirst ? (int)((klim - 1) / ch) + 1 : s0;
  float M[IPT], L[IPT], a[IPT];
#pragma unroll
  for (int u = 0; u < IPT; ++u) M[u] = -INFINITY, L[u] = 0.f, a[u] = 0.f;
  for (int r0 = s0; r0 < s1; r0 += R) {
    if (t < G * R) {
      const int g = t / R, j = t % R;
      const float *ml = d.partial_ml + ((bk * G + g) * nsplit + r0 + j) * 2;
      const bool in = r0 + j < s1;
      m_sm[g][j] = in ? gpu::ld_cg(ml) : -INFINITY;
      l_sm[g][j] = in ? gpu::ld_cg(ml + 1) : 0.f;
    }
    float av[IPT][R];
#pragma unroll
    for (int u = 0; u < IPT; ++u) {
      const int i = t + u * NT, g = i / D, dd = i % D;
      const float *acc = d.partial + ((bk * G + g) * nsplit + r0) * D + dd;
#pragma unroll
      for (int j = 0; j < R; ++j) av[u][j] = i < G * D && r0 + j < s1 ? gpu::ld_cg(acc + (int64_t)j * D) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < IPT; ++u) {
      const int g = (t + u * NT) / D;
      if (g >= G) continue;
      float nm = M[u];
#pragma unroll
      for (int j = 0; j < R; ++j) nm = fmaxf(nm, m_sm[g][j]);
      if (nm == -INFINITY) continue;  // nothing yet: no scores in these ranges
      const float was = __expf(M[u] - nm);  // e^-inf = 0
      L[u] *= was, a[u] *= was;
#pragma unroll
      for (int j = 0; j < R; ++j) {
        const float w = __expf(m_sm[g][j] - nm);
        L[u] = fmaf(l_sm[g][j], w, L[u]);
        a[u] = fmaf(av[u][j], w, a[u]);
      }
      M[u] = nm;
    }
    __syncthreads();  // the next round's maxima and sums replace these
  }
#pragma unroll
  for (int u = 0; u < IPT; ++u) {
    const int i = t + u * NT, g = i / D, dd = i % D;
    if (i < G * D) gpu::st((T *)d.out, b * d.out_batch_stride + (kh * G + g) * D + dd, L[u] > 0.f ? a[u] / L[u] : 0.f);
  }
}

// LPK lanes per key row (D = LPK * vec<T>::n), at most GM query heads per
// KV head.
template <typename T, int LPK, int GM>
__global__ void __launch_bounds__((threads_for<LPK, GM>())) gqa_decode(gpu_gqa_decode_desc d) {
  gpu::wait_prior();
  gpu::start_next();
  constexpr int CH = kRangeLanes / LPK;
  const int64_t b = blockIdx.z, kh = blockIdx.y, split = blockIdx.x, nsplit = gridDim.x;
  int64_t kfirst, klim;
  key_range(d, b, &kfirst, &klim);
  const int64_t k0 = split * CH, to = new_row(d, b);
  const int64_t row = gpu::gqa_rope_row(to, 0, (int64_t)d.seqlens[b] + 1, d.table_rows);
  // A range without keys of the batch only counts itself in (the merge
  // skips it), unless it holds the new row to write.
  if (nsplit == 1 || (k0 < klim && k0 + CH > kfirst) || (to >= k0 && to < k0 + CH))
    range_sums<T, LPK, GM>(d, b, kh, split, nsplit, k0, kfirst, klim, to, row);
  if (nsplit == 1) return;
  if (!gpu::arrive_last(d.arrivals + b * d.kv_heads + kh, (unsigned)nsplit, false)) return;
  merge_ranges<T, LPK * vec<T>::n, GM, threads_for<LPK, GM>()>(d, b, kh, CH, (int)nsplit);
}

// The key ranges (blocks a KV head) over present_len rows at LPK lanes a row.
int64_t ranges(int lpk, int64_t present_len) {
  const int64_t ch = kRangeLanes / lpk;
  return (present_len + ch - 1) / ch;
}

template <typename T, int LPK, int GM>
int launch(const gpu_gqa_decode_desc *d, gpuStream_t s) {
  const int64_t nsplit = ranges(LPK, d->present_len);
  if (nsplit > 65535 || d->kv_heads > 65535 || d->batch > 65535) return -1;
  if (nsplit > 1 && (!d->partial || !d->partial_ml || !d->arrivals)) return -1;
  dim3 grid((unsigned)nsplit, (unsigned)d->kv_heads, (unsigned)d->batch);
  return gpu::launch(gqa_decode<T, LPK, GM>, grid, dim3(threads_for<LPK, GM>()), 0, s, *d);
}

template <typename T, int LPK>
int launch_group(const gpu_gqa_decode_desc *d, gpuStream_t s) {
  if (d->group <= 4) return launch<T, LPK, 4>(d, s);
  return launch<T, LPK, 8>(d, s);
}

// LPK for T and D, or 0 when the kernel does not take D.
template <typename T>
int lanes_per_key(int64_t D) {
  const int64_t bytes = D * (int64_t)sizeof(T);
  if (bytes % 16) return 0;
  const int64_t lpk = bytes / 16;
  return lpk == 2 || lpk == 4 || lpk == 8 || lpk == 16 || lpk == 32 ? (int)lpk : 0;
}

template <typename T>
int decode(const gpu_gqa_decode_desc *d, gpuStream_t s) {
  switch (lanes_per_key<T>(d->head_dim)) {
    case 2: return launch_group<T, 2>(d, s);
    case 4: return launch_group<T, 4>(d, s);
    case 8: return launch_group<T, 8>(d, s);
    case 16: return launch_group<T, 16>(d, s);
    case 32: return launch_group<T, 32>(d, s);
    default: return -1;
  }
}

template <typename T>
int64_t splits(int64_t D, int64_t present_len) {
  const int lpk = lanes_per_key<T>(D);
  return lpk ? ranges(lpk, present_len) : 0;
}

bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

}  // namespace

extern "C" int gpu_gqa_decode_splits(int dtype, int64_t batch, int64_t kv_heads, int64_t head_dim, int64_t group,
                                     int64_t present_len) {
  if (group < 1 || group > 8 || present_len < 1 || batch > 65535 || kv_heads > 65535) return 0;
  int64_t n = 0;
  switch (dtype) {
    case GPU_DT_F32: n = splits<float>(head_dim, present_len); break;
    case GPU_DT_F16: n = splits<gpu_half>(head_dim, present_len); break;
    case GPU_DT_BF16: n = splits<gpu::bf16>(head_dim, present_len); break;
    default: return 0;
  }
  return n <= 65535 ? (int)n : 0;  // the grid's x
}

extern "C" int gpu_gqa_decode(const gpu_gqa_decode_desc *d, int dtype, void *stream) {
  if (d->batch <= 0 || d->kv_heads <= 0) return 0;
  if (gpu_gqa_decode_splits(dtype, d->batch, d->kv_heads, d->head_dim, d->group, d->present_len) <= 0) return -1;
  if (!aligned16(d->k) || !aligned16(d->v) || !d->q || !d->k_new || !d->v_new) return -1;
  if (d->rot_dim > 0 && (!d->cos || !d->sin)) return -1;
  GPU_DISPATCH(dtype, decode, d, (gpuStream_t)stream)
}
