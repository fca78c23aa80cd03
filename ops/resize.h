/* Resize: parameters and the per-dim map every backend resizes through
 * (ops/resize.c). */
#ifndef OPS_RESIZE_H
#define OPS_RESIZE_H

#include "ir/ir.h"
#include "ops/op_types.h"

OP_FAMILY(resize, op_resize, RESIZE)

typedef enum op_resize_mode { OP_RESIZE_NEAREST, OP_RESIZE_LINEAR } op_resize_mode;

/* coordinate_transformation_mode: output coordinate x of a dim resized
 * from in to out elements at scale s reads input coordinate
 *   HALF_PIXEL            (x + 0.5) / s - 0.5
 *   PYTORCH_HALF_PIXEL    out > 1 ? (x + 0.5) / s - 0.5 : 0
 *   ALIGN_CORNERS         out == 1 ? 0 : x * (in - 1) / (out - 1)
 *   ASYMMETRIC            x / s
 *   TF_HALF_PIXEL_FOR_NN  (x + 0.5) / s
 *   HALF_PIXEL_SYMMETRIC  (in / 2) * (1 - out / (s * in)) + (x + 0.5) / s - 0.5
 * in float, in ONNX Runtime's order of operations (the last one partly in
 * double, as there), so that nearest picks the same element at ties. A dim
 * whose scale is exactly 1 is not transformed (ONNX Runtime's rule). */
typedef enum op_resize_coord {
  OP_RESIZE_HALF_PIXEL,
  OP_RESIZE_PYTORCH_HALF_PIXEL,
  OP_RESIZE_ALIGN_CORNERS,
  OP_RESIZE_ASYMMETRIC,
  OP_RESIZE_TF_HALF_PIXEL_FOR_NN,
  OP_RESIZE_HALF_PIXEL_SYMMETRIC
} op_resize_coord;

/* nearest_mode: the input index of coordinate c (then clamped to the dim):
 * ROUND_PREFER_FLOOR rounds halves down, ROUND_PREFER_CEIL away from zero. */
typedef enum op_resize_nearest {
  OP_RESIZE_ROUND_PREFER_FLOOR,
  OP_RESIZE_ROUND_PREFER_CEIL,
  OP_RESIZE_FLOOR,
  OP_RESIZE_CEIL
} op_resize_nearest;

/* Attributes; after infer, scale[d] per input dim (given, or out / in in
 * float when sizes are given; 1 for dims not in axes). */
typedef struct op_resize {
  op_resize_mode mode;
  op_resize_coord coord;
  op_resize_nearest nearest;
  int naxes; /* the axes attribute (18+); 0: every dim */
  int8_t axes[IR_MAX_RANK];
  float scale[IR_MAX_RANK];
} op_resize;

/* A resize at a plan's shapes: dims[d] output elements of dim d from
 * in_dims[d] at scale[d]. Adjacent dims at scale 1 are merged (rank >= 1). */
typedef struct op_resize_map {
  int rank;
  int64_t dims[IR_MAX_RANK], in_dims[IR_MAX_RANK];
  float scale[IR_MAX_RANK];
} op_resize_map;

hd_status *op_resize_map_of(const ir_node *n, const op_resize *p, const ir_tensor *t, op_resize_map *m);

#endif
