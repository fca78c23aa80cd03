/* ReduceMean (opsets 1-18) on fp32/fp16: axes from the attribute (< 18) or
 * a value input (18; known when the plan is built); keepdims. No axes means all axes; opset 18's
 * noop_with_empty_axes (then an identity) is left to the CPU EP. */
#include <string.h>

#include "ops/op_util.h"

static hd_status *reduce_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  op_reduce *r = &OP_P(n)->reduce;
  memset(r, 0, sizeof *r);
  if (n->nin < 1 || n->in[0] == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "ReduceMean needs input data and an output");
  int64_t v;
  HD_TRY(op_attr_int(a, "keepdims", 1, &v));
  r->keepdims = v != 0;
  int have_axes = 0;
  if (n->opset < 18) {
    int found = 0, cnt = 0;
    HD_TRY(a->get_ints(a->ctx, "axes", r->axes, 8, &cnt, &found));
    if (cnt > 8) return hd_error(HD_ERR_NOT_SUPPORTED, "ReduceMean with %d axes", cnt);
    r->naxes = found ? cnt : 0;
    have_axes = found && cnt > 0;
  } else {
    /* axes is a value input, read at infer */
    HD_TRY(op_attr_int(a, "noop_with_empty_axes", 0, &v));
    const ir_value *ax = op_input(n, 1) != IR_NONE ? &g->values[n->in[1]] : NULL;
    have_axes = ax && ax->rank == 1 && ax->dims[0] > 0;
    if (v && !have_axes) /* empty axes would make it an identity */
      return hd_error(HD_ERR_NOT_SUPPORTED, "ReduceMean with noop_with_empty_axes and axes not surely present");
  }
  return NULL;
}

static hd_status *reduce_check(const ir_graph *g, const ir_node *n) {
  const ir_value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
  if (!op_is_float(x->dtype)) return hd_error(HD_ERR_NOT_SUPPORTED, "ReduceMean of type %s", hd_dtype_name(x->dtype));
  if (y->dtype != x->dtype) return hd_error(HD_ERR_NOT_SUPPORTED, "ReduceMean output of another type");
  if (x->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "ReduceMean input of unknown rank");
  for (int i = 0; i < OP_P(n)->reduce.naxes; i++) {
    int ax;
    HD_TRY(op_norm_axis(OP_P(n)->reduce.axes[i], x->rank, &ax, "ReduceMean"));
  }
  if (n->opset >= 18 && op_input(n, 1) != IR_NONE && g->values[n->in[1]].dtype != HD_DT_I64)
    return hd_error(HD_ERR_INVALID_ARG, "ReduceMean axes of type %s", hd_dtype_name(g->values[n->in[1]].dtype));
  return NULL;
}

static hd_status *reduce_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  op_reduce *r = &p->reduce;
  if (n->opset >= 18 && op_input(n, 1) != IR_NONE) HD_TRY(op_value_ints(g, t, n->in[1], r->axes, 8, &r->naxes));
  const ir_tensor *x = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  uint8_t red[IR_MAX_RANK] = {0};
  if (r->naxes == 0) {
    for (int i = 0; i < x->rank; i++) red[i] = 1;
  } else {
    for (int i = 0; i < r->naxes; i++) {
      int ax;
      HD_TRY(op_norm_axis(r->axes[i], x->rank, &ax, "ReduceMean"));
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

/* 1/11/13: axes attribute (11: negative axes, 13: types); 18: axes input. */
OP_DEF(reduce, REDUCE_MEAN, "ReduceMean", 1, 18, .value_inputs = 1u << 1) /* opset 18 axes */
