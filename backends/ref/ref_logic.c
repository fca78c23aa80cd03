/* Reference comparisons and logic: floats compared as doubles (exact for
 * every float type), integers as int64; bool outputs. */
#include <math.h>

#include "backends/ref/ref.h"
#include "ops/op_util.h"

static int compare(op_logic_kind k, int ints, const ir_tensor *at, const void *a, size_t ia, const ir_tensor *bt,
                   const void *b, size_t ib) {
  if (ints) {
    int64_t u = ref_load_i64(at->dtype, a, ia), v = ref_load_i64(bt->dtype, b, ib);
    switch (k) {
      case OP_LOGIC_EQ: return u == v;
      case OP_LOGIC_LT: return u < v;
      case OP_LOGIC_LE: return u <= v;
      case OP_LOGIC_GT: return u > v;
      case OP_LOGIC_GE: return u >= v;
      case OP_LOGIC_AND: return u && v;
      case OP_LOGIC_OR: return u || v;
      default: return (u != 0) != (v != 0);
    }
  }
  double u = ref_load_f64(at->dtype, a, ia), v = ref_load_f64(bt->dtype, b, ib);
  switch (k) {
    case OP_LOGIC_EQ: return u == v;
    case OP_LOGIC_LT: return u < v;
    case OP_LOGIC_LE: return u <= v;
    case OP_LOGIC_GT: return u > v;
    default: return u >= v;
  }
}

static hd_status *ref_logic(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const op_logic *l = &OP_P(s)->logic;
  const ir_tensor *at = &p->t[n->in[0]], *yt = &p->t[n->out[0]];
  const void *a = ir_tensor_addr(p, n->in[0], b);
  uint8_t *y = ir_tensor_addr(p, n->out[0], b);
  size_t cnt = (size_t)ir_numel(yt->rank, yt->dims);
  if (l->kind >= OP_LOGIC_NOT) {
    for (size_t i = 0; i < cnt; i++) {
      double v = ref_load_f64(at->dtype, a, i);
      switch (l->kind) {
        case OP_LOGIC_NOT: y[i] = v == 0; break;
        case OP_LOGIC_ISNAN: y[i] = v != v; break;
        default: y[i] = isinf(v) && ((v > 0 && l->detect_positive) || (v < 0 && l->detect_negative)); break;
      }
    }
    return NULL;
  }
  const ir_tensor *bt = &p->t[n->in[1]];
  const void *bb = ir_tensor_addr(p, n->in[1], b);
  int ints = op_is_int(at->dtype) || at->dtype == HD_DT_BOOL, r = yt->rank;
  int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], c[IR_MAX_RANK] = {0};
  ref_bcast_strides(at, r, sa);
  ref_bcast_strides(bt, r, sb);
  for (size_t i = 0; i < cnt; i++) {
    int64_t ia = 0, ib = 0;
    for (int d = 0; d < r; d++) ia += c[d] * sa[d], ib += c[d] * sb[d];
    y[i] = (uint8_t)compare(l->kind, ints, at, a, (size_t)ia, bt, bb, (size_t)ib);
    for (int d = r - 1; d >= 0; d--) {
      if (++c[d] < yt->dims[d]) break;
      c[d] = 0;
    }
  }
  return NULL;
}

const ref_family ref_family_logic = {.run = ref_logic};
