/* Unit tests of ir/ir_fuse.c: for each pass, a graph with the pattern; the
 * pass's effect checked on the IR; and the fused graph's numbers checked
 * against the same graph unfused, both on the reference backend. (The ORT
 * level op tests check fused partitions against the CPU EP.) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "ir/ir.h"
#include "ops/ops.h"
#include "plan/plan.h"
#include "tests/attr_table.h"
#include "tests/unit_test.h"

/* ---- graph building ---- */

static int value(ir_graph *g, const char *name, int rank, const int64_t *dims) {
  int v = IR_NONE;
  UT_OK(ir_graph_add_value(g, name, HD_DT_F32, rank, dims, &v));
  return v;
}

static int const_value(ir_graph *g, const char *name, int rank, const int64_t *dims, float base) {
  int v = value(g, name, rank, dims);
  int64_t n = ir_numel(rank, dims);
  float *d = malloc(sizeof(float) * (size_t)n);
  for (int64_t k = 0; k < n; k++) d[k] = base + 0.1f * (float)((k * 7) % 11) - 0.4f;
  UT_OK(ir_value_set_data(g, v, d, sizeof(float) * (size_t)n));
  free(d);
  return v;
}

/* An int64 value (a shape or an index) a node computes. */
static int i64_value(ir_graph *g, const char *name, int rank, const int64_t *dims) {
  int v = IR_NONE;
  UT_OK(ir_graph_add_value(g, name, HD_DT_I64, rank, dims, &v));
  return v;
}

/* An int64 constant of n values (a shape, axes, an index; rank 0 when
 * n is 0: one value). */
static int i64_const(ir_graph *g, const char *name, int n, const int64_t *v) {
  int64_t d[1] = {n};
  int c = IR_NONE;
  UT_OK(ir_graph_add_value(g, name, HD_DT_I64, n ? 1 : 0, d, &c));
  UT_OK(ir_value_set_data(g, c, v, sizeof(int64_t) * (size_t)(n ? n : 1)));
  return c;
}

/* Adds a node of domain (NULL: ONNX), parsed by its op as ep/ would. */
static void node_in(ir_graph *g, const char *domain, const char *type, int opset, const int *in, int nin, int out,
                    const attr *attrs, int nattrs) {
  const op_def *def = op_find(domain, type, opset);
  UT_CHECK(def != NULL);
  if (!def) return;
  int idx;
  int outs[1] = {out};
  UT_OK(ir_graph_add_node(g, def->kind, type, type, opset, in, nin, outs, 1, &idx));
  attr_table t = {attrs, nattrs};
  op_attrs a = attr_table_reader(&t);
  UT_OK(def->parse(g, &g->nodes[idx], &a));
}

static void node(ir_graph *g, const char *type, int opset, const int *in, int nin, int out, const attr *attrs,
                 int nattrs) {
  node_in(g, NULL, type, opset, in, nin, out, attrs, nattrs);
}

static int live_nodes(const ir_graph *g) {
  int n = 0;
  for (int i = 0; i < g->nnodes; i++) n += !g->nodes[i].dead;
  return n;
}

/* Runs g on ref at the given input shape; returns the output (malloc'ed). */
static float *run_ref(const ir_graph *g, const ir_shape *in, const float *x, size_t *nout) {
  be_module *m = NULL;
  be_host host = {0};
  UT_OK(be_module_open("ref", &host, &m));
  be_options opts = {0};
  be_context *ctx = NULL;
  be_graph *bg = NULL;
  be_plan *bp = NULL;
  ir_plan *p = NULL;
  float *y = NULL;
  UT_OK(be_context_create(m, 0, &opts, &(be_alloc){0}, &ctx));
  UT_OK(be_graph_compile(m, ctx, g, &bg));
  /* shape arithmetic is computed on the host when the plan is built, as ep/ does */
  uint8_t *fold = calloc((size_t)g->nnodes + 1, 1);
  op_fold_closure(g, NULL, fold);
  const plan_eval eval = {NULL, ref_step_run, fold};
  UT_OK(plan_create(g, in, &eval, &p));
  free(fold);
  if (bg && p) {
    UT_OK(be_plan_compile(m, bg, p, &bp));
    /* every output gets a buffer; output 0 is returned */
    void *outs[4] = {0};
    for (int k = 0; k < g->noutputs && k < 4; k++) {
      const ir_tensor *t = &p->t[g->outputs[k]];
      outs[k] = calloc((size_t)ir_numel(t->rank, t->dims), sizeof(float));
    }
    *nout = (size_t)ir_numel(p->t[g->outputs[0]].rank, p->t[g->outputs[0]].dims);
    y = outs[0];
    void *ins[1] = {(void *)x};
    if (bp) UT_OK(be_plan_run(m, bp, ins, outs, NULL));
    for (int k = 1; k < 4; k++) free(outs[k]);
  }
  be_plan_free(m, bp);
  plan_free(p);
  be_graph_free(m, bg);
  be_context_destroy(m, ctx);
  be_module_close(m);
  return y;
}

/* Builds the pattern twice, fuses one, and compares both on ref. */
typedef void (*build_fn)(ir_graph *g);

static void check_pass(const char *name, build_fn build, int want_live, const ir_shape *in,
                       void (*check_ir)(const ir_graph *g)) {
  ir_graph *plain, *fused;
  UT_OK(ir_graph_create(&plain));
  UT_OK(ir_graph_create(&fused));
  build(plain);
  build(fused);
  UT_OK(ir_graph_finalize(plain));
  UT_OK(ir_graph_finalize(fused));
  int nfused = 0;
  UT_OK(plan_fuse(fused, &nfused));
  UT_CHECK(live_nodes(fused) == want_live);
  if (live_nodes(fused) != want_live)
    fprintf(stderr, "%s: %d live nodes after fusion, expected %d\n", name, live_nodes(fused), want_live);
  check_ir(fused);
  size_t n = (size_t)ir_numel(in->rank, in->dims);
  float *x = malloc(sizeof(float) * n);
  for (size_t k = 0; k < n; k++) x[k] = sinf((float)k * 0.37f);
  size_t na = 0, nb = 0;
  float *a = run_ref(plain, in, x, &na), *b = run_ref(fused, in, x, &nb);
  UT_CHECK(a && b && na == nb);
  double worst = 0;
  int nonfinite = 0;
  for (size_t k = 0; a && b && k < na && na == nb; k++) worst = fmax(worst, ut_diff(b[k], a[k], &nonfinite));
  UT_CHECK(!nonfinite);
  UT_CHECK(worst < 1e-4);
  if (worst >= 1e-4) fprintf(stderr, "%s: fused differs from unfused by %g\n", name, worst);
  free(a);
  free(b);
  free(x);
  ir_graph_free(plain);
  ir_graph_free(fused);
}

static const attr conv_attrs[] = {{.name = "pads", .n = 4, .i = {1, 1, 1, 1}}};

/* x -> Conv -> BatchNormalization -> Relu -> y */
static void build_conv_bn_relu(ir_graph *g) {
  int64_t xd[4] = {IR_DIM_DYNAMIC, 3, 6, 6}, wd[4] = {4, 3, 3, 3}, cd[1] = {4};
  int x = value(g, "x", 4, xd), w = const_value(g, "w", 4, wd, 0.0f);
  int c = value(g, "c", -1, NULL), b = value(g, "b", -1, NULL), y = value(g, "y", -1, NULL);
  int in0[2] = {x, w};
  node(g, "Conv", 11, in0, 2, c, conv_attrs, 1);
  int in1[5] = {c, const_value(g, "scale", 1, cd, 1.0f), const_value(g, "bias", 1, cd, 0.2f),
                const_value(g, "mean", 1, cd, 0.1f), const_value(g, "var", 1, cd, 1.5f)};
  attr eps[] = {{.name = "epsilon", .n = -2, .f = 1e-3f}};
  node(g, "BatchNormalization", 15, in1, 5, b, eps, 1);
  int in2[1] = {b};
  node(g, "Relu", 14, in2, 1, y, NULL, 0);
  int ins[1] = {x}, outs[1] = {y};
  UT_OK(ir_graph_set_io(g, ins, 1, outs, 1));
}

static void ir_conv_bn_relu(const ir_graph *g) {
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    UT_CHECK(n->kind == OP_CONV && OP_P(n)->conv.has_bias && OP_P(n)->conv.act.kind == OP_ACT_RELU);
    UT_CHECK(n->out[0] == ir_graph_find_value(g, "y"));
  }
}

/* x -> Conv -> Add(x) -> Relu -> y : residual, then activation */
static void build_conv_residual(ir_graph *g) {
  int64_t xd[4] = {IR_DIM_DYNAMIC, 3, 5, 5}, wd[4] = {3, 3, 3, 3};
  int x = value(g, "x", 4, xd), w = const_value(g, "w", 4, wd, 0.0f);
  int64_t cd[4] = {IR_DIM_DYNAMIC, 3, 5, 5};
  int c = value(g, "c", 4, cd), s = value(g, "s", 4, cd), y = value(g, "y", 4, cd);
  /* one named batch symbol throughout: the residual provably matches */
  int vs[4] = {x, c, s, y};
  for (int i = 0; i < 4; i++) g->values[vs[i]].sym[0] = ir_sym_hash("N");
  int in0[2] = {x, w};
  node(g, "Conv", 11, in0, 2, c, conv_attrs, 1);
  int in1[2] = {c, x};
  node(g, "Add", 14, in1, 2, s, NULL, 0);
  int in2[1] = {s};
  node(g, "Relu", 14, in2, 1, y, NULL, 0);
  int ins[1] = {x}, outs[1] = {y};
  UT_OK(ir_graph_set_io(g, ins, 1, outs, 1));
}

static void ir_conv_residual(const ir_graph *g) {
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    UT_CHECK(n->kind == OP_CONV && OP_P(n)->conv.has_residual && n->nin == 4 &&
             n->in[3] == ir_graph_find_value(g, "x") && OP_P(n)->conv.act.kind == OP_ACT_RELU);
  }
}

/* x[N,8] -> MatMul(w[8,5]) -> Add(b[5]) -> Sigmoid -> y */
static void build_matmul_bias(ir_graph *g) {
  int64_t xd[2] = {IR_DIM_DYNAMIC, 8}, wd[2] = {8, 5}, bd[1] = {5}, yd[2] = {IR_DIM_DYNAMIC, 5};
  int x = value(g, "x", 2, xd), w = const_value(g, "w", 2, wd, 0.0f), b = const_value(g, "b", 1, bd, 0.3f);
  int m = value(g, "m", 2, yd), s = value(g, "s", 2, yd), y = value(g, "y", 2, yd);
  int in0[2] = {x, w};
  node(g, "MatMul", 13, in0, 2, m, NULL, 0);
  int in1[2] = {m, b};
  node(g, "Add", 14, in1, 2, s, NULL, 0);
  int in2[1] = {s};
  node(g, "Sigmoid", 13, in2, 1, y, NULL, 0);
  int ins[1] = {x}, outs[1] = {y};
  UT_OK(ir_graph_set_io(g, ins, 1, outs, 1));
}

/* x -> MatMul -> com.microsoft FastGelu(, bias) -> y: one MatMul with C and GELU */
static void build_matmul_fast_gelu(ir_graph *g) {
  int64_t xd[2] = {IR_DIM_DYNAMIC, 8}, wd[2] = {8, 5}, bd[1] = {5}, yd[2] = {IR_DIM_DYNAMIC, 5};
  int x = value(g, "x", 2, xd), w = const_value(g, "w", 2, wd, 0.0f), b = const_value(g, "b", 1, bd, 0.3f);
  int m = value(g, "m", 2, yd), y = value(g, "y", 2, yd);
  int in0[2] = {x, w}, in1[2] = {m, b};
  node(g, "MatMul", 13, in0, 2, m, NULL, 0);
  node_in(g, "com.microsoft", "FastGelu", 1, in1, 2, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

static void ir_matmul_fast_gelu(const ir_graph *g) {
  int mm = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead || n->kind != OP_MATMUL) continue;
    mm++;
    UT_CHECK(OP_P(n)->gemm.has_c && OP_P(n)->gemm.act.kind == OP_ACT_GELU_TANH);
  }
  UT_CHECK(mm == 1);
}

static void ir_matmul_bias(const ir_graph *g) {
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    UT_CHECK(strcmp(n->op_type, "MatMul") == 0 && OP_P(n)->gemm.has_c && n->nin == 3 &&
             OP_P(n)->gemm.act.kind == OP_ACT_SIGMOID);
  }
}

/* x[N,6] -> MatMul(w) -> Add(b) -> GELU written out -> y, in the two
 * associations exporters emit: (x * (1 + erf(x / sqrt2))) * 0.5 (torch's
 * nn.GELU) and (x * 0.5) * (1 + erf(x * (1 / sqrt2))) (HF BERT). */
static void build_gelu(ir_graph *g, int hf) {
  int64_t xd[2] = {IR_DIM_DYNAMIC, 6}, wd[2] = {6, 8}, bd[1] = {8}, yd[2] = {IR_DIM_DYNAMIC, 8}, one[1] = {1};
  int x = value(g, "x", 2, xd), w = const_value(g, "w", 2, wd, 0.0f), b = const_value(g, "b", 1, bd, 0.3f);
  int m = value(g, "m", 2, yd), h = value(g, "h", 2, yd), d = value(g, "d", 2, yd), e = value(g, "e", 2, yd);
  int a = value(g, "a", 2, yd), p = value(g, "p", 2, yd), y = value(g, "y", 2, yd);
  float sqrt2 = 1.41421356f, inv = 0.70710678f, half = 0.5f, onef = 1.0f;
  int c_scale = value(g, "c_scale", 1, one), c_half = value(g, "c_half", 1, one), c_one = value(g, "c_one", 1, one);
  UT_OK(ir_value_set_data(g, c_scale, hf ? &inv : &sqrt2, 4));
  UT_OK(ir_value_set_data(g, c_half, &half, 4));
  UT_OK(ir_value_set_data(g, c_one, &onef, 4));
  int in0[2] = {x, w}, in1[2] = {m, b}, in2[2] = {h, c_scale}, in4[2] = {c_one, e};
  node(g, "MatMul", 13, in0, 2, m, NULL, 0);
  node(g, "Add", 14, in1, 2, h, NULL, 0);
  node(g, hf ? "Mul" : "Div", 14, in2, 2, d, NULL, 0);
  node(g, "Erf", 13, &d, 1, e, NULL, 0);
  node(g, "Add", 14, in4, 2, a, NULL, 0);
  if (hf) {
    int in5[2] = {c_half, h}, in6[2] = {p, a};
    node(g, "Mul", 14, in5, 2, p, NULL, 0);
    node(g, "Mul", 14, in6, 2, y, NULL, 0);
  } else {
    int in5[2] = {h, a}, in6[2] = {p, c_half};
    node(g, "Mul", 14, in5, 2, p, NULL, 0);
    node(g, "Mul", 14, in6, 2, y, NULL, 0);
  }
  int ins[1] = {x}, outs[1] = {y};
  UT_OK(ir_graph_set_io(g, ins, 1, outs, 1));
}
static void build_gelu_torch(ir_graph *g) { build_gelu(g, 0); }
static void build_gelu_hf(ir_graph *g) { build_gelu(g, 1); }

