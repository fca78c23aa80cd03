// gpu_pointwise: unary activations, broadcast binary ops with a fused
// activation, and inference batch normalization. fp32 arithmetic for every
// element type. CUDA C behind extern "C" launchers; compiles as HIP.
#include "gpu/gpu_common.cuh"

namespace {

using gpu::ld;
using gpu::st;

template <typename T>
__global__ void unary_kernel(const T *x, T *y, int64_t n, int act, float a, float b) {
  gpu::wait_prior();
  gpu::start_next();
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    st(y, i, gpu::act(act, ld(x, i), a, b));
}

template <typename T>
int unary(const void *x, void *y, int64_t n, int act, float a, float b, gpuStream_t s) {
  gpu::launch(unary_kernel<T>, gpu::blocks_for(n, 256), 256, 0, s, (const T *)x, (T *)y, n, act, a, b);
  return gpu::last_error();
}

__device__ __forceinline__ float bin(int op, float a, float b) {
  switch (op) {
    case GPU_BIN_ADD: return a + b;
    case GPU_BIN_SUB: return a - b;
    case GPU_BIN_MUL: return a * b;
    case GPU_BIN_DIV: return a / b;
    case GPU_BIN_POW: return powf(a, b);
    case GPU_BIN_MIN: return a != a || b != b ? a + b : (a < b ? a : b);  // NaN propagates
    case GPU_BIN_MAX: return a != a || b != b ? a + b : (a > b ? a : b);
    default: return (a + b) * 0.5f;
  }
}

// Same-shape or scalar operands: sa, sb in {0, 1} on one collapsed dim.
template <typename T>
__global__ void binary_flat_kernel(const T *a, const T *b, T *y, int64_t n, int64_t sa, int64_t sb,
                                   int op, gpu_binary_acts f) {
  gpu::wait_prior();
  gpu::start_next();
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float x = gpu::act(f.in_act, ld(a, i * sa), f.in_alpha, f.in_beta);
    st(y, i, gpu::act(f.act, bin(op, x, ld(b, i * sb)), f.alpha, f.beta));
  }
}

// Same-shape operands, 16 bytes of each at a time: the large flat products
// (an LLM's SwiGLU over every prompt token) are bandwidth-bound.
template <typename T>
__global__ void binary_vec_kernel(const uint4 *a, const uint4 *b, uint4 *y, int64_t nv, int op, gpu_binary_acts f) {
  gpu::wait_prior();
  gpu::start_next();
  constexpr int V = 16 / sizeof(T);
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += stride) {
    const uint4 va = a[i], vb = b[i];
    uint4 vy;
    const T *ea = (const T *)&va, *eb = (const T *)&vb;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const float x = gpu::act(f.in_act, ld(ea, v), f.in_alpha, f.in_beta);
      st((T *)&vy, v, gpu::act(f.act, bin(op, x, ld(eb, v)), f.alpha, f.beta));
    }
    y[i] = vy;
  }
}

// Index math in I: 32-bit when every offset fits (a 64-bit division is
// several times the work, and a transposed operand makes every element
// divide once per dim).
template <typename T, typename I>
__global__ void binary_kernel(const T *a, const T *b, T *y, I n, gpu_bcast bc, int op,
                              gpu_binary_acts f) {
  gpu::wait_prior();
  gpu::start_next();
  const I stride = (I)gridDim.x * blockDim.x;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    I rem = i, oa = 0, ob = 0;
#pragma unroll
    for (int d = GPU_MAX_DIMS - 1; d >= 0; --d) {
      if (d >= bc.rank) continue;
      const I dim = (I)bc.dims[d], q = rem / dim, r = rem - q * dim;
      oa += r * (I)bc.sa[d];
      ob += r * (I)bc.sb[d];
      rem = q;
    }
    const float x = gpu::act(f.in_act, ld(a, oa), f.in_alpha, f.in_beta);
    st(y, i, gpu::act(f.act, bin(op, x, ld(b, ob)), f.alpha, f.beta));
  }
}

// y = a op b where one operand is y transposed: y [batch][rows][cols],
// the plain operand laid out as y, the transposed one [batch][cols][rows]
// (ConvNeXt's residual Add: NCHW plus a matmul's NHWC rows). Through a
// 32 x 32 shared tile so every operand is read and written coalesced: the
// index walk of binary_kernel read the transposed operand one element a
// 32-byte sector, with a division per dim per element (stage 2 of
// ConvNeXt-T at batch 32, fp16, H100: 43 us for 29 MB).
constexpr int kBinTile = 32;

