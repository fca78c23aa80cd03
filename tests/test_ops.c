/* The non-Conv ops on HipDNNExecutionProvider against ONNX Runtime's CPU EP:
 * one single-node Model Editor model per case. A case the EP must claim runs
 * with CPU fallback disabled and must show its node on our EP; a case it must
 * not claim must show no node on our EP and still run (CPU EP).
 *
 * The EP session runs with ORT's graph optimizations off so that nodes ORT
 * would remove (Identity, Dropout) reach the EP as written. fp16 cases are
 * checked against the fp32 twin of the model (same values, exact in fp16)
 * on the CPU EP, as in test_conv.
 *
 * usage: test_ops [--filter SUBSTRING] [--list] */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

static int failures;

#define F32 HD_DT_F32
#define F16 HD_DT_F16
#define I64 HD_DT_I64
#define I32 HD_DT_I32
#define BOOL HD_DT_BOOL

enum slot_kind { S_NONE = 0, S_IN, S_W, S_INTS, S_FC };

/* One node input: a graph input (S_IN), a random initializer (S_W), an
 * int64 initializer (S_INTS), a scalar float initializer (S_FC), or absent. */
typedef struct slot {
  int kind;
  int rank;
  int64_t dims[6];
  int dyn0;              /* S_IN: dim 0 symbolic in the model */
  int dtype;             /* 0: the case's dtype */
  const int64_t *ivals;  /* S_INTS, or S_IN int64 values */
  float fval;            /* S_FC */
  float shift;           /* added to random data (positive divisors, variances) */
  float scale;           /* multiplies random data first (0: 1) */
  int bytes;             /* uint8 data: random bytes 0..255 (packed 4-bit codes) */
  int grid;              /* rounds random data to multiples of 1/grid (few mantissa bits) */
  const float *fvals;    /* an fp32 initializer with these values (Resize's scales) */
} slot;

#define CASE_MAX_IN 9 /* EmbedLayerNormalization's */

typedef struct op_case {
  const char *name;
  const char *op;
  int opset;             /* 0 = 17 */
  int dtype;             /* 0 = F32 */
  slot in[CASE_MAX_IN];
  int nin;
  hh_attr attrs[6];
  int nattrs;
  int nout;              /* outputs declared (0 = 1) */
  int out2_dtype;        /* dtype of a second output (and a third, unless out3_dtype) */
  int out3_dtype;
  const char *domain;    /* NULL: ONNX; "com.microsoft" */
  int out_dtype;         /* of output 0 (0: the case's dtype) */
  int not_claimed;       /* the EP must leave the node to the CPU EP */
  int host_only;         /* claimed on the reference backend; a device backend
                            leaves it to the CPU EP (its inputs are not known
                            when plans are built, and no device kernel runs it) */
  int64_t batch2;        /* dynamic dim 0: a second run with this size */
  double tol_x;          /* the dtype's tolerances times this (0: 1) */
} op_case;

#define IN(r, ...) {.kind = S_IN, .rank = r, .dims = {__VA_ARGS__}}
#define IND(r, ...) {.kind = S_IN, .rank = r, .dims = {__VA_ARGS__}, .dyn0 = 1}
#define INT(dt, r, ...) {.kind = S_IN, .dtype = dt, .rank = r, .dims = {__VA_ARGS__}}
#define W(r, ...) {.kind = S_W, .rank = r, .dims = {__VA_ARGS__}}
#define WPOS(r, ...) {.kind = S_W, .rank = r, .dims = {__VA_ARGS__}, .shift = 1.5f}
#define INTS(n, ...) {.kind = S_INTS, .rank = 1, .dims = {n}, .ivals = (const int64_t[]){__VA_ARGS__}}
#define FC(v) {.kind = S_FC, .rank = 0, .fval = v}
/* an integer graph input with these values: IVALS(dtype, rank, dims..., values...) */
#define IVALS(dt, r, ...) IVALS_##r(dt, __VA_ARGS__)
#define IVALS_0(dt, v) {.kind = S_IN, .dtype = dt, .rank = 0, .ivals = (const int64_t[]){v}}
#define IVALS_1(dt, d0, ...) {.kind = S_IN, .dtype = dt, .rank = 1, .dims = {d0}, .ivals = (const int64_t[]){__VA_ARGS__}}
#define IVALS_2(dt, d0, d1, ...) \
  {.kind = S_IN, .dtype = dt, .rank = 2, .dims = {d0, d1}, .ivals = (const int64_t[]){__VA_ARGS__}}
#define IVALS_3(dt, d0, d1, d2, ...) \
  {.kind = S_IN, .dtype = dt, .rank = 3, .dims = {d0, d1, d2}, .ivals = (const int64_t[]){__VA_ARGS__}}
/* an int64 scalar constant */
#define INTS0(v) {.kind = S_INTS, .rank = 0, .ivals = (const int64_t[]){v}}
/* an int64 constant [1, n] of n values */
#define IVALS2C(n, ...) {.kind = S_INTS, .rank = 2, .dims = {1, n}, .ivals = (const int64_t[]){__VA_ARGS__}}
/* an int32 constant of n values */
#define IVALS32C(n, ...) {.kind = S_INTS, .dtype = HD_DT_I32, .rank = 1, .dims = {n}, .ivals = (const int64_t[]){__VA_ARGS__}}
#define NONE {.kind = S_NONE}
/* an fp32 constant of n values (whatever the case's dtype) */
#define FLOATS(n, ...) {.kind = S_INTS, .dtype = F32, .rank = 1, .dims = {n}, .fvals = (const float[]){__VA_ARGS__}}
#define FLOATS_EMPTY {.kind = S_INTS, .dtype = F32, .rank = 1, .dims = {0}}
/* MatMulNBits: packed codes (a uint8 initializer of random bytes), scales
 * that are multiples of 1/64 (so (code - zero point) * scale is exact in
 * fp16 too), and an int32 initializer */
#define QB(r, ...) {.kind = S_W, .dtype = HD_DT_U8, .rank = r, .dims = {__VA_ARGS__}, .bytes = 1}
#define SC(r, ...) {.kind = S_W, .rank = r, .dims = {__VA_ARGS__}, .grid = 64}

#define AI(nm, v) {.name = nm, .kind = HH_ATTR_INT, .i = v}
#define AF(nm, v) {.name = nm, .kind = HH_ATTR_FLOAT, .f = v}
#define AS(nm, v) {.name = nm, .kind = HH_ATTR_STRING, .s = v}
#define AIS(nm, ...) \
  {.name = nm, .kind = HH_ATTR_INTS, .ints = (const int64_t[]){__VA_ARGS__}, .n = sizeof((int64_t[]){__VA_ARGS__}) / 8}

#define X4 IN(4, 2, 3, 4, 5)
/* positive (Sqrt, Log, Reciprocal), and spread over several integers (Floor, Round) */
#define X4P {.kind = S_IN, .rank = 4, .dims = {2, 3, 4, 5}, .shift = 1.5f}
#define X4S {.kind = S_IN, .rank = 4, .dims = {2, 3, 4, 5}, .scale = 7.0f}

