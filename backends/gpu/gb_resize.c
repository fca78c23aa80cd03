/* gb_resize: Resize on gpu/gpu_resize.cu through ops/resize.c's map:
 * nearest for any element type of 1, 2, 4 or 8 bytes, linear for the
 * float types the kernels take. */
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

static hd_status *resize_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  if (OP_P(n)->resize.mode == OP_RESIZE_LINEAR) return gb_support_float_input(g, n, 0);
  return gb_check_elements(g, n, n->in[0]);
}

static hd_status *resize_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  const op_resize *p = &s->p.resize;
  op_resize_map m;
  HD_TRY(op_resize_map_of(n, p, bp->p.t, &m));
  gpu_resize_desc d = {.rank = m.rank, .coord = (int)p->coord, .nearest = (int)p->nearest};
  memcpy(d.dims, m.dims, sizeof d.dims);
  memcpy(d.in_dims, m.in_dims, sizeof d.in_dims);
  memcpy(d.scale, m.scale, sizeof d.scale);
  const void *x = gb_addr(bp, n->in[0], &l->b);
  void *y = gb_addr(bp, n->out[0], &l->b);
  int dt = gb_t(bp, n->in[0])->dtype;
  if (p->mode == OP_RESIZE_LINEAR) GB_KERNEL(gpu_resize_linear(x, y, dt, &d, l->stream));
  else GB_KERNEL(gpu_resize_nearest(x, y, (int64_t)hd_dtype_size(dt), &d, l->stream));
  return NULL;
}

const gb_family gb_family_resize = {
    .name = "resize",
    .support = resize_support,
    .run = resize_run,
};
