/* Rotary position embeddings, fp32/fp16/bf16:
 *   RotaryEmbedding (ai.onnx 23)  X, cos_cache, sin_cache, position_ids? -> Y
 *       X [B, heads, S, D] or [B, S, heads * D] (num_heads); without
 *       position_ids the caches are per token, [B, S, R/2].
 *   com.microsoft RotaryEmbedding (1)  input, position_ids, cos_cache,
 *       sin_cache -> output; input [B, S, hidden] or [B, heads, S, D];
 *       position_ids [B, S] or [1] (a start position); caches [max_pos, R/2].
 * Rotary dims past R pass through unchanged. */
#include <string.h>

#include "ops/op_util.h"

static hd_status *rotary_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_rotary *p = &OP_P(n)->rotary;
  memset(p, 0, sizeof *p);
  int ms = n->kind == OP_MS_ROTARY_EMBEDDING;
  p->in_pos = ms ? 1 : op_input(n, 3) != IR_NONE ? 3 : -1;
  p->in_cos = ms ? 2 : 1;
  p->in_sin = ms ? 3 : 2;
  if (op_input(n, 0) == IR_NONE || op_input(n, p->in_cos) == IR_NONE || op_input(n, p->in_sin) == IR_NONE ||
      (ms && op_input(n, 1) == IR_NONE) || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "%s is missing an input or its output", n->op_type);
  int64_t v;
  HD_TRY(op_attr_flag(a, "interleaved", &p->interleaved));
  HD_TRY(op_attr_int(a, "num_heads", 0, &v));
  if (v < 0 || v >= (1 << 20)) return hd_error(HD_ERR_INVALID_ARG, "%s num_heads %lld", n->op_type, (long long)v);
  p->num_heads = (int)v;
  HD_TRY(op_attr_int(a, "rotary_embedding_dim", 0, &v));
  if (v < 0 || v > (1 << 20) || v % 2) return hd_error(HD_ERR_INVALID_ARG, "%s rotary_embedding_dim %lld", n->op_type, (long long)v);
  p->rotary_dim = (int)v;
  if (ms && p->rotary_dim > 0 && p->num_heads == 0)
    return hd_error(HD_ERR_INVALID_ARG, "RotaryEmbedding: rotary_embedding_dim needs num_heads");
  if (ms) {
    float scale;
    HD_TRY(op_attr_float(a, "scale", 1.0f, &scale));
    if (scale != 1.0f) return hd_error(HD_ERR_NOT_SUPPORTED, "RotaryEmbedding with scale %g", (double)scale);
  }
  return NULL;
}

static hd_status *rotary_check(const ir_graph *g, const ir_node *n) {
  const op_rotary *p = &OP_P(n)->rotary;
  const ir_value *x = &g->values[n->in[0]];
  if (!op_is_float(x->dtype))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", n->op_type, hd_dtype_name(x->dtype));
  if (x->rank != 3 && x->rank != 4) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of rank %d", n->op_type, x->rank);
  if (g->values[n->in[p->in_cos]].dtype != x->dtype || g->values[n->in[p->in_sin]].dtype != x->dtype ||
      g->values[n->out[0]].dtype != x->dtype)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s with inputs of mixed types", n->op_type);
  if (p->in_pos >= 0 && g->values[n->in[p->in_pos]].dtype != HD_DT_I64)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s position_ids of type %s", n->op_type,
                    hd_dtype_name(g->values[n->in[p->in_pos]].dtype));
  if (x->rank == 3 && p->num_heads == 0 && n->kind == OP_ROTARY_EMBEDDING)
    return hd_error(HD_ERR_INVALID_ARG, "RotaryEmbedding of a 3-D input needs num_heads");
  return NULL;
}