static void ir_matmul_gelu(const ir_graph *g) {
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    UT_CHECK(n->kind == OP_MATMUL && OP_P(n)->gemm.has_c && OP_P(n)->gemm.act.kind == OP_ACT_GELU &&
             n->out[0] == ir_graph_find_value(g, "y"));
  }
}

/* A SwiGLU MLP as LLM exporters write it: g = MatMul(x, wg), u = MatMul(x,
 * wu), h = Mul(Mul(g, Sigmoid(g)), u) (form 0; form 1 with the operands the
 * other way round; form 2 as ONNX Runtime's optimiser leaves it, with
 * QuickGelu(g) for the SiLU), y = MatMul(h, wd): the SiLU and the gate's
 * Mul become one Mul applying x * sigmoid(x) to its input 0. */
static int swiglu_form;
static void build_swiglu(ir_graph *g) {
  int64_t xd[2] = {IR_DIM_DYNAMIC, 6}, wd[2] = {6, 8}, dd[2] = {8, 6}, hd[2] = {IR_DIM_DYNAMIC, 8};
  int64_t yd[2] = {IR_DIM_DYNAMIC, 6};
  int x = value(g, "x", 2, xd), wg = const_value(g, "wg", 2, wd, 0.0f), wu = const_value(g, "wu", 2, wd, 0.2f);
  int wdn = const_value(g, "wd", 2, dd, -0.1f);
  int gv = value(g, "g", 2, hd), sg = value(g, "s", 2, hd), a = value(g, "a", 2, hd), u = value(g, "u", 2, hd);
  int h = value(g, "h", 2, hd), y = value(g, "y", 2, yd);
  int in_g[2] = {x, wg}, in_u[2] = {x, wu}, in_d[2] = {h, wdn};
  node(g, "MatMul", 13, in_g, 2, gv, NULL, 0);
  if (swiglu_form == 2) {
    attr alpha[] = {{.name = "alpha", .n = -2, .f = 1.0f}};
    node_in(g, "com.microsoft", "QuickGelu", 1, &gv, 1, a, alpha, 1);
  } else {
    int in_a[2] = {swiglu_form ? sg : gv, swiglu_form ? gv : sg};
    node(g, "Sigmoid", 13, &gv, 1, sg, NULL, 0);
    node(g, "Mul", 14, in_a, 2, a, NULL, 0);
  }
  node(g, "MatMul", 13, in_u, 2, u, NULL, 0);
  int in_h[2] = {swiglu_form ? u : a, swiglu_form ? a : u};
  node(g, "Mul", 14, in_h, 2, h, NULL, 0);
  node(g, "MatMul", 13, in_d, 2, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

static void ir_swiglu(const ir_graph *g) {
  int muls = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead || n->kind != OP_MUL) continue;
    muls++;
    UT_CHECK(OP_P(n)->binary.in_act.kind == OP_ACT_QUICK_GELU && OP_P(n)->binary.in_act.alpha == 1.0f &&
             n->in[0] == ir_graph_find_value(g, "g") && n->in[1] == ir_graph_find_value(g, "u"));
  }
  UT_CHECK(muls == 1);
}

/* DenseNet's pre-activation: x -> BatchNormalization -> Relu -> y (no
 * convolution before it to fold into): one BatchNormalization applying the
 * ReLU. */
static void build_bn_relu(ir_graph *g) {
  int64_t xd[4] = {IR_DIM_DYNAMIC, 4, 3, 5}, cd[1] = {4};
  int x = value(g, "x", 4, xd), b = value(g, "b", -1, NULL), y = value(g, "y", -1, NULL);
  int in_bn[5] = {x, const_value(g, "scale", 1, cd, 1.1f), const_value(g, "bias", 1, cd, -0.2f),
                  const_value(g, "mean", 1, cd, 0.1f), const_value(g, "var", 1, cd, 1.5f)};
  node(g, "BatchNormalization", 15, in_bn, 5, b, NULL, 0);
  node(g, "Relu", 14, &b, 1, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

static void ir_bn_relu(const ir_graph *g) {
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    UT_CHECK(n->kind == OP_BATCHNORM && OP_P(n)->batchnorm.act.kind == OP_ACT_RELU &&
             n->out[0] == ir_graph_find_value(g, "y"));
  }
}

/* A CNN's SiLU: c = Conv(x, w, b) (after a BatchNormalization in form 3),
 * y = Mul(c, Sigmoid(c)) (form 0; form 1 the other way round; form 3 as 0).
 * It becomes the convolution's activation (x * sigmoid(x), QuickGelu alpha
 * 1), one node. Form 2: c is also read by a third node (an Add), so the
 * convolution keeps no activation and the Sigmoid goes into the Mul. */
static int conv_silu_form;
static void build_conv_silu(ir_graph *g) {
  int64_t xd[4] = {IR_DIM_DYNAMIC, 3, 6, 6}, wd[4] = {4, 3, 3, 3}, cd[1] = {4};
  int x = value(g, "x", 4, xd), w = const_value(g, "w", 4, wd, -0.1f), b = const_value(g, "b", 1, cd, 0.3f);
  int c = value(g, "c", -1, NULL), sg = value(g, "s", -1, NULL), m = value(g, "m", -1, NULL);
  int y = value(g, "y", -1, NULL);
  int in_c[3] = {x, w, b};
  if (conv_silu_form == 3) {
    int pre = value(g, "pre", -1, NULL);
    node(g, "Conv", 11, in_c, 3, pre, conv_attrs, 1);
    int in_bn[5] = {pre, const_value(g, "scale", 1, cd, 1.1f), const_value(g, "bias", 1, cd, -0.2f),
                    const_value(g, "mean", 1, cd, 0.1f), const_value(g, "var", 1, cd, 1.5f)};
    node(g, "BatchNormalization", 15, in_bn, 5, c, NULL, 0);
  } else {
    node(g, "Conv", 11, in_c, 3, c, conv_attrs, 1);
  }
  node(g, "Sigmoid", 13, &c, 1, sg, NULL, 0);
  int in_m[2] = {conv_silu_form == 1 ? sg : c, conv_silu_form == 1 ? c : sg};
  node(g, "Mul", 14, in_m, 2, conv_silu_form == 2 ? m : y, NULL, 0);
  if (conv_silu_form == 2) {
    int in_a[2] = {m, c};
    node(g, "Add", 14, in_a, 2, y, NULL, 0);
  }
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

static void ir_conv_silu(const ir_graph *g) {
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead || n->kind != OP_CONV) continue;
    const op_act *a = &OP_P(n)->conv.act;
    if (conv_silu_form == 2) {
      UT_CHECK(a->kind == OP_ACT_NONE);
    } else {
      UT_CHECK(a->kind == OP_ACT_QUICK_GELU && a->alpha == 1.0f && n->out[0] == ir_graph_find_value(g, "y"));
    }
  }
}

/* The same MLP over 4-bit weights as GenAI writes it: g = MatMulNBits(x,
 * Bg), u = MatMulNBits(x, Bu) (K 40: three blocks of 16, the last part
 * padding), h = Mul(Mul(g, Sigmoid(g)), u): one MatMulNBits over the two
 * weights interleaved, glu = x * sigmoid(x). nbits_form 0: zero points and
 * biases; 1: neither, and the up projection asks for fp32 (accuracy_level
 * 1); 2: the two block sizes differ (not fused: the gate's Mul only takes
 * the SiLU). */
static int nbits_form;
static int const_u8(ir_graph *g, const char *name, int rank, const int64_t *dims, int seed) {
  int v = IR_NONE;
  UT_OK(ir_graph_add_value(g, name, HD_DT_U8, rank, dims, &v));
  int64_t n = ir_numel(rank, dims);
  uint8_t *d = malloc((size_t)n);
  for (int64_t k = 0; k < n; k++) d[k] = (uint8_t)((k * 37 + seed * 11 + (k >> 3)) * 29 % 251);
  UT_OK(ir_value_set_data(g, v, d, (size_t)n));
  free(d);
  return v;
}
static void build_nbits_glu(ir_graph *g) {
  const int64_t K = 40, N = 5;
  int64_t xd[2] = {IR_DIM_DYNAMIC, K}, hd[2] = {IR_DIM_DYNAMIC, N};
  int x = value(g, "x", 2, xd);
  int gv = value(g, "g", 2, hd), sg = value(g, "s", 2, hd), a = value(g, "a", 2, hd), u = value(g, "u", 2, hd);
  int h = value(g, "h", 2, hd);
  int outs[2] = {gv, u};
  for (int k = 0; k < 2; k++) {
    int64_t bs = nbits_form == 2 && k == 1 ? 32 : 16, kb = (K + bs - 1) / bs;
    int64_t bd[3] = {N, kb, bs / 2}, sd[1] = {N * kb}, zd[1] = {N * ((kb + 1) / 2)}, cd[1] = {N};
    char nm[4][8];
    for (int i = 0; i < 4; i++) snprintf(nm[i], sizeof nm[i], "%c%c", "bszc"[i], "gu"[k]);
    int in[6] = {x, const_u8(g, nm[0], 3, bd, k), const_value(g, nm[1], 1, sd, 0.05f * (float)(k + 1)),
                 nbits_form == 0 ? const_u8(g, nm[2], 1, zd, 5 + k) : IR_NONE, IR_NONE,
                 nbits_form == 0 ? const_value(g, nm[3], 1, cd, 0.3f - 0.5f * (float)k) : IR_NONE};
    /* form 1: the up projection asks for fp32 (accuracy_level 1), which the fused node keeps */
    attr at[] = {{.name = "K", .n = -1, .i = {K}},          {.name = "N", .n = -1, .i = {N}},
                 {.name = "bits", .n = -1, .i = {4}},       {.name = "block_size", .n = -1, .i = {bs}},
                 {.name = "accuracy_level", .n = -1, .i = {nbits_form == 1 && k == 1 ? 1 : 0}}};
    node_in(g, "com.microsoft", "MatMulNBits", 1, in, nbits_form == 0 ? 6 : 3, outs[k], at, 5);
  }
  int in_a[2] = {gv, sg};
  node(g, "Sigmoid", 13, &gv, 1, sg, NULL, 0);
  node(g, "Mul", 14, in_a, 2, a, NULL, 0);
  int in_h[2] = {u, a};
  node(g, "Mul", 14, in_h, 2, h, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &h, 1));
}

static void ir_nbits_glu(const ir_graph *g) {
  int nb = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead || n->kind != OP_MATMUL_NBITS) continue;
    nb++;
    const op_nbits *p = &OP_P(n)->nbits;
    if (nbits_form == 2) {
      UT_CHECK(p->glu.kind == OP_ACT_NONE);
      continue;
    }
    UT_CHECK(p->glu.kind == OP_ACT_QUICK_GELU && p->glu.alpha == 1.0f && p->n == 10 &&
             n->out[0] == ir_graph_find_value(g, "h") && (p->in_zp >= 0) == (nbits_form == 0) &&
             p->exact == (nbits_form == 1));
    /* the gate's and the up projection's rows, interleaved */
    const ir_value *b = &g->values[n->in[1]], *bg = &g->values[ir_graph_find_value(g, "bg")];
    UT_CHECK(b->dims[0] == 10 && b->data && !bg->data);
  }
  UT_CHECK(nb == (nbits_form == 2 ? 2 : 1));
}

/* x[N,3,8] -> MatMul(w[8,8]) -> Add(b[8]) (rank 3) -> r; s = Add(x, r) ->
 * LayerNormalization -> l; y = Add(l, s): the bias joins the MatMul, the
 * residual the norm (which also writes s, read again after it). */
static void build_add_norm(ir_graph *g) {
  int64_t xd[3] = {IR_DIM_DYNAMIC, 3, 8}, wd[2] = {8, 8}, bd[1] = {8};
  int x = value(g, "x", 3, xd), w = const_value(g, "w", 2, wd, 0.0f), b = const_value(g, "b", 1, bd, 0.3f);
  int m = value(g, "m", 3, xd), r = value(g, "r", 3, xd), s = value(g, "s", 3, xd), l = value(g, "l", 3, xd);
  int y = value(g, "y", 3, xd);
  int vs[6] = {x, m, r, s, l, y};
  for (int i = 0; i < 6; i++) g->values[vs[i]].sym[0] = ir_sym_hash("N");
  int in0[2] = {x, w}, in1[2] = {m, b}, in2[2] = {x, r};
  node(g, "MatMul", 13, in0, 2, m, NULL, 0);
  node(g, "Add", 14, in1, 2, r, NULL, 0);
  node(g, "Add", 14, in2, 2, s, NULL, 0);
  int in3[3] = {s, const_value(g, "scale", 1, bd, 1.0f), const_value(g, "beta", 1, bd, 0.1f)};
  node(g, "LayerNormalization", 17, in3, 3, l, NULL, 0);
  int in4[2] = {l, s};
  node(g, "Add", 14, in4, 2, y, NULL, 0);
  int ins[1] = {x}, outs[1] = {y};
  UT_OK(ir_graph_set_io(g, ins, 1, outs, 1));
}

static void ir_add_norm(const ir_graph *g) {
  int norms = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    if (n->kind == OP_MATMUL) UT_CHECK(OP_P(n)->gemm.has_c);
    if (n->kind != OP_LAYER_NORMALIZATION) continue;
    norms++;
    const op_norm *q = &OP_P(n)->norm;
    UT_CHECK(q->in_skip >= 0 && q->out_sum == 3 && n->out[3] == ir_graph_find_value(g, "s"));
    UT_CHECK(n->in[0] == ir_graph_find_value(g, "x") && n->in[q->in_skip] == ir_graph_find_value(g, "r"));
  }
  UT_CHECK(norms == 1);
}

/* LayerNormalization(Add(a, r)) with the dims unknown as exporters leave
 * them (no symbols): a = ReduceMean(x, axis 0) is [1, 3, 8] at run time, r =
 * Relu(x) [N, 3, 8]. Fused all the same; the plan finds which addend is
 * the full-size one: with a first, a and r trade places there. */
static int add_norm_small_first;

static void build_add_norm_unknown(ir_graph *g) {
  int64_t xd[3] = {IR_DIM_DYNAMIC, 3, 8}, ud[3] = {IR_DIM_DYNAMIC, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC}, bd[1] = {8};
  int x = value(g, "x", 3, xd), a = value(g, "a", 3, ud), r = value(g, "r", 3, ud), s = value(g, "s", 3, ud);
  int l = value(g, "l", 3, ud);
  attr mean_attrs[] = {{.name = "axes", .n = 1, .i = {0}}, {.name = "keepdims", .n = -1, .i = {1}}};
  node(g, "ReduceMean", 13, &x, 1, a, mean_attrs, 2);
  node(g, "Relu", 14, &x, 1, r, NULL, 0);
  int in_s[2] = {add_norm_small_first ? a : r, add_norm_small_first ? r : a};
  node(g, "Add", 14, in_s, 2, s, NULL, 0);
  int in_l[3] = {s, const_value(g, "scale", 1, bd, 1.0f), const_value(g, "beta", 1, bd, 0.1f)};
  node(g, "LayerNormalization", 17, in_l, 3, l, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &l, 1));
}

