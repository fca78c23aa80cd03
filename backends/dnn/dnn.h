/* dnn: the descriptor builder shared by the cuDNN and hipDNN backends.
 *
 * hipDNN's backend C API is cuDNN's backend API with hipdnn names. This layer
 * is written once against a dnn_vendor table: the ~10 entry points of the
 * backend API and the integer value of every enum or attribute name used,
 * indexed by dnn_name. Each vendor describes itself with a dnn_table of plain
 * data (backends/cuda/cu_cudnn_table.c, backends/hip/hip_hipdnn_table.c): the
 * vendor's spelling and value of every name, and the symbol of every entry
 * point; dnn_load.c opens the library and binds a table into a dnn_vendor.
 * Nothing here includes a vendor header.
 *
 * The vendors differ in shape as well as in values: hipDNN has no separate
 * convolution or pointwise descriptor (their attributes go on the operation
 * descriptor), one heuristics mode and no numerical notes. Such names are in
 * DNN_OPTIONAL_NAMES; a table marks them DNN_ABSENT and the builder takes the
 * other path (dnn_has). tests/test_dnn_tables.c checks both tables.
 *
 * Objects:
 *   dnn_bag    owns the descriptors of one build; freed together
 *   dnn_plan   a finalized execution plan (+ everything it was built from),
 *              its workspace size and the unique ids it binds
 * All functions return hd_status (NULL = success); a vendor error carries the
 * call, the vendor's error string and file:line. */
#ifndef DNN_H
#define DNN_H

#include <stddef.h>
#include <stdint.h>

#include "common/hd_status.h"
#include "ops/op_act.h"

/* The names of the standalone pointwise, resample and reduction graphs
 * (dnn_pointwise_graph, dnn_pool_graph, dnn_reduce_graph): all optional. */
#define DNN_STANDALONE_NAMES(X) \
  X(POINTWISE_MUL) \
  X(BACKEND_RESAMPLE_DESCRIPTOR) \
  X(BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR) \
  X(BACKEND_REDUCTION_DESCRIPTOR) \
  X(BACKEND_OPERATION_REDUCTION_DESCRIPTOR) \
  X(TYPE_RESAMPLE_MODE) \
  X(TYPE_PADDING_MODE) \
  X(TYPE_REDUCTION_OPERATOR_TYPE) \
  X(RESAMPLE_MAXPOOL) \
  X(RESAMPLE_AVGPOOL_EXCLUDE_PADDING) \
  X(RESAMPLE_AVGPOOL_INCLUDE_PADDING) \
  X(TYPE_NAN_PROPOGATION) \
  X(PROPAGATE_NAN) \
  X(ATTR_RESAMPLE_NAN_PROPAGATION) \
  X(NEG_INF_PAD) \
  X(ZERO_PAD) \
  X(REDUCE_TENSOR_ADD) \
  X(REDUCE_TENSOR_AVG) \
  X(ATTR_RESAMPLE_MODE) \
  X(ATTR_RESAMPLE_COMP_TYPE) \
  X(ATTR_RESAMPLE_SPATIAL_DIMS) \
  X(ATTR_RESAMPLE_POST_PADDINGS) \
  X(ATTR_RESAMPLE_PRE_PADDINGS) \
  X(ATTR_RESAMPLE_STRIDES) \
  X(ATTR_RESAMPLE_WINDOW_DIMS) \
  X(ATTR_RESAMPLE_PADDING_MODE) \
  X(ATTR_OPERATION_RESAMPLE_FWD_XDESC) \
  X(ATTR_OPERATION_RESAMPLE_FWD_YDESC) \
  X(ATTR_OPERATION_RESAMPLE_FWD_DESC) \
  X(ATTR_REDUCTION_OPERATOR) \
  X(ATTR_REDUCTION_COMP_TYPE) \
  X(ATTR_OPERATION_REDUCTION_XDESC) \
  X(ATTR_OPERATION_REDUCTION_YDESC) \
  X(ATTR_OPERATION_REDUCTION_DESC)

/* The names of a convolution's data gradient (dnn_conv.transpose:
 * ConvTranspose): all optional. */
#define DNN_CONV_BWD_DATA_NAMES(X)                           \
  X(BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR) \
  X(ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA)              \
  X(ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA)               \
  X(ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC)          \
  X(ATTR_OPERATION_CONVOLUTION_BWD_DATA_W)                  \
  X(ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX)                 \
  X(ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY)

