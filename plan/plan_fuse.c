/* plan_fuse: the fusion passes, vendor-free.
 *
 * Each pass matches a producer -> consumer pair where the intermediate value
 * has one use and is not a partition output, folds the consumer into the
 * producer's parameters, and marks the consumer dead. Every backend runs the
 * fused parameters (ref applies them in its loops; GPU backends fuse them
 * into one library graph or an epilogue), so passes need no backend opt-in.
 *   1. BatchNormalization after Conv: folded into Conv's weights and bias.
 *   2. Add after Conv (a residual of the same shape): Conv's residual input.
 *   3. Add of a constant [N] bias after MatMul: Gemm's C.
 *   4. An activation after Conv, Gemm/MatMul or Add: the producer's act. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "ops/ops.h"

static int is_kind(const ir_node *n, op_kind k) { return !n->dead && n->kind == (int)k; }

/* The node producing v if v feeds only one node input and leaves no partition. */
static ir_node *sole_producer(ir_graph *g, int v) {
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
  int *in = consumer->in, *out = consumer->out;
  char *name = consumer->name, *type = consumer->op_type;
  int keep_out = out[0];
  *consumer = *producer;
  consumer->out[0] = keep_out;
  free(in);
  free(out == consumer->out ? NULL : out);
  free(name);
  free(type);
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
  return dtype == HD_DT_F16 ? hd_f16_to_f32(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

static void store_f(int dtype, void *p, size_t i, double v) {
  if (dtype == HD_DT_F16) ((uint16_t *)p)[i] = hd_f32_to_f16((float)v);
  else ((float *)p)[i] = (float)v;
}

/* 1. Conv -> BatchNormalization: w' = w * s, b' = (b - mean) * s + beta,
 *    s = scale / sqrt(var + eps), per output channel, computed in double. */
static hd_status *fold_batchnorm(ir_graph *g, int bi, int *changed) {
  ir_node *bn = &g->nodes[bi];
  if (!is_kind(bn, OP_BATCHNORM) || bn->nin < 5 || bn->nout != 1) return NULL;
  ir_node *conv = sole_producer(g, bn->in[0]);
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
static int same_shape(const ir_value *a, const ir_value *b) {
  if (a->rank < 0 || a->rank != b->rank || a->dtype != b->dtype) return 0;
  for (int i = 0; i < a->rank; i++)
    if (!ir_dims_equal(a, i, b, i)) return 0;
  return 1;
}

/* 2. Conv -> Add(other): other becomes Conv's residual input. */
static hd_status *fuse_residual(ir_graph *g, int ai, int *changed) {
  ir_node *add = &g->nodes[ai];
  if (!is_kind(add, OP_ADD) || add->nin != 2 || OP_P(add)->binary.act.kind != OP_ACT_NONE) return NULL;
  for (int side = 0; side < 2; side++) {
    ir_node *conv = sole_producer(g, add->in[side]);
    int other = add->in[1 - side];
    if (!conv || conv->kind != OP_CONV || OP_P(conv)->conv.act.kind != OP_ACT_NONE || OP_P(conv)->conv.has_residual)
      continue;
    if (other == add->in[side]) continue;
    if (!same_shape(&g->values[add->in[side]], &g->values[other]) ||
        !same_shape(&g->values[add->out[0]], &g->values[other]))
      continue;
    int *in = realloc(conv->in, sizeof(int) * 4);
    if (!in) return hd_error(HD_ERR_OUT_OF_MEMORY, "fuse_residual: out of host memory");
    conv->in = in;
    if (conv->nin < 3) conv->in[2] = IR_NONE;
    conv->in[3] = other;
    conv->nin = 4;
    OP_P(conv)->conv.has_residual = 1;
    fuse_into(conv, add);
    *changed = 1;
    return NULL;
  }
  return NULL;
}

/* 3. MatMul(A, B) -> Add(const bias of [N] or [1, N]): Gemm-style C. */
static hd_status *fuse_matmul_bias(ir_graph *g, int ai, int *changed) {
  ir_node *add = &g->nodes[ai];
  if (!is_kind(add, OP_ADD) || add->nin != 2 || OP_P(add)->binary.act.kind != OP_ACT_NONE) return NULL;
  for (int side = 0; side < 2; side++) {
    ir_node *mm = sole_producer(g, add->in[side]);
    int bias = add->in[1 - side];
    if (!mm || !is_kind(mm, OP_MATMUL) || OP_P(mm)->gemm.has_c || OP_P(mm)->gemm.act.kind != OP_ACT_NONE) continue;
    const ir_value *y = &g->values[add->in[side]], *b = &g->values[bias];
    if (!b->is_const || b->dtype != y->dtype || y->rank != 2 || y->dims[1] < 0) continue;
    int64_t n = y->dims[1];
    int ok = (b->rank == 1 && b->dims[0] == n) || (b->rank == 2 && b->dims[0] == 1 && b->dims[1] == n);
    if (!ok) continue;
    int *in = realloc(mm->in, sizeof(int) * 3);
    if (!in) return hd_error(HD_ERR_OUT_OF_MEMORY, "fuse_matmul_bias: out of host memory");
    mm->in = in;
    mm->in[2] = bias;
    mm->nin = 3;
    OP_P(mm)->gemm.has_c = 1;
    OP_P(mm)->gemm.beta = 1.0f;
    fuse_into(mm, add);
    *changed = 1;
    return NULL;
  }
  return NULL;
}

/* 4. producer -> activation: the producer's act. */
static int in_family(const ir_node *n, const char *family) {
  return !n->dead && n->kind != OP_UNKNOWN && strcmp(op_family_name((op_kind)n->kind), family) == 0;
}

static op_act *act_slot(ir_node *p) {
  if (in_family(p, "conv")) return &OP_P(p)->conv.act;
  if (in_family(p, "gemm")) return &OP_P(p)->gemm.act;
  if (in_family(p, "binary")) return &OP_P(p)->binary.act;
  return NULL;
}

static hd_status *fuse_activation(ir_graph *g, int ni, int *changed) {
  ir_node *a = &g->nodes[ni];
  if (!in_family(a, "unary") || a->nout != 1) return NULL;
  ir_node *p = sole_producer(g, a->in[0]);
  op_act *slot = p ? act_slot(p) : NULL;
  if (!slot || slot->kind != OP_ACT_NONE) return NULL;
  if (g->values[a->in[0]].dtype != g->values[a->out[0]].dtype) return NULL;
  *slot = OP_P(a)->unary.act;
  fuse_into(p, a);
  *changed = 1;
  return NULL;
}

typedef hd_status *(*fuse_pass)(ir_graph *g, int node, int *changed);

hd_status *plan_fuse(ir_graph *g, int *nfused) {
  static const fuse_pass passes[] = {fold_batchnorm, fuse_residual, fuse_matmul_bias, fuse_activation};
  *nfused = 0;
  for (size_t pi = 0; pi < sizeof passes / sizeof passes[0]; pi++) {
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
  return NULL;
}
