/* Reference rotary embedding: each head row rotated pairwise in double; a
 * position outside the cos/sin tables is an error. */
#include "backends/ref/ref.h"

void ref_rope_row(int dt, const void *x, size_t xo, void *y, size_t yo, const void *cs, const void *sn, size_t to,
                  int64_t head_dim, int64_t rot, int interleaved) {
  int64_t half = rot / 2;
  for (int64_t i = 0; i < half; i++) { /* pair (a, b): both read before either is written, so y may be x */
    int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    double c = ref_load(dt, cs, to + (size_t)i), s = ref_load(dt, sn, to + (size_t)i);
    double xa = ref_load(dt, x, xo + (size_t)a), xb = ref_load(dt, x, xo + (size_t)b);
    ref_store_f64(dt, y, yo + (size_t)a, xa * c - xb * s);
    ref_store_f64(dt, y, yo + (size_t)b, xb * c + xa * s);
  }
  for (int64_t i = rot; i < head_dim; i++) ref_store(dt, y, yo + (size_t)i, ref_load(dt, x, xo + (size_t)i));
}

static hd_status *ref_rotary(const ir_plan *p, const ir_step *st, const ir_bindings *bd, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[st->node];
  const op_rotary *q = &OP_P(st)->rotary;
  op_rope_layout l;
  HD_TRY(op_rotary_layout(n, q, p->t, &l));
  int dt = p->t[n->in[0]].dtype;
  const void *x = ir_tensor_addr(p, n->in[0], bd), *cs = ir_tensor_addr(p, n->in[q->in_cos], bd);
  const void *sn = ir_tensor_addr(p, n->in[q->in_sin], bd), *pos = ir_input_addr(p, n, q->in_pos, bd);
  void *y = ir_tensor_addr(p, n->out[0], bd);
  for (int64_t b = 0; b < l.batch; b++)
    for (int64_t s = 0; s < l.seq; s++) {
      int64_t row = b * l.seq + s;
      if (q->pos_form == OP_ROPE_POS_IDS) row = ((const int64_t *)pos)[b * l.seq + s];
      else if (q->pos_form == OP_ROPE_POS_OFFSET) row = ((const int64_t *)pos)[0] + s;
      if (row < 0 || row >= l.table_rows)
        return hd_error(HD_ERR_INVALID_ARG, "%s: position %lld outside the %lld rows of the caches", n->op_type,
                        (long long)row, (long long)l.table_rows);
      for (int64_t h = 0; h < l.heads; h++) {
        size_t at = (size_t)(b * l.st[0] + h * l.st[1] + s * l.st[2]);
        ref_rope_row(dt, x, at, y, at, cs, sn, (size_t)(row * (l.rot_dim / 2)), l.head_dim, l.rot_dim, q->interleaved);
      }
    }
  return NULL;
}

const ref_family ref_family_rotary = {.run = ref_rotary};
