// gpu_concat: copies up to GPU_CONCAT_MAX inputs [outer, width_i] into their
// column ranges of y [outer, width_total]; grid.y picks the input. Elements
// move as 2-, 4- or 8-byte words (es), or bytes otherwise.
#include "gpu/gpu_common.cuh"

namespace {

template <typename W>
__global__ void concat_kernel(W *y, int64_t outer, int64_t width_total, gpu_concat_desc d) {
  gpu::wait_prior();
  gpu::start_next();
  int i = blockIdx.y;
  const W *x = (const W *)d.x[i];
  int64_t w = d.width[i], off = d.offset[i], total = outer * w;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
    int64_t r = e / w, c = e - r * w;
    y[r * width_total + off + c] = x[e];
  }
}

template <typename W>
int concat(void *y, int64_t scale, int64_t outer, int64_t width_total, const gpu_concat_desc *d,
           gpuStream_t s) {
  gpu_concat_desc dd = *d;
  int64_t maxw = 0;
  for (int i = 0; i < dd.n; ++i) {
    dd.width[i] *= scale;
    dd.offset[i] *= scale;
    if (dd.width[i] > maxw) maxw = dd.width[i];
  }
  if (maxw <= 0 || outer <= 0) return 0;
  dim3 grid(gpu::blocks_for(outer * maxw, 256), (unsigned)dd.n);
  gpu::launch(concat_kernel<W>, grid, 256, 0, s, (W *)y, outer, width_total * scale, dd);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_concat(void *y, int64_t es, int64_t outer, int64_t width_total,
                          const gpu_concat_desc *d, void *stream) {
  if (d->n < 1 || d->n > GPU_CONCAT_MAX) return -1;
  gpuStream_t s = (gpuStream_t)stream;
  switch (es) {
    case 2: return concat<unsigned short>(y, 1, outer, width_total, d, s);
    case 4: return concat<unsigned int>(y, 1, outer, width_total, d, s);
    case 8: return concat<unsigned long long>(y, 1, outer, width_total, d, s);
    default: return concat<unsigned char>(y, es, outer, width_total, d, s);
  }
}
