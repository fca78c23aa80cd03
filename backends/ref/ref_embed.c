/* Reference EmbedLayerNormalization: per token, the three rows summed in
 * double, then a layer norm in double; an index outside its table is an
 * error. */
#include <math.h>
#include <stdlib.h>

#include "backends/ref/ref.h"

/* Row `i` of an int32 index input, checked against the table's rows. */
static hd_status *row_of(const int32_t *idx, int64_t at, int64_t rows, const char *what, int64_t *out) {
  int64_t r = idx[at];
  if (r < 0 || r >= rows)
    return hd_error(HD_ERR_INVALID_ARG, "EmbedLayerNormalization: %s index %lld outside [0, %lld)", what, (long long)r,
                    (long long)rows);
  *out = r;
  return NULL;
}

static hd_status *ref_embed(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const op_embed *q = &OP_P(s)->embed;
  const ir_tensor *idt = &p->t[n->in[0]], *wt = &p->t[n->in[2]], *pt = &p->t[n->in[3]];
  int dt = wt->dtype;
  int64_t B = idt->dims[0], S = idt->dims[1], H = wt->dims[1];
  const int32_t *ids = ir_tensor_addr(p, n->in[0], b);
  const int32_t *seg_ids = ir_input_addr(p, n, q->in_segment_ids, b), *mask = ir_input_addr(p, n, q->in_mask, b);
  const int32_t *pos_ids = ir_input_addr(p, n, q->in_position_ids, b);
  int64_t pos_b = pos_ids && p->t[n->in[q->in_position_ids]].dims[0] == B ? S : 0;
  const void *word = ir_tensor_addr(p, n->in[2], b), *pos = ir_tensor_addr(p, n->in[3], b);
  const void *seg = ir_input_addr(p, n, q->in_segment, b);
  const void *gamma = ir_tensor_addr(p, n->in[5], b), *beta = ir_tensor_addr(p, n->in[6], b);
  void *y = ir_tensor_addr(p, n->out[0], b), *sum = ir_output_addr(p, n, q->out_sum, b);
  double *e = malloc(sizeof(double) * (size_t)(H > 0 ? H : 1));
  if (!e) return hd_error(HD_ERR_OUT_OF_MEMORY, "ref EmbedLayerNormalization: out of host memory");
  hd_status *st = NULL;
  for (int64_t bi = 0; bi < B && !st; bi++)
    for (int64_t si = 0; si < S && !st; si++) {
      int64_t tok = bi * S + si, wr = 0, pr = si, sr = 0;
      st = row_of(ids, tok, wt->dims[0], "word", &wr);
      if (!st && pos_ids) st = row_of(pos_ids, bi * pos_b + si, pt->dims[0], "position", &pr);
      else if (!st && pr >= pt->dims[0]) st = hd_error(HD_ERR_INVALID_ARG, "EmbedLayerNormalization: no position %lld", (long long)pr);
      if (!st && seg) st = row_of(seg_ids, tok, p->t[n->in[q->in_segment]].dims[0], "segment", &sr);
      if (st) break;
      double mean = 0.0, var = 0.0;
      for (int64_t c = 0; c < H; c++) {
        e[c] = (double)ref_load(dt, word, (size_t)(wr * H + c)) + ref_load(dt, pos, (size_t)(pr * H + c));
        if (seg) e[c] += ref_load(dt, seg, (size_t)(sr * H + c));
        if (sum) ref_store(dt, sum, (size_t)(tok * H + c), (float)e[c]);
        mean += e[c];
      }
      mean /= (double)H;
      for (int64_t c = 0; c < H; c++) var += (e[c] - mean) * (e[c] - mean);
      double inv = 1.0 / sqrt(var / (double)H + (double)q->epsilon);
      for (int64_t c = 0; c < H; c++)
        ref_store(dt, y, (size_t)(tok * H + c),
                  (float)((e[c] - mean) * inv * ref_load(dt, gamma, (size_t)c) + ref_load(dt, beta, (size_t)c)));
    }
  free(e);
  if (st || q->out_mask_index < 0) return st;
  int32_t *mi = ir_tensor_addr(p, n->out[q->out_mask_index], b);
  for (int64_t bi = 0; bi < B; bi++) {
    int32_t cnt = 0;
    for (int64_t si = 0; mask && si < S; si++) cnt += mask[bi * S + si] == 1;
    mi[bi] = cnt;
  }
  return NULL;
}

const ref_family ref_family_embed = {.run = ref_embed};
