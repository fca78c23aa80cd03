/* com.microsoft GroupQueryAttention: parameters and layout (ops/gqa.c). */
#ifndef OPS_GQA_H
#define OPS_GQA_H

#include "ir/ir.h"
#include "ops/op_types.h"

OP_FAMILY(gqa, op_gqa, MS_GROUP_QUERY_ATTENTION)

/* The decoder attention of ONNX Runtime GenAI's models, per batch b with
 * total_b = seqlens_k[b] + 1 keys and past_b = first_prompt ? 0 : total_b - S:
 *   1. Q and K rotated (ops/rotary.h) at position past_b + s (1 when that
 *      is past total_b), when do_rotary;
 *   2. present[b, kvh, past_b + s] = K/V of token s; when present is not
 *      past's buffer, present rows below past_b are past's, the rest zeros;
 *   3. each query row s attends keys l < total_b with l <= past_b + s (and
 *      l > past_b + s - window when local_window_size >= 0, the window
 *      of ONNX Runtime 1.29/1.30's CPU kernel): scale * q.k,
 *      softcap * tanh(x / softcap) when softcap > 0, softmax, times V.
 * Query head h reads KV head h / (heads / kv_heads). Output [B, S, heads * D].
 * first_prompt: S equals total_sequence_length (a value known when the plan
 * is built); otherwise S is 1 (decode) or the batch is 1. */
typedef struct op_gqa {
  int heads, kv_heads;
  float scale; /* 0: 1 / sqrt(head size) */
  float softcap;
  int window; /* local_window_size; -1: none */
  int rotary, interleaved;
  int packed;   /* key and value absent: query is [B, S, (heads + 2 kv_heads) * D] */
  int has_past; /* past_key and past_value given */
  /* resolved by infer */
  int first_prompt;
  int64_t total;
} op_gqa;

typedef struct op_gqa_dims {
  int64_t batch, seq, head_dim, past_len, present_len;
  int64_t rot_dim, table_rows; /* rot_dim 0: no rotary */
  float scale;
} op_gqa_dims;

hd_status *op_gqa_layout(const ir_node *n, const op_gqa *p, const ir_tensor *t, op_gqa_dims *l);

#endif
