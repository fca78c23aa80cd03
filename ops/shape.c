/* Shape (opset 1-25; 15+: start/end) and Size: int64 outputs that depend
 * only on the input's shape (op_def.shape_only). Plans compute them when
 * they are built, so shape arithmetic never reaches a device. */
#include <string.h>

#include "ops/op_util.h"

static hd_status *shape_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_shape *s = &OP_P(n)->shape;
  memset(s, 0, sizeof *s);
  if (n->nin < 1 || n->in[0] == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "%s needs an input and an output", n->op_type);
  if (n->kind == OP_SHAPE && n->opset >= 15) {
    int found = 0;
    HD_TRY(op_attr_int(a, "start", 0, &s->start));
    HD_TRY(a->get_int(a->ctx, "end", &s->end, &found));
    s->has_end = found;
  }
  return NULL;
}

static hd_status *shape_check(const ir_graph *g, const ir_node *n) {
  const ir_value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
  if (!op_is_data(x->dtype)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", n->op_type, hd_dtype_name(x->dtype));
  if (y->dtype != HD_DT_I64) return hd_error(HD_ERR_INVALID_ARG, "%s output of type %s", n->op_type, hd_dtype_name(y->dtype));
  if (x->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of an input of unknown rank", n->op_type);
  return NULL;
}

/* ONNX's clamping of Shape's start/end: negative counts from the back. */
static int64_t clamp_axis(int64_t a, int rank) {
  if (a < 0) a += rank;
  return a < 0 ? 0 : a > rank ? rank : a;
}

static hd_status *shape_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  (void)g;
  const ir_tensor *x = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  if (n->kind == OP_SIZE) {
    y->rank = 0;
    return NULL;
  }
  op_shape *s = &p->shape;
  s->start = clamp_axis(s->start, x->rank);
  s->end = s->has_end ? clamp_axis(s->end, x->rank) : x->rank;
  if (s->end < s->start) s->end = s->start;
  y->rank = 1;
  y->dims[0] = s->end - s->start;
  return NULL;
}

OP_DEF(shape, SHAPE, "Shape", 1, 25, .shape_only = 1)
OP_DEF(shape, SIZE, "Size", 1, 25, .shape_only = 1)
