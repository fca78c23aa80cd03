/* plan_fuse_attention: attention written out in elementary ops, as
 * exporters write it, becomes one Attention node (ops/attention.h, the
 * `batched` form):
 *   MatMul(Q', K') (alpha)       Q' = Q or Q * c, K' = K^T or K^T * c
 *   -> Where(keep, scores, fill) or Where(drop, fill, scores)? -> Add(scores, bias)?
 *   -> Softmax(last axis) -> Where(IsNaN(probs), 0, probs)? -> MatMul(probs, V) -> Transpose?
 * A bias that is Where(keep, 0, fill) or Where(drop, fill, 0) of scalars
 * (transformers' masks since 4.5x: a boolean [B, 1, S, L] made once, one
 * Where a layer) is read as the boolean mask with fill added: the Where's
 * kernel and its [B, 1, S, L] bias go, and the attention reads a byte a
 * score instead of an element.
 * Transposes feeding Q, K^T and V (each read only there) become the node's
 * strides, and so does a Transpose of the output: no copy runs for them,
 * and the scores never reach memory. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_fuse.h"

#define MAX_KILL 16

typedef struct attn_match {
  int kill[MAX_KILL];
  int nkill;
} attn_match;

static int index_of(const ir_graph *g, const ir_node *n) { return (int)(n - g->nodes); }

static int add_kill(attn_match *m, const ir_graph *g, const ir_node *n) {
  if (m->nkill >= MAX_KILL) return 0;
  m->kill[m->nkill++] = index_of(g, n);
  return 1;
}

/* *v = Mul(x, c) or Div(x, c) of a scalar constant c, read only here: *v
 * becomes x and c goes into *scale. */
static int strip_scale(ir_graph *g, int *v, double *scale, attn_match *m) {
  ir_node *n = pf_sole_producer(g, *v);
  int div = n && pf_is_kind(n, OP_DIV);
  if (!n || (!div && !pf_is_kind(n, OP_MUL)) || n->nin != 2 || OP_P(n)->binary.act.kind != OP_ACT_NONE) return 1;
  for (int side = 0; side < (div ? 1 : 2); side++) {
    double c = pf_scalar_of(g, n->in[1 - side]);
    if (!isfinite(c) || c == 0.0 || g->values[n->in[1 - side]].rank > g->values[*v].rank) continue;
    if (g->values[n->in[side]].dtype != g->values[*v].dtype) continue;
    *scale *= div ? 1.0 / c : c;
    *v = n->in[side];
    return add_kill(m, g, n);
  }
  return 1;
}

static void perm_of(const ir_graph *g, const ir_node *t, int r, int8_t *perm) {
  const op_copy *c = &OP_P(t)->copy;
  for (int i = 0; i < r; i++) perm[i] = c->has_axes ? c->axes[i] : (int8_t)(r - 1 - i);
  (void)g;
}

/* Follows Transposes read only by the operand up from *v; perm: the
 * composed permutation (perm[0] = -1: none). */
static int absorb_transposes(ir_graph *g, int *v, int8_t *perm, attn_match *m) {
  memset(perm, -1, 4);
  for (;;) {
    ir_node *t = pf_sole_producer(g, *v);
    if (!t || !pf_is_kind(t, OP_TRANSPOSE)) return 1;
    int r = g->values[t->in[0]].rank;
    if (r < 2 || r > 4 || r != g->values[*v].rank) return 1;
    int8_t p2[4], next[4];
    perm_of(g, t, r, p2);
    for (int i = 0; i < r; i++) next[i] = p2[perm[0] >= 0 ? perm[i] : i];
    memcpy(perm, next, (size_t)r);
    *v = t->in[0];
    if (!add_kill(m, g, t)) return 0;
  }
}

/* *v = Where(IsNaN(p), 0, p), p read only by those two (torch's exporters
 * guard the rows whose every score is masked: zeros, not NaN): *v becomes
 * p and *empty_zero 1, the Attention's rule for such rows. (A NaN in Q, K
 * or V itself still gives NaN where the guard would have given 0.) */
static int strip_nan_guard(ir_graph *g, int *v, int *empty_zero, attn_match *m) {
  ir_node *w = pf_sole_producer(g, *v);
  if (!w || !pf_is_kind(w, OP_WHERE) || w->nin != 3 || pf_scalar_of(g, w->in[1]) != 0.0) return 1;
  const ir_value *pv = &g->values[w->in[2]], *cv = &g->values[w->in[0]];
  if (pv->nuses != 2 || pv->graph_output != IR_NONE || pv->producer == IR_NONE || cv->producer == IR_NONE) return 1;
  ir_node *nan = pf_sole_producer(g, w->in[0]);
  if (!nan || !pf_is_kind(nan, OP_IS_NAN) || nan->in[0] != w->in[2]) return 1;
  *v = w->in[2];
  *empty_zero = 1;
  return add_kill(m, g, w) && add_kill(m, g, nan);
}

