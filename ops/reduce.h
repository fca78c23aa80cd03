/* Reductions: parameters (ops/reduce.c). */
#ifndef OPS_REDUCE_H
#define OPS_REDUCE_H

#include "ops/op_types.h"

OP_FAMILY(reduce, op_reduce, REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_L1, REDUCE_L2, REDUCE_SUM_SQUARE, REDUCE_LOG_SUM, REDUCE_LOG_SUM_EXP)

/* The same order as gpu_kernels.h's GPU_REDUCE_*. */
typedef enum op_reduce_kind {
  OP_RED_SUM,
  OP_RED_MEAN,
  OP_RED_MAX,
  OP_RED_MIN,
  OP_RED_PROD,
  OP_RED_L1,
  OP_RED_L2,
  OP_RED_SUM_SQUARE,
  OP_RED_LOG_SUM,
  OP_RED_LOG_SUM_EXP,
} op_reduce_kind;

/* Sum, Max, Min and Prod also run on int32 / int64 (summed in int64). */
static inline int op_reduce_int_ok(op_reduce_kind k) {
  return k == OP_RED_SUM || k == OP_RED_MAX || k == OP_RED_MIN || k == OP_RED_PROD;
}

/* axes (empty: all, unless noop_with_empty_axes), keepdims. After infer,
 * the sorted, distinct, non-negative axes. */
typedef struct op_reduce {
  op_reduce_kind kind;
  int naxes;
  int64_t axes[8];
  int keepdims;
} op_reduce;

#endif
