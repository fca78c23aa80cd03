/* Gather (opset 1-13), GatherElements (11-13) and GatherND (11-13): data
 * of any numeric type or bool, int32/int64 indices (GatherND: int64),
 * negative indices counting from the back.
 * Gather: y = data[..., indices, ...] along axis (rank r + q - 1);
 * GatherElements: y has the indices' shape, data's axis coordinate taken
 * from indices; GatherND: the last indices dim indexes data's leading dims
 * after batch_dims. An index outside [-d, d) is an error on the host (the
 * reference backend, plan-time values); GPU kernels write 0 for it. */
#include <string.h>

#include "ops/op_util.h"

static hd_status *gather_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_gather *p = &OP_P(n)->gather;
  memset(p, 0, sizeof *p);
  if (n->nin != 2 || n->in[0] == IR_NONE || n->in[1] == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "%s needs data, indices and an output", n->op_type);
  int64_t axis, batch_dims = 0;
  if (n->kind == OP_GATHER_ND) {
    HD_TRY(op_attr_int(a, "batch_dims", 0, &batch_dims));
    if (batch_dims < 0 || batch_dims >= IR_MAX_RANK) return hd_error(HD_ERR_INVALID_ARG, "GatherND batch_dims %lld", (long long)batch_dims);
    p->batch_dims = (int)batch_dims;
    return NULL;
  }
  HD_TRY(op_attr_int(a, "axis", 0, &axis));
  if (axis < -IR_MAX_RANK || axis >= IR_MAX_RANK) return hd_error(HD_ERR_INVALID_ARG, "%s axis %lld", n->op_type, (long long)axis);
  p->axis = (int)axis;
  return NULL;
}

static hd_status *gather_check(const ir_graph *g, const ir_node *n) {
  const ir_value *x = &g->values[n->in[0]], *i = &g->values[n->in[1]], *y = &g->values[n->out[0]];
  if (!op_is_data(x->dtype)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", n->op_type, hd_dtype_name(x->dtype));
  if (i->dtype != HD_DT_I64 && i->dtype != HD_DT_I32)
    return hd_error(HD_ERR_INVALID_ARG, "%s indices of type %s", n->op_type, hd_dtype_name(i->dtype));
  if (y->dtype != x->dtype) return hd_error(HD_ERR_INVALID_ARG, "%s output of another type", n->op_type);
  if (x->rank < 1 || i->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of unknown or scalar rank", n->op_type);
  if (n->kind == OP_GATHER_ND) {
    if (i->dtype != HD_DT_I64) return hd_error(HD_ERR_INVALID_ARG, "GatherND indices of type %s", hd_dtype_name(i->dtype));
    if (i->rank < 1 || OP_P(n)->gather.batch_dims >= x->rank || OP_P(n)->gather.batch_dims >= i->rank)
      return hd_error(HD_ERR_INVALID_ARG, "GatherND of ranks %d and %d, batch_dims %d", x->rank, i->rank,
                      OP_P(n)->gather.batch_dims);
    return NULL;
  }
  int ax;
  HD_TRY(op_norm_axis(OP_P(n)->gather.axis, x->rank, &ax, n->op_type));
  if (n->kind == OP_GATHER && x->rank + i->rank - 1 > IR_MAX_RANK)
    return hd_error(HD_ERR_NOT_SUPPORTED, "Gather to rank %d", x->rank + i->rank - 1);
  if (n->kind == OP_GATHER_ELEMENTS && i->rank != x->rank)
    return hd_error(HD_ERR_INVALID_ARG, "GatherElements: indices of rank %d for data of rank %d", i->rank, x->rank);
  return NULL;
}

static hd_status *gather_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  (void)g;
  const ir_tensor *x = &t[n->in[0]], *i = &t[n->in[1]];
  ir_tensor *y = &t[n->out[0]];
  if (n->kind == OP_GATHER_ND) { /* indices[:-1] + data[b + last:] */
    int b = p->gather.batch_dims;
    int64_t last = i->dims[i->rank - 1];
    if (last < 1 || b + last > x->rank) return hd_error(HD_ERR_INVALID_ARG, "GatherND: index tuples of %lld", (long long)last);
    for (int d = 0; d < b; d++)
      if (i->dims[d] != x->dims[d]) return hd_error(HD_ERR_INVALID_ARG, "GatherND: batch dim %d differs", d);
    int r = i->rank - 1 + x->rank - b - (int)last;
    if (r > IR_MAX_RANK) return hd_error(HD_ERR_NOT_SUPPORTED, "GatherND to rank %d", r);
    y->rank = 0;
    for (int d = 0; d < i->rank - 1; d++) y->dims[y->rank++] = i->dims[d];
    for (int d = b + (int)last; d < x->rank; d++) y->dims[y->rank++] = x->dims[d];
    return NULL;
  }
  int ax;
  HD_TRY(op_norm_axis(p->gather.axis, x->rank, &ax, n->op_type));
  p->gather.axis = ax;
  if (x->dims[ax] == 0 && ir_numel(i->rank, i->dims) > 0)
    return hd_error(HD_ERR_INVALID_ARG, "%s from an empty axis", n->op_type);
  if (n->kind == OP_GATHER_ELEMENTS) {
    if (i->rank != x->rank) return hd_error(HD_ERR_INVALID_ARG, "GatherElements: ranks %d and %d", i->rank, x->rank);
    for (int d = 0; d < x->rank; d++)
      if (d != ax && i->dims[d] > x->dims[d])
        return hd_error(HD_ERR_INVALID_ARG, "GatherElements: indices dim %d is %lld, data's %lld", d,
                        (long long)i->dims[d], (long long)x->dims[d]);
    y->rank = i->rank;
    memcpy(y->dims, i->dims, sizeof y->dims);
    return NULL;
  }
  int r = x->rank + i->rank - 1;
  if (r > IR_MAX_RANK) return hd_error(HD_ERR_NOT_SUPPORTED, "Gather to rank %d", r);
  y->rank = 0;
  for (int d = 0; d < ax; d++) y->dims[y->rank++] = x->dims[d];
  for (int d = 0; d < i->rank; d++) y->dims[y->rank++] = i->dims[d];
  for (int d = ax + 1; d < x->rank; d++) y->dims[y->rank++] = x->dims[d];
  return NULL;
}

OP_DEF(gather, GATHER, "Gather", 1, 13) /* 11: negative indices; 13: types */

OP_DEF(gather, GATHER_ELEMENTS, "GatherElements", 11, 13)

OP_DEF(gather, GATHER_ND, "GatherND", 11, 13) /* 12: batch_dims */
