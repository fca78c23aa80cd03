/* hip_hipdnn_table: hipDNN's dnn_table, plain data.
 *
 * hipDNN is in no package registry, so no header is included: each value is
 * declared here with the hipDNN header it comes from. Source: ROCm's
 * rocm-libraries repository, projects/hipdnn/backend/include/ (abbreviated
 * "inc/" below), as of early 2026 (HipdnnBackendAttributeName.h at commit
 * 02dc267b; HipdnnBackendDescriptorType.h in its explicitly numbered form).
 *
 * hipDNN's numbering has moved between releases: older ones numbered the
 * pointwise attributes 1700-1899 (now 2200-2399) and left the descriptor
 * types implicitly numbered (OPERATION_POINTWISE was 17, now 18). These
 * values match hipDNN built from rocm-libraries develop of 2026 / TheRock
 * nightlies of that time; a mismatched libhipdnn_backend.so fails at
 * SetAttribute or Finalize with BAD_PARAM (see docs/amd.md).
 *
 * Where hipDNN spells a name differently from cuDNN, the builder's (cuDNN's)
 * name maps to hipDNN's name for the same thing, said on its line. Names
 * hipDNN lacks are DNN_ABSENT; the builder works without them (dnn.h,
 * DNN_OPTIONAL_NAMES). */
#include "backends/hip/hip_hipdnn.h"

/* One row: the builder's name, hipDNN's spelling, its value. */
#define HIP_V(n, spelled, value) [DNN_##n] = (value),
#define HIP_N(n, spelled, value) [DNN_##n] = spelled,
#define HIP_ABSENT_V(n) [DNN_##n] = DNN_ABSENT,
#define HIP_ABSENT_N(n) [DNN_##n] = NULL,

