/* plan_precision: the `precision` provider option (fp16 or bf16 for an fp32
 * model), as one pass over a compiled partition's graph.
 *
 * It runs after the fusion passes, so folded weights (BatchNorm into Conv,
 * layer scales into MatMul) are computed in fp32 and rounded to half once,
 * and the fusions see the graph the model wrote. Node by node, in
 * topological order, each node that computes on fp32 data is given a
 * precision:
 *   - tensor-core ops (Conv, ConvTranspose, Gemm, MatMul, the attentions,
 *     MatMulNBits) run in half precision whatever their inputs are;
 *   - a few ops stay fp32 (class_of: CumSum; Range and ConstantOfShape,
 *     whose output type is an attribute; under fp16, whose range ends at
 *     65504, Exp, Pow, ReduceSum, ReduceSumSquare, ReduceL1 and ReduceProd);
 *   - every other op follows its data: it stays fp32 when each fp32 input
 *     it reads at run time comes from an op kept in fp32, so what such an
 *     op computed keeps fp32's range until it meets half-precision data
 *     (a sum of squares, then its mean, then its square root); otherwise
 *     it runs in half precision (inputs of the partition, constants and
 *     values computed at plan time are converted).
 * A node chosen for half precision is tried as it would run: its fp32 data
 * inputs and outputs are given the half dtype and the op's own check and
 * the backend's support query judge it; a node either refuses stays fp32.
 * Nodes computed when a plan is built (shape arithmetic, masks from
 * shapes), shape-only ops and nodes without fp32 data are left as they are.
 *
 * Values: an fp32 constant read by a half node gets a half copy, converted
 * here once (finite values saturate to the half type's largest, so an
 * attention mask of -3.4e38 stays finite and 0 * mask stays 0); any other
 * value read in the other precision gets one Cast node, right after its
 * producer, shared by all its readers. Graph inputs and outputs keep their
 * fp32 type: a half producer of a graph output writes a half value that
 * one Cast turns into the fp32 output. Inputs an op reads on the host
 * (op_def.value_inputs: Resize's scales, Pad's constant value) are
 * parameters, not data: they keep their type unless the op then refuses.
 *
 * GELU fused into a matmul (gelu_tanh, the `half_gelu` option, on by
 * default): a half-precision MatMul/Gemm carrying the exact GELU,
 * 0.5 x (1 + erf(x / sqrt 2)), computes its tanh form instead, which
 * cuBLASLt applies in the GEMM's epilogue (it has no erf form): one pass
 * over the activations less a layer. The two differ by at most 4.7e-4 in
 * absolute terms, at x = +-2.7: where GELU is 2.69 that is a quarter of
 * fp16's spacing (2e-3; bf16's 1.6e-2); where it is -0.0094 it is 5% of
 * the value, a value about 1% of the activations' scale. The difference
 * has the same sign at x and -x (a small bias, not noise); on BERT, ViT,
 * DistilBERT and ConvNeXt the output's rel L2 against fp32 is the same
 * with either form (benchmarks.md, 2026-11-28).
 * A GELU elsewhere (its own node, a conv's) keeps erf: nothing to gain.
 *
 * The first tensor-core ops (fp32_first, the `fp32_first_layers` option,
 * default 0): the first N of this partition's, in graph order and as
 * fused (a merged Q/K/V projection or a fused attention is one), stay
 * fp32; so does what follows their data, and, until they are all placed,
 * any op on the partition's inputs (what runs ahead of them). Rounding
 * that enters early is amplified by every layer after it: in CNNs whose
 * every layer carries signal (bench/half_sensitivity.py, H200,
 * 2026-11-28), MobileNetV2's emulated fp16 error is 1.6e-2, 9.3e-3 with
 * its first 10% of convolutions kept fp32, and still 1.6e-2 with its last
 * 50% kept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_log.h"
#include "ops/ops.h"
#include "plan/plan.h"

typedef enum prec_class {
  PC_FOLLOW, /* fp32 when every run-time fp32 input comes from an fp32 op, else half */
  PC_HALF,   /* half precision whenever op and backend take it */
  PC_FP32,   /* always fp32 */
} prec_class;

