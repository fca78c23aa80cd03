/* Reference squeeze-and-excitation (ops/squeeze_excite.h), sums in double:
 * per sample, the channel means, the two projections with their
 * activations, then x scaled by the gate. */
#include "backends/ref/ref.h"

static size_t se_scratch(const ir_plan *p, const ir_step *s) {
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *w1 = &p->t[n->in[SE_IN_W1]];
  return (size_t)(w1->dims[0] + w1->dims[1]); /* hidden, then the gate */
}

static hd_status *ref_squeeze_excite(const ir_plan *p, const ir_step *s, const ir_bindings *b,
                                     ref_scratch *scratch) {
  const ir_node *n = &p->g->nodes[s->node];
  const op_squeeze_excite *q = &OP_P(s)->squeeze_excite;
  const ir_tensor *xt = &p->t[n->in[SE_IN_X]];
  int dt = xt->dtype;
  int64_t nb = xt->dims[0], c = xt->dims[1], hw = ir_numel(xt->rank - 2, xt->dims + 2);
  int64_t r = p->t[n->in[SE_IN_W1]].dims[0];
  const void *x = ir_tensor_addr(p, n->in[SE_IN_X], b), *w1 = ir_input_addr(p, n, SE_IN_W1, b);
  const void *b1 = ir_input_addr(p, n, SE_IN_B1, b), *w2 = ir_input_addr(p, n, SE_IN_W2, b);
  const void *b2 = ir_input_addr(p, n, SE_IN_B2, b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  float *hidden = scratch->buf, *gate = scratch->buf + r;
  for (int64_t i = 0; i < nb; i++) {
    size_t base = (size_t)(i * c * hw);
    for (int64_t j = 0; j < c; j++) { /* the means, kept in gate[] until the hidden layer is done */
      double sum = 0.0;
      for (int64_t k = 0; k < hw; k++) sum += ref_load(dt, x, base + (size_t)(j * hw + k));
      gate[j] = (float)(sum / (double)hw);
    }
    for (int64_t k = 0; k < r; k++) {
      double acc = b1 ? ref_load(dt, b1, (size_t)k) : 0.0;
      for (int64_t j = 0; j < c; j++) acc += (double)ref_load(dt, w1, (size_t)(k * c + j)) * gate[j];
      hidden[k] = ref_apply_act(&q->act, (float)acc);
    }
    for (int64_t j = 0; j < c; j++) {
      double acc = b2 ? ref_load(dt, b2, (size_t)j) : 0.0;
      for (int64_t k = 0; k < r; k++) acc += (double)ref_load(dt, w2, (size_t)(j * r + k)) * hidden[k];
      gate[j] = ref_apply_act(&q->gate_act, (float)acc);
    }
    for (int64_t j = 0; j < c; j++)
      for (int64_t k = 0; k < hw; k++) {
        size_t at = base + (size_t)(j * hw + k);
        ref_store(dt, y, at, ref_load(dt, x, at) * gate[j]);
      }
  }
  return NULL;
}

const ref_family ref_family_squeeze_excite = {.run = ref_squeeze_excite, .scratch = se_scratch};
