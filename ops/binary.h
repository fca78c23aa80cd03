/* Elementwise arithmetic with numpy broadcasting: parameters (ops/binary.c). */
#ifndef OPS_BINARY_H
#define OPS_BINARY_H

#include "ops/op_types.h"

OP_FAMILY(binary, op_binary, ADD, SUB, MUL, DIV, POW, MIN, MAX, SUM, MEAN)

/* The GPU kernels number them the same (gpu/gpu_kernels.h GPU_BIN_*). */
typedef enum op_binary_kind {
  OP_BIN_ADD,
  OP_BIN_SUB,
  OP_BIN_MUL,
  OP_BIN_DIV,
  OP_BIN_POW,
  OP_BIN_MIN,
  OP_BIN_MAX,
  OP_BIN_MEAN
} op_binary_kind;

/* Activations the passes fuse: act after it, in_act on input 0 before it
 * (a SwiGLU's Mul(silu(gate), up): plan_fuse.c). */
typedef struct op_binary {
  op_binary_kind kind;
  op_act act;
  op_act in_act;
} op_binary;

#endif
