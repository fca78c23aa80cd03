// gpu_pad: Pad (ops/pad.h's map), one thread per output element, elements
// moved as bytes of their size.
#include <string.h>

#include "gpu/gpu_common.cuh"

namespace {

template <typename T>
__global__ void pad_kernel(const T *x, T *y, gpu_pad_desc d, T fill, int64_t total) {
  gpu::wait_prior();
  gpu::start_next();
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t rem = i, off = 0;
    bool is_fill = false;
    for (int k = d.rank - 1; k >= 0; --k) {
      const int64_t q = rem / d.dims[k], n = d.extent[k];
      int64_t j = rem - q * d.dims[k] - d.pad[k];
      rem = q;
      if (j < 0 || j >= n) {
        switch (d.mode) {
          case GPU_PAD_REFLECT: j = j < 0 ? -j : 2 * (n - 1) - j; break;
          case GPU_PAD_EDGE: j = j < 0 ? 0 : n - 1; break;
          case GPU_PAD_WRAP: j = (j % n + n) % n; break;
          default: is_fill = true; break;
        }
      }
      off += (d.start[k] + j) * d.in_stride[k];
    }
    y[i] = is_fill ? fill : x[off];
  }
}

template <typename T>
int pad_as(const void *x, void *y, const gpu_pad_desc *d, int64_t total, gpuStream_t s) {
  T fill;
  memcpy(&fill, d->fill, sizeof fill);
  gpu::launch(pad_kernel<T>, gpu::blocks_for(total, 256), 256, 0, s, (const T *)x, (T *)y, *d, fill, total);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_pad(const void *x, void *y, int64_t esize, const gpu_pad_desc *d, void *stream) {
  if (d->rank < 1 || d->rank > GPU_MAX_DIMS) return -1;
  int64_t total = 1;
  for (int k = 0; k < d->rank; ++k) total *= d->dims[k];
  if (total <= 0) return 0;
  gpuStream_t s = (gpuStream_t)stream;
  GPU_DISPATCH_BYTES(esize, pad_as, x, y, d, total, s)
}
