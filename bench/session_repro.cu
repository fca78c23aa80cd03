// bench_session_repro: the process-history slowdown (benchmarks.md,
// 2026-11-28) without ONNX Runtime and without our EP. A "model" graph is
// captured on one stream (12 layers of cuBLASLt fp16 matmuls at ViT-B/16
// batch 1 shapes, a small kernel after each) and its replay timed; then,
// four times, a "session" like a small one of our EP does its first runs
// (a new stream, its own buffers, its own cuBLASLt handle and matmul
// descriptors, two eager runs of matmul + kernel + matmul, then the same
// captured and launched) and is kept; the model's replay is timed after
// each. Our EP's ViT session steps from 0.47 to 0.51 ms at the third such
// session of the EP (tiny ones too); this says whether CUDA and cuBLASLt
// alone do the same.
//
//   build/bin/bench_session_repro [--no-capture] [--no-blas] [--same-stream] [--shared-handle]
//                                 [--alloc-only | --small-allocs-only | --workspace-only | --heuristic-only |
//                                  --memsets-only | --kernels-only | --new-kernel-only | --kernels-new-buffer]
//                                 [--sessions N]
//
// --no-capture: the sessions run eagerly only; --no-blas: their matmuls
// are a plain kernel (no cuBLASLt); --same-stream: every session uses one
// side stream made up front; --shared-handle: the model's cuBLASLt handle;
// --alloc-only: a session is only its nine device buffers (a 32 MiB
// workspace and eight of 128 KiB), --small-allocs-only nine of 4 KiB,
// --workspace-only the workspace alone; --heuristic-only: two matmuls'
// descriptors and cuBLASLt heuristic queries, nothing else; --memsets-only:
// their buffers allocated and cleared with cudaMemset, nothing else;
// --kernels-only: a small kernel the model has loaded, twice on the side
// stream over one of the model's buffers; --new-kernel-only: a kernel the
// model never ran (loaded by the first session) over the model's buffers;
// --kernels-new-buffer: the loaded kernel over a buffer allocated for it.
// cuBLASLt is loaded at run time (libcublasLt.so.13, as the EP does).
// Prints microseconds a replay: the median of 5 batches of 200.
// Exit status 0 when it ran, 2 when it could not.
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>

#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "graph_replay.cuh"

#define LK(x)                                                                \
  do {                                                                       \
    cublasStatus_t s_ = (x);                                                 \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                       \
      printf("%s:%d: cuBLASLt status %d\n", __FILE__, __LINE__, (int)s_);    \
      exit(2);                                                               \
    }                                                                        \
  } while (0)

static struct {
  __typeof__(&cublasLtCreate) create;
  __typeof__(&cublasLtMatmulDescCreate) desc_create;
  __typeof__(&cublasLtMatmulDescSetAttribute) desc_set;
  __typeof__(&cublasLtMatrixLayoutCreate) layout_create;
  __typeof__(&cublasLtMatmulPreferenceCreate) pref_create;
  __typeof__(&cublasLtMatmulPreferenceSetAttribute) pref_set;
  __typeof__(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  __typeof__(&cublasLtMatmul) matmul;
} lt;

static void load_lt() {
  void *h = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    printf("cannot load libcublasLt.so.13: %s\n", dlerror());
    exit(2);
  }
  *(void **)&lt.create = dlsym(h, "cublasLtCreate");
  *(void **)&lt.desc_create = dlsym(h, "cublasLtMatmulDescCreate");
  *(void **)&lt.desc_set = dlsym(h, "cublasLtMatmulDescSetAttribute");
  *(void **)&lt.layout_create = dlsym(h, "cublasLtMatrixLayoutCreate");
  *(void **)&lt.pref_create = dlsym(h, "cublasLtMatmulPreferenceCreate");
  *(void **)&lt.pref_set = dlsym(h, "cublasLtMatmulPreferenceSetAttribute");
  *(void **)&lt.heuristic = dlsym(h, "cublasLtMatmulAlgoGetHeuristic");
  *(void **)&lt.matmul = dlsym(h, "cublasLtMatmul");
  if (!lt.create || !lt.desc_create || !lt.desc_set || !lt.layout_create || !lt.pref_create || !lt.pref_set ||
      !lt.heuristic || !lt.matmul) {
    printf("libcublasLt.so.13 lacks an entry point\n");
    exit(2);
  }
}

// Row-major Y[m, n] = X[m, k] W[k, n] + bias[n], fp16, fp32 accumulation:
// column-major Y^T = W^T X^T, the library's A our W.
struct matmul {
  int64_t m, n, k;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatmulAlgo_t algo;
  size_t ws;
  __half *x, *w, *bias, *y;
};

