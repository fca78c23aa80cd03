/* gb_copy: Transpose, Slice, Split, Expand and Tile as strided copies
 * (gpu/gpu_copy.cu) through ops/copy.c's map, one per output. */
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

static hd_status *copy_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  return gb_check_elements(g, n, n->in[0]);
}

static hd_status *copy_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  const void *x = gb_addr(bp, n->in[0], &l->b);
  int64_t es = (int64_t)hd_dtype_size(gb_t(bp, n->in[0])->dtype);
  for (int k = 0; k < n->nout; k++) {
    if (n->out[k] == IR_NONE || gb_t(bp, n->out[k])->nbytes == 0) continue;
    op_strided m;
    HD_TRY(op_copy_map(n, &s->p.copy, bp->p.t, k, &m));
    gpu_strided gm = {.rank = m.rank, .offset = m.offset};
    memcpy(gm.dims, m.dims, sizeof gm.dims);
    memcpy(gm.stride, m.stride, sizeof gm.stride);
    memcpy(gm.mod, m.mod, sizeof gm.mod);
    GB_KERNEL(gpu_strided_copy(x, gb_addr(bp, n->out[k], &l->b), es, &gm, l->stream));
  }
  return NULL;
}

int gb_relayout(const void *src, void *dst, int dtype, int64_t n, int64_t c, int64_t inner, int to_first,
                gpuStream_t stream) {
  gpu_strided m = {.rank = 3};
  int64_t first_dims[3] = {n, c, inner}, first_stride[3] = {inner * c, 1, c}; /* dst [n, c, inner] */
  int64_t last_dims[3] = {n, inner, c}, last_stride[3] = {c * inner, 1, inner}; /* dst [n, inner, c] */
  memcpy(m.dims, to_first ? first_dims : last_dims, sizeof m.dims[0] * 3);
  memcpy(m.stride, to_first ? first_stride : last_stride, sizeof m.stride[0] * 3);
  return gpu_strided_copy(src, dst, (int64_t)hd_dtype_size(dtype), &m, stream);
}

const gb_family gb_family_copy = {
    .name = "copy",
    .support = copy_support,
    .run = copy_run,
};
