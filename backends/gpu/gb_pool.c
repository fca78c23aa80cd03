/* gb_pool: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool on the
 * project's kernels (gpu/gpu_pool.cu). Why not the DNN library: the backend
 * graph API has no forward pooling operation usable for inference on both
 * vendors (cuDNN's resample graphs need runtime-compiled engines and refuse
 * dilations / ceil-mode windows); a direct kernel is one memory-bound pass.
 * Global pooling is one 32-lane reduction per [n, c] row. */
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

typedef struct gb_pool_step {
  int global;
  int is_max;
  int64_t nc, len; /* global: rows and row length */
  gpu_pool_desc d;
} gb_pool_step;

static hd_status *pool_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  HD_TRY(gb_check_float_io(g, n, 1));
  int r = g->values[n->in[0]].rank;
  if (r >= 0 && (r < 3 || r > 5))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of rank %d (1-3 spatial dims)", gb_backend_name,
                    n->op_type, r);
  if (!n->p.pool.global && (n->p.pool.nspatial < 1 || n->p.pool.nspatial > 3))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s with %d spatial dims", gb_backend_name,
                    n->op_type, n->p.pool.nspatial);
  return NULL;
}

static hd_status *pool_compile(be_plan *bp, gb_step *s, size_t *ws) {
  *ws = 0;
  gb_pool_step *ps = calloc(1, sizeof *ps);
  if (!ps) return GB_OOM();
  s->priv = ps;
  const op_pool *p = &s->p.pool;
  const ir_tensor *x = gb_t(bp, s->n->in[0]), *y = gb_t(bp, s->n->out[0]);
  int ns = x->rank - 2;
  if (ns < 1 || ns > 3 || y->rank != x->rank)
    return hd_error(HD_ERR_INTERNAL, "%s: pooling of rank %d to %d", gb_backend_name, x->rank,
                    y->rank);
  ps->global = p->global;
  ps->is_max = p->is_max;
  ps->nc = x->dims[0] * x->dims[1];
  if (p->global) {
    ps->len = ir_numel(ns, x->dims + 2);
    return NULL;
  }
  if (p->nspatial != ns)
    return hd_error(HD_ERR_INTERNAL, "%s: pooling over %d of %d spatial dims", gb_backend_name,
                    p->nspatial, ns);
  /* Lift to 3 spatial dims: leading unit dims. */
  gpu_pool_desc *d = &ps->d;
  d->nspatial = 3;
  d->is_max = p->is_max;
  d->count_include_pad = p->count_include_pad;
  int off = 3 - ns;
  for (int i = 0; i < 3; ++i) {
    int j = i - off;
    int lifted = j < 0;
    d->in[i] = lifted ? 1 : x->dims[2 + j];
    d->out[i] = lifted ? 1 : y->dims[2 + j];
    d->kernel[i] = lifted ? 1 : p->kernel[j];
    d->stride[i] = lifted ? 1 : p->strides[j];
    d->dilation[i] = lifted ? 1 : (p->dilations[j] > 0 ? p->dilations[j] : 1);
    d->pad_begin[i] = lifted ? 0 : p->pads_begin[j];
    d->pad_end[i] = lifted ? 0 : p->pads_end[j];
    if (d->kernel[i] < 1 || d->stride[i] < 1)
      return hd_error(HD_ERR_INTERNAL, "%s: pooling kernel %lld stride %lld", gb_backend_name,
                      (long long)d->kernel[i], (long long)d->stride[i]);
  }
  return NULL;
}

static hd_status *pool_run(be_plan *bp, gb_step *s, const ir_bindings *b, gpuStream_t stream) {
  const gb_pool_step *ps = s->priv;
  void *x = gb_addr(bp, s->n->in[0], b), *y = gb_addr(bp, s->n->out[0], b);
  int dt = gb_t(bp, s->n->in[0])->dtype;
  if (ps->global)
    GB_KERNEL(gpu_global_pool(x, y, dt, ps->nc, ps->len, ps->is_max, stream));
  else
    GB_KERNEL(gpu_pool(x, y, dt, ps->nc, &ps->d, stream));
  return NULL;
}

static void pool_release(be_plan *bp, gb_step *s) {
  (void)bp;
  free(s->priv);
  s->priv = NULL;
}

const gb_family gb_family_pool = {
    .name = "pool",
    .support = pool_support,
    .compile = pool_compile,
    .run = pool_run,
    .release = pool_release,
};
