/* Gemm and MatMul: parameters (ops/gemm.c). */
#ifndef OPS_GEMM_H
#define OPS_GEMM_H

#include "ops/op_types.h"

OP_FAMILY(gemm, op_gemm, GEMM, MATMUL)

/* Y = act(alpha * op(A) @ op(B) + beta * C). MatMul is alpha 1, no C,
 * batched with numpy broadcasting of the batch dims. A bias Add after a
 * MatMul becomes C (passes). */
typedef struct op_gemm {
  float alpha, beta;
  int trans_a, trans_b;
  int has_c;
  int is_matmul;
  op_act act;
} op_gemm;

#endif
