/* Reference Add, Sub, Mul, Div with numpy broadcasting: each output
 * coordinate maps to each input through strides that are 0 where the input
 * broadcasts. The fused activation is applied last. */
#include "backends/ref/ref.h"

void ref_bcast_strides(const ir_tensor *t, int r, int64_t *st) {
  int64_t acc = 1;
  for (int i = r - 1; i >= 0; i--) {
    int k = i - (r - t->rank);
    if (k < 0) {
      st[i] = 0;
      continue;
    }
    st[i] = t->dims[k] == 1 ? 0 : acc;
    acc *= t->dims[k];
  }
}

static hd_status *ref_binary(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *at = &p->t[n->in[0]], *bt = &p->t[n->in[1]], *yt = &p->t[n->out[0]];
  const void *a = ir_tensor_addr(p, n->in[0], b), *bb = ir_tensor_addr(p, n->in[1], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  int r = yt->rank;
  int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
  ref_bcast_strides(at, r, sa);
  ref_bcast_strides(bt, r, sb);
  size_t cnt = (size_t)ir_numel(yt->rank, yt->dims);
  for (size_t i = 0; i < cnt; i++) {
    int64_t ia = 0, ib = 0;
    for (int d = 0; d < r; d++) {
      ia += idx[d] * sa[d];
      ib += idx[d] * sb[d];
    }
    float u = ref_load(at->dtype, a, (size_t)ia), v = ref_load(bt->dtype, bb, (size_t)ib), o = 0.0f;
    switch (OP_P(s)->binary.kind) {
      case OP_BIN_ADD: o = u + v; break;
      case OP_BIN_SUB: o = u - v; break;
      case OP_BIN_MUL: o = u * v; break;
      case OP_BIN_DIV: o = u / v; break;
    }
    ref_store(yt->dtype, y, i, ref_apply_act(&OP_P(s)->binary.act, o));
    for (int d = r - 1; d >= 0; d--) { /* the next output coordinate */
      if (++idx[d] < yt->dims[d]) break;
      idx[d] = 0;
    }
  }
  return NULL;
}

const ref_family ref_family_binary = {.run = ref_binary};
