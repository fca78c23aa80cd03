/* hh_: a small harness over ONNX Runtime's C API for tools and tests.
 *
 * What it does: loads libonnxruntime.so with dlopen (so one binary runs on
 * ORT 1.29 and 1.30), registers the EP library, finds our OrtEpDevices,
 * creates sessions (with our EP or CPU only), reports which EP got which
 * nodes, builds models in memory with the Model Editor API, moves host
 * tensors in and out of OrtValues, compares results and times runs.
 *
 * Conventions:
 * - Functions that can fail return int: 0 on success, nonzero on failure
 *   (HH_SKIP where a requested device is absent). The message is kept in
 *   h->err (hh_err(h)); nothing is printed by the harness itself.
 * - The harness never aborts and owns every ORT object it creates; each
 *   *_free / *_close releases what its constructor made.
 * - Not thread safe: one hh_ort per thread of use.
 */
#ifndef HH_HARNESS_H
#define HH_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "onnxruntime_c_api.h"
/* onnxruntime_c_api.h includes onnxruntime_ep_c_api.h itself (OrtEpFactory, ...);
 * including it again here redefines its structs. */

#define HH_EP_NAME "HipDNNExecutionProvider"
#define HH_SKIP 77 /* ctest SKIP_RETURN_CODE */
#define HH_MAX_RANK 8

/* ---- ORT loading, env, EP library --------------------------------------- */

typedef struct hh_ort {
  void *dl;                       /* dlopen handle of libonnxruntime.so */
  const OrtApiBase *base;         /* OrtGetApiBase() of that library */
  const OrtApi *api;              /* GetApi(ORT_API_VERSION) */
  const OrtModelEditorApi *ed;    /* api->GetModelEditorApi() */
  OrtEnv *env;
  OrtMemoryInfo *cpu_mem;         /* CPU memory info for host tensors */
  OrtAllocator *alloc;            /* default CPU allocator (not owned) */
  char ort_lib[4096];             /* path actually loaded */
  char ep_lib[4096];              /* path registered, "" if none */
  char ep_reg_name[128];          /* registration name, "" if none */
  int log_level;                  /* ORT log level the user asked for (HH_ORT_LOG_LEVEL) */
  char err[4096];                 /* last error message */
} hh_ort;

/* Path of libonnxruntime.so: env HIPDNN_EP_ORT_LIB, else the build's default
 * (ORT 1.29). Path of the EP: env HIPDNN_EP_LIB, else build/lib/libhipdnn_ep.so. */
const char *hh_default_ort_lib(void);
const char *hh_default_ep_lib(void);

/* dlopen ORT (ort_lib NULL = hh_default_ort_lib()), get the API and create an
 * env with log level WARNING (env HH_ORT_LOG_LEVEL=0..4 overrides), logging
 * through hh_log_ort (hh_log.c) to stderr. */
int hh_ort_open(hh_ort *h, const char *ort_lib);
/* Unregisters the EP if registered, releases the env, dlcloses ORT. */
void hh_ort_close(hh_ort *h);
const char *hh_err(const hh_ort *h);
/* ORT's version string ("1.29.0"). */
const char *hh_ort_version(const hh_ort *h);

/* Consumes st: returns 0 if st is NULL, else records "<what>: <message>" in
 * h->err, releases st and returns 1. */
int hh_check(hh_ort *h, OrtStatus *st, const char *what);
/* Records a printf-style message in h->err and returns 1. */
int hh_fail(hh_ort *h, const char *fmt, ...);

/* RegisterExecutionProviderLibrary under HH_EP_NAME (ep_lib NULL = default). */
int hh_ep_register(hh_ort *h, const char *ep_lib);
/* Same with an explicit registration name; does not record it in h (for
 * tests that register twice). Error text in h->err. */
int hh_ep_register_as(hh_ort *h, const char *reg_name, const char *ep_lib);
int hh_ep_unregister(hh_ort *h); /* no-op when nothing is registered */

/* ---- ORT's log (hh_log.c) ------------------------------------------------------ */

