// gpu_softmax: softmax over the middle dim of [outer, len, inner].
// inner == 1: one 32-lane group per row (len <= 1024) or one block per row;
// inner > 1: one thread per (outer, inner) column, coalesced across inner.
#include <float.h>

#include "gpu/gpu_common.cuh"

namespace {

using gpu::ld;
using gpu::st;

template <typename T>
__global__ void softmax_rows_warp(const T *x, T *y, int64_t rows, int64_t len) {
  gpu::wait_prior();
  gpu::start_next();
  int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const T *xp = x + row * len;
  T *yp = y + row * len;
  float m = -FLT_MAX;
  for (int64_t j = lane; j < len; j += 32) m = fmaxf(m, ld(xp, j));
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, gpu::shfl_xor32(m, off));
  float sum = 0.f;
  for (int64_t j = lane; j < len; j += 32) sum += expf(ld(xp, j) - m);
  for (int off = 16; off > 0; off /= 2) sum += gpu::shfl_xor32(sum, off);
  float inv = 1.f / sum;
  for (int64_t j = lane; j < len; j += 32) st(yp, j, expf(ld(xp, j) - m) * inv);
}

template <typename T>
__global__ void softmax_rows_block(const T *x, T *y, int64_t len) {
  gpu::wait_prior();
  gpu::start_next();
  __shared__ float sh[8];
  const T *xp = x + (int64_t)blockIdx.x * len;
  T *yp = y + (int64_t)blockIdx.x * len;
  float m = -FLT_MAX;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) m = fmaxf(m, ld(xp, j));
  m = gpu::block_reduce(m, true, sh);
  float sum = 0.f;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) sum += expf(ld(xp, j) - m);
  sum = gpu::block_reduce(sum, false, sh);
  float inv = 1.f / sum;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) st(yp, j, expf(ld(xp, j) - m) * inv);
}

template <typename T>
__global__ void softmax_cols(const T *x, T *y, int64_t outer, int64_t len, int64_t inner) {
  gpu::wait_prior();
  gpu::start_next();
  int64_t total = outer * inner, stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    int64_t o = i / inner, in = i - o * inner;
    const T *xp = x + o * len * inner + in;
    T *yp = y + o * len * inner + in;
    float m = -FLT_MAX;
    for (int64_t j = 0; j < len; ++j) m = fmaxf(m, ld(xp, j * inner));
    float sum = 0.f;
    for (int64_t j = 0; j < len; ++j) sum += expf(ld(xp, j * inner) - m);
    float inv = 1.f / sum;
    for (int64_t j = 0; j < len; ++j) st(yp, j * inner, expf(ld(xp, j * inner) - m) * inv);
  }
}

template <typename T>
int softmax(const void *x, void *y, int64_t outer, int64_t len, int64_t inner, gpuStream_t s) {
  if (outer <= 0 || inner <= 0) return 0;
  if (len <= 0) return 0;
  if (inner == 1 && len <= 1024) {
    int64_t blocks = (outer + 7) / 8;
    if (blocks > 0x7fffffff) return -1;
    gpu::launch(softmax_rows_warp<T>, (unsigned)blocks, 256, 0, s, (const T *)x, (T *)y, outer, len);
  } else if (inner == 1) {
    if (outer > 0x7fffffff) return -1;
    gpu::launch(softmax_rows_block<T>, (unsigned)outer, 256, 0, s, (const T *)x, (T *)y, len);
  } else {
    gpu::launch(softmax_cols<T>, gpu::blocks_for(outer * inner, 256), 256, 0, s, (const T *)x, (T *)y, outer, len,
                inner);
  }
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_softmax(const void *x, void *y, int dtype, int64_t outer, int64_t len,
                           int64_t inner, void *stream) {
  GPU_DISPATCH(dtype, softmax, x, y, outer, len, inner, (gpuStream_t)stream)
}
