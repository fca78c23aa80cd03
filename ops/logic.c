/* Comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual) of two
 * numeric or bool tensors with numpy broadcasting; And, Or, Xor of bools,
 * Not; IsNaN and IsInf of floats. Outputs are bool. */
#include <string.h>

#include "ops/op_util.h"

static int is_binary(op_logic_kind k) { return k <= OP_LOGIC_XOR; }

static hd_status *logic_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_logic *l = &OP_P(n)->logic;
  memset(l, 0, sizeof *l);
  switch (n->kind) {
    case OP_EQUAL: l->kind = OP_LOGIC_EQ; break;
    case OP_LESS: l->kind = OP_LOGIC_LT; break;
    case OP_LESS_OR_EQUAL: l->kind = OP_LOGIC_LE; break;
    case OP_GREATER: l->kind = OP_LOGIC_GT; break;
    case OP_GREATER_OR_EQUAL: l->kind = OP_LOGIC_GE; break;
    case OP_AND: l->kind = OP_LOGIC_AND; break;
    case OP_OR: l->kind = OP_LOGIC_OR; break;
    case OP_XOR: l->kind = OP_LOGIC_XOR; break;
    case OP_NOT: l->kind = OP_LOGIC_NOT; break;
    case OP_IS_NAN: l->kind = OP_LOGIC_ISNAN; break;
    case OP_IS_INF: {
      int64_t neg, pos;
      l->kind = OP_LOGIC_ISINF;
      HD_TRY(op_attr_int(a, "detect_negative", 1, &neg));
      HD_TRY(op_attr_int(a, "detect_positive", 1, &pos));
      l->detect_negative = neg != 0;
      l->detect_positive = pos != 0;
      break;
    }
    default: return hd_error(HD_ERR_INTERNAL, "logic parse for kind %d", (int)n->kind);
  }
  int want = is_binary(l->kind) ? 2 : 1;
  if (n->nin != want || !op_has_output(n, 0)) return hd_error(HD_ERR_INVALID_ARG, "%s needs %d inputs", n->op_type, want);
  for (int k = 0; k < want; k++)
    if (n->in[k] == IR_NONE) return hd_error(HD_ERR_INVALID_ARG, "%s without input %d", n->op_type, k);
  return NULL;
}

static hd_status *logic_check(const ir_graph *g, const ir_node *n) {
  op_logic_kind k = OP_P(n)->logic.kind;
  const ir_value *a = &g->values[n->in[0]];
  if (g->values[n->out[0]].dtype != HD_DT_BOOL) return hd_error(HD_ERR_INVALID_ARG, "%s output is not bool", n->op_type);
  if (a->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of unknown rank", n->op_type);
  if (k >= OP_LOGIC_AND && k <= OP_LOGIC_NOT && a->dtype != HD_DT_BOOL)
    return hd_error(HD_ERR_INVALID_ARG, "%s of type %s", n->op_type, hd_dtype_name(a->dtype));
  if (k >= OP_LOGIC_ISNAN && !op_is_float(a->dtype) && a->dtype != HD_DT_BF16 && a->dtype != HD_DT_F64)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", n->op_type, hd_dtype_name(a->dtype));
  if (!op_is_data(a->dtype)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", n->op_type, hd_dtype_name(a->dtype));
  if (is_binary(k)) {
    const ir_value *b = &g->values[n->in[1]];
    if (b->dtype != a->dtype) return hd_error(HD_ERR_INVALID_ARG, "%s of types %s and %s", n->op_type, hd_dtype_name(a->dtype), hd_dtype_name(b->dtype));
    if (b->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of unknown rank", n->op_type);
  }
  return NULL;
}

static hd_status *logic_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  (void)g;
  const ir_tensor *a = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  if (is_binary(p->logic.kind)) return op_broadcast(a->rank, a->dims, t[n->in[1]].rank, t[n->in[1]].dims, &y->rank, y->dims);
  y->rank = a->rank;
  memcpy(y->dims, a->dims, sizeof a->dims);
  return NULL;
}

/* 7: numpy broadcasting (earlier versions had broadcast attributes). */
OP_DEF(logic, EQUAL, "Equal", 7, 19, .elementwise_axis = op_broadcast_axis)
OP_DEF(logic, LESS, "Less", 7, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(logic, LESS_OR_EQUAL, "LessOrEqual", 12, 16, .elementwise_axis = op_broadcast_axis)
OP_DEF(logic, GREATER, "Greater", 7, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(logic, GREATER_OR_EQUAL, "GreaterOrEqual", 12, 16, .elementwise_axis = op_broadcast_axis)
OP_DEF(logic, AND, "And", 7, 7, .elementwise_axis = op_broadcast_axis)
OP_DEF(logic, OR, "Or", 7, 7, .elementwise_axis = op_broadcast_axis)
OP_DEF(logic, XOR, "Xor", 7, 7, .elementwise_axis = op_broadcast_axis)
OP_DEF(logic, NOT, "Not", 1, 1, .elementwise_axis = op_broadcast_axis)
OP_DEF(logic, IS_NAN, "IsNaN", 9, 20, .elementwise_axis = op_broadcast_axis)
OP_DEF(logic, IS_INF, "IsInf", 10, 20, .elementwise_axis = op_broadcast_axis)
