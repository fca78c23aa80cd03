/* gb_norm: layer normalisations on gpu/gpu_norm.cu (mean and inverse std
 * outputs in fp32 only; fused transposes read or write channel-major). */
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

static hd_status *norm_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  const op_norm *p = &s->p.norm;
  const ir_tensor *xt = gb_t(bp, n->in[p->in_x]);
  int64_t cols = p->in_chan >= 0 ? xt->dims[p->in_chan] : ir_numel(xt->rank - p->axis, xt->dims + p->axis);
  gpu_norm_desc d = {.rows = p->in_chan >= 0 ? (cols ? ir_numel(xt->rank, xt->dims) / cols : 0)
                                             : ir_numel(p->axis, xt->dims),
                     .cols = cols,
                     .skip_n = 1,
                     .eps = p->epsilon,
                     .rms = p->rms,
                     .skip = ir_input_addr(&bp->p, n, p->in_skip, &l->b),
                     .sbias = ir_input_addr(&bp->p, n, p->in_skip_bias, &l->b),
                     .scale = ir_input_addr(&bp->p, n, p->in_scale, &l->b),
                     .bias = ir_input_addr(&bp->p, n, p->in_bias, &l->b),
                     .sum = ir_output_addr(&bp->p, n, p->out_sum, &l->b),
                     .mean = ir_output_addr(&bp->p, n, p->out_mean, &l->b),
                     .inv = ir_output_addr(&bp->p, n, p->out_inv, &l->b),
                     .params_const = gb_input_const(bp, n, p->in_scale) && gb_input_const(bp, n, p->in_bias)};
  /* fused transposes: the normalised axis stored in the middle (inner 1 is packed rows) */
  if (p->in_chan >= 0) d.x_inner = ir_numel(xt->rank - p->in_chan - 1, xt->dims + p->in_chan + 1);
  if (p->out_chan >= 0) {
    const ir_tensor *yt = gb_t(bp, n->out[0]);
    d.y_inner = ir_numel(yt->rank - p->out_chan - 1, yt->dims + p->out_chan + 1);
  }
  if (d.x_inner == 1) d.x_inner = 0;
  if (d.y_inner == 1) d.y_inner = 0;
  if (p->in_skip >= 0) d.skip_n = ir_numel(gb_t(bp, n->in[p->in_skip])->rank, gb_t(bp, n->in[p->in_skip])->dims);
  GB_KERNEL(gpu_layernorm(gb_addr(bp, n->in[p->in_x], &l->b), gb_addr(bp, n->out[0], &l->b), xt->dtype, &d, l->stream));
  return NULL;
}

const gb_family gb_family_norm = {
    .name = "norm",
    .support = norm_support,
    .run = norm_run,
};
