/* Reference data movement (Transpose, Slice, Split, Expand, Tile): each
 * output walks its strided map (op_copy_map), element bytes as they are. */
#include <string.h>

#include "backends/ref/ref.h"

static hd_status *ref_copy(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const char *x = ir_tensor_addr(p, n->in[0], b);
  size_t es = hd_dtype_size(p->t[n->in[0]].dtype);
  for (int k = 0; k < n->nout; k++) {
    if (n->out[k] == IR_NONE) continue;
    op_strided m;
    HD_TRY(op_copy_map(n, &OP_P(s)->copy, p->t, k, &m));
    char *y = ir_tensor_addr(p, n->out[k], b);
    int64_t cnt = ir_numel(m.rank, m.dims), c[8] = {0};
    for (int64_t e = 0; e < cnt; e++) {
      int64_t off = m.offset;
      for (int d = 0; d < m.rank; d++) off += (m.mod[d] ? c[d] % m.mod[d] : c[d]) * m.stride[d];
      memcpy(y + (size_t)e * es, x + (size_t)off * es, es);
      for (int d = m.rank - 1; d >= 0; d--) {
        if (++c[d] < m.dims[d]) break;
        c[d] = 0;
      }
    }
  }
  return NULL;
}

const ref_family ref_family_copy = {.run = ref_copy};