/* The names of the SDPA graphs (dnn_sdpa_graph): the one operation of
 * cuDNN 9.13 and later, and the graph of matmuls, pointwise ops and
 * reductions a biased attention is spelled as. All optional. */
#define DNN_SDPA_NAMES(X)  \
  DNN_SDPA_OP_NAMES(X)     \
  DNN_SDPA_GRAPH_NAMES(X)  \
  X(ATTR_TENSOR_IS_BY_VALUE)
#define DNN_SDPA_OP_NAMES(X)                  \
  X(BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR)    \
  X(ATTR_OPERATION_SDPA_FWD_QDESC)            \
  X(ATTR_OPERATION_SDPA_FWD_KDESC)            \
  X(ATTR_OPERATION_SDPA_FWD_VDESC)            \
  X(ATTR_OPERATION_SDPA_FWD_ODESC)            \
  X(ATTR_OPERATION_SDPA_FWD_SCALEDESC)
#define DNN_SDPA_GRAPH_NAMES(X)               \
  X(BACKEND_MATMUL_DESCRIPTOR)                \
  X(BACKEND_OPERATION_MATMUL_DESCRIPTOR)      \
  X(ATTR_MATMUL_COMP_TYPE)                    \
  X(ATTR_OPERATION_MATMUL_ADESC)              \
  X(ATTR_OPERATION_MATMUL_BDESC)              \
  X(ATTR_OPERATION_MATMUL_CDESC)              \
  X(ATTR_OPERATION_MATMUL_DESC)               \
  X(POINTWISE_SUB)                            \
  X(POINTWISE_DIV)                            \
  X(POINTWISE_EXP)                            \
  X(POINTWISE_LOG)                            \
  X(REDUCE_TENSOR_MAX)

/* Every vendor name the builder uses, without the vendor prefix: the cuDNN
 * table pastes CUDNN_##name, the hipDNN table HIPDNN_##name. */
