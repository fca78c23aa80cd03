// gpu_copy: the strided copy behind Transpose, Slice, Split, Expand and
// Tile (ops/copy.c's map): y[i] = x[offset + sum_d c_d' * stride_d] where
// c_d' is coordinate d of i, wrapped at mod_d when that is set.
#include "gpu/gpu_common.cuh"

namespace {

template <typename T>
__global__ void strided_kernel(const T *x, T *y, gpu_strided m, int64_t total) {
  gpu::wait_prior();
  gpu::start_next();
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
  gpu::launch(strided_kernel<T>, gpu::blocks_for(total, 256), 256, 0, s, (const T *)x, (T *)y, *m, total);
  return gpu::last_error();
}

// A batch of 2-D transposes: y[b][r][c] = x[off + b * bs + c * cs + r]
// (the output's rows are the input's contiguous dim). Through a 32 x 32
// shared tile so both the reads and the writes are coalesced.
constexpr int kTile = 32;

template <typename T>
__global__ void transpose_kernel(const T *x, T *y, int64_t batch, int64_t rows, int64_t cols, int64_t bs, int64_t cs,
                                 int64_t off) {
  gpu::wait_prior();
  gpu::start_next();
  __shared__ T tile[kTile][kTile + 1];
  const int64_t tiles_r = (rows + kTile - 1) / kTile, tiles_c = (cols + kTile - 1) / kTile;
  for (int64_t t = blockIdx.x; t < batch * tiles_r * tiles_c; t += gridDim.x) {
    const int64_t b = t / (tiles_r * tiles_c), tr = (t / tiles_c) % tiles_r, tc = t % tiles_c;
    const T *xb = x + off + b * bs;
    // read: the input walks r contiguously; threadIdx.x along r
    for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
      const int64_t c = tc * kTile + j, r = tr * kTile + threadIdx.x;
      if (c < cols && r < rows) tile[j][threadIdx.x] = xb[c * cs + r];
    }
    __syncthreads();
    // write: the output walks c contiguously; threadIdx.x along c
    for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
      const int64_t r = tr * kTile + j, c = tc * kTile + threadIdx.x;
      if (c < cols && r < rows) y[(b * rows + r) * cols + c] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

// A few output columns (an image's channels moved last): one thread an
// output row, reading each column's plane coalesced and writing its row's
// cols elements next to its neighbours'. The tiled kernel idles 29 of 32
// lanes at 3 columns (ResNet-50's input in NHWC: 148 us at batch 32).
constexpr int kNarrow = 4;

template <typename T>
__global__ void transpose_narrow_kernel(const T *x, T *y, int64_t batch, int64_t rows, int cols, int64_t bs,
                                        int64_t cs, int64_t off) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t total = batch * rows;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t b = i / rows, r = i - b * rows;
    const T *xr = x + off + b * bs + r;
    for (int c = 0; c < cols; ++c) y[i * cols + c] = xr[c * cs];
  }
}

template <typename T>
int transpose_as(const void *x, void *y, int64_t batch, int64_t rows, int64_t cols, int64_t bs, int64_t cs, int64_t off,
                 gpuStream_t s) {
  if (cols <= kNarrow) {
    gpu::launch(transpose_narrow_kernel<T>, gpu::blocks_for(batch * rows, 256), 256, 0, s, (const T *)x, (T *)y, batch,
                rows, (int)cols, bs, cs, off);
    return gpu::last_error();
  }
  const int64_t tiles = batch * ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
  const unsigned blocks = (unsigned)(tiles < 65535 * 8 ? tiles : 65535 * 8);
  gpu::launch(transpose_kernel<T>, blocks, dim3(kTile, 8), 0, s, (const T *)x, (T *)y, batch, rows, cols, bs, cs, off);
  return gpu::last_error();
}

// The map is a batch of 2-D transposes: last output dim strided (cs), the
// one before it contiguous in the input (stride 1), at most one batch dim
// before them, no wrapping.
bool is_transpose(const gpu_strided *m) {
  const int r = m->rank;
  if (r < 2 || r > 3) return false;
  for (int d = 0; d < r; ++d)
    if (m->mod[d]) return false;
  return m->stride[r - 2] == 1 && m->stride[r - 1] >= m->dims[r - 2] && m->dims[r - 1] > 1 &&
         (r == 2 || m->stride[0] > 0);
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
  // Rows that stay contiguous move as 16-, 8- or 4-byte words: fewer
  // threads, each doing the index math once for several elements.
  gpu_strided w = *m;
  const int r = w.rank;
  for (int64_t wide = 16; wide > esize && w.stride[r - 1] == 1 && !w.mod[r - 1]; wide /= 2) {
    const int64_t f = wide / esize;
    bool ok = (w.dims[r - 1] % f) == 0 && (w.offset % f) == 0 && ((uintptr_t)x % (uintptr_t)wide) == 0 &&
              ((uintptr_t)y % (uintptr_t)wide) == 0;
    for (int d = 0; d < r - 1 && ok; ++d) ok = (w.stride[d] % f) == 0 && !w.mod[d];
    if (!ok) continue;
    w.dims[r - 1] /= f;
    w.offset /= f;
    for (int d = 0; d < r - 1; ++d) w.stride[d] /= f;
    switch (wide) {
      case 16: return strided_as<uint4>(x, y, &w, total / f, s);
      case 8: return strided_as<unsigned long long>(x, y, &w, total / f, s);
      default: return strided_as<unsigned>(x, y, &w, total / f, s);
    }
  }
  if (is_transpose(m)) {
    const int r = m->rank;
    const int64_t batch = r == 3 ? m->dims[0] : 1, bs = r == 3 ? m->stride[0] : 0;
    const int64_t rows = m->dims[r - 2], cols = m->dims[r - 1], cs = m->stride[r - 1];
    switch (esize) {
      case 2: return transpose_as<unsigned short>(x, y, batch, rows, cols, bs, cs, m->offset, s);
      case 4: return transpose_as<unsigned>(x, y, batch, rows, cols, bs, cs, m->offset, s);
      case 8: return transpose_as<unsigned long long>(x, y, batch, rows, cols, bs, cs, m->offset, s);
      default: break;
    }
  }
  switch (esize) {
    case 1: return strided_as<unsigned char>(x, y, m, total, s);
    case 2: return strided_as<unsigned short>(x, y, m, total, s);
    case 4: return strided_as<unsigned>(x, y, m, total, s);
    case 8: return strided_as<unsigned long long>(x, y, m, total, s);
    default: return -1;
  }
}
