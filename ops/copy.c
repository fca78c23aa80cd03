/* Data movement ops: every output element is one input element, found
 * through a strided map (op_copy_map), so one loop (reference) or one
 * kernel (GPU) runs them all, for any element type:
 *   Transpose (1-25)   perm (default: reversed)
 *   Slice (1-25)       starts/ends/axes/steps: attributes before 10, value
 *                      inputs after (known when the plan is built)
 *   Split (2-25)       axis; sizes from the split input (13+), the split
 *                      attribute (2-12), or equal parts (num_outputs, 18+)
 *   Expand (8-25)      numpy broadcasting to the shape input's values
 *   Tile (6-25)        repeats input's values: dims wrap (mod) */
#include <string.h>

#include "common/hd_math.h"
#include "ops/op_util.h"

static hd_status *copy_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_copy *c = &OP_P(n)->copy;
  memset(c, 0, sizeof *c);
  if (n->nin < 1 || n->in[0] == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "%s needs an input and an output", n->op_type);
  int found = 0, cnt = 0;
  int64_t v[16];
  switch (n->kind) {
    case OP_TRANSPOSE:
      HD_TRY(a->get_ints(a->ctx, "perm", v, IR_MAX_RANK, &cnt, &found));
      if (found && cnt > IR_MAX_RANK) return hd_error(HD_ERR_NOT_SUPPORTED, "Transpose of rank %d", cnt);
      c->has_axes = found;
      c->n = found ? cnt : 0;
      for (int i = 0; i < c->n; i++) {
        if (v[i] < 0 || v[i] >= cnt) return hd_error(HD_ERR_INVALID_ARG, "Transpose perm value %lld", (long long)v[i]);
        c->axes[i] = (int8_t)v[i];
      }
      break;
    case OP_SLICE:
      if (n->opset >= 10) {
        if (op_input(n, 1) == IR_NONE || op_input(n, 2) == IR_NONE)
          return hd_error(HD_ERR_INVALID_ARG, "Slice needs starts and ends");
        break;
      }
      HD_TRY(a->get_ints(a->ctx, "starts", c->u.attr.starts, IR_MAX_RANK, &cnt, &found));
      if (!found || cnt > IR_MAX_RANK) return hd_error(HD_ERR_INVALID_ARG, "Slice starts: %d values", cnt);
      c->n = cnt;
      HD_TRY(a->get_ints(a->ctx, "ends", c->u.attr.ends, IR_MAX_RANK, &cnt, &found));
      if (!found || cnt != c->n) return hd_error(HD_ERR_INVALID_ARG, "Slice ends: %d values for %d starts", cnt, c->n);
      HD_TRY(a->get_ints(a->ctx, "axes", v, IR_MAX_RANK, &cnt, &found));
      if (found && cnt != c->n) return hd_error(HD_ERR_INVALID_ARG, "Slice axes: %d values for %d starts", cnt, c->n);
      c->has_axes = found;
      for (int i = 0; found && i < cnt; i++) {
        if (v[i] < -IR_MAX_RANK || v[i] >= IR_MAX_RANK) return hd_error(HD_ERR_INVALID_ARG, "Slice axis %lld", (long long)v[i]);
        c->axes[i] = (int8_t)v[i];
      }
      break;
    case OP_SPLIT: {
      int64_t axis;
      HD_TRY(op_attr_int(a, "axis", 0, &axis));
      if (axis < -IR_MAX_RANK || axis >= IR_MAX_RANK) return hd_error(HD_ERR_INVALID_ARG, "Split axis %lld", (long long)axis);
      c->axis = (int)axis;
      if (n->nout > 16) return hd_error(HD_ERR_NOT_SUPPORTED, "Split into %d outputs", n->nout);
      for (int k = 0; k < n->nout; k++)
        if (n->out[k] == IR_NONE) return hd_error(HD_ERR_NOT_SUPPORTED, "Split with an unnamed output");
      if (n->opset < 13) {
        HD_TRY(a->get_ints(a->ctx, "split", c->u.split, 16, &cnt, &found));
        if (found && cnt != n->nout)
          return hd_error(HD_ERR_INVALID_ARG, "Split: %d sizes for %d outputs", cnt, n->nout);
        c->n = found ? cnt : 0;
      } else if (n->opset >= 18 && op_input(n, 1) == IR_NONE) {
        int64_t parts = 0;
        HD_TRY(a->get_int(a->ctx, "num_outputs", &parts, &found));
        if (found && parts != n->nout)
          return hd_error(HD_ERR_INVALID_ARG, "Split: num_outputs %lld with %d outputs", (long long)parts, n->nout);
      }
      break;
    }
    case OP_EXPAND:
    case OP_TILE:
      if (op_input(n, 1) == IR_NONE) return hd_error(HD_ERR_INVALID_ARG, "%s needs its second input", n->op_type);
      break;
    default: return hd_error(HD_ERR_INTERNAL, "copy parse for kind %d", (int)n->kind);
  }
  return NULL;
}

