/* Squeeze-and-excitation: parameters (ops/squeeze_excite.c). */
#ifndef OPS_SQUEEZE_EXCITE_H
#define OPS_SQUEEZE_EXCITE_H

#include "ops/op_types.h"

OP_FAMILY(squeeze_excite, op_squeeze_excite, SQUEEZE_EXCITE)

/* A squeeze-and-excitation block (EfficientNet, MobileNetV3), which the
 * fusion pass makes from GlobalAveragePool (or ReduceMean over the spatial
 * axes) -> 1x1 Conv -> act -> 1x1 Conv -> gate act -> Mul; no model names
 * it. Inputs: x [N, C, spatial...], w1 [R, C, 1...] (the squeeze
 * projection), b1 [R] or absent, w2 [C, R, 1...], b2 [C] or absent; the
 * weights constant. Per sample n:
 *   m[c] = mean of x[n, c, ...] over the spatial dims
 *   h[r] = act(b1[r] + sum_c w1[r, c] m[c])
 *   y[n, c, ...] = x[n, c, ...] * gate_act(b2[c] + sum_r w2[c, r] h[r]) */
typedef struct op_squeeze_excite {
  op_act act;
  op_act gate_act;
} op_squeeze_excite;

/* The most channels (C, and R) the op takes: every backend must run what
 * the fusion pass makes (the GPU keeps a sample's channel means in shared
 * memory). EfficientNet-B7's widest block has 3840. */
#define OP_SE_MAX_CHANNELS 8192

/* Input positions. */
enum { SE_IN_X, SE_IN_W1, SE_IN_B1, SE_IN_W2, SE_IN_B2, SE_NIN };

#endif