static void ir_add_norm_unknown(const ir_graph *g) {
  int norms = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead || n->kind != OP_LAYER_NORMALIZATION) continue;
    norms++;
    const op_norm *q = &OP_P(n)->norm;
    UT_CHECK(q->in_skip >= 0 && n->nin > q->in_skip);
    UT_CHECK(n->in[0] == ir_graph_find_value(g, add_norm_small_first ? "a" : "r"));
  }
  UT_CHECK(norms == 1);
}

/* ViT's residual: t = Transpose(q, (1, 0, 2)) of an attention output q
 * ([S, N, E]) whose dims ONNX Runtime leaves unknown, s = Add(t, x), then
 * LayerNormalization(s), the sum read again (the next residual). The norm
 * takes the Add and reads q through the permutation: one norm, no copy. */
static void build_add_norm_transposed(ir_graph *g) {
  int64_t xd[3] = {IR_DIM_DYNAMIC, 3, 8}, ud[3] = {IR_DIM_DYNAMIC, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC}, bd[1] = {8};
  int x = value(g, "x", 3, xd), p = value(g, "p", 3, ud), q = value(g, "q", 3, ud), t = value(g, "t", 3, ud);
  int s = value(g, "s", 3, xd), l = value(g, "l", 3, xd), y = value(g, "y", 3, xd);
  attr swap[] = {{.name = "perm", .n = 3, .i = {1, 0, 2}}};
  node(g, "Transpose", 13, &x, 1, p, swap, 1);
  node(g, "Relu", 14, &p, 1, q, NULL, 0);
  node(g, "Transpose", 13, &q, 1, t, swap, 1);
  int in_s[2] = {t, x};
  node(g, "Add", 14, in_s, 2, s, NULL, 0);
  int in_l[3] = {s, const_value(g, "scale", 1, bd, 1.0f), const_value(g, "beta", 1, bd, 0.1f)};
  node(g, "LayerNormalization", 17, in_l, 3, l, NULL, 0);
  int in_y[2] = {l, s};
  node(g, "Add", 14, in_y, 2, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

/* The one live node of kind k (a failed check and NULL when not one). */
static const ir_node *sole_live(const ir_graph *g, int k) {
  const ir_node *found = NULL;
  int count = 0;
  for (int i = 0; i < g->nnodes; i++)
    if (!g->nodes[i].dead && g->nodes[i].kind == k) found = &g->nodes[i], count++;
  UT_CHECK(count == 1);
  return count == 1 ? found : NULL;
}

static void ir_add_norm_transposed(const ir_graph *g) {
  const ir_node *n = sole_live(g, OP_LAYER_NORMALIZATION);
  if (!n) return;
  const op_norm *q = &OP_P(n)->norm;
  UT_CHECK(n->in[0] == ir_graph_find_value(g, "q") && q->permuted == 1);
  UT_CHECK(q->perm[0][0] == 1 && q->perm[0][1] == 0 && q->perm[0][2] == 2);
  UT_CHECK(q->in_skip >= 0 && n->in[q->in_skip] == ir_graph_find_value(g, "x"));
  UT_CHECK(q->out_sum >= 0 && n->out[q->out_sum] == ir_graph_find_value(g, "s"));
}

/* ViT's attention input: LayerNormalization -> Transpose(1, 0, 2) ->
 * Relu: the norm writes its rows through the permutation. */
static void build_norm_transposed_out(ir_graph *g) {
  int64_t xd[3] = {IR_DIM_DYNAMIC, 3, 8}, td[3] = {3, IR_DIM_DYNAMIC, 8}, bd[1] = {8};
  int x = value(g, "x", 3, xd), l = value(g, "l", 3, xd), t = value(g, "t", 3, td), y = value(g, "y", 3, td);
  attr swap[] = {{.name = "perm", .n = 3, .i = {1, 0, 2}}};
  int in_l[3] = {x, const_value(g, "scale", 1, bd, 1.5f), const_value(g, "beta", 1, bd, 0.1f)};
  node(g, "LayerNormalization", 17, in_l, 3, l, NULL, 0);
  node(g, "Transpose", 13, &l, 1, t, swap, 1);
  node(g, "Relu", 14, &t, 1, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

static void ir_norm_transposed_out(const ir_graph *g) {
  const ir_node *n = sole_live(g, OP_LAYER_NORMALIZATION);
  if (!n) return;
  const op_norm *q = &OP_P(n)->norm;
  UT_CHECK(n->out[0] == ir_graph_find_value(g, "t") && q->out_permuted && q->out_chan < 0);
  UT_CHECK(q->out_perm[0] == 1 && q->out_perm[1] == 0 && q->out_perm[2] == 2);
}

/* Addends that both broadcast into the sum (a [N, 1, 8] + b [1, 3, 8]),
 * or one along the normalised dim (c [N, 3, 1] + Relu(x)), dims unknown:
 * fused, the norm reading each through its row map. */
static void build_add_norm_broadcast(ir_graph *g) {
  int64_t xd[3] = {IR_DIM_DYNAMIC, 3, 8}, ud[3] = {IR_DIM_DYNAMIC, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC}, bd[1] = {8};
  int x = value(g, "x", 3, xd), a = value(g, "a", 3, ud), b = value(g, "b", 3, ud), c = value(g, "c", 3, ud);
  int r = value(g, "r", 3, xd), s1 = value(g, "s1", 3, ud), s2 = value(g, "s2", 3, ud);
  int l1 = value(g, "l1", 3, ud), l2 = value(g, "l2", 3, xd), y = value(g, "y", 3, ud);
  attr over1[] = {{.name = "axes", .n = 1, .i = {1}}, {.name = "keepdims", .n = -1, .i = {1}}};
  attr over0[] = {{.name = "axes", .n = 1, .i = {0}}, {.name = "keepdims", .n = -1, .i = {1}}};
  attr over2[] = {{.name = "axes", .n = 1, .i = {2}}, {.name = "keepdims", .n = -1, .i = {1}}};
  node(g, "ReduceMean", 13, &x, 1, a, over1, 2);
  node(g, "ReduceMean", 13, &x, 1, b, over0, 2);
  node(g, "ReduceMean", 13, &x, 1, c, over2, 2);
  node(g, "Relu", 14, &x, 1, r, NULL, 0);
  int in1[2] = {a, b}, in2[2] = {c, r};
  node(g, "Add", 14, in1, 2, s1, NULL, 0);
  node(g, "Add", 14, in2, 2, s2, NULL, 0);
  int in_l1[3] = {s1, const_value(g, "scale1", 1, bd, 1.0f), const_value(g, "beta1", 1, bd, 0.1f)};
  int in_l2[3] = {s2, const_value(g, "scale2", 1, bd, 0.5f), const_value(g, "beta2", 1, bd, -0.2f)};
  node(g, "LayerNormalization", 17, in_l1, 3, l1, NULL, 0);
  node(g, "LayerNormalization", 17, in_l2, 3, l2, NULL, 0);
  int in_y[2] = {l1, l2};
  node(g, "Add", 14, in_y, 2, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

static void ir_add_norm_broadcast(const ir_graph *g) {
  int norms = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    UT_CHECK(n->kind != OP_ADD || n->in[0] == ir_graph_find_value(g, "l1"));
    if (n->kind != OP_LAYER_NORMALIZATION) continue;
    norms++;
    UT_CHECK(OP_P(n)->norm.in_skip >= 0 && !OP_P(n)->norm.permuted);
  }
  UT_CHECK(norms == 2);
}

/* x[N,6] -> MatMul(w) -> Div(4) -> Mul(0.5 on the left) -> y: alpha 1/8. */
static void build_matmul_scale(ir_graph *g) {
  int64_t xd[2] = {IR_DIM_DYNAMIC, 6}, wd[2] = {6, 8}, yd[2] = {IR_DIM_DYNAMIC, 8};
  int x = value(g, "x", 2, xd), w = const_value(g, "w", 2, wd, 0.0f);
  int m = value(g, "m", 2, yd), d = value(g, "d", 2, yd), y = value(g, "y", 2, yd);
  int c4 = value(g, "four", 0, NULL), c5 = value(g, "half", 0, NULL);
  float four = 4.0f, half = 0.5f;
  UT_OK(ir_value_set_data(g, c4, &four, 4));
  UT_OK(ir_value_set_data(g, c5, &half, 4));
  int in0[2] = {x, w}, in1[2] = {m, c4}, in2[2] = {c5, d};
  node(g, "MatMul", 13, in0, 2, m, NULL, 0);
  node(g, "Div", 14, in1, 2, d, NULL, 0);
  node(g, "Mul", 14, in2, 2, y, NULL, 0);
  int ins[1] = {x}, outs[1] = {y};
  UT_OK(ir_graph_set_io(g, ins, 1, outs, 1));
}

static void ir_matmul_scale(const ir_graph *g) {
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    UT_CHECK(n->kind == OP_MATMUL && fabsf(OP_P(n)->gemm.alpha - 0.125f) < 1e-7f);
  }
}

/* x[N,3,6] -> MatMul(w[6,8]) -> Add(b[8]) -> Mul(gamma[8]) -> y: the
 * layer scale folds into new weights; one MatMul left. */
static void build_layer_scale(ir_graph *g) {
  int64_t xd[3] = {IR_DIM_DYNAMIC, 3, 6}, wd[2] = {6, 8}, bd[1] = {8}, yd[3] = {IR_DIM_DYNAMIC, 3, 8};
  int x = value(g, "x", 3, xd), w = const_value(g, "w", 2, wd, 0.0f), b = const_value(g, "b", 1, bd, 0.3f);
  int gm = const_value(g, "gamma", 1, bd, 0.7f);
  int m = value(g, "m", 3, yd), a = value(g, "a", 3, yd), y = value(g, "y", 3, yd);
  int in0[2] = {x, w}, in1[2] = {m, b}, in2[2] = {gm, a};
  node(g, "MatMul", 13, in0, 2, m, NULL, 0);
  node(g, "Add", 14, in1, 2, a, NULL, 0);
  node(g, "Mul", 14, in2, 2, y, NULL, 0);
  int ins[1] = {x}, outs[1] = {y};
  UT_OK(ir_graph_set_io(g, ins, 1, outs, 1));
}

static void ir_layer_scale(const ir_graph *g) {
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    UT_CHECK(n->kind == OP_MATMUL && OP_P(n)->gemm.has_c && n->in[1] != ir_graph_find_value(g, "w") &&
             n->out[0] == ir_graph_find_value(g, "y"));
  }
}

/* A value that leaves the partition is never fused away. */
static void build_conv_relu_both_out(ir_graph *g) {
  int64_t xd[4] = {1, 3, 5, 5}, wd[4] = {2, 3, 3, 3};
  int x = value(g, "x", 4, xd), w = const_value(g, "w", 4, wd, 0.0f);
  int c = value(g, "c", -1, NULL), y = value(g, "y", -1, NULL);
  int in0[2] = {x, w};
  node(g, "Conv", 11, in0, 2, c, conv_attrs, 1);
  int in1[1] = {c};
  node(g, "Relu", 14, in1, 1, y, NULL, 0);
  int ins[1] = {x}, outs[2] = {y, c};
  UT_OK(ir_graph_set_io(g, ins, 1, outs, 2));
}

static void ir_nothing(const ir_graph *g) { (void)g; }

/* x[N,6] -> MatMul(w) -> Add(b) -> Reshape([-1, 2, 8]) -> tanh GELU
 * written out -> y, in dynamo's form (GPT-2's gelu_new: Pow(x, 3), x * 0.5
 * first; form 0) and torch 1.13's (x * (x * x), 0.5 last; form 1): one
 * MatMul with C and GELU (tanh), the Reshape left as a view. Form 2: the
 * scale in the wrong place (tanh(0.5 * ...)): nothing fused into a GELU. */
static int gelu_tanh_form;
static void build_gelu_tanh(ir_graph *g) {
  int64_t xd[2] = {IR_DIM_DYNAMIC, 6}, wd[2] = {6, 8}, bd[1] = {8}, md[2] = {IR_DIM_DYNAMIC, 8};
  int64_t hd[3] = {IR_DIM_DYNAMIC, 2, 8}, sd[1] = {3};
  int x = value(g, "x", 2, xd), w = const_value(g, "w", 2, wd, 0.0f), b = const_value(g, "b", 1, bd, 0.3f);
  int m = value(g, "m", 2, md), a = value(g, "a", 2, md), h = value(g, "h", 3, hd), y = value(g, "y", 3, hd);
  int shape = IR_NONE;
  UT_OK(ir_graph_add_value(g, "shape", HD_DT_I64, 1, sd, &shape));
  const int64_t sv[3] = {-1, 2, 8};
  UT_OK(ir_value_set_data(g, shape, sv, sizeof sv));
  int in0[2] = {x, w}, in1[2] = {m, b}, in2[2] = {a, shape};
  node(g, "MatMul", 13, in0, 2, m, NULL, 0);
  node(g, "Add", 14, in1, 2, a, NULL, 0);
  node(g, "Reshape", 14, in2, 2, h, NULL, 0);
  const char *names[] = {"sq", "cube", "m2", "a1", "m3", "t", "a2", "xa"};
  int v[8];
  for (int i = 0; i < 8; i++) v[i] = value(g, names[i], 3, hd);
  int one[1] = {1}, c_half = value(g, "c_half", 0, NULL), c_three = value(g, "c_three", 0, NULL);
  int c_k = value(g, "c_k", 0, NULL), c_s = value(g, "c_s", 0, NULL), c_one = value(g, "c_one", 0, NULL);
  (void)one;
  float half = 0.5f, three = 3.0f, kk = 0.044715f, sc = 0.7978845608f, onef = 1.0f;
  UT_OK(ir_value_set_data(g, c_half, &half, 4));
  UT_OK(ir_value_set_data(g, c_three, &three, 4));
  UT_OK(ir_value_set_data(g, c_k, &kk, 4));
  UT_OK(ir_value_set_data(g, c_s, &sc, 4));
  UT_OK(ir_value_set_data(g, c_one, &onef, 4));
  if (gelu_tanh_form == 1) {
    int i0[2] = {h, h}, i1[2] = {h, v[0]};
    node(g, "Mul", 14, i0, 2, v[0], NULL, 0);
    node(g, "Mul", 14, i1, 2, v[1], NULL, 0);
  } else {
    int i0[2] = {h, c_half}, i1[2] = {h, c_three};
    node(g, "Mul", 14, i0, 2, v[7], NULL, 0); /* x * 0.5, first as dynamo writes it */
    node(g, "Pow", 15, i1, 2, v[1], NULL, 0);
  }
  int i2[2] = {c_k, v[1]}, i3[2] = {h, v[2]}, i4[2] = {v[3], gelu_tanh_form == 2 ? c_half : c_s};
  node(g, "Mul", 14, i2, 2, v[2], NULL, 0);
  node(g, "Add", 14, i3, 2, v[3], NULL, 0);
  node(g, "Mul", 14, i4, 2, v[4], NULL, 0);
  node(g, "Tanh", 13, &v[4], 1, v[5], NULL, 0);
  int i5[2] = {v[5], c_one};
  node(g, "Add", 14, i5, 2, v[6], NULL, 0);
  if (gelu_tanh_form == 1) {
    int i6[2] = {h, v[6]}, i7[2] = {c_half, v[7]};
    node(g, "Mul", 14, i6, 2, v[7], NULL, 0);
    node(g, "Mul", 14, i7, 2, y, NULL, 0);
  } else {
    int i6[2] = {v[7], v[6]};
    node(g, "Mul", 14, i6, 2, y, NULL, 0);
  }
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

static void ir_gelu_tanh(const ir_graph *g) {
  int mm = 0, views = 0, gelus = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    if (n->kind == OP_MATMUL) {
      mm++;
      UT_CHECK(OP_P(n)->gemm.has_c);
      UT_CHECK(OP_P(n)->gemm.act.kind == (gelu_tanh_form == 2 ? OP_ACT_NONE : OP_ACT_GELU_TANH));
    }
    if (n->kind == OP_RESHAPE) {
      views++;
      if (gelu_tanh_form != 2) UT_CHECK(n->out[0] == ir_graph_find_value(g, "y"));
    }
    gelus += n->kind == OP_GELU;
  }
  UT_CHECK(mm == 1 && views == 1 && gelus == 0);
}

/* x[N,C,H,W] -> Transpose(0,2,3,1) -> LayerNormalization(axis -1) ->
 * Transpose(0,3,1,2) -> y (LayerNorm2d; form 0), or without the second
 * Transpose, the NHWC rows read by a MatMul (form 1); form 2, the first
 * Transpose swaps H and W too (0,3,2,1): not a move of C to the end, so it
 * stays (the one after still fuses). */
static int norm_form;
static void build_norm_transposes(ir_graph *g) {
  int64_t xd[4] = {IR_DIM_DYNAMIC, 6, 3, 4}, td[4] = {IR_DIM_DYNAMIC, 3, 4, 6}, cd[1] = {6}, wd[2] = {6, 5};
  int64_t md[4] = {IR_DIM_DYNAMIC, 3, 4, 5};
  int x = value(g, "x", 4, xd), t = value(g, "t", 4, td), l = value(g, "l", 4, td);
  attr perm_in[] = {{.name = "perm", .n = 4, .i = {0, 2, 3, 1}}};
  attr perm_swap[] = {{.name = "perm", .n = 4, .i = {0, 3, 2, 1}}};
  attr perm_out[] = {{.name = "perm", .n = 4, .i = {0, 3, 1, 2}}};
  if (norm_form == 2) {
    int64_t sd[4] = {IR_DIM_DYNAMIC, 4, 3, 6};
    g->values[t].dims[1] = sd[1], g->values[t].dims[2] = sd[2];
    g->values[l].dims[1] = sd[1], g->values[l].dims[2] = sd[2];
  }
  node(g, "Transpose", 13, &x, 1, t, norm_form == 2 ? perm_swap : perm_in, 1);
  int in1[3] = {t, const_value(g, "scale", 1, cd, 1.0f), const_value(g, "beta", 1, cd, 0.1f)};
  node(g, "LayerNormalization", 17, in1, 3, l, NULL, 0);
  int y;
  if (norm_form == 1) {
    y = value(g, "y", 4, md);
    int in2[2] = {l, const_value(g, "w", 2, wd, 0.2f)};
    node(g, "MatMul", 13, in2, 2, y, NULL, 0);
  } else {
    int64_t yd[4] = {IR_DIM_DYNAMIC, 6, 3, 4};
    if (norm_form == 2) yd[2] = 4, yd[3] = 3;
    y = value(g, "y", 4, yd);
    node(g, "Transpose", 13, &l, 1, y, perm_out, 1);
  }
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

static void ir_norm_transposes(const ir_graph *g) {
  int norms = 0, copies = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    copies += n->kind == OP_TRANSPOSE;
    if (n->kind != OP_LAYER_NORMALIZATION) continue;
    norms++;
    const op_norm *q = &OP_P(n)->norm;
    if (norm_form == 2) { /* the Transpose after it still moves C back: that one fuses */
      UT_CHECK(q->in_chan == -1 && q->out_chan == 1);
      continue;
    }
    UT_CHECK(q->in_chan == 1 && n->in[0] == ir_graph_find_value(g, "x"));
    UT_CHECK(q->out_chan == (norm_form == 0 ? 1 : -1));
    if (norm_form == 0) UT_CHECK(n->out[0] == ir_graph_find_value(g, "y"));
  }
  UT_CHECK(norms == 1 && copies == (norm_form == 2 ? 1 : 0));
}

/* a[N,3,4,5], b[N,4,3,5]: Transpose(b, 0,2,1,3) -> Sub(a, .) -> y, and
 * Transpose(a, 0,3,1,2) read by a second Sub as its input 0: both read
 * their input through the permutation. */
static void build_binary_transpose(ir_graph *g) {
  int64_t ad[4] = {IR_DIM_DYNAMIC, 3, 4, 5}, bd[4] = {IR_DIM_DYNAMIC, 4, 3, 5}, td[4] = {IR_DIM_DYNAMIC, 5, 3, 4};
  int a = value(g, "x", 4, ad), bt = value(g, "bt", 4, bd), t = value(g, "t", 4, ad), s = value(g, "s", 4, ad);
  int ta = value(g, "ta", 4, td), y = value(g, "y", 4, td);
  int bv = const_value(g, "b", 4, (int64_t[4]){1, 4, 3, 5}, 0.2f);
  (void)bt;
  attr p1[] = {{.name = "perm", .n = 4, .i = {0, 2, 1, 3}}};
  attr p2[] = {{.name = "perm", .n = 4, .i = {0, 3, 1, 2}}};
  node(g, "Transpose", 13, &bv, 1, t, p1, 1);
  int in1[2] = {a, t};
  node(g, "Sub", 14, in1, 2, s, NULL, 0);
  node(g, "Transpose", 13, &s, 1, ta, p2, 1);
  int in2[2] = {ta, const_value(g, "c", 3, (int64_t[3]){5, 1, 1}, 0.5f)};
  node(g, "Sub", 14, in2, 2, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &a, 1, &y, 1));
}

static void ir_binary_transpose(const ir_graph *g) {
  int subs = 0, copies = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    copies += n->kind == OP_TRANSPOSE;
    if (n->kind != OP_SUB) continue;
    subs++;
    const op_binary *q = &OP_P(n)->binary;
    if (n->out[0] == ir_graph_find_value(g, "s")) {
      UT_CHECK(q->permuted == 2 && q->perm[1][1] == 2 && q->perm[1][2] == 1 && n->in[1] == ir_graph_find_value(g, "b"));
    } else {
      UT_CHECK(q->permuted == 1 && q->perm[0][1] == 3 && n->in[0] == ir_graph_find_value(g, "s"));
    }
  }
  UT_CHECK(subs == 2 && copies == 0);
}

/* ---- the pattern matcher ---- */

/* x -> Relu -> a; x -> Sigmoid -> b; Mul(b, a) -> m; Add(m, x) -> y.
 * variant 1: Sigmoid reads z, not x. variant 2: a is also a graph output.
 * variant 3: a also feeds another node. */
static ir_graph *diamond(int variant) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t d[2] = {2, 3};
  int x = value(g, "x", 2, d), z = value(g, "z", 2, d), a = value(g, "a", 2, d), b = value(g, "b", 2, d);
  int m = value(g, "m", 2, d), y = value(g, "y", 2, d), w = value(g, "w", 2, d);
  node(g, "Relu", 14, &x, 1, a, NULL, 0);
  int sin = variant == 1 ? z : x;
  node(g, "Sigmoid", 13, &sin, 1, b, NULL, 0);
  int mul_in[2] = {b, a}, add_in[2] = {m, x};
  node(g, "Mul", 14, mul_in, 2, m, NULL, 0);
  node(g, "Add", 14, add_in, 2, y, NULL, 0);
  if (variant == 3) node(g, "Tanh", 13, &a, 1, w, NULL, 0);
  int ins[2] = {x, z}, outs[3] = {y, a, w};
  UT_OK(ir_graph_set_io(g, ins, 2, outs, variant == 2 ? 2 : variant == 3 ? 3 : 1));
  UT_OK(ir_graph_finalize(g));
  return g;
}