static hd_status *copy_check(const ir_graph *g, const ir_node *n) {
  const ir_value *x = &g->values[n->in[0]];
  if (!op_is_data(x->dtype)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", n->op_type, hd_dtype_name(x->dtype));
  if (x->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of unknown rank", n->op_type);
  for (int k = 0; k < n->nout; k++)
    if (n->out[k] != IR_NONE && g->values[n->out[k]].dtype != x->dtype)
      return hd_error(HD_ERR_INVALID_ARG, "%s output of another type", n->op_type);
  for (int k = 1; k < n->nin; k++) /* shape, starts, repeats, split: int64 (Slice: or int32) */
    if (n->in[k] != IR_NONE && g->values[n->in[k]].dtype != HD_DT_I64 &&
        !(n->kind == OP_SLICE && g->values[n->in[k]].dtype == HD_DT_I32))
      return hd_error(HD_ERR_INVALID_ARG, "%s input %d of type %s", n->op_type, k, hd_dtype_name(g->values[n->in[k]].dtype));
  const op_copy *c = &OP_P(n)->copy;
  if (n->kind == OP_TRANSPOSE && c->has_axes && c->n != x->rank)
    return hd_error(HD_ERR_INVALID_ARG, "Transpose: perm of %d for rank %d", c->n, x->rank);
  return NULL;
}

/* ---- infer, per op ---- */

static hd_status *transpose_infer(const ir_node *n, ir_tensor *t, op_copy *c) {
  const ir_tensor *x = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  uint8_t seen[IR_MAX_RANK] = {0};
  if (!c->has_axes)
    for (int i = 0; i < x->rank; i++) c->axes[i] = (int8_t)(x->rank - 1 - i);
  else if (c->n != x->rank)
    return hd_error(HD_ERR_INVALID_ARG, "Transpose: perm of %d for rank %d", c->n, x->rank);
  for (int i = 0; i < x->rank; i++) {
    int a = c->axes[i];
    if (a < 0 || a >= x->rank || seen[a]) return hd_error(HD_ERR_INVALID_ARG, "Transpose: perm is no permutation");
    seen[a] = 1;
    y->dims[i] = x->dims[a];
  }
  c->n = y->rank = x->rank;
  c->has_axes = 1;
  return NULL;
}

static hd_status *slice_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_copy *c) {
  const ir_tensor *x = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  int64_t starts[IR_MAX_RANK], ends[IR_MAX_RANK], axes[IR_MAX_RANK], steps[IR_MAX_RANK];
  int cnt = c->n, m = 0;
  if (n->opset >= 10) {
    HD_TRY(op_value_ints(g, t, n->in[1], starts, IR_MAX_RANK, &cnt));
    HD_TRY(op_value_ints(g, t, n->in[2], ends, IR_MAX_RANK, &m));
    if (m != cnt) return hd_error(HD_ERR_INVALID_ARG, "Slice: %d starts, %d ends", cnt, m);
  } else {
    memcpy(starts, c->u.attr.starts, sizeof starts);
    memcpy(ends, c->u.attr.ends, sizeof ends);
  }
  for (int i = 0; i < cnt; i++) axes[i] = n->opset < 10 && c->has_axes ? c->axes[i] : i, steps[i] = 1;
  if (op_input(n, 3) != IR_NONE) {
    HD_TRY(op_value_ints(g, t, n->in[3], axes, IR_MAX_RANK, &m));
    if (m != cnt) return hd_error(HD_ERR_INVALID_ARG, "Slice: %d axes for %d starts", m, cnt);
  }
  if (op_input(n, 4) != IR_NONE) {
    HD_TRY(op_value_ints(g, t, n->in[4], steps, IR_MAX_RANK, &m));
    if (m != cnt) return hd_error(HD_ERR_INVALID_ARG, "Slice: %d steps for %d starts", m, cnt);
  }
  for (int d = 0; d < x->rank; d++) c->u.slice.start[d] = 0, c->u.slice.step[d] = 1, y->dims[d] = x->dims[d];
  uint8_t seen[IR_MAX_RANK] = {0};
  for (int i = 0; i < cnt; i++) {
    int ax;
    HD_TRY(op_norm_axis(axes[i], x->rank, &ax, "Slice"));
    if (seen[ax]) return hd_error(HD_ERR_INVALID_ARG, "Slice: axis %d repeated", ax);
    seen[ax] = 1;
    int64_t d = x->dims[ax], s = starts[i], e = ends[i], st = steps[i], len;
    if (st == 0) return hd_error(HD_ERR_INVALID_ARG, "Slice: step 0");
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (st > 0) {
      s = s < 0 ? 0 : s > d ? d : s;
      e = e < 0 ? 0 : e > d ? d : e;
      len = e > s ? (e - s - 1) / st + 1 : 0;
    } else {
      s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
      e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
      len = s > e ? (s - e - 1) / -st + 1 : 0;
    }
    c->u.slice.start[ax] = len ? s : 0;
    c->u.slice.step[ax] = st;
    y->dims[ax] = len;
  }
  y->rank = x->rank;
  return NULL;
}

static hd_status *split_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_copy *c) {
  const ir_tensor *x = &t[n->in[0]];
  int ax;
  HD_TRY(op_norm_axis(c->axis, x->rank, &ax, "Split"));
  c->axis = ax;
  int64_t sizes[16], d = x->dims[ax], sum = 0;
  int cnt = 0;
  if (n->opset >= 13 && op_input(n, 1) != IR_NONE) {
    HD_TRY(op_value_ints(g, t, n->in[1], sizes, 16, &cnt));
  } else if (c->n) {
    cnt = c->n;
    memcpy(sizes, c->u.split, sizeof(int64_t) * (size_t)cnt);
  } else { /* equal parts; the last may be smaller (18+) */
    int64_t part = (d + n->nout - 1) / n->nout;
    if (n->opset < 18 && d % n->nout) return hd_error(HD_ERR_INVALID_ARG, "Split: %lld not divisible by %d", (long long)d, n->nout);
    for (cnt = 0; cnt < n->nout; cnt++) sizes[cnt] = d - sum < part ? d - sum : part, sum += sizes[cnt];
    sum = 0;
  }
  if (cnt != n->nout) return hd_error(HD_ERR_INVALID_ARG, "Split: %d sizes for %d outputs", cnt, n->nout);
  for (int k = 0; k < cnt; k++) {
    if (sizes[k] < 0) return hd_error(HD_ERR_INVALID_ARG, "Split: size %lld", (long long)sizes[k]);
    sum += sizes[k];
    ir_tensor *y = &t[n->out[k]];
    y->rank = x->rank;
    memcpy(y->dims, x->dims, sizeof y->dims);
    y->dims[ax] = sizes[k];
  }
  if (sum != d) return hd_error(HD_ERR_INVALID_ARG, "Split: sizes sum to %lld, dim is %lld", (long long)sum, (long long)d);
  return NULL;
}

