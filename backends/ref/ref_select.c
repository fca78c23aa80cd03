/* Reference Where and Trilu: element bytes as they are. */
#include <string.h>

#include "backends/ref/ref.h"

static hd_status *ref_select(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *yt = &p->t[n->out[0]];
  char *y = ir_tensor_addr(p, n->out[0], b);
  size_t es = hd_dtype_size(yt->dtype), cnt = (size_t)ir_numel(yt->rank, yt->dims);
  if (n->kind == OP_TRILU) {
    const char *x = ir_tensor_addr(p, n->in[0], b);
    int64_t rows = yt->dims[yt->rank - 2], cols = yt->dims[yt->rank - 1], k = OP_P(s)->select.k;
    for (size_t i = 0; i < cnt; i++) {
      int64_t c = (int64_t)i % cols, r = ((int64_t)i / cols) % rows;
      int keep = OP_P(s)->select.upper ? c - r >= k : c - r <= k;
      if (keep) memcpy(y + i * es, x + i * es, es);
      else memset(y + i * es, 0, es);
    }
    return NULL;
  }
  const ir_tensor *ct = &p->t[n->in[0]], *xt = &p->t[n->in[1]], *zt = &p->t[n->in[2]];
  const uint8_t *cond = ir_tensor_addr(p, n->in[0], b);
  const char *x = ir_tensor_addr(p, n->in[1], b), *z = ir_tensor_addr(p, n->in[2], b);
  int r = yt->rank;
  int64_t sc[IR_MAX_RANK], sx[IR_MAX_RANK], sz[IR_MAX_RANK], c[IR_MAX_RANK] = {0};
  ref_bcast_strides(ct, r, sc);
  ref_bcast_strides(xt, r, sx);
  ref_bcast_strides(zt, r, sz);
  for (size_t i = 0; i < cnt; i++) {
    int64_t ic = 0, ix = 0, iz = 0;
    for (int d = 0; d < r; d++) ic += c[d] * sc[d], ix += c[d] * sx[d], iz += c[d] * sz[d];
    memcpy(y + i * es, cond[ic] ? x + (size_t)ix * es : z + (size_t)iz * es, es);
    for (int d = r - 1; d >= 0; d--) {
      if (++c[d] < yt->dims[d]) break;
      c[d] = 0;
    }
  }
  return NULL;
}

const ref_family ref_family_select = {.run = ref_select};
