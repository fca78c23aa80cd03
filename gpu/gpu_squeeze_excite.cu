// gpu_squeeze_excite: squeeze-and-excitation of x [n, c, hw] in three
// kernels. Each channel plane is cut into `parts` pieces of `piece`
// elements (enough pieces that a batch of one still fills the GPU), one
// 32-lane group a piece, in both passes over x:
//   1. sums: each group sums its piece into ws_sums[plane * parts + part];
//   2. hidden: a block per (sample, 8 rows of w1) adds the parts into the
//      channel means in shared memory, each group one row:
//      h[r] = act(b1[r] + w1[r, :] . mean);
//   3. scale: each group computes its plane's gate from h (r multiply-adds
//      over the lanes) and writes y = x * gate over its piece.
// fp32 inputs with hw a multiple of 4 move as float4.
#include <stdint.h>

#include "gpu/gpu_common.cuh"

namespace {

using gpu::ld;
using gpu::st;

constexpr int kThreads = 256, kGroups = kThreads / 32, kUnroll = 4;

struct se_split {
  int64_t parts, piece;
};

// Enough pieces for ~2048 groups over the batch, each at least 128
// elements (and a multiple of 128, so float4 pieces stay aligned).
se_split split_of(int64_t planes, int64_t hw) {
  int64_t want = (2048 + planes - 1) / planes, most = (hw + 127) / 128;
  int64_t parts = want < most ? want : most;
  if (parts < 1) parts = 1;
  int64_t piece = (hw + parts - 1) / parts;
  piece = (piece + 127) / 128 * 128;
  se_split s = {(hw + piece - 1) / piece, piece};
  return s;
}

template <int V, typename T>
__global__ void se_sums(const T *x, float *sums, int64_t planes, int64_t hw, se_split sp) {
  gpu::wait_prior();
  gpu::start_next();
  int64_t g = (int64_t)blockIdx.x * kGroups + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (g >= planes * sp.parts) return;
  int64_t plane = g / sp.parts, part = g - plane * sp.parts;
  int64_t lo = part * sp.piece, hi = lo + sp.piece < hw ? lo + sp.piece : hw;
  const T *xp = x + plane * hw;
  float acc = 0.f;
  // kUnroll loads in flight per lane before their sums
  for (int64_t at = lo + (int64_t)lane * V; at < hi; at += kUnroll * 32 * V) {
    float v[kUnroll][V];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t i = at + (int64_t)u * 32 * V;
      if (i < hi) {
        gpu::ldv<V>(xp, i, v[u]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k) v[u][k] = 0.f;
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int k = 0; k < V; ++k) acc += v[u][k];
  }
  for (int off = 16; off > 0; off /= 2) acc += gpu::shfl_xor32(acc, off);
  if (lane == 0) sums[g] = acc;
}

template <typename T>
__global__ void se_hidden(const float *sums, const T *w1, const T *b1, float *hidden, gpu_se_desc d,
                          int64_t parts) {
  gpu::wait_prior();
  gpu::start_next();
  extern __shared__ float mean[];
  int64_t n = blockIdx.x;
  float inv = 1.f / (float)d.hw;
  for (int64_t j = threadIdx.x; j < d.c; j += kThreads) {
    const float *p = sums + (n * d.c + j) * parts;
    float s = 0.f;
    for (int64_t k = 0; k < parts; ++k) s += p[k];
    mean[j] = s * inv;
  }
  __syncthreads();
  int64_t row = (int64_t)blockIdx.y * kGroups + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row >= d.r) return;
  const T *w = w1 + row * d.c;
  float acc = 0.f;
  for (int64_t j = lane; j < d.c; j += 32) acc += ld(w, j) * mean[j];
  for (int off = 16; off > 0; off /= 2) acc += gpu::shfl_xor32(acc, off);
  if (lane == 0) {
    if (b1) acc += ld(b1, row);
    hidden[n * d.r + row] = gpu::act(d.act, acc, d.act_alpha, d.act_beta);
  }
}

