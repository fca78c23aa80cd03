/* Elementwise activations and unary math as ops: parameters (ops/unary.c). */
#ifndef OPS_UNARY_H
#define OPS_UNARY_H

#include "ops/op_types.h"

OP_FAMILY(unary, op_unary, RELU, LEAKY_RELU, CLIP, SIGMOID, HARD_SIGMOID, HARD_SWISH, TANH, ERF, GELU, SQRT, RECIPROCAL, EXP, LOG, NEG, ABS, SIN, COS, FLOOR, CEIL, ROUND, SIGN, SOFTPLUS, ELU, MS_GELU, FAST_GELU, BIAS_GELU, QUICK_GELU)

/* One family: the kind is act (ops/op_act.h), also the form fusion folds
 * into the producing op. Clip's min/max come from attributes (opset < 11)
 * or constant inputs (opset >= 11). The com.microsoft GELUs may add a bias
 * first: y = act(x + bias), bias [N] over the last dim (input 1; has_bias). */
typedef struct op_unary {
  op_act act;
  int has_bias;
} op_unary;

#endif
