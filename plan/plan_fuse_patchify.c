/* plan_fuse_patchify: a 2-D Conv whose stride is its kernel (no padding,
 * no dilation, one group: a vision transformer's patch embedding) is a
 * matrix product over non-overlapping patches, written as one:
 *   x [N, C, H, W] -> Reshape [N, C, Ho, kh, Wo, kw]
 *     -> Transpose (0, 1, 3, 5, 2, 4) -> Reshape [N, C kh kw, Ho Wo]
 *     -> MatMul(W as [M, C kh kw], .) (+ bias [M, 1]) -> Reshape [N, M, Ho, Wo]
 * One copy of the image and one GEMM. cuDNN's engines for ViT-B/16's
 * 16 x 16 / 16 patch conv (3 -> 768 channels) took 64 us at batch 1 in
 * half precision on an H100 (and relayouts around it) for what a GEMM of
 * [768, 768] x [768, 196] does in a few. H and W must be known and whole
 * multiples of the kernel (the Reshapes are fixed here). Kernels of 8 x 8
 * and up only: ConvNeXt's 4 x 4 stem (K = 48) is left to cuDNN, as no
 * measurement says the GEMM form is faster there. */
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
  const int dt = x->dtype, xin = conv->in[0], yout = conv->out[0];
  const int64_t ho = h / kh, wo = wd / kw, ckk = ch * kh * kw;
  const size_t es = hd_dtype_size(dt);
  /* the constants: W as [M, C kh kw] (the same bytes), the bias as a column */
  int w2, b2 = IR_NONE, x6, xt, patches, prod, biased;
  const int64_t w2d[2] = {m, ckk}, b2d[2] = {m, 1};
  HD_TRY(new_const(g, base, "weight_2d", dt, 2, w2d, g->values[conv->in[1]].data, (size_t)(m * ckk) * es, &w2));
  if (b) HD_TRY(new_const(g, base, "bias_column", dt, 2, b2d, g->values[conv->in[2]].data, (size_t)m * es, &b2));
  const int64_t d6[6] = {0, ch, ho, kh, wo, kw}, g6[6] = {-1, ch, ho, kh, wo, kw}, dt6[6] = {-1, ch, kh, kw, ho, wo};
  const int64_t d3[3] = {0, ckk, ho * wo};
  const int64_t dp[3] = {-1, ckk, ho * wo}, dm[3] = {-1, m, ho * wo}, d4[4] = {0, m, ho, wo};
  HD_TRY(new_value(g, base, "patch_grid", dt, 6, g6, &x6));
  HD_TRY(new_value(g, base, "patches_t", dt, 6, dt6, &xt));
  HD_TRY(new_value(g, base, "patches", dt, 3, dp, &patches));
  HD_TRY(new_value(g, base, "product", dt, 3, dm, &prod));
  if (b) HD_TRY(new_value(g, base, "biased", dt, 3, dm, &biased));
  else biased = prod;
  /* nodes before the Conv, which becomes the last Reshape */
  int at = ci;
  ir_params *p;
  HD_TRY(reshape(g, at++, base, "grid_shape", xin, d6, 6, x6));
  HD_TRY(insert(g, at++, OP_TRANSPOSE, base, "Transpose", 21, &x6, 1, xt, &p));
  op_copy *tp = &((op_params *)(void *)p)->copy;
  tp->has_axes = 1, tp->n = 6;
  memcpy(tp->axes, (const int8_t[6]){0, 1, 3, 5, 2, 4}, 6);
  HD_TRY(reshape(g, at++, base, "patches_shape", xt, d3, 3, patches));
  HD_TRY(insert(g, at++, OP_MATMUL, base, "MatMul", 13, (const int[2]){w2, patches}, 2, prod, &p));
  op_gemm *gm = &((op_params *)(void *)p)->gemm;
  gm->alpha = gm->beta = 1.0f, gm->is_matmul = 1;
  if (b) {
    HD_TRY(insert(g, at++, OP_ADD, base, "Add", 14, (const int[2]){prod, b2}, 2, biased, &p));
    ((op_params *)(void *)p)->binary.kind = OP_BIN_ADD;
  }
  /* the Conv (now at `at`) becomes Reshape(biased, [N, M, Ho, Wo]) -> y */
  int shape;
  const int64_t four = 4;
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
  *changed = 1;
  return NULL;
}
