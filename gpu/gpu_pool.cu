// gpu_pool: max and average pooling over 1-3 spatial dims (NCHW-like
// layout, or channels last), and global pooling (one reduction per [n, c]
// row). Window
// semantics follow ONNX: padded positions never win a max; an average
// divides by the window positions inside the input (count_include_pad 0)
// or inside the padded input (1).
#include <float.h>
#include <stdint.h>

#include "gpu/gpu_common.cuh"

namespace {

using gpu::ld;
using gpu::st;

// Output index -> (plane, o0, o1, o2): by launch-time dividers when the
// indices fit 32 bits (the usual case), else by plain 64-bit division.
struct pool_index {
  gpu::divider by2, by1, by0;
};

template <bool WIDE>
__device__ __forceinline__ void locate(int64_t i, const gpu_pool_desc &d, const pool_index &q,
                                       int64_t *plane, int64_t *o0, int64_t *o1, int64_t *o2) {
  if (WIDE) {
    int64_t r = i / d.out[2];
    *o2 = i - r * d.out[2];
    int64_t r1 = r / d.out[1];
    *o1 = r - r1 * d.out[1];
    *plane = r1 / d.out[0];
    *o0 = r1 - *plane * d.out[0];
  } else {
    int r = gpu::div((int)i, q.by2);
    *o2 = (int)i - r * (int)d.out[2];
    int r1 = gpu::div(r, q.by1);
    *o1 = r - r1 * (int)d.out[1];
    int p = gpu::div(r1, q.by0);
    *plane = p;
    *o0 = r1 - p * (int)d.out[0];
  }
}

// Calls tap(position in the input plane) for each tap of output (o0, o1,
// o2)'s window inside the input; *count: those taps, *padded: the taps
// inside the input and its pads (count_include_pad's divisor).
template <typename F>
__device__ __forceinline__ void walk_window(const gpu_pool_desc &d, int64_t o0, int64_t o1, int64_t o2,
                                            int64_t *count, int64_t *padded, F tap) {
  const int64_t s0 = o0 * d.stride[0] - d.pad_begin[0];
  const int64_t s1 = o1 * d.stride[1] - d.pad_begin[1];
  const int64_t s2 = o2 * d.stride[2] - d.pad_begin[2];
  *count = *padded = 0;
  for (int64_t k0 = 0; k0 < d.kernel[0]; ++k0) {
    int64_t p0 = s0 + k0 * d.dilation[0];
    if (p0 < -d.pad_begin[0] || p0 >= d.in[0] + d.pad_end[0]) continue;
    bool in0 = p0 >= 0 && p0 < d.in[0];
    for (int64_t k1 = 0; k1 < d.kernel[1]; ++k1) {
      int64_t p1 = s1 + k1 * d.dilation[1];
      if (p1 < -d.pad_begin[1] || p1 >= d.in[1] + d.pad_end[1]) continue;
      bool in1 = in0 && p1 >= 0 && p1 < d.in[1];
      for (int64_t k2 = 0; k2 < d.kernel[2]; ++k2) {
        int64_t p2 = s2 + k2 * d.dilation[2];
        if (p2 < -d.pad_begin[2] || p2 >= d.in[2] + d.pad_end[2]) continue;
        ++*padded;
        if (!in1 || p2 < 0 || p2 >= d.in[2]) continue;
        tap((p0 * d.in[1] + p1) * d.in[2] + p2);
        ++*count;
      }
    }
  }
}

template <typename T, bool WIDE>
__global__ void pool_kernel(const T *x, T *y, int64_t total, gpu_pool_desc d, pool_index q) {
  gpu::wait_prior();
  gpu::start_next();
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t in_plane = d.in[0] * d.in[1] * d.in[2];
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    int64_t plane, o0, o1, o2;
    locate<WIDE>(i, d, q, &plane, &o0, &o1, &o2);
    const T *xp = x + plane * in_plane;
    float acc = d.is_max ? -FLT_MAX : 0.f;
    int64_t count, padded;
    walk_window(d, o0, o1, o2, &count, &padded, [&](int64_t at) {
      float v = ld(xp, at);
      if (d.is_max) acc = v > acc || v != v ? v : acc;
      else acc += v;
    });
    float out;
    if (d.is_max) out = acc;
    else {
      int64_t div = d.count_include_pad ? padded : count;
      out = div > 0 ? acc / (float)div : 0.f;
    }
    st(y, i, out);
  }
}

template <typename T>
int pool(const void *x, void *y, int64_t nc, const gpu_pool_desc *d, gpuStream_t s) {
  int64_t total = nc * d->out[0] * d->out[1] * d->out[2];
  if (total <= 0) return 0;
  const unsigned blocks = gpu::blocks_for(total, 256);
  if (total < INT32_MAX && (int64_t)blocks * 256 < INT32_MAX) {
    pool_index q = {gpu::make_divider((unsigned)d->out[2]), gpu::make_divider((unsigned)d->out[1]),
                    gpu::make_divider((unsigned)d->out[0])};
    gpu::launch(pool_kernel<T, false>, blocks, 256, 0, s, (const T *)x, (T *)y, total, *d, q);
  } else {
    gpu::launch(pool_kernel<T, true>, blocks, 256, 0, s, (const T *)x, (T *)y, total, *d, pool_index{});
  }
  return gpu::last_error();
}

