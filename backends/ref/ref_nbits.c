/* Reference MatMulNBits: each row n of B dequantised into the scratch
 * (w[k] = (q - zp) * scale, in fp32 from fp32 or fp16 scales), then every
 * row of A dotted with it in double, bias added, stored in A's type. Under
 * glu the even rows' sums wait in the scratch (one a row of A) for the odd
 * row that gates them. */
#include "backends/ref/ref.h"

static size_t ref_nbits_scratch(const ir_plan *p, const ir_step *s) {
  const op_nbits *q = &OP_P(s)->nbits;
  const ir_tensor *a = &p->t[p->g->nodes[s->node].in[0]];
  return (size_t)q->k + (q->glu.kind != OP_ACT_NONE ? (size_t)(ir_numel(a->rank, a->dims) / q->k) : 0);
}

static hd_status *ref_nbits(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  const ir_node *n = &p->g->nodes[s->node];
  const op_nbits *q = &OP_P(s)->nbits;
  if (scratch->floats < ref_nbits_scratch(p, s)) return hd_error(HD_ERR_INTERNAL, "ref MatMulNBits: scratch too small");
  const ir_tensor *at = &p->t[n->in[0]];
  int dt = at->dtype;
  int64_t K = q->k, N = q->n, M = ir_numel(at->rank, at->dims) / K;
  int64_t row_bytes = q->k_blocks * (q->block_size / 2);
  const void *A = ir_tensor_addr(p, n->in[0], b), *scales = ir_tensor_addr(p, n->in[2], b);
  const uint8_t *B = ir_tensor_addr(p, n->in[1], b), *zp = ir_input_addr(p, n, q->in_zp, b);
  const void *bias = ir_input_addr(p, n, q->in_bias, b);
  void *Y = ir_tensor_addr(p, n->out[0], b);
  const int glu = q->glu.kind != OP_ACT_NONE;
  int64_t ncols = op_nbits_out_cols(q);
  float *w = scratch->buf, *gate = scratch->buf + K;
  for (int64_t j = 0; j < N; j++) {
    for (int64_t k = 0; k < K; k++) {
      int64_t blk = k / q->block_size;
      int code = op_nbits_code(B, row_bytes, j, k);
      w[k] = (float)(code - op_nbits_zp(zp, q->zp_bytes, j, blk)) * ref_load(dt, scales, (size_t)(j * q->k_blocks + blk));
    }
    double bj = bias ? (double)ref_load(dt, bias, (size_t)j) : 0.0;
    for (int64_t m = 0; m < M; m++) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; k++) acc += (double)ref_load(dt, A, (size_t)(m * K + k)) * (double)w[k];
      float v = (float)(acc + bj);
      if (!glu) ref_store(dt, Y, (size_t)(m * N + j), v);
      else if (j % 2 == 0) gate[m] = v;
      else ref_store(dt, Y, (size_t)(m * ncols + j / 2), ref_apply_act(&q->glu, gate[m]) * v);
    }
  }
  return NULL;
}

const ref_family ref_family_nbits = {.run = ref_nbits, .scratch = ref_nbits_scratch};
