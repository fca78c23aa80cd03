/* Layer normalisations: parameters (ops/norm.c). */
#ifndef OPS_NORM_H
#define OPS_NORM_H

#include "ops/op_types.h"

OP_FAMILY(norm, op_norm, LAYER_NORMALIZATION, SIMPLIFIED_LAYER_NORMALIZATION, RMS_NORMALIZATION, SKIP_LAYER_NORMALIZATION, SKIP_SIMPLIFIED_LAYER_NORMALIZATION)

/* Per row of the dims from axis on (cols elements):
 *   s = x + skip + skip_bias          (skip and skip_bias when present)
 *   mean = rms ? 0 : sum(s) / cols;  inv = 1 / sqrt(sum((s - mean)^2) / cols + epsilon)
 *   y = (s - mean) * inv * scale + bias
 * Inputs and optional outputs are node positions, -1 when absent: mean
 * and inv per row, sum = s. Statistics in fp32 (or wider). */
typedef struct op_norm {
  int axis;
  float epsilon;
  int rms;
  int in_skip, in_scale, in_bias, in_skip_bias;
  /* The input holding x: 0, or the skip's position when a plan finds the
   * skip the full-size addend (an Add fused with dims unknown until then:
   * the two addends trade places, x + skip being the same sum). */
  int in_x;
  int out_mean, out_inv, out_sum;
  /* Transposes fused into the norm (plan_fuse.c), -1 when none. in_chan:
   * the axis of input 0 that holds the normalised values: the norm reads
   * x as Transpose(x) with that axis moved last (a channel-last
   * LayerNormalization of an NCHW tensor). out_chan: output 0 is stored
   * with the normalised (last) axis moved to this position. Either one
   * means exactly one axis, the last, is normalised; skip, skip bias, sum,
   * mean and inv keep the rows' packed layout. */
  int in_chan, out_chan;
} op_norm;

#endif
