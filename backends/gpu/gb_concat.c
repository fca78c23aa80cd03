/* gb_concat: Concat on gpu/gpu_concat.cu: each input [outer, a_i * inner]
 * lands at its column offset of y [outer, A * inner]; one launch per 8
 * inputs. A plain strided copy: no library call does it better. */
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "common/hd_dtype.h"
#include "gpu/gpu_kernels.h"

typedef struct gb_concat_step {
  int64_t outer, width_total, es;
  int n;
  int64_t *width, *offset; /* per input, in elements */
} gb_concat_step;

static hd_status *concat_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  if (n->nin < 1) return hd_error(HD_ERR_NOT_SUPPORTED, "%s: Concat of nothing", gb_backend_name);
  for (int i = 0; i < n->nin; ++i)
    if (n->in[i] == IR_NONE)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: Concat with an absent input", gb_backend_name);
  return gb_check_elements(g, n, n->out[0]); /* bytes move as they are: any type the op takes */
}

static hd_status *concat_compile(be_plan *bp, gb_step *s, size_t *ws) {
  *ws = 0;
  const ir_node *n = s->n;
  gb_concat_step *cs = calloc(1, sizeof *cs);
  if (!cs) return GB_OOM();
  s->priv = cs;
  cs->width = calloc((size_t)n->nin * 2, sizeof(int64_t));
  if (!cs->width) return GB_OOM();
  cs->offset = cs->width + n->nin;
  const ir_tensor *y = gb_t(bp, n->out[0]);
  int r = y->rank, axis = OP_P(s)->concat.axis;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r)
    return hd_error(HD_ERR_INTERNAL, "%s: concat axis %d of rank %d", gb_backend_name,
                    OP_P(s)->concat.axis, r);
  cs->outer = ir_numel(axis, y->dims);
  int64_t inner = ir_numel(r - axis - 1, y->dims + axis + 1);
  cs->width_total = y->dims[axis] * inner;
  cs->es = (int64_t)hd_dtype_size(y->dtype);
  cs->n = n->nin;
  int64_t at = 0;
  for (int i = 0; i < n->nin; ++i) {
    const ir_tensor *x = gb_t(bp, n->in[i]);
    cs->width[i] = x->dims[axis] * inner;
    cs->offset[i] = at;
    at += cs->width[i];
  }
  if (at != cs->width_total)
    return hd_error(HD_ERR_INTERNAL, "%s: concat widths %lld != %lld", gb_backend_name,
                    (long long)at, (long long)cs->width_total);
  return NULL;
}

static hd_status *concat_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_bindings *b = &l->b;
  gpuStream_t stream = l->stream;
  const gb_concat_step *cs = s->priv;
  void *y = gb_addr(bp, s->n->out[0], b);
  for (int i0 = 0; i0 < cs->n; i0 += GPU_CONCAT_MAX) {
    gpu_concat_desc d;
    memset(&d, 0, sizeof d);
    for (int i = i0; i < cs->n && d.n < GPU_CONCAT_MAX; ++i) {
      if (cs->width[i] == 0) continue;
      d.x[d.n] = gb_addr(bp, s->n->in[i], b);
      d.width[d.n] = cs->width[i];
      d.offset[d.n] = cs->offset[i];
      d.n++;
    }
    if (d.n) GB_KERNEL(gpu_concat(y, cs->es, cs->outer, cs->width_total, &d, stream));
  }
  return NULL;
}

static void concat_release(be_plan *bp, gb_step *s) {
  (void)bp;
  gb_concat_step *cs = s->priv;
  if (cs) free(cs->width);
  free(cs);
  s->priv = NULL;
}

const gb_family gb_family_concat = {
    .name = "concat",
    .support = concat_support,
    .compile = concat_compile,
    .run = concat_run,
    .release = concat_release,
};
