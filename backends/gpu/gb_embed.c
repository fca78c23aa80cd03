/* gb_embed: EmbedLayerNormalization on gpu/gpu_embed.cu. */
#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

static hd_status *embed_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  if (n->nin < 4 || n->in[2] == IR_NONE) /* also probed on nodes no parse has checked */
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s without its word embedding", gb_backend_name, n->op_type);
  int dt = g->values[n->in[2]].dtype;
  if (!gb_dtype_ok(dt)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of %s", gb_backend_name, n->op_type, hd_dtype_name(dt));
  int64_t h = g->values[n->in[2]].rank == 2 ? g->values[n->in[2]].dims[1] : -1;
  if (h > GPU_EMBED_MAX_HIDDEN)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of width %lld", gb_backend_name, n->op_type, (long long)h);
  return NULL;
}

static hd_status *embed_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  const op_embed *p = &s->p.embed;
  const ir_tensor *ids = gb_t(bp, n->in[0]), *word = gb_t(bp, n->in[2]);
  gpu_embed_desc d = {.batch = ids->dims[0], .seq = ids->dims[1], .hidden = word->dims[1], .word_rows = word->dims[0],
                      .pos_rows = gb_t(bp, n->in[3])->dims[0], .eps = p->epsilon,
                      .ids = gb_addr(bp, n->in[0], &l->b), .seg_ids = ir_input_addr(&bp->p, n, p->in_segment_ids, &l->b),
                      .mask = ir_input_addr(&bp->p, n, p->in_mask, &l->b), .pos_ids = ir_input_addr(&bp->p, n, p->in_position_ids, &l->b),
                      .word = gb_addr(bp, n->in[2], &l->b), .pos = gb_addr(bp, n->in[3], &l->b),
                      .seg = ir_input_addr(&bp->p, n, p->in_segment, &l->b), .gamma = gb_addr(bp, n->in[5], &l->b),
                      .beta = gb_addr(bp, n->in[6], &l->b), .out = gb_addr(bp, n->out[0], &l->b),
                      .sum = ir_output_addr(&bp->p, n, p->out_sum, &l->b),
                      .mask_index = ir_output_addr(&bp->p, n, p->out_mask_index, &l->b)};
  if (p->in_segment >= 0) d.seg_rows = gb_t(bp, n->in[p->in_segment])->dims[0];
  if (p->in_position_ids >= 0) d.pos_batch_stride = gb_t(bp, n->in[p->in_position_ids])->dims[0] == d.batch ? d.seq : 0;
  GB_KERNEL(gpu_embed_layernorm(&d, word->dtype, l->stream));
  return NULL;
}

const gb_family gb_family_embed = {
    .name = "embed",
    .support = embed_support,
    .run = embed_run,
};
