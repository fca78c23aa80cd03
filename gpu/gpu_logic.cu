// gpu_logic: comparisons and logic with broadcasting, IsNaN / IsInf / Not;
// bool (one byte) outputs. Floats compare as floats (doubles for fp64),
// integers as 64-bit integers.
#include "gpu/gpu_common.cuh"

namespace {

template <typename T> struct val { using type = long long; };
template <> struct val<float> { using type = float; };
template <> struct val<gpu_half> { using type = float; };
template <> struct val<gpu::bf16> { using type = float; };
template <> struct val<double> { using type = double; };

template <typename T> __device__ __forceinline__ typename val<T>::type load(const T *p, int64_t i) { return p[i]; }
template <> __device__ __forceinline__ float load(const gpu_half *p, int64_t i) { return gpu::ld(p, i); }
template <> __device__ __forceinline__ float load(const gpu::bf16 *p, int64_t i) { return gpu::ld(p, i); }

template <typename V>
__device__ __forceinline__ bool apply(int op, V u, V v) {
  switch (op) {
    case GPU_LOGIC_EQ: return u == v;
    case GPU_LOGIC_LT: return u < v;
    case GPU_LOGIC_LE: return u <= v;
    case GPU_LOGIC_GT: return u > v;
    case GPU_LOGIC_GE: return u >= v;
    case GPU_LOGIC_AND: return u != 0 && v != 0;
    case GPU_LOGIC_OR: return u != 0 || v != 0;
    default: return (u != 0) != (v != 0);
  }
}

template <typename T>
__global__ void logic_kernel(const T *a, const T *b, unsigned char *y, int64_t n, gpu_bcast bc, int op) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t rem = i, oa = 0, ob = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      const int64_t q = rem / bc.dims[d], r = rem - q * bc.dims[d];
      oa += r * bc.sa[d];
      ob += r * bc.sb[d];
      rem = q;
    }
    y[i] = apply(op, load(a, oa), load(b, ob));
  }
}

template <typename T>
__global__ void logic_unary_kernel(const T *a, unsigned char *y, int64_t n, int op, int neg, int pos) {
  gpu::wait_prior();
  gpu::start_next();
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const auto v = load(a, i);
    bool r;
    if (op == GPU_LOGIC_NOT) r = v == 0;
    else if (op == GPU_LOGIC_ISNAN) r = v != v;
    else r = (v - v != v - v) && v == v && ((v > 0 && pos) || (v < 0 && neg));  // inf: inf - inf is NaN
    y[i] = r;
  }
}

template <typename T>
int logic(const void *a, const void *b, void *y, int op, const gpu_bcast *bc, int neg, int pos, gpuStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < bc->rank; ++d) n *= bc->dims[d];
  if (n <= 0) return 0;
  if (!b)
    gpu::launch(logic_unary_kernel<T>, gpu::blocks_for(n, 256), 256, 0, s, (const T *)a, (unsigned char *)y, n, op, neg,
                pos);
  else
    gpu::launch(logic_kernel<T>, gpu::blocks_for(n, 256), 256, 0, s, (const T *)a, (const T *)b, (unsigned char *)y, n,
                *bc, op);
  return gpu::last_error();
}

}  // namespace

extern "C" int gpu_logic(const void *a, const void *b, void *y, int dtype, int op, const gpu_bcast *bc, int detect_neg,
                         int detect_pos, void *stream) {
  if (bc->rank < 1 || bc->rank > GPU_MAX_DIMS) return -1;
  gpuStream_t s = (gpuStream_t)stream;
  switch (dtype) {
    case GPU_DT_F32: return logic<float>(a, b, y, op, bc, detect_neg, detect_pos, s);
    case GPU_DT_F16: return logic<gpu_half>(a, b, y, op, bc, detect_neg, detect_pos, s);
    case GPU_DT_BF16: return logic<gpu::bf16>(a, b, y, op, bc, detect_neg, detect_pos, s);
    case GPU_DT_F64: return logic<double>(a, b, y, op, bc, detect_neg, detect_pos, s);
    case GPU_DT_I8: return logic<signed char>(a, b, y, op, bc, detect_neg, detect_pos, s);
    case GPU_DT_U8:
    case GPU_DT_BOOL: return logic<unsigned char>(a, b, y, op, bc, detect_neg, detect_pos, s);
    case GPU_DT_I32: return logic<int>(a, b, y, op, bc, detect_neg, detect_pos, s);
    case GPU_DT_I64: return logic<long long>(a, b, y, op, bc, detect_neg, detect_pos, s);
    default: return -1;
  }
}
