/* gb_reduce: the reductions on gpu/gpu_reduce.cu over any axes. The input's dims
 * split into kept and reduced ones (each run of neighbours merged), so a
 * reduction over the trailing dims is one contiguous row per output. */
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

_Static_assert(GPU_REDUCE_SUM == (int)OP_RED_SUM && GPU_REDUCE_MEAN == (int)OP_RED_MEAN &&
                   GPU_REDUCE_PROD == (int)OP_RED_PROD && GPU_REDUCE_LOG_SUM_EXP == (int)OP_RED_LOG_SUM_EXP,
               "GPU_REDUCE_* and op_reduce_kind disagree");

static hd_status *reduce_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  const ir_value *x = &g->values[n->in[0]];
  int int_ok = op_reduce_int_ok(OP_P(n)->reduce.kind) && (x->dtype == HD_DT_I32 || x->dtype == HD_DT_I64);
  if (!gb_dtype_ok(x->dtype) && !int_ok)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of %s", gb_backend_name, n->op_type, hd_dtype_name(x->dtype));
  if (x->rank > GPU_MAX_DIMS)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of rank %d", gb_backend_name, n->op_type, x->rank);
  return NULL;
}

static void push(int64_t *dims, int64_t *strides, int *n, int64_t dim, int64_t stride) {
  if (dim == 1) return;
  if (*n > 0 && strides[*n - 1] == stride * dim) {
    dims[*n - 1] *= dim;
    strides[*n - 1] = stride;
    return;
  }
  dims[*n] = dim;
  strides[*n] = stride;
  (*n)++;
}

static hd_status *reduce_compile(be_plan *bp, gb_step *s, size_t *ws) {
  *ws = 0;
  gpu_reduce_desc *d = calloc(1, sizeof *d);
  if (!d) return GB_OOM();
  s->priv = d;
  const ir_tensor *x = gb_t(bp, s->n->in[0]);
  const op_reduce *p = &OP_P(s)->reduce;
  int r = x->rank;
  if (r > GPU_MAX_DIMS)
    return hd_error(HD_ERR_INTERNAL, "%s: reduce of rank %d", gb_backend_name, r);
  int red[GPU_MAX_DIMS] = {0};
  if (p->naxes == 0) {
    for (int i = 0; i < r; ++i) red[i] = 1;
  } else {
    for (int i = 0; i < p->naxes; ++i) {
      int64_t a = p->axes[i] < 0 ? p->axes[i] + r : p->axes[i];
      if (a < 0 || a >= r)
        return hd_error(HD_ERR_INTERNAL, "%s: reduce axis %lld of rank %d", gb_backend_name,
                        (long long)p->axes[i], r);
      red[a] = 1;
    }
  }
  int64_t strides[GPU_MAX_DIMS];
  int64_t st = 1;
  for (int i = r - 1; i >= 0; --i) {
    strides[i] = st;
    st *= x->dims[i];
  }
  for (int i = 0; i < r; ++i) {
    if (red[i]) push(d->red_dims, d->red_strides, &d->nred, x->dims[i], strides[i]);
    else push(d->keep_dims, d->keep_strides, &d->nkeep, x->dims[i], strides[i]);
  }
  return NULL;
}

static hd_status *reduce_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_bindings *b = &l->b;
  gpuStream_t stream = l->stream;
  const ir_tensor *x = gb_t(bp, s->n->in[0]);
  /* An empty reduction (x empty, y not) reads nothing and gives the op's
   * empty-set value (0, 1, -inf, ...). */
  GB_KERNEL(gpu_reduce(gb_addr(bp, s->n->in[0], b), gb_addr(bp, s->n->out[0], b), x->dtype,
                       (int)OP_P(s)->reduce.kind, (const gpu_reduce_desc *)s->priv, stream));
  return NULL;
}

static void reduce_release(be_plan *bp, gb_step *s) {
  (void)bp;
  free(s->priv);
  s->priv = NULL;
}

const gb_family gb_family_reduce = {
    .name = "reduce",
    .support = reduce_support,
    .compile = reduce_compile,
    .run = reduce_run,
    .release = reduce_release,
};
