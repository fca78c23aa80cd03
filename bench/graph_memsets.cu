// bench_graph_memsets: what a memset node costs in a replayed CUDA graph,
// against the same clear as a kernel node (captured as one, or a memset
// node rewritten by gpu_graph_memsets_to_kernels, as the GPU backend does
// before instantiating a captured plan). Twelve "layers" of two ~2 us
// kernels, a clear between them, per clear size; a table of microseconds a
// replay (the median of 5 batches of 300 replays).
//
//   build/bin/bench_graph_memsets
// Exit status: 0 when it ran and the rewritten graph cleared what it should,
// 1 when not, 2 when it could not run.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "graph_replay.cuh"
#include "gpu/gpu_kernels.h"
#include "gpu/gpu_vendor.h"

__global__ void work(float *a, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = a[i];
    for (int k = 0; k < iters; ++k) v = v * 0.999f + 0.001f;
    a[i] = v;
  }
}

__global__ void clear(unsigned *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = 0;
}

enum { KERNELS_ONLY, MEMSET_NODE, CLEAR_KERNEL, MEMSET_REWRITTEN, MODES };
static const char *mode_names[MODES] = {"kernels only", "memset node", "clear kernel captured",
                                        "memset node rewritten"};

int main() {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no GPU\n");
    return 2;
  }
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int n = 132 * 1024;
  float *a;
  unsigned *ws;
  CK(cudaMalloc(&a, n * sizeof(float)));
  CK(cudaMemset(a, 0, n * sizeof(float)));
  CK(cudaMalloc(&ws, 1 << 20));
  const size_t sizes[] = {256, 4096, 1 << 20};
  int bad = 0;
  printf("| clear bytes | %s | %s | %s | %s |\n|---|---|---|---|---|\n", mode_names[0], mode_names[1],
         mode_names[2], mode_names[3]);
  for (size_t bytes : sizes) {
    float us[MODES];
    for (int mode = 0; mode < MODES; ++mode) {
      cudaGraph_t g;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int layer = 0; layer < 12; ++layer) {
        work<<<n / 256, 256, 0, s>>>(a, n, 200);
        if (mode == MEMSET_NODE || mode == MEMSET_REWRITTEN) CK(cudaMemsetAsync(ws, 0, bytes, s));
        if (mode == CLEAR_KERNEL) clear<<<(unsigned)std::min<size_t>((bytes / 4 + 255) / 256, 1024), 256, 0, s>>>(ws, bytes / 4);
        work<<<n / 256, 256, 0, s>>>(a, n, 200);
      }
      CK(cudaStreamEndCapture(s, &g));
      int rewritten = 0, dropped = 0;
      if (mode == MEMSET_REWRITTEN) CK((cudaError_t)gpu_graph_memsets_to_kernels(g, NULL, 0, &rewritten, &dropped));
      cudaGraphExec_t ge;
      CK(cudaGraphInstantiate(&ge, g, 0));
      CK(graph_replay_us(ge, s, 300, &us[mode]));
      if (mode == MEMSET_REWRITTEN) { /* it still clears: poisoned, replayed once, read back */
        std::vector<unsigned> h(bytes / 4);
        CK(cudaMemsetAsync(ws, 0xab, bytes, s));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaMemcpyAsync(h.data(), ws, bytes, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        size_t nonzero = 0;
        for (unsigned x : h) nonzero += x != 0;
        if (nonzero || rewritten != 12) {
          printf("FAIL: %zu bytes: %d memsets rewritten, %zu words not cleared\n", bytes, rewritten, nonzero);
          bad = 1;
        }
      }
      cudaGraphExecDestroy(ge);
      cudaGraphDestroy(g);
    }
    printf("| %zu | %.1f | %.1f | %.1f | %.1f |\n", bytes, us[0], us[1], us[2], us[3]);
  }
  printf("(us a replay of 12 layers: two kernels and a clear between them)\n");
  return bad;
}
