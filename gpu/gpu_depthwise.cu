// gpu_depthwise: direct depthwise 2D convolution (group = in channels = out
// channels), NCHW, one pass over the input with everything around it fused:
//   prologue  x' = pre_act(x + pre_bias[c])   (the producer's epilogue, when
//             the producer is a matmul that left it undone)
//   epilogue  y  = act(conv(x', w) + bias[c] + residual)
// Each thread computes a strip of V outputs along W, so the input columns
// the strip's taps share are loaded (and put through the prologue) once;
// index math divides by launch-time constants (gpu::divider).
// The common filters (3x3, 5x5; stride 1 or 2; no dilation) are template
// instances with every loop unrolled; other shapes take a generic loop.
// Measured on an H200 (MobileNetV2, batch 32): the 17 depthwise layers took
// 1.26 ms with one output per thread and 0.75 ms in torch's kernel; with
// 4-output strips and the prologue fused, 0.73 ms.
#include "gpu/gpu_common.cuh"

namespace {

struct dw_params : gpu::conv2d_args {
  const void *pre_bias;
  int pre_act;
  float pre_a, pre_b;
  int nstrip;  // strips of V outputs per output row
  int total;   // planes * oh * nstrip: 32-bit, the launcher splits by images
  gpu::divider by_nstrip, by_oh, by_c;
};

// The prologue applied to one loaded input value.
template <typename T, bool PRE>
__device__ __forceinline__ float load_in(const T *row, int ix, int iw, float pb,
                                         const dw_params &p) {
  if (ix < 0 || ix >= iw) return 0.f;  // padding is zero after the prologue
  float v = gpu::ld(row, ix);
  return PRE ? gpu::act(p.pre_act, v + pb, p.pre_a, p.pre_b) : v;
}

// Where thread index idx works: its plane (image x channel), output row,
// strip along the row, channel, the channel's biases and its input plane.
template <typename T, bool PRE>
struct dw_pos {
  int plane, oy, strip, c;
  float bias, pre_bias;
  const T *xp;
  __device__ __forceinline__ dw_pos(int idx, const dw_params &p) {
    const int r = gpu::div(idx, p.by_nstrip);
    strip = idx - r * p.nstrip;
    plane = gpu::div(r, p.by_oh);
    oy = r - plane * p.oh;
    c = plane - gpu::div(plane, p.by_c) * p.c;
    bias = p.bias ? gpu::ld((const T *)p.bias, c) : 0.f;
    pre_bias = PRE && p.pre_bias ? gpu::ld((const T *)p.pre_bias, c) : 0.f;
    xp = (const T *)p.x + (int64_t)plane * p.ih * p.iw;
  }
};

// KH, KW, S > 0: unrolled filter of KH x KW, stride S both ways, dilation 1.
template <typename T, int KH, int KW, int S, int V, bool PRE>
__global__ void dw_fixed_kernel(dw_params p) {
  gpu::wait_prior();
  gpu::start_next();
  const T *w = (const T *)p.w;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.total; i += step) {
    const int idx = (int)i;  // < total: 32-bit; a 32-bit counter could wrap on i + step
    const dw_pos<T, PRE> q(idx, p);
    const int plane = q.plane, oy = q.oy, c = q.c, ox0 = q.strip * V;
    const float b0 = q.bias, pb = q.pre_bias;
    const T *xp = q.xp;
    float acc[V];
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] = b0;
    const int ix0 = ox0 * S - p.pw;
#pragma unroll
    for (int ky = 0; ky < KH; ++ky) {
      const int iy = oy * S - p.ph + ky;
      if (iy < 0 || iy >= p.ih) continue;
      const T *row = xp + (int64_t)iy * p.iw;
      constexpr int NIN = (V - 1) * S + KW;
      float in[NIN];
#pragma unroll
      for (int j = 0; j < NIN; ++j) in[j] = load_in<T, PRE>(row, ix0 + j, p.iw, pb, p);
#pragma unroll
      for (int kx = 0; kx < KW; ++kx) {
        const float wt = gpu::ld(w, (int64_t)c * KH * KW + ky * KW + kx);
#pragma unroll
        for (int v = 0; v < V; ++v) acc[v] += in[v * S + kx] * wt;
      }
    }
    const int64_t ob = ((int64_t)plane * p.oh + oy) * p.ow + ox0;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      if (ox0 + v < p.ow) {
        float o = acc[v];
        if (p.res) o += gpu::ld((const T *)p.res, ob + v);
        gpu::st((T *)p.y, ob + v, gpu::act(p.act, o, p.a, p.b));
      }
    }
  }
}

// Stride-1 K x K filters, dilation 1, by bands of whole planes: a block
// stages the input rows of P planes (zero padding, prologue applied once a
// value) in shared memory, E elements a load, and their filters; each
// thread holds its channel's filter in registers and computes strips of kPlaneV outputs
// along a row, reading the staged rows 16 bytes at a time (threads side by
// side take rows one below the other, and pitches of an odd number of
// 16-byte units keep those reads apart in the banks); the outputs go back
// through shared memory and are stored E elements at a time with bias,
// residual and activation. dw_fixed_kernel reads every input value once
// per strip through L1 in 2-byte loads, with the filter from memory at
// every tap: on ConvNeXt-T's 7 x 7 layers (fp16, batch 32, H100) it spent
// ~100 instructions an output.
constexpr int kPlaneV = 8;
constexpr int kPlaneThreads = 256;
constexpr size_t kPlaneSmem = 48 * 1024;

struct dw_plane_params {
  int planes;          // P: planes a block takes (then band = oh)
  int band, nbands;    // output rows a block takes, blocks per plane group
  int pitch, prow;     // staged input: row pitch (floats), rows
  int opitch;          // staged output row pitch (floats)
  int nplanes;         // planes in the launch
  gpu::divider by_in;  // input chunks of a plane (planes > 1)
  gpu::divider by_inrow, by_outrow, by_out, by_rows;
};

