/* Running sums: parameters (ops/scan.c). */
#ifndef OPS_SCAN_H
#define OPS_SCAN_H

#include "ops/op_types.h"

OP_FAMILY(scan, op_scan, CUMSUM)

/* axis resolved at infer (a value input). */
typedef struct op_scan {
  int axis;
  int exclusive, reverse;
} op_scan;

#endif
