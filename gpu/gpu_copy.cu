// gpu_copy: the strided copy behind Transpose, Slice, Split, Expand and
// Tile (ops/copy.c's map): y[i] = x[offset + sum_d c_d' * stride_d] where
// c_d' is coordinate d of i, wrapped at mod_d when that is set.
#include "gpu/gpu_common.cuh"

namespace {

template <typename T>
__global__ void strided_kernel(const T *x, T *y, gpu_strided m, int64_t total) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
    int64_t rem = i, off = m.offset;
    for (int d = m.rank - 1; d >= 0; --d) {
      const int64_t q = rem / m.dims[d];
      int64_t c = rem - q * m.dims[d];
      if (m.mod[d]) c %= m.mod[d];
      off += c * m.stride[d];
      rem = q;
    }
    y[i] = x[off];
  }
}

template <typename T>
int strided_as(const void *x, void *y, const gpu_strided *m, int64_t total, gpuStream_t s) {
  strided_kernel<T><<<gpu::blocks_for(total, 256), 256, 0, s>>>((const T *)x, (T *)y, *m, total);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_strided_copy(const void *x, void *y, int64_t esize, const gpu_strided *m, void *stream) {
  if (m->rank < 1 || m->rank > GPU_MAX_DIMS) return -1;
  int64_t total = 1;
  for (int d = 0; d < m->rank; ++d) total *= m->dims[d];
  if (total <= 0) return 0;
  gpuStream_t s = (gpuStream_t)stream;
  if (m->rank == 1 && m->stride[0] == 1 && !m->mod[0])  // one contiguous run
    return (int)gpuMemcpyAsync(y, (const char *)x + m->offset * esize, (size_t)(total * esize),
                               gpuMemcpyDeviceToDevice, s);
  switch (esize) {
    case 1: return strided_as<unsigned char>(x, y, m, total, s);
    case 2: return strided_as<unsigned short>(x, y, m, total, s);
    case 4: return strided_as<unsigned>(x, y, m, total, s);
    case 8: return strided_as<unsigned long long>(x, y, m, total, s);
    default: return -1;
  }
}