#define DNN_NAMES(X)                                  \
  X(STATUS_SUCCESS)                                   \
  X(STATUS_NOT_SUPPORTED)                             \
  X(BACKEND_TENSOR_DESCRIPTOR)                        \
  X(BACKEND_CONVOLUTION_DESCRIPTOR)                   \
  X(BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR) \
  X(BACKEND_POINTWISE_DESCRIPTOR)                     \
  X(BACKEND_OPERATION_POINTWISE_DESCRIPTOR)           \
  X(BACKEND_OPERATIONGRAPH_DESCRIPTOR)                \
  X(BACKEND_ENGINEHEUR_DESCRIPTOR)                    \
  X(BACKEND_ENGINECFG_DESCRIPTOR)                     \
  X(BACKEND_ENGINE_DESCRIPTOR)                        \
  X(BACKEND_EXECUTION_PLAN_DESCRIPTOR)                \
  X(BACKEND_VARIANT_PACK_DESCRIPTOR)                  \
  X(TYPE_HANDLE)                                      \
  X(TYPE_DATA_TYPE)                                   \
  X(TYPE_BOOLEAN)                                     \
  X(TYPE_INT64)                                       \
  X(TYPE_FLOAT)                                       \
  X(TYPE_DOUBLE)                                      \
  X(TYPE_VOID_PTR)                                    \
  X(TYPE_CONVOLUTION_MODE)                            \
  X(TYPE_HEUR_MODE)                                   \
  X(TYPE_NUMERICAL_NOTE)                              \
  X(TYPE_POINTWISE_MODE)                              \
  X(TYPE_BACKEND_DESCRIPTOR)                          \
  X(DATA_FLOAT)                                       \
  X(DATA_DOUBLE)                                      \
  X(DATA_HALF)                                        \
  X(DATA_BFLOAT16)                                    \
  X(CROSS_CORRELATION)                                \
  X(HEUR_MODE_INSTANT)                                \
  X(HEUR_MODE_A)                                      \
  X(HEUR_MODE_FALLBACK)                               \
  X(NUMERICAL_NOTE_TENSOR_CORE)                       \
  X(NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)               \
  X(POINTWISE_ADD)                                    \
  X(POINTWISE_RELU_FWD)                               \
  X(POINTWISE_TANH_FWD)                               \
  X(POINTWISE_SIGMOID_FWD)                            \
  X(ATTR_POINTWISE_MODE)                              \
  X(ATTR_POINTWISE_MATH_PREC)                         \
  X(ATTR_POINTWISE_RELU_LOWER_CLIP)                   \
  X(ATTR_POINTWISE_RELU_UPPER_CLIP)                   \
  X(ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE)             \
  X(ATTR_CONVOLUTION_COMP_TYPE)                       \
  X(ATTR_CONVOLUTION_CONV_MODE)                       \
  X(ATTR_CONVOLUTION_DILATIONS)                       \
  X(ATTR_CONVOLUTION_FILTER_STRIDES)                  \
  X(ATTR_CONVOLUTION_POST_PADDINGS)                   \
  X(ATTR_CONVOLUTION_PRE_PADDINGS)                    \
  X(ATTR_CONVOLUTION_SPATIAL_DIMS)                    \
  X(ATTR_ENGINEHEUR_MODE)                             \
  X(ATTR_ENGINEHEUR_OPERATION_GRAPH)                  \
  X(ATTR_ENGINEHEUR_RESULTS)                          \
  X(ATTR_ENGINECFG_ENGINE)                            \
  X(ATTR_ENGINE_GLOBAL_INDEX)                         \
  X(ATTR_ENGINE_NUMERICAL_NOTE)                       \
  X(ATTR_EXECUTION_PLAN_HANDLE)                       \
  X(ATTR_EXECUTION_PLAN_ENGINE_CONFIG)                \
  X(ATTR_EXECUTION_PLAN_WORKSPACE_SIZE)               \
  X(ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA)         \
  X(ATTR_OPERATION_CONVOLUTION_FORWARD_BETA)          \
  X(ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC)     \
  X(ATTR_OPERATION_CONVOLUTION_FORWARD_W)             \
  X(ATTR_OPERATION_CONVOLUTION_FORWARD_X)             \
  X(ATTR_OPERATION_CONVOLUTION_FORWARD_Y)             \
  X(ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR)           \
  X(ATTR_OPERATION_POINTWISE_XDESC)                   \
  X(ATTR_OPERATION_POINTWISE_BDESC)                   \
  X(ATTR_OPERATION_POINTWISE_YDESC)                   \
  X(ATTR_OPERATIONGRAPH_HANDLE)                       \
  X(ATTR_OPERATIONGRAPH_OPS)                          \
  X(ATTR_TENSOR_BYTE_ALIGNMENT)                       \
  X(ATTR_TENSOR_DATA_TYPE)                            \
  X(ATTR_TENSOR_DIMENSIONS)                           \
  X(ATTR_TENSOR_STRIDES)                              \
  X(ATTR_TENSOR_UNIQUE_ID)                            \
  X(ATTR_TENSOR_IS_VIRTUAL)                           \
  X(ATTR_VARIANT_PACK_UNIQUE_IDS)                     \
  X(ATTR_VARIANT_PACK_DATA_POINTERS)                  \
  X(ATTR_VARIANT_PACK_WORKSPACE)                      \
  DNN_STANDALONE_NAMES(X)                             \
  DNN_CONV_BWD_DATA_NAMES(X)                          \
  DNN_SDPA_NAMES(X)

typedef enum dnn_name {
#define DNN_ENUM_(n) DNN_##n,
  DNN_NAMES(DNN_ENUM_)
#undef DNN_ENUM_
  DNN_NAME_COUNT
} dnn_name;

/* The names a vendor may lack; the builder works without each of them:
 *   BACKEND_CONVOLUTION_DESCRIPTOR + ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC
 *     absent: the ATTR_CONVOLUTION_* attributes go on the forward operation;
 *   BACKEND_POINTWISE_DESCRIPTOR + ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR
 *     absent: the ATTR_POINTWISE_* attributes go on the pointwise operation;
 *   ATTR_CONVOLUTION_SPATIAL_DIMS, ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA/BETA
 *     absent: not set (the count of the padding arrays says the rank; 1 and 0);
 *   HEUR_MODE_INSTANT, HEUR_MODE_A absent: heuristics go straight to FALLBACK;
 *   NUMERICAL_NOTE_* absent: engines cannot be filtered by notes (use_tf32=0
 *     has no engine filter on that vendor);
 *   POINTWISE_MUL and the resample and reduction names absent: the
 *     standalone pointwise/pool/reduce graphs are NOT_SUPPORTED (pooling
 *     then runs on our kernel);
 *   the backward-data names absent: transposed convolutions are
 *     NOT_SUPPORTED (ConvTranspose then runs on our kernel);
 *   the SDPA names absent: dnn_sdpa_graph is NOT_SUPPORTED (attention then
 *     runs on our kernels). */
