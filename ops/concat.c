/* Concat (opsets 4-13) of tensors of any numeric type or bool along one axis (negative from
 * opset 11). */
#include <string.h>

#include "ops/op_util.h"

static hd_status *concat_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  memset(&OP_P(n)->concat, 0, sizeof OP_P(n)->concat);
  if (n->nin < 1 || !op_has_output(n, 0)) return hd_error(HD_ERR_INVALID_ARG, "Concat needs inputs and an output");
  for (int k = 0; k < n->nin; k++)
    if (n->in[k] == IR_NONE) return hd_error(HD_ERR_INVALID_ARG, "Concat input %d absent", k);
  int64_t axis = 0;
  int found = 0;
  HD_TRY(a->get_int(a->ctx, "axis", &axis, &found));
  if (!found) return hd_error(HD_ERR_INVALID_ARG, "Concat needs axis");
  OP_P(n)->concat.axis = (int)axis;
  return NULL;
}

static hd_status *concat_check(const ir_graph *g, const ir_node *n) {
  HD_TRY(op_check_data_io(g, n, "Concat"));
  int r = g->values[n->in[0]].rank;
  for (int k = 1; k < n->nin; k++)
    if (g->values[n->in[k]].rank != r) return hd_error(HD_ERR_INVALID_ARG, "Concat inputs of ranks %d and %d", r,
                                                        g->values[n->in[k]].rank);
  if (r < 1) return hd_error(HD_ERR_INVALID_ARG, "Concat of scalars");
  int ax;
  HD_TRY(op_norm_axis(OP_P(n)->concat.axis, r, &ax, "Concat"));
  return NULL;
}

static hd_status *concat_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  (void)g;
  const ir_tensor *x0 = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  int ax;
  HD_TRY(op_norm_axis(p->concat.axis, x0->rank, &ax, "Concat"));
  p->concat.axis = ax;
  y->rank = x0->rank;
  memcpy(y->dims, x0->dims, sizeof x0->dims);
  y->dims[ax] = 0;
  for (int k = 0; k < n->nin; k++) {
    const ir_tensor *x = &t[n->in[k]];
    if (x->rank != x0->rank) return hd_error(HD_ERR_INVALID_ARG, "Concat inputs of different ranks");
    for (int i = 0; i < x->rank; i++)
      if (i != ax && x->dims[i] != x0->dims[i])
        return hd_error(HD_ERR_INVALID_ARG, "Concat input %d differs at dim %d", k, i);
    y->dims[ax] += x->dims[ax];
  }
  return NULL;
}

/* 4: axis required (1 defaulted it); 11: negative axis; 13: types. */
OP_DEF(concat, CONCAT, "Concat", 4, 13)
