// gpu_graph: rewrites of a captured graph before it is instantiated.
//
// Memset nodes become kernel nodes. In a replayed graph a memset node
// between two kernels (cuDNN's SDPA clears part of its workspace on every
// execute) costs several microseconds of idle GPU around it, where a kernel
// node after a kernel costs a fraction of one: a memset leaves the chain of
// kernel launches the GPU's front end runs back to back.
// A memset of zeros inside memory the graph clears as a whole before
// anything else (the run's zeroed memory, where a small SDPA workspace
// lives) is dropped instead, its edges joined: no other memset may touch
// its bytes, so the only writes it could undo are the clear's own zeros
// and those of kernels before it in the graph. The caller vouches for the
// kernels: nothing writes those bytes before the memset (cuDNN's SDPA
// clears its workspace before its kernels, and only that step has the
// slice). The drop needs the clear to be the graph's one root and its one
// memset of the whole memory; else every memset stays.
#include <cstdlib>
#include <cstring>

#include "gpu/gpu_common.cuh"

namespace {

// The value a memset node writes, repeated over 32 bits (elements of 1, 2
// or 4 bytes).
unsigned pattern32(unsigned value, unsigned elem) {
  if (elem == 1) return (value & 0xffu) * 0x01010101u;
  if (elem == 2) return (value & 0xffffu) * 0x00010001u;
  return value;
}

// rows x row_units units of T, rows pitch bytes apart, each unit the 32-bit
// pattern repeated (or its first bytes, for T narrower than it).
template <typename T>
__global__ void fill_rows_kernel(char *dst, size_t pitch, size_t row_units, size_t rows, unsigned pat) {
  gpu::wait_prior();  // a plain node's edge orders it anyway: the rule every kernel keeps
  gpu::start_next();
  const uint4 q = make_uint4(pat, pat, pat, pat);
  T v;
  memcpy(&v, &q, sizeof v);
  const size_t n = row_units * rows;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const size_t r = i / row_units, u = i % row_units;
    *(T *)(dst + r * pitch + u * sizeof(T)) = v;
  }
}

// A fill kernel's arguments, and the pointers to them its node params take.
struct fill_args {
  char *dst;
  size_t pitch, units, rows;
  unsigned pat;
  void *ptrs[5];
};

// The kernel node params that write what memset node params m write (false
// where its rows allow no store as wide as its elements).
bool fill_params(const gpuMemsetParams &m, fill_args *a, gpuKernelNodeParams *kp) {
  const size_t row_bytes = m.width * m.elementSize, rows = m.height ? m.height : 1;
  const size_t pitch = rows > 1 ? m.pitch : row_bytes;
  const uintptr_t at = (uintptr_t)m.dst;
  // The widest store every row's start and length allow (a 32-bit pattern
  // starts at each row's start, so narrower stores see its first bytes: 1-
  // and 2-byte stores happen only where the pattern's period divides them).
  size_t w = 16;
  while (w > 1 && (at % w || pitch % w || row_bytes % w)) w /= 2;
  if (w < m.elementSize) return false;
  a->dst = (char *)m.dst;
  a->pitch = pitch;
  a->units = row_bytes / w;
  a->rows = rows;
  a->pat = pattern32(m.value, m.elementSize);
  a->ptrs[0] = &a->dst;
  a->ptrs[1] = &a->pitch;
  a->ptrs[2] = &a->units;
  a->ptrs[3] = &a->rows;
  a->ptrs[4] = &a->pat;
  const size_t n = a->units * rows, blocks = (n + 255) / 256;
  *kp = gpuKernelNodeParams();
  kp->func = w == 16  ? (void *)fill_rows_kernel<uint4>
             : w == 8 ? (void *)fill_rows_kernel<unsigned long long>
             : w == 4 ? (void *)fill_rows_kernel<unsigned>
             : w == 2 ? (void *)fill_rows_kernel<unsigned short>
                      : (void *)fill_rows_kernel<unsigned char>;
  kp->gridDim = dim3((unsigned)(blocks < 1024 ? (blocks ? blocks : 1) : 1024));
  kp->blockDim = dim3(256);
  kp->kernelParams = a->ptrs;
  return true;
}

