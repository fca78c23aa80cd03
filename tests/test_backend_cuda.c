/* test_backend_cuda: the CUDA backend module against the ref backend, with
 * no ONNX Runtime. Builds one-node ir_graphs by hand, plans them at concrete
 * shapes, runs them on both backends and compares; checks supports_node,
 * device info, streams/events, allocation failures and a missing libcudnn.
 * Without a GPU (or module) it prints "SKIP: <reason>" and exits 77.
 *   test_backend_cuda [-v] [filter]   (filter: a substring of case names)
 *   test_backend_cuda --bench | --bench-nbits [chain] | --bench-attention [shape]   (timings) */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "common/hd_diskcache.h"
#include "common/hd_dtype.h"
#include "ops/ops.h"
#include "tests/attr_table.h"
#include "plan/plan.h"
#include "tests/unit_test.h"

#ifndef HD_CUDA_MODULE_PATH
#define HD_CUDA_MODULE_PATH ""
#endif

static int verbose;

#define CHECK UT_CHECKF

/* Takes st; returns its code (HD_OK for NULL) after printing it if verbose. */
static hd_code eat(hd_status *st, const char *what) {
  hd_code c = hd_status_code(st);
  if (st && verbose) printf("  %s: [%d] %s\n", what, (int)c, hd_status_msg(st));
  hd_status_free(st);
  return st ? c : HD_OK;
}

#define OK(expr)                                                                  \
  do {                                                                            \
    hd_status *ok_st_ = (expr);                                                   \
    ++ut_checks;                                                                     \
    if (ok_st_) {                                                                 \
      ++ut_failures;                                                                 \
      printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #expr, hd_status_msg(ok_st_)); \
      hd_status_free(ok_st_);                                                     \
      goto done;                                                                  \
    }                                                                             \
  } while (0)

/* ---- device memory for contexts: counts, and can refuse ---- */

typedef struct test_alloc {
  be_module *m;
  int refuse;  /* 1: every allocation fails with OUT_OF_MEMORY */
  int live;
  pthread_mutex_t mu; /* runs on several threads allocate instances */
} test_alloc;

static hd_status *ta_alloc(void *ctx, size_t bytes, void **p) {
  test_alloc *a = ctx;
  *p = NULL;
  if (a->refuse) return hd_error(HD_ERR_OUT_OF_MEMORY, "test allocator refuses %zu bytes", bytes);
  hd_status *st = be_mem_alloc(a->m, 0, bytes, p);
  pthread_mutex_lock(&a->mu);
  if (!st) a->live++;
  pthread_mutex_unlock(&a->mu);
  return st;
}

static void ta_free(void *ctx, void *p) {
  test_alloc *a = ctx;
  if (!p) return;
  pthread_mutex_lock(&a->mu);
  a->live--;
  pthread_mutex_unlock(&a->mu);
  be_mem_free(a->m, 0, p);
}

static hd_status *host_alloc(void *ctx, size_t bytes, void **p) {
  (void)ctx;
  *p = malloc(bytes ? bytes : 1);
  return *p ? NULL : hd_error(HD_ERR_OUT_OF_MEMORY, "host");
}
static void host_free(void *ctx, void *p) {
  (void)ctx;
  free(p);
}

/* ---- cases ---- */

typedef struct conv_case {
  const char *name;
  int dtype;
  int ns;
  int64_t n, c, k;
  int64_t in[3], ker[3], stride[3], dil[3], pb[3], pe[3];
  int64_t group;
  int bias, residual;
  op_act_kind act;
  float alpha, beta;
  int no_tf32;
  op_auto_pad auto_pad;
} conv_case;

#define S1(a) {a, 1, 1}
#define S2(a, b) {a, b, 1}
#define S3(a, b, c) {a, b, c}
#define ONE {1, 1, 1}
#define ZERO {0, 0, 0}

