/* gb_softmax: Softmax on gpu/gpu_softmax.cu, viewed as [outer, len, inner]
 * (opset >= 13: len is the axis; older opsets: the flattened dims from the
 * axis on, inner 1). A row softmax is a one-pass memory-bound reduction:
 * the DNN library's softmax is a legacy (non-graph) API on both vendors. */
#include <stdlib.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

typedef struct gb_softmax_step {
  int64_t outer, len, inner;
} gb_softmax_step;

static hd_status *softmax_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  return gb_check_float_io(g, n, 1);
}

static hd_status *softmax_compile(be_plan *bp, gb_step *s, size_t *ws) {
  *ws = 0;
  gb_softmax_step *ss = calloc(1, sizeof *ss);
  if (!ss) return GB_OOM();
  s->priv = ss;
  const ir_tensor *x = gb_t(bp, s->n->in[0]);
  int r = x->rank, axis = OP_P(s)->softmax.axis;
  if (axis < 0) axis += r;
  if (r == 0) {
    ss->outer = ss->len = ss->inner = 1;
    return NULL;
  }
  if (axis < 0 || axis >= r)
    return hd_error(HD_ERR_INTERNAL, "%s: softmax axis %d of rank %d", gb_backend_name,
                    OP_P(s)->softmax.axis, r);
  ss->outer = ir_numel(axis, x->dims);
  if (OP_P(s)->softmax.legacy_2d) {
    ss->len = ir_numel(r - axis, x->dims + axis);
    ss->inner = 1;
  } else {
    ss->len = x->dims[axis];
    ss->inner = ir_numel(r - axis - 1, x->dims + axis + 1);
  }
  return NULL;
}

static hd_status *softmax_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_bindings *b = &l->b;
  gpuStream_t stream = l->stream;
  const gb_softmax_step *ss = s->priv;
  GB_KERNEL(gpu_softmax(gb_addr(bp, s->n->in[0], b), gb_addr(bp, s->n->out[0], b),
                        gb_t(bp, s->n->in[0])->dtype, ss->outer, ss->len, ss->inner, stream));
  return NULL;
}

static void softmax_release(be_plan *bp, gb_step *s) {
  (void)bp;
  free(s->priv);
  s->priv = NULL;
}

const gb_family gb_family_softmax = {
    .name = "softmax",
    .support = softmax_support,
    .compile = softmax_compile,
    .run = softmax_run,
    .release = softmax_release,
};
