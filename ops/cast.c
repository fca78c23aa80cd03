/* Cast (opset 6-25) between every numeric type and bool. Floats to
 * integers truncate toward zero and saturate (NaN gives 0: ONNX leaves
 * out-of-range values undefined, and C's conversion would be too);
 * integers to narrower integers wrap, as C casts; x to bool is x != 0.
 * Strings and the 8-bit and 4-bit float types stay with the CPU EP. */
#include <string.h>

#include "ops/op_util.h"

static hd_status *cast_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_cast *c = &OP_P(n)->cast;
  memset(c, 0, sizeof *c);
  if (n->nin != 1 || n->in[0] == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "Cast needs an input and an output");
  int64_t to = 0;
  int found = 0;
  HD_TRY(a->get_int(a->ctx, "to", &to, &found));
  if (!found) return hd_error(HD_ERR_INVALID_ARG, "Cast without 'to'");
  c->to = (int)to;
  return NULL;
}

static hd_status *cast_check(const ir_graph *g, const ir_node *n) {
  const ir_value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
  int to = OP_P(n)->cast.to;
  if (!op_is_data(x->dtype)) return hd_error(HD_ERR_NOT_SUPPORTED, "Cast from %s", hd_dtype_name(x->dtype));
  if (!op_is_data(to)) return hd_error(HD_ERR_NOT_SUPPORTED, "Cast to type %d (%s)", to, hd_dtype_name(to));
  if (y->dtype != to) return hd_error(HD_ERR_INVALID_ARG, "Cast to %s with an output of %s", hd_dtype_name(to), hd_dtype_name(y->dtype));
  if (x->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "Cast of unknown rank");
  return NULL;
}

static hd_status *cast_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  (void)g;
  (void)p;
  t[n->out[0]].rank = t[n->in[0]].rank;
  memcpy(t[n->out[0]].dims, t[n->in[0]].dims, sizeof t[n->in[0]].dims);
  return NULL;
}

/* 6: to as an int; 9, 13, 19, 21, 23: more types (19: saturate, for the
 * float8 types we do not claim). */
OP_DEF(cast, CAST, "Cast", 6, 25, .elementwise_axis = op_broadcast_axis)
