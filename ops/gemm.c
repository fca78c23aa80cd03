/* Gemm (opsets 7-13) and MatMul (1-13) on fp32/fp16.
 * Gemm: Y = alpha * op(A) @ op(B) + beta * C, A and B 2-D, C (optional from
 * 11) broadcast to [M, N]. MatMul: numpy matmul, batch dims broadcast, 1-D
 * operands promoted (A: [1, K], B: [K, 1]) and the added dim dropped. */
#include <string.h>

#include "ops/op_util.h"

static hd_status *gemm_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_gemm *p = &OP_P(n)->gemm;
  memset(p, 0, sizeof *p);
  if (n->nin < 2 || n->in[0] == IR_NONE || n->in[1] == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "%s needs inputs A and B and an output", n->op_type);
  p->alpha = p->beta = 1.0f;
  if (n->kind == OP_MATMUL) {
    p->is_matmul = 1;
    if (n->nin != 2) return hd_error(HD_ERR_INVALID_ARG, "MatMul has two inputs");
    return NULL;
  }
  int64_t v;
  HD_TRY(op_attr_float(a, "alpha", 1.0f, &p->alpha));
  HD_TRY(op_attr_float(a, "beta", 1.0f, &p->beta));
  HD_TRY(op_attr_int(a, "transA", 0, &v));
  p->trans_a = v != 0;
  HD_TRY(op_attr_int(a, "transB", 0, &v));
  p->trans_b = v != 0;
  p->has_c = op_input(n, 2) != IR_NONE;
  return NULL;
}

static hd_status *gemm_check(const ir_graph *g, const ir_node *n) {
  HD_TRY(op_check_float_io(g, n, n->op_type));
  const ir_value *a = &g->values[n->in[0]], *b = &g->values[n->in[1]];
  const op_gemm *p = &OP_P(n)->gemm;
  if (!p->is_matmul) {
    if (a->rank != 2 || b->rank != 2) return hd_error(HD_ERR_INVALID_ARG, "Gemm of ranks %d and %d", a->rank, b->rank);
    int64_t ka = a->dims[p->trans_a ? 0 : 1], kb = b->dims[p->trans_b ? 1 : 0];
    if (ka >= 0 && kb >= 0 && ka != kb) return hd_error(HD_ERR_INVALID_ARG, "Gemm: K is %lld and %lld", (long long)ka, (long long)kb);
    if (p->has_c && g->values[n->in[2]].rank > 2) return hd_error(HD_ERR_INVALID_ARG, "Gemm: C of rank > 2");
    return NULL;
  }
  if (p->has_residual && (n->nin < 4 || n->in[3] == IR_NONE))
    return hd_error(HD_ERR_INTERNAL, "MatMul: residual flagged but absent");
  if (a->rank < 1 || b->rank < 1) return hd_error(HD_ERR_INVALID_ARG, "MatMul of a scalar");
  int64_t ka = a->dims[a->rank - 1], kb = b->dims[b->rank == 1 ? 0 : b->rank - 2];
  if (ka >= 0 && kb >= 0 && ka != kb) return hd_error(HD_ERR_INVALID_ARG, "MatMul: K is %lld and %lld", (long long)ka, (long long)kb);
  return NULL;
}

static hd_status *gemm_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  (void)g;
  const op_gemm *p = &pp->gemm;
  const ir_tensor *a = &t[n->in[0]], *b = &t[n->in[1]];
  ir_tensor *y = &t[n->out[0]];
  if (!p->is_matmul) {
    if (a->rank != 2 || b->rank != 2) return hd_error(HD_ERR_INVALID_ARG, "Gemm of ranks %d and %d", a->rank, b->rank);
    int64_t m = a->dims[p->trans_a ? 1 : 0], k = a->dims[p->trans_a ? 0 : 1];
    int64_t kb = b->dims[p->trans_b ? 1 : 0], nn = b->dims[p->trans_b ? 0 : 1];
    if (k != kb) return hd_error(HD_ERR_INVALID_ARG, "Gemm: K is %lld and %lld", (long long)k, (long long)kb);
    y->rank = 2;
    y->dims[0] = m;
    y->dims[1] = nn;
  } else {
    /* Batch dims broadcast; a 1-D operand has no batch dims. */
    int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0;
    int64_t ka = a->dims[a->rank - 1], kb = b->dims[b->rank == 1 ? 0 : b->rank - 2];
    if (ka != kb) return hd_error(HD_ERR_INVALID_ARG, "MatMul: K is %lld and %lld", (long long)ka, (long long)kb);
    int r;
    HD_TRY(op_broadcast(ra, a->dims, rb, b->dims, &r, y->dims));
    if (a->rank >= 2) y->dims[r++] = a->dims[a->rank - 2];
    if (b->rank >= 2) y->dims[r++] = b->dims[b->rank - 1];
    if (r > IR_MAX_RANK) return hd_error(HD_ERR_NOT_SUPPORTED, "MatMul output rank %d", r);
    y->rank = r;
  }
  if (p->has_residual) { /* R is Y's shape */
    const ir_tensor *r = &t[n->in[3]];
    if (r->rank != y->rank || memcmp(r->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) != 0)
      return hd_error(HD_ERR_INVALID_ARG, "%s: the residual is not the output's shape", n->op_type);
  }
  if (p->has_c) {
    /* C broadcasts to Y (Gemm: unidirectionally to [M, N]). */
    const ir_tensor *c = &t[n->in[2]];
    int r;
    int64_t d[IR_MAX_RANK];
    if (c->rank > y->rank) return hd_error(HD_ERR_INVALID_ARG, "%s: C of rank %d", n->op_type, c->rank);
    HD_TRY(op_broadcast(y->rank, y->dims, c->rank, c->dims, &r, d));
    if (memcmp(d, y->dims, sizeof(int64_t) * (size_t)r) != 0)
      return hd_error(HD_ERR_INVALID_ARG, "%s: C does not broadcast to the output", n->op_type);
  }
  return NULL;
}

/* Gemm 7: unidirectional C broadcast, no broadcast attribute; 11: optional
 * C; 13: types. MatMul 9 and 13 only added types. */
OP_DEF(gemm, GEMM, "Gemm", 7, 13)

OP_DEF(gemm, MATMUL, "MatMul", 1, 13)