template <typename T, int E>
struct alignas(sizeof(T) * E) dw_pack {
  T v[E];
};

template <typename T, int K, int E, bool PRE>
__global__ void __launch_bounds__(kPlaneThreads) dw_plane_kernel(dw_params p, dw_plane_params q) {
  gpu::wait_prior();
  gpu::start_next();
  extern __shared__ float4 dw_smem[];
  float *in = (float *)dw_smem;  // [np][prow][pitch]
  const int plane_in = q.prow * q.pitch;
  const int g = blockIdx.x / q.nbands, bd = blockIdx.x - g * q.nbands;
  const int p0 = g * q.planes, np = min(q.planes, q.nplanes - p0);
  const int oy0 = bd * q.band, rows = min(q.band, p.oh - oy0);
  float *out = in + q.planes * plane_in;  // [np][band][opitch]
  const int out_plane = q.band * q.opitch;
  constexpr int KK4 = (K * K + 3) / 4 * 4;  // a plane's filter, padded to 16 bytes
  float *wsm = out + q.planes * out_plane;  // [np][KK4]
  for (int e = threadIdx.x; e < np * K * K; e += blockDim.x) {
    const int pl = e / (K * K), k = e - pl * K * K;
    wsm[pl * KK4 + k] = gpu::ld((const T *)p.w, (int64_t)((p0 + pl) % p.c) * K * K + k);
  }
  for (int e = threadIdx.x; e < np * plane_in / 4; e += blockDim.x) dw_smem[e] = make_float4(0.f, 0.f, 0.f, 0.f);
  __syncthreads();
  // Input rows iy in [lo, hi) land on staged row iy + ph - oy0.
  const int lo = max(0, oy0 - p.ph), hi = min(p.ih, oy0 + q.prow - p.ph);
  const int row_chunks = p.iw / E, chunks = (hi - lo) * row_chunks, hw = p.ih * p.iw;
  for (int e = threadIdx.x; e < np * chunks; e += blockDim.x) {
    const int pl = np > 1 ? gpu::div(e, q.by_in) : 0, r = e - pl * chunks;
    const int dy = gpu::div(r, q.by_inrow), ix = (r - dy * row_chunks) * E, plane = p0 + pl;
    const T *xs = (const T *)p.x + (int64_t)plane * hw + (int64_t)(lo + dy) * p.iw + ix;
    const dw_pack<T, E> v = *(const dw_pack<T, E> *)xs;
    const float pb = PRE && p.pre_bias ? gpu::ld((const T *)p.pre_bias, plane % p.c) : 0.f;
    float *dst = in + pl * plane_in + (lo + dy + p.ph - oy0) * q.pitch + ix + p.pw;
#pragma unroll
    for (int j = 0; j < E; ++j) {
      float f = gpu::ld(v.v, j);
      if (PRE) f = gpu::act(p.pre_act, f + pb, p.pre_a, p.pre_b);
      if (ix + p.pw + j < q.pitch) dst[j] = f;
    }
  }
  __syncthreads();
  // Item it: plane it / (band * nstrip), then strip, then row (fastest;
  // rows past the last band's end are skipped). Every thread's items are of
  // one plane: planes > 1 only when a block has a thread for each item.
  const int items = q.band * p.nstrip;
  if ((int)threadIdx.x < np * items) {
    const float4 *w4 = (const float4 *)(wsm + (np > 1 ? gpu::div(threadIdx.x, q.by_rows) / p.nstrip : 0) * KK4);
    float wr[KK4];
#pragma unroll
    for (int k = 0; k < KK4 / 4; ++k) {
      const float4 f = w4[k];
      wr[4 * k] = f.x;
      wr[4 * k + 1] = f.y;
      wr[4 * k + 2] = f.z;
      wr[4 * k + 3] = f.w;
    }
    constexpr int NIN4 = (kPlaneV + K - 1 + 3) / 4;
    for (int it = threadIdx.x; it < np * items; it += blockDim.x) {
      const int sr = gpu::div(it, q.by_rows);  // plane * nstrip + strip
      const int oy = it - sr * q.band, pl = np > 1 ? sr / p.nstrip : 0, ox0 = (sr - pl * p.nstrip) * kPlaneV;
      if (oy >= rows) continue;
      const float *src = in + pl * plane_in + oy * q.pitch + ox0;
      float acc[kPlaneV];
#pragma unroll
      for (int v = 0; v < kPlaneV; ++v) acc[v] = 0.f;
#pragma unroll
      for (int ky = 0; ky < K; ++ky) {
        float vin[NIN4 * 4];
#pragma unroll
        for (int j = 0; j < NIN4; ++j) {
          const float4 f = ((const float4 *)(src + ky * q.pitch))[j];
          vin[4 * j] = f.x;
          vin[4 * j + 1] = f.y;
          vin[4 * j + 2] = f.z;
          vin[4 * j + 3] = f.w;
        }
#pragma unroll
        for (int kx = 0; kx < K; ++kx)
#pragma unroll
          for (int v = 0; v < kPlaneV; ++v) acc[v] += vin[v + kx] * wr[ky * K + kx];
      }
      float4 *o = (float4 *)(out + pl * out_plane + oy * q.opitch + ox0);
#pragma unroll
      for (int v = 0; v < kPlaneV / 4; ++v)
        o[v] = make_float4(acc[4 * v], acc[4 * v + 1], acc[4 * v + 2], acc[4 * v + 3]);
    }
  }
  __syncthreads();
  const T *res = (const T *)p.res, *bias = (const T *)p.bias;
  const int orow_chunks = p.ow / E, ochunks = rows * orow_chunks;
  for (int e = threadIdx.x; e < np * ochunks; e += blockDim.x) {
    const int pl = np > 1 ? gpu::div(e, q.by_out) : 0, r = e - pl * ochunks;
    const int oy = gpu::div(r, q.by_outrow), ox = (r - oy * orow_chunks) * E, plane = p0 + pl;
    const int64_t at = ((int64_t)plane * p.oh + oy0 + oy) * p.ow + ox;
    const float b = bias ? gpu::ld(bias, plane % p.c) : 0.f;
    const float *src = out + pl * out_plane + oy * q.opitch + ox;
    dw_pack<T, E> rv = {}, o;
    if (res) rv = *(const dw_pack<T, E> *)(res + at);
    float f[E];
#pragma unroll
    for (int j = 0; j < E; ++j) f[j] = src[j] + b + (res ? gpu::ld(rv.v, j) : 0.f);
    if (p.act != OP_ACT_NONE)  // the same for the whole grid: no switch an element without one
#pragma unroll
      for (int j = 0; j < E; ++j) f[j] = gpu::act(p.act, f[j], p.a, p.b);
#pragma unroll
    for (int j = 0; j < E; ++j) gpu::st(o.v, j, f[j]);
    *(dw_pack<T, E> *)((T *)p.y + at) = o;
  }
}

