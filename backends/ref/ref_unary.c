/* Reference activations and unary math: ref_apply_act element by element,
 * after the bias of the contrib GELUs. */
#include "backends/ref/ref.h"

static hd_status *ref_unary(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *xt = &p->t[n->in[0]];
  const void *x = ir_tensor_addr(p, n->in[0], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  int dt = xt->dtype;
  size_t cnt = (size_t)ir_numel(xt->rank, xt->dims);
  const void *bias = OP_P(s)->unary.has_bias ? ir_tensor_addr(p, n->in[1], b) : NULL;
  size_t cols = xt->rank > 0 ? (size_t)xt->dims[xt->rank - 1] : 1;
  for (size_t i = 0; i < cnt; i++) {
    float v = ref_load(dt, x, i);
    if (bias) v += ref_load(dt, bias, i % cols);
    ref_store(dt, y, i, ref_apply_act(&OP_P(s)->unary.act, v));
  }
  return NULL;
}

const ref_family ref_family_unary = {.run = ref_unary};
