/* Unit tests of plan/plan_precision.c (the `precision` option's pass), no
 * ORT: each graph is fused as a compiled partition is, then rewritten for
 * fp16 or bf16. Checked on the IR: the graph's inputs and outputs keep
 * fp32, one Cast per input and output, weights converted, the ops that
 * must stay fp32 do, a value crossing precisions is cast once. Checked in
 * numbers on the reference backend: the rewritten graph against the same
 * graph in fp32, within half precision's error and not equal to it (the
 * half path really ran), outputs that carry signal.
 * Tolerances (relative L2 of the output): fp16 keeps 11 significant bits
 * (unit roundoff 2^-11 = 4.9e-4), and these few-layer graphs land at 1e-4
 * to 1e-3: 1e-2 is the bar (the issue's, for whole models). bf16 keeps 8
 * (2^-8 = 3.9e-3, 8x coarser): 5e-2. Below 1e-6 nothing was rounded. */
#include <math.h>
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

static int typed_value(ir_graph *g, const char *name, int dtype, int rank, const int64_t *dims) {
  int v = IR_NONE;
  UT_OK(ir_graph_add_value(g, name, dtype, rank, dims, &v));
  return v;
}

/* A constant of deterministic values in [-scale, scale] (a hash of k). */
static int const_value(ir_graph *g, const char *name, int rank, const int64_t *dims, float base, float scale) {
  int v = value(g, name, rank, dims);
  int64_t n = ir_numel(rank, dims);
  float *d = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t k = 0; k < n; k++) {
    uint32_t h = (uint32_t)(k + 1) * 2654435761u ^ (uint32_t)(base * 1000.0f);
    d[k] = base + scale * ((float)(h % 2001u) / 1000.0f - 1.0f);
  }
  UT_OK(ir_value_set_data(g, v, d, sizeof(float) * (size_t)n));
  free(d);
  return v;
}

static int const_ints(ir_graph *g, const char *name, int n, const int64_t *vals) {
  int64_t dims[1] = {n};
  int v = typed_value(g, name, HD_DT_I64, 1, dims);
  UT_OK(ir_value_set_data(g, v, vals, sizeof(int64_t) * (size_t)n));
  return v;
}

static void node(ir_graph *g, const char *type, int opset, const int *in, int nin, int out, const attr *attrs,
                 int nattrs) {
  const op_def *def = op_find(NULL, type, opset);
  UT_CHECK(def != NULL);
  if (!def) return;
  int idx, outs[1] = {out};
  UT_OK(ir_graph_add_node(g, def->kind, type, type, opset, in, nin, outs, 1, &idx));
  attr_table t = {attrs, nattrs};
  op_attrs a = attr_table_reader(&t);
  UT_OK(def->parse(g, &g->nodes[idx], &a));
}

/* x [N,3,8,8] -> Conv(3x3, pad 1) -> BatchNormalization -> Relu ->
 * MaxPool(2x2) -> Flatten -> Gemm(transB) -> y [N,10] */
static ir_graph *build_cnn(void) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t xd[4] = {IR_DIM_DYNAMIC, 3, 8, 8}, wd[4] = {4, 3, 3, 3}, cd[1] = {4}, hd[4] = {IR_DIM_DYNAMIC, 4, 8, 8};
  int64_t pd[4] = {IR_DIM_DYNAMIC, 4, 4, 4}, fd[2] = {IR_DIM_DYNAMIC, 64}, gwd[2] = {10, 64}, gbd[1] = {10};
  int64_t yd[2] = {IR_DIM_DYNAMIC, 10};
  int x = value(g, "x", 4, xd);
  int c = value(g, "c", 4, hd), b = value(g, "b", 4, hd), r = value(g, "r", 4, hd), p = value(g, "p", 4, pd);
  int f = value(g, "f", 2, fd), y = value(g, "y", 2, yd);
  static const attr conv_attrs[] = {{.name = "pads", .n = 4, .i = {1, 1, 1, 1}}};
  int in0[3] = {x, const_value(g, "w", 4, wd, 0.0f, 0.4f), const_value(g, "wb", 1, cd, 0.1f, 0.1f)};
  node(g, "Conv", 11, in0, 3, c, conv_attrs, 1);
  int in1[5] = {c, const_value(g, "scale", 1, cd, 1.0f, 0.2f), const_value(g, "shift", 1, cd, 0.1f, 0.1f),
                const_value(g, "mean", 1, cd, 0.0f, 0.1f), const_value(g, "var", 1, cd, 1.0f, 0.3f)};
  node(g, "BatchNormalization", 15, in1, 5, b, NULL, 0);
  node(g, "Relu", 14, &b, 1, r, NULL, 0);
  static const attr pool_attrs[] = {{.name = "kernel_shape", .n = 2, .i = {2, 2}},
                                    {.name = "strides", .n = 2, .i = {2, 2}}};
  node(g, "MaxPool", 12, &r, 1, p, pool_attrs, 2);
  static const attr flat_attrs[] = {{.name = "axis", .n = -1, .i = {1}}};
  node(g, "Flatten", 13, &p, 1, f, flat_attrs, 1);
  static const attr gemm_attrs[] = {{.name = "transB", .n = -1, .i = {1}}};
  int in5[3] = {f, const_value(g, "gw", 2, gwd, 0.0f, 0.2f), const_value(g, "gb", 1, gbd, 0.0f, 0.1f)};
  node(g, "Gemm", 13, in5, 3, y, gemm_attrs, 1);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
  return g;
}

