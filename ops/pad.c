/* Pad (11-25): data, pads, constant_value?, axes? (18+) -> output, any
 * element type (every output element is an input element or the fill, so
 * backends move bytes). Modes constant, reflect, edge, wrap (19+); pads
 * may be negative (the input is cropped first). pads, constant_value and
 * axes are value inputs (known when the plan is built). Left to the CPU
 * EP: a reflect pad past extent - 1, a wrap pad past extent, and a
 * reflect/edge/wrap pad of a dim with nothing left to pad from. */
#include <string.h>

#include "common/hd_math.h"
#include "ops/op_util.h"

enum { PAD_IN_PADS = 1, PAD_IN_VALUE = 2, PAD_IN_AXES = 3 };

static hd_status *pad_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_pad *p = &OP_P(n)->pad;
  memset(p, 0, sizeof *p);
  if (op_input(n, 0) == IR_NONE || op_input(n, PAD_IN_PADS) == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "Pad needs data, pads and an output");
  char mode[16] = "constant";
  int found = 0;
  HD_TRY(a->get_string(a->ctx, "mode", mode, sizeof mode, &found));
  if (strcmp(mode, "constant") == 0) p->mode = OP_PAD_MODE_CONSTANT;
  else if (strcmp(mode, "reflect") == 0) p->mode = OP_PAD_MODE_REFLECT;
  else if (strcmp(mode, "edge") == 0) p->mode = OP_PAD_MODE_EDGE;
  else if (strcmp(mode, "wrap") == 0 && n->opset >= 19) p->mode = OP_PAD_MODE_WRAP;
  else return hd_error(HD_ERR_INVALID_ARG, "Pad-%d mode '%s'", n->opset, mode);
  if (n->opset < 18 && op_input(n, PAD_IN_AXES) != IR_NONE)
    return hd_error(HD_ERR_INVALID_ARG, "Pad-%d with axes", n->opset);
  return NULL;
}

static hd_status *pad_check(const ir_graph *g, const ir_node *n) {
  const ir_value *x = &g->values[n->in[0]];
  if (!op_is_data(x->dtype)) return hd_error(HD_ERR_NOT_SUPPORTED, "Pad of type %s", hd_dtype_name(x->dtype));
  if (x->rank < 1) return hd_error(HD_ERR_NOT_SUPPORTED, "Pad of rank %d", x->rank);
  if (g->values[n->out[0]].dtype != x->dtype) return hd_error(HD_ERR_INVALID_ARG, "Pad output of another type");
  if (g->values[n->in[PAD_IN_PADS]].dtype != HD_DT_I64)
    return hd_error(HD_ERR_INVALID_ARG, "Pad pads of type %s", hd_dtype_name(g->values[n->in[PAD_IN_PADS]].dtype));
  if (op_input(n, PAD_IN_VALUE) != IR_NONE && g->values[n->in[PAD_IN_VALUE]].dtype != x->dtype)
    return hd_error(HD_ERR_INVALID_ARG, "Pad constant_value of another type");
  if (op_input(n, PAD_IN_AXES) != IR_NONE) {
    int dt = g->values[n->in[PAD_IN_AXES]].dtype;
    if (dt != HD_DT_I64 && dt != HD_DT_I32) return hd_error(HD_ERR_INVALID_ARG, "Pad axes of type %s", hd_dtype_name(dt));
  }
  return NULL;
}

/* constant_value's bytes (one element of the data's dtype) into p->fill. */
static hd_status *read_fill(const ir_graph *g, const ir_node *n, const ir_tensor *t, op_pad *p) {
  memset(p->fill, 0, sizeof p->fill);
  if (op_input(n, PAD_IN_VALUE) == IR_NONE || p->mode != OP_PAD_MODE_CONSTANT) return NULL;
  const ir_tensor *v = &t[n->in[PAD_IN_VALUE]];
  size_t es = hd_dtype_size(v->dtype);
  if (ir_numel(v->rank, v->dims) != 1 || es > sizeof p->fill)
    return hd_error(HD_ERR_INVALID_ARG, "Pad constant_value is not one element");
  if (!v->host)
    return hd_error(HD_ERR_NOT_SUPPORTED, "the value of '%s' is not known when the plan is built",
                    g->values[n->in[PAD_IN_VALUE]].name);
  memcpy(p->fill, v->host, es);
  return NULL;
}

/* The mode's limits on dim d: what ONNX Runtime pads without reading past
 * the cropped input (a single reflection, at most one wrap). */
