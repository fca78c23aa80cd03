/* Reference LRN: each element's channel window summed in double. */
#include <math.h>

#include "backends/ref/ref.h"

static hd_status *ref_lrn(const ir_plan *p, const ir_step *st, const ir_bindings *bd, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[st->node];
  const op_lrn *q = &OP_P(st)->lrn;
  const ir_tensor *xt = &p->t[n->in[0]];
  int dt = xt->dtype;
  const void *x = ir_tensor_addr(p, n->in[0], bd);
  void *y = ir_tensor_addr(p, n->out[0], bd);
  int64_t N = xt->dims[0], C = xt->dims[1], inner = xt->dims[2] * xt->dims[3];
  int64_t before = (q->size - 1) / 2, after = q->size / 2;
  double scale = (double)q->alpha / q->size;
  for (int64_t b = 0; b < N; b++)
    for (int64_t c = 0; c < C; c++) {
      int64_t lo = c - before < 0 ? 0 : c - before, hi = c + after >= C ? C - 1 : c + after;
      for (int64_t i = 0; i < inner; i++) {
        double sq = 0.0;
        for (int64_t j = lo; j <= hi; j++) {
          double v = ref_load(dt, x, (size_t)((b * C + j) * inner + i));
          sq += v * v;
        }
        size_t at = (size_t)((b * C + c) * inner + i);
        ref_store_f64(dt, y, at, ref_load(dt, x, at) / pow(q->bias + scale * sq, q->beta));
      }
    }
  return NULL;
}

const ref_family ref_family_lrn = {.run = ref_lrn};
