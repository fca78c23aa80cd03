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
 * (a SwiGLU's Mul(silu(gate), up): plan_fuse.c). Transposes the passes
 * fuse: bit k of `permuted` set, input k is read as Transpose(input k,
 * perm[k]) (perm[k] of input k's rank, which is the output's) before
 * broadcasting. */
typedef struct op_binary {
  op_binary_kind kind;
  op_act act;
  op_act in_act;
  int permuted;
  int8_t perm[2][8];
} op_binary;

/* The dims input k of binary node n takes part with: its own, or permuted. */
static inline void op_binary_input_dims(const op_binary *b, int k, int rank, const int64_t *dims, int64_t *out) {
  for (int d = 0; d < rank; d++) out[d] = (b->permuted >> k & 1) ? dims[b->perm[k][d]] : dims[d];
}

#endif