/* Attention as exporters write it, over x [B, S, H, D]:
 * softmax(where(causal, (q * c) @ k^T / sqrt(D), -1e9) + key_bias) @ v,
 * q, k^T and v Transposes of x, Add(x, b) and Sigmoid(x), the output
 * transposed back to [B, S, H, D]. */
static int transpose(ir_graph *g, int x, const char *name, int8_t a, int8_t b, int8_t c, int8_t d) {
  const ir_value *xv = &g->values[x];
  int64_t yd[4] = {xv->dims[a], xv->dims[b], xv->dims[c], xv->dims[d]};
  int y = value(g, name, 4, yd);
  attr perm[] = {{.name = "perm", .n = 4, .i = {a, b, c, d}}};
  node(g, "Transpose", 13, &x, 1, y, perm, 1);
  return y;
}

/* Values of shape [2, 2, 3, last] (the per-head layout). */
static int head_value(ir_graph *g, const char *name, int64_t last) {
  int64_t d[4] = {2, 2, 3, last};
  return value(g, name, 4, d);
}

/* sqrt(D) as torch's exporter computes it: Sqrt(Cast(Slice(Shape(r), -1))),
 * r = Reshape(x, Concat(Slice(Shape(x), 0, 1), [3, 2, 8])), whose type has no
 * dims (the shape is computed): the fusion reads D = 8 from the Concat. */
static int sqrt_of_head_dim(ir_graph *g, int x) {
  int64_t one[1] = {1}, three[1] = {3}, four[1] = {4};
  int xs, first, shape, r, rs, last, lastf, root;
  UT_OK(ir_graph_add_value(g, "x_shape", HD_DT_I64, 1, four, &xs));
  UT_OK(ir_graph_add_value(g, "x_batch", HD_DT_I64, 1, one, &first));
  UT_OK(ir_graph_add_value(g, "r_shape", HD_DT_I64, 1, four, &shape));
  UT_OK(ir_graph_add_value(g, "r", HD_DT_F32, 4, (int64_t[4]){-1, -1, -1, -1}, &r));
  UT_OK(ir_graph_add_value(g, "rs", HD_DT_I64, 1, four, &rs));
  UT_OK(ir_graph_add_value(g, "d", HD_DT_I64, 1, one, &last));
  lastf = value(g, "d_f", 1, one);
  root = value(g, "sqrt_d", 1, one);
  const int64_t zero_v = 0, one_v = 1, minus1 = -1, big = INT64_MAX, rest[3] = {3, 2, 8};
  int c0, c1, cm1, cbig, crest;
  UT_OK(ir_graph_add_value(g, "c0", HD_DT_I64, 1, one, &c0));
  UT_OK(ir_value_set_data(g, c0, &zero_v, 8));
  UT_OK(ir_graph_add_value(g, "c1", HD_DT_I64, 1, one, &c1));
  UT_OK(ir_value_set_data(g, c1, &one_v, 8));
  UT_OK(ir_graph_add_value(g, "cm1", HD_DT_I64, 1, one, &cm1));
  UT_OK(ir_value_set_data(g, cm1, &minus1, 8));
  UT_OK(ir_graph_add_value(g, "cbig", HD_DT_I64, 1, one, &cbig));
  UT_OK(ir_value_set_data(g, cbig, &big, 8));
  UT_OK(ir_graph_add_value(g, "crest", HD_DT_I64, 1, three, &crest));
  UT_OK(ir_value_set_data(g, crest, rest, sizeof rest));
  node(g, "Shape", 15, &x, 1, xs, NULL, 0);
  int in_first[3] = {xs, c0, c1}, in_cat[2] = {first, crest}, in_r[2] = {x, shape}, in_last[3] = {rs, cm1, cbig};
  node(g, "Slice", 13, in_first, 3, first, NULL, 0);
  attr axis0[] = {{.name = "axis", .n = -1, .i = {0}}};
  node(g, "Concat", 13, in_cat, 2, shape, axis0, 1);
  node(g, "Reshape", 14, in_r, 2, r, NULL, 0);
  node(g, "Shape", 15, &r, 1, rs, NULL, 0);
  node(g, "Slice", 13, in_last, 3, last, NULL, 0);
  attr to_f[] = {{.name = "to", .n = -1, .i = {HD_DT_F32}}};
  node(g, "Cast", 19, &last, 1, lastf, to_f, 1);
  node(g, "Sqrt", 13, &lastf, 1, root, NULL, 0);
  return root;
}

static int attention_shape_scale; /* sqrt(D) from shapes (sqrt_of_head_dim), not a constant */
static int attention_inverted;  /* Where(drop, fill, scores), GPT-2's form */
static int attention_nan_guard; /* -inf fill, a row with every key masked, Where(IsNaN(p), 0, p) after the softmax */
/* 1: the mask as a bias, Add(scores, Where(keep, 0, fill)) (transformers' BERT); 2: Where(drop, fill, 0) */
static int attention_where_bias;