static prec_class class_of(int kind, int half, const char **why) {
  switch (kind) {
    case OP_CONV: case OP_CONV_TRANSPOSE: case OP_GEMM: case OP_MATMUL: case OP_ATTENTION: case OP_MS_ATTENTION:
    case OP_MS_MULTI_HEAD_ATTENTION: case OP_MS_GROUP_QUERY_ATTENTION: case OP_MATMUL_NBITS:
      return PC_HALF;
    case OP_CUMSUM:
      *why = "a running sum: each output element is rounded from the last, so the error grows along the axis";
      return PC_FP32;
    case OP_RANGE: case OP_CONSTANT_OF_SHAPE:
      *why = "its output type is an attribute of the model";
      return PC_FP32;
    case OP_EXP: case OP_POW: case OP_REDUCE_SUM: case OP_REDUCE_SUM_SQUARE: case OP_REDUCE_L1: case OP_REDUCE_PROD:
      if (half != HD_DT_F16) return PC_FOLLOW;
      *why = "its output passes fp16's largest value (65504) for ordinary inputs";
      return PC_FP32;
    default:
      return PC_FOLLOW;
  }
}

typedef struct prec_cast {
  int src, dst; /* values */
  int after;    /* the node it follows, or IR_NONE: before every node */
} prec_cast;

typedef struct prec {
  ir_graph *g;
  int half;          /* HD_DT_F16 or HD_DT_BF16 */
  int nv0;           /* values before the pass: the per-value arrays cover these */
  uint8_t *was_f32;  /* value was fp32 */
  uint8_t *made_half;/* value's producer now computes in half precision */
  int *producer;     /* value's producer before the pass */
  int *half_of;      /* the value holding it in half precision, or IR_NONE (not yet made) */
  int *f32_of;       /* the value holding it in fp32, or IR_NONE */
  prec_cast *casts;
  int ncasts, cap_casts;
  int gelu_tanh;     /* a half matmul's exact GELU becomes the tanh form */
  int fp32_first;    /* tensor-core ops to keep fp32, from the first */
  int products;      /* tensor-core ops seen so far */
  plan_precision_report *rep;
} prec;

static const char *half_name(int half) { return half == HD_DT_F16 ? "fp16" : "bf16"; }

/* x in the half type; finite values past its range saturate. */
static uint16_t to_half(int half, float x) {
  if (isfinite(x)) {
    const float top = half == HD_DT_F16 ? 65504.0f : 3.38953139e38f; /* the largest finite value of each */
    x = x > top ? top : x < -top ? -top : x;
  }
  return half == HD_DT_F16 ? hd_f32_to_f16(x) : hd_f32_to_bf16(x);
}

/* A new value like v (shape and symbols) of dtype dt, named v's name + suffix. */
static hd_status *twin_value(ir_graph *g, int v, int dt, const char *suffix, int *out) {
  char name[512];
  snprintf(name, sizeof name, "%s/%s", g->values[v].name, suffix);
  int rank = g->values[v].rank;
  int64_t dims[IR_MAX_RANK];
  uint32_t sym[IR_MAX_RANK];
  memcpy(dims, g->values[v].dims, sizeof dims);
  memcpy(sym, g->values[v].sym, sizeof sym);
  HD_TRY(ir_graph_add_value(g, name, dt, rank, rank > 0 ? dims : NULL, out));
  memcpy(g->values[*out].sym, sym, sizeof sym);
  return NULL;
}

static hd_status *add_cast(prec *P, int src, int dst, int after) {
  if (P->ncasts == P->cap_casts) {
    int cap = P->cap_casts ? 2 * P->cap_casts : 32;
    prec_cast *c = realloc(P->casts, sizeof *c * (size_t)cap);
    if (!c) return hd_error(HD_ERR_OUT_OF_MEMORY, "precision: out of host memory");
    P->casts = c;
    P->cap_casts = cap;
  }
  P->casts[P->ncasts++] = (prec_cast){src, dst, after};
  return NULL;
}

/* The value holding original value v in half precision, made on first use:
 * a converted copy of a constant, else a value a Cast will fill (the Cast
 * is added at the end, if a node still reads it). */
