/* Shape-only ops (views): parameters (ops/view.c). */
#ifndef OPS_VIEW_H
#define OPS_VIEW_H

#include "ops/op_types.h"

OP_FAMILY(view, op_view, FLATTEN, RESHAPE, SQUEEZE, UNSQUEEZE, IDENTITY, DROPOUT)

/* Reshape: the target dims (from a constant input, 0 = copy, -1 = infer
 * unless allowzero). Squeeze/Unsqueeze: axes. Flatten: axis. Identity,
 * Dropout (inference): nothing. */
typedef struct op_view {
  int rank;          /* Reshape target rank / number of axes */
  int64_t dims[8];   /* Reshape target dims, or axes */
  int allowzero;
  int axis;          /* Flatten */
  int has_axes;      /* Squeeze/Unsqueeze: axes given (Squeeze without: all 1s) */
} op_view;

#endif