#define HIP_ROWS(R, A)                                                                 \
  /* inc/HipdnnStatus.h (hipdnnStatus_t) */                                            \
  R(STATUS_SUCCESS, "HIPDNN_STATUS_SUCCESS", 0)                                        \
  R(STATUS_NOT_SUPPORTED, "HIPDNN_STATUS_NOT_SUPPORTED", 8)                            \
  /* inc/HipdnnBackendDescriptorType.h (hipdnnBackendDescriptorType_t) */              \
  R(BACKEND_ENGINE_DESCRIPTOR, "HIPDNN_BACKEND_ENGINE_DESCRIPTOR", 1)                  \
  R(BACKEND_ENGINECFG_DESCRIPTOR, "HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR", 2)            \
  R(BACKEND_ENGINEHEUR_DESCRIPTOR, "HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR", 3)          \
  R(BACKEND_EXECUTION_PLAN_DESCRIPTOR, "HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR", 4)  \
  R(BACKEND_OPERATIONGRAPH_DESCRIPTOR, "HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR", 10) \
  R(BACKEND_VARIANT_PACK_DESCRIPTOR, "HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR", 11)     \
  R(BACKEND_TENSOR_DESCRIPTOR, "HIPDNN_BACKEND_TENSOR_DESCRIPTOR", 14)                 \
  R(BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,                                  \
    "HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR", 15)                     \
  R(BACKEND_OPERATION_POINTWISE_DESCRIPTOR,                                            \
    "HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR", 18)                               \
  /* No convolution or pointwise descriptor of their own: their attributes are      \
   * set on the operation descriptor (inc/HipdnnBackendAttributeName.h, "Shared     \
   * Convolution/Pointwise Descriptor Attributes"). */                                 \
  A(BACKEND_CONVOLUTION_DESCRIPTOR)                                                    \
  A(BACKEND_POINTWISE_DESCRIPTOR)                                                      \
  /* inc/HipdnnBackendAttributeType.h (hipdnnBackendAttributeType_t) */                \
  R(TYPE_HANDLE, "HIPDNN_TYPE_HANDLE", 0)                                              \
  R(TYPE_DATA_TYPE, "HIPDNN_TYPE_DATA_TYPE", 1)                                        \
  R(TYPE_BOOLEAN, "HIPDNN_TYPE_BOOLEAN", 2)                                            \
  R(TYPE_INT64, "HIPDNN_TYPE_INT64", 3)                                                \
  R(TYPE_FLOAT, "HIPDNN_TYPE_FLOAT", 4)                                                \
  R(TYPE_DOUBLE, "HIPDNN_TYPE_DOUBLE", 5)                                              \
  R(TYPE_VOID_PTR, "HIPDNN_TYPE_VOID_PTR", 6)                                          \
  R(TYPE_HEUR_MODE, "HIPDNN_TYPE_HEUR_MODE", 7)                                        \
  R(TYPE_NUMERICAL_NOTE, "HIPDNN_TYPE_NUMERICAL_NOTE", 10)                             \
  R(TYPE_BACKEND_DESCRIPTOR, "HIPDNN_TYPE_BACKEND_DESCRIPTOR", 13)                     \
  R(TYPE_CONVOLUTION_MODE, "HIPDNN_TYPE_CONVOLUTION_MODE", 24)                         \
  R(TYPE_POINTWISE_MODE, "HIPDNN_TYPE_POINTWISE_MODE", 25)                             \
  /* inc/HipdnnDataType.h (hipdnnDataType_t) */                                        \
  R(DATA_FLOAT, "HIPDNN_DATA_FLOAT", 0)                                                \
  R(DATA_DOUBLE, "HIPDNN_DATA_DOUBLE", 1)                                              \
  R(DATA_HALF, "HIPDNN_DATA_HALF", 2)                                                  \
  R(DATA_BFLOAT16, "HIPDNN_DATA_BFLOAT16", 6)                                          \
  /* inc/HipdnnConvolutionMode.h (hipdnnConvolutionMode_t) */                          \
  R(CROSS_CORRELATION, "HIPDNN_CROSS_CORRELATION", 1)                                  \
  /* inc/HipdnnBackendHeuristicType.h (hipdnnBackendHeurMode_t): FALLBACK only;     \
   * mode A is a heuristics policy there (HIPDNN_ATTR_ENGINEHEUR_POLICY_ORDER_EXT). */ \
  R(HEUR_MODE_FALLBACK, "HIPDNN_HEUR_MODE_FALLBACK", 0)                                \
  A(HEUR_MODE_INSTANT)                                                                 \
  A(HEUR_MODE_A)                                                                       \
  /* HIPDNN_TYPE_NUMERICAL_NOTE exists, but hipDNN publishes no note values. */        \
  A(NUMERICAL_NOTE_TENSOR_CORE)                                                        \
  A(NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)                                                \
  /* inc/HipdnnPointwiseMode.h (hipdnnPointwiseMode_t; older releases spell them    \
   * HIPDNN_POINTWISE_MODE_*, same values) */                                          \
  R(POINTWISE_ADD, "HIPDNN_POINTWISE_ADD", 2)                                          \
  R(POINTWISE_RELU_FWD, "HIPDNN_POINTWISE_RELU_FWD", 34)                               \
  R(POINTWISE_SIGMOID_FWD, "HIPDNN_POINTWISE_SIGMOID_FWD", 37)                         \
  R(POINTWISE_TANH_FWD, "HIPDNN_POINTWISE_TANH_FWD", 47)                               \
  /* inc/HipdnnBackendAttributeName.h (hipdnnBackendAttributeName_t) below */          \
  R(ATTR_ENGINEHEUR_MODE, "HIPDNN_ATTR_ENGINEHEUR_MODE", 100)                          \
  R(ATTR_ENGINEHEUR_OPERATION_GRAPH, "HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH", 101)    \
  R(ATTR_ENGINEHEUR_RESULTS, "HIPDNN_ATTR_ENGINEHEUR_RESULTS", 102)                    \
  R(ATTR_ENGINECFG_ENGINE, "HIPDNN_ATTR_ENGINECFG_ENGINE", 200)                        \
  R(ATTR_EXECUTION_PLAN_HANDLE, "HIPDNN_ATTR_EXECUTION_PLAN_HANDLE", 300)              \
  R(ATTR_EXECUTION_PLAN_ENGINE_CONFIG, "HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG", 301) \
  R(ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, "HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE", 302) \
  R(ATTR_OPERATIONGRAPH_HANDLE, "HIPDNN_ATTR_OPERATIONGRAPH_HANDLE", 600)              \
  R(ATTR_OPERATIONGRAPH_OPS, "HIPDNN_ATTR_OPERATIONGRAPH_OPS", 601)                    \
  R(ATTR_VARIANT_PACK_UNIQUE_IDS, "HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS", 700)          \
  R(ATTR_VARIANT_PACK_DATA_POINTERS, "HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS", 701)    \
  R(ATTR_VARIANT_PACK_WORKSPACE, "HIPDNN_ATTR_VARIANT_PACK_WORKSPACE", 703)            \
  R(ATTR_ENGINE_GLOBAL_INDEX, "HIPDNN_ATTR_ENGINE_GLOBAL_INDEX", 1001)                 \
  R(ATTR_ENGINE_NUMERICAL_NOTE, "HIPDNN_ATTR_ENGINE_NUMERICAL_NOTE", 1003)             \
  R(ATTR_TENSOR_UNIQUE_ID, "HIPDNN_ATTR_TENSOR_UNIQUE_ID", 1300)                       \
  R(ATTR_TENSOR_DATA_TYPE, "HIPDNN_ATTR_TENSOR_DATA_TYPE", 1302)                       \
  R(ATTR_TENSOR_DIMENSIONS, "HIPDNN_ATTR_TENSOR_DIMENSIONS", 1303)                     \
  R(ATTR_TENSOR_STRIDES, "HIPDNN_ATTR_TENSOR_STRIDES", 1304)                           \
  R(ATTR_TENSOR_IS_VIRTUAL, "HIPDNN_ATTR_TENSOR_IS_VIRTUAL", 1305)                     \
  R(ATTR_TENSOR_BYTE_ALIGNMENT, "HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT", 1309)             \
  R(ATTR_OPERATION_CONVOLUTION_FORWARD_W, "HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W", 1400) \
  R(ATTR_OPERATION_CONVOLUTION_FORWARD_X, "HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X", 1401) \
  R(ATTR_OPERATION_CONVOLUTION_FORWARD_Y, "HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y", 1402) \
  /* No CONV_DESC (no convolution descriptor), no ALPHA/BETA (always 1 and 0). */      \
  A(ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC)                                      \
  A(ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA)                                          \
  A(ATTR_OPERATION_CONVOLUTION_FORWARD_BETA)                                           \
  R(ATTR_CONVOLUTION_COMP_TYPE, "HIPDNN_ATTR_CONVOLUTION_COMP_TYPE", 1500)             \
  R(ATTR_CONVOLUTION_CONV_MODE, "HIPDNN_ATTR_CONVOLUTION_CONV_MODE", 1501)             \
  R(ATTR_CONVOLUTION_DILATIONS, "HIPDNN_ATTR_CONVOLUTION_DILATIONS", 1502)             \
  R(ATTR_CONVOLUTION_FILTER_STRIDES, "HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES", 1503)   \
  R(ATTR_CONVOLUTION_POST_PADDINGS, "HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS", 1504)     \
  R(ATTR_CONVOLUTION_PRE_PADDINGS, "HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS", 1505)       \
  /* No SPATIAL_DIMS: the length of the padding arrays says it. */                     \
  A(ATTR_CONVOLUTION_SPATIAL_DIMS)                                                     \
  /* cuDNN's X/B/Y descriptors of a pointwise operation are hipDNN's IN_0/IN_1/OUT_0. */ \
  R(ATTR_OPERATION_POINTWISE_XDESC, "HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT", 2200)  \
  R(ATTR_OPERATION_POINTWISE_YDESC, "HIPDNN_ATTR_OPERATION_POINTWISE_OUT_0_EXT", 2201) \
  R(ATTR_OPERATION_POINTWISE_BDESC, "HIPDNN_ATTR_OPERATION_POINTWISE_IN_1_EXT", 2202)  \
  A(ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR)                                            \
  R(ATTR_POINTWISE_MODE, "HIPDNN_ATTR_POINTWISE_MODE", 2300)                           \
  R(ATTR_POINTWISE_RELU_LOWER_CLIP, "HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP", 2301)     \
  R(ATTR_POINTWISE_RELU_UPPER_CLIP, "HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP", 2302)     \
  R(ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, "HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE", 2303) \
  R(ATTR_POINTWISE_MATH_PREC, "HIPDNN_ATTR_POINTWISE_MATH_PREC", 2307)               \
  /* Not taken from hipDNN yet: multiply, resample (pooling runs on our      \
   * kernel there), reduction and the convolution's data gradient            \
   * (ConvTranspose runs on our kernel there). */                             \
  DNN_STANDALONE_NAMES(A)                                                              \
  DNN_CONV_BWD_DATA_NAMES(A)                                                           \
  /* hipDNN has an SDPA operation of its own (HIPDNN_BACKEND_OPERATION_SDPA_FWD_*),  \
   * with values not checked against a library here (docs/amd.md). */                 \
  DNN_SDPA_NAMES(A)

static const int64_t hip_values[DNN_NAME_COUNT] = {HIP_ROWS(HIP_V, HIP_ABSENT_V)};
static const char *const hip_names[DNN_NAME_COUNT] = {HIP_ROWS(HIP_N, HIP_ABSENT_N)};

/* inc/hipdnn_backend.h: every entry point is cuDNN's with the hipdnn prefix. */
#define DNN_SYMBOL_PREFIX "hipdnn"
static const char *const hip_symbols[DNN_ENTRY_COUNT] = {DNN_ENTRY_POINTS(DNN_SYMBOL)};

const dnn_table hip_hipdnn_table = {
    .vendor = "hipDNN",
    .prefix = "HIPDNN_",
    .names = hip_names,
    .values = hip_values,
    .symbols = hip_symbols,
    .not_supported_span = 1, /* HIPDNN_STATUS_NOT_SUPPORTED alone (8) */
};
