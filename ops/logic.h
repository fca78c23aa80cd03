/* Comparisons and logic (bool outputs): parameters (ops/logic.c). */
#ifndef OPS_LOGIC_H
#define OPS_LOGIC_H

#include "ops/op_types.h"

OP_FAMILY(logic, op_logic, EQUAL, LESS, LESS_OR_EQUAL, GREATER, GREATER_OR_EQUAL, AND, OR, XOR, NOT, IS_NAN, IS_INF)

typedef enum op_logic_kind {
  OP_LOGIC_EQ,
  OP_LOGIC_LT,
  OP_LOGIC_LE,
  OP_LOGIC_GT,
  OP_LOGIC_GE,
  OP_LOGIC_AND,
  OP_LOGIC_OR,
  OP_LOGIC_XOR,
  OP_LOGIC_NOT,
  OP_LOGIC_ISNAN,
  OP_LOGIC_ISINF,
} op_logic_kind;

/* IsInf: which infinities count. */
typedef struct op_logic {
  op_logic_kind kind;
  int detect_negative, detect_positive;
} op_logic;

#endif
