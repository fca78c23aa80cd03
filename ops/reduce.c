/* The ONNX reductions (Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum,
 * LogSumExp) on fp32/fp16; Sum/Max/Min/Prod also on int32/int64. Axes come
 * from the attribute, or from a value input (known when the plan is built)
 * from opset 18 (ReduceSum: 13). No axes means all axes; noop_with_empty_axes
 * (then an identity) is left to the CPU EP. */
#include <string.h>

#include "ops/op_util.h"

static op_reduce_kind reduce_kind(op_kind k) {
  switch (k) {
    case OP_REDUCE_MEAN: return OP_RED_MEAN;
    case OP_REDUCE_MAX: return OP_RED_MAX;
    case OP_REDUCE_MIN: return OP_RED_MIN;
    case OP_REDUCE_PROD: return OP_RED_PROD;
    case OP_REDUCE_L1: return OP_RED_L1;
    case OP_REDUCE_L2: return OP_RED_L2;
    case OP_REDUCE_SUM_SQUARE: return OP_RED_SUM_SQUARE;
    case OP_REDUCE_LOG_SUM: return OP_RED_LOG_SUM;
    case OP_REDUCE_LOG_SUM_EXP: return OP_RED_LOG_SUM_EXP;
    default: return OP_RED_SUM;
  }
}

/* ReduceSum took its axes as an input at opset 13, the others at 18. */
static int axes_is_input(const ir_node *n) { return n->opset >= (n->kind == OP_REDUCE_SUM ? 13 : 18); }

static hd_status *reduce_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  op_reduce *r = &OP_P(n)->reduce;
  memset(r, 0, sizeof *r);
  r->kind = reduce_kind(n->kind);
  if (n->nin < 1 || n->in[0] == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "%s needs input data and an output", n->op_type);
  int64_t v;
  HD_TRY(op_attr_int(a, "keepdims", 1, &v));
  r->keepdims = v != 0;
  if (!axes_is_input(n)) {
    int found = 0, cnt = 0;
    HD_TRY(a->get_ints(a->ctx, "axes", r->axes, 8, &cnt, &found));
    if (cnt > 8) return hd_error(HD_ERR_NOT_SUPPORTED, "%s with %d axes", n->op_type, cnt);
    r->naxes = found ? cnt : 0;
  } else {
    /* axes is a value input, read at infer */
    HD_TRY(op_attr_int(a, "noop_with_empty_axes", 0, &v));
    const ir_value *ax = op_input(n, 1) != IR_NONE ? &g->values[n->in[1]] : NULL;
    int have_axes = ax && ax->rank == 1 && ax->dims[0] > 0;
    if (v && !have_axes) /* empty axes would make it an identity */
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s with noop_with_empty_axes and axes not surely present", n->op_type);
  }
  return NULL;
}

static hd_status *reduce_check(const ir_graph *g, const ir_node *n) {
  const ir_value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
  int int_ok = op_reduce_int_ok(OP_P(n)->reduce.kind) && (x->dtype == HD_DT_I32 || x->dtype == HD_DT_I64);
  if (!op_is_float(x->dtype) && !int_ok)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", n->op_type, hd_dtype_name(x->dtype));
  if (y->dtype != x->dtype) return hd_error(HD_ERR_NOT_SUPPORTED, "%s output of another type", n->op_type);
  if (x->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "%s input of unknown rank", n->op_type);
  for (int i = 0; i < OP_P(n)->reduce.naxes; i++) {
    int ax;
    HD_TRY(op_norm_axis(OP_P(n)->reduce.axes[i], x->rank, &ax, n->op_type));
  }
  if (axes_is_input(n) && op_input(n, 1) != IR_NONE && g->values[n->in[1]].dtype != HD_DT_I64)
    return hd_error(HD_ERR_INVALID_ARG, "%s axes of type %s", n->op_type, hd_dtype_name(g->values[n->in[1]].dtype));
  return NULL;
}

static hd_status *reduce_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  op_reduce *r = &p->reduce;
  if (axes_is_input(n) && op_input(n, 1) != IR_NONE) HD_TRY(op_value_ints(g, t, n->in[1], r->axes, 8, &r->naxes));
  const ir_tensor *x = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  uint8_t red[IR_MAX_RANK] = {0};
  if (r->naxes == 0) {
    for (int i = 0; i < x->rank; i++) red[i] = 1;
  } else {
    for (int i = 0; i < r->naxes; i++) {
      int ax;
      HD_TRY(op_norm_axis(r->axes[i], x->rank, &ax, n->op_type));
      red[ax] = 1;
    }
  }
  /* Resolved: the sorted, distinct, non-negative axes. */
  r->naxes = 0;
  y->rank = 0;
  for (int i = 0; i < x->rank; i++) {
    if (red[i]) r->axes[r->naxes++] = i;
    if (!red[i]) y->dims[y->rank++] = x->dims[i];
    else if (r->keepdims) y->dims[y->rank++] = 1;
  }
  return NULL;
}

/* 1/11/13: axes attribute (11: negative axes, 13: types); 13 (ReduceSum) or
 * 18 (the others): axes input; Max/Min 20 adds bool, not claimed here. */
OP_DEF(reduce, REDUCE_SUM, "ReduceSum", 1, 13, .value_inputs = 1u << 1) /* opset 13 axes */
OP_DEF(reduce, REDUCE_MEAN, "ReduceMean", 1, 18, .value_inputs = 1u << 1) /* opset 18 axes */
OP_DEF(reduce, REDUCE_MAX, "ReduceMax", 1, 20, .value_inputs = 1u << 1)
OP_DEF(reduce, REDUCE_MIN, "ReduceMin", 1, 20, .value_inputs = 1u << 1)
OP_DEF(reduce, REDUCE_PROD, "ReduceProd", 1, 18, .value_inputs = 1u << 1)
OP_DEF(reduce, REDUCE_L1, "ReduceL1", 1, 18, .value_inputs = 1u << 1)
OP_DEF(reduce, REDUCE_L2, "ReduceL2", 1, 18, .value_inputs = 1u << 1)
OP_DEF(reduce, REDUCE_SUM_SQUARE, "ReduceSumSquare", 1, 18, .value_inputs = 1u << 1)
OP_DEF(reduce, REDUCE_LOG_SUM, "ReduceLogSum", 1, 18, .value_inputs = 1u << 1)
OP_DEF(reduce, REDUCE_LOG_SUM_EXP, "ReduceLogSumExp", 1, 18, .value_inputs = 1u << 1)
