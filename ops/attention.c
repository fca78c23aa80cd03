/* Attention, fp32/fp16/bf16 (scores, softmax and sums in fp32 or wider):
 *   Attention (ai.onnx 23, 24)  Q, K, V, attn_mask? -> Y
 *       Q/K/V 4-D [B, heads, S, D] or 3-D [B, S, heads * D]; attn_mask bool
 *       (false: -inf) or additive, broadcast to [B, q_heads, S, L];
 *       is_causal (upper-left), scale, q/kv_num_heads (GQA). No KV cache
 *       (past/present), softcap or qk_matmul_output yet.
 *   com.microsoft Attention (1)  input, weights, bias?, mask_index?, past?,
 *       attention_bias? -> output: lowered (op_def.lower) into a MatMul of the
 *       packed QKV projection and an Attention reading it in place. mask_index
 *       [B] (key lengths), [B, L] or [B, S, L] (0 masks: + mask_filter_value),
 *       unidirectional; no past/present, rotary or unequal qkv_hidden_sizes.
 *   com.microsoft MultiHeadAttention (1)  query, key, value (3-D [B, S|L,
 *       heads * D]), bias?, key_padding_mask?, attention_bias? -> output:
 *       masks as Attention's; no packed QKV/KV, input bias or KV cache yet.
 * The fusion pass (plan/plan_fuse_attention.c) also makes ATTENTION nodes
 * from MatMul -> scale -> mask -> Softmax -> MatMul, in the `batched` form. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op_util.h"

static void no_perm(int8_t *perm) { memset(perm, -1, 4); }

static hd_status *attention_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  op_attention *p = &OP_P(n)->attention;
  memset(p, 0, sizeof *p);
  no_perm(p->q_perm), no_perm(p->k_perm), no_perm(p->v_perm), no_perm(p->out_perm);
  p->in_mask = p->in_bias = p->in_weights = p->in_proj_bias = -1;
  p->pack = 1;
  int64_t v;
  if (!op_has_output(n, 0) || op_input(n, 0) == IR_NONE || op_input(n, 1) == IR_NONE ||
      (n->kind != OP_MS_ATTENTION && op_input(n, 2) == IR_NONE))
    return hd_error(HD_ERR_INVALID_ARG, "%s is missing an input or its output", n->op_type);
  HD_TRY(op_attr_float(a, "scale", 0.0f, &p->scale));
  if (!isfinite(p->scale) || p->scale < 0.0f)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s with scale %g", n->op_type, (double)p->scale);
  if (n->kind == OP_ATTENTION) {
    p->in_q = 0, p->in_k = 1, p->in_v = 2;
    p->fill = -INFINITY; /* causal and bool-masked scores */
    p->empty_zero = 1;
    for (int k = 4; k < n->nin; k++)
      if (op_input(n, k) != IR_NONE)
        return hd_error(HD_ERR_NOT_SUPPORTED, "Attention with %s", k < 6 ? "a KV cache (past_key/past_value)" : "nonpad_kv_seqlen");
    for (int k = 1; k < n->nout; k++)
      if (op_has_output(n, k)) return hd_error(HD_ERR_NOT_SUPPORTED, "Attention with output %d (present or qk)", k);
    HD_TRY(op_attr_int(a, "is_causal", 0, &v));
    p->causal = v != 0;
    HD_TRY(op_attr_int(a, "q_num_heads", 0, &v));
    p->q_heads = (int)(v > 0 && v < (1 << 20) ? v : 0);
    HD_TRY(op_attr_int(a, "kv_num_heads", 0, &v));
    p->kv_heads = (int)(v > 0 && v < (1 << 20) ? v : 0);
    float softcap;
    HD_TRY(op_attr_float(a, "softcap", 0.0f, &softcap));
    if (softcap != 0.0f) return hd_error(HD_ERR_NOT_SUPPORTED, "Attention with softcap");
    if (op_input(n, 3) != IR_NONE) {
      if (g->values[n->in[3]].dtype == HD_DT_BOOL) p->in_mask = 3;
      else p->in_bias = 3;
    }
    return NULL;
  }
  if (n->kind == OP_MS_MULTI_HEAD_ATTENTION) {
    p->in_q = 0, p->in_k = 1, p->in_v = 2;
    if (op_input(n, 3) != IR_NONE) return hd_error(HD_ERR_NOT_SUPPORTED, "MultiHeadAttention with an input bias");
    for (int k = 6; k < n->nin; k++)
      if (op_input(n, k) != IR_NONE) return hd_error(HD_ERR_NOT_SUPPORTED, "MultiHeadAttention with a KV cache");
    for (int k = 1; k < n->nout; k++)
      if (op_has_output(n, k)) return hd_error(HD_ERR_NOT_SUPPORTED, "MultiHeadAttention with output %d", k);
    HD_TRY(op_attr_int(a, "num_heads", 0, &v));
    if (v <= 0 || v >= (1 << 20)) return hd_error(HD_ERR_INVALID_ARG, "MultiHeadAttention num_heads %lld", (long long)v);
    p->q_heads = p->kv_heads = (int)v;
    HD_TRY(op_attr_int(a, "unidirectional", 0, &v));
    p->causal = v != 0;
    HD_TRY(op_attr_float(a, "mask_filter_value", -10000.0f, &p->fill));
    p->mask_add = 1;
    if (op_input(n, 4) != IR_NONE) {
      int r = g->values[n->in[4]].rank;
      if (r < 1 || r > 3) return hd_error(HD_ERR_NOT_SUPPORTED, "MultiHeadAttention key_padding_mask of rank %d", r);
      p->in_mask = 4;
      p->mask_form = r == 1 ? OP_ATTN_MASK_LENS : r == 2 ? OP_ATTN_MASK_KEYS : OP_ATTN_MASK_ROWS;
    }
    if (op_input(n, 5) != IR_NONE) p->in_bias = 5;
    return NULL;
  }
  /* com.microsoft Attention */
  p->in_q = p->in_k = p->in_v = 0;
  p->in_weights = 1;
  p->in_proj_bias = op_input(n, 2) != IR_NONE ? 2 : -1;
  p->pack = 3;
  if (op_input(n, 4) != IR_NONE || op_input(n, 6) != IR_NONE || op_has_output(n, 1))
    return hd_error(HD_ERR_NOT_SUPPORTED, "com.microsoft Attention with a KV cache (past/present)");
  HD_TRY(op_attr_int(a, "num_heads", 0, &v));
  if (v <= 0 || v >= (1 << 20)) return hd_error(HD_ERR_INVALID_ARG, "Attention num_heads %lld", (long long)v);
  p->q_heads = p->kv_heads = (int)v;
  HD_TRY(op_attr_int(a, "unidirectional", 0, &v));
  p->causal = v != 0;
  HD_TRY(op_attr_int(a, "do_rotary", 0, &v));
  if (v) return hd_error(HD_ERR_NOT_SUPPORTED, "com.microsoft Attention with do_rotary");
  int64_t sizes[3];
  int found = 0, cnt = 0;
  HD_TRY(a->get_ints(a->ctx, "qkv_hidden_sizes", sizes, 3, &cnt, &found));
  if (found && (cnt != 3 || sizes[0] != sizes[1] || sizes[1] != sizes[2]))
    return hd_error(HD_ERR_NOT_SUPPORTED, "com.microsoft Attention with unequal qkv_hidden_sizes");
  HD_TRY(op_attr_float(a, "mask_filter_value", -10000.0f, &p->fill));
  p->mask_add = 1;
  if (op_input(n, 3) != IR_NONE) {
    p->in_mask = 3;
    int r = g->values[n->in[3]].rank;
    p->mask_form = r == 1 ? OP_ATTN_MASK_LENS : r == 2 ? OP_ATTN_MASK_KEYS : OP_ATTN_MASK_ROWS;
    if (r < 1 || r > 3) return hd_error(HD_ERR_NOT_SUPPORTED, "com.microsoft Attention mask_index of rank %d", r);
  }
  if (op_input(n, 5) != IR_NONE) p->in_bias = 5;
  return NULL;
}

