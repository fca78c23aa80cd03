/* com.microsoft EmbedLayerNormalization (1), as ONNX Runtime's transformers
 * optimizer writes BERT's embeddings: input_ids, segment_ids?,
 * word_embedding, position_embedding, segment_embedding?, gamma, beta,
 * mask?, position_ids? -> output, mask_index?, embedding_sum?. Indices
 * int32; tables, gamma and beta of one float type. An index out of its
 * table is an error on the host and a zero row on the GPU. */
#include <string.h>

#include "ops/op_util.h"

static hd_status *embed_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_embed *p = &OP_P(n)->embed;
  memset(p, 0, sizeof *p);
  if (op_input(n, 0) == IR_NONE || op_input(n, 2) == IR_NONE || op_input(n, 3) == IR_NONE ||
      op_input(n, 5) == IR_NONE || op_input(n, 6) == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "EmbedLayerNormalization is missing an input or its output");
  p->in_segment_ids = op_input(n, 1) != IR_NONE ? 1 : -1;
  p->in_segment = op_input(n, 4) != IR_NONE ? 4 : -1;
  p->in_mask = op_input(n, 7) != IR_NONE ? 7 : -1;
  p->in_position_ids = op_input(n, 8) != IR_NONE ? 8 : -1;
  p->out_mask_index = op_has_output(n, 1) ? 1 : -1;
  p->out_sum = op_has_output(n, 2) ? 2 : -1;
  if ((p->in_segment_ids < 0) != (p->in_segment < 0))
    return hd_error(HD_ERR_INVALID_ARG, "EmbedLayerNormalization: segment_ids and segment_embedding go together");
  HD_TRY(op_attr_float(a, "epsilon", 1e-12f, &p->epsilon));
  int64_t type;
  HD_TRY(op_attr_int(a, "mask_index_type", 1, &type));
  if (type != 1 && p->out_mask_index >= 0)
    return hd_error(HD_ERR_NOT_SUPPORTED, "EmbedLayerNormalization mask_index_type %lld", (long long)type);
  return NULL;
}

static hd_status *embed_check(const ir_graph *g, const ir_node *n) {
  const op_embed *p = &OP_P(n)->embed;
  int dt = g->values[n->in[2]].dtype;
  if (!op_is_float(dt)) return hd_error(HD_ERR_NOT_SUPPORTED, "EmbedLayerNormalization of type %s", hd_dtype_name(dt));
  int tables[] = {3, p->in_segment, 5, 6};
  for (int i = 0; i < 4; i++)
    if (tables[i] >= 0 && g->values[n->in[tables[i]]].dtype != dt)
      return hd_error(HD_ERR_NOT_SUPPORTED, "EmbedLayerNormalization with tables of mixed types");
  int ids[] = {0, p->in_segment_ids, p->in_mask, p->in_position_ids};
  for (int i = 0; i < 4; i++)
    if (ids[i] >= 0 && g->values[n->in[ids[i]]].dtype != HD_DT_I32)
      return hd_error(HD_ERR_NOT_SUPPORTED, "EmbedLayerNormalization input %d is not int32", ids[i]);
  if (g->values[n->out[0]].dtype != dt || (p->out_sum >= 0 && g->values[n->out[p->out_sum]].dtype != dt) ||
      (p->out_mask_index >= 0 && g->values[n->out[p->out_mask_index]].dtype != HD_DT_I32))
    return hd_error(HD_ERR_INVALID_ARG, "EmbedLayerNormalization output of another type");
  return NULL;
}

static hd_status *embed_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  (void)g;
  const op_embed *p = &pp->embed;
  const ir_tensor *ids = &t[n->in[0]], *word = &t[n->in[2]], *pos = &t[n->in[3]];
  if (ids->rank != 2 || word->rank != 2 || pos->rank != 2 || pos->dims[1] != word->dims[1])
    return hd_error(HD_ERR_INVALID_ARG, "EmbedLayerNormalization: ids [B, S] and tables [rows, H] expected");
  int64_t b = ids->dims[0], s = ids->dims[1], h = word->dims[1];
  if (p->in_position_ids < 0 && s > pos->dims[0])
    return hd_error(HD_ERR_INVALID_ARG, "EmbedLayerNormalization: %lld tokens for %lld positions", (long long)s,
                    (long long)pos->dims[0]);
  int same[] = {p->in_segment_ids, p->in_mask};
  for (int i = 0; i < 2; i++)
    if (same[i] >= 0 && (t[n->in[same[i]]].rank != 2 || t[n->in[same[i]]].dims[0] != b || t[n->in[same[i]]].dims[1] != s))
      return hd_error(HD_ERR_INVALID_ARG, "EmbedLayerNormalization: input %d is not [B, S]", same[i]);
  if (p->in_position_ids >= 0) {
    const ir_tensor *pi = &t[n->in[p->in_position_ids]];
    if (pi->rank != 2 || (pi->dims[0] != b && pi->dims[0] != 1) || pi->dims[1] != s)
      return hd_error(HD_ERR_INVALID_ARG, "EmbedLayerNormalization: position_ids not [B or 1, S]");
  }
  int vecs[] = {5, 6};
  for (int i = 0; i < 2; i++)
    if (ir_numel(t[n->in[vecs[i]]].rank, t[n->in[vecs[i]]].dims) != h)
      return hd_error(HD_ERR_INVALID_ARG, "EmbedLayerNormalization: gamma/beta of another width");
  if (p->in_segment >= 0 && (t[n->in[p->in_segment]].rank != 2 || t[n->in[p->in_segment]].dims[1] != h))
    return hd_error(HD_ERR_INVALID_ARG, "EmbedLayerNormalization: segment table of another width");
  int outs[] = {0, p->out_sum};
  for (int i = 0; i < 2; i++) {
    if (outs[i] < 0) continue;
    ir_tensor *y = &t[n->out[outs[i]]];
    y->rank = 3, y->dims[0] = b, y->dims[1] = s, y->dims[2] = h;
  }
  if (p->out_mask_index >= 0) t[n->out[p->out_mask_index]].rank = 1, t[n->out[p->out_mask_index]].dims[0] = b;
  return NULL;
}

OP_DEF(embed, EMBED_LAYER_NORMALIZATION, "EmbedLayerNormalization", 1, 1, .domain = "com.microsoft")
