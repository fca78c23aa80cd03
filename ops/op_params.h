/* The ops we know and their parameters, as plain data.
 * OP_LIST is the one table of op kinds: the enum, the names and the
 * definitions in ops.c are generated from it, so they cannot drift apart. */
#ifndef OP_PARAMS_H
#define OP_PARAMS_H

#include <stdint.h>

/* X(KIND): each KIND has an op_def_KIND in its op family's file. */
#define OP_LIST(X) \
  X(CONV)

typedef enum op_kind {
  OP_UNKNOWN = 0, /* an ONNX node we do not run: kept for graph connectivity */
#define OP_ENUM_(kind) OP_##kind,
  OP_LIST(OP_ENUM_)
#undef OP_ENUM_
  OP_COUNT
} op_kind;

#define OP_MAX_SPATIAL 3

/* An activation fused into the op that produces its input (ir passes). */
typedef enum op_act_kind {
  OP_ACT_NONE = 0,
  OP_ACT_RELU,
  OP_ACT_LEAKY_RELU,   /* alpha */
  OP_ACT_CLIP,         /* alpha = min, beta = max */
  OP_ACT_SIGMOID,
  OP_ACT_HARD_SIGMOID, /* alpha, beta */
  OP_ACT_HARD_SWISH,
  OP_ACT_TANH,
} op_act_kind;

typedef struct op_act {
  op_act_kind kind;
  float alpha, beta;
} op_act;

typedef enum op_auto_pad {
  OP_PAD_NOTSET = 0,
  OP_PAD_SAME_UPPER,
  OP_PAD_SAME_LOWER,
  OP_PAD_VALID,
} op_auto_pad;

/* Conv. Inputs: X, W, [B], [residual added before act]. After ir_plan the
 * pads are resolved for the concrete input shape and auto_pad is NOTSET. */
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
} op_conv;

typedef union op_params {
  op_conv conv;
} op_params;

#endif
