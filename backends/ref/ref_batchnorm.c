/* Reference inference BatchNormalization, per channel in double. */
#include <math.h>

#include "backends/ref/ref.h"

static hd_status *ref_batchnorm(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *xt = &p->t[n->in[0]];
  const void *x = ir_tensor_addr(p, n->in[0], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  const void *prm[4]; /* scale, B, mean, var */
  int pdt[4];
  for (int k = 0; k < 4; k++) {
    prm[k] = ir_tensor_addr(p, n->in[1 + k], b);
    pdt[k] = p->t[n->in[1 + k]].dtype;
  }
  /* channels last: [N x spatial, C, 1] */
  int last = OP_P(s)->batchnorm.channels_last;
  int64_t C = xt->dims[last ? xt->rank - 1 : 1];
  int64_t N = last ? ir_numel(xt->rank - 1, xt->dims) : xt->dims[0];
  int64_t inner = last ? 1 : ir_numel(xt->rank - 2, xt->dims + 2);
  const op_act *act = &OP_P(s)->batchnorm.act;
  for (int64_t c = 0; c < C; c++) {
    double scale = ref_load(pdt[0], prm[0], (size_t)c), bias = ref_load(pdt[1], prm[1], (size_t)c);
    double mean = ref_load(pdt[2], prm[2], (size_t)c), var = ref_load(pdt[3], prm[3], (size_t)c);
    double mul = scale / sqrt(var + (double)OP_P(s)->batchnorm.epsilon);
    for (int64_t nb = 0; nb < N; nb++) {
      size_t base = (size_t)((nb * C + c) * inner);
      for (int64_t i = 0; i < inner; i++) {
        double v = ref_load(xt->dtype, x, base + (size_t)i);
        ref_store(xt->dtype, y, base + (size_t)i, op_act_apply(act->kind, (float)((v - mean) * mul + bias), act->alpha, act->beta));
      }
    }
  }
  return NULL;
}

const ref_family ref_family_batchnorm = {.run = ref_batchnorm};
