/* Element selection: Where and Trilu: parameters (ops/select.c). */
#ifndef OPS_SELECT_H
#define OPS_SELECT_H

#include "ops/op_types.h"

OP_FAMILY(select, op_select, WHERE, TRILU)

/* Trilu: keep the upper (or lower) triangle of the last two dims from
 * diagonal k on; k resolved from the optional input at infer. */
typedef struct op_select {
  int upper;
  int64_t k;
} op_select;

#endif