// Edges: CUDA 13 gives each its data (a type and ports); an edge of any but
// the default kind keeps its memset node as it is. HIP and older CUDA have
// plain edges only.
#if defined(GPU_VENDOR_HIP)
#define node_deps(n, d, c) hipGraphNodeGetDependencies((n), (d), (c))
#define node_outs(n, d, c) hipGraphNodeGetDependentNodes((n), (d), (c))
#define graph_add_edge(g, f, t) hipGraphAddDependencies((g), (f), (t), 1)
#elif CUDART_VERSION >= 13000
#define GRAPH_EDGE_DATA 1
#define node_deps(n, d, c) cudaGraphNodeGetDependencies((n), (d), edata, (c))
#define node_outs(n, d, c) cudaGraphNodeGetDependentNodes((n), (d), edata, (c))
#define graph_add_edge(g, f, t) cudaGraphAddDependencies((g), (f), (t), NULL, 1)
#else
#define node_deps(n, d, c) cudaGraphNodeGetDependencies((n), (d), (c))
#define node_outs(n, d, c) cudaGraphNodeGetDependentNodes((n), (d), (c))
#define graph_add_edge(g, f, t) cudaGraphAddDependencies((g), (f), (t), 1)
#endif

struct edges {
  gpuGraphNode_t *nodes;
  size_t n;
  int plain; /* every edge of the default kind */
};

gpuError_t node_edges(gpuGraphNode_t node, int in, edges *e) {
  e->nodes = NULL;
  e->n = 0;
  e->plain = 1;
#ifdef GRAPH_EDGE_DATA
  cudaGraphEdgeData *edata = NULL;
#endif
  gpuError_t err = in ? node_deps(node, NULL, &e->n) : node_outs(node, NULL, &e->n);
  if (err != gpuSuccess || e->n == 0) return err;
  e->nodes = (gpuGraphNode_t *)malloc(e->n * sizeof *e->nodes);
  if (!e->nodes) return gpuErrorMemoryAllocation;
#ifdef GRAPH_EDGE_DATA
  edata = (cudaGraphEdgeData *)calloc(e->n, sizeof *edata);
  if (!edata) return gpuErrorMemoryAllocation;
#endif
  err = in ? node_deps(node, e->nodes, &e->n) : node_outs(node, e->nodes, &e->n);
#ifdef GRAPH_EDGE_DATA
  for (size_t i = 0; err == gpuSuccess && i < e->n; ++i)
    if (edata[i].type != cudaGraphDependencyTypeDefault || edata[i].from_port || edata[i].to_port) e->plain = 0;
  free(edata);
#endif
  return err;
}

// One memset node replaced by a kernel node with its edges; *done 0 where
// it stays (an edge of another kind).
gpuError_t replace(gpuGraph_t g, gpuGraphNode_t node, int *done) {
  *done = 0;
  gpuMemsetParams m;
  gpuError_t err = gpuGraphMemsetNodeGetParams(node, &m);
  if (err != gpuSuccess) return err;
  fill_args a;
  gpuKernelNodeParams kp;
  if ((m.elementSize != 1 && m.elementSize != 2 && m.elementSize != 4) || !fill_params(m, &a, &kp)) return gpuSuccess;
  edges in, out;
  err = node_edges(node, 1, &in);
  gpuError_t err2 = node_edges(node, 0, &out);
  if (err == gpuSuccess) err = err2;
  if (err == gpuSuccess && in.plain && out.plain) {
    gpuGraphNode_t k = NULL;
    err = gpuGraphAddKernelNode(&k, g, in.nodes, in.n, &kp);
    for (size_t i = 0; err == gpuSuccess && i < out.n; ++i) err = graph_add_edge(g, &k, &out.nodes[i]);
    if (err == gpuSuccess) err = gpuGraphDestroyNode(node);
    *done = err == gpuSuccess;
  }
  free(in.nodes);
  free(out.nodes);
  return err;
}

// The bytes memset params m write: [*lo, *hi).
void span_of(const gpuMemsetParams &m, uintptr_t *lo, uintptr_t *hi) {
  const size_t row_bytes = m.width * m.elementSize, rows = m.height ? m.height : 1;
  *lo = (uintptr_t)m.dst;
  *hi = *lo + (rows - 1) * m.pitch + row_bytes;
}

bool has_node(const edges &e, gpuGraphNode_t n) {
  for (size_t i = 0; i < e.n; ++i)
    if (e.nodes[i] == n) return true;
  return false;
}

