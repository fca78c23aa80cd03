/* op_act: the activations an op can carry fused (Relu after a Conv, ...),
 * defined once for host code, the reference backend and the GPU kernels.
 * Plain C, also compiled as CUDA/HIP (gpu/ includes it). */
#ifndef OP_ACT_H
#define OP_ACT_H

/* X(KIND, "OnnxName"): alpha/beta as the ONNX op's attributes (LeakyRelu
 * alpha; Clip min = alpha, max = beta; HardSigmoid alpha, beta; Elu
 * alpha). Gelu is Gelu-20 with approximate "none", GeluTanh with "tanh". */
#define OP_ACT_LIST(X)              \
  X(RELU, "Relu")                   \
  X(LEAKY_RELU, "LeakyRelu")        \
  X(CLIP, "Clip")                   \
  X(SIGMOID, "Sigmoid")             \
  X(HARD_SIGMOID, "HardSigmoid")    \
  X(HARD_SWISH, "HardSwish")        \
  X(TANH, "Tanh")                   \
  X(ERF, "Erf")                     \
  X(GELU, "Gelu")                   \
  X(GELU_TANH, "GeluTanh")          \
  X(SQRT, "Sqrt")                   \
  X(RECIPROCAL, "Reciprocal")       \
  X(EXP, "Exp")                     \
  X(LOG, "Log")                     \
  X(NEG, "Neg")                     \
  X(ABS, "Abs")                     \
  X(SIN, "Sin")                     \
  X(COS, "Cos")                     \
  X(FLOOR, "Floor")                 \
  X(CEIL, "Ceil")                   \
  X(ROUND, "Round")                 \
  X(SIGN, "Sign")                   \
  X(SOFTPLUS, "Softplus")           \
  X(ELU, "Elu")                     \
  X(QUICK_GELU, "QuickGelu")

typedef enum op_act_kind {
  OP_ACT_NONE = 0,
#define OP_ACT_ENUM_(k, name) OP_ACT_##k,
  OP_ACT_LIST(OP_ACT_ENUM_)
#undef OP_ACT_ENUM_
  OP_ACT_COUNT
} op_act_kind;

typedef struct op_act {
  op_act_kind kind;
  float alpha, beta;
} op_act;

/* "Relu", ... ("none" for OP_ACT_NONE), for messages. */
static inline const char *op_act_name(int kind) {
  static const char *const names[] = {"none",
#define OP_ACT_NAME_(k, name) name,
                                      OP_ACT_LIST(OP_ACT_NAME_)
#undef OP_ACT_NAME_
  };
  return kind >= 0 && kind < OP_ACT_COUNT ? names[kind] : "?";
}

#if defined(__CUDACC__) || defined(__HIPCC__)
#define OP_ACT_FN __host__ __device__ static inline
#define OP_ACT_FN_OUTLINED __host__ __device__ static __noinline__
#else
#include <math.h>
#define OP_ACT_FN static inline
#define OP_ACT_FN_OUTLINED static
#endif

/* lo <= x <= hi by comparisons, so a NaN stays NaN (as numpy and ONNX
 * Runtime's kernels clamp; fminf/fmaxf would replace it). */
OP_ACT_FN float op_act_clamp(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* GELU, exact and tanh-approximated: inline, for kernels that apply them on
 * a hot path (matmul epilogues). */
OP_ACT_FN float op_act_gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }
OP_ACT_FN float op_act_gelu_tanh(float x) {
  return 0.5f * x * (1.f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

/* The unary math kinds (after TANH but QuickGelu): out of line, so that
 * kernels which unroll the activations fusion gives them stay small. */
OP_ACT_FN_OUTLINED float op_act_math(int kind, float x, float a) {
  switch (kind) {
    case OP_ACT_ERF: return erff(x);
    case OP_ACT_GELU: return op_act_gelu(x);
    case OP_ACT_GELU_TANH: return op_act_gelu_tanh(x);
    case OP_ACT_SQRT: return sqrtf(x);
    case OP_ACT_RECIPROCAL: return 1.f / x;
    case OP_ACT_EXP: return expf(x);
    case OP_ACT_LOG: return logf(x);
    case OP_ACT_NEG: return -x;
    case OP_ACT_ABS: return fabsf(x);
    case OP_ACT_SIN: return sinf(x);
    case OP_ACT_COS: return cosf(x);
    case OP_ACT_FLOOR: return floorf(x);
    case OP_ACT_CEIL: return ceilf(x);
    case OP_ACT_ROUND: return rintf(x); /* halves to even, as ONNX says */
    case OP_ACT_SIGN: return x > 0.f ? 1.f : (x < 0.f ? -1.f : x); /* 0 and NaN stay */
    /* log(1 + exp(x)) without overflow */
    case OP_ACT_SOFTPLUS: return x > 0.f ? x + log1pf(expf(-x)) : log1pf(expf(x));
    case OP_ACT_ELU: return x < 0.f ? a * (expf(x) - 1.f) : x;
    default: return x;
  }
}

/* The activation of x, in fp32: the one definition both backends use. */
OP_ACT_FN float op_act_apply(int kind, float x, float a, float b) {
  switch (kind) {
    case OP_ACT_NONE: return x;
    case OP_ACT_RELU: return x < 0.f ? 0.f : x;
    case OP_ACT_LEAKY_RELU: return x < 0.f ? a * x : x;
    case OP_ACT_CLIP: return op_act_clamp(x, a, b);
    case OP_ACT_SIGMOID: return 1.f / (1.f + expf(-x));
    case OP_ACT_HARD_SIGMOID: return op_act_clamp(a * x + b, 0.f, 1.f);
    case OP_ACT_HARD_SWISH: return x * op_act_clamp(x / 6.f + 0.5f, 0.f, 1.f);
    case OP_ACT_TANH: return tanhf(x);
    /* SiLU (a = 1): a convolution's or a gate's activation, on hot paths */
    case OP_ACT_QUICK_GELU: return x / (1.f + expf(-a * x)); /* x * sigmoid(a x) */
    default: return op_act_math(kind, x, a);
  }
}

#endif