// Any filter, strides and dilations: one output per thread.
template <typename T, bool PRE>
__global__ void dw_any_kernel(dw_params p) {
  gpu::wait_prior();
  gpu::start_next();
  const T *w = (const T *)p.w;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.total; i += step) {
    const int idx = (int)i;  // < total: 32-bit; a 32-bit counter could wrap on i + step
    const dw_pos<T, PRE> q(idx, p);  // strips of one output
    const int oy = q.oy, c = q.c, ox = q.strip;
    const float pb = q.pre_bias;
    const T *xp = q.xp;
    float acc = q.bias;
    for (int ky = 0; ky < p.kh; ++ky) {
      const int iy = oy * p.sh - p.ph + ky * p.dh;
      if (iy < 0 || iy >= p.ih) continue;
      const T *row = xp + (int64_t)iy * p.iw;
      for (int kx = 0; kx < p.kw; ++kx) {
        const float wt = gpu::ld(w, ((int64_t)c * p.kh + ky) * p.kw + kx);
        acc += load_in<T, PRE>(row, ox * p.sw - p.pw + kx * p.dw, p.iw, pb, p) * wt;
      }
    }
    if (p.res) acc += gpu::ld((const T *)p.res, idx);
    gpu::st((T *)p.y, idx, gpu::act(p.act, acc, p.a, p.b));
  }
}

constexpr int kThreads = 256;

// Launches kernel K over n images, as many per launch as keep p.total
// 32-bit (the caller checked that one image fits).
template <typename T, void (*K)(dw_params)>
int launch_images(dw_params p, int64_t n, gpuStream_t stream) {
  const int64_t per_image = (int64_t)p.c * p.oh * p.nstrip;
  const int64_t chunk = INT32_MAX / per_image;
  const int64_t in_image = (int64_t)p.c * p.ih * p.iw, out_image = (int64_t)p.c * p.oh * p.ow;
  for (int64_t i = 0; i < n; i += chunk) {
    dw_params q = p;
    const int64_t k = n - i < chunk ? n - i : chunk;
    q.total = (int)(k * per_image);
    q.x = (const T *)p.x + i * in_image;
    q.y = (T *)p.y + i * out_image;
    if (p.res) q.res = (const T *)p.res + i * out_image;
    gpu::launch(K, gpu::blocks_for(q.total, kThreads), kThreads, 0, stream, q);
    if (int e = gpu::last_error()) return e;
  }
  return 0;
}

// The smallest multiple of 4 floats, an odd number of 16-byte units, that
// holds n floats.
inline int odd_units(int n) {
  int u = (n + 3) / 4;
  return 4 * (u | 1);
}

// How dw_plane_kernel splits the work: a block takes up to kPlaneThreads
// strips (whole planes when one is smaller than that, else a band of rows),
// and bands get thinner while the grid would leave SMs idle (batch 1).
// False when even one band of one row does not fit in shared memory.
inline bool plane_split(const dw_params &p, int k, int64_t nplanes, dw_plane_params &q, size_t &smem) {
  const int nstrip = (p.ow + kPlaneV - 1) / kPlaneV;
  const int64_t items = (int64_t)p.oh * nstrip;
  q.pitch = odd_units(nstrip * kPlaneV + k - 1);
  q.opitch = odd_units(nstrip * kPlaneV);
  const size_t filter = (size_t)(k * k + 3) / 4 * 4;
  auto bytes = [&](int planes, int band) {
    return (size_t)planes * ((size_t)(band + k - 1) * q.pitch + (size_t)band * q.opitch + filter) * sizeof(float);
  };
  int planes = items >= kPlaneThreads ? 1 : (int)(kPlaneThreads / items);
  while (planes > 1 && (bytes(planes, p.oh) > kPlaneSmem || (nplanes + planes - 1) / planes < gpu::kFillBlocks))
    planes /= 2;
  int band = planes > 1 ? p.oh : (int)(kPlaneThreads / nstrip < p.oh ? kPlaneThreads / nstrip : p.oh);
  if (band < 1) band = 1;
  if (planes == 1) {
    while (band > k && nplanes * ((p.oh + band - 1) / band) < gpu::kFillBlocks) band = (band + 1) / 2;
    while (band > 1 && bytes(1, band) > kPlaneSmem) band = (band + 1) / 2;
  }
  if (bytes(planes, band) > kPlaneSmem) return false;
  q.planes = planes;
  q.band = band;
  q.nbands = (p.oh + band - 1) / band;
  q.prow = band + k - 1;
  q.nplanes = (int)nplanes;
  smem = bytes(planes, band);
  return (nplanes + planes - 1) / planes * q.nbands < INT32_MAX;
}