hd_status *op_rotary_layout(const ir_node *n, const op_rotary *p, const ir_tensor *t, op_rope_layout *l) {
  memset(l, 0, sizeof *l);
  const ir_tensor *x = &t[n->in[0]], *cs = &t[n->in[p->in_cos]], *sn = &t[n->in[p->in_sin]];
  int table = p->pos_form == OP_ROPE_POS_TABLE;
  if (cs->rank != (table ? 3 : 2) || sn->rank != cs->rank || memcmp(cs->dims, sn->dims, sizeof cs->dims[0] * (size_t)cs->rank))
    return hd_error(HD_ERR_INVALID_ARG, "%s: cos and sin caches of unexpected or different shapes", n->op_type);
  int64_t half = cs->dims[cs->rank - 1];
  l->batch = x->dims[0];
  if (x->rank == 4) { /* [B, heads, S, D] */
    l->heads = x->dims[1], l->seq = x->dims[2], l->head_dim = x->dims[3];
    l->st[2] = l->head_dim, l->st[1] = l->seq * l->head_dim, l->st[0] = l->heads * l->st[1];
  } else { /* [B, S, heads * D] */
    int64_t heads = p->num_heads;
    if (heads == 0) { /* com.microsoft: the head size is the cache's rotary dim */
      if (half <= 0 || x->dims[2] % (2 * half)) return hd_error(HD_ERR_INVALID_ARG, "%s: hidden size does not split into heads", n->op_type);
      heads = x->dims[2] / (2 * half);
    }
    if (heads <= 0 || x->dims[2] % heads) return hd_error(HD_ERR_INVALID_ARG, "%s: hidden size does not split into %lld heads", n->op_type, (long long)heads);
    l->heads = heads, l->seq = x->dims[1], l->head_dim = x->dims[2] / heads;
    l->st[1] = l->head_dim, l->st[2] = heads * l->head_dim, l->st[0] = l->seq * l->st[2];
  }
  l->rot_dim = p->rotary_dim > 0 ? p->rotary_dim : l->head_dim;
  if (l->rot_dim > l->head_dim || l->rot_dim % 2 || half != l->rot_dim / 2)
    return hd_error(HD_ERR_INVALID_ARG, "%s: caches of %lld columns for rotary dim %lld of head size %lld", n->op_type,
                    (long long)half, (long long)l->rot_dim, (long long)l->head_dim);
  if (table) {
    if (cs->dims[0] != l->batch || cs->dims[1] != l->seq)
      return hd_error(HD_ERR_INVALID_ARG, "%s: per-token caches of another batch or length", n->op_type);
    l->table_rows = l->batch * l->seq;
  } else {
    l->table_rows = cs->dims[0];
  }
  return NULL;
}

static hd_status *rotary_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  (void)g;
  op_rotary *p = &pp->rotary;
  const ir_tensor *x = &t[n->in[0]];
  p->pos_form = OP_ROPE_POS_TABLE;
  if (p->in_pos >= 0) {
    const ir_tensor *pos = &t[n->in[p->in_pos]];
    int64_t seq = x->rank == 4 ? x->dims[2] : x->dims[1];
    if (pos->rank == 2 && pos->dims[0] == x->dims[0] && pos->dims[1] == seq) p->pos_form = OP_ROPE_POS_IDS;
    else if (n->kind == OP_MS_ROTARY_EMBEDDING && ir_numel(pos->rank, pos->dims) == 1) p->pos_form = OP_ROPE_POS_OFFSET;
    else return hd_error(HD_ERR_INVALID_ARG, "%s: position_ids of unexpected shape", n->op_type);
  }
  op_rope_layout l;
  HD_TRY(op_rotary_layout(n, p, t, &l));
  ir_tensor *y = &t[n->out[0]];
  y->rank = x->rank;
  memcpy(y->dims, x->dims, sizeof x->dims);
  return NULL;
}

OP_DEF(rotary, ROTARY_EMBEDDING, "RotaryEmbedding", 23, 25)
OP_DEF(rotary, MS_ROTARY_EMBEDDING, "RotaryEmbedding", 1, 1, .domain = "com.microsoft")
