/* Add, Sub, Mul, Div (opset 7+: numpy broadcasting) on fp32 and fp16. An
 * activation may be fused after it by the ir passes (op_binary.act). */
#include <string.h>

#include "ops/op_util.h"

static hd_status *binary_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  (void)a;
  memset(&OP_P(n)->binary, 0, sizeof OP_P(n)->binary);
  switch (n->kind) {
    case OP_ADD: OP_P(n)->binary.kind = OP_BIN_ADD; break;
    case OP_SUB: OP_P(n)->binary.kind = OP_BIN_SUB; break;
    case OP_MUL: OP_P(n)->binary.kind = OP_BIN_MUL; break;
    case OP_DIV: OP_P(n)->binary.kind = OP_BIN_DIV; break;
    default: return hd_error(HD_ERR_INTERNAL, "binary parse for kind %d", (int)n->kind);
  }
  if (n->nin != 2 || n->in[0] == IR_NONE || n->in[1] == IR_NONE)
    return hd_error(HD_ERR_INVALID_ARG, "%s needs two inputs", n->op_type);
  return NULL;
}

static hd_status *binary_check(const ir_graph *g, const ir_node *n) {
  HD_TRY(op_check_float_io(g, n, n->op_type));
  const ir_value *a = &g->values[n->in[0]], *b = &g->values[n->in[1]];
  int r = a->rank > b->rank ? a->rank : b->rank;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->rank), ib = i - (r - b->rank);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da >= 0 && db >= 0 && da != db && da != 1 && db != 1)
      return hd_error(HD_ERR_INVALID_ARG, "%s: shapes do not broadcast at dim %d", n->op_type, i);
  }
  return NULL;
}

static hd_status *binary_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  (void)g;
  (void)p;
  const ir_tensor *a = &t[n->in[0]], *b = &t[n->in[1]];
  ir_tensor *y = &t[n->out[0]];
  return op_broadcast(a->rank, a->dims, b->rank, b->dims, &y->rank, y->dims);
}

#define BINARY_DEF(KIND, TYPE)   \
  const op_def op_def_##KIND = { \
      .kind = OP_##KIND,         \
      .onnx_type = TYPE,         \
      .min_opset = 7,            \
      .max_opset = 14,           \
      .parse = binary_parse,     \
      .check = binary_check,     \
      .infer = binary_infer,     \
  };

/* 7: numpy broadcasting replaced the broadcast/axis attributes; 13 and 14
 * only added types. */
BINARY_DEF(ADD, "Add")
BINARY_DEF(SUB, "Sub")
BINARY_DEF(MUL, "Mul")
BINARY_DEF(DIV, "Div")