static int in_at(const ir_node *n, int k) { return k < 0 ? IR_NONE : op_input(n, k); }

static hd_status *attention_check(const ir_graph *g, const ir_node *n) {
  const op_attention *p = &OP_P(n)->attention;
  const ir_value *q = &g->values[n->in[p->in_q]];
  int dt = q->dtype;
  if (!op_is_float(dt)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", n->op_type, hd_dtype_name(dt));
  int ops[] = {p->in_k, p->in_v, p->in_bias, p->in_weights, p->in_proj_bias};
  for (int i = 0; i < 5; i++)
    if (in_at(n, ops[i]) != IR_NONE && g->values[n->in[ops[i]]].dtype != dt)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s with inputs of mixed types", n->op_type);
  if (g->values[n->out[0]].dtype != dt) return hd_error(HD_ERR_INVALID_ARG, "%s output of another type", n->op_type);
  if (in_at(n, p->in_mask) != IR_NONE) {
    int mdt = g->values[n->in[p->in_mask]].dtype;
    if (mdt != HD_DT_BOOL && mdt != HD_DT_I32 && mdt != HD_DT_I64)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s mask of type %s", n->op_type, hd_dtype_name(mdt));
  }
  if (n->kind == OP_MS_ATTENTION) {
    const ir_value *w = &g->values[n->in[p->in_weights]];
    if (q->rank != 3) return hd_error(HD_ERR_NOT_SUPPORTED, "com.microsoft Attention input of rank %d", q->rank);
    if (!w->is_const || w->rank != 2)
      return hd_error(HD_ERR_NOT_SUPPORTED, "com.microsoft Attention with non-constant or non-2-D weights");
    if (w->dims[1] >= 0 && w->dims[1] % (3 * (int64_t)p->q_heads) != 0)
      return hd_error(HD_ERR_NOT_SUPPORTED, "com.microsoft Attention weights of %lld columns for %d heads",
                      (long long)w->dims[1], p->q_heads);
    if (p->in_proj_bias >= 0 && (!g->values[n->in[p->in_proj_bias]].is_const || g->values[n->in[p->in_proj_bias]].rank != 1))
      return hd_error(HD_ERR_NOT_SUPPORTED, "com.microsoft Attention with a non-constant bias");
    if (p->in_mask >= 0 && g->values[n->in[p->in_mask]].dtype != HD_DT_I32)
      return hd_error(HD_ERR_INVALID_ARG, "com.microsoft Attention mask_index is not int32");
    if (w->dims[1] > 3 * (int64_t)p->q_heads * OP_ATTN_MAX_HEAD_DIM)
      return hd_error(HD_ERR_NOT_SUPPORTED, "com.microsoft Attention of head size over %d", OP_ATTN_MAX_HEAD_DIM);
    return NULL;
  }
  int r = q->rank;
  if (n->kind == OP_MS_MULTI_HEAD_ATTENTION && r != 3)
    return hd_error(HD_ERR_NOT_SUPPORTED, "MultiHeadAttention with packed or 4-D inputs");
  if (p->in_mask >= 0 && n->kind == OP_MS_MULTI_HEAD_ATTENTION && g->values[n->in[p->in_mask]].dtype != HD_DT_I32)
    return hd_error(HD_ERR_INVALID_ARG, "MultiHeadAttention key_padding_mask is not int32");
  if (p->batched ? (r < 2 || r > 4) : (r != 3 && r != 4))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s of rank %d", n->op_type, r);
  if (g->values[n->in[p->in_k]].rank != r || g->values[n->in[p->in_v]].rank != r)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s with Q, K and V of different ranks", n->op_type);
  if (!p->batched && r == 3 && (p->q_heads <= 0 || p->kv_heads <= 0))
    return hd_error(HD_ERR_INVALID_ARG, "%s of 3-D inputs needs q_num_heads and kv_num_heads", n->op_type);
  const ir_value *v = &g->values[n->in[p->in_v]];
  int64_t qd = q->dims[r - 1], vd = v->dims[r - 1];
  if (!p->batched && r == 3) qd = qd >= 0 ? qd / p->q_heads : -1, vd = vd >= 0 ? vd / p->kv_heads : -1;
  if (qd > OP_ATTN_MAX_HEAD_DIM || vd > OP_ATTN_MAX_HEAD_DIM)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s of head size over %d", n->op_type, OP_ATTN_MAX_HEAD_DIM);
  int mr = in_at(n, p->in_mask) != IR_NONE ? g->values[n->in[p->in_mask]].rank : 0;
  int br = in_at(n, p->in_bias) != IR_NONE ? g->values[n->in[p->in_bias]].rank : 0;
  if (mr > 4 || br > 4) return hd_error(HD_ERR_NOT_SUPPORTED, "%s mask of rank over 4", n->op_type);
  return NULL;
}

/* ---- layout ---- */

/* Operand x (perm: a Transpose of it) as (batch, heads, rows, cols). */
typedef struct attn_operand {
  int64_t dims[4], st[4], off;
} attn_operand;

static hd_status *operand(const op_attention *p, const ir_tensor *x, const int8_t *perm, int heads, int slot,
                          attn_operand *o, const char *what) {
  int r = x->rank;
  int64_t d[4], s[4], cs[IR_MAX_RANK];
  ir_tensor_strides(x, cs); /* a strided alias: a Split's column range, a Transpose, read in place */
  for (int i = 0; i < r; i++) {
    int src = perm[0] >= 0 ? perm[i] : i;
    if (src < 0 || src >= r) return hd_error(HD_ERR_INTERNAL, "attention: %s perm", what);
    d[i] = x->dims[src];
    s[i] = cs[src];
  }
  memset(o, 0, sizeof *o);
  if (p->batched || r == 4) {
    if (r < 2 || r > 4) return hd_error(HD_ERR_INTERNAL, "attention: %s of rank %d", what, r);
    o->dims[0] = r == 4 ? d[0] : 1, o->st[0] = r == 4 ? s[0] : 0;
    o->dims[1] = r >= 3 ? d[r - 3] : 1, o->st[1] = r >= 3 ? s[r - 3] : 0;
    o->dims[2] = d[r - 2], o->st[2] = s[r - 2];
    o->dims[3] = d[r - 1], o->st[3] = s[r - 1];
    return NULL;
  }
  if (r != 3) return hd_error(HD_ERR_INTERNAL, "attention: %s of rank %d", what, r);
  int64_t w = d[2], per = (int64_t)p->pack * heads;
  if (heads <= 0 || w % per != 0)
    return hd_error(HD_ERR_INVALID_ARG, "attention: %s width %lld does not split into %d x %d heads", what,
                    (long long)w, p->pack, heads);
  int64_t hd = w / per;
  o->dims[0] = d[0], o->st[0] = s[0];
  o->dims[1] = heads, o->st[1] = hd * s[2];
  o->dims[2] = d[1], o->st[2] = s[1];
  o->dims[3] = hd, o->st[3] = s[2];
  o->off = p->pack > 1 ? (int64_t)slot * heads * hd * s[2] : 0;
  return NULL;
}

/* Strides of a mask or bias tensor over (b, h, s, l). */
static hd_status *mask_strides(op_attn_mask_form form, const ir_tensor *m, const op_attn_layout *l, int64_t *st,
                               const char *what) {
  int64_t want[4] = {l->batch, l->heads, l->seq, l->kv_len}, cs[4] = {0};
  int64_t acc = 1;
  for (int i = m->rank - 1; i >= 0; i--) cs[i] = acc, acc *= m->dims[i];
  memset(st, 0, 4 * sizeof *st);
  static const int8_t form_dims[][4] = {{0, 0, 0, 0}, {0, 3, -1, -1}, {0, 2, 3, -1}, {0, -1, -1, -1}};
  if (form == OP_ATTN_MASK_BCAST) {
    if (m->rank > 4) return hd_error(HD_ERR_NOT_SUPPORTED, "attention %s of rank %d", what, m->rank);
    for (int i = 0; i < m->rank; i++) {
      int d = 4 - m->rank + i;
      if (m->dims[i] != 1 && m->dims[i] != want[d])
        return hd_error(HD_ERR_INVALID_ARG, "attention %s dim %d is %lld for %lld", what, i, (long long)m->dims[i],
                        (long long)want[d]);
      st[d] = m->dims[i] == 1 || (m->uniform >> i & 1u) ? 0 : cs[i]; /* a repeated dim: read its first */
    }
    return NULL;
  }
  const int8_t *fd = form_dims[form];
  int rank = form == OP_ATTN_MASK_KEYS ? 2 : form == OP_ATTN_MASK_ROWS ? 3 : 1;
  if (m->rank != rank) return hd_error(HD_ERR_INVALID_ARG, "attention %s of rank %d", what, m->rank);
  for (int i = 0; i < rank; i++) {
    if (m->dims[i] != want[fd[i]])
      return hd_error(HD_ERR_NOT_SUPPORTED, "attention %s dim %d is %lld for %lld", what, i, (long long)m->dims[i],
                      (long long)want[fd[i]]);
    st[fd[i]] = cs[i];
  }
  return NULL;
}

hd_status *op_attention_layout(const ir_node *n, const op_attention *p, const ir_tensor *t, op_attn_layout *l) {
  memset(l, 0, sizeof *l);
  attn_operand q, k, v;
  HD_TRY(operand(p, &t[n->in[p->in_q]], p->q_perm, p->q_heads, 0, &q, "Q"));
  HD_TRY(operand(p, &t[n->in[p->in_k]], p->k_perm, p->kv_heads, 1, &k, "K"));
  HD_TRY(operand(p, &t[n->in[p->in_v]], p->v_perm, p->kv_heads, 2, &v, "V"));
  if (p->k_transposed) { /* K^T: rows are dims, cols keys */
    int64_t t2 = k.dims[2], s2 = k.st[2];
    k.dims[2] = k.dims[3], k.st[2] = k.st[3];
    k.dims[3] = t2, k.st[3] = s2;
  }
  l->batch = q.dims[0], l->heads = q.dims[1], l->seq = q.dims[2], l->head_dim = q.dims[3];
  l->kv_heads = k.dims[1], l->kv_len = k.dims[2], l->v_dim = v.dims[3];
  if (k.dims[0] != l->batch || v.dims[0] != l->batch || v.dims[1] != l->kv_heads || k.dims[3] != l->head_dim ||
      v.dims[2] != l->kv_len)
    return hd_error(HD_ERR_INVALID_ARG, "%s: Q [%lld,%lld,%lld,%lld], K [%lld,%lld,%lld,%lld], V [%lld,%lld,%lld,%lld] do not agree",
                    n->op_type, (long long)q.dims[0], (long long)q.dims[1], (long long)q.dims[2], (long long)q.dims[3],
                    (long long)k.dims[0], (long long)k.dims[1], (long long)k.dims[2], (long long)k.dims[3],
                    (long long)v.dims[0], (long long)v.dims[1], (long long)v.dims[2], (long long)v.dims[3]);
  if (l->kv_heads < 1 || l->heads % l->kv_heads != 0 || (p->batched && l->kv_heads != l->heads))
    return hd_error(HD_ERR_INVALID_ARG, "%s: %lld query heads over %lld KV heads", n->op_type, (long long)l->heads,
                    (long long)l->kv_heads);
  memcpy(l->q_st, q.st, sizeof q.st), memcpy(l->k_st, k.st, sizeof k.st), memcpy(l->v_st, v.st, sizeof v.st);
  l->q_off = q.off, l->k_off = k.off, l->v_off = v.off;
  l->scale = p->scale > 0.0f ? p->scale : (float)(1.0 / sqrt((double)(l->head_dim > 0 ? l->head_dim : 1)));
  l->causal = p->causal && !(p->mask_add && l->seq == 1);
  /* the output: Q's form with V's head size; through out_perm when set */
  const ir_tensor *y = &t[n->out[0]];
  int r = y->rank;
  int64_t ys[4], acc = 1, os[4];
  for (int i = r - 1; i >= 0; i--) ys[i] = acc, acc *= y->dims[i];
  for (int i = 0; i < r; i++) os[p->out_perm[0] >= 0 ? p->out_perm[i] : i] = ys[i];
  if (p->batched || r == 4) {
    l->o_st[0] = r == 4 ? os[0] : 0;
    l->o_st[1] = r >= 3 ? os[r - 3] : 0;
    l->o_st[2] = os[r - 2], l->o_st[3] = os[r - 1];
  } else {
    l->o_st[0] = os[0], l->o_st[1] = l->v_dim * os[2], l->o_st[2] = os[1], l->o_st[3] = os[2];
  }
  if (p->in_mask >= 0) HD_TRY(mask_strides(p->mask_form, &t[n->in[p->in_mask]], l, l->mask_st, "mask"));
  if (p->in_bias >= 0) HD_TRY(mask_strides(OP_ATTN_MASK_BCAST, &t[n->in[p->in_bias]], l, l->bias_st, "bias"));
  return NULL;
}

/* ---- infer ---- */

static hd_status *attention_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  (void)g;
  const op_attention *p = &pp->attention;
  ir_tensor *y = &t[n->out[0]];
  const ir_tensor *x = &t[n->in[0]];
  if (n->kind == OP_MS_ATTENTION) {
    const ir_tensor *w = &t[n->in[p->in_weights]];
    if (x->rank != 3 || w->rank != 2 || w->dims[0] != x->dims[2] || w->dims[1] % (3 * (int64_t)p->q_heads) != 0)
      return hd_error(HD_ERR_INVALID_ARG, "com.microsoft Attention: input and weights do not agree");
    if (p->in_proj_bias >= 0 && ir_numel(t[n->in[p->in_proj_bias]].rank, t[n->in[p->in_proj_bias]].dims) != w->dims[1])
      return hd_error(HD_ERR_INVALID_ARG, "com.microsoft Attention: bias of another width");
    y->rank = 3;
    y->dims[0] = x->dims[0], y->dims[1] = x->dims[1], y->dims[2] = w->dims[1] / 3;
    return NULL;
  }
  /* Q's logical dims (through q_perm), V's head size in the last place */
  const ir_tensor *vt = &t[n->in[p->in_v]];
  int r = x->rank;
  int64_t od[4];
  for (int i = 0; i < r; i++) od[i] = x->dims[p->q_perm[0] >= 0 ? p->q_perm[i] : i];
  int64_t vlast = vt->dims[p->v_perm[0] >= 0 ? p->v_perm[vt->rank - 1] : vt->rank - 1];
  if (!p->batched && r == 3) {
    if (p->kv_heads <= 0 || vlast % ((int64_t)p->pack * p->kv_heads) != 0)
      return hd_error(HD_ERR_INVALID_ARG, "%s: V width %lld for %d heads", n->op_type, (long long)vlast, p->kv_heads);
    od[2] = (int64_t)p->q_heads * (vlast / p->pack / p->kv_heads);
  } else {
    od[r - 1] = vlast;
  }
  y->rank = r;
  for (int i = 0; i < r; i++) y->dims[i] = od[i];
  if (p->out_perm[0] >= 0) /* y = transpose(logical output, out_perm) */
    for (int i = 0; i < r; i++) y->dims[i] = od[(int)p->out_perm[i]];
  op_attn_layout l;
  HD_TRY(op_attention_layout(n, p, t, &l));
  if (l.head_dim > OP_ATTN_MAX_HEAD_DIM || l.v_dim > OP_ATTN_MAX_HEAD_DIM)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s of head size over %d", n->op_type, OP_ATTN_MAX_HEAD_DIM);
  return NULL;
}