inline bool aligned_to(const void *ptr, size_t bytes) { return !ptr || (uintptr_t)ptr % bytes == 0; }

template <typename T, int K, int E, bool PRE>
int launch_plane_e(dw_params p, const dw_plane_params &q, size_t smem, int64_t blocks, int threads,
                   gpuStream_t stream) {
  return gpu::launch(dw_plane_kernel<T, K, E, PRE>, dim3((unsigned)blocks), dim3(threads), smem, stream, p, q);
}

template <typename T, int K, bool PRE>
int launch_plane(dw_params p, int64_t n, gpuStream_t stream) {
  dw_plane_params q = {};
  size_t smem = 0;
  const int64_t nplanes = n * p.c;
  if (nplanes >= INT32_MAX || !plane_split(p, K, nplanes, q, smem)) return -1;
  p.nstrip = (p.ow + kPlaneV - 1) / kPlaneV;
  // E elements a load and store: 16 bytes where rows, planes and pointers allow.
  int e = 16 / (int)sizeof(T);
  while (e > 1 && (p.iw % e || p.ow % e || !aligned_to(p.x, e * sizeof(T)) || !aligned_to(p.y, e * sizeof(T)) ||
                   !aligned_to(p.res, e * sizeof(T))))
    e /= 2;
  // Whole planes (band = oh): every block stages input rows [0, min(ih, prow - ph)).
  const int whole_rows = q.prow - p.ph < p.ih ? q.prow - p.ph : p.ih;
  q.by_in = gpu::make_divider((unsigned)(whole_rows > 0 ? whole_rows * (p.iw / e) : 1));
  q.by_inrow = gpu::make_divider((unsigned)(p.iw / e));
  q.by_outrow = gpu::make_divider((unsigned)(p.ow / e));
  q.by_out = gpu::make_divider((unsigned)(q.band * (p.ow / e)));
  q.by_rows = gpu::make_divider((unsigned)q.band);
  const int64_t blocks = (nplanes + q.planes - 1) / q.planes * q.nbands;
  const int64_t work = (int64_t)q.planes * q.band * p.nstrip;
  const int threads = work >= kPlaneThreads ? kPlaneThreads : (int)((work + 31) / 32 * 32);
  switch (e) {
    case 8: return launch_plane_e<T, K, 8, PRE>(p, q, smem, blocks, threads, stream);
    case 4: return launch_plane_e<T, K, 4, PRE>(p, q, smem, blocks, threads, stream);
    case 2: return launch_plane_e<T, K, 2, PRE>(p, q, smem, blocks, threads, stream);
    default: return launch_plane_e<T, K, 1, PRE>(p, q, smem, blocks, threads, stream);
  }
}

template <typename T, int KH, int KW, int S, bool PRE>
int launch_fixed(dw_params p, int64_t n, gpuStream_t stream) {
  p.nstrip = (p.ow + 3) / 4;
  p.by_nstrip = gpu::make_divider((unsigned)p.nstrip);
  return launch_images<T, dw_fixed_kernel<T, KH, KW, S, 4, PRE>>(p, n, stream);
}

// Stride-1 3 x 3 filters with at least kPlaneMinOutputs outputs run on
// dw_plane_kernel too (else dw_fixed_kernel); HIPDNN_EP_DEPTHWISE_PLANE=0
// keeps every filter off it (A/B runs; read once a process). Measured on an H200 (hipdnn-ep-run, device
// I/O, ms, fixed / plane for every stride-1 3 x 3 and 5 x 5): MobileNetV2
// batch 32 fp16 1.38 / 1.23, fp32 1.61 / 1.42, batch 1 the same; but
// EfficientNet-B0 batch 1 fp16 0.387 / 0.448 (small planes make small
// blocks) and batch 32 1.86 / 1.89; hence the size floor and 5 x 5 stays.
constexpr int64_t kPlaneMinOutputs = 4 << 20;
std::atomic<int> plane_wanted{-1};
inline bool plane_kernels() { return gpu::env_switch_on("HIPDNN_EP_DEPTHWISE_PLANE", plane_wanted); }

// The filter size (3 or 7) at which p, over n images, goes to
// dw_plane_kernel; 0: the strip kernels.
inline int plane_filter(const dw_params &p, int64_t n) {
  if (p.dh != 1 || p.dw != 1 || p.sh != 1 || p.sw != 1 || p.kh != p.kw || !plane_kernels()) return 0;
  if (p.kh == 7) return 7;
  return p.kh == 3 && n * p.c * p.oh * p.ow >= kPlaneMinOutputs ? 3 : 0;
}

template <typename T, bool PRE>
int launch_pre(dw_params p, int64_t n, gpuStream_t stream) {
  const bool unit = p.dh == 1 && p.dw == 1 && p.sh == p.sw;
  const int plane = plane_filter(p, n);
  if (unit && p.kh == 3 && p.kw == 3 && p.sh == 1) {
    if (plane == 3 && launch_plane<T, 3, PRE>(p, n, stream) == 0) return 0;
    return launch_fixed<T, 3, 3, 1, PRE>(p, n, stream);
  }
  if (unit && p.kh == 3 && p.kw == 3 && p.sh == 2) return launch_fixed<T, 3, 3, 2, PRE>(p, n, stream);
  if (unit && p.kh == 5 && p.kw == 5 && p.sh == 1) return launch_fixed<T, 5, 5, 1, PRE>(p, n, stream);
  if (unit && p.kh == 5 && p.kw == 5 && p.sh == 2) return launch_fixed<T, 5, 5, 2, PRE>(p, n, stream);
  if (unit && p.kh == 7 && p.kw == 7 && p.sh == 1) {  // ConvNeXt
    if (plane == 7 && launch_plane<T, 7, PRE>(p, n, stream) == 0) return 0;
    return launch_fixed<T, 7, 7, 1, PRE>(p, n, stream);
  }
  p.nstrip = p.ow;
  p.by_nstrip = gpu::make_divider((unsigned)p.ow);
  return launch_images<T, dw_any_kernel<T, PRE>>(p, n, stream);
}