/* The input of binary node n that MatMul or Where produced (the scores), or -1. */
static int scores_side(ir_graph *g, const ir_node *n) {
  for (int side = 0; side < 2; side++) {
    ir_node *p = pf_sole_producer(g, n->in[side]);
    if (p && (pf_is_kind(p, OP_MATMUL) || pf_is_kind(p, OP_WHERE))) return side;
  }
  return -1;
}

/* Dims that may be equal: the same static size or symbol, or either one
 * unknown (exporters' Q, K and V dims come from one input, but ORT may
 * name them apart, or know them on one side only: GPT-2's K^T through a
 * Reshape of computed shape). The Attention's infer checks them at every
 * plan's shapes and fails with a clear error where a MatMul would have
 * broadcast. */
static int same_dim(const ir_value *a, int i, const ir_value *b, int j) {
  return ir_dims_equal(a, i, b, j) || a->dims[i] < 0 || b->dims[j] < 0;
}

/* A mask or bias that broadcasts to the scores s without growing them. */
static int fits_scores(const ir_value *m, const ir_value *s) {
  if (m->rank > s->rank) return 0; /* unknown dims: checked at plan time */
  for (int i = 1; i <= m->rank; i++) {
    int64_t md = m->dims[m->rank - i], sd = s->dims[s->rank - i];
    if (md >= 0 && md != 1 && sd >= 0 && md != sd) return 0;
  }
  return 1;
}

/* bias = Where(cond, a, b) of scalars a and b, one of them 0: *keep =
 * cond, *fill = the other scalar, *invert = 1 when cond marks what is
 * masked (Where(drop, fill, 0)). A Where read only here goes with the
 * fusion; one with other readers (ONNX Runtime's common-subexpression pass
 * makes the layers' identical mask Wheres one) stays for them, and goes
 * once the last of them, each an attention reading cond, is fused. */
static int bias_as_mask(ir_graph *g, int bias, int *keep, double *fill, int *invert, attn_match *m) {
  const ir_value *bv = &g->values[bias];
  if (bv->producer == IR_NONE || g->nodes[bv->producer].dead) return 0;
  ir_node *w = &g->nodes[bv->producer];
  if (!pf_is_kind(w, OP_WHERE) || w->nin != 3 || g->values[w->in[0]].dtype != HD_DT_BOOL) return 0;
  double a = pf_scalar_of(g, w->in[1]), b = pf_scalar_of(g, w->in[2]);
  if (isnan(a) || isnan(b) || (a == 0.0) == (b == 0.0)) return 0;
  if (bv->nuses == 1 && bv->graph_output == IR_NONE && !add_kill(m, g, w)) return 0;
  *keep = w->in[0];
  *invert = a != 0.0;
  *fill = a != 0.0 ? a : b;
  return 1;
}

/* A head size the backends run. Exporters reshape with computed shapes, so
 * it is often unknown here: then the plan checks it (a clear error past
 * OP_ATTN_MAX_HEAD_DIM, which no exported transformer has). */
static int fits_head(const ir_value *v) { return v->dims[v->rank - 1] <= OP_ATTN_MAX_HEAD_DIM; }