static void build_attention(ir_graph *g) {
  int64_t xd[4] = {2, 3, 2, 8}, bd[1] = {8}, md[4] = {1, 1, 1, 3}, cd[2] = {3, 3};
  int x = value(g, "x", 4, xd);
  int kb = value(g, "kx", 4, xd), vs = value(g, "vx", 4, xd);
  int in_kb[2] = {x, const_value(g, "kbias", 1, bd, 0.3f)};
  node(g, "Add", 14, in_kb, 2, kb, NULL, 0);
  node(g, "Sigmoid", 13, &x, 1, vs, NULL, 0);
  int qt = transpose(g, x, "qt", 0, 2, 1, 3), kt = transpose(g, kb, "kt", 0, 2, 3, 1);
  int vt = transpose(g, vs, "vt", 0, 2, 1, 3);
  int q = head_value(g, "q", 8), s = head_value(g, "s", 3), sd = head_value(g, "sd", 3);
  int in_q[2] = {qt, const_value(g, "qscale", 0, NULL, 1.1f)};
  node(g, "Mul", 14, in_q, 2, q, NULL, 0);
  int in_s[2] = {q, kt};
  node(g, "MatMul", 13, in_s, 2, s, NULL, 0);
  int in_sd[2] = {s, attention_shape_scale ? sqrt_of_head_dim(g, x) : const_value(g, "sqrt_d", 0, NULL, 3.2284f)};
  node(g, "Div", 14, in_sd, 2, sd, NULL, 0);
  int keep;
  UT_OK(ir_graph_add_value(g, "causal", HD_DT_BOOL, 2, cd, &keep));
  const uint8_t tri[9] = {1, 0, 0, 1, 1, 0, 1, 1, 1}, upper[9] = {0, 1, 1, 0, 0, 1, 0, 0, 0};
  const uint8_t first_row_masked[9] = {0, 0, 0, 1, 1, 0, 1, 1, 1};
  int drop_form = attention_inverted || attention_where_bias == 2;
  UT_OK(ir_value_set_data(g, keep, drop_form ? upper : attention_nan_guard ? first_row_masked : tri, sizeof tri));
  int sw = head_value(g, "sw", 3), sm = head_value(g, "sm", 3), p = head_value(g, "p", 3);
  int neg = const_value(g, "neg", 0, NULL, attention_nan_guard ? -INFINITY : -1e9f);
  if (attention_where_bias) {
    int zero = const_value(g, "zero_bias", 0, NULL, 0.4f), mb = value(g, "mask_bias", 2, cd); /* base - 0.4: zero */
    int in_w[3] = {keep, drop_form ? neg : zero, drop_form ? zero : neg};
    node(g, "Where", 16, in_w, 3, mb, NULL, 0);
    int in_m[2] = {sd, mb};
    node(g, "Add", 14, in_m, 2, sm, NULL, 0);
  } else {
    int in_w[3] = {keep, attention_inverted ? neg : sd, attention_inverted ? sd : neg};
    node(g, "Where", 16, in_w, 3, sw, NULL, 0);
    int in_m[2] = {sw, const_value(g, "key_bias", 4, md, 0.0f)};
    node(g, "Add", 14, in_m, 2, sm, NULL, 0);
  }
  attr axis[] = {{.name = "axis", .n = -1, .i = {-1}}};
  node(g, "Softmax", 13, &sm, 1, p, axis, 1);
  if (attention_nan_guard) {
    int nan, guarded = head_value(g, "p_guarded", 3);
    int64_t nd[4] = {2, 2, 3, 3};
    UT_OK(ir_graph_add_value(g, "p_nan", HD_DT_BOOL, 4, nd, &nan));
    node(g, "IsNaN", 13, &p, 1, nan, NULL, 0);
    int in_g[3] = {nan, const_value(g, "zero", 0, NULL, 0.4f), p}; /* base - 0.4: zero */
    node(g, "Where", 16, in_g, 3, guarded, NULL, 0);
    p = guarded;
  }
  int o = head_value(g, "o", 8), in_o[2] = {p, vt};
  node(g, "MatMul", 13, in_o, 2, o, NULL, 0);
  int y = transpose(g, o, "y", 0, 2, 1, 3);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

static void ir_attention(const ir_graph *g) {
  int att = 0, copies = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    if (n->kind == OP_ATTENTION) {
      const op_attention *p = &OP_P(n)->attention;
      att++;
      UT_CHECK(p->batched && p->k_transposed && p->in_mask == 3 && p->in_bias == (attention_where_bias ? -1 : 4));
      UT_CHECK(p->mask_invert == (attention_inverted || attention_where_bias == 2));
      UT_CHECK(p->mask_add == (attention_where_bias != 0));
      UT_CHECK(p->empty_zero == attention_nan_guard);
      UT_CHECK(p->q_perm[1] == 2 && p->k_perm[3] == 1 && p->out_perm[1] == 2);
      UT_CHECK(fabsf(p->scale - 0.7f / 2.8284f) < 1e-3f);
    }
    copies += n->kind == OP_TRANSPOSE;
  }
  UT_CHECK(att == 1 && copies == 0);
}

/* Two attentions in a row reading one Where(keep, 0, fill) bias, as
 * ONNX Runtime leaves transformers' BERT once its common-subexpression pass
 * has made the layers' identical Wheres one: both read keep as a mask, and
 * the Where, read by neither any more, goes. x [2, 2, 3, 8]: Q of the
 * first, whose output is Q of the second; K^T and V are constants. */
static void build_attention_shared_mask(ir_graph *g) {
  int64_t xd[4] = {2, 2, 3, 8}, ktd[4] = {2, 2, 8, 3}, cd[2] = {3, 3};
  int x = value(g, "x", 4, xd), q = x, keep, mb = value(g, "mask_bias", 2, cd);
  UT_OK(ir_graph_add_value(g, "keep", HD_DT_BOOL, 2, cd, &keep));
  const uint8_t bits[9] = {1, 1, 0, 1, 0, 1, 1, 1, 1};
  UT_OK(ir_value_set_data(g, keep, bits, sizeof bits));
  int in_w[3] = {keep, const_value(g, "zero", 0, NULL, 0.4f), const_value(g, "fill", 0, NULL, -1e4f)};
  node(g, "Where", 16, in_w, 3, mb, NULL, 0);
  attr axis[] = {{.name = "axis", .n = -1, .i = {-1}}};
  for (int layer = 0; layer < 2; layer++) {
    char name[32];
    snprintf(name, sizeof name, "kt%d", layer);
    int s = head_value(g, layer ? "s1" : "s0", 3), sm = head_value(g, layer ? "sm1" : "sm0", 3);
    int p = head_value(g, layer ? "p1" : "p0", 3), o = value(g, layer ? "y" : "o0", 4, xd);
    int in_s[2] = {q, const_value(g, name, 4, ktd, 0.1f * (float)layer)};
    node(g, "MatMul", 13, in_s, 2, s, NULL, 0);
    int in_m[2] = {s, mb};
    node(g, "Add", 14, in_m, 2, sm, NULL, 0);
    node(g, "Softmax", 13, &sm, 1, p, axis, 1);
    snprintf(name, sizeof name, "v%d", layer);
    int in_o[2] = {p, const_value(g, name, 4, xd, 0.2f - 0.3f * (float)layer)};
    node(g, "MatMul", 13, in_o, 2, o, NULL, 0);
    q = o;
  }
  UT_OK(ir_graph_set_io(g, &x, 1, &q, 1));
}

static void ir_attention_shared_mask(const ir_graph *g) {
  int att = 0, wheres = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    wheres += n->kind == OP_WHERE;
    if (n->kind != OP_ATTENTION) continue;
    const op_attention *p = &OP_P(n)->attention;
    att++;
    UT_CHECK(p->in_mask == 3 && p->in_bias == -1 && p->mask_add && !p->mask_invert && p->fill < -9999.f);
    UT_CHECK(n->in[3] == ir_graph_find_value(g, "keep"));
  }
  UT_CHECK(att == 2 && wheres == 0);
}

/* x [N, 3, 16, 24] -> Conv 8x8 stride 8 (5 channels, bias) -> y: a patch
 * embedding, made a Transpose of the image and a MatMul (six live nodes:
 * three Reshapes, the Transpose, the MatMul and the bias's Add).
 * patchify_form 1: padded by 1, a plain Conv that stays; 2: 4x4 stride 4
 * (ConvNeXt's stem), left to the Conv; 3: then ViT's flatten(2) to
 * [N, 5, 6] as torch exports it (Reshape(y, Concat(Slice(Shape(y), 0, 2),
 * [-1]))) and transpose(1, 2) to tokens: token-major, four live nodes (the
 * bias in the MatMul, no Transpose to tokens, the flatten's shape
 * arithmetic gone); 4: the flatten as Reshape(y, [0, 5, -1]), the same;
 * 5: form 3 with y also an output, which keeps the channel-major form (y's
 * data is read); 6: the flatten as torchvision writes it, the batch from
 * the image (Reshape(y, Concat(Unsqueeze(Gather(Shape(x), 0)), [5, 6]))):
 * token-major. */
static int patchify_form;
static void build_patchify(ir_graph *g) {
  const int64_t k = patchify_form == 2 ? 4 : 8;
  int64_t xd[4] = {IR_DIM_DYNAMIC, 3, 16, 24}, wd[4] = {5, 3, k, k}, bd[1] = {5};
  int64_t yd[4] = {IR_DIM_DYNAMIC, 5, 2, 3}, fd[3] = {-1, -1, -1}, one[1] = {1}, two[1] = {2}, three[1] = {3},
          four[1] = {4};
  int tail = patchify_form >= 3;
  int x = value(g, "x", 4, xd), y = tail ? value(g, "y", 4, yd) : value(g, "y", -1, NULL);
  int in[3] = {x, const_value(g, "w", 4, wd, 0.1f), const_value(g, "b", 1, bd, -0.2f)};
  attr a[] = {{.name = "strides", .n = 2, .i = {k, k}}, {.name = "pads", .n = 4, .i = {1, 1, 1, 1}}};
  node(g, "Conv", 11, in, 3, y, a, patchify_form == 1 ? 2 : 1);
  if (!tail) {
    UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
    return;
  }
  int shape, f = value(g, "flat", 3, fd), t = value(g, "tokens", -1, NULL);
  attr axis0[] = {{.name = "axis", .n = -1, .i = {0}}};
  if (patchify_form == 4) {
    shape = i64_const(g, "flat_shape", 3, (const int64_t[3]){0, 5, -1});
  } else if (patchify_form == 6) { /* Concat(Unsqueeze(Gather(Shape(x), 0)), [5, 6]) */
    int xs = i64_value(g, "x_shape", 1, four), batch = i64_value(g, "x_batch", 0, NULL);
    int batch1 = i64_value(g, "x_batch_1", 1, one);
    shape = i64_value(g, "flat_shape", 1, three);
    int in_g[2] = {xs, i64_const(g, "c0", 0, (const int64_t[1]){0})};
    int in_u[2] = {batch, i64_const(g, "ax0", 1, (const int64_t[1]){0})};
    int in_cat[2] = {batch1, i64_const(g, "rest", 2, (const int64_t[2]){5, 6})};
    node(g, "Shape", 15, &x, 1, xs, NULL, 0);
    node(g, "Gather", 13, in_g, 2, batch, axis0, 1);
    node(g, "Unsqueeze", 13, in_u, 2, batch1, NULL, 0);
    node(g, "Concat", 13, in_cat, 2, shape, axis0, 1);
  } else { /* Concat(Slice(Shape(y), 0, 2), [-1]) */
    int ys = i64_value(g, "y_shape", 1, four), lead = i64_value(g, "y_lead", 1, two);
    shape = i64_value(g, "flat_shape", 1, three);
    int in_lead[3] = {ys, i64_const(g, "c0", 1, (const int64_t[1]){0}), i64_const(g, "c2", 1, (const int64_t[1]){2})};
    int in_cat[2] = {lead, i64_const(g, "cm1", 1, (const int64_t[1]){-1})};
    node(g, "Shape", 15, &y, 1, ys, NULL, 0);
    node(g, "Slice", 13, in_lead, 3, lead, NULL, 0);
    node(g, "Concat", 13, in_cat, 2, shape, axis0, 1);
  }
  int in_r[2] = {y, shape};
  node(g, "Reshape", 14, in_r, 2, f, NULL, 0);
  attr perm[] = {{.name = "perm", .n = 3, .i = {0, 2, 1}}};
  node(g, "Transpose", 21, &f, 1, t, perm, 1);
  int outs[2] = {t, y};
  UT_OK(ir_graph_set_io(g, &x, 1, outs, patchify_form == 5 ? 2 : 1));
}

static void ir_patchify(const ir_graph *g) {
  int convs = 0, transposes = 0, matmuls = 0, biased = 0, adds = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    convs += n->kind == OP_CONV;
    transposes += n->kind == OP_TRANSPOSE;
    matmuls += n->kind == OP_MATMUL;
    biased += n->kind == OP_MATMUL && OP_P(n)->gemm.has_c;
    adds += n->kind == OP_ADD;
  }
  int conv = patchify_form == 1 || patchify_form == 2,
      tokens = patchify_form == 3 || patchify_form == 4 || patchify_form == 6;
  UT_CHECK(convs == conv && matmuls == !conv && biased == tokens && adds == (!conv && !tokens));
  /* channel-major: the image's Transpose, and form 5's Transpose to tokens */
  UT_CHECK(transposes == (conv ? patchify_form >= 3 : patchify_form == 5 ? 2 : 1));
  if (tokens) { /* the MatMul writes the tokens */
    int t = ir_graph_find_value(g, "tokens");
    UT_CHECK(t != IR_NONE && g->values[t].producer != IR_NONE && g->nodes[g->values[t].producer].kind == OP_MATMUL);
  }
}

/* torchvision's MultiheadAttention at batch 2 (S 5, B 2, E 16, 2 heads of
 * 8): x [S, B, E] -> one packed projection [S, B, 3E] -> Reshape [S, B, 3,
 * E] -> Unsqueeze -> Transpose (3, 1, 2, 0, 4) -> Squeeze -> Gather 0, 1, 2
 * -> Reshape [S, B * H, D] -> Transpose (1, 0, 2) -> Reshape [B, H, S, D]
 * for q, k and v. At B > 1 the [S, B * H, D] view merges dims strided
 * unevenly (B by 3E, H by D); the plan reads q, k and v in place all the
 * same (plan_build.c, chain_layout): no copy runs. */
