// gpu_gemm: a portable tiled GEMM (64x64 tiles, 4x4 outputs per thread, fp32
// accumulation) with alpha, broadcast beta * C, an activation and batch
// broadcasting; the fallback where no vendor BLAS runs the matmul. And the
// epilogue applied after a vendor matmul that could not fuse C or the
// activation.
#include "gpu/gpu_common.cuh"

namespace {

using gpu::ld;
using gpu::st;

enum { TM = 64, TN = 64, TK = 16 };

template <typename T>
__global__ void __launch_bounds__(256) gemm_kernel(const T *A, const T *B, const T *C, T *Y,
                                                   gpu_gemm_desc d) {
  gpu::wait_prior();
  gpu::start_next();
  __shared__ float As[TK][TM + 4];
  __shared__ float Bs[TK][TN + 4];
  int64_t bidx = blockIdx.z;
  int64_t aoff = 0, boff = 0, rem = bidx;
  for (int i = d.nbd - 1; i >= 0; --i) {
    int64_t q = rem / d.bdims[i], r = rem - q * d.bdims[i];
    aoff += r * d.a_bs[i];
    boff += r * d.b_bs[i];
    rem = q;
  }
  const T *a = A + aoff;
  const T *b = B + boff;
  T *y = Y + bidx * d.m * d.n;
  int64_t row0 = (int64_t)blockIdx.y * TM, col0 = (int64_t)blockIdx.x * TN;
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
  for (int64_t k0 = 0; k0 < d.k; k0 += TK) {
    // 1024 elements of each tile, 4 per thread.
#pragma unroll
    for (int l = 0; l < 4; ++l) {
      int e = threadIdx.x + l * 256;
      int kk = e / TM, mm = e % TM;  // As[kk][mm] = op(A)(row0 + mm, k0 + kk)
      int64_t gi = row0 + mm, gk = k0 + kk;
      As[kk][mm] = (gi < d.m && gk < d.k) ? ld(a, gi * d.a_rs + gk * d.a_cs) : 0.f;
      int64_t gj = col0 + mm;
      Bs[kk][mm] = (gj < d.n && gk < d.k) ? ld(b, gk * d.b_rs + gj * d.b_cs) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TK; ++kk) {
      float av[4], bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = As[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) bv[j] = Bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    int64_t gi = row0 + ty + 16 * i;
    if (gi >= d.m) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int64_t gj = col0 + tx + 16 * j;
      if (gj >= d.n) continue;
      float v = d.alpha * acc[i][j];
      if (C) v += d.beta * ld(C, gi * d.c_rs + gj * d.c_cs);
      st(y, gi * d.n + gj, gpu::act(d.act, v, d.act_alpha, d.act_beta));
    }
  }
}

template <typename T>
int gemm(const void *a, const void *b, const void *c, void *y, const gpu_gemm_desc *d,
         gpuStream_t s) {
  if (d->m <= 0 || d->n <= 0 || d->batch <= 0) return 0;
  int64_t gx = (d->n + TN - 1) / TN, gy = (d->m + TM - 1) / TM;
  if (gx > 0x7fffffff || gy > 65535 || d->batch > 65535) return -1;
  dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)d->batch);
  gpu::launch(gemm_kernel<T>, grid, 256, 0, s, (const T *)a, (const T *)b, (const T *)c, (T *)y, *d);
  return gpu::last_error();
}

template <typename T>
__global__ void epilogue_kernel(T *y, const T *c, int64_t total, int64_t m, int64_t n,
                                int64_t c_rs, int64_t c_cs, float beta, int act, float aa,
                                float ab) {
  gpu::wait_prior();
  gpu::start_next();
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    float v = ld(y, i);
    if (c) {
      int64_t r = i / n, j = i - r * n;
      v += beta * ld(c, (r % m) * c_rs + j * c_cs);
    }
    st(y, i, gpu::act(act, v, aa, ab));
  }
}

// The epilogues' activation: GELU in either form inline (ACT), any other
// through gpu::act (ACT none, act the kind).
template <int ACT>
__device__ __forceinline__ float act_of(float v, int act, float aa, float ab) {
  if (ACT == OP_ACT_GELU) return op_act_gelu(v);
  if (ACT == OP_ACT_GELU_TANH) return op_act_gelu_tanh(v);
  return gpu::act(act, v, aa, ab);
}

// The common case: C a row vector (bias[j], or none): threads along the
// row (coalesced), a grid-stride walk down the rows, no index division;
// GELU inline (it follows most transformer matmuls). V columns a thread:
// 16-byte accesses where rows allow (BERT b8's GELU after the 3072-wide
// matmul took 15.4 us with one half a thread, torch's 4.7).
template <typename T, int ACT, int V>
__global__ void epilogue_rows_kernel(T *y, const T *c, int64_t rows, int64_t n, int64_t c_cs, float beta, int act,
                                     float aa, float ab) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (j >= n) return;
  float bj[V];
