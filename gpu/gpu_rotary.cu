// gpu_rotary: RotaryEmbedding, one thread per output element.
#include "gpu/gpu_rope.cuh"

namespace {

template <typename T>
__global__ void rotary_elems(gpu_rope_desc d, int64_t total) {
  gpu::wait_prior();
  gpu::start_next();
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = e % d.head_dim, r = e / d.head_dim;
    const int64_t s = r % d.seq, bn = r / d.seq, n = bn % d.heads, b = bn / d.heads;
    int64_t row = b * d.seq + s;
    if (d.pos) row = d.pos_offset ? d.pos[0] + s : d.pos[b * d.seq + s];
    if (row < 0 || row >= d.table_rows) row = -1;
    const int64_t at = b * d.st[0] + n * d.st[1] + s * d.st[2];
    gpu::st((T *)d.y, at + i,
            gpu::rope_elem((const T *)d.x, at, i, (const T *)d.cos, (const T *)d.sin, row, d.rot_dim, d.interleaved != 0));
  }
}

template <typename T>
int rotary(const gpu_rope_desc *d, gpuStream_t s) {
  const int64_t total = d->batch * d->heads * d->seq * d->head_dim;
  if (total <= 0) return 0;
  gpu::launch(rotary_elems<T>, gpu::blocks_for(total, 256), 256, 0, s, *d, total);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_rotary(const gpu_rope_desc *d, int dtype, void *stream) {
  GPU_DISPATCH(dtype, rotary, d, (gpuStream_t)stream)
}
