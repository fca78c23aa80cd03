/* Reference Gemm and MatMul, accumulated in double:
 * Y[batch, m, n] = act(alpha * sum_k A[batch, m, k] B[batch, k, n] + beta * C + R),
 * batch dims broadcast (MatMul), A/B transposed per trans_a/trans_b (Gemm),
 * 1-D operands as [1, K] / [K, 1], C broadcast to Y. */
#include "backends/ref/ref.h"

/* Element strides of the batch dims of operand t (rank r >= 2, or 1-D: no
 * batch dims) aligned right to nb output batch dims; 0 where it broadcasts. */
static void batch_strides(const ir_tensor *t, int nb, int64_t mat, int64_t *st) {
  ir_tensor bt = {.rank = t->rank >= 2 ? t->rank - 2 : 0};
  for (int i = 0; i < bt.rank; i++) bt.dims[i] = t->dims[i];
  ref_bcast_strides(&bt, nb, st);
  for (int i = 0; i < nb; i++) st[i] *= mat;
}

static hd_status *ref_gemm(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const op_gemm *g = &OP_P(s)->gemm;
  const ir_tensor *at = &p->t[n->in[0]], *bt = &p->t[n->in[1]], *yt = &p->t[n->out[0]];
  const ir_tensor *ct = g->has_c ? &p->t[n->in[2]] : NULL;
  const void *A = ir_tensor_addr(p, n->in[0], b), *B = ir_tensor_addr(p, n->in[1], b);
  const void *C = ct ? ir_tensor_addr(p, n->in[2], b) : NULL;
  const void *R = g->has_residual ? ir_tensor_addr(p, n->in[3], b) : NULL; /* Y's shape */
  int rdt = g->has_residual ? p->t[n->in[3]].dtype : 0;
  void *Y = ir_tensor_addr(p, n->out[0], b);
  int a2 = at->rank >= 2, b2 = bt->rank >= 2;
  int64_t M, K, N;
  /* Element (m, k) of A at m * am + k * ak; (k, n) of B at k * bk + n * bn. */
  int64_t am, ak, bk, bn;
  if (!g->is_matmul) {
    M = at->dims[g->trans_a ? 1 : 0];
    K = at->dims[g->trans_a ? 0 : 1];
    N = bt->dims[g->trans_b ? 0 : 1];
    am = g->trans_a ? 1 : K;
    ak = g->trans_a ? M : 1;
    bk = g->trans_b ? 1 : N;
    bn = g->trans_b ? K : 1;
  } else {
    M = a2 ? at->dims[at->rank - 2] : 1;
    K = at->dims[at->rank - 1];
    N = b2 ? bt->dims[bt->rank - 1] : 1;
    am = K;
    ak = 1;
    bk = N;
    bn = 1;
  }
  int nb = yt->rank - (g->is_matmul ? a2 + b2 : 2);
  int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], sc[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
  batch_strides(at, nb, M * K, sa);
  batch_strides(bt, nb, K * N, sb);
  if (ct) ref_bcast_strides(ct, yt->rank, sc);
  /* C strides of Y's m and n dims (absent dims: stride 0). */
  int64_t cm = 0, cn = 0;
  if (ct) {
    int d = nb;
    if (!g->is_matmul || a2) cm = sc[d++];
    if (!g->is_matmul || b2) cn = sc[d];
  }
  int64_t batches = ir_numel(nb, yt->dims);
  size_t yi = 0;
  for (int64_t bi = 0; bi < batches; bi++) {
    int64_t oa = 0, ob = 0, oc = 0;
    for (int d = 0; d < nb; d++) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
      if (ct) oc += idx[d] * sc[d];
    }
    for (int64_t m = 0; m < M; m++)
      for (int64_t j = 0; j < N; j++, yi++) {
        double acc = 0.0;
        for (int64_t k = 0; k < K; k++)
          acc += (double)ref_load(at->dtype, A, (size_t)(oa + m * am + k * ak)) *
                 (double)ref_load(bt->dtype, B, (size_t)(ob + k * bk + j * bn));
        acc *= g->alpha;
        if (ct) acc += (double)g->beta * ref_load(ct->dtype, C, (size_t)(oc + m * cm + j * cn));
        if (R) acc += ref_load(rdt, R, yi);
        ref_store(yt->dtype, Y, yi, ref_apply_act(&g->act, (float)acc));
      }
    for (int d = nb - 1; d >= 0; d--) {
      if (++idx[d] < yt->dims[d]) break;
      idx[d] = 0;
    }
  }
  return NULL;
}

const ref_family ref_family_gemm = {.run = ref_gemm};
