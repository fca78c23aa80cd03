/* gb_select: Where and Trilu on gpu/gpu_select.cu. */
#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

static hd_status *select_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  return gb_check_elements(g, n, n->out[0]);
}

/* Element strides of t right-aligned to rank r; 0 where t broadcasts. */
static void strides(const ir_tensor *t, int r, int64_t *st) {
  int64_t acc = 1;
  for (int i = r - 1; i >= 0; i--) {
    int k = i - (r - t->rank);
    st[i] = k < 0 || t->dims[k] == 1 ? 0 : acc;
    if (k >= 0) acc *= t->dims[k];
  }
}

static hd_status *select_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  const ir_tensor *yt = gb_t(bp, n->out[0]);
  int64_t es = (int64_t)hd_dtype_size(yt->dtype), cnt = ir_numel(yt->rank, yt->dims);
  void *y = gb_addr(bp, n->out[0], &l->b);
  if (n->kind == OP_TRILU) {
    GB_KERNEL(gpu_trilu(gb_addr(bp, n->in[0], &l->b), y, es, cnt, yt->dims[yt->rank - 2], yt->dims[yt->rank - 1],
                        s->p.select.k, s->p.select.upper, l->stream));
    return NULL;
  }
  gpu_where_desc w = {.rank = yt->rank ? yt->rank : 1, .dims = {1}};
  for (int d = 0; d < yt->rank; d++) w.dims[d] = yt->dims[d];
  if (yt->rank) {
    strides(gb_t(bp, n->in[0]), yt->rank, w.sc);
    strides(gb_t(bp, n->in[1]), yt->rank, w.sx);
    strides(gb_t(bp, n->in[2]), yt->rank, w.sz);
  }
  GB_KERNEL(gpu_where(gb_addr(bp, n->in[0], &l->b), gb_addr(bp, n->in[1], &l->b), gb_addr(bp, n->in[2], &l->b), y, es,
                      &w, l->stream));
  return NULL;
}

const gb_family gb_family_select = {
    .name = "select",
    .support = select_support,
    .run = select_run,
};
