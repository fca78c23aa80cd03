/* plan_fuse: the fusion passes, vendor-free.
 *
 * Each pass matches a producer -> consumer pair where the intermediate value
 * has one use and is not a partition output, folds the consumer into the
 * producer's parameters, and marks the consumer dead. Every backend runs the
 * fused parameters (ref applies them in its loops; GPU backends fuse them
 * into one library graph or an epilogue), so passes need no backend opt-in.
 *   1. BatchNormalization after Conv: folded into Conv's weights and bias.
 *   2. Add after Conv (a residual of the same shape): Conv's residual input.
 *   3. Add of a constant [N] bias after MatMul (any rank): Gemm's C; a
 *      scalar Mul or Div after MatMul: its alpha; a constant per-column
 *      Mul after MatMul of a constant weight: the weight and bias, scaled.
 *   4. An activation after Conv, Gemm/MatMul, Add or BatchNormalization:
 *      the producer's act;
 *      one feeding a Mul, the Mul's in_act (4b); a SwiGLU over two
 *      MatMulNBits of one input, one MatMulNBits under glu (4c).
 * Before them, contrib ops that are several ops in one are lowered into
 * them (op_def.lower), a Conv whose stride is its kernel becomes a
 * Transpose and a MatMul (plan_fuse_patchify.c), squeeze-and-excitation
 * blocks become one
 * SqueezeExcite (plan_fuse_se.c) and a GELU written out in elementary ops
 * becomes one Gelu (0); after the scale pass, attention written out becomes one
 * Attention (plan_fuse_attention.c), and after the epilogue passes the
 * MatMuls of its Q, K and V from one input become one MatMul and a Split
 * (plan_fuse_projections.c); then an Add before a layer norm
 * becomes the norm's skip input (5); last, Transposes move into the layer
 * norms (6) and elementwise binary ops (7) that read or write them.
 * plan_fuse_late runs after plan_layout: 3c again (ConvNeXt's layer scale
 * meets its MatMul through a Transpose before the layout), then an Add of
 * a value shaped like a MatMul's output becomes the MatMul's residual
 * input (8). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "plan/plan_fuse.h"
#include "ops/ops.h"

int pf_is_kind(const ir_node *n, op_kind k) { return !n->dead && n->kind == (int)k; }

ir_node *pf_sole_producer(ir_graph *g, int v) {
  if (v == IR_NONE) return NULL;
  const ir_value *val = &g->values[v];
  if (val->producer == IR_NONE || val->nuses != 1 || val->graph_output != IR_NONE) return NULL;
  ir_node *p = &g->nodes[val->producer];
  return p->dead ? NULL : p;
}

static int is_const_f(const ir_graph *g, int v, int dtype) {
  return v != IR_NONE && g->values[v].is_const && g->values[v].data && g->values[v].dtype == dtype;
}

/* Moves the fused producer into the consumer's slot (so it runs after every
 * input the consumer had) and takes over the consumer's output. */
static void fuse_into(ir_node *producer, ir_node *consumer) {
  ir_node_absorb(producer, consumer);
  int *in = consumer->in, *out = consumer->out;
  char *name = consumer->name, *type = consumer->op_type, *fused = consumer->fused;
  int keep_out = out[0];
  *consumer = *producer;
  consumer->out[0] = keep_out;
  free(in);
  free(out == consumer->out ? NULL : out);
  free(name);
  free(type);
  free(fused);
  memset(producer, 0, sizeof *producer);
  producer->dead = 1;
  producer->kind = OP_UNKNOWN;
}

static hd_status *add_const(ir_graph *g, const char *base, const char *suffix, int dtype, int rank,
                            const int64_t *dims, const void *data, size_t bytes, int *idx) {
  char name[512];
  snprintf(name, sizeof name, "%s/%s", base, suffix);
  HD_TRY(ir_graph_add_value(g, name, dtype, rank, dims, idx));
  return ir_value_set_data(g, *idx, data, bytes);
}

static double load_f(int dtype, const void *p, size_t i) {
  if (dtype == HD_DT_F16) return hd_f16_to_f32(((const uint16_t *)p)[i]);
  if (dtype == HD_DT_BF16) return hd_bf16_to_f32(((const uint16_t *)p)[i]);
  return ((const float *)p)[i];
}

static void store_f(int dtype, void *p, size_t i, double v) {
  if (dtype == HD_DT_F16) ((uint16_t *)p)[i] = hd_f32_to_f16((float)v);
  else if (dtype == HD_DT_BF16) ((uint16_t *)p)[i] = hd_f32_to_bf16((float)v);
  else ((float *)p)[i] = (float)v;
}

/* 1. Conv -> BatchNormalization: w' = w * s, b' = (b - mean) * s + beta,
 *    s = scale / sqrt(var + eps), per output channel, computed in double. */
static hd_status *fold_batchnorm(ir_graph *g, int bi, int *changed) {
  ir_node *bn = &g->nodes[bi];
  if (!pf_is_kind(bn, OP_BATCHNORM) || bn->nin < 5 || bn->nout != 1 || OP_P(bn)->batchnorm.act.kind != OP_ACT_NONE)
    return NULL;
  ir_node *conv = pf_sole_producer(g, bn->in[0]);
  if (!conv || conv->kind != OP_CONV || OP_P(conv)->conv.act.kind != OP_ACT_NONE || OP_P(conv)->conv.has_residual)
    return NULL;
  int dt = g->values[conv->in[1]].dtype;
  if (!is_const_f(g, conv->in[1], dt)) return NULL;
  if (OP_P(conv)->conv.has_bias && !is_const_f(g, conv->in[2], dt)) return NULL;
  for (int k = 1; k < 5; k++)
    if (!is_const_f(g, bn->in[k], dt)) return NULL;
  const ir_value *w = &g->values[conv->in[1]];
  int64_t m = w->dims[0];
  if (m <= 0 || w->rank < 3) return NULL;
  for (int k = 1; k < 5; k++)
    if (g->values[bn->in[k]].rank != 1 || g->values[bn->in[k]].dims[0] != m) return NULL;
  size_t per = (size_t)(ir_numel(w->rank, w->dims) / m), esz = hd_dtype_size(dt);
  void *nw = malloc(w->nbytes ? w->nbytes : 1), *nb = malloc((size_t)m * esz);
  if (!nw || !nb) {
    free(nw);
    free(nb);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "fold_batchnorm: out of host memory");
  }
  const void *scale = g->values[bn->in[1]].data, *beta = g->values[bn->in[2]].data;
  const void *mean = g->values[bn->in[3]].data, *var = g->values[bn->in[4]].data;
  const void *bias = OP_P(conv)->conv.has_bias ? g->values[conv->in[2]].data : NULL;
  double eps = OP_P(bn)->batchnorm.epsilon;
  for (int64_t c = 0; c < m; c++) {
    double s = load_f(dt, scale, (size_t)c) / sqrt(load_f(dt, var, (size_t)c) + eps);
    for (size_t i = 0; i < per; i++)
      store_f(dt, nw, (size_t)c * per + i, load_f(dt, w->data, (size_t)c * per + i) * s);
    double b = bias ? load_f(dt, bias, (size_t)c) : 0.0;
    store_f(dt, nb, (size_t)c, (b - load_f(dt, mean, (size_t)c)) * s + load_f(dt, beta, (size_t)c));
  }
  int wv, bv;
  int64_t wdims[IR_MAX_RANK];
  memcpy(wdims, w->dims, sizeof wdims);
  int wrank = w->rank;
  size_t wbytes = w->nbytes;
  hd_status *st = add_const(g, bn->name, "folded_weight", dt, wrank, wdims, nw, wbytes, &wv);
  if (!st) st = add_const(g, bn->name, "folded_bias", dt, 1, &m, nb, (size_t)m * esz, &bv);
  free(nw);
  free(nb);
  if (st) return st;
  conv = &g->nodes[g->values[bn->in[0]].producer]; /* the node array may not move, but values did */
  if (conv->nin < 3) {
    int *in = realloc(conv->in, sizeof(int) * 3);
    if (!in) return hd_error(HD_ERR_OUT_OF_MEMORY, "fold_batchnorm: out of host memory");
    conv->in = in;
    conv->nin = 3;
  }
  conv->in[1] = wv;
  conv->in[2] = bv;
  OP_P(conv)->conv.has_bias = 1;
  fuse_into(conv, bn);
  *changed = 1;
  return NULL;
}