/* Small shapes: the suite runs under ASan, once per ORT runtime. */
static const op_case k_cases[] = {
    /* activations */
    {"relu", "Relu", .in = {X4}, .nin = 1},
    {"relu_opset6", "Relu", 6, .in = {X4}, .nin = 1},
    {"leakyrelu", "LeakyRelu", .in = {X4}, .nin = 1, .attrs = {AF("alpha", 0.2f)}, .nattrs = 1},
    {"leakyrelu_default", "LeakyRelu", .in = {X4}, .nin = 1},
    {"clip6_attrs", "Clip", 6, .in = {X4}, .nin = 1, .attrs = {AF("min", -0.25f), AF("max", 0.5f)}, .nattrs = 2},
    {"clip11_min_max", "Clip", 11, .in = {X4, FC(-0.5f), FC(0.25f)}, .nin = 3},
    {"clip13_relu6", "Clip", 13, .in = {X4, FC(0.0f), FC(6.0f)}, .nin = 3},
    {"clip13_min_only", "Clip", 13, .in = {X4, FC(-0.125f)}, .nin = 2},
    {"clip13_max_only", "Clip", 13, .in = {X4, NONE, FC(0.375f)}, .nin = 3},
    {"clip13_none", "Clip", 13, .in = {X4}, .nin = 1},
    {"clip13_min_gt_max", "Clip", 13, .in = {X4, FC(0.5f), FC(-0.5f)}, .nin = 3},
    {"sigmoid", "Sigmoid", .in = {X4}, .nin = 1},
    {"hardsigmoid", "HardSigmoid", .in = {X4}, .nin = 1, .attrs = {AF("alpha", 0.3f), AF("beta", 0.4f)}, .nattrs = 2},
    {"hardsigmoid_default", "HardSigmoid", .in = {X4}, .nin = 1},
    {"hardswish", "HardSwish", 14, .in = {X4}, .nin = 1},
    {"tanh", "Tanh", .in = {X4}, .nin = 1},
    {"f16_relu", "Relu", .dtype = F16, .in = {X4}, .nin = 1},
    {"f16_leakyrelu", "LeakyRelu", .dtype = F16, .in = {X4}, .nin = 1},
    {"f16_clip13", "Clip", 13, F16, .in = {X4, FC(-0.5f), FC(0.75f)}, .nin = 3},
    {"f16_sigmoid", "Sigmoid", .dtype = F16, .in = {X4}, .nin = 1},
    {"f16_hardswish", "HardSwish", 14, F16, .in = {X4}, .nin = 1},
    {"f16_tanh", "Tanh", .dtype = F16, .in = {X4}, .nin = 1},
    {"relu_dynamic_batch", "Relu", .in = {IND(3, 2, 3, 5)}, .nin = 1, .batch2 = 5},

    /* unary math */
    {"erf", "Erf", 13, .in = {X4}, .nin = 1},
    {"erf9", "Erf", 9, .in = {X4}, .nin = 1},
    {"gelu20", "Gelu", 20, .in = {X4}, .nin = 1},
    {"gelu20_tanh", "Gelu", 20, .in = {X4}, .nin = 1, .attrs = {AS("approximate", "tanh")}, .nattrs = 1},
    {"sqrt", "Sqrt", 13, .in = {X4P}, .nin = 1},
    {"reciprocal", "Reciprocal", 13, .in = {X4P}, .nin = 1},
    {"exp", "Exp", 13, .in = {X4}, .nin = 1},
    {"log", "Log", 13, .in = {X4P}, .nin = 1},
    {"neg", "Neg", 13, .in = {X4}, .nin = 1},
    {"abs", "Abs", 13, .in = {X4}, .nin = 1},
    {"sin", "Sin", 7, .in = {X4}, .nin = 1},
    {"cos", "Cos", 7, .in = {X4}, .nin = 1},
    {"floor", "Floor", 13, .in = {X4S}, .nin = 1},
    {"ceil", "Ceil", 13, .in = {X4S}, .nin = 1},
    {"round", "Round", 11, .in = {X4S}, .nin = 1},
    {"sign", "Sign", 13, .in = {X4}, .nin = 1},
    {"softplus", "Softplus", 1, .in = {X4S}, .nin = 1},
    {"elu", "Elu", 6, .in = {X4}, .nin = 1, .attrs = {AF("alpha", 0.7f)}, .nattrs = 1},
    {"f16_erf", "Erf", 13, F16, .in = {X4}, .nin = 1},
    {"f16_gelu20", "Gelu", 20, F16, .in = {X4}, .nin = 1},
    {"f16_sqrt", "Sqrt", 13, F16, .in = {X4P}, .nin = 1},
    {"f16_exp", "Exp", 13, F16, .in = {X4}, .nin = 1},

    /* Add / Sub / Mul / Div with numpy broadcasting */
    {"add_same", "Add", .in = {X4, X4}, .nin = 2},
    {"add_bcast_last", "Add", .in = {X4, IN(1, 5)}, .nin = 2},
    {"add_bcast_channel", "Add", .in = {X4, IN(3, 3, 1, 1)}, .nin = 2},
    {"add_lower_rank_first", "Add", .in = {IN(1, 5), X4}, .nin = 2},
    {"sub_both_bcast", "Sub", .in = {IN(4, 1, 3, 1, 5), IN(4, 2, 1, 4, 1)}, .nin = 2},
    {"mul_scalar_const", "Mul", .in = {X4, W(0)}, .nin = 2},
    {"mul_const_bcast", "Mul", .in = {X4, W(2, 4, 5)}, .nin = 2},
    {"div", "Div", .in = {X4, {.kind = S_IN, .rank = 4, .dims = {2, 3, 4, 5}, .shift = 2.0f}}, .nin = 2},
    {"div_bcast", "Div", .in = {X4, {.kind = S_IN, .rank = 2, .dims = {4, 1}, .shift = 2.0f}}, .nin = 2},
    {"add_opset7", "Add", 7, .in = {X4, IN(1, 5)}, .nin = 2},
    {"add_opset14", "Add", 14, .in = {X4, IN(1, 5)}, .nin = 2},
    {"f16_add_bcast", "Add", .dtype = F16, .in = {X4, IN(3, 3, 1, 5)}, .nin = 2},
    {"f16_mul", "Mul", .dtype = F16, .in = {X4, X4}, .nin = 2},
    {"f16_sub_const", "Sub", .dtype = F16, .in = {X4, W(1, 5)}, .nin = 2},
    {"add_dynamic_batch", "Add", .in = {IND(3, 2, 3, 4), IN(2, 3, 1)}, .nin = 2, .batch2 = 3},

    /* BatchNormalization (inference) */
    {"bn9", "BatchNormalization", 9, .in = {X4, W(1, 3), W(1, 3), W(1, 3), WPOS(1, 3)}, .nin = 5},
    {"bn14_eps", "BatchNormalization", 14, .in = {X4, W(1, 3), W(1, 3), W(1, 3), WPOS(1, 3)}, .nin = 5,
     .attrs = {AF("epsilon", 1e-2f)}, .nattrs = 1},
    {"bn15_rank3", "BatchNormalization", 15, .in = {IN(3, 2, 3, 7), W(1, 3), W(1, 3), W(1, 3), WPOS(1, 3)}, .nin = 5},
    {"f16_bn15", "BatchNormalization", 15, F16, .in = {X4, W(1, 3), W(1, 3), W(1, 3), WPOS(1, 3)}, .nin = 5},
    {"bn_dynamic_batch", "BatchNormalization", 15, .in = {IND(4, 1, 3, 4, 5), W(1, 3), W(1, 3), W(1, 3), WPOS(1, 3)},
     .nin = 5, .batch2 = 3},

    /* pools */
    {"maxpool_k3_s2_p1", "MaxPool", 12, .in = {IN(4, 1, 2, 9, 9)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("strides", 2, 2), AIS("pads", 1, 1, 1, 1)}, .nattrs = 3},
    {"maxpool_ceil", "MaxPool", 12, .in = {IN(4, 1, 2, 10, 10)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("strides", 2, 2), AI("ceil_mode", 1)}, .nattrs = 3},
    {"maxpool_ceil_pads", "MaxPool", 12, .in = {IN(4, 1, 2, 8, 8)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("strides", 3, 3), AIS("pads", 1, 1, 1, 1), AI("ceil_mode", 1)}, .nattrs = 4},
    {"maxpool_dilations", "MaxPool", 12, .in = {IN(4, 1, 2, 9, 9)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 2, 3), AIS("dilations", 2, 2)}, .nattrs = 2},
    {"maxpool_asym_pads", "MaxPool", 12, .in = {IN(4, 1, 2, 7, 8)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("pads", 0, 2, 1, 0)}, .nattrs = 2},
    {"maxpool_same_upper", "MaxPool", 12, .in = {IN(4, 1, 2, 8, 8)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("strides", 2, 2), AS("auto_pad", "SAME_UPPER")}, .nattrs = 3},
    {"maxpool_same_lower", "MaxPool", 12, .in = {IN(4, 1, 2, 8, 8)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 2, 2), AS("auto_pad", "SAME_LOWER")}, .nattrs = 2},
    {"maxpool_valid", "MaxPool", 12, .in = {IN(4, 1, 2, 9, 8)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 2), AIS("strides", 2, 2), AS("auto_pad", "VALID")}, .nattrs = 3},
    {"maxpool_1d", "MaxPool", 12, .in = {IN(3, 2, 3, 11)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3), AIS("strides", 2)}, .nattrs = 2},
    {"maxpool_3d", "MaxPool", 12, .in = {IN(5, 1, 2, 5, 6, 5)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 2, 3, 2), AIS("pads", 1, 1, 0, 0, 1, 1)}, .nattrs = 2},
    {"maxpool_opset8", "MaxPool", 8, .in = {IN(4, 1, 2, 8, 8)}, .nin = 1, .attrs = {AIS("kernel_shape", 2, 2)}, .nattrs = 1},
    {"maxpool_opset22", "MaxPool", 22, .in = {IN(4, 1, 2, 8, 8)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AI("ceil_mode", 1), AIS("strides", 2, 2)}, .nattrs = 3},
    {"avgpool_pads", "AveragePool", 11, .in = {IN(4, 1, 2, 8, 8)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("pads", 1, 1, 1, 1)}, .nattrs = 2},
    {"avgpool_count_include_pad", "AveragePool", 11, .in = {IN(4, 1, 2, 8, 8)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("pads", 1, 1, 1, 1), AI("count_include_pad", 1)}, .nattrs = 3},
    {"avgpool_asym_pads_cip", "AveragePool", 11, .in = {IN(4, 1, 2, 7, 9)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 2), AIS("strides", 2, 1), AIS("pads", 2, 0, 0, 1), AI("count_include_pad", 1)},
     .nattrs = 4},
    {"avgpool_ceil", "AveragePool", 11, .in = {IN(4, 1, 2, 10, 10)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("strides", 2, 2), AI("ceil_mode", 1)}, .nattrs = 3},
    {"avgpool_ceil_pads_cip", "AveragePool", 11, .in = {IN(4, 1, 2, 8, 8)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("strides", 2, 2), AIS("pads", 1, 1, 1, 1), AI("ceil_mode", 1),
               AI("count_include_pad", 1)},
     .nattrs = 5},
    {"avgpool_same_upper", "AveragePool", 11, .in = {IN(4, 1, 2, 9, 9)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 4, 4), AIS("strides", 2, 2), AS("auto_pad", "SAME_UPPER")}, .nattrs = 3},
    {"avgpool_1d", "AveragePool", 11, .in = {IN(3, 2, 2, 9)}, .nin = 1, .attrs = {AIS("kernel_shape", 4)}, .nattrs = 1},
    {"avgpool_3d", "AveragePool", 11, .in = {IN(5, 1, 2, 5, 5, 6)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 2, 2, 3), AIS("strides", 1, 2, 2)}, .nattrs = 2},
    {"avgpool_dilations19", "AveragePool", 19, .in = {IN(4, 1, 2, 9, 9)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 2, 2), AIS("dilations", 2, 2)}, .nattrs = 2},
    {"globalavgpool", "GlobalAveragePool", .in = {X4}, .nin = 1},
    {"globalmaxpool", "GlobalMaxPool", .in = {X4}, .nin = 1},
    {"globalavgpool_3d", "GlobalAveragePool", .in = {IN(5, 1, 3, 2, 3, 4)}, .nin = 1},
    {"globalavgpool_dynamic_batch", "GlobalAveragePool", .in = {IND(4, 1, 8, 5, 5)}, .nin = 1, .batch2 = 4},
    {"f16_maxpool", "MaxPool", 12, F16, .in = {IN(4, 1, 2, 9, 9)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("strides", 2, 2), AIS("pads", 1, 1, 1, 1)}, .nattrs = 3},
    {"f16_avgpool", "AveragePool", 11, F16, .in = {IN(4, 1, 2, 8, 8)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("pads", 1, 1, 1, 1), AI("count_include_pad", 1)}, .nattrs = 3},
    {"f16_globalavgpool", "GlobalAveragePool", .dtype = F16, .in = {X4}, .nin = 1},
    {"maxpool_dynamic_batch", "MaxPool", 12, .in = {IND(4, 1, 2, 8, 8)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 3, 3), AIS("strides", 2, 2)}, .nattrs = 2, .batch2 = 3},

    /* shape ops */
    {"flatten", "Flatten", .in = {X4}, .nin = 1},
    {"flatten_axis0", "Flatten", .in = {X4}, .nin = 1, .attrs = {AI("axis", 0)}, .nattrs = 1},
    {"flatten_axis_neg2", "Flatten", 13, .in = {X4}, .nin = 1, .attrs = {AI("axis", -2)}, .nattrs = 1},
    {"flatten_dynamic_batch", "Flatten", .in = {IND(4, 2, 3, 2, 2)}, .nin = 1, .batch2 = 5},
    {"reshape_zero_neg1", "Reshape", .in = {X4, INTS(3, 0, -1, 5)}, .nin = 2},
    {"reshape_neg1_first", "Reshape", 13, .in = {X4, INTS(2, -1, 20)}, .nin = 2},
    {"reshape_allowzero", "Reshape", 14, .in = {X4, INTS(2, 6, 20)}, .nin = 2, .attrs = {AI("allowzero", 1)}, .nattrs = 1},
    {"reshape_opset21", "Reshape", 21, .in = {X4, INTS(3, 2, 12, 5)}, .nin = 2},
    {"reshape_dynamic_batch", "Reshape", .in = {IND(4, 2, 3, 4, 5), INTS(2, 0, -1)}, .nin = 2, .batch2 = 3},
    {"squeeze11_attr", "Squeeze", 11, .in = {IN(4, 2, 1, 5, 1)}, .nin = 1, .attrs = {AIS("axes", 1, -1)}, .nattrs = 1},
    {"squeeze13_input", "Squeeze", 13, .in = {IN(4, 2, 1, 5, 1), INTS(1, 1)}, .nin = 2},
    {"squeeze13_all", "Squeeze", 13, .in = {IN(4, 1, 3, 1, 5)}, .nin = 1},
    {"unsqueeze11_attr", "Unsqueeze", 11, .in = {IN(2, 3, 5)}, .nin = 1, .attrs = {AIS("axes", 0, 3)}, .nattrs = 1},
    {"unsqueeze13_neg", "Unsqueeze", 13, .in = {IN(2, 3, 5), INTS(2, -1, 1)}, .nin = 2},
    {"identity", "Identity", .in = {X4}, .nin = 1},
    {"dropout12", "Dropout", 12, .in = {X4}, .nin = 1},
    {"dropout12_ratio_mode", "Dropout", 12, .in = {X4, FC(0.5f), {.kind = S_INTS, .dtype = HD_DT_BOOL, .rank = 0,
                                                             .ivals = (const int64_t[]){0}}},
     .nin = 3},
    {"dropout10", "Dropout", 10, .in = {X4}, .nin = 1, .attrs = {AF("ratio", 0.3f)}, .nattrs = 1},
    {"f16_reshape", "Reshape", .dtype = F16, .in = {X4, INTS(2, 6, -1)}, .nin = 2},

    /* Concat */
    {"concat_axis1", "Concat", .in = {IN(3, 2, 3, 4), IN(3, 2, 1, 4), IN(3, 2, 5, 4)}, .nin = 3,
     .attrs = {AI("axis", 1)}, .nattrs = 1},
    {"concat_axis_neg1_const", "Concat", .in = {IN(2, 3, 4), W(2, 3, 2)}, .nin = 2, .attrs = {AI("axis", -1)}, .nattrs = 1},
    {"concat_axis0", "Concat", 4, .in = {IN(2, 2, 4), IN(2, 3, 4)}, .nin = 2, .attrs = {AI("axis", 0)}, .nattrs = 1},
    {"f16_concat", "Concat", .dtype = F16, .in = {X4, X4}, .nin = 2, .attrs = {AI("axis", 2)}, .nattrs = 1},
    {"concat_dynamic_batch", "Concat", .in = {IND(3, 2, 3, 4), IND(3, 2, 2, 4)}, .nin = 2,
     .attrs = {AI("axis", 1)}, .nattrs = 1, .batch2 = 4},

    /* Gemm */
    {"gemm_no_c", "Gemm", .in = {IN(2, 3, 4), W(2, 4, 5)}, .nin = 2},
    {"gemm_c_n", "Gemm", .in = {IN(2, 3, 4), W(2, 4, 5), W(1, 5)}, .nin = 3},
    {"gemm_c_1n", "Gemm", .in = {IN(2, 3, 4), W(2, 4, 5), W(2, 1, 5)}, .nin = 3},
    {"gemm_c_m1", "Gemm", .in = {IN(2, 3, 4), W(2, 4, 5), W(2, 3, 1)}, .nin = 3},
    {"gemm_c_mn", "Gemm", .in = {IN(2, 3, 4), W(2, 4, 5), W(2, 3, 5)}, .nin = 3},
    {"gemm_c_scalar", "Gemm", .in = {IN(2, 3, 4), W(2, 4, 5), W(0)}, .nin = 3},
    {"gemm_transA", "Gemm", .in = {IN(2, 4, 3), W(2, 4, 5), W(1, 5)}, .nin = 3, .attrs = {AI("transA", 1)}, .nattrs = 1},
    {"gemm_transB", "Gemm", .in = {IN(2, 3, 4), W(2, 5, 4), W(1, 5)}, .nin = 3, .attrs = {AI("transB", 1)}, .nattrs = 1},
    {"gemm_all_attrs", "Gemm", .in = {IN(2, 4, 3), IN(2, 5, 4), IN(2, 3, 5)}, .nin = 3,
     .attrs = {AI("transA", 1), AI("transB", 1), AF("alpha", 0.25f), AF("beta", 0.5f)}, .nattrs = 4},
    {"gemm_opset9", "Gemm", 9, .in = {IN(2, 3, 4), W(2, 4, 5), W(1, 5)}, .nin = 3},
    {"gemm_opset11_no_c", "Gemm", 11, .in = {IN(2, 3, 4), W(2, 4, 5)}, .nin = 2, .attrs = {AF("alpha", 2.0f)}, .nattrs = 1},
    {"f16_gemm", "Gemm", .dtype = F16, .in = {IN(2, 3, 16), W(2, 5, 16), W(1, 5)}, .nin = 3,
     .attrs = {AI("transB", 1)}, .nattrs = 1},
    {"gemm_dynamic_m", "Gemm", .in = {IND(2, 2, 8), W(2, 8, 4), W(1, 4)}, .nin = 3, .batch2 = 5},

    /* MatMul */
    {"matmul_2d", "MatMul", .in = {IN(2, 3, 4), IN(2, 4, 5)}, .nin = 2},
    {"matmul_3d", "MatMul", .in = {IN(3, 2, 3, 4), IN(3, 2, 4, 5)}, .nin = 2},
    {"matmul_bcast_batch", "MatMul", .in = {IN(4, 2, 1, 3, 4), IN(3, 5, 4, 6)}, .nin = 2},
    {"matmul_3d_2d_const", "MatMul", .in = {IN(3, 2, 3, 4), W(2, 4, 5)}, .nin = 2},
    {"matmul_1d_2d", "MatMul", .in = {IN(1, 4), IN(2, 4, 5)}, .nin = 2},
    {"matmul_2d_1d", "MatMul", .in = {IN(2, 3, 4), IN(1, 4)}, .nin = 2},
    {"matmul_1d_1d", "MatMul", .in = {IN(1, 6), IN(1, 6)}, .nin = 2},
    {"matmul_4d_1d", "MatMul", .in = {IN(4, 2, 2, 3, 4), IN(1, 4)}, .nin = 2},
    {"matmul_1d_3d", "MatMul", .in = {IN(1, 4), IN(3, 2, 4, 3)}, .nin = 2},
    {"f16_matmul_batched", "MatMul", .dtype = F16, .in = {IN(3, 2, 3, 16), IN(3, 1, 16, 5)}, .nin = 2},
    {"matmul_dynamic_batch", "MatMul", .in = {IND(3, 2, 3, 4), W(2, 4, 5)}, .nin = 2, .batch2 = 3},

    /* Softmax: opset < 13 normalises the 2D coercion at axis, 13 one axis */
    {"softmax11_axis1", "Softmax", 11, .in = {IN(3, 2, 3, 4)}, .nin = 1, .attrs = {AI("axis", 1)}, .nattrs = 1},
    {"softmax11_default", "Softmax", 11, .in = {IN(3, 2, 3, 4)}, .nin = 1},
    {"softmax11_axis_neg1", "Softmax", 11, .in = {IN(3, 2, 3, 4)}, .nin = 1, .attrs = {AI("axis", -1)}, .nattrs = 1},
    {"softmax1_axis0", "Softmax", 1, .in = {IN(3, 2, 3, 4)}, .nin = 1, .attrs = {AI("axis", 0)}, .nattrs = 1},
    {"softmax13_axis1", "Softmax", 13, .in = {IN(3, 2, 3, 4)}, .nin = 1, .attrs = {AI("axis", 1)}, .nattrs = 1},
    {"softmax13_default", "Softmax", 13, .in = {IN(3, 2, 3, 4)}, .nin = 1},
    {"softmax13_axis_neg3", "Softmax", 13, .in = {IN(3, 2, 3, 4)}, .nin = 1, .attrs = {AI("axis", -3)}, .nattrs = 1},
    {"f16_softmax13", "Softmax", 13, F16, .in = {IN(3, 2, 3, 8)}, .nin = 1},
    {"softmax_dynamic_batch", "Softmax", 13, .in = {IND(2, 2, 10)}, .nin = 1, .batch2 = 3},

    /* ReduceMean */
    {"reducemean13_hw", "ReduceMean", 13, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 2, 3)}, .nattrs = 1},
    {"reducemean13_no_keepdims", "ReduceMean", 13, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 1), AI("keepdims", 0)},
     .nattrs = 2},
    {"reducemean13_neg_axes", "ReduceMean", 13, .in = {X4}, .nin = 1, .attrs = {AIS("axes", -1, 0)}, .nattrs = 1},
    {"reducemean13_all", "ReduceMean", 13, .in = {X4}, .nin = 1},
    {"reducemean11_all_no_keepdims", "ReduceMean", 11, .in = {X4}, .nin = 1, .attrs = {AI("keepdims", 0)}, .nattrs = 1},
    {"reducemean18_axes_input", "ReduceMean", 18, .in = {X4, INTS(2, 1, -1)}, .nin = 2},
    {"reducemean18_no_axes", "ReduceMean", 18, .in = {X4}, .nin = 1, .attrs = {AI("keepdims", 0)}, .nattrs = 1},
    {"f16_reducemean", "ReduceMean", 13, F16, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 2, 3)}, .nattrs = 1},
    {"reducemean_dynamic_batch", "ReduceMean", 13, .in = {IND(3, 2, 3, 4)}, .nin = 1, .attrs = {AIS("axes", 2)},
     .nattrs = 1, .batch2 = 4},

    /* The other reductions. ReduceSum: axes attribute to 11, input from 13;
     * the others: attribute to 13, input from 18. */
    {"reducesum11_hw", "ReduceSum", 11, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 2, 3)}, .nattrs = 1},
    {"reducesum13_axes_input", "ReduceSum", 13, .in = {X4, INTS(2, 1, 3)}, .nin = 2},
    {"reducesum13_neg_no_keepdims", "ReduceSum", 13, .in = {X4, INTS(2, -1, -3)}, .nin = 2, .attrs = {AI("keepdims", 0)},
     .nattrs = 1},
    {"reducesum13_all", "ReduceSum", 13, .in = {X4}, .nin = 1},
    {"reducesum1_all_no_keepdims", "ReduceSum", 1, .in = {X4}, .nin = 1, .attrs = {AI("keepdims", 0)}, .nattrs = 1},
    {"reducesum13_long_row", "ReduceSum", 13, .in = {IN(3, 2, 6, 40), INTS(1, -1)}, .nin = 2},
    {"reducemax13_hw", "ReduceMax", 13, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 2, 3)}, .nattrs = 1},
    {"reducemax18_axes_input", "ReduceMax", 18, .in = {X4, INTS(1, 1)}, .nin = 2},
    {"reducemax20_axes_input", "ReduceMax", 20, .in = {X4, INTS(2, 0, -1)}, .nin = 2, .attrs = {AI("keepdims", 0)},
     .nattrs = 1},
    {"reducemax13_all_no_keepdims", "ReduceMax", 13, .in = {X4}, .nin = 1, .attrs = {AI("keepdims", 0)}, .nattrs = 1},
    {"reducemax13_long_row", "ReduceMax", 13, .in = {IN(3, 2, 6, 40)}, .nin = 1, .attrs = {AIS("axes", 2)}, .nattrs = 1},
    {"reducemin13_neg_axes", "ReduceMin", 13, .in = {X4}, .nin = 1, .attrs = {AIS("axes", -1, 0)}, .nattrs = 1},
    {"reducemin18_axes_input", "ReduceMin", 18, .in = {X4, INTS(1, 2)}, .nin = 2},
    {"reducemin20_all", "ReduceMin", 20, .in = {X4}, .nin = 1},
    {"reduceprod13_axis1", "ReduceProd", 13, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reduceprod18_axes_input", "ReduceProd", 18, .in = {X4, INTS(1, -2)}, .nin = 2, .attrs = {AI("keepdims", 0)},
     .nattrs = 1},
    {"reducel1_13_hw", "ReduceL1", 13, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 2, 3)}, .nattrs = 1},
    {"reducel1_18_all_no_keepdims", "ReduceL1", 18, .in = {X4}, .nin = 1, .attrs = {AI("keepdims", 0)}, .nattrs = 1},
    {"reducel2_13_neg_axes", "ReduceL2", 13, .in = {X4}, .nin = 1, .attrs = {AIS("axes", -1)}, .nattrs = 1},
    {"reducel2_18_axes_input", "ReduceL2", 18, .in = {X4, INTS(2, 0, 2)}, .nin = 2},
    {"reducesumsquare13_axis1", "ReduceSumSquare", 13, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reducesumsquare18_axes_input", "ReduceSumSquare", 18, .in = {X4, INTS(1, 3)}, .nin = 2},
    {"reducelogsum13_hw", "ReduceLogSum", 13, .in = {X4P}, .nin = 1, .attrs = {AIS("axes", 2, 3)}, .nattrs = 1},
    {"reducelogsum18_axes_input", "ReduceLogSum", 18, .in = {X4P, INTS(1, -1)}, .nin = 2, .attrs = {AI("keepdims", 0)},
     .nattrs = 1},
    {"reducelogsumexp13_axis1", "ReduceLogSumExp", 13, .in = {X4S}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reducelogsumexp18_axes_input", "ReduceLogSumExp", 18, .in = {X4S, INTS(2, 2, 3)}, .nin = 2},
    {"reducelogsumexp13_long_row", "ReduceLogSumExp", 13, .in = {{.kind = S_IN, .rank = 3, .dims = {2, 6, 40}, .scale = 30.0f}},
     .nin = 1, .attrs = {AIS("axes", -1)}, .nattrs = 1},
    {"reducelogsumexp11_all", "ReduceLogSumExp", 11, .in = {X4}, .nin = 1},
    {"f16_reducesum", "ReduceSum", 13, F16, .in = {X4, INTS(1, 1)}, .nin = 2},
    {"f16_reducemax", "ReduceMax", 18, F16, .in = {X4, INTS(2, 2, 3)}, .nin = 2},
    {"f16_reducel2", "ReduceL2", 13, F16, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 3)}, .nattrs = 1},
    {"f16_reducelogsumexp", "ReduceLogSumExp", 13, F16, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    /* Integers: exact, summed in int64. GenAI's seqlens_k is ReduceSum(mask, axes=[1]) of an int64 mask. */
    {"reducesum_int64_mask", "ReduceSum", 13, .dtype = I64,
     .in = {IVALS(I64, 2, 3, 5, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0), INTS(1, 1)}, .nin = 2},
    {"reducesum_int64_axis1", "ReduceSum", 13, .dtype = I64, .in = {X4, INTS(1, 1)}, .nin = 2},
    {"reducesum_int32_axis1", "ReduceSum", 13, .dtype = I32, .in = {X4, INTS(1, 1)}, .nin = 2},
    {"reducesum11_int64_all", "ReduceSum", 11, .dtype = I64, .in = {X4}, .nin = 1, .attrs = {AI("keepdims", 0)}, .nattrs = 1},
    {"reducemax_int64_axis1", "ReduceMax", 13, .dtype = I64, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reducemax_int32_axis1", "ReduceMax", 18, .dtype = I32, .in = {X4, INTS(1, 1)}, .nin = 2},
    {"reducemin_int64_axis1", "ReduceMin", 18, .dtype = I64, .in = {X4, INTS(1, 1)}, .nin = 2},
    {"reducemin_int32_axis1", "ReduceMin", 13, .dtype = I32, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reduceprod_int64_axis1", "ReduceProd", 13, .dtype = I64, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reduceprod_int32_axis1", "ReduceProd", 18, .dtype = I32, .in = {X4, INTS(1, 1)}, .nin = 2},
    {"reducesum_int64_long_row", "ReduceSum", 13, .dtype = I64, .in = {IN(2, 3, 100), INTS(1, 1)}, .nin = 2},
    /* Empty reductions: each op's value for the empty set, as the CPU EP gives. */
    {"reducesum13_empty", "ReduceSum", 13, .in = {IN(3, 2, 0, 4), INTS(1, 1)}, .nin = 2},
    {"reducemean13_empty", "ReduceMean", 13, .in = {IN(3, 2, 0, 4)}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reducemax13_empty", "ReduceMax", 13, .in = {IN(3, 2, 0, 4)}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reducemin13_empty", "ReduceMin", 13, .in = {IN(3, 2, 0, 4)}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reduceprod13_empty", "ReduceProd", 13, .in = {IN(3, 2, 0, 4)}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reducel1_13_empty", "ReduceL1", 13, .in = {IN(3, 2, 0, 4)}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reducel2_13_empty", "ReduceL2", 13, .in = {IN(3, 2, 0, 4)}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reducesumsquare13_empty", "ReduceSumSquare", 13, .in = {IN(3, 2, 0, 4)}, .nin = 1, .attrs = {AIS("axes", 1)},
     .nattrs = 1},
    {"reducelogsum13_empty", "ReduceLogSum", 13, .in = {IN(3, 2, 0, 4)}, .nin = 1, .attrs = {AIS("axes", 1)}, .nattrs = 1},
    {"reducelogsumexp13_empty", "ReduceLogSumExp", 13, .in = {IN(3, 2, 0, 4)}, .nin = 1, .attrs = {AIS("axes", 1)},
     .nattrs = 1},
    {"reducesum_int64_empty", "ReduceSum", 13, .dtype = I64, .in = {IN(3, 2, 0, 4), INTS(1, 1)}, .nin = 2},
    {"reducemax_int32_empty", "ReduceMax", 13, .dtype = I32, .in = {IN(3, 2, 0, 4)}, .nin = 1, .attrs = {AIS("axes", 1)},
     .nattrs = 1},

    /* Shape and Size: computed when the plan is built */
    {"shape", "Shape", 13, .in = {X4}, .nin = 1, .out_dtype = I64},
    {"shape15_start_end", "Shape", 15, .in = {X4}, .nin = 1, .out_dtype = I64,
     .attrs = {AI("start", 1), AI("end", -1)}, .nattrs = 2},
    {"shape15_start_neg", "Shape", 15, .in = {X4}, .nin = 1, .out_dtype = I64, .attrs = {AI("start", -2)}, .nattrs = 1},
    {"shape15_empty", "Shape", 15, .in = {X4}, .nin = 1, .out_dtype = I64,
     .attrs = {AI("start", 3), AI("end", 1)}, .nattrs = 2},
    {"shape_int64_input", "Shape", 13, .in = {INT(I64, 2, 3, 7)}, .nin = 1, .out_dtype = I64},
    {"shape_dynamic_batch", "Shape", 13, .in = {IND(3, 2, 3, 5)}, .nin = 1, .out_dtype = I64, .batch2 = 6},
    {"size", "Size", 13, .in = {X4}, .nin = 1, .out_dtype = I64},
    {"size_dynamic_batch", "Size", 13, .in = {IND(2, 2, 3)}, .nin = 1, .out_dtype = I64, .batch2 = 4},

    /* Gather, GatherElements */
    {"gather_axis0", "Gather", 13, .in = {IN(2, 5, 4), IVALS(I64, 2, 2, 3, 0, 4, -1, 2, 3, -5)}, .nin = 2},
    {"gather_axis1_embedding", "Gather", 13, .in = {W(2, 7, 6), IVALS(I64, 2, 2, 2, 1, 6, -7, 0)}, .nin = 2},
    {"gather_axis1", "Gather", 13, .in = {IN(3, 2, 5, 3), IVALS(I32, 1, 3, 4, 0, -2)}, .nin = 2,
     .attrs = {AI("axis", 1)}, .nattrs = 1},
    {"gather_scalar_index", "Gather", 13, .in = {IN(3, 2, 5, 3), IVALS(I64, 0, -1)}, .nin = 2,
     .attrs = {AI("axis", -1)}, .nattrs = 1},
    {"gather_int64_data", "Gather", 13, .dtype = I64, .in = {IN(2, 6, 3), IVALS(I64, 1, 3, 5, 0, 5)}, .nin = 2},
    {"gather_opset1", "Gather", 1, .in = {IN(2, 5, 4), IVALS(I64, 1, 2, 4, 1)}, .nin = 2},
    {"f16_gather", "Gather", 13, F16, .in = {IN(2, 5, 8), IVALS(I64, 1, 3, 4, 0, -2)}, .nin = 2},
    {"gather_const_indices", "Gather", 13, .in = {IN(2, 5, 4), INTS(2, 3, -2)}, .nin = 2},
    {"gather_elements_axis1", "GatherElements", 13, .in = {IN(2, 3, 4), IVALS(I64, 2, 3, 2, 0, 1, -1, 3, 2, 0)},
     .nin = 2, .attrs = {AI("axis", 1)}, .nattrs = 1},
    {"gather_elements_axis0", "GatherElements", 11, .in = {IN(2, 3, 2), IVALS(I32, 2, 2, 2, 2, 0, -1, 1)}, .nin = 2},

    {"gather_nd", "GatherND", 13, .in = {IN(3, 2, 3, 4), IVALS(I64, 2, 3, 2, 0, 1, 1, -1, 0, 2)}, .nin = 2, .host_only = 1},
    {"gather_nd_batch_dims", "GatherND", 13, .in = {IN(3, 2, 3, 4), IVALS(I64, 2, 2, 1, 2, 0)}, .nin = 2,
     .attrs = {AI("batch_dims", 1)}, .nattrs = 1, .host_only = 1},
    {"gather_nd_const", "GatherND", 13, .dtype = I64, .in = {INTS(4, 5, 6, 7, 8), IVALS2C(1, 1, 2)}, .nin = 2},

    /* CumSum */
    {"cumsum", "CumSum", 14, .in = {X4, INTS0(2)}, .nin = 2, .host_only = 1},
    {"cumsum_exclusive_reverse", "CumSum", 14, .in = {X4, INTS0(-1)}, .nin = 2,
     .attrs = {AI("exclusive", 1), AI("reverse", 1)}, .nattrs = 2, .host_only = 1},
    {"cumsum_int64_const", "CumSum", 14, .dtype = I64, .in = {INTS(4, 1, 1, 1, 1), INTS0(0)}, .nin = 2},

    /* Cast */
    {"cast_f32_f16", "Cast", 13, .in = {X4}, .nin = 1, .out_dtype = F16, .attrs = {AI("to", F16)}, .nattrs = 1},
    {"cast_f16_f32", "Cast", 13, F16, .in = {X4}, .nin = 1, .out_dtype = F32, .attrs = {AI("to", F32)}, .nattrs = 1},
    /* 1001 elements: the GPU's 8-a-thread form and its leftover one */
    {"cast_f32_f16_odd", "Cast", 13, .in = {IN(3, 7, 11, 13)}, .nin = 1, .out_dtype = F16, .attrs = {AI("to", F16)}, .nattrs = 1},
    {"cast_f16_f32_odd", "Cast", 13, F16, .in = {IN(3, 7, 11, 13)}, .nin = 1, .out_dtype = F32, .attrs = {AI("to", F32)}, .nattrs = 1},
    {"cast_f32_i64", "Cast", 13, .in = {X4S}, .nin = 1, .out_dtype = I64, .attrs = {AI("to", I64)}, .nattrs = 1},
    {"cast_f32_i32", "Cast", 13, .in = {X4S}, .nin = 1, .out_dtype = I32, .attrs = {AI("to", I32)}, .nattrs = 1},
    {"cast_i64_f32", "Cast", 13, .dtype = I64, .in = {X4}, .nin = 1, .out_dtype = F32, .attrs = {AI("to", F32)}, .nattrs = 1},
    {"cast_i64_i32", "Cast", 13, .dtype = I64, .in = {X4}, .nin = 1, .out_dtype = I32, .attrs = {AI("to", I32)}, .nattrs = 1},
    {"cast_i32_i64", "Cast", 13, .dtype = I32, .in = {X4}, .nin = 1, .out_dtype = I64, .attrs = {AI("to", I64)}, .nattrs = 1},
    {"cast_f32_bool", "Cast", 13, .in = {X4S}, .nin = 1, .out_dtype = HD_DT_BOOL, .attrs = {AI("to", HD_DT_BOOL)}, .nattrs = 1},
    {"cast_i64_bool", "Cast", 13, .dtype = I64, .in = {X4}, .nin = 1, .out_dtype = HD_DT_BOOL,
     .attrs = {AI("to", HD_DT_BOOL)}, .nattrs = 1},
    {"cast_bool_f32", "Cast", 13, .dtype = HD_DT_BOOL, .in = {X4}, .nin = 1, .out_dtype = F32,
     .attrs = {AI("to", F32)}, .nattrs = 1},
    {"cast_u8_f32", "Cast", 13, .dtype = HD_DT_U8, .in = {X4}, .nin = 1, .out_dtype = F32, .attrs = {AI("to", F32)}, .nattrs = 1},
    {"cast_f64_f32", "Cast", 13, .dtype = HD_DT_F64, .in = {X4}, .nin = 1, .out_dtype = F32, .attrs = {AI("to", F32)}, .nattrs = 1},
    {"cast_f32_f32", "Cast", 19, .in = {X4}, .nin = 1, .attrs = {AI("to", F32)}, .nattrs = 1},

    /* Transpose, Slice, Split, Expand, Tile */
    {"transpose_default", "Transpose", 13, .in = {X4}, .nin = 1},
    {"transpose_perm", "Transpose", 13, .in = {X4}, .nin = 1, .attrs = {AIS("perm", 0, 2, 1, 3)}, .nattrs = 1},
    {"transpose_attention", "Transpose", 13, .in = {IN(4, 2, 5, 3, 4)}, .nin = 1, .attrs = {AIS("perm", 0, 2, 1, 3)}, .nattrs = 1},
    {"transpose_kt", "Transpose", 13, .in = {IN(4, 2, 3, 5, 4)}, .nin = 1, .attrs = {AIS("perm", 0, 1, 3, 2)}, .nattrs = 1},
    {"transpose_nchw_nhwc", "Transpose", 13, .in = {IN(4, 2, 3, 37, 33)}, .nin = 1, .attrs = {AIS("perm", 0, 2, 3, 1)}, .nattrs = 1},
    {"transpose_nhwc_nchw", "Transpose", 13, .in = {IN(4, 2, 37, 33, 3)}, .nin = 1, .attrs = {AIS("perm", 0, 3, 1, 2)}, .nattrs = 1},
    {"f16_transpose_tiles", "Transpose", 13, F16, .in = {IN(3, 3, 70, 40)}, .nin = 1, .attrs = {AIS("perm", 0, 2, 1)}, .nattrs = 1},
    {"transpose_int64", "Transpose", 13, .dtype = I64, .in = {IN(3, 2, 3, 4)}, .nin = 1, .attrs = {AIS("perm", 2, 0, 1)}, .nattrs = 1},
    {"f16_transpose", "Transpose", 13, F16, .in = {X4}, .nin = 1, .attrs = {AIS("perm", 3, 1, 0, 2)}, .nattrs = 1},
    {"transpose_dynamic_batch", "Transpose", 13, .in = {IND(3, 2, 3, 4)}, .nin = 1, .attrs = {AIS("perm", 1, 0, 2)},
     .nattrs = 1, .batch2 = 5},
    {"slice13", "Slice", 13, .in = {X4, INTS(2, 1, 0), INTS(2, 3, 2), INTS(2, 2, 1)}, .nin = 4},
    {"slice13_steps_neg", "Slice", 13, .in = {X4, INTS(2, -1, 4), INTS(2, -100, 0), INTS(2, 3, 2), INTS(2, -2, -3)}, .nin = 5},
    {"slice13_huge_end", "Slice", 13, .in = {X4, INTS(1, 1), INTS(1, INT64_MAX), INTS(1, -1)}, .nin = 4},
    {"slice13_empty", "Slice", 13, .in = {X4, INTS(1, 3), INTS(1, 1), INTS(1, 2)}, .nin = 4},
    {"slice9_attrs", "Slice", 9, .in = {X4}, .nin = 1,
     .attrs = {AIS("starts", 0, 1), AIS("ends", 1, 3), AIS("axes", 0, -1)}, .nattrs = 3},
    {"slice_int32_indices", "Slice", 13, .in = {X4, IVALS32C(1, 1), IVALS32C(1, 4)}, .nin = 3},
    {"f16_slice", "Slice", 13, F16, .in = {X4, INTS(1, 1), INTS(1, 3), INTS(1, 3)}, .nin = 4},
    {"slice_dynamic_batch", "Slice", 13, .in = {IND(3, 4, 3, 5), INTS(1, 1), INTS(1, -1), INTS(1, 2)}, .nin = 4, .batch2 = 2},
    {"split13_sizes", "Split", 13, .in = {X4, INTS(2, 2, 3)}, .nin = 2, .nout = 2, .attrs = {AI("axis", -1)}, .nattrs = 1},
    {"split11_attr", "Split", 11, .in = {X4}, .nin = 1, .nout = 2, .attrs = {AI("axis", 1), AIS("split", 1, 2)}, .nattrs = 2},
    {"split13_equal", "Split", 13, .in = {IN(3, 2, 6, 3)}, .nin = 1, .nout = 3, .attrs = {AI("axis", 1)}, .nattrs = 1},
    {"split18_uneven", "Split", 18, .in = {IN(2, 7, 3)}, .nin = 1, .nout = 3, .attrs = {AI("num_outputs", 3)}, .nattrs = 1},
    {"f16_split", "Split", 13, F16, .in = {X4}, .nin = 1, .nout = 2, .attrs = {AI("axis", 2)}, .nattrs = 1},
    {"expand", "Expand", 13, .in = {IN(2, 3, 1), INTS(3, 2, 3, 4)}, .nin = 2},
    {"expand_lower_rank_shape", "Expand", 13, .in = {IN(3, 2, 1, 4), INTS(2, 5, 1)}, .nin = 2},
    {"expand_int64", "Expand", 13, .dtype = I64, .in = {IN(1, 1), INTS(2, 3, 4)}, .nin = 2},
    {"tile", "Tile", 13, .in = {IN(2, 2, 3), INTS(2, 3, 2)}, .nin = 2},
    {"tile_ones", "Tile", 13, .in = {IN(3, 2, 3, 2), INTS(3, 1, 2, 1)}, .nin = 2},

    /* Pad: modes, negative pads (crops), axes (18), constant_value, integer data */
    {"pad_constant", "Pad", 13, .in = {X4, INTS(8, 0, 0, 1, 2, 0, 0, 2, 1), FC(1.5f)}, .nin = 3},
    {"pad11_constant_default", "Pad", 11, .in = {X4, INTS(8, 1, 0, 0, 3, 0, 2, 1, 0)}, .nin = 2},
    {"pad_reflect", "Pad", 13, .in = {X4, INTS(8, 0, 0, 2, 3, 0, 0, 3, 1)}, .nin = 2, .attrs = {AS("mode", "reflect")}, .nattrs = 1},
    {"pad_edge", "Pad", 13, .in = {X4, INTS(8, 0, 1, 2, 3, 1, 0, 1, 4)}, .nin = 2, .attrs = {AS("mode", "edge")}, .nattrs = 1},
    {"pad19_wrap", "Pad", 19, .in = {X4, INTS(8, 0, 0, 3, 5, 0, 0, 4, 2)}, .nin = 2, .attrs = {AS("mode", "wrap")}, .nattrs = 1},
    {"pad_negative_constant", "Pad", 13, .in = {X4, INTS(8, 0, -1, -1, 2, 0, 0, 1, -2), FC(-2.0f)}, .nin = 3},
    {"pad_negative_reflect", "Pad", 13, .in = {X4, INTS(8, 0, 0, -1, 2, 0, 0, 1, -2)}, .nin = 2,
     .attrs = {AS("mode", "reflect")}, .nattrs = 1},
    {"pad_negative_edge", "Pad", 13, .in = {X4, INTS(8, 0, 0, 2, -2, -1, 0, -1, 3)}, .nin = 2, .attrs = {AS("mode", "edge")},
     .nattrs = 1},
    {"pad19_negative_wrap", "Pad", 19, .in = {X4, INTS(8, 0, 0, -1, 2, 0, 0, 2, -1)}, .nin = 2, .attrs = {AS("mode", "wrap")},
     .nattrs = 1},
    {"pad18_axes", "Pad", 18, .in = {X4, INTS(4, 1, 2, 3, 1), FC(0.25f), INTS(2, 2, -1)}, .nin = 4},
    {"pad18_axes_reflect", "Pad", 18, .in = {X4, INTS(2, 2, 3), NONE, INTS(1, 3)}, .nin = 4,
     .attrs = {AS("mode", "reflect")}, .nattrs = 1},
    {"pad21_rank2", "Pad", 21, .in = {IN(2, 3, 4), INTS(4, 2, 0, 0, 3), FC(7.0f)}, .nin = 3},
    {"f16_pad_constant", "Pad", 13, F16, .in = {X4, INTS(8, 0, 0, 1, 2, 0, 0, 2, 1), FC(0.5f)}, .nin = 3},
    {"f16_pad_reflect", "Pad", 13, F16, .in = {X4, INTS(8, 0, 0, 1, 1, 0, 0, 1, 1)}, .nin = 2, .attrs = {AS("mode", "reflect")},
     .nattrs = 1},
    {"pad_int32_constant", "Pad", 13, .dtype = I32, .in = {X4S, INTS(8, 0, 0, 1, 2, 0, 0, 2, 1), IVALS32C(1, 7)}, .nin = 3},
    {"pad_int64_edge", "Pad", 13, .dtype = I64, .in = {X4S, INTS(8, 0, 0, 2, 1, 0, 0, 1, 2)}, .nin = 2,
     .attrs = {AS("mode", "edge")}, .nattrs = 1},
    {"pad_dynamic_batch", "Pad", 13, .in = {IND(4, 1, 3, 4, 5), INTS(8, 0, 0, 1, 1, 0, 0, 1, 1)}, .nin = 2,
     .attrs = {AS("mode", "reflect")}, .nattrs = 1, .batch2 = 3},
    /* (a wrap pad wider than its dim is not claimed either: ONNX Runtime 1.29's CPU EP reads past the input there) */
    {"not_claimed_pad_pads_input", "Pad", 13, .in = {X4, IVALS(I64, 1, 8, 0, 0, 1, 1, 0, 0, 1, 1)}, .nin = 2, .not_claimed = 1},

    /* Resize: nearest (every nearest_mode) and linear, scales or sizes */
    {"resize_nearest_x2", "Resize", 13, .in = {IN(4, 1, 3, 4, 5), NONE, FLOATS(4, 1, 1, 2, 2)}, .nin = 3},
    {"resize11_nearest_asymmetric_floor", "Resize", 11, .in = {IN(4, 2, 3, 4, 5), FLOATS_EMPTY, FLOATS(4, 1, 1, 2, 2)},
     .nin = 3, .attrs = {AS("coordinate_transformation_mode", "asymmetric"), AS("nearest_mode", "floor")}, .nattrs = 2},
    {"resize_nearest_sizes", "Resize", 13, .in = {IN(4, 1, 3, 4, 5), NONE, NONE, INTS(4, 1, 3, 7, 9)}, .nin = 4},
    {"resize_nearest_down_prefer_ceil", "Resize", 13, .in = {IN(4, 1, 2, 9, 10), NONE, FLOATS(4, 1, 1, 0.6f, 0.5f)}, .nin = 3,
     .attrs = {AS("nearest_mode", "round_prefer_ceil")}, .nattrs = 1},
    {"resize_nearest_up_ceil_align", "Resize", 13, .in = {IN(4, 1, 2, 4, 5), NONE, FLOATS(4, 1, 1, 1.75f, 3)}, .nin = 3,
     .attrs = {AS("nearest_mode", "ceil"), AS("coordinate_transformation_mode", "align_corners")}, .nattrs = 2},
    {"resize_nearest_tf_half_pixel", "Resize", 13, .in = {IN(4, 1, 2, 5, 4), NONE, NONE, INTS(4, 1, 2, 8, 3)}, .nin = 4,
     .attrs = {AS("coordinate_transformation_mode", "tf_half_pixel_for_nn")}, .nattrs = 1},
    {"resize_nearest_pytorch_half_pixel_floor", "Resize", 13, .in = {IN(4, 1, 2, 6, 6), NONE, FLOATS(4, 1, 1, 1.5f, 0.5f)},
     .nin = 3, .attrs = {AS("coordinate_transformation_mode", "pytorch_half_pixel"), AS("nearest_mode", "floor")}, .nattrs = 2},
    {"resize18_nearest_axes", "Resize", 18, .in = {IN(4, 1, 2, 4, 5), NONE, FLOATS(2, 3, 2)}, .nin = 3,
     .attrs = {AIS("axes", 3, 2)}, .nattrs = 1},
    {"resize_nearest_int32", "Resize", 13, .dtype = I32, .in = {IN(4, 1, 2, 3, 4), NONE, FLOATS(4, 1, 1, 2, 2)}, .nin = 3},
    {"resize_nearest_rank3", "Resize", 13, .in = {IN(3, 2, 5, 3), NONE, FLOATS(3, 1.5f, 0.8f, 2)}, .nin = 3},
    {"resize_linear_x2", "Resize", 13, .in = {IN(4, 2, 3, 4, 5), NONE, FLOATS(4, 1, 1, 2, 2)}, .nin = 3,
     .attrs = {AS("mode", "linear")}, .nattrs = 1},
    {"resize11_linear_align_corners", "Resize", 11, .in = {IN(4, 1, 2, 4, 5), FLOATS_EMPTY, FLOATS(4, 1, 1, 2, 2)}, .nin = 3,
     .attrs = {AS("mode", "linear"), AS("coordinate_transformation_mode", "align_corners")}, .nattrs = 2},
    {"resize_linear_pytorch_half_pixel_sizes", "Resize", 13, .in = {IN(4, 1, 2, 6, 5), NONE, NONE, INTS(4, 1, 2, 1, 9)},
     .nin = 4, .attrs = {AS("mode", "linear"), AS("coordinate_transformation_mode", "pytorch_half_pixel")}, .nattrs = 2},
    {"resize_linear_asymmetric_down", "Resize", 13, .in = {IN(4, 1, 2, 9, 8), NONE, FLOATS(4, 1, 1, 0.6f, 0.75f)}, .nin = 3,
     .attrs = {AS("mode", "linear"), AS("coordinate_transformation_mode", "asymmetric")}, .nattrs = 2},
    {"resize19_linear_half_pixel_symmetric", "Resize", 19, .in = {IN(4, 1, 2, 4, 5), NONE, FLOATS(4, 1, 1, 1.7f, 0.6f)},
     .nin = 3, .attrs = {AS("mode", "linear"), AS("coordinate_transformation_mode", "half_pixel_symmetric")}, .nattrs = 2},
    {"resize_linear_2d", "Resize", 13, .in = {IN(2, 4, 6), NONE, FLOATS(2, 1.5f, 0.5f)}, .nin = 3, .attrs = {AS("mode", "linear")},
     .nattrs = 1},
    {"resize_linear_trilinear", "Resize", 13, .in = {IN(5, 1, 2, 3, 4, 5), NONE, FLOATS(5, 1, 1, 2, 1.5f, 0.8f)}, .nin = 3,
     .attrs = {AS("mode", "linear")}, .nattrs = 1},
    {"f16_resize_linear", "Resize", 13, F16, .in = {IN(4, 1, 3, 4, 5), NONE, FLOATS(4, 1, 1, 2, 2)}, .nin = 3,
     .attrs = {AS("mode", "linear")}, .nattrs = 1},
    {"f16_resize_nearest", "Resize", 13, F16, .in = {IN(4, 1, 3, 4, 5), NONE, FLOATS(4, 1, 1, 2, 3)}, .nin = 3},
    {"resize_nearest_dynamic_batch", "Resize", 13, .in = {IND(4, 1, 3, 4, 5), NONE, FLOATS(4, 1, 1, 2, 2)}, .nin = 3,
     .attrs = {AS("coordinate_transformation_mode", "asymmetric"), AS("nearest_mode", "floor")}, .nattrs = 2, .batch2 = 2},
    {"not_claimed_resize_cubic", "Resize", 13, .in = {IN(4, 1, 2, 4, 5), NONE, FLOATS(4, 1, 1, 2, 2)}, .nin = 3,
     .attrs = {AS("mode", "cubic")}, .nattrs = 1, .not_claimed = 1},
    {"not_claimed_resize_antialias", "Resize", 18, .in = {IN(4, 1, 2, 8, 8), NONE, FLOATS(4, 1, 1, 0.5f, 0.5f)}, .nin = 3,
     .attrs = {AS("mode", "linear"), AI("antialias", 1)}, .nattrs = 2, .not_claimed = 1},
    {"not_claimed_resize_not_larger", "Resize", 18, .in = {IN(4, 1, 2, 4, 5), NONE, NONE, INTS(2, 7, 8)}, .nin = 4,
     .attrs = {AIS("axes", 2, 3), AS("keep_aspect_ratio_policy", "not_larger")}, .nattrs = 2, .not_claimed = 1},
    {"not_claimed_resize_tf_crop", "Resize", 13, .in = {IN(4, 1, 2, 4, 5), FLOATS(8, 0, 0, 0.2f, 0.1f, 1, 1, 0.8f, 0.9f),
                                                         FLOATS(4, 1, 1, 2, 2)},
     .nin = 3, .attrs = {AS("mode", "linear"), AS("coordinate_transformation_mode", "tf_crop_and_resize")}, .nattrs = 2,
     .not_claimed = 1},
    /* align_corners where scale * in is no integer: ONNX's reference and ONNX Runtime disagree */
    {"not_claimed_resize_align_corners_fractional", "Resize", 13, .in = {IN(4, 1, 1, 2, 4), NONE, FLOATS(4, 1, 1, 0.6f, 0.6f)},
     .nin = 3, .attrs = {AS("mode", "linear"), AS("coordinate_transformation_mode", "align_corners")}, .nattrs = 2,
     .not_claimed = 1},
    {"not_claimed_resize_scales_input", "Resize", 13, .in = {IN(4, 1, 2, 4, 5), NONE, {.kind = S_IN, .dtype = F32, .rank = 1,
                                                                                       .dims = {4}, .fvals = (const float[]){1, 1, 2, 2}}},
     .nin = 3, .not_claimed = 1},

    /* layer normalisations */
    {"layernorm", "LayerNormalization", 17, .in = {IN(3, 2, 3, 8), W(1, 8), W(1, 8)}, .nin = 3},
    {"layernorm_no_bias", "LayerNormalization", 17, .in = {IN(3, 2, 3, 8), W(1, 8)}, .nin = 2,
     .attrs = {AF("epsilon", 1e-3f)}, .nattrs = 1},
    {"layernorm_axis1", "LayerNormalization", 17, .in = {IN(3, 2, 3, 4), W(2, 3, 4), W(2, 3, 4)}, .nin = 3,
     .attrs = {AI("axis", 1)}, .nattrs = 1},
    {"layernorm_stats", "LayerNormalization", 17, .in = {IN(3, 2, 3, 8), W(1, 8), W(1, 8)}, .nin = 3, .nout = 3,
     .out2_dtype = F32},
    {"layernorm_rows_96", "LayerNormalization", 17, .in = {IN(3, 4, 9, 96), W(1, 96), W(1, 96)}, .nin = 3},
    {"layernorm_rows_1024", "LayerNormalization", 17, .in = {IN(2, 3, 1024), W(1, 1024), W(1, 1024)}, .nin = 3},
    {"layernorm_rows_1025", "LayerNormalization", 17, .in = {IN(2, 3, 1025), W(1, 1025), W(1, 1025)}, .nin = 3},
    {"layernorm_long_rows", "LayerNormalization", 17, .in = {IN(2, 2, 9000), W(1, 9000), W(1, 9000)}, .nin = 3},
    {"layernorm_offset_rows", "LayerNormalization", 17, .in = {{.kind = S_IN, .rank = 2, .dims = {3, 40}, .shift = 50.0f},
                                                              W(1, 40), W(1, 40)}, .nin = 3},
    {"f16_layernorm", "LayerNormalization", 17, F16, .in = {IN(3, 2, 3, 64), W(1, 64), W(1, 64)}, .nin = 3},
    {"layernorm_dynamic_batch", "LayerNormalization", 17, .in = {IND(3, 2, 3, 8), W(1, 8), W(1, 8)}, .nin = 3, .batch2 = 5},
    {"simplified_layernorm", "SimplifiedLayerNormalization", 17, .in = {IN(3, 2, 3, 8), W(1, 8)}, .nin = 2},
    {"rmsnorm23", "RMSNormalization", 23, .in = {IN(3, 2, 3, 8), W(1, 8)}, .nin = 2, .attrs = {AF("epsilon", 1e-6f)},
     .nattrs = 1},
    {"skip_layernorm", "SkipLayerNormalization", .domain = "com.microsoft", .in = {IN(3, 2, 3, 8), IN(3, 2, 3, 8),
                                                                                W(1, 8), W(1, 8), W(1, 8)}, .nin = 5},
    {"skip_layernorm_skip_2d", "SkipLayerNormalization", .domain = "com.microsoft",
     .in = {IN(3, 2, 3, 8), IN(2, 3, 8), W(1, 8), W(1, 8)}, .nin = 4},
    {"skip_simplified_layernorm", "SkipSimplifiedLayerNormalization", .domain = "com.microsoft",
     .in = {IN(3, 2, 3, 8), IN(3, 2, 3, 8), W(1, 8)}, .nin = 3},
    /* rows of transformer widths: the GPU's register kernel (1-32 lanes a row, 16-byte pieces) */
    {"layernorm_rows_4_lanes1", "LayerNormalization", 17, .in = {IN(2, 37, 4), W(1, 4), W(1, 4)}, .nin = 3},
    {"layernorm_rows_192", "LayerNormalization", 17, .in = {IN(3, 3, 67, 192), W(1, 192), W(1, 192)}, .nin = 3},
    {"layernorm_rows_384_stats", "LayerNormalization", 17, .in = {IN(2, 7, 384), W(1, 384), W(1, 384)}, .nin = 3,
     .nout = 3, .out2_dtype = F32},
    {"layernorm_rows_768", "LayerNormalization", 17, .in = {IN(3, 1, 9, 768), W(1, 768), W(1, 768)}, .nin = 3},
    {"layernorm_rows_100_odd", "LayerNormalization", 17, .in = {IN(2, 5, 100), W(1, 100), W(1, 100)}, .nin = 3},
    {"rmsnorm_rows_768", "SimplifiedLayerNormalization", 17, .in = {IN(3, 1, 9, 768), W(1, 768)}, .nin = 2},
    {"skip_layernorm_768_bias", "SkipLayerNormalization", .domain = "com.microsoft",
     .in = {IN(3, 1, 5, 768), IN(2, 5, 768), W(1, 768), W(1, 768), W(1, 768)}, .nin = 5},
    {"f16_layernorm_rows_768", "LayerNormalization", 17, F16, .in = {IN(3, 1, 9, 768), W(1, 768), W(1, 768)}, .nin = 3},
    /* few wide rows: the GPU's vector kernel (one 256-thread block a row, 16-byte pieces) */
    {"layernorm_rows_2048_vec", "LayerNormalization", 17, .in = {IN(2, 3, 2048), W(1, 2048), W(1, 2048)}, .nin = 3},
    {"layernorm_stats_1536_vec", "LayerNormalization", 17, .in = {IN(2, 2, 1536), W(1, 1536), W(1, 1536)}, .nin = 3,
     .nout = 3},
    {"f16_skip_simplified_wide", "SkipSimplifiedLayerNormalization", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 1, 2, 2048), IN(3, 1, 2, 2048), W(1, 2048)}, .nin = 3},
    {"f16_skip_layernorm_wide_skip_2d", "SkipLayerNormalization", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 2, 1, 4096), IN(2, 1, 4096), W(1, 4096), W(1, 4096)}, .nin = 4},
    /* many rows with a 16-byte piece for every thread of the vector kernel (an LLM prompt's) */
    {"f16_skip_simplified_many_wide_rows", "SkipSimplifiedLayerNormalization", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 2, 150, 2048), IN(3, 2, 150, 2048), W(1, 2048)}, .nin = 3},
    {"layernorm_many_rows_1024_vec", "LayerNormalization", 17, .in = {IN(2, 300, 1024), W(1, 1024), W(1, 1024)}, .nin = 3},
    {"f16_simplified_layernorm_8192", "SimplifiedLayerNormalization", 17, .dtype = F16,
     .in = {IN(3, 1, 1, 8192), W(1, 8192)}, .nin = 2},
    {"f16_skip_layernorm", "SkipLayerNormalization", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 2, 3, 16), IN(3, 2, 3, 16), W(1, 16), W(1, 16)}, .nin = 4},

    /* attention (ai.onnx 23; com.microsoft, lowered to a MatMul and an Attention) */
    {"attention23", "Attention", 23, .in = {IN(4, 2, 3, 5, 8), IN(4, 2, 3, 6, 8), IN(4, 2, 3, 6, 4)}, .nin = 3},
    {"attention23_causal_scale", "Attention", 23, .in = {IN(4, 1, 2, 6, 8), IN(4, 1, 2, 6, 8), IN(4, 1, 2, 6, 8)}, .nin = 3,
     .attrs = {AI("is_causal", 1), AF("scale", 0.2f)}, .nattrs = 2},
    {"attention23_float_mask", "Attention", 23, .in = {IN(4, 2, 3, 5, 8), IN(4, 2, 3, 6, 8), IN(4, 2, 3, 6, 8), IN(2, 5, 6)},
     .nin = 4},
    {"attention23_bool_mask", "Attention", 23, .in = {IN(4, 1, 2, 3, 8), IN(4, 1, 2, 4, 8), IN(4, 1, 2, 4, 8),
                                                     IVALS(BOOL, 2, 3, 4, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1)}, .nin = 4},
    {"attention23_gqa", "Attention", 23, .in = {IN(4, 2, 4, 3, 8), IN(4, 2, 2, 5, 8), IN(4, 2, 2, 5, 8)}, .nin = 3},
    {"attention23_3d_heads", "Attention", 23, .in = {IN(3, 2, 5, 16), IN(3, 2, 6, 8), IN(3, 2, 6, 8)}, .nin = 3,
     .attrs = {AI("q_num_heads", 4), AI("kv_num_heads", 2)}, .nattrs = 2},
    {"f16_attention23", "Attention", 23, F16, .in = {IN(4, 2, 3, 5, 16), IN(4, 2, 3, 7, 16), IN(4, 2, 3, 7, 16)}, .nin = 3},
    {"attention23_long_rows", "Attention", 23, .in = {IN(4, 1, 2, 40, 64), IN(4, 1, 2, 70, 64), IN(4, 1, 2, 70, 32)}, .nin = 3,
     .attrs = {AI("is_causal", 1)}, .nattrs = 1},
    /* the GPU kernel's row blockings (1, 2, 4 rows per group) and an odd head size */
    {"attention23_rows4", "Attention", 23, .in = {IN(4, 1, 16, 256, 32), IN(4, 1, 16, 200, 32), IN(4, 1, 16, 200, 32)}, .nin = 3,
     .attrs = {AI("is_causal", 1)}, .nattrs = 1},
    {"attention23_rows2", "Attention", 23, .in = {IN(4, 1, 20, 100, 48), IN(4, 1, 20, 90, 48), IN(4, 1, 20, 90, 80)}, .nin = 3},
    {"f16_attention23_rows4", "Attention", 23, F16, .in = {IN(4, 1, 16, 256, 32), IN(4, 1, 16, 200, 32), IN(4, 1, 16, 200, 32)},
     .nin = 3},
    /* fp16 on the GPU's tensor-core kernel: GQA heads, causal with an additive mask; head sizes 80 and 96 */
    {"f16_attention23_flash_causal_mask", "Attention", 23, F16,
     .in = {IN(4, 2, 4, 150, 64), IN(4, 2, 2, 150, 64), IN(4, 2, 2, 150, 64), IN(2, 150, 150)}, .nin = 4,
     .attrs = {AI("is_causal", 1)}, .nattrs = 1},
    {"f16_attention23_flash_d80", "Attention", 23, F16, .in = {IN(4, 1, 3, 70, 80), IN(4, 1, 3, 90, 80), IN(4, 1, 3, 90, 80)},
     .nin = 3},
    {"f16_attention23_flash_d96_bool_mask", "Attention", 23, F16,
     .in = {IN(4, 1, 2, 33, 96), IN(4, 1, 2, 65, 96), IN(4, 1, 2, 65, 96), INT(BOOL, 2, 33, 65)}, .nin = 4},
    /* long enough for the GPU's GEMM form (fp32): masked, biased, causal, two batches */
    {"attention23_gemm_form", "Attention", 23, .in = {IN(4, 2, 2, 192, 64), IN(4, 2, 2, 192, 64), IN(4, 2, 2, 192, 64),
                                                     IN(2, 192, 192)}, .nin = 4, .attrs = {AI("is_causal", 1)}, .nattrs = 1},
    {"attention23_gemm_form_3d", "Attention", 23, .in = {IN(3, 2, 192, 128), IN(3, 2, 180, 128), IN(3, 2, 180, 128)}, .nin = 3,
     .attrs = {AI("q_num_heads", 2), AI("kv_num_heads", 2)}, .nattrs = 2},
    {"attention23_head6", "Attention", 23, .in = {IN(4, 1, 2, 3, 6), IN(4, 1, 2, 5, 6), IN(4, 1, 2, 5, 5)}, .nin = 3},
    {"ms_attention", "Attention", .domain = "com.microsoft", .in = {IN(3, 2, 5, 16), W(2, 16, 48), W(1, 48)}, .nin = 3,
     .attrs = {AI("num_heads", 2)}, .nattrs = 1},
    {"ms_attention_raw_mask", "Attention", .domain = "com.microsoft",
     .in = {IN(3, 2, 5, 16), W(2, 16, 48), W(1, 48), IVALS(I32, 2, 2, 5, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1)}, .nin = 4,
     .attrs = {AI("num_heads", 4)}, .nattrs = 1},
    {"ms_attention_lens_causal", "Attention", .domain = "com.microsoft",
     .in = {IN(3, 2, 5, 16), W(2, 16, 48), W(1, 48), IVALS(I32, 1, 2, 3, 5)}, .nin = 4,
     .attrs = {AI("num_heads", 2), AI("unidirectional", 1)}, .nattrs = 2},
    {"f16_ms_attention", "Attention", .domain = "com.microsoft", .dtype = F16,
     /* small weights: the CPU EP keeps the projection in fp32, we round it to fp16 */
     .in = {IN(3, 2, 5, 32), {.kind = S_W, .rank = 2, .dims = {32, 96}, .scale = 0.25f}, W(1, 96)}, .nin = 3,
     .attrs = {AI("num_heads", 2)}, .nattrs = 1},
    {"ms_mha", "MultiHeadAttention", .domain = "com.microsoft", .in = {IN(3, 2, 5, 16), IN(3, 2, 7, 16), IN(3, 2, 7, 8)},
     .nin = 3, .attrs = {AI("num_heads", 2)}, .nattrs = 1},
    {"ms_mha_key_padding", "MultiHeadAttention", .domain = "com.microsoft",
     .in = {IN(3, 2, 5, 16), IN(3, 2, 4, 16), IN(3, 2, 4, 16), NONE, IVALS(I32, 2, 2, 4, 1, 1, 0, 0, 1, 1, 1, 0)}, .nin = 5,
     .attrs = {AI("num_heads", 4), AF("scale", 0.3f)}, .nattrs = 2},
    {"ms_mha_lens_causal", "MultiHeadAttention", .domain = "com.microsoft",
     .in = {IN(3, 2, 5, 16), IN(3, 2, 5, 16), IN(3, 2, 5, 16), NONE, IVALS(I32, 1, 2, 3, 5)}, .nin = 5,
     .attrs = {AI("num_heads", 2), AI("unidirectional", 1)}, .nattrs = 2},
    /* one query row under unidirectional: the CPU EP applies no causal cut (it does past one row) */
    {"ms_mha_one_row_unidirectional", "MultiHeadAttention", .domain = "com.microsoft",
     .in = {IN(3, 2, 1, 16), IN(3, 2, 6, 16), IN(3, 2, 6, 16), NONE, IVALS(I32, 2, 2, 6, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1)},
     .nin = 5, .attrs = {AI("num_heads", 2), AI("unidirectional", 1)}, .nattrs = 2},
    /* int32 masks at sizes the GPU's tensor-core kernel takes (16 rows or more, head size 32), random values
     * -8..8: the CPU EP keeps a key where its value is above zero (0 and the negatives mask, about half) */
    {"ms_mha_key_padding_flash", "MultiHeadAttention", .domain = "com.microsoft",
     .in = {IN(3, 2, 40, 64), IN(3, 2, 50, 64), IN(3, 2, 50, 64), NONE, INT(I32, 2, 2, 50)}, .nin = 5,
     .attrs = {AI("num_heads", 2)}, .nattrs = 1},
    /* with the causal cut some rows see only masked keys (scores near -10000, where the CPU EP's fp32 keeps
     * three decimals): the case is held to 10x fp32's tolerance */
    {"ms_attention_mask3d_causal", "Attention", .domain = "com.microsoft",
     .in = {IN(3, 2, 40, 64), {.kind = S_W, .rank = 2, .dims = {64, 192}, .scale = 0.25f}, W(1, 192), INT(I32, 3, 2, 40, 40)},
     .nin = 4, .attrs = {AI("num_heads", 2), AI("unidirectional", 1)}, .nattrs = 2, .tol_x = 10},
    {"ms_mha_mask3d_filter_value", "MultiHeadAttention", .domain = "com.microsoft",
     .in = {IN(3, 2, 20, 32), IN(3, 2, 24, 32), IN(3, 2, 24, 32), NONE, INT(I32, 3, 2, 20, 24)}, .nin = 5,
     .attrs = {AI("num_heads", 2), AF("mask_filter_value", -500.0f)}, .nattrs = 2},
    {"f16_ms_attention_raw_mask_flash", "Attention", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 2, 40, 64), {.kind = S_W, .rank = 2, .dims = {64, 192}, .scale = 0.25f}, W(1, 192), INT(I32, 2, 2, 40)},
     .nin = 4, .attrs = {AI("num_heads", 2)}, .nattrs = 1},
    /* EmbedLayerNormalization: ids, segment ids, word, position, segment tables, gamma, beta, mask, position ids */
    {"embed_layernorm", "EmbedLayerNormalization", .domain = "com.microsoft",
     .in = {IVALS(I32, 2, 2, 3, 5, 0, 9, 3, 3, 1), IVALS(I32, 2, 2, 3, 0, 1, 1, 0, 0, 1), W(2, 10, 16), W(2, 8, 16), W(2, 2, 16),
            W(1, 16), W(1, 16), IVALS(I32, 2, 2, 3, 1, 1, 0, 1, 1, 1)},
     .nin = 8, .nout = 3, .out2_dtype = I32, .out3_dtype = F32},
    /* a mask of values other than 0 and 1: mask_index counts its 1s, as the CPU EP does */
    {"embed_layernorm_mask_values", "EmbedLayerNormalization", .domain = "com.microsoft",
     .in = {IVALS(I32, 2, 2, 3, 5, 0, 9, 3, 3, 1), IVALS(I32, 2, 2, 3, 0, 1, 1, 0, 0, 1), W(2, 10, 16), W(2, 8, 16), W(2, 2, 16),
            W(1, 16), W(1, 16), IVALS(I32, 2, 2, 3, 1, -2, 0, 3, 1, -1)},
     .nin = 8, .nout = 3, .out2_dtype = I32, .out3_dtype = F32},
    {"embed_layernorm_plain", "EmbedLayerNormalization", .domain = "com.microsoft",
     .in = {IVALS(I32, 2, 2, 4, 1, 2, 3, 4, 5, 6, 7, 0), NONE, W(2, 8, 32), W(2, 6, 32), NONE, W(1, 32), W(1, 32)}, .nin = 7, .nout = 2, .out2_dtype = I32,
     .attrs = {AF("epsilon", 1e-5f)}, .nattrs = 1},
    {"embed_layernorm_position_ids", "EmbedLayerNormalization", .domain = "com.microsoft",
     .in = {IVALS(I32, 2, 1, 3, 2, 2, 0), NONE, W(2, 4, 8), W(2, 9, 8), NONE, W(1, 8), W(1, 8), NONE,
            IVALS(I32, 2, 1, 3, 8, 0, 4)}, .nin = 9, .nout = 2, .out2_dtype = I32},
    {"f16_embed_layernorm", "EmbedLayerNormalization", .domain = "com.microsoft", .dtype = F16,
     .in = {IVALS(I32, 2, 2, 3, 5, 0, 9, 3, 3, 1), NONE, W(2, 10, 64), W(2, 8, 64), NONE, W(1, 64), W(1, 64)}, .nin = 7,
     .nout = 2, .out2_dtype = I32},
    /* com.microsoft MatMulNBits: A [..., K], B [N, k_blocks, block_size / 2] random codes, scales [N * k_blocks]
     * or [N, k_blocks], zero points [N * ceil(k_blocks / 2)] (or 2-D), g_idx, bias [N]. M (rows of A) <= 8
     * runs the GPU's GEMV, more the dequantise + GEMM path. */
    {"nbits_b16_m1", "MatMulNBits", .domain = "com.microsoft", .in = {IN(2, 1, 64), QB(3, 24, 4, 8), SC(1, 96)}, .nin = 3,
     .attrs = {AI("K", 64), AI("N", 24), AI("bits", 4), AI("block_size", 16)}, .nattrs = 4},
    {"nbits_b32_zp_m3", "MatMulNBits", .domain = "com.microsoft",
     .in = {IN(3, 1, 3, 128), QB(3, 40, 4, 16), SC(2, 40, 4), QB(1, 80)}, .nin = 4,
     .attrs = {AI("K", 128), AI("N", 40), AI("bits", 4), AI("block_size", 32)}, .nattrs = 4},
    {"nbits_b64_zp_bias_m8", "MatMulNBits", .domain = "com.microsoft",
     .in = {IN(2, 8, 256), QB(3, 33, 4, 32), SC(1, 132), QB(2, 33, 2), NONE, W(1, 33)}, .nin = 6,
     .attrs = {AI("K", 256), AI("N", 33), AI("bits", 4), AI("block_size", 64), AI("accuracy_level", 0)}, .nattrs = 5},
    {"nbits_b128_bias_m33", "MatMulNBits", .domain = "com.microsoft",
     .in = {IN(3, 3, 11, 256), QB(3, 48, 2, 64), SC(1, 96), NONE, NONE, W(1, 48)}, .nin = 6,
     .attrs = {AI("K", 256), AI("N", 48), AI("bits", 4), AI("block_size", 128)}, .nattrs = 4},
    {"nbits_b32_zp_bias_m33", "MatMulNBits", .domain = "com.microsoft",
     .in = {IN(2, 33, 96), QB(3, 20, 3, 16), SC(2, 20, 3), QB(1, 40), NONE, W(1, 20)}, .nin = 6,
     .attrs = {AI("K", 96), AI("N", 20), AI("bits", 4), AI("block_size", 32)}, .nattrs = 4},
    {"nbits_b256_m2", "MatMulNBits", .domain = "com.microsoft", .in = {IN(2, 2, 512), QB(3, 8, 2, 128), SC(1, 16)},
     .nin = 3, .attrs = {AI("K", 512), AI("N", 8), AI("bits", 4), AI("block_size", 256)}, .nattrs = 4},
    /* K not a multiple of block_size: the last block's padding codes are ignored */
    {"nbits_k_tail_zp_m5", "MatMulNBits", .domain = "com.microsoft",
     .in = {IN(2, 5, 200), QB(3, 20, 7, 16), SC(1, 140), QB(1, 80)}, .nin = 4,
     .attrs = {AI("K", 200), AI("N", 20), AI("bits", 4), AI("block_size", 32)}, .nattrs = 4},
    {"nbits_k_tail_bias_m33", "MatMulNBits", .domain = "com.microsoft",
     .in = {IN(2, 33, 72), QB(3, 16, 2, 32), SC(1, 32), QB(1, 16), NONE, W(1, 16)}, .nin = 6,
     .attrs = {AI("K", 72), AI("N", 16), AI("bits", 4), AI("block_size", 64)}, .nattrs = 4},
    {"nbits_k_tail_b16_m1", "MatMulNBits", .domain = "com.microsoft",
     .in = {IN(3, 1, 1, 37), QB(3, 12, 3, 8), SC(1, 36), QB(1, 24)}, .nin = 4,
     .attrs = {AI("K", 37), AI("N", 12), AI("bits", 4), AI("block_size", 16)}, .nattrs = 4},
    /* decode, then prefill, then decode again: one plan per shape, each its own path */
    {"nbits_dynamic_rows", "MatMulNBits", .domain = "com.microsoft",
     .in = {IND(2, 2, 128), QB(3, 24, 4, 16), SC(1, 96), QB(1, 48), NONE, W(1, 24)}, .nin = 6,
     .attrs = {AI("K", 128), AI("N", 24), AI("bits", 4), AI("block_size", 32)}, .nattrs = 4, .batch2 = 40},
    {"f16_nbits_b32_zp_bias_m1", "MatMulNBits", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(2, 1, 256), QB(3, 64, 8, 16), SC(1, 512), QB(1, 256), NONE, W(1, 64)}, .nin = 6,
     .attrs = {AI("K", 256), AI("N", 64), AI("bits", 4), AI("block_size", 32)}, .nattrs = 4},
    {"f16_nbits_b128_m8", "MatMulNBits", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 2, 4, 256), QB(3, 32, 2, 64), SC(2, 32, 2)}, .nin = 3,
     .attrs = {AI("K", 256), AI("N", 32), AI("bits", 4), AI("block_size", 128)}, .nattrs = 4},
    {"f16_nbits_b16_zp_bias_m33", "MatMulNBits", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(2, 33, 96), QB(3, 40, 6, 8), SC(1, 240), QB(1, 120), NONE, W(1, 40)}, .nin = 6,
     .attrs = {AI("K", 96), AI("N", 40), AI("bits", 4), AI("block_size", 16)}, .nattrs = 4},
    {"f16_nbits_k_tail_m33", "MatMulNBits", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 3, 11, 100), QB(3, 24, 2, 32), SC(1, 48), QB(1, 24)}, .nin = 4,
     .attrs = {AI("K", 100), AI("N", 24), AI("bits", 4), AI("block_size", 64)}, .nattrs = 4},
    /* left to the CPU EP: 8-bit codes, g_idx, float zero points, B not a constant */
    {"nbits_not_claimed_8bits", "MatMulNBits", .domain = "com.microsoft", .in = {IN(2, 3, 64), QB(3, 16, 2, 32), SC(1, 32)},
     .nin = 3, .attrs = {AI("K", 64), AI("N", 16), AI("bits", 8), AI("block_size", 32)}, .nattrs = 4, .not_claimed = 1},
    {"nbits_not_claimed_g_idx", "MatMulNBits", .domain = "com.microsoft",
     .in = {IN(2, 3, 32), QB(3, 8, 2, 8), SC(1, 16), NONE,
            IVALS32C(32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)},
     .nin = 5, .attrs = {AI("K", 32), AI("N", 8), AI("bits", 4), AI("block_size", 16)}, .nattrs = 4, .not_claimed = 1},
    {"nbits_not_claimed_float_zp", "MatMulNBits", .domain = "com.microsoft",
     .in = {IN(2, 3, 64), QB(3, 16, 2, 16), SC(1, 32), WPOS(1, 32)}, .nin = 4,
     .attrs = {AI("K", 64), AI("N", 16), AI("bits", 4), AI("block_size", 32)}, .nattrs = 4, .not_claimed = 1},
    {"nbits_not_claimed_b_input", "MatMulNBits", .domain = "com.microsoft",
     .in = {IN(2, 3, 64), INT(HD_DT_U8, 3, 16, 2, 16), SC(1, 32)}, .nin = 3,
     .attrs = {AI("K", 64), AI("N", 16), AI("bits", 4), AI("block_size", 32)}, .nattrs = 4, .not_claimed = 1},
    {"not_claimed_attention23_softcap", "Attention", 23, .in = {IN(4, 1, 2, 3, 8), IN(4, 1, 2, 4, 8), IN(4, 1, 2, 4, 8)},
     .nin = 3, .attrs = {AF("softcap", 2.0f)}, .nattrs = 1, .not_claimed = 1},

    /* GroupQueryAttention: query, key, value, past_key, past_value, seqlens_k, total_sequence_length, cos, sin */
    {"gqa_prefill_packed_rotary", "GroupQueryAttention", .domain = "com.microsoft",
     .in = {IN(3, 2, 5, 128), NONE, NONE, NONE, NONE, IVALS(I32, 1, 2, 4, 4), IVALS32C(1, 5), W(2, 16, 8), W(2, 16, 8)},
     .nin = 9, .attrs = {AI("num_heads", 4), AI("kv_num_heads", 2), AI("do_rotary", 1)}, .nattrs = 3, .nout = 3},
    {"gqa_decode_past_interleaved", "GroupQueryAttention", .domain = "com.microsoft",
     .in = {IN(3, 2, 1, 64), IN(3, 2, 1, 32), IN(3, 2, 1, 32), IN(4, 2, 2, 6, 16), IN(4, 2, 2, 6, 16),
            IVALS(I32, 1, 2, 6, 4), IVALS32C(1, 7), W(2, 16, 8), W(2, 16, 8)},
     .nin = 9, .attrs = {AI("num_heads", 4), AI("kv_num_heads", 2), AI("do_rotary", 1), AI("rotary_interleaved", 1)},
     .nattrs = 4, .nout = 3},
    {"gqa_decode_long_past_partial_rotary", "GroupQueryAttention", .domain = "com.microsoft",
     .in = {IN(3, 1, 1, 96), NONE, NONE, IN(4, 1, 1, 10, 32), IN(4, 1, 1, 10, 32), IVALS(I32, 1, 1, 4), IVALS32C(1, 5),
            W(2, 12, 8), W(2, 12, 8)},
     .nin = 9, .attrs = {AI("num_heads", 1), AI("kv_num_heads", 1), AI("do_rotary", 1)}, .nattrs = 3, .nout = 3},
    {"gqa_continued_prompt", "GroupQueryAttention", .domain = "com.microsoft",
     .in = {IN(3, 1, 3, 128), NONE, NONE, IN(4, 1, 2, 4, 16), IN(4, 1, 2, 4, 16), IVALS(I32, 1, 1, 6), IVALS32C(1, 7),
            W(2, 16, 8), W(2, 16, 8)},
     .nin = 9, .attrs = {AI("num_heads", 4), AI("kv_num_heads", 2), AI("do_rotary", 1)}, .nattrs = 3, .nout = 3},
    {"gqa_prefill_window_softcap_scale", "GroupQueryAttention", .domain = "com.microsoft",
     .in = {IN(3, 2, 6, 32), IN(3, 2, 6, 16), IN(3, 2, 6, 16), NONE, NONE, IVALS(I32, 1, 2, 5, 5), IVALS32C(1, 6)},
     .nin = 7,
     .attrs = {AI("num_heads", 2), AI("kv_num_heads", 1), AI("local_window_size", 2), AF("softcap", 1.5f), AF("scale", 0.4f)},
     .nattrs = 5, .nout = 3},
    /* decode over a long cache: the GPU splits the keys over blocks (and folds each KV head's query heads into rows) */
    {"gqa_decode_long_cache_split", "GroupQueryAttention", .domain = "com.microsoft",
     .in = {IN(3, 2, 1, 192), NONE, NONE, IN(4, 2, 2, 300, 16), IN(4, 2, 2, 300, 16), IVALS(I32, 1, 2, 259, 130),
            IVALS32C(1, 260), W(2, 300, 8), W(2, 300, 8)},
     .nin = 9, .attrs = {AI("num_heads", 8), AI("kv_num_heads", 2), AI("do_rotary", 1)}, .nattrs = 3, .nout = 3},
    {"gqa_decode_group8_window_softcap", "GroupQueryAttention", .domain = "com.microsoft",
     .in = {IN(3, 1, 1, 320), NONE, NONE, IN(4, 1, 2, 400, 16), IN(4, 1, 2, 400, 16), IVALS(I32, 1, 1, 333),
            IVALS32C(1, 334)},
     .nin = 7, .attrs = {AI("num_heads", 16), AI("kv_num_heads", 2), AI("local_window_size", 50), AF("softcap", 2.0f)},
     .nattrs = 4, .nout = 3},
    {"f16_gqa_decode_past", "GroupQueryAttention", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 2, 1, 128), NONE, NONE, IN(4, 2, 2, 6, 16), IN(4, 2, 2, 6, 16), IVALS(I32, 1, 2, 6, 3), IVALS32C(1, 7),
            W(2, 16, 8), W(2, 16, 8)},
     .nin = 9, .attrs = {AI("num_heads", 4), AI("kv_num_heads", 2), AI("do_rotary", 1)}, .nattrs = 3, .nout = 3},
    /* decode's own GPU kernel (16-byte rows, key ranges merged): head size 64 and 128, groups 4 and 8 */
    {"f16_gqa_decode_d64_group4_ranges", "GroupQueryAttention", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 2, 1, 768), NONE, NONE, IN(4, 2, 2, 300, 64), IN(4, 2, 2, 300, 64), IVALS(I32, 1, 2, 259, 130),
            IVALS32C(1, 260), W(2, 300, 32), W(2, 300, 32)},
     .nin = 9, .attrs = {AI("num_heads", 8), AI("kv_num_heads", 2), AI("do_rotary", 1)}, .nattrs = 3, .nout = 3},
    /* rotary (interleaved) with a group of 8: the kernel's 8-head staging rotates Q and makes the new K row */
    {"f16_gqa_decode_d64_group8_interleaved_ranges", "GroupQueryAttention", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 1, 1, 1280), NONE, NONE, IN(4, 1, 2, 200, 64), IN(4, 1, 2, 200, 64), IVALS(I32, 1, 1, 150),
            IVALS32C(1, 151), W(2, 200, 32), W(2, 200, 32)},
     .nin = 9, .attrs = {AI("num_heads", 16), AI("kv_num_heads", 2), AI("do_rotary", 1), AI("rotary_interleaved", 1)},
     .nattrs = 4, .nout = 3},
    /* more ranges than the merge takes in one round (16 at head size 64 and group 4, 4 at 128 and 8) */
    {"f16_gqa_decode_d64_group4_merge_rounds", "GroupQueryAttention", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 2, 1, 768), NONE, NONE, IN(4, 2, 2, 1300, 64), IN(4, 2, 2, 1300, 64), IVALS(I32, 1, 2, 1200, 300),
            IVALS32C(1, 1201), W(2, 1300, 32), W(2, 1300, 32)},
     .nin = 9, .attrs = {AI("num_heads", 8), AI("kv_num_heads", 2), AI("do_rotary", 1)}, .nattrs = 3, .nout = 3},
    {"f16_gqa_decode_d128_group8_window_merge_rounds", "GroupQueryAttention", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 1, 1, 2560), NONE, NONE, IN(4, 1, 2, 900, 128), IN(4, 1, 2, 900, 128), IVALS(I32, 1, 1, 850),
            IVALS32C(1, 851)},
     .nin = 7, .attrs = {AI("num_heads", 16), AI("kv_num_heads", 2), AI("local_window_size", 600)}, .nattrs = 3,
     .nout = 3},
    {"f16_gqa_decode_d128_group8_window_softcap", "GroupQueryAttention", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 1, 1, 2560), NONE, NONE, IN(4, 1, 2, 200, 128), IN(4, 1, 2, 200, 128), IVALS(I32, 1, 1, 150),
            IVALS32C(1, 151)},
     .nin = 7, .attrs = {AI("num_heads", 16), AI("kv_num_heads", 2), AI("local_window_size", 40), AF("softcap", 2.0f)},
     .nattrs = 4, .nout = 3},
    /* prefill on the GPU's tensor-core kernel (fp16, head sizes 64/128; rows and keys past its 64-row and 64/32-key tiles) */
    {"f16_gqa_prefill_d64_rotary_flash", "GroupQueryAttention", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 2, 100, 768), NONE, NONE, NONE, NONE, IVALS(I32, 1, 2, 99, 99), IVALS32C(1, 100), W(2, 100, 32),
            W(2, 100, 32)},
     .nin = 9, .attrs = {AI("num_heads", 8), AI("kv_num_heads", 2), AI("do_rotary", 1)}, .nattrs = 3, .nout = 3},
    {"f16_gqa_continued_d128_window_softcap_flash", "GroupQueryAttention", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 1, 40, 1024), IN(3, 1, 40, 256), IN(3, 1, 40, 256), IN(4, 1, 2, 50, 128), IN(4, 1, 2, 50, 128),
            IVALS(I32, 1, 1, 89), IVALS32C(1, 90)},
     .nin = 7, .attrs = {AI("num_heads", 8), AI("kv_num_heads", 2), AI("local_window_size", 30), AF("softcap", 2.0f)},
     .nattrs = 4, .nout = 3},
    {"gqa_decode_d64_fp32_first_token", "GroupQueryAttention", .domain = "com.microsoft",
     .in = {IN(3, 2, 1, 384), NONE, NONE, NONE, NONE, IVALS(I32, 1, 2, 0, 0), IVALS32C(1, 1), W(2, 4, 32), W(2, 4, 32)},
     .nin = 9, .attrs = {AI("num_heads", 4), AI("kv_num_heads", 1), AI("do_rotary", 1)}, .nattrs = 3, .nout = 3},
    {"not_claimed_gqa_dynamic_total", "GroupQueryAttention", .domain = "com.microsoft",
     .in = {IN(3, 2, 5, 128), NONE, NONE, NONE, NONE, IVALS(I32, 1, 2, 4, 4), IVALS(I32, 1, 1, 5)},
     .nin = 7, .attrs = {AI("num_heads", 4), AI("kv_num_heads", 2)}, .nattrs = 2, .nout = 3, .not_claimed = 1},
    /* RotaryEmbedding (com.microsoft: input, position_ids, cos, sin) */
    {"ms_rotary", "RotaryEmbedding", .domain = "com.microsoft",
     .in = {IN(3, 2, 3, 64), IVALS(I64, 2, 2, 3, 0, 1, 2, 7, 3, 9), W(2, 10, 16), W(2, 10, 16)}, .nin = 4},
    {"ms_rotary_offset_interleaved", "RotaryEmbedding", .domain = "com.microsoft",
     .in = {IN(3, 2, 3, 64), INTS(1, 5), W(2, 10, 16), W(2, 10, 16)}, .nin = 4, .attrs = {AI("interleaved", 1)}, .nattrs = 1},
    {"ms_rotary_4d_partial", "RotaryEmbedding", .domain = "com.microsoft",
     .in = {IN(4, 2, 2, 3, 16), IVALS(I64, 2, 2, 3, 0, 1, 2, 3, 4, 5), W(2, 8, 4), W(2, 8, 4)}, .nin = 4,
     .attrs = {AI("num_heads", 2), AI("rotary_embedding_dim", 8)}, .nattrs = 2},
    {"f16_ms_rotary", "RotaryEmbedding", .domain = "com.microsoft", .dtype = F16,
     .in = {IN(3, 2, 3, 64), IVALS(I64, 2, 2, 3, 0, 1, 2, 7, 3, 9), W(2, 10, 16), W(2, 10, 16)}, .nin = 4},
    /* com.microsoft GELUs */
    {"ms_gelu", "Gelu", 1, .domain = "com.microsoft", .in = {X4}, .nin = 1},
    {"fast_gelu", "FastGelu", 1, .domain = "com.microsoft", .in = {X4}, .nin = 1},
    {"fast_gelu_bias", "FastGelu", 1, .domain = "com.microsoft", .in = {X4, W(1, 5)}, .nin = 2},
    {"bias_gelu", "BiasGelu", 1, .domain = "com.microsoft", .in = {X4, W(1, 5)}, .nin = 2},
    {"quick_gelu", "QuickGelu", 1, .domain = "com.microsoft", .in = {X4}, .nin = 1, .attrs = {AF("alpha", 1.5f)}, .nattrs = 1},
    {"f16_fast_gelu_bias", "FastGelu", 1, F16, .domain = "com.microsoft", .in = {X4, W(1, 5)}, .nin = 2},

    /* more arithmetic; integers (shape arithmetic: computed when the plan is
     * built where the inputs are known, else only the reference backend) */
    {"pow", "Pow", 15, .in = {X4P, IN(1, 5)}, .nin = 2},
    {"pow_const_exponent", "Pow", 13, .in = {X4, FC(3.0f)}, .nin = 2},
    {"min2", "Min", 13, .in = {X4, IN(2, 4, 5)}, .nin = 2},
    {"max2", "Max", 13, .in = {X4, IN(1, 5)}, .nin = 2},
    {"sum2", "Sum", 13, .in = {X4, X4}, .nin = 2},
    {"mean2", "Mean", 13, .in = {X4, IN(3, 3, 1, 5)}, .nin = 2},
    {"f16_pow", "Pow", 15, F16, .in = {X4P, FC(2.0f)}, .nin = 2},
    {"f16_max2", "Max", 13, F16, .in = {X4, X4}, .nin = 2},
    {"div_int64_host_only", "Div", .dtype = I64, .in = {X4, IVALS(I64, 1, 5, 3, -2, 5, 7, -1)}, .nin = 2, .host_only = 1},
    {"mul_int64_consts", "Mul", .dtype = I64, .in = {INTS(2, 3, -4), INTS(1, 5)}, .nin = 2},
    {"max_int64_consts", "Max", 13, .dtype = I64, .in = {INTS(3, 3, -4, 9), INTS(1, 5)}, .nin = 2},

    /* ConstantOfShape, Range: computed when the plan is built */
    {"constant_of_shape_default", "ConstantOfShape", 13, .in = {INTS(3, 2, 3, 4)}, .nin = 1},
    {"range_int64", "Range", 13, .dtype = I64, .in = {INTS0(2), INTS0(17), INTS0(3)}, .nin = 3},
    {"range_int64_down", "Range", 13, .dtype = I64, .in = {INTS0(5), INTS0(-4), INTS0(-2)}, .nin = 3},
    {"range_float", "Range", 13, .in = {FC(0.5f), FC(3.0f), FC(0.3f)}, .nin = 3},
    {"range_empty", "Range", 13, .dtype = I64, .in = {INTS0(5), INTS0(1), INTS0(1)}, .nin = 3},
    {"not_claimed_range_input", "Range", 13, .dtype = I64, .in = {IVALS(I64, 0, 1), INTS0(9), INTS0(2)}, .nin = 3,
     .not_claimed = 1},

    /* comparisons and logic */
    {"equal_int64", "Equal", 13, .dtype = I64, .in = {IN(2, 3, 4), IN(1, 4)}, .nin = 2, .out_dtype = BOOL},
    {"less_float", "Less", 13, .in = {X4, IN(1, 5)}, .nin = 2, .out_dtype = BOOL},
    {"less_or_equal", "LessOrEqual", 16, .in = {X4, X4}, .nin = 2, .out_dtype = BOOL},
    {"greater", "Greater", 13, .in = {X4, FC(0.0f)}, .nin = 2, .out_dtype = BOOL},
    {"greater_or_equal_int32", "GreaterOrEqual", 16, .dtype = I32, .in = {X4, IN(3, 3, 1, 5)}, .nin = 2, .out_dtype = BOOL},
    {"f16_equal", "Equal", 13, F16, .in = {X4, X4}, .nin = 2, .out_dtype = BOOL},
    {"and", "And", 7, .dtype = BOOL, .in = {X4, IN(1, 5)}, .nin = 2},
    {"or", "Or", 7, .dtype = BOOL, .in = {X4, X4}, .nin = 2},
    {"xor", "Xor", 7, .dtype = BOOL, .in = {X4, X4}, .nin = 2},
    {"not", "Not", 1, .dtype = BOOL, .in = {X4}, .nin = 1},
    {"isnan", "IsNaN", 13, .in = {X4}, .nin = 1, .out_dtype = BOOL},
    {"isinf", "IsInf", 10, .in = {X4}, .nin = 1, .out_dtype = BOOL},

    /* Where, Trilu */
    {"where", "Where", 16, .in = {INT(BOOL, 3, 3, 1, 5), X4, IN(1, 5)}, .nin = 3},
    {"where_scalar_else", "Where", 16, .in = {INT(BOOL, 4, 2, 3, 4, 5), X4, FC(-1e9f)}, .nin = 3},
    {"where_int64", "Where", 16, .dtype = I64, .in = {INT(BOOL, 2, 4, 5), IN(1, 5), IN(2, 4, 5)}, .nin = 3},
    {"f16_where", "Where", 16, F16, .in = {INT(BOOL, 4, 2, 3, 4, 5), X4, X4}, .nin = 3},
    {"trilu_upper", "Trilu", 14, .in = {IN(3, 2, 4, 5)}, .nin = 1},
    {"trilu_lower_k", "Trilu", 14, .in = {IN(3, 2, 5, 4), INTS0(-1)}, .nin = 2, .attrs = {AI("upper", 0)}, .nattrs = 1},
    {"trilu_upper_k2_int64", "Trilu", 14, .dtype = I64, .in = {IN(2, 4, 4), INTS0(2)}, .nin = 2},

    /* ConvTranspose: W [C_in, C_out / group, k...] */
    {"convt_basic", "ConvTranspose", 11, .in = {IN(4, 1, 2, 3, 3), W(4, 2, 3, 3, 3)}, .nin = 2},
    {"convt_s2_bias", "ConvTranspose", 11, .in = {IN(4, 2, 4, 5, 6), W(4, 4, 3, 3, 3), W(1, 3)}, .nin = 3,
     .attrs = {AIS("strides", 2, 2)}, .nattrs = 1},
    {"convt_pads_output_padding", "ConvTranspose", 11, .in = {IN(4, 1, 3, 5, 4), W(4, 3, 2, 3, 4), W(1, 2)}, .nin = 3,
     .attrs = {AIS("strides", 2, 3), AIS("pads", 1, 0, 2, 1), AIS("output_padding", 1, 2)}, .nattrs = 3},
    {"convt_dilations_kernel_shape", "ConvTranspose", 11, .in = {IN(4, 1, 2, 5, 5), W(4, 2, 3, 3, 3)}, .nin = 2,
     .attrs = {AIS("dilations", 2, 3), AIS("pads", 1, 1, 1, 2), AIS("kernel_shape", 3, 3)}, .nattrs = 3},
    {"convt_dilation_output_padding", "ConvTranspose", 11, .in = {IN(4, 1, 2, 4, 4), W(4, 2, 2, 3, 3)}, .nin = 2,
     .attrs = {AIS("dilations", 3, 2), AIS("strides", 2, 3), AIS("output_padding", 1, 2)}, .nattrs = 3},
    {"convt_group2", "ConvTranspose", 11, .in = {IN(4, 2, 4, 4, 5), W(4, 4, 3, 3, 3), W(1, 6)}, .nin = 3,
     .attrs = {AI("group", 2), AIS("strides", 2, 1)}, .nattrs = 2},
    {"convt_depthwise", "ConvTranspose", 11, .in = {IN(4, 1, 4, 5, 5), W(4, 4, 1, 3, 3), W(1, 4)}, .nin = 3,
     .attrs = {AI("group", 4), AIS("strides", 2, 2), AIS("pads", 1, 1, 1, 1)}, .nattrs = 3},
    {"convt_output_shape", "ConvTranspose", 11, .in = {IN(4, 1, 2, 4, 4), W(4, 2, 3, 3, 3)}, .nin = 2,
     .attrs = {AIS("strides", 2, 2), AIS("output_shape", 7, 8)}, .nattrs = 2},
    {"convt_output_shape_one_past", "ConvTranspose", 11, .in = {IN(4, 1, 2, 3, 3), W(4, 2, 3, 3, 3), W(1, 3)}, .nin = 3,
     .attrs = {AIS("strides", 3, 2), AIS("output_shape", 9, 8)}, .nattrs = 2},
    {"convt_same_upper", "ConvTranspose", 11, .in = {IN(4, 1, 2, 4, 5), W(4, 2, 3, 3, 3)}, .nin = 2,
     .attrs = {AIS("strides", 2, 2), AS("auto_pad", "SAME_UPPER")}, .nattrs = 2},
    {"convt_same_lower", "ConvTranspose", 11, .in = {IN(4, 1, 2, 4, 5), W(4, 2, 3, 4, 3)}, .nin = 2,
     .attrs = {AIS("strides", 2, 2), AS("auto_pad", "SAME_LOWER")}, .nattrs = 2},
    {"convt_valid", "ConvTranspose", 11, .in = {IN(4, 1, 2, 4, 5), W(4, 2, 3, 3, 2)}, .nin = 2,
     .attrs = {AIS("strides", 3, 2), AS("auto_pad", "VALID")}, .nattrs = 2},
    {"convt_1d", "ConvTranspose", 11, .in = {IN(3, 2, 3, 7), W(3, 3, 2, 4), W(1, 2)}, .nin = 3,
     .attrs = {AIS("strides", 3), AIS("pads", 1, 2)}, .nattrs = 2},
    {"convt_1d_group_output_padding", "ConvTranspose", 11, .in = {IN(3, 1, 4, 6), W(3, 4, 3, 3)}, .nin = 2,
     .attrs = {AI("group", 2), AIS("strides", 2), AIS("output_padding", 1)}, .nattrs = 3},
    /* 3D: the GPU backend leaves it to the CPU EP */
    {"convt_3d", "ConvTranspose", 11, .in = {IN(5, 1, 2, 3, 4, 3), W(5, 2, 2, 2, 3, 2), W(1, 2)}, .nin = 3,
     .attrs = {AIS("strides", 1, 2, 2), AIS("pads", 0, 1, 0, 1, 0, 1)}, .nattrs = 2, .host_only = 1},
    {"convt_opset1", "ConvTranspose", 1, .in = {IN(4, 1, 2, 3, 3), W(4, 2, 3, 2, 2)}, .nin = 2,
     .attrs = {AIS("strides", 2, 2)}, .nattrs = 1},
    {"convt_opset22", "ConvTranspose", 22, .in = {IN(4, 1, 2, 3, 3), W(4, 2, 3, 2, 2), W(1, 3)}, .nin = 3},
    {"convt_dynamic_batch", "ConvTranspose", 11, .in = {IND(4, 2, 3, 4, 4), W(4, 3, 2, 3, 3), W(1, 2)}, .nin = 3,
     .attrs = {AIS("strides", 2, 2), AIS("pads", 1, 1, 1, 1)}, .nattrs = 2, .batch2 = 3},
    {"f16_convt_s2_bias", "ConvTranspose", 11, F16, .in = {IN(4, 2, 4, 5, 6), W(4, 4, 3, 3, 3), W(1, 3)}, .nin = 3,
     .attrs = {AIS("strides", 2, 2), AIS("pads", 1, 0, 0, 1)}, .nattrs = 2},
    {"f16_convt_group2_output_padding", "ConvTranspose", 11, F16, .in = {IN(4, 1, 4, 4, 4), W(4, 4, 2, 3, 3)},
     .nin = 2, .attrs = {AI("group", 2), AIS("strides", 2, 2), AIS("output_padding", 1, 0)}, .nattrs = 3},

    /* LRN: NCHW */
    {"lrn", "LRN", 13, .in = {IN(4, 2, 5, 4, 3)}, .nin = 1, .attrs = {AI("size", 3)}, .nattrs = 1},
    {"lrn_params", "LRN", 13, .in = {IN(4, 2, 7, 3, 3)}, .nin = 1,
     .attrs = {AI("size", 5), AF("alpha", 0.02f), AF("beta", 0.6f), AF("bias", 2.0f)}, .nattrs = 4},
    {"lrn_size_past_channels", "LRN", 13, .in = {IN(4, 1, 3, 4, 4)}, .nin = 1,
     .attrs = {AI("size", 7), AF("alpha", 0.5f)}, .nattrs = 2},
    {"lrn_size1", "LRN", 13, .in = {IN(4, 1, 4, 2, 5)}, .nin = 1, .attrs = {AI("size", 1), AF("alpha", 0.3f)}, .nattrs = 2},
    {"lrn_opset1", "LRN", 1, .in = {IN(4, 1, 6, 3, 2)}, .nin = 1, .attrs = {AI("size", 3), AF("alpha", 0.1f)}, .nattrs = 2},
    {"lrn_dynamic_batch", "LRN", 13, .in = {IND(4, 1, 4, 3, 3)}, .nin = 1, .attrs = {AI("size", 3)}, .nattrs = 1,
     .batch2 = 3},
    {"f16_lrn", "LRN", 13, F16, .in = {IN(4, 2, 5, 4, 3)}, .nin = 1, .attrs = {AI("size", 3), AF("alpha", 0.05f)},
     .nattrs = 2},

    /* left to the CPU EP */
    {"not_claimed_maxpool_indices", "MaxPool", 12, .in = {IN(4, 1, 2, 6, 6)}, .nin = 1,
     .attrs = {AIS("kernel_shape", 2, 2)}, .nattrs = 1, .nout = 2, .out2_dtype = I64, .not_claimed = 1},
    {"not_claimed_clip_input_min", "Clip", 13, .in = {X4, IN(0, 0)}, .nin = 2, .not_claimed = 1},
    {"not_claimed_dropout_mask", "Dropout", 12, .in = {X4}, .nin = 1, .nout = 2, .out2_dtype = HD_DT_BOOL,
     .not_claimed = 1},
    {"add_int32", "Add", .dtype = HD_DT_I32, .in = {X4, X4}, .nin = 2},
    /* GenAI's seqlens_k: ReduceSum(mask) - 1 on the device, int64 with a broadcast constant */
    {"sub_int64_bcast_const", "Sub", .dtype = I64, .in = {IN(2, 3, 1), INTS(1, 1)}, .nin = 2},
    {"mul_int64_bcast", "Mul", .dtype = I64, .in = {IN(3, 2, 3, 4), IN(2, 3, 1)}, .nin = 2},
    {"min_int32", "Min", 13, .dtype = HD_DT_I32, .in = {X4, X4}, .nin = 2},
    {"max_int64_bcast", "Max", 13, .dtype = I64, .in = {X4, IN(1, 5)}, .nin = 2},
    {"not_claimed_add_double", "Add", .dtype = HD_DT_F64, .in = {X4, X4}, .nin = 2, .not_claimed = 1},
    {"not_claimed_reshape_input_shape", "Reshape", .in = {X4, {.kind = S_IN, .dtype = I64, .rank = 1, .dims = {2},
                                                                .ivals = (const int64_t[]){6, 20}}},
     .nin = 2, .not_claimed = 1},
    {"not_claimed_reducemean18_noop", "ReduceMean", 18, .in = {X4}, .nin = 1, .attrs = {AI("noop_with_empty_axes", 1)},
     .nattrs = 1, .not_claimed = 1},
    {"not_claimed_reducesum13_noop", "ReduceSum", 13, .in = {X4}, .nin = 1, .attrs = {AI("noop_with_empty_axes", 1)},
     .nattrs = 1, .not_claimed = 1},
    {"not_claimed_reducemean_int64", "ReduceMean", 13, .dtype = I64, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 1)},
     .nattrs = 1, .not_claimed = 1},
    {"not_claimed_reducel1_int32", "ReduceL1", 13, .dtype = I32, .in = {X4}, .nin = 1, .attrs = {AIS("axes", 1)},
     .nattrs = 1, .not_claimed = 1},
    {"not_claimed_reducesum_axes_graph_input", "ReduceSum", 13, .in = {X4, {.kind = S_IN, .dtype = I64, .rank = 1,
                                                                           .dims = {1}, .ivals = (const int64_t[]){1}}},
     .nin = 2, .not_claimed = 1},
};

