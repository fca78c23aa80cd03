/* Cast: parameters (ops/cast.c). */
#ifndef OPS_CAST_H
#define OPS_CAST_H

#include "ops/op_types.h"

OP_FAMILY(cast, op_cast, CAST)

/* to: the hd_dtype of the output. */
typedef struct op_cast {
  int to;
} op_cast;

#endif
