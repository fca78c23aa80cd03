// gpu_gather: Gather and GatherElements over raw element bytes (any element
// type): copies in the widest unit the row size and the pointers allow.
// An index outside [-d, d) yields zeros (no way to fail from a kernel).
#include "gpu/gpu_common.cuh"

namespace {

__device__ __forceinline__ int64_t load_index(const void *idx, int idx64, int64_t j) {
  return idx64 ? ((const int64_t *)idx)[j] : (int64_t)((const int *)idx)[j];
}

// y[o, j, u] = x[o, idx[j], u], rows of `inner` units of U.
template <typename U>
__global__ void gather_kernel(const U *x, const void *idx, int idx64, U *y, int64_t outer, int64_t d,
                              int64_t nidx, int64_t inner) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t total = outer * nidx * inner, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t u = i % inner, r = i / inner, j = r % nidx, o = r / nidx;
    int64_t k = load_index(idx, idx64, j);
    if (k < 0) k += d;
    U v;
    if (k >= 0 && k < d) v = x[(o * d + k) * inner + u];
    else memset(&v, 0, sizeof v);
    y[i] = v;
  }
}

template <typename U>
int gather_as(const void *x, const void *idx, int idx64, void *y, int64_t outer, int64_t d, int64_t nidx,
              int64_t row_bytes, gpuStream_t s) {
  const int64_t inner = row_bytes / (int64_t)sizeof(U), total = outer * nidx * inner;
  gpu::launch(gather_kernel<U>, gpu::blocks_for(total, 256), 256, 0, s, (const U *)x, idx, idx64, (U *)y, outer, d,
              nidx, inner);
  return gpu::last_error();
}

template <typename T>
__global__ void gather_elements_kernel(const T *x, const void *idx, int idx64, T *y, gpu_gather_el g) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < g.total; i += step) {
    int64_t k = load_index(idx, idx64, i);
    if (k < 0) k += g.axis_dim;
    if (k < 0 || k >= g.axis_dim) {
      memset(&y[i], 0, sizeof(T));
      continue;
    }
    int64_t rem = i, off = 0;
    for (int dd = g.rank - 1; dd >= 0; --dd) {
      const int64_t q = rem / g.dims[dd], c = rem - q * g.dims[dd];
      off += (dd == g.axis ? k : c) * g.xstride[dd];
      rem = q;
    }
    y[i] = x[off];
  }
}

template <typename T>
int gather_elements_as(const void *x, const void *idx, int idx64, void *y, const gpu_gather_el *g, gpuStream_t s) {
  gpu::launch(gather_elements_kernel<T>, gpu::blocks_for(g->total, 256), 256, 0, s, (const T *)x, idx, idx64, (T *)y,
              *g);
  return gpu::last_error();
}

bool aligned(const void *p, int64_t a) { return ((uintptr_t)p % (uintptr_t)a) == 0; }

}  // namespace

extern "C" int gpu_gather(const void *x, const void *idx, int idx64, void *y, int64_t outer, int64_t axis_dim,
                          int64_t nidx, int64_t row_bytes, void *stream) {
  if (outer <= 0 || nidx <= 0 || row_bytes <= 0) return 0;
  gpuStream_t s = (gpuStream_t)stream;
  for (int64_t unit = 16; unit > 1; unit /= 2)
    if (row_bytes % unit == 0 && aligned(x, unit) && aligned(y, unit)) {
      switch (unit) {
        case 16: return gather_as<uint4>(x, idx, idx64, y, outer, axis_dim, nidx, row_bytes, s);
        case 8: return gather_as<uint2>(x, idx, idx64, y, outer, axis_dim, nidx, row_bytes, s);
        case 4: return gather_as<unsigned>(x, idx, idx64, y, outer, axis_dim, nidx, row_bytes, s);
        default: return gather_as<unsigned short>(x, idx, idx64, y, outer, axis_dim, nidx, row_bytes, s);
      }
    }
  return gather_as<unsigned char>(x, idx, idx64, y, outer, axis_dim, nidx, row_bytes, s);
}

extern "C" int gpu_gather_elements(const void *x, const void *idx, int idx64, void *y, int64_t esize,
                                   const gpu_gather_el *g, void *stream) {
  if (g->total <= 0) return 0;
  if (g->rank < 1 || g->rank > GPU_MAX_DIMS || g->axis < 0 || g->axis >= g->rank) return -1;
  gpuStream_t s = (gpuStream_t)stream;
  switch (esize) {
    case 1: return gather_elements_as<unsigned char>(x, idx, idx64, y, g, s);
    case 2: return gather_elements_as<unsigned short>(x, idx, idx64, y, g, s);
    case 4: return gather_elements_as<unsigned>(x, idx, idx64, y, g, s);
    case 8: return gather_elements_as<unsigned long long>(x, idx, idx64, y, g, s);
    default: return -1;
  }
}