template <typename T>
int launch(dw_params p, int64_t n, gpuStream_t stream) {
  return p.pre_bias || p.pre_act != OP_ACT_NONE ? launch_pre<T, true>(p, n, stream)
                                                 : launch_pre<T, false>(p, n, stream);
}

// ---- channels last ----
// x [n, ih, iw, c], w [c, kh, kw] (channels-last W [c, kh, kw, 1]), y and
// the residual [n, oh, ow, c]. A block takes a slice of the channels (cvb
// vectors of E) and spb strips of kNhwcV outputs along a row; the slice's
// filters go through shared memory as fp32 [kh * KW][slice]. Each thread
// computes E channels (one 16-byte load of each input position, coalesced
// across the threads of a slice) for a strip of V outputs, so an input
// column its taps share is loaded once a filter row; V is 1 where strips of
// kNhwcV would leave the GPU short of threads (batch 1).
constexpr int kNhwcV = 4;
constexpr int kNhwcThreads = 256;
constexpr size_t kNhwcSmem = 48 * 1024;

struct dwn_params {
  int cvb, spb;  // channel vectors and strips a block takes
  int nstrip;    // strips a row
  int total;     // n * oh * nstrip (32-bit)
  gpu::divider by_cvb, by_nstrip, by_oh;
};

template <typename T, int E, int KW, int S, int V>
__global__ void __launch_bounds__(kNhwcThreads) dw_nhwc_kernel(dw_params p, dwn_params q) {
  gpu::wait_prior();
  gpu::start_next();
  extern __shared__ float4 dwn_smem[];
  float *wsm = (float *)dwn_smem;  // [kh * KW][cb]
  const int cb = q.cvb * E, kk = p.kh * KW, cbase = blockIdx.y * cb;
  for (int e = threadIdx.x; e < cb * kk; e += blockDim.x) {  // a channel's taps side by side: coalesced
    const int cl = e / kk, tap = e - cl * kk, c = cbase + cl;
    wsm[tap * cb + cl] = c < p.c ? gpu::ld((const T *)p.w, (int64_t)c * kk + tap) : 0.f;
  }
  __syncthreads();
  const int sl = gpu::div((int)threadIdx.x, q.by_cvb), cl0 = ((int)threadIdx.x - sl * q.cvb) * E;
  const int strip = blockIdx.x * q.spb + sl, c0 = cbase + cl0;
  if (sl >= q.spb || strip >= q.total || c0 >= p.c) return;
  const int r = gpu::div(strip, q.by_nstrip), ox0 = (strip - r * q.nstrip) * V;
  const int img = gpu::div(r, q.by_oh), oy = r - img * p.oh;
  float acc[V][E];
  {
    float b[E];
    if (p.bias) {
      gpu::ldv<E>((const T *)p.bias, c0, b);
    } else {
#pragma unroll
      for (int e = 0; e < E; ++e) b[e] = 0.f;
    }
#pragma unroll
    for (int v = 0; v < V; ++v)
#pragma unroll
      for (int e = 0; e < E; ++e) acc[v][e] = b[e];
  }
  constexpr int NIN = (V - 1) * S + KW;
  const int ix0 = ox0 * S - p.pw;
  const T *xb = (const T *)p.x + (int64_t)img * p.ih * p.iw * p.c + c0;
  for (int ky = 0; ky < p.kh; ++ky) {
    const int iy = oy * S - p.ph + ky;
    if (iy < 0 || iy >= p.ih) continue;
    float f[KW][E];
    const float *wr = wsm + ky * KW * cb + cl0;
#pragma unroll
    for (int kx = 0; kx < KW; ++kx) {
      if (E % 4 == 0) {
#pragma unroll
        for (int e = 0; e < E; e += 4) {
          const float4 v = *(const float4 *)(wr + kx * cb + e);
          f[kx][e] = v.x, f[kx][e + 1] = v.y, f[kx][e + 2] = v.z, f[kx][e + 3] = v.w;
        }
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e) f[kx][e] = wr[kx * cb + e];
      }
    }
    const T *xr = xb + (int64_t)iy * p.iw * p.c;
#pragma unroll
    for (int j = 0; j < NIN; ++j) {
      const int ix = ix0 + j;
      float in[E];
      if (ix >= 0 && ix < p.iw) {
        gpu::ldv<E>(xr, (int64_t)ix * p.c, in);
      } else {
#pragma unroll
        for (int e = 0; e < E; ++e) in[e] = 0.f;
      }
#pragma unroll
      for (int kx = 0; kx < KW; ++kx) {
        const int d = j - kx;  // output d / S of the strip takes this tap when d % S == 0
        if (d >= 0 && d % S == 0 && d / S < V) {
#pragma unroll
          for (int e = 0; e < E; ++e) acc[d / S][e] += in[e] * f[kx][e];
        }
      }
    }
  }
  T *yb = (T *)p.y + ((int64_t)img * p.oh + oy) * p.ow * p.c + c0;
  const T *rb = p.res ? (const T *)p.res + ((int64_t)img * p.oh + oy) * p.ow * p.c + c0 : nullptr;
