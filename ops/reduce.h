/* Reductions: parameters (ops/reduce.c). */
#ifndef OPS_REDUCE_H
#define OPS_REDUCE_H

#include "ops/op_types.h"

OP_FAMILY(reduce, op_reduce, REDUCE_MEAN)

/* axes (empty: all, unless noop_with_empty_axes), keepdims. */
typedef struct op_reduce {
  int naxes;
  int64_t axes[8];
  int keepdims;
} op_reduce;

#endif
