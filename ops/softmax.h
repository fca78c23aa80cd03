/* Softmax: parameters (ops/softmax.c). */
#ifndef OPS_SOFTMAX_H
#define OPS_SOFTMAX_H

#include "ops/op_types.h"

OP_FAMILY(softmax, op_softmax, SOFTMAX)

/* opset < 13: over the flattened dims from axis on (coerced to 2D);
 * opset >= 13: over the one axis. */
typedef struct op_softmax {
  int axis;
  int legacy_2d;
} op_softmax;

#endif