/* The shapes are equal at every run: each dim static and equal, or the
 * same named symbol (an Add of two unknown dims might broadcast, which a
 * fused residual does not do). */
int pf_same_shape(const ir_value *a, const ir_value *b) {
  if (a->rank < 0 || a->rank != b->rank || a->dtype != b->dtype) return 0;
  for (int i = 0; i < a->rank; i++)
    if (!ir_dims_equal(a, i, b, i)) return 0;
  return 1;
}

/* The residual flag of a Conv or MatMul node (NULL for other kinds): set
 * when input 3 is its residual. */
static int *residual_flag(ir_node *n) {
  if (n->kind == OP_CONV && OP_P(n)->conv.act.kind == OP_ACT_NONE) return &OP_P(n)->conv.has_residual;
  if (n->kind == OP_MATMUL && OP_P(n)->gemm.act.kind == OP_ACT_NONE) return &OP_P(n)->gemm.has_residual;
  return NULL;
}

/* The Add at ai after a node of kind `kind` (its sole reader) and a value
 * of the sum's shape: that value becomes the node's residual input 3 and
 * the Add folds into it (2 for Conv, 8 for MatMul). */
static hd_status *fuse_residual_of(ir_graph *g, int ai, op_kind kind, int *changed) {
  ir_node *add = &g->nodes[ai];
  if (!pf_is_kind(add, OP_ADD) || add->nin != 2 || OP_P(add)->binary.act.kind != OP_ACT_NONE ||
      OP_P(add)->binary.in_act.kind != OP_ACT_NONE || OP_P(add)->binary.permuted)
    return NULL;
  for (int side = 0; side < 2; side++) {
    ir_node *p = pf_sole_producer(g, add->in[side]);
    int other = add->in[1 - side], *flag = p && p->kind == (int)kind ? residual_flag(p) : NULL;
    if (!flag || *flag || other == add->in[side] ||
        !pf_same_shape(&g->values[add->in[side]], &g->values[other]) ||
        !pf_same_shape(&g->values[add->out[0]], &g->values[other]))
      continue;
    int *in = realloc(p->in, sizeof(int) * 4);
    if (!in) return hd_error(HD_ERR_OUT_OF_MEMORY, "fusing a residual: out of host memory");
    p->in = in;
    if (p->nin < 3) p->in[2] = IR_NONE;
    p->in[3] = other;
    p->nin = 4;
    *flag = 1;
    fuse_into(p, add);
    *changed = 1;
    return NULL;
  }
  return NULL;
}

/* 2. Conv -> Add(other): other becomes Conv's residual input. */
static hd_status *fuse_residual(ir_graph *g, int ai, int *changed) {
  return fuse_residual_of(g, ai, OP_CONV, changed);
}

static int in_family(const ir_node *n, const char *family);

/* 3. MatMul(A, B) -> Add(const bias of [N] or [1, N]): Gemm-style C; a
 *    contrib GELU with a bias (BiasGelu, FastGelu) brings its act too. */
static hd_status *fuse_matmul_bias(ir_graph *g, int ai, int *changed) {
  ir_node *add = &g->nodes[ai];
  op_act act = {.kind = OP_ACT_NONE};
  int gelu = in_family(add, "unary") && OP_P(add)->unary.has_bias;
  if (gelu) act = OP_P(add)->unary.act;
  else if (!pf_is_kind(add, OP_ADD) || add->nin != 2 || OP_P(add)->binary.act.kind != OP_ACT_NONE) return NULL;
  for (int side = 0; side < (gelu ? 1 : 2); side++) {
    ir_node *mm = pf_sole_producer(g, add->in[side]);
    int bias = add->in[1 - side];
    if (!mm || !pf_is_kind(mm, OP_MATMUL) || OP_P(mm)->gemm.has_c || OP_P(mm)->gemm.act.kind != OP_ACT_NONE) continue;
    const ir_value *y = &g->values[add->in[side]], *b = &g->values[bias];
    if (!b->is_const || b->dtype != y->dtype || y->rank < 2 || y->dims[y->rank - 1] < 0) continue;
    int64_t n = y->dims[y->rank - 1];
    /* [N] or [1, N]: one row added to every output row */
    int ok = (b->rank == 1 && b->dims[0] == n) || (b->rank == 2 && b->dims[0] == 1 && b->dims[1] == n);
    if (!ok) continue;
    int *in = realloc(mm->in, sizeof(int) * 3);
    if (!in) return hd_error(HD_ERR_OUT_OF_MEMORY, "fuse_matmul_bias: out of host memory");
    mm->in = in;
    mm->in[2] = bias;
    mm->nin = 3;
    OP_P(mm)->gemm.has_c = 1;
    OP_P(mm)->gemm.beta = 1.0f;
    OP_P(mm)->gemm.act = act;
    fuse_into(mm, add);
    *changed = 1;
    return NULL;
  }
  return NULL;
}

/* 3b. MatMul(A, B) -> Mul or Div by a scalar constant (attention's 1 /
 *     sqrt(d)): the MatMul's alpha. */
static int is_float(int dtype) { return dtype == HD_DT_F32 || dtype == HD_DT_F16 || dtype == HD_DT_BF16; }

static int one_element(const ir_value *v) {
  for (int d = 0; d < v->rank; d++)
    if (v->dims[d] != 1) return 0;
  return v->rank >= 0;
}

double pf_const_elem(const ir_value *c, int64_t i) {
  if (!c->is_const || !c->data || i < 0 || (size_t)(i + 1) * hd_dtype_size(c->dtype) > c->nbytes) return NAN;
  if (is_float(c->dtype)) return load_f(c->dtype, c->data, (size_t)i);
  if (c->dtype == HD_DT_I64) return (double)((const int64_t *)c->data)[i];
  if (c->dtype == HD_DT_I32) return (double)((const int32_t *)c->data)[i];
  return NAN;
}

/* Producers static_scalar may visit for one value (torch's ViT scale: 20
 * along a path of 14): a bound on the walk however the nodes share inputs. */
#define PF_STATIC_BUDGET 256

static double static_vec_elem(const ir_graph *g, int v, int64_t i, int *budget);
static double static_scalar(const ir_graph *g, int v, int *budget);

/* Dim d of value v when the model compiles: static in its type, or set by
 * the Reshape or Transpose that made v (exporters reshape with computed
 * shapes, whose types then say nothing: Reshape(x, Concat(batch, 12, 197,
 * 64)) has a static last dim all the same). NAN where unknown. */
static double static_dim(const ir_graph *g, int v, int d, int *budget) {
  const ir_value *val = &g->values[v];
  if (--*budget < 0 || d < 0 || d >= val->rank) return NAN;
  if (val->dims[d] >= 0) return (double)val->dims[d];
  const ir_node *n = val->producer == IR_NONE ? NULL : &g->nodes[val->producer];
  if (!n || n->dead || n->out[0] != v) return NAN;
  if (n->kind == OP_TRANSPOSE) {
    const op_copy *c = &OP_P(n)->copy;
    return static_dim(g, n->in[0], c->has_axes ? c->axes[d] : val->rank - 1 - d, budget);
  }
  if (n->kind == OP_RESHAPE && n->nin >= 2) {
    double e = static_vec_elem(g, n->in[1], d, budget);
    return e > 0 ? e : NAN; /* 0 (copy) and -1 (inferred) are left unknown */
  }
  return NAN;
}

