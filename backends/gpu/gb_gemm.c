/* gb_gemm: Gemm and MatMul. On the vendor BLAS when the module has one
 * (cuBLASLt: tensor cores, TF32 when allowed, a bias[n] + ReLU or tanh-GELU
 * epilogue fused), with any C / activation it cannot fuse done by
 * gpu_gemm_epilogue;
 * otherwise, or when the BLAS has no algorithm, or the batch dims do not
 * collapse to one strided batch, on the portable gpu_gemm kernel. Either
 * way a node that supports_node accepts always runs. A residual R
 * (op_gemm.has_residual) is the BLAS's C added before its bias (D = A B +
 * R + bias), else one more epilogue pass. */
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

typedef struct gb_gemm_step {
  gpu_gemm_desc d;
  int dtype;
  int vc;          /* C's value, or IR_NONE */
  int vr;          /* the residual's value, or IR_NONE */
  int fused_res;   /* the BLAS adds the residual (its C, accumulated) */
  void *mm;        /* the BLAS's matmul, or NULL: gpu_gemm */
  int fused_bias;  /* the BLAS adds C as bias[n] */
  int fused_relu;
  int fused_gelu;  /* the BLAS applies GELU (tanh form) */
  int need_epilogue;
} gb_gemm_step;

static hd_status *gemm_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  if (n->nin < 2 || n->in[0] == IR_NONE || n->in[1] == IR_NONE)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s needs A and B", gb_backend_name, n->op_type);
  HD_TRY(gb_check_float_io(g, n, OP_P(n)->gemm.has_residual ? 4 : OP_P(n)->gemm.has_c ? 3 : 2));
  if (OP_P(n)->gemm.has_residual && OP_P(n)->gemm.act.kind != OP_ACT_NONE)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s with a residual and an activation", gb_backend_name, n->op_type);
  for (int i = 0; i < 2; ++i) {
    int r = g->values[n->in[i]].rank;
    if (r >= 0 && (r < 1 || r > 2 + GPU_GEMM_MAX_BATCH_DIMS))
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s operand of rank %d", gb_backend_name,
                      n->op_type, r);
  }
  if (OP_P(n)->gemm.has_c) {
    int v = n->nin > 2 ? n->in[2] : IR_NONE;
    if (v == IR_NONE)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s C flagged but absent", gb_backend_name,
                      n->op_type);
    if (g->values[v].rank > 2)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s C of rank %d", gb_backend_name, n->op_type,
                      g->values[v].rank);
  }
  return NULL;
}

