/* Attention: parameters and the strided layout every backend runs from
 * (ops/attention.c). */
#ifndef OPS_ATTENTION_H
#define OPS_ATTENTION_H

#include "ir/ir.h"
#include "ops/op_types.h"

OP_FAMILY(attention, op_attention, ATTENTION, MS_ATTENTION, MS_MULTI_HEAD_ATTENTION)

/* The head sizes every backend runs (the fusion makes no attention past
 * it; larger ones stay with the CPU EP). */
#define OP_ATTN_MAX_HEAD_DIM 256

/* How a mask input reads over (batch, head, query row, key):
 * BCAST numpy-broadcast to [B, H, S, L]; KEYS [B, L]; ROWS [B, S, L];
 * LENS [B]: keys at or past lens[b] are masked. */
typedef enum op_attn_mask_form {
  OP_ATTN_MASK_BCAST,
  OP_ATTN_MASK_KEYS,
  OP_ATTN_MASK_ROWS,
  OP_ATTN_MASK_LENS
} op_attn_mask_form;

/* One query row's scores and output, per (b, h, s):
 *   s_l = scale * q . k_l                        (k_l of kv head h / (H / Hkv))
 *   masked_l = (mask[b,h,s,l] <= 0, or > 0 when mask_invert) or (causal and l > s)
 *   s_l = masked_l ? (mask_add ? s_l + fill : fill) : s_l
 *     (under mask_add, ONNX Runtime's contrib kernels, the causal cut sets
 *     s_l to the lowest float instead, and applies only to more than one
 *     query row: op_attn_layout.causal)
 *   s_l += bias[b,h,s,l]                          (when in_bias)
 *   out = softmax(s) . v
 * Inputs are node positions (-1: absent): in_q, in_k, in_v (K given
 * transposed, [.., D, L], when k_transposed), in_mask (bool or integer:
 * true or above zero keeps, as ONNX Runtime's contrib kernels read their
 * int32 masks: 0 and negative values mask), in_bias (additive, the input dtype, numpy-broadcast).
 * Operands: 4-D [B, heads, S, D], or 3-D [B, S, heads * D] (split into
 * q_heads / kv_heads) unless `batched` (the fused MatMul form: ranks 2 to
 * 4, the dims before the last two are batch dims, all equal). pack > 1:
 * Q, K and V are slots 0, 1, 2 of one 3-D input's last dim (a packed QKV
 * projection). perm[0] >= 0: the operand is the Transpose by perm of the
 * input (out_perm: the output, written through the Transpose of it). */
typedef struct op_attention {
  int in_q, in_k, in_v, in_mask, in_bias;
  int q_heads, kv_heads;
  int batched, k_transposed;
  int pack;
  float scale; /* 0: 1 / sqrt(head dim) */
  int causal;  /* upper-left aligned: key l masked for row s when l > s */
  op_attn_mask_form mask_form;
  int mask_add;
  int mask_invert; /* the mask's true (above zero) entries mask, the others keep */
  int empty_zero;  /* a row with every score -inf gives zeros (ONNX Attention), not NaN (Softmax) */
  float fill;
  int8_t q_perm[4], k_perm[4], v_perm[4], out_perm[4];
  /* com.microsoft Attention before lowering: the projection inputs */
  int in_weights, in_proj_bias;
} op_attention;

/* An attention at a plan's shapes: sizes, and element offsets and strides
 * of every operand over (batch, head, row, col). */
typedef struct op_attn_layout {
  int64_t batch, heads, kv_heads, seq, kv_len, head_dim, v_dim;
  int64_t q_off, k_off, v_off;
  int64_t q_st[4], k_st[4], v_st[4], o_st[4]; /* k: (b, h, l, d) whatever its input layout */
  int64_t mask_st[4], bias_st[4];             /* (b, h, s, l); LENS: mask_st[0] only */
  float scale;
  int causal; /* the causal cut at these shapes (op_attention.causal; under mask_add not for one query row) */
} op_attn_layout;

/* The layout of attention node n (parameters p, resolved by infer) over
 * the plan's tensors t. */
hd_status *op_attention_layout(const ir_node *n, const op_attention *p, const ir_tensor *t, op_attn_layout *l);

/* Rewrites a com.microsoft Attention node (MS_ATTENTION) into a MatMul of
 * its packed projection (+ bias) and an ATTENTION reading the packed QKV:
 * a new node and value before node i; node i becomes the ATTENTION. */
hd_status *op_attention_lower(ir_graph *g, int i);

#endif
