/* gb_gather: Gather and GatherElements on gpu/gpu_gather.cu, any element
 * type of 1, 2, 4 or 8 bytes. */
#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

static hd_status *gather_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  if (n->kind == OP_GATHER_ND) return hd_error(HD_ERR_NOT_SUPPORTED, "%s: GatherND (plan time only)", gb_backend_name);
  return gb_check_elements(g, n, n->in[0]);
}

static hd_status *gather_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  const ir_tensor *xt = gb_t(bp, n->in[0]), *it = gb_t(bp, n->in[1]), *yt = gb_t(bp, n->out[0]);
  const void *x = gb_addr(bp, n->in[0], &l->b), *idx = gb_addr(bp, n->in[1], &l->b);
  void *y = gb_addr(bp, n->out[0], &l->b);
  int ax = s->p.gather.axis, idx64 = it->dtype == HD_DT_I64;
  int64_t es = (int64_t)hd_dtype_size(xt->dtype);
  if (n->kind == OP_GATHER) {
    int64_t outer = ir_numel(ax, xt->dims), inner = ir_numel(xt->rank - ax - 1, xt->dims + ax + 1);
    GB_KERNEL(gpu_gather(x, idx, idx64, y, outer, xt->dims[ax], ir_numel(it->rank, it->dims), inner * es,
                         l->stream));
    return NULL;
  }
  gpu_gather_el ge = {.rank = yt->rank, .axis = ax, .total = ir_numel(yt->rank, yt->dims), .axis_dim = xt->dims[ax]};
  int64_t acc = 1;
  for (int d = xt->rank - 1; d >= 0; d--) {
    ge.xstride[d] = acc;
    acc *= xt->dims[d];
    ge.dims[d] = yt->dims[d];
  }
  GB_KERNEL(gpu_gather_elements(x, idx, idx64, y, es, &ge, l->stream));
  return NULL;
}

const gb_family gb_family_gather = {
    .name = "gather",
    .support = gather_support,
    .run = gather_run,
};