static hd_status *expand_tile_infer(const ir_graph *g, const ir_node *n, ir_tensor *t) {
  const ir_tensor *x = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  int64_t v[IR_MAX_RANK];
  int cnt = 0;
  HD_TRY(op_value_ints(g, t, n->in[1], v, IR_MAX_RANK, &cnt));
  if (n->kind == OP_EXPAND) {
    for (int i = 0; i < cnt; i++)
      if (v[i] < 0) return hd_error(HD_ERR_INVALID_ARG, "Expand to dim %lld", (long long)v[i]);
    return op_broadcast(x->rank, x->dims, cnt, v, &y->rank, y->dims);
  }
  if (cnt != x->rank) return hd_error(HD_ERR_INVALID_ARG, "Tile: %d repeats for rank %d", cnt, x->rank);
  for (int i = 0; i < cnt; i++) {
    if (v[i] < 0) return hd_error(HD_ERR_INVALID_ARG, "Tile: repeats %lld", (long long)v[i]);
    if (v[i] && x->dims[i] > HD_MAX_NUMEL / v[i]) return hd_error(HD_ERR_NOT_SUPPORTED, "Tile: a dim too large");
    y->dims[i] = x->dims[i] * v[i];
  }
  y->rank = x->rank;
  return NULL;
}

