/* Softmax (opsets 1-13) on fp32/fp16. Before 13 the input is coerced to 2D
 * at axis (default 1) and normalised over everything from axis on; from 13
 * it is normalised over the one axis (default -1). */
#include <string.h>

#include "ops/op_util.h"

static hd_status *softmax_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_softmax *s = &OP_P(n)->softmax;
  memset(s, 0, sizeof *s);
  if (n->nin != 1 || n->in[0] == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "Softmax needs one input and one output");
  s->legacy_2d = n->opset < 13;
  int64_t axis;
  HD_TRY(op_attr_int(a, "axis", s->legacy_2d ? 1 : -1, &axis));
  s->axis = (int)axis;
  return NULL;
}

static hd_status *softmax_check(const ir_graph *g, const ir_node *n) {
  HD_TRY(op_check_float_io(g, n, "Softmax"));
  int r = g->values[n->in[0]].rank, ax;
  if (r < 1) return hd_error(HD_ERR_NOT_SUPPORTED, "Softmax of a scalar");
  return op_norm_axis(OP_P(n)->softmax.axis, r, &ax, "Softmax");
}

static hd_status *softmax_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  (void)g;
  const ir_tensor *x = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  int ax;
  HD_TRY(op_norm_axis(p->softmax.axis, x->rank, &ax, "Softmax"));
  p->softmax.axis = ax;
  y->rank = x->rank;
  memcpy(y->dims, x->dims, sizeof x->dims);
  return NULL;
}

OP_DEF(softmax, SOFTMAX, "Softmax", 1, 13)
