// gpu_conv1x1: a 1x1 convolution (stride 1, no pads, one group) of few
// input channels, channels first, with its epilogue:
//   y[n, m, p] = act(sum_c w[m, c] x[n, c, p] + bias[m] + residual[n, m, p])
// and y in the input's type or, from fp32, in fp16 / bf16 (the Cast after
// the conv, in the same pass). Each thread loads V pixels of all C input
// channels into registers at once (C independent loads in flight), then
// walks the block's output channels, their weights in shared memory (every
// lane reads the same 16 bytes: a broadcast), storing V outputs a channel
// (consecutive threads: consecutive pixels, so stores are coalesced). Such
// a conv is a pass over memory: C products an output. Measured on an H200
// (MobileNetV2 batch 32, fp32 without TF32, the 16 -> 96 channel expand at
// 112 x 112, fp16 out): cuBLASLt's batched GEMM + the epilogue kernel 175
// us, this kernel 133 us (0.8 TB/s of the H200's 4.8: what holds it there
// is not yet known; storing 4 halves as one 8-byte access changed nothing).
#include <stdint.h>

#include "gpu/gpu_common.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kMaxOut = 128;  // output channels a block, at most

struct c1_params {
  const void *x, *w, *bias, *res;
  void *y;
  int c, m, mb;       // input channels, output channels, output channels a block
  int hw, groups;     // pixels a plane; V-pixel groups in the launch (32-bit)
  int act;
  float a, b;
  gpu::divider by_hw;
};

// CP: C rounded up to a multiple of 4 (the weights are read 4 at a time).
template <typename T, typename TO, int CP, int V>
__global__ void __launch_bounds__(kThreads) conv1x1_kernel(c1_params p) {
  gpu::wait_prior();
  gpu::start_next();
  __shared__ float4 wsm4[kMaxOut * CP / 4];  // [j][c], zero past c
  __shared__ float bsm[kMaxOut];
  float *wsm = (float *)wsm4;
  const int m0 = blockIdx.y * p.mb, nm = min(p.mb, p.m - m0);
  for (int e = threadIdx.x; e < nm * CP; e += blockDim.x) {
    const int j = e / CP, c = e - j * CP;
    wsm[e] = c < p.c ? gpu::ld((const T *)p.w, (int64_t)(m0 + j) * p.c + c) : 0.f;
  }
  for (int j = threadIdx.x; j < nm; j += blockDim.x) bsm[j] = p.bias ? gpu::ld((const T *)p.bias, m0 + j) : 0.f;
  __syncthreads();
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < p.groups; g += step) {
    const int pix = (int)g * V;  // V divides hw: a group lies in one image
    const int img = gpu::div(pix, p.by_hw), q = pix - img * p.hw;
    const T *xp = (const T *)p.x + ((int64_t)img * p.c) * p.hw + q;
    float xv[CP][V];
#pragma unroll
    for (int c = 0; c < CP; ++c) {
      if (c < p.c) {
        gpu::ldv<V>(xp, (int64_t)c * p.hw, xv[c]);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) xv[c][v] = 0.f;
      }
    }
    const int64_t ob = ((int64_t)img * p.m + m0) * p.hw + q;
    for (int j = 0; j < nm; ++j) {
      float acc[V];
#pragma unroll
      for (int v = 0; v < V; ++v) acc[v] = bsm[j];
      const float4 *wr = wsm4 + j * (CP / 4);
#pragma unroll
      for (int c4 = 0; c4 < CP / 4; ++c4) {
        const float4 w = wr[c4];
#pragma unroll
        for (int v = 0; v < V; ++v)
          acc[v] += w.x * xv[4 * c4][v] + w.y * xv[4 * c4 + 1][v] + w.z * xv[4 * c4 + 2][v] + w.w * xv[4 * c4 + 3][v];
      }
      const int64_t o = ob + (int64_t)j * p.hw;
      if (p.res) {
        float r[V];
        gpu::ldv<V>((const T *)p.res, o, r);
#pragma unroll
        for (int v = 0; v < V; ++v) acc[v] += r[v];
      }
      if (p.act != OP_ACT_NONE)
#pragma unroll
        for (int v = 0; v < V; ++v) acc[v] = gpu::act(p.act, acc[v], p.a, p.b);
      gpu::stv<V>((TO *)p.y, o, acc);
    }
  }
}

template <typename T, typename TO, int CP>
int launch_cp(const c1_params &p, bool vec, dim3 grid, gpuStream_t s) {
  if (vec) return gpu::launch(conv1x1_kernel<T, TO, CP, 4>, grid, dim3(kThreads), 0, s, p);
  return gpu::launch(conv1x1_kernel<T, TO, CP, 1>, grid, dim3(kThreads), 0, s, p);
}

template <typename T, typename TO>
int launch(c1_params p, int64_t n, gpuStream_t s) {
  // 4 pixels a thread (16-byte fp32 loads) where planes and pointers allow
  const bool vec = p.hw % 4 == 0 && (uintptr_t)p.x % (4 * sizeof(T)) == 0 &&
                   (uintptr_t)p.y % (4 * sizeof(TO)) == 0 && (uintptr_t)p.res % (4 * sizeof(T)) == 0;
  const int v = vec ? 4 : 1;
  const int64_t groups = n * p.hw / v;
  if (groups >= INT32_MAX) return -1;
  p.groups = (int)groups;
  p.by_hw = gpu::make_divider((unsigned)p.hw);
  // Output channels a block: all (up to kMaxOut), fewer while the grid
  // would leave SMs idle (batch 1).
  const unsigned pix_blocks = gpu::blocks_for(groups, kThreads);
  int mb = p.m < kMaxOut ? p.m : kMaxOut;
  while (mb > 8 && (int64_t)pix_blocks * ((p.m + mb - 1) / mb) < gpu::kFillBlocks) mb = (mb + 1) / 2;
  p.mb = mb;
  const dim3 grid(pix_blocks, (unsigned)((p.m + mb - 1) / mb));
  // gpu::launch returns the launch's error
  if (p.c <= 8) return launch_cp<T, TO, 8>(p, vec, grid, s);
  if (p.c <= 16) return launch_cp<T, TO, 16>(p, vec, grid, s);
  if (p.c <= 24) return launch_cp<T, TO, 24>(p, vec, grid, s);
  return launch_cp<T, TO, 32>(p, vec, grid, s);
}

}  // namespace

extern "C" int gpu_conv1x1_few_fits(int64_t n, int64_t c, int64_t m, int64_t hw) {
  return n > 0 && c > 0 && c <= GPU_CONV1X1_MAX_C && m > 0 && m < 65535 * 8 && hw > 0 && hw < INT32_MAX &&
         n * hw < INT32_MAX && n * c * hw < ((int64_t)1 << 40);
}

extern "C" int gpu_conv1x1_few(const void *x, const void *w, const void *bias, const void *residual, void *y,
                               int dtype, int out_dtype, int64_t n, int64_t c, int64_t m, int64_t hw, int act,
                               float alpha, float beta, void *stream) {
  if (!gpu_conv1x1_few_fits(n, c, m, hw)) return -1;
  if (residual && out_dtype != dtype) return -1;
  c1_params p = {};
  p.x = x, p.w = w, p.bias = bias, p.res = residual, p.y = y;
  p.c = (int)c, p.m = (int)m, p.hw = (int)hw;
  p.act = act, p.a = alpha, p.b = beta;
  GPU_DISPATCH_TO(dtype, out_dtype, launch, p, n, (gpuStream_t)stream);
}