/* The dtype of slot s of case c when the model is built with dtype dt. */
static int slot_dtype(const slot *s, int dt) { return s->dtype ? s->dtype : s->kind == S_INTS ? I64 : dt; }

/* Random data of the case's own dtype (so fp16 values are exact), then
 * converted to the model's dtype. */
static int make_data(const op_case *c, const slot *s, int dt, const int64_t *dims, uint64_t seed, hh_tensor *out) {
  int own = slot_dtype(s, c->dtype ? c->dtype : F32), want = slot_dtype(s, dt);
  hh_tensor t = {0};
  int64_t one = 1;
  if (hh_tensor_alloc(&t, own, s->rank, s->rank ? dims : &one)) return 1;
  if (s->kind == S_FC) {
    hh_tensor_set(&t, 0, s->fval);
  } else if (s->ivals) {
    for (size_t i = 0; i < t.n; i++) hh_tensor_set(&t, i, (double)s->ivals[i]);
  } else if (s->fvals) {
    for (size_t i = 0; i < t.n; i++) hh_tensor_set(&t, i, s->fvals[i]);
  } else if (s->bytes) {
    uint64_t r = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < t.n; i++) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      hh_tensor_set(&t, i, (double)(r >> 56));
    }
  } else {
    hh_tensor_fill_random(&t, seed);
    float scale = s->scale != 0.0f ? s->scale : 1.0f;
    if (s->shift != 0.0f || scale != 1.0f)
      for (size_t i = 0; i < t.n; i++) hh_tensor_set(&t, i, hh_tensor_get(&t, i) * scale + s->shift);
    if (s->grid)
      for (size_t i = 0; i < t.n; i++) hh_tensor_set(&t, i, nearbyint(hh_tensor_get(&t, i) * s->grid) / s->grid);
  }
  int rc = 0;
  if (own == want) *out = t;
  else {
    rc = hh_tensor_convert(&t, want, out);
    hh_tensor_free(&t);
  }
  return rc;
}