template <typename T>
__global__ void binary_transposed_kernel(const T *plain, const T *trans, T *y, int64_t rows, int64_t cols,
                                         bool trans_is_a, int op, gpu_binary_acts f) {
  gpu::wait_prior();
  gpu::start_next();
  __shared__ float tile[kBinTile][kBinTile + 1];
  const int64_t c0 = (int64_t)blockIdx.x * kBinTile, r0 = (int64_t)blockIdx.y * kBinTile;
  const int64_t base = (int64_t)blockIdx.z * rows * cols;
  const int tx = (int)threadIdx.x;
  for (int j = threadIdx.y; j < kBinTile; j += blockDim.y)  // the transposed operand along its rows
    if (c0 + j < cols && r0 + tx < rows) tile[j][tx] = ld(trans, base + (c0 + j) * rows + r0 + tx);
  __syncthreads();
  for (int j = threadIdx.y; j < kBinTile; j += blockDim.y) {
    const int64_t r = r0 + j, c = c0 + tx;
    if (r >= rows || c >= cols) continue;
    const int64_t at = base + r * cols + c;
    const float t = tile[tx][j], p = ld(plain, at);
    const float x = gpu::act(f.in_act, trans_is_a ? t : p, f.in_alpha, f.in_beta);
    st(y, at, gpu::act(f.act, bin(op, x, trans_is_a ? p : t), f.alpha, f.beta));
  }
}

// Whether bc is a batch of 2-D transposes of one operand (dims merged where
// both operands allow): fills batch, rows, cols and which operand.
inline bool as_transposed(const gpu_bcast *bc, int64_t &batch, int64_t &rows, int64_t &cols, bool &trans_is_a) {
  int64_t d[GPU_MAX_DIMS], sa[GPU_MAX_DIMS], sb[GPU_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < bc->rank; ++i) {
    if (bc->dims[i] == 1) continue;
    if (n && sa[n - 1] == bc->sa[i] * bc->dims[i] && sb[n - 1] == bc->sb[i] * bc->dims[i]) {
      d[n - 1] *= bc->dims[i];
      sa[n - 1] = bc->sa[i];
      sb[n - 1] = bc->sb[i];
      continue;
    }
    d[n] = bc->dims[i], sa[n] = bc->sa[i], sb[n] = bc->sb[i];
    ++n;
  }
  if (n == 2) {  // one batch: lift to three dims
    d[2] = d[1], sa[2] = sa[1], sb[2] = sb[1];
    d[1] = d[0], sa[1] = sa[0], sb[1] = sb[0];
    d[0] = 1, sa[0] = d[1] * d[2], sb[0] = d[1] * d[2];
    n = 3;
  }
  if (n != 3 || d[0] > 65535) return false;
  const int64_t R = d[1], C = d[2];
  auto plain = [&](const int64_t *st) { return (d[0] == 1 || st[0] == R * C) && st[1] == C && st[2] == 1; };
  auto trans = [&](const int64_t *st) { return (d[0] == 1 || st[0] == R * C) && st[1] == 1 && st[2] == R; };
  if (plain(sa) && trans(sb)) trans_is_a = false;
  else if (trans(sa) && plain(sb)) trans_is_a = true;
  else return false;
  batch = d[0], rows = R, cols = C;
  return (R + kBinTile - 1) / kBinTile <= 65535;
}

// Every offset of y, a and b is below 2^31 (a stride is at most the size of its operand).
inline bool offsets_fit_32(const gpu_bcast *bc, int64_t n) {
  int64_t ma = 0, mb = 0;
  for (int d = 0; d < bc->rank; ++d) ma += (bc->dims[d] - 1) * bc->sa[d], mb += (bc->dims[d] - 1) * bc->sb[d];
  return n < INT32_MAX && ma < INT32_MAX && mb < INT32_MAX;
}