static hd_status *half_value(prec *P, int v, int *out) {
  if (P->half_of[v] != IR_NONE) {
    *out = P->half_of[v];
    return NULL;
  }
  ir_graph *g = P->g;
  int h;
  HD_TRY(twin_value(g, v, P->half, half_name(P->half), &h));
  if (g->values[v].is_const) {
    const ir_value *c = &g->values[v];
    size_t n = c->nbytes / sizeof(float);
    uint16_t *d = malloc(n ? n * sizeof *d : 1);
    if (!d) return hd_error(HD_ERR_OUT_OF_MEMORY, "precision: out of host memory converting '%s'", c->name);
    for (size_t i = 0; i < n; i++) {
      float x;
      memcpy(&x, (const char *)c->data + i * sizeof x, sizeof x);
      d[i] = to_half(P->half, x);
    }
    hd_status *st = ir_value_set_data(g, h, d, n * sizeof *d);
    free(d);
    HD_TRY(st);
    g->values[h].host_known = 1;
    P->rep->consts++;
  } else {
    g->values[h].host_known = g->values[v].host_known;
  }
  P->half_of[v] = h;
  *out = h;
  return NULL;
}

/* The value holding original value v (made in half precision) in fp32. */
static hd_status *f32_value(prec *P, int v, int *out) {
  if (P->f32_of[v] == IR_NONE) HD_TRY(twin_value(P->g, v, HD_DT_F32, "fp32", &P->f32_of[v]));
  *out = P->f32_of[v];
  return NULL;
}

/* Input k of n is fp32 data: a value that was fp32, not one the op reads
 * on the host (value_inputs) unless with_params. */
static int f32_input(const prec *P, const ir_node *n, int k, int with_params) {
  int v = n->in[k];
  if (v == IR_NONE || v >= P->nv0 || !P->was_f32[v]) return 0;
  return with_params || !op_input_on_host(n, k, 0);
}

static int f32_output(const prec *P, const ir_node *n, int k) {
  int v = n->out[k];
  return v != IR_NONE && v < P->nv0 && P->was_f32[v];
}

#define PREC_MAX_IO 64

/* Node i as it would run in half precision: its fp32 data in the half type.
 * NULL when its op and the backend take it (the node keeps the change),
 * else their reason (the node is as it was). */
static hd_status *try_half(prec *P, int i, int with_params, const plan_support *sup) {
  ir_graph *g = P->g;
  ir_node *n = &g->nodes[i];
  if (n->nin > PREC_MAX_IO || n->nout > PREC_MAX_IO)
    return hd_error(HD_ERR_NOT_SUPPORTED, "more than %d inputs or outputs", PREC_MAX_IO);
  int saved_in[PREC_MAX_IO];
  memcpy(saved_in, n->in, sizeof(int) * (size_t)n->nin);
  int saved_to = n->kind == OP_CAST ? OP_P(n)->cast.to : 0;
  hd_status *st = NULL;
  for (int k = 0; k < n->nin && !st; k++)
    if (f32_input(P, n, k, with_params)) st = half_value(P, n->in[k], &n->in[k]);
  for (int k = 0; k < n->nout; k++)
    if (f32_output(P, n, k)) g->values[n->out[k]].dtype = P->half;
  if (n->kind == OP_CAST && f32_output(P, n, 0)) OP_P(n)->cast.to = P->half;
  const op_def *def = op_get((op_kind)n->kind);
  if (!st) st = def->check(g, n);
  if (!st && sup && sup->supports) st = sup->supports(sup->ctx, g, i);
  if (st) {
    memcpy(n->in, saved_in, sizeof(int) * (size_t)n->nin);
    for (int k = 0; k < n->nout; k++)
      if (f32_output(P, n, k)) g->values[n->out[k]].dtype = HD_DT_F32;
    if (n->kind == OP_CAST) OP_P(n)->cast.to = saved_to;
    return st;
  }
  /* outputs: a graph output stays fp32, written by a Cast from a half twin */
  for (int k = 0; k < n->nout; k++) {
    if (!f32_output(P, n, k)) continue;
    int y = n->out[k];
    P->made_half[y] = 1;
    if (g->values[y].graph_output == IR_NONE) {
      P->half_of[y] = y;
      continue;
    }
    int h;
    HD_TRY(twin_value(g, y, P->half, half_name(P->half), &h));
    n = &g->nodes[i];
    g->values[y].dtype = HD_DT_F32;
    n->out[k] = h;
    P->half_of[y] = h;
    P->f32_of[y] = y;
    HD_TRY(add_cast(P, h, y, i));
  }
  return NULL;
}

