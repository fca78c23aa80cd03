/* Gemm and MatMul: parameters (ops/gemm.c). */
#ifndef OPS_GEMM_H
#define OPS_GEMM_H

#include "ops/op_types.h"

OP_FAMILY(gemm, op_gemm, GEMM, MATMUL)

/* Y = act(alpha * op(A) @ op(B) + beta * C + R). MatMul is alpha 1, no C,
 * batched with numpy broadcasting of the batch dims. A bias Add after a
 * MatMul becomes C (passes). R (has_residual, input 3) is never a model's:
 * plan_fuse_late makes an Add of a same-shaped value after a MatMul its R
 * (ConvNeXt's residual, once the layout made both rows). */
typedef struct op_gemm {
  float alpha, beta;
  int trans_a, trans_b;
  int has_c;
  int has_residual;
  int is_matmul;
  op_act act;
} op_gemm;

#endif
