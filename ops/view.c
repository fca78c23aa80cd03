/* Shape-only ops (views): Flatten, Reshape, Squeeze, Unsqueeze, Identity,
 * Dropout (inference). Output 0 holds input 0's bytes in a new shape; plans
 * alias it (op_def.view). Shapes and axes given as inputs are value inputs
 * (known when a plan is built: constants, or computed from shapes).
 * After infer, op_view.rank/dims hold the output shape. */
#include <string.h>

#include "common/hd_math.h"
#include "ops/op_util.h"

static hd_status *view_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  op_view *v = &OP_P(n)->view;
  memset(v, 0, sizeof *v);
  v->rank = -1; /* axes / target dims not known (yet) */
  if (n->nin < 1 || n->in[0] == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "%s needs input 0 and output 0", n->op_type);
  int64_t x = 0;
  switch (n->kind) {
    case OP_FLATTEN:
      HD_TRY(op_attr_int(a, "axis", 1, &x));
      v->axis = (int)x;
      break;
    case OP_RESHAPE:
      if (op_input(n, 1) == IR_NONE) return hd_error(HD_ERR_INVALID_ARG, "Reshape needs input shape");
      if (n->opset >= 14) HD_TRY(op_attr_int(a, "allowzero", 0, &x));
      v->allowzero = x != 0;
      break;
    case OP_SQUEEZE:
    case OP_UNSQUEEZE:
      if (n->opset < 13) {
        int found = 0, cnt = 0;
        HD_TRY(a->get_ints(a->ctx, "axes", v->dims, IR_MAX_RANK, &cnt, &found));
        if (cnt > IR_MAX_RANK) return hd_error(HD_ERR_NOT_SUPPORTED, "%s with %d axes", n->op_type, cnt);
        v->rank = found ? cnt : 0;
        v->has_axes = found;
      } else if (op_input(n, 1) != IR_NONE) {
        v->has_axes = 1; /* read at infer (a value input) */
      } else {
        v->rank = 0;
      }
      if (n->kind == OP_UNSQUEEZE && !v->has_axes)
        return hd_error(HD_ERR_INVALID_ARG, "Unsqueeze needs axes");
      break;
    case OP_IDENTITY: break;
    case OP_DROPOUT:
      if (op_has_output(n, 1)) return hd_error(HD_ERR_NOT_SUPPORTED, "Dropout with the mask output");
      if (n->opset < 7) return hd_error(HD_ERR_NOT_SUPPORTED, "Dropout-%d (is_test)", n->opset);
      /* Opset 12+: training_mode must be a constant false (ratio is unused then). */
      if (op_input(n, 2) != IR_NONE) {
        const ir_value *tm = &g->values[n->in[2]];
        if (!tm->is_const) return hd_error(HD_ERR_NOT_SUPPORTED, "Dropout with a non-constant training_mode");
        if (tm->dtype != HD_DT_BOOL) return hd_error(HD_ERR_INVALID_ARG, "Dropout training_mode is not bool");
        if (tm->data && tm->nbytes >= 1 && ((const uint8_t *)tm->data)[0])
          return hd_error(HD_ERR_NOT_SUPPORTED, "Dropout in training mode");
      }
      break;
    default: return hd_error(HD_ERR_INTERNAL, "view parse for kind %d", (int)n->kind);
  }
  return NULL;
}

