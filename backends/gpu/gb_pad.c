/* gb_pad: Pad on gpu/gpu_pad.cu through ops/pad.c's map, any element type
 * of 1, 2, 4 or 8 bytes. */
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

_Static_assert(GPU_PAD_CONSTANT == (int)OP_PAD_MODE_CONSTANT && GPU_PAD_REFLECT == (int)OP_PAD_MODE_REFLECT &&
                   GPU_PAD_EDGE == (int)OP_PAD_MODE_EDGE && GPU_PAD_WRAP == (int)OP_PAD_MODE_WRAP,
               "gpu_pad's modes are op_pad_mode's");

static hd_status *pad_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  return gb_check_elements(g, n, n->in[0]);
}

static hd_status *pad_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  op_pad_map m;
  HD_TRY(op_pad_map_of(n, &s->p.pad, bp->p.t, &m));
  gpu_pad_desc d = {.rank = m.rank, .mode = (int)s->p.pad.mode};
  memcpy(d.dims, m.dims, sizeof d.dims);
  memcpy(d.in_stride, m.in_stride, sizeof d.in_stride);
  memcpy(d.pad, m.pad, sizeof d.pad);
  memcpy(d.start, m.start, sizeof d.start);
  memcpy(d.extent, m.extent, sizeof d.extent);
  memcpy(d.fill, s->p.pad.fill, sizeof d.fill);
  GB_KERNEL(gpu_pad(gb_addr(bp, n->in[0], &l->b), gb_addr(bp, n->out[0], &l->b),
                    (int64_t)hd_dtype_size(gb_t(bp, n->in[0])->dtype), &d, l->stream));
  return NULL;
}

const gb_family gb_family_pad = {
    .name = "pad",
    .support = pad_support,
    .run = pad_run,
};