/* Node i stays fp32: its fp32 inputs made in half precision come back
 * through their fp32 values. */
static hd_status *keep_f32(prec *P, int i) {
  ir_node *n = &P->g->nodes[i];
  for (int k = 0; k < n->nin; k++) {
    int v = n->in[k];
    if (v != IR_NONE && v < P->nv0 && P->was_f32[v] && P->made_half[v]) HD_TRY(f32_value(P, v, &n->in[k]));
  }
  return NULL;
}

static hd_status *decide(prec *P, int i, const plan_support *sup) {
  ir_graph *g = P->g;
  ir_node *n = &g->nodes[i];
  const op_def *def = n->dead || n->kind == OP_UNKNOWN ? NULL : op_get((op_kind)n->kind);
  if (!def || def->shape_only || op_node_host_known(g, n)) return NULL; /* no run-time math of its own */
  int touches = 0, dynamic = 0, from_f32_ops = 0, params = 0;
  for (int k = 0; k < n->nin; k++) {
    if (f32_input(P, n, k, 1) && !f32_input(P, n, k, 0)) params = 1;
    if (!f32_input(P, n, k, 0)) continue;
    touches = 1;
    int v = n->in[k];
    if (g->values[v].host_known) continue; /* a constant, or computed at plan time: converted for free */
    dynamic++;
    /* an fp32 op's output; before the first fp32_first ops are placed, a
     * graph input too, so what runs ahead of them (a Sub, an embedding's
     * LayerNorm) is not rounded either */
    from_f32_ops += P->producer[v] != IR_NONE ? !P->made_half[v] : P->products < P->fp32_first;
  }
  for (int k = 0; k < n->nout; k++) touches |= f32_output(P, n, k);
  if (!touches) return NULL;
  const char *why = NULL;
  prec_class cls = class_of(n->kind, P->half, &why);
  if (cls == PC_HALF && P->products++ < P->fp32_first) {
    cls = PC_FP32;
    why = "one of the partition's first tensor-core ops (fp32_first_layers)";
    P->rep->fp32_first++;
  }
  int want = cls == PC_HALF || (cls == PC_FOLLOW && (dynamic == 0 || from_f32_ops < dynamic));
  if (want) {
    hd_status *st = try_half(P, i, 0, sup);
    if (st && params) { /* the op wants its parameters in the data's type (Pad's value) */
      hd_status_free(st);
      st = try_half(P, i, 1, sup);
    }
    if (!st) {
      P->rep->half_nodes++;
      if (P->gelu_tanh && (n->kind == OP_MATMUL || n->kind == OP_GEMM) && OP_P(n)->gemm.act.kind == OP_ACT_GELU) {
        OP_P(n)->gemm.act.kind = OP_ACT_GELU_TANH;
        P->rep->gelu_tanh++;
      }
      return NULL;
    }
    HD_LOG(HD_LOG_VERBOSE, "precision %s: %s '%s' stays fp32: %s", half_name(P->half), n->op_type, n->name,
           hd_status_msg(st));
    hd_status_free(st);
  } else {
    HD_LOG(HD_LOG_VERBOSE, "precision %s: %s '%s' stays fp32: %s", half_name(P->half), n->op_type, n->name,
           why ? why : "every fp32 input it reads at run time comes from an op kept in fp32");
  }
  P->rep->f32_nodes++;
  return keep_f32(P, i);
}

/* The Casts that fill the twins some node still reads, and the boundary
 * Casts already listed, placed right after their source's producer; then
 * constants no node reads any more drop their data. */
