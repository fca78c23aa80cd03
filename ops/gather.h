/* Gather and GatherElements: parameters (ops/gather.c). */
#ifndef OPS_GATHER_H
#define OPS_GATHER_H

#include "ops/op_types.h"

OP_FAMILY(gather, op_gather, GATHER, GATHER_ELEMENTS)

/* axis: resolved at infer to [0, rank of data). */
typedef struct op_gather {
  int axis;
} op_gather;

#endif