#pragma unroll
  for (int v = 0; v < V; ++v) {
    if (ox0 + v >= p.ow) break;
    float o[E];
    if (rb) gpu::ldv<E>(rb, (int64_t)(ox0 + v) * p.c, o);
#pragma unroll
    for (int e = 0; e < E; ++e) o[e] = gpu::act(p.act, acc[v][e] + (rb ? o[e] : 0.f), p.a, p.b);
    gpu::stv<E>(yb, (int64_t)(ox0 + v) * p.c, o);
  }
}

// Stride-1 K x K filters, dilation 1, channels last, by bands: a block
// takes cb channels of one image and a band of output rows (every column).
// It stages the band's input rows in shared memory channel by channel (fp32,
// zero padded, E channels a 16-byte load), so each thread can hold one
// channel's filter in registers and compute items of kBandR rows x kBandV
// columns from 16-byte reads of the staged rows (one input row feeds both
// output rows); a plane's stride is an odd number of 16-byte units, so the
// eight channels of a quarter warp read eight bank groups. Stores are NHWC,
// the lanes of a warp side by side on the channels. dw_nhwc_kernel reads
// every tap through L1 and converts it each time: ConvNeXt-T's first 7x7
// (fp16, batch 32, H200) took 100 us there, 65 in dw_plane_kernel (NCHW).
constexpr int kBandV = 8, kBandR = 2;
constexpr size_t kBandSmem = 48 * 1024;

struct dwb_params {
  int cb, band, nbands, nslices;  // channels and output rows a block; bands an image, channel slices
  int pitch, ps;                  // staged row pitch and plane stride (floats)
  int nstrip;                     // strips of kBandV columns a row
};

template <typename T, int K, int E>
__global__ void __launch_bounds__(256) dw_band_nhwc_kernel(dw_params p, dwb_params q) {
  gpu::wait_prior();
  gpu::start_next();
  extern __shared__ float4 dwb_smem[];
  float *in = (float *)dwb_smem;  // [cb][prow][pitch], planes q.ps apart
  constexpr int KK = K * K;
  float *wsm = in + q.cb * q.ps;  // [cb][KK]
  const int bi = blockIdx.x % q.nbands, r = blockIdx.x / q.nbands;
  const int slice = r % q.nslices, img = r / q.nslices;
  const int c0 = slice * q.cb, oy0 = bi * q.band, rows = min(q.band, p.oh - oy0), prow = q.band + K - 1;
  // Loads go out kBandLoads at a time before their stores: a small block
  // (batch 1) otherwise waits out one memory trip per load in turn.
  constexpr int kBandLoads = 4;
  const int nw = q.cb * KK, step = (int)blockDim.x;
  for (int e0 = threadIdx.x; e0 < nw; e0 += kBandLoads * step) {
    float f[kBandLoads];
#pragma unroll
    for (int u = 0; u < kBandLoads; ++u) {
      const int e = e0 + u * step, cl = e / KK;
      f[u] = e < nw && c0 + cl < p.c ? gpu::ld((const T *)p.w, (int64_t)(c0 + cl) * KK + (e - cl * KK)) : 0.f;
    }
#pragma unroll
    for (int u = 0; u < kBandLoads; ++u)
      if (e0 + u * step < nw) wsm[e0 + u * step] = f[u];
  }
  for (int e = threadIdx.x; e < q.cb * q.ps / 4; e += step) dwb_smem[e] = make_float4(0.f, 0.f, 0.f, 0.f);
  __syncthreads();
  // Input rows iy in [lo, hi) land on staged row iy + ph - oy0.
  const int lo = max(0, oy0 - p.ph), hi = min(p.ih, oy0 + prow - p.ph), nvec = q.cb / E;
  const int chunks = (hi - lo) * p.iw * nvec;
  for (int e0 = threadIdx.x; e0 < chunks; e0 += kBandLoads * step) {
    float v[kBandLoads][E];
#pragma unroll
    for (int u = 0; u < kBandLoads; ++u) {
      const int e = e0 + u * step, t = e / nvec, cv = e - t * nvec, dy = t / p.iw, ix = t - dy * p.iw;
      if (e < chunks) gpu::ldv<E>((const T *)p.x, (((int64_t)img * p.ih + lo + dy) * p.iw + ix) * p.c + c0 + cv * E, v[u]);
    }
#pragma unroll
    for (int u = 0; u < kBandLoads; ++u) {
      const int e = e0 + u * step, t = e / nvec, cv = e - t * nvec, dy = t / p.iw, ix = t - dy * p.iw;
      if (e >= chunks) break;
      float *dst = in + cv * E * q.ps + (lo + dy + p.ph - oy0) * q.pitch + ix + p.pw;
#pragma unroll
      for (int j = 0; j < E; ++j) dst[j * q.ps] = v[u][j];
    }
  }
  __syncthreads();
  const int c = (int)threadIdx.x % q.cb;  // blockDim is a multiple of cb: a thread keeps its channel
  float wr[KK];
#pragma unroll
  for (int k = 0; k < KK; ++k) wr[k] = wsm[c * KK + k];
  const float b = p.bias && c0 + c < p.c ? gpu::ld((const T *)p.bias, c0 + c) : 0.f;
  const T *res = (const T *)p.res;
  const int items = (rows + kBandR - 1) / kBandR * q.nstrip * q.cb;
  for (int it = threadIdx.x; it < items; it += blockDim.x) {
    const int rest = it / q.cb, rp = rest / q.nstrip, s = rest - rp * q.nstrip;
    const float *src = in + c * q.ps + rp * kBandR * q.pitch + s * kBandV;
    float acc[kBandR][kBandV];
#pragma unroll
    for (int rr = 0; rr < kBandR; ++rr)
#pragma unroll
      for (int v = 0; v < kBandV; ++v) acc[rr][v] = b;
#pragma unroll
    for (int iyr = 0; iyr < K + kBandR - 1; ++iyr) {
      float vin[16];  // kBandV + K - 1 <= 16 columns
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float4 f = ((const float4 *)(src + iyr * q.pitch))[j];
        vin[4 * j] = f.x, vin[4 * j + 1] = f.y, vin[4 * j + 2] = f.z, vin[4 * j + 3] = f.w;
      }
#pragma unroll
      for (int rr = 0; rr < kBandR; ++rr) {
        const int ky = iyr - rr;
        if (ky < 0 || ky >= K) continue;
#pragma unroll
        for (int kx = 0; kx < K; ++kx)
#pragma unroll
          for (int v = 0; v < kBandV; ++v) acc[rr][v] += vin[v + kx] * wr[ky * K + kx];
      }
    }
    if (c0 + c >= p.c) continue;
#pragma unroll
    for (int rr = 0; rr < kBandR; ++rr) {
      const int oy = rp * kBandR + rr;
      if (oy >= rows) break;
      const int64_t row = (((int64_t)img * p.oh + oy0 + oy) * p.ow) * p.c + c0 + c;
#pragma unroll
      for (int v = 0; v < kBandV; ++v) {
        const int ox = s * kBandV + v;
        if (ox >= p.ow) break;
        const int64_t at = row + (int64_t)ox * p.c;
        float o = acc[rr][v] + (res ? gpu::ld(res, at) : 0.f);
        gpu::st((T *)p.y, at, p.act == OP_ACT_NONE ? o : gpu::act(p.act, o, p.a, p.b));
      }
    }
  }
}