static void matmul_make(cublasLtHandle_t h, int64_t m, int64_t n, int64_t k, size_t ws_limit, matmul *mm,
                        bool buffers = true) {
  mm->m = m, mm->n = n, mm->k = k;
  LK(lt.desc_create(&mm->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_BIAS;
  cudaDataType bt = CUDA_R_16F;
  LK(lt.desc_set(mm->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep));
  LK(lt.desc_set(mm->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt));
  LK(lt.layout_create(&mm->la, CUDA_R_16F, n, k, n));
  LK(lt.layout_create(&mm->lb, CUDA_R_16F, k, m, k));
  LK(lt.layout_create(&mm->ld, CUDA_R_16F, n, m, n));
  cublasLtMatmulPreference_t pref;
  LK(lt.pref_create(&pref));
  LK(lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_limit, sizeof ws_limit));
  cublasLtMatmulHeuristicResult_t r;
  int got = 0;
  LK(lt.heuristic(h, mm->op, mm->la, mm->lb, mm->ld, mm->ld, pref, 1, &r, &got));
  if (!got) {
    printf("no cuBLASLt algorithm for %lld x %lld x %lld\n", (long long)m, (long long)n, (long long)k);
    exit(2);
  }
  mm->algo = r.algo;
  mm->ws = r.workspaceSize;
  if (!buffers) return;
  CK(cudaMalloc(&mm->x, (size_t)(m * k) * 2));
  CK(cudaMalloc(&mm->w, (size_t)(k * n) * 2));
  CK(cudaMalloc(&mm->bias, (size_t)n * 2));
  CK(cudaMalloc(&mm->y, (size_t)(m * n) * 2));
  CK(cudaMemset(mm->x, 0, (size_t)(m * k) * 2));
  CK(cudaMemset(mm->w, 0, (size_t)(k * n) * 2));
  CK(cudaMemset(mm->bias, 0, (size_t)n * 2));
}

static void matmul_run(cublasLtHandle_t h, matmul *mm, void *ws, size_t ws_bytes, cudaStream_t s) {
  const float one = 1.f, zero = 0.f;
  LK(lt.desc_set(mm->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &mm->bias, sizeof mm->bias));
  LK(lt.matmul(h, mm->op, &one, mm->w, mm->la, mm->x, mm->lb, &zero, mm->y, mm->ld, mm->y, mm->ld, &mm->algo,
               mm->ws ? ws : NULL, std::min(mm->ws, ws_bytes), s));
}

__global__ void scale_kernel(__half *y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = __float2half(__half2float(y[i]) * 0.5f + 0.25f);
}

// The matmul as a plain kernel (--no-blas): one thread an output.
__global__ void plain_matmul(const __half *x, const __half *w, __half *y, int64_t m, int64_t n, int64_t k) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= m * n) return;
  float acc = 0.f;
  for (int64_t kk = 0; kk < k; ++kk) acc += __half2float(x[i / n * k + kk]) * __half2float(w[kk * n + i % n]);
  y[i] = __float2half(acc);
}

// Microseconds a replay of ge (graph_replay.cuh: batches of 200).
static float replay_us(cudaGraphExec_t ge, cudaStream_t s) {
  float us = 0.f;
  CK(graph_replay_us(ge, s, 200, &us));
  return us;
}

