/* Gather, GatherElements and GatherND: parameters (ops/gather.c). */
#ifndef OPS_GATHER_H
#define OPS_GATHER_H

#include "ops/op_types.h"

OP_FAMILY(gather, op_gather, GATHER, GATHER_ELEMENTS, GATHER_ND)

/* axis: resolved at infer to [0, rank of data); GatherND: batch_dims. */
typedef struct op_gather {
  int axis;
  int batch_dims;
} op_gather;

#endif
