/* com.microsoft GroupQueryAttention (1), fp32/fp16:
 *   query, key?, value?, past_key?, past_value?, seqlens_k, total_sequence_length,
 *   cos_cache?, sin_cache? -> output, present_key, present_value
 * query [B, S, heads * D] with key/value [B, S, kv_heads * D], or Q/K/V packed
 * in query; past and present [B, kv_heads, len, D]; seqlens_k int32 [B];
 * total_sequence_length an int32 scalar whose value must be known when the
 * plan is built (in GenAI's models it comes from the attention mask's
 * shape); caches [max_pos, R/2]. present's length is max(total, past's).
 * When past and present are one buffer (GenAI's past_present_share_buffer)
 * the new rows are appended in place. Not run here (left to the CPU EP):
 * position_ids, attention_bias, head_sink inputs; output_qk; smooth_softmax. */
#include <math.h>
#include <string.h>

#include "ops/attention.h"
#include "ops/op_util.h"

static hd_status *gqa_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_gqa *p = &OP_P(n)->gqa;
  memset(p, 0, sizeof *p);
  int64_t v;
  if (op_input(n, 0) == IR_NONE || op_input(n, 5) == IR_NONE || op_input(n, 6) == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention is missing an input or its output");
  if (!op_has_output(n, 1) || !op_has_output(n, 2))
    return hd_error(HD_ERR_NOT_SUPPORTED, "GroupQueryAttention without present_key/present_value");
  for (int k = 9; k < n->nin; k++)
    if (op_input(n, k) != IR_NONE)
      return hd_error(HD_ERR_NOT_SUPPORTED, "GroupQueryAttention with input %d (position_ids, attention_bias or head_sink)", k);
  for (int k = 3; k < n->nout; k++)
    if (op_has_output(n, k)) return hd_error(HD_ERR_NOT_SUPPORTED, "GroupQueryAttention with output_qk");
  p->packed = op_input(n, 1) == IR_NONE;
  if (p->packed != (op_input(n, 2) == IR_NONE))
    return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: key and value go together");
  p->has_past = op_input(n, 3) != IR_NONE;
  if (p->has_past != (op_input(n, 4) != IR_NONE))
    return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: past_key and past_value go together");
  HD_TRY(op_attr_int(a, "num_heads", 0, &v));
  if (v <= 0 || v >= (1 << 20)) return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention num_heads %lld", (long long)v);
  p->heads = (int)v;
  HD_TRY(op_attr_int(a, "kv_num_heads", 0, &v));
  if (v <= 0 || v > p->heads || p->heads % v)
    return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention kv_num_heads %lld for %d heads", (long long)v, p->heads);
  p->kv_heads = (int)v;
  HD_TRY(op_attr_float(a, "scale", 0.0f, &p->scale));
  HD_TRY(op_attr_float(a, "softcap", 0.0f, &p->softcap));
  if (!isfinite(p->scale) || p->scale < 0.0f || !isfinite(p->softcap) || p->softcap < 0.0f)
    return hd_error(HD_ERR_NOT_SUPPORTED, "GroupQueryAttention with scale %g, softcap %g", (double)p->scale, (double)p->softcap);
  HD_TRY(op_attr_int(a, "local_window_size", -1, &v));
  if (v < -1 || v >= ((int64_t)1 << 30)) return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention local_window_size %lld", (long long)v);
  p->window = v > 0 ? (int)v : -1; /* 0 and -1: no window, as ORT reads them */
  HD_TRY(op_attr_flag(a, "do_rotary", &p->rotary));
  HD_TRY(op_attr_flag(a, "rotary_interleaved", &p->interleaved));
  HD_TRY(op_attr_int(a, "smooth_softmax", 0, &v)); /* ORT's schema default is -1: off */
  if (v > 0) return hd_error(HD_ERR_NOT_SUPPORTED, "GroupQueryAttention with smooth_softmax");
  HD_TRY(op_attr_int(a, "qk_output", 0, &v)); /* -1 (none) by default */
  if (v > 0) return hd_error(HD_ERR_NOT_SUPPORTED, "GroupQueryAttention with qk_output");
  if (p->rotary && (op_input(n, 7) == IR_NONE || op_input(n, 8) == IR_NONE))
    return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: do_rotary needs cos_cache and sin_cache");
  return NULL;
}