// The banded split: cb channels (32, 16 or 8; 16-byte loads want 16 or
// more) and bands of rows as tall as shared memory allows, thinner (then
// narrower) while the grid would leave SMs idle (batch 1). False when it
// does not fit or the channels are no multiple of 8.
inline bool band_split(const dw_params &p, int k, int64_t n, dwb_params &q, size_t &smem) {
  if (p.c % 8) return false;
  q.nstrip = (p.ow + kBandV - 1) / kBandV;
  q.pitch = odd_units(q.nstrip * kBandV + 8);  // a strip reads 16 columns
  // a staged plane: an odd number of 16-byte units (pitch is a multiple of 4)
  auto plane = [&](int band) { return (band + k - 1) * q.pitch | 4; };
  auto bytes = [&](int cb, int band) { return (size_t)cb * ((size_t)plane(band) + (size_t)k * k) * sizeof(float); };
  auto blocks = [&](int cb, int band) { return n * ((p.c + cb - 1) / cb) * ((p.oh + band - 1) / band); };
  int cb = p.c % 32 == 0 ? 32 : p.c % 16 == 0 ? 16 : 8, band = p.oh;
  while (bytes(cb, band) > kBandSmem) {
    if (band > 8) band = (band + 1) / 2;
    else if (cb > 16) cb /= 2;
    else if (band > 2) band = (band + 1) / 2;
    else if (cb > 8) cb /= 2;
    else return false;
  }
  while (blocks(cb, band) < gpu::kFillBlocks) {
    if (band > 2) band = (band + 1) / 2;
    else if (cb > 8) cb /= 2;
    else break;
  }
  q.cb = cb;
  q.band = band;
  q.nbands = (p.oh + band - 1) / band;
  q.nslices = (p.c + cb - 1) / cb;
  q.ps = plane(band);
  smem = bytes(cb, band);
  return blocks(cb, band) < INT32_MAX;
}

template <typename T, int K>
int launch_band(dw_params p, int64_t n, gpuStream_t stream) {
  constexpr int E = 16 / sizeof(T);
  if (!aligned_to(p.x, 16)) return -1;
  dwb_params q = {};
  size_t smem = 0;
  if (!band_split(p, K, n, q, smem)) return -1;
  const int items = (q.band + kBandR - 1) / kBandR * q.nstrip * q.cb;
  const int threads = items >= 256 ? 256 : (items + 31) / 32 * 32;
  const int64_t blocks = n * q.nslices * q.nbands;
  return gpu::launch(dw_band_nhwc_kernel<T, K, E>, dim3((unsigned)blocks), dim3(threads), smem, stream, p, q);
}

template <typename T, int E, int KW, int S>
int launch_nhwc_shape(dw_params p, dwn_params q, int v, dim3 grid, size_t smem, gpuStream_t stream) {
  const dim3 block((unsigned)(q.cvb * q.spb));
  if (v == 1) return gpu::launch(dw_nhwc_kernel<T, E, KW, S, 1>, grid, block, smem, stream, p, q);
  return gpu::launch(dw_nhwc_kernel<T, E, KW, S, kNhwcV>, grid, block, smem, stream, p, q);
}

template <typename T, int E>
int launch_nhwc_e(dw_params p, dwn_params q, int v, dim3 grid, size_t smem, gpuStream_t stream) {
  if (p.kw == 3 && p.sw == 1) return launch_nhwc_shape<T, E, 3, 1>(p, q, v, grid, smem, stream);
  if (p.kw == 3 && p.sw == 2) return launch_nhwc_shape<T, E, 3, 2>(p, q, v, grid, smem, stream);
  if (p.kw == 5 && p.sw == 1) return launch_nhwc_shape<T, E, 5, 1>(p, q, v, grid, smem, stream);
  if (p.kw == 5 && p.sw == 2) return launch_nhwc_shape<T, E, 5, 2>(p, q, v, grid, smem, stream);
  if (p.kw == 7 && p.sw == 1) return launch_nhwc_shape<T, E, 7, 1>(p, q, v, grid, smem, stream);
  return -1;
}