static hd_status *copy_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  switch (n->kind) {
    case OP_TRANSPOSE: return transpose_infer(n, t, &p->copy);
    case OP_SLICE: return slice_infer(g, n, t, &p->copy);
    case OP_SPLIT: return split_infer(g, n, t, &p->copy);
    case OP_EXPAND:
    case OP_TILE: return expand_tile_infer(g, n, t);
    default: return hd_error(HD_ERR_INTERNAL, "copy infer for kind %d", (int)n->kind);
  }
}

/* ---- the strided map ---- */

hd_status *op_copy_map(const ir_node *n, const op_copy *c, const ir_tensor *t, int out, op_strided *m) {
  const ir_tensor *x = &t[n->in[0]], *y = &t[n->out[out]];
  int64_t xs[IR_MAX_RANK];
  int64_t acc = 1;
  for (int d = x->rank - 1; d >= 0; d--) xs[d] = acc, acc *= x->dims[d];
  op_strided s = {.rank = y->rank};
  for (int d = 0; d < y->rank; d++) {
    s.dims[d] = y->dims[d];
    switch (n->kind) {
      case OP_TRANSPOSE: s.stride[d] = xs[c->axes[d]]; break;
      case OP_SLICE:
        s.stride[d] = xs[d] * c->u.slice.step[d];
        s.offset += c->u.slice.start[d] * xs[d];
        break;
      case OP_SPLIT: s.stride[d] = xs[d]; break;
      case OP_TILE:
        s.stride[d] = xs[d];
        s.mod[d] = x->dims[d] == y->dims[d] ? 0 : x->dims[d];
        break;
      case OP_EXPAND: {
        int k = d - (y->rank - x->rank);
        s.stride[d] = k < 0 || x->dims[k] == 1 ? 0 : xs[k];
        break;
      }
      default: return hd_error(HD_ERR_INTERNAL, "copy map for kind %d", (int)n->kind);
    }
  }
  if (n->kind == OP_SPLIT)
    for (int k = 0; k < out; k++) s.offset += t[n->out[k]].dims[c->axis] * xs[c->axis];
  /* merge dim d into d - 1 where the walk stays one stride apart */
  op_strided mm = {.rank = 0, .offset = s.offset};
  for (int d = 0; d < s.rank; d++) {
    if (s.dims[d] == 1) continue; /* size-1 dims move nothing */
    int r = mm.rank - 1;
    if (r >= 0 && !mm.mod[r] && !s.mod[d] && mm.stride[r] == s.stride[d] * s.dims[d]) {
      mm.dims[r] *= s.dims[d];
      mm.stride[r] = s.stride[d];
      continue;
    }
    mm.dims[mm.rank] = s.dims[d];
    mm.stride[mm.rank] = s.stride[d];
    mm.mod[mm.rank++] = s.mod[d];
  }
  if (mm.rank == 0) mm.rank = 1, mm.dims[0] = 1, mm.stride[0] = 1;
  *m = mm;
  return NULL;
}

OP_DEF(copy, TRANSPOSE, "Transpose", 1, 25)
OP_DEF(copy, SLICE, "Slice", 1, 25, .value_inputs = 0x1eu) /* 10+: starts, ends, axes, steps */
OP_DEF(copy, SPLIT, "Split", 2, 25, .value_inputs = 1u << 1)
OP_DEF(copy, EXPAND, "Expand", 8, 25, .value_inputs = 1u << 1, .elementwise_axis = op_broadcast_axis)
OP_DEF(copy, TILE, "Tile", 6, 25, .value_inputs = 1u << 1)
