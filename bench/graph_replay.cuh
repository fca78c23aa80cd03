// graph_replay.cuh: what one replay of a captured CUDA graph takes, for the
// bench/ CUDA programs: 20 launches to warm up, then 5 batches of `batch`
// launches back to back; *us is the median batch's microseconds a replay.
// And CK(x): a CUDA call whose failure the program reports and exits 2 on.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CK(x)                                                                      \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));           \
      exit(2);                                                                     \
    }                                                                              \
  } while (0)

static inline cudaError_t graph_replay_us(cudaGraphExec_t ge, cudaStream_t s, int batch, float *us) {
  cudaEvent_t ev[2] = {NULL, NULL};
  std::vector<float> t;
  cudaError_t e = cudaEventCreate(&ev[0]);
  if (e == cudaSuccess) e = cudaEventCreate(&ev[1]);
  for (int i = 0; e == cudaSuccess && i < 20; ++i) e = cudaGraphLaunch(ge, s);
  for (int rep = 0; e == cudaSuccess && rep < 5; ++rep) {
    e = cudaEventRecord(ev[0], s);
    for (int i = 0; e == cudaSuccess && i < batch; ++i) e = cudaGraphLaunch(ge, s);
    if (e == cudaSuccess) e = cudaEventRecord(ev[1], s);
    if (e == cudaSuccess) e = cudaEventSynchronize(ev[1]);
    float ms = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, ev[0], ev[1]);
    t.push_back(ms * 1000.f / (float)batch);
  }
  for (cudaEvent_t x : ev)
    if (x) cudaEventDestroy(x);
  if (e != cudaSuccess) return e;
  std::sort(t.begin(), t.end());
  *us = t[t.size() / 2];
  return cudaSuccess;
}