static hd_status *gemm_compile(be_plan *bp, gb_step *s, size_t *ws) {
  *ws = 0;
  be_context *c = bp->bg->c;
  const ir_node *n = s->n;
  const op_gemm *p = &OP_P(s)->gemm;
  gb_gemm_step *gs = calloc(1, sizeof *gs);
  if (!gs) return GB_OOM();
  s->priv = gs;
  const ir_tensor *A = gb_t(bp, n->in[0]), *B = gb_t(bp, n->in[1]), *Y = gb_t(bp, n->out[0]);
  gpu_gemm_desc *d = &gs->d;
  gs->dtype = Y->dtype;
  gs->vc = p->has_c ? n->in[2] : IR_NONE;
  gs->vr = p->has_residual ? n->in[3] : IR_NONE;
  int ra = A->rank, rb = B->rank;
  if (ra < 1 || rb < 1)
    return hd_error(HD_ERR_INTERNAL, "%s: matmul of ranks %d, %d", gb_backend_name, ra, rb);
  int64_t m, k, nn, kb;
  int ta = p->is_matmul ? 0 : p->trans_a, tb = p->is_matmul ? 0 : p->trans_b;
  if (ra == 1) {
    m = 1;
    k = A->dims[0];
  } else {
    m = ta ? A->dims[ra - 1] : A->dims[ra - 2];
    k = ta ? A->dims[ra - 2] : A->dims[ra - 1];
  }
  if (rb == 1) {
    kb = B->dims[0];
    nn = 1;
  } else {
    kb = tb ? B->dims[rb - 1] : B->dims[rb - 2];
    nn = tb ? B->dims[rb - 2] : B->dims[rb - 1];
  }
  if (k != kb)
    return hd_error(HD_ERR_INTERNAL, "%s: matmul inner dims %lld != %lld", gb_backend_name,
                    (long long)k, (long long)kb);
  d->m = m;
  d->n = nn;
  d->k = k;
  /* stored row-major: A [m,k] or [k,m] (trans), B [k,n] or [n,k] (trans) */
  d->a_rs = ta ? 1 : k;
  d->a_cs = ta ? m : 1;
  d->b_rs = tb ? 1 : nn;
  d->b_cs = tb ? k : 1;
  int64_t lda = ta ? m : k, ldb = tb ? k : nn;
  /* batch dims: the output's leading dims, right-aligned against A's and B's */
  int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
  int nb = ba > bb ? ba : bb;
  if (nb > GPU_GEMM_MAX_BATCH_DIMS)
    return hd_error(HD_ERR_INTERNAL, "%s: %d batch dims", gb_backend_name, nb);
  int64_t sa_mat = m * k, sb_mat = k * nn, ma = sa_mat, mb = sb_mat;
  int64_t bd[GPU_GEMM_MAX_BATCH_DIMS], as[GPU_GEMM_MAX_BATCH_DIMS], bs[GPU_GEMM_MAX_BATCH_DIMS];
  for (int i = nb - 1; i >= 0; --i) {
    int ia = i - (nb - ba), ib = i - (nb - bb);
    int64_t ea = ia >= 0 ? A->dims[ia] : 1, eb = ib >= 0 ? B->dims[ib] : 1;
    bd[i] = ea > eb ? ea : eb;
    as[i] = ea == 1 ? 0 : ma;
    bs[i] = eb == 1 ? 0 : mb;
    ma *= ea;
    mb *= eb;
  }
  d->batch = 1;
  d->nbd = 0;
  for (int i = 0; i < nb; ++i) {
    d->batch *= bd[i];
    if (bd[i] == 1) continue;
    int j = d->nbd;
    if (j > 0 && d->a_bs[j - 1] == as[i] * bd[i] && d->b_bs[j - 1] == bs[i] * bd[i]) {
      d->bdims[j - 1] *= bd[i];
      d->a_bs[j - 1] = as[i];
      d->b_bs[j - 1] = bs[i];
      continue;
    }
    d->bdims[j] = bd[i];
    d->a_bs[j] = as[i];
    d->b_bs[j] = bs[i];
    d->nbd++;
  }
  if (ir_numel(Y->rank, Y->dims) != d->batch * m * nn)
    return hd_error(HD_ERR_INTERNAL, "%s: matmul output of %lld elements, expected %lld",
                    gb_backend_name, (long long)ir_numel(Y->rank, Y->dims),
                    (long long)(d->batch * m * nn));
  d->alpha = p->alpha;
  d->beta = p->has_c ? p->beta : 0.f;
  d->act = (int)(p->act.kind);
  d->act_alpha = p->act.alpha;
  d->act_beta = p->act.beta;
  if (p->has_c) {
    const ir_tensor *C = gb_t(bp, gs->vc);
    int64_t cm = C->rank >= 2 ? C->dims[C->rank - 2] : 1;
    int64_t cn = C->rank >= 1 ? C->dims[C->rank - 1] : 1;
    if ((cm != 1 && cm != m) || (cn != 1 && cn != nn))
      return hd_error(HD_ERR_INTERNAL, "%s: C [%lld, %lld] does not broadcast to [%lld, %lld]",
                      gb_backend_name, (long long)cm, (long long)cn, (long long)m, (long long)nn);
    d->c_cs = cn == 1 ? 0 : 1;
    d->c_rs = cm == 1 ? 0 : cn;
  }

  /* A batch over one matrix B (a weight) with A's matrices packed back to
   * back is one GEMM of batch * m rows: far better for the BLAS. */
  if (!ta && d->nbd == 1 && d->b_bs[0] == 0 && d->a_bs[0] == m * k && (!p->has_c || d->c_rs == 0)) {
    m *= d->batch;
    d->m = m;
    d->batch = 1;
    d->nbd = 0;
    d->a_bs[0] = d->b_bs[0] = 0;
  }

  /* The BLAS: one strided batch at most. */
  if (c->blas && d->nbd <= 1 && d->batch * m * nn > 0 && k > 0) {
    gb_mm_desc md = {
        .dtype = gs->dtype,
        .allow_tf32 = c->opts.use_tf32,
        .m = m, .n = nn, .k = k,
        .trans_a = ta, .trans_b = tb,
        .lda = lda, .ldb = ldb,
        .batch = d->batch,
        .stride_a = d->nbd ? d->a_bs[0] : 0,
        .stride_b = d->nbd ? d->b_bs[0] : 0,
        .alpha = d->alpha,
    };
    /* bias[n] fusable: C a row vector added with beta 1 */
    int bias_ok = p->has_c && d->beta == 1.f && d->c_rs == 0 && d->c_cs == 1;
    md.bias = bias_ok;
    md.relu = p->act.kind == OP_ACT_RELU && (!p->has_c || bias_ok);
    md.gelu = p->act.kind == OP_ACT_GELU_TANH && (!p->has_c || bias_ok);
    md.accumulate = p->has_residual && d->nbd == 0; /* R packed as Y: one matrix of batch * m rows */
    size_t need = 0;
    size_t limit = c->opts.workspace_limit ? c->opts.workspace_limit : (size_t)32 << 20;
    hd_status *st = gb_mm_get(c, &md, limit, &gs->mm, &need);
    if (st && md.gelu && hd_status_code(st) == HD_ERR_NOT_SUPPORTED) {
      /* no algorithm with the GELU epilogue: the epilogue kernel applies it */
      hd_status_free(st);
      md.gelu = 0;
      st = gb_mm_get(c, &md, limit, &gs->mm, &need);
    }
    if (st) {
      HD_LOG(HD_LOG_VERBOSE, "%s: %s [%lld x %lld x %lld] x %lld on the built-in kernel: %s",
             gb_backend_name, n->op_type, (long long)m, (long long)nn, (long long)k,
             (long long)d->batch, hd_status_msg(st));
      if (hd_status_code(st) == HD_ERR_OUT_OF_MEMORY) return st;
      hd_status_free(st);
      gs->mm = NULL;
    } else {
      *ws = need;
      gs->fused_bias = md.bias;
      gs->fused_relu = md.relu;
      gs->fused_gelu = md.gelu;
      gs->fused_res = md.accumulate;
      gs->need_epilogue = (p->has_c && !md.bias) || (p->act.kind != OP_ACT_NONE && !md.relu && !md.gelu);
    }
  }
  return NULL;
}

