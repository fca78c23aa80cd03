// gpu_concat: copies up to GPU_CONCAT_MAX inputs [outer, width_i] into their
// column ranges of y [outer, width_total]; grid.y picks the input. Elements
// move as the widest word (16, 8, 4, 2 or 1 bytes) that every row piece,
// offset and pointer is a multiple of: DenseNet's concatenations of 7x7 to
// 56x56 channel planes move 16 bytes a thread.
#include "gpu/gpu_common.cuh"

namespace {

// The inputs in words of the chosen size; div[i] divides by width[i] (the
// row of a word) when every input has under 2^31 words.
struct concat_words {
  int n;
  bool small;
  const void *x[GPU_CONCAT_MAX];
  int64_t width[GPU_CONCAT_MAX], offset[GPU_CONCAT_MAX];
  gpu::divider div[GPU_CONCAT_MAX];
};

template <typename W>
__global__ void concat_kernel(W *y, int64_t outer, int64_t width_total, concat_words d) {
  gpu::wait_prior();
  gpu::start_next();
  const int i = blockIdx.y;
  const W *x = (const W *)d.x[i];
  const int64_t w = d.width[i], off = d.offset[i], total = outer * w;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t r = d.small ? gpu::div((int)e, d.div[i]) : e / w;
    y[r * width_total + off + (e - r * w)] = x[e];
  }
}

template <typename W>
int concat(void *y, int64_t outer, int64_t width_total, const concat_words &d, int64_t maxw, gpuStream_t s) {
  dim3 grid(gpu::blocks_for(outer * maxw, 256), (unsigned)d.n);
  gpu::launch(concat_kernel<W>, grid, 256, 0, s, (W *)y, outer, width_total, d);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_concat(void *y, int64_t es, int64_t outer, int64_t width_total, const gpu_concat_desc *d,
                          void *stream) {
  if (d->n < 1 || d->n > GPU_CONCAT_MAX) return -1;
  if (outer <= 0) return 0;
  // the widest word dividing every byte count and address
  uint64_t all = (uint64_t)(width_total * es) | (uint64_t)(uintptr_t)y;
  for (int i = 0; i < d->n; ++i)
    all |= (uint64_t)(d->width[i] * es) | (uint64_t)(d->offset[i] * es) | (uint64_t)(uintptr_t)d->x[i];
  int64_t wb = 16;
  while (wb > 1 && all % (uint64_t)wb) wb /= 2;
  concat_words c;
  c.n = d->n;
  c.small = true;
  int64_t maxw = 0;
  for (int i = 0; i < d->n; ++i) {
    c.x[i] = d->x[i];
    c.width[i] = d->width[i] * es / wb;
    c.offset[i] = d->offset[i] * es / wb;
    if (c.width[i] > maxw) maxw = c.width[i];
    if (outer * c.width[i] >= INT32_MAX) c.small = false;
    c.div[i] = gpu::make_divider((unsigned)(c.width[i] > 0 && c.width[i] < INT32_MAX ? c.width[i] : 1));
  }
  if (maxw <= 0) return 0;
  const int64_t wt = width_total * es / wb;
  gpuStream_t s = (gpuStream_t)stream;
  switch (wb) {
    case 16: return concat<uint4>(y, outer, wt, c, maxw, s);
    case 8: return concat<unsigned long long>(y, outer, wt, c, maxw, s);
    case 4: return concat<unsigned int>(y, outer, wt, c, maxw, s);
    case 2: return concat<unsigned short>(y, outer, wt, c, maxw, s);
    default: return concat<unsigned char>(y, outer, wt, c, maxw, s);
  }
}
