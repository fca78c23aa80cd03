/* plan_fuse_patchify: a 2-D Conv whose stride is its kernel (no padding,
 * no dilation, one group: a vision transformer's patch embedding) is a
 * matrix product over non-overlapping patches, written as one:
 *   x [N, C, H, W] -> Reshape [N, C, Ho, kh, Wo, kw]
 *     -> Transpose (0, 1, 3, 5, 2, 4) -> Reshape [N, C kh kw, Ho Wo]
 *     -> MatMul(W as [M, C kh kw], .) (+ bias [M, 1]) -> Reshape [N, M, Ho, Wo]
 * One copy of the image and one GEMM. When y's data is read only by a
 * Reshape to [N, M, Ho Wo] and a Transpose (0, 2, 1) (ViT's flatten(2)
 * .transpose(1, 2) to tokens), the product is made token-major instead:
 *   x -> Reshape [N, C, Ho, kh, Wo, kw] -> Transpose (0, 2, 4, 1, 3, 5)
 *     -> Reshape [N, Ho Wo, C kh kw] -> MatMul(., W^T) (+ bias [M]) -> tokens
 * so the bias is a row bias the GEMM's epilogue adds, and neither the
 * bias's own pass nor the Transpose to tokens runs. cuDNN's engines for ViT-B/16's
 * 16 x 16 / 16 patch conv (3 -> 768 channels) took 64 us at batch 1 in
 * half precision on an H100 (and relayouts around it) for what a GEMM of
 * [768, 768] x [768, 196] does in a few. H and W must be known and whole
 * multiples of the kernel (the Reshapes are fixed here). Kernels of 8 x 8
 * and up only: taking ConvNeXt's 4 x 4 stem and 2 x 2 downsampling convs
 * too (channel-major) made its batch 32 10% slower (docs/benchmarks.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_fuse.h"

/* A new value name/suffix of dtype, rank and dims (NULL: unknown). */
static hd_status *new_value(ir_graph *g, const char *base, const char *suffix, int dtype, int rank,
                            const int64_t *dims, int *v) {
  char name[512];
  snprintf(name, sizeof name, "%s/%s", base, suffix);
  return ir_graph_add_value(g, name, dtype, rank, dims, v);
}

static hd_status *new_const(ir_graph *g, const char *base, const char *suffix, int dtype, int rank,
                            const int64_t *dims, const void *data, size_t bytes, int *v) {
  HD_TRY(new_value(g, base, suffix, dtype, rank, dims, v));
  return ir_value_set_data(g, *v, data, bytes);
}

/* Inserts node kind (op_type, opset) before node `at`, its params zeroed:
 * the caller sets what its parse would have. */
static hd_status *insert(ir_graph *g, int at, int kind, const char *base, const char *op_type, int opset,
                         const int *in, int nin, int out, ir_params **p) {
  char name[512];
  snprintf(name, sizeof name, "%s/%s", base, op_type);
  HD_TRY(ir_graph_insert_node(g, at, kind, name, op_type, opset, in, nin, &out, 1));
  memset(&g->nodes[at].p, 0, sizeof g->nodes[at].p);
  *p = &g->nodes[at].p;
  return NULL;
}

static hd_status *reshape(ir_graph *g, int at, const char *base, const char *suffix, int x, const int64_t *dims,
                          int rank, int y) {
  int shape;
  int64_t r = rank;
  HD_TRY(new_const(g, base, suffix, HD_DT_I64, 1, &r, dims, sizeof(int64_t) * (size_t)rank, &shape));
  int in[2] = {x, shape};
  ir_params *p;
  HD_TRY(insert(g, at, OP_RESHAPE, base, "Reshape", 14, in, 2, y, &p));
  ((op_params *)(void *)p)->view.rank = -1;
  return NULL;
}

/* Element i of int value v (a shape, or one piece of it) is the batch:
 * dim 0 of x or y, through Shape, Gather, Slice, Concat, Unsqueeze and
 * Cast, as exporters compute it (torch: Unsqueeze(Gather(Shape(x), 0))). */