static hd_status *check_dim(const op_pad *p, int d, int64_t extent) {
  int64_t pb = p->begin[d] > 0 ? p->begin[d] : 0, pe = p->end[d] > 0 ? p->end[d] : 0;
  if (p->mode == OP_PAD_MODE_CONSTANT || (pb == 0 && pe == 0)) return NULL;
  int64_t most = p->mode == OP_PAD_MODE_REFLECT ? extent - 1 : p->mode == OP_PAD_MODE_WRAP ? extent : INT64_MAX;
  if (extent == 0 || pb > most || pe > most)
    return hd_error(HD_ERR_NOT_SUPPORTED, "Pad: pads %lld, %lld of a dim of %lld in this mode", (long long)pb,
                    (long long)pe, (long long)extent);
  return NULL;
}

static hd_status *pad_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  op_pad *p = &pp->pad;
  const ir_tensor *x = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  int64_t pads[2 * IR_MAX_RANK], axes[IR_MAX_RANK];
  int npads = 0, naxes = x->rank;
  HD_TRY(op_value_ints(g, t, n->in[PAD_IN_PADS], pads, 2 * IR_MAX_RANK, &npads));
  if (op_input(n, PAD_IN_AXES) != IR_NONE) HD_TRY(op_value_ints(g, t, n->in[PAD_IN_AXES], axes, IR_MAX_RANK, &naxes));
  else
    for (int i = 0; i < naxes; i++) axes[i] = i;
  if (npads != 2 * naxes) return hd_error(HD_ERR_INVALID_ARG, "Pad: %d pads for %d axes", npads, naxes);
  HD_TRY(read_fill(g, n, t, p));
  uint8_t seen[IR_MAX_RANK] = {0};
  for (int d = 0; d < x->rank; d++) p->begin[d] = p->end[d] = 0;
  for (int i = 0; i < naxes; i++) {
    int ax;
    HD_TRY(op_norm_axis(axes[i], x->rank, &ax, "Pad"));
    if (seen[ax]) return hd_error(HD_ERR_INVALID_ARG, "Pad: axis %d repeated", ax);
    seen[ax] = 1;
    p->begin[ax] = pads[i];
    p->end[ax] = pads[i + naxes];
  }
  for (int d = 0; d < x->rank; d++) {
    int64_t b = p->begin[d], e = p->end[d];
    if (b < -HD_MAX_NUMEL || b > HD_MAX_NUMEL || e < -HD_MAX_NUMEL || e > HD_MAX_NUMEL)
      return hd_error(HD_ERR_NOT_SUPPORTED, "Pad: pads %lld, %lld", (long long)b, (long long)e);
    int64_t extent = x->dims[d] - (b < 0 ? -b : 0) - (e < 0 ? -e : 0);
    if (extent < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "Pad: crops %lld, %lld of a dim of %lld", (long long)b, (long long)e, (long long)x->dims[d]);
    HD_TRY(check_dim(p, d, extent));
    y->dims[d] = x->dims[d] + b + e;
  }
  y->rank = x->rank;
  return NULL;
}

hd_status *op_pad_map_of(const ir_node *n, const op_pad *p, const ir_tensor *t, op_pad_map *m) {
  const ir_tensor *x = &t[n->in[0]], *y = &t[n->out[0]];
  memset(m, 0, sizeof *m);
  int64_t acc = 1, xs[IR_MAX_RANK];
  for (int d = x->rank - 1; d >= 0; d--) xs[d] = acc, acc *= x->dims[d];
  for (int d = 0; d < x->rank; d++) {
    int64_t b = p->begin[d], e = p->end[d];
    int64_t start = b < 0 ? -b : 0, extent = x->dims[d] - start - (e < 0 ? -e : 0);
    if (extent < 0 || y->dims[d] != x->dims[d] + b + e) return hd_error(HD_ERR_INTERNAL, "Pad: the plan's pads do not fit");
    int r = m->rank - 1;
    if (r >= 0 && b == 0 && e == 0 && m->pad[r] == 0 && m->start[r] == 0 && m->extent[r] == m->dims[r]) {
      m->dims[r] *= y->dims[d]; /* both untouched: one dim */
      m->extent[r] = m->dims[r];
      m->in_stride[r] = xs[d];
      continue;
    }
    m->dims[m->rank] = y->dims[d];
    m->in_stride[m->rank] = xs[d];
    m->pad[m->rank] = b > 0 ? b : 0;
    m->start[m->rank] = start;
    m->extent[m->rank++] = extent;
  }
  return NULL;
}

OP_DEF(pad, PAD, "Pad", 11, 25, .value_inputs = (1u << PAD_IN_PADS) | (1u << PAD_IN_VALUE) | (1u << PAD_IN_AXES))