template <typename T>
int binary(const void *a, const void *b, void *y, int op, const gpu_bcast *bc, const gpu_binary_acts *f,
           gpuStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < bc->rank; ++d) n *= bc->dims[d];
  if (n <= 0) return 0;
  const int64_t V = 16 / (int64_t)sizeof(T);
  int64_t tb = 0, tr = 0, tc = 0;
  bool ta = false;
  if (bc->rank == 1 && bc->sa[0] == 1 && bc->sb[0] == 1 && n % V == 0 &&
      ((uintptr_t)a | (uintptr_t)b | (uintptr_t)y) % 16 == 0)
    gpu::launch(binary_vec_kernel<T>, gpu::blocks_for(n / V, 256), 256, 0, s, (const uint4 *)a, (const uint4 *)b,
                (uint4 *)y, n / V, op, *f);
  else if (bc->rank == 1 && bc->sa[0] <= 1 && bc->sb[0] <= 1)
    gpu::launch(binary_flat_kernel<T>, gpu::blocks_for(n, 256), 256, 0, s, (const T *)a, (const T *)b, (T *)y, n,
                bc->sa[0], bc->sb[0], op, *f);
  else if (as_transposed(bc, tb, tr, tc, ta))
    gpu::launch(binary_transposed_kernel<T>,
                dim3((unsigned)((tc + kBinTile - 1) / kBinTile), (unsigned)((tr + kBinTile - 1) / kBinTile),
                     (unsigned)tb),
                dim3(kBinTile, 8), 0, s, (const T *)(ta ? b : a), (const T *)(ta ? a : b), (T *)y, tr, tc, ta, op, *f);
  else if (offsets_fit_32(bc, n))
    gpu::launch(binary_kernel<T, unsigned>, gpu::blocks_for(n, 256), 256, 0, s, (const T *)a, (const T *)b, (T *)y,
                (unsigned)n, *bc, op, *f);
  else
    gpu::launch(binary_kernel<T, int64_t>, gpu::blocks_for(n, 256), 256, 0, s, (const T *)a, (const T *)b, (T *)y, n,
                *bc, op, *f);
  return gpu::last_error();
}

// Integers (int32, int64): Add, Sub, Mul wrap around as two's complement
// (computed unsigned: no signed overflow), Min, Max; no activation.
template <typename T>
__device__ __forceinline__ T bin_int(int op, T a, T b) {
  typedef unsigned long long U;
  switch (op) {
    case GPU_BIN_ADD: return (T)((U)a + (U)b);
    case GPU_BIN_SUB: return (T)((U)a - (U)b);
    case GPU_BIN_MUL: return (T)((U)a * (U)b);
    case GPU_BIN_MIN: return a < b ? a : b;
    default: return a > b ? a : b;
  }
}

template <typename T>
__global__ void binary_int_kernel(const T *a, const T *b, T *y, int64_t n, gpu_bcast bc, int op) {
  gpu::wait_prior();
  gpu::start_next();
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t rem = i, oa = 0, ob = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      int64_t q = rem / bc.dims[d], r = rem - q * bc.dims[d];
      oa += r * bc.sa[d];
      ob += r * bc.sb[d];
      rem = q;
    }
    y[i] = bin_int(op, a[oa], b[ob]);
  }
}

template <typename T>
int binary_int(const void *a, const void *b, void *y, int op, const gpu_bcast *bc, gpuStream_t s) {
  if (op != GPU_BIN_ADD && op != GPU_BIN_SUB && op != GPU_BIN_MUL && op != GPU_BIN_MIN && op != GPU_BIN_MAX) return -1;
  int64_t n = 1;
  for (int d = 0; d < bc->rank; ++d) n *= bc->dims[d];
  if (n <= 0) return 0;
  gpu::launch(binary_int_kernel<T>, gpu::blocks_for(n, 256), 256, 0, s, (const T *)a, (const T *)b, (T *)y, n, *bc, op);
  return gpu::last_error();
}

// V elements a thread (V divides the plane, so they share a channel), the
// channel from the flat index by two multiply-high divisions: one pass at
// memory speed over DenseNet's every concatenation. Indices below 2^31.
template <typename T, int V>
__global__ void bn_flat(const T *x, T *y, const T *scale, const T *bias, const T *mean, const T *var, float eps,
                        int nvec, gpu::divider per_plane, gpu::divider channels, int act, float a, float b) {
  gpu::wait_prior();
  gpu::start_next();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nvec; i += gridDim.x * blockDim.x) {
    const int p = gpu::div(i, per_plane), c = p - gpu::div(p, channels) * (int)channels.d;
    const float s = ld(scale, c) * rsqrtf(ld(var, c) + eps), m = ld(mean, c), t = ld(bias, c);
    float v[V];
    gpu::ldv<V>(x, (int64_t)i * V, v);
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = gpu::act(act, (v[k] - m) * s + t, a, b);
    gpu::stv<V>(y, (int64_t)i * V, v);
  }
}