int64_t pf_slice_start(const ir_graph *g, const ir_node *n) {
  const ir_value *data = &g->values[n->in[0]];
  if (n->kind != OP_SLICE || n->opset < 10 || n->nin < 3 || data->rank != 1 || data->dims[0] < 0) return -1;
  double axis = n->nin > 3 && n->in[3] != IR_NONE ? pf_const_elem(&g->values[n->in[3]], 0) : 0.0;
  if (axis != 0.0 && axis != -1.0) return -1;
  if (n->nin > 4 && n->in[4] != IR_NONE && pf_const_elem(&g->values[n->in[4]], 0) != 1.0) return -1;
  double st = pf_const_elem(&g->values[n->in[1]], 0);
  if (!isfinite(st)) return -1;
  int64_t i = st < 0 ? (int64_t)st + data->dims[0] : (int64_t)st;
  return i < 0 ? 0 : i;
}

/* Element i of a 1-D int value known when the model compiles: a constant,
 * Shape(x) where that dim of x is known, a Slice (step 1) or Concat of
 * such pieces, or one element static_scalar knows (Unsqueeze(Div(Gather(
 * Shape(x), 2), 12))). */
static double static_vec_elem(const ir_graph *g, int v, int64_t i, int *budget) {
  const ir_value *val = &g->values[v];
  if (--*budget < 0 || val->rank != 1 || val->dims[0] < 0 || i < 0 || i >= val->dims[0]) return NAN;
  if (val->is_const) return pf_const_elem(val, i);
  const ir_node *n = val->producer == IR_NONE ? NULL : &g->nodes[val->producer];
  if (!n || n->dead || n->out[0] != v) return NAN;
  if (n->kind == OP_SHAPE) {
    const ir_value *x = &g->values[n->in[0]];
    int64_t start = OP_P(n)->shape.start;
    if (start < 0) start += x->rank;
    return static_dim(g, n->in[0], (int)((start < 0 ? 0 : start) + i), budget);
  }
  if (n->kind == OP_SLICE && val->dims[0] > 1) { /* one element: static_scalar's */
    int64_t start = pf_slice_start(g, n);
    return start < 0 ? NAN : static_vec_elem(g, n->in[0], start + i, budget);
  }
  if (n->kind != OP_SHAPE && n->kind != OP_CONCAT && val->dims[0] == 1) return static_scalar(g, v, budget);
  if (n->kind == OP_CONCAT) {
    for (int k = 0; k < n->nin; k++) {
      const ir_value *piece = &g->values[n->in[k]];
      if (piece->rank != 1 || piece->dims[0] < 0) return NAN;
      if (i < piece->dims[0]) return static_vec_elem(g, n->in[k], i, budget);
      i -= piece->dims[0];
    }
  }
  return NAN;
}

/* A one-element value computed from constants and static dims, as
 * exporters write attention's scale (torch: Sqrt(1 / Sqrt(Cast(Slice(
 * Shape(q), -1))))), evaluated now; NAN where it is not such a value. The
 * nodes stay: a plan computes them on the host, and they may have readers. */
static double static_scalar(const ir_graph *g, int v, int *budget) {
  const ir_value *val = &g->values[v];
  if (--*budget < 0 || !one_element(val)) return NAN;
  if (val->is_const) return pf_const_elem(val, 0);
  const ir_node *n = val->producer == IR_NONE ? NULL : &g->nodes[val->producer];
  if (!n || n->dead || n->nin < 1 || n->out[0] != v) return NAN;
  double a = NAN, b = NAN;
  if (n->nin >= 1 && n->in[0] != IR_NONE) a = static_scalar(g, n->in[0], budget);
  switch (n->kind) {
    case OP_CAST: /* to an integer type, a fraction would truncate */
      return is_float(val->dtype) || a == floor(a) ? a : NAN;
    case OP_IDENTITY: case OP_RESHAPE: case OP_SQUEEZE: case OP_UNSQUEEZE: case OP_FLATTEN: return a;
    case OP_SQRT: return a >= 0 ? sqrt(a) : NAN;
    case OP_RECIPROCAL: return a != 0 ? 1.0 / a : NAN;
    case OP_NEG: return -a;
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV:
      if (n->nin != 2 || OP_P(n)->binary.act.kind != OP_ACT_NONE) return NAN;
      b = static_scalar(g, n->in[1], budget);
      if (n->kind == OP_ADD) return a + b;
      if (n->kind == OP_SUB) return a - b;
      if (n->kind == OP_MUL) return a * b;
      if (b == 0) return NAN;
      return is_float(val->dtype) ? a / b : trunc(a / b);
    case OP_SHAPE: return static_vec_elem(g, v, 0, budget);
    case OP_GATHER: { /* one element of a shape */
      if (n->nin != 2 || OP_P(n)->gather.axis != 0) return NAN;
      const ir_value *data = &g->values[n->in[0]];
      double i = pf_const_elem(&g->values[n->in[1]], 0);
      if (data->rank != 1 || data->dims[0] < 0 || !isfinite(i)) return NAN;
      return static_vec_elem(g, n->in[0], (int64_t)(i < 0 ? i + (double)data->dims[0] : i), budget);
    }
    case OP_SLICE: { /* Slice(shape, start, end) with one element out */
      int64_t i = pf_slice_start(g, n);
      return i < 0 ? NAN : static_vec_elem(g, n->in[0], i, budget);
    }
    default: return NAN;
  }
}

double pf_vec_elem(const ir_graph *g, int v, int64_t i) {
  int budget = PF_STATIC_BUDGET;
  return static_vec_elem(g, v, i, &budget);
}

double pf_scalar_of(const ir_graph *g, int v) {
  if (v == IR_NONE || !is_float(g->values[v].dtype)) return NAN;
  int budget = PF_STATIC_BUDGET;
  return static_scalar(g, v, &budget);
}

static hd_status *fuse_matmul_scale(ir_graph *g, int si, int *changed) {
  ir_node *sc = &g->nodes[si];
  int div = pf_is_kind(sc, OP_DIV);
  if ((!div && !pf_is_kind(sc, OP_MUL)) || sc->nin != 2 || OP_P(sc)->binary.act.kind != OP_ACT_NONE) return NULL;
  for (int side = 0; side < (div ? 1 : 2); side++) {
    ir_node *mm = pf_sole_producer(g, sc->in[side]);
    double c = pf_scalar_of(g, sc->in[1 - side]);
    if (!mm || !pf_is_kind(mm, OP_MATMUL) || OP_P(mm)->gemm.has_c || OP_P(mm)->gemm.act.kind != OP_ACT_NONE) continue;
    if (!isfinite(c) || c == 0.0 || g->values[sc->out[0]].dtype != g->values[mm->out[0]].dtype) continue;
    if (g->values[sc->in[1 - side]].rank > g->values[mm->out[0]].rank) continue; /* would raise the rank */
    OP_P(mm)->gemm.alpha = (float)(OP_P(mm)->gemm.alpha * (div ? 1.0 / c : c));
    fuse_into(mm, sc);
    *changed = 1;
    return NULL;
  }
  return NULL;
}

/* 3c. MatMul(A, W) (+ C) -> Mul(g) with W [K, N], C and g [N] constants
 *     (ConvNeXt's layer scale): W and C scaled per column at compile time. */
static int row_vector(const ir_value *v, int64_t n) {
  if (v->rank < 1 || v->dims[v->rank - 1] != n) return 0;
  for (int d = 0; d + 1 < v->rank; d++)
    if (v->dims[d] != 1) return 0;
  return 1;
}

