/* bench_dnn_ops: the DNN library's own engines (cuDNN's graph API) for the
 * op families the GPU backend runs on kernels of its own, measured against
 * those kernels (gpu/gpu_*.cu) at shapes of ResNet-50 and MobileNetV2 at
 * batch 32, fp32, on the GPU machine. For each op: the library's time, or
 * why it has no engine; ours; and the largest difference between the two
 * outputs (so a fast engine computing something else is caught). The table
 * it prints is the measurement behind docs/architecture.md's "what runs
 * where".
 *
 *   build/bin/bench_dnn_ops [RUNS]      (default 200; libcudnn.so.9 on
 *                                        LD_LIBRARY_PATH, as for the EP)
 * Exit status: 0 when it ran (engines missing is a result, not a failure),
 * 1 when an output differs, 2 when it could not run. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cu_cudnn.h"
#include "common/hd_dtype.h"
#include "backends/dnn/dnn.h"
#include "gpu/gpu_kernels.h"
#include "gpu/gpu_vendor.h"

enum { OP_ADD_RELU, OP_MUL_CHANNEL, OP_MAXPOOL, OP_AVGPOOL_GLOBAL, OP_MEAN_HW };

typedef struct bench_case {
  const char *name, *from;
  int op;
  int64_t x[4];
  int64_t window, stride, pad; /* pools */
} bench_case;

static const bench_case cases[] = {
    {"Add + Relu (residual)", "ResNet-50", OP_ADD_RELU, {32, 256, 56, 56}, 0, 0, 0},
    {"Mul by a channel vector", "MobileNetV2 (BN alone)", OP_MUL_CHANNEL, {32, 144, 56, 56}, 0, 0, 0},
    {"MaxPool 3x3 s2 p1", "ResNet-50", OP_MAXPOOL, {32, 64, 112, 112}, 3, 2, 1},
    {"GlobalAveragePool as resample", "ResNet-50", OP_AVGPOOL_GLOBAL, {32, 2048, 7, 7}, 7, 1, 0},
    {"GlobalAveragePool as reduction", "ResNet-50", OP_MEAN_HW, {32, 2048, 7, 7}, 0, 0, 0},
};

typedef struct bench_env {
  dnn_vendor vd;
  void *lib, *handle;
  gpuStream_t stream;
  gpuEvent_t ev[2];
  int runs;
} bench_env;

static void die_gpu(gpuError_t e, const char *what) {
  if (e == gpuSuccess) return;
  fprintf(stderr, "bench_dnn_ops: %s: %s\n", what, gpuGetErrorString(e));
  exit(2);
}

static int64_t numel(const int64_t *d) { return d[0] * d[1] * d[2] * d[3]; }

/* The case's output dims and its library graph in bag. */
static hd_status *build(bench_env *e, const bench_case *c, dnn_bag *bag, int64_t *yd,
                        int64_t *bd, void **graph) {
  dnn_tensor x, b, y;
  memcpy(yd, c->x, sizeof(int64_t) * 4);
  memcpy(bd, c->x, sizeof(int64_t) * 4);
  if (c->op == OP_MUL_CHANNEL) bd[0] = bd[2] = bd[3] = 1;
  if (c->op == OP_MAXPOOL || c->op == OP_AVGPOOL_GLOBAL)
    for (int i = 2; i < 4; ++i) yd[i] = (c->x[i] + 2 * c->pad - c->window) / c->stride + 1;
  if (c->op == OP_MEAN_HW) yd[2] = yd[3] = 1;
  dnn_tensor_packed(&x, 1, HD_DT_F32, 4, c->x);
  dnn_tensor_packed(&b, 2, HD_DT_F32, 4, bd);
  dnn_tensor_packed(&y, 3, HD_DT_F32, 4, yd);
  op_act relu = {.kind = OP_ACT_RELU};
  switch (c->op) {
    case OP_ADD_RELU:
      return dnn_pointwise_graph(bag, e->handle, &x, &b, &y, DNN_POINTWISE_ADD, &relu, graph);
    case OP_MUL_CHANNEL:
      return dnn_pointwise_graph(bag, e->handle, &x, &b, &y, DNN_POINTWISE_MUL, NULL, graph);
    case OP_MEAN_HW:
      return dnn_reduce_graph(bag, e->handle, &x, &y, 1, graph);
    default: {
      dnn_pool p = {.x = x, .y = y, .is_max = c->op == OP_MAXPOOL, .nspatial = 2};
      for (int i = 0; i < 2; ++i) {
        p.window[i] = c->window;
        p.stride[i] = c->stride;
        p.pre_pad[i] = p.post_pad[i] = c->pad;
      }
      return dnn_pool_graph(bag, e->handle, &p, graph);
    }
  }
}