// Past 2^31 elements: one (n, c) plane a block row.
template <typename T>
__global__ void bn_planes(const T *x, T *y, const T *scale, const T *bias, const T *mean, const T *var, float eps,
                          int64_t planes, int64_t channels, int64_t inner, int act, float a, float b) {
  gpu::wait_prior();
  gpu::start_next();
  for (int64_t p = blockIdx.y; p < planes; p += gridDim.y) {
    const int64_t c = p % channels;
    const float s = ld(scale, c) * rsqrtf(ld(var, c) + eps), m = ld(mean, c), t = ld(bias, c);
    const T *xp = x + p * inner;
    T *yp = y + p * inner;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < inner; i += (int64_t)gridDim.x * blockDim.x)
      st(yp, i, gpu::act(act, (ld(xp, i) - m) * s + t, a, b));
  }
}

template <typename T>
int batchnorm(const void *x, void *y, const void *scale, const void *bias, const void *mean, const void *var,
              float eps, int64_t n, int64_t channels, int64_t inner, int act, float a, float b, gpuStream_t s) {
  if (n < INT32_MAX) {
    const bool v4 = sizeof(T) == 4 && inner % 4 == 0 && ((uintptr_t)x | (uintptr_t)y) % 16 == 0;
    const int V = v4 ? 4 : 1;
    const int nvec = (int)(n / V);
    const gpu::divider per_plane = gpu::make_divider((unsigned)(inner / V)), ch = gpu::make_divider((unsigned)channels);
    if (v4)
      gpu::launch(bn_flat<T, 4>, gpu::blocks_for(nvec, 256), 256, 0, s, (const T *)x, (T *)y, (const T *)scale,
                  (const T *)bias, (const T *)mean, (const T *)var, eps, nvec, per_plane, ch, act, a, b);
    else
      gpu::launch(bn_flat<T, 1>, gpu::blocks_for(nvec, 256), 256, 0, s, (const T *)x, (T *)y, (const T *)scale,
                  (const T *)bias, (const T *)mean, (const T *)var, eps, nvec, per_plane, ch, act, a, b);
    return gpu::last_error();
  }
  const int64_t planes = n / inner;
  const int threads = inner >= 256 ? 256 : (int)((inner + 31) / 32 * 32);
  int64_t bx = (inner + threads - 1) / threads, by = planes < 65535 ? planes : 65535;
  if (bx > 64) bx = 64;
  gpu::launch(bn_planes<T>, dim3((unsigned)bx, (unsigned)by), threads, 0, s, (const T *)x, (T *)y, (const T *)scale,
              (const T *)bias, (const T *)mean, (const T *)var, eps, planes, channels, inner, act, a, b);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_unary(const void *x, void *y, int dtype, int64_t n, int act, float alpha,
                         float beta, void *stream) {
  if (n <= 0) return 0;
  GPU_DISPATCH(dtype, unary, x, y, n, act, alpha, beta, (gpuStream_t)stream)
}

extern "C" int gpu_binary(const void *a, const void *b, void *y, int dtype, int op,
                          const gpu_bcast *bc, const gpu_binary_acts *acts, void *stream) {
  const gpu_binary_acts none = {OP_ACT_NONE, OP_ACT_NONE, 0.f, 0.f, 0.f, 0.f};
  const gpu_binary_acts *f = acts ? acts : &none;
  if (bc->rank < 1 || bc->rank > GPU_MAX_DIMS) return -1;
  if (dtype == GPU_DT_I32 || dtype == GPU_DT_I64) {
    if (f->act != OP_ACT_NONE || f->in_act != OP_ACT_NONE) return -1;
    return dtype == GPU_DT_I32 ? binary_int<int32_t>(a, b, y, op, bc, (gpuStream_t)stream)
                               : binary_int<int64_t>(a, b, y, op, bc, (gpuStream_t)stream);
  }
  GPU_DISPATCH(dtype, binary, a, b, y, op, bc, f, (gpuStream_t)stream)
}

extern "C" int gpu_batchnorm(const void *x, void *y, const void *scale, const void *bias,
                             const void *mean, const void *var, int dtype, float eps, int64_t n,
                             int64_t channels, int64_t inner, int act, float alpha, float beta, void *stream) {
  if (n <= 0) return 0;
  if (channels <= 0 || inner <= 0 || n % inner) return -1;
  GPU_DISPATCH(dtype, batchnorm, x, y, scale, bias, mean, var, eps, n, channels, inner, act, alpha, beta,
               (gpuStream_t)stream)
}
