/* plan_fuse_se: squeeze-and-excitation blocks, as exporters write them,
 * become one SqueezeExcite node (ops/squeeze_excite.h):
 *   GlobalAveragePool(x) or ReduceMean(x, spatial axes, keepdims)
 *   -> Conv 1x1 (+ bias) -> act? -> Conv 1x1 (+ bias) -> gate act? -> Mul(x, gate)
 * An act is a unary activation (Relu, Sigmoid, HardSigmoid, ...) or SiLU
 * written out, Mul(v, Sigmoid(v)) (torchvision's EfficientNet; its gate is
 * a Sigmoid, MobileNetV3's a HardSigmoid). Every value in between is read
 * only inside the block. Runs before the other passes, on the nodes as
 * imported: the block's six to eight small kernels become the step's three
 * (channel means, hidden layer, gate and scale). */
#include <stdlib.h>
#include <string.h>

#include "plan/plan_fuse.h"

#define SE_MAX_GONE 8

typedef struct se_match {
  ir_node *gone[SE_MAX_GONE];
  int ngone;
} se_match;

static void gone(se_match *m, ir_node *n) { m->gone[m->ngone++] = n; }

/* The live producer of v when v is read by exactly `uses` node inputs and
 * is no partition output, else NULL. */
static ir_node *producer_read(ir_graph *g, int v, int uses) {
  const ir_value *val = &g->values[v];
  if (val->producer == IR_NONE || val->nuses != uses || val->graph_output != IR_NONE) return NULL;
  ir_node *p = &g->nodes[val->producer];
  return p->dead ? NULL : p;
}

/* The activation producing *v, if any: *v becomes its input and *act its
 * kind (none when no activation produces *v). Returns the number of reads
 * of the new *v inside the block (SiLU reads its input twice). */
static int strip_act(ir_graph *g, int *v, op_act *act, se_match *m) {
  memset(act, 0, sizeof *act);
  ir_node *u = producer_read(g, *v, 1);
  if (!u) return 1;
  if (op_node_in_family(u, "unary") && !OP_P(u)->unary.has_bias &&
      u->nout == 1 &&
      OP_P(u)->unary.act.kind != OP_ACT_NONE && g->values[u->in[0]].dtype == g->values[*v].dtype) {
    *act = OP_P(u)->unary.act; /* Clip's bounds are in it: its other inputs are constants */
    *v = u->in[0];
    gone(m, u);
    return 1;
  }
  if (!pf_is_kind(u, OP_MUL) || u->nin != 2 || OP_P(u)->binary.act.kind != OP_ACT_NONE ||
      OP_P(u)->binary.in_act.kind != OP_ACT_NONE || OP_P(u)->binary.permuted)
    return 1;
  for (int k = 0; k < 2; k++) { /* SiLU: Mul(s, Sigmoid(s)), s read by the two only */
    ir_node *sig = producer_read(g, u->in[k], 1);
    int s = u->in[1 - k];
    if (!sig || !pf_is_kind(sig, OP_SIGMOID) || sig->in[0] != s || !producer_read(g, s, 2)) continue;
    act->kind = OP_ACT_QUICK_GELU;
    act->alpha = 1.f;
    *v = s;
    gone(m, u);
    gone(m, sig);
    return 2;
  }
  return 1;
}

/* A 1x1 convolution of one group producing v (read `uses` times) from a
 * [N, C, 1...] tensor, constant weights [rows, cols, 1...] of x's rank and
 * constant bias; its act composes with an activation after it only when
 * one of the two is none. */
static ir_node *projection(ir_graph *g, int v, int uses, int rank, op_act *act, se_match *m) {
  ir_node *c = producer_read(g, v, uses);
  if (!c || !pf_is_kind(c, OP_CONV) || c->nin < 2) return NULL;
  const op_conv *p = &OP_P(c)->conv;
  if (p->group != 1 || p->has_residual || p->transpose || p->nspatial != rank - 2) return NULL;
  if (p->auto_pad != OP_PAD_NOTSET && p->auto_pad != OP_PAD_VALID) return NULL;
  for (int i = 0; i < p->nspatial; i++)
    if (p->pads_begin[i] || p->pads_end[i]) return NULL;
  if (p->act.kind != OP_ACT_NONE) {
    if (act->kind != OP_ACT_NONE) return NULL;
    *act = p->act;
  }
  const ir_value *w = &g->values[c->in[1]];
  if (!w->is_const || w->rank != rank) return NULL;
  for (int d = 2; d < rank; d++)
    if (w->dims[d] != 1) return NULL;
  if (p->has_bias && (c->nin < 3 || c->in[2] == IR_NONE || !g->values[c->in[2]].is_const)) return NULL;
  gone(m, c);
  return c;
}

/* v = the channel means of x: GlobalAveragePool, or ReduceMean over every
 * spatial axis with keepdims, read once. */