/* ---- lowering com.microsoft Attention ---- */

static hd_status *attention_lower(ir_graph *g, int i) {
  ir_node *n = &g->nodes[i];
  op_attention p = OP_P(n)->attention;
  int x = n->in[0], w = n->in[p.in_weights], bias = p.in_proj_bias >= 0 ? n->in[p.in_proj_bias] : IR_NONE;
  const ir_value *xv = &g->values[x];
  int64_t dims[3] = {xv->dims[0], xv->dims[1], g->values[w].dims[1]};
  char name[512];
  snprintf(name, sizeof name, "%s/qkv", n->name);
  int qkv;
  HD_TRY(ir_graph_add_value(g, name, xv->dtype, 3, dims, &qkv));
  int mm_in[3] = {x, w, bias};
  HD_TRY(ir_graph_insert_node(g, i, OP_MATMUL, name, "MatMul", 13, mm_in, bias != IR_NONE ? 3 : 2, &qkv, 1));
  ir_node *mm = &g->nodes[i];
  op_gemm *gm = &OP_P(mm)->gemm;
  memset(gm, 0, sizeof *gm);
  gm->alpha = gm->beta = 1.0f;
  gm->is_matmul = 1;
  gm->has_c = bias != IR_NONE;
  n = &g->nodes[i + 1];
  int att_in[5] = {qkv, qkv, qkv, p.in_mask >= 0 ? n->in[p.in_mask] : IR_NONE, p.in_bias >= 0 ? n->in[p.in_bias] : IR_NONE};
  int *in = realloc(n->in, sizeof att_in);
  if (!in) return hd_error(HD_ERR_OUT_OF_MEMORY, "lowering Attention: out of host memory");
  memcpy(in, att_in, sizeof att_in);
  n->in = in;
  n->nin = 5;
  n->kind = OP_ATTENTION;
  p.in_q = 0, p.in_k = 1, p.in_v = 2;
  p.in_mask = att_in[3] != IR_NONE ? 3 : -1;
  p.in_bias = att_in[4] != IR_NONE ? 4 : -1;
  p.in_weights = p.in_proj_bias = -1;
  OP_P(n)->attention = p;
  return NULL;
}

OP_DEF(attention, ATTENTION, "Attention", 23, 24)
OP_DEF(attention, MS_MULTI_HEAD_ATTENTION, "MultiHeadAttention", 1, 1, .domain = "com.microsoft")
OP_DEF(attention, MS_ATTENTION, "Attention", 1, 1, .domain = "com.microsoft", .lower = attention_lower)
