// gpu_gqa: the KV-cache half of GroupQueryAttention (ops/gqa.h): one thread
// per element of the new tokens' Q, K and V rows (rotated, appended), and
// when present is a separate buffer one per element of its other rows. The
// attention itself is gpu_attention.cu's kernel over present.
#include "gpu/gpu_rope.cuh"

namespace {

__device__ __forceinline__ int64_t past_of(const gpu_gqa_desc &d, int64_t b) {
  return d.first_prompt ? 0 : (int64_t)d.seqlens[b] + 1 - d.seq;
}

template <typename T>
__global__ void gqa_new_rows(gpu_gqa_desc d, int64_t total) {
  const int64_t H = d.heads, KH = d.kv_heads, D = d.head_dim, all = H + 2 * KH;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = e % D, r = e / D;
    const int64_t hh = r % all, bs = r / all, s = bs % d.seq, b = bs / d.seq;
    const T *src = (const T *)d.q;
    int64_t at = bs * all * D + hh * D;  // packed: [B, S, (H + 2 KH) * D]
    if (d.k) {
      const int64_t h = hh < H ? hh : hh < H + KH ? hh - H : hh - H - KH;
      src = hh < H ? (const T *)d.q : hh < H + KH ? (const T *)d.k : (const T *)d.v;
      at = bs * (hh < H ? H : KH) * D + h * D;
    }
    const int64_t tot = (int64_t)d.seqlens[b] + 1, past = past_of(d, b);
    int64_t row = past + s < tot ? past + s : 1;
    if (row >= d.table_rows) row = -1;
    const bool rot = d.rot_dim > 0 && hh < H + KH;
    const float v = rot ? gpu::rope_elem(src, at, i, (const T *)d.cos, (const T *)d.sin, row, d.rot_dim, d.interleaved != 0)
                        : gpu::ld(src, at + i);
    if (hh < H) {
      if (d.q_out) gpu::st((T *)d.q_out, (bs * H + hh) * D + i, v);
      continue;
    }
    const int64_t kh = hh < H + KH ? hh - H : hh - H - KH, dst = past + s;
    if (dst < 0 || dst >= d.present_len) continue;
    T *pres = (T *)(hh < H + KH ? d.present_k : d.present_v);
    gpu::st(pres, ((b * KH + kh) * d.present_len + dst) * D + i, v);
  }
}

// present rows other than the new ones: past's below past_b, else zeros
template <typename T>
__global__ void gqa_copy_past(gpu_gqa_desc d, int64_t total) {
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
    if (total > 0) gqa_copy_past<T><<<gpu::blocks_for(total, 256), 256, 0, s>>>(*d, total);
  }
  const int64_t total = d->batch * d->seq * (d->heads + 2 * d->kv_heads) * d->head_dim;
  if (total > 0) gqa_new_rows<T><<<gpu::blocks_for(total, 256), 256, 0, s>>>(*d, total);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_gqa_append(const gpu_gqa_desc *d, int dtype, void *stream) {
  GPU_DISPATCH(dtype, gqa_append, d, (gpuStream_t)stream)
}
