/* Layer normalisations: parameters (ops/norm.c). */
#ifndef OPS_NORM_H
#define OPS_NORM_H

#include "ir/ir.h"
#include "ops/op_types.h"

OP_FAMILY(norm, op_norm, LAYER_NORMALIZATION, SIMPLIFIED_LAYER_NORMALIZATION, RMS_NORMALIZATION, SKIP_LAYER_NORMALIZATION, SKIP_SIMPLIFIED_LAYER_NORMALIZATION)

/* Per row of the dims from axis on (cols elements):
 *   s = x + skip + skip_bias          (skip and skip_bias when present)
 *   mean = rms ? 0 : sum(s) / cols;  inv = 1 / sqrt(sum((s - mean)^2) / cols + epsilon)
 *   y = (s - mean) * inv * scale + bias
 * Inputs and optional outputs are node positions, -1 when absent: mean
 * and inv per row, sum = s. Statistics in fp32 (or wider). x and skip
 * broadcast to each other as Add does (an Add fused in: plan_fuse.c);
 * the rows are those of their broadcast shape. */
typedef struct op_norm {
  int axis;
  float epsilon;
  int rms;
  int in_skip, in_scale, in_bias, in_skip_bias;
  int out_mean, out_inv, out_sum;
  /* Transposes fused into the norm (plan_fuse.c), -1 when none. in_chan:
   * the axis of input 0 that holds the normalised values: the norm reads
   * x as Transpose(x) with that axis moved last (a channel-last
   * LayerNormalization of an NCHW tensor). out_chan: output 0 is stored
   * with the normalised (last) axis moved to this position. Either one
   * means exactly one axis, the last, is normalised; skip, skip bias, sum,
   * mean and inv keep the rows' packed layout. */
  int in_chan, out_chan;
  /* Transposes that keep the last axis in place, fused into the reads of
   * the addends (ViT's residual, [S, B, E] -> [B, S, E]): bit 0 of
   * `permuted` set, x is read as Transpose(x, perm[0]); bit 1, the skip as
   * Transpose(skip, perm[1]). Not with in_chan. out_permuted: output 0 is
   * stored as Transpose(y, out_perm), the last axis again in place (ViT's
   * [B, S, E] -> [S, B, E] before its attention); not with out_chan. */
  int permuted, out_permuted;
  int8_t perm[2][IR_MAX_RANK], out_perm[IR_MAX_RANK];
} op_norm;

/* Where an addend (x or the skip) or output 0 of a norm lies, for rows r of the
 * broadcast shape (plan time, op_norm_rows): row r starts at element
 * sum over d < nd of (r / div[d] % dim[d]) * stride[d] of its tensor (dims
 * merged where they can be: a packed addend is one dim of stride cols, a
 * broadcast one has stride 0), and column c of the row is element c %
 * col_n past that start (col_n == cols: the row is packed; 1: one value
 * repeated along the row; else a row-long suffix repeated). */
typedef struct op_norm_rows {
  int nd;
  int64_t dim[IR_MAX_RANK], div[IR_MAX_RANK], stride[IR_MAX_RANK];
  int64_t col_n;
} op_norm_rows;

/* The rows and cols of norm node n at plan time (tensors t, plan params
 * p), and where addend k (0: x, 1: skip) or, k = 2, output 0 (packed
 * rows unless out_permuted; not with out_chan) lies for them (m may be NULL).
 * NOT_SUPPORTED for an addend whose part in a row is not a suffix of it. */
hd_status *op_norm_rows_of(const ir_node *n, const op_norm *p, const ir_tensor *t, int k, op_norm_rows *m,
                           int64_t *rows, int64_t *cols);

/* Everything a backend needs to run norm node n at the plan's tensors t
 * (plan params p): rows and cols, x and y stored channel-major where a
 * fused transpose says so (x_inner / y_inner > 0: [rows / inner, cols,
 * inner]; an inner of 1 counts as packed), and the row maps of x (unless
 * x_inner), the skip (when present) and y (unless y_inner). */
typedef struct op_norm_layout {
  int64_t rows, cols, x_inner, y_inner;
  op_norm_rows xm, sm, ym;
} op_norm_layout;
hd_status *op_norm_layout_of(const ir_node *n, const op_norm *p, const ir_tensor *t, op_norm_layout *l);

#endif