/* A pre-norm transformer block, x [N,5,8]:
 *   h = LayerNorm(x); q, k, v = h Wq, h Wk, h Wv;
 *   a = Softmax((q k^T) * 8^-0.5) v Wo; r = x + a;
 *   y = r + Gelu(LayerNorm(r) W1 + b1) W2 */
static ir_graph *build_block(void) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t xd[3] = {IR_DIM_DYNAMIC, 5, 8}, sd[3] = {IR_DIM_DYNAMIC, 5, 5}, kd[3] = {IR_DIM_DYNAMIC, 8, 5};
  int64_t ud[3] = {IR_DIM_DYNAMIC, 5, 16}, w8[2] = {8, 8}, w1[2] = {8, 16}, w2[2] = {16, 8}, d8[1] = {8},
          d16[1] = {16}, one[1] = {1};
  int x = value(g, "x", 3, xd);
  int h = value(g, "h", 3, xd), q = value(g, "q", 3, xd), k = value(g, "k", 3, xd), v = value(g, "v", 3, xd);
  int kt = value(g, "kt", 3, kd), s = value(g, "s", 3, sd), ss = value(g, "ss", 3, sd), p = value(g, "p", 3, sd);
  int o = value(g, "o", 3, xd), a = value(g, "a", 3, xd), r = value(g, "r", 3, xd), h2 = value(g, "h2", 3, xd);
  int u = value(g, "u", 3, ud), ub = value(g, "ub", 3, ud), gl = value(g, "gl", 3, ud), m = value(g, "m", 3, xd);
  int y = value(g, "y", 3, xd);
  static const attr ln_attrs[] = {{.name = "axis", .n = -1, .i = {-1}}};
  int in0[3] = {x, const_value(g, "g1", 1, d8, 1.0f, 0.2f), const_value(g, "b1", 1, d8, 0.0f, 0.1f)};
  node(g, "LayerNormalization", 17, in0, 3, h, ln_attrs, 1);
  int inq[2] = {h, const_value(g, "wq", 2, w8, 0.0f, 0.5f)}, ink[2] = {h, const_value(g, "wk", 2, w8, 0.01f, 0.5f)};
  int inv[2] = {h, const_value(g, "wv", 2, w8, 0.02f, 0.5f)};
  node(g, "MatMul", 13, inq, 2, q, NULL, 0);
  node(g, "MatMul", 13, ink, 2, k, NULL, 0);
  node(g, "MatMul", 13, inv, 2, v, NULL, 0);
  static const attr tr_attrs[] = {{.name = "perm", .n = 3, .i = {0, 2, 1}}};
  node(g, "Transpose", 13, &k, 1, kt, tr_attrs, 1);
  int ins[2] = {q, kt};
  node(g, "MatMul", 13, ins, 2, s, NULL, 0);
  int insc[2] = {s, const_value(g, "scale", 0, one, 0.35355339f, 0.0f)};
  node(g, "Mul", 14, insc, 2, ss, NULL, 0);
  static const attr sm_attrs[] = {{.name = "axis", .n = -1, .i = {-1}}};
  node(g, "Softmax", 13, &ss, 1, p, sm_attrs, 1);
  int ino[2] = {p, v};
  node(g, "MatMul", 13, ino, 2, o, NULL, 0);
  int ina[2] = {o, const_value(g, "wo", 2, w8, 0.0f, 0.5f)};
  node(g, "MatMul", 13, ina, 2, a, NULL, 0);
  int inr[2] = {x, a};
  node(g, "Add", 14, inr, 2, r, NULL, 0);
  int in2[3] = {r, const_value(g, "g2", 1, d8, 1.0f, 0.2f), const_value(g, "b2", 1, d8, 0.0f, 0.1f)};
  node(g, "LayerNormalization", 17, in2, 3, h2, ln_attrs, 1);
  int inu[2] = {h2, const_value(g, "w1", 2, w1, 0.0f, 0.5f)};
  node(g, "MatMul", 13, inu, 2, u, NULL, 0);
  int inub[2] = {u, const_value(g, "bb1", 1, d16, 0.0f, 0.2f)};
  node(g, "Add", 14, inub, 2, ub, NULL, 0);
  node(g, "Gelu", 20, &ub, 1, gl, NULL, 0);
  int inm[2] = {gl, const_value(g, "w2", 2, w2, 0.0f, 0.4f)};
  node(g, "MatMul", 13, inm, 2, m, NULL, 0);
  int iny[2] = {r, m};
  node(g, "Add", 14, iny, 2, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
  return g;
}

/* x [2,6] -> MatMul(w) = m; y = (CumSum(m, 1) + ReduceSum(m, [1])) + Exp(m):
 * ops that stay fp32 (CumSum always; ReduceSum and Exp under fp16). */