/* The env's logging function: prints messages at or above the user's level
 * to stderr as ORT's own sink does, and keeps our EP's messages (those
 * prefixed "[" HH_EP_NAME "] ") while a capture is on. ORT has one env per
 * process, so there is one log state per process. */
void ORT_API_CALL hh_log_ort(void *param, OrtLoggingLevel severity, const char *category, const char *logid,
                             const char *code_location, const char *message);
/* The level hh_log_ort prints at (hh_ort_open sets it from HH_ORT_LOG_LEVEL). */
void hh_log_set_level(int level);
/* Starts keeping our EP's messages at every level: raises the env's level
 * to VERBOSE until hh_log_capture_end (what prints to stderr stays at the
 * user's level; sessions keep the user's level, see hh_session_create). */
int hh_log_capture_begin(hh_ort *h);
/* Ends the capture and restores the env's level. *text: the EP's messages,
 * one per line, without the prefix (malloc'ed, never NULL on success). */
int hh_log_capture_end(hh_ort *h, char **text);

/* ---- devices --------------------------------------------------------------- */

/* ep_metadata "backend" of a device ("ref", "cuda", "hip"), or "" if absent. */
const char *hh_device_backend(hh_ort *h, const OrtEpDevice *dev);
/* 1 if name is one of the EP names our library registered under HH_EP_NAME
 * offers: HH_EP_NAME itself (the first GPU, or the CPU without a GPU),
 * HH_EP_NAME "_ref" and HH_EP_NAME "_<n>". */
int hh_is_ep_name(const char *name);
/* All OrtEpDevices with one of our EP names (hh_is_ep_name) and whose backend
 * matches: backend NULL = any, "gpu" = cuda or hip, else exact. Returns the
 * number found (all of them, even beyond max); fills out[0..max). */
size_t hh_ep_devices(hh_ort *h, const char *backend, const OrtEpDevice **out, size_t max);

/* A device to run on, and the value of the `backend` provider option that
 * goes with it. */
typedef struct hh_target {
  const OrtEpDevice *dev;
  char backend[16]; /* "ref", "cuda", "hip" */
  int is_gpu;
} hh_target;

/* mode "ref": the ref (CPU) device. mode "gpu": the first GPU device, or
 * HH_SKIP if none is listed. mode "auto": a GPU device if listed, else ref.
 * mode NULL: from env HIPDNN_EP_TEST_BACKEND (unset/"ref" -> "ref", "auto"
 * -> "gpu", so the GPU check script skips rather than silently testing ref). */
int hh_target_pick(hh_ort *h, const char *mode, hh_target *out);

/* ---- sessions ---------------------------------------------------------------- */

typedef struct hh_session_cfg {
  const OrtEpDevice *dev;         /* NULL = CPU EP only */
  const char *const *keys;        /* provider options for our EP */
  const char *const *vals;
  size_t n_opts;
  int disable_cpu_fallback;       /* session.disable_cpu_ep_fallback=1 */
  int intra_threads;              /* 0 = ORT default */
  int graph_opt_level;            /* 0 = ORT default; -1 = ORT_DISABLE_ALL; else a
                                   * GraphOptimizationLevel (1, 2, 99) */
  const char *const *config_keys; /* extra session config entries, added as */
  const char *const *config_vals; /* given (e.g. another EP's "ep.<name>.<key>") */
  size_t n_config;
} hh_session_cfg;

/* Creates a session from an in-memory model (model) or a file (path); one of
 * them is non-NULL. Always sets session.record_ep_graph_assignment_info=1,
 * and the session's log level to the user's (h->log_level), so a session
 * made during a log capture does not log verbosely for its whole life. */
int hh_session_create(hh_ort *h, const hh_session_cfg *cfg, const OrtModel *model,
                      const char *path, OrtSession **out);
void hh_session_free(hh_ort *h, OrtSession *s);

/* A graph input/output as the session sees it; dims -1 = symbolic. */
typedef struct hh_io {
  char name[256];
  int dtype; /* ONNXTensorElementDataType (= hd_dtype numbering) */
  int rank;
  int64_t dims[HH_MAX_RANK];
} hh_io;
/* Fills up to max entries, *n = total count. Non-tensor ios are an error. */
int hh_session_inputs(hh_ort *h, OrtSession *s, hh_io *out, size_t max, size_t *n);
int hh_session_outputs(hh_ort *h, OrtSession *s, hh_io *out, size_t max, size_t *n);