static hd_status *gqa_check(const ir_graph *g, const ir_node *n) {
  const op_gqa *p = &OP_P(n)->gqa;
  int dt = g->values[n->in[0]].dtype;
  if (!op_is_float(dt)) return hd_error(HD_ERR_NOT_SUPPORTED, "GroupQueryAttention of type %s", hd_dtype_name(dt));
  for (int k = 1; k < n->nin && k < 9; k++) {
    if (op_input(n, k) == IR_NONE) continue;
    int want = k == 5 || k == 6 ? HD_DT_I32 : dt;
    if (g->values[n->in[k]].dtype != want)
      return hd_error(HD_ERR_NOT_SUPPORTED, "GroupQueryAttention input %d of type %s", k, hd_dtype_name(g->values[n->in[k]].dtype));
  }
  for (int k = 0; k < 3; k++)
    if (g->values[n->out[k]].dtype != dt) return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention output %d of another type", k);
  if (g->values[n->in[0]].rank != 3) return hd_error(HD_ERR_NOT_SUPPORTED, "GroupQueryAttention query of rank %d", g->values[n->in[0]].rank);
  (void)p;
  return NULL;
}

hd_status *op_gqa_layout(const ir_node *n, const op_gqa *p, const ir_tensor *t, op_gqa_dims *l) {
  memset(l, 0, sizeof *l);
  const ir_tensor *q = &t[n->in[0]];
  if (q->rank != 3) return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: query of rank %d", q->rank);
  l->batch = q->dims[0], l->seq = q->dims[1];
  int64_t per = p->packed ? (int64_t)p->heads + 2 * p->kv_heads : p->heads;
  if (q->dims[2] % per) return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: query width %lld for %lld heads", (long long)q->dims[2], (long long)per);
  l->head_dim = q->dims[2] / per;
  if (l->head_dim < 1 || l->head_dim > OP_ATTN_MAX_HEAD_DIM)
    return hd_error(HD_ERR_NOT_SUPPORTED, "GroupQueryAttention of head size %lld", (long long)l->head_dim);
  if (!p->packed)
    for (int k = 1; k <= 2; k++) {
      const ir_tensor *x = &t[n->in[k]];
      if (x->rank != 3 || x->dims[0] != l->batch || x->dims[1] != l->seq || x->dims[2] != p->kv_heads * l->head_dim)
        return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: %s of unexpected shape", k == 1 ? "key" : "value");
    }
  if (p->has_past) {
    const ir_tensor *pk = &t[n->in[3]], *pv = &t[n->in[4]];
    if (pk->rank != 4 || pv->rank != 4 || memcmp(pk->dims, pv->dims, 4 * sizeof pk->dims[0]) || pk->dims[0] != l->batch ||
        pk->dims[1] != p->kv_heads || pk->dims[3] != l->head_dim)
      return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: past_key/past_value not [B, kv_heads, len, D]");
    l->past_len = pk->dims[2];
  }
  const ir_tensor *sk = &t[n->in[5]];
  if (ir_numel(sk->rank, sk->dims) != l->batch) return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: seqlens_k of another batch");
  l->present_len = p->total > l->past_len ? p->total : l->past_len;
  if (p->rotary) {
    const ir_tensor *cs = &t[n->in[7]], *sn = &t[n->in[8]];
    if (cs->rank != 2 || sn->rank != 2 || cs->dims[0] != sn->dims[0] || cs->dims[1] != sn->dims[1] ||
        2 * cs->dims[1] > l->head_dim || cs->dims[1] < 1)
      return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: cos/sin caches not [max_pos, <= D/2]");
    if (cs->dims[0] < p->total) return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: caches shorter than the sequence");
    l->rot_dim = 2 * cs->dims[1], l->table_rows = cs->dims[0];
  }
  l->scale = p->scale > 0.0f ? p->scale : (float)(1.0 / sqrt((double)l->head_dim));
  return NULL;
}

static hd_status *gqa_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  op_gqa *p = &pp->gqa;
  int64_t total;
  int cnt;
  HD_TRY(op_value_ints(g, t, n->in[6], &total, 1, &cnt));
  if (cnt != 1 || total < 1) return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: total_sequence_length of %d values", cnt);
  p->total = total;
  const ir_tensor *q = &t[n->in[0]];
  if (q->rank != 3) return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: query of rank %d", q->rank);
  p->first_prompt = q->dims[1] == total;
  if (!p->first_prompt && q->dims[1] != 1 && q->dims[0] != 1)
    return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: a continued prompt needs batch 1");
  op_gqa_dims l;
  HD_TRY(op_gqa_layout(n, p, t, &l));
  ir_tensor *y = &t[n->out[0]];
  y->rank = 3;
  y->dims[0] = l.batch, y->dims[1] = l.seq, y->dims[2] = (int64_t)p->heads * l.head_dim;
  for (int k = 1; k <= 2; k++) {
    ir_tensor *pr = &t[n->out[k]];
    pr->rank = 4;
    pr->dims[0] = l.batch, pr->dims[1] = p->kv_heads, pr->dims[2] = l.present_len, pr->dims[3] = l.head_dim;
  }
  return NULL;
}

OP_DEF(gqa, MS_GROUP_QUERY_ATTENTION, "GroupQueryAttention", 1, 1, .domain = "com.microsoft", .value_inputs = 1u << 6)