static ir_graph *build_kept(void) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t xd[2] = {2, 6}, wd[2] = {6, 6}, rd[2] = {2, 1}, ax[1] = {1};
  int x = value(g, "x", 2, xd), m = value(g, "m", 2, xd), rs = value(g, "rs", 2, rd), cs = value(g, "cs", 2, xd);
  int e = value(g, "e", 2, xd), t = value(g, "t", 2, xd), y = value(g, "y", 2, xd);
  int in0[2] = {x, const_value(g, "w", 2, wd, 0.0f, 0.5f)};
  node(g, "MatMul", 13, in0, 2, m, NULL, 0);
  int axis0d = typed_value(g, "axis", HD_DT_I64, 0, NULL);
  UT_OK(ir_value_set_data(g, axis0d, ax, sizeof ax));
  int in1[2] = {m, axis0d};
  node(g, "CumSum", 14, in1, 2, cs, NULL, 0);
  int in2[2] = {m, const_ints(g, "axes", 1, ax)};
  node(g, "ReduceSum", 13, in2, 2, rs, NULL, 0);
  node(g, "Exp", 13, &m, 1, e, NULL, 0);
  int in3[2] = {cs, rs};
  node(g, "Add", 14, in3, 2, t, NULL, 0);
  int in4[2] = {t, e};
  node(g, "Add", 14, in4, 2, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
  return g;
}

/* x [2,4] -> MatMul(w) -> Add(mask [1,4] = 0, -3.4e38, 0, 0) -> Softmax -> y:
 * an additive mask at fp32's lowest value, as transformers exporters write. */
static ir_graph *build_mask(void) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t xd[2] = {2, 4}, wd[2] = {4, 4}, md[2] = {1, 4};
  int x = value(g, "x", 2, xd), m = value(g, "m", 2, xd), s = value(g, "s", 2, xd), y = value(g, "y", 2, xd);
  int in0[2] = {x, const_value(g, "w", 2, wd, 0.0f, 0.5f)};
  node(g, "MatMul", 13, in0, 2, m, NULL, 0);
  int mask = value(g, "mask", 2, md);
  const float mv[4] = {0.0f, -3.4028234663852886e38f, 0.0f, 0.0f};
  UT_OK(ir_value_set_data(g, mask, mv, sizeof mv));
  int in1[2] = {m, mask};
  node(g, "Add", 14, in1, 2, s, NULL, 0);
  static const attr sm_attrs[] = {{.name = "axis", .n = -1, .i = {-1}}};
  node(g, "Softmax", 13, &s, 1, y, sm_attrs, 1);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
  return g;
}

/* x [3,8] -> MatMul(w1) -> Relu = y1 (an output, read again) ->
 * MatMul(w2) = y2: the second MatMul reads y1's half value, not a cast of
 * the fp32 output; and Pad(y1, constant_value 0.5) = y3, whose value input
 * must follow the data's type. */
static ir_graph *build_reused_output(void) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t xd[2] = {3, 8}, wd[2] = {8, 8}, pd[2] = {5, 8}, one[1] = {1};
  int x = value(g, "x", 2, xd), m = value(g, "m", 2, xd), y1 = value(g, "y1", 2, xd), y2 = value(g, "y2", 2, xd);
  int y3 = value(g, "y3", 2, pd);
  int in0[2] = {x, const_value(g, "w1", 2, wd, 0.0f, 0.5f)};
  node(g, "MatMul", 13, in0, 2, m, NULL, 0);
  node(g, "Relu", 14, &m, 1, y1, NULL, 0);
  int in1[2] = {y1, const_value(g, "w2", 2, wd, 0.01f, 0.5f)};
  node(g, "MatMul", 13, in1, 2, y2, NULL, 0);
  const int64_t pads[4] = {1, 0, 1, 0};
  int in2[3] = {y1, const_ints(g, "pads", 4, pads), const_value(g, "pad_value", 0, one, 0.5f, 0.0f)};
  node(g, "Pad", 18, in2, 3, y3, NULL, 0);
  int outs[3] = {y1, y2, y3};
  UT_OK(ir_graph_set_io(g, &x, 1, outs, 3));
  return g;
}

/* ---- running ---- */

static int is_half(int dt) { return dt == HD_DT_F16 || dt == HD_DT_BF16; }

/* Runs g on ref at input shape in (input x, fp32), every value known on the
 * host folded as the EP's plans fold them; returns output k (malloc'ed). */
static float *run_ref(const ir_graph *g, const ir_shape *in, const float *x, int k, size_t *nout) {
  be_module *m = NULL;
  be_host host = {0};
  UT_OK(be_module_open("ref", &host, &m));
  be_options opts = {0};
  be_context *ctx = NULL;
  be_graph *bg = NULL;
  be_plan *bp = NULL;
  ir_plan *p = NULL;
  float *y = NULL;
  void *outs[4] = {0};
  UT_OK(be_context_create(m, 0, &opts, &(be_alloc){0}, &ctx));
  UT_OK(be_graph_compile(m, ctx, g, &bg));
  const plan_eval eval = {NULL, ref_step_run, NULL};
  UT_OK(plan_create(g, in, &eval, &p));
  if (bg && p) {
    UT_OK(be_plan_compile(m, bg, p, &bp));
    for (int j = 0; j < g->noutputs && j < 4; j++) {
      const ir_tensor *t = &p->t[g->outputs[j]];
      UT_CHECK(t->dtype == HD_DT_F32);
      outs[j] = calloc((size_t)ir_numel(t->rank, t->dims) + 1, sizeof(float));
    }
    *nout = (size_t)ir_numel(p->t[g->outputs[k]].rank, p->t[g->outputs[k]].dims);
    void *ins[1] = {(void *)x};
    if (bp) UT_OK(be_plan_run(m, bp, ins, outs, NULL));
    y = outs[k];
    outs[k] = NULL;
  }
  for (int j = 0; j < 4; j++) free(outs[j]);
  be_plan_free(m, bp);
  plan_free(p);
  be_graph_free(m, bg);
  be_context_destroy(m, ctx);
  be_module_close(m);
  return y;
}

