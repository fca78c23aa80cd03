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
  int out_mean, out_inv, out_sum;
} op_norm;

#endif