#define DNN_OPTIONAL_NAMES(X)                     \
  X(BACKEND_CONVOLUTION_DESCRIPTOR)               \
  X(BACKEND_POINTWISE_DESCRIPTOR)                 \
  X(ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC) \
  X(ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR)       \
  X(ATTR_CONVOLUTION_SPATIAL_DIMS)                \
  X(ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA)     \
  X(ATTR_OPERATION_CONVOLUTION_FORWARD_BETA)      \
  X(HEUR_MODE_INSTANT)                            \
  X(HEUR_MODE_A)                                  \
  X(NUMERICAL_NOTE_TENSOR_CORE)                   \
  X(NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)           \
  DNN_STANDALONE_NAMES(X)                         \
  DNN_CONV_BWD_DATA_NAMES(X)                      \
  DNN_SDPA_NAMES(X)

/* A table value for a name the vendor does not have (never a real value). */
#define DNN_ABSENT INT64_MIN

/* 1 when n is in DNN_OPTIONAL_NAMES. */
int dnn_name_optional(dnn_name n);

/* The name's text ("ATTR_TENSOR_STRIDES"), for messages. */
const char *dnn_name_str(dnn_name n);

/* One vendor's backend API. Descriptors and handles are opaque pointers;
 * enums travel as int (what both vendors' enums are on every ABI we build
 * for); statuses are int, v[DNN_STATUS_SUCCESS] meaning success. */
typedef struct dnn_vendor {
  const char *name;  /* "cuDNN", "hipDNN": for messages */
  size_t version;    /* e.g. 91900 */
  int (*create_descriptor)(int type, void **desc);
  int (*destroy_descriptor)(void *desc);
  int (*finalize)(void *desc);
  int (*set_attribute)(void *desc, int name, int type, int64_t count, const void *elems);
  int (*get_attribute)(void *desc, int name, int type, int64_t requested, int64_t *count,
                       void *elems);
  int (*execute)(void *handle, void *plan, void *variant_pack);
  int (*create)(void **handle);
  int (*destroy)(void *handle);
  int (*set_stream)(void *handle, void *stream);
  const char *(*get_error_string)(int status);
  void (*get_last_error_string)(char *buf, size_t cap); /* optional (NULL) */
  int64_t v[DNN_NAME_COUNT];  /* DNN_ABSENT where the vendor lacks the name */
  /* Statuses in [v[STATUS_NOT_SUPPORTED], + span) mean "not supported"
   * (cuDNN groups them by thousands, hipDNN has one). */
  int64_t not_supported_span;
} dnn_vendor;

/* Does the vendor have name n? */
static inline int dnn_has(const dnn_vendor *vd, dnn_name n) { return vd->v[n] != DNN_ABSENT; }

/* ---- vendor tables (plain data) and loading ---- */

/* The entry points, in dnn_vendor's field order: X(field, symbol suffix).
 * A table names each as its prefix + suffix ("cudnn" "BackendExecute"). */
#define DNN_ENTRY_POINTS(X)                         \
  X(create_descriptor, BackendCreateDescriptor)     \
  X(destroy_descriptor, BackendDestroyDescriptor)   \
  X(finalize, BackendFinalize)                      \
  X(set_attribute, BackendSetAttribute)             \
  X(get_attribute, BackendGetAttribute)             \
  X(execute, BackendExecute)                        \
  X(create, Create)                                 \
  X(destroy, Destroy)                               \
  X(set_stream, SetStream)                          \
  X(get_error_string, GetErrorString)               \
  X(get_last_error_string, GetLastErrorString)

typedef enum dnn_entry {
#define DNN_ENTRY_ENUM_(f, s) DNN_ENTRY_##f,
  DNN_ENTRY_POINTS(DNN_ENTRY_ENUM_)
#undef DNN_ENTRY_ENUM_
  DNN_ENTRY_COUNT
} dnn_entry;

/* A table's symbols: `static const char *const x[] = {DNN_ENTRY_POINTS(DNN_SYMBOL)};`
 * with DNN_SYMBOL_PREFIX defined to the vendor's prefix ("cudnn"). */
#define DNN_SYMBOL(f, s) [DNN_ENTRY_##f] = DNN_SYMBOL_PREFIX #s,

