/* Reference Shape and Size: the input's dims (from the plan, never its
 * data), as int64. */
#include <string.h>

#include "backends/ref/ref.h"

static hd_status *ref_shape(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *x = &p->t[n->in[0]];
  int64_t *y = ir_tensor_addr(p, n->out[0], b);
  if (n->kind == OP_SIZE) {
    y[0] = ir_numel(x->rank, x->dims);
    return NULL;
  }
  const op_shape *sh = &OP_P(s)->shape;
  for (int64_t i = sh->start; i < sh->end; i++) y[i - sh->start] = x->dims[i];
  return NULL;
}

const ref_family ref_family_shape = {.run = ref_shape};