/* The reference backend's answer to plan_precision's support question. */
static be_module *ref_module;
static be_context *ref_ctx;
static hd_status *ref_supports(void *ctx, const ir_graph *g, int node) {
  (void)ctx;
  return be_supports_node(ref_module, ref_ctx, g, node);
}

/* g fused, then rewritten as o asks; *rep says what the pass did. */
static ir_graph *rewrite_opts(ir_graph *(*build)(void), const plan_precision_opts *o, plan_precision_report *rep) {
  ir_graph *g = build();
  UT_OK(ir_graph_finalize(g));
  int nfused = 0;
  UT_OK(plan_fuse(g, &nfused));
  plan_support sup = {NULL, ref_supports};
  UT_OK(plan_precision(g, o, &sup, rep));
  return g;
}

/* ... with the options' defaults: a matmul's GELU in the tanh form, no
 * first ops kept fp32. */
static ir_graph *rewrite(ir_graph *(*build)(void), int half, plan_precision_report *rep) {
  plan_precision_opts o = {half, 1, 0};
  return rewrite_opts(build, &o, rep);
}

static ir_graph *rewrite_gelu(ir_graph *(*build)(void), int half, int gelu_tanh, plan_precision_report *rep) {
  plan_precision_opts o = {half, gelu_tanh, 0};
  return rewrite_opts(build, &o, rep);
}

/* rel L2 of output k of `half`'s rewrite of build against its fp32 graph,
 * on an input of shape in; checks finiteness, signal and the bounds. */
static double compare_numbers(const char *name, ir_graph *(*build)(void), int half, const ir_shape *in, int k) {
  ir_graph *ref = build(), *got;
  UT_OK(ir_graph_finalize(ref));
  int nfused = 0;
  UT_OK(plan_fuse(ref, &nfused));
  plan_precision_report rep;
  got = rewrite(build, half, &rep);
  size_t n = (size_t)ir_numel(in->rank, in->dims);
  float *x = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) x[i] = sinf((float)i * 0.37f + 0.2f) * 1.5f;
  size_t na = 0, nb = 0;
  float *a = run_ref(ref, in, x, k, &na), *b = run_ref(got, in, x, k, &nb);
  double d2 = 0, r2 = 0, lo = INFINITY, hi = -INFINITY;
  int finite = a && b && na == nb && na > 0;
  for (size_t i = 0; finite && i < na; i++) {
    if (!isfinite(b[i]) || !isfinite(a[i])) finite = 0;
    d2 += ((double)b[i] - a[i]) * ((double)b[i] - a[i]);
    r2 += (double)a[i] * a[i];
    lo = fmin(lo, a[i]);
    hi = fmax(hi, a[i]);
  }
  double rel = r2 > 0 ? sqrt(d2 / r2) : INFINITY;
  double limit = half == HD_DT_F16 ? 1e-2 : 5e-2;
  const char *hn = half == HD_DT_F16 ? "fp16" : "bf16";
  UT_CHECKF(finite, "%s %s: outputs missing or not finite", name, hn);
  UT_CHECKF(hi - lo > 1e-3 * fmax(fabs(hi), fabs(lo)), "%s %s: the output carries no signal (%g .. %g)", name, hn,
            lo, hi);
  UT_CHECKF(rel <= limit, "%s %s: rel L2 %.3g against fp32, limit %g", name, hn, rel, limit);
  UT_CHECKF(rel > 1e-6, "%s %s: rel L2 %.3g: the output was not computed in half precision", name, hn, rel);
  printf("%-14s %s: rel L2 %.2e vs fp32 (limit %g); %d node(s) half, %d fp32, %d cast(s), %d constant(s)\n", name, hn,
         rel, limit, rep.half_nodes, rep.f32_nodes, rep.casts, rep.consts);
  free(a);
  free(b);
  free(x);
  ir_graph_free(ref);
  ir_graph_free(got);
  return rel;
}

/* ---- checks on the IR ---- */

static int count_casts(const ir_graph *g) {
  int n = 0;
  for (int i = 0; i < g->nnodes; i++) n += !g->nodes[i].dead && g->nodes[i].kind == OP_CAST;
  return n;
}

static const ir_node *producer_of(const ir_graph *g, int v) {
  return g->values[v].producer == IR_NONE ? NULL : &g->nodes[g->values[v].producer];
}

/* The graph's inputs and outputs are fp32; each input is read by one Cast
 * to `half` and nothing else, each output written by a Cast from `half`. */
