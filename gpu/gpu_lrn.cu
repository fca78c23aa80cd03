// gpu_lrn: LRN over the channel window, one thread per output element
// (the window's squares are read again per element: LRN layers are few and
// their windows small).
#include "gpu/gpu_common.cuh"

namespace {

template <typename T>
__global__ void lrn_elems(const T *x, T *y, gpu_lrn_desc d, int64_t total) {
  gpu::wait_prior();
  gpu::start_next();
  const int before = (d.size - 1) / 2, after = d.size / 2;
  const float scale = d.alpha / (float)d.size;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = e % d.inner, r = e / d.inner;
    const int64_t c = r % d.c, base = (r - c) * d.inner + i;
    const int64_t lo = c - before < 0 ? 0 : c - before, hi = c + after >= d.c ? d.c - 1 : c + after;
    float sq = 0.f;
    for (int64_t j = lo; j <= hi; ++j) {
      const float v = gpu::ld(x, base + j * d.inner);
      sq += v * v;
    }
    gpu::st(y, e, gpu::ld(x, e) * powf(d.bias + scale * sq, -d.beta));
  }
}

template <typename T>
int lrn(const void *x, void *y, const gpu_lrn_desc *d, gpuStream_t s) {
  const int64_t total = d->n * d->c * d->inner;
  if (total <= 0) return 0;
  if (d->size < 1) return -1;
  gpu::launch(lrn_elems<T>, gpu::blocks_for(total, 256), 256, 0, s, (const T *)x, (T *)y, *d, total);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_lrn(const void *x, void *y, int dtype, const gpu_lrn_desc *d, void *stream) {
  GPU_DISPATCH(dtype, lrn, x, y, d, (gpuStream_t)stream)
}
