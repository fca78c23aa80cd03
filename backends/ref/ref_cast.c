/* Reference Cast: integers to integers through int64 (exact; narrowing
 * wraps), anything else through double (ref_store_f64 saturates). */
#include "backends/ref/ref.h"
#include "ops/op_util.h"

static hd_status *ref_cast(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *xt = &p->t[n->in[0]], *yt = &p->t[n->out[0]];
  const void *x = ir_tensor_addr(p, n->in[0], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  size_t cnt = (size_t)ir_numel(xt->rank, xt->dims);
  int ints = (op_is_int(xt->dtype) || xt->dtype == HD_DT_BOOL) && (op_is_int(yt->dtype) || yt->dtype == HD_DT_BOOL);
  for (size_t i = 0; i < cnt; i++) {
    if (ints) ref_store_i64(yt->dtype, y, i, ref_load_i64(xt->dtype, x, i));
    else ref_store_f64(yt->dtype, y, i, ref_load_f64(xt->dtype, x, i));
  }
  return NULL;
}

const ref_family ref_family_cast = {.run = ref_cast};
