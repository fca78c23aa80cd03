/* Reference view ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
 * Dropout): plans alias them, so a step is left only where the output is a
 * partition output with its own buffer; then the bytes are copied. */
#include <string.h>

#include "backends/ref/ref.h"

static hd_status *ref_view_copy(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const void *x = ir_tensor_addr(p, n->in[0], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  size_t bytes = p->t[n->out[0]].nbytes;
  if (bytes && x != y) memmove(y, x, bytes);
  return NULL;
}

const ref_family ref_family_view = {.run = ref_view_copy};