/* Per-EP node counts by op type, from Session_GetEpGraphAssignmentInfo. */
typedef struct hh_assign_row {
  char ep[64];
  char op[64];
  int count;
} hh_assign_row;
typedef struct hh_assign {
  hh_assign_row *rows;
  size_t n;
  int ep_partitions; /* subgraphs ORT gave HipDNNExecutionProvider (one per fused node) */
} hh_assign;
int hh_assignment(hh_ort *h, OrtSession *s, hh_assign *out);
/* Sum of counts matching ep and op (NULL = any). */
int hh_assign_count(const hh_assign *a, const char *ep, const char *op);
void hh_assign_print(const hh_assign *a, FILE *f, const char *indent);
void hh_assign_free(hh_assign *a);

/* ---- where each node runs, and why (hh_place.c) ------------------------------- */

/* One node of the session's graph and the EP ORT assigned it to. */
typedef struct hh_node_place {
  char name[256];
  char op[64];
  char domain[64];
  char ep[64];
  int subgraph;     /* which of ORT's assigned subgraphs holds it */
} hh_node_place;
/* Every node of Session_GetEpGraphAssignmentInfo (malloc'ed *out). */
int hh_node_places(hh_ort *h, OrtSession *s, hh_node_place **out, size_t *n);

/* What our EP said of a node at GetCapability, from its verbose log lines
 * "not claiming OP 'NAME': REASON" and "claiming OP 'NAME' in partition K"
 * (ep/ep_ep.c writes them; a capture, hh_log_capture_*, collects them). */
typedef struct hh_claim {
  char name[256];
  char op[64];
  int claimed;      /* 1: in one of its partitions, 0: declined */
  char reason[512]; /* why it declined */
} hh_claim;
typedef struct hh_claims {
  hh_claim *rows;
  size_t n;
} hh_claims;
/* Parses a capture's text. GetCapability may run more than once over a
 * graph: the last word on a named node wins (unnamed nodes are kept in
 * order). Returns 1 when out of memory. */
int hh_claims_parse(const char *ep_log, hh_claims *out);
void hh_claims_free(hh_claims *c);

/* A node that does not run on our EP, and why. */
typedef struct hh_offload {
  char name[256];
  char op[64];
  char domain[64];
  char ep[64];          /* where ORT runs it; "" for a node our EP declined that
                         * is no longer in the session's graph (ORT fused or
                         * removed it after partitioning) */
  int claimed;          /* our EP claimed it, yet ORT assigned it elsewhere */
  char reason[512];
} hh_offload;
typedef struct hh_offloads {
  hh_offload *rows;
  size_t n;
  size_t n_claimed; /* rows with claimed set */
} hh_offloads;
/* Every node of places[] not on one of our EP names, with the EP's reason
 * (matched by name and op type), then the declined nodes missing from
 * places[]. Returns 1 when out of memory. */
int hh_offloads_make(const hh_node_place *places, size_t n, const hh_claims *c, hh_offloads *out);
/* A table: node, op (domain-qualified), EP, reason. */
void hh_offloads_print(const hh_offloads *o, FILE *f, const char *indent);
void hh_offloads_free(hh_offloads *o);

/* ---- host tensors ------------------------------------------------------------ */

typedef struct hh_tensor {
  int dtype; /* hd_dtype / ONNXTensorElementDataType */
  int rank;
  int64_t dims[HH_MAX_RANK];
  size_t n;   /* element count */
  void *data; /* owned, malloc'ed; n * hd_dtype_size(dtype) bytes */
} hh_tensor;

/* Allocates zeroed storage. Dims must be >= 0. */
int hh_tensor_alloc(hh_tensor *t, int dtype, int rank, const int64_t *dims);
void hh_tensor_free(hh_tensor *t);
/* Deterministic fill from seed: floats uniform in [-1, 1] (fp16/bf16 by
 * conversion from fp32), int8 in [-8, 8], uint8 in [0, 16], other ints in
 * [-8, 8]. Same seed + same size = same data on every machine. */