/* The dtype of output k when the model is built with dtype dt. */
static int out_dtype(const op_case *c, int k, int dt) {
  int d0 = c->out_dtype ? c->out_dtype : dt;
  if (k >= 2 && c->out3_dtype) return c->out3_dtype;
  return k == 0 ? d0 : c->out2_dtype ? c->out2_dtype : d0;
}

/* The case's model with every float of dtype dt (the case's dtype, or F32 for
 * the reference twin of an fp16 case). */
static int build(hh_ort *h, const op_case *c, int dt, uint64_t seed, hh_model **out) {
  hh_model *m = hh_model_new(h);
  char names[CASE_MAX_IN][16];
  const char *ins[CASE_MAX_IN];
  int rc = m ? 0 : 1;
  for (int i = 0; i < c->nin && !rc; i++) {
    const slot *s = &c->in[i];
    snprintf(names[i], sizeof names[i], "x%d", i);
    ins[i] = s->kind == S_NONE ? "" : names[i];
    if (s->kind == S_IN) {
      int64_t dims[6];
      memcpy(dims, s->dims, sizeof dims);
      if (s->dyn0) dims[0] = -1;
      rc = hh_model_input(m, names[i], slot_dtype(s, dt), s->rank, dims);
    } else if (s->kind != S_NONE) {
      hh_tensor t = {0};
      int64_t dims[6];
      memcpy(dims, s->dims, sizeof dims);
      rc = make_data(c, s, dt, dims, seed + 100 + (uint64_t)i, &t);
      if (!rc) rc = hh_model_initializer(m, names[i], &t);
      hh_tensor_free(&t);
    }
  }
  const char *outs[3] = {"y", "y_extra", "y_third"};
  int nout = c->nout ? c->nout : 1;
  if (!rc) rc = hh_model_node(m, c->op, c->domain, "node", ins, (size_t)c->nin, outs, (size_t)nout, c->attrs, (size_t)c->nattrs);
  for (int k = 0; k < nout && !rc; k++) rc = hh_model_output(m, outs[k], out_dtype(c, k, dt), -1, NULL);
  if (!rc) rc = hh_model_finish(m, c->opset ? c->opset : 17);
  if (rc) {
    hh_model_free(m);
    return 1;
  }
  *out = m;
  return 0;
}