static void check_boundary(const char *name, const ir_graph *g, int half) {
  for (int i = 0; i < g->ninputs; i++) {
    int v = g->inputs[i];
    UT_CHECKF(g->values[v].dtype == HD_DT_F32, "%s: input %d is %s", name, i, hd_dtype_name(g->values[v].dtype));
    int readers = 0, casts = 0;
    for (int j = 0; j < g->nnodes; j++) {
      const ir_node *n = &g->nodes[j];
      for (int k = 0; k < n->nin && !n->dead; k++)
        if (n->in[k] == v) {
          readers++;
          casts += n->kind == OP_CAST && g->values[n->out[0]].dtype == half;
        }
    }
    UT_CHECKF(readers == 1 && casts == 1, "%s: input %d has %d reader(s), %d cast(s) to half", name, i, readers,
              casts);
  }
  for (int i = 0; i < g->noutputs; i++) {
    int v = g->outputs[i];
    const ir_node *p = producer_of(g, v);
    UT_CHECKF(g->values[v].dtype == HD_DT_F32, "%s: output %d is %s", name, i, hd_dtype_name(g->values[v].dtype));
    UT_CHECKF(p && p->kind == OP_CAST && g->values[p->in[0]].dtype == half, "%s: output %d is not cast from half",
              name, i);
  }
}

/* Every live node but the Casts computes on half data only (no fp32 value
 * among its inputs and outputs), and every constant it reads is half. */
static void check_all_half(const char *name, const ir_graph *g, int half) {
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead || n->kind == OP_CAST) continue;
    for (int k = 0; k < n->nin; k++) {
      int v = n->in[k];
      if (v == IR_NONE || op_input_on_host(n, k, 0)) continue;
      UT_CHECKF(g->values[v].dtype != HD_DT_F32, "%s: %s '%s' reads fp32 '%s'", name, n->op_type, n->name,
                g->values[v].name);
      if (g->values[v].is_const && is_half(g->values[v].dtype))
        UT_CHECKF(g->values[v].dtype == half && g->values[v].nbytes == 2 * (size_t)ir_numel(g->values[v].rank,
                                                                                             g->values[v].dims),
                  "%s: constant '%s' not converted to half", name, g->values[v].name);
    }
    for (int k = 0; k < n->nout; k++)
      if (n->out[k] != IR_NONE)
        UT_CHECKF(g->values[n->out[k]].dtype == half, "%s: %s '%s' writes %s", name, n->op_type, n->name,
                  hd_dtype_name(g->values[n->out[k]].dtype));
  }
}

static const ir_node *find_kind(const ir_graph *g, int kind) {
  for (int i = 0; i < g->nnodes; i++)
    if (!g->nodes[i].dead && g->nodes[i].kind == kind) return &g->nodes[i];
  return NULL;
}

static int out_dtype(const ir_graph *g, int kind) {
  const ir_node *n = find_kind(g, kind);
  return n ? g->values[n->out[0]].dtype : HD_DT_UNDEFINED;
}

static void test_cnn(int half) {
  plan_precision_report rep;
  ir_graph *g = rewrite(build_cnn, half, &rep);
  check_boundary("cnn", g, half);
  check_all_half("cnn", g, half);
  UT_CHECKF(count_casts(g) == 2 && rep.casts == 2, "cnn: %d casts", count_casts(g));
  UT_CHECKF(rep.f32_nodes == 0, "cnn: %d node(s) kept fp32", rep.f32_nodes);
  /* BatchNorm was folded into the Conv in fp32, and the folded weight then
   * converted once: the Conv's weight is the half copy of the folded one */
  const ir_node *conv = find_kind(g, OP_CONV);
  UT_CHECK(conv && !find_kind(g, OP_BATCHNORM) && OP_P(conv)->conv.act.kind == OP_ACT_RELU);
  if (conv) UT_CHECK(strstr(g->values[conv->in[1]].name, "folded_weight") != NULL);
  ir_graph_free(g);
  ir_shape in = {4, {2, 3, 8, 8}};
  compare_numbers("cnn", build_cnn, half, &in, 0);
}

static void test_block(int half) {
  plan_precision_report rep;
  ir_graph *g = rewrite(build_block, half, &rep);
  check_boundary("block", g, half);
  check_all_half("block", g, half);
  UT_CHECKF(count_casts(g) == 2, "block: %d casts (one in, one out)", count_casts(g));
  UT_CHECK(out_dtype(g, OP_LAYER_NORMALIZATION) == half && out_dtype(g, OP_MATMUL) == half);
  ir_graph_free(g);
  ir_shape in = {3, {2, 5, 8}};
  compare_numbers("block", build_block, half, &in, 0);
}

/* rel L2 of output 0 of graph a against graph b on the deterministic
 * input of shape in (INFINITY if either run fails); *r2 the mean square of
 * b's output (its signal). */
static double rel_l2_between(const ir_graph *a, const ir_graph *b, const ir_shape *in, double *r2) {
  size_t n = (size_t)ir_numel(in->rank, in->dims), na = 0, nb = 0;
  float *x = malloc(sizeof(float) * n);
  for (size_t i = 0; i < n; i++) x[i] = sinf((float)i * 0.37f + 0.2f) * 1.5f;
  float *ya = run_ref(a, in, x, 0, &na), *yb = run_ref(b, in, x, 0, &nb);
  double d2 = 0, s2 = 0;
  int ok = ya && yb && na == nb && na > 0;
  for (size_t i = 0; ok && i < na; i++) {
    d2 += ((double)ya[i] - yb[i]) * ((double)ya[i] - yb[i]);
    s2 += (double)yb[i] * yb[i];
  }
  *r2 = ok ? s2 / (double)na : 0;
  free(x);
  free(ya);
  free(yb);
  return ok && s2 > 0 ? sqrt(d2 / s2) : INFINITY;
}