/* Our kernel for the case, as the GPU backend launches it. */
static int run_ours(const bench_case *c, const void *x, const void *b, void *y,
                    const int64_t *yd, gpuStream_t s) {
  switch (c->op) {
    case OP_ADD_RELU: {
      gpu_bcast bc = {.rank = 1, .dims = {numel(c->x)}, .sa = {1}, .sb = {1}};
      gpu_binary_acts relu = {.act = OP_ACT_RELU, .in_act = OP_ACT_NONE};
      return gpu_binary(x, b, y, GPU_DT_F32, GPU_BIN_ADD, &bc, &relu, s);
    }
    case OP_MUL_CHANNEL: {
      int64_t hw = c->x[2] * c->x[3];
      gpu_bcast bc = {.rank = 3, .dims = {c->x[0], c->x[1], hw}, .sa = {c->x[1] * hw, hw, 1},
                      .sb = {0, 1, 0}};
      return gpu_binary(x, b, y, GPU_DT_F32, GPU_BIN_MUL, &bc, NULL, s);
    }
    case OP_MAXPOOL: {
      gpu_pool_desc d = {.nspatial = 3, .is_max = 1,
                         .in = {1, 1, 1}, .out = {1, 1, 1}, .kernel = {1, 1, 1},
                         .stride = {1, 1, 1}, .dilation = {1, 1, 1}};
      for (int i = 1; i < 3; ++i) { /* 2D lifted to 3D with a leading unit dim, as gb_pool does */
        d.in[i] = c->x[1 + i];
        d.out[i] = yd[1 + i];
        d.kernel[i] = c->window;
        d.stride[i] = c->stride;
        d.pad_begin[i] = d.pad_end[i] = c->pad;
      }
      return gpu_pool(x, y, GPU_DT_F32, c->x[0] * c->x[1], &d, s);
    }
    default:
      return gpu_global_pool(x, y, GPU_DT_F32, c->x[0] * c->x[1], c->x[2] * c->x[3], 0, s);
  }
}

/* Milliseconds per launch of what the callback launches, over e->runs. */
typedef int (*launch_fn)(void *ctx);
static float time_ms(bench_env *e, launch_fn f, void *ctx) {
  for (int i = 0; i < 3; ++i)
    if (f(ctx)) return -1.f;
  die_gpu(gpuEventRecord(e->ev[0], e->stream), "event");
  for (int i = 0; i < e->runs; ++i)
    if (f(ctx)) return -1.f;
  die_gpu(gpuEventRecord(e->ev[1], e->stream), "event");
  die_gpu(gpuEventSynchronize(e->ev[1]), "event sync");
  float ms = 0.f;
  die_gpu(gpuEventElapsedTime(&ms, e->ev[0], e->ev[1]), "elapsed");
  return ms / (float)e->runs;
}

typedef struct run_ctx {
  bench_env *e;
  const bench_case *c;
  dnn_plan *plan;
  void *ptrs[3];
  void *ws;
  const int64_t *yd;
} run_ctx;

static int launch_dnn(void *p) {
  run_ctx *r = p;
  hd_status *st = dnn_plan_execute(r->plan, r->e->handle, r->ptrs, r->ws, NULL);
  if (!st) return 0;
  fprintf(stderr, "bench_dnn_ops: %s: execute: %s\n", r->c->name, hd_status_msg(st));
  hd_status_free(st);
  return 1;
}

static int launch_ours(void *p) {
  run_ctx *r = p;
  return run_ours(r->c, r->ptrs[0], r->ptrs[1], r->ptrs[2], r->yd, r->e->stream);
}

/* Largest |a - b| over n device floats. */
static double max_diff(const float *da, const float *db, int64_t n) {
  float *a = malloc(sizeof(float) * (size_t)n), *b = malloc(sizeof(float) * (size_t)n);
  if (!a || !b) exit(2);
  die_gpu(gpuMemcpy(a, da, sizeof(float) * (size_t)n, gpuMemcpyDeviceToHost), "copy");
  die_gpu(gpuMemcpy(b, db, sizeof(float) * (size_t)n, gpuMemcpyDeviceToHost), "copy");
  double m = 0.0;
  for (int64_t i = 0; i < n; ++i) m = fmax(m, fabs((double)a[i] - (double)b[i]));
  free(a);
  free(b);
  return m;
}

static void *dev_random(int64_t n, unsigned seed) {
  float *h = malloc(sizeof(float) * (size_t)n);
  void *d = NULL;
  if (!h) exit(2);
  for (int64_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    h[i] = (float)((seed >> 8) & 0xffff) / 32768.f - 1.f;
  }
  die_gpu(gpuMalloc(&d, sizeof(float) * (size_t)n), "malloc");
  die_gpu(gpuMemcpy(d, h, sizeof(float) * (size_t)n, gpuMemcpyHostToDevice), "copy");
  free(h);
  return d;
}

