/* gb_norm: layer normalisations on gpu/gpu_norm.cu (mean and inverse std
 * outputs in fp32 only; fused transposes read or write channel-major; x
 * and the skip through their row maps, ops/norm.c). */
#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

static hd_status *norm_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  const op_norm *p = &OP_P(n)->norm;
  if (!gb_dtype_ok(g->values[n->in[0]].dtype))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of %s", gb_backend_name, n->op_type, hd_dtype_name(g->values[n->in[0]].dtype));
  int stats[] = {p->out_mean, p->out_inv};
  for (int i = 0; i < 2; i++)
    if (stats[i] >= 0 && g->values[n->out[stats[i]]].dtype != HD_DT_F32)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s statistics of %s", gb_backend_name, n->op_type,
                      hd_dtype_name(g->values[n->out[stats[i]]].dtype));
  return NULL;
}

/* An addend's row map as the kernels take it. */
static void rows_to_gpu(const op_norm_rows *m, gpu_norm_rows *g) {
  g->nd = m->nd;
  g->col_n = m->col_n;
  for (int i = 0; i < m->nd; i++) g->dim[i] = m->dim[i], g->div[i] = m->div[i], g->stride[i] = m->stride[i];
}

static hd_status *norm_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  const op_norm *p = &s->p.norm;
  const ir_tensor *xt = gb_t(bp, n->in[0]);
  gpu_norm_desc d = {.eps = p->epsilon,
                     .rms = p->rms,
                     .skip = ir_input_addr(&bp->p, n, p->in_skip, &l->b),
                     .sbias = ir_input_addr(&bp->p, n, p->in_skip_bias, &l->b),
                     .scale = ir_input_addr(&bp->p, n, p->in_scale, &l->b),
                     .bias = ir_input_addr(&bp->p, n, p->in_bias, &l->b),
                     .sum = ir_output_addr(&bp->p, n, p->out_sum, &l->b),
                     .mean = ir_output_addr(&bp->p, n, p->out_mean, &l->b),
                     .inv = ir_output_addr(&bp->p, n, p->out_inv, &l->b),
                     .params_const = gb_input_const(bp, n, p->in_scale) && gb_input_const(bp, n, p->in_bias)};
  op_norm_rows m;
  HD_TRY(op_norm_rows_of(n, p, bp->p.t, 0, p->in_chan >= 0 ? NULL : &m, &d.rows, &d.cols));
  if (p->in_chan < 0) rows_to_gpu(&m, &d.xm);
  if (d.skip) {
    HD_TRY(op_norm_rows_of(n, p, bp->p.t, 1, &m, &d.rows, &d.cols));
    rows_to_gpu(&m, &d.sm);
  }
  /* fused transposes: the normalised axis stored in the middle (inner 1 is packed rows) */
  if (p->in_chan >= 0) d.x_inner = ir_numel(xt->rank - p->in_chan - 1, xt->dims + p->in_chan + 1);
  if (p->out_chan >= 0) {
    const ir_tensor *yt = gb_t(bp, n->out[0]);
    d.y_inner = ir_numel(yt->rank - p->out_chan - 1, yt->dims + p->out_chan + 1);
  }
  const gpu_norm_rows packed = {.nd = 1, .dim = {d.rows}, .div = {1}, .stride = {d.cols}, .col_n = d.cols};
  if (p->out_chan < 0) {
    HD_TRY(op_norm_rows_of(n, p, bp->p.t, 2, &m, &d.rows, &d.cols));
    rows_to_gpu(&m, &d.ym);
  }
  if (d.x_inner == 1) d.x_inner = 0, d.xm = packed; /* packed after all */
  if (d.y_inner == 1) d.y_inner = 0, d.ym = packed;
  GB_KERNEL(gpu_layernorm(gb_addr(bp, n->in[0], &l->b), gb_addr(bp, n->out[0], &l->b), xt->dtype, &d, l->stream));
  return NULL;
}

const gb_family gb_family_norm = {
    .name = "norm",
    .support = norm_support,
    .run = norm_run,
};