#pragma unroll
  for (int k = 0; k < V; ++k) bj[k] = c ? beta * ld(c, (j + k) * c_cs) : 0.f;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    float v[V];
    gpu::ldv<V>(y, r * n + j, v);
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = act_of<ACT>(v[k] + bj[k], act, aa, ab);
    gpu::stv<V>(y, r * n + j, v);
  }
}

template <typename T, int ACT, int V>
int epilogue_rows(T *y, const T *c, int64_t rows, int64_t n, int64_t c_cs, float beta, int act, float aa, float ab,
                  gpuStream_t s) {
  const unsigned gx = (unsigned)((n / V + 255) / 256);
  int64_t gy = (256 * 1024 / V + gx - 1) / gx;  // about 256k elements in flight
  if (gy > rows) gy = rows;
  if (gy > 65535) gy = 65535;
  gpu::launch(epilogue_rows_kernel<T, ACT, V>, dim3(gx, (unsigned)gy), 256, 0, s, y, c, rows, n, c_cs, beta, act, aa,
              ab);
  return gpu::last_error();
}

// No C: the rows do not matter, so one flat walk with every thread busy (the
// rows kernel leaves a block's threads past a row's end idle: BERT b8's GELU
// over 3072-wide rows, 384 vectors a row in blocks of 256, ran at 5.6 us
// against torch's 4.7).
template <typename T, int ACT, int V>
__global__ void epilogue_flat_kernel(T *y, int64_t nvec, int act, float aa, float ab) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec; i += stride) {
    float v[V];
    gpu::ldv<V>(y, i * V, v);
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = act_of<ACT>(v[k], act, aa, ab);
    gpu::stv<V>(y, i * V, v);
  }
}

// One 16-byte access a thread where every row starts 16-byte aligned.
template <typename T, int ACT>
int epilogue_rows_any(T *y, const T *c, int64_t rows, int64_t n, int64_t c_cs, float beta, int act, float aa,
                      float ab, gpuStream_t s) {
  constexpr int V = 16 / sizeof(T);
  if (!c && (uintptr_t)y % 16 == 0 && (rows * n) % V == 0) {
    const int64_t nvec = rows * n / V, blocks = (nvec + 255) / 256;
    gpu::launch(epilogue_flat_kernel<T, ACT, V>, (unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, s, y, nvec, act,
                aa, ab);
    return gpu::last_error();
  }
  if ((uintptr_t)y % 16 == 0 && n % V == 0)
    return epilogue_rows<T, ACT, V>(y, c, rows, n, c_cs, beta, act, aa, ab, s);
  return epilogue_rows<T, ACT, 1>(y, c, rows, n, c_cs, beta, act, aa, ab, s);
}

template <typename T>
int epilogue(void *y, const void *c, int64_t rows, int64_t m, int64_t n, int64_t c_rs,
             int64_t c_cs, float beta, int act, float aa, float ab, gpuStream_t s) {
  int64_t total = rows * n;
  if (total <= 0) return 0;
  if ((!c || c_rs == 0) && n <= 65535 * 256) {
    T *yy = (T *)y;
    const T *cc = (const T *)c;
    if (act == OP_ACT_GELU) return epilogue_rows_any<T, OP_ACT_GELU>(yy, cc, rows, n, c_cs, beta, act, aa, ab, s);
    if (act == OP_ACT_GELU_TANH)
      return epilogue_rows_any<T, OP_ACT_GELU_TANH>(yy, cc, rows, n, c_cs, beta, act, aa, ab, s);
    return epilogue_rows_any<T, OP_ACT_NONE>(yy, cc, rows, n, c_cs, beta, act, aa, ab, s);
  }
  gpu::launch(epilogue_kernel<T>, gpu::blocks_for(total, 256), 256, 0, s, (T *)y, (const T *)c, total, m, n, c_rs, c_cs,
              beta, act, aa, ab);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_gemm(const void *a, const void *b, const void *c, void *y, int dtype,
                        const gpu_gemm_desc *d, void *stream) {
  if (d->nbd < 0 || d->nbd > GPU_GEMM_MAX_BATCH_DIMS) return -1;
  GPU_DISPATCH(dtype, gemm, a, b, c, y, d, (gpuStream_t)stream)
}

extern "C" int gpu_gemm_epilogue(void *y, const void *c, int dtype, int64_t rows, int64_t m,
                                 int64_t n, int64_t c_rs, int64_t c_cs, float beta, int act,
                                 float alpha, float act_beta, void *stream) {
  if (m <= 0) return rows > 0 ? -1 : 0;
  GPU_DISPATCH(dtype, epilogue, y, c, rows, m, n, c_rs, c_cs, beta, act, alpha, act_beta,
               (gpuStream_t)stream)
}