/* Everything the builder needs to know about one vendor, as data: links
 * without the vendor's library or a GPU (tests/test_dnn_tables.c). */
typedef struct dnn_table {
  const char *vendor;                     /* "cuDNN", "hipDNN" */
  const char *prefix;                     /* "CUDNN_", "HIPDNN_": of every name */
  const char *const *names;               /* [DNN_NAME_COUNT]: the vendor's spelling; NULL: absent */
  const int64_t *values;                  /* [DNN_NAME_COUNT]: DNN_ABSENT where names[n] is NULL */
  const char *const *symbols;             /* [DNN_ENTRY_COUNT]: exported symbol of each entry */
  int64_t not_supported_span;
} dnn_table;

/* How a module finds its vendor library (dnn_load.c). */
typedef struct dnn_lib_spec {
  const char *backend;        /* "cuda", "hip": for messages */
  const dnn_table *table;
  const char *env;            /* a path that, when set, is used alone */
  const char *const *sonames; /* NULL-terminated: tried on the library path, then next to the module */
  const char *hint;           /* what to install / set, for the NOT_FOUND message */
  /* The library's version as one number (e.g. 91900); 0 when unknown. */
  size_t (*version)(void *lib);
  size_t min_version;         /* 0: any */
} dnn_lib_spec;

/* Opens a vendor library: the path in $env alone when set; else each soname
 * on the library path, then next to the module this code is linked into.
 * NOT_FOUND naming `what`, every place tried and why. */
hd_status *dnn_lib_open(const char *what, const char *env, const char *const *sonames, void **lib);
/* Binds t's entry points from lib (dlsym) and values into vd. NOT_FOUND
 * naming the first missing symbol; get_last_error_string may be missing. */
hd_status *dnn_vendor_bind(dnn_vendor *vd, const dnn_table *t, void *lib);
/* Opens the library (s->env alone when set; else each soname on the library
 * path, then next to the module this code is linked into) and binds it.
 * NOT_FOUND with every place tried and why, when it is missing, incomplete
 * or too old. The library stays loaded (*lib) on success. */
hd_status *dnn_vendor_load(const dnn_lib_spec *s, dnn_vendor *vd, void **lib);

/* A vendor status → hd_status (NULL on success). */
hd_status *dnn_status(const dnn_vendor *vd, int st, const char *call, const char *file, int line);
#define DNN_CHECK(vd, call) HD_TRY(dnn_status((vd), (call), #call, __FILE__, __LINE__))

/* ---- descriptor ownership ---- */

typedef struct dnn_bag {
  const dnn_vendor *vd;
  void **d;
  int n, cap;
} dnn_bag;

void dnn_bag_init(dnn_bag *b, const dnn_vendor *vd);
/* Creates a descriptor of type `type` (a BACKEND_*_DESCRIPTOR name) owned by b. */
hd_status *dnn_bag_create(dnn_bag *b, dnn_name type, void **desc);
void dnn_bag_free(dnn_bag *b);

/* SetAttribute by names: attribute `attr`, element type `type`. */
hd_status *dnn_set(const dnn_vendor *vd, void *desc, dnn_name attr, dnn_name type, int64_t count,
                   const void *elems);
hd_status *dnn_finalize(const dnn_vendor *vd, void *desc, const char *what);

/* ---- builders ---- */

#define DNN_MAX_RANK 8
#define DNN_MAX_UIDS 8 /* non-virtual tensors a plan binds */

typedef struct dnn_tensor {
  int64_t uid;
  int dtype; /* hd_dtype */
  int rank;
  int64_t dims[DNN_MAX_RANK];
  int64_t strides[DNN_MAX_RANK];
  int is_virtual;
  int by_value;      /* a scalar passed by value: its bound pointer is a host pointer */
  int64_t alignment; /* bytes the bound pointer is aligned to */
} dnn_tensor;

/* Packed strides of dims (NCHW order: last dim fastest). */
void dnn_packed_strides(int rank, const int64_t *dims, int64_t *strides);
/* *t = a packed, 16-byte aligned, non-virtual tensor of dims. */
void dnn_tensor_packed(dnn_tensor *t, int64_t uid, int dtype, int rank, const int64_t *dims);
/* The same tensor stored channels last (NHWC): dims still [N, C, spatial...],
 * the channel fastest. */