template <typename T>
int launch_nhwc(dw_params p, int64_t n, gpuStream_t stream) {
  if (p.sh == 1 && p.sw == 1 && p.kh == p.kw && (p.kw == 3 || p.kw == 5 || p.kw == 7)) {
    const int e = p.kw == 3 ? launch_band<T, 3>(p, n, stream) : p.kw == 5 ? launch_band<T, 5>(p, n, stream)
                                                                 : launch_band<T, 7>(p, n, stream);
    if (e != -1) return e;
  }
  // E channels a thread: 16 bytes where the channels and every pointer allow, else one.
  int e = 16 / (int)sizeof(T);
  if (p.c % e || !aligned_to(p.x, 16) || !aligned_to(p.y, 16) || !aligned_to(p.res, 16) || !aligned_to(p.bias, 16))
    e = 1;
  const int ncv = p.c / e, kk = p.kh * p.kw;
  int cvb = (int)(kNhwcSmem / ((size_t)e * kk * sizeof(float)));
  if (cvb > kNhwcThreads) cvb = kNhwcThreads;
  if (cvb > ncv) cvb = ncv;
  if (cvb < 1) return -1;
  const int nby = (ncv + cvb - 1) / cvb;
  cvb = (ncv + nby - 1) / nby;  // the slices evenly
  dwn_params q = {};
  q.cvb = cvb;
  // Strips of one output where those of kNhwcV would make fewer threads
  // than two blocks of kNhwcThreads an SM; blocks of 64 threads at the
  // least where even those are few.
  const int v = (int64_t)n * p.oh * ((p.ow + kNhwcV - 1) / kNhwcV) * ncv < gpu::kFillBlocks * kNhwcThreads ? 1 : kNhwcV;
  q.nstrip = (p.ow + v - 1) / v;
  const int64_t total = n * p.oh * q.nstrip;
  int threads = kNhwcThreads;
  while (threads > 64 && threads / 2 >= cvb && (total + threads / cvb - 1) / (threads / cvb) * nby < gpu::kFillBlocks)
    threads /= 2;
  q.spb = threads / cvb;
  if (total >= INT32_MAX) return -1;
  q.total = (int)total;
  q.by_cvb = gpu::make_divider((unsigned)cvb);
  q.by_nstrip = gpu::make_divider((unsigned)q.nstrip);
  q.by_oh = gpu::make_divider((unsigned)p.oh);
  const dim3 grid((unsigned)((total + q.spb - 1) / q.spb), (unsigned)nby);
  const size_t smem = (size_t)cvb * e * kk * sizeof(float);
  if (e == 16 / (int)sizeof(T)) return launch_nhwc_e<T, 16 / sizeof(T)>(p, q, v, grid, smem, stream);
  return launch_nhwc_e<T, 1>(p, q, v, grid, smem, stream);
}

}  // namespace

extern "C" int gpu_conv_depthwise_nhwc_fits(const gpu_conv2d_shape *s) {
  const int64_t k = s->kw;
  return gpu::conv2d_fits(s) && s->dh == 1 && s->dw == 1 && s->sh == s->sw &&
         ((k == 3 || k == 5) ? s->sw <= 2 : k == 7 && s->sw == 1) &&
         s->kh * s->kw * 8 * (int64_t)sizeof(float) <= (int64_t)kNhwcSmem &&
         s->n * s->oh * s->ow < INT32_MAX;
}

extern "C" int gpu_conv_depthwise_nhwc(const void *x, const void *w, const void *bias, const void *residual, void *y,
                                       int dtype, const gpu_conv2d_shape *s, int act, float alpha, float beta,
                                       void *stream) {
  if (s->n * s->c * s->oh * s->ow <= 0) return 0;
  if (!gpu_conv_depthwise_nhwc_fits(s)) return -1;
  dw_params p = {};
  if (!gpu::make_conv2d_args(x, w, bias, residual, y, s, act, alpha, beta, p)) return -1;
  GPU_DISPATCH(dtype, launch_nhwc, p, s->n, (gpuStream_t)stream);
}

extern "C" int gpu_conv_depthwise_on_plane(const gpu_conv2d_shape *s) {
  dw_params p = {};
  if (!gpu_conv_depthwise_fits(s) || !gpu::make_conv2d_args(nullptr, nullptr, nullptr, nullptr, nullptr, s,
                                                             OP_ACT_NONE, 0.f, 0.f, p))
    return 0;
  const int k = plane_filter(p, s->n);
  dw_plane_params q = {};
  size_t smem = 0;
  return k && s->n * s->c < INT32_MAX && plane_split(p, k, s->n * s->c, q, smem);
}

extern "C" int gpu_conv_depthwise_fits(const gpu_conv2d_shape *s) {
  // Index math is 32-bit within a launch; a launch holds whole images.
  return gpu::conv2d_fits(s) && s->c * s->oh * s->ow < INT32_MAX && s->ih * s->iw < INT32_MAX;
}

extern "C" int gpu_conv_depthwise(const void *x, const void *w, const void *bias,
                                  const void *residual, void *y, int dtype, const gpu_conv2d_shape *s,
                                  int act, float alpha, float beta, const gpu_dw_prologue *pre,
                                  void *stream) {
  if (s->n * s->c * s->oh * s->ow <= 0) return 0;
  if (!gpu_conv_depthwise_fits(s)) return -1;
  dw_params p = {};
  if (!gpu::make_conv2d_args(x, w, bias, residual, y, s, act, alpha, beta, p)) return -1;
  p.pre_act = pre ? pre->act : OP_ACT_NONE;
  p.pre_bias = pre ? pre->bias : nullptr;
  p.pre_a = pre ? pre->alpha : 0.f;
  p.pre_b = pre ? pre->beta : 0.f;
  p.by_oh = gpu::make_divider((unsigned)p.oh);
  p.by_c = gpu::make_divider((unsigned)p.c);
  GPU_DISPATCH(dtype, launch, p, s->n, (gpuStream_t)stream);
}