void hh_tensor_fill_random(hh_tensor *t, uint64_t seed);
/* Element i as double, and set from double (rounded/converted per dtype). */
double hh_tensor_get(const hh_tensor *t, size_t i);
void hh_tensor_set(hh_tensor *t, size_t i, double v);

/* Rounds every element through fp16 (for fp32 twins of fp16 data). */
void hh_tensor_round_f16(hh_tensor *t);
/* A converted copy (element by element through double). */
int hh_tensor_convert(const hh_tensor *src, int dtype, hh_tensor *out);

/* An OrtValue over t->data (no copy): t must outlive the value. */
int hh_tensor_to_value(hh_ort *h, const hh_tensor *t, OrtValue **out);
/* A host copy of a CPU tensor OrtValue. */
int hh_value_to_tensor(hh_ort *h, const OrtValue *v, hh_tensor *out);

/* Runs with inputs in session input order; allocates outputs[0..n_out) (the
 * caller frees them with hh_tensor_free). n_out may be less than the number
 * of session outputs (the first n_out are fetched). */
int hh_session_run(hh_ort *h, OrtSession *s, const hh_tensor *inputs, size_t n_in,
                   hh_tensor *outputs, size_t n_out);

/* ---- IO binding: inputs and outputs in the device's memory (hh_bind.c) ------ */

#define HH_BIND_MAX_IO 64

/* A session's IoBinding with its inputs copied into the memory of the EP's
 * device (EpDevice_MemoryInfo DEFAULT; a device that reports none, the
 * reference backend's CPU device, computes in host memory and gets CPU
 * memory) from the session's allocator for that memory, and its outputs
 * bound to that memory: ORT allocates them on the first run; later runs
 * write into the same tensors. */
typedef struct hh_binding {
  OrtIoBinding *io;
  OrtAllocator *alloc;       /* session allocator for mem (released at free) */
  const OrtMemoryInfo *mem;  /* the device's memory info, or h->cpu_mem */
  int on_device;             /* 0: the device computes in host memory */
  char mem_name[64];         /* MemoryInfoGetName of mem */
  int mem_id;                /* MemoryInfoGetId of mem */
  OrtValue *in[HH_BIND_MAX_IO];
  size_t n_in;
  OrtValue *out[HH_BIND_MAX_IO]; /* bound after the first run */
  size_t n_out;
  int outputs_bound;
} hh_binding;
int hh_binding_create(hh_ort *h, OrtSession *s, const OrtEpDevice *dev, hh_binding *b);
/* Copies inputs (session input order) into device memory and binds them;
 * binds every output to the device's memory (allocated by the next run). */
int hh_binding_set_inputs(hh_ort *h, OrtSession *s, hh_binding *b, const hh_tensor *inputs, size_t n_in);
/* RunWithBinding, then waits for the outputs (SynchronizeBoundOutputs). */
int hh_binding_run(hh_ort *h, OrtSession *s, hh_binding *b);
/* Host copies of the first n_out outputs of the last run. */
int hh_binding_outputs(hh_ort *h, hh_binding *b, hh_tensor *outputs, size_t n_out);
void hh_binding_free(hh_ort *h, hh_binding *b);

/* ---- model building (OrtModelEditorApi) -------------------------------------- */

typedef struct hh_model hh_model; /* a graph being built, then an OrtModel */

enum hh_attr_kind { HH_ATTR_INT, HH_ATTR_INTS, HH_ATTR_FLOAT, HH_ATTR_FLOATS, HH_ATTR_STRING };
typedef struct hh_attr {
  const char *name;
  int kind;            /* enum hh_attr_kind */
  int64_t i;           /* HH_ATTR_INT */
  const int64_t *ints; /* HH_ATTR_INTS, n entries */
  float f;             /* HH_ATTR_FLOAT */
  const float *floats; /* HH_ATTR_FLOATS, n entries */
  const char *s;       /* HH_ATTR_STRING */
  size_t n;
} hh_attr;
hh_attr hh_attr_int(const char *name, int64_t v);
hh_attr hh_attr_ints(const char *name, const int64_t *v, size_t n);
hh_attr hh_attr_float(const char *name, float v);
hh_attr hh_attr_string(const char *name, const char *s);

