/* gb_rotary: RotaryEmbedding on gpu/gpu_rotary.cu. */
#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

static hd_status *rotary_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  return gb_support_float_input(g, n, 0);
}

static hd_status *rotary_run(be_plan *bp, gb_step *s, const gb_launch *lc) {
  const ir_node *n = s->n;
  const op_rotary *p = &s->p.rotary;
  op_rope_layout l;
  HD_TRY(op_rotary_layout(n, p, bp->p.t, &l));
  gpu_rope_desc d = {.batch = l.batch, .heads = l.heads, .seq = l.seq, .head_dim = l.head_dim, .rot_dim = l.rot_dim,
                     .table_rows = l.table_rows, .st = {l.st[0], l.st[1], l.st[2]}, .interleaved = p->interleaved,
                     .pos_offset = p->pos_form == OP_ROPE_POS_OFFSET, .x = gb_addr(bp, n->in[0], &lc->b),
                     .cos = gb_addr(bp, n->in[p->in_cos], &lc->b), .sin = gb_addr(bp, n->in[p->in_sin], &lc->b),
                     .pos = ir_input_addr(&bp->p, n, p->pos_form == OP_ROPE_POS_TABLE ? -1 : p->in_pos, &lc->b),
                     .y = gb_addr(bp, n->out[0], &lc->b)};
  GB_KERNEL(gpu_rotary(&d, gb_t(bp, n->in[0])->dtype, lc->stream));
  return NULL;
}

const gb_family gb_family_rotary = {
    .name = "rotary",
    .support = rotary_support,
    .run = rotary_run,
};
