/* MatMulNBits (com.microsoft): parameters (ops/nbits.c). */
#ifndef OPS_NBITS_H
#define OPS_NBITS_H

#include "ops/op_types.h"

OP_FAMILY(nbits, op_nbits, MATMUL_NBITS)

/* Y[..., n] = sum_k A[..., k] * w[n][k] (+ bias[n]), the weights 4-bit
 * codes q in blocks of block_size along K:
 *   w[n][k] = (q[n][k] - zp[n][k / block_size]) * scale[n][k / block_size]
 * B [N, k_blocks, block_size / 2]: two codes a byte, the low nibble first;
 * zero points packed the same way, ceil(k_blocks / 2) bytes a row (8 when
 * absent). Inputs by position: A 0, B 1, scales 2, zero_points 3 and bias 5
 * (-1 when absent); g_idx (4) is refused.
 * glu (set only by plan_fuse, never parsed): B's rows come in pairs, a
 * gated MLP's gate and up projections interleaved, and the output has n / 2
 * columns, Y[..., j] = glu(v[2j]) * v[2j + 1] for v the product above. */
typedef struct op_nbits {
  int64_t k, n, block_size;
  int64_t k_blocks;  /* ceil(K / block_size) */
  int64_t zp_bytes;  /* zero-point bytes a row of B: ceil(k_blocks / 2) */
  int bits;
  int in_zp, in_bias;
  int exact; /* accuracy_level 1 (fp32 asked for): no integer staging of A on the GPU */
  op_act glu;
} op_nbits;

/* Columns of the output: n, or n / 2 under glu. */
static inline int64_t op_nbits_out_cols(const op_nbits *p) { return p->glu.kind != OP_ACT_NONE ? p->n / 2 : p->n; }

/* The zero point of block `blk` of row n (8 when zp is NULL). */
static inline int op_nbits_zp(const uint8_t *zp, int64_t zp_bytes, int64_t n, int64_t blk) {
  return zp ? (zp[n * zp_bytes + blk / 2] >> ((blk & 1) * 4)) & 15 : 8;
}

/* The 4-bit code k of row n of B (k_blocks * block_size / 2 bytes a row). */
static inline int op_nbits_code(const uint8_t *b, int64_t row_bytes, int64_t n, int64_t k) {
  return (b[n * row_bytes + k / 2] >> ((k & 1) * 4)) & 15;
}

#endif
