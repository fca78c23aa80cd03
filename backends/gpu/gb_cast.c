/* gb_cast: Cast on gpu/gpu_cast.cu. */
#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

static hd_status *cast_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  int from = g->values[n->in[0]].dtype, to = g->values[n->out[0]].dtype;
  if (!gpu_cast_takes(from) || !gpu_cast_takes(to))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: Cast from %s to %s", gb_backend_name, hd_dtype_name(from),
                    hd_dtype_name(to));
  return NULL;
}

static hd_status *cast_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  const ir_tensor *xt = gb_t(bp, n->in[0]), *yt = gb_t(bp, n->out[0]);
  GB_KERNEL(gpu_cast(gb_addr(bp, n->in[0], &l->b), xt->dtype, gb_addr(bp, n->out[0], &l->b), yt->dtype,
                     ir_numel(xt->rank, xt->dims), l->stream));
  return NULL;
}

const gb_family gb_family_cast = {
    .name = "cast",
    .support = cast_support,
    .run = cast_run,
};