/* Matmuls of g carrying activation kind `act`. */
static int matmuls_with(const ir_graph *g, int act) {
  int n = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *nd = &g->nodes[i];
    n += !nd->dead && (nd->kind == OP_MATMUL || nd->kind == OP_GEMM) && (int)OP_P(nd)->gemm.act.kind == act;
  }
  return n;
}

/* half_gelu: the block's W1 matmul carries the fused exact GELU; in half
 * precision it becomes the tanh form (the default), or keeps erf
 * (half_gelu=exact); fp32 keeps erf either way. The two half forms agree
 * within twice the type's unit roundoff (1e-3 fp16, 8e-3 bf16): the forms
 * differ by at most 4.7e-4 absolute a GELU value, and each rounds its
 * value to the half type: one on each side of a rounding step differ by a
 * spacing. */
static void test_gelu_form(int half) {
  const char *hn = half == HD_DT_F16 ? "fp16" : "bf16";
  plan_precision_report rt, re, rf;
  ir_graph *gt = rewrite_gelu(build_block, half, 1, &rt), *ge = rewrite_gelu(build_block, half, 0, &re);
  ir_graph *gf = rewrite_gelu(build_block, HD_DT_F32, 1, &rf);
  UT_CHECKF(matmuls_with(gf, OP_ACT_GELU) == 1 && matmuls_with(gf, OP_ACT_GELU_TANH) == 0,
            "gelu %s: the fused fp32 block should carry one exact GELU on a matmul", hn);
  UT_CHECKF(matmuls_with(gt, OP_ACT_GELU_TANH) == 1 && matmuls_with(gt, OP_ACT_GELU) == 0 && rt.gelu_tanh == 1,
            "gelu %s: tanh form: %d tanh, %d exact, reported %d", hn, matmuls_with(gt, OP_ACT_GELU_TANH),
            matmuls_with(gt, OP_ACT_GELU), rt.gelu_tanh);
  UT_CHECKF(matmuls_with(ge, OP_ACT_GELU) == 1 && matmuls_with(ge, OP_ACT_GELU_TANH) == 0 && re.gelu_tanh == 0,
            "gelu %s: exact kept: %d exact, %d tanh", hn, matmuls_with(ge, OP_ACT_GELU),
            matmuls_with(ge, OP_ACT_GELU_TANH));
  ir_shape in = {3, {2, 5, 8}};
  double r2 = 0, rel = rel_l2_between(gt, ge, &in, &r2);
  double limit = half == HD_DT_F16 ? 1e-3 : 8e-3;
  UT_CHECKF(rel <= limit, "gelu %s: tanh against exact form rel L2 %.3g (limit %g)", hn, rel, limit);
  UT_CHECKF(r2 > 1e-6, "gelu %s: the block's output carries no signal", hn);
  printf("gelu form     %s: tanh against exact rel L2 %.2e (limit %g)\n", hn, rel, limit);
  ir_graph_free(gt);
  ir_graph_free(ge);
  ir_graph_free(gf);
}

/* fp32_first_layers: with 1, the CNN's Conv (its first tensor-core op)
 * and what follows its data (Relu, MaxPool) stay fp32, its Gemm is half;
 * with 2 nothing computes in half precision and the output is fp32's. */
static void test_fp32_first(int half) {
  const char *hn = half == HD_DT_F16 ? "fp16" : "bf16";
  plan_precision_report r1, r2, rf;
  plan_precision_opts o1 = {half, 1, 1}, o2 = {half, 1, 2}, of = {HD_DT_F32, 1, 0};
  ir_graph *g1 = rewrite_opts(build_cnn, &o1, &r1), *g2 = rewrite_opts(build_cnn, &o2, &r2);
  ir_graph *gf = rewrite_opts(build_cnn, &of, &rf);
  UT_CHECKF(out_dtype(g1, OP_CONV) == HD_DT_F32 && out_dtype(g1, OP_MAX_POOL) == HD_DT_F32 &&
                out_dtype(g1, OP_GEMM) == half && r1.fp32_first == 1,
            "fp32_first=1 %s: conv %s, pool %s, gemm %s, %d kept", hn, hd_dtype_name(out_dtype(g1, OP_CONV)),
            hd_dtype_name(out_dtype(g1, OP_MAX_POOL)), hd_dtype_name(out_dtype(g1, OP_GEMM)), r1.fp32_first);
  UT_CHECKF(r2.half_nodes == 0 && count_casts(g2) == 0 && r2.fp32_first == 2,
            "fp32_first=2 %s: %d half node(s), %d cast(s), %d kept", hn, r2.half_nodes, count_casts(g2),
            r2.fp32_first);
  ir_shape in = {4, {2, 3, 8, 8}};
  double s1 = 0, s2 = 0, rel1 = rel_l2_between(g1, gf, &in, &s1), rel2 = rel_l2_between(g2, gf, &in, &s2);
  double limit = half == HD_DT_F16 ? 1e-2 : 5e-2;
  UT_CHECKF(rel1 <= limit && rel1 > 1e-6, "fp32_first=1 %s: rel L2 %.3g against fp32 (limit %g, and not 0)", hn,
            rel1, limit);
  UT_CHECKF(rel2 <= 1e-6 && s2 > 1e-6, "fp32_first=2 %s: rel L2 %.3g against fp32 (expected fp32's own)", hn, rel2);
  printf("fp32 first    %s: 1 kept rel L2 %.2e, 2 kept %.2e vs fp32\n", hn, rel1, rel2);
  ir_graph_free(g1);
  ir_graph_free(g2);
  ir_graph_free(gf);
}