static hd_status *fuse_matmul_colscale(ir_graph *g, int si, int *changed) {
  ir_node *sc = &g->nodes[si];
  if (!pf_is_kind(sc, OP_MUL) || sc->nin != 2 || OP_P(sc)->binary.act.kind != OP_ACT_NONE ||
      OP_P(sc)->binary.in_act.kind != OP_ACT_NONE || OP_P(sc)->binary.permuted)
    return NULL;
  for (int side = 0; side < 2; side++) {
    ir_node *mm = pf_sole_producer(g, sc->in[side]);
    int gv = sc->in[1 - side];
    if (!mm || !pf_is_kind(mm, OP_MATMUL) || OP_P(mm)->gemm.act.kind != OP_ACT_NONE) continue;
    const ir_value *w = &g->values[mm->in[1]], *y = &g->values[sc->in[side]], *gg = &g->values[gv];
    int dt = y->dtype;
    if (w->rank != 2 || !is_const_f(g, mm->in[1], dt) || !is_const_f(g, gv, dt)) continue;
    int64_t k = w->dims[0], n = w->dims[1];
    if (!row_vector(gg, n) || gg->rank > y->rank) continue;
    int has_c = OP_P(mm)->gemm.has_c;
    if (has_c && (!is_const_f(g, mm->in[2], dt) || !row_vector(&g->values[mm->in[2]], n) ||
                  OP_P(mm)->gemm.beta != 1.0f))
      continue;
    size_t esz = hd_dtype_size(dt);
    void *nw = malloc((size_t)(k * n) * esz), *nc = has_c ? malloc((size_t)n * esz) : NULL;
    if (!nw || (has_c && !nc)) {
      free(nw);
      free(nc);
      return hd_error(HD_ERR_OUT_OF_MEMORY, "fuse_matmul_colscale: out of host memory");
    }
    for (int64_t j = 0; j < n; j++) {
      double f = load_f(dt, gg->data, (size_t)j);
      for (int64_t r = 0; r < k; r++) store_f(dt, nw, (size_t)(r * n + j), load_f(dt, w->data, (size_t)(r * n + j)) * f);
      if (has_c) store_f(dt, nc, (size_t)j, load_f(dt, g->values[mm->in[2]].data, (size_t)j) * f);
    }
    int64_t wd[2] = {k, n};
    int wv = IR_NONE, cv = IR_NONE;
    hd_status *st = add_const(g, sc->name, "scaled_weight", dt, 2, wd, nw, (size_t)(k * n) * esz, &wv);
    if (!st && has_c) st = add_const(g, sc->name, "scaled_bias", dt, 1, &n, nc, (size_t)n * esz, &cv);
    free(nw);
    free(nc);
    if (st) return st;
    mm = &g->nodes[g->values[sc->in[side]].producer];
    mm->in[1] = wv;
    if (has_c) mm->in[2] = cv;
    fuse_into(mm, sc);
    *changed = 1;
    return NULL;
  }
  return NULL;
}

/* 4. producer -> activation: the producer's act. */
static int in_family(const ir_node *n, const char *family) {
  return !n->dead && op_node_in_family(n, family);
}

static op_act *act_slot(ir_node *p) {
  if (in_family(p, "conv")) return &OP_P(p)->conv.act;
  if (in_family(p, "gemm")) return &OP_P(p)->gemm.act;
  if (in_family(p, "binary")) return &OP_P(p)->binary.act;
  if (in_family(p, "batchnorm")) return &OP_P(p)->batchnorm.act;
  return NULL;
}

static hd_status *fuse_activation(ir_graph *g, int ni, int *changed) {
  ir_node *a = &g->nodes[ni];
  if (!in_family(a, "unary") || a->nout != 1 || OP_P(a)->unary.has_bias) return NULL;
  ir_node *p = pf_sole_producer(g, a->in[0]);
  if (g->values[a->in[0]].dtype != g->values[a->out[0]].dtype) return NULL;
  /* Through a view (Reshape, Flatten, ...: GPT-2's Gemm -> Reshape ->
   * GELU): the activation is elementwise, so the producer applies it and
   * the view then makes the activation's output. */
  const op_def *vd = p && p->kind != OP_UNKNOWN ? op_get((op_kind)p->kind) : NULL;
  if (vd && vd->view && p->nout == 1) {
    ir_node *q = pf_sole_producer(g, p->in[0]);
    op_act *slot = q ? act_slot(q) : NULL;
    if (!slot || slot->kind != OP_ACT_NONE || g->values[p->in[0]].dtype != g->values[a->out[0]].dtype) return NULL;
    *slot = OP_P(a)->unary.act;
    p->out[0] = a->out[0];
    pf_absorb(q, a);
    *changed = 1;
    return NULL;
  }
  op_act *slot = p ? act_slot(p) : NULL;
  if (!slot || slot->kind != OP_ACT_NONE) return NULL;
  *slot = OP_P(a)->unary.act;
  fuse_into(p, a);
  *changed = 1;
  return NULL;
}

void pf_absorb(ir_node *into, ir_node *gone) {
  ir_node_absorb(into, gone);
  gone->dead = 1;
  gone->kind = OP_UNKNOWN;
}

int pf_sole_consumer(const ir_graph *g, int v) {
  const ir_value *val = &g->values[v];
  if (val->nuses != 1 || val->graph_output != IR_NONE) return IR_NONE;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    for (int k = 0; k < n->nin && !n->dead; k++)
      if (n->in[k] == v) return i;
  }
  return IR_NONE;
}

/* v is a one-element float constant within 1e-4 (relative; 1e-3 in fp16,
 * whose rounding of 0.044715 or 1 / sqrt(2) is past 1e-4) of want. */
static int is_scalar(const ir_graph *g, int v, double want) {
  const ir_value *c = &g->values[v];
  if (!c->is_const || !c->data || (c->dtype != HD_DT_F32 && c->dtype != HD_DT_F16 && c->dtype != HD_DT_BF16) ||
      ir_numel(c->rank, c->dims) != 1)
    return 0;
  double x = load_f(c->dtype, c->data, 0);
  return fabs(x - want) <= (c->dtype == HD_DT_F16 ? 1e-3 : 1e-4) * fabs(want);
}

/* The input of binary node n that is not the scalar want, or IR_NONE. */
static int other_than_scalar(const ir_graph *g, const ir_node *n, double want) {
  if (n->nin != 2) return IR_NONE;
  if (is_scalar(g, n->in[1], want)) return n->in[0];
  if (is_scalar(g, n->in[0], want)) return n->in[1];
  return IR_NONE;
}

/* The tail both written-out GELUs share, from t = erf(..) or tanh(..):
 * Add(t, 1) -> Mul(x, ) -> Mul(, 0.5), or Mul(Mul(x, 0.5), Add(t, 1)).
 * Fills the Add, the Mul by 0.5 of x or of the product, and the last Mul
 * (root); 0 when the nodes do not match. */
static int gelu_tail(ir_graph *g, int t, int x, ir_node **add_out, ir_node **half_out, ir_node **root_out) {
  int ai = pf_sole_consumer(g, t);
  ir_node *add = ai == IR_NONE ? NULL : &g->nodes[ai];
  if (!add || !pf_is_kind(add, OP_ADD) || other_than_scalar(g, add, 1.0) != t) return 0;
  int m1i = pf_sole_consumer(g, add->out[0]);
  ir_node *m1 = m1i == IR_NONE ? NULL : &g->nodes[m1i];
  if (!m1 || !pf_is_kind(m1, OP_MUL) || m1->nin != 2) return 0;
  int other = m1->in[0] == add->out[0] ? m1->in[1] : m1->in[0];
  ir_node *half = NULL, *root = NULL;
  if (other == x) { /* (x * (1 + t)) * 0.5 */
    int m2i = pf_sole_consumer(g, m1->out[0]);
    root = m2i == IR_NONE ? NULL : &g->nodes[m2i];
    if (!root || !pf_is_kind(root, OP_MUL) || other_than_scalar(g, root, 0.5) != m1->out[0]) return 0;
    half = m1;
  } else { /* (x * 0.5) * (1 + t) */
    int hp = g->values[other].producer;
    half = hp == IR_NONE || g->values[other].nuses != 1 ? NULL : &g->nodes[hp];
    if (!half || !pf_is_kind(half, OP_MUL) || other_than_scalar(g, half, 0.5) != x) return 0;
    root = m1;
  }
  if (g->values[x].dtype != g->values[root->out[0]].dtype || OP_P(root)->binary.act.kind != OP_ACT_NONE) return 0;
  *add_out = add;
  *half_out = half;
  *root_out = root;
  return 1;
}

