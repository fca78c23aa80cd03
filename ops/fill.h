/* Generators: ConstantOfShape and Range: parameters (ops/fill.c). */
#ifndef OPS_FILL_H
#define OPS_FILL_H

#include "ops/op_types.h"

OP_FAMILY(fill, op_fill, CONSTANT_OF_SHAPE, RANGE)

/* ConstantOfShape: the value's bytes (one element of the output type).
 * Range, after infer: start and delta, as int64 for integer types, else
 * as double. */
typedef struct op_fill {
  unsigned char value[8];
  int64_t istart, idelta;
  double fstart, fdelta;
} op_fill;

#endif