/* One run of both sessions with dim 0 of dynamic inputs set to batch. */
static int run_once(hh_ort *h, const op_case *c, OrtSession *s_ep, OrtSession *s_ref, int64_t batch, uint64_t seed) {
  int dt = c->dtype ? c->dtype : F32, rdt = dt == F16 ? F32 : dt;
  hh_tensor x[CASE_MAX_IN], xr[CASE_MAX_IN], y[3], yr[3];
  size_t n = 0, nout = c->nout && !c->not_claimed ? (size_t)c->nout : 1;
  int ok = 0;
  memset(y, 0, sizeof y);
  memset(yr, 0, sizeof yr);
  memset(x, 0, sizeof x);
  memset(xr, 0, sizeof xr);
  for (int i = 0; i < c->nin; i++) {
    const slot *s = &c->in[i];
    if (s->kind != S_IN) continue;
    int64_t dims[6];
    memcpy(dims, s->dims, sizeof dims);
    if (s->dyn0) dims[0] = batch;
    if (make_data(c, s, dt, dims, seed + (uint64_t)i, &x[n]) || make_data(c, s, rdt, dims, seed + (uint64_t)i, &xr[n])) {
      fprintf(stderr, "FAIL %s: making input %d: %s\n", c->name, i, hh_err(h));
      goto done;
    }
    n++;
  }
  if (hh_session_run(h, s_ep, x, n, y, nout)) {
    fprintf(stderr, "FAIL %s (dim0=%lld): run with %s: %s\n", c->name, (long long)batch, HH_EP_NAME, hh_err(h));
    goto done;
  }
  if (hh_session_run(h, s_ref, xr, n, yr, nout)) {
    fprintf(stderr, "FAIL %s (dim0=%lld): run on the CPU EP: %s\n", c->name, (long long)batch, hh_err(h));
    goto done;
  }
  ok = 1;
  for (size_t k = 0; k < nout; k++) {
    char what[160];
    snprintf(what, sizeof what, "%s (dim0=%lld) output %zu", c->name, (long long)batch, k);
    hh_tol tol = hh_tol_for(out_dtype(c, (int)k, dt), 0);
    if (c->tol_x > 0) tol.atol *= c->tol_x, tol.rtol *= c->tol_x;
    ok &= ht_check_close_at(&y[k], &yr[k], tol, what);
  }
done:
  for (int i = 0; i < CASE_MAX_IN; i++) {
    hh_tensor_free(&x[i]);
    hh_tensor_free(&xr[i]);
  }
  for (int k = 0; k < 3; k++) {
    hh_tensor_free(&y[k]);
    hh_tensor_free(&yr[k]);
  }
  return ok;
}

