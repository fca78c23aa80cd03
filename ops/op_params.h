/* The ops we know and their parameters, as plain data.
 * OP_LIST is the one table of op kinds: the enum, the names and the
 * definitions in ops.c are generated from it, so they cannot drift apart. */
#ifndef OP_PARAMS_H
#define OP_PARAMS_H

#include <stdint.h>

/* X(KIND): each KIND has an op_def_KIND in its op family's file. */
#define OP_LIST(X) \
  X(CONV) \
  X(RELU) \
  X(LEAKY_RELU) \
  X(CLIP) \
  X(SIGMOID) \
  X(HARD_SIGMOID) \
  X(HARD_SWISH) \
  X(TANH) \
  X(ADD) \
  X(SUB) \
  X(MUL) \
  X(DIV) \
  X(BATCHNORM) \
  X(MAX_POOL) \
  X(AVERAGE_POOL) \
  X(GLOBAL_AVERAGE_POOL) \
  X(GLOBAL_MAX_POOL) \
  X(FLATTEN) \
  X(RESHAPE) \
  X(SQUEEZE) \
  X(UNSQUEEZE) \
  X(IDENTITY) \
  X(DROPOUT) \
  X(CONCAT) \
  X(GEMM) \
  X(MATMUL) \
  X(SOFTMAX) \
  X(REDUCE_MEAN)

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

/* Unary activations (Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish,
 * Tanh): one family, the kind in act. Clip's min/max come from attributes
 * (opset < 11) or constant inputs (opset >= 11). */
typedef struct op_unary {
  op_act act;
} op_unary;

/* Add, Sub, Mul, Div with numpy broadcasting; an activation may be fused
 * after it (ir passes). */
typedef enum op_binary_kind { OP_BIN_ADD, OP_BIN_SUB, OP_BIN_MUL, OP_BIN_DIV } op_binary_kind;
typedef struct op_binary {
  op_binary_kind kind;
  op_act act;
} op_binary;

/* BatchNormalization in inference mode: y = (x - mean) / sqrt(var + eps) * scale + B. */
typedef struct op_batchnorm {
  float epsilon;
} op_batchnorm;

/* MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool. Resolved like
 * op_conv: after ir_plan, pads are explicit and (for global) kernel = input. */
typedef struct op_pool {
  int nspatial;
  int is_max;
  int global;
  int64_t kernel[OP_MAX_SPATIAL];
  int64_t strides[OP_MAX_SPATIAL];
  int64_t dilations[OP_MAX_SPATIAL];
  int64_t pads_begin[OP_MAX_SPATIAL];
  int64_t pads_end[OP_MAX_SPATIAL];
  op_auto_pad auto_pad;
  int ceil_mode;
  int count_include_pad;
} op_pool;

/* Shape-only ops (views). Reshape: the target dims (from a constant input,
 * 0 = copy, -1 = infer unless allowzero). Squeeze/Unsqueeze: axes. Flatten:
 * axis. Identity, Dropout (inference): nothing. */
typedef struct op_view {
  int rank;                    /* Reshape target rank / number of axes */
  int64_t dims[8];             /* Reshape target dims, or axes */
  int allowzero;
  int axis;                    /* Flatten */
  int has_axes;                /* Squeeze/Unsqueeze: axes given (Squeeze without: all 1s) */
} op_view;

typedef struct op_concat {
  int axis; /* normalised to >= 0 once the rank is known */
} op_concat;

/* Gemm and MatMul: Y = act(alpha * op(A) @ op(B) + beta * C). MatMul is
 * alpha 1, no C, batched with numpy broadcasting of the batch dims. A bias
 * Add after a MatMul becomes C (ir passes). */
typedef struct op_gemm {
  float alpha, beta;
  int trans_a, trans_b;
  int has_c;
  int is_matmul;
  op_act act;
} op_gemm;

/* Softmax. opset < 13: over the flattened dims from axis on (coerced to 2D);
 * opset >= 13: over the one axis. */
typedef struct op_softmax {
  int axis;
  int legacy_2d;
} op_softmax;

/* ReduceMean: axes (empty: all, unless noop_with_empty_axes), keepdims. */
typedef struct op_reduce {
  int naxes;
  int64_t axes[8];
  int keepdims;
} op_reduce;

typedef union op_params {
  op_conv conv;
  op_unary unary;
  op_binary binary;
  op_batchnorm bn;
  op_pool pool;
  op_view view;
  op_concat concat;
  op_gemm gemm;
  op_softmax softmax;
  op_reduce reduce;
} op_params;

#endif