/* root becomes Gelu(x) with the given form; the nodes in gone go. */
static hd_status *make_gelu(ir_node *root, int x, ir_node **gone, int ngone, op_act_kind kind) {
  for (int i = 0; i < ngone; i++) {
    pf_absorb(root, gone[i]);
  }
  root->in[0] = x;
  root->nin = 1;
  char *type = strdup("Gelu");
  if (!type) return hd_error(HD_ERR_OUT_OF_MEMORY, "fuse_gelu: out of host memory");
  free(root->op_type);
  root->op_type = type;
  root->kind = OP_GELU;
  memset(&root->p, 0, sizeof root->p);
  OP_P(root)->unary.act.kind = kind;
  return NULL;
}

/* 0. GELU written out, as exporters write it: x * 0.5 * (1 + erf(x / sqrt 2))
 *    in any association: Erf(Div(x, sqrt 2) or Mul(x, 1 / sqrt 2)) ->
 *    Add(, 1) -> Mul(x, ) -> Mul(, 0.5), or Mul(Mul(x, 0.5), ): one Gelu
 *    (which pass 4 then folds into a MatMul's epilogue). */
static hd_status *fuse_gelu(ir_graph *g, int ei, int *changed) {
  ir_node *erf = &g->nodes[ei];
  if (!pf_is_kind(erf, OP_ERF)) return NULL;
  int scaled = erf->in[0], pre = g->values[scaled].producer;
  if (pre == IR_NONE || g->values[scaled].nuses != 1) return NULL;
  ir_node *d = &g->nodes[pre];
  int x = pf_is_kind(d, OP_DIV) && is_scalar(g, d->in[1], 1.4142135623730951) ? d->in[0]
          : pf_is_kind(d, OP_MUL) ? other_than_scalar(g, d, 0.7071067811865476)
                               : IR_NONE;
  if (x == IR_NONE) return NULL;
  ir_node *add, *half, *root;
  if (!gelu_tail(g, erf->out[0], x, &add, &half, &root)) return NULL;
  ir_node *gone[] = {d, erf, add, half};
  HD_TRY(make_gelu(root, x, gone, 4, OP_ACT_GELU));
  *changed = 1;
  return NULL;
}

/* x^3 as exporters write it: Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x),
 * x), every intermediate read once. Returns x (IR_NONE: no match) and the
 * nodes in cube[0..*n). */
static int cube_of(ir_graph *g, int v, ir_node **cube, int *n) {
  ir_node *c = pf_sole_producer(g, v);
  *n = 0;
  if (!c || c->nin != 2 || OP_P(c)->binary.act.kind != OP_ACT_NONE) return IR_NONE;
  if (pf_is_kind(c, OP_POW) && is_scalar(g, c->in[1], 3.0)) {
    cube[(*n)++] = c;
    return c->in[0];
  }
  if (!pf_is_kind(c, OP_MUL)) return IR_NONE;
  for (int k = 0; k < 2; k++) {
    ir_node *sq = pf_sole_producer(g, c->in[k]);
    int x = c->in[1 - k];
    if (sq && pf_is_kind(sq, OP_MUL) && sq->nin == 2 && sq->in[0] == x && sq->in[1] == x &&
        OP_P(sq)->binary.act.kind == OP_ACT_NONE) {
      cube[(*n)++] = c;
      cube[(*n)++] = sq;
      return x;
    }
  }
  return IR_NONE;
}

/* 0a. GELU's tanh form written out (GPT-2's gelu_new, torch's
 *     gelu(approximate="tanh")): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715
 *     x^3))), in the associations of gelu_tail: one Gelu(approximate=tanh),
 *     which the BLAS can apply in its epilogue (cuBLASLt's GELU is this
 *     form; the erf form above never becomes it). */
static hd_status *fuse_gelu_tanh(ir_graph *g, int ti, int *changed) {
  ir_node *th = &g->nodes[ti];
  if (!pf_is_kind(th, OP_TANH) || th->nin != 1) return NULL;
  ir_node *m3 = pf_sole_producer(g, th->in[0]);
  if (!m3 || !pf_is_kind(m3, OP_MUL) || OP_P(m3)->binary.act.kind != OP_ACT_NONE) return NULL;
  int inner = other_than_scalar(g, m3, 0.7978845608028654);
  ir_node *a1 = inner == IR_NONE ? NULL : pf_sole_producer(g, inner);
  if (!a1 || !pf_is_kind(a1, OP_ADD) || a1->nin != 2 || OP_P(a1)->binary.act.kind != OP_ACT_NONE) return NULL;
  for (int k = 0; k < 2; k++) {
    int x = a1->in[1 - k];
    ir_node *m2 = pf_sole_producer(g, a1->in[k]);
    if (!m2 || !pf_is_kind(m2, OP_MUL) || OP_P(m2)->binary.act.kind != OP_ACT_NONE) continue;
    int cv = other_than_scalar(g, m2, 0.044715);
    ir_node *cube[2];
    int nc = 0;
    if (cv == IR_NONE || cube_of(g, cv, cube, &nc) != x) continue;
    ir_node *add, *half, *root;
    if (!gelu_tail(g, th->out[0], x, &add, &half, &root)) return NULL;
    ir_node *gone[8] = {m3, th, a1, m2, add, half};
    int ngone = 6;
    for (int i = 0; i < nc; i++) gone[ngone++] = cube[i];
    HD_TRY(make_gelu(root, x, gone, ngone, OP_ACT_GELU_TANH));
    *changed = 1;
    return NULL;
  }
  return NULL;
}

/* x is a convolution's output read only by the two nodes of a SiLU, and
 * that convolution applies no activation yet. */
static int conv_silu_input(const ir_graph *g, int x) {
  const ir_value *v = &g->values[x];
  if (v->producer == IR_NONE || v->nuses != 2 || v->graph_output != IR_NONE) return 0;
  ir_node *p = &g->nodes[v->producer];
  return !p->dead && in_family(p, "conv") && act_slot(p)->kind == OP_ACT_NONE;
}

/* 0b. SiLU as exporters write it, Mul(x, Sigmoid(x)) (either order) ->
 *     QuickGelu(x) with alpha 1 (x * sigmoid(x)) where something then takes
 *     it whole: a SwiGLU's gate, read only by another Mul (4b folds it into
 *     that Mul), or a CNN's SiLU after a convolution (EfficientNet's 49: 4
 *     makes it the convolution's activation, applied in its epilogue).
 *     Elsewhere the two nodes stay as they are (4b makes them one Mul). */
static hd_status *fuse_silu(ir_graph *g, int mi, int *changed) {
  ir_node *mul = &g->nodes[mi];
  if (!pf_is_kind(mul, OP_MUL) || mul->nin != 2 || OP_P(mul)->binary.act.kind != OP_ACT_NONE ||
      OP_P(mul)->binary.in_act.kind != OP_ACT_NONE)
    return NULL;
  int next = pf_sole_consumer(g, mul->out[0]);
  int gate = next != IR_NONE && pf_is_kind(&g->nodes[next], OP_MUL);
  for (int k = 0; k < 2; k++) {
    ir_node *sig = pf_sole_producer(g, mul->in[k]);
    if (!sig || !pf_is_kind(sig, OP_SIGMOID) || sig->nin != 1 || sig->in[0] != mul->in[1 - k]) continue;
    int x = sig->in[0];
    if (!gate && !conv_silu_input(g, x)) return NULL;
    if (g->values[x].dtype != g->values[mul->out[0]].dtype) return NULL;
    pf_absorb(mul, sig);
    char *type = strdup("QuickGelu");
    if (!type) return hd_error(HD_ERR_OUT_OF_MEMORY, "fuse_silu: out of host memory");
    free(mul->op_type);
    mul->op_type = type;
    mul->in[0] = x;
    mul->nin = 1;
    mul->kind = OP_QUICK_GELU;
    memset(&mul->p, 0, sizeof mul->p);
    OP_P(mul)->unary.act.kind = OP_ACT_QUICK_GELU;
    OP_P(mul)->unary.act.alpha = 1.f;
    *changed = 1;
    return NULL;
  }
  return NULL;
}

