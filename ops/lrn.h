/* Local response normalisation: parameters (ops/lrn.c). */
#ifndef OPS_LRN_H
#define OPS_LRN_H

#include "ops/op_types.h"

OP_FAMILY(lrn, op_lrn, LRN)

/* X [N, C, H, W]; per element, over the channels of a window around c:
 *   sq = sum of x[n, j, h, w]^2, j in [c - (size - 1) / 2, c + size / 2] within [0, C)
 *   y = x / (bias + alpha / size * sq)^beta */
typedef struct op_lrn {
  int size;
  float alpha, beta, bias;
} op_lrn;

#endif
