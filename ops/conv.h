/* Conv: parameters (ops/conv.c reads and resolves them). */
#ifndef OPS_CONV_H
#define OPS_CONV_H

#include "ops/op_types.h"

OP_FAMILY(conv, op_conv, CONV, CONV_TRANSPOSE)

/* Inputs: X, W, [B], [residual added before act]; channels first unless
 * channels_last (below). After planning the pads
 * are resolved for the concrete input shape and auto_pad is NOTSET.
 * ConvTranspose (transpose = 1): W is [C_in, C_out / group, k...] and y is
 * the data gradient of a Conv from y to x with the same pads, strides and
 * dilations: y[o] += x[i] * w[t] wherever o = i * stride - pads_begin +
 * t * dilation (per dim). Never has a residual. */
typedef struct op_conv {
  int nspatial;                   /* 1, 2 or 3 */
  int64_t kernel[OP_MAX_SPATIAL]; /* from W's shape when not given */
  int64_t strides[OP_MAX_SPATIAL];
  int64_t dilations[OP_MAX_SPATIAL];
  int64_t pads_begin[OP_MAX_SPATIAL];
  int64_t pads_end[OP_MAX_SPATIAL];
  op_auto_pad auto_pad;
  int64_t group;
  int has_bias;     /* input 2 present */
  int has_residual; /* input 3 present: y = act(conv + bias + residual) */
  op_act act;
  int transpose;
  int64_t output_padding[OP_MAX_SPATIAL]; /* ConvTranspose: added to the end of each dim */
  int64_t output_shape[OP_MAX_SPATIAL];   /* ConvTranspose: 0 when not given */
  /* Set by plan_layout, never by a model (Conv only): X [N, spatial..., C],
   * W [M, k..., C / group], Y and the residual [N, spatial..., M]. */
  int channels_last;
} op_conv;

#endif