hh_model *hh_model_new(hh_ort *h);
/* Graph input / output; dims[i] = -1 makes that dim symbolic. rank -1 for an
 * output = shape left to inference. Order of calls = order in the graph. */
int hh_model_input(hh_model *m, const char *name, int dtype, int rank, const int64_t *dims);
int hh_model_output(hh_model *m, const char *name, int dtype, int rank, const int64_t *dims);
/* Copies t into an initializer named name. */
int hh_model_initializer(hh_model *m, const char *name, const hh_tensor *t);
/* An fp32 initializer of seeded random values (hh_tensor_fill_random) times
 * scale; adds its size in bytes to *bytes when bytes is not NULL. */
int hh_model_random_initializer(hh_model *m, const char *name, int rank, const int64_t *dims, uint64_t seed,
                                double scale, size_t *bytes);
/* domain NULL or "" = ONNX. */
int hh_model_node(hh_model *m, const char *op, const char *domain, const char *name,
                  const char *const *ins, size_t n_in, const char *const *outs, size_t n_out,
                  const hh_attr *attrs, size_t n_attrs);
/* Sets graph inputs/outputs and wraps the graph in an OrtModel with the ONNX
 * domain at `opset` (0 = 17). After this, hh_model_ort is usable. */
int hh_model_finish(hh_model *m, int opset);
const OrtModel *hh_model_ort(const hh_model *m);
void hh_model_free(hh_model *m);

/* One Conv node: input "X" [N, C, spatial...], weight "W" [M, C/group, k...]
 * and optional bias "B" [M] as random initializers (seeded), output "Y". */
typedef struct hh_conv_desc {
  int dtype;            /* HD_DT_F32, HD_DT_F16, HD_DT_I8 (0 = f32) */
  int nd;               /* spatial dims: 1, 2, 3 */
  int64_t n, c, m;      /* batch, in channels, out channels */
  int64_t in[3];        /* input spatial sizes */
  int64_t k[3];         /* kernel sizes */
  int64_t strides[3];   /* 0 in [0] = attribute omitted (default 1) */
  int64_t dilations[3]; /* 0 in [0] = attribute omitted (default 1) */
  int64_t pads[6];      /* begins then ends; used when has_pads */
  int has_pads;
  const char *auto_pad; /* NULL = attribute omitted */
  int64_t group;        /* 0 = attribute omitted (default 1) */
  int bias;
  int no_kernel_shape;  /* omit kernel_shape (inferred from W) */
  int f16_values;       /* with dtype f32: round W and B through fp16, so the
                         * model is the exact fp32 twin of the fp16 model with
                         * the same seed (an fp32 reference for fp16 tests) */
  int dynamic_batch;    /* X's dim 0 symbolic */
  int dynamic_spatial;  /* X's spatial dims symbolic */
  int opset;            /* 0 = 17 */
  uint64_t seed;
} hh_conv_desc;
int hh_conv_model(hh_ort *h, const hh_conv_desc *d, hh_model **out);
/* A residual block with a pooled second output, fp32, opset 17:
 *   X [N, channels, S, S] -> Conv3x3+B "conv1" -> Relu "relu1" -> Conv3x3+B
 *   "conv2" -> Add(X) "residual" -> Relu "relu2" -> Y;
 *   Y -> GlobalAveragePool "pool" -> P
 * N symbolic; S = spatial, or symbolic when spatial < 0. Seeded weights;
 * their size in bytes goes to *weight_bytes (may be NULL). */
int hh_residual_block_model(hh_ort *h, int channels, int64_t spatial, hh_model **out, size_t *weight_bytes);
/* Output spatial size per ONNX Conv rules for dim i (handles auto_pad). */
int64_t hh_conv_out_dim(const hh_conv_desc *d, int i, int64_t in);

/* ---- comparison ------------------------------------------------------------- */

