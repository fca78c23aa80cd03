/* CumSum (11-14) over one axis (a value input), with exclusive and
 * reverse; float and integer types (integers exact, in int64). */
#include <string.h>

#include "ops/op_util.h"

static hd_status *scan_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_scan *s = &OP_P(n)->scan;
  memset(s, 0, sizeof *s);
  if (n->nin != 2 || n->in[0] == IR_NONE || n->in[1] == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "CumSum needs x, axis and an output");
  int64_t v;
  HD_TRY(op_attr_int(a, "exclusive", 0, &v));
  s->exclusive = v != 0;
  HD_TRY(op_attr_int(a, "reverse", 0, &v));
  s->reverse = v != 0;
  return NULL;
}

static hd_status *scan_check(const ir_graph *g, const ir_node *n) {
  const ir_value *x = &g->values[n->in[0]];
  if (!op_is_float(x->dtype) && x->dtype != HD_DT_I32 && x->dtype != HD_DT_I64)
    return hd_error(HD_ERR_NOT_SUPPORTED, "CumSum of type %s", hd_dtype_name(x->dtype));
  if (g->values[n->out[0]].dtype != x->dtype) return hd_error(HD_ERR_INVALID_ARG, "CumSum output of another type");
  if (x->rank < 1) return hd_error(HD_ERR_NOT_SUPPORTED, "CumSum of unknown or scalar rank");
  int adt = g->values[n->in[1]].dtype;
  if (adt != HD_DT_I32 && adt != HD_DT_I64) return hd_error(HD_ERR_INVALID_ARG, "CumSum axis of type %s", hd_dtype_name(adt));
  return NULL;
}

static hd_status *scan_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  const ir_tensor *x = &t[n->in[0]];
  int64_t axis;
  int cnt = 0;
  HD_TRY(op_value_ints(g, t, n->in[1], &axis, 1, &cnt));
  if (cnt != 1) return hd_error(HD_ERR_INVALID_ARG, "CumSum axis of %d values", cnt);
  HD_TRY(op_norm_axis(axis, x->rank, &p->scan.axis, "CumSum"));
  t[n->out[0]].rank = x->rank;
  memcpy(t[n->out[0]].dims, x->dims, sizeof x->dims);
  return NULL;
}

OP_DEF(scan, CUMSUM, "CumSum", 11, 14, .value_inputs = 1u << 1)
