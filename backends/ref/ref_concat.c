/* Reference Concat: each input's rows of (dims from axis on) copied in turn. */
#include <string.h>

#include "backends/ref/ref.h"

static hd_status *ref_concat(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *yt = &p->t[n->out[0]];
  int ax = OP_P(s)->concat.axis;
  char *y = ir_tensor_addr(p, n->out[0], b);
  size_t esz = hd_dtype_size(yt->dtype);
  int64_t outer = ir_numel(ax, yt->dims);
  size_t yrow = (size_t)ir_numel(yt->rank - ax, yt->dims + ax) * esz, off = 0;
  for (int k = 0; k < n->nin; k++) {
    const ir_tensor *xt = &p->t[n->in[k]];
    const char *x = ir_tensor_addr(p, n->in[k], b);
    size_t row = (size_t)ir_numel(xt->rank - ax, xt->dims + ax) * esz;
    if (row)
      for (int64_t o = 0; o < outer; o++) memcpy(y + (size_t)o * yrow + off, x + (size_t)o * row, row);
    off += row;
  }
  return NULL;
}

const ref_family ref_family_concat = {.run = ref_concat};