static void build_vit_attention(ir_graph *g) {
  const int64_t S = 5, B = 2, E = 16, H = 2, D = 8;
  int64_t xd[3] = {S, B, E}, wd[2] = {E, 3 * E}, bd[1] = {3 * E}, pd[3] = {S, B, 3 * E};
  const int64_t s4[4] = {S, B, 3, E}, s3[3] = {S, B * H, D}, sh[4] = {B, H, S, D}, zero = 0, three = 3;
  int x = value(g, "x", 3, xd), mm = value(g, "mm", 3, pd), pr = value(g, "proj", 3, pd);
  int in_mm[2] = {x, const_value(g, "w", 2, wd, 0.02f)};
  node(g, "MatMul", 13, in_mm, 2, mm, NULL, 0);
  int in_b[2] = {const_value(g, "b", 1, bd, 0.3f), mm};
  node(g, "Add", 14, in_b, 2, pr, NULL, 0);
  int64_t r4d[4] = {S, B, 3, E}, ud[5] = {1, S, B, 3, E}, td[5] = {3, S, B, 1, E}, qd[4] = {3, S, B, E};
  int r4 = value(g, "r4", 4, r4d), un = value(g, "un", 5, ud), tr = value(g, "tr", 5, td), sq = value(g, "sq", 4, qd);
  int in_r4[2] = {pr, i64_const(g, "s4", 4, s4)};
  node(g, "Reshape", 14, in_r4, 2, r4, NULL, 0);
  int in_un[2] = {r4, i64_const(g, "ax0", 1, &zero)};
  node(g, "Unsqueeze", 13, in_un, 2, un, NULL, 0);
  attr perm5[] = {{.name = "perm", .n = 5, .i = {3, 1, 2, 0, 4}}};
  node(g, "Transpose", 13, &un, 1, tr, perm5, 1);
  int in_sq[2] = {tr, i64_const(g, "ax3", 1, &three)};
  node(g, "Squeeze", 13, in_sq, 2, sq, NULL, 0);
  int heads[3];
  for (int i = 0; i < 3; i++) {
    char nm[4][16];
    snprintf(nm[0], 16, "g%d", i), snprintf(nm[1], 16, "m%d", i), snprintf(nm[2], 16, "t%d", i), snprintf(nm[3], 16, "h%d", i);
    int64_t gd[3] = {S, B, E}, md[3] = {S, B * H, D}, tdd[3] = {B * H, S, D}, hd[4] = {B, H, S, D}, idx = i;
    char in_name[16];
    snprintf(in_name, 16, "idx%d", i);
    int ga = value(g, nm[0], 3, gd), m = value(g, nm[1], 3, md), t = value(g, nm[2], 3, tdd);
    heads[i] = value(g, nm[3], 4, hd);
    int in_g[2] = {sq, i64_const(g, in_name, 0, &idx)};
    attr ax[] = {{.name = "axis", .n = -1, .i = {0}}};
    node(g, "Gather", 13, in_g, 2, ga, ax, 1);
    snprintf(in_name, 16, "s3_%d", i);
    int in_m[2] = {ga, i64_const(g, in_name, 3, s3)};
    node(g, "Reshape", 14, in_m, 2, m, NULL, 0);
    attr swap[] = {{.name = "perm", .n = 3, .i = {1, 0, 2}}};
    node(g, "Transpose", 13, &m, 1, t, swap, 1);
    snprintf(in_name, 16, "sh_%d", i);
    int in_h[2] = {t, i64_const(g, in_name, 4, sh)};
    node(g, "Reshape", 14, in_h, 2, heads[i], NULL, 0);
  }
  int kt = transpose(g, heads[1], "kt", 0, 1, 3, 2);
  int64_t sd[4] = {B, H, S, S}, od[4] = {B, H, S, D};
  int sc = value(g, "sc", 4, sd), sdv = value(g, "sdv", 4, sd), pv = value(g, "pv", 4, sd), y = value(g, "y", 4, od);
  int in_s[2] = {heads[0], kt};
  node(g, "MatMul", 13, in_s, 2, sc, NULL, 0);
  int in_d[2] = {sc, const_value(g, "sqrt_d", 0, NULL, 2.8284271f)};
  node(g, "Div", 14, in_d, 2, sdv, NULL, 0);
  attr axis[] = {{.name = "axis", .n = -1, .i = {-1}}};
  node(g, "Softmax", 13, &sdv, 1, pv, axis, 1);
  int in_o[2] = {pv, heads[2]};
  node(g, "MatMul", 13, in_o, 2, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

static void ir_vit_attention(const ir_graph *g) { (void)sole_live(g, OP_ATTENTION); }

/* The fused form's plan at the shape of x: every Transpose and Gather
 * between the projection and the Attention a strided alias, none a step. */
static void check_vit_attention_plan(void) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  build_vit_attention(g);
  UT_OK(ir_graph_finalize(g));
  int nfused = 0;
  UT_OK(plan_fuse(g, &nfused));
  uint8_t *fold = calloc((size_t)g->nnodes + 1, 1);
  op_fold_closure(g, NULL, fold);
  const plan_eval eval = {NULL, ref_step_run, fold};
  ir_plan *p = NULL;
  ir_shape in = {3, {5, 2, 16}};
  UT_OK(plan_create(g, &in, &eval, &p));
  free(fold);
  int copies = 0, attn = 0;
  for (int s = 0; p && s < p->nsteps; s++) {
    int kind = g->nodes[p->steps[s].node].kind;
    copies += kind == OP_TRANSPOSE || kind == OP_GATHER || kind == OP_SPLIT;
    attn += kind == OP_ATTENTION;
  }
  UT_CHECK(p && attn == 1 && copies == 0);
  if (copies) fprintf(stderr, "vit attention: %d copy steps left in the plan\n", copies);
  plan_free(p);
  ir_graph_free(g);
}

/* BERT's self-attention over x [2, 3, 16] (2 heads of 8): q, k and v are
 * MatMul(x, W) + b, each Reshaped to [2, 3, 2, 8] and transposed for the
 * attention, whose output goes back to [2, 3, 16]. The three projections
 * become one MatMul by a [16, 48] weight and a Split (the plan reads the
 * Split's outputs in place). projections_form 1: v's projection is also
 * added to the output, so only q's and k's merge. */
static int projections_form;
static void build_projections(ir_graph *g) {
  int64_t xd[3] = {2, 3, 16}, wd[2] = {16, 16}, bd[1] = {16}, four[1] = {4}, three[1] = {3};
  const int64_t heads[4] = {2, 3, 2, 8}, flat[3] = {2, 3, 16};
  int x = value(g, "x", 3, xd), hs = IR_NONE, fs = IR_NONE;
  UT_OK(ir_graph_add_value(g, "heads_shape", HD_DT_I64, 1, four, &hs));
  UT_OK(ir_value_set_data(g, hs, heads, sizeof heads));
  UT_OK(ir_graph_add_value(g, "flat_shape", HD_DT_I64, 1, three, &fs));
  UT_OK(ir_value_set_data(g, fs, flat, sizeof flat));
  static const char *names[3] = {"q", "k", "v"};
  int t[3], proj[3];
  for (int i = 0; i < 3; i++) {
    char nm[32];
    snprintf(nm, sizeof nm, "%s_mm", names[i]);
    int mm = value(g, nm, 3, xd);
    snprintf(nm, sizeof nm, "%s_w", names[i]);
    int in_mm[2] = {x, const_value(g, nm, 2, wd, 0.05f * (float)i)};
    node(g, "MatMul", 13, in_mm, 2, mm, NULL, 0);
    snprintf(nm, sizeof nm, "%s_proj", names[i]);
    proj[i] = value(g, nm, 3, xd);
    snprintf(nm, sizeof nm, "%s_b", names[i]);
    int in_add[2] = {mm, const_value(g, nm, 1, bd, 0.1f * (float)i)};
    node(g, "Add", 14, in_add, 2, proj[i], NULL, 0);
    snprintf(nm, sizeof nm, "%s_heads", names[i]);
    int r = head_value(g, nm, 8), in_r[2] = {proj[i], hs};
    g->values[r].dims[0] = 2, g->values[r].dims[1] = 3, g->values[r].dims[2] = 2;
    node(g, "Reshape", 14, in_r, 2, r, NULL, 0);
    snprintf(nm, sizeof nm, "%s_t", names[i]);
    t[i] = i == 1 ? transpose(g, r, nm, 0, 2, 3, 1) : transpose(g, r, nm, 0, 2, 1, 3);
  }
  int s = head_value(g, "s", 3), sd = head_value(g, "sd", 3), p = head_value(g, "p", 3), o = head_value(g, "o", 8);
  g->values[s].dims[1] = g->values[sd].dims[1] = g->values[p].dims[1] = g->values[o].dims[1] = 2;
  int in_s[2] = {t[0], t[1]};
  node(g, "MatMul", 13, in_s, 2, s, NULL, 0);
  int in_sd[2] = {s, const_value(g, "sqrt_d", 0, NULL, 3.2284f)};
  node(g, "Div", 14, in_sd, 2, sd, NULL, 0);
  attr axis[] = {{.name = "axis", .n = -1, .i = {-1}}};
  node(g, "Softmax", 13, &sd, 1, p, axis, 1);
  int in_o[2] = {p, t[2]};
  node(g, "MatMul", 13, in_o, 2, o, NULL, 0);
  int ot = transpose(g, o, "ot", 0, 2, 1, 3), y = value(g, projections_form ? "y0" : "y", 3, xd), in_y[2] = {ot, fs};
  node(g, "Reshape", 14, in_y, 2, y, NULL, 0);
  if (projections_form) {
    int y1 = value(g, "y", 3, xd), in_y1[2] = {y, proj[2]};
    node(g, "Add", 14, in_y1, 2, y1, NULL, 0);
    y = y1;
  }
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

static void ir_projections(const ir_graph *g) {
  int merged = 0, splits = 0, matmuls = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    if (n->kind == OP_MATMUL) {
      matmuls++;
      const ir_value *w = &g->values[n->in[1]];
      merged += w->rank == 2 && w->dims[1] == (projections_form ? 32 : 48) && OP_P(n)->gemm.has_c &&
                g->values[n->in[2]].dims[0] == w->dims[1];
    }
    splits += n->kind == OP_SPLIT && n->nout == (projections_form ? 2 : 3);
  }
  UT_CHECK(merged == 1 && splits == 1 && matmuls == (projections_form ? 2 : 1));
}

/* A squeeze-and-excitation block on x [N, 16, 5, 6]: channel means ->
 * 1x1 Conv (16 -> 4, bias) -> act -> 1x1 Conv (4 -> 16, bias) -> gate
 * act -> Mul with x. se_form 0: torchvision's EfficientNet (GlobalAveragePool,
 * SiLU written out, Sigmoid, Mul(gate, x)); 1: MobileNetV3's (ReduceMean-13
 * over axes 2, 3, Relu, HardSigmoid, Mul(x, gate)); 2: ReduceMean-18 with
 * axes -2, -1 as an input, no bias on the second Conv, SiLU the other way
 * round. Not fused: 3, the gate multiplies Relu(x), not the pooled x; 4,
 * the hidden layer is also a graph output; 5, more channels than the op
 * takes (x [N, OP_SE_MAX_CHANNELS + 1, 1, 2]). */
static int se_form;
static void build_se(ir_graph *g) {
  int64_t c = se_form == 5 ? OP_SE_MAX_CHANNELS + 1 : 16;
  int64_t xd[4] = {IR_DIM_DYNAMIC, c, se_form == 5 ? 1 : 5, se_form == 5 ? 2 : 6}, w1d[4] = {4, c, 1, 1};
  int64_t w2d[4] = {c, 4, 1, 1}, b1d[1] = {4}, b2d[1] = {c}, ad[1] = {2};
  int x = value(g, "x", 4, xd), w1 = const_value(g, "w1", 4, w1d, 0.0f), b1 = const_value(g, "b1", 1, b1d, 0.2f);
  int w2 = const_value(g, "w2", 4, w2d, 0.1f), b2 = const_value(g, "b2", 1, b2d, -0.3f);
  int m = value(g, "m", -1, NULL), h = value(g, "h", -1, NULL), a = value(g, "a", -1, NULL);
  int e = value(g, "e", -1, NULL), gate = value(g, "gate", -1, NULL), y = value(g, "y", -1, NULL);
  if (se_form == 1) {
    attr axes[] = {{.name = "axes", .n = 2, .i = {2, 3}}};
    node(g, "ReduceMean", 13, &x, 1, m, axes, 1);
  } else if (se_form == 2) {
    int av = IR_NONE;
    int64_t axes[2] = {-2, -1};
    UT_OK(ir_graph_add_value(g, "axes", HD_DT_I64, 1, ad, &av));
    UT_OK(ir_value_set_data(g, av, axes, sizeof axes));
    int in[2] = {x, av};
    node(g, "ReduceMean", 18, in, 2, m, NULL, 0);
  } else {
    node(g, "GlobalAveragePool", 1, &x, 1, m, NULL, 0);
  }
  int c1[3] = {m, w1, b1};
  node(g, "Conv", 11, c1, 3, h, NULL, 0);
  if (se_form == 1) {
    node(g, "Relu", 14, &h, 1, a, NULL, 0);
  } else {
    int s = value(g, "s", -1, NULL);
    node(g, "Sigmoid", 13, &h, 1, s, NULL, 0);
    int silu[2] = {se_form == 2 ? s : h, se_form == 2 ? h : s};
    node(g, "Mul", 14, silu, 2, a, NULL, 0);
  }
  int c2[3] = {a, w2, b2};
  node(g, "Conv", 11, c2, se_form == 2 ? 2 : 3, e, NULL, 0);
  if (se_form == 1) {
    attr hs[] = {{.name = "alpha", .n = -2, .f = 1.0f / 6}, {.name = "beta", .n = -2, .f = 0.5f}};
    node(g, "HardSigmoid", 6, &e, 1, gate, hs, 2);
  } else {
    node(g, "Sigmoid", 13, &e, 1, gate, NULL, 0);
  }
  int scaled = x;
  if (se_form == 3) {
    scaled = value(g, "rx", -1, NULL);
    node(g, "Relu", 14, &x, 1, scaled, NULL, 0);
  }
  int mul[2] = {se_form == 1 ? scaled : gate, se_form == 1 ? gate : scaled};
  node(g, "Mul", 14, mul, 2, y, NULL, 0);
  int outs[2] = {y, h};
  UT_OK(ir_graph_set_io(g, &x, 1, outs, se_form == 4 ? 2 : 1));
}

static void ir_se(const ir_graph *g) {
  int se = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead || n->kind != OP_SQUEEZE_EXCITE) continue;
    se++;
    const op_squeeze_excite *q = &OP_P(n)->squeeze_excite;
    UT_CHECK(n->in[SE_IN_X] == ir_graph_find_value(g, "x") && n->in[SE_IN_W1] == ir_graph_find_value(g, "w1") &&
             n->in[SE_IN_W2] == ir_graph_find_value(g, "w2") && n->out[0] == ir_graph_find_value(g, "y"));
    UT_CHECK(n->in[SE_IN_B2] == (se_form == 2 ? IR_NONE : ir_graph_find_value(g, "b2")));
    if (se_form == 1) {
      UT_CHECK(q->act.kind == OP_ACT_RELU && q->gate_act.kind == OP_ACT_HARD_SIGMOID && q->gate_act.alpha == 1.0f / 6);
    } else {
      UT_CHECK(q->act.kind == OP_ACT_QUICK_GELU && q->act.alpha == 1.0f && q->gate_act.kind == OP_ACT_SIGMOID);
    }
  }
  UT_CHECK(se == (se_form <= 2));
}

/* ---- plan_layout: channels last ---- */

/* x[N,3,9,9] -> Conv 3x3 + Relu -> MaxPool 3x3/2 -> m; m -> Conv 1x1 +
 * Relu -> Conv 3x3 + Relu -> Conv 1x1 -> Add(m) -> Relu -> r; r ->
 * BatchNormalization -> Concat(., m) -> Mul(per-channel constant) ->
 * AveragePool 2x2 -> GlobalAveragePool -> Flatten -> y (form 0); form 1:
 * the Concat's output is the graph's. A ResNet-like chain: four convs, and
 * Transposes only after the input and before the Flatten. */
static int layout_form;
static void build_layout_chain(ir_graph *g) {
  int64_t xd[4] = {IR_DIM_DYNAMIC, 3, 9, 9}, w0d[4] = {8, 3, 3, 3}, w1d[4] = {6, 8, 1, 1}, w2d[4] = {6, 6, 3, 3};
  int64_t w3d[4] = {8, 6, 1, 1}, c8[1] = {8}, c6[1] = {6}, scd[4] = {1, 16, 1, 1};
  int x = value(g, "x", 4, xd);
  g->values[x].sym[0] = ir_sym_hash("N");
  const char *names[] = {"c0", "r0", "m", "c1", "c2", "c3", "s", "r", "b", "cat", "sc", "ap", "gap", "y"};
  int64_t unknown4[4] = {IR_DIM_DYNAMIC, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC}, unknown2[2] = {-1, -1};
  int v[14];
  for (int k = 0; k < 14; k++) v[k] = k == 13 ? value(g, names[k], 2, unknown2) : value(g, names[k], 4, unknown4);
  static const attr pad1[] = {{.name = "pads", .n = 4, .i = {1, 1, 1, 1}}};
  static const attr pool[] = {{.name = "kernel_shape", .n = 2, .i = {3, 3}},
                              {.name = "strides", .n = 2, .i = {2, 2}},
                              {.name = "pads", .n = 4, .i = {1, 1, 1, 1}}};
  static const attr avg[] = {{.name = "kernel_shape", .n = 2, .i = {2, 2}}};
  static const attr axis1[] = {{.name = "axis", .n = -1, .i = {1}}};
  int in0[3] = {x, const_value(g, "w0", 4, w0d, 0.0f), const_value(g, "b0", 1, c8, 0.1f)};
  node(g, "Conv", 11, in0, 3, v[0], pad1, 1);
  node(g, "Relu", 14, &v[0], 1, v[1], NULL, 0);
  node(g, "MaxPool", 12, &v[1], 1, v[2], pool, 3);
  int in1[3] = {v[2], const_value(g, "w1", 4, w1d, -0.1f), const_value(g, "b1", 1, c6, 0.2f)};
  node(g, "Conv", 11, in1, 3, v[3], NULL, 0);
  int r1 = value(g, "r1", 4, unknown4), r2 = value(g, "r2", 4, unknown4);
  node(g, "Relu", 14, &v[3], 1, r1, NULL, 0);
  int in2[2] = {r1, const_value(g, "w2", 4, w2d, 0.05f)};
  node(g, "Conv", 11, in2, 2, v[4], pad1, 1);
  node(g, "Relu", 14, &v[4], 1, r2, NULL, 0);
  int in3[3] = {r2, const_value(g, "w3", 4, w3d, 0.0f), const_value(g, "b3", 1, c8, -0.1f)};
  node(g, "Conv", 11, in3, 3, v[5], NULL, 0);
  int in_add[2] = {v[5], v[2]};
  node(g, "Add", 14, in_add, 2, v[6], NULL, 0);
  node(g, "Relu", 14, &v[6], 1, v[7], NULL, 0);
  int in_bn[5] = {v[7], const_value(g, "scale", 1, c8, 1.1f), const_value(g, "bias", 1, c8, -0.2f),
                  const_value(g, "mean", 1, c8, 0.1f), const_value(g, "var", 1, c8, 1.5f)};
  node(g, "BatchNormalization", 15, in_bn, 5, v[8], NULL, 0);
  int in_cat[2] = {v[8], v[2]};
  node(g, "Concat", 13, in_cat, 2, v[9], axis1, 1);
  int in_mul[2] = {v[9], const_value(g, "chscale", 4, scd, 0.7f)};
  node(g, "Mul", 14, in_mul, 2, v[10], NULL, 0);
  node(g, "AveragePool", 19, &v[10], 1, v[11], avg, 1);
  node(g, "GlobalAveragePool", 1, &v[11], 1, v[12], NULL, 0);
  node(g, "Flatten", 13, &v[12], 1, v[13], NULL, 0);
  int out = layout_form ? v[9] : v[13];
  UT_OK(ir_graph_set_io(g, &x, 1, &out, 1));
}