// V elements at p + i as one 16-byte access where they fill it (i a
// multiple of V, p 16-byte aligned), else one at a time.
template <int V, typename T>
__device__ __forceinline__ void ld_vec(const T *p, int64_t i, float *o) {
  if constexpr (sizeof(T) * V == 16) {
    alignas(16) T t[V];
    *(uint4 *)t = *(const uint4 *)(p + i);
#pragma unroll
    for (int k = 0; k < V; ++k) o[k] = ld(t, k);
  } else {
    gpu::ldv<V>(p, i, o);
  }
}
template <int V, typename T>
__device__ __forceinline__ void st_vec(T *p, int64_t i, const float *o) {
  if constexpr (sizeof(T) * V == 16) {
    alignas(16) T t[V];
#pragma unroll
    for (int k = 0; k < V; ++k) st(t, k, o[k]);
    *(uint4 *)(p + i) = *(const uint4 *)t;
  } else {
    gpu::stv<V>(p, i, o);
  }
}

// Channels last ([n, spatial..., c]): one thread per output pixel and V
// consecutive channels (16-byte loads where c allows), the same windows.
template <typename T, int V>
__global__ void pool_last_kernel(const T *x, T *y, int64_t total, int64_t c, gpu_pool_desc d) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t stride = (int64_t)gridDim.x * blockDim.x, cv = c / V;
  const int64_t in_plane = d.in[0] * d.in[1] * d.in[2];
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t pix = i / cv, c0 = (i - pix * cv) * V;
    int64_t r = pix / d.out[2];
    const int64_t o2 = pix - r * d.out[2];
    const int64_t o1 = r % d.out[1];
    r /= d.out[1];
    const int64_t o0 = r % d.out[0], n = r / d.out[0];
    const T *xn = x + n * in_plane * c + c0;
    float acc[V];
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] = d.is_max ? -FLT_MAX : 0.f;
    int64_t count, padded;
    walk_window(d, o0, o1, o2, &count, &padded, [&](int64_t at) {
      float v[V];
      ld_vec<V>(xn, at * c, v);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        if (d.is_max) acc[k] = v[k] > acc[k] || v[k] != v[k] ? v[k] : acc[k];
        else acc[k] += v[k];
      }
    });
    const int64_t div = d.count_include_pad ? padded : count;
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] = d.is_max ? acc[k] : div > 0 ? acc[k] / (float)div : 0.f;
    st_vec<V>(y, i * V, acc);
  }
}

template <typename T>
int pool_last(const void *x, void *y, int64_t n, int64_t c, const gpu_pool_desc *d, gpuStream_t s) {
  const int64_t pixels = n * d->out[0] * d->out[1] * d->out[2];
  if (pixels <= 0 || c <= 0) return 0;
  const int wide = 16 / (int)sizeof(T);
  const bool vec = c % wide == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0;
  const int64_t total = pixels * (vec ? c / wide : c);
  if (vec && wide == 8)
    gpu::launch(pool_last_kernel<T, 8>, gpu::blocks_for(total, 256), 256, 0, s, (const T *)x, (T *)y, total, c, *d);
  else if (vec && wide == 4)
    gpu::launch(pool_last_kernel<T, 4>, gpu::blocks_for(total, 256), 256, 0, s, (const T *)x, (T *)y, total, c, *d);
  else
    gpu::launch(pool_last_kernel<T, 1>, gpu::blocks_for(total, 256), 256, 0, s, (const T *)x, (T *)y, total, c, *d);
  return gpu::last_error();
}

// One warp per row.
template <typename T>
__global__ void global_pool_kernel(const T *x, T *y, int64_t rows, int64_t len, int is_max) {
  gpu::wait_prior();
  gpu::start_next();
  int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
  int lane = threadIdx.x % 32;
  for (int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; row < rows;
       row += warps) {
    const T *xp = x + row * len;
    float acc = is_max ? -FLT_MAX : 0.f;
    for (int64_t j = lane; j < len; j += 32) {
      float v = ld(xp, j);
      if (is_max) acc = v > acc || v != v ? v : acc;
      else acc += v;
    }
    for (int off = 16; off > 0; off /= 2) {
      float o = gpu::shfl_xor32(acc, off);
      if (is_max) acc = o > acc || o != o ? o : acc;
      else acc += o;
    }
    if (lane == 0) st(y, row, is_max ? acc : acc / (float)len);
  }
}

template <typename T>
int global_pool(const void *x, void *y, int64_t rows, int64_t len, int is_max, gpuStream_t s) {
  if (rows <= 0) return 0;
  if (len <= 0) return -1;
  int64_t blocks = (rows + 7) / 8;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  gpu::launch(global_pool_kernel<T>, (unsigned)blocks, 256, 0, s, (const T *)x, (T *)y, rows, len, is_max);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_pool(const void *x, void *y, int dtype, int64_t nc, const gpu_pool_desc *d,
                        void *stream) {
  if (d->nspatial < 1 || d->nspatial > 3) return -1;
  GPU_DISPATCH(dtype, pool, x, y, nc, d, (gpuStream_t)stream)
}

extern "C" int gpu_pool_channels_last(const void *x, void *y, int dtype, int64_t n, int64_t c, const gpu_pool_desc *d,
                                      void *stream) {
  if (d->nspatial < 1 || d->nspatial > 3) return -1;
  GPU_DISPATCH(dtype, pool_last, x, y, n, c, d, (gpuStream_t)stream)
}

extern "C" int gpu_global_pool(const void *x, void *y, int dtype, int64_t rows, int64_t len,
                               int is_max, void *stream) {
  GPU_DISPATCH(dtype, global_pool, x, y, rows, len, is_max, (gpuStream_t)stream)
}