// A memset node taken out, each node before it joined to each one after
// it; *done 0 where it stays (an edge of another kind).
gpuError_t drop(gpuGraph_t g, gpuGraphNode_t node, int *done) {
  *done = 0;
  edges in, out;
  gpuError_t err = node_edges(node, 1, &in);
  gpuError_t err2 = node_edges(node, 0, &out);
  if (err == gpuSuccess) err = err2;
  if (err == gpuSuccess && in.plain && out.plain) {
    for (size_t i = 0; err == gpuSuccess && i < in.n; ++i) {
      edges after;
      err = node_edges(in.nodes[i], 0, &after);
      for (size_t j = 0; err == gpuSuccess && j < out.n; ++j)
        if (!has_node(after, out.nodes[j])) err = graph_add_edge(g, &in.nodes[i], &out.nodes[j]);
      free(after.nodes);
    }
    if (err == gpuSuccess) err = gpuGraphDestroyNode(node);
    *done = err == gpuSuccess;
  }
  free(in.nodes);
  free(out.nodes);
  return err;
}

bool wanted() {
  // HIPDNN_EP_GRAPH_MEMSETS=keep leaves memset nodes as captured (A/B runs).
  const char *v = getenv("HIPDNN_EP_GRAPH_MEMSETS");
  return !(v && strcmp(v, "keep") == 0);
}

}  // namespace

extern "C" int gpu_graph_memsets_to_kernels(void *graph, const void *cleared, size_t cleared_bytes, int *rewritten,
                                            int *dropped) {
  gpuGraph_t g = (gpuGraph_t)graph;
  *rewritten = *dropped = 0;
  if (!wanted()) return 0;
  size_t n = 0;
  gpuError_t err = gpuGraphGetNodes(g, NULL, &n);
  if (err != gpuSuccess || n == 0) return (int)err;
  enum : unsigned char { NOT_MEMSET, KEPT, DROPPABLE, CLEAR };  // a node's part (CLEAR: of all `cleared`)
  gpuGraphNode_t *nodes = (gpuGraphNode_t *)malloc(n * sizeof *nodes);
  uintptr_t *lo = (uintptr_t *)malloc(n * sizeof *lo), *hi = (uintptr_t *)malloc(n * sizeof *hi);
  unsigned char *kind = (unsigned char *)calloc(n, 1);
  if (!nodes || !lo || !hi || !kind) {
    free(nodes), free(lo), free(hi), free(kind);
    return (int)gpuErrorMemoryAllocation;
  }
  err = gpuGraphGetNodes(g, nodes, &n);
  const uintptr_t c0 = (uintptr_t)cleared, c1 = c0 + (cleared ? cleared_bytes : 0);
  // the clear must be one memset of zeros, the graph's only root (so before every node)
  size_t clears = 0, roots = 0;
  for (size_t i = 0; err == gpuSuccess && i < n; ++i) {
    gpuGraphNodeType t;
    err = gpuGraphNodeGetType(nodes[i], &t);
    if (err != gpuSuccess || t != gpuGraphNodeTypeMemset) continue;
    gpuMemsetParams m;
    err = gpuGraphMemsetNodeGetParams(nodes[i], &m);
    if (err != gpuSuccess) break;
    span_of(m, &lo[i], &hi[i]);
    const unsigned bits = m.elementSize >= 4 ? 0xffffffffu : (1u << (8 * m.elementSize)) - 1;
    const bool zero = (m.value & bits) == 0;
    if (c0 < c1 && lo[i] == c0 && hi[i] == c1) {
      kind[i] = CLEAR;
      edges in = {NULL, 0, 1};
      err = node_edges(nodes[i], 1, &in);
      clears += zero && in.n == 0 ? 1 : 2;  // a clear of another value, or after another node: no drops
      free(in.nodes);
    } else {
      kind[i] = zero && lo[i] >= c0 && hi[i] <= c1 && lo[i] < hi[i] ? DROPPABLE : KEPT;
    }
  }
  if (err == gpuSuccess) err = gpuGraphGetRootNodes(g, NULL, &roots);
  // none goes without the clear as the one root; nor one that shares a byte with another memset
  const bool cleared_first = clears == 1 && roots == 1;
  for (size_t i = 0; err == gpuSuccess && i < n; ++i)
    for (size_t j = 0; kind[i] == DROPPABLE && j < n; ++j)
      if (!cleared_first || (j != i && kind[j] != NOT_MEMSET && kind[j] != CLEAR && lo[j] < hi[i] && lo[i] < hi[j]))
        kind[i] = KEPT;
  for (size_t i = 0; err == gpuSuccess && i < n; ++i) {
    if (kind[i] == NOT_MEMSET) continue;
    int done = 0;
    if (kind[i] == DROPPABLE) {
      err = drop(g, nodes[i], &done);
      *dropped += done;
      if (done || err != gpuSuccess) continue;
    }
    err = replace(g, nodes[i], &done);
    *rewritten += done;
  }
  free(nodes), free(lo), free(hi), free(kind);
  return (int)err;
}
