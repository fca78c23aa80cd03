// gpu_epilogue: bias + residual + activation applied after a convolution
// the DNN library could not fuse (or a 1x1 convolution run as a matmul), in
// place or into another tensor of a narrower type (the Cast that followed
// the convolution, done in the same pass). A flat walk over the tensor,
// four elements a thread with 16-byte accesses where the planes allow it:
// the per-plane walk it replaces ran at ~900 GB/s on an H200, idling most
// lanes on 7x7 planes. CUDA C behind an extern "C" launcher; compiles as
// HIP through gpu_vendor.h.
#include <stdint.h>

#include "gpu/gpu_common.cuh"

namespace {

// V divides inner, so the V elements of one thread share a plane (channel);
// or, channels last (LAST: planes of one element), V divides the channels
// and the V elements are V consecutive channels.
template <typename T, typename TO, int V, bool LAST>
__global__ void epilogue_kernel(const T *y, TO *out, const T *bias, const T *res, int nvec, gpu::divider inner,
                                gpu::divider channels, int c0, int act, float a, float b) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < nvec; k += step) {
    const int i = (int)k * V;  // 32-bit index math; a 32-bit counter could wrap on k + step
    float bv[V];
#pragma unroll
    for (int k = 0; k < V; ++k) bv[k] = 0.f;
    if (bias) {
      const int plane = c0 + (LAST ? i : gpu::div(i, inner));
      const int c = plane - gpu::div(plane, channels) * (int)channels.d;
#pragma unroll
      for (int k = 0; k < V; ++k) bv[k] = gpu::ld(bias, LAST ? c + k : c);
    }
    float v[V], r[V];
    gpu::ldv<V>(y, i, v);
    if (res) gpu::ldv<V>(res, i, r);
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = gpu::act(act, v[k] + bv[k] + (res ? r[k] : 0.f), a, b);
    gpu::stv<V>(out, i, v);
  }
}

// Launches over whole planes, as many per launch as keep indices 32-bit.
template <typename T, typename TO, int V, bool LAST>
int launch_vec(const T *y, TO *out, const T *bias, const T *res, int64_t n, int64_t channels, int64_t inner,
               int act, float a, float b, gpuStream_t s) {
  const int threads = 256;
  // Elements and plane numbers (c0 + local plane) stay below 2^31.
  const int64_t planes = n / inner;
  const int64_t chunk = INT32_MAX / inner < (1 << 30) ? INT32_MAX / inner : (1 << 30);
  for (int64_t p0 = 0; p0 < planes; p0 += chunk) {
    const int64_t np = planes - p0 < chunk ? planes - p0 : chunk, off = p0 * inner;
    const int nvec = (int)(np * inner / V);
    gpu::launch(epilogue_kernel<T, TO, V, LAST>, gpu::blocks_for(nvec, threads), threads, 0, s, y + off, out + off, bias,
                res ? res + off : nullptr, nvec, gpu::make_divider((unsigned)inner),
                gpu::make_divider((unsigned)channels), (int)(p0 % channels), act, a, b);
    if (int e = gpu::last_error()) return e;
  }
  return 0;
}

template <typename T, typename TO>
int launch(const void *y, void *out, const void *bias, const void *res, int64_t n, int64_t channels,
           int64_t inner, int act, float a, float b, gpuStream_t s) {
  const bool aligned = (uintptr_t)y % 16 == 0 && (uintptr_t)out % 16 == 0 && (uintptr_t)res % 16 == 0;
  const T *yt = (const T *)y, *bt = (const T *)bias, *rt = (const T *)res;
  if (aligned && inner % 4 == 0)
    return launch_vec<T, TO, 4, false>(yt, (TO *)out, bt, rt, n, channels, inner, act, a, b, s);
  if (aligned && inner == 1 && channels % 4 == 0)
    return launch_vec<T, TO, 4, true>(yt, (TO *)out, bt, rt, n, channels, inner, act, a, b, s);
  return launch_vec<T, TO, 1, false>(yt, (TO *)out, bt, rt, n, channels, inner, act, a, b, s);
}

}  // namespace

extern "C" int gpu_conv_epilogue_to(const void *y, void *out, const void *bias, const void *residual, int dtype,
                                    int out_dtype, int64_t n, int64_t channels, int64_t inner, int act,
                                    float alpha, float beta, void *stream) {
  if (n <= 0) return 0;
  if (bias && (channels <= 0 || channels >= INT32_MAX / 2 || inner <= 0 || n % inner != 0 ||
               inner >= INT32_MAX))
    return -1;
  if (!bias) {  // no channels to find: any plane size that divides n
    channels = 1;
    inner = n % 4 == 0 ? 4 : 1;
  }
  GPU_DISPATCH_TO(dtype, out_dtype, launch, y, out, bias, residual, n, channels, inner, act, alpha, beta,
                  (gpuStream_t)stream);
}

extern "C" int gpu_conv_epilogue(void *y, const void *bias, const void *residual, int dtype, int64_t n,
                                 int64_t channels, int64_t inner, int act, float alpha, float beta, void *stream) {
  return gpu_conv_epilogue_to(y, y, bias, residual, dtype, dtype, n, channels, inner, act, alpha, beta, stream);
}
