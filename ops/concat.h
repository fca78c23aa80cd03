/* Concat: parameters (ops/concat.c). */
#ifndef OPS_CONCAT_H
#define OPS_CONCAT_H

#include "ops/op_types.h"

OP_FAMILY(concat, op_concat, CONCAT)

typedef struct op_concat {
  int axis; /* normalised to >= 0 once the rank is known */
} op_concat;

#endif
