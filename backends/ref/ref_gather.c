/* Reference Gather and GatherElements: element bytes copied as they are;
 * an index outside [-d, d) is INVALID_ARG (as ONNX Runtime's CPU kernels). */
#include <string.h>

#include "backends/ref/ref.h"

static hd_status *index_at(const ir_tensor *it, const void *idx, size_t j, int64_t d, int64_t *out) {
  int64_t v = ref_load_i64(it->dtype, idx, j);
  if (v < -d || v >= d) return hd_error(HD_ERR_INVALID_ARG, "index %lld out of range for a dim of %lld", (long long)v, (long long)d);
  *out = v < 0 ? v + d : v;
  return NULL;
}

static hd_status *ref_gather(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *xt = &p->t[n->in[0]], *it = &p->t[n->in[1]], *yt = &p->t[n->out[0]];
  const char *x = ir_tensor_addr(p, n->in[0], b);
  const void *idx = ir_tensor_addr(p, n->in[1], b);
  char *y = ir_tensor_addr(p, n->out[0], b);
  int ax = OP_P(s)->gather.axis;
  size_t es = hd_dtype_size(xt->dtype);
  int64_t d = xt->dims[ax];
  if (n->kind == OP_GATHER) {
    int64_t outer = ir_numel(ax, xt->dims), inner = ir_numel(xt->rank - ax - 1, xt->dims + ax + 1);
    int64_t nidx = ir_numel(it->rank, it->dims);
    size_t row = (size_t)inner * es;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t j = 0; j < nidx; j++) {
        int64_t k = 0;
        HD_TRY(index_at(it, idx, (size_t)j, d, &k));
        memcpy(y + (size_t)(o * nidx + j) * row, x + (size_t)(o * d + k) * row, row);
      }
    return NULL;
  }
  if (n->kind == OP_GATHER_ND) { /* per index tuple: one slice of data */
    int bd = OP_P(s)->gather.batch_dims;
    int64_t last = it->dims[it->rank - 1], batch = ir_numel(bd, it->dims);
    int64_t tuples = ir_numel(it->rank - 1 - bd, it->dims + bd), slice = ir_numel(xt->rank - bd - (int)last, xt->dims + bd + last);
    int64_t per_batch = ir_numel(xt->rank - bd, xt->dims + bd);
    for (int64_t bi = 0; bi < batch; bi++)
      for (int64_t t = 0; t < tuples; t++) {
        int64_t off = 0;
        for (int64_t k = 0; k < last; k++) {
          int64_t v = 0;
          HD_TRY(index_at(it, idx, (size_t)((bi * tuples + t) * last + k), xt->dims[bd + k], &v));
          off = off * xt->dims[bd + k] + v;
        }
        memcpy(y + (size_t)((bi * tuples + t) * slice) * es, x + (size_t)(bi * per_batch + off * slice) * es,
               (size_t)slice * es);
      }
    return NULL;
  }
  /* GatherElements: walk the output (the indices' shape) in order */
  int64_t xs[IR_MAX_RANK], c[IR_MAX_RANK] = {0};
  int64_t acc = 1;
  for (int i = xt->rank - 1; i >= 0; i--) xs[i] = acc, acc *= xt->dims[i];
  int64_t cnt = ir_numel(yt->rank, yt->dims);
  for (int64_t e = 0; e < cnt; e++) {
    int64_t k = 0, off = 0;
    HD_TRY(index_at(it, idx, (size_t)e, d, &k));
    for (int i = 0; i < xt->rank; i++) off += (i == ax ? k : c[i]) * xs[i];
    memcpy(y + (size_t)e * es, x + (size_t)off * es, es);
    for (int i = yt->rank - 1; i >= 0; i--) {
      if (++c[i] < yt->dims[i]) break;
      c[i] = 0;
    }
  }
  return NULL;
}

const ref_family ref_family_gather = {.run = ref_gather};
