/* Reference activations (Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid,
 * HardSwish, Tanh): ref_apply_act element by element. */
#include "backends/ref/ref.h"

static hd_status *ref_unary(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *xt = &p->t[n->in[0]];
  const void *x = ir_tensor_addr(p, n->in[0], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  int dt = xt->dtype;
  size_t cnt = (size_t)ir_numel(xt->rank, xt->dims);
  for (size_t i = 0; i < cnt; i++) ref_store(dt, y, i, ref_apply_act(&OP_P(s)->unary.act, ref_load(dt, x, i)));
  return NULL;
}

const ref_family ref_family_unary = {.run = ref_unary};