static const conv_case cases[] = {
    {"2d_basic", HD_DT_F32, 2, 2, 8, 16, S2(14, 14), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 0, 0, OP_ACT_NONE, 0, 0, 0, 0},
    {"2d_bias_relu", HD_DT_F32, 2, 1, 16, 32, S2(16, 16), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
    {"2d_bias_res_relu", HD_DT_F32, 2, 2, 16, 16, S2(8, 8), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 1, 1, OP_ACT_RELU, 0, 0, 0, 0},
    {"2d_notf32_exact", HD_DT_F32, 2, 1, 32, 16, S2(9, 11), S2(3, 3), ONE, ONE, S2(1, 0), S2(1, 2), 1, 1, 0, OP_ACT_NONE, 0, 0, 1, 0},
    {"2d_stride_dil_asym", HD_DT_F32, 2, 1, 4, 8, S2(17, 13), S2(3, 5), S2(2, 3), S2(2, 1), S2(0, 2), S2(3, 1), 1, 1, 0, OP_ACT_NONE, 0, 0, 0, 0},
    {"2d_group", HD_DT_F32, 2, 2, 16, 32, S2(10, 10), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 4, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
    {"2d_depthwise", HD_DT_F32, 2, 1, 32, 32, S2(12, 12), S2(3, 3), S2(2, 2), ONE, S2(1, 1), S2(1, 1), 32, 1, 0, OP_ACT_CLIP, 0.f, 6.f, 0, 0},
    {"2d_1x1_leaky", HD_DT_F32, 2, 3, 24, 40, S2(7, 7), S2(1, 1), ONE, ONE, ZERO, ZERO, 1, 1, 0, OP_ACT_LEAKY_RELU, 0.1f, 0, 0, 0},
    {"2d_sigmoid", HD_DT_F32, 2, 1, 8, 8, S2(6, 6), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 1, 0, OP_ACT_SIGMOID, 0, 0, 0, 0},
    {"2d_tanh_res", HD_DT_F32, 2, 1, 8, 8, S2(6, 6), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 0, 1, OP_ACT_TANH, 0, 0, 0, 0},
    {"2d_hardswish", HD_DT_F32, 2, 1, 8, 16, S2(8, 8), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 1, 0, OP_ACT_HARD_SWISH, 0, 0, 0, 0},
    {"2d_hardsigmoid", HD_DT_F32, 2, 1, 8, 16, S2(8, 8), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 1, 0, OP_ACT_HARD_SIGMOID, 0.2f, 0.5f, 0, 0},
    {"2d_same_upper", HD_DT_F32, 2, 1, 8, 8, S2(9, 10), S2(4, 3), S2(2, 2), ONE, ZERO, ZERO, 1, 0, 0, OP_ACT_NONE, 0, 0, 0, OP_PAD_SAME_UPPER},
    {"1d", HD_DT_F32, 1, 2, 8, 12, S1(50), S1(5), S1(2), S1(2), S1(3), S1(1), 1, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
    {"1d_group", HD_DT_F32, 1, 1, 12, 12, S1(33), S1(3), S1(1), S1(1), S1(1), S1(1), 3, 1, 0, OP_ACT_NONE, 0, 0, 0, 0},
    {"3d", HD_DT_F32, 3, 1, 4, 8, S3(8, 9, 10), S3(3, 3, 3), ONE, ONE, S3(1, 1, 1), S3(1, 1, 1), 1, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
    {"3d_stride_asym", HD_DT_F32, 3, 2, 4, 4, S3(7, 8, 9), S3(2, 3, 1), S3(2, 1, 2), ONE, S3(0, 1, 0), S3(1, 1, 0), 1, 0, 0, OP_ACT_NONE, 0, 0, 0, 0},
    {"f16_2d_bias_relu", HD_DT_F16, 2, 2, 16, 32, S2(14, 14), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
    {"f16_2d_res", HD_DT_F16, 2, 1, 32, 32, S2(8, 8), S2(1, 1), ONE, ONE, ZERO, ZERO, 1, 1, 1, OP_ACT_RELU, 0, 0, 0, 0},
    /* gpu_conv_direct (few taps, one group): a MobileNet-like stem; 3 tiles
     * of output channels with dilation and a residual; 1D lifted to 2D. */
    {"2d_direct_stem", HD_DT_F32, 2, 2, 3, 32, S2(30, 29), S2(3, 3), S2(2, 2), ONE, S2(1, 1), S2(1, 1), 1, 1, 0, OP_ACT_CLIP, 0.f, 6.f, 0, 0},
    {"2d_direct_tiles_res", HD_DT_F32, 2, 1, 2, 70, S2(13, 11), S2(5, 5), ONE, S2(2, 1), S2(2, 0), S2(3, 1), 1, 1, 1, OP_ACT_LEAKY_RELU, 0.1f, 0, 0, 0},
    {"1d_direct", HD_DT_F32, 1, 2, 4, 8, S1(40), S1(7), S1(3), S1(1), S1(3), S1(2), 1, 0, 0, OP_ACT_NONE, 0, 0, 0, 0},
    {"f16_direct", HD_DT_F16, 2, 1, 3, 16, S2(17, 17), S2(3, 3), S2(2, 2), ONE, S2(1, 1), S2(1, 1), 1, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
    /* gpu_conv1x1_few (fp32 1x1 of at most 32 input channels without
     * TF32): 4 pixels a thread with a residual and relu6 over 40 output
     * channels, exact fp32 (one pixel a thread: test_precision_boundary's
     * 14 x 13 planes). */
    {"2d_1x1_few_res", HD_DT_F32, 2, 3, 20, 40, S2(13, 12), S2(1, 1), ONE, ONE, ZERO, ZERO, 1, 1, 1, OP_ACT_CLIP, 0.f, 6.f, 1, 0},
    /* gpu_conv_depthwise: each unrolled instance of the strip kernel (3x3 /
     * 5x5, stride 1 / 2, 4 and 2 outputs a thread, ragged row ends) and the
     * generic loop. */
    {"dw_3x3_s1_wide", HD_DT_F32, 2, 2, 8, 8, S2(9, 37), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 8, 1, 1, OP_ACT_RELU, 0, 0, 0, 0},
    {"dw_5x5_s2", HD_DT_F32, 2, 1, 6, 6, S2(23, 41), S2(5, 5), S2(2, 2), ONE, S2(2, 2), S2(2, 2), 6, 1, 0, OP_ACT_NONE, 0, 0, 0, 0},
    {"dw_5x5_s1_narrow", HD_DT_F32, 2, 3, 4, 4, S2(7, 7), S2(5, 5), ONE, ONE, S2(2, 2), S2(2, 2), 4, 0, 0, OP_ACT_HARD_SWISH, 0, 0, 0, 0},
    {"dw_dilated_asym", HD_DT_F32, 2, 1, 5, 5, S2(15, 12), S2(3, 2), S2(1, 2), S2(2, 3), S2(2, 0), S2(1, 3), 5, 1, 0, OP_ACT_NONE, 0, 0, 0, 0},
    /* dw_plane_kernel (stride 1; here 7 x 7): bands of a plane, planes many
     * to a block (7 x 7 inputs), asymmetric pads, ragged strips. */
    {"f16_dw_7x7_bands", HD_DT_F16, 2, 2, 24, 24, S2(30, 30), S2(7, 7), ONE, ONE, S2(3, 3), S2(3, 3), 24, 1, 1, OP_ACT_NONE, 0, 0, 0, 0},
    {"dw_7x7_small_planes", HD_DT_F32, 2, 3, 40, 40, S2(7, 7), S2(7, 7), ONE, ONE, S2(3, 3), S2(3, 3), 40, 1, 1, OP_ACT_RELU, 0, 0, 0, 0},
    {"dw_7x7_asym", HD_DT_F32, 2, 1, 6, 6, S2(20, 13), S2(7, 7), ONE, ONE, S2(2, 3), S2(4, 1), 6, 0, 0, OP_ACT_NONE, 0, 0, 0, 0},
    /* ... and 3 x 3 stride 1 of 4M outputs or more (MobileNetV2's at batch
     * 32): bands of a 56-wide plane (8 elements a load), 28-wide planes two
     * to a block (4 a load); a 5 x 5 on the strip kernel beside them
     * (test_gpu_kernels checks these shapes' routes). */
    {"f16_dw_3x3_bands", HD_DT_F16, 2, 8, 192, 192, S2(56, 56), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 192, 1, 1, OP_ACT_CLIP, 0.f, 6.f, 0, 0},
    {"f16_dw_3x3_planes", HD_DT_F16, 2, 32, 192, 192, S2(28, 28), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 192, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
    {"f16_dw_5x5_s1", HD_DT_F16, 2, 2, 40, 40, S2(28, 28), S2(5, 5), ONE, ONE, S2(2, 2), S2(2, 2), 40, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
    {"f16_depthwise", HD_DT_F16, 2, 1, 16, 16, S2(10, 10), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 16, 0, 0, OP_ACT_NONE, 0, 0, 0, 0},
    {"f16_1d", HD_DT_F16, 1, 1, 8, 8, S1(40), S1(3), S1(1), S1(1), S1(1), S1(1), 1, 1, 0, OP_ACT_NONE, 0, 0, 0, 0},
    {"f16_3d", HD_DT_F16, 3, 1, 8, 8, S3(6, 6, 6), S3(3, 3, 3), ONE, ONE, S3(1, 1, 1), S3(1, 1, 1), 1, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
};

static uint32_t rng_state = 12345;
static float frand(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffffff) / (float)0x800000 - 1.0f;
}

/* element i of p (fp32, fp16 or bf16) as a float, and back */
static float get(int dtype, const void *p, size_t i) {
  if (dtype == HD_DT_F32) return ((const float *)p)[i];
  uint16_t b = ((const uint16_t *)p)[i];
  return dtype == HD_DT_BF16 ? hd_bf16_to_f32(b) : hd_f16_to_f32(b);
}

static void put(int dtype, void *p, size_t i, float v) {
  if (dtype == HD_DT_F32) ((float *)p)[i] = v;
  else ((uint16_t *)p)[i] = dtype == HD_DT_BF16 ? hd_f32_to_bf16(v) : hd_f32_to_f16(v);
}

static void fill(int dtype, void *p, size_t n, float scale) {
  for (size_t i = 0; i < n; ++i) put(dtype, p, i, frand() * scale);
}

/* A one-Conv graph: inputs X [, R]; constants W [, B]; output Y.
 * dyn: X's batch and spatial dims dynamic (for supports_node). */
static hd_status *build_graph(const conv_case *cc, int dyn, ir_graph **out) {
  ir_graph *g;
  HD_TRY(ir_graph_create(&g));
  hd_status *st = NULL;
  int r = cc->ns + 2;
  int64_t xd[5] = {cc->n, cc->c}, wd[5] = {cc->k, cc->c / cc->group}, bd[1] = {cc->k};
  for (int i = 0; i < cc->ns; ++i) {
    xd[2 + i] = dyn ? IR_DIM_DYNAMIC : cc->in[i];
    wd[2 + i] = cc->ker[i];
  }
  if (dyn) xd[0] = IR_DIM_DYNAMIC;
  int64_t yd[5];
  for (int i = 0; i < r; ++i) yd[i] = IR_DIM_DYNAMIC;
  int vx, vw, vb = IR_NONE, vr = IR_NONE, vy;
  size_t es = hd_dtype_size(cc->dtype);
  st = ir_graph_add_value(g, "X", cc->dtype, r, xd, &vx);
  if (!st) st = ir_graph_add_value(g, "W", cc->dtype, r, wd, &vw);
  if (!st) {
    size_t n = (size_t)ir_numel(r, wd);
    void *w = malloc(n * es);
    if (!w) st = hd_error(HD_ERR_OUT_OF_MEMORY, "host");
    else {
      fill(cc->dtype, w, n, 0.5f);
      st = ir_value_set_data(g, vw, w, n * es);
      free(w);
    }
  }
  if (!st && cc->bias) {
    st = ir_graph_add_value(g, "B", cc->dtype, 1, bd, &vb);
    if (!st) {
      void *b = malloc((size_t)cc->k * es);
      if (!b) st = hd_error(HD_ERR_OUT_OF_MEMORY, "host");
      else {
        fill(cc->dtype, b, (size_t)cc->k, 0.5f);
        st = ir_value_set_data(g, vb, b, (size_t)cc->k * es);
        free(b);
      }
    }
  }
  if (!st && cc->residual) st = ir_graph_add_value(g, "R", cc->dtype, r, yd, &vr);
  if (!st) st = ir_graph_add_value(g, "Y", cc->dtype, r, yd, &vy);
  int in[4] = {vx, vw, cc->bias ? vb : IR_NONE, vr};
  int nin = cc->residual ? 4 : cc->bias ? 3 : 2;
  int node = 0;
  if (!st) st = ir_graph_add_node(g, OP_CONV, "conv0", "Conv", 22, in, nin, &vy, 1, &node);
  if (!st) {
    op_conv *p = &OP_P(&g->nodes[node])->conv;
    memset(p, 0, sizeof *p);
    p->nspatial = cc->ns;
    for (int i = 0; i < cc->ns; ++i) {
      p->kernel[i] = cc->ker[i];
      p->strides[i] = cc->stride[i];
      p->dilations[i] = cc->dil[i];
      p->pads_begin[i] = cc->pb[i];
      p->pads_end[i] = cc->pe[i];
    }
    p->auto_pad = cc->auto_pad;
    p->group = cc->group;
    p->has_bias = cc->bias;
    p->has_residual = cc->residual;
    p->act.kind = cc->act;
    p->act.alpha = cc->alpha;
    p->act.beta = cc->beta;
    int ins[2] = {vx, vr}, outs[1] = {vy};
    st = ir_graph_set_io(g, ins, cc->residual ? 2 : 1, outs, 1);
  }
  if (!st) st = ir_graph_finalize(g);
  if (st) {
    ir_graph_free(g);
    return st;
  }
  *out = g;
  return NULL;
}

typedef struct gpu_env {
  be_module *cu, *ref;
  be_context *ctx, *ctx_strict, *ctx_exh, *ctx_cap, *rctx;
  test_alloc ta;
  void *stream;
} gpu_env;

static void run_case(gpu_env *e, const conv_case *cc, int exhaustive) {
  ir_graph *g = NULL, *gd = NULL;
  ir_plan *p = NULL;
  be_graph *rg = NULL, *cg = NULL;
  be_plan *rp = NULL, *cp = NULL;
  void *hin[2] = {0}, *hout_ref = NULL, *hout = NULL, *din[2] = {0}, *dout = NULL, *dout2 = NULL;
  be_context *ctx = exhaustive ? e->ctx_exh : cc->no_tf32 ? e->ctx_strict : e->ctx;
  int r = cc->ns + 2;
  size_t es = hd_dtype_size(cc->dtype);

  /* supports_node on the dynamic-shape graph, then on the concrete one. */
  OK(build_graph(cc, 1, &gd));
  OK(be_supports_node(e->cu, ctx, gd, 0));
  OK(build_graph(cc, 0, &g));
  OK(be_supports_node(e->cu, ctx, g, 0));

  ir_shape shapes[2];
  memset(shapes, 0, sizeof shapes);
  shapes[0].rank = r;
  shapes[0].dims[0] = cc->n;
  shapes[0].dims[1] = cc->c;
  for (int i = 0; i < cc->ns; ++i) shapes[0].dims[2 + i] = cc->in[i];
  /* Y's shape, for R: plan once without knowing it, from the plan's tensor. */
  if (cc->residual) {
    /* Compute output dims as ONNX does (explicit pads, or SAME_UPPER). */
    shapes[1].rank = r;
    shapes[1].dims[0] = cc->n;
    shapes[1].dims[1] = cc->k;
    for (int i = 0; i < cc->ns; ++i) {
      int64_t span = (cc->ker[i] - 1) * cc->dil[i] + 1;
      shapes[1].dims[2 + i] = (cc->in[i] + cc->pb[i] + cc->pe[i] - span) / cc->stride[i] + 1;
    }
  }
  OK(plan_create(g, shapes, NULL, &p));
  int vy = g->outputs[0];
  size_t ny = (size_t)ir_numel(p->t[vy].rank, p->t[vy].dims);
  size_t nx = (size_t)ir_numel(r, shapes[0].dims);
  size_t nr = cc->residual ? (size_t)ir_numel(r, shapes[1].dims) : 0;
  hin[0] = malloc(nx * es);
  if (cc->residual) hin[1] = malloc(nr * es);
  hout_ref = calloc(ny, es);
  hout = calloc(ny, es);
  if (!hin[0] || (cc->residual && !hin[1]) || !hout_ref || !hout) {
    CHECK(0, "host memory");
    goto done;
  }
  fill(cc->dtype, hin[0], nx, 1.0f);
  if (cc->residual) fill(cc->dtype, hin[1], nr, 1.0f);

  /* ref */
  OK(be_graph_compile(e->ref, e->rctx, g, &rg));
  OK(be_plan_compile(e->ref, rg, p, &rp));
  void *outs_ref[1] = {hout_ref};
  OK(be_plan_run(e->ref, rp, hin, outs_ref, NULL));

  /* cuda */
  OK(be_graph_compile(e->cu, ctx, g, &cg));
  OK(be_plan_compile(e->cu, cg, p, &cp));
  OK(be_mem_alloc(e->cu, 0, nx * es, &din[0]));
  OK(be_copy(e->cu, 0, din[0], hin[0], nx * es, BE_COPY_HOST_TO_DEVICE, e->stream));
  if (cc->residual) {
    OK(be_mem_alloc(e->cu, 0, nr * es, &din[1]));
    OK(be_copy(e->cu, 0, din[1], hin[1], nr * es, BE_COPY_HOST_TO_DEVICE, e->stream));
  }
  OK(be_mem_alloc(e->cu, 0, ny * es, &dout));
  OK(be_mem_alloc(e->cu, 0, ny * es, &dout2));
  void *outs[1] = {dout};
  OK(be_plan_run(e->cu, cp, din, outs, e->stream));
  /* Again into another buffer (bindings change), then a third time with the
   * same bindings (the kept variant pack): the last answer is checked. */
  outs[0] = dout2;
  OK(be_plan_run(e->cu, cp, din, outs, e->stream));
  OK(be_plan_run(e->cu, cp, din, outs, e->stream));
  OK(be_copy(e->cu, 0, hout, dout2, ny * es, BE_COPY_DEVICE_TO_HOST, e->stream));
  OK(be_stream_sync(e->cu, 0, e->stream));

  double maxerr = 0, maxref = 0, se = 0, sr = 0;
  int bad = 0;
  for (size_t i = 0; i < ny; ++i) {
    double a = get(cc->dtype, hout, i), b = get(cc->dtype, hout_ref, i);
    if (!isfinite(b)) bad = 1; /* the reference must carry numbers, or this proves nothing */
    double d = ut_diff(a, b, &bad);
    if (d > maxerr) maxerr = d;
    if (fabs(b) > maxref) maxref = fabs(b);
    se += d * d;
    sr += b * b;
  }
  double tol = cc->dtype == HD_DT_F16 ? 2e-2 : cc->no_tf32 ? 1e-4 : 1e-2;
  double rel = maxerr / (maxref > 1 ? maxref : 1);
  double nmse = sr > 0 ? se / sr : se;
  CHECK(!bad && rel <= tol, "%s: max |err| %.3g (rel %.3g, tol %.1g), nmse %.3g", cc->name,
        maxerr, rel, tol, nmse);
  printf("%-4s %-22s%s y[%zu] max|err| %.3g rel %.3g nmse %.3g\n",
         (!bad && rel <= tol) ? "ok" : "BAD", cc->name, exhaustive ? " (exhaustive)" : "", ny,
         maxerr, rel, nmse);

done:
  be_mem_free(e->cu, 0, din[0]);
  be_mem_free(e->cu, 0, din[1]);
  be_mem_free(e->cu, 0, dout);
  be_mem_free(e->cu, 0, dout2);
  if (cp) be_plan_free(e->cu, cp);
  if (cg) be_graph_free(e->cu, cg);
  if (rp) be_plan_free(e->ref, rp);
  if (rg) be_graph_free(e->ref, rg);
  if (p) plan_free(p);
  if (g) ir_graph_free(g);
  if (gd) ir_graph_free(gd);
  free(hin[0]);
  free(hin[1]);
  free(hout_ref);
  free(hout);
}

/* ==== op families: one-node (or small) graphs vs ref ==== */

/* A graph under construction; the first error sticks. */
typedef struct tg {
  ir_graph *g;
  hd_status *st;
  int dtype;
  int nin, nout;
  int in[8], out[8];
  int nvals;
  int orank; /* rank given to node outputs (dims dynamic); -1: unknown */
} tg;

static void tg_begin(tg *t, int dtype) {
  memset(t, 0, sizeof *t);
  t->dtype = dtype;
  t->orank = -1;
  t->st = ir_graph_create(&t->g);
}

static int tg_value(tg *t, int dtype, int rank, const int64_t *dims) {
  if (t->st) return IR_NONE;
  char name[32];
  snprintf(name, sizeof name, "v%d", t->nvals++);
  int v = IR_NONE;
  t->st = ir_graph_add_value(t->g, name, dtype, rank, dims, &v);
  return v;
}

static int tg_input(tg *t, int rank, const int64_t *dims) {
  int v = tg_value(t, t->dtype, rank, dims);
  if (!t->st) t->in[t->nin++] = v;
  return v;
}

/* A constant of the graph's dtype: uniform in [lo, hi). */
static int tg_const(tg *t, int rank, const int64_t *dims, float lo, float hi) {
  int v = tg_value(t, t->dtype, rank, dims);
  if (t->st) return v;
  size_t n = (size_t)ir_numel(rank, dims), es = hd_dtype_size(t->dtype);
  void *d = malloc(n * es + 1);
  for (size_t i = 0; i < n; ++i) put(t->dtype, d, i, lo + (hi - lo) * 0.5f * (frand() + 1.f));
  t->st = ir_value_set_data(t->g, v, d, n * es);
  free(d);
  return v;
}

/* A constant of the graph's dtype holding these values. */
static int tg_const_vals(tg *t, int rank, const int64_t *dims, const float *vals) {
  int v = tg_value(t, t->dtype, rank, dims);
  if (t->st) return v;
  size_t n = (size_t)ir_numel(rank, dims), es = hd_dtype_size(t->dtype);
  void *d = malloc(n * es + 1);
  for (size_t i = 0; i < n; ++i) put(t->dtype, d, i, vals[i]);
  t->st = ir_value_set_data(t->g, v, d, n * es);
  free(d);
  return v;
}

static int tg_const_i64(tg *t, int rank, const int64_t *dims, const int64_t *vals) {
  int v = tg_value(t, HD_DT_I64, rank, dims);
  if (!t->st) t->st = ir_value_set_data(t->g, v, vals, sizeof(int64_t) * (size_t)ir_numel(rank, dims));
  return v;
}

static int tg_const_i32(tg *t, int rank, const int64_t *dims, const int32_t *vals) {
  int v = tg_value(t, HD_DT_I32, rank, dims);
  if (!t->st) t->st = ir_value_set_data(t->g, v, vals, sizeof(int32_t) * (size_t)ir_numel(rank, dims));
  return v;
}

/* fp32 constant of these values, whatever the graph's dtype (Resize's scales). */
static int tg_const_f32(tg *t, int rank, const int64_t *dims, const float *vals) {
  int v = tg_value(t, HD_DT_F32, rank, dims);
  if (!t->st) t->st = ir_value_set_data(t->g, v, vals, sizeof(float) * (size_t)ir_numel(rank, dims));
  return v;
}

/* uint8 constant of random bytes (packed 4-bit codes). */
static int tg_const_u8(tg *t, int rank, const int64_t *dims) {
  int v = tg_value(t, HD_DT_U8, rank, dims);
  if (t->st) return v;
  size_t n = (size_t)ir_numel(rank, dims);
  uint8_t *d = malloc(n + 1);
  for (size_t i = 0; i < n; ++i) {
    rng_state = rng_state * 1664525u + 1013904223u;
    d[i] = (uint8_t)(rng_state >> 24);
  }
  t->st = ir_value_set_data(t->g, v, d, n);
  free(d);
  return v;
}

/* Adds node `type` of `domain` ("" for ONNX's) parsed by its op, with nout
 * new (shape-unknown) outputs in out[], but IR_NONE (an output left out)
 * where bit i of `absent` is set. */
static void tg_node_outs_some(tg *t, const char *domain, const char *type, int opset, const int *in, int nin,
                              const attr *attrs, int nattrs, int *out, int nout, unsigned absent) {
  int64_t dyn[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  for (int i = 0; i < nout; i++)
    out[i] = absent >> i & 1 ? IR_NONE : tg_value(t, t->dtype, t->orank, t->orank > 0 ? dyn : NULL);
  if (t->st) return;
  const op_def *def = op_find(domain, type, opset);
  if (!def) {
    t->st = hd_error(HD_ERR_NOT_FOUND, "no op %s-%d", type, opset);
    return;
  }
  int idx;
  t->st = ir_graph_add_node(t->g, def->kind, type, type, opset, in, nin, out, nout, &idx);
  if (t->st) return;
  attr_table at = {attrs, nattrs};
  op_attrs a = attr_table_reader(&at);
  t->st = def->parse(t->g, &t->g->nodes[idx], &a);
}
static void tg_node_outs(tg *t, const char *domain, const char *type, int opset, const int *in, int nin,
                         const attr *attrs, int nattrs, int *out, int nout) {
  tg_node_outs_some(t, domain, type, opset, in, nin, attrs, nattrs, out, nout, 0);
}

/* The same with one output, returned. */
static int tg_node_in(tg *t, const char *domain, const char *type, int opset, const int *in, int nin,
                      const attr *attrs, int nattrs) {
  int out = IR_NONE;
  tg_node_outs(t, domain, type, opset, in, nin, attrs, nattrs, &out, 1);
  return out;
}

static int tg_node(tg *t, const char *type, int opset, const int *in, int nin, const attr *attrs,
                   int nattrs) {
  return tg_node_in(t, "", type, opset, in, nin, attrs, nattrs);
}

static void tg_output(tg *t, int v) {
  if (!t->st) t->out[t->nout++] = v;
}

static hd_status *tg_end(tg *t, int fuse, ir_graph **out) {
  *out = NULL;
  if (!t->st) t->st = ir_graph_set_io(t->g, t->in, t->nin, t->out, t->nout);
  if (!t->st) t->st = ir_graph_finalize(t->g);
  int nf = 0;
  if (!t->st && fuse) t->st = plan_fuse(t->g, &nf);
  if (t->st) {
    if (t->g) ir_graph_free(t->g);
    t->g = NULL;
    return t->st;
  }
  *out = t->g;
  return NULL;
}

/* Runs g on ref and on ctx (3 runs: bindings change, then stay), compares
 * every output. Returns the max relative error seen (or -1 on a failure). */
static double compare_graph(gpu_env *e, be_context *ctx, ir_graph *g, const char *name, int dtype,
                            double tol) {
  ir_plan *p = NULL;
  be_graph *rg = NULL, *cg = NULL;
  be_plan *rp = NULL, *cp = NULL;
  void *hin[8] = {0}, *din[8] = {0}, *href[8] = {0}, *hout[8] = {0}, *dout[8] = {0},
       *dout2[8] = {0};
  double worst = -1;
  ir_shape shapes[8];
  memset(shapes, 0, sizeof shapes);
  for (int i = 0; i < g->ninputs; ++i) {
    const ir_value *v = &g->values[g->inputs[i]];
    shapes[i].rank = v->rank;
    memcpy(shapes[i].dims, v->dims, sizeof(int64_t) * (size_t)(v->rank > 0 ? v->rank : 0));
  }
  for (int i = 0; i < g->nnodes; ++i) {
    if (g->nodes[i].dead) continue;
    hd_status *st = be_supports_node(e->cu, ctx, g, i);
    CHECK(!st, "%s: supports_node(%s): %s", name, g->nodes[i].op_type, st ? hd_status_msg(st) : "");
    hd_status_free(st);
  }
  OK(plan_create(g, shapes, NULL, &p));
  for (int i = 0; i < g->ninputs; ++i) {
    const ir_tensor *t = &p->t[g->inputs[i]];
    size_t n = (size_t)ir_numel(t->rank, t->dims);
    hin[i] = malloc(t->nbytes + 1);
    fill(t->dtype, hin[i], n, 1.0f);
    OK(be_mem_alloc(e->cu, 0, t->nbytes, &din[i]));
    OK(be_copy(e->cu, 0, din[i], hin[i], t->nbytes, BE_COPY_HOST_TO_DEVICE, e->stream));
  }
  for (int i = 0; i < g->noutputs; ++i) {
    const ir_tensor *t = &p->t[g->outputs[i]];
    href[i] = calloc(1, t->nbytes + 1);
    hout[i] = calloc(1, t->nbytes + 1);
    OK(be_mem_alloc(e->cu, 0, t->nbytes, &dout[i]));
    OK(be_mem_alloc(e->cu, 0, t->nbytes, &dout2[i]));
  }
  OK(be_graph_compile(e->ref, e->rctx, g, &rg));
  OK(be_plan_compile(e->ref, rg, p, &rp));
  OK(be_plan_run(e->ref, rp, hin, href, NULL));
  OK(be_graph_compile(e->cu, ctx, g, &cg));
  OK(be_plan_compile(e->cu, cg, p, &cp));
  OK(be_plan_run(e->cu, cp, din, dout, e->stream));
  OK(be_plan_run(e->cu, cp, din, dout2, e->stream));
  OK(be_plan_run(e->cu, cp, din, dout2, e->stream));
  OK(be_plan_run(e->cu, cp, din, dout2, e->stream));
  worst = 0;
  for (int i = 0; i < g->noutputs; ++i) {
    const ir_tensor *t = &p->t[g->outputs[i]];
    size_t n = (size_t)ir_numel(t->rank, t->dims);
    OK(be_copy(e->cu, 0, hout[i], dout2[i], t->nbytes, BE_COPY_DEVICE_TO_HOST, e->stream));
    OK(be_stream_sync(e->cu, 0, e->stream));
    double maxerr = 0, maxref = 0;
    int bad = 0;
    for (size_t k = 0; k < n; ++k) {
      double a = get(t->dtype, hout[i], k), b = get(t->dtype, href[i], k);
      double d = ut_diff(a, b, &bad);
      if (d > maxerr) maxerr = d;
      if (fabs(b) > maxref) maxref = fabs(b);
    }
    double rel = maxerr / (maxref > 1 ? maxref : 1);
    if (bad) rel = 1e30;
    if (rel > worst) worst = rel;
  }
  CHECK(worst <= tol, "%s: max rel err %.3g > tol %.1g", name, worst, tol);
  printf("%-4s %-34s %s rel %.3g\n", worst <= tol ? "ok" : "BAD", name, hd_dtype_name(dtype),
         worst);
done:
  for (int i = 0; i < 8; ++i) {
    be_mem_free(e->cu, 0, din[i]);
    be_mem_free(e->cu, 0, dout[i]);
    be_mem_free(e->cu, 0, dout2[i]);
    free(hin[i]);
    free(href[i]);
    free(hout[i]);
  }
  if (cp) be_plan_free(e->cu, cp);
  if (cg) be_graph_free(e->cu, cg);
  if (rp) be_plan_free(e->ref, rp);
  if (rg) be_graph_free(e->ref, rg);
  if (p) plan_free(p);
  return worst;
}

#define A_INT(nm, v) {.name = nm, .n = -1, .i = {v}}
#define A_FLOAT(nm, v) {.name = nm, .n = -2, .f = v}
#define A_STR(nm, v) {.name = nm, .n = -3, .s = v}
#define D(...) ((const int64_t[]){__VA_ARGS__})
#define NA(a) (int)(sizeof(a) / sizeof(a[0]))

typedef void (*op_builder)(tg *t);

/* unary */
static void b_relu(tg *t) { int x = tg_input(t, 4, D(2, 3, 5, 7)); tg_output(t, tg_node(t, "Relu", 14, &x, 1, NULL, 0)); }
static void b_leaky(tg *t) { attr a[] = {A_FLOAT("alpha", 0.1f)}; int x = tg_input(t, 3, D(4, 5, 6)); tg_output(t, tg_node(t, "LeakyRelu", 16, &x, 1, a, 1)); }
static void b_clip6(tg *t) { attr a[] = {A_FLOAT("min", -0.5f), A_FLOAT("max", 0.3f)}; int x = tg_input(t, 2, D(9, 13)); tg_output(t, tg_node(t, "Clip", 6, &x, 1, a, 2)); }
static void b_clip13(tg *t) {
  int x = tg_input(t, 2, D(9, 13));
  int in[3] = {x, tg_const(t, 0, NULL, -0.2f, -0.1f), tg_const(t, 0, NULL, 0.4f, 0.5f)};
  tg_output(t, tg_node(t, "Clip", 13, in, 3, NULL, 0));
}
static void b_sigmoid(tg *t) { int x = tg_input(t, 1, D(1000)); tg_output(t, tg_node(t, "Sigmoid", 13, &x, 1, NULL, 0)); }
static void b_hsig(tg *t) { attr a[] = {A_FLOAT("alpha", 0.25f), A_FLOAT("beta", 0.4f)}; int x = tg_input(t, 2, D(8, 8)); tg_output(t, tg_node(t, "HardSigmoid", 6, &x, 1, a, 2)); }
static void b_hswish(tg *t) { int x = tg_input(t, 4, D(1, 8, 4, 4)); tg_output(t, tg_node(t, "HardSwish", 14, &x, 1, NULL, 0)); }
static void b_tanh(tg *t) { int x = tg_input(t, 2, D(3, 77)); tg_output(t, tg_node(t, "Tanh", 13, &x, 1, NULL, 0)); }
/* binary */
static void b_add_same(tg *t) { int in[2] = {tg_input(t, 3, D(2, 3, 40)), tg_input(t, 3, D(2, 3, 40))}; tg_output(t, tg_node(t, "Add", 14, in, 2, NULL, 0)); }
static void b_sub_bcast(tg *t) { int in[2] = {tg_input(t, 4, D(2, 3, 5, 7)), tg_input(t, 3, D(3, 1, 7))}; tg_output(t, tg_node(t, "Sub", 14, in, 2, NULL, 0)); }
static void b_mul_scalar(tg *t) { int in[2] = {tg_input(t, 3, D(4, 5, 6)), tg_const(t, 0, NULL, 0.5f, 2.f)}; tg_output(t, tg_node(t, "Mul", 14, in, 2, NULL, 0)); }
static void b_div_vec(tg *t) { int in[2] = {tg_input(t, 3, D(4, 5, 6)), tg_const(t, 1, D(6), 0.5f, 2.f)}; tg_output(t, tg_node(t, "Div", 14, in, 2, NULL, 0)); }
static void b_add_both(tg *t) { int in[2] = {tg_input(t, 4, D(2, 1, 5, 1)), tg_input(t, 4, D(1, 3, 1, 7))}; tg_output(t, tg_node(t, "Add", 14, in, 2, NULL, 0)); }
static void b_mul_chan(tg *t) { int in[2] = {tg_input(t, 4, D(2, 16, 9, 9)), tg_const(t, 3, D(16, 1, 1), -1.f, 1.f)}; tg_output(t, tg_node(t, "Mul", 14, in, 2, NULL, 0)); }
static void b_add_relu(tg *t) { /* fused by ir_fuse into op_binary.act */
  int in[2] = {tg_input(t, 2, D(6, 50)), tg_input(t, 1, D(50))};
  int y = tg_node(t, "Add", 14, in, 2, NULL, 0);
  tg_output(t, tg_node(t, "Relu", 14, &y, 1, NULL, 0));
}
/* batchnorm */
static void b_bn(tg *t) {
  int in[5] = {tg_input(t, 4, D(2, 6, 5, 5)), tg_const(t, 1, D(6), 0.5f, 1.5f), tg_const(t, 1, D(6), -1.f, 1.f),
               tg_const(t, 1, D(6), -0.5f, 0.5f), tg_const(t, 1, D(6), 0.5f, 2.f)};
  attr a[] = {A_FLOAT("epsilon", 1e-3f)};
  tg_output(t, tg_node(t, "BatchNormalization", 15, in, 5, a, 1));
}
/* pools */
static void b_maxpool(tg *t) {
  attr a[] = {{.name = "kernel_shape", .n = 2, .i = {3, 3}}, {.name = "strides", .n = 2, .i = {2, 2}}, {.name = "pads", .n = 4, .i = {1, 1, 1, 1}}};
  int x = tg_input(t, 4, D(2, 4, 15, 16));
  tg_output(t, tg_node(t, "MaxPool", 12, &x, 1, a, NA(a)));
}
static void b_maxpool_dil_ceil(tg *t) {
  attr a[] = {{.name = "kernel_shape", .n = 2, .i = {3, 2}}, {.name = "strides", .n = 2, .i = {2, 3}}, {.name = "dilations", .n = 2, .i = {2, 1}}, A_INT("ceil_mode", 1)};
  int x = tg_input(t, 4, D(1, 3, 14, 17));
  tg_output(t, tg_node(t, "MaxPool", 12, &x, 1, a, NA(a)));
}
static void b_avgpool_excl(tg *t) {
  attr a[] = {{.name = "kernel_shape", .n = 2, .i = {3, 3}}, {.name = "strides", .n = 2, .i = {2, 2}}, {.name = "pads", .n = 4, .i = {1, 1, 1, 1}}, A_INT("ceil_mode", 1)};
  int x = tg_input(t, 4, D(2, 3, 10, 11));
  tg_output(t, tg_node(t, "AveragePool", 19, &x, 1, a, NA(a)));
}
static void b_avgpool_incl(tg *t) {
  attr a[] = {{.name = "kernel_shape", .n = 2, .i = {3, 3}}, {.name = "strides", .n = 2, .i = {2, 2}}, {.name = "pads", .n = 4, .i = {1, 0, 1, 2}}, A_INT("count_include_pad", 1), A_INT("ceil_mode", 1)};
  int x = tg_input(t, 4, D(2, 3, 10, 11));
  tg_output(t, tg_node(t, "AveragePool", 19, &x, 1, a, NA(a)));
}
/* No ceil overhang, asymmetric pads: the library's resample for max and
 * excluded pads; counted pads stay on our kernel (cuDNN differed). */
static void avgpool_floor(tg *t, int include_pad) {
  attr a[] = {{.name = "kernel_shape", .n = 2, .i = {3, 3}}, {.name = "pads", .n = 4, .i = {1, 0, 2, 1}}, A_INT("count_include_pad", include_pad)};
  int x = tg_input(t, 4, D(2, 3, 10, 11));
  tg_output(t, tg_node(t, "AveragePool", 19, &x, 1, a, NA(a)));
}
static void b_avgpool_incl_floor(tg *t) { avgpool_floor(t, 1); }
static void b_avgpool_excl_floor(tg *t) { avgpool_floor(t, 0); }
static void b_maxpool_asym(tg *t) {
  attr a[] = {{.name = "kernel_shape", .n = 2, .i = {3, 2}}, {.name = "strides", .n = 2, .i = {2, 1}}, {.name = "pads", .n = 4, .i = {0, 1, 2, 0}}};
  int x = tg_input(t, 4, D(2, 3, 11, 9));
  tg_output(t, tg_node(t, "MaxPool", 12, &x, 1, a, NA(a)));
}
static void b_maxpool1d(tg *t) {
  attr a[] = {{.name = "kernel_shape", .n = 1, .i = {4}}, {.name = "strides", .n = 1, .i = {3}}, {.name = "pads", .n = 2, .i = {2, 1}}};
  int x = tg_input(t, 3, D(2, 5, 31));
  tg_output(t, tg_node(t, "MaxPool", 12, &x, 1, a, NA(a)));
}
static void b_avgpool3d(tg *t) {
  attr a[] = {{.name = "kernel_shape", .n = 3, .i = {2, 3, 2}}, {.name = "strides", .n = 3, .i = {2, 1, 2}}, {.name = "pads", .n = 6, .i = {0, 1, 1, 1, 1, 0}}};
  int x = tg_input(t, 5, D(1, 2, 6, 7, 8));
  tg_output(t, tg_node(t, "AveragePool", 19, &x, 1, a, NA(a)));
}
static void b_gap(tg *t) { int x = tg_input(t, 4, D(2, 64, 7, 7)); tg_output(t, tg_node(t, "GlobalAveragePool", 1, &x, 1, NULL, 0)); }
static void b_gmp(tg *t) { int x = tg_input(t, 3, D(3, 5, 100)); tg_output(t, tg_node(t, "GlobalMaxPool", 1, &x, 1, NULL, 0)); }
/* gemm / matmul */
static void b_gemm_bias(tg *t) {
  int in[3] = {tg_input(t, 2, D(5, 70)), tg_const(t, 2, D(70, 33), -0.5f, 0.5f), tg_const(t, 1, D(33), -1.f, 1.f)};
  tg_output(t, tg_node(t, "Gemm", 13, in, 3, NULL, 0));
}
static void b_gemm_trans(tg *t) {
  attr a[] = {A_INT("transA", 1), A_INT("transB", 1), A_FLOAT("alpha", 0.5f), A_FLOAT("beta", 2.f)};
  int in[3] = {tg_input(t, 2, D(40, 9)), tg_const(t, 2, D(17, 40), -0.5f, 0.5f), tg_const(t, 2, D(9, 17), -1.f, 1.f)};
  tg_output(t, tg_node(t, "Gemm", 13, in, 3, a, NA(a)));
}
static void b_gemm_colc(tg *t) {
  attr a[] = {A_INT("transB", 1)};
  int in[3] = {tg_input(t, 2, D(6, 64)), tg_const(t, 2, D(20, 64), -0.5f, 0.5f), tg_const(t, 2, D(6, 1), -1.f, 1.f)};
  tg_output(t, tg_node(t, "Gemm", 13, in, 3, a, NA(a)));
}
static void b_gemm_relu(tg *t) { /* Gemm + Relu fused by ir_fuse */
  int in[3] = {tg_input(t, 2, D(8, 128)), tg_const(t, 2, D(128, 64), -0.2f, 0.2f), tg_const(t, 1, D(64), -1.f, 1.f)};
  int y = tg_node(t, "Gemm", 13, in, 3, NULL, 0);
  tg_output(t, tg_node(t, "Relu", 14, &y, 1, NULL, 0));
}
static void b_mm_batched(tg *t) { int in[2] = {tg_input(t, 4, D(2, 3, 4, 32)), tg_const(t, 2, D(32, 24), -0.5f, 0.5f)}; tg_output(t, tg_node(t, "MatMul", 13, in, 2, NULL, 0)); }
static void b_mm_bcast_a(tg *t) { int in[2] = {tg_input(t, 2, D(4, 16)), tg_input(t, 3, D(3, 16, 5))}; tg_output(t, tg_node(t, "MatMul", 13, in, 2, NULL, 0)); }
static void b_mm_bcast_2d(tg *t) { int in[2] = {tg_input(t, 4, D(2, 1, 3, 8)), tg_input(t, 4, D(1, 4, 8, 5))}; tg_output(t, tg_node(t, "MatMul", 13, in, 2, NULL, 0)); }
static void b_mm_vec(tg *t) { int in[2] = {tg_input(t, 1, D(48)), tg_input(t, 2, D(48, 20))}; tg_output(t, tg_node(t, "MatMul", 13, in, 2, NULL, 0)); }
static void b_mm_bias_gelu_like(tg *t) { /* MatMul + bias Add + Tanh: has_c and a non-relu act */
  int in[2] = {tg_input(t, 3, D(2, 16, 96)), tg_const(t, 2, D(96, 48), -0.2f, 0.2f)};
  int y = tg_node(t, "MatMul", 13, in, 2, NULL, 0);
  int in2[2] = {y, tg_const(t, 1, D(48), -1.f, 1.f)};
  int z = tg_node(t, "Add", 14, in2, 2, NULL, 0);
  tg_output(t, tg_node(t, "Tanh", 13, &z, 1, NULL, 0));
}
/* MatMul + bias Add + Gelu (erf): the epilogue kernel after the vendor
 * matmul, 16-byte accesses where the rows' width allows (96) and one
 * element a thread where it does not (36) */
static void mm_bias_gelu(tg *t, int64_t n) {
  int in[2] = {tg_input(t, 3, D(2, 24, 64)), tg_const(t, 2, D(64, n), -0.3f, 0.3f)};
  int y = tg_node(t, "MatMul", 13, in, 2, NULL, 0);
  int in2[2] = {y, tg_const(t, 1, &n, -1.f, 1.f)};
  int z = tg_node(t, "Add", 14, in2, 2, NULL, 0);
  tg_output(t, tg_node(t, "Gelu", 20, &z, 1, NULL, 0));
}
static void b_mm_bias_gelu_96(tg *t) { mm_bias_gelu(t, 96); }
static void b_mm_bias_gelu_36(tg *t) { mm_bias_gelu(t, 36); }
/* A transformer MLP's first matmul + bias + erf GELU (rows of two
 * sequences, 4x wider out) */
static void b_mm_bias_gelu_mlp(tg *t) {
  int64_t n = 512;
  int in[2] = {tg_input(t, 3, D(2, 80, 128)), tg_const(t, 2, D(128, 512), -0.15f, 0.15f)};
  int y = tg_node(t, "MatMul", 13, in, 2, NULL, 0);
  int in2[2] = {y, tg_const(t, 1, &n, -1.f, 1.f)};
  int z = tg_node(t, "Add", 14, in2, 2, NULL, 0);
  tg_output(t, tg_node(t, "Gelu", 20, &z, 1, NULL, 0));
}
/* Gemm with B stored transposed and a bias, then erf GELU; and a MatMul
 * with no bias into it */
static void b_gemm_transb_gelu(tg *t) {
  attr a[] = {A_INT("transB", 1)};
  int in[3] = {tg_input(t, 2, D(96, 64)), tg_const(t, 2, D(256, 64), -0.2f, 0.2f), tg_const(t, 1, D(256), -1.f, 1.f)};
  int y = tg_node(t, "Gemm", 13, in, 3, a, NA(a));
  tg_output(t, tg_node(t, "Gelu", 20, &y, 1, NULL, 0));
}
static void b_mm_gelu_nobias(tg *t) {
  int in[2] = {tg_input(t, 2, D(40, 64)), tg_const(t, 2, D(64, 192), -0.2f, 0.2f)};
  int y = tg_node(t, "MatMul", 13, in, 2, NULL, 0);
  tg_output(t, tg_node(t, "Gelu", 20, &y, 1, NULL, 0));
}
/* MatMul + bias at a transformer MLP's row count (197: a ViT at batch 1) */
static void b_mm_bias_rows197(tg *t) {
  int in[2] = {tg_input(t, 2, D(197, 1024)), tg_const(t, 2, D(1024, 256), -0.05f, 0.05f)};
  int y = tg_node(t, "MatMul", 13, in, 2, NULL, 0);
  int in2[2] = {y, tg_const(t, 1, D(256), -1.f, 1.f)};
  tg_output(t, tg_node(t, "Add", 14, in2, 2, NULL, 0));
}
static void b_mm_large(tg *t) { int in[2] = {tg_input(t, 2, D(128, 512)), tg_const(t, 2, D(512, 256), -0.1f, 0.1f)}; tg_output(t, tg_node(t, "MatMul", 13, in, 2, NULL, 0)); }
/* softmax */
static void b_sm_last(tg *t) { int x = tg_input(t, 2, D(4, 10)); tg_output(t, tg_node(t, "Softmax", 13, &x, 1, NULL, 0)); }
static void b_sm_mid(tg *t) { attr a[] = {A_INT("axis", 1)}; int x = tg_input(t, 3, D(2, 5, 6)); tg_output(t, tg_node(t, "Softmax", 13, &x, 1, a, 1)); }
static void b_sm_legacy(tg *t) { attr a[] = {A_INT("axis", 1)}; int x = tg_input(t, 3, D(2, 3, 4)); tg_output(t, tg_node(t, "Softmax", 11, &x, 1, a, 1)); }
static void b_sm_long(tg *t) { int x = tg_input(t, 2, D(3, 3000)); tg_output(t, tg_node(t, "Softmax", 13, &x, 1, NULL, 0)); }
/* reduce */
static void b_rm_hw(tg *t) { attr a[] = {{.name = "axes", .n = 2, .i = {2, 3}}}; int x = tg_input(t, 4, D(2, 3, 8, 9)); tg_output(t, tg_node(t, "ReduceMean", 13, &x, 1, a, 1)); }
static void b_rm_0(tg *t) { attr a[] = {{.name = "axes", .n = 1, .i = {0}}, A_INT("keepdims", 0)}; int x = tg_input(t, 2, D(50, 7)); tg_output(t, tg_node(t, "ReduceMean", 13, &x, 1, a, 2)); }
static void b_rm_all(tg *t) { int x = tg_input(t, 3, D(4, 5, 6)); tg_output(t, tg_node(t, "ReduceMean", 13, &x, 1, NULL, 0)); }
static void b_rm_13(tg *t) { attr a[] = {{.name = "axes", .n = 2, .i = {1, -1}}}; int x = tg_input(t, 4, D(2, 3, 4, 5)); tg_output(t, tg_node(t, "ReduceMean", 13, &x, 1, a, 1)); }
/* The other reductions: warp per output (contiguous reduced dim of >= 32) and thread per output. */
static void b_rs_warp(tg *t) { int in[2] = {tg_input(t, 3, D(4, 6, 40)), tg_const_i64(t, 1, D(1), (const int64_t[]){-1})}; tg_output(t, tg_node(t, "ReduceSum", 13, in, 2, NULL, 0)); }
static void b_rmax_mid(tg *t) { int in[2] = {tg_input(t, 3, D(4, 40, 6)), tg_const_i64(t, 1, D(1), (const int64_t[]){1})}; tg_output(t, tg_node(t, "ReduceMax", 18, in, 2, NULL, 0)); }
static void b_rmin_0(tg *t) { attr a[] = {{.name = "axes", .n = 1, .i = {0}}, A_INT("keepdims", 0)}; int x = tg_input(t, 2, D(50, 7)); tg_output(t, tg_node(t, "ReduceMin", 13, &x, 1, a, 2)); }
static void b_rlse_warp(tg *t) { attr a[] = {{.name = "axes", .n = 1, .i = {2}}}; int x = tg_input(t, 3, D(3, 5, 64)); tg_output(t, tg_node(t, "ReduceLogSumExp", 13, &x, 1, a, 1)); }
static void b_rlse_mid(tg *t) { attr a[] = {{.name = "axes", .n = 1, .i = {1}}}; int x = tg_input(t, 3, D(3, 9, 5)); tg_output(t, tg_node(t, "ReduceLogSumExp", 13, &x, 1, a, 1)); }
static void b_rl2_all(tg *t) { int x = tg_input(t, 3, D(4, 5, 6)); tg_output(t, tg_node(t, "ReduceL2", 13, &x, 1, NULL, 0)); }
static void b_rl1_hw(tg *t) { attr a[] = {{.name = "axes", .n = 2, .i = {2, 3}}}; int x = tg_input(t, 4, D(2, 3, 8, 9)); tg_output(t, tg_node(t, "ReduceL1", 13, &x, 1, a, 1)); }
static void b_rss_13(tg *t) { attr a[] = {{.name = "axes", .n = 2, .i = {1, -1}}}; int x = tg_input(t, 4, D(2, 3, 4, 5)); tg_output(t, tg_node(t, "ReduceSumSquare", 13, &x, 1, a, 1)); }
static void b_rprod_1(tg *t) { attr a[] = {{.name = "axes", .n = 1, .i = {1}}}; int x = tg_input(t, 3, D(4, 5, 6)); tg_output(t, tg_node(t, "ReduceProd", 13, &x, 1, a, 1)); }
/* concat */
static void b_cat1(tg *t) { attr a[] = {A_INT("axis", 1)}; int in[3] = {tg_input(t, 3, D(2, 3, 4)), tg_input(t, 3, D(2, 5, 4)), tg_const(t, 3, D(2, 1, 4), -1.f, 1.f)}; tg_output(t, tg_node(t, "Concat", 13, in, 3, a, 1)); }
static void b_cat0(tg *t) { attr a[] = {A_INT("axis", 0)}; int in[2] = {tg_input(t, 2, D(2, 7)), tg_input(t, 2, D(3, 7))}; tg_output(t, tg_node(t, "Concat", 13, in, 2, a, 1)); }
static void b_cat_many(tg *t) {
  attr a[] = {A_INT("axis", -1)};
  int in[10];
  for (int i = 0; i < 10; ++i) in[i] = i < 5 ? tg_input(t, 2, (const int64_t[]){3, i + 1}) : tg_const(t, 2, (const int64_t[]){3, i + 1}, -1.f, 1.f);
  tg_output(t, tg_node(t, "Concat", 13, in, 10, a, 1));
}
/* views */
static void b_reshape_out(tg *t) { int in[2] = {tg_input(t, 3, D(2, 3, 4)), tg_const_i64(t, 1, D(2), D(6, -1))}; tg_output(t, tg_node(t, "Reshape", 14, in, 2, NULL, 0)); }
static void b_flatten_gemm(tg *t) {
  int x = tg_input(t, 4, D(2, 8, 2, 2));
  int r = tg_node(t, "Relu", 14, &x, 1, NULL, 0);
  attr a[] = {A_INT("axis", 1)};
  int f = tg_node(t, "Flatten", 13, &r, 1, a, 1);
  int in[3] = {f, tg_const(t, 2, D(32, 10), -0.3f, 0.3f), tg_const(t, 1, D(10), -1.f, 1.f)};
  tg_output(t, tg_node(t, "Gemm", 13, in, 3, NULL, 0));
  tg_output(t, f); /* the view is also a partition output: a copy */
}

/* Pad: pads (negative: crops) as a constant, mode, constant_value */
static void pad(tg *t, int opset, const char *mode, const int64_t *pads, int fill) {
  attr a[] = {A_STR("mode", mode)};
  int in[3] = {tg_input(t, 4, D(2, 3, 9, 11)), tg_const_i64(t, 1, D(8), pads), fill ? tg_const(t, 0, NULL, 0.75f, 0.75f) : IR_NONE};
  tg_output(t, tg_node(t, "Pad", opset, in, fill ? 3 : 2, a, 1));
}
static void b_pad_constant(tg *t) { pad(t, 13, "constant", D(0, 1, -1, 2, 1, 0, 3, -2), 1); }
static void b_pad_reflect(tg *t) { pad(t, 13, "reflect", D(0, 0, 2, 3, 0, 0, 8, -1), 0); }
static void b_pad_edge(tg *t) { pad(t, 13, "edge", D(1, 0, 4, -3, 0, 2, -2, 5), 0); }
static void b_pad_wrap(tg *t) { pad(t, 19, "wrap", D(0, 0, 8, 2, 0, 0, -1, 11), 0); }
/* Resize: X [n, c, h, w], scales (n_sizes 0) or sizes, mode and coordinate mode */
static void resize(tg *t, const int64_t *x, const float *scales, const int64_t *sizes, const char *mode,
                   const char *coord, const char *nearest) {
  attr a[] = {A_STR("mode", mode), A_STR("coordinate_transformation_mode", coord), A_STR("nearest_mode", nearest)};
  int in[4] = {tg_input(t, 4, x), IR_NONE, scales ? tg_const_f32(t, 1, D(4), scales) : IR_NONE,
               sizes ? tg_const_i64(t, 1, D(4), sizes) : IR_NONE};
  tg_output(t, tg_node(t, "Resize", 13, in, sizes ? 4 : 3, a, NA(a)));
}
static void b_resize_nearest_x2(tg *t) {
  resize(t, D(2, 16, 20, 24), (const float[]){1, 1, 2, 2}, NULL, "nearest", "asymmetric", "floor");
}
static void b_resize_nearest_down(tg *t) {
  resize(t, D(1, 3, 25, 30), (const float[]){1, 1, 0.6f, 0.45f}, NULL, "nearest", "half_pixel", "round_prefer_ceil");
}
static void b_resize_nearest_sizes(tg *t) {
  resize(t, D(1, 4, 9, 7), NULL, D(2, 4, 20, 15), "nearest", "tf_half_pixel_for_nn", "round_prefer_floor");
}
static void b_resize_linear_x2(tg *t) {
  resize(t, D(2, 16, 20, 24), (const float[]){1, 1, 2, 2}, NULL, "linear", "half_pixel", "round_prefer_floor");
}
static void b_resize_linear_align(tg *t) {
  resize(t, D(1, 5, 9, 13), NULL, D(1, 5, 31, 20), "linear", "align_corners", "round_prefer_floor");
}
static void b_resize_linear_down(tg *t) {
  resize(t, D(1, 3, 40, 33), (const float[]){1, 1, 0.35f, 0.7f}, NULL, "linear", "pytorch_half_pixel", "round_prefer_floor");
}

/* MatMulNBits: A [.., k] x 4-bit B [n, k_blocks, bs / 2] (+ zero points, bias) */
/* MatMulNBits of A (an input, or x when x >= 0): its output value. */
/* accuracy: the node's accuracy_level (0: the attribute left out). */
static int nbits_acc(tg *t, int x, const int64_t *a_dims, int a_rank, int64_t k, int64_t n, int64_t bs, int zp, int bias,
                     int64_t accuracy) {
  int64_t kb = (k + bs - 1) / bs;
  attr a[] = {A_INT("K", k), A_INT("N", n), A_INT("bits", 4), A_INT("block_size", bs), A_INT("accuracy_level", accuracy)};
  int in[6] = {x >= 0 ? x : tg_input(t, a_rank, a_dims), tg_const_u8(t, 3, D(n, kb, bs / 2)),
               tg_const(t, 1, D(n * kb), -0.05f, 0.05f), zp ? tg_const_u8(t, 1, D(n * ((kb + 1) / 2))) : IR_NONE,
               IR_NONE, bias ? tg_const(t, 1, D(n), -1.f, 1.f) : IR_NONE};
  return tg_node_in(t, "com.microsoft", "MatMulNBits", 1, in, bias ? 6 : zp ? 4 : 3, a, accuracy ? NA(a) : NA(a) - 1);
}
static int nbits_of(tg *t, int x, const int64_t *a_dims, int a_rank, int64_t k, int64_t n, int64_t bs, int zp, int bias) {
  return nbits_acc(t, x, a_dims, a_rank, k, n, bs, zp, bias, 0);
}
static void nbits(tg *t, const int64_t *a_dims, int a_rank, int64_t k, int64_t n, int64_t bs, int zp, int bias) {
  tg_output(t, nbits_of(t, -1, a_dims, a_rank, k, n, bs, zp, bias));
}
/* A SwiGLU over two MatMulNBits of one A, Mul(Mul(g, Sigmoid(g)), u): with
 * fusion, one MatMulNBits under glu (plan_fuse.c). */
/* GenAI's SwiGLU over two MatMulNBits of x (gate, up): silu(gate) * up as
 * Sigmoid, Mul, Mul, which plan_fuse.c makes one GEMV; returns its output. */
static int swiglu_nbits_of(tg *t, int x, const int64_t *a_dims, int a_rank, int64_t k, int64_t n, int64_t bs, int zp,
                           int bias) {
  int g = nbits_of(t, x, a_dims, a_rank, k, n, bs, zp, bias), u = nbits_of(t, x, a_dims, a_rank, k, n, bs, zp, bias);
  int sg = tg_node(t, "Sigmoid", 13, &g, 1, NULL, 0);
  int in_a[2] = {g, sg};
  int a = tg_node(t, "Mul", 14, in_a, 2, NULL, 0);
  int in_h[2] = {a, u};
  return tg_node(t, "Mul", 14, in_h, 2, NULL, 0);
}
static void nbits_swiglu(tg *t, const int64_t *a_dims, int a_rank, int64_t k, int64_t n, int64_t bs, int zp, int bias) {
  tg_output(t, swiglu_nbits_of(t, tg_input(t, a_rank, a_dims), a_dims, a_rank, k, n, bs, zp, bias));
}
static void b_nbits_m1(tg *t) { nbits(t, D(1, 1024), 2, 1024, 300, 32, 1, 1); }
static void b_nbits_m7_tail(tg *t) { nbits(t, D(7, 520), 2, 520, 77, 16, 1, 0); }
static void b_nbits_m3_b128(tg *t) { nbits(t, D(1, 3, 768), 3, 768, 64, 128, 0, 1); }
static void b_nbits_m40(tg *t) { nbits(t, D(2, 20, 1024), 3, 1024, 260, 128, 0, 1); }
static void b_nbits_m20_tail(tg *t) { nbits(t, D(20, 200), 2, 200, 136, 64, 1, 1); }
/* fp32: 1100 x 4096 weights are 18 MB dequantised: column chunks of 1024 and 76 */
static void b_nbits_m12_chunks(tg *t) { nbits(t, D(12, 4096), 2, 4096, 1100, 64, 1, 1); }
/* Few columns, long K: the GEMV splits K over blocks (4 slices of 1024;
 * 3 of block-16 codes, the last 960 long, K's tail zero-padded). */
static void b_nbits_m2_ksplit(tg *t) { nbits(t, D(2, 4096), 2, 4096, 64, 32, 1, 1); }
static void b_nbits_m5_ksplit_b16(tg *t) { nbits(t, D(5, 3000), 2, 3000, 40, 16, 1, 1); }
/* The same with blocks of 32 (fp16: the integer form at 8 rows, K split
 * into slices of 1024 over 4 blocks, the last 928 codes long, 24 of them
 * padding past K). */
static void b_nbits_m5_ksplit_b32(tg *t) { nbits(t, D(5, 3976), 2, 3976, 40, 32, 1, 1); }
/* More column blocks than the grid has blocks: each block walks several. */
/* One row, K = 8192: two slices of K at the default (the last block to
 * arrive at a column block adds them); N = 2050 leaves a last column block
 * with one group of columns. */
/* one row whose pieces hold several pairs, a short last block, an odd N */
static void b_nbits_m1_bulk_b64(tg *t) { nbits(t, D(1, 2048), 2, 2048, 8201, 64, 1, 1); }
static void b_nbits_m1_bulk_b128(tg *t) { nbits(t, D(1, 4096), 2, 4096, 1000, 128, 0, 0); }
/* one row whose block's share (~360 KB) passes shared memory: its pieces take turns in a ring of slots */
static void b_nbits_m1_bulk_ring(tg *t) { nbits(t, D(1, 2048), 2, 2048, 40001, 32, 1, 1); }
static void b_nbits_m1_k8192(tg *t) { nbits(t, D(1, 8192), 2, 8192, 2050, 32, 1, 1); }
static void b_nbits_m1_wide(tg *t) { nbits(t, D(1, 128), 2, 128, 9000, 32, 1, 1); }
static void b_nbits_m3_wide(tg *t) { nbits(t, D(3, 64), 2, 64, 17000, 16, 0, 1); }
/* Rows of A whose 32-element blocks mix values 10^4 apart (an outlier
 * every 37 elements), K = 8192 (one block stages the whole row, two rounds
 * of loads): fp16 A is staged as int16 with a scale a block. */
static void nbits_outliers(tg *t, int64_t accuracy) {
  static float c[8192];
  for (int i = 0; i < 8192; i++) c[i] = i % 37 == 0 ? 100.f : i % 3 ? 0.01f : -0.02f;
  int in[2] = {tg_input(t, 2, D(2, 8192)), tg_const_vals(t, 1, D(8192), c)};
  tg_output(t, nbits_acc(t, tg_node(t, "Mul", 14, in, 2, NULL, 0), NULL, 2, 8192, 2048, 32, 1, 1, accuracy));
}
static void b_nbits_outliers(tg *t) { nbits_outliers(t, 0); }
/* accuracy_level 1 (fp32 asked for): fp16 A is not staged as int16. */
static void b_nbits_outliers_exact(tg *t) { nbits_outliers(t, 1); }
/* fp16 on tensor cores (gemv_mma): 8 and 16 rows over more column blocks
 * than a K split wants (one slice: stored in the kernel, paired with lane
 * ^ 4), an odd N whose last column has no pair; 32 rows (four tiles) in
 * blocks of 128 with a K split. The cases above take it too at 2 to 20
 * rows (K tails inside a chunk, several slices, blocks of 32 and 64).
 * fp32 runs past 8 rows on the dequantise + GEMM path (TF32: its
 * tolerance). */
static void b_nbits_mma_m8_wide(tg *t) { nbits(t, D(8, 256), 2, 256, 16400, 32, 1, 1); }
static void b_nbits_mma_m16_wide_odd(tg *t) { nbits(t, D(16, 512), 2, 512, 16389, 32, 0, 1); }
static void b_nbits_mma_m32(tg *t) { nbits(t, D(4, 8, 1024), 3, 1024, 300, 128, 1, 1); }
/* SwiGLU (glu) on every path: the GEMV at 1 and 3 rows, K split over blocks
 * (gemv_sum pairs the columns), the GEMM path in one chunk and in chunks
 * with a tail (fp32: 2 x 1100 rows of 4096 make chunks of 1024 and 152). */
static void b_nbits_glu_m1(tg *t) { nbits_swiglu(t, D(1, 1024), 2, 1024, 300, 32, 1, 1); }
static void b_nbits_glu_m3(tg *t) { nbits_swiglu(t, D(1, 3, 520), 3, 520, 77, 16, 1, 0); }
static void b_nbits_glu_ksplit(tg *t) { nbits_swiglu(t, D(2, 4096), 2, 4096, 64, 32, 1, 1); }
static void b_nbits_glu_m1_k8192(tg *t) { nbits_swiglu(t, D(1, 8192), 2, 8192, 1030, 32, 0, 0); }
/* A decode layer's RMS norm and the one-row MatMulNBits after it (the GEMV
 * takes the norm into its staging of A, gb_nbits.c): x [1, k], with skip
 * GenAI's SkipSimplifiedLayerNormalization (x + skip + a skip bias, whose
 * sum is an output too, as the next layer's residual), else
 * SimplifiedLayerNormalization; then n columns (zero points and a bias),
 * or with glu a SwiGLU over two of them. The GEMV takes the norm where it
 * does not split K: n of 2048 or more at k = 2048 (fewer columns split
 * it, as K = 8192 does). With `made`, x and the skip are made in the
 * graph (a MatMulNBits and a Relu, as a decode layer's down projection and
 * residual), so their bytes come free at the norm, and the GEMV's output
 * goes through a Relu: the plan must not give the GEMV's output the norm's
 * input bytes (plan_build.c), or the norm cannot be taken. */
static void norm_nbits(tg *t, int64_t k, int64_t n, int skip, int glu, int made) {
  int x = tg_input(t, 2, D(1, k)), normed = IR_NONE;
  if (made) x = nbits_of(t, x, D(1, k), 2, k, k, 32, 1, 0);
  if (skip) {
    int s = tg_input(t, 2, D(1, k));
    if (made) s = tg_node(t, "Relu", 14, &s, 1, NULL, 0);
    int in[4] = {x, s, tg_const(t, 1, D(k), 0.5f, 1.5f), tg_const(t, 1, D(k), -0.2f, 0.2f)};
    int out[4];
    attr a[] = {A_FLOAT("epsilon", 1e-5f)};
    tg_node_outs_some(t, "com.microsoft", "SkipSimplifiedLayerNormalization", 1, in, 4, a, NA(a), out, 4, 6u);
    normed = out[0];
    tg_output(t, out[3]);
  } else {
    int in[2] = {x, tg_const(t, 1, D(k), 0.5f, 1.5f)};
    attr a[] = {A_INT("axis", -1), A_FLOAT("epsilon", 1e-6f), A_INT("stash_type", 1)};
    normed = tg_node(t, "SimplifiedLayerNormalization", 1, in, 2, a, NA(a));
  }
  int y = glu ? swiglu_nbits_of(t, normed, D(1, k), 2, k, n, 32, 1, 0) : nbits_of(t, normed, D(1, k), 2, k, n, 32, 1, 1);
  tg_output(t, made ? tg_node(t, "Relu", 14, &y, 1, NULL, 0) : y);
}
static void b_skip_norm_nbits(tg *t) { norm_nbits(t, 2048, 2050, 1, 0, 0); }
static void b_norm_nbits_glu(tg *t) { norm_nbits(t, 1024, 520, 0, 1, 0); }
static void b_skip_norm_nbits_k8192(tg *t) { norm_nbits(t, 8192, 64, 1, 0, 0); }
static void b_skip_norm_nbits_made(tg *t) { norm_nbits(t, 2048, 2048, 1, 0, 1); }
static void b_nbits_glu_m40(tg *t) { nbits_swiglu(t, D(2, 20, 1024), 3, 1024, 260, 128, 0, 1); }
static void b_nbits_glu_chunks(tg *t) { nbits_swiglu(t, D(12, 4096), 2, 4096, 1100, 64, 1, 0); }
/* glu stored by gemv_mma itself (one slice), 8 rows */
static void b_nbits_glu_mma_wide(tg *t) { nbits_swiglu(t, D(8, 256), 2, 256, 8200, 32, 1, 1); }

/* ConvTranspose (W [C_in, C_out / group, k...]) and LRN */
static void b_convt_s2_bias(tg *t) {
  attr a[] = {{.name = "strides", .n = 2, .i = {2, 2}}, {.name = "pads", .n = 4, .i = {1, 0, 0, 1}}};
  int in[3] = {tg_input(t, 4, D(2, 4, 5, 6)), tg_const(t, 4, D(4, 3, 3, 3), -0.5f, 0.5f), tg_const(t, 1, D(3), -1.f, 1.f)};
  tg_output(t, tg_node(t, "ConvTranspose", 11, in, 3, a, NA(a)));
}
static void b_convt_group_outpad(tg *t) {
  attr a[] = {A_INT("group", 2), {.name = "strides", .n = 2, .i = {2, 3}}, {.name = "output_padding", .n = 2, .i = {1, 2}},
              {.name = "dilations", .n = 2, .i = {1, 2}}};
  int in[3] = {tg_input(t, 4, D(1, 4, 6, 5)), tg_const(t, 4, D(4, 3, 3, 3), -0.5f, 0.5f), tg_const(t, 1, D(6), -1.f, 1.f)};
  tg_output(t, tg_node(t, "ConvTranspose", 11, in, 3, a, NA(a)));
}
static void b_convt_same_relu(tg *t) { /* ConvTranspose + Relu fused by plan_fuse: the activation in the epilogue */
  attr a[] = {{.name = "strides", .n = 2, .i = {2, 2}}, {.name = "auto_pad", .n = -3, .s = "SAME_LOWER"}};
  int in[2] = {tg_input(t, 4, D(2, 8, 7, 7)), tg_const(t, 4, D(8, 16, 4, 4), -0.3f, 0.3f)};
  int y = tg_node(t, "ConvTranspose", 11, in, 2, a, NA(a));
  tg_output(t, tg_node(t, "Relu", 14, &y, 1, NULL, 0));
}
static void b_convt_output_shape(tg *t) { /* one element past the natural size: a pad of 0, the last row unreached */
  attr a[] = {{.name = "strides", .n = 2, .i = {3, 2}}, {.name = "output_shape", .n = 2, .i = {10, 8}}};
  int in[3] = {tg_input(t, 4, D(1, 2, 3, 3)), tg_const(t, 4, D(2, 3, 3, 3), -0.5f, 0.5f), tg_const(t, 1, D(3), -1.f, 1.f)};
  tg_output(t, tg_node(t, "ConvTranspose", 11, in, 3, a, NA(a)));
}
static void b_convt_1d(tg *t) {
  attr a[] = {{.name = "strides", .n = 1, .i = {3}}, {.name = "pads", .n = 2, .i = {1, 2}}};
  int in[3] = {tg_input(t, 3, D(2, 3, 9)), tg_const(t, 3, D(3, 2, 4), -0.5f, 0.5f), tg_const(t, 1, D(2), -1.f, 1.f)};
  tg_output(t, tg_node(t, "ConvTranspose", 11, in, 3, a, NA(a)));
}
static void b_convt_large(tg *t) { /* a decoder's upsampling layer */
  attr a[] = {{.name = "strides", .n = 2, .i = {2, 2}}, {.name = "pads", .n = 4, .i = {1, 1, 1, 1}}};
  int in[3] = {tg_input(t, 4, D(2, 64, 16, 16)), tg_const(t, 4, D(64, 32, 4, 4), -0.1f, 0.1f),
               tg_const(t, 1, D(32), -1.f, 1.f)};
  tg_output(t, tg_node(t, "ConvTranspose", 11, in, 3, a, NA(a)));
}
static void b_conv_patchify(tg *t) { /* ViT's patch embedding (16 x 16, stride 16): a Transpose and a MatMul when fused */
  attr a[] = {{.name = "strides", .n = 2, .i = {16, 16}}};
  int in[3] = {tg_input(t, 4, D(2, 3, 32, 48)), tg_const(t, 4, D(64, 3, 16, 16), -0.1f, 0.1f),
               tg_const(t, 1, D(64), -1.f, 1.f)};
  tg_output(t, tg_node(t, "Conv", 11, in, 3, a, NA(a)));
}
static void b_conv_patchify_tokens(tg *t) { /* then ViT's flatten(2).transpose(1, 2): a token-major MatMul when fused */
  attr a[] = {{.name = "strides", .n = 2, .i = {16, 16}}}, perm[] = {{.name = "perm", .n = 3, .i = {0, 2, 1}}};
  int in[3] = {tg_input(t, 4, D(2, 3, 32, 48)), tg_const(t, 4, D(64, 3, 16, 16), -0.1f, 0.1f),
               tg_const(t, 1, D(64), -1.f, 1.f)};
  int r[2] = {tg_node(t, "Conv", 11, in, 3, a, NA(a)), tg_const_i64(t, 1, D(3), D(0, 64, -1))};
  int f = tg_node(t, "Reshape", 14, r, 2, NULL, 0);
  tg_output(t, tg_node(t, "Transpose", 21, &f, 1, perm, NA(perm)));
}
static void b_lrn(tg *t) {
  attr a[] = {A_INT("size", 5), A_FLOAT("alpha", 0.02f), A_FLOAT("beta", 0.6f), A_FLOAT("bias", 2.f)};
  int x = tg_input(t, 4, D(2, 7, 5, 6));
  tg_output(t, tg_node(t, "LRN", 13, &x, 1, a, NA(a)));
}
static void b_lrn_wide(tg *t) {
  attr a[] = {A_INT("size", 3)};
  int x = tg_input(t, 4, D(1, 96, 13, 13));
  tg_output(t, tg_node(t, "LRN", 13, &x, 1, a, NA(a)));
}

/* attention on the tensor-core kernel in fp16/bf16 (gpu/gpu_flash.cu; fp32 runs the CUDA-core one):
 * GQA heads under a causal mask, rows and keys past whole tiles; head size 128 with more keys than rows
 * (both one warp a block) */
static void b_attn_causal_gqa(tg *t) {
  attr a[] = {A_INT("is_causal", 1)};
  int in[3] = {tg_input(t, 4, D(2, 4, 130, 64)), tg_input(t, 4, D(2, 2, 130, 64)), tg_input(t, 4, D(2, 2, 130, 64))};
  tg_output(t, tg_node(t, "Attention", 23, in, 3, a, NA(a)));
}
/* enough rows and heads for 4 warps a block (GQA, causal), and for 2 */
static void b_attn_w4_causal(tg *t) {
  attr a[] = {A_INT("is_causal", 1)};
  int in[3] = {tg_input(t, 4, D(1, 32, 600, 64)), tg_input(t, 4, D(1, 8, 600, 64)), tg_input(t, 4, D(1, 8, 600, 64))};
  tg_output(t, tg_node(t, "Attention", 23, in, 3, a, NA(a)));
}
static void b_attn_w2(tg *t) {
  int in[3] = {tg_input(t, 4, D(1, 16, 600, 64)), tg_input(t, 4, D(1, 16, 500, 64)), tg_input(t, 4, D(1, 16, 500, 64))};
  tg_output(t, tg_node(t, "Attention", 23, in, 3, NULL, 0));
}
/* Grouped heads (8 over 2 KV heads) without a mask, batch 2: the library's
 * SDPA where the DNN library has it (fp16, bf16). */
static void b_attn_sdpa_gqa(tg *t) {
  int in[3] = {tg_input(t, 4, D(2, 8, 77, 64)), tg_input(t, 4, D(2, 2, 90, 64)), tg_input(t, 4, D(2, 2, 90, 64))};
  tg_output(t, tg_node(t, "Attention", 23, in, 3, NULL, 0));
}
/* A boolean key mask (ONNX Attention's: masked scores are -inf) where
 * batch 1 masks every key: its rows must come out zero, as the ref's (the
 * Attention op's rule, empty_zero). In half precision the library's SDPA
 * runs it with the mask as a bias of the keys. */
static void b_attn_mask_empty_rows(tg *t) {
  int q = tg_input(t, 4, D(2, 4, 64, 64)), k = tg_input(t, 4, D(2, 4, 96, 64)), v = tg_input(t, 4, D(2, 4, 96, 64));
  int keep = tg_value(t, HD_DT_BOOL, 4, D(2, 1, 1, 96));
  if (!t->st) {
    uint8_t m[2 * 96];
    for (int i = 0; i < 2 * 96; i++) m[i] = i < 96 && i % 96 < 80 && i != 7;
    t->st = ir_value_set_data(t->g, keep, m, sizeof m);
  }
  int in[4] = {q, k, v, keep};
  tg_output(t, tg_node(t, "Attention", 23, in, 4, NULL, 0));
}

/* An additive key mask ([B, 1, 1, L], the input dtype: BERT's padding as a
 * bias) with batch 1's keys past 100 at -10000 and every key of batch 2 at
 * -inf (its rows zero: the Attention op's rule): the library's SDPA graph
 * with a bias, where the DNN library has it. */
static void b_attn_sdpa_key_bias(tg *t) {
  int q = tg_input(t, 4, D(3, 6, 96, 64)), k = tg_input(t, 4, D(3, 6, 112, 64)), v = tg_input(t, 4, D(3, 6, 112, 64));
  float bias[3 * 112];
  for (int i = 0; i < 3 * 112; i++)
    bias[i] = i >= 2 * 112 ? -INFINITY : i >= 112 + 100 ? -10000.f : (float)((i * 37) % 11) / 11.f - 0.5f;
  int in[4] = {q, k, v, tg_const_vals(t, 4, D(3, 1, 1, 112), bias)};
  tg_output(t, tg_node(t, "Attention", 23, in, 4, NULL, 0));
}
static void b_attn_d128_cross(tg *t) {
  int in[3] = {tg_input(t, 4, D(1, 2, 70, 128)), tg_input(t, 4, D(1, 2, 100, 128)), tg_input(t, 4, D(1, 2, 100, 128))};
  tg_output(t, tg_node(t, "Attention", 23, in, 3, NULL, 0));
}

/* GroupQueryAttention's decode (one new token a batch) on the kernel that appends the new K/V itself:
 * packed Q|K|V, rotary from cos/sin tables, 8 query heads a KV head, a cache of 300 rows in several key
 * ranges, batches at different lengths; present is a buffer apart from past, so past's rows are copied
 * in first. Every output compared: the attention, and both presents with the new rows. */
static void b_gqa_decode(tg *t) {
  attr a[] = {A_INT("num_heads", 16), A_INT("kv_num_heads", 2), A_INT("do_rotary", 1)};
  int in[9] = {tg_input(t, 3, D(2, 1, 20 * 64)),
               IR_NONE,
               IR_NONE,
               tg_input(t, 4, D(2, 2, 300, 64)),
               tg_input(t, 4, D(2, 2, 300, 64)),
               tg_const_i32(t, 1, D(2), (const int32_t[]){259, 130}),
               tg_const_i32(t, 1, D(1), (const int32_t[]){260}),
               tg_const(t, 2, D(300, 32), -1.f, 1.f),
               tg_const(t, 2, D(300, 32), -1.f, 1.f)};
  int out[3];
  tg_node_outs(t, "com.microsoft", "GroupQueryAttention", 1, in, 9, a, NA(a), out, 3);
  for (int i = 0; i < 3; i++) tg_output(t, out[i]);
}

/* attention written out with K^T stored (GPT-2's export: keys contiguous) and an additive mask, fused
 * into one Attention whose K the flash kernel reads transposed; keys past whole tiles */
static void b_attn_kt_bias(tg *t) {
  attr ax[] = {A_INT("axis", -1)};
  int q = tg_input(t, 4, D(2, 4, 130, 64)), kt = tg_input(t, 4, D(2, 4, 64, 136)), v = tg_input(t, 4, D(2, 4, 136, 64));
  int in_s[2] = {q, kt};
  int in_b[2] = {tg_node(t, "MatMul", 13, in_s, 2, NULL, 0), tg_const(t, 4, D(1, 1, 130, 136), -2.f, 1.f)};
  int p = tg_node(t, "Softmax", 13, (int[1]){tg_node(t, "Add", 14, in_b, 2, NULL, 0)}, 1, ax, NA(ax));
  int in_o[2] = {p, v};
  tg_output(t, tg_node(t, "MatMul", 13, in_o, 2, NULL, 0));
}

/* transformers' BERT mask: a boolean [B, 1, S, S] made once and, per layer, Add(scores, Where(keep, 0, fill)),
 * fused into an Attention that reads the booleans with fill added. Batch 0 keeps every key (the flash kernel's
 * warps find whole tiles kept and skip the masking), batch 1 drops keys past 100 (padding) and, for rows 64-79,
 * key 5 too (a tile kept but for one score). */
static void b_attn_where_mask(tg *t) {
  attr ax[] = {A_INT("axis", -1)};
  int q = tg_input(t, 4, D(2, 4, 128, 64)), kt = tg_input(t, 4, D(2, 4, 64, 128)), v = tg_input(t, 4, D(2, 4, 128, 64));
  int keep = tg_value(t, HD_DT_BOOL, 4, D(2, 1, 128, 128));
  if (!t->st) {
    uint8_t *m = malloc(2 * 128 * 128);
    for (int i = 0; i < 2 * 128 * 128; i++) {
      int b = i / (128 * 128), row = i / 128 % 128, key = i % 128;
      m[i] = b == 0 || (key < 100 && !(key == 5 && row >= 64 && row < 80));
    }
    t->st = ir_value_set_data(t->g, keep, m, 2 * 128 * 128);
    free(m);
  }
  int in_w[3] = {keep, tg_const_vals(t, 0, NULL, (const float[]){0.f}), tg_const_vals(t, 0, NULL, (const float[]){-30000.f})};
  int in_s[2] = {q, kt};
  int in_b[2] = {tg_node(t, "MatMul", 13, in_s, 2, NULL, 0), tg_node(t, "Where", 16, in_w, 3, NULL, 0)};
  int p = tg_node(t, "Softmax", 13, (int[1]){tg_node(t, "Add", 14, in_b, 2, NULL, 0)}, 1, ax, NA(ax));
  int in_o[2] = {p, v};
  tg_output(t, tg_node(t, "MatMul", 13, in_o, 2, NULL, 0));
}

/* Masks over the keys alone ([B, 1, 1, S]: BERT's key padding), which the
 * flash kernel turns into one factor and one addend a key a tile: a
 * boolean mask through Where(keep, 0, fill) + Add (batch 0 keeps every key,
 * the others drop keys from 100 - 7 b on and key 5), or a bias of random
 * values with two keys at -inf. At [2, 4, 128] the block's warps split the
 * keys; [2, 12, 384] is BERT b8's grid (2 warps, 32 rows a block).
 * pairs: the boolean mask And a constant [1, 1, S, S] first and Expanded to
 * [B, 1, S, S], as transformers builds it: 1 a constant of all true (the
 * plan finds the rows repeated: the key path), 2 a causal one (rows differ:
 * the per-score path). */
static void attn_key_mask_pairs(tg *t, int64_t nb, int64_t nh, int64_t s, int64_t kv, int boolean, int pairs) {
  attr ax[] = {A_INT("axis", -1)};
  int q = tg_input(t, 4, D(nb, nh, s, 64)), kt = tg_input(t, 4, D(nb, nh, 64, kv)), v = tg_input(t, 4, D(nb, nh, kv, 64));
  int in_s[2] = {q, kt}, add;
  if (boolean) {
    int keep = tg_value(t, HD_DT_BOOL, 4, D(nb, 1, 1, kv));
    if (!t->st) {
      uint8_t *m = malloc((size_t)(nb * kv));
      for (int64_t i = 0; i < nb * kv; i++) {
        int64_t b = i / kv, key = i % kv;
        m[i] = b == 0 || (key < 100 - 7 * b && key != 5);
      }
      t->st = ir_value_set_data(t->g, keep, m, (size_t)(nb * kv));
      free(m);
    }
    if (pairs) {
      int both = tg_value(t, HD_DT_BOOL, 4, D(1, 1, s, kv));
      uint8_t *m = malloc((size_t)(s * kv));
      for (int64_t i = 0; m && i < s * kv; i++) m[i] = pairs == 1 || i % kv <= i / kv;
      if (!t->st) t->st = m ? ir_value_set_data(t->g, both, m, (size_t)(s * kv)) : hd_error(HD_ERR_OUT_OF_MEMORY, "test");
      free(m);
      int in_and[2] = {both, keep};
      int in_e[2] = {tg_node(t, "And", 7, in_and, 2, NULL, 0), tg_const_i64(t, 1, D(4), D(nb, 1, s, kv))};
      keep = tg_node(t, "Expand", 13, in_e, 2, NULL, 0);
    }
    int in_w[3] = {keep, tg_const_vals(t, 0, NULL, (const float[]){0.f}),
                   tg_const_vals(t, 0, NULL, (const float[]){-30000.f})};
    add = tg_node(t, "Where", 16, in_w, 3, NULL, 0);
  } else {
    float *bias = malloc(sizeof(float) * (size_t)(nb * kv));
    for (int64_t i = 0; i < nb * kv; i++) bias[i] = i % kv == 3 || i % kv == kv - 2 ? -INFINITY : (float)(i % 7) * 0.3f - 1.f;
    add = tg_const_vals(t, 4, D(nb, 1, 1, kv), bias);
    free(bias);
  }
  int in_b[2] = {tg_node(t, "MatMul", 13, in_s, 2, NULL, 0), add};
  int p = tg_node(t, "Softmax", 13, (int[1]){tg_node(t, "Add", 14, in_b, 2, NULL, 0)}, 1, ax, NA(ax));
  int in_o[2] = {p, v};
  tg_output(t, tg_node(t, "MatMul", 13, in_o, 2, NULL, 0));
}
/* Two layers reading one key mask as torch's exporter writes BERT's now:
 * Where(keep, 0, -inf) made once and added to each layer's scores, the
 * softmax's NaN rows zeroed (Where(IsNaN(p), 0, p)). Batch 0 drops key 5,
 * batch 1 keys from 70 on, batch 2 every key (its rows zero, through both
 * layers). In half precision the library's SDPA takes both as a bias of
 * the keys, which the first layer's step builds and the second reads. */
static void b_attn_sdpa_shared_key_mask(tg *t) {
  attr ax[] = {A_INT("axis", -1)};
  const int64_t nb = 3, nh = 6, s = 96, kv = 112; /* attention_sdpa_key_bias's shapes */
  t->orank = 4; /* the nodes' outputs 4-D (dims unknown until planned): the fusion needs their ranks */
  int keep = tg_value(t, HD_DT_BOOL, 4, D(nb, 1, 1, kv));
  if (!t->st) {
    uint8_t m[3 * 112];
    for (int64_t i = 0; i < nb * kv; i++) m[i] = i / kv == 0 ? i % kv != 5 : i / kv == 1 && i % kv < 70;
    t->st = ir_value_set_data(t->g, keep, m, sizeof m);
  }
  int in_w[3] = {keep, tg_const_vals(t, 0, NULL, (const float[]){0.f}),
                 tg_const_vals(t, 0, NULL, (const float[]){-INFINITY})};
  int bias = tg_node(t, "Where", 16, in_w, 3, NULL, 0), x = tg_input(t, 4, D(nb, nh, s, 64));
  attr perm[] = {{.name = "perm", .n = 4, .i = {0, 1, 3, 2}}};
  for (int layer = 0; layer < 2; layer++) { /* K^T a Transpose of K, as exported (the library wants K's rows) */
    int k = tg_input(t, 4, D(nb, nh, kv, 64)), v = tg_input(t, 4, D(nb, nh, kv, 64));
    int in_s[2] = {x, tg_node(t, "Transpose", 13, &k, 1, perm, 1)};
    int in_b[2] = {tg_node(t, "MatMul", 13, in_s, 2, NULL, 0), bias};
    int p = tg_node(t, "Softmax", 13, (int[1]){tg_node(t, "Add", 14, in_b, 2, NULL, 0)}, 1, ax, NA(ax));
    int in_g[3] = {tg_node(t, "IsNaN", 13, &p, 1, NULL, 0), tg_const_vals(t, 0, NULL, (const float[]){0.f}), p};
    int in_o[2] = {tg_node(t, "Where", 16, in_g, 3, NULL, 0), v};
    x = tg_node(t, "MatMul", 13, in_o, 2, NULL, 0);
  }
  tg_output(t, x);
}

static void attn_key_mask(tg *t, int64_t nb, int64_t nh, int64_t s, int64_t kv, int boolean) {
  attn_key_mask_pairs(t, nb, nh, s, kv, boolean, 0);
}
static void b_attn_key_padding_split(tg *t) { attn_key_mask(t, 2, 4, 128, 128, 1); }
static void b_attn_key_padding_expanded(tg *t) { attn_key_mask_pairs(t, 3, 12, 128, 128, 1, 1); }
static void b_attn_key_padding_causal_pairs(tg *t) { attn_key_mask_pairs(t, 3, 12, 128, 128, 1, 2); }
static void b_attn_key_padding_bert_b8(tg *t) { attn_key_mask(t, 2, 12, 384, 384, 1); }
static void b_attn_key_bias_tail(tg *t) { attn_key_mask(t, 3, 4, 130, 136, 0); }
static void b_attn_key_bias_rows64(tg *t) { attn_key_mask(t, 3, 12, 512, 200, 0); }

/* BERT's self-attention written out: three projections of x (MatMul + bias), each Reshaped to heads
 * and transposed; fused, the projections are one MatMul and a Split that the plan reads in place
 * (strided views of the merged output), which the attention reads through its strides */
static void b_attn_projections(tg *t) {
  attr ax[] = {A_INT("axis", -1)};
  int x = tg_input(t, 3, D(2, 40, 128)), shape = tg_const_i64(t, 1, D(4), D(2, 40, 2, 64)), proj[3];
  int8_t perms[3][4] = {{0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}};
  for (int i = 0; i < 3; i++) {
    t->orank = 3;
    int in_mm[2] = {x, tg_const(t, 2, D(128, 128), -0.1f, 0.1f)};
    int mm = tg_node(t, "MatMul", 13, in_mm, 2, NULL, 0);
    int in_add[2] = {mm, tg_const(t, 1, D(128), -0.5f, 0.5f)};
    int y = tg_node(t, "Add", 14, in_add, 2, NULL, 0);
    if (!t->st) t->g->values[mm].dims[2] = t->g->values[y].dims[2] = 128;
    t->orank = 4;
    int in_r[2] = {y, shape};
    int r = tg_node(t, "Reshape", 14, in_r, 2, NULL, 0);
    attr perm[] = {{.name = "perm", .n = 4, .i = {perms[i][0], perms[i][1], perms[i][2], perms[i][3]}}};
    proj[i] = tg_node(t, "Transpose", 13, &r, 1, perm, 1);
  }
  int in_s[2] = {proj[0], proj[1]};
  int s = tg_node(t, "MatMul", 13, in_s, 2, NULL, 0);
  int in_sd[2] = {s, tg_const(t, 0, NULL, 8.0f, 8.0f)};
  int p = tg_node(t, "Softmax", 13, (int[1]){tg_node(t, "Div", 14, in_sd, 2, NULL, 0)}, 1, ax, NA(ax));
  int in_o[2] = {p, proj[2]};
  tg_output(t, tg_node(t, "MatMul", 13, in_o, 2, NULL, 0));
  t->orank = -1;
}

/* Q and K as the two halves of one tensor's last dim (a Split the plan reads in place: K starts 64 bytes
 * into each row, on 16 bytes but not on the 256 the BLAS's fp32 GEMM form assumes; it must not take it,
 * and check_split_unaligned sees the aliases made) */
static void b_attn_split_unaligned(tg *t) {
  attr ax[] = {A_INT("axis", -1)};
  int64_t dyn[4] = {-1, -1, -1, -1};
  int x = tg_input(t, 4, D(1, 2, 176, 32)), v = tg_input(t, 4, D(1, 2, 176, 16));
  t->orank = 4;
  int p = tg_node(t, "Sigmoid", 13, &x, 1, NULL, 0); /* in the arena: a graph input's bytes are not aliased */
  t->orank = -1;
  int qk[2] = {tg_value(t, t->dtype, 4, dyn), tg_value(t, t->dtype, 4, dyn)}, idx = -1;
  if (!t->st) t->st = ir_graph_add_node(t->g, OP_SPLIT, "split", "Split", 13, &p, 1, qk, 2, &idx);
  if (!t->st) {
    attr_table at = {ax, NA(ax)};
    op_attrs a = attr_table_reader(&at);
    t->st = op_find("", "Split", 13)->parse(t->g, &t->g->nodes[idx], &a);
  }
  int in[3] = {qk[0], qk[1], v};
  tg_output(t, tg_node(t, "Attention", 23, in, 3, NULL, 0));
}

typedef struct op_case {
  const char *name;
  op_builder build;
  int fuse;
  double tol32, tol16;
} op_case;

static const op_case op_cases[] = {
    {"relu", b_relu, 0, 1e-6, 1e-3}, {"leaky_relu", b_leaky, 0, 1e-6, 1e-3},
    {"clip6", b_clip6, 0, 1e-6, 1e-3}, {"clip13", b_clip13, 0, 1e-6, 1e-3},
    {"sigmoid", b_sigmoid, 0, 1e-5, 2e-3}, {"hard_sigmoid", b_hsig, 0, 1e-5, 2e-3},
    {"hard_swish", b_hswish, 0, 1e-5, 2e-3}, {"tanh", b_tanh, 0, 1e-5, 2e-3},
    {"add_same", b_add_same, 0, 1e-6, 2e-3}, {"sub_bcast", b_sub_bcast, 0, 1e-6, 2e-3},
    {"mul_scalar", b_mul_scalar, 0, 1e-6, 2e-3}, {"div_vec", b_div_vec, 0, 1e-5, 2e-3},
    {"add_bcast_both", b_add_both, 0, 1e-6, 2e-3}, {"mul_channel", b_mul_chan, 0, 1e-6, 2e-3},
    {"add_relu_fused", b_add_relu, 1, 1e-6, 2e-3}, {"batchnorm", b_bn, 0, 1e-5, 5e-3},
    {"maxpool_3x3s2p1", b_maxpool, 0, 1e-6, 1e-3}, {"maxpool_dil_ceil", b_maxpool_dil_ceil, 0, 1e-6, 1e-3},
    {"avgpool_excl_pad_ceil", b_avgpool_excl, 0, 1e-5, 2e-3}, {"avgpool_incl_pad_asym", b_avgpool_incl, 0, 1e-5, 2e-3},
    {"avgpool_incl_pad_floor", b_avgpool_incl_floor, 0, 1e-5, 2e-3},
    {"avgpool_excl_pad_floor", b_avgpool_excl_floor, 0, 1e-5, 2e-3},
    {"maxpool_asym_pads", b_maxpool_asym, 0, 1e-6, 1e-3},
    {"maxpool_1d", b_maxpool1d, 0, 1e-6, 1e-3}, {"avgpool_3d", b_avgpool3d, 0, 1e-5, 2e-3},
    {"global_avgpool", b_gap, 0, 1e-5, 2e-3}, {"global_maxpool", b_gmp, 0, 1e-6, 1e-3},
    {"gemm_bias", b_gemm_bias, 0, 5e-3, 1e-2}, {"gemm_trans_ab_alpha_beta", b_gemm_trans, 0, 5e-3, 1e-2},
    {"gemm_col_c", b_gemm_colc, 0, 5e-3, 1e-2}, {"gemm_relu_fused", b_gemm_relu, 1, 5e-3, 1e-2},
    {"matmul_batched", b_mm_batched, 0, 5e-3, 1e-2}, {"matmul_bcast_a", b_mm_bcast_a, 0, 5e-3, 1e-2},
    {"matmul_bcast_2dims", b_mm_bcast_2d, 0, 5e-3, 1e-2}, {"matmul_vec", b_mm_vec, 0, 5e-3, 1e-2},
    {"matmul_bias_tanh_fused", b_mm_bias_gelu_like, 1, 5e-3, 1e-2}, {"matmul_128x512x256", b_mm_large, 0, 5e-3, 1e-2},
    {"matmul_bias_rows197", b_mm_bias_rows197, 1, 5e-3, 1e-2},
    {"softmax_last", b_sm_last, 0, 1e-5, 2e-3}, {"softmax_axis1_inner", b_sm_mid, 0, 1e-5, 2e-3},
    {"softmax_legacy_2d", b_sm_legacy, 0, 1e-5, 2e-3}, {"softmax_long_row", b_sm_long, 0, 1e-5, 2e-3},
    {"reducemean_hw", b_rm_hw, 0, 1e-5, 2e-3}, {"reducemean_axis0", b_rm_0, 0, 1e-5, 2e-3},
    {"reducemean_all", b_rm_all, 0, 1e-5, 2e-3}, {"reducemean_1_-1", b_rm_13, 0, 1e-5, 2e-3},
    {"reducesum_warp", b_rs_warp, 0, 1e-5, 2e-3}, {"reducemax18_mid", b_rmax_mid, 0, 0, 0},
    {"reducemin_axis0", b_rmin_0, 0, 0, 0}, {"reducelogsumexp_warp", b_rlse_warp, 0, 1e-5, 2e-3},
    {"reducelogsumexp_mid", b_rlse_mid, 0, 1e-5, 2e-3}, {"reducel2_all", b_rl2_all, 0, 1e-5, 2e-3},
    {"reducel1_hw", b_rl1_hw, 0, 1e-5, 2e-3}, {"reducesumsquare_1_-1", b_rss_13, 0, 1e-5, 2e-3},
    {"reduceprod_axis1", b_rprod_1, 0, 1e-5, 2e-3},
    {"concat_axis1", b_cat1, 0, 0, 0}, {"concat_axis0", b_cat0, 0, 0, 0},
    {"concat_10_inputs", b_cat_many, 0, 0, 0}, {"reshape_output_copy", b_reshape_out, 0, 0, 0},
    {"relu_flatten_gemm", b_flatten_gemm, 1, 5e-3, 1e-2},
    {"pad_constant_crop", b_pad_constant, 0, 0, 0}, {"pad_reflect", b_pad_reflect, 0, 0, 0},
    {"pad_edge", b_pad_edge, 0, 0, 0}, {"pad_wrap", b_pad_wrap, 0, 0, 0},
    {"resize_nearest_x2", b_resize_nearest_x2, 0, 0, 0}, {"resize_nearest_down", b_resize_nearest_down, 0, 0, 0},
    {"resize_nearest_sizes", b_resize_nearest_sizes, 0, 0, 0}, {"resize_linear_x2", b_resize_linear_x2, 0, 1e-6, 2e-3},
    {"resize_linear_align_corners", b_resize_linear_align, 0, 1e-6, 2e-3},
    {"resize_linear_down", b_resize_linear_down, 0, 1e-6, 2e-3},
    {"nbits_gemv_m1", b_nbits_m1, 0, 1e-5, 2e-3}, {"nbits_gemv_m7_k_tail", b_nbits_m7_tail, 0, 1e-5, 2e-3},
    {"nbits_gemv_m3_b128", b_nbits_m3_b128, 0, 1e-5, 2e-3}, {"nbits_gemm_m40", b_nbits_m40, 0, 5e-3, 1e-2},
    {"nbits_gemm_m20_k_tail", b_nbits_m20_tail, 0, 5e-3, 1e-2}, {"nbits_gemm_m12_chunks", b_nbits_m12_chunks, 0, 5e-3, 1e-2},
    {"convt_s2_bias", b_convt_s2_bias, 0, 5e-3, 1e-2}, {"convt_group_output_padding", b_convt_group_outpad, 0, 5e-3, 1e-2},
    {"convt_same_lower_relu_fused", b_convt_same_relu, 1, 5e-3, 1e-2},
    {"convt_output_shape", b_convt_output_shape, 0, 5e-3, 1e-2}, {"convt_1d", b_convt_1d, 0, 5e-3, 1e-2},
    {"convt_64x16x16_s2", b_convt_large, 0, 5e-3, 1e-2}, {"conv_patchify_16", b_conv_patchify, 1, 5e-3, 1e-2},
    {"conv_patchify_tokens", b_conv_patchify_tokens, 1, 5e-3, 1e-2},
    {"lrn", b_lrn, 0, 1e-5, 2e-3}, {"lrn_96_channels", b_lrn_wide, 0, 1e-5, 2e-3},
    {"nbits_gemv_m2_k_split", b_nbits_m2_ksplit, 0, 1e-5, 2e-3},
    {"nbits_gemv_m5_k_split_b16_tail", b_nbits_m5_ksplit_b16, 0, 1e-5, 2e-3},
    {"nbits_gemv_m5_k_split_b32_tail", b_nbits_m5_ksplit_b32, 0, 1e-5, 2e-3},
    {"nbits_gemv_m1_k8192_split", b_nbits_m1_k8192, 0, 1e-5, 2e-3},
    {"nbits_glu_gemv_m1_k8192_split", b_nbits_glu_m1_k8192, 1, 1e-5, 2e-3},
    {"nbits_gemv_m1_wide", b_nbits_m1_wide, 0, 1e-5, 2e-3}, {"nbits_gemv_m3_wide_b16", b_nbits_m3_wide, 0, 1e-5, 2e-3},
    {"nbits_gemv_m2_outliers_k8192", b_nbits_outliers, 0, 1e-5, 2e-3},
    {"nbits_gemv_m2_outliers_k8192_accuracy1", b_nbits_outliers_exact, 0, 1e-5, 2e-3},
    {"nbits_glu_gemv_m1", b_nbits_glu_m1, 1, 1e-5, 2e-3}, {"nbits_glu_gemv_m3", b_nbits_glu_m3, 1, 1e-5, 2e-3},
    {"nbits_glu_gemv_k_split", b_nbits_glu_ksplit, 1, 1e-5, 2e-3}, {"nbits_glu_gemm_m40", b_nbits_glu_m40, 1, 5e-3, 1e-2},
    {"nbits_glu_gemm_chunks", b_nbits_glu_chunks, 1, 5e-3, 1e-2},
    {"nbits_mma_m8_wide", b_nbits_mma_m8_wide, 0, 1e-5, 2e-3},
    {"nbits_mma_m16_wide_odd_n", b_nbits_mma_m16_wide_odd, 0, 5e-3, 2e-3},
    {"nbits_mma_m32_b128", b_nbits_mma_m32, 0, 5e-3, 2e-3}, {"nbits_glu_mma_wide", b_nbits_glu_mma_wide, 1, 1e-5, 2e-3},
};

static void run_op_case(gpu_env *e, const op_case *oc, int dtype, be_context *ctx, const char *tag) {
  tg t;
  ir_graph *g = NULL;
  char name[96];
  snprintf(name, sizeof name, "%s%s", oc->name, tag);
  tg_begin(&t, dtype);
  oc->build(&t);
  hd_status *st = tg_end(&t, oc->fuse, &g);
  if (st) {
    CHECK(0, "%s: build: %s", name, hd_status_msg(st));
    hd_status_free(st);
    return;
  }
  compare_graph(e, ctx, g, name, dtype, dtype == HD_DT_F32 ? oc->tol32 : oc->tol16);
  ir_graph_free(g);
}

/* A case in each of the runs asked for (bf16 held to 4x fp16's tolerance:
 * 8 bits of mantissa). */
enum { RUN_F32 = 1, RUN_F16 = 2, RUN_F32_STRICT = 4, RUN_F16_GRAPH = 8, RUN_BF16 = 16 };
static void run_op_case_in(gpu_env *e, const op_case *oc, int runs) {
  if (runs & RUN_F32) run_op_case(e, oc, HD_DT_F32, e->ctx, "");
  if (runs & RUN_F16) run_op_case(e, oc, HD_DT_F16, e->ctx, "");
  if (runs & RUN_F32_STRICT) run_op_case(e, oc, HD_DT_F32, e->ctx_strict, " [no tf32]");
  if (runs & RUN_F16_GRAPH) run_op_case(e, oc, HD_DT_F16, e->ctx_cap, " [graph]");
  if (runs & RUN_BF16) {
    op_case bf = *oc;
    bf.tol16 *= 4;
    run_op_case(e, &bf, HD_DT_BF16, e->ctx, "");
  }
}

/* fp32 on TF32 tensor cores (rounded to 10 bits of mantissa: fp16's
 * tolerance) and without (the CUDA-core kernel: exact to fp32), fp16, and
 * bf16 (8 bits of mantissa: 4x fp16's tolerance) */
static const op_case attn_cases[] = {
    {"attention_flash_causal_gqa", b_attn_causal_gqa, 0, 1e-4, 1e-2},
    {"attention_sdpa_gqa", b_attn_sdpa_gqa, 0, 1e-4, 1e-2},
    {"attention_sdpa_key_bias", b_attn_sdpa_key_bias, 0, 1e-4, 1e-2},
    {"attention_sdpa_mask_empty_rows", b_attn_mask_empty_rows, 0, 1e-4, 1e-2},
    {"attention_sdpa_shared_key_mask", b_attn_sdpa_shared_key_mask, 1, 1e-4, 1e-2},
    {"attention_flash_d128_cross", b_attn_d128_cross, 0, 1e-4, 1e-2},
    {"attention_flash_w4_causal", b_attn_w4_causal, 0, 1e-4, 1e-2},
    {"attention_flash_w2", b_attn_w2, 0, 1e-4, 1e-2},
    {"attention_flash_kt_bias", b_attn_kt_bias, 1, 1e-4, 1e-2},
    {"attention_flash_where_mask", b_attn_where_mask, 1, 1e-4, 1e-2},
    {"attention_flash_key_padding_split", b_attn_key_padding_split, 1, 1e-4, 1e-2},
    {"attention_flash_key_padding_bert_b8", b_attn_key_padding_bert_b8, 1, 1e-4, 1e-2},
    {"attention_flash_key_bias_tail", b_attn_key_bias_tail, 1, 1e-4, 1e-2},
    {"attention_flash_key_padding_expanded", b_attn_key_padding_expanded, 1, 1e-4, 1e-2},
    {"attention_flash_key_padding_causal_pairs", b_attn_key_padding_causal_pairs, 1, 1e-4, 1e-2},
    {"attention_flash_key_bias_rows64", b_attn_key_bias_rows64, 1, 1e-4, 1e-2},
    {"attention_projections_split", b_attn_projections, 1, 1e-4, 1e-2},
    {"attention_split_unaligned", b_attn_split_unaligned, 0, 1e-4, 1e-2},
    {"attention_gqa_decode_rotary_group8", b_gqa_decode, 0, 1e-4, 1e-2},
};

/* The projections case runs what it says: one MatMul, and a Split whose outputs the plan reads in
 * place (rows 384 elements apart), with no Split or Transpose step left. */
/* The graph build() makes (dtype; the fusion passes run when fuse) and
 * its plan at these input shapes, in *g and *p (NULL on a failure,
 * reported under `what`). */
static void plan_of(void (*build)(tg *), int dtype, int fuse, const ir_shape *shapes, const char *what, ir_graph **g,
                    ir_plan **p) {
  tg t;
  *g = NULL, *p = NULL;
  tg_begin(&t, dtype);
  build(&t);
  hd_status *st = tg_end(&t, fuse, g);
  if (!st) st = plan_create(*g, shapes, NULL, p);
  CHECK(!st, "%s: %s", what, st ? hd_status_msg(st) : "");
  hd_status_free(st);
}

static void check_projections_split(void) {
  ir_graph *g;
  ir_plan *p;
  plan_of(b_attn_projections, HD_DT_F16, 1, (ir_shape[]){{3, {2, 40, 128}}}, "projections", &g, &p);
  int matmuls = 0, strided = 0, copies = 0;
  for (int i = 0; p && i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    matmuls += n->kind == OP_MATMUL && g->values[n->in[1]].is_const;
    for (int k = 0; n->kind == OP_SPLIT && k < n->nout; k++)
      strided += p->t[n->out[k]].strided && p->t[n->out[k]].strides[1] == 384;
  }
  for (int s = 0; p && s < p->nsteps; s++) {
    int kind = g->nodes[p->steps[s].node].kind;
    copies += kind == OP_SPLIT || kind == OP_TRANSPOSE;
  }
  CHECK(matmuls == 1 && strided == 3 && copies == 0, "projections: %d weight MatMuls, %d strided views, %d copies",
        matmuls, strided, copies);
  if (p) plan_free(p);
  if (g) ir_graph_free(g);
}

static void check_split_unaligned(void) {
  ir_graph *g;
  ir_plan *p;
  plan_of(b_attn_split_unaligned, HD_DT_F32, 0, (ir_shape[]){{4, {1, 2, 176, 32}}, {4, {1, 2, 176, 16}}}, "split_unaligned",
          &g, &p);
  int aliased = 0;
  for (int i = 0; p && i < g->nnodes; i++)
    for (int k = 0; g->nodes[i].kind == OP_SPLIT && k < g->nodes[i].nout; k++) {
      const ir_tensor *o = &p->t[g->nodes[i].out[k]];
      aliased += o->strided && o->offset == (size_t)k * 16 * sizeof(float);
    }
  CHECK(aliased == 2, "split_unaligned: %d of 2 outputs strided aliases at 0 and 64 bytes", aliased);
  if (p) plan_free(p);
  if (g) ir_graph_free(g);
}

/* What the engine cache and attention tests read from the module's log:
 * candidates timed ("tuning: engine" lines), warnings about the cache, the engines plans got
 * (conv_entry's lines), the last summary a context logged, the attentions on
 * the library's SDPA and the DNN library's version. */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static int log_tuned, log_cache_warnings, log_nengines, log_mm_tuned, log_nmm, log_sdpa;
static int log_cast_absorbed; /* conv epilogues that write the Cast after them (test_precision_boundary) */
static int log_norm_absorbed; /* RMS norms done in a MatMulNBits GEMV's staging (test_nbits_norm) */
static int log_nbits_bulk;     /* one-row MatMulNBits GEMVs from shared memory (test_nbits_paths) */
static size_t log_dnn_version; /* the DNN library's, from the module's open line */
static long long log_engines[64];
static int log_mm_ranks[64]; /* a matmul's chosen rank, timed or replayed, in plan order */
static char log_mm_keys[16][HD_DISKCACHE_MAX_KEY + 1]; /* their engine cache keys, the first 16 */
static char log_scope[512];                            /* the context's engine cache scope */
static char log_summary[512];

static void log_reset(void) {
  pthread_mutex_lock(&log_mu);
  log_tuned = log_cache_warnings = log_nengines = log_mm_tuned = log_nmm = log_sdpa = 0;
  log_summary[0] = '\0';
  pthread_mutex_unlock(&log_mu);
}

static void log_sink(void *user, hd_log_level level, const char *file, int line, const char *func,
                     const char *msg) {
  (void)user; (void)file; (void)line; (void)func;
  if (verbose || level >= HD_LOG_WARNING) printf("  [log %d] %s\n", (int)level, msg);
  pthread_mutex_lock(&log_mu);
  if (strstr(msg, "tuning: engine")) log_tuned++;
  if (strstr(msg, "attention on the library's SDPA")) log_sdpa++;
  if (strstr(msg, "writes its Cast's")) log_cast_absorbed++;
  if (strstr(msg, "as it stages A")) log_norm_absorbed++;
  if (strstr(msg, "one row with its weights copied to shared memory")) log_nbits_bulk++;
  const char *lib = strstr(msg, " device(s), cuDNN ");
  if (lib) sscanf(lib + strlen(" device(s), cuDNN "), "%zu", &log_dnn_version);
  if (strstr(msg, "tuning: matmul rank") && strstr(msg, " ms (workspace")) log_mm_tuned++;
  const char *rk = strstr(msg, ": rank ");
  int r;
  if (rk && strstr(msg, "matmul ") && (strstr(msg, " timed)") || strstr(msg, "no timing")) &&
      sscanf(rk, ": rank %d", &r) == 1 && log_nmm < 64) {
    const char *k = strstr(msg, "matmul ");
    if (log_nmm < 16 && rk - k <= HD_DISKCACHE_MAX_KEY)
      snprintf(log_mm_keys[log_nmm], sizeof log_mm_keys[0], "%.*s", (int)(rk - k), k);
    log_mm_ranks[log_nmm++] = r;
  }
  const char *sc = strstr(msg, "this one is \"");
  if (sc) {
    sc += strlen("this one is \"");
    const char *end = strrchr(sc, '"');
    if (end) snprintf(log_scope, sizeof log_scope, "%.*s", (int)(end - sc), sc);
  }
  if (level >= HD_LOG_WARNING && strstr(msg, "engine cache")) log_cache_warnings++;
  if (strstr(msg, "choices replayed")) snprintf(log_summary, sizeof log_summary, "%s", msg);
  const char *en = strstr(msg, ", engine ");
  long long id;
  if (en && strstr(msg, "timed), workspace") && sscanf(en, ", engine %lld", &id) == 1 && log_nengines < 64)
    log_engines[log_nengines++] = id;
  pthread_mutex_unlock(&log_mu);
}
static void test_attention(gpu_env *e, const char *filter) {
  if (!filter || strstr("attention_projections_split", filter)) check_projections_split();
  if (!filter || strstr("attention_split_unaligned", filter)) check_split_unaligned();
  for (size_t i = 0; i < sizeof attn_cases / sizeof attn_cases[0]; ++i) {
    const op_case *ac = &attn_cases[i];
    if (filter && !strstr(ac->name, filter)) continue;
    op_case tf = *ac, bf = *ac;
    tf.tol32 = ac->tol16;
    bf.tol16 *= 4;
    run_op_case(e, &tf, HD_DT_F32, e->ctx, " [tf32]");
    run_op_case(e, ac, HD_DT_F32, e->ctx_strict, " [no tf32]");
    log_reset();
    run_op_case(e, ac, HD_DT_F16, e->ctx, "");
    run_op_case(e, ac, HD_DT_F16, e->ctx_cap, " [graph]");
    run_op_case(e, &bf, HD_DT_BF16, e->ctx, "");
    pthread_mutex_lock(&log_mu);
    int sdpa = log_sdpa;
    pthread_mutex_unlock(&log_mu);
    /* the library's SDPA (cuDNN 9.13+) must have taken the case named for it
     * in all three half-precision runs (each attention of it: the shared
     * mask's case has two), and never one with a causal cut or a boolean
     * mask it does not take as a bias of the keys (gb_attention.c) */
    const char *sw = getenv("HIPDNN_EP_CUDNN_SDPA");
    int want = strstr(ac->name, "_sdpa_") && log_dnn_version >= 91300 && !(sw && strcmp(sw, "0") == 0)
                   ? (strstr(ac->name, "_shared_") ? 6 : 3)
                   : -1;
    if (want > 0)
      CHECK(sdpa == want, "%s: %d of %d attentions of 3 half-precision runs on the library's SDPA (cuDNN %zu)", ac->name, sdpa, want,
            log_dnn_version);
    else if (strstr(ac->name, "causal") || strstr(ac->name, "padding") || strstr(ac->name, "where_mask") ||
             strstr(ac->name, "mask_empty"))
      CHECK(sdpa == 0, "%s: a causal or boolean-masked attention on the library's SDPA", ac->name);
    if (strstr(ac->name, "_sdpa_")) run_op_case(e, ac, HD_DT_F16, e->ctx_exh, " [exhaustive]");
    if (!strstr(ac->name, "_sdpa_")) printf("     %s: %d of 3 half-precision runs on the library's SDPA\n", ac->name, sdpa);
    if (strstr(ac->name, "_sdpa_"))
      printf("%-4s %s: %d half-precision runs on the library's SDPA%s\n", want < 0 || sdpa == want ? "ok" : "BAD",
             ac->name, sdpa, want < 0 ? " (cuDNN before 9.13 or HIPDNN_EP_CUDNN_SDPA=0: none expected)" : "");
  }
}

/* MatMulNBits with its path forced (HIPDNN_EP_NBITS_GEMV_MAX_M,
 * HIPDNN_EP_NBITS_MMA_MIN_M): 20 rows on the GEMV in passes of 8 (what a
 * module without a BLAS runs; fp16 with the tensor-core form off), 40 rows
 * on tensor cores in passes of 32 and 8 (glu too), one row on tensor
 * cores, 3 rows on the dequantise + GEMM path; one row with K split (the
 * shared-memory form off) and from shared memory (gemv_bulk). */
/* The RMS norm taken into the one-row GEMV's staging, against ref: with a
 * skip (the sum output written by the GEMV's first block), before a
 * SwiGLU, eager and replayed, with its inputs made in the graph; not taken
 * where K splits over blocks (8192) or under HIPDNN_EP_NBITS_NORM=0, the
 * same answers either way. */
static void test_nbits_norm(gpu_env *e) {
  static const struct {
    op_case c;
    int dtype, graph, off, absorbed;
  } cs[] = {
      {{"nbits_skip_norm", b_skip_norm_nbits, 0, 1e-4, 5e-3}, HD_DT_F16, 0, 0, 1},
      {{"nbits_skip_norm", b_skip_norm_nbits, 0, 1e-4, 5e-3}, HD_DT_F16, 1, 0, 1},
      {{"nbits_skip_norm", b_skip_norm_nbits, 0, 1e-4, 5e-3}, HD_DT_F32, 1, 0, 1},
      {{"nbits_skip_norm", b_skip_norm_nbits, 0, 1e-4, 5e-3}, HD_DT_F16, 1, 1, 0},
      {{"nbits_norm_glu", b_norm_nbits_glu, 1, 1e-4, 5e-3}, HD_DT_F16, 1, 0, 1},
      {{"nbits_norm_glu", b_norm_nbits_glu, 1, 1e-4, 5e-3}, HD_DT_F32, 0, 0, 1},
      {{"nbits_skip_norm_k8192_split", b_skip_norm_nbits_k8192, 0, 1e-4, 5e-3}, HD_DT_F16, 1, 0, 0},
      {{"nbits_skip_norm_made_inputs", b_skip_norm_nbits_made, 0, 1e-4, 5e-3}, HD_DT_F16, 1, 0, 1},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    char tag[64];
    snprintf(tag, sizeof tag, "%s%s", cs[i].graph ? " [graph]" : "", cs[i].off ? " [NBITS_NORM=0]" : "");
    if (cs[i].off) setenv("HIPDNN_EP_NBITS_NORM", "0", 1);
    pthread_mutex_lock(&log_mu);
    log_norm_absorbed = 0;
    pthread_mutex_unlock(&log_mu);
    run_op_case(e, &cs[i].c, cs[i].dtype, cs[i].graph ? e->ctx_cap : e->ctx, tag);
    unsetenv("HIPDNN_EP_NBITS_NORM");
    pthread_mutex_lock(&log_mu);
    int absorbed = log_norm_absorbed;
    pthread_mutex_unlock(&log_mu);
    CHECK(absorbed == cs[i].absorbed, "%s%s: %d norms in a GEMV's staging, want %d", cs[i].c.name, tag, absorbed,
          cs[i].absorbed);
  }
}

static void test_nbits_paths(gpu_env *e) {
  static const op_case gemv = {"nbits_gemv_m20_passes", b_nbits_m20_tail, 0, 1e-5, 2e-3};
  static const op_case mma = {"nbits_mma_m40_passes", b_nbits_m40, 0, 1e-5, 2e-3};
  static const op_case mma_glu = {"nbits_glu_mma_m40_passes", b_nbits_glu_m40, 1, 1e-5, 2e-3};
  static const op_case mma1 = {"nbits_mma_m1", b_nbits_m1, 0, 1e-5, 2e-3};
  static const op_case gemm = {"nbits_gemm_m3", b_nbits_m3_b128, 0, 5e-3, 1e-2};
  setenv("HIPDNN_EP_NBITS_GEMV_MAX_M", "1000", 1);
  run_op_case(e, &gemv, HD_DT_F32, e->ctx, "");
  setenv("HIPDNN_EP_NBITS_MMA_MIN_M", "0", 1);
  run_op_case(e, &gemv, HD_DT_F16, e->ctx_cap, " [graph, no mma]");
  unsetenv("HIPDNN_EP_NBITS_MMA_MIN_M");
  run_op_case(e, &mma, HD_DT_F16, e->ctx_cap, " [graph]");
  run_op_case(e, &mma_glu, HD_DT_F16, e->ctx, "");
  setenv("HIPDNN_EP_NBITS_MMA_MIN_M", "1", 1);
  run_op_case(e, &mma1, HD_DT_F16, e->ctx, " [mma from 1 row]");
  unsetenv("HIPDNN_EP_NBITS_MMA_MIN_M");
  /* K slices of 1024 codes: passes of 8 and 4 rows that both split K
   * (one set of arrival counts for both), and the one-row forms */
  static const op_case passes = {"nbits_gemv_m12_passes_split", b_nbits_m12_chunks, 0, 1e-5, 2e-3};
  static const op_case one_row = {"nbits_gemv_m1_k8192_split", b_nbits_m1_k8192, 0, 1e-5, 2e-3};
  static const op_case one_row_glu = {"nbits_glu_gemv_m1_k8192_split", b_nbits_glu_m1_k8192, 1, 1e-5, 2e-3};
  setenv("HIPDNN_EP_NBITS_SLICE_MAX", "1024", 1);
  run_op_case(e, &passes, HD_DT_F32, e->ctx_cap, " [graph, slices of 1024]");
  setenv("HIPDNN_EP_NBITS_BULK", "0", 1); /* fp16 one-row passes would take gemv_bulk, which does not split K */
  run_op_case(e, &one_row, HD_DT_F16, e->ctx_cap, " [graph, slices of 1024]");
  run_op_case(e, &one_row_glu, HD_DT_F16, e->ctx, " [slices of 1024]");
  unsetenv("HIPDNN_EP_NBITS_SLICE_MAX");
  /* the next kernel started at the end of the GEMV's loop, as before */
  setenv("HIPDNN_EP_NBITS_NEXT_EARLY", "0", 1);
  run_op_case(e, &one_row, HD_DT_F16, e->ctx_cap, " [graph, next kernel late, no bulk]");
  unsetenv("HIPDNN_EP_NBITS_BULK");
  run_op_case(e, &one_row, HD_DT_F16, e->ctx_cap, " [graph, next kernel late]");
  unsetenv("HIPDNN_EP_NBITS_NEXT_EARLY");
  /* the one-row GEMV from shared memory (gemv_bulk; the CUDA module is
   * built for sm_90): each case logs it once, and not when switched off */
  static const struct {
    op_case c;
    int graph, off;
  } bulk[] = {
      {{"nbits_gemv_m1_bulk_b64_odd_n", b_nbits_m1_bulk_b64, 0, 1e-5, 2e-3}, 1, 0},
      {{"nbits_gemv_m1_bulk_b64_odd_n", b_nbits_m1_bulk_b64, 0, 1e-5, 2e-3}, 0, 1},
      {{"nbits_gemv_m1_bulk_b128", b_nbits_m1_bulk_b128, 0, 1e-5, 2e-3}, 0, 0},
      {{"nbits_gemv_m1_bulk_ring_odd_n", b_nbits_m1_bulk_ring, 0, 1e-5, 2e-3}, 1, 0},
      {{"nbits_glu_gemv_m1_bulk_k8192", b_nbits_glu_m1_k8192, 1, 1e-5, 2e-3}, 1, 0},
      {{"nbits_skip_norm_bulk", b_skip_norm_nbits, 0, 1e-4, 5e-3}, 1, 0},
      {{"nbits_skip_norm_bulk", b_skip_norm_nbits, 0, 1e-4, 5e-3}, 1, 1},
  };
  for (size_t i = 0; i < sizeof bulk / sizeof bulk[0]; i++) {
    if (bulk[i].off) setenv("HIPDNN_EP_NBITS_BULK", "0", 1);
    pthread_mutex_lock(&log_mu);
    log_nbits_bulk = 0;
    pthread_mutex_unlock(&log_mu);
    char tag[64];
    snprintf(tag, sizeof tag, "%s%s", bulk[i].graph ? " [graph]" : "", bulk[i].off ? " [NBITS_BULK=0]" : "");
    run_op_case(e, &bulk[i].c, HD_DT_F16, bulk[i].graph ? e->ctx_cap : e->ctx, tag);
    unsetenv("HIPDNN_EP_NBITS_BULK");
    pthread_mutex_lock(&log_mu);
    const int got = log_nbits_bulk;
    pthread_mutex_unlock(&log_mu);
    CHECK(got == !bulk[i].off, "%s%s: %d GEMVs from shared memory, want %d", bulk[i].c.name, tag, got, !bulk[i].off);
  }
  setenv("HIPDNN_EP_NBITS_GEMV_MAX_M", "0", 1);
  run_op_case(e, &gemm, HD_DT_F32, e->ctx_strict, " [no tf32]");
  run_op_case(e, &gemm, HD_DT_F16, e->ctx_cap, " [graph]");
  unsetenv("HIPDNN_EP_NBITS_GEMV_MAX_M");
}

/* ==== a ResNet-ish chain: stem, blocks, head ==== */

enum { ACT_NONE = 0, ACT_RELU, ACT_RELU6 };

/* conv (group g) + BN (folded by ir_fuse) [+ residual] + act */
static int conv_bn(tg *t, int x, int64_t cin, int64_t cout, int k, int stride, int64_t group,
                   int act, int res) {
  int64_t pad = k / 2;
  attr a[] = {{.name = "kernel_shape", .n = 2, .i = {k, k}}, {.name = "strides", .n = 2, .i = {stride, stride}},
              {.name = "pads", .n = 4, .i = {pad, pad, pad, pad}}, A_INT("group", group)};
  float ws = 1.f / sqrtf((float)(cin / group * k * k));
  int in[2] = {x, tg_const(t, 4, (const int64_t[]){cout, cin / group, k, k}, -ws, ws)};
  int y = tg_node(t, "Conv", 11, in, 2, a, NA(a));
  int bn[5] = {y, tg_const(t, 1, (const int64_t[]){cout}, 0.5f, 1.f), tg_const(t, 1, (const int64_t[]){cout}, -0.1f, 0.1f),
               tg_const(t, 1, (const int64_t[]){cout}, -0.1f, 0.1f), tg_const(t, 1, (const int64_t[]){cout}, 0.5f, 1.5f)};
  y = tg_node(t, "BatchNormalization", 15, bn, 5, NULL, 0);
  if (res != IR_NONE) {
    int ad[2] = {y, res};
    y = tg_node(t, "Add", 14, ad, 2, NULL, 0);
  }
  if (act == ACT_RELU) y = tg_node(t, "Relu", 14, &y, 1, NULL, 0);
  if (act == ACT_RELU6) {
    attr c[] = {A_FLOAT("min", 0.f), A_FLOAT("max", 6.f)};
    y = tg_node(t, "Clip", 6, &y, 1, c, NA(c));
  }
  return y;
}

/* MobileNetV2's inverted residual: 1x1 expand + relu6 (a matmul whose
 * epilogue the depthwise conv takes over), depthwise 3x3 + relu6, 1x1
 * project [+ x]. tap_expanded: the expanded tensor is also an output, so
 * the epilogue must stay with the matmul. */
static int inverted_residual(tg *t, int x, int64_t cin, int64_t cout, int stride, int tap_expanded) {
  int64_t mid = cin * 6;
  int e = conv_bn(t, x, cin, mid, 1, 1, 1, ACT_RELU6, IR_NONE);
  if (tap_expanded) tg_output(t, e);
  int d = conv_bn(t, e, mid, mid, 3, stride, mid, ACT_RELU6, IR_NONE);
  return conv_bn(t, d, mid, cout, 1, 1, 1, ACT_NONE, stride == 1 && cin == cout ? x : IR_NONE);
}

static void b_inverted_residual(tg *t) {
  int x = tg_input(t, 4, D(2, 16, 14, 13));
  t->orank = 4;
  int y = inverted_residual(t, x, 16, 16, 1, 0);
  tg_output(t, inverted_residual(t, y, 16, 24, 2, 0));
}
/* A 3x3 stride-2 stem of 3 channels, then an inverted residual: the
 * expand reads the stem's output from the arena. */
static void b_stem_inverted_residual(tg *t) {
  int x = tg_input(t, 4, D(2, 3, 28, 26));
  t->orank = 4;
  int s = conv_bn(t, x, 3, 16, 3, 2, 1, ACT_RELU6, IR_NONE);
  tg_output(t, inverted_residual(t, s, 16, 24, 1, 0));
}
static void b_inverted_residual_tap(tg *t) {
  int x = tg_input(t, 4, D(1, 8, 9, 10));
  t->orank = 4;
  tg_output(t, inverted_residual(t, x, 8, 8, 1, 1));
}

/* A 1x1 expand + relu6 whose epilogue the 7x7 depthwise conv takes over
 * as its prologue (dw_plane_kernel with the prologue), 1x1 project + x:
 * an odd width (one element a load) and a width of 24 (four or eight). */
static int expand_dw7(tg *t, int x, int64_t c) {
  int e = conv_bn(t, x, c, c * 4, 1, 1, 1, ACT_RELU6, IR_NONE);
  int d = conv_bn(t, e, c * 4, c * 4, 7, 1, c * 4, ACT_RELU6, IR_NONE);
  return conv_bn(t, d, c * 4, c, 1, 1, 1, ACT_NONE, x);
}
static void b_expand_dw7(tg *t) {
  int x = tg_input(t, 4, D(2, 16, 14, 13));
  t->orank = 4;
  tg_output(t, expand_dw7(t, expand_dw7(t, x, 16), 16));
}
static void b_expand_dw7_wide(tg *t) {
  int x = tg_input(t, 4, D(1, 8, 24, 24));
  t->orank = 4;
  tg_output(t, expand_dw7(t, x, 8));
}

static void build_resnetish(tg *t, int64_t batch, int64_t hw, int nblocks) {
  int x = tg_input(t, 4, (const int64_t[]){batch, 3, hw, hw});
  t->orank = 4;
  int y = conv_bn(t, x, 3, 64, 7, 2, 1, ACT_RELU, IR_NONE);
  attr mp[] = {{.name = "kernel_shape", .n = 2, .i = {3, 3}}, {.name = "strides", .n = 2, .i = {2, 2}}, {.name = "pads", .n = 4, .i = {1, 1, 1, 1}}};
  y = tg_node(t, "MaxPool", 12, &y, 1, mp, NA(mp));
  for (int b = 0; b < nblocks; ++b) {
    int h = conv_bn(t, y, 64, 64, 3, 1, 1, ACT_RELU, IR_NONE);
    y = conv_bn(t, h, 64, 64, 3, 1, 1, ACT_RELU, y);
  }
  y = tg_node(t, "GlobalAveragePool", 1, &y, 1, NULL, 0);
  attr fl[] = {A_INT("axis", 1)};
  t->orank = 2;
  y = tg_node(t, "Flatten", 13, &y, 1, fl, 1);
  int g[3] = {y, tg_const(t, 2, (const int64_t[]){64, 1000}, -0.1f, 0.1f), tg_const(t, 1, (const int64_t[]){1000}, -0.1f, 0.1f)};
  y = tg_node(t, "Gemm", 13, g, 3, NULL, 0);
  tg_output(t, tg_node(t, "Softmax", 13, &y, 1, NULL, 0));
}

static void b_resnetish_small(tg *t) { build_resnetish(t, 2, 32, 2); }
/* Whole blocks, fused as ORT's graphs would be. */
static const op_case block_cases[] = {
    {"resnetish_chain", b_resnetish_small, 1, 1e-2, 2e-2},
    {"inverted_residual_x2", b_inverted_residual, 1, 1e-2, 2e-2},
    {"inverted_residual_tapped", b_inverted_residual_tap, 1, 1e-2, 2e-2},
    {"expand_dw7x7_prologue", b_expand_dw7, 1, 1e-2, 2e-2},
    {"expand_dw7x7_prologue_wide", b_expand_dw7_wide, 1, 1e-2, 2e-2},
};

/* ==== channels last (plan_layout) against ref ==== */

/* ResNet's bottleneck and what sits around convolutions in CNNs: 1x1
 * convs (one matmul, bias and ReLU in the BLAS; with a residual, the
 * channels-last epilogue), a 3x3 and a 1x1 of stride 2 (the library with
 * NHWC strides), BatchNormalization + ReLU, MaxPool, Concat, an
 * AveragePool counting its pads (our kernel between two relayouts), then
 * a 1x1 whose output leaves the partition (a Transpose back). */
static void b_bottleneck_nhwc(tg *t) {
  int x = tg_input(t, 4, D(2, 16, 10, 10));
  t->orank = 4;
  int h = conv_bn(t, x, 16, 8, 1, 1, 1, ACT_RELU, IR_NONE);
  h = conv_bn(t, h, 8, 8, 3, 1, 1, ACT_RELU, IR_NONE);
  int y1 = conv_bn(t, h, 8, 16, 1, 1, 1, ACT_RELU, x);
  int y2 = conv_bn(t, y1, 16, 24, 1, 2, 1, ACT_NONE, IR_NONE);
  int bn[5] = {y2, tg_const(t, 1, D(24), 0.5f, 1.f), tg_const(t, 1, D(24), -0.1f, 0.1f),
               tg_const(t, 1, D(24), -0.1f, 0.1f), tg_const(t, 1, D(24), 0.5f, 1.5f)};
  int y3 = tg_node(t, "BatchNormalization", 15, bn, 5, NULL, 0);
  y3 = tg_node(t, "Relu", 14, &y3, 1, NULL, 0);
  attr mp[] = {{.name = "kernel_shape", .n = 2, .i = {2, 2}}, {.name = "strides", .n = 2, .i = {2, 2}}};
  int cat[2] = {y3, tg_node(t, "MaxPool", 12, &y1, 1, mp, NA(mp))};
  attr ax[] = {A_INT("axis", 1)};
  int c = tg_node(t, "Concat", 13, cat, 2, ax, 1);
  attr ap[] = {{.name = "kernel_shape", .n = 2, .i = {3, 3}}, {.name = "pads", .n = 4, .i = {1, 1, 1, 1}},
               A_INT("count_include_pad", 1)};
  c = tg_node(t, "AveragePool", 19, &c, 1, ap, NA(ap));
  tg_output(t, conv_bn(t, c, 40, 8, 1, 1, 1, ACT_NONE, IR_NONE));
}

/* A stem (7x7/2 conv of 3 channels + ReLU), [MaxPool], three 3x3 convs,
 * [GlobalAveragePool]: each piece of the library's NHWC path alone. */
static void nhwc_stem(tg *t, int pool, int gap) {
  int x = tg_input(t, 4, D(2, 3, 32, 32));
  t->orank = 4;
  int y = conv_bn(t, x, 3, 16, 7, 2, 1, ACT_RELU, IR_NONE);
  attr mp[] = {{.name = "kernel_shape", .n = 2, .i = {3, 3}}, {.name = "strides", .n = 2, .i = {2, 2}},
               {.name = "pads", .n = 4, .i = {1, 1, 1, 1}}};
  if (pool) y = tg_node(t, "MaxPool", 12, &y, 1, mp, NA(mp));
  for (int k = 0; k < 3; ++k) y = conv_bn(t, y, 16, 16, 3, 1, 1, k == 2 ? ACT_NONE : ACT_RELU, IR_NONE);
  if (gap) y = tg_node(t, "GlobalAveragePool", 1, &y, 1, NULL, 0);
  tg_output(t, y);
}
/* Depthwise convolutions channels last (gpu_conv_depthwise_nhwc): a 1x1
 * conv and a LayerNorm2d, two inverted residuals (3x3 of stride 1 with the residual, of stride 2),
 * then 5x5 of stride 1 and 2 and a 7x7, with relu6 and batch norms folded
 * in; at 20 channels the half-precision runs take the one-channel form
 * (20 is no multiple of 8), fp32 the four-channel one. */
static int convnext_norm2d(tg *t, int x, int64_t c);
static void nhwc_depthwise(tg *t, int64_t c) {
  int x = tg_input(t, 4, D(2, c, 14, 13));
  t->orank = 4;
  /* a 1x1 conv, then a LayerNorm2d: channels moved, so the depthwise convs go channels last (plan_layout.c) */
  int y = conv_bn(t, x, c, c, 1, 1, 1, ACT_NONE, IR_NONE);
  y = inverted_residual(t, convnext_norm2d(t, y, c), c, c, 1, 0);
  y = inverted_residual(t, y, c, c, 2, 0);
  y = conv_bn(t, y, c, c, 5, 1, c, ACT_RELU6, y);
  y = conv_bn(t, y, c, c, 5, 2, c, ACT_NONE, IR_NONE);
  y = conv_bn(t, y, c, c, 7, 1, c, ACT_RELU, IR_NONE);
  tg_output(t, conv_bn(t, y, c, 8, 1, 1, 1, ACT_NONE, IR_NONE));
}
static void b_nhwc_depthwise(tg *t) { nhwc_depthwise(t, 16); }
static void b_nhwc_depthwise_c20(tg *t) { nhwc_depthwise(t, 20); }

/* torchvision's ConvNeXt block: depthwise 7x7 -> Transpose(0,2,3,1) ->
 * LayerNormalization -> MatMul + bias -> Gelu -> MatMul + bias ->
 * Transpose(0,3,1,2) -> Mul(gamma [C,1,1]) -> Add(x). */
static int convnext_block(tg *t, int x, int64_t c) {
  int64_t c4 = 4 * c;
  attr dw[] = {{.name = "kernel_shape", .n = 2, .i = {7, 7}}, {.name = "pads", .n = 4, .i = {3, 3, 3, 3}},
               A_INT("group", c)};
  int in[3] = {x, tg_const(t, 4, (const int64_t[]){c, 1, 7, 7}, -0.15f, 0.15f), tg_const(t, 1, &c, -0.1f, 0.1f)};
  int h = tg_node(t, "Conv", 11, in, 3, dw, NA(dw));
  attr to_rows[] = {{.name = "perm", .n = 4, .i = {0, 2, 3, 1}}}, to_nchw[] = {{.name = "perm", .n = 4, .i = {0, 3, 1, 2}}};
  h = tg_node(t, "Transpose", 13, &h, 1, to_rows, 1);
  attr ln[] = {A_INT("axis", -1), A_FLOAT("epsilon", 1e-6f)};
  int lnin[3] = {h, tg_const(t, 1, &c, 0.5f, 1.5f), tg_const(t, 1, &c, -0.1f, 0.1f)};
  h = tg_node(t, "LayerNormalization", 17, lnin, 3, ln, NA(ln));
  float s1 = 1.f / sqrtf((float)c), s2 = 1.f / sqrtf((float)c4);
  int m1[2] = {h, tg_const(t, 2, (const int64_t[]){c, c4}, -s1, s1)};
  h = tg_node(t, "MatMul", 13, m1, 2, NULL, 0);
  int b1[2] = {h, tg_const(t, 1, &c4, -0.1f, 0.1f)};
  h = tg_node(t, "Add", 14, b1, 2, NULL, 0);
  h = tg_node(t, "Gelu", 20, &h, 1, NULL, 0);
  int m2[2] = {h, tg_const(t, 2, (const int64_t[]){c4, c}, -s2, s2)};
  h = tg_node(t, "MatMul", 13, m2, 2, NULL, 0);
  int b2[2] = {h, tg_const(t, 1, &c, -0.1f, 0.1f)};
  h = tg_node(t, "Add", 14, b2, 2, NULL, 0);
  h = tg_node(t, "Transpose", 13, &h, 1, to_nchw, 1);
  int mu[2] = {tg_const(t, 3, (const int64_t[]){c, 1, 1}, 0.5f, 1.f), h};
  h = tg_node(t, "Mul", 14, mu, 2, NULL, 0);
  int ad[2] = {h, x};
  return tg_node(t, "Add", 14, ad, 2, NULL, 0);
}
/* LayerNorm2d: the channels normalised through two Transposes. */
static int convnext_norm2d(tg *t, int x, int64_t c) {
  attr to_rows[] = {{.name = "perm", .n = 4, .i = {0, 2, 3, 1}}}, to_nchw[] = {{.name = "perm", .n = 4, .i = {0, 3, 1, 2}}};
  int h = tg_node(t, "Transpose", 13, &x, 1, to_rows, 1);
  attr ln[] = {A_INT("axis", -1), A_FLOAT("epsilon", 1e-6f)};
  int lnin[3] = {h, tg_const(t, 1, &c, 0.5f, 1.5f), tg_const(t, 1, &c, -0.1f, 0.1f)};
  h = tg_node(t, "LayerNormalization", 17, lnin, 3, ln, NA(ln));
  return tg_node(t, "Transpose", 13, &h, 1, to_nchw, 1);
}
/* A 4x4/4 stem + LayerNorm2d, two blocks of 32 channels, LayerNorm2d +
 * 2x2/2 downsampling, a block of 64, GlobalAveragePool: channels last,
 * only the input's and the output's Transposes are left. */
static void b_convnext_nhwc(tg *t) {
  int x = tg_input(t, 4, D(2, 3, 32, 28));
  t->orank = 4;
  attr stem[] = {{.name = "kernel_shape", .n = 2, .i = {4, 4}}, {.name = "strides", .n = 2, .i = {4, 4}}};
  int s[3] = {x, tg_const(t, 4, D(32, 3, 4, 4), -0.3f, 0.3f), tg_const(t, 1, D(32), -0.1f, 0.1f)};
  int y = convnext_norm2d(t, tg_node(t, "Conv", 11, s, 3, stem, NA(stem)), 32);
  y = convnext_block(t, convnext_block(t, y, 32), 32);
  attr down[] = {{.name = "kernel_shape", .n = 2, .i = {2, 2}}, {.name = "strides", .n = 2, .i = {2, 2}}};
  int d[3] = {convnext_norm2d(t, y, 32), tg_const(t, 4, D(64, 32, 2, 2), -0.1f, 0.1f), tg_const(t, 1, D(64), -0.1f, 0.1f)};
  y = convnext_block(t, tg_node(t, "Conv", 11, d, 3, down, NA(down)), 64);
  tg_output(t, tg_node(t, "GlobalAveragePool", 1, &y, 1, NULL, 0));
}
static void b_nhwc_stem(tg *t) { nhwc_stem(t, 0, 0); }
static void b_nhwc_stem_pool(tg *t) { nhwc_stem(t, 1, 0); }
static void b_nhwc_stem_gap(tg *t) { nhwc_stem(t, 0, 1); }

static hd_status *cuda_supports(void *ctx, const ir_graph *g, int node) {
  gpu_env *e = ctx;
  return be_supports_node(e->cu, e->ctx, g, node);
}

/* Each graph fused, laid out channels last (every float type) as the EP
 * does, then against ref (which runs the same layout): fp32 (TF32), fp16,
 * bf16, fp16 replayed as a graph. */
static void test_channels_last(gpu_env *e, const char *filter) {
  static const op_case lc[] = {
      {"nhwc_resnetish_chain", b_resnetish_small, 1, 1e-2, 2e-2},
      {"nhwc_bottleneck_pools_concat", b_bottleneck_nhwc, 1, 1e-2, 2e-2},
      {"nhwc_stem_convs", b_nhwc_stem, 1, 1e-2, 2e-2},
      {"nhwc_stem_maxpool_convs", b_nhwc_stem_pool, 1, 1e-2, 2e-2},
      {"nhwc_stem_convs_gap", b_nhwc_stem_gap, 1, 1e-2, 2e-2},
      {"nhwc_depthwise_blocks", b_nhwc_depthwise, 1, 1e-2, 2e-2},
      {"nhwc_depthwise_blocks_c20", b_nhwc_depthwise_c20, 1, 1e-2, 2e-2},
      {"nhwc_convnext_blocks", b_convnext_nhwc, 1, 1e-2, 2e-2},
  };
  static const struct {
    int dtype, capture;
    const char *tag;
  } runs[] = {{HD_DT_F32, 0, ""}, {HD_DT_F16, 0, ""}, {HD_DT_BF16, 0, ""}, {HD_DT_F16, 1, " [graph]"}};
  for (size_t i = 0; i < sizeof lc / sizeof lc[0]; ++i) {
    if (filter && !strstr(lc[i].name, filter)) continue;
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; ++k) {
      tg t;
      ir_graph *g = NULL;
      char name[96];
      snprintf(name, sizeof name, "%s%s", lc[i].name, runs[k].tag);
      tg_begin(&t, runs[k].dtype);
      lc[i].build(&t);
      hd_status *st = tg_end(&t, 1, &g);
      plan_support sup = {e, cuda_supports};
      plan_layout_report rep;
      if (!st) st = plan_layout(g, PLAN_LAYOUT_ALWAYS, &sup, &rep);
      int nlate = 0; /* the EP's order: the late fusions (a MatMul's residual) after the layout */
      if (!st) st = plan_fuse_late(g, &nlate);
      CHECK(!st, "%s: build: %s", name, st ? hd_status_msg(st) : "");
      hd_status_free(st);
      if (!g) continue;
      CHECK(rep.applied && rep.transposes == 2, "%s: channels last %s, %d convs, %d transposes", name,
            rep.applied ? "applied" : "not applied", rep.convs, rep.transposes);
      int live = 0, first = 0; /* Transposes left (the two above) and convs still channels first */
      for (int j = 0; j < g->nnodes; j++) {
        const ir_node *n = &g->nodes[j];
        live += !n->dead && n->kind == OP_TRANSPOSE;
        first += !n->dead && n->kind == OP_CONV && !OP_P(n)->conv.channels_last;
      }
      CHECK(live == 2 && first == 0, "%s: %d Transposes left, %d convs channels first", name, live, first);
      double tol = runs[k].dtype == HD_DT_F32 ? lc[i].tol32 : runs[k].dtype == HD_DT_F16 ? lc[i].tol16 : 4 * lc[i].tol16;
      compare_graph(e, runs[k].capture ? e->ctx_cap : e->ctx, g, name, runs[k].dtype, tol);
      ir_graph_free(g);
    }
  }
}

/* ==== fp32_first_layers' boundary: an fp32 1x1 conv's epilogue writes
 * the Cast to half after it (conv_link) ==== */

/* MobileNetV2-like blocks fused, then precision=fp16/bf16 with the first
 * tensor-core ops fp32 as the EP plans them: the 1x1 expand where fp32
 * ends, read by half ops, ends in a Cast its kernel writes
 * (gpu_conv1x1_few eagerly, no TF32; the BLAS matmul's epilogue in the
 * [graph] runs, whose context has TF32, and under HIPDNN_EP_CONV1X1_FEW=0).
 * In the first cases the expand's input is the graph's, so the Cast's
 * output cannot take its bytes (which stops the takeover) and the log must
 * show it; after a stem (absorbed -1) the expand's input is an arena value
 * whose bytes the Cast's output may take: the takeover is then the arena's
 * to allow, and only the numbers are checked. Against ref on the same
 * graph, eager and replayed as a graph. */
static void test_precision_boundary(gpu_env *e, const char *filter) {
  static const struct {
    const char *name;
    void (*build)(tg *);
    int half, first, absorbed;
  } pc[] = {
      {"boundary_inverted_residual_n1", b_inverted_residual, HD_DT_F16, 1, 1},
      {"boundary_inverted_residual_n1_bf16", b_inverted_residual, HD_DT_BF16, 1, 1},
      {"boundary_expand_dw7_n1", b_expand_dw7, HD_DT_F16, 1, 1},
      {"boundary_stem_expand_n2", b_stem_inverted_residual, HD_DT_F16, 2, -1},
  };
  for (size_t i = 0; i < sizeof pc / sizeof pc[0]; ++i) {
    if (filter && !strstr(pc[i].name, filter)) continue;
    for (int capture = 0; capture < 2; ++capture) {
      tg t;
      ir_graph *g = NULL;
      char name[96];
      snprintf(name, sizeof name, "%s%s", pc[i].name, capture ? " [graph]" : "");
      tg_begin(&t, HD_DT_F32);
      pc[i].build(&t);
      hd_status *st = tg_end(&t, 1, &g);
      plan_support sup = {e, cuda_supports};
      plan_precision_opts o = {.half = pc[i].half, .gelu_tanh = 1, .fp32_first = pc[i].first};
      plan_precision_report rep;
      if (!st) st = plan_precision(g, &o, &sup, &rep);
      CHECK(!st, "%s: build: %s", name, st ? hd_status_msg(st) : "");
      hd_status_free(st);
      if (!g) continue;
      CHECK(rep.fp32_first == pc[i].first && rep.casts >= 2, "%s: %d ops kept fp32, %d casts", name,
            rep.fp32_first, rep.casts);
      pthread_mutex_lock(&log_mu);
      log_cast_absorbed = 0;
      pthread_mutex_unlock(&log_mu);
      compare_graph(e, capture ? e->ctx_cap : e->ctx_strict, g, name, pc[i].half,
                    pc[i].half == HD_DT_F16 ? 2e-2 : 8e-2);
      pthread_mutex_lock(&log_mu);
      int absorbed = log_cast_absorbed;
      pthread_mutex_unlock(&log_mu);
      CHECK(pc[i].absorbed < 0 || absorbed == pc[i].absorbed, "%s: %d Casts written by a conv's epilogue, want %d",
            name, absorbed, pc[i].absorbed);
      ir_graph_free(g);
    }
  }
}

/* ==== squeeze-and-excitation: the fused step against ref ==== */

/* GlobalAveragePool (or ReduceMean over H, W) -> 1x1 Conv -> SiLU (or
 * Relu) -> 1x1 Conv -> Sigmoid (or HardSigmoid) -> Mul with x, which
 * plan_fuse makes one SqueezeExcite step. */
static void squeeze_excite(tg *t, const int64_t *xd, int64_t r, int mobilenet) {
  int64_t c = xd[1];
  int x = tg_input(t, 4, xd);
  t->orank = 4;
  int m;
  if (mobilenet) {
    attr ax[] = {{.name = "axes", .n = 2, .i = {2, 3}}};
    m = tg_node(t, "ReduceMean", 13, &x, 1, ax, 1);
  } else {
    m = tg_node(t, "GlobalAveragePool", 1, &x, 1, NULL, 0);
  }
  float s1 = 1.f / sqrtf((float)c), s2 = 1.f / sqrtf((float)r);
  int c1[3] = {m, tg_const(t, 4, (const int64_t[]){r, c, 1, 1}, -s1, s1), tg_const(t, 1, &r, -0.2f, 0.2f)};
  int h = tg_node(t, "Conv", 11, c1, 3, NULL, 0), a;
  if (mobilenet) {
    a = tg_node(t, "Relu", 14, &h, 1, NULL, 0);
  } else {
    int silu[2] = {h, tg_node(t, "Sigmoid", 13, &h, 1, NULL, 0)};
    a = tg_node(t, "Mul", 14, silu, 2, NULL, 0);
  }
  int c2[3] = {a, tg_const(t, 4, (const int64_t[]){c, r, 1, 1}, -s2, s2), tg_const(t, 1, &c, -0.2f, 0.6f)};
  int e = tg_node(t, "Conv", 11, c2, 3, NULL, 0), gate;
  if (mobilenet) {
    attr hs[] = {A_FLOAT("alpha", 1.f / 6), A_FLOAT("beta", 0.5f)};
    gate = tg_node(t, "HardSigmoid", 6, &e, 1, hs, NA(hs));
  } else {
    gate = tg_node(t, "Sigmoid", 13, &e, 1, NULL, 0);
  }
  int mul[2] = {gate, x};
  tg_output(t, tg_node(t, "Mul", 14, mul, 2, NULL, 0));
}
/* EfficientNet-B0's widest (49-element planes: scalar loads) and its first
 * block at batch 1 (planes cut into pieces, float4), planes of 196 */
static void b_se_1152(tg *t) { squeeze_excite(t, D(4, 1152, 7, 7), 48, 0); }
static void b_se_b1_112(tg *t) { squeeze_excite(t, D(1, 32, 112, 112), 8, 0); }
static void b_se_240(tg *t) { squeeze_excite(t, D(3, 240, 14, 14), 10, 0); }
static void b_se_mobilenet(tg *t) { squeeze_excite(t, D(2, 72, 28, 28), 24, 1); }
static void b_se_odd(tg *t) { squeeze_excite(t, D(3, 5, 3, 7), 33, 0); }

static const op_case se_cases[] = {
    {"squeeze_excite_1152x7x7", b_se_1152, 1, 1e-5, 2e-3},
    {"squeeze_excite_b1_32x112x112", b_se_b1_112, 1, 1e-5, 2e-3},
    {"squeeze_excite_240x14x14", b_se_240, 1, 1e-5, 2e-3},
    {"squeeze_excite_mobilenetv3", b_se_mobilenet, 1, 1e-5, 2e-3},
    {"squeeze_excite_odd_sizes", b_se_odd, 1, 1e-5, 2e-3},
};

/* Each case fused into one SqueezeExcite step, then against ref: fp32,
 * fp16, bf16, and fp32 replayed as a graph. */
static void test_squeeze_excite(gpu_env *e, const char *filter) {
  static const struct {
    int dtype, capture;
    const char *tag;
  } runs[] = {{HD_DT_F32, 0, ""}, {HD_DT_F16, 0, ""}, {HD_DT_BF16, 0, ""}, {HD_DT_F32, 1, " [graph]"}};
  for (size_t i = 0; i < sizeof se_cases / sizeof se_cases[0]; ++i) {
    const op_case *sc = &se_cases[i];
    if (filter && !strstr(sc->name, filter)) continue;
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; ++k) {
      tg t;
      ir_graph *g = NULL;
      char name[96];
      snprintf(name, sizeof name, "%s%s", sc->name, runs[k].tag);
      tg_begin(&t, runs[k].dtype);
      sc->build(&t);
      hd_status *st = tg_end(&t, 1, &g);
      CHECK(!st, "%s: build: %s", name, st ? hd_status_msg(st) : "");
      hd_status_free(st);
      if (!g) continue;
      int live = 0, se = 0;
      for (int n = 0; n < g->nnodes; ++n) {
        live += !g->nodes[n].dead;
        se += !g->nodes[n].dead && g->nodes[n].kind == OP_SQUEEZE_EXCITE;
      }
      CHECK(live == 1 && se == 1, "%s: %d nodes, %d SqueezeExcite after fusion", name, live, se);
      double tol = runs[k].dtype == HD_DT_F32 ? sc->tol32 : runs[k].dtype == HD_DT_F16 ? sc->tol16 : 4 * sc->tol16;
      compare_graph(e, runs[k].capture ? e->ctx_cap : e->ctx, g, name, runs[k].dtype, tol);
      ir_graph_free(g);
    }
  }
}

/* The fused ResNet-ish graph and its plan at the graph's own input shape. */
static hd_status *resnetish_plan(int dtype, int64_t batch, int64_t hw, int nblocks, ir_graph **g,
                                 ir_plan **p) {
  tg t;
  tg_begin(&t, dtype);
  build_resnetish(&t, batch, hw, nblocks);
  HD_TRY(tg_end(&t, 1, g));
  ir_shape s;
  memset(&s, 0, sizeof s);
  s.rank = 4;
  memcpy(s.dims, (*g)->values[(*g)->inputs[0]].dims, sizeof(int64_t) * 4);
  return plan_create(*g, &s, NULL, p);
}

/* Graph capture: replay gives the eager answer; new input data under the
 * same pointers is seen; changed output pointers (staged mode) still right. */
/* A plan compiled twice: [0] on the eager context (the reference), [1] on the capturing one. */
typedef struct plan_pair {
  be_graph *g[2];
  be_plan *p[2];
} plan_pair;

static hd_status *plan_pair_compile(gpu_env *e, const ir_graph *g, const ir_plan *p, plan_pair *pp) {
  be_context *ctx[2] = {e->ctx, e->ctx_cap};
  for (int i = 0; i < 2; ++i) {
    HD_TRY(be_graph_compile(e->cu, ctx[i], g, &pp->g[i]));
    HD_TRY(be_plan_compile(e->cu, pp->g[i], p, &pp->p[i]));
  }
  return NULL;
}

static void plan_pair_free(gpu_env *e, plan_pair *pp) {
  for (int i = 0; i < 2; ++i) {
    if (pp->p[i]) be_plan_free(e->cu, pp->p[i]);
    if (pp->g[i]) be_graph_free(e->cu, pp->g[i]);
  }
}

static void test_capture(gpu_env *e, int dtype) {
  ir_graph *g = NULL;
  ir_plan *p = NULL;
  plan_pair pp = {{0}, {0}};
  void *din = NULL, *d1 = NULL, *d2 = NULL, *d3 = NULL, *hin = NULL, *h1 = NULL, *h2 = NULL;
  OK(resnetish_plan(dtype, 1, 64, 2, &g, &p));
  size_t nin = p->t[g->inputs[0]].nbytes, nout = p->t[g->outputs[0]].nbytes;
  size_t n = nout / hd_dtype_size(dtype);
  hin = malloc(nin);
  h1 = malloc(nout);
  h2 = malloc(nout);
  OK(be_mem_alloc(e->cu, 0, nin, &din));
  OK(be_mem_alloc(e->cu, 0, nout, &d1));
  OK(be_mem_alloc(e->cu, 0, nout, &d2));
  OK(be_mem_alloc(e->cu, 0, nout, &d3));
  OK(plan_pair_compile(e, g, p, &pp));
  be_plan *cp = pp.p[0], *cp2 = pp.p[1];
  int mismatches = 0;
  for (int round = 0; round < 2; ++round) {
    fill(dtype, hin, nin / hd_dtype_size(dtype), 1.f);
    OK(be_copy(e->cu, 0, din, hin, nin, BE_COPY_HOST_TO_DEVICE, e->stream));
    OK(be_plan_run(e->cu, cp, &din, &d1, e->stream)); /* eager reference */
    /* round 0: warm-up, capture, replay x2 on d2; round 1: replay with new data, then d3 (staged) */
    for (int r = 0; r < 3; ++r) OK(be_plan_run(e->cu, cp2, &din, &d2, e->stream));
    OK(be_copy(e->cu, 0, h1, d1, nout, BE_COPY_DEVICE_TO_HOST, e->stream));
    OK(be_copy(e->cu, 0, h2, d2, nout, BE_COPY_DEVICE_TO_HOST, e->stream));
    OK(be_stream_sync(e->cu, 0, e->stream));
    mismatches += memcmp(h1, h2, nout) != 0;
    if (round == 1) {
      for (int r = 0; r < 2; ++r) OK(be_plan_run(e->cu, cp2, &din, (r ? &d3 : &d2), e->stream));
      OK(be_copy(e->cu, 0, h2, d3, nout, BE_COPY_DEVICE_TO_HOST, e->stream));
      OK(be_stream_sync(e->cu, 0, e->stream));
      mismatches += memcmp(h1, h2, nout) != 0;
    }
  }
  (void)n;
  CHECK(mismatches == 0, "graph capture: %d of 3 replays differ from eager runs", mismatches);
  printf("%-4s graph capture on/off bitwise equal (%s; replay, new data, staged pointers)\n",
         mismatches ? "BAD" : "ok", hd_dtype_name(dtype));
done:
  be_mem_free(e->cu, 0, din);
  be_mem_free(e->cu, 0, d1);
  be_mem_free(e->cu, 0, d2);
  be_mem_free(e->cu, 0, d3);
  free(hin);
  free(h1);
  free(h2);
  plan_pair_free(e, &pp);
  if (p) plan_free(p);
  if (g) ir_graph_free(g);
}

/* Frees what a capture case allocated: device buffers, host buffers, its
 * plans and graph. */
static void capture_case_free(gpu_env *e, void **dev, int ndev, void **host, int nhost, plan_pair *pp, ir_plan *p,
                              ir_graph *g) {
  for (int i = 0; i < ndev; ++i) be_mem_free(e->cu, 0, dev[i]);
  for (int i = 0; i < nhost; ++i) free(host[i]);
  plan_pair_free(e, pp);
  if (p) plan_free(p);
  if (g) ir_graph_free(g);
}

/* Graph capture with one small input moving every run beside a large one
 * and a large output holding still (a decoder's token ids beside its KV
 * cache): the small one is staged, the large ones stay bound, the graph
 * replays; then the large input moves once (that run eager) and holds
 * again (a graph keyed to it, the small one still staged). Every run must
 * equal the eager one, with new data in both inputs each run. */
static void test_capture_mixed_io(gpu_env *e) {
  enum { N = 6 << 20 };
  tg t;
  ir_graph *g = NULL;
  ir_plan *p = NULL;
  plan_pair pp = {{0}, {0}};
  void *dx[2] = {0}, *ds[2] = {0}, *dref = NULL, *dout = NULL, *hx = malloc(4 * (size_t)N);
  void *h1 = malloc(4 * (size_t)N), *h2 = malloc(4 * (size_t)N);
  float hs = 0.f;
  tg_begin(&t, HD_DT_F32);
  int in[2] = {tg_input(&t, 1, D(N)), tg_input(&t, 1, D(1))};
  tg_output(&t, tg_node(&t, "Mul", 14, in, 2, NULL, 0));
  OK(tg_end(&t, 0, &g));
  ir_shape shapes[2] = {{.rank = 1, .dims = {N}}, {.rank = 1, .dims = {1}}};
  OK(plan_create(g, shapes, NULL, &p));
  for (int i = 0; i < 2; ++i) {
    OK(be_mem_alloc(e->cu, 0, 4 * (size_t)N, &dx[i]));
    OK(be_mem_alloc(e->cu, 0, 4, &ds[i]));
  }
  OK(be_mem_alloc(e->cu, 0, 4 * (size_t)N, &dout));
  OK(be_mem_alloc(e->cu, 0, 4 * (size_t)N, &dref));
  OK(plan_pair_compile(e, g, p, &pp));
  int mismatches = 0, runs = 0;
  /* the large input: still, then moved once, then still; the small one alternates every run */
  static const int big[] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
  for (size_t r = 0; r < sizeof big / sizeof big[0]; ++r) {
    int w = big[r], v = (int)(r % 2);
    fill(HD_DT_F32, hx, N, 1.f);
    hs = 0.5f + (float)r;
    OK(be_copy(e->cu, 0, dx[w], hx, 4 * (size_t)N, BE_COPY_HOST_TO_DEVICE, e->stream));
    OK(be_copy(e->cu, 0, ds[v], &hs, 4, BE_COPY_HOST_TO_DEVICE, e->stream));
    void *run_in[2] = {dx[w], ds[v]};
    OK(be_plan_run(e->cu, pp.p[0], run_in, &dref, e->stream));
    OK(be_plan_run(e->cu, pp.p[1], run_in, &dout, e->stream));
    OK(be_copy(e->cu, 0, h1, dref, 4 * (size_t)N, BE_COPY_DEVICE_TO_HOST, e->stream));
    OK(be_copy(e->cu, 0, h2, dout, 4 * (size_t)N, BE_COPY_DEVICE_TO_HOST, e->stream));
    OK(be_stream_sync(e->cu, 0, e->stream));
    mismatches += memcmp(h1, h2, 4 * (size_t)N) != 0;
    ++runs;
  }
  CHECK(mismatches == 0, "graph capture, mixed I/O: %d of %d runs differ from eager", mismatches, runs);
  /* the small input went through staging (the captured side holds it), the large ones did not */
  be_graph_memory eager_mem, cap_mem;
  be_graph_memory_get(e->cu, pp.g[0], &eager_mem);
  be_graph_memory_get(e->cu, pp.g[1], &cap_mem);
  CHECK(cap_mem.run > eager_mem.run && cap_mem.run - eager_mem.run < ((size_t)1 << 20),
        "graph capture, mixed I/O: run memory %zu captured, %zu eager (want the small input's staging only)",
        cap_mem.run, eager_mem.run);
  printf("%-4s graph capture, a small input moving beside large still ones: %d runs bitwise equal to eager, "
         "%zu bytes of staging\n",
         mismatches ? "BAD" : "ok", runs - mismatches, cap_mem.run - eager_mem.run);
done:
  capture_case_free(e, (void *[]){dx[0], dx[1], ds[0], ds[1], dout, dref}, 6, (void *[]){hx, h1, h2}, 3, &pp, p, g);
}

/* Graph capture with inputs and outputs too large to stage (copies would
 * cost more than the graph saves: an LLM's KV cache): runs whose pointers
 * move are eager, a pointer set that holds still gets a graph; every run
 * must equal the eager one, whichever pointers it was given. */
static void test_capture_large_io(gpu_env *e) {
  enum { N = 6 << 20 };
  tg t;
  ir_graph *g = NULL;
  ir_plan *p = NULL;
  plan_pair pp = {{0}, {0}};
  void *dx[2] = {0}, *dy = NULL, *dref = NULL, *dout[2] = {0}, *hx = malloc(4 * (size_t)N), *hy = malloc(4 * (size_t)N);
  void *h1 = malloc(4 * (size_t)N), *h2 = malloc(4 * (size_t)N);
  tg_begin(&t, HD_DT_F32);
  int in[2] = {tg_input(&t, 1, D(N)), tg_input(&t, 1, D(N))};
  tg_output(&t, tg_node(&t, "Add", 14, in, 2, NULL, 0));
  OK(tg_end(&t, 0, &g));
  ir_shape shapes[2] = {{.rank = 1, .dims = {N}}, {.rank = 1, .dims = {N}}};
  OK(plan_create(g, shapes, NULL, &p));
  for (int i = 0; i < 2; ++i) {
    OK(be_mem_alloc(e->cu, 0, 4 * (size_t)N, &dx[i]));
    OK(be_mem_alloc(e->cu, 0, 4 * (size_t)N, &dout[i]));
  }
  OK(be_mem_alloc(e->cu, 0, 4 * (size_t)N, &dy));
  OK(be_mem_alloc(e->cu, 0, 4 * (size_t)N, &dref));
  OK(plan_pair_compile(e, g, p, &pp));
  be_plan *cp = pp.p[0], *cp2 = pp.p[1];
  fill(HD_DT_F32, hy, N, 1.f);
  OK(be_copy(e->cu, 0, dy, hy, 4 * (size_t)N, BE_COPY_HOST_TO_DEVICE, e->stream));
  int mismatches = 0, runs = 0;
  /* pointer sets by run: moving (0 1 0 1), then holding still (1 x4: warm-up, capture, replays), then moving again */
  static const int which[] = {0, 1, 0, 1, 1, 1, 1, 1, 0, 1};
  for (size_t r = 0; r < sizeof which / sizeof which[0]; ++r) {
    int w = which[r];
    fill(HD_DT_F32, hx, N, 1.f); /* new data every run: a stale graph or copy shows */
    OK(be_copy(e->cu, 0, dx[w], hx, 4 * (size_t)N, BE_COPY_HOST_TO_DEVICE, e->stream));
    void *ref_in[2] = {dx[w], dy}, *cap_in[2] = {dx[w], dy};
    OK(be_plan_run(e->cu, cp, ref_in, &dref, e->stream));
    OK(be_plan_run(e->cu, cp2, cap_in, &dout[w], e->stream));
    OK(be_copy(e->cu, 0, h1, dref, 4 * (size_t)N, BE_COPY_DEVICE_TO_HOST, e->stream));
    OK(be_copy(e->cu, 0, h2, dout[w], 4 * (size_t)N, BE_COPY_DEVICE_TO_HOST, e->stream));
    OK(be_stream_sync(e->cu, 0, e->stream));
    mismatches += memcmp(h1, h2, 4 * (size_t)N) != 0;
    ++runs;
  }
  CHECK(mismatches == 0, "graph capture, large I/O: %d of %d runs differ from eager", mismatches, runs);
  printf("%-4s graph capture with I/O too large to stage: %d runs bitwise equal to eager (pointers moving, still, moving)\n",
         mismatches ? "BAD" : "ok", runs - mismatches);
done:
  capture_case_free(e, (void *[]){dx[0], dx[1], dout[0], dout[1], dy, dref}, 6, (void *[]){hx, hy, h1, h2}, 4, &pp, p,
                    g);
}

/* Many threads, each on its own stream, run one plan at once (eager and
 * captured): every output must equal the same input's output run alone.
 * Before runs had their own instances, they shared the plan's arena. The
 * plans: the ResNet-like chain, and the transformer and decoder steps
 * whose runs keep scratch of their own (the library's SDPA and its
 * workspace, the flash kernel's split partials, the BLAS workspace, the
 * 4-bit GEMV's split sums, the decode kernel). */
enum { CC_THREADS = 6, CC_INPUTS = 5, CC_ITERS = 60, CC_MAX_IO = 8 };

static const op_case *op_case_named(const char *name);

/* One compiled plan, CC_INPUTS input sets on the device and each set's
 * outputs run alone. */
typedef struct cc_case {
  gpu_env *e;
  be_graph *graph;
  be_plan *plan;
  int nin, nout;
  int out_dtype[CC_MAX_IO];
  size_t out_bytes[CC_MAX_IO], out_n[CC_MAX_IO];
  void *din[CC_INPUTS][CC_MAX_IO];
  void *href[CC_INPUTS][CC_MAX_IO];
  double tol; /* 0: bitwise */
} cc_case;

typedef struct cc_job {
  const cc_case *c;
  int index;
  int wrong, inexact, errors;
  double worst;
} cc_job;

/* How far h is from set i's outputs alone (max relative error over the
 * outputs; 0 when bitwise equal). */
static double cc_diff(const cc_case *c, int i, void *const *h) {
  double worst = 0;
  for (int o = 0; o < c->nout; o++) {
    if (memcmp(h[o], c->href[i][o], c->out_bytes[o]) == 0) continue;
    double maxerr = 0, maxref = 0;
    int bad = 0;
    for (size_t k = 0; k < c->out_n[o]; k++) {
      double a = get(c->out_dtype[o], h[o], k), b = get(c->out_dtype[o], c->href[i][o], k);
      double d = ut_diff(a, b, &bad);
      if (d > maxerr) maxerr = d;
      if (fabs(b) > maxref) maxref = fabs(b);
    }
    double rel = bad ? 1e30 : maxerr / (maxref > 1 ? maxref : 1);
    if (rel == 0) rel = 1e-300; /* different bits, equal values (-0, NaN payloads) */
    if (rel > worst) worst = rel;
  }
  return worst;
}

static void *cc_worker(void *arg) {
  cc_job *j = arg;
  const cc_case *c = j->c;
  gpu_env *e = c->e;
  void *stream = NULL, *dout[2][CC_MAX_IO] = {{0}}, *h[CC_MAX_IO] = {0};
  hd_status *st = be_stream_create(e->cu, 0, &stream);
  for (int o = 0; o < c->nout && !st; o++) {
    st = be_mem_alloc(e->cu, 0, c->out_bytes[o], &dout[0][o]);
    if (!st) st = be_mem_alloc(e->cu, 0, c->out_bytes[o], &dout[1][o]);
    if (!st && !(h[o] = malloc(c->out_bytes[o]))) st = hd_error(HD_ERR_OUT_OF_MEMORY, "host");
  }
  for (int it = 0; it < CC_ITERS && !st; ++it) {
    int i = (j->index * 7 + it * 3) % CC_INPUTS;
    void **out = dout[(it / 5) & 1]; /* output pointers change now and then */
    st = be_plan_run(e->cu, c->plan, c->din[i], out, stream);
    for (int o = 0; o < c->nout && !st; o++)
      st = be_copy(e->cu, 0, h[o], out[o], c->out_bytes[o], BE_COPY_DEVICE_TO_HOST, stream);
    if (!st) st = be_stream_sync(e->cu, 0, stream);
    if (st) break;
    double d = cc_diff(c, i, h);
    if (d > j->worst) j->worst = d;
    if (d > c->tol) j->wrong++;
    else if (d > 0) j->inexact++;
  }
  if (st) j->errors++;
  if (st && verbose) printf("  thread %d: %s\n", j->index, hd_status_msg(st));
  hd_status_free(st);
  for (int o = 0; o < c->nout; o++) {
    be_mem_free(e->cu, 0, dout[0][o]);
    be_mem_free(e->cu, 0, dout[1][o]);
    free(h[o]);
  }
  if (stream) be_stream_destroy(e->cu, 0, stream);
  return NULL;
}

static void cc_case_free(cc_case *c) {
  gpu_env *e = c->e;
  for (int i = 0; i < CC_INPUTS; ++i)
    for (int k = 0; k < CC_MAX_IO; ++k) {
      be_mem_free(e->cu, 0, c->din[i][k]);
      free(c->href[i][k]);
    }
  if (c->plan) be_plan_free(e->cu, c->plan);
  if (c->graph) be_graph_free(e->cu, c->graph);
}

/* Compiles plan p of g on ctx, makes the input sets and runs each alone
 * (three times: the captured context's warm-up, capture and replay). */
static hd_status *cc_case_init(gpu_env *e, be_context *ctx, const ir_graph *g, const ir_plan *p, double tol,
                               cc_case *c) {
  memset(c, 0, sizeof *c);
  c->e = e;
  c->tol = tol;
  c->nin = g->ninputs, c->nout = g->noutputs;
  if (c->nin > CC_MAX_IO || c->nout > CC_MAX_IO) return hd_error(HD_ERR_INVALID_ARG, "too many inputs or outputs");
  HD_TRY(be_graph_compile(e->cu, ctx, g, &c->graph));
  HD_TRY(be_plan_compile(e->cu, c->graph, p, &c->plan));
  void *dout[CC_MAX_IO] = {0};
  hd_status *st = NULL;
  for (int o = 0; o < c->nout && !st; o++) {
    const ir_tensor *t = &p->t[g->outputs[o]];
    c->out_dtype[o] = t->dtype, c->out_bytes[o] = t->nbytes, c->out_n[o] = (size_t)ir_numel(t->rank, t->dims);
    st = be_mem_alloc(e->cu, 0, t->nbytes, &dout[o]);
  }
  for (int i = 0; i < CC_INPUTS && !st; ++i) {
    for (int k = 0; k < c->nin && !st; k++) {
      const ir_tensor *t = &p->t[g->inputs[k]];
      void *h = malloc(t->nbytes + 1);
      if (!h) st = hd_error(HD_ERR_OUT_OF_MEMORY, "host");
      if (!st) fill(t->dtype, h, (size_t)ir_numel(t->rank, t->dims), 1.f);
      if (!st) st = be_mem_alloc(e->cu, 0, t->nbytes, &c->din[i][k]);
      if (!st) st = be_copy(e->cu, 0, c->din[i][k], h, t->nbytes, BE_COPY_HOST_TO_DEVICE, e->stream);
      if (!st) st = be_stream_sync(e->cu, 0, e->stream);
      free(h);
    }
    for (int r = 0; r < 3 && !st; ++r) st = be_plan_run(e->cu, c->plan, c->din[i], dout, e->stream); /* alone */
    for (int o = 0; o < c->nout && !st; o++) {
      if (!(c->href[i][o] = malloc(c->out_bytes[o] + 1))) st = hd_error(HD_ERR_OUT_OF_MEMORY, "host");
      if (!st) st = be_copy(e->cu, 0, c->href[i][o], dout[o], c->out_bytes[o], BE_COPY_DEVICE_TO_HOST, e->stream);
    }
    if (!st) st = be_stream_sync(e->cu, 0, e->stream);
  }
  for (int o = 0; o < c->nout; o++) be_mem_free(e->cu, 0, dout[o]);
  return st;
}

/* CC_THREADS threads run case c at once; name and label say which. */
static void cc_run(const cc_case *c, const char *name, const char *label) {
  cc_job jobs[CC_THREADS];
  pthread_t th[CC_THREADS];
  int started = 0;
  for (int t = 0; t < CC_THREADS; ++t) {
    jobs[t] = (cc_job){.c = c, .index = t};
    if (pthread_create(&th[t], NULL, cc_worker, &jobs[t]) != 0) break;
    started++;
  }
  int wrong = 0, inexact = 0, errors = CC_THREADS - started;
  double worst = 0;
  for (int t = 0; t < started; ++t) {
    pthread_join(th[t], NULL);
    wrong += jobs[t].wrong;
    inexact += jobs[t].inexact;
    errors += jobs[t].errors;
    if (jobs[t].worst > worst) worst = jobs[t].worst;
  }
  CHECK(wrong == 0 && errors == 0, "concurrent runs, %s%s: %d wrong of %d (worst rel %.3g), %d threads failed", name,
        label, wrong, CC_THREADS * CC_ITERS, worst, errors);
  printf("%-4s concurrent runs, %s%s: %d threads x %d runs on their own streams, %d wrong, %d errors, %d within "
         "tolerance but not bitwise equal to the run alone\n",
         wrong || errors ? "BAD" : "ok", name, label, CC_THREADS, CC_ITERS, wrong, errors, inexact);
}

static void test_concurrent(gpu_env *e, be_context *ctx, const char *label) {
  ir_graph *g = NULL;
  ir_plan *p = NULL;
  cc_case c;
  memset(&c, 0, sizeof c);
  c.e = e;
  OK(resnetish_plan(HD_DT_F32, 2, 32, 3, &g, &p));
  OK(cc_case_init(e, ctx, g, p, 0, &c));
  cc_run(&c, "resnetish_chain", label);
done:
  cc_case_free(&c);
  if (p) plan_free(p);
  if (g) ir_graph_free(g);
}

/* The transformer and decoder cases, fp16, each within its tolerance of
 * the run alone (bitwise expected; a difference inside the tolerance is
 * counted and shown). */
static void test_concurrent_cases(gpu_env *e, be_context *ctx, const char *label) {
  static const char *const names[] = {"attention_sdpa_key_bias", "attention_sdpa_gqa", "attention_sdpa_shared_key_mask",
                                      "attention_flash_key_padding_bert_b8", "attention_flash_causal_gqa",
                                      "attention_gqa_decode_rotary_group8", "matmul_bias_rows197",
                                      "nbits_gemv_m1_wide", "nbits_mma_m32_b128"};
  for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
    const op_case *oc = NULL;
    for (size_t i = 0; i < sizeof attn_cases / sizeof attn_cases[0] && !oc; ++i)
      if (strcmp(attn_cases[i].name, names[n]) == 0) oc = &attn_cases[i];
    if (!oc) oc = op_case_named(names[n]);
    CHECK(oc != NULL, "concurrent runs: no case %s", names[n]);
    if (!oc) continue;
    tg t;
    ir_graph *g = NULL;
    ir_plan *p = NULL;
    cc_case c;
    memset(&c, 0, sizeof c);
    c.e = e;
    tg_begin(&t, HD_DT_F16);
    oc->build(&t);
    OK(tg_end(&t, oc->fuse, &g));
    ir_shape shapes[CC_MAX_IO];
    memset(shapes, 0, sizeof shapes);
    for (int i = 0; i < g->ninputs && i < CC_MAX_IO; ++i) {
      const ir_value *v = &g->values[g->inputs[i]];
      shapes[i].rank = v->rank;
      memcpy(shapes[i].dims, v->dims, sizeof(int64_t) * (size_t)(v->rank > 0 ? v->rank : 0));
    }
    OK(plan_create(g, shapes, NULL, &p));
    OK(cc_case_init(e, ctx, g, p, oc->tol16, &c));
    cc_run(&c, oc->name, label);
  done:
    cc_case_free(&c);
    if (p) plan_free(p);
    if (g) ir_graph_free(g);
  }
}

/* Input and output pointers 4 bytes off 16-byte alignment (an IOBinding
 * into the middle of a buffer): the run stages them, eager and captured,
 * and gives the aligned run's answer. */
static void test_misaligned(gpu_env *e, be_context *ctx, const char *label) {
  ir_graph *g = NULL;
  ir_plan *p = NULL;
  be_graph *cg = NULL;
  be_plan *cp = NULL;
  void *din = NULL, *dout = NULL, *hin = NULL, *h1 = NULL, *h2 = NULL;
  OK(resnetish_plan(HD_DT_F32, 1, 32, 1, &g, &p));
  size_t nin = p->t[g->inputs[0]].nbytes, nout = p->t[g->outputs[0]].nbytes;
  hin = malloc(nin);
  h1 = malloc(nout);
  h2 = malloc(nout);
  fill(HD_DT_F32, hin, nin / 4, 1.f);
  OK(be_mem_alloc(e->cu, 0, nin + 64, &din));
  OK(be_mem_alloc(e->cu, 0, nout + 64, &dout));
  OK(be_graph_compile(e->cu, ctx, g, &cg));
  OK(be_plan_compile(e->cu, cg, p, &cp));
  void *ain = din, *aout = dout, *min = (char *)din + 4, *mout = (char *)dout + 4;
  OK(be_copy(e->cu, 0, ain, hin, nin, BE_COPY_HOST_TO_DEVICE, e->stream));
  OK(be_plan_run(e->cu, cp, &ain, &aout, e->stream));
  OK(be_copy(e->cu, 0, h1, aout, nout, BE_COPY_DEVICE_TO_HOST, e->stream));
  OK(be_copy(e->cu, 0, min, hin, nin, BE_COPY_HOST_TO_DEVICE, e->stream));
  for (int r = 0; r < 3; ++r) OK(be_plan_run(e->cu, cp, &min, &mout, e->stream)); /* warm-up, capture, replay */
  OK(be_copy(e->cu, 0, h2, mout, nout, BE_COPY_DEVICE_TO_HOST, e->stream));
  OK(be_stream_sync(e->cu, 0, e->stream));
  int same = memcmp(h1, h2, nout) == 0;
  CHECK(same, "misaligned io%s: output differs from the aligned run", label);
  printf("%-4s misaligned input/output pointers%s: staged, same answer\n", same ? "ok" : "BAD", label);
done:
  be_mem_free(e->cu, 0, din);
  be_mem_free(e->cu, 0, dout);
  free(hin);
  free(h1);
  free(h2);
  if (cp) be_plan_free(e->cu, cp);
  if (cg) be_graph_free(e->cu, cg);
  if (p) plan_free(p);
  if (g) ir_graph_free(g);
}

/* Every op kind has a GPU family (the module links one per family; a
 * family the GPU leaves to the CPU EP says so with GB_NOT_ON_GPU): on a
 * bare node, supports_node may refuse the node's details, never the kind. */
static void test_registry(gpu_env *e) {
  ir_graph *g = NULL;
  OK(ir_graph_create(&g));
  int64_t d[2] = {4, 4};
  int x = -1, y = -1;
  OK(ir_graph_add_value(g, "x", HD_DT_F32, 2, d, &x));
  OK(ir_graph_add_value(g, "y", HD_DT_F32, 2, d, &y));
  int no_family = 0;
  for (int k = 1; k < OP_COUNT; ++k) {
    int n;
    OK(ir_graph_add_node(g, k, op_name((op_kind)k), op_name((op_kind)k), 13, &x, 1, &y, 1, &n));
    hd_status *st = be_supports_node(e->cu, e->ctx, g, n);
    if (st && strstr(hd_status_msg(st), "does not run")) {
      printf("     %s: %s\n", op_name((op_kind)k), hd_status_msg(st));
      no_family++;
    }
    hd_status_free(st);
  }
  CHECK(no_family == 0, "%d op kinds have no GPU family", no_family);
  printf("%-4s every op kind has a GPU family (%d kinds)\n", no_family ? "BAD" : "ok", OP_COUNT - 1);
done:
  if (g) ir_graph_free(g);
}

/* supports_node refuses what it cannot run, with NOT_SUPPORTED. */
static void test_refusals(gpu_env *e) {
  ir_graph *g = NULL;
  conv_case cc = cases[0];
  cc.dtype = HD_DT_F64;
  hd_status *st = build_graph(&cc, 0, &g);
  if (!st) {
    CHECK(eat(be_supports_node(e->cu, e->ctx, g, 0), "f64 conv") == HD_ERR_NOT_SUPPORTED,
          "f64 conv must be NOT_SUPPORTED");
    g->nodes[0].kind = OP_UNKNOWN;
    CHECK(eat(be_supports_node(e->cu, e->ctx, g, 0), "unknown op") == HD_ERR_NOT_SUPPORTED,
          "an unknown op must be NOT_SUPPORTED");
    ir_graph_free(g);
  } else {
    CHECK(0, "build: %s", hd_status_msg(st));
    hd_status_free(st);
  }
  printf("ok   refusals\n");
}

/* Allocation failures come back as OUT_OF_MEMORY statuses, nothing leaks. */
static void test_oom(gpu_env *e) {
  ir_graph *g = NULL;
  ir_plan *p = NULL;
  be_graph *bg = NULL;
  be_plan *bp = NULL;
  void *huge = NULL;
  CHECK(eat(be_mem_alloc(e->cu, 0, (size_t)1 << 50, &huge), "1 PiB") == HD_ERR_OUT_OF_MEMORY,
        "a 1 PiB cudaMalloc must be OUT_OF_MEMORY");
  CHECK(huge == NULL, "failed alloc leaves NULL");
  const conv_case *cc = &cases[1];
  OK(build_graph(cc, 0, &g));
  ir_shape s;
  memset(&s, 0, sizeof s);
  s.rank = 4;
  s.dims[0] = cc->n;
  s.dims[1] = cc->c;
  s.dims[2] = cc->in[0];
  s.dims[3] = cc->in[1];
  OK(plan_create(g, &s, NULL, &p));
  int live = e->ta.live;
  e->ta.refuse = 1;
  CHECK(eat(be_graph_compile(e->cu, e->ctx, g, &bg), "graph oom") == HD_ERR_OUT_OF_MEMORY,
        "graph_compile under a refusing allocator must be OUT_OF_MEMORY");
  e->ta.refuse = 0;
  CHECK(e->ta.live == live, "graph_compile leaked after OOM");
  OK(be_graph_compile(e->cu, e->ctx, g, &bg));
  e->ta.refuse = 1;
  hd_code c = eat(be_plan_compile(e->cu, bg, p, &bp), "plan oom");
  /* A plan needs no memory when it has no arena and no workspace. */
  CHECK(c == HD_ERR_OUT_OF_MEMORY || c == HD_OK, "plan_compile under OOM: code %d", (int)c);
  e->ta.refuse = 0;
  if (bp) be_plan_free(e->cu, bp);
  bp = NULL;
  printf("ok   oom\n");
done:
  e->ta.refuse = 0;
  if (bp) be_plan_free(e->cu, bp);
  if (bg) be_graph_free(e->cu, bg);
  if (p) plan_free(p);
  if (g) ir_graph_free(g);
}

static void test_device(gpu_env *e) {
  be_device_info info;
  OK(be_device_info_get(e->cu, 0, &info));
  size_t fr = 0, tot = 0;
  OK(be_mem_info(e->cu, 0, &fr, &tot));
  printf("device 0: %s, vendor 0x%04x, pci id 0x%04x, bus %s, %.1f GiB (%.1f free)\n", info.name,
         info.vendor_id, info.pci_device_id, info.pci_bus_id,
         (double)info.total_memory / (1 << 30), (double)fr / (1 << 30));
  CHECK(info.vendor_id == 0x10DE, "vendor id");
  CHECK(strlen(info.pci_bus_id) == 12 && info.pci_bus_id[4] == ':', "bus id form: %s",
        info.pci_bus_id);
  for (const char *c = info.pci_bus_id; *c; ++c)
    CHECK(!(*c >= 'A' && *c <= 'F'), "bus id must be lower case: %s", info.pci_bus_id);
  CHECK(tot > 0 && tot >= fr, "mem info");
  CHECK(eat(be_device_info_get(e->cu, be_device_count(e->cu), &info), "bad ordinal") ==
            HD_ERR_INVALID_ARG, "an ordinal past the end is INVALID_ARG");
  /* Streams and events: s2 waits for an event recorded on s1. */
  void *s2 = NULL, *ev = NULL, *pinned = NULL, *d = NULL;
  OK(be_stream_create(e->cu, 0, &s2));
  OK(be_event_create(e->cu, 0, &ev));
  OK(be_host_alloc_pinned(e->cu, 1 << 20, &pinned));
  OK(be_mem_alloc(e->cu, 0, 1 << 20, &d));
  memset(pinned, 0x5a, 1 << 20);
  OK(be_copy(e->cu, 0, d, pinned, 1 << 20, BE_COPY_HOST_TO_DEVICE, e->stream));
  OK(be_event_record(e->cu, ev, e->stream));
  OK(be_stream_wait_event(e->cu, s2, ev));
  memset(pinned, 0, 1 << 20);
  OK(be_copy(e->cu, 0, pinned, d, 1 << 20, BE_COPY_DEVICE_TO_HOST, s2));
  OK(be_stream_sync(e->cu, 0, s2));
  OK(be_event_sync(e->cu, ev));
  CHECK(((unsigned char *)pinned)[12345] == 0x5a, "copy round trip through two streams");
  printf("ok   device, streams, events, pinned memory\n");
done:
  be_mem_free(e->cu, 0, d);
  be_host_free_pinned(e->cu, pinned);
  be_event_destroy(e->cu, 0, ev);
  be_stream_destroy(e->cu, 0, s2);
}


/* --bench: ResNet-like convolutions, median-free mean over 200 runs on one
 * stream (device time by wall clock around a sync, and host time of the
 * plan_run call alone). Prints a table; never fails on speed. */
#include <time.h>
static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void bench(gpu_env *e) {
  static const conv_case bc[] = {
      {"r50_3x3_64_b1", HD_DT_F32, 2, 1, 64, 64, S2(56, 56), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
      {"r50_3x3_64_b32", HD_DT_F32, 2, 32, 64, 64, S2(56, 56), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
      {"r50_1x1_res_b32", HD_DT_F32, 2, 32, 64, 256, S2(56, 56), S2(1, 1), ONE, ONE, ZERO, ZERO, 1, 1, 1, OP_ACT_RELU, 0, 0, 0, 0},
      {"f16_3x3_64_b1", HD_DT_F16, 2, 1, 64, 64, S2(56, 56), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
      {"f16_3x3_64_b32", HD_DT_F16, 2, 32, 64, 64, S2(56, 56), S2(3, 3), ONE, ONE, S2(1, 1), S2(1, 1), 1, 1, 0, OP_ACT_RELU, 0, 0, 0, 0},
  };
  printf("%-18s %-11s %10s %10s %8s\n", "conv", "algo", "us/run", "host us", "TFLOP/s");
  for (size_t i = 0; i < sizeof bc / sizeof bc[0]; ++i) {
    for (int exh = 0; exh < 2; ++exh) {
      const conv_case *cc = &bc[i];
      ir_graph *g = NULL;
      ir_plan *p = NULL;
      be_graph *cg = NULL;
      be_plan *cp = NULL;
      void *din[2] = {0}, *dout = NULL;
      size_t es = hd_dtype_size(cc->dtype);
      ir_shape sh[2];
      memset(sh, 0, sizeof sh);
      sh[0].rank = sh[1].rank = 4;
      sh[0].dims[0] = sh[1].dims[0] = cc->n;
      sh[0].dims[1] = cc->c;
      sh[1].dims[1] = cc->k;
      sh[0].dims[2] = sh[1].dims[2] = cc->in[0];
      sh[0].dims[3] = sh[1].dims[3] = cc->in[1];
      be_context *ctx = exh ? e->ctx_exh : e->ctx;
      double t0, t1, host = 0;
      OK(build_graph(cc, 0, &g));
      OK(plan_create(g, sh, NULL, &p));
      OK(be_graph_compile(e->cu, ctx, g, &cg));
      t0 = now_us();
      OK(be_plan_compile(e->cu, cg, p, &cp));
      t1 = now_us();
      size_t nx = (size_t)ir_numel(4, sh[0].dims), ny = (size_t)ir_numel(4, sh[1].dims);
      OK(be_mem_alloc(e->cu, 0, nx * es, &din[0]));
      if (cc->residual) OK(be_mem_alloc(e->cu, 0, ny * es, &din[1]));
      OK(be_mem_alloc(e->cu, 0, ny * es, &dout));
      void *outs[1] = {dout};
      for (int r = 0; r < 20; ++r) OK(be_plan_run(e->cu, cp, din, outs, e->stream));
      OK(be_stream_sync(e->cu, 0, e->stream));
      enum { RUNS = 200 };
      double s0 = now_us();
      for (int r = 0; r < RUNS; ++r) {
        double h0 = now_us();
        OK(be_plan_run(e->cu, cp, din, outs, e->stream));
        host += now_us() - h0;
      }
      OK(be_stream_sync(e->cu, 0, e->stream));
      double us = (now_us() - s0) / RUNS;
      double flop = 2.0 * (double)ny * (double)(cc->c / cc->group) * (double)(cc->ker[0] * cc->ker[1]);
      printf("%-18s %-11s %10.1f %10.1f %8.1f   (plan_compile %.1f ms)\n", cc->name,
             exh ? "exhaustive" : "heuristic", us, host / RUNS, flop / us / 1e6, (t1 - t0) / 1e3);
    done:
      be_mem_free(e->cu, 0, din[0]);
      be_mem_free(e->cu, 0, din[1]);
      be_mem_free(e->cu, 0, dout);
      if (cp) be_plan_free(e->cu, cp);
      if (cg) be_graph_free(e->cu, cg);
      if (p) plan_free(p);
      if (g) ir_graph_free(g);
    }
  }
}

static void bench_chain(gpu_env *e) {
  printf("\nResNet-ish chain (stem 7x7/2 + maxpool + 8 basic blocks of 64ch at 56x56 + GAP + FC + softmax)\n");
  printf("%-6s %-5s %-22s %10s %10s\n", "dtype", "batch", "mode", "us/run", "host us");
  static const int dts[2] = {HD_DT_F32, HD_DT_F16};
  static const int64_t batches[2] = {1, 32};
  for (int di = 0; di < 2; ++di) {
    for (int bi = 0; bi < 2; ++bi) {
      int dtype = dts[di];
      ir_graph *g = NULL;
      ir_plan *p = NULL;
      be_graph *cg[2] = {0};
      be_plan *cp[2] = {0};
      void *din = NULL, *dout[2] = {0};
      OK(resnetish_plan(dtype, batches[bi], 224, 8, &g, &p));
      size_t nin = p->t[g->inputs[0]].nbytes, nout = p->t[g->outputs[0]].nbytes;
      OK(be_mem_alloc(e->cu, 0, nin, &din));
      OK(be_mem_alloc(e->cu, 0, nout, &dout[0]));
      OK(be_mem_alloc(e->cu, 0, nout, &dout[1]));
      OK(be_graph_compile(e->cu, e->ctx, g, &cg[0]));
      OK(be_plan_compile(e->cu, cg[0], p, &cp[0]));
      OK(be_graph_compile(e->cu, e->ctx_cap, g, &cg[1]));
      OK(be_plan_compile(e->cu, cg[1], p, &cp[1]));
      for (int mode = 0; mode < 3; ++mode) {
        int k = mode == 0 ? 0 : 1;
        for (int r = 0; r < 20; ++r) OK(be_plan_run(e->cu, cp[k], &din, &dout[0], e->stream));
        OK(be_stream_sync(e->cu, 0, e->stream));
        enum { RUNS = 200 };
        double host = 0, s0 = now_us();
        for (int r = 0; r < RUNS; ++r) {
          double h0 = now_us();
          OK(be_plan_run(e->cu, cp[k], &din, &dout[mode == 2 ? r & 1 : 0], e->stream));
          host += now_us() - h0;
        }
        OK(be_stream_sync(e->cu, 0, e->stream));
        double us = (now_us() - s0) / RUNS;
        const char *names[3] = {"eager", "graph (same pointers)", "graph (staged io)"};
        printf("%-6s %-5lld %-22s %10.1f %10.1f\n", hd_dtype_name(dtype), (long long)batches[bi],
               names[mode], us, host / RUNS);
      }
    done:
      be_mem_free(e->cu, 0, din);
      be_mem_free(e->cu, 0, dout[0]);
      be_mem_free(e->cu, 0, dout[1]);
      for (int k = 0; k < 2; ++k) {
        if (cp[k]) be_plan_free(e->cu, cp[k]);
        if (cg[k]) be_graph_free(e->cu, cg[k]);
      }
      if (p) plan_free(p);
      if (g) ir_graph_free(g);
    }
  }
}

/* Microseconds per run of g's plan at its inputs' shapes on ctx (-1 on a failure). */
static double time_graph(gpu_env *e, be_context *ctx, ir_graph *g) {
  ir_plan *p = NULL;
  be_graph *cg = NULL;
  be_plan *cp = NULL;
  void *hin = NULL, *din = NULL, *dout = NULL;
  double us = -1;
  ir_shape sh;
  const ir_value *x = &g->values[g->inputs[0]];
  sh.rank = x->rank;
  memcpy(sh.dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  OK(plan_create(g, &sh, NULL, &p));
  const ir_tensor *xt = &p->t[g->inputs[0]], *yt = &p->t[g->outputs[0]];
  hin = malloc(xt->nbytes + 1);
  fill(xt->dtype, hin, (size_t)ir_numel(xt->rank, xt->dims), 1.0f);
  OK(be_mem_alloc(e->cu, 0, xt->nbytes, &din));
  OK(be_mem_alloc(e->cu, 0, yt->nbytes, &dout));
  OK(be_copy(e->cu, 0, din, hin, xt->nbytes, BE_COPY_HOST_TO_DEVICE, e->stream));
  OK(be_graph_compile(e->cu, ctx, g, &cg));
  OK(be_plan_compile(e->cu, cg, p, &cp));
  for (int r = 0; r < 20; ++r) OK(be_plan_run(e->cu, cp, &din, &dout, e->stream));
  OK(be_stream_sync(e->cu, 0, e->stream));
  enum { RUNS = 200 };
  double s0 = now_us();
  for (int r = 0; r < RUNS; ++r) OK(be_plan_run(e->cu, cp, &din, &dout, e->stream));
  OK(be_stream_sync(e->cu, 0, e->stream));
  us = (now_us() - s0) / RUNS;
done:
  be_mem_free(e->cu, 0, din);
  be_mem_free(e->cu, 0, dout);
  free(hin);
  if (cp) be_plan_free(e->cu, cp);
  if (cg) be_graph_free(e->cu, cg);
  if (p) plan_free(p);
  return us;
}

/* MatMulNBits at a 7B-class layer (K = N = 4096, block 32, zero points,
 * fp16, graph capture): each path at each M (HIPDNN_EP_NBITS_GEMV_MAX_M
 * forces one), and a dense fp16 MatMul of the same size; the GEMV's rate
 * counts the bytes it must read (codes, scales, zero points). */
/* One MatMulNBits [m, k] x [n, k]^T (fp16, zero points) or, with dense,
 * a MatMul of fp16 weights, timed under graph replay with the environment
 * as it is (us a run; -1 on a failure). */
static double time_nbits(gpu_env *e, int64_t m, int64_t k, int64_t n, int64_t bs, int dense) {
  tg t;
  ir_graph *g = NULL;
  tg_begin(&t, HD_DT_F16);
  if (!dense) {
    nbits(&t, D(m, k), 2, k, n, bs, 1, 0);
  } else {
    int in[2] = {tg_input(&t, 2, D(m, k)), tg_const(&t, 2, D(k, n), -0.05f, 0.05f)};
    tg_output(&t, tg_node(&t, "MatMul", 13, in, 2, NULL, 0));
  }
  hd_status *st = tg_end(&t, 0, &g);
  if (st) {
    CHECK(0, "bench_nbits: build: %s", hd_status_msg(st));
    hd_status_free(st);
    return -1;
  }
  double us = time_graph(e, e->ctx_cap, g);
  ir_graph_free(g);
  return us;
}

/* The environment knobs a timing runs under: the most rows the GEMV takes
 * and the rows from which it runs on tensor cores (NULL: the default). */
static void nbits_env(const char *gemv_max_m, const char *mma_min_m) {
  if (gemv_max_m) setenv("HIPDNN_EP_NBITS_GEMV_MAX_M", gemv_max_m, 1);
  else unsetenv("HIPDNN_EP_NBITS_GEMV_MAX_M");
  if (mma_min_m) setenv("HIPDNN_EP_NBITS_MMA_MIN_M", mma_min_m, 1);
  else unsetenv("HIPDNN_EP_NBITS_MMA_MIN_M");
}

static void bench_nbits(gpu_env *e, int chain_only) {
  static const int64_t ms[] = {1, 2, 4, 8, 12, 16, 24, 32, 64, 128, 512};
  const int64_t K = 4096, N = 4096, bs = 32, kb = K / bs;
  double bytes = (double)N * (double)K / 2 + (double)N * (double)kb * 2.5;
  printf("\nMatMulNBits fp16, K = N = %lld, block %lld, zero points (graph replay; us per run)\n", (long long)K,
         (long long)bs);
  printf("%-5s %10s %10s %14s %12s %12s\n", "M", "gemv", "gemv mma", "dequant+gemm", "dense fp16", "mma GB/s");
  for (size_t i = 0; i < (chain_only ? 0 : sizeof ms / sizeof ms[0]); ++i) {
    double us[4];
    nbits_env("1000000", "0");
    us[0] = time_nbits(e, ms[i], K, N, bs, 0);
    nbits_env("1000000", "1");
    us[1] = time_nbits(e, ms[i], K, N, bs, 0);
    nbits_env("0", NULL);
    us[2] = time_nbits(e, ms[i], K, N, bs, 0);
    us[3] = time_nbits(e, ms[i], K, N, bs, 1);
    printf("%-5lld %10.1f %10.1f %14.1f %12.1f %12.0f\n", (long long)ms[i], us[0], us[1], us[2], us[3],
           bytes / us[1] / 1e3);
  }
  nbits_env(NULL, NULL);
  /* Llama-3.2-1B's decode layers (K, N) on the GEMV: the CUDA-core form at
   * 1 and 8 rows, the tensor-core one at 1 to 32. */
  static const struct { const char *name; int64_t k, n; } ls[] = {
      {"qkv", 2048, 3072}, {"o_proj", 2048, 2048}, {"gate/up", 2048, 16384}, {"down", 8192, 2048}, {"lm_head", 2048, 128256}};
  static const struct { int64_t m; const char *mma_min_m; } lms[] = {{1, "0"}, {8, "0"}, {1, "1"}, {2, "1"}, {4, "1"},
                                                                      {8, "1"}, {16, "1"}, {32, "1"}};
  enum { NLMS = sizeof lms / sizeof lms[0] };
  printf("\nMatMulNBits GEMV fp16, Llama-3.2-1B decode shapes, block %lld, zero points (us per run; GB/s of the "
         "tensor-core form at M = 8)\n",
         (long long)bs);
  printf("%-8s %6s %7s %7s %7s | %7s %7s %7s %7s %7s %7s %7s\n", "layer", "K", "N", "M=1", "M=8", "mma M=1", "M=2",
         "M=4", "M=8", "M=16", "M=32", "GB/s");
  for (size_t i = 0; i < (chain_only ? 0 : sizeof ls / sizeof ls[0]); ++i) {
    double us[NLMS], lb = (double)ls[i].n * (double)ls[i].k / 2 + (double)ls[i].n * (double)(ls[i].k / bs) * 2.5;
    for (size_t j = 0; j < NLMS; ++j) {
      nbits_env("1000000", lms[j].mma_min_m);
      us[j] = time_nbits(e, lms[j].m, ls[i].k, ls[i].n, bs, 0);
    }
    printf("%-8s %6lld %7lld %7.1f %7.1f | %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f %7.0f\n", ls[i].name, (long long)ls[i].k,
           (long long)ls[i].n, us[0], us[1], us[2], us[3], us[4], us[5], us[6], us[7], lb / us[5] / 1e3);
  }
  nbits_env(NULL, NULL);
  /* A decode step's GEMVs in one graph, weights cold (550 MB, past the L2):
   * 16 x (2048 -> 3072, 3072 -> 2048, SwiGLU 2048 -> 2 x 8192, 8192 ->
   * 2048) and a 2048 -> 128256 head, chained at M rows; the SwiGLU fused
   * into one GEMV or left as two GEMVs and a Mul; at 8 rows with the
   * tensor-core form and without. */
  printf("\nMatMulNBits decode chain (fp16, block 32, zero points; 16 layers + head, one graph)\n");
  static const struct { int64_t m; int fuse; const char *mma_min_m; } cs[] = {
      {1, 1, NULL}, {1, 0, NULL}, {8, 1, "0"}, {8, 1, NULL}, {16, 1, NULL}};
  for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
    tg t;
    ir_graph *g = NULL;
    tg_begin(&t, HD_DT_F16);
    int x = tg_input(&t, 2, D(cs[c].m, 2048));
    double wb = 0;
    for (int l = 0; l < 16; l++) {
      x = nbits_of(&t, x, NULL, 2, 2048, 3072, bs, 1, 0);
      x = nbits_of(&t, x, NULL, 2, 3072, 2048, bs, 1, 0);
      x = swiglu_nbits_of(&t, x, NULL, 2, 2048, 8192, bs, 1, 0);
      x = nbits_of(&t, x, NULL, 2, 8192, 2048, bs, 1, 0);
      wb += 2048.0 * (3072 + 2048 + 2 * 8192 + 2048) * (0.5 + 2.5 / (double)bs);
    }
    tg_output(&t, nbits_of(&t, x, NULL, 2, 2048, 128256, bs, 1, 0));
    wb += 2048.0 * 128256 * (0.5 + 2.5 / (double)bs);
    hd_status *st = tg_end(&t, cs[c].fuse, &g);
    if (st) {
      CHECK(0, "bench_nbits: chain: %s", hd_status_msg(st));
      hd_status_free(st);
      continue;
    }
    nbits_env(NULL, cs[c].mma_min_m);
    double us = time_graph(e, e->ctx_cap, g);
    ir_graph_free(g);
    char label[64];
    snprintf(label, sizeof label, "M=%lld, SwiGLU %s%s", (long long)cs[c].m, cs[c].fuse ? "fused" : "as 2 GEMVs + Mul",
             cs[c].mma_min_m ? ", no mma" : "");
    printf("%-34s %8.1f us  %6.0f GB/s  (%.0f MB of weights; %.1f us at 3.35 TB/s)\n", label, us, wb / us / 1e3,
           wb / 1e6, wb / 3.35e6);
  }
  nbits_env(NULL, NULL);
}

static const be_host test_host = {.log_sink = log_sink, .log_user = NULL};

/* be_module_open("cuda") finds modules next to the core library; this test
 * links the core statically (the "library" is this program, in bin/), so it
 * falls back to ../lib/ beside the program, then to the module's build path
 * (a build tree copied elsewhere keeps its bin/ + lib/ shape). */
static hd_status *open_cuda(be_module **out) {
  hd_status *st = be_module_open("cuda", &test_host, out);
  if (!st || !strstr(hd_status_msg(st), "backend module")) return st;
  char exe[4096], path[4200];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash) *slash = '\0';
  snprintf(path, sizeof path, "%s/../lib/libhipdnn_ep_cuda.so", exe);
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl && HD_CUDA_MODULE_PATH[0]) dl = dlopen(HD_CUDA_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!dl) return st; /* the loader's own message says where it looked */
  hd_status_free(st);
  hd_status *(*open_fn)(int, const be_host *, be_module **);
  *(void **)&open_fn = dlsym(dl, BE_OPEN_SYMBOL);
  if (!open_fn) return hd_error(HD_ERR_NOT_FOUND, "cuda module has no %s", BE_OPEN_SYMBOL);
  be_host h = test_host;
  h.layout = be_layout_of_build();
  return open_fn(BE_API_VERSION, &h, out);
}

/* ---- the engine cache: exhaustive choices kept on disk ---- */

static const char *const ec_names[] = {"2d_basic", "2d_bias_relu", "f16_2d_bias_relu", "3d"};
#define EC_N (int)(sizeof ec_names / sizeof ec_names[0])

static const conv_case *case_named(const char *name) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    if (strcmp(cases[i].name, name) == 0) return &cases[i];
  return NULL;
}

/* Plans case cc's graph g in ctx at its shapes, runs it once on an input
 * fixed by the case's index, and copies y to *hout (malloc'ed; *bytes). */
static hd_status *ec_run(gpu_env *e, be_context *ctx, void *stream, const conv_case *cc, const ir_graph *g,
                         int index, void **hout, size_t *bytes) {
  ir_plan *p = NULL;
  be_graph *cg = NULL;
  be_plan *cp = NULL;
  void *hin = NULL, *din = NULL, *dout = NULL;
  *hout = NULL;
  hd_status *st = NULL;
  ir_shape shape;
  memset(&shape, 0, sizeof shape);
  shape.rank = cc->ns + 2;
  shape.dims[0] = cc->n;
  shape.dims[1] = cc->c;
  for (int i = 0; i < cc->ns; ++i) shape.dims[2 + i] = cc->in[i];
  if (!st) st = plan_create(g, &shape, NULL, &p);
  size_t es = hd_dtype_size(cc->dtype), nx = (size_t)ir_numel(shape.rank, shape.dims), ny = 0;
  if (!st) {
    ny = (size_t)ir_numel(p->t[g->outputs[0]].rank, p->t[g->outputs[0]].dims);
    hin = malloc(nx * es);
    *hout = malloc(ny * es);
    if (!hin || !*hout) st = hd_error(HD_ERR_OUT_OF_MEMORY, "host");
  }
  if (!st) {
    uint32_t r = 777u + (uint32_t)index; /* the same input in every session (a local state: threads) */
    for (size_t i = 0; i < nx; ++i) {
      r = r * 1664525u + 1013904223u;
      put(cc->dtype, hin, i, (float)((r >> 8) & 0xffffff) / (float)0x800000 - 1.0f);
    }
    st = be_graph_compile(e->cu, ctx, g, &cg);
  }
  if (!st) st = be_plan_compile(e->cu, cg, p, &cp);
  if (!st) st = be_mem_alloc(e->cu, 0, nx * es, &din);
  if (!st) st = be_mem_alloc(e->cu, 0, ny * es, &dout);
  if (!st) st = be_copy(e->cu, 0, din, hin, nx * es, BE_COPY_HOST_TO_DEVICE, stream);
  void *ins[1] = {din}, *outs[1] = {dout};
  if (!st) st = be_plan_run(e->cu, cp, ins, outs, stream);
  if (!st) st = be_copy(e->cu, 0, *hout, dout, ny * es, BE_COPY_DEVICE_TO_HOST, stream);
  if (!st) st = be_stream_sync(e->cu, 0, stream);
  *bytes = ny * es;
  be_mem_free(e->cu, 0, din);
  be_mem_free(e->cu, 0, dout);
  if (cp) be_plan_free(e->cu, cp);
  if (cg) be_graph_free(e->cu, cg);
  if (p) plan_free(p);
  free(hin);
  if (st) {
    free(*hout);
    *hout = NULL;
  }
  return st;
}

/* One session: a context with exhaustive search and the cache file path,
 * every case planned and run once, then released (which saves and logs
 * the summary). *replayed / *timed: from the summary; -1 if none. */
typedef struct ec_session {
  void *out[EC_N];
  size_t bytes[EC_N];
  int tuned, warnings, replayed, timed, nengines;
  long long engines[64];
} ec_session;

typedef struct ec_job {
  gpu_env *e;
  be_context *ctx;
  const ir_graph *g;
  int index;
  ec_session *s;
  hd_status *st;
} ec_job;

static void *ec_worker(void *arg) {
  ec_job *j = arg;
  void *stream = NULL;
  j->st = be_stream_create(j->e->cu, 0, &stream);
  if (!j->st)
    j->st = ec_run(j->e, j->ctx, stream, case_named(ec_names[j->index]), j->g, j->index, &j->s->out[j->index],
                   &j->s->bytes[j->index]);
  if (stream) be_stream_destroy(j->e->cu, 0, stream);
  return NULL;
}

static hd_status *ec_session_run(gpu_env *e, const char *path, int threads, ec_session *s) {
  memset(s, 0, sizeof *s);
  s->replayed = s->timed = -1;
  be_options o = {.use_tf32 = 1, .algo_search = BE_ALGO_EXHAUSTIVE};
  snprintf(o.engine_cache_file, sizeof o.engine_cache_file, "%s", path);
  be_alloc alloc = {.ctx = &e->ta, .alloc = ta_alloc, .free = ta_free};
  be_context *ctx = NULL;
  ir_graph *g[EC_N] = {0};
  hd_status *st = NULL;
  /* The same weights in every session: the graphs are built from a fixed
   * seed, here, before any thread starts. */
  uint32_t saved = rng_state;
  for (int i = 0; i < EC_N && !st; ++i) {
    rng_state = 4242u + (uint32_t)i;
    st = build_graph(case_named(ec_names[i]), 0, &g[i]);
  }
  rng_state = saved;
  log_reset();
  if (!st) st = be_context_create(e->cu, 0, &o, &alloc, &ctx);
  if (st) {
    for (int i = 0; i < EC_N; ++i)
      if (g[i]) ir_graph_free(g[i]);
    return st;
  }
  if (threads) { /* the plans built at once, as concurrent first runs would */
    pthread_t th[EC_N];
    ec_job jobs[EC_N];
    for (int i = 0; i < EC_N; ++i) {
      jobs[i] = (ec_job){.e = e, .ctx = ctx, .g = g[i], .index = i, .s = s};
      pthread_create(&th[i], NULL, ec_worker, &jobs[i]);
    }
    for (int i = 0; i < EC_N; ++i) {
      pthread_join(th[i], NULL);
      if (!st) st = jobs[i].st;
      else hd_status_free(jobs[i].st);
    }
  } else {
    for (int i = 0; i < EC_N && !st; ++i)
      st = ec_run(e, ctx, e->stream, case_named(ec_names[i]), g[i], i, &s->out[i], &s->bytes[i]);
  }
  be_context_destroy(e->cu, ctx);
  for (int i = 0; i < EC_N; ++i) ir_graph_free(g[i]);
  pthread_mutex_lock(&log_mu);
  s->tuned = log_tuned;
  s->warnings = log_cache_warnings;
  s->nengines = log_nengines;
  memcpy(s->engines, log_engines, sizeof s->engines);
  const char *c = strstr(log_summary, ": ");
  while (c && sscanf(c, ": %d choices replayed, %d timed", &s->replayed, &s->timed) != 2) c = strstr(c + 1, ": ");
  pthread_mutex_unlock(&log_mu);
  return st;
}

static void ec_session_free(ec_session *s) {
  for (int i = 0; i < EC_N; ++i) free(s->out[i]);
}

/* Entries in the cache file, -1 when it is missing or not whole. */
static int ec_file_entries(const char *path) {
  hd_diskcache *dc = NULL;
  hd_status *w = NULL;
  hd_status *st = hd_diskcache_open(path, &dc, &w);
  int n = st || w ? -1 : hd_diskcache_count(dc);
  struct stat sb;
  if (stat(path, &sb) != 0) n = -1;
  hd_status_free(st);
  hd_status_free(w);
  hd_diskcache_close(dc);
  return n;
}

/* Exhaustive search with a fresh cache file times the engines and writes
 * the file; a second context on the same file builds every plan with the
 * same engines and no timing, and gives bit-identical results; a damaged
 * file is a warning and a new timing, and is replaced by a whole one; many
 * threads planning at once in one context leave a whole file. */
static void test_engine_cache(gpu_env *e) {
  char dir[] = "/tmp/hipdnn-engcache-XXXXXX", path[128], path2[128];
  ec_session a, b, c, d;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  memset(&c, 0, sizeof c);
  memset(&d, 0, sizeof d);
  if (!mkdtemp(dir)) {
    CHECK(0, "mkdtemp: %s", strerror(errno));
    return;
  }
  snprintf(path, sizeof path, "%s/engines.txt", dir);
  snprintf(path2, sizeof path2, "%s/threads.txt", dir);
  OK(ec_session_run(e, path, 0, &a));
  int entries = ec_file_entries(path);
  CHECK(a.tuned > 0 && a.timed >= EC_N && a.replayed == 0 && a.warnings == 0,
        "cold cache: %d candidates timed, summary %d replayed / %d timed, %d warnings", a.tuned, a.replayed, a.timed,
        a.warnings);
  CHECK(entries == a.timed, "cold cache: the file holds %d entries, %d plans were timed", entries, a.timed);

  OK(ec_session_run(e, path, 0, &b));
  CHECK(b.tuned == 0 && b.timed == 0 && b.replayed == a.timed && b.warnings == 0,
        "warm cache: %d candidates timed, summary %d replayed / %d timed (want %d / 0), %d warnings", b.tuned,
        b.replayed, b.timed, a.timed, b.warnings);
  CHECK(b.nengines == a.nengines && a.nengines >= EC_N &&
            memcmp(a.engines, b.engines, sizeof(long long) * (size_t)a.nengines) == 0,
        "warm cache: engines differ from the timed ones (%d vs %d plans)", b.nengines, a.nengines);
  int same = 0;
  for (int i = 0; i < EC_N; ++i)
    same += a.out[i] && b.out[i] && a.bytes[i] == b.bytes[i] && memcmp(a.out[i], b.out[i], a.bytes[i]) == 0;
  CHECK(same == EC_N, "warm cache: %d of %d outputs bit-identical to the timed session's", same, EC_N);
  printf("%-4s engine cache: cold %d plans timed (%d candidates), %d entries; warm %d replayed, %d timed, "
         "%d of %d outputs identical\n",
         b.tuned == 0 && same == EC_N ? "ok" : "BAD", a.timed, a.tuned, entries, b.replayed, b.timed, same, EC_N);

  /* Damaged: cut in half. A warning, timing as if cold, a whole file after. */
  FILE *f = fopen(path, "r+b");
  long len = 0;
  if (f) {
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fclose(f);
  }
  CHECK(len > 0 && truncate(path, len / 2) == 0, "cannot cut %s", path);
  OK(ec_session_run(e, path, 0, &c));
  CHECK(c.warnings > 0 && c.tuned > 0 && c.replayed == 0 && ec_file_entries(path) == c.timed,
        "damaged cache: %d warnings, %d timed, %d replayed, file entries %d", c.warnings, c.tuned, c.replayed,
        ec_file_entries(path));
  printf("%-4s engine cache: a file cut short: %d warning(s), timed again, rewritten whole\n",
         c.warnings > 0 && c.replayed == 0 ? "ok" : "BAD", c.warnings);

  /* Plans built by several threads at once in one context. */
  OK(ec_session_run(e, path2, 1, &d));
  int n2 = ec_file_entries(path2);
  CHECK(d.timed >= EC_N && n2 == d.timed && d.warnings == 0, "threads: %d plans timed, file entries %d, %d warnings",
        d.timed, n2, d.warnings);
  printf("%-4s engine cache: %d threads planning at once: %d plans timed, file whole with %d entries\n",
         n2 == d.timed ? "ok" : "BAD", EC_N, d.timed, n2);
done:
  ec_session_free(&a);
  ec_session_free(&b);
  ec_session_free(&c);
  ec_session_free(&d);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("note: could not remove %s\n", dir);
}

static const op_case *op_case_named(const char *name) {
  for (size_t i = 0; i < sizeof op_cases / sizeof op_cases[0]; ++i)
    if (strcmp(op_cases[i].name, name) == 0) return &op_cases[i];
  return NULL;
}

/* Matmuls under exhaustive search: the fastest of the BLAS heuristic's
 * first algorithms, timed (gb_mmcache.c). Whichever wins must agree with
 * ref; a context on the same engine cache file then times nothing and
 * takes the same ranks. */
static const char *const mm_exh_names[] = {"matmul_bias_rows197", "matmul_128x512x256", "matmul_batched",
                                           "gemm_trans_ab_alpha_beta", "matmul_bias_tanh_fused", "gemm_relu_fused"};

static void mm_cache_session(gpu_env *e, const char *path, int *timed, int *replayed, int *tuned, int *ranks,
                             int *nranks, const char *tag) {
  be_options o = {.use_tf32 = 1, .algo_search = BE_ALGO_EXHAUSTIVE};
  snprintf(o.engine_cache_file, sizeof o.engine_cache_file, "%s", path);
  be_alloc alloc = {.ctx = &e->ta, .alloc = ta_alloc, .free = ta_free};
  be_context *ctx = NULL;
  *timed = *replayed = -1;
  log_reset();
  OK(be_context_create(e->cu, 0, &o, &alloc, &ctx));
  for (size_t i = 0; i < sizeof mm_exh_names / sizeof mm_exh_names[0]; ++i) {
    const op_case *oc = op_case_named(mm_exh_names[i]);
    CHECK(oc != NULL, "no op case %s", mm_exh_names[i]);
    if (!oc) continue;
    run_op_case(e, oc, HD_DT_F16, ctx, tag);
  }
done:
  if (ctx) be_context_destroy(e->cu, ctx);
  pthread_mutex_lock(&log_mu);
  const char *c = strstr(log_summary, ": ");
  while (c && sscanf(c, ": %d choices replayed, %d timed", replayed, timed) != 2) c = strstr(c + 1, ": ");
  *tuned = log_mm_tuned;
  *nranks = log_nmm;
  memcpy(ranks, log_mm_ranks, sizeof(int) * (size_t)log_nmm);
  pthread_mutex_unlock(&log_mu);
}

static void test_matmul_tuning(gpu_env *e) {
  for (size_t i = 0; i < sizeof mm_exh_names / sizeof mm_exh_names[0]; ++i) {
    const op_case *oc = op_case_named(mm_exh_names[i]);
    if (!oc) continue;
    run_op_case(e, oc, HD_DT_F32, e->ctx_exh, " [exhaustive]");
    run_op_case(e, oc, HD_DT_F16, e->ctx_exh, " [exhaustive]");
  }
  char dir[] = "/tmp/hipdnn-mmcache-XXXXXX", path[128];
  if (!mkdtemp(dir)) {
    CHECK(0, "mkdtemp: %s", strerror(errno));
    return;
  }
  snprintf(path, sizeof path, "%s/engines.txt", dir);
  int at, ar, atu, an, ara[64], bt, br, btu, bn, bra[64];
  mm_cache_session(e, path, &at, &ar, &atu, ara, &an, " [exhaustive, cold cache]");
  char keys[16][HD_DISKCACHE_MAX_KEY + 1], scope[512];
  pthread_mutex_lock(&log_mu);
  memcpy(keys, log_mm_keys, sizeof keys);
  snprintf(scope, sizeof scope, "%s", log_scope);
  pthread_mutex_unlock(&log_mu);
  mm_cache_session(e, path, &bt, &br, &btu, bra, &bn, " [exhaustive, warm cache]");
  int n = (int)(sizeof mm_exh_names / sizeof mm_exh_names[0]);
  CHECK(at >= n && ar == 0 && atu >= at && an == at, "matmul cache, cold: %d timed (%d candidates), %d replayed, %d "
        "choices logged", at, atu, ar, an);
  CHECK(bt == 0 && btu == 0 && br == at && bn == an && memcmp(ara, bra, sizeof(int) * (size_t)(an > 0 ? an : 0)) == 0,
        "matmul cache, warm: %d timed (%d candidates), %d replayed of %d, the same ranks: %d",
        bt, btu, br, at, bn == an && memcmp(ara, bra, sizeof(int) * (size_t)(an > 0 ? an : 0)) == 0);
  int moved = 0;
  for (int i = 0; i < an; ++i) moved += ara[i] != 0;
  printf("%-4s matmul tuning: cold %d matmuls timed (%d candidates, %d not the heuristic's first); warm %d "
         "replayed, %d timed\n",
         bt == 0 && br == at && at >= n ? "ok" : "BAD", at, atu, moved, br, bt);

  /* Each matmul's entry rewritten to the heuristic's second algorithm (all
   * have 2 or more here): a session replays it, and its results agree with
   * ref (run_op_case), so an algorithm other than the first runs right. */
  hd_diskcache *dc = NULL;
  hd_status *w = NULL;
  hd_status *ost = hd_diskcache_open(path, &dc, &w);
  CHECK(!ost && !w && scope[0] && an >= n && an <= 16, "matmul cache: reopen %s: %s, scope '%s', %d keys", path,
        ost ? hd_status_msg(ost) : w ? hd_status_msg(w) : "ok", scope, an);
  hd_status_free(ost);
  hd_status_free(w);
  int put = 0;
  for (int i = 0; dc && i < an && i < 16; ++i) {
    char full[512 + HD_DISKCACHE_MAX_KEY + 4];
    snprintf(full, sizeof full, "%.511s | %.1024s", scope, keys[i]);
    hd_status *ps = hd_diskcache_put(dc, full, "rank 1");
    put += !ps;
    hd_status_free(ps);
  }
  if (dc) {
    hd_status *ss = hd_diskcache_save(dc);
    CHECK(!ss, "matmul cache: save: %s", ss ? hd_status_msg(ss) : "");
    hd_status_free(ss);
    hd_diskcache_close(dc);
  }
  int ct, cr, ctu, cn, cra[64], ones = 0;
  mm_cache_session(e, path, &ct, &cr, &ctu, cra, &cn, " [cached rank 1]");
  for (int i = 0; i < cn; ++i) ones += cra[i] == 1;
  CHECK(put == an && ct == 0 && cr == at && ones == cn && cn == an && log_cache_warnings == 0,
        "matmul cache, rank 1 forced: %d of %d entries written; %d timed, %d replayed, %d of %d at rank 1, %d warnings",
        put, an, ct, cr, ones, cn, log_cache_warnings);
  printf("%-4s matmul tuning: every matmul replayed at the heuristic's second algorithm (%d of %d), against ref\n",
         ones == cn && cn == an && ct == 0 ? "ok" : "BAD", ones, cn);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("note: could not remove %s\n", dir);
}

/* Attention (ai.onnx 23) at encoder and LLM-prefill shapes, fp16 (the
 * tensor-core kernel) and fp32 (the fused kernel or the GEMM form), graph
 * replay; the rate counts 4 S L D multiply-adds per head (half under a
 * causal mask). Masks: 1 a float [B, 1, S, S], 2 a boolean one keeping
 * every score, 3 and 4 the same over the keys alone ([B, 1, 1, S]: BERT's
 * key padding). only: just the shapes whose name holds it (a profiler's
 * run), else every one. */
static void bench_attention(gpu_env *e, const char *only) {
  static const struct { const char *name; int64_t b, h, kh, s, d; int causal, mask; } as[] = {
      {"BERT-base s128 b1", 1, 12, 12, 128, 64, 0, 0}, {"BERT-base s128 b8", 8, 12, 12, 128, 64, 0, 0},
      {"BERT + mask [1,1,S,S] b1", 1, 12, 12, 128, 64, 0, 1}, {"BERT + mask [8,1,S,S] b8", 8, 12, 12, 128, 64, 0, 1},
      {"BERT + bool kept b1", 1, 12, 12, 128, 64, 0, 2},      {"BERT + bool kept b8", 8, 12, 12, 128, 64, 0, 2},
      {"ViT-B/16 b1", 1, 12, 12, 197, 64, 0, 0},       {"ViT-B/16 b8", 8, 12, 12, 197, 64, 0, 0},
      {"GPT-2 s128 b1", 1, 12, 12, 128, 64, 1, 0},
      {"LLM prefill 1024 b1", 1, 32, 8, 1024, 64, 1, 0}, {"LLM prefill 1024 b8", 8, 32, 8, 1024, 64, 1, 0},
      {"head 128, 2048 b1", 1, 32, 8, 2048, 128, 1, 0},
      {"BERT + key bias b1", 1, 12, 12, 128, 64, 0, 3}, {"BERT + key bias b8", 8, 12, 12, 128, 64, 0, 3},
      {"BERT + key bool b8", 8, 12, 12, 128, 64, 0, 4}};
  printf("\nAttention (graph replay; us per run, TFLOPS)\n%-26s %10s %8s %10s %8s\n", "shape", "fp16 us", "TFLOPS",
         "fp32 us", "TFLOPS");
  for (size_t i = 0; i < sizeof as / sizeof as[0]; ++i) {
    if (only && !strstr(as[i].name, only)) continue;
    double us[2], flops = 4.0 * (double)(as[i].b * as[i].h) * (double)(as[i].s * as[i].s) * (double)as[i].d;
    if (as[i].causal) flops /= 2;
    for (int k = 0; k < 2; ++k) {
      tg t;
      ir_graph *g = NULL;
      tg_begin(&t, k ? HD_DT_F32 : HD_DT_F16);
      attr a[] = {A_INT("is_causal", as[i].causal)};
      const int64_t rows = as[i].mask >= 3 ? 1 : as[i].s; /* the mask's rows */
      int in[4] = {tg_input(&t, 4, D(as[i].b, as[i].h, as[i].s, as[i].d)),
                   tg_const(&t, 4, D(as[i].b, as[i].kh, as[i].s, as[i].d), -1.f, 1.f),
                   tg_const(&t, 4, D(as[i].b, as[i].kh, as[i].s, as[i].d), -1.f, 1.f),
                   as[i].mask == 1 || as[i].mask == 3 ? tg_const(&t, 4, D(as[i].b, 1, rows, as[i].s), -1.f, 1.f) : -1};
      if (as[i].mask == 2 || as[i].mask == 4) { /* a boolean mask keeping every score: a padding mask over full sequences */
        in[3] = tg_value(&t, HD_DT_BOOL, 4, D(as[i].b, 1, rows, as[i].s));
        size_t n = (size_t)(as[i].b * rows * as[i].s);
        uint8_t *ones = malloc(n);
        if (ones) memset(ones, 1, n);
        if (!t.st) t.st = ones ? ir_value_set_data(t.g, in[3], ones, n) : hd_error(HD_ERR_OUT_OF_MEMORY, "bench");
        free(ones);
      }
      tg_output(&t, tg_node(&t, "Attention", 23, in, as[i].mask ? 4 : 3, a, NA(a)));
      hd_status *st = tg_end(&t, 0, &g);
      us[k] = -1;
      if (st) {
        CHECK(0, "bench_attention: build: %s", hd_status_msg(st));
        hd_status_free(st);
        continue;
      }
      /* HIPDNN_EP_TEST_EXHAUSTIVE=1: fp16 under exhaustive engine search
       * (its candidates' times in the -v log), not replayed */
      const char *ex = getenv("HIPDNN_EP_TEST_EXHAUSTIVE");
      us[k] = time_graph(e, !k && ex && strcmp(ex, "1") == 0 ? e->ctx_exh : e->ctx_cap, g);
      ir_graph_free(g);
    }
    printf("%-26s %10.1f %8.1f %10.1f %8.1f\n", as[i].name, us[0], flops / us[0] / 1e6, us[1], flops / us[1] / 1e6);
  }
}

int main(int argc, char **argv) {
  const char *filter = NULL;
  int do_bench = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "-v") == 0) verbose = 1;
    else if (strcmp(argv[i], "--bench") == 0) do_bench = 1;
    else if (strcmp(argv[i], "--bench-nbits") == 0) do_bench = 2;
    else if (strcmp(argv[i], "--bench-attention") == 0) do_bench = 3;
    else filter = argv[i];
  }
  hd_log_set_sink(log_sink, NULL); /* the passes' lines (plan_layout's), as the module's */
  gpu_env e;
  memset(&e, 0, sizeof e);
  hd_status *st = open_cuda(&e.cu);
  if (st) {
    hd_code c = hd_status_code(st);
    printf("cuda module open: [%d] %s\n", (int)c, hd_status_msg(st));
    int clean = c == HD_ERR_NOT_FOUND;
    hd_status_free(st);
    if (!clean) {
      printf("FAIL: open must fail with NOT_FOUND when the GPU or cuDNN is missing\n");
      return 1;
    }
    printf("SKIP: no GPU / cuDNN for the cuda backend (open returned NOT_FOUND cleanly)\n");
    return 77;
  }
  printf("cuda module: %d device(s)\n", be_device_count(e.cu));

  /* A missing libcudnn: NOT_FOUND naming the path. */
  {
    be_module *m2 = NULL;
    setenv("HIPDNN_EP_CUDNN_LIBRARY", "/nonexistent/libcudnn.so.9", 1);
    hd_status *s2 = open_cuda(&m2);
    unsetenv("HIPDNN_EP_CUDNN_LIBRARY");
    CHECK(s2 && hd_status_code(s2) == HD_ERR_NOT_FOUND &&
              strstr(hd_status_msg(s2), "/nonexistent/libcudnn.so.9"),
          "missing libcudnn: %s", s2 ? hd_status_msg(s2) : "opened");
    if (s2) printf("ok   missing libcudnn: %s\n", hd_status_msg(s2));
    hd_status_free(s2);
    if (m2) be_module_close(m2);
  }

  OK(ref_backend_open(NULL, &e.ref));
  e.ta.m = e.cu;
  pthread_mutex_init(&e.ta.mu, NULL);
  be_alloc alloc = {.ctx = &e.ta, .alloc = ta_alloc, .free = ta_free};
  be_alloc halloc = {.ctx = NULL, .alloc = host_alloc, .free = host_free};
  be_options opts = {.use_tf32 = 1, .algo_search = BE_ALGO_HEURISTIC};
  be_options strict = opts, exh = opts;
  strict.use_tf32 = 0;
  exh.algo_search = BE_ALGO_EXHAUSTIVE;
  OK(be_context_create(e.cu, 0, &opts, &alloc, &e.ctx));
  OK(be_context_create(e.cu, 0, &strict, &alloc, &e.ctx_strict));
  OK(be_context_create(e.cu, 0, &exh, &alloc, &e.ctx_exh));
  be_options cap = opts;
  cap.graph_capture = 1;
  OK(be_context_create(e.cu, 0, &cap, &alloc, &e.ctx_cap));
  OK(be_context_create(e.ref, 0, &opts, &halloc, &e.rctx));
  OK(be_stream_create(e.cu, 0, &e.stream));

  if (do_bench == 2) {
    bench_nbits(&e, filter && strcmp(filter, "chain") == 0);
    goto done;
  }
  if (do_bench == 3) {
    bench_attention(&e, filter);
    goto done;
  }
  if (do_bench) {
    bench(&e);
    bench_chain(&e);
    goto done;
  }
  if (!filter) test_device(&e);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    if (!filter || strstr(cases[i].name, filter)) run_case(&e, &cases[i], 0);
  /* Exhaustive engine choice on a few cases (fused, epilogue, fp16). */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    if (!filter && (strcmp(cases[i].name, "2d_bias_relu") == 0 ||
                    strcmp(cases[i].name, "2d_bias_res_relu") == 0 ||
                    strcmp(cases[i].name, "3d") == 0 ||
                    strcmp(cases[i].name, "f16_2d_bias_relu") == 0))
      run_case(&e, &cases[i], 1);
  /* op families, fp32 and fp16; fp32 also without TF32 and with capture */
  for (size_t i = 0; i < sizeof op_cases / sizeof op_cases[0]; ++i) {
    if (filter && !strstr(op_cases[i].name, filter)) continue;
    run_op_case(&e, &op_cases[i], HD_DT_F32, e.ctx, "");
    run_op_case(&e, &op_cases[i], HD_DT_F16, e.ctx, "");
    run_op_case(&e, &op_cases[i], HD_DT_F32, e.ctx_cap, " [graph]");
  }
  for (size_t i = 0; i < sizeof block_cases / sizeof block_cases[0]; ++i)
    if (!filter || strstr(block_cases[i].name, filter))
      run_op_case_in(&e, &block_cases[i], RUN_F32 | RUN_F16 | RUN_F32_STRICT | RUN_F16_GRAPH);
  test_attention(&e, filter);
  test_squeeze_excite(&e, filter);
  test_channels_last(&e, filter);
  test_precision_boundary(&e, filter);
  {
    static const op_case gelu_cases[] = {{"matmul_bias_gelu_vec8", b_mm_bias_gelu_96, 1, 5e-3, 5e-3},
                                         {"matmul_bias_gelu_n36", b_mm_bias_gelu_36, 1, 5e-3, 5e-3},
                                         {"matmul_bias_gelu_mlp", b_mm_bias_gelu_mlp, 1, 5e-3, 5e-3},
                                         {"matmul_gemm_transb_gelu", b_gemm_transb_gelu, 1, 5e-3, 5e-3},
                                         {"matmul_gelu_nobias", b_mm_gelu_nobias, 1, 5e-3, 5e-3}};
    for (size_t i = 0; i < sizeof gelu_cases / sizeof gelu_cases[0]; ++i)
      if (!filter || strstr(gelu_cases[i].name, filter))
        run_op_case_in(&e, &gelu_cases[i], RUN_F32 | RUN_F16 | RUN_F16_GRAPH | RUN_BF16);
  }
  if (!filter || strstr("nbits_paths", filter)) test_nbits_paths(&e);
  if (!filter || strstr("nbits_norm", filter)) test_nbits_norm(&e);
  if (!filter || strstr("resnetish_chain", filter)) {
    test_capture(&e, HD_DT_F32);
    test_capture(&e, HD_DT_F16);
    test_capture_large_io(&e);
    test_capture_mixed_io(&e);
  }
  if (!filter || strstr("misaligned", filter)) {
    test_misaligned(&e, e.ctx, " (eager)");
    test_misaligned(&e, e.ctx_cap, " (graph capture)");
  }
  if (!filter || strstr("concurrent", filter)) {
    test_concurrent(&e, e.ctx, " (eager)");
    test_concurrent(&e, e.ctx_cap, " (graph capture)");
    test_concurrent_cases(&e, e.ctx, " (fp16, eager)");
    test_concurrent_cases(&e, e.ctx_cap, " (fp16, graph capture)");
  }
  if (!filter || strstr("engine_cache", filter)) test_engine_cache(&e);
  if (!filter || strstr("matmul_tuning", filter)) test_matmul_tuning(&e);
  if (!filter) {
    test_registry(&e);
    test_refusals(&e);
    test_oom(&e);
  }
  CHECK(e.ta.live == 0, "%d device allocations of the contexts still live", e.ta.live);

done:
  if (e.stream) be_stream_destroy(e.cu, 0, e.stream);
  if (e.ctx) be_context_destroy(e.cu, e.ctx);
  if (e.ctx_strict) be_context_destroy(e.cu, e.ctx_strict);
  if (e.ctx_exh) be_context_destroy(e.cu, e.ctx_exh);
  if (e.ctx_cap) be_context_destroy(e.cu, e.ctx_cap);
  if (e.rctx) be_context_destroy(e.ref, e.rctx);
  if (e.ref) be_module_close(e.ref);
  if (e.cu) be_module_close(e.cu);
  printf("%d checks, %d failures\n", ut_checks, ut_failures);
  return ut_failures ? 1 : 0;
}
