/* MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: parameters
 * (ops/pool.c). */
#ifndef OPS_POOL_H
#define OPS_POOL_H

#include "ops/op_types.h"

OP_FAMILY(pool, op_pool, MAX_POOL, AVERAGE_POOL, GLOBAL_AVERAGE_POOL, GLOBAL_MAX_POOL)

/* Resolved like op_conv: after planning, pads are explicit and (for
 * global) kernel = input. */
typedef struct op_pool {
  int nspatial;
  int is_max;
  int global;
  int64_t kernel[OP_MAX_SPATIAL];
  int64_t strides[OP_MAX_SPATIAL];
  int64_t dilations[OP_MAX_SPATIAL];
  int64_t pads_begin[OP_MAX_SPATIAL];
  int64_t pads_end[OP_MAX_SPATIAL];
  op_auto_pad auto_pad;
  int ceil_mode;
  int count_include_pad;
  int channels_last; /* set by plan_layout: X and Y [N, spatial..., C] */
} op_pool;

#endif