hd_status *pf_fuse_attention(ir_graph *g, int ri, int *changed) {
  ir_node *mm2 = &g->nodes[ri];
  if (!pf_is_kind(mm2, OP_MATMUL) || mm2->nin != 2) return NULL;
  const op_gemm *g2 = &OP_P(mm2)->gemm;
  if (g2->has_c || g2->act.kind != OP_ACT_NONE || g2->alpha != 1.0f) return NULL;
  attn_match m = {.nkill = 0};
  int probs = mm2->in[0], empty_zero = 0;
  if (!strip_nan_guard(g, &probs, &empty_zero, &m)) return NULL;
  /* the probabilities' producer: read by the MatMul, or by the guard's IsNaN and Where */
  ir_node *sm = empty_zero ? &g->nodes[g->values[probs].producer] : pf_sole_producer(g, probs);
  if (!sm || sm->dead || !pf_is_kind(sm, OP_SOFTMAX)) return NULL;
  int r = g->values[sm->in[0]].rank, ax = OP_P(sm)->softmax.axis;
  if (r < 2 || r > 4 || (ax < 0 ? ax + r : ax) != r - 1) return NULL;
  add_kill(&m, g, sm);
  int scores = sm->in[0], bias = IR_NONE, keep = IR_NONE, invert = 0;
  double fill = 0.0;
  ir_node *nd = pf_sole_producer(g, scores);
  if (nd && pf_is_kind(nd, OP_ADD) && nd->nin == 2 && OP_P(nd)->binary.act.kind == OP_ACT_NONE) {
    int side = scores_side(g, nd);
    if (side < 0) return NULL;
    bias = nd->in[1 - side];
    scores = nd->in[side];
    add_kill(&m, g, nd);
    nd = pf_sole_producer(g, scores);
  }
  if (nd && pf_is_kind(nd, OP_WHERE) && nd->nin == 3) { /* Where(keep, scores, fill) or Where(drop, fill, scores) */
    ir_node *mm = pf_sole_producer(g, nd->in[1]);
    invert = !mm || !pf_is_kind(mm, OP_MATMUL);
    fill = pf_scalar_of(g, nd->in[invert ? 1 : 2]);
    if (isnan(fill) || g->values[nd->in[0]].dtype != HD_DT_BOOL) return NULL;
    keep = nd->in[0];
    scores = nd->in[invert ? 2 : 1];
    add_kill(&m, g, nd);
    nd = pf_sole_producer(g, scores);
  }
  if (!nd || !pf_is_kind(nd, OP_MATMUL) || nd->nin != 2) return NULL;
  const op_gemm *g1 = &OP_P(nd)->gemm;
  if (g1->has_c || g1->act.kind != OP_ACT_NONE) return NULL;
  if (g->values[nd->out[0]].rank != r || g->values[sm->in[0]].rank != r) return NULL;
  add_kill(&m, g, nd);
  double scale = g1->alpha;
  int q = nd->in[0], kt = nd->in[1], v = mm2->in[1];
  if (!strip_scale(g, &q, &scale, &m) || !strip_scale(g, &kt, &scale, &m)) return NULL;
  if (!isfinite(scale) || scale <= 0.0) return NULL;
  const ir_value *qv = &g->values[q], *kv = &g->values[kt], *vv = &g->values[v], *ov = &g->values[mm2->out[0]];
  int dt = qv->dtype;
  if ((dt != HD_DT_F32 && dt != HD_DT_F16 && dt != HD_DT_BF16) || kv->dtype != dt || vv->dtype != dt || ov->dtype != dt)
    return NULL;
  if (qv->rank != r || kv->rank != r || vv->rank != r) return NULL;
  for (int i = 0; i < r - 2; i++)
    if (!same_dim(qv, i, kv, i) || !same_dim(qv, i, vv, i)) return NULL;
  if (!same_dim(qv, r - 1, kv, r - 2) || !same_dim(kv, r - 1, vv, r - 2) || !fits_head(qv) || !fits_head(vv)) return NULL;
  const ir_value *sv = &g->values[nd->out[0]];
  if (bias != IR_NONE && (g->values[bias].dtype != dt || !fits_scores(&g->values[bias], sv))) return NULL;
  int mask_add = 0;
  if (keep == IR_NONE && bias != IR_NONE && bias_as_mask(g, bias, &keep, &fill, &invert, &m)) bias = IR_NONE, mask_add = 1;
  if (keep != IR_NONE && !fits_scores(&g->values[keep], sv)) return NULL;
  op_attention p;
  memset(&p, 0, sizeof p);
  if (!absorb_transposes(g, &q, p.q_perm, &m) || !absorb_transposes(g, &kt, p.k_perm, &m) ||
      !absorb_transposes(g, &v, p.v_perm, &m))
    return NULL;
  int out = mm2->out[0];
  memset(p.out_perm, -1, 4);
  int ci = pf_sole_consumer(g, out);
  if (ci != IR_NONE && pf_is_kind(&g->nodes[ci], OP_TRANSPOSE) && g->values[g->nodes[ci].out[0]].rank == r &&
      m.nkill < MAX_KILL) {
    perm_of(g, &g->nodes[ci], r, p.out_perm);
    out = g->nodes[ci].out[0];
    add_kill(&m, g, &g->nodes[ci]);
  }
  int *in = malloc(sizeof(int) * 5);
  char *type = strdup("Attention");
  if (!in || !type) {
    free(in);
    free(type);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "fusing attention: out of host memory");
  }
  in[0] = q, in[1] = kt, in[2] = v, in[3] = keep, in[4] = bias;
  p.in_q = 0, p.in_k = 1, p.in_v = 2;
  p.in_mask = keep != IR_NONE ? 3 : -1;
  p.in_bias = bias != IR_NONE ? 4 : -1;
  p.in_weights = p.in_proj_bias = -1;
  p.batched = p.k_transposed = 1;
  p.pack = 1;
  p.scale = (float)scale;
  p.mask_form = OP_ATTN_MASK_BCAST;
  p.fill = (float)fill;
  p.mask_add = mask_add;
  p.mask_invert = invert;
  p.empty_zero = empty_zero;
  for (int i = 0; i < m.nkill; i++) {
    pf_absorb(mm2, &g->nodes[m.kill[i]]);
  }
  free(mm2->in);
  free(mm2->op_type);
  mm2->in = in;
  mm2->nin = 5;
  mm2->out[0] = out;
  mm2->op_type = type;
  mm2->kind = OP_ATTENTION;
  mm2->opset = 23;
  memset(&mm2->p, 0, sizeof mm2->p);
  OP_P(mm2)->attention = p;
  *changed = 1;
  return NULL;
}