static ir_node *channel_means(ir_graph *g, int v, int x, int rank, se_match *m) {
  ir_node *p = producer_read(g, v, 1);
  if (!p || p->in[0] != x) return NULL;
  if (pf_is_kind(p, OP_GLOBAL_AVERAGE_POOL)) {
    gone(m, p);
    return p;
  }
  if (!pf_is_kind(p, OP_REDUCE_MEAN) || !OP_P(p)->reduce.keepdims) return NULL;
  int64_t axes[8];
  int n = OP_P(p)->reduce.naxes;
  memcpy(axes, OP_P(p)->reduce.axes, sizeof axes);
  if (p->nin > 1 && p->in[1] != IR_NONE) { /* opset 18: a constant input */
    const ir_value *a = &g->values[p->in[1]];
    if (!a->is_const || !a->data || a->dtype != HD_DT_I64 || a->rank != 1 || a->dims[0] < 1 || a->dims[0] > 8)
      return NULL;
    n = (int)a->dims[0];
    memcpy(axes, a->data, sizeof(int64_t) * (size_t)n);
  }
  int seen = 0;
  for (int i = 0; i < n; i++) {
    int64_t ax = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (ax < 2 || ax >= rank) return NULL;
    seen |= 1 << ax;
  }
  if (seen != ((1 << rank) - 4)) return NULL; /* exactly axes 2 .. rank - 1 */
  gone(m, p);
  return p;
}

static hd_status *fuse_at(ir_graph *g, ir_node *mul, int side, int *changed) {
  int x = mul->in[1 - side], v = mul->in[side];
  const ir_value *xv = &g->values[x];
  int rank = xv->rank, dt = xv->dtype;
  /* The gate is [N, C, 1...] of x's own N and C: the product has x's shape. */
  const ir_value *yv = &g->values[mul->out[0]];
  if (rank < 3 || rank > 2 + OP_MAX_SPATIAL || yv->dtype != dt || (yv->rank >= 0 && yv->rank != rank)) return NULL;
  se_match m = {.ngone = 0};
  op_act gate_act, act;
  int uses = strip_act(g, &v, &gate_act, &m);
  ir_node *expand = projection(g, v, uses, rank, &gate_act, &m);
  if (!expand) return NULL;
  v = expand->in[0];
  uses = strip_act(g, &v, &act, &m);
  ir_node *squeeze = projection(g, v, uses, rank, &act, &m);
  if (!squeeze || !channel_means(g, squeeze->in[0], x, rank, &m)) return NULL;
  const ir_value *w1 = &g->values[squeeze->in[1]], *w2 = &g->values[expand->in[1]];
  int64_t c = w1->dims[1], r = w1->dims[0];
  if (w2->dims[0] != c || w2->dims[1] != r || (xv->dims[1] >= 0 && xv->dims[1] != c)) return NULL;
  if (c > OP_SE_MAX_CHANNELS || r > OP_SE_MAX_CHANNELS) return NULL; /* the written-out ops run it */
  int in[SE_NIN] = {x, squeeze->in[1], OP_P(squeeze)->conv.has_bias ? squeeze->in[2] : IR_NONE, expand->in[1],
                    OP_P(expand)->conv.has_bias ? expand->in[2] : IR_NONE};
  for (int k = 0; k < SE_NIN; k++)
    if (in[k] != IR_NONE && g->values[in[k]].dtype != dt) return NULL;
  int *nin = realloc(mul->in, sizeof(int) * SE_NIN);
  if (!nin) return hd_error(HD_ERR_OUT_OF_MEMORY, "fusing squeeze-excite: out of host memory");
  mul->in = nin;
  char *type = strdup("SqueezeExcite");
  if (!type) return hd_error(HD_ERR_OUT_OF_MEMORY, "fusing squeeze-excite: out of host memory");
  for (int i = 0; i < m.ngone; i++) {
    pf_absorb(mul, m.gone[i]);
  }
  memcpy(mul->in, in, sizeof in);
  mul->nin = SE_NIN;
  free(mul->op_type);
  mul->op_type = type;
  mul->kind = OP_SQUEEZE_EXCITE;
  mul->opset = 1;
  memset(&mul->p, 0, sizeof mul->p);
  OP_P(mul)->squeeze_excite.act = act;
  OP_P(mul)->squeeze_excite.gate_act = gate_act;
  *changed = 1;
  return NULL;
}

hd_status *pf_fuse_squeeze_excite(ir_graph *g, int mi, int *changed) {
  ir_node *mul = &g->nodes[mi];
  if (!pf_is_kind(mul, OP_MUL) || mul->nin != 2 || mul->nout != 1 || OP_P(mul)->binary.act.kind != OP_ACT_NONE ||
      OP_P(mul)->binary.in_act.kind != OP_ACT_NONE || OP_P(mul)->binary.permuted)
    return NULL;
  for (int side = 0; side < 2 && !*changed; side++) HD_TRY(fuse_at(g, mul, side, changed));
  return NULL;
}