/* Element passes when |got - ref| <= atol + rtol * |ref| (numpy.allclose). */
typedef struct hh_tol {
  double atol, rtol;
} hh_tol;
/* Per-dtype defaults (see harness.c for the reasoning). tf32 != 0 loosens
 * fp32 for GPU math with TF32 tensor cores (10-bit mantissa). */
hh_tol hh_tol_for(int dtype, int tf32);

typedef struct hh_cmp {
  int pass;
  double max_abs;         /* max |got - ref| */
  double max_rel;         /* max |got - ref| / max(|ref|, atol) */
  double rel_l2;          /* ||got - ref|| / ||ref|| over the finite pairs (||got - ref|| when ref is 0) */
  size_t worst;           /* flat index of the element furthest past tolerance */
  int64_t worst_coord[HH_MAX_RANK];
  int rank;
  double worst_got, worst_ref;
  size_t n_bad;           /* elements out of tolerance */
  size_t n_nonfinite_mismatch; /* NaN/Inf in one but not the same in the other */
  size_t n;
  char why[256];          /* non-empty when the comparison itself failed (shape, dtype) */
} hh_cmp;
/* Compares in double; got and ref may be different float types (an fp16
 * result against an fp32 reference). Returns out->pass. */
int hh_compare(const hh_tensor *got, const hh_tensor *ref, hh_tol tol, hh_cmp *out);
/* One line: "PASS max_abs=... max_rel=..." or "FAIL ... worst [n,c,h,w] got=.. ref=..". */
void hh_cmp_print(const hh_cmp *c, hh_tol tol, FILE *f);

/* ---- concurrency (hh_stress.c) ------------------------------------------------ */

#define HH_STRESS_MAX_IO 16

/* One input set and the outputs it gives when run alone. */
typedef struct hh_case {
  hh_tensor in[HH_STRESS_MAX_IO];
  size_t n_in;
  hh_tensor ref[HH_STRESS_MAX_IO];
  size_t n_out;
  long items;   /* work units, for throughput (e.g. the batch) */
} hh_case;
/* Runs c alone on s and keeps its outputs as c->ref. */
int hh_case_reference(hh_ort *h, OrtSession *s, hh_case *c);
void hh_case_free(hh_case *c);

typedef struct hh_stress_cfg {
  int threads;
  int iters;        /* runs per thread, each on a random case */
  hh_tol tol;       /* a run's outputs pass when allclose to the run alone */
  double timeout_s; /* a run longer than this is reported as a hang */
} hh_stress_cfg;

typedef struct hh_stress_result {
  long runs, items;
  long wrong;       /* outputs out of tolerance of the run alone */
  long errors;      /* runs that returned an error */
  long inexact;     /* within tolerance, but not bitwise equal */
  int hung;
  double seconds;
  char first_wrong[512], first_error[512];
} hh_stress_result;

/* threads x iters runs of s over cases; each thread has its own copy of h
 * (its own error text). Returns 1 when anything was wrong, failed or hung
 * (a hung run's threads are abandoned: the caller should exit). */
int hh_stress_run(hh_ort *h, OrtSession *s, const hh_case *cases, size_t ncases, const hh_stress_cfg *cfg,
                  hh_stress_result *out);
/* The same in two halves, so several sessions can be stressed at once. */
typedef struct hh_stress {
  struct stress_job *job;
  struct stress_worker *workers;
  int nthreads;
  double t0;
} hh_stress;
int hh_stress_start(hh_ort *h, OrtSession *s, const hh_case *cases, size_t ncases, const hh_stress_cfg *cfg,
                    hh_stress **out);
int hh_stress_wait(hh_stress *st, double timeout_s, hh_stress_result *out);
/* "concurrency: N threads x M runs: W wrong, E errors" and throughput. */
void hh_stress_print(const hh_stress_result *r, int threads, FILE *f);

/* ---- timing ---------------------------------------------------------------- */

typedef struct hh_timing {
  int iters;
  double min_ms, median_ms, p90_ms, mean_ms;
} hh_timing;
/* warmup untimed runs, then iters timed runs (outputs discarded). */
int hh_time_runs(hh_ort *h, OrtSession *s, const hh_tensor *inputs, size_t n_in, int warmup,
                 int iters, hh_timing *out);
double hh_now_ms(void);

#endif
