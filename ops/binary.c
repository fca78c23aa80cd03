/* Add, Sub, Mul, Div, Pow (7+: numpy broadcasting) and two-input Min, Max,
 * Sum, Mean (8+) on fp32 and fp16, and on int32/int64 for all but Pow and
 * Mean (integer Div truncates toward zero; a zero divisor is an error). An
 * activation may be fused after it by the ir passes (op_binary.act). */
#include <string.h>

#include "ops/op_util.h"

static hd_status *binary_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  (void)a;
  memset(&OP_P(n)->binary, 0, sizeof OP_P(n)->binary);
  switch (n->kind) {
    case OP_ADD: case OP_SUM: OP_P(n)->binary.kind = OP_BIN_ADD; break;
    case OP_SUB: OP_P(n)->binary.kind = OP_BIN_SUB; break;
    case OP_MUL: OP_P(n)->binary.kind = OP_BIN_MUL; break;
    case OP_DIV: OP_P(n)->binary.kind = OP_BIN_DIV; break;
    case OP_POW: OP_P(n)->binary.kind = OP_BIN_POW; break;
    case OP_MIN: OP_P(n)->binary.kind = OP_BIN_MIN; break;
    case OP_MAX: OP_P(n)->binary.kind = OP_BIN_MAX; break;
    case OP_MEAN: OP_P(n)->binary.kind = OP_BIN_MEAN; break;
    default: return hd_error(HD_ERR_INTERNAL, "binary parse for kind %d", (int)n->kind);
  }
  if (n->nin != 2 || n->in[0] == IR_NONE || n->in[1] == IR_NONE)
    return hd_error(n->nin == 2 || n->kind < OP_MIN ? HD_ERR_INVALID_ARG : HD_ERR_NOT_SUPPORTED, "%s of %d inputs",
                    n->op_type, n->nin);
  return NULL;
}

static int int_type(int dt) { return dt == HD_DT_I32 || dt == HD_DT_I64; }

static hd_status *binary_check(const ir_graph *g, const ir_node *n) {
  int dt = g->values[n->in[0]].dtype;
  op_binary_kind k = OP_P(n)->binary.kind;
  if (int_type(dt) && k != OP_BIN_POW && k != OP_BIN_MEAN) HD_TRY(op_check_data_io(g, n, n->op_type));
  else HD_TRY(op_check_float_io(g, n, n->op_type));
  const ir_value *a = &g->values[n->in[0]], *b = &g->values[n->in[1]];
  /* as the op reads them: through the Transposes fused into it */
  int64_t pa[IR_MAX_RANK], pb[IR_MAX_RANK];
  op_binary_input_dims(&OP_P(n)->binary, 0, a->rank, a->dims, pa);
  op_binary_input_dims(&OP_P(n)->binary, 1, b->rank, b->dims, pb);
  int r = a->rank > b->rank ? a->rank : b->rank;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->rank), ib = i - (r - b->rank);
    int64_t da = ia >= 0 ? pa[ia] : 1, db = ib >= 0 ? pb[ib] : 1;
    if (da >= 0 && db >= 0 && da != db && da != 1 && db != 1)
      return hd_error(HD_ERR_INVALID_ARG, "%s: shapes do not broadcast at dim %d", n->op_type, i);
  }
  return NULL;
}

static hd_status *binary_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  (void)g;
  const ir_tensor *a = &t[n->in[0]], *b = &t[n->in[1]];
  ir_tensor *y = &t[n->out[0]];
  int64_t da[IR_MAX_RANK], db[IR_MAX_RANK];
  op_binary_input_dims(&p->binary, 0, a->rank, a->dims, da);
  op_binary_input_dims(&p->binary, 1, b->rank, b->dims, db);
  HD_TRY(op_broadcast(a->rank, da, b->rank, db, &y->rank, y->dims));
  for (int k = 0; k < 2; k++) /* a fused Transpose keeps its input's full rank */
    if ((p->binary.permuted >> k & 1) && t[n->in[k]].rank != y->rank)
      return hd_error(HD_ERR_INVALID_ARG, "%s: transposed input %d of rank %d for an output of rank %d", n->op_type, k,
                      t[n->in[k]].rank, y->rank);
  return NULL;
}

/* An input read through a fused Transpose (op_binary.perm) takes part with
 * axis perm[d] at output axis d; others broadcast as numpy does. */
static int binary_axis(const ir_node *n, int k, int d, int out_rank, int in_rank) {
  const op_binary *b = &OP_P(n)->binary;
  return k < 2 && (b->permuted >> k & 1) ? b->perm[k][d] : op_broadcast_axis(n, k, d, out_rank, in_rank);
}

/* 7: numpy broadcasting replaced the broadcast/axis attributes; later
 * versions only added types (Pow 12/13/15: exponent types, which we take
 * equal to the base's). Min/Max/Sum/Mean 8: broadcasting. */
OP_DEF(binary, ADD, "Add", 7, 14, .elementwise_axis = binary_axis)
OP_DEF(binary, SUB, "Sub", 7, 14, .elementwise_axis = binary_axis)
OP_DEF(binary, MUL, "Mul", 7, 14, .elementwise_axis = binary_axis)
OP_DEF(binary, DIV, "Div", 7, 14, .elementwise_axis = binary_axis)
OP_DEF(binary, POW, "Pow", 7, 15, .elementwise_axis = binary_axis)
OP_DEF(binary, MIN, "Min", 8, 13, .elementwise_axis = binary_axis)
OP_DEF(binary, MAX, "Max", 8, 13, .elementwise_axis = binary_axis)
OP_DEF(binary, SUM, "Sum", 8, 13, .elementwise_axis = binary_axis)
OP_DEF(binary, MEAN, "Mean", 8, 13, .elementwise_axis = binary_axis)
