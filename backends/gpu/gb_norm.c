/* gb_norm: layer normalisations on gpu/gpu_norm.cu (mean and inverse std
 * outputs in fp32 only; fused transposes read or write channel-major; x
 * and the skip through their row maps, ops/norm.c). */
#include <stdlib.h>

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

/* A row map as the kernels take it. */
static void rows_to_gpu(const op_norm_rows *m, gpu_norm_rows *g) {
  g->nd = m->nd;
  g->col_n = m->col_n;
  for (int i = 0; i < m->nd; i++) g->dim[i] = m->dim[i], g->div[i] = m->div[i], g->stride[i] = m->stride[i];
}

/* The step's descriptor but for its addresses, worked out once a plan
 * (the maps take a few passes over the dims; a run only binds). */
static hd_status *norm_compile(be_plan *bp, gb_step *s, size_t *ws) {
  *ws = 0;
  const op_norm *p = &s->p.norm;
  op_norm_layout l;
  HD_TRY(op_norm_layout_of(s->n, p, bp->p.t, &l));
  gpu_norm_desc *d = calloc(1, sizeof *d);
  if (!d) return GB_OOM();
  s->priv = d;
  d->rows = l.rows, d->cols = l.cols, d->eps = p->epsilon, d->rms = p->rms;
  d->x_inner = l.x_inner, d->y_inner = l.y_inner;
  d->params_const = gb_input_const(bp, s->n, p->in_scale) && gb_input_const(bp, s->n, p->in_bias);
  rows_to_gpu(&l.xm, &d->xm);
  rows_to_gpu(&l.sm, &d->sm);
  rows_to_gpu(&l.ym, &d->ym);
  return NULL;
}

void gb_norm_bind(const be_plan *bp, const gb_step *s, const gb_launch *l, gpu_norm_desc *d) {
  const ir_node *n = s->n;
  const op_norm *p = &s->p.norm;
  *d = *(const gpu_norm_desc *)s->priv;
  d->skip = ir_input_addr(&bp->p, n, p->in_skip, &l->b);
  d->sbias = ir_input_addr(&bp->p, n, p->in_skip_bias, &l->b);
  d->scale = ir_input_addr(&bp->p, n, p->in_scale, &l->b);
  d->bias = ir_input_addr(&bp->p, n, p->in_bias, &l->b);
  d->sum = ir_output_addr(&bp->p, n, p->out_sum, &l->b);
  d->mean = ir_output_addr(&bp->p, n, p->out_mean, &l->b);
  d->inv = ir_output_addr(&bp->p, n, p->out_inv, &l->b);
}

static hd_status *norm_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  gpu_norm_desc d;
  gb_norm_bind(bp, s, l, &d);
  GB_KERNEL(gpu_layernorm(gb_addr(bp, s->n->in[0], &l->b), gb_addr(bp, s->n->out[0], &l->b),
                          gb_t(bp, s->n->in[0])->dtype, &d, l->stream));
  return NULL;
}

static void norm_release(be_plan *bp, gb_step *s) {
  (void)bp;
  free(s->priv);
  s->priv = NULL;
}

const gb_family gb_family_norm = {
    .name = "norm",
    .support = norm_support,
    .compile = norm_compile,
    .run = norm_run,
    .release = norm_release,
};

const gpu_norm_desc *gb_norm_sizes(const gb_step *s) { return s->f == &gb_family_norm ? s->priv : NULL; }