static hd_status *gemm_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_bindings *b = &l->b;
  gpuStream_t stream = l->stream;
  be_context *c = bp->bg->c;
  const gb_gemm_step *gs = s->priv;
  const gpu_gemm_desc *d = &gs->d;
  const void *A = gb_addr(bp, s->n->in[0], b), *B = gb_addr(bp, s->n->in[1], b);
  const void *C = gb_addr(bp, gs->vc, b), *R = gb_addr(bp, gs->vr, b);
  void *Y = gb_addr(bp, s->n->out[0], b);
  if (d->batch * d->m * d->n == 0) return NULL;
  if (!gs->mm) {
    GB_KERNEL(gpu_gemm(A, B, C, Y, gs->dtype, d, stream));
  } else {
    HD_TRY(c->m->blas.mm_run(c->blas, gs->mm, A, B, gs->fused_res ? R : NULL, Y, gs->fused_bias ? C : NULL,
                             l->workspace, l->workspace_bytes, stream));
    if (gs->need_epilogue) {
      const void *cc = gs->fused_bias ? NULL : C;
      int act = gs->fused_relu || gs->fused_gelu ? OP_ACT_NONE : d->act;
      GB_KERNEL(gpu_gemm_epilogue(Y, cc, gs->dtype, d->batch * d->m, d->m, d->n, d->c_rs, d->c_cs,
                                  d->beta, act, d->act_alpha, d->act_beta, stream));
    }
  }
  if (R && !gs->fused_res) /* no activation with a residual (gemm_support): R added last */
    GB_KERNEL(gpu_gemm_epilogue(Y, R, gs->dtype, d->batch * d->m, d->batch * d->m, d->n, d->n, 1, 1.f, OP_ACT_NONE,
                                0.f, 0.f, stream));
  return NULL;
}

static void gemm_release(be_plan *bp, gb_step *s) {
  gb_gemm_step *gs = s->priv;
  if (gs && gs->mm) gb_mm_put(bp->bg->c, gs->mm);
  free(gs);
  s->priv = NULL;
}

const gb_family gb_family_gemm = {
    .name = "gemm",
    .support = gemm_support,
    .compile = gemm_compile,
    .run = gemm_run,
    .release = gemm_release,
};
