/* gb_logic: comparisons, logic, IsNaN and IsInf on gpu/gpu_logic.cu. */
#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

static int logic_type_ok(int dt) {
  return gb_dtype_ok(dt) || dt == HD_DT_F64 || dt == HD_DT_I8 || dt == HD_DT_U8 || dt == HD_DT_BOOL ||
         dt == HD_DT_I32 || dt == HD_DT_I64;
}

static hd_status *logic_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  int dt = g->values[n->in[0]].dtype;
  if (!logic_type_ok(dt)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of %s", gb_backend_name, n->op_type, hd_dtype_name(dt));
  if (g->values[n->out[0]].rank > GPU_MAX_DIMS)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of rank %d", gb_backend_name, n->op_type, g->values[n->out[0]].rank);
  return NULL;
}

static hd_status *logic_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  const op_logic *p = &s->p.logic;
  const ir_tensor *at = gb_t(bp, n->in[0]), *yt = gb_t(bp, n->out[0]);
  gpu_bcast bc = {.rank = 1, .dims = {ir_numel(yt->rank, yt->dims)}, .sa = {1}, .sb = {1}};
  const void *b = NULL;
  if (p->kind <= OP_LOGIC_XOR) {
    HD_TRY(gb_bcast_build(at, gb_t(bp, n->in[1]), yt, &bc));
    b = gb_addr(bp, n->in[1], &l->b);
  }
  GB_KERNEL(gpu_logic(gb_addr(bp, n->in[0], &l->b), b, gb_addr(bp, n->out[0], &l->b), at->dtype, (int)p->kind, &bc,
                      p->detect_negative, p->detect_positive, l->stream));
  return NULL;
}

_Static_assert(GPU_LOGIC_EQ == (int)OP_LOGIC_EQ && GPU_LOGIC_XOR == (int)OP_LOGIC_XOR && GPU_LOGIC_ISINF == (int)OP_LOGIC_ISINF,
               "GPU_LOGIC_* and op_logic_kind disagree");

const gb_family gb_family_logic = {
    .name = "logic",
    .support = logic_support,
    .run = logic_run,
};
