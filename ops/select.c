/* Where (9-16): y = cond ? x : y with numpy broadcasting of all three, any
 * element type. Trilu (14): the upper (j - i >= k) or lower (j - i <= k)
 * triangle of each matrix in the last two dims, zeros elsewhere; k is a
 * value input (default 0). */
#include <string.h>

#include "ops/op_util.h"

static hd_status *select_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_select *s = &OP_P(n)->select;
  memset(s, 0, sizeof *s);
  if (!op_has_output(n, 0)) return hd_error(HD_ERR_INVALID_ARG, "%s needs an output", n->op_type);
  if (n->kind == OP_WHERE) {
    if (n->nin != 3 || n->in[0] == IR_NONE || n->in[1] == IR_NONE || n->in[2] == IR_NONE)
      return hd_error(HD_ERR_INVALID_ARG, "Where needs three inputs");
    return NULL;
  }
  if (op_input(n, 0) == IR_NONE) return hd_error(HD_ERR_INVALID_ARG, "Trilu needs its input");
  int64_t upper;
  HD_TRY(op_attr_int(a, "upper", 1, &upper));
  s->upper = upper != 0;
  return NULL;
}

static hd_status *select_check(const ir_graph *g, const ir_node *n) {
  if (n->kind == OP_TRILU) {
    const ir_value *x = &g->values[n->in[0]];
    if (!op_is_data(x->dtype)) return hd_error(HD_ERR_NOT_SUPPORTED, "Trilu of type %s", hd_dtype_name(x->dtype));
    if (g->values[n->out[0]].dtype != x->dtype) return hd_error(HD_ERR_INVALID_ARG, "Trilu output of another type");
    if (x->rank < 2) return hd_error(HD_ERR_INVALID_ARG, "Trilu of rank %d", x->rank);
    if (op_input(n, 1) != IR_NONE && g->values[n->in[1]].dtype != HD_DT_I64)
      return hd_error(HD_ERR_INVALID_ARG, "Trilu k of type %s", hd_dtype_name(g->values[n->in[1]].dtype));
    return NULL;
  }
  const ir_value *c = &g->values[n->in[0]], *x = &g->values[n->in[1]], *y = &g->values[n->in[2]];
  if (c->dtype != HD_DT_BOOL) return hd_error(HD_ERR_INVALID_ARG, "Where condition of type %s", hd_dtype_name(c->dtype));
  if (!op_is_data(x->dtype)) return hd_error(HD_ERR_NOT_SUPPORTED, "Where of type %s", hd_dtype_name(x->dtype));
  if (y->dtype != x->dtype || g->values[n->out[0]].dtype != x->dtype)
    return hd_error(HD_ERR_INVALID_ARG, "Where of mixed types");
  if (c->rank < 0 || x->rank < 0 || y->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "Where of unknown rank");
  return NULL;
}

static hd_status *select_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  ir_tensor *o = &t[n->out[0]];
  if (n->kind == OP_TRILU) {
    const ir_tensor *x = &t[n->in[0]];
    p->select.k = 0;
    if (op_input(n, 1) != IR_NONE) {
      int cnt = 0;
      HD_TRY(op_value_ints(g, t, n->in[1], &p->select.k, 1, &cnt));
      if (cnt != 1) return hd_error(HD_ERR_INVALID_ARG, "Trilu k of %d values", cnt);
    }
    o->rank = x->rank;
    memcpy(o->dims, x->dims, sizeof x->dims);
    return NULL;
  }
  const ir_tensor *c = &t[n->in[0]], *x = &t[n->in[1]], *y = &t[n->in[2]];
  int r;
  int64_t d[IR_MAX_RANK];
  HD_TRY(op_broadcast(c->rank, c->dims, x->rank, x->dims, &r, d));
  return op_broadcast(r, d, y->rank, y->dims, &o->rank, o->dims);
}

OP_DEF(select, WHERE, "Where", 9, 16, .elementwise_axis = op_broadcast_axis)

OP_DEF(select, TRILU, "Trilu", 14, 14, .value_inputs = 1u << 1)
