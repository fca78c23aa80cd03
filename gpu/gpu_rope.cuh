// gpu_rope: one element of a rotary embedding (ops/rotary.h), shared by
// gpu_rotary.cu and gpu_gqa.cu. Each output element reads its pair partner,
// so elements are independent (one thread each, any order).
#ifndef GPU_ROPE_CUH
#define GPU_ROPE_CUH

#include "gpu/gpu_common.cuh"

namespace gpu {

// Element i of head row x (at xo) rotated with table row `row` (-1: outside
// the tables, giving 0 for the rotated dims).
template <typename T>
__device__ __forceinline__ float rope_elem(const T *x, int64_t xo, int64_t i, const T *cs, const T *sn, int64_t row,
                                           int64_t rot, bool interleaved) {
  if (i >= rot) return ld(x, xo + i);
  if (row < 0) return 0.f;
  const int64_t half = rot / 2;
  int64_t c, j;
  float sign;
  if (interleaved) {
    c = i / 2, j = (i & 1) ? i - 1 : i + 1, sign = (i & 1) ? 1.f : -1.f;
  } else {
    c = i < half ? i : i - half, j = i < half ? i + half : i - half, sign = i < half ? -1.f : 1.f;
  }
  const int64_t t = row * half + c;
  return ld(x, xo + i) * ld(cs, t) + sign * ld(x, xo + j) * ld(sn, t);
}

// GroupQueryAttention's rows before a batch's new tokens (seq of them) in
// present: 0 for a first prompt, else seqlens_k + 1 - seq.
__device__ __forceinline__ int64_t gqa_past(int first_prompt, int32_t seqlen, int64_t seq) {
  return first_prompt ? 0 : (int64_t)seqlen + 1 - seq;
}

// GroupQueryAttention's table row for new token s of a batch whose cache
// holds past rows before it and tot = seqlens_k + 1 in all: its position
// when that is below tot, else 1 (as ORT's kernels), -1 past the tables.
__device__ __forceinline__ int64_t gqa_rope_row(int64_t past, int64_t s, int64_t tot, int64_t table_rows) {
  const int64_t row = past + s < tot ? past + s : 1;
  return row < table_rows ? row : -1;
}

}  // namespace gpu

#endif
