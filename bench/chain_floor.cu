// bench_chain_floor: what a chain of dependent steps costs on this GPU
// when each does almost nothing: the floor under a decode step built as
// one kernel per op (the int4 1B-shaped decoder's replayed step is 86
// kernels), and under one persistent kernel whose phases wait on a grid
// barrier instead. Each step reads the whole vector the step before wrote
// (4 KB, as a GEMV stages A), sums it over its block and writes its share
// of the next vector; with weights it first reads its share of a constant
// buffer of its own (695 MB over the chain, the step's bytes, none of it
// in L2 twice) before it waits, as the GEMVs do.
//   - kernels: one kernel a step, captured into a graph, early launch
//     (programmatic dependent launch, as gpu::launch does) on and off;
//   - persistent: one kernel whose blocks are all resident at once (1 or
//     4 an SM; the program checks they fit); a step's weights are read
//     before its wait for the step before, on a counter in global memory
//     or on a flag a block (release / acquire), which the graph clears
//     first.
// Every configuration is one captured graph, replayed.
//
//   build/bin/bench_chain_floor [steps]
// Prints a table of us a replay and a step. Exit status 0 when it ran and
// every configuration's last vector is what the host computes, 1 when
// not, 2 when it could not run.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gpu/gpu_common.cuh"
#include "graph_replay.cuh"

constexpr int kVec = 1024;  // floats a step reads and writes (4 KB)

