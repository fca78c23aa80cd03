/* EmbedLayerNormalization: parameters (ops/embed.c). */
#ifndef OPS_EMBED_H
#define OPS_EMBED_H

#include "ops/op_types.h"

OP_FAMILY(embed, op_embed, EMBED_LAYER_NORMALIZATION)

/* Per token (b, s), H = the tables' width:
 *   e = word[ids[b, s]] + position[pos_ids ? pos_ids[b or 0, s] : s]
 *       + segment[segment_ids[b, s]]        (segment when given)
 *   output = layer_norm(e) * gamma + beta   (statistics in fp32 or wider)
 *   embedding_sum = e;  mask_index[b] = count of mask[b, :] == 1 (0s without a mask)
 * Inputs and optional outputs are node positions, -1 when absent. */
typedef struct op_embed {
  float epsilon;
  int in_segment_ids, in_segment, in_mask, in_position_ids;
  int out_mask_index, out_sum;
} op_embed;

#endif
