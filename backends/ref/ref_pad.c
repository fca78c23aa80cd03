/* Reference Pad: each output element walks the pad map (op_pad_map_of) to
 * its input element, or is the fill; element bytes as they are. */
#include <string.h>

#include "backends/ref/ref.h"

/* j brought into [0, n) by the mode; -1 for the fill (constant mode). */
static int64_t pad_source(op_pad_mode mode, int64_t j, int64_t n) {
  if (j >= 0 && j < n) return j;
  switch (mode) {
    case OP_PAD_MODE_REFLECT: return j < 0 ? -j : 2 * (n - 1) - j;
    case OP_PAD_MODE_EDGE: return j < 0 ? 0 : n - 1;
    case OP_PAD_MODE_WRAP: return (j % n + n) % n;
    default: return -1;
  }
}

static hd_status *ref_pad(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const op_pad *q = &OP_P(s)->pad;
  op_pad_map m;
  HD_TRY(op_pad_map_of(n, q, p->t, &m));
  const char *x = ir_tensor_addr(p, n->in[0], b);
  char *y = ir_tensor_addr(p, n->out[0], b);
  size_t es = hd_dtype_size(p->t[n->in[0]].dtype);
  int64_t cnt = ir_numel(m.rank, m.dims), c[IR_MAX_RANK] = {0};
  for (int64_t e = 0; e < cnt; e++) {
    int64_t off = 0;
    for (int d = 0; d < m.rank && off >= 0; d++) {
      int64_t j = pad_source(q->mode, c[d] - m.pad[d], m.extent[d]);
      off = j < 0 ? -1 : off + (m.start[d] + j) * m.in_stride[d];
    }
    memcpy(y + (size_t)e * es, off < 0 ? (const char *)q->fill : x + (size_t)off * es, es);
    for (int d = m.rank - 1; d >= 0; d--) {
      if (++c[d] < m.dims[d]) break;
      c[d] = 0;
    }
  }
  return NULL;
}

const ref_family ref_family_pad = {.run = ref_pad};
