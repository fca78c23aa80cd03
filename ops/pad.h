/* Pad: parameters and the per-dim map every backend pads through
 * (ops/pad.c). */
#ifndef OPS_PAD_H
#define OPS_PAD_H

#include "ir/ir.h"
#include "ops/op_types.h"

OP_FAMILY(pad, op_pad, PAD)

typedef enum op_pad_mode { OP_PAD_MODE_CONSTANT, OP_PAD_MODE_REFLECT, OP_PAD_MODE_EDGE, OP_PAD_MODE_WRAP } op_pad_mode;

/* mode from the attribute; after infer, per input dim the pads at its
 * beginning and end (negative: cropped) and the fill element's bytes
 * (constant mode: constant_value as the input's dtype stores it, else 0). */
typedef struct op_pad {
  op_pad_mode mode;
  int64_t begin[IR_MAX_RANK], end[IR_MAX_RANK];
  uint8_t fill[8];
} op_pad;

/* A pad at a plan's shapes. Output coordinate o of dim d reads input
 * coordinate start[d] + j, j = o - pad[d] brought into [0, extent[d]) by
 * the mode (reflect: mirrored at the ends without repeating them; edge:
 * clamped; wrap: modulo extent); in constant mode a j outside is the fill.
 * The input is first cropped by the negative pads ([start, start + extent)
 * is what is left), as ONNX Runtime does. Adjacent dims that are neither
 * padded nor cropped are merged (rank >= 1). */
typedef struct op_pad_map {
  int rank;
  int64_t dims[IR_MAX_RANK];      /* output */
  int64_t in_stride[IR_MAX_RANK]; /* input, in elements */
  int64_t pad[IR_MAX_RANK], start[IR_MAX_RANK], extent[IR_MAX_RANK];
} op_pad_map;

hd_status *op_pad_map_of(const ir_node *n, const op_pad *p, const ir_tensor *t, op_pad_map *m);

#endif
