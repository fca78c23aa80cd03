/* BatchNormalization in inference mode: parameters (ops/batchnorm.c). */
#ifndef OPS_BATCHNORM_H
#define OPS_BATCHNORM_H

#include "ops/op_types.h"

OP_FAMILY(batchnorm, op_batchnorm, BATCHNORM)

/* y = act((x - mean) / sqrt(var + eps) * scale + B); act: an activation
 * after it (plan_fuse.c, 4: DenseNet's BN -> ReLU before each conv) */
typedef struct op_batchnorm {
  float epsilon;
  op_act act;
  int channels_last; /* set by plan_layout: the channel is X's last dim */
} op_batchnorm;

#endif
