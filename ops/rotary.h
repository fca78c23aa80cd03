/* Rotary position embeddings: parameters and layout (ops/rotary.c). */
#ifndef OPS_ROTARY_H
#define OPS_ROTARY_H

#include "ir/ir.h"
#include "ops/op_types.h"

OP_FAMILY(rotary, op_rotary, ROTARY_EMBEDDING, MS_ROTARY_EMBEDDING)

/* Where a token's cos/sin row comes from:
 * TABLE  no position ids: cos/sin are [B, S, R/2], row b * S + s;
 * IDS    position_ids [B, S]: row ids[b, s] of a [max_pos, R/2] table;
 * OFFSET position_ids [1] (com.microsoft): row ids[0] + s. */
typedef enum op_rope_pos { OP_ROPE_POS_TABLE, OP_ROPE_POS_IDS, OP_ROPE_POS_OFFSET } op_rope_pos;

/* Per (b, head n, token s), x the head's row of head_dim elements and R the
 * rotary dim (half = R / 2), c/s the token's cos/sin row:
 *   non-interleaved, i < half:  y[i] = x[i] c[i] - x[i + half] s[i]
 *                               y[i + half] = x[i + half] c[i] + x[i] s[i]
 *   interleaved:                y[2i] = x[2i] c[i] - x[2i + 1] s[i]
 *                               y[2i + 1] = x[2i + 1] c[i] + x[2i] s[i]
 *   y[i] = x[i] for R <= i < head_dim.
 * Inputs are node positions (in_pos -1: absent). */
typedef struct op_rotary {
  int in_pos, in_cos, in_sin;
  int interleaved;
  int num_heads;  /* 0: from the input (4-D) or the cos table (com.microsoft) */
  int rotary_dim; /* 0: the head size */
  op_rope_pos pos_form; /* resolved by infer */
} op_rotary;

/* A rotary embedding at a plan's shapes: x (and y, of x's shape) element
 * (b, n, s, i) at b * st[0] + n * st[1] + s * st[2] + i. */
typedef struct op_rope_layout {
  int64_t batch, heads, seq, head_dim, rot_dim;
  int64_t st[3];
  int64_t table_rows; /* rows of the cos/sin tables */
} op_rope_layout;

hd_status *op_rotary_layout(const ir_node *n, const op_rotary *p, const ir_tensor *t, op_rope_layout *l);

#endif