/* 4b. An activation feeding one input of a Mul and nothing else -> the Mul
 *     applies it as it loads that input (binary.in_act; the input moved to
 *     slot 0, Mul being commutative): a SwiGLU's Mul(silu(gate), up) is one
 *     kernel. Before 4, which would put the activation into its producer's
 *     epilogue instead: a BLAS fuses only bias and ReLU, so that costs a
 *     kernel; a convolution's producer keeps it (the DNN library fuses it). */
static hd_status *fuse_input_activation(ir_graph *g, int mi, int *changed) {
  ir_node *mul = &g->nodes[mi];
  if (!pf_is_kind(mul, OP_MUL) || mul->nin != 2 || OP_P(mul)->binary.act.kind != OP_ACT_NONE ||
      OP_P(mul)->binary.in_act.kind != OP_ACT_NONE)
    return NULL;
  int dt = g->values[mul->out[0]].dtype;
  if (dt != HD_DT_F32 && dt != HD_DT_F16 && dt != HD_DT_BF16) return NULL;
  for (int k = 0; k < 2; k++) {
    ir_node *u = pf_sole_producer(g, mul->in[k]);
    if (!u || !in_family(u, "unary") || u->nin != 1 || u->nout != 1 || OP_P(u)->unary.has_bias ||
        OP_P(u)->unary.act.kind == OP_ACT_NONE || g->values[u->in[0]].dtype != dt)
      continue;
    int pv = g->values[u->in[0]].producer;
    if (pv != IR_NONE && in_family(&g->nodes[pv], "conv") && g->values[u->in[0]].nuses == 1) continue;
    if (k == 1) mul->in[1] = mul->in[0];
    mul->in[0] = u->in[0];
    OP_P(mul)->binary.in_act = OP_P(u)->unary.act;
    pf_absorb(mul, u);
    *changed = 1;
    return NULL;
  }
  return NULL;
}

/* Dims that may be equal: the same static size or symbol, or both unknown. */
static int may_equal(const ir_value *a, int i, const ir_value *b, int j) {
  return ir_dims_equal(a, i, b, j) || (a->dims[i] < 0 && b->dims[j] < 0);
}

/* x + skip = s as the norm adds them: x has s's shape and skip broadcasts
 * over leading dims, provably; or, where exporters' dims are unknown
 * (BERT's residual adds), x and skip may each be s's shape: the plan
 * then checks the dims it sees, and x and skip trade places where skip is
 * the full-size one (ops/norm.c). */
static int skip_addends(const ir_value *x, const ir_value *skip, const ir_value *s) {
  if (skip->rank < 1 || skip->rank > s->rank || x->rank != s->rank) return 0;
  int proven = pf_same_shape(x, s), maybe = skip->rank == s->rank;
  for (int i = 1; i <= skip->rank; i++) {
    proven = proven && ir_dims_equal(skip, skip->rank - i, s, s->rank - i);
    maybe = maybe && may_equal(skip, skip->rank - i, s, s->rank - i) && may_equal(x, x->rank - i, s, s->rank - i);
  }
  return proven || maybe;
}

/* Whether norm ln normalises only the last dim of its rank-r input. */
static int norms_last(const ir_node *ln, int r) {
  const op_norm *q = &OP_P(ln)->norm;
  return r >= 1 && (q->axis == -1 || q->axis == r - 1);
}

/* 5. Add(a, b) -> LayerNormalization: the norm adds them itself (a skip
 *    input); when the sum has other readers the norm writes it too. Over
 *    the last dim any two addends fit whatever their dims (each of their
 *    dims is 1 or the sum's: the norm reads them through row maps, ops/
 *    norm.c), so ViT's residual, whose attention side ONNX Runtime leaves
 *    without dims, is taken too; over more dims the skip must broadcast
 *    over the leading ones only. */
static hd_status *fuse_add_norm(ir_graph *g, int ni, int *changed) {
  ir_node *ln = &g->nodes[ni];
  if (!pf_is_kind(ln, OP_LAYER_NORMALIZATION) && !pf_is_kind(ln, OP_SIMPLIFIED_LAYER_NORMALIZATION)) return NULL;
  op_norm *q = &OP_P(ln)->norm;
  if (q->in_skip >= 0 || q->out_sum >= 0) return NULL;
  int sum = ln->in[0], ap = g->values[sum].producer;
  if (ap == IR_NONE) return NULL;
  ir_node *add = &g->nodes[ap];
  if (!pf_is_kind(add, OP_ADD) || add->nin != 2 || OP_P(add)->binary.act.kind != OP_ACT_NONE) return NULL;
  const ir_value *a = &g->values[add->in[0]], *b = &g->values[add->in[1]], *s = &g->values[sum];
  if (a->dtype != b->dtype) return NULL;
  int x_side = skip_addends(a, b, s) ? 0 : skip_addends(b, a, s) ? 1 : -1;
  int ranks_known = a->rank >= 1 && b->rank >= 1 && s->rank == (a->rank > b->rank ? a->rank : b->rank);
  if (x_side < 0 && ranks_known && norms_last(ln, s->rank)) x_side = b->rank > a->rank; /* x: the one of the sum's rank */
  if (x_side < 0) return NULL;
  int keep_sum = g->values[sum].nuses > 1 || g->values[sum].graph_output != IR_NONE;
  /* the norm now makes the sum: its other readers must come after it */
  for (int i = ap + 1; i < ni && keep_sum; i++)
    for (int k = 0; k < g->nodes[i].nin && !g->nodes[i].dead; k++)
      if (g->nodes[i].in[k] == sum) return NULL;
  int nin = ln->nin > 3 ? ln->nin : 3, nout = ln->nout > 4 ? ln->nout : 4;
  int *in = realloc(ln->in, sizeof(int) * (size_t)(nin + 1));
  if (!in) return hd_error(HD_ERR_OUT_OF_MEMORY, "fuse_add_norm: out of host memory");
  ln->in = in;
  for (int k = ln->nin; k < nin; k++) ln->in[k] = IR_NONE;
  ln->in[0] = add->in[x_side];
  ln->in[nin] = add->in[1 - x_side];
  ln->nin = nin + 1;
  q->in_skip = nin;
  if (keep_sum) {
    int *out = realloc(ln->out, sizeof(int) * (size_t)nout);
    if (!out) return hd_error(HD_ERR_OUT_OF_MEMORY, "fuse_add_norm: out of host memory");
    ln->out = out;
    for (int k = ln->nout; k < nout; k++) ln->out[k] = IR_NONE;
    ln->nout = nout;
    ln->out[3] = sum;
    q->out_sum = 3;
  }
  pf_absorb(ln, add);
  *changed = 1;
  return NULL;
}

/* Transpose's permutation of rank r (its default: the dims reversed). */
static void transpose_perm(const ir_node *t, int r, int8_t *perm) {
  const op_copy *c = &OP_P(t)->copy;
  for (int i = 0; i < r; i++) perm[i] = c->has_axes ? c->axes[i] : (int8_t)(r - 1 - i);
}

/* perm moves one axis k < r - 1 to the end, the others keeping their order
 * (NCHW -> NHWC): k, else -1. */
