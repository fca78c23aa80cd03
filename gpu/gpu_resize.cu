// gpu_resize: Resize (ops/resize.h's map), one thread per output element.
// Input coordinates are computed in float in ONNX Runtime's order of
// operations (as the reference backend does), so nearest picks the same
// element at exact ties; __fmul_rn keeps the one product that meets a sum
// from being fused into an FMA.
#include "gpu/gpu_common.cuh"

namespace {

// Values of ops/resize.h's op_resize_coord and op_resize_nearest.
enum { HALF_PIXEL, PYTORCH_HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC, TF_HALF_PIXEL_FOR_NN, HALF_PIXEL_SYMMETRIC };
enum { ROUND_PREFER_FLOOR, ROUND_PREFER_CEIL, FLOOR, CEIL };

__device__ float coord(int mode, float x, float s, float out, float in) {
  switch (mode) {
    case PYTORCH_HALF_PIXEL: return out > 1 ? (x + 0.5f) / s - 0.5f : 0.0f;
    case ALIGN_CORNERS: return out == 1 ? 0.0f : x * (in - 1) / (out - 1);
    case ASYMMETRIC: return x / s;
    case TF_HALF_PIXEL_FOR_NN: return (x + 0.5f) / s;
    case HALF_PIXEL_SYMMETRIC: {
      const float adjustment = out / (s * in), offset = __fmul_rn(in / 2, 1 - adjustment);
      return (float)((double)offset + ((double)x + 0.5) / (double)s - 0.5);
    }
    default: return (x + 0.5f) / s - 0.5f;
  }
}

__device__ int64_t nearest_index(int mode, float c, int64_t n) {
  float r;
  switch (mode) {
    case ROUND_PREFER_FLOOR: r = c - floorf(c) == 0.5f ? floorf(c) : roundf(c); break;
    case ROUND_PREFER_CEIL: r = roundf(c); break;
    case FLOOR: r = floorf(c); break;
    default: r = ceilf(c); break;
  }
  if (!(r > 0.0f)) return 0;
  if (r >= 9.0e18f) return n - 1;
  const int64_t i = (int64_t)r;
  return i < n - 1 ? i : n - 1;
}

template <typename T>
__global__ void nearest_kernel(const T *x, T *y, gpu_resize_desc d, int64_t total) {
  gpu::wait_prior();
  gpu::start_next();
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t rem = i, off = 0, st = 1;
    for (int k = d.rank - 1; k >= 0; --k) {
      const int64_t q = rem / d.dims[k], c = rem - q * d.dims[k];
      rem = q;
      const int64_t src = d.scale[k] == 1.0f
                              ? c
                              : nearest_index(d.nearest, coord(d.coord, (float)c, d.scale[k], (float)d.dims[k],
                                                               (float)d.in_dims[k]), d.in_dims[k]);
      off += src * st;
      st *= d.in_dims[k];
    }
    y[i] = x[off];
  }
}

template <typename T>
__global__ void linear_kernel(const T *x, T *y, gpu_resize_desc d, int64_t total) {
  gpu::wait_prior();
  gpu::start_next();
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t rem = i, base = 0, st = 1, lo[GPU_MAX_DIMS], hi[GPU_MAX_DIMS];
    float wlo[GPU_MAX_DIMS], whi[GPU_MAX_DIMS];
    int ns = 0;
    for (int k = d.rank - 1; k >= 0; --k) {
      const int64_t q = rem / d.dims[k], c = rem - q * d.dims[k], n = d.in_dims[k];
      rem = q;
      if (d.scale[k] == 1.0f) {
        base += c * st;
      } else {  // the two neighbours and their weights, as ONNX Runtime's linear modes
        float at = coord(d.coord, (float)c, d.scale[k], (float)d.dims[k], (float)n);
        const float top = (float)(n - 1);
        at = at < 0.0f ? 0.0f : at > top ? top : at;
        const int64_t i0 = (int64_t)at < n - 1 ? (int64_t)at : n - 1, i1 = i0 + 1 < n - 1 ? i0 + 1 : n - 1;
        lo[ns] = i0 * st;
        hi[ns] = i1 * st;
        wlo[ns] = i0 == i1 ? 0.5f : fabsf(at - (float)i1);
        whi[ns] = i0 == i1 ? 0.5f : fabsf(at - (float)i0);
        ++ns;
      }
      st *= n;
    }
    float sum = 0.0f;
    for (int tap = 0; tap < (1 << ns); ++tap) {
      float w = 1.0f;
      int64_t off = base;
      for (int k = 0; k < ns; ++k) {
        const bool up = (tap >> k) & 1;
        w *= up ? whi[k] : wlo[k];
        off += up ? hi[k] : lo[k];
      }
      sum += w * gpu::ld(x, off);
    }
    gpu::st(y, i, sum);
  }
}

int64_t total_of(const gpu_resize_desc *d) {
  int64_t total = 1;
  for (int k = 0; k < d->rank; ++k) total *= d->dims[k];
  return total;
}

template <typename T>
int nearest_as(const void *x, void *y, const gpu_resize_desc *d, int64_t total, gpuStream_t s) {
  gpu::launch(nearest_kernel<T>, gpu::blocks_for(total, 256), 256, 0, s, (const T *)x, (T *)y, *d, total);
  return gpu::last_error();
}

template <typename T>
int linear(const void *x, void *y, const gpu_resize_desc *d, gpuStream_t s) {
  const int64_t total = total_of(d);
  if (total <= 0) return 0;
  gpu::launch(linear_kernel<T>, gpu::blocks_for(total, 256), 256, 0, s, (const T *)x, (T *)y, *d, total);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_resize_nearest(const void *x, void *y, int64_t esize, const gpu_resize_desc *d, void *stream) {
  if (d->rank < 1 || d->rank > GPU_MAX_DIMS) return -1;
  const int64_t total = total_of(d);
  if (total <= 0) return 0;
  gpuStream_t s = (gpuStream_t)stream;
  GPU_DISPATCH_BYTES(esize, nearest_as, x, y, d, total, s)
}

extern "C" int gpu_resize_linear(const void *x, void *y, int dtype, const gpu_resize_desc *d, void *stream) {
  if (d->rank < 1 || d->rank > GPU_MAX_DIMS) return -1;
  GPU_DISPATCH(dtype, linear, x, y, d, (gpuStream_t)stream)
}
