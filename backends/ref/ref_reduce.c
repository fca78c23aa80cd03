/* Reference ReduceMean in double: every input element is added to the
 * output element its coordinates map to (reduced dims dropped). */
#include <stdlib.h>

#include "backends/ref/ref.h"

static size_t ref_reduce_scratch(const ir_plan *p, const ir_step *s) {
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *yt = &p->t[n->out[0]];
  /* A double per output element, as two floats. */
  return 2 * (size_t)ir_numel(yt->rank, yt->dims);
}

static hd_status *ref_reduce_mean(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  const ir_node *n = &p->g->nodes[s->node];
  const op_reduce *r = &OP_P(s)->reduce;
  const ir_tensor *xt = &p->t[n->in[0]], *yt = &p->t[n->out[0]];
  const void *x = ir_tensor_addr(p, n->in[0], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  size_t ny = (size_t)ir_numel(yt->rank, yt->dims), nx = (size_t)ir_numel(xt->rank, xt->dims);
  if (scratch->floats < 2 * ny) return hd_error(HD_ERR_INTERNAL, "ref ReduceMean: scratch too small");
  double *acc = (double *)(void *)scratch->buf;
  for (size_t i = 0; i < ny; i++) acc[i] = 0.0;
  uint8_t red[IR_MAX_RANK] = {0};
  for (int i = 0; i < r->naxes; i++) red[r->axes[i]] = 1;
  /* Output strides over the kept dims of x. */
  int64_t ost[IR_MAX_RANK], acc_st = 1, idx[IR_MAX_RANK] = {0}, count = 1;
  for (int d = xt->rank - 1; d >= 0; d--) {
    if (red[d]) {
      ost[d] = 0;
      count *= xt->dims[d];
    } else {
      ost[d] = acc_st;
      acc_st *= xt->dims[d];
    }
  }
  for (size_t i = 0; i < nx; i++) {
    int64_t o = 0;
    for (int d = 0; d < xt->rank; d++) o += idx[d] * ost[d];
    acc[o] += ref_load(xt->dtype, x, i);
    for (int d = xt->rank - 1; d >= 0; d--) {
      if (++idx[d] < xt->dims[d]) break;
      idx[d] = 0;
    }
  }
  /* An empty reduction gives 0, as ONNX Runtime's kernel does. */
  for (size_t i = 0; i < ny; i++) ref_store(yt->dtype, y, i, count ? (float)(acc[i] / (double)count) : 0.0f);
  return NULL;
}

const ref_family ref_family_reduce = {.run = ref_reduce_mean, .scratch = ref_reduce_scratch};