static int moves_to_last(const int8_t *perm, int r) {
  int k = perm[r - 1];
  if (k < 0 || k >= r - 1) return -1;
  for (int i = 0, j = 0; i < r - 1; i++, j++) {
    if (j == k) j++;
    if (perm[i] != j) return -1;
  }
  return k;
}

/* perm moves the last axis to position k < r - 1 (NHWC -> NCHW): k, else -1. */
static int moves_from_last(const int8_t *perm, int r) {
  int k = -1;
  for (int i = 0; i < r; i++)
    if (perm[i] == r - 1) k = i;
  if (k < 0 || k >= r - 1) return -1;
  for (int i = 0, j = 0; i < r; i++) {
    if (i == k) continue;
    if (perm[i] != j++) return -1;
  }
  return k;
}

/* 6. Transposes around a layer norm that move the normalised axis
 *    (ConvNeXt's channels-last LayerNorm of an NCHW tensor: Transpose(0, 2,
 *    3, 1) -> LayerNormalization(axis -1) [-> Transpose(0, 3, 1, 2)]): the
 *    norm reads and writes that axis in place (op_norm.in_chan / out_chan);
 *    no copies. Not with the mean / inv outputs (rows' layout), and the
 *    input side not with a skip. */
static hd_status *fuse_norm_transpose(ir_graph *g, int ni, int *changed) {
  ir_node *ln = &g->nodes[ni];
  if (!in_family(ln, "norm") || ln->nout < 1) return NULL;
  op_norm *q = &OP_P(ln)->norm;
  int r = g->values[ln->out[0]].rank;
  if (q->out_mean >= 0 || q->out_inv >= 0 || r < 2 || r > 8 || !norms_last(ln, r)) return NULL;
  int8_t perm[8];
  ir_node *t = q->in_chan < 0 && q->out_chan < 0 && q->in_skip < 0 && !q->permuted ? pf_sole_producer(g, ln->in[0]) : NULL;
  if (t && pf_is_kind(t, OP_TRANSPOSE) && g->values[t->in[0]].rank == r) {
    transpose_perm(t, r, perm);
    int k = moves_to_last(perm, r);
    if (k >= 0) {
      ln->in[0] = t->in[0];
      q->in_chan = k;
      pf_absorb(ln, t);
      *changed = 1;
    }
  }
  int ci = q->out_chan < 0 && !q->out_permuted ? pf_sole_consumer(g, ln->out[0]) : IR_NONE;
  t = ci == IR_NONE ? NULL : &g->nodes[ci];
  if (t && pf_is_kind(t, OP_TRANSPOSE) && g->values[t->out[0]].rank == r) {
    transpose_perm(t, r, perm);
    int k = moves_from_last(perm, r);
    if (k >= 0 && (q->in_chan < 0 || q->in_chan == k)) {
      ln->out[0] = t->out[0];
      q->out_chan = k;
      pf_absorb(ln, t);
      *changed = 1;
    }
  }
  return NULL;
}

/* 7. Transposes that keep the last axis in place around a norm: into its
 *    x or skip (ViT's attention output, [S, B, E] -> [B, S, E], into the
 *    residual the next norm adds), read through the permutation; after its
 *    output (ViT's [B, S, E] -> [S, B, E] before the attention), written
 *    through it. */
static hd_status *fuse_norm_row_transposes(ir_graph *g, int ni, int *changed) {
  ir_node *ln = &g->nodes[ni];
  if (!in_family(ln, "norm")) return NULL;
  op_norm *q = &OP_P(ln)->norm;
  if (!norms_last(ln, g->values[ln->out[0]].rank)) return NULL;
  for (int k = 0; k < 2; k++) {
    int in = k ? q->in_skip : 0;
    if (in < 0 || (q->permuted >> k & 1) || (k == 0 && q->in_chan >= 0)) continue;
    int r = g->values[ln->in[in]].rank;
    ir_node *t = pf_sole_producer(g, ln->in[in]);
    if (!t || !pf_is_kind(t, OP_TRANSPOSE) || r < 2 || r > 8 || g->values[t->in[0]].rank != r) continue;
    int8_t perm[8] = {0};
    transpose_perm(t, r, perm);
    if (perm[r - 1] != r - 1) continue;
    memcpy(q->perm[k], perm, sizeof perm);
    q->permuted |= 1 << k;
    ln->in[in] = t->in[0];
    pf_absorb(ln, t);
    *changed = 1;
  }
  int r = g->values[ln->out[0]].rank, ci = q->out_chan < 0 && !q->out_permuted ? pf_sole_consumer(g, ln->out[0]) : IR_NONE;
  ir_node *t = ci == IR_NONE ? NULL : &g->nodes[ci];
  if (!t || !pf_is_kind(t, OP_TRANSPOSE) || r < 2 || r > 8 || g->values[t->out[0]].rank != r) return NULL;
  int8_t perm[8] = {0};
  transpose_perm(t, r, perm);
  if (perm[r - 1] != r - 1) return NULL;
  memcpy(q->out_perm, perm, sizeof perm);
  q->out_permuted = 1;
  ln->out[0] = t->out[0];
  pf_absorb(ln, t);
  *changed = 1;
  return NULL;
}

/* 8. A Transpose read only by an elementwise binary op (ConvNeXt's
 *    Transpose(NHWC -> NCHW) -> residual Add): the op reads that input
 *    through the permutation (op_binary.perm); no copy. */
static hd_status *fuse_binary_transpose(ir_graph *g, int bi, int *changed) {
  ir_node *b = &g->nodes[bi];
  if (!in_family(b, "binary") || b->nin != 2) return NULL;
  op_binary *q = &OP_P(b)->binary;
  int r = g->values[b->out[0]].rank;
  if (r < 2 || r > 8) return NULL;
  for (int k = 0; k < 2; k++) {
    if (q->permuted >> k & 1) continue;
    ir_node *t = pf_sole_producer(g, b->in[k]);
    if (!t || !pf_is_kind(t, OP_TRANSPOSE) || g->values[t->in[0]].rank != r || g->values[b->in[k]].rank != r) continue;
    transpose_perm(t, r, q->perm[k]);
    q->permuted |= 1 << k;
    b->in[k] = t->in[0];
    pf_absorb(b, t);
    *changed = 1;
  }
  return NULL;
}

/* Rows of n rows x `row` bytes each from a and b, interleaved (a0 b0 a1 b1
 * ...), as a new constant of shape dims. */
static hd_status *interleave_rows(ir_graph *g, const char *base, const char *suffix, int a, int b, int64_t n,
                                  size_t row, int dtype, int rank, const int64_t *dims, int *idx) {
  const ir_value *va = &g->values[a], *vb = &g->values[b];
  if (!va->data || !vb->data || va->nbytes != (size_t)n * row || vb->nbytes != (size_t)n * row)
    return hd_error(HD_ERR_INTERNAL, "fuse_nbits_glu: %s of unexpected size", suffix);
  char *buf = malloc(2 * (size_t)n * row + 1);
  if (!buf) return hd_error(HD_ERR_OUT_OF_MEMORY, "fuse_nbits_glu: out of host memory");
  for (int64_t j = 0; j < n; j++) {
    memcpy(buf + (size_t)(2 * j) * row, (const char *)va->data + (size_t)j * row, row);
    memcpy(buf + (size_t)(2 * j + 1) * row, (const char *)vb->data + (size_t)j * row, row);
  }
  hd_status *st = add_const(g, base, suffix, dtype, rank, dims, buf, 2 * (size_t)n * row, idx);
  free(buf);
  return st;
}

/* The host copy of a constant only this fusion read (never uploaded:
 * uploads take used constants only). */
static void drop_if_sole_use(ir_graph *g, int v) {
  if (v != IR_NONE && g->values[v].nuses == 1 && g->values[v].graph_output == IR_NONE) ir_value_drop_data(g, v);
}

