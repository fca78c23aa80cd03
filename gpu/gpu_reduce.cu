// gpu_reduce: ReduceMean over any set of axes. When the innermost reduced
// dim is contiguous, one 32-lane group per output reads along it; otherwise
// one thread per output (neighbouring outputs read neighbouring elements).
#include "gpu/gpu_common.cuh"

namespace {

using gpu::ld;
using gpu::st;

__device__ __forceinline__ int64_t offset_of(int64_t idx, int n, const int64_t *dims,
                                             const int64_t *strides) {
  int64_t off = 0;
  for (int d = n - 1; d >= 0; --d) {
    int64_t q = idx / dims[d];
    off += (idx - q * dims[d]) * strides[d];
    idx = q;
  }
  return off;
}

template <typename T>
__global__ void reduce_warp(const T *x, T *y, int64_t nout, int64_t nred, gpu_reduce_desc d) {
  int64_t o = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (o >= nout) return;
  const T *xp = x + offset_of(o, d.nkeep, d.keep_dims, d.keep_strides);
  float acc = 0.f;
  for (int64_t r = lane; r < nred; r += 32) acc += ld(xp, offset_of(r, d.nred, d.red_dims, d.red_strides));
  for (int off = 16; off > 0; off /= 2) acc += gpu::shfl_xor32(acc, off);
  if (lane == 0) st(y, o, acc / (float)nred);
}

template <typename T>
__global__ void reduce_thread(const T *x, T *y, int64_t nout, int64_t nred, gpu_reduce_desc d) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < nout; o += stride) {
    const T *xp = x + offset_of(o, d.nkeep, d.keep_dims, d.keep_strides);
    float acc = 0.f;
    for (int64_t r = 0; r < nred; ++r) acc += ld(xp, offset_of(r, d.nred, d.red_dims, d.red_strides));
    st(y, o, acc / (float)nred);
  }
}

template <typename T>
int reduce_mean(const void *x, void *y, const gpu_reduce_desc *d, gpuStream_t s) {
  int64_t nout = 1, nred = 1;
  for (int i = 0; i < d->nkeep; ++i) nout *= d->keep_dims[i];
  for (int i = 0; i < d->nred; ++i) nred *= d->red_dims[i];
  if (nout <= 0) return 0;
  if (nred <= 0) return -1;
  bool inner_contig = d->nred > 0 && d->red_strides[d->nred - 1] == 1;
  if (inner_contig && nred >= 32) {
    int64_t blocks = (nout + 7) / 8;
    if (blocks > 0x7fffffff) return -1;
    reduce_warp<T><<<(unsigned)blocks, 256, 0, s>>>((const T *)x, (T *)y, nout, nred, *d);
  } else {
    reduce_thread<T><<<gpu::blocks_for(nout, 256), 256, 0, s>>>((const T *)x, (T *)y, nout, nred,
                                                               *d);
  }
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_reduce_mean(const void *x, void *y, int dtype, const gpu_reduce_desc *d,
                               void *stream) {
  if (d->nkeep < 0 || d->nkeep > GPU_MAX_DIMS || d->nred < 0 || d->nred > GPU_MAX_DIMS) return -1;
  GPU_DISPATCH(dtype, reduce_mean, x, y, d, (gpuStream_t)stream)
}