/* fp32_first_layers on the transformer block: with 1, the first
 * LayerNorm, which runs ahead of the first matmul on the graph input,
 * stays fp32 too (with 0 it is half); the residual Add, after the kept
 * matmul, reads the input in half again. */
static void test_fp32_first_ahead(int half) {
  const char *hn = half == HD_DT_F16 ? "fp16" : "bf16";
  for (int keep = 0; keep < 2; keep++) {
    plan_precision_report rep;
    plan_precision_opts o = {half, 1, keep};
    ir_graph *g = rewrite_opts(build_block, &o, &rep);
    const ir_node *ln = find_kind(g, OP_LAYER_NORMALIZATION);
    int want = keep ? HD_DT_F32 : half;
    const ir_node *src = ln ? producer_of(g, ln->in[0]) : NULL; /* none: it reads x; else x's Cast */
    int reads_x = ln && (keep ? ln->in[0] == g->inputs[0] : src && src->kind == OP_CAST && src->in[0] == g->inputs[0]);
    UT_CHECKF(reads_x && g->values[ln->out[0]].dtype == want,
              "fp32_first=%d %s: the LayerNorm on the input computes in %s, not %s", keep, hn,
              ln ? hd_dtype_name(g->values[ln->out[0]].dtype) : "?", hd_dtype_name(want));
    UT_CHECKF(rep.fp32_first == keep && rep.half_nodes > 0, "fp32_first=%d %s: %d kept, %d half", keep, hn,
              rep.fp32_first, rep.half_nodes);
    ir_graph_free(g);
  }
}

static void test_kept(int half) {
  plan_precision_report rep;
  ir_graph *g = rewrite(build_kept, half, &rep);
  /* CumSum stays fp32 at both; ReduceSum and Exp only under fp16 */
  UT_CHECK(out_dtype(g, OP_MATMUL) == half);
  UT_CHECK(out_dtype(g, OP_CUMSUM) == HD_DT_F32);
  int range_kept = half == HD_DT_F16 ? HD_DT_F32 : half;
  UT_CHECK(out_dtype(g, OP_REDUCE_SUM) == range_kept && out_dtype(g, OP_EXP) == range_kept);
  /* the MatMul's output is cast to fp32 once, for all its fp32 readers */
  int to_f32 = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (!n->dead && n->kind == OP_CAST && g->values[n->in[0]].dtype == half && n->out[0] != g->outputs[0])
      to_f32++;
  }
  UT_CHECKF(to_f32 == 1, "kept: the MatMul's output is cast to fp32 %d times", to_f32);
  /* fp16: input cast, m to fp32, and the fp32 sums make y in fp32 (no cast);
   * bf16: input, m to fp32 for CumSum, CumSum's sum back to half, output */
  int want = half == HD_DT_F16 ? 2 : 4;
  UT_CHECKF(count_casts(g) == want, "kept: %d casts, expected %d", count_casts(g), want);
  UT_CHECK(g->values[g->outputs[0]].dtype == HD_DT_F32);
  ir_graph_free(g);
  ir_shape in = {2, {2, 6}};
  compare_numbers("kept", build_kept, half, &in, 0);
}

static void test_mask(int half) {
  plan_precision_report rep;
  ir_graph *g = rewrite(build_mask, half, &rep);
  const ir_node *add = find_kind(g, OP_ADD);
  const ir_node *mm = find_kind(g, OP_MATMUL);
  /* fused into the MatMul's C, or an Add: either way the mask is half and finite */
  int mv = add ? add->in[1] : mm && mm->nin > 2 ? mm->in[2] : IR_NONE;
  UT_CHECK(mv != IR_NONE);
  if (mv != IR_NONE) {
    const ir_value *m = &g->values[mv];
    UT_CHECK(m->dtype == half && m->data && m->nbytes == 8);
    if (m->data && m->nbytes == 8) {
      uint16_t h[4];
      memcpy(h, m->data, sizeof h);
      float low = half == HD_DT_F16 ? hd_f16_to_f32(h[1]) : hd_bf16_to_f32(h[1]);
      float top = half == HD_DT_F16 ? -65504.0f : -3.38953139e38f;
      UT_CHECKF(low == top, "mask: -3.4e38 became %g, expected %g (saturated)", low, top);
    }
  }
  ir_graph_free(g);
  /* the masked column's probability is 0 and every row sums to 1 */
  g = rewrite(build_mask, half, &rep);
  ir_shape in = {2, {2, 4}};
  float x[8];
  for (int i = 0; i < 8; i++) x[i] = sinf((float)i);
  size_t n = 0;
  float *y = run_ref(g, &in, x, 0, &n);
  UT_CHECK(y && n == 8);
  for (int r = 0; y && n == 8 && r < 2; r++) {
    double sum = 0;
    for (int c = 0; c < 4; c++) {
      UT_CHECK(isfinite(y[r * 4 + c]));
      sum += y[r * 4 + c];
    }
    UT_CHECKF(y[r * 4 + 1] == 0.0f && fabs(sum - 1.0) < 1e-2, "mask: row %d: masked %g, sum %g", r, y[r * 4 + 1],
              sum);
  }
  free(y);
  ir_graph_free(g);
}

