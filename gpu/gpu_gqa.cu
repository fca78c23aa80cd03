// gpu_gqa: the KV-cache half of GroupQueryAttention (ops/gqa.h): one thread
// per element of the new tokens' Q, K and V rows (rotated, appended), and
// when present is a separate buffer one per element of its other rows. The
// attention itself is gpu_attention.cu's kernel over present (decode's
// kernel, gpu_gqa_decode.cu, appends the new rows itself).
#include "gpu/gpu_rope.cuh"

namespace {

__device__ __forceinline__ int64_t past_of(const gpu_gqa_desc &d, int64_t b) {
  return gpu::gqa_past(d.first_prompt, d.seqlens[b], d.seq);
}

// C consecutive elements of one head row per thread: the index arithmetic
// once per C, and 16-byte stores when C * sizeof(T) is 16.
template <typename T, int C>
__global__ void gqa_new_rows(gpu_gqa_desc d, int64_t total) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t H = d.heads, KH = d.kv_heads, D = d.head_dim, all = H + 2 * KH, per = D / C;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i0 = e % per * C, r = e / per;
    const int64_t hh = r % all, bs = r / all, s = bs % d.seq, b = bs / d.seq;
    const T *src = (const T *)d.q;
    int64_t at = bs * all * D + hh * D;  // packed: [B, S, (H + 2 KH) * D]
    if (d.k) {
      const int64_t h = hh < H ? hh : hh < H + KH ? hh - H : hh - H - KH;
      src = hh < H ? (const T *)d.q : hh < H + KH ? (const T *)d.k : (const T *)d.v;
      at = bs * (hh < H ? H : KH) * D + h * D;
    }
    const int64_t past = past_of(d, b), row = gpu::gqa_rope_row(past, s, (int64_t)d.seqlens[b] + 1, d.table_rows);
    const bool rot = d.rot_dim > 0 && hh < H + KH;
    alignas(16) T v[C];
#pragma unroll
    for (int c = 0; c < C; ++c)
      gpu::st(v, c, rot ? gpu::rope_elem(src, at, i0 + c, (const T *)d.cos, (const T *)d.sin, row, d.rot_dim,
                                         d.interleaved != 0)
                        : gpu::ld(src, at + i0 + c));
    T *dst;
    if (hh < H) {
      if (!d.q_out) continue;
      dst = (T *)d.q_out + (bs * H + hh) * D + i0;
    } else {
      const int64_t kh = hh < H + KH ? hh - H : hh - H - KH, to = past + s;
      if (to < 0 || to >= d.present_len) continue;
      dst = (T *)(hh < H + KH ? d.present_k : d.present_v) + ((b * KH + kh) * d.present_len + to) * D + i0;
    }
    if (C * sizeof(T) == 16) {
      *(uint4 *)dst = *(const uint4 *)v;
    } else {
#pragma unroll
      for (int c = 0; c < C; ++c) dst[c] = v[c];
    }
  }
}

// present rows other than the new ones: past's below past_b, else zeros
template <typename T>
__global__ void gqa_copy_past(gpu_gqa_desc d, int64_t total) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t D = d.head_dim, PL = d.present_len, KH = d.kv_heads;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = e % D, r = (e / D) % PL, bh = e / (D * PL) % (d.batch * KH), k = e / (D * PL * d.batch * KH);
    const int64_t b = bh / KH, past = past_of(d, b);
    if (r >= past && r < past + d.seq) continue;
    const T *src = (const T *)(k ? d.past_v : d.past_k);
    const float v = r < past && r < d.past_len && src ? gpu::ld(src, (bh * d.past_len + r) * D + i) : 0.f;
    gpu::st((T *)(k ? d.present_v : d.present_k), (bh * PL + r) * D + i, v);
  }
}

template <typename T>
int gqa_append(const gpu_gqa_desc *d, gpuStream_t s) {
  if (d->past_k != d->present_k || d->past_v != d->present_v) {
    const int64_t total = 2 * d->batch * d->kv_heads * d->present_len * d->head_dim;
    if (total > 0) {
      const int rc = gpu::launch(gqa_copy_past<T>, dim3(gpu::blocks_for(total, 256)), dim3(256), 0, s, *d, total);
      if (rc) return rc;
    }
  }
  if (d->past_only) return 0;
  const int64_t total = d->batch * d->seq * (d->heads + 2 * d->kv_heads) * d->head_dim;
  constexpr int C = 16 / sizeof(T);
  const uintptr_t ptrs = (uintptr_t)d->q_out | (uintptr_t)d->present_k | (uintptr_t)d->present_v;
  if (total > 0 && d->head_dim % C == 0 && ptrs % 16 == 0)
    return gpu::launch(gqa_new_rows<T, C>, dim3(gpu::blocks_for(total / C, 256)), dim3(256), 0, s, *d, total / C);
  if (total > 0) return gpu::launch(gqa_new_rows<T, 1>, dim3(gpu::blocks_for(total, 256)), dim3(256), 0, s, *d, total);
  return 0;
}

}  // namespace

extern "C" int gpu_gqa_append(const gpu_gqa_desc *d, int dtype, void *stream) {
  GPU_DISPATCH(dtype, gqa_append, d, (gpuStream_t)stream)
}
