/* Data movement: Transpose, Slice, Split, Expand, Tile: parameters, and the
 * strided map every backend copies through (ops/copy.c). */
#ifndef OPS_COPY_H
#define OPS_COPY_H

#include "ir/ir.h"
#include "ops/op_types.h"

OP_FAMILY(copy, op_copy, TRANSPOSE, SLICE, SPLIT, EXPAND, TILE)

/* After infer: Transpose's perm in axes[]; Slice's start and step per
 * input dim in u.slice; Split's axis. Before infer, Slice-1..9 keeps its
 * attributes in u.attr and axes[] (n of them), Split-2..12 its split
 * attribute in u.split (n values). */
typedef struct op_copy {
  int n;
  int axis;
  int8_t axes[8];
  int has_axes;
  union {
    struct {
      int64_t start[8], step[8];
    } slice;
    struct {
      int64_t starts[8], ends[8];
    } attr;
    int64_t split[16];
  } u;
} op_copy;

/* Where output `out` of a copy step reads: output element at coordinate c
 * (over dims) is input element offset + sum_d (mod[d] ? c[d] % mod[d] :
 * c[d]) * stride[d]. Dims that stay contiguous are merged (rank >= 1). */
typedef struct op_strided {
  int rank;
  int64_t dims[8];
  int64_t stride[8];
  int64_t mod[8];
  int64_t offset;
} op_strided;

/* The map of output `out` of copy node n at the plan's tensors t, with c
 * its resolved parameters. */
hd_status *op_copy_map(const ir_node *n, const op_copy *c, const ir_tensor *t, int out, op_strided *m);

#endif
