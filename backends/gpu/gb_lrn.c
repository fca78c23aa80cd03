/* gb_lrn: LRN on gpu/gpu_lrn.cu. */
#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

static hd_status *lrn_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  return gb_support_float_input(g, n, 0);
}

static hd_status *lrn_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  const op_lrn *p = &s->p.lrn;
  const ir_tensor *xt = gb_t(bp, n->in[0]);
  gpu_lrn_desc d = {.n = xt->dims[0], .c = xt->dims[1], .inner = xt->dims[2] * xt->dims[3], .size = p->size,
                    .alpha = p->alpha, .beta = p->beta, .bias = p->bias};
  GB_KERNEL(gpu_lrn(gb_addr(bp, n->in[0], &l->b), gb_addr(bp, n->out[0], &l->b), xt->dtype, &d, l->stream));
  return NULL;
}

const gb_family gb_family_lrn = {
    .name = "lrn",
    .support = lrn_support,
    .run = lrn_run,
};