/* One table row; returns 1 when the outputs differ. */
static int bench_one(bench_env *e, const bench_case *c) {
  int64_t yd[4], bd[4];
  dnn_bag bag;
  dnn_bag_init(&bag, &e->vd);
  void *graph = NULL;
  hd_status *st = build(e, c, &bag, yd, bd, &graph);
  dnn_plan plan;
  memset(&plan, 0, sizeof plan);
  if (!st) {
    dnn_plan_opts po = {.allow_tensor_core_fp32 = 1, .fp32_graph = 1, .nuids = 0};
    po.uids[po.nuids++] = 1;
    if (c->op == OP_ADD_RELU || c->op == OP_MUL_CHANNEL) po.uids[po.nuids++] = 2;
    po.uids[po.nuids++] = 3;
    st = dnn_plan_build(&bag, e->handle, graph, &po, &plan);
  } else {
    dnn_bag_free(&bag);
  }
  void *x = dev_random(numel(c->x), 1), *b = dev_random(numel(bd), 2);
  void *y_lib = NULL, *y_ours = NULL, *ws = NULL;
  die_gpu(gpuMalloc(&y_lib, sizeof(float) * (size_t)numel(yd)), "malloc");
  die_gpu(gpuMalloc(&y_ours, sizeof(float) * (size_t)numel(yd)), "malloc");
  run_ctx r = {.e = e, .c = c, .plan = &plan, .ptrs = {x, b, y_ours}, .yd = yd};
  float ours = time_ms(e, launch_ours, &r);
  char lib[160];
  double diff = -1.0;
  if (st) {
    snprintf(lib, sizeof lib, "no engine: %.120s", hd_status_msg(st));
    for (char *p = lib; *p; ++p)
      if (*p == '|' || *p == '\n') *p = ' ';
    hd_status_free(st);
  } else {
    if (plan.workspace > 0) die_gpu(gpuMalloc(&ws, (size_t)plan.workspace), "malloc");
    r.ws = ws;
    int np = 0;
    r.ptrs[np++] = x;
    if (c->op == OP_ADD_RELU || c->op == OP_MUL_CHANNEL) r.ptrs[np++] = b;
    r.ptrs[np++] = y_lib;
    float ms = time_ms(e, launch_dnn, &r);
    snprintf(lib, sizeof lib, ms < 0 ? "failed to run" : "%.4f (engine %lld)", (double)ms,
             (long long)plan.engine);
    die_gpu(gpuStreamSynchronize(e->stream), "sync");
    diff = max_diff(y_lib, y_ours, numel(yd));
    dnn_plan_free(&plan);
  }
  double bytes = 4.0 * (double)(numel(c->x) + numel(yd) +
                                (c->op == OP_ADD_RELU || c->op == OP_MUL_CHANNEL ? numel(bd) : 0));
  char note[64] = "-";
  if (diff >= 0) snprintf(note, sizeof note, "max abs difference %.3g", diff);
  printf("| %s | %s | [%lld,%lld,%lld,%lld] | %s | %.4f (%.0f GB/s) | %s |\n", c->name, c->from,
         (long long)c->x[0], (long long)c->x[1], (long long)c->x[2], (long long)c->x[3], lib,
         (double)ours, ours > 0 ? bytes / (ours * 1e-3) / 1e9 : 0.0, note);
  gpuFree(x);
  gpuFree(b);
  gpuFree(y_lib);
  gpuFree(y_ours);
  if (ws) gpuFree(ws);
  return diff > 1e-4;
}

static size_t cudnn_version(void *lib) {
  size_t (*get_version)(void);
  *(void **)&get_version = dlsym(lib, "cudnnGetVersion");
  return get_version ? get_version() : 0;
}

int main(int argc, char **argv) {
  bench_env e;
  memset(&e, 0, sizeof e);
  e.runs = argc > 1 ? atoi(argv[1]) : 200;
  if (e.runs < 1) e.runs = 200;
  static const char *const sonames[] = {"libcudnn.so.9", NULL};
  dnn_lib_spec spec = {.backend = "cuda", .table = &cu_cudnn_table,
                       .env = "HIPDNN_EP_CUDNN_LIBRARY", .sonames = sonames,
                       .hint = "put cuDNN 9's lib folder on LD_LIBRARY_PATH",
                       .version = cudnn_version};
  hd_status *st = dnn_vendor_load(&spec, &e.vd, &e.lib);
  if (!st) st = dnn_status(&e.vd, e.vd.create(&e.handle), "create handle", __FILE__, __LINE__);
  if (st) {
    fprintf(stderr, "bench_dnn_ops: %s\n", hd_status_msg(st));
    hd_status_free(st);
    return 2;
  }
  die_gpu(gpuStreamCreateWithFlags(&e.stream, gpuStreamNonBlocking), "stream");
  die_gpu(gpuEventCreateWithFlags(&e.ev[0], gpuEventDefault), "event");
  die_gpu(gpuEventCreateWithFlags(&e.ev[1], gpuEventDefault), "event");
  st = dnn_status(&e.vd, e.vd.set_stream(e.handle, e.stream), "set stream", __FILE__, __LINE__);
  if (st) {
    fprintf(stderr, "bench_dnn_ops: %s\n", hd_status_msg(st));
    hd_status_free(st);
    return 2;
  }
  gpuDeviceProp prop;
  die_gpu(gpuGetDeviceProperties(&prop, 0), "device properties");
  printf("GPU: %s; cuDNN %zu; %d runs each, fp32, ms per launch\n\n", prop.name, e.vd.version,
         e.runs);
  printf("| op | from | input | cuDNN graph (ms) | ours (ms) | note |\n|---|---|---|---|---|---|\n");
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) bad |= bench_one(&e, &cases[i]);
  e.vd.destroy(e.handle);
  return bad;
}
