// gpu_depthwise: direct depthwise 2D convolution (group = in channels = out
// channels), NCHW, with bias, residual and activation fused: one pass over
// the input, reads coalesced along W. Each block works on one (image,
// channel) plane at a time, so the channel, the filter taps (kept in shared
// memory) and the plane offsets are computed once per plane and the
// per-pixel index math is 32-bit.
#include "gpu/gpu_common.cuh"

namespace {

template <typename T>
__global__ void depthwise_kernel(const T *x, const T *w, const T *bias, const T *res, T *y,
                                 gpu_dw_shape s, int act, float a, float b) {
  extern __shared__ float taps[];
  const int kh = (int)s.kh, kw = (int)s.kw, ih = (int)s.ih, iw = (int)s.iw;
  const int oh = (int)s.oh, ow = (int)s.ow, sh = (int)s.sh, sw = (int)s.sw;
  const int ph = (int)s.ph, pw = (int)s.pw, dh = (int)s.dh, dw = (int)s.dw;
  const int npix = oh * ow, ntaps = kh * kw;
  const int64_t planes = s.n * s.c;
  for (int64_t plane = blockIdx.y; plane < planes; plane += gridDim.y) {
    const int64_t c = plane % s.c;
    __syncthreads();  // the previous plane's taps are no longer read
    for (int t = threadIdx.x; t < ntaps; t += blockDim.x) taps[t] = gpu::ld(w, c * ntaps + t);
    __syncthreads();
    const float b0 = bias ? gpu::ld(bias, c) : 0.f;
    const T *xp = x + plane * (int64_t)ih * iw;
    T *yp = y + plane * (int64_t)npix;
    const T *rp = res ? res + plane * (int64_t)npix : nullptr;
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < npix; p += gridDim.x * blockDim.x) {
      const int oy = p / ow, ox = p - oy * ow;
      float acc = b0;
      for (int ky = 0; ky < kh; ++ky) {
        const int iy = oy * sh - ph + ky * dh;
        if (iy < 0 || iy >= ih) continue;
        const T *row = xp + iy * iw;
        for (int kx = 0; kx < kw; ++kx) {
          const int ix = ox * sw - pw + kx * dw;
          if (ix < 0 || ix >= iw) continue;
          acc += gpu::ld(row, ix) * taps[ky * kw + kx];
        }
      }
      if (rp) acc += gpu::ld(rp, p);
      gpu::st(yp, p, gpu::act(act, acc, a, b));
    }
  }
}

template <typename T>
int launch(const void *x, const void *w, const void *bias, const void *res, void *y,
           const gpu_dw_shape *s, int act, float a, float b, gpuStream_t stream) {
  // Late layers have small planes (7x7, 14x14): size the block to the plane,
  // rounded up to whole warps, so few threads idle.
  int64_t npix = s->oh * s->ow, planes = s->n * s->c;
  const int threads = npix >= 256 ? 256 : (int)((npix + 31) / 32 * 32);
  dim3 grid((unsigned)((npix + threads - 1) / threads), (unsigned)(planes < 65535 ? planes : 65535));
  if (grid.x > 1024) grid.x = 1024;
  size_t smem = sizeof(float) * (size_t)(s->kh * s->kw);
  depthwise_kernel<T><<<grid, threads, smem, stream>>>((const T *)x, (const T *)w, (const T *)bias,
                                                       (const T *)res, (T *)y, *s, act, a, b);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_conv_depthwise(const void *x, const void *w, const void *bias,
                                  const void *residual, void *y, int dtype, const gpu_dw_shape *s,
                                  int act, float alpha, float beta, void *stream) {
  if (s->n * s->c * s->oh * s->ow <= 0) return 0;
  // 32-bit pixel indices within a plane; shared memory holds the taps.
  if (s->ih * s->iw >= ((int64_t)1 << 31) || s->oh * s->ow >= ((int64_t)1 << 31) || s->kh * s->kw > 4096)
    return -1;
  GPU_DISPATCH(dtype, launch, x, w, bias, residual, y, s, act, alpha, beta, (gpuStream_t)stream);
}
