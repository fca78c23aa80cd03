/* Reference CumSum: floats summed in double, integers in int64. */
#include "backends/ref/ref.h"

static hd_status *ref_scan(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const op_scan *q = &OP_P(s)->scan;
  const ir_tensor *xt = &p->t[n->in[0]];
  const void *x = ir_tensor_addr(p, n->in[0], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  int ints = xt->dtype == HD_DT_I32 || xt->dtype == HD_DT_I64;
  int64_t len = xt->dims[q->axis], inner = ir_numel(xt->rank - q->axis - 1, xt->dims + q->axis + 1);
  int64_t outer = ir_numel(q->axis, xt->dims);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      double fs = 0;
      int64_t is = 0;
      for (int64_t k = 0; k < len; k++) {
        int64_t kk = q->reverse ? len - 1 - k : k;
        size_t i = (size_t)((o * len + kk) * inner + in);
        if (q->exclusive) {
          if (ints) ref_store_i64(xt->dtype, y, i, is);
          else ref_store(xt->dtype, y, i, (float)fs);
        }
        if (ints) is = (int64_t)((uint64_t)is + (uint64_t)ref_load_i64(xt->dtype, x, i));
        else fs += ref_load(xt->dtype, x, i);
        if (!q->exclusive) {
          if (ints) ref_store_i64(xt->dtype, y, i, is);
          else ref_store(xt->dtype, y, i, (float)fs);
        }
      }
    }
  return NULL;
}

const ref_family ref_family_scan = {.run = ref_scan};
