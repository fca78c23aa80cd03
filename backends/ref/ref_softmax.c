/* Reference Softmax in double: over [outer, len, inner] with the axis as
 * len (opset 13), or over the flattened dims from axis on (opset < 13:
 * len = their product, inner = 1). */
#include <math.h>

#include "backends/ref/ref.h"

static hd_status *ref_softmax(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *xt = &p->t[n->in[0]];
  const void *x = ir_tensor_addr(p, n->in[0], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  int dt = xt->dtype, ax = OP_P(s)->softmax.axis;
  int64_t outer = ir_numel(ax, xt->dims), len, inner;
  if (OP_P(s)->softmax.legacy_2d) {
    len = ir_numel(xt->rank - ax, xt->dims + ax);
    inner = 1;
  } else {
    len = xt->dims[ax];
    inner = ir_numel(xt->rank - ax - 1, xt->dims + ax + 1);
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      size_t base = (size_t)(o * len * inner + i);
      double mx = -HUGE_VAL, sum = 0.0;
      for (int64_t j = 0; j < len; j++) {
        double v = ref_load(dt, x, base + (size_t)(j * inner));
        if (v > mx) mx = v;
      }
      for (int64_t j = 0; j < len; j++) sum += exp(ref_load(dt, x, base + (size_t)(j * inner)) - mx);
      for (int64_t j = 0; j < len; j++) {
        size_t at = base + (size_t)(j * inner);
        ref_store(dt, y, at, (float)(exp(ref_load(dt, x, at) - mx) / sum));
      }
    }
  return NULL;
}

const ref_family ref_family_softmax = {.run = ref_softmax};