int main(int argc, char **argv) {
  bool capture = true, blas = true, same_stream = false, shared_handle = false;
  // what of a session runs: all of it, or one part (the flags below)
  enum { WHOLE, ALLOCS, SMALL_ALLOCS, WORKSPACE, HEURISTICS, MEMSETS, KERNELS, NEW_KERNEL, KERNELS_NEW_BUFFER } part = WHOLE;
  int sessions = 4;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--no-capture")) capture = false;
    else if (!strcmp(argv[i], "--no-blas")) blas = false;
    else if (!strcmp(argv[i], "--same-stream")) same_stream = true;
    else if (!strcmp(argv[i], "--shared-handle")) shared_handle = true;
    else if (!strcmp(argv[i], "--alloc-only")) part = ALLOCS;
    else if (!strcmp(argv[i], "--small-allocs-only")) part = SMALL_ALLOCS;
    else if (!strcmp(argv[i], "--workspace-only")) part = WORKSPACE;
    else if (!strcmp(argv[i], "--heuristic-only")) part = HEURISTICS;
    else if (!strcmp(argv[i], "--memsets-only")) part = MEMSETS;
    else if (!strcmp(argv[i], "--kernels-only")) part = KERNELS;
    else if (!strcmp(argv[i], "--new-kernel-only")) part = NEW_KERNEL;
    else if (!strcmp(argv[i], "--kernels-new-buffer")) part = KERNELS_NEW_BUFFER;
    else if (!strcmp(argv[i], "--sessions") && i + 1 < argc) sessions = atoi(argv[++i]);
    else {
      printf("usage: %s [--no-capture] [--no-blas] [--same-stream] [--shared-handle] [--alloc-only | "
             "--small-allocs-only | --workspace-only | --heuristic-only | --memsets-only | --kernels-only | "
             "--new-kernel-only | --kernels-new-buffer] [--sessions N]\n", argv[0]);
      return 2;
    }
  }
  load_lt();
  cudaStream_t s1, side;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cublasLtHandle_t h1;
  LK(lt.create(&h1));
  const size_t ws_bytes = (size_t)32 << 20;
  void *ws1;
  CK(cudaMalloc(&ws1, ws_bytes));
  // ViT-B/16 batch 1 per layer: QKV, out-projection, fc1, fc2
  static const int64_t shapes[4][3] = {{197, 2304, 768}, {197, 768, 768}, {197, 3072, 768}, {197, 768, 3072}};
  matmul model[4];
  for (int i = 0; i < 4; ++i) matmul_make(h1, shapes[i][0], shapes[i][1], shapes[i][2], ws_bytes, &model[i]);
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
  for (int layer = 0; layer < 12; ++layer)
    for (int i = 0; i < 4; ++i) {
      matmul_run(h1, &model[i], ws1, ws_bytes, s1);
      scale_kernel<<<64, 256, 0, s1>>>(model[i].y, model[i].m * model[i].n);
    }
  CK(cudaStreamEndCapture(s1, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  printf("bench_session_repro: capture %d, cuBLASLt %d, same stream %d, shared handle %d\n", capture, blas,
         same_stream, shared_handle);
  printf("model replay, fresh: %.2f us\n", replay_us(ge, s1));
  printf("model replay, again: %.2f us\n", replay_us(ge, s1));
  for (int k = 1; k <= sessions; ++k) {  // each session kept to the end
    if (part == HEURISTICS) {  // two matmuls' descriptors and heuristic queries, nothing on the GPU
      matmul a, b;
      matmul_make(h1, 4, 256, 256, ws_bytes, &a, false);
      matmul_make(h1, 4, 256, 256, ws_bytes, &b, false);
      printf("model replay after %d heuristic round(s): %.2f us\n", k, replay_us(ge, s1));
      continue;
    }
    if (part == MEMSETS) {  // the buffers two matmuls take, cleared (cudaMemset), no descriptors
      void *p;
      for (int i = 0; i < 8; ++i) {
        const size_t bytes = i % 4 == 1 ? 256 * 256 * 2 : i % 4 == 2 ? 512 : 4 * 256 * 2;
        CK(cudaMalloc(&p, bytes));
        if (i % 4 != 3) CK(cudaMemset(p, 0, bytes));
      }
      printf("model replay after %d memset round(s): %.2f us\n", k, replay_us(ge, s1));
      continue;
    }
    if (part == KERNELS || part == NEW_KERNEL || part == KERNELS_NEW_BUFFER) {  // kernels on the side stream only: over the model's buffers, or a new one
      __half *y = model[0].y;
      if (part == KERNELS_NEW_BUFFER) CK(cudaMalloc(&y, (size_t)(4 * 256) * 2));
      for (int run = 0; run < 2; ++run) {
        if (part == NEW_KERNEL) plain_matmul<<<4, 256, 0, side>>>(model[1].x, model[1].w, y, 4, 256, 256);
        else scale_kernel<<<4, 256, 0, side>>>(y, 4 * 256);
      }
      CK(cudaStreamSynchronize(side));
      printf("model replay after %d kernel round(s): %.2f us\n", k, replay_us(ge, s1));
      continue;
    }
    if (part != WHOLE) {  // ALLOCS, SMALL_ALLOCS, WORKSPACE
      void *p;
      for (int i = 0; i < (part == WORKSPACE ? 1 : 9); ++i)
        CK(cudaMalloc(&p, part == SMALL_ALLOCS ? (size_t)4096 : i == 0 ? ws_bytes : (size_t)(256 * 256 * 2)));
      printf("model replay after %d allocation round(s): %.2f us\n", k, replay_us(ge, s1));
      continue;
    }
    cudaStream_t s = side;
    if (!same_stream) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cublasLtHandle_t h = h1;
    if (!shared_handle) LK(lt.create(&h));
    void *ws;
    CK(cudaMalloc(&ws, ws_bytes));
    matmul a, b;
    matmul_make(h, 4, 256, 256, ws_bytes, &a);
    matmul_make(h, 4, 256, 256, ws_bytes, &b);
    for (int run = 0; run < 2 + capture; ++run) {
      cudaGraph_t sg = NULL;
      if (run == 2) CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      if (blas) matmul_run(h, &a, ws, ws_bytes, s);
      else plain_matmul<<<4, 256, 0, s>>>(a.x, a.w, a.y, 4, 256, 256);
      scale_kernel<<<4, 256, 0, s>>>(a.y, 4 * 256);
      if (blas) matmul_run(h, &b, ws, ws_bytes, s);
      else plain_matmul<<<4, 256, 0, s>>>(b.x, b.w, b.y, 4, 256, 256);
      if (run == 2) {
        CK(cudaStreamEndCapture(s, &sg));
        cudaGraphExec_t sge;
        CK(cudaGraphInstantiate(&sge, sg, 0));
        CK(cudaGraphLaunch(sge, s));
      }
      CK(cudaStreamSynchronize(s));
    }
    printf("model replay after %d session(s): %.2f us\n", k, replay_us(ge, s1));
  }
  return 0;
}
