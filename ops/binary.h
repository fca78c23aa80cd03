/* Add, Sub, Mul, Div with numpy broadcasting: parameters (ops/binary.c). */
#ifndef OPS_BINARY_H
#define OPS_BINARY_H

#include "ops/op_types.h"

OP_FAMILY(binary, op_binary, ADD, SUB, MUL, DIV)

typedef enum op_binary_kind { OP_BIN_ADD, OP_BIN_SUB, OP_BIN_MUL, OP_BIN_DIV } op_binary_kind;

/* An activation may be fused after it (passes). */
typedef struct op_binary {
  op_binary_kind kind;
  op_act act;
} op_binary;

#endif