static int run_case(hh_ort *h, const hh_target *t, const op_case *c) {
  int dt = c->dtype ? c->dtype : F32;
  uint64_t seed = (uint64_t)(c - k_cases) * 1000 + 1;
  hh_model *m = NULL, *mr = NULL;
  OrtSession *s_ep = NULL, *s_ref = NULL;
  hh_assign a = {0};
  int ok = 0;
  if (build(h, c, dt, seed, &m) || build(h, c, dt == F16 ? F32 : dt, seed, &mr)) {
    fprintf(stderr, "FAIL %s: building the model: %s\n", c->name, hh_err(h));
    goto done;
  }
  const char *keys[4], *vals[4];
  size_t nk = ht_ep_opts(t, keys, vals);
  int not_claimed = c->not_claimed || (c->host_only && t->is_gpu);
  hh_session_cfg ep_cfg = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = nk,
                           .disable_cpu_fallback = !not_claimed, .graph_opt_level = -1};
  if (ht_open_pair(h, &ep_cfg, m, mr, c->name, &s_ep, &s_ref, &a)) goto done;
  int mine = hh_assign_count(&a, HH_EP_NAME, c->op), all = hh_assign_count(&a, NULL, NULL);
  if (not_claimed ? hh_assign_count(&a, HH_EP_NAME, NULL) != 0 : (mine != 1 || all != 1)) {
    fprintf(stderr, "FAIL %s: the %s should %srun on %s; assignment:\n", c->name, c->op, not_claimed ? "not " : "",
            HH_EP_NAME);
    hh_assign_print(&a, stderr, "  ");
    goto done;
  }
  int64_t b0 = 0;
  for (int i = 0; i < c->nin; i++)
    if (c->in[i].dyn0) b0 = c->in[i].dims[0];
  if (!run_once(h, c, s_ep, s_ref, b0, seed)) goto done;
  if (c->batch2) {
    if (!run_once(h, c, s_ep, s_ref, c->batch2, seed + 7)) goto done;
    /* back to the first shape: per-shape plans must not mix up */
    if (!run_once(h, c, s_ep, s_ref, b0, seed + 13)) goto done;
  }
  ok = 1;
done:
  ht_close_pair(h, &a, s_ep, s_ref, m, mr);
  return ok;
}

static const char *case_name(size_t i) { return k_cases[i].name; }

static int case_run(hh_ort *h, hh_target *t, size_t i) { return run_case(h, t, &k_cases[i]); }

int main(int argc, char **argv) {
  int rc = ht_main(argc, argv, "op", sizeof k_cases / sizeof k_cases[0], case_name, case_run);
  return rc == 0 && failures == 0 ? 0 : rc ? rc : 1;
}
