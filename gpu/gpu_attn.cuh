// gpu_attn: what the attention kernels (gpu_attention.cu, gpu_flash.cu)
// share: which keys a block of query rows needs, and one score's scale,
// softcap, masks and bias, all as gpu_attn_desc (gpu_kernels.h) defines them.
#ifndef GPU_ATTN_CUH
#define GPU_ATTN_CUH

#include <float.h>
#include <math.h>

#include "gpu/gpu_common.cuh"

namespace gpu {

// A mask entry keeps its score when it is above zero (true, or an integer
// mask's 1; ONNX Runtime's contrib attention masks read 0 and negative
// values as masked). M: bool as unsigned char, int32, int64.
template <typename M>
__device__ __forceinline__ bool attn_keeps(M v) {
  return v > 0;
}
__device__ __forceinline__ bool attn_mask_keeps(const void *m, int dt, int64_t i) {
  switch (dt) {
    case GPU_DT_I32: return attn_keeps(((const int32_t *)m)[i]);
    case GPU_DT_I64: return attn_keeps(((const int64_t *)m)[i]);
    default: return attn_keeps(((const unsigned char *)m)[i]);
  }
}

__device__ __forceinline__ int64_t attn_mask_len(const void *m, int dt, int64_t i) {
  switch (dt) {
    case GPU_DT_I32: return ((const int32_t *)m)[i];
    case GPU_DT_I64: return ((const int64_t *)m)[i];
    default: return ((const unsigned char *)m)[i];
  }
}

// The keys of batch b that rows first_row .. last_row (positions from past
// on) can see: [kfirst, klim), kfirst rounded down to a multiple of tile.
struct attn_span {
  int64_t lens, past, kfirst, klim;
  bool use_lens, windowed;
};

__device__ __forceinline__ attn_span attn_keys(const gpu_attn_desc &d, int64_t b, int64_t first_row, int64_t last_row,
                                               int64_t tile) {
  attn_span a;
  a.lens = d.kv_len, a.past = 0;  // keys at or past lens are masked; rows start at key past (GQA)
  a.use_lens = d.seqlens || (d.mask && d.mask_lens);
  if (d.mask && d.mask_lens) a.lens = attn_mask_len(d.mask, d.mask_dtype, b * d.mask_st[0]);
  if (d.seqlens) {
    const int64_t keys = (int64_t)d.seqlens[b] + 1;
    a.lens = keys < d.kv_len ? keys : d.kv_len;
    a.past = d.first_prompt ? 0 : keys - d.seq;
  }
  if (d.seqlens && d.fold) a.past = d.first_prompt ? 0 : a.past + d.seq - 1;  // one token: keys - 1
  a.windowed = d.seqlens && d.window >= 0;
  a.klim = a.use_lens && a.lens < d.kv_len ? (a.lens > 0 ? a.lens : 0) : d.kv_len;
  if (d.causal && last_row + a.past + 1 < a.klim)  // no row sees keys past the last row's position
    a.klim = last_row + a.past + 1 > 0 ? last_row + a.past + 1 : 0;
  a.kfirst = 0;  // nor keys before the first row's window
  if (a.windowed) {
    const int64_t first = first_row + a.past - d.window + 1;
    if (first > 0) a.kfirst = first / tile * tile;
  }
  return a;
}

// Whether the explicit boolean mask drops (row, key) of batch b, head h.
__device__ __forceinline__ bool attn_mask_drops(const gpu_attn_desc &d, int64_t b, int64_t h, int64_t row, int64_t key) {
  return d.mask && !d.mask_lens &&
         attn_mask_keeps(d.mask, d.mask_dtype,
                         b * d.mask_st[0] + h * d.mask_st[1] + row * d.mask_st[2] + key * d.mask_st[3]) ==
             (bool)d.mask_invert;
}

// The additive bias of (row, key), 0 without one.
template <typename T>
__device__ __forceinline__ float attn_bias(const gpu_attn_desc &d, int64_t b, int64_t h, int64_t row, int64_t key) {
  return d.bias ? ld((const T *)d.bias, b * d.bias_st[0] + h * d.bias_st[1] + row * d.bias_st[2] + key * d.bias_st[3])
                : 0.f;
}

// The score of a row at position pos and key from their dot product, the
// explicit mask's verdict and the bias (read by the caller, which may read
// a tile's of them at once): scaled, softcapped, masked (fill, or + fill
// for an additive mask), biased. Keys past kv_len or rows past seq are the
// caller's to drop.
// In two halves: attn_scaled (scale, softcap), attn_masked (the masks, the
// bias), for a caller that does each over a tile in one loop.
__device__ __forceinline__ float attn_scaled(const gpu_attn_desc &d, float dot) {
  const float s = d.scale * dot;
  return d.softcap > 0.f ? d.softcap * tanhf(s / d.softcap) : s;
}
__device__ __forceinline__ float attn_masked(const gpu_attn_desc &d, const attn_span &a, float s, int64_t pos,
                                             int64_t key, bool mask_drops, float bias) {
  const bool masked = (d.causal && key > pos) || (a.use_lens && key >= a.lens) ||
                      (a.windowed && key <= pos - d.window) || mask_drops;
  if (masked) s = d.mask_add ? s + d.fill : d.fill;
  return s + bias;
}
// ONNX Runtime's contrib kernels (mask_add) set a causally cut score to the
// lowest float (plus the bias) instead of adding fill: attn_masked's score
// is replaced where this holds (the flash kernel leaves these to the
// CUDA-core one: gpu_flash.cu, flash_takes).
__device__ __forceinline__ bool attn_lowest(const gpu_attn_desc &d, int64_t pos, int64_t key) {
  return d.mask_add && d.causal && key > pos;
}
__device__ __forceinline__ float attn_score_with(const gpu_attn_desc &d, const attn_span &a, float dot, int64_t pos,
                                                 int64_t key, bool mask_drops, float bias) {
  return attn_lowest(d, pos, key) ? -FLT_MAX + bias : attn_masked(d, a, attn_scaled(d, dot), pos, key, mask_drops, bias);
}

template <typename T>
__device__ __forceinline__ float attn_score(const gpu_attn_desc &d, const attn_span &a, float dot, int64_t b,
                                            int64_t h, int64_t row, int64_t pos, int64_t key) {
  return attn_score_with(d, a, dot, pos, key, attn_mask_drops(d, b, h, row, key), attn_bias<T>(d, b, h, row, key));
}

// gpu_flash.cu: the attention on tensor cores, for the shapes it takes
// (fp16/bf16; see there); -1 when it does not, and gpu_attention.cu's
// kernel runs it.
int flash_attention(const gpu_attn_desc *d, int dtype, gpuStream_t s);

}  // namespace gpu

#endif