static void test_reused_output(int half) {
  plan_precision_report rep;
  ir_graph *g = rewrite(build_reused_output, half, &rep);
  check_boundary("reused", g, half);
  check_all_half("reused", g, half);
  UT_CHECKF(count_casts(g) == 4, "reused: %d casts (one in, three out)", count_casts(g));
  /* the second MatMul and the Pad read the first MatMul's half output */
  int first = IR_NONE;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead || n->kind != OP_MATMUL) continue;
    if (first == IR_NONE) first = n->out[0];
    else UT_CHECK(n->in[0] == first);
  }
  const ir_node *pad = find_kind(g, OP_PAD);
  UT_CHECK(pad && pad->in[0] == first && g->values[pad->in[2]].dtype == half);
  ir_graph_free(g);
  ir_shape in = {2, {3, 8}};
  for (int k = 0; k < 3; k++) compare_numbers(k == 0 ? "reused y1" : k == 1 ? "reused y2" : "reused y3",
                                              build_reused_output, half, &in, k);
}

/* ConvNeXt's residual, channels last inside the block: x [N,4,6] ->
 * Transpose(0,2,1) -> MatMul W [4,4] -> m [N,6,4] -> Transpose(0,2,1) ->
 * Add x -> y [N,4,6]. The second Transpose is fused into the Add (it reads
 * m through the permutation), and the Add runs in half precision: its check
 * compares the dims as it reads them, [N,4,6] and [N,4,6], not m's
 * [N,6,4] (which kept every such Add of ConvNeXt in fp32 behind casts). */
static ir_graph *build_transposed_residual(void) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t xd[3] = {IR_DIM_DYNAMIC, 4, 6}, td[3] = {IR_DIM_DYNAMIC, 6, 4}, wd[2] = {4, 4};
  int x = value(g, "x", 3, xd), t = value(g, "t", 3, td), m = value(g, "m", 3, td), mt = value(g, "mt", 3, xd);
  int y = value(g, "y", 3, xd);
  static const attr tr_attrs[] = {{.name = "perm", .n = 3, .i = {0, 2, 1}}};
  node(g, "Transpose", 13, &x, 1, t, tr_attrs, 1);
  int inm[2] = {t, const_value(g, "w", 2, wd, 0.0f, 0.5f)};
  node(g, "MatMul", 13, inm, 2, m, NULL, 0);
  node(g, "Transpose", 13, &m, 1, mt, tr_attrs, 1);
  int ina[2] = {mt, x};
  node(g, "Add", 14, ina, 2, y, NULL, 0);
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
  return g;
}

static void test_transposed_residual(int half) {
  plan_precision_report rep;
  ir_graph *g = rewrite(build_transposed_residual, half, &rep);
  const ir_node *add = find_kind(g, OP_ADD);
  UT_CHECK(add && OP_P(add)->binary.permuted);
  UT_CHECKF(out_dtype(g, OP_ADD) == half && rep.f32_nodes == 0, "transposed residual: the Add writes %s, %d node(s) "
            "kept fp32", hd_dtype_name(out_dtype(g, OP_ADD)), rep.f32_nodes);
  check_boundary("transposed residual", g, half);
  ir_graph_free(g);
  ir_shape in = {3, {2, 4, 6}};
  compare_numbers("transposed residual", build_transposed_residual, half, &in, 0);
}

/* fp32 changes nothing; another type is refused. */
static void test_noop(void) {
  ir_graph *g = build_cnn();
  UT_OK(ir_graph_finalize(g));
  int before = g->nnodes, nv = g->nvalues;
  plan_precision_report rep;
  plan_precision_opts o32 = {HD_DT_F32, 1, 0}, o64 = {HD_DT_F64, 1, 0};
  UT_OK(plan_precision(g, &o32, NULL, &rep));
  UT_CHECK(g->nnodes == before && g->nvalues == nv && rep.half_nodes == 0 && rep.casts == 0);
  UT_ERR(plan_precision(g, &o64, NULL, &rep), HD_ERR_INVALID_ARG);
  ir_graph_free(g);
}

int main(void) {
  be_host host = {0};
  UT_OK(be_module_open("ref", &host, &ref_module));
  be_options opts = {0};
  UT_OK(be_context_create(ref_module, 0, &opts, &(be_alloc){0}, &ref_ctx));
  test_noop();
  const int halves[2] = {HD_DT_F16, HD_DT_BF16};
  for (int h = 0; h < 2; h++) {
    test_cnn(halves[h]);
    test_block(halves[h]);
    test_gelu_form(halves[h]);
    test_fp32_first(halves[h]);
    test_fp32_first_ahead(halves[h]);
    test_kept(halves[h]);
    test_mask(halves[h]);
    test_reused_output(halves[h]);
    test_transposed_residual(halves[h]);
  }
  be_context_destroy(ref_module, ref_ctx);
  be_module_close(ref_module);
  return ut_finish("test_precision");
}
