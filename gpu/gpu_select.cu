// gpu_select: Where (three-way broadcast) and Trilu, over element bytes.
#include "gpu/gpu_common.cuh"

namespace {

template <typename T>
__global__ void where_kernel(const unsigned char *c, const T *x, const T *z, T *y, gpu_where_desc w, int64_t n) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t rem = i, oc = 0, ox = 0, oz = 0;
    for (int d = w.rank - 1; d >= 0; --d) {
      const int64_t q = rem / w.dims[d], r = rem - q * w.dims[d];
      oc += r * w.sc[d];
      ox += r * w.sx[d];
      oz += r * w.sz[d];
      rem = q;
    }
    y[i] = c[oc] ? x[ox] : z[oz];
  }
}

template <typename T>
int where_as(const void *c, const void *x, const void *z, void *y, const gpu_where_desc *w, int64_t n, gpuStream_t s) {
  gpu::launch(where_kernel<T>, gpu::blocks_for(n, 256), 256, 0, s, (const unsigned char *)c, (const T *)x, (const T *)z,
              (T *)y, *w, n);
  return gpu::last_error();
}

template <typename T>
__global__ void trilu_kernel(const T *x, T *y, int64_t n, int64_t rows, int64_t cols, int64_t k, int upper) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    if (keep) y[i] = x[i];
    else memset(&y[i], 0, sizeof(T));
  }
}

template <typename T>
int trilu_as(const void *x, void *y, int64_t n, int64_t rows, int64_t cols, int64_t k, int upper, gpuStream_t s) {
  gpu::launch(trilu_kernel<T>, gpu::blocks_for(n, 256), 256, 0, s, (const T *)x, (T *)y, n, rows, cols, k, upper);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_where(const void *cond, const void *x, const void *z, void *y, int64_t esize, const gpu_where_desc *w,
                         void *stream) {
  if (w->rank < 1 || w->rank > GPU_MAX_DIMS) return -1;
  int64_t n = 1;
  for (int d = 0; d < w->rank; ++d) n *= w->dims[d];
  if (n <= 0) return 0;
  GPU_DISPATCH_BYTES(esize, where_as, cond, x, z, y, w, n, (gpuStream_t)stream)
}

extern "C" int gpu_trilu(const void *x, void *y, int64_t esize, int64_t n, int64_t rows, int64_t cols, int64_t k,
                         int upper, void *stream) {
  if (n <= 0) return 0;
  if (rows <= 0 || cols <= 0) return -1;
  GPU_DISPATCH_BYTES(esize, trilu_as, x, y, n, rows, cols, k, upper, (gpuStream_t)stream)
}