void dnn_tensor_channels_last(dnn_tensor *t, int64_t uid, int dtype, int rank, const int64_t *dims);
/* hd_dtype → the vendor's data type value; NOT_SUPPORTED for others. */
hd_status *dnn_data_type(const dnn_vendor *vd, int dtype, int64_t *out);
hd_status *dnn_tensor_create(dnn_bag *b, const dnn_tensor *t, void **desc);

/* Forward convolution, optionally fused with bias, residual and an
 * activation: y = act(conv(x, w) + b + r). Tensors are in the layout their
 * strides say; x, w, y ranks 4 (2D) or 5 (3D): callers lift 1D to 2D. */
typedef struct dnn_conv {
  dnn_tensor x, w, y;
  dnn_tensor b;        /* used when has_bias: dims [1, K, 1, ...] */
  dnn_tensor r;        /* used when has_residual: like y */
  int has_bias, has_residual;
  op_act act;
  int compute_dtype;   /* accumulation: HD_DT_F32 */
  int nspatial;        /* 2 or 3 */
  int64_t pre_pad[3], post_pad[3], stride[3], dilation[3];
  /* 1: y = the data gradient of the convolution of a y-shaped input into
   * x's shape (ConvTranspose: x is dy, y is dx, w [K = x's C, C / G, ...];
   * pads, strides and dilations are that convolution's). Never fused. */
  int transpose;
} dnn_conv;

/* Can act be one pointwise op of the vendor graph? */
int dnn_act_fusable(const op_act *a);

/* Builds the operation graph of c into b. fuse = 0 builds the convolution
 * alone (y = conv(x, w); c's bias/residual/act are then the caller's).
 * NOT_SUPPORTED for a transposed one on a vendor without its names. */
hd_status *dnn_conv_graph(dnn_bag *b, void *handle, const dnn_conv *c, int fuse, void **opgraph);

/* Standalone graphs of the other op families. bench/dnn_ops.c measures
 * the vendor's engines for them against our kernels; of these the GPU
 * backend uses only pooling (gb_pool.c: cuDNN's resample engine was 2.7x our
 * kernel on ResNet-50's max pool), the others run on our kernels
 * (docs/architecture.md has the numbers). */

/* y = act(x op bx), op DNN_POINTWISE_ADD or DNN_POINTWISE_MUL; bx
 * broadcasts by its dims (1 where it repeats). */
hd_status *dnn_pointwise_graph(dnn_bag *b, void *handle, const dnn_tensor *x,
                               const dnn_tensor *bx, const dnn_tensor *y, dnn_name op,
                               const op_act *act, void **opgraph);

/* Pooling as a resample: max (pads never win; NaN propagates) or average
 * (pads counted or not), no dilation; the output dims must be the floor of
 * the window count (no ceil_mode overhang). */
typedef struct dnn_pool {
  dnn_tensor x, y;
  int is_max;
  int count_include_pad;
  int nspatial;
  int64_t window[3], stride[3], pre_pad[3], post_pad[3];
} dnn_pool;
hd_status *dnn_pool_graph(dnn_bag *b, void *handle, const dnn_pool *p, void **opgraph);

/* y = mean (avg) or sum of x over the dims where y is 1 and x is not. */
hd_status *dnn_reduce_graph(dnn_bag *b, void *handle, const dnn_tensor *x, const dnn_tensor *y,
                            int avg, void **opgraph);

/* Scaled dot-product attention, fp32 scores and softmax:
 *   O = softmax(scale * Q K^T + bias) V
 * q is [B, H, S, D], k [B, Hkv, L, D], v [B, Hkv, L, Dv], o [B, H, S, Dv],
 * each in the layout its strides say (unit stride on the last dim; H a
 * multiple of Hkv). The scale is a float passed by value: bind a host
 * pointer to it at scale_uid. Without a bias it is the vendor's one SDPA
 * operation (cuDNN 9.13 and later); with one (the input dtype, over
 * [B, H, S, L] by its strides, 0 where it broadcasts), the graph of two
 * matmuls, pointwise ops and reductions the library's fused attention
 * engine matches (Hkv == H there). cuDNN 9.19 has no engine for a boolean
 * mask selected in that graph (BINARY_SELECT on a uint8 tensor: 0 configs),
 * so masks stay with our kernels. NOT_SUPPORTED on a vendor without the
 * names; whether an engine takes the graph is the plan build's answer. */