static int is_batch(const ir_graph *g, int v, int64_t i, int x, int y, int depth) {
  const ir_value *val = &g->values[v];
  if (depth > 8 || i < 0 || val->rank < 0 || val->rank > 1 || (val->rank == 0 && i != 0) ||
      (val->rank == 1 && (val->dims[0] < 0 || i >= val->dims[0])) || val->producer == IR_NONE)
    return 0;
  const ir_node *n = &g->nodes[val->producer];
  if (n->dead || n->out[0] != v) return 0;
  switch (n->kind) {
    case OP_SHAPE: {
      int64_t start = OP_P(n)->shape.start;
      if (start < 0) start += g->values[n->in[0]].rank;
      return (n->in[0] == x || n->in[0] == y) && (start < 0 ? 0 : start) + i == 0;
    }
    case OP_SLICE: {
      int64_t start = pf_slice_start(g, n);
      return start >= 0 && is_batch(g, n->in[0], start + i, x, y, depth + 1);
    }
    case OP_GATHER: { /* one element of a shape */
      if (n->nin != 2 || OP_P(n)->gather.axis != 0 || ir_numel(val->rank, val->dims) != 1) return 0;
      double k = pf_const_elem(&g->values[n->in[1]], 0);
      if (isnan(k)) return 0;
      return is_batch(g, n->in[0], (int64_t)(k < 0 ? k + (double)g->values[n->in[0]].dims[0] : k), x, y, depth + 1);
    }
    case OP_CONCAT:
      for (int p = 0; p < n->nin; p++) {
        const ir_value *piece = &g->values[n->in[p]];
        int64_t len = piece->rank == 0 ? 1 : piece->rank == 1 ? piece->dims[0] : -1;
        if (len < 0) return 0;
        if (i < len) return is_batch(g, n->in[p], i, x, y, depth + 1);
        i -= len;
      }
      return 0;
    case OP_UNSQUEEZE: case OP_SQUEEZE: case OP_CAST: case OP_IDENTITY: case OP_RESHAPE:
      return ir_numel(val->rank, val->dims) == 1 && is_batch(g, n->in[0], 0, x, y, depth + 1);
    default: return 0;
  }
}

/* Reshape node r turns y [N, M, Ho, Wo] (computed from x) into [N, M,
 * Ho Wo]: its shape's elements are the batch (or n where x's is static),
 * M, and Ho Wo, one of the first and last possibly the inferred -1. */
enum { DIM_BATCH = -2, DIM_INFERRED = -1 };
static int flattens_grid(const ir_graph *g, const ir_node *r, int x, int y, int64_t n, int64_t m, int64_t ho,
                         int64_t wo) {
  if (r->nin < 2 || OP_P(r)->view.allowzero) return 0;
  const ir_value *shape = &g->values[r->in[1]];
  if (shape->rank != 1 || shape->dims[0] != 3) return 0;
  const int64_t ydims[3] = {DIM_BATCH, m, ho};
  int64_t d[3];
  for (int i = 0; i < 3; i++) {
    double e = pf_vec_elem(g, r->in[1], i);
    if (isnan(e)) {
      if (!is_batch(g, r->in[1], i, x, y, 0)) return 0;
      d[i] = DIM_BATCH;
    } else {
      d[i] = e == 0.0 ? ydims[i] : (int64_t)e; /* 0 copies y's dim */
      if (e < -1.0) return 0;
    }
  }
  int batch = d[0] == DIM_BATCH || (n > 0 && d[0] == n), rows = d[2] == ho * wo;
  return d[1] == m && ((batch && (rows || d[2] == DIM_INFERRED)) || (d[0] == DIM_INFERRED && rows));
}

/* The node that reads v's data, when only one does and v leaves no
 * partition (others may read its shape); else IR_NONE. */
static int sole_data_reader(const ir_graph *g, int v) {
  if (g->values[v].graph_output != IR_NONE) return IR_NONE;
  int reader = IR_NONE;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    int reads = 0;
    for (int k = 0; k < n->nin && !n->dead; k++) reads |= n->in[k] == v;
    if (!reads) continue;
    const op_def *d = op_get((op_kind)n->kind);
    if (d && d->shape_only) continue;
    if (reader != IR_NONE) return IR_NONE;
    reader = i;
  }
  return reader;
}

/* y -> Reshape to [N, M, Ho Wo] -> Transpose (0, 2, 1), each the only
 * reader of the data before it: the Transpose's node, or IR_NONE. */