/* x -> Conv 1x1 -> depthwise Conv 3x3 -> Conv 1x1 -> y: no channel moves
 * to take away, so the depthwise one stays channels first and the two
 * others would need four Transposes. */
static void build_layout_depthwise(ir_graph *g) {
  int64_t xd[4] = {IR_DIM_DYNAMIC, 4, 6, 6}, w0d[4] = {8, 4, 1, 1}, w1d[4] = {8, 1, 3, 3}, w2d[4] = {4, 8, 1, 1};
  int64_t unknown4[4] = {IR_DIM_DYNAMIC, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC};
  int x = value(g, "x", 4, xd), a = value(g, "a", 4, unknown4), b = value(g, "b", 4, unknown4);
  int y = value(g, "y", 4, unknown4);
  static const attr dw[] = {{.name = "pads", .n = 4, .i = {1, 1, 1, 1}}, {.name = "group", .n = -1, .i = {8}}};
  int in0[2] = {x, const_value(g, "w0", 4, w0d, 0.0f)}, in1[2] = {a, const_value(g, "w1", 4, w1d, 0.1f)};
  int in2[2] = {b, const_value(g, "w2", 4, w2d, -0.1f)};
  node(g, "Conv", 11, in0, 2, a, NULL, 0);
  node(g, "Conv", 11, in1, 2, b, dw, 2);
  node(g, "Conv", 11, in2, 2, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
}

/* ResNet's bottleneck and its neighbours: x -> Conv 1x1 + Relu -> Conv 3x3
 * + Relu -> Conv 1x1 + x -> Relu -> a; a -> Conv 1x1/2 -> BN + Relu;
 * Concat(that, MaxPool(a)) -> AveragePool counting pads -> Conv 1x1 -> y. */
static void build_layout_bottleneck(ir_graph *g) {
  int64_t xd[4] = {IR_DIM_DYNAMIC, 8, 6, 6}, u4[4] = {IR_DIM_DYNAMIC, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC};
  int64_t w0d[4] = {4, 8, 1, 1}, w1d[4] = {4, 4, 3, 3}, w2d[4] = {8, 4, 1, 1}, w3d[4] = {6, 8, 1, 1};
  int64_t w4d[4] = {3, 14, 1, 1}, c6[1] = {6};
  int x = value(g, "x", 4, xd);
  g->values[x].sym[0] = ir_sym_hash("N");
  int v[14];
  char nm[8];
  for (int k = 0; k < 14; k++) snprintf(nm, sizeof nm, "v%d", k), v[k] = value(g, nm, 4, u4);
  g->values[v[5]].sym[0] = ir_sym_hash("N"); /* the residual sum: the Add fuses into the conv */
  for (int k = 1; k < 4; k++) g->values[v[5]].dims[k] = xd[k];
  g->values[v[4]].sym[0] = ir_sym_hash("N");
  for (int k = 1; k < 4; k++) g->values[v[4]].dims[k] = xd[k];
  static const attr pad1[] = {{.name = "pads", .n = 4, .i = {1, 1, 1, 1}}};
  static const attr s2[] = {{.name = "strides", .n = 2, .i = {2, 2}}};
  static const attr mp[] = {{.name = "kernel_shape", .n = 2, .i = {2, 2}}, {.name = "strides", .n = 2, .i = {2, 2}}};
  static const attr ap[] = {{.name = "kernel_shape", .n = 2, .i = {3, 3}},
                            {.name = "pads", .n = 4, .i = {1, 1, 1, 1}},
                            {.name = "count_include_pad", .n = -1, .i = {1}}};
  static const attr axis1[] = {{.name = "axis", .n = -1, .i = {-3}}};
  int in0[2] = {x, const_value(g, "w0", 4, w0d, 0.0f)};
  node(g, "Conv", 11, in0, 2, v[0], NULL, 0);
  node(g, "Relu", 14, &v[0], 1, v[1], NULL, 0);
  int in1[2] = {v[1], const_value(g, "w1", 4, w1d, 0.05f)};
  node(g, "Conv", 11, in1, 2, v[2], pad1, 1);
  node(g, "Relu", 14, &v[2], 1, v[3], NULL, 0);
  int in2[2] = {v[3], const_value(g, "w2", 4, w2d, -0.05f)};
  node(g, "Conv", 11, in2, 2, v[4], NULL, 0);
  int in_add[2] = {v[4], x};
  node(g, "Add", 14, in_add, 2, v[5], NULL, 0);
  node(g, "Relu", 14, &v[5], 1, v[6], NULL, 0);
  int in3[2] = {v[6], const_value(g, "w3", 4, w3d, 0.0f)};
  node(g, "Conv", 11, in3, 2, v[7], s2, 1);
  int in_bn[5] = {v[7], const_value(g, "scale", 1, c6, 1.1f), const_value(g, "bias", 1, c6, -0.2f),
                  const_value(g, "mean", 1, c6, 0.1f), const_value(g, "var", 1, c6, 1.5f)};
  node(g, "BatchNormalization", 15, in_bn, 5, v[8], NULL, 0);
  node(g, "Relu", 14, &v[8], 1, v[9], NULL, 0);
  node(g, "MaxPool", 12, &v[6], 1, v[10], mp, 2);
  int in_cat[2] = {v[9], v[10]};
  node(g, "Concat", 13, in_cat, 2, v[11], axis1, 1);
  node(g, "AveragePool", 19, &v[11], 1, v[12], ap, 3);
  int in4[2] = {v[12], const_value(g, "w4", 4, w4d, 0.1f)};
  node(g, "Conv", 11, in4, 2, v[13], NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &v[13], 1));
}

static int cnx_n;
/* A value of batch N and dims d1..d3. */
static int cnx_value(ir_graph *g, int rank, int64_t d1, int64_t d2, int64_t d3) {
  char nm[16];
  int64_t d[4] = {IR_DIM_DYNAMIC, d1, d2, d3};
  snprintf(nm, sizeof nm, "cnx%d", cnx_n++);
  int v = value(g, nm, rank, d);
  g->values[v].sym[0] = ir_sym_hash("N");
  return v;
}
static int cnx_const(ir_graph *g, int rank, const int64_t *dims, float base) {
  char nm[16];
  snprintf(nm, sizeof nm, "cnxw%d", cnx_n++);
  return const_value(g, nm, rank, dims, base);
}
/* [N, a, b, c] -> Transpose(0,2,3,1) or (0,3,1,2) */
static int cnx_transpose(ir_graph *g, int x, int to_rows) {
  static const attr rows[] = {{.name = "perm", .n = 4, .i = {0, 2, 3, 1}}};
  static const attr nchw[] = {{.name = "perm", .n = 4, .i = {0, 3, 1, 2}}};
  int64_t d[4]; /* a copy: adding a value may move the array */
  memcpy(d, g->values[x].dims, sizeof d);
  int y = to_rows ? cnx_value(g, 4, d[2], d[3], d[1]) : cnx_value(g, 4, d[3], d[1], d[2]);
  node(g, "Transpose", 13, &x, 1, y, to_rows ? rows : nchw, 1);
  return y;
}
static int cnx_like(ir_graph *g, int x) {
  int64_t d[4];
  memcpy(d, g->values[x].dims, sizeof d);
  return cnx_value(g, 4, d[1], d[2], d[3]);
}
static int cnx_norm(ir_graph *g, int x, int64_t c) {
  static const attr ln[] = {{.name = "axis", .n = -1, .i = {-1}}};
  int in[3] = {x, cnx_const(g, 1, &c, 1.0f), cnx_const(g, 1, &c, 0.0f)}, y = cnx_like(g, x);
  node(g, "LayerNormalization", 17, in, 3, y, ln, 1);
  return y;
}
static int cnx_binary(ir_graph *g, const char *op, int a, int b, int like) {
  int in[2] = {a, b}, y = cnx_like(g, like);
  node(g, op, 14, in, 2, y, NULL, 0);
  return y;
}
static int cnx_conv(ir_graph *g, int x, int64_t cin, int64_t cout, int64_t k, int64_t stride, int depthwise) {
  int64_t p = depthwise ? k / 2 : 0;
  attr a[] = {{.name = "kernel_shape", .n = 2, .i = {k, k}}, {.name = "strides", .n = 2, .i = {stride, stride}},
              {.name = "pads", .n = 4, .i = {p, p, p, p}}, {.name = "group", .n = -1, .i = {depthwise ? cin : 1}}};
  int64_t wd[4] = {cout, depthwise ? 1 : cin, k, k};
  const int64_t xh = g->values[x].dims[2], xw = g->values[x].dims[3]; /* adding values moves them */
  int in[3] = {x, cnx_const(g, 4, wd, -0.2f), cnx_const(g, 1, &cout, -0.1f)};
  int y = cnx_value(g, 4, cout, (xh + 2 * p - k) / stride + 1, (xw + 2 * p - k) / stride + 1);
  node(g, "Conv", 11, in, 3, y, a, 4);
  return y;
}
static int cnx_block(ir_graph *g, int x, int64_t c) {
  int64_t c4 = 4 * c, w1d[2] = {c, c4}, w2d[2] = {c4, c}, gd[3] = {c, 1, 1};
  int h = cnx_norm(g, cnx_transpose(g, cnx_conv(g, x, c, c, 7, 1, 1), 1), c);
  const int64_t hh = g->values[h].dims[1], hw = g->values[h].dims[2]; /* adding values moves them */
  int mm1[2] = {h, cnx_const(g, 2, w1d, -0.15f)}, h1 = cnx_value(g, 4, hh, hw, c4);
  node(g, "MatMul", 13, mm1, 2, h1, NULL, 0);
  int h2 = cnx_like(g, h1), b1 = cnx_binary(g, "Add", h1, cnx_const(g, 1, &c4, -0.1f), h1);
  node(g, "Gelu", 20, &b1, 1, h2, NULL, 0);
  int mm2[2] = {h2, cnx_const(g, 2, w2d, -0.35f)}, h3 = cnx_like(g, h);
  node(g, "MatMul", 13, mm2, 2, h3, NULL, 0);
  h = cnx_transpose(g, cnx_binary(g, "Add", h3, cnx_const(g, 1, &c, 0.0f), h3), 0);
  return cnx_binary(g, "Add", cnx_binary(g, "Mul", cnx_const(g, 3, gd, 0.2f), h, h), x, x);
}
/* torchvision's ConvNeXt as its export writes it: a 4x4/4 stem conv,
 * LayerNorm2d (Transpose(0,2,3,1), LayerNormalization, Transpose(0,3,1,2)),
 * two blocks (depthwise 7x7 -> Transpose(0,2,3,1) -> LayerNormalization ->
 * MatMul + bias -> Gelu -> MatMul + bias -> Transpose(0,3,1,2) ->
 * Mul(gamma [C,1,1]) -> Add(x)), LayerNorm2d, a 2x2/2 conv, a block,
 * GlobalAveragePool. Channels last: 5 convs (3 depthwise), and of the 12
 * Transposes none is left but the two at the edges; late, the layer
 * scales and the three residual Adds go into the blocks' second MatMuls. */
static void build_layout_convnext(ir_graph *g) {
  int64_t xd[4] = {IR_DIM_DYNAMIC, 3, 32, 24};
  cnx_n = 0;
  int x = value(g, "x", 4, xd);
  g->values[x].sym[0] = ir_sym_hash("N");
  int y = cnx_transpose(g, cnx_norm(g, cnx_transpose(g, cnx_conv(g, x, 3, 8, 4, 4, 0), 1), 8), 0);
  y = cnx_block(g, cnx_block(g, y, 8), 8);
  y = cnx_transpose(g, cnx_norm(g, cnx_transpose(g, y, 1), 8), 0);
  y = cnx_block(g, cnx_conv(g, y, 8, 16, 2, 2, 0), 16);
  int out = cnx_value(g, 4, 16, 1, 1);
  node(g, "GlobalAveragePool", 1, &y, 1, out, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &out, 1));
}

/* Fuses both copies of a graph, lays one out channels last (every float
 * type) and runs the late fusions on it, checks what the passes report and
 * did (want_residual: MatMuls that took a residual Add), and compares both
 * on ref. */
/* The mode check_layout runs the pass in. */
static int layout_mode = PLAN_LAYOUT_ALWAYS;