typedef struct dnn_sdpa {
  dnn_tensor q, k, v, o;
  int64_t scale_uid;
  int has_bias;
  dnn_tensor bias;
} dnn_sdpa;
hd_status *dnn_sdpa_graph(dnn_bag *b, void *handle, const dnn_sdpa *a, void **opgraph);

/* ---- engine choice and execution plans ---- */

typedef struct dnn_plan dnn_plan;

/* Which engine config a plan runs, in a form that replays it: the config at
 * `index` of heuristics mode `heur_mode`'s list, which is engine `engine`
 * with a workspace of `workspace` bytes. A heuristics query is
 * deterministic for one graph, GPU and library version, so a choice timed
 * once (exhaustive search) is rebuilt later without timing; the engine and
 * workspace are checked, so a list that changed is caught, not followed. */
typedef struct dnn_engine_choice {
  dnn_name heur_mode; /* DNN_HEUR_MODE_A or DNN_HEUR_MODE_FALLBACK */
  int index;          /* 0-based, in the list as the vendor returned it */
  int64_t engine;     /* the engine's global index */
  int64_t workspace;
} dnn_engine_choice;

/* The choice as one line of text ("mode A index 3 engine 17 workspace
 * 1048576"): its length, as snprintf. */
int dnn_engine_choice_format(const dnn_engine_choice *c, char *buf, size_t cap);
/* The inverse; 1 when s is exactly such a line, else 0. */
int dnn_engine_choice_parse(const char *s, dnn_engine_choice *c);

/* Times one execution of a candidate plan (the caller binds buffers and a
 * stream); *ms < 0 or a status when the candidate cannot run. */
typedef hd_status *(*dnn_time_fn)(void *user, const dnn_plan *candidate, float *ms);

typedef struct dnn_plan_opts {
  int allow_tensor_core_fp32; /* TF32: fp32 graphs may use tensor-core engines */
  int fp32_graph;             /* the graph's io is fp32 (the TF32 filter applies) */
  int64_t workspace_limit;    /* 0: none */
  int nuids;                  /* the graph's non-virtual tensors, in binding order */
  int64_t uids[DNN_MAX_UIDS];
  /* Exhaustive choice: when time_fn is set, up to max_candidates engine
   * configs that finalize are timed and the fastest is kept. */
  dnn_time_fn time_fn;
  void *time_user;
  int max_candidates;
  /* A choice made before (an engine cache): when set, the plan is that
   * config, with no heuristic pick and no timing; NOT_SUPPORTED, saying
   * why, when it no longer matches (another engine or workspace at its
   * place, or it does not finalize). */
  const dnn_engine_choice *replay;
} dnn_plan_opts;

struct dnn_plan {
  dnn_bag bag;               /* owns the op graph's descriptors and the plan */
  void *plan;
  int64_t workspace;
  int64_t engine;            /* the engine's global index, for logs */
  int ncandidates;           /* engines timed (exhaustive), else 0 */
  dnn_engine_choice choice;  /* the config chosen, replayable (dnn_plan_opts.replay) */
  int nuids;
  int64_t uids[DNN_MAX_UIDS]; /* the non-virtual tensors, in binding order */
};

/* Heuristics (mode A, then FALLBACK) over opgraph; the first engine config
 * that passes the filters and finalizes becomes the plan (the fastest of
 * the first max_candidates with time_fn; o->replay's config with replay). Takes ownership of
 * *bag (its descriptors move into p->bag) on success and failure alike.
 * NOT_SUPPORTED when no engine fits. */
hd_status *dnn_plan_build(dnn_bag *bag, void *handle, void *opgraph, const dnn_plan_opts *o,
                          dnn_plan *p);
void dnn_plan_free(dnn_plan *p);

/* A variant pack kept between executions of one plan step: rebuilt only when
 * a bound pointer changes (a build costs a few descriptor calls per run). */
typedef struct dnn_varpack {
  void *desc;
  int n;
  void *ptrs[DNN_MAX_UIDS];
  void *workspace;
} dnn_varpack;

/* One execution of p on the handle's current stream: ptrs in p->uids order.
 * vp: a cache of the variant pack (owned by the caller, one per plan use;
 * not shared between threads), or NULL to build and drop one. */
hd_status *dnn_plan_execute(const dnn_plan *p, void *handle, void *const *ptrs, void *workspace,
                            dnn_varpack *vp);
void dnn_varpack_free(const dnn_vendor *vd, dnn_varpack *vp);

#endif
