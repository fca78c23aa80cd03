/* Reference ConstantOfShape and Range. */
#include <string.h>

#include "backends/ref/ref.h"

static hd_status *ref_fill(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *yt = &p->t[n->out[0]];
  const op_fill *f = &OP_P(s)->fill;
  char *y = ir_tensor_addr(p, n->out[0], b);
  int64_t cnt = ir_numel(yt->rank, yt->dims);
  size_t es = hd_dtype_size(yt->dtype);
  if (n->kind == OP_CONSTANT_OF_SHAPE) {
    for (int64_t i = 0; i < cnt; i++) memcpy(y + (size_t)i * es, f->value, es);
    return NULL;
  }
  if (yt->dtype == HD_DT_F32) { /* accumulated in the type, as ONNX Runtime does */
    float v = (float)f->fstart, d = (float)f->fdelta;
    for (int64_t i = 0; i < cnt; i++, v += d) ((float *)y)[i] = v;
  } else if (yt->dtype == HD_DT_F64) {
    double v = f->fstart;
    for (int64_t i = 0; i < cnt; i++, v += f->fdelta) ((double *)y)[i] = v;
  } else {
    for (int64_t i = 0; i < cnt; i++) ref_store_i64(yt->dtype, y, (size_t)i, f->istart + i * f->idelta);
  }
  return NULL;
}

const ref_family ref_family_fill = {.run = ref_fill};