/* 4c. A gated MLP over 4-bit weights (Llama's SwiGLU as GenAI writes it):
 *     Mul(act(MatMulNBits(x, Wg)), MatMulNBits(x, Wu)), the activation the
 *     Mul's in_act after 4b, both projections alike (K, N, block size, zero
 *     points and bias present in both or neither, constants at hand) ->
 *     one MatMulNBits over the two weights' rows interleaved (gate, up,
 *     gate, up, ...) with glu = the activation: decode reads x once and
 *     runs one kernel for what was three. */
static hd_status *fuse_nbits_glu(ir_graph *g, int mi, int *changed) {
  ir_node *mul = &g->nodes[mi];
  if (!pf_is_kind(mul, OP_MUL) || mul->nin != 2 || OP_P(mul)->binary.act.kind != OP_ACT_NONE ||
      OP_P(mul)->binary.in_act.kind == OP_ACT_NONE)
    return NULL;
  ir_node *gate = pf_sole_producer(g, mul->in[0]), *up = pf_sole_producer(g, mul->in[1]);
  if (!gate || !up || gate == up || !pf_is_kind(gate, OP_MATMUL_NBITS) || !pf_is_kind(up, OP_MATMUL_NBITS) ||
      gate->in[0] != up->in[0])
    return NULL;
  op_nbits pg = OP_P(gate)->nbits;
  const op_nbits *pu = &OP_P(up)->nbits;
  if (pg.glu.kind != OP_ACT_NONE || pu->glu.kind != OP_ACT_NONE || pg.k != pu->k || pg.n != pu->n ||
      pg.block_size != pu->block_size || (pg.in_zp < 0) != (pu->in_zp < 0) || (pg.in_bias < 0) != (pu->in_bias < 0) ||
      2 * pg.n > ((int64_t)1 << 30))
    return NULL;
  int dt = g->values[mul->out[0]].dtype;
  if (g->values[gate->out[0]].dtype != dt || g->values[up->out[0]].dtype != dt) return NULL;
  const int slots[4] = {1, 2, pg.in_zp, pg.in_bias};
  for (int i = 0; i < 4; i++)
    if (slots[i] >= 0 && (!g->values[gate->in[slots[i]]].data || !g->values[up->in[slots[i]]].data)) return NULL;
  /* Per row of B: its codes, scales, zero points and bias. */
  const size_t es = hd_dtype_size(dt), row_b = (size_t)(pg.k_blocks * (pg.block_size / 2));
  const size_t rows[4] = {row_b, (size_t)pg.k_blocks * es, (size_t)pg.zp_bytes, es};
  const int dts[4] = {HD_DT_U8, dt, HD_DT_U8, dt};
  static const char *const names[4] = {"glu_B", "glu_scales", "glu_zero_points", "glu_bias"};
  int fused[4];
  for (int i = 0; i < 4; i++) {
    if (slots[i] < 0) continue;
    int64_t flat = 2 * pg.n * (int64_t)(rows[i] / (i == 0 || i == 2 ? 1 : es));
    int64_t b3[3] = {2 * pg.n, pg.k_blocks, pg.block_size / 2};
    HD_TRY(interleave_rows(g, gate->name, names[i], gate->in[slots[i]], up->in[slots[i]], pg.n, rows[i], dts[i],
                           i == 0 ? 3 : 1, i == 0 ? b3 : &flat, &fused[i]));
  }
  for (int i = 0; i < 4; i++) {
    if (slots[i] < 0) continue;
    drop_if_sole_use(g, gate->in[slots[i]]);
    drop_if_sole_use(g, up->in[slots[i]]);
    gate->in[slots[i]] = fused[i];
  }
  pg.n *= 2;
  pg.exact |= pu->exact;  /* fp32 asked for by either */
  pg.glu = OP_P(mul)->binary.in_act;
  OP_P(gate)->nbits = pg;
  pf_absorb(gate, up);
  fuse_into(gate, mul);
  *changed = 1;
  return NULL;
}

typedef hd_status *(*fuse_pass)(ir_graph *g, int node, int *changed);

/* Contrib ops made of other ops are rewritten into them first
 * (op_def.lower), so the passes see the parts. */
static hd_status *lower_all(ir_graph *g) {
  int lowered = 0;
  for (int i = 0; i < g->nnodes; i++) {
    ir_node *n = &g->nodes[i];
    const op_def *d = n->dead || n->kind == OP_UNKNOWN ? NULL : op_get((op_kind)n->kind);
    if (!d || !d->lower) continue;
    int before = g->nnodes;
    HD_TRY(d->lower(g, i));
    i += g->nnodes - before; /* past the nodes inserted before it */
    lowered = 1;
  }
  return lowered ? ir_graph_finalize(g) : NULL;
}

/* Nodes whose outputs nothing reads any more (the shape arithmetic of a
 * scale a fusion took as a constant) go; backwards, so a chain goes whole. */
static hd_status *drop_unread(ir_graph *g) {
  int dropped = 0;
  for (int i = g->nnodes - 1; i >= 0; i--) {
    ir_node *n = &g->nodes[i];
    int read = n->dead || n->nout == 0;
    for (int k = 0; k < n->nout && !read; k++)
      read = n->out[k] != IR_NONE && (g->values[n->out[k]].nuses > 0 || g->values[n->out[k]].graph_output != IR_NONE);
    if (read) continue;
    for (int k = 0; k < n->nin; k++)
      if (n->in[k] != IR_NONE) g->values[n->in[k]].nuses--;
    n->dead = 1;
    n->kind = OP_UNKNOWN;
    dropped = 1;
  }
  return dropped ? ir_graph_finalize(g) : NULL;
}

/* 8. MatMul -> Add(R of the MatMul's output's shape): R becomes the
 *    MatMul's residual input, one pass over the output less. After the
 *    layout: before it, ConvNeXt's residual meets its block's MatMul
 *    through a Transpose. fuse_add_norm ran first, so an Add a norm took as
 *    its skip stays with the norm. */
static hd_status *fuse_matmul_residual(ir_graph *g, int ai, int *changed) {
  return fuse_residual_of(g, ai, OP_MATMUL, changed);
}

static hd_status *run_passes(ir_graph *g, const fuse_pass *passes, size_t npasses, int *nfused) {
  *nfused = 0;
  for (size_t pi = 0; pi < npasses; pi++) {
    for (int i = 0; i < g->nnodes; i++) {
      if (g->nodes[i].dead) continue;
      int changed = 0;
      HD_TRY(passes[pi](g, i, &changed));
      if (changed) {
        (*nfused)++;
        HD_TRY(ir_graph_finalize(g)); /* producers and use counts moved */
      }
    }
  }
  return *nfused ? drop_unread(g) : NULL;
}

hd_status *plan_fuse_late(ir_graph *g, int *nfused) {
  static const fuse_pass passes[] = {fuse_matmul_colscale, fuse_matmul_residual};
  HD_TRY(ir_graph_finalize(g));
  return run_passes(g, passes, sizeof passes / sizeof passes[0], nfused);
}

hd_status *plan_fuse(ir_graph *g, int *nfused) {
  static const fuse_pass passes[] = {pf_patchify_conv,    pf_fuse_squeeze_excite,
                                     fuse_gelu,           fuse_gelu_tanh,        fold_batchnorm,
                                     fuse_silu,           fuse_residual,         fuse_matmul_scale,
                                     pf_fuse_attention,   fuse_matmul_bias,      fuse_matmul_colscale,
                                     fuse_input_activation, fuse_nbits_glu,      fuse_activation,
                                     pf_merge_projections, fuse_add_norm,
                                     fuse_norm_transpose, fuse_norm_row_transposes, fuse_binary_transpose};
  *nfused = 0;
  HD_TRY(lower_all(g));
  return run_passes(g, passes, sizeof passes / sizeof passes[0], nfused);
}