// The xor of this block's share of w's words (0 for the 0x5a fill), so
// the loads cannot be dropped; it reaches y only through the salt.
__device__ __forceinline__ unsigned stream_share(const uint4 *w, size_t words) {
  unsigned acc = 0;
  if (!w) return acc;
  const size_t per = (words + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per;
  const size_t hi = lo + per < words ? lo + per : words;
#pragma unroll 8
  for (size_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    const uint4 v = __ldcs(w + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  return acc;
}

// y[i] = x[i] / 2 + (the sum of x) / kVec / 4 for this block's share of
// i (+1 where acc is the salt, which the fill never gives).
__device__ __forceinline__ void vec_step(const float *x, float *y, unsigned acc, unsigned salt) {
  __shared__ float part[32];
  float s = 0.f;
  // other blocks wrote it: from L2, every load of a thread issued at once
#pragma unroll 8
  for (int i = threadIdx.x; i < kVec; i += blockDim.x) s += __ldcg(x + i);
  for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
  __syncthreads();
  float total = 0.f;
  for (int i = 0; i < (int)(blockDim.x + 31) / 32; ++i) total += part[i];
  const int per = (kVec + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per;
  for (int i = lo + threadIdx.x; i < lo + per && i < kVec; i += blockDim.x)
    y[i] = __ldcg(x + i) * 0.5f + total / kVec * 0.25f + (acc == salt ? 1.f : 0.f);
  __syncthreads();  // part[] is read before the block's next step writes it
}

__global__ void link(const float *x, float *y, const uint4 *w, size_t words, unsigned salt) {
  const unsigned acc = stream_share(w, words);
  gpu::wait_prior();
  gpu::start_next();
  vec_step(x, y, acc, salt);
}

__device__ __forceinline__ unsigned ld_acquire(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Every step of the chain in one launch; step p waits until every block
// is done with step p - 1. sync: one counter every block adds 1 to after
// a step (count >= p x blocks), or a flag a block (flags[b] >= p: one
// uncontended store a block, every flag polled by a thread of its own).
__global__ void persistent(float *v, const uint4 *w, size_t words, int steps, unsigned *sync, bool flags,
                           unsigned salt) {
  for (int p = 0; p < steps; ++p) {
    const unsigned acc = stream_share(w ? w + (size_t)p * words : nullptr, words);
    if (p > 0) {
      if (flags) {
        for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
          while (ld_acquire(sync + b) < (unsigned)p) {
          }
      } else if (threadIdx.x == 0) {
        while (ld_acquire(sync) < (unsigned)p * gridDim.x) {
        }
      }
      __syncthreads();
    }
    vec_step(v + (p % 2) * kVec, v + ((p + 1) % 2) * kVec, acc, salt);
    if (threadIdx.x == 0) {
      if (flags) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(sync + blockIdx.x), "r"(p + 1) : "memory");
      else asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(sync) : "memory");
    }
  }
}

struct config {
  const char *name;
  int blocks_an_sm;
  size_t weight_bytes;  // over the whole chain
  int persistent;       // 0: a kernel a step; 1: one kernel, a counter; 2: one kernel, a flag a block
};

int main(int argc, char **argv) {
  const int steps = argc > 1 ? atoi(argv[1]) : 86;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0 || steps < 1) {
    printf("SKIP: no GPU\n");
    return 2;
  }
  int sms = 0, fit = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, persistent, 512, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *v;
  unsigned *sync;
  CK(cudaMalloc(&v, 2 * kVec * sizeof(float)));
  CK(cudaMalloc(&sync, 4 * (size_t)sms * sizeof(unsigned)));
  const size_t step_bytes = (size_t)695 << 20;  // the int4 1B-shaped decoder's step
  uint4 *w;
  CK(cudaMalloc(&w, step_bytes));
  CK(cudaMemset(w, 0x5a, step_bytes));
  const unsigned salt = 0xffffffffu;
  const config cs[] = {{"kernels: 1 block of 128 threads", 0, 0, 0},
                       {"kernels: 1 block an SM", 1, 0, 0},
                       {"kernels: 4 blocks an SM", 4, 0, 0},
                       {"kernels: 1 block an SM, 695 MB of weights", 1, step_bytes, 0},
                       {"kernels: 4 blocks an SM, 695 MB of weights", 4, step_bytes, 0},
                       {"persistent, a counter: 1 block an SM", 1, 0, 1},
                       {"persistent, a counter: 4 blocks an SM", 4, 0, 1},
                       {"persistent, a counter: 1 block an SM, 695 MB of weights", 1, step_bytes, 1},
                       {"persistent, a counter: 4 blocks an SM, 695 MB of weights", 4, step_bytes, 1},
                       {"persistent, a flag a block: 1 block an SM", 1, 0, 2},
                       {"persistent, a flag a block: 4 blocks an SM", 4, 0, 2},
                       {"persistent, a flag a block: 1 block an SM, 695 MB of weights", 1, step_bytes, 2},
                       {"persistent, a flag a block: 4 blocks an SM, 695 MB of weights", 4, step_bytes, 2}};
  printf("%s, %d SMs; a chain of %d steps, each reading the 4 KB the one before wrote (512 threads a block)\n\n",
         prop.name, sms, steps);
  printf("| chain | early launch | us a replay | us a step | weights TB/s |\n|---|---|---|---|---|\n");
  int bad = 0;
  std::vector<float> init(kVec), host(kVec), dev(kVec);
  for (int i = 0; i < kVec; ++i) init[i] = (float)((i * 37) % 101) / 101.f;
  host = init;
  for (int p = 0; p < steps; ++p) {
    double sum = 0;
    for (float x : host) sum += x;
    for (float &x : host) x = x * 0.5f + (float)(sum / kVec * 0.25);
  }
  for (const config &c : cs) {
    if (c.persistent && c.blocks_an_sm > fit) {
      printf("| %s | - | (%d blocks an SM do not fit) | | |\n", c.name, c.blocks_an_sm);
      continue;
    }
    const int blocks = c.blocks_an_sm ? c.blocks_an_sm * sms : 1, threads = c.blocks_an_sm ? 512 : 128;
    const size_t words = c.weight_bytes / 16 / steps;
    for (int early = 1; early >= (c.persistent ? 1 : 0); --early) {
      cudaGraph_t g;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      if (c.persistent) {
        CK(cudaMemsetAsync(sync, 0, (size_t)blocks * sizeof(unsigned), s));
        persistent<<<blocks, threads, 0, s>>>(v, c.weight_bytes ? w : nullptr, words, steps, sync, c.persistent == 2,
                                              salt);
        CK(cudaGetLastError());
      }
      for (int p = 0; !c.persistent && p < steps; ++p) {
        cudaLaunchConfig_t lc = {};
        lc.gridDim = dim3(blocks);
        lc.blockDim = dim3(threads);
        lc.stream = s;
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = early;
        lc.attrs = at;
        lc.numAttrs = 1;
        CK(cudaLaunchKernelEx(&lc, link, (const float *)(v + (p % 2) * kVec), v + ((p + 1) % 2) * kVec,
                              (const uint4 *)(c.weight_bytes ? w + (size_t)p * words : nullptr), words, salt));
      }
      CK(cudaStreamEndCapture(s, &g));
      cudaGraphExec_t ge;
      CK(cudaGraphInstantiate(&ge, g, 0));
      // one replay from the initial vector, checked against the host
      CK(cudaMemcpy(v, init.data(), kVec * sizeof(float), cudaMemcpyHostToDevice));
      CK(cudaGraphLaunch(ge, s));
      CK(cudaStreamSynchronize(s));
      CK(cudaMemcpy(dev.data(), v + (steps % 2) * kVec, kVec * sizeof(float), cudaMemcpyDeviceToHost));
      for (int i = 0; i < kVec; ++i)
        if (std::fabs(host[i] - dev[i]) > 1e-4f * (1.f + std::fabs(host[i]))) {
          printf("FAIL: %s, early %d: y[%d] = %g, want %g\n", c.name, early, i, dev[i], host[i]);
          bad = 1;
          break;
        }
      float us = 0;
      CK(graph_replay_us(ge, s, 200, &us));
      char tbs[32] = "-";
      if (c.weight_bytes) snprintf(tbs, sizeof tbs, "%.2f", (double)c.weight_bytes / (us * 1e-6) / 1e12);
      printf("| %s | %s | %.1f | %.2f | %s |\n", c.name, c.persistent ? "-" : early ? "on" : "off", us, us / steps, tbs);
      cudaGraphExecDestroy(ge);
      cudaGraphDestroy(g);
    }
  }
  cudaFree(w);
  cudaFree(sync);
  cudaFree(v);
  return bad;
}