static void check_layout(const char *name, build_fn build, const ir_shape *in, int want_applied, int want_convs,
                         int want_transposes, int want_residual) {
  ir_graph *plain, *laid;
  UT_OK(ir_graph_create(&plain));
  UT_OK(ir_graph_create(&laid));
  build(plain);
  build(laid);
  UT_OK(ir_graph_finalize(plain));
  UT_OK(ir_graph_finalize(laid));
  int nfused = 0;
  UT_OK(plan_fuse(plain, &nfused));
  UT_OK(plan_fuse(laid, &nfused));
  plan_layout_report rep;
  UT_OK(plan_layout(laid, layout_mode, NULL, &rep));
  int nlate = 0, residual = 0;
  UT_OK(plan_fuse_late(laid, &nlate));
  for (int i = 0; i < laid->nnodes; i++)
    residual += !laid->nodes[i].dead && laid->nodes[i].kind == OP_MATMUL && OP_P(&laid->nodes[i])->gemm.has_residual;
  UT_CHECK(residual == want_residual && nlate >= want_residual);
  if (residual != want_residual) fprintf(stderr, "%s: %d MatMuls with a residual\n", name, residual);
  UT_CHECK(rep.applied == want_applied && rep.convs == want_convs && rep.transposes == want_transposes);
  if (rep.applied != want_applied || rep.convs != want_convs || rep.transposes != want_transposes)
    fprintf(stderr, "%s: applied %d, %d convs, %d transposes\n", name, rep.applied, rep.convs, rep.transposes);
  int last = 0, transposes = 0;
  for (int i = 0; i < laid->nnodes; i++) {
    const ir_node *n = &laid->nodes[i];
    if (n->dead) continue;
    last += n->kind == OP_CONV && OP_P(n)->conv.channels_last;
    transposes += n->kind == OP_TRANSPOSE;
  }
  UT_CHECK(last == (want_applied ? want_convs : 0) && transposes == (want_applied ? want_transposes : 0));
  /* the graph's output keeps its value (name, producer fixed up) */
  UT_CHECK(laid->outputs[0] == ir_graph_find_value(laid, plain->values[plain->outputs[0]].name));
  size_t n = (size_t)ir_numel(in->rank, in->dims);
  float *x = malloc(sizeof(float) * n);
  for (size_t k = 0; k < n; k++) x[k] = sinf((float)k * 0.37f);
  size_t na = 0, nb = 0;
  float *a = run_ref(plain, in, x, &na), *b = run_ref(laid, in, x, &nb);
  UT_CHECK(a && b && na == nb);
  double worst = 0, norm = 0;
  int nonfinite = 0;
  for (size_t k = 0; a && b && k < na && na == nb; k++) {
    worst = fmax(worst, ut_diff(b[k], a[k], &nonfinite));
    norm += fabs(a[k]);
  }
  UT_CHECK(!nonfinite && norm > 1e-3 * (double)na); /* the output carries signal */
  UT_CHECK(worst < 1e-4);
  if (worst >= 1e-4) fprintf(stderr, "%s: channels last differs from first by %g\n", name, worst);
  free(a);
  free(b);
  free(x);
  ir_graph_free(plain);
  ir_graph_free(laid);
}

static int f32_output(const ir_graph *g, const ir_node *n, void *user) {
  (void)user;
  return g->values[n->out[0]].dtype == HD_DT_F32;
}

static int never(const ir_graph *g, const ir_node *n, void *user) {
  (void)g, (void)n;
  return user == NULL;
}

static void test_matcher(void) {
  /* Relu(x) * Sigmoid(x) + x: Mul written a * b in the pattern, b * a in the graph */
  const pm_node nodes[] = {
      {.kind = OP_RELU, .nin = 1, .in = {PM_CAPTURE(0)}},
      {.kind = OP_SIGMOID, .nin = 1, .in = {PM_CAPTURE(0)}},
      {.kind = OP_MUL, .nin = 2, .in = {0, 1}, .commutative = 1},
      {.kind = OP_ADD, .nin = 2, .in = {2, PM_CAPTURE(0)}, .commutative = 1, .pred = f32_output},
  };
  const pm_pattern pat = {"swish-residual", nodes, 4, 1};
  for (int variant = 0; variant < 4; variant++) {
    ir_graph *g = diamond(variant);
    int root = -1;
    for (int i = 0; i < g->nnodes; i++)
      if (g->nodes[i].kind == OP_ADD) root = i;
    pm_match m;
    int found = plan_match(g, &pat, root, NULL, &m);
    UT_CHECK(found == (variant == 0));
    if (found) {
      UT_CHECK(m.capture[0] == ir_graph_find_value(g, "x"));
      UT_CHECK(g->nodes[m.node[0]].kind == OP_RELU && g->nodes[m.node[1]].kind == OP_SIGMOID);
      UT_CHECK(m.node[3] == root);
      /* a pattern rooted elsewhere does not match there */
      UT_CHECK(!plan_match(g, &pat, m.node[2], NULL, &m));
      /* a predicate that refuses */
      pm_node strict[4];
      memcpy(strict, nodes, sizeof strict);
      strict[3].pred = never;
      const pm_pattern p2 = {"refused", strict, 4, 1};
      UT_CHECK(!plan_match(g, &p2, root, &m, &m));
      UT_CHECK(plan_match(g, &p2, root, NULL, &m));
    }
    ir_graph_free(g);
  }
}

int main(void) {
  test_matcher();
  ir_shape in4 = {4, {2, 3, 6, 6}};
  check_pass("conv+bn+relu", build_conv_bn_relu, 1, &in4, ir_conv_bn_relu);
  ir_shape in5 = {4, {2, 3, 5, 5}};
  check_pass("conv+add+relu", build_conv_residual, 1, &in5, ir_conv_residual);
  /* The same graph with unnamed batch dims (or two symbols): the Add might
   * broadcast a batch of 1, so the residual must not be fused. */
  for (int named = 0; named < 2; named++) {
    ir_graph *g;
    UT_OK(ir_graph_create(&g));
    build_conv_residual(g);
    int xv = ir_graph_find_value(g, "x");
    g->values[xv].sym[0] = named ? ir_sym_hash("M") : 0;
    UT_OK(ir_graph_finalize(g));
    int nfused = 0;
    UT_OK(plan_fuse(g, &nfused));
    int adds = 0;
    for (int i = 0; i < g->nnodes; i++) adds += !g->nodes[i].dead && g->nodes[i].kind == OP_ADD;
    UT_CHECK(adds == 1);
    ir_graph_free(g);
  }
  ir_shape in2 = {2, {3, 8}};
  check_pass("matmul+add+sigmoid", build_matmul_bias, 1, &in2, ir_matmul_bias);
  check_pass("matmul+FastGelu(bias)", build_matmul_fast_gelu, 1, &in2, ir_matmul_fast_gelu);
  ir_shape in26 = {2, {3, 6}};
  check_pass("matmul+bias+gelu (torch form)", build_gelu_torch, 1, &in26, ir_matmul_gelu);
  check_pass("matmul+bias+gelu (HF form)", build_gelu_hf, 1, &in26, ir_matmul_gelu);
  check_pass("matmul/4*0.5", build_matmul_scale, 1, &in26, ir_matmul_scale);
  for (swiglu_form = 0; swiglu_form < 3; swiglu_form++)
    check_pass("swiglu: silu into the gate's Mul", build_swiglu, 4, &in26, ir_swiglu);
  ir_shape in435 = {4, {2, 4, 3, 5}};
  check_pass("batchnorm+relu (no conv before)", build_bn_relu, 1, &in435, ir_bn_relu);
  ir_shape in366 = {4, {2, 3, 6, 6}};
  for (conv_silu_form = 0; conv_silu_form < 4; conv_silu_form++)
    check_pass(conv_silu_form == 2 ? "conv+silu, conv output read again: silu stays a Mul" : "conv+silu",
               build_conv_silu, conv_silu_form == 2 ? 3 : 1, &in366, ir_conv_silu);
  ir_shape in40 = {2, {3, 40}};
  for (nbits_form = 0; nbits_form < 3; nbits_form++)
    check_pass(nbits_form == 2 ? "swiglu over MatMulNBits, block sizes differ: not fused" : "swiglu over MatMulNBits",
               build_nbits_glu, nbits_form == 2 ? 3 : 1, &in40, ir_nbits_glu);
  ir_shape in36 = {3, {2, 3, 6}};
  check_pass("matmul+bias*gamma", build_layer_scale, 1, &in36, ir_layer_scale);
  ir_shape in38 = {3, {2, 3, 8}};
  check_pass("matmul+bias, add+layernorm", build_add_norm, 3, &in38, ir_add_norm);
  check_pass("add+layernorm, dims unknown", build_add_norm_unknown, 3, &in38, ir_add_norm_unknown);
  add_norm_small_first = 1; /* the plan swaps the addends */
  check_pass("add+layernorm, dims unknown, the broadcast addend first", build_add_norm_unknown, 3, &in38,
             ir_add_norm_unknown);
  add_norm_small_first = 0;
  check_pass("add+layernorm, ViT's transposed residual", build_add_norm_transposed, 4, &in38, ir_add_norm_transposed);
  check_pass("layernorm -> transpose keeping the last axis", build_norm_transposed_out, 2, &in38,
             ir_norm_transposed_out);
  check_pass("add+layernorm, both addends broadcast", build_add_norm_broadcast, 7, &in38, ir_add_norm_broadcast);
  ir_shape in_att = {4, {2, 3, 2, 8}}, in_att2 = {4, {2, 2, 3, 8}};
  check_pass("attention (transposes, scales, causal where, key bias)", build_attention, 3, &in_att, ir_attention);
  attention_inverted = 1;
  check_pass("attention (where(drop, fill, scores))", build_attention, 3, &in_att, ir_attention);
  attention_inverted = 0;
  attention_nan_guard = 1;
  check_pass("attention (a row of -inf, where(isnan(p), 0, p))", build_attention, 3, &in_att, ir_attention);
  attention_nan_guard = 0;
  attention_where_bias = 1;
  check_pass("attention (add(scores, where(keep, 0, fill)): a mask)", build_attention, 3, &in_att, ir_attention);
  attention_where_bias = 2;
  check_pass("attention (add(scores, where(drop, fill, 0)): a mask)", build_attention, 3, &in_att, ir_attention);
  attention_where_bias = 0;
  check_pass("attention x2 sharing one where(keep, 0, fill) bias", build_attention_shared_mask, 2, &in_att2,
             ir_attention_shared_mask);
  attention_shape_scale = 1; /* the shape arithmetic, read by nothing once fused, goes too */
  check_pass("attention (1 / sqrt(D) computed from shapes)", build_attention, 3, &in_att, ir_attention);
  attention_shape_scale = 0;
  ir_shape in_patch = {4, {2, 3, 16, 24}};
  static const struct {
    int live;
    const char *name;
  } patch_forms[] = {{6, "conv with stride = kernel as a transpose and a matmul"},
                     {1, "padded conv with stride = kernel stays a conv"},
                     {1, "4x4 conv with stride 4 stays a conv"},
                     {4, "patch conv, flatten and transpose to tokens: a token-major matmul"},
                     {4, "patch conv, flatten by [0, M, -1], transpose: token-major"},
                     {11, "patch conv also an output stays channel-major"},
                     {4, "patch conv, flatten with the image's batch, transpose: token-major"}};
  for (int f = 0; f < (int)(sizeof patch_forms / sizeof patch_forms[0]); f++) {
    patchify_form = f;
    check_pass(patch_forms[f].name, build_patchify, patch_forms[f].live, &in_patch, ir_patchify);
  }
  patchify_form = 0;
  ir_shape in_proj = {3, {2, 3, 16}};
  check_pass("q, k, v projections as one MatMul and a Split", build_projections, 7, &in_proj, ir_projections);
  ir_shape in_vit = {3, {5, 2, 16}};
  check_pass("torchvision's attention, batch 2", build_vit_attention, 18, &in_vit, ir_vit_attention);
  check_vit_attention_plan();
  projections_form = 1;
  check_pass("q, k projections merged, v's also read elsewhere", build_projections, 9, &in_proj, ir_projections);
  projections_form = 0;
  ir_shape in1 = {4, {1, 3, 5, 5}};
  check_pass("conv+relu, conv output leaves", build_conv_relu_both_out, 2, &in1, ir_nothing);
  ir_shape in_gt = {2, {4, 6}};
  gelu_tanh_form = 0;
  check_pass("matmul+bias, reshape, tanh gelu (dynamo form)", build_gelu_tanh, 2, &in_gt, ir_gelu_tanh);
  gelu_tanh_form = 1;
  check_pass("matmul+bias, reshape, tanh gelu (torch form)", build_gelu_tanh, 2, &in_gt, ir_gelu_tanh);
  gelu_tanh_form = 2;
  check_pass("tanh gelu with a wrong constant: not fused", build_gelu_tanh, 9, &in_gt, ir_gelu_tanh);
  ir_shape in_nt = {4, {2, 6, 3, 4}};
  norm_form = 0;
  check_pass("transpose+layernorm+transpose", build_norm_transposes, 1, &in_nt, ir_norm_transposes);
  norm_form = 1;
  check_pass("transpose+layernorm, matmul", build_norm_transposes, 2, &in_nt, ir_norm_transposes);
  norm_form = 2;
  check_pass("transpose that is no channel move: only the one after", build_norm_transposes, 2, &in_nt,
             ir_norm_transposes);
  ir_shape in_bt = {4, {2, 3, 4, 5}};
  check_pass("transposes into binary ops", build_binary_transpose, 2, &in_bt, ir_binary_transpose);
  ir_shape in_se = {4, {2, 16, 5, 6}};
  static const char *const se_names[] = {"squeeze-excite (torchvision's EfficientNet)",
                                         "squeeze-excite (MobileNetV3: ReduceMean, Relu, HardSigmoid)",
                                         "squeeze-excite (ReduceMean-18, one bias)",
                                         "squeeze-excite scaling another tensor: not fused",
                                         "squeeze-excite with the hidden layer an output: not fused",
                                         "squeeze-excite of too many channels: not fused"};
  /* not fused, each leaves GlobalAveragePool, Conv + SiLU, Conv + Sigmoid
   * and Mul; with the hidden layer an output the SiLU stays a Mul (Sigmoid
   * its in_act) beside the first Conv */
  static const int se_live[] = {1, 1, 1, 4, 5, 4};
  ir_shape in_se_wide = {4, {2, OP_SE_MAX_CHANNELS + 1, 1, 2}};
  for (se_form = 0; se_form < 6; se_form++)
    check_pass(se_names[se_form], build_se, se_live[se_form], se_form == 5 ? &in_se_wide : &in_se, ir_se);
  ir_shape in_lay = {4, {2, 3, 9, 9}};
  layout_form = 0;
  check_layout("channels last: conv chain, pools, batchnorm, concat", build_layout_chain, &in_lay, 1, 4, 2, 0);
  layout_form = 1;
  check_layout("channels last: a channels-last value as the output", build_layout_chain, &in_lay, 1, 4, 2, 0);
  ir_shape in_bneck = {4, {2, 8, 6, 6}};
  check_layout("channels last: bottleneck, batchnorm, concat, pools", build_layout_bottleneck, &in_bneck, 1, 5, 2, 0);
  ir_shape in_dw = {4, {2, 4, 6, 6}};
  check_layout("channels last: depthwise between, not applied", build_layout_depthwise, &in_dw, 0, 2, 4, 0);
  /* HIPDNN_EP_LAYOUT_DEPTHWISE=all: the depthwise conv is chosen too (3
   * convs, the 2 Transposes at the edges; still under the pass's 2 convs a
   * Transpose, so not applied in a graph this small) */
  layout_mode = PLAN_LAYOUT_ALL;
  check_layout("channels last: depthwise between, all (A/B mode)", build_layout_depthwise, &in_dw, 0, 3, 2, 0);
  layout_mode = PLAN_LAYOUT_ALWAYS;
  ir_shape in_cnx = {4, {2, 3, 32, 24}};
  check_layout("channels last: ConvNeXt's blocks, no Transpose left inside", build_layout_convnext, &in_cnx, 1, 5, 2, 3);
  return ut_finish("test_fuse");
}