template <int V, typename T>
__global__ void se_scale(const T *x, T *y, const float *hidden, const T *w2, const T *b2, gpu_se_desc d,
                         se_split sp) {
  gpu::wait_prior();
  gpu::start_next();
  int64_t g = (int64_t)blockIdx.x * kGroups + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (g >= d.n * d.c * sp.parts) return;
  int64_t plane = g / sp.parts, part = g - plane * sp.parts;
  int64_t n = plane / d.c, c = plane - n * d.c;
  const float *h = hidden + n * d.r;
  const T *w = w2 + c * d.r;
  float acc = 0.f;
  for (int64_t k = lane; k < d.r; k += 32) acc += ld(w, k) * h[k];
  for (int off = 16; off > 0; off /= 2) acc += gpu::shfl_xor32(acc, off);
  if (b2) acc += ld(b2, c);
  float gate = gpu::act(d.gate_act, acc, d.gate_alpha, d.gate_beta);
  int64_t lo = part * sp.piece, hi = lo + sp.piece < d.hw ? lo + sp.piece : d.hw;
  const T *xp = x + plane * d.hw;
  T *yp = y + plane * d.hw;
  for (int64_t at = lo + (int64_t)lane * V; at < hi; at += kUnroll * 32 * V) {
    float v[kUnroll][V];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (at + (int64_t)u * 32 * V < hi) gpu::ldv<V>(xp, at + (int64_t)u * 32 * V, v[u]);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (at + (int64_t)u * 32 * V >= hi) continue;
#pragma unroll
      for (int k = 0; k < V; ++k) v[u][k] *= gate;
      gpu::stv<V>(yp, at + (int64_t)u * 32 * V, v[u]);
    }
  }
}

size_t align256(size_t n) { return (n + 255) / 256 * 256; }

template <typename T>
int squeeze_excite(const void *x, void *y, const gpu_se_desc *d, void *ws, gpuStream_t s) {
  int64_t planes = d->n * d->c;
  if (planes <= 0 || d->hw <= 0) return 0;
  if (!gpu_squeeze_excite_fits(d->c, d->r)) return -1;
  se_split sp = split_of(planes, d->hw);
  float *sums = (float *)ws;
  float *hidden = (float *)((char *)ws + align256(sizeof(float) * (size_t)(planes * sp.parts)));
  int64_t groups = planes * sp.parts, blocks = (groups + kGroups - 1) / kGroups;
  if (blocks > 0x7fffffff || d->n > 0x7fffffff) return -1;
  // float4 when every piece of every plane starts 16-byte aligned
  bool vec = sizeof(T) == 4 && d->hw % 4 == 0 && ((uintptr_t)x | (uintptr_t)y) % 16 == 0;
  if (vec)
    gpu::launch(se_sums<4, T>, (unsigned)blocks, kThreads, 0, s, (const T *)x, sums, planes, d->hw, sp);
  else
    gpu::launch(se_sums<1, T>, (unsigned)blocks, kThreads, 0, s, (const T *)x, sums, planes, d->hw, sp);
  dim3 hg((unsigned)d->n, (unsigned)((d->r + kGroups - 1) / kGroups));
  gpu::launch(se_hidden<T>, hg, kThreads, sizeof(float) * (size_t)d->c, s, sums, (const T *)d->w1, (const T *)d->b1,
              hidden, *d, sp.parts);
  if (vec)
    gpu::launch(se_scale<4, T>, (unsigned)blocks, kThreads, 0, s, (const T *)x, (T *)y, hidden, (const T *)d->w2,
                (const T *)d->b2, *d, sp);
  else
    gpu::launch(se_scale<1, T>, (unsigned)blocks, kThreads, 0, s, (const T *)x, (T *)y, hidden, (const T *)d->w2,
                (const T *)d->b2, *d, sp);
  return gpu::last_error();
}

}  // namespace

// The channel means live in shared memory; the hidden layer's rows are grid
// rows (65535 at most).
extern "C" int gpu_squeeze_excite_fits(int64_t c, int64_t r) {
  return c >= 1 && c <= GPU_SE_MAX_CHANNELS && r >= 1 && r <= 65535 * (int64_t)kGroups;
}

extern "C" size_t gpu_squeeze_excite_ws(const gpu_se_desc *d) {
  int64_t planes = d->n * d->c;
  if (planes <= 0 || d->hw <= 0) return 0;
  se_split sp = split_of(planes, d->hw);
  return align256(sizeof(float) * (size_t)(planes * sp.parts)) + sizeof(float) * (size_t)(d->n * d->r);
}

extern "C" int gpu_squeeze_excite(const void *x, void *y, int dtype, const gpu_se_desc *d, void *ws,
                                  void *stream) {
  GPU_DISPATCH(dtype, squeeze_excite, x, y, d, ws, (gpuStream_t)stream)
}