static hd_status *finish(prec *P) {
  ir_graph *g = P->g;
  int *uses = calloc((size_t)g->nvalues + 1, sizeof *uses);
  if (!uses) return hd_error(HD_ERR_OUT_OF_MEMORY, "precision: out of host memory");
  for (int i = 0; i < g->nnodes; i++)
    for (int k = 0; k < g->nodes[i].nin && !g->nodes[i].dead; k++)
      if (g->nodes[i].in[k] != IR_NONE) uses[g->nodes[i].in[k]]++;
  hd_status *st = NULL;
  for (int v = 0; v < P->nv0 && !st; v++) {
    if (!P->was_f32[v]) continue;
    int t = P->made_half[v] ? P->f32_of[v] : P->half_of[v];
    if (t == IR_NONE || t == v || g->values[t].is_const || !uses[t]) continue;
    int src = P->made_half[v] ? P->half_of[v] : v;
    st = add_cast(P, src, t, P->producer[v]);
  }
  for (int v = 0; v < P->nv0 && !st; v++)
    if (P->was_f32[v] && g->values[v].is_const && !uses[v] && P->half_of[v] != IR_NONE) ir_value_drop_data(g, v);
  for (int v = P->nv0; v < g->nvalues && !st; v++)
    if (g->values[v].is_const && !uses[v]) ir_value_drop_data(g, v); /* converted for a node that then refused */
  free(uses);
  if (st || !P->ncasts) return st;

  /* the Cast nodes, appended, then moved into place */
  int n0 = g->nnodes;
  for (int c = 0; c < P->ncasts; c++) {
    const prec_cast *pc = &P->casts[c];
    char name[512];
    snprintf(name, sizeof name, "%s/cast", g->values[pc->dst].name);
    int in[1] = {pc->src}, out[1] = {pc->dst}, idx;
    HD_TRY(ir_graph_add_node(g, OP_CAST, name, "Cast", 21, in, 1, out, 1, &idx));
    OP_P(&g->nodes[idx])->cast.to = g->values[pc->dst].dtype;
  }
  int *after = malloc(sizeof(int) * ((size_t)P->ncasts + 1));
  if (!after) return hd_error(HD_ERR_OUT_OF_MEMORY, "precision: out of host memory");
  for (int c = 0; c < P->ncasts; c++) after[c] = P->casts[c].after;
  st = ir_graph_place_appended(g, n0, after);
  free(after);
  HD_TRY(st);
  P->rep->casts = P->ncasts;
  return NULL;
}

hd_status *plan_precision(ir_graph *g, const plan_precision_opts *o, const plan_support *sup,
                          plan_precision_report *rep) {
  const int half = o->half;
  plan_precision_report scratch;
  if (!rep) rep = &scratch;
  memset(rep, 0, sizeof *rep);
  if (half == HD_DT_F32) return NULL;
  if (half != HD_DT_F16 && half != HD_DT_BF16)
    return hd_error(HD_ERR_INVALID_ARG, "precision: %s is not a half-precision type", hd_dtype_name(half));
  HD_TRY(ir_graph_finalize(g));
  /* every node may run here: which values are computed when a plan is built */
  uint8_t *runs = malloc((size_t)g->nnodes + 1);
  if (!runs) return hd_error(HD_ERR_OUT_OF_MEMORY, "precision: out of host memory");
  memset(runs, 1, (size_t)g->nnodes + 1);
  op_mark_host_known(g, runs);
  free(runs);

  prec P = {.g = g, .half = half, .nv0 = g->nvalues, .gelu_tanh = o->gelu_tanh,
            .fp32_first = o->fp32_first, .rep = rep};
  size_t nv = (size_t)g->nvalues + 1;
  P.was_f32 = calloc(nv, 1);
  P.made_half = calloc(nv, 1);
  P.producer = malloc(nv * sizeof(int));
  P.half_of = malloc(nv * sizeof(int));
  P.f32_of = malloc(nv * sizeof(int));
  hd_status *st = NULL;
  if (!P.was_f32 || !P.made_half || !P.producer || !P.half_of || !P.f32_of)
    st = hd_error(HD_ERR_OUT_OF_MEMORY, "precision: out of host memory");
  for (int v = 0; v < g->nvalues && !st; v++) {
    P.was_f32[v] = g->values[v].dtype == HD_DT_F32;
    P.producer[v] = g->values[v].producer;
    P.half_of[v] = P.f32_of[v] = IR_NONE;
  }
  int n0 = g->nnodes;
  for (int i = 0; i < n0 && !st; i++) st = decide(&P, i, sup);
  if (!st) st = finish(&P);
  if (!st) st = ir_graph_finalize(g);
  free(P.was_f32);
  free(P.made_half);
  free(P.producer);
  free(P.half_of);
  free(P.f32_of);
  free(P.casts);
  return st;
}
