/* gb_squeeze_excite: squeeze-and-excitation (ops/squeeze_excite.h) on
 * gpu/gpu_squeeze_excite.cu: three kernels (plane sums, hidden layer, gate
 * and scale) where the written-out block ran six to eight. */
#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

/* The fusion pass makes no block the kernels refuse. */
_Static_assert(GPU_SE_MAX_CHANNELS >= OP_SE_MAX_CHANNELS, "the GPU step takes fewer channels than the op");

static hd_status *se_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  HD_TRY(gb_check_float_io(g, n, -1));
  const ir_value *w1 = &g->values[n->in[SE_IN_W1]];
  if (w1->rank < 2 || !gpu_squeeze_excite_fits(w1->dims[1], w1->dims[0]))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of %lld channels (at most %d)", gb_backend_name, n->op_type,
                    (long long)(w1->rank >= 2 ? w1->dims[1] : -1), GPU_SE_MAX_CHANNELS);
  return NULL;
}

/* The kernels' sizes for plan bp; the pointers are bound at run time. */
static gpu_se_desc se_desc(const be_plan *bp, const ir_node *n, const op_squeeze_excite *q) {
  const ir_tensor *x = gb_t(bp, n->in[SE_IN_X]);
  gpu_se_desc d = {.n = x->dims[0],
                   .c = x->dims[1],
                   .hw = ir_numel(x->rank - 2, x->dims + 2),
                   .r = gb_t(bp, n->in[SE_IN_W1])->dims[0],
                   .act = q->act.kind,
                   .act_alpha = q->act.alpha,
                   .act_beta = q->act.beta,
                   .gate_act = q->gate_act.kind,
                   .gate_alpha = q->gate_act.alpha,
                   .gate_beta = q->gate_act.beta};
  return d;
}

static hd_status *se_compile(be_plan *bp, gb_step *s, size_t *ws) {
  gpu_se_desc d = se_desc(bp, s->n, &s->p.squeeze_excite);
  *ws = gpu_squeeze_excite_ws(&d);
  return NULL;
}

static hd_status *se_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  gpu_se_desc d = se_desc(bp, n, &s->p.squeeze_excite);
  d.w1 = gb_addr(bp, n->in[SE_IN_W1], &l->b);
  d.b1 = gb_addr(bp, n->in[SE_IN_B1], &l->b);
  d.w2 = gb_addr(bp, n->in[SE_IN_W2], &l->b);
  d.b2 = gb_addr(bp, n->in[SE_IN_B2], &l->b);
  GB_KERNEL(gpu_squeeze_excite(gb_addr(bp, n->in[SE_IN_X], &l->b), gb_addr(bp, n->out[0], &l->b),
                               gb_t(bp, n->in[SE_IN_X])->dtype, &d, l->workspace, l->stream));
  return NULL;
}

const gb_family gb_family_squeeze_excite = {
    .name = "squeeze_excite",
    .support = se_support,
    .compile = se_compile,
    .run = se_run,
};