static int token_transpose(const ir_graph *g, int x, int y, int64_t n, int64_t m, int64_t ho, int64_t wo) {
  int ri = sole_data_reader(g, y);
  if (ri == IR_NONE || !pf_is_kind(&g->nodes[ri], OP_RESHAPE) ||
      !flattens_grid(g, &g->nodes[ri], x, y, n, m, ho, wo))
    return IR_NONE;
  int ti = sole_data_reader(g, g->nodes[ri].out[0]);
  if (ti == IR_NONE || !pf_is_kind(&g->nodes[ti], OP_TRANSPOSE)) return IR_NONE;
  const op_copy *c = &OP_P(&g->nodes[ti])->copy;
  return c->has_axes && c->n == 3 && c->axes[0] == 0 && c->axes[1] == 2 && c->axes[2] == 1 ? ti : IR_NONE;
}

hd_status *pf_patchify_conv(ir_graph *g, int ci, int *changed) {
  const ir_node *conv = &g->nodes[ci];
  if (!pf_is_kind(conv, OP_CONV) || conv->nout != 1 || conv->nin < 2) return NULL;
  const op_conv *c = &OP_P(conv)->conv;
  if (c->nspatial != 2 || c->group != 1 || c->has_residual || c->act.kind != OP_ACT_NONE || c->channels_last ||
      (c->auto_pad != OP_PAD_NOTSET && c->auto_pad != OP_PAD_VALID))
    return NULL;
  const ir_value *x = &g->values[conv->in[0]], *w = &g->values[conv->in[1]];
  if (x->rank != 4 || w->rank != 4 || !w->is_const || !w->data || w->dtype != x->dtype) return NULL;
  const int64_t m = w->dims[0], ch = w->dims[1], kh = w->dims[2], kw = w->dims[3], h = x->dims[2], wd = x->dims[3];
  if (kh * kw < 64 || ch != x->dims[1] || h <= 0 || wd <= 0 || h % kh || wd % kw) return NULL;
  for (int d = 0; d < 2; d++)
    if (c->strides[d] != w->dims[2 + d] || c->dilations[d] != 1 || c->pads_begin[d] || c->pads_end[d] ||
        (c->kernel[d] && c->kernel[d] != w->dims[2 + d]))
      return NULL;
  const ir_value *b = c->has_bias && conv->nin > 2 && conv->in[2] != IR_NONE ? &g->values[conv->in[2]] : NULL;
  if (b && (!b->is_const || !b->data || b->dtype != x->dtype || ir_numel(b->rank, b->dims) != m)) return NULL;

  char base[400];
  snprintf(base, sizeof base, "%s", conv->name);
  const int dt = x->dtype, xin = conv->in[0], yout = conv->out[0], bin = b ? conv->in[2] : IR_NONE;
  const int64_t ho = h / kh, wo = wd / kw, ckk = ch * kh * kw, hw = ho * wo;
  const size_t es = hd_dtype_size(dt);
  /* token-major when not IR_NONE (the bias, read as it is, must be [M]) */
  const int ti = b && b->rank != 1 ? IR_NONE : token_transpose(g, xin, yout, x->dims[0], m, ho, wo);
  const int tokens = ti != IR_NONE ? g->nodes[ti].out[0] : IR_NONE;
  /* the weight: [M, C kh kw] (the same bytes), or its transpose for tokens */
  int wmat, x6, xt, patches, prod, biased = IR_NONE;
  if (ti == IR_NONE) {
    HD_TRY(new_const(g, base, "weight_2d", dt, 2, (const int64_t[2]){m, ckk}, g->values[conv->in[1]].data,
                     (size_t)(m * ckk) * es, &wmat));
  } else {
    const uint8_t *src = g->values[conv->in[1]].data;
    uint8_t *wt = malloc((size_t)(m * ckk) * es);
    if (!wt) return hd_error(HD_ERR_OUT_OF_MEMORY, "patchify: out of host memory");
    for (int64_t r = 0; r < m; r++)
      for (int64_t k = 0; k < ckk; k++) memcpy(wt + (size_t)(k * m + r) * es, src + (size_t)(r * ckk + k) * es, es);
    hd_status *st = new_const(g, base, "weight_2d_t", dt, 2, (const int64_t[2]){ckk, m}, wt, (size_t)(m * ckk) * es,
                              &wmat);
    free(wt);
    HD_TRY(st);
  }
  /* the bias: a column of the channel-major product; the tokens' row bias as it is */
  int bias = bin;
  if (b && ti == IR_NONE)
    HD_TRY(new_const(g, base, "bias_column", dt, 2, (const int64_t[2]){m, 1}, g->values[bin].data, (size_t)m * es,
                     &bias));
  /* patches: channel-major [N, C kh kw, Ho Wo], or token-major [N, Ho Wo, C kh kw] */
  static const int8_t perm_chan[6] = {0, 1, 3, 5, 2, 4}, perm_tok[6] = {0, 2, 4, 1, 3, 5};
  const int8_t *perm = ti == IR_NONE ? perm_chan : perm_tok;
  const int64_t g6[6] = {-1, ch, ho, kh, wo, kw};
  int64_t t6[6], pd[3] = {-1, ti == IR_NONE ? ckk : hw, ti == IR_NONE ? hw : ckk};
  for (int d = 0; d < 6; d++) t6[d] = g6[perm[d]];
  const int64_t md[3] = {-1, ti == IR_NONE ? m : hw, ti == IR_NONE ? hw : m};
  HD_TRY(new_value(g, base, "patch_grid", dt, 6, g6, &x6));
  HD_TRY(new_value(g, base, "patches_t", dt, 6, t6, &xt));
  HD_TRY(new_value(g, base, "patches", dt, 3, pd, &patches));
  if (ti != IR_NONE && !b) prod = tokens;
  else HD_TRY(new_value(g, base, "product", dt, 3, md, &prod));
  if (b) {
    if (ti != IR_NONE) biased = tokens;
    else HD_TRY(new_value(g, base, "biased", dt, 3, md, &biased));
  } else {
    biased = prod;
  }
  /* nodes before the Conv, which becomes the last Reshape */
  int at = ci;
  ir_params *p;
  HD_TRY(reshape(g, at++, base, "grid_shape", xin, (const int64_t[6]){0, ch, ho, kh, wo, kw}, 6, x6));
  HD_TRY(insert(g, at++, OP_TRANSPOSE, base, "Transpose", 21, &x6, 1, xt, &p));
  op_copy *tp = &((op_params *)(void *)p)->copy;
  tp->has_axes = 1, tp->n = 6;
  memcpy(tp->axes, perm, 6);
  HD_TRY(reshape(g, at++, base, "patches_shape", xt, (const int64_t[3]){0, pd[1], pd[2]}, 3, patches));
  const int mm_in[2] = {ti == IR_NONE ? wmat : patches, ti == IR_NONE ? patches : wmat};
  HD_TRY(insert(g, at++, OP_MATMUL, base, "MatMul", 13, mm_in, 2, prod, &p));
  op_gemm *gm = &((op_params *)(void *)p)->gemm;
  gm->alpha = gm->beta = 1.0f, gm->is_matmul = 1;
  if (b) {
    HD_TRY(insert(g, at++, OP_ADD, base, "Add", 14, (const int[2]){prod, bias}, 2, biased, &p));
    ((op_params *)(void *)p)->binary.kind = OP_BIN_ADD;
  }
  const int inserted = at - ci;
  /* The Conv (now at `at`) becomes Reshape(biased, [N, M, Ho, Wo]) -> y.
   * Token-major, that is a view of the tokens in their order, not y's: the
   * Transpose to tokens goes (its output is what the nodes above write),
   * and what is left reads only y's shape (the exporter's flatten shape). */
  int shape;
  const int64_t four = 4, d4[4] = {0, m, ho, wo};
  HD_TRY(new_const(g, base, "output_shape", HD_DT_I64, 1, &four, d4, sizeof d4, &shape));
  ir_node *n = &g->nodes[at];
  int *in = realloc(n->in, sizeof(int) * 2);
  char *type = strdup("Reshape");
  if (!in || !type) {
    free(type);
    if (in) n->in = in;
    return hd_error(HD_ERR_OUT_OF_MEMORY, "patchify: out of host memory");
  }
  free(n->op_type);
  n->in = in, n->nin = 2, n->in[0] = biased, n->in[1] = shape;
  n->op_type = type, n->kind = OP_RESHAPE, n->opset = 14;
  n->out[0] = yout;
  memset(&n->p, 0, sizeof n->p);
  OP_P(n)->view.rank = -1;
  if (ti != IR_NONE) pf_absorb(&g->nodes[at - 1], &g->nodes[ti + inserted]);
  *changed = 1;
  return NULL;
}
