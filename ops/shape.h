/* Shape and Size: parameters (ops/shape.c). */
#ifndef OPS_SHAPE_H
#define OPS_SHAPE_H

#include "ops/op_types.h"

OP_FAMILY(shape, op_shape, SHAPE, SIZE)

/* Shape-15's start/end (resolved at infer to 0 <= start <= end <= rank). */
typedef struct op_shape {
  int64_t start, end;
  int has_end;
} op_shape;

#endif