static hd_status *view_check(const ir_graph *g, const ir_node *n) {
  const ir_value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
  if (!op_is_data(x->dtype)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", n->op_type, hd_dtype_name(x->dtype));
  if ((n->kind == OP_RESHAPE || n->kind == OP_SQUEEZE || n->kind == OP_UNSQUEEZE) && op_input(n, 1) != IR_NONE) {
    int dt = g->values[n->in[1]].dtype;
    if (dt != HD_DT_I64) return hd_error(HD_ERR_INVALID_ARG, "%s input 1 of type %s", n->op_type, hd_dtype_name(dt));
  }
  if (y->dtype != x->dtype) return hd_error(HD_ERR_NOT_SUPPORTED, "%s output of another type", n->op_type);
  if (x->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "%s input of unknown rank", n->op_type);
  const op_view *v = &OP_P(n)->view;
  if (n->kind == OP_FLATTEN && (v->axis < -x->rank || v->axis > x->rank))
    return hd_error(HD_ERR_INVALID_ARG, "Flatten axis %d for rank %d", v->axis, x->rank);
  /* Squeeze without axes drops every dim of size 1: the output rank must
   * not depend on a dim we cannot see yet. */
  if (n->kind == OP_SQUEEZE && !v->has_axes)
    for (int i = 0; i < x->rank; i++)
      if (x->dims[i] < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "Squeeze without axes of a dynamic dim");
  if (n->kind == OP_UNSQUEEZE && v->has_axes && n->opset < 13 && x->rank + v->rank > IR_MAX_RANK)
    return hd_error(HD_ERR_NOT_SUPPORTED, "Unsqueeze to rank %d", x->rank + v->rank);
  return NULL;
}

/* Reshape's target dims, or Squeeze/Unsqueeze-13's axes: input 1's values. */
static hd_status *read_values(const ir_graph *g, const ir_node *n, const ir_tensor *t, op_view *v) {
  if (op_input(n, 1) == IR_NONE || (n->kind != OP_RESHAPE && n->opset < 13)) return NULL;
  const ir_tensor *s = &t[n->in[1]];
  if (s->rank != 1) return hd_error(HD_ERR_INVALID_ARG, "%s input 1 of rank %d", n->op_type, s->rank);
  int cnt = 0;
  HD_TRY(op_value_ints(g, t, n->in[1], v->dims, IR_MAX_RANK, &cnt));
  v->rank = cnt;
  return NULL;
}

static hd_status *view_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  op_view *v = &pp->view;
  HD_TRY(read_values(g, n, t, v));
  const ir_tensor *x = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  int64_t total = ir_numel(x->rank, x->dims);
  if (total < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "%s: input of more than %lld elements", n->op_type, (long long)HD_MAX_NUMEL);
  switch (n->kind) {
    case OP_IDENTITY:
    case OP_DROPOUT:
      y->rank = x->rank;
      memcpy(y->dims, x->dims, sizeof x->dims);
      break;
    case OP_FLATTEN: {
      int axis = v->axis < 0 ? v->axis + x->rank : v->axis;
      if (axis < 0 || axis > x->rank) return hd_error(HD_ERR_INVALID_ARG, "Flatten axis %d", v->axis);
      y->rank = 2;
      y->dims[0] = ir_numel(axis, x->dims);
      y->dims[1] = ir_numel(x->rank - axis, x->dims + axis);
      break;
    }
    case OP_RESHAPE: {
      if (v->rank < 0) return hd_error(HD_ERR_INTERNAL, "Reshape shape was not read");
      int infer_at = -1;
      int64_t known = 1;
      y->rank = v->rank;
      for (int i = 0; i < v->rank; i++) {
        int64_t d = v->dims[i];
        if (d == 0 && !v->allowzero) {
          if (i >= x->rank) return hd_error(HD_ERR_INVALID_ARG, "Reshape: 0 at dim %d beyond the input rank", i);
          d = x->dims[i];
        } else if (d == -1) {
          if (infer_at >= 0) return hd_error(HD_ERR_INVALID_ARG, "Reshape: more than one -1");
          infer_at = i;
          continue;
        } else if (d < 0) {
          return hd_error(HD_ERR_INVALID_ARG, "Reshape: dim %lld", (long long)d);
        }
        y->dims[i] = d;
        if (d > HD_MAX_NUMEL || !hd_mul_i64(known, d, &known) || known > HD_MAX_NUMEL)
          known = HD_MAX_NUMEL + 1; /* too many: the element count check below refuses it */
      }
      if (infer_at >= 0) {
        if (known == 0 || known > HD_MAX_NUMEL || total % known != 0)
          return hd_error(HD_ERR_INVALID_ARG, "Reshape: cannot infer -1 from %lld elements", (long long)total);
        y->dims[infer_at] = total / known;
      }
      break;
    }
    case OP_SQUEEZE: {
      uint8_t drop[IR_MAX_RANK] = {0};
      if (v->has_axes) {
        if (v->rank < 0) return hd_error(HD_ERR_INTERNAL, "Squeeze axes were not read");
        for (int i = 0; i < v->rank; i++) {
          int ax;
          HD_TRY(op_norm_axis(v->dims[i], x->rank, &ax, "Squeeze"));
          if (x->dims[ax] != 1) return hd_error(HD_ERR_INVALID_ARG, "Squeeze: dim %d is not 1", ax);
          drop[ax] = 1;
        }
      } else {
        for (int i = 0; i < x->rank; i++) drop[i] = x->dims[i] == 1;
      }
      y->rank = 0;
      for (int i = 0; i < x->rank; i++)
        if (!drop[i]) y->dims[y->rank++] = x->dims[i];
      break;
    }
    case OP_UNSQUEEZE: {
      if (v->rank < 0) return hd_error(HD_ERR_INTERNAL, "Unsqueeze axes were not read");
      int r = x->rank + v->rank;
      if (r > IR_MAX_RANK) return hd_error(HD_ERR_NOT_SUPPORTED, "Unsqueeze to rank %d", r);
      uint8_t ins[IR_MAX_RANK] = {0};
      for (int i = 0; i < v->rank; i++) {
        int ax;
        HD_TRY(op_norm_axis(v->dims[i], r, &ax, "Unsqueeze"));
        if (ins[ax]) return hd_error(HD_ERR_INVALID_ARG, "Unsqueeze: axis %d repeated", ax);
        ins[ax] = 1;
      }
      for (int i = 0, k = 0; i < r; i++) y->dims[i] = ins[i] ? 1 : x->dims[k++];
      y->rank = r;
      break;
    }
    default: return hd_error(HD_ERR_INTERNAL, "view infer for kind %d", (int)n->kind);
  }
  if (ir_numel(y->rank, y->dims) != total)
    return hd_error(HD_ERR_INVALID_ARG, "%s: %lld elements in, %lld out", n->op_type, (long long)total,
                    (long long)ir_numel(y->rank, y->dims));
  v->rank = y->rank;
  memcpy(v->dims, y->dims, sizeof v->dims);
  return NULL;
}

/* Versions after these firsts only added types (Reshape 14: allowzero, read
 * here; Squeeze/Unsqueeze 13: axes became an input; Flatten 11: negative
 * axis; Dropout 12: ratio/training_mode inputs). */
OP_DEF(view, FLATTEN, "Flatten", 1, 25, .view = 1)
OP_DEF(view, RESHAPE, "Reshape", 5, 25, .view = 1, .value_inputs = 1u << 1)
OP_DEF(view, SQUEEZE, "Squeeze", 1, 25, .view = 1, .value_inputs = 1u << 1) /* opset 13+: axes input (absent before) */
OP_DEF(view, UNSQUEEZE, "Unsqueeze", 1, 25, .view = 1, .value_inputs = 1u << 1)
OP_DEF(view, IDENTITY, "Identity", 1, 25, .view = 1)
OP_DEF(view, DROPOUT, "Dropout", 7, 22, .view = 1)
