/* BatchNormalization in inference mode: parameters (ops/batchnorm.c). */
#ifndef OPS_BATCHNORM_H
#define OPS_BATCHNORM_H

#include "ops/op_types.h"

OP_FAMILY(batchnorm, op_batchnorm, BATCHNORM)

/* y = (x - mean) / sqrt(var + eps) * scale + B */
typedef struct op_batchnorm {
  float epsilon;
} op_batchnorm;

#endif
