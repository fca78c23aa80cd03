/* gb_internal: the GPU backend's private types.
 *
 * One GPU backend, built once per vendor into its own module:
 *   backends/gpu/gb_module.c    devices, memory, copies, streams, events; open
 *   backends/gpu/gb_program.c   contexts, graphs, plans, runs, graph capture,
 *                               and THE op table (support + compile + run)
 *   backends/gpu/gb_<family>.c  one op family each: gb_conv.c (DNN library),
 *                               gb_pointwise.c, gb_pool.c, gb_gemm.c,
 *                               gb_softmax.c, gb_reduce.c, gb_concat.c
 *   backends/cuda/cu_cudnn.c    the NVIDIA half: finds libcudnn, fills dnn_vendor
 *   backends/cuda/cu_blaslt.c   optional: cuBLASLt matmuls (gb_blas_load)
 *   backends/hip/               the AMD half: hipDNN's table, the HIP build
 * gb_*.c call the GPU runtime only through gpu/gpu_vendor.h (gpu* names), the
 * DNN library only through backends/dnn (the descriptor builder), a BLAS only
 * through gb_blas, and their own kernels through gpu/gpu_kernels.h. */
#ifndef GB_INTERNAL_H
#define GB_INTERNAL_H

#include <pthread.h>

#include "backends/backend.h"
#include "backends/dnn/dnn.h"
#include "gpu/gpu_vendor.h"
#include "ops/ops.h"

/* ---- an optional vendor BLAS (cuBLASLt; hipBLASLt later) ---- */

/* Row-major D[batch][m, n] = alpha * op(A)[m, k] op(B)[k, n] (+ bias[n])
 * (relu, or gelu: the tanh form), A/B/D of dtype, fp32 accumulation.
 * lda/ldb/ldd: the row-major leading dims as stored (ldd 0: n, D packed;
 * stride_d 0: m * n); batch strides of A and B may be 0 (broadcast). */
typedef struct gb_mm_desc {
  int dtype;
  int allow_tf32;
  int64_t m, n, k;
  int trans_a, trans_b;
  int64_t lda, ldb;
  int64_t batch, stride_a, stride_b;
  int64_t ldd, stride_d;
  int bias, relu, gelu;
  int accumulate; /* D = A B + C, C laid out as D (beta 1), before the bias and activation */
  float alpha;
} gb_mm_desc;

/* Algorithms a matmul may choose among: the BLAS heuristic's first ones. */
#define GB_MM_RANKS 8

typedef struct gb_blas {
  const char *name; /* "cuBLASLt" */
  size_t version;   /* the library's, for the engine cache's keys */
  hd_status *(*handle_create)(void **h);
  void (*handle_destroy)(void *h);
  /* The algorithm the library's heuristic ranks `rank` (0: its first,
   * below GB_MM_RANKS) for d within ws_limit; NOT_SUPPORTED when it has
   * no such one. */
  hd_status *(*mm_create)(void *h, const gb_mm_desc *d, size_t ws_limit, int rank, void **mm,
                          size_t *ws_bytes);
  /* c: the accumulated matrix when the descriptor says accumulate, else NULL */
  hd_status *(*mm_run)(void *h, const void *mm, const void *a, const void *b, const void *c, void *d,
                       const void *bias, void *ws, size_t ws_bytes, void *stream);
  void (*mm_free)(void *mm);
} gb_blas;

typedef struct gb_module {
  be_module base;
  be_host host;
  void *dnn_lib;   /* the dlopen'ed vendor DNN library */
  dnn_vendor vd;
  int ndev;
  /* The BLAS, loaded on the first context (under a lock in gb_program.c):
   * blas_state 0 untried, 1 loaded, -1 absent (matmuls run gpu_gemm). */
  int blas_state;
  gb_blas blas;
} gb_module;

/* ---- the vendor half (cu_cudnn.c) ---- */

/* The backend's name ("cuda") and the runtime name for messages. */
extern const char gb_backend_name[];
/* Finds and loads the DNN library into m->dnn_lib / m->vd. NOT_FOUND, with
 * every place tried and why it failed, when it is missing or too old. */
hd_status *gb_dnn_load(gb_module *m);
void gb_dnn_unload(gb_module *m);
/* Optional (weak): fills m->blas. A vendor module that does not define it
 * runs matmuls on gpu_gemm. NOT_FOUND when the library is missing. */
hd_status *gb_blas_load(gb_module *m) __attribute__((weak));

/* ---- errors ---- */

hd_status *gb_status(gpuError_t e, const char *call, const char *file, int line);
#define GB_CHECK(call) HD_TRY(gb_status((call), #call, __FILE__, __LINE__))
/* A gpu/gpu_kernels.h launcher's return: < 0 no kernel for these arguments
 * (an internal error: supports_node should have refused), > 0 a runtime error. */
hd_status *gb_kernel_status(int rc, const char *kernel, const char *file, int line);
#define GB_KERNEL(call) HD_TRY(gb_kernel_status((call), #call, __FILE__, __LINE__))

/* ---- the program half (gb_program.c) ---- */

hd_status *gb_context_create(be_module *m, int ordinal, const be_options *opts,
                             const be_alloc *alloc, be_context **out);
void gb_context_destroy(be_context *c);
hd_status *gb_supports_node(be_context *c, const ir_graph *g, int node);
hd_status *gb_graph_compile(be_context *c, const ir_graph *g, be_graph **out);
void gb_graph_free(be_graph *bg);
hd_status *gb_plan_compile(be_graph *bg, const ir_plan *p, be_plan **out);
void gb_plan_free(be_plan *bp);

typedef struct gb_conv_cache gb_conv_cache; /* gb_conv.c */
typedef struct gb_mm_cache gb_mm_cache;     /* gb_mmcache.c */
typedef struct gb_exec gb_exec;             /* gb_exec.c */
typedef struct gb_exec_set gb_exec_set;
typedef struct gb_plan_slot gb_plan_slot;

struct be_context {
  gb_module *m;
  int ordinal;
  be_options opts;
  be_alloc alloc;
  void *handle;        /* the DNN library handle */
  void *blas;          /* the BLAS handle, or NULL */
  pthread_mutex_t mu;  /* guards the handles (stream + execute), caches and runs */
  gb_conv_cache *conv; /* conv plans by signature */
  gb_mm_cache *mm;     /* BLAS matmul plans by descriptor (NULL without a BLAS) */
  /* Exhaustive search's choices on disk (gb_engcache.c), or NULL; the
   * scope (device, libraries) starts every key. Counters under mu. */
  struct hd_diskcache *engines;
  char engine_scope[384];
  int engines_replayed, engines_timed, engines_candidates;
  int engines_warned; /* a failed save was logged */
};

struct be_graph {
  be_context *c;
  const ir_graph *g;
  void **consts;       /* per value: device copy of constant data, or NULL */
  void *const_block;   /* one allocation holding every constant of the graph */
  size_t const_bytes;  /* of consts */
  gb_exec_set *execs;  /* the run instances all plans of this graph share (gb_exec.c) */
};

typedef struct gb_family gb_family;

/* One step of a plan: a node at this plan's shapes; priv is the family's. */
typedef struct gb_step {
  const ir_node *n;
  const gb_family *f;
  op_params p;    /* resolved for the plan's shapes */
  void *priv;
  /* Bytes of the run's zeroed memory this step alone uses (set by its
   * compile; arrival counters of kernels whose last block finishes the
   * work), at zeroed_at: every run clears them before its first launch. */
  size_t zeroed_bytes, zeroed_at;
  /* Set by another step's link, which took this step's work into its own
   * launches (a conv's epilogue writing the Cast after it): not run. */
  int absorbed;
} gb_step;

/* be_plan.move_at of an input or output never staged under a graph. */
#define GB_NOT_STAGED SIZE_MAX

/* A plan: a graph at one set of input shapes, compiled. Read-only once
 * gb_plan_compile returns, so any number of runs may use it at once: the
 * memory a run writes is a run instance of the graph (gb_exec), and what a
 * plan keeps per instance (its captured GPU graph, variant packs) is in
 * that instance's slot, touched only by the run holding the instance. */
struct be_plan {
  be_graph *bg;
  ir_plan p;     /* a copy whose t[] this plan owns (steps not kept) */
  gb_step *steps;
  int nsteps;
  size_t workspace_bytes; /* the most any step asks for */
  size_t zeroed_bytes;    /* the steps' zeroed memory (gb_step.zeroed_bytes), together */
  size_t stage_bytes;     /* staging of all its inputs and outputs (misaligned ones) */
  /* Graph capture: per input, then output, its place in the staging of
   * those that may move under a captured graph (GB_NOT_STAGED: a buffer
   * too large to copy per run), and their bytes together. */
  size_t *move_at;
  size_t move_bytes;
  void *folded;           /* device copy of p.folded (values computed at plan time) */
  gb_plan_slot *slots;    /* one per run instance (gb_exec.c) */
  size_t counted;         /* device bytes of this plan in the graph's figures (gb_graph_memory) */
};

/* What a run hands each step: where the tensors are, the stream, and the
 * workspace and caches of the exec instance it runs in. */
typedef struct gb_launch {
  ir_bindings b;
  gpuStream_t stream;
  void *workspace;
  size_t workspace_bytes;
  void *zeroed; /* the run's zeroed memory (gb_zeroed) */
  gb_plan_slot *slot;
  /* Profiled runs only (else NULL): nsteps + 1 timing events, [0]
   * recorded before the first step's launches, [i + 1] after step i's. */
  gpuEvent_t *step_events;
  int64_t *first_event_ns; /* the host clock when [0] was recorded */
} gb_launch;

/* An op family: support check (shapes may be dynamic; decisive), compile at
 * a plan's shapes (optional: fills s->priv; raises *workspace to what a run
 * needs),
 * link (optional: once every step compiled, may fuse s with the steps
 * around it), run (launches on l->stream; no allocation, no sync, writes
 * nothing but tensors, the workspace and its step's exec cache), release. */
struct gb_family {
  const char *name;
  hd_status *(*support)(be_context *c, const ir_graph *g, const ir_node *n);
  hd_status *(*compile)(be_plan *bp, gb_step *s, size_t *workspace);
  void (*link)(be_plan *bp, gb_step *s);
  hd_status *(*run)(be_plan *bp, gb_step *s, const gb_launch *l);
  void (*release)(be_plan *bp, gb_step *s);
};

/* The step that alone reads value v (v is no partition output and has one
 * use), or NULL: for links that fuse a step with its reader. */
gb_step *gb_only_reader(be_plan *bp, int v);
/* Do values a and b (IR_NONE: none) share arena bytes in plan bp? */
int gb_arena_overlap(const be_plan *bp, int a, int b);

/* A norm step's descriptor as its compile made it (sizes, row maps), else
 * NULL; and with the run's addresses but x and y (gb_norm.c): for a step
 * that takes the norm into its own launch (gb_nbits.c). */
struct gpu_norm_desc;
const struct gpu_norm_desc *gb_norm_sizes(const gb_step *s);
void gb_norm_bind(const be_plan *bp, const gb_step *s, const gb_launch *l, struct gpu_norm_desc *d);

/* The families: gb_family_<family> for each OP_FAMILY (ops/op_registry.h),
 * defined in the gb_*.c files and found by gb_program.c's table. */
extern const gb_family gb_family_view; /* a view that is a partition output: a copy */
/* The family of ops the GPU backend leaves to the CPU EP. */
#define GB_NOT_ON_GPU(family) {.name = #family " (not on the GPU)"}

void gb_conv_cache_free(be_context *c);
/* The engine cache (gb_engcache.c). open: with opts.engine_cache_file set
 * and exhaustive search, reads the file (its trouble is a logged warning,
 * never an error). get: 1 and the choice cached for op_key on this device.
 * put: records a timed choice (saved by the next save). save: writes what
 * was put (after a plan compiles; a failure is logged). close: saves,
 * logs what the context replayed and timed, frees. */
hd_status *gb_engine_cache_open(be_context *c);
int gb_engine_cache_get(be_context *c, const char *op_key, dnn_engine_choice *out);
void gb_engine_cache_put(be_context *c, const char *op_key, const dnn_engine_choice *choice);
/* The same with the choice as the caller's own text (a matmul's rank). */
int gb_engine_cache_get_text(be_context *c, const char *op_key, char *value, size_t cap);
void gb_engine_cache_put_text(be_context *c, const char *op_key, const char *value);
void gb_engine_cache_unreadable(be_context *c, const char *op_key, const char *value);
void gb_engine_cache_save(be_context *c);
void gb_engine_cache_close(be_context *c);
/* Scratch for exhaustive search (gb_tuner.c). open: the stream and events
 * (nothing allocated yet); buffer: one more zeroed buffer, bufs[nbufs - 1];
 * workspace: ws grown to at least bytes; time: a dnn_time_fn over the
 * buffers (and `value`, a scalar passed by value, bound before buffer
 * value_at when that is set: -1 none, nbufs after the last); close: waits
 * for the stream, frees everything (also after a failed open). */
#define GB_TUNER_BUFS 5
typedef struct gb_tuner {
  be_context *c;
  void *bufs[GB_TUNER_BUFS];
  int nbufs;
  void *ws;
  size_t ws_bytes;
  float value;
  int value_at;
  gpuStream_t stream;
  gpuEvent_t ev[2];
} gb_tuner;
hd_status *gb_tuner_open(gb_tuner *t, be_context *c);
hd_status *gb_tuner_buffer(gb_tuner *t, size_t bytes);
hd_status *gb_tuner_workspace(gb_tuner *t, size_t bytes);
hd_status *gb_tuner_time(void *user, const dnn_plan *cand, float *ms);
void gb_tuner_close(gb_tuner *t);
/* The BLAS matmul plan for d (gb_mmcache.c): shared, counted; every
 * successful gb_mm_get is paired with one gb_mm_put when its step is
 * released. mm_create's errors pass through (NOT_SUPPORTED: no algorithm). */
hd_status *gb_mm_cache_create(gb_mm_cache **out);
void gb_mm_cache_free(be_context *c);
hd_status *gb_mm_get(be_context *c, const gb_mm_desc *d, size_t limit, void **mm, size_t *ws);
void gb_mm_put(be_context *c, void *mm);

/* ---- runs (gb_exec.c) ---- */

/* A graph's run instances: none at first, made by runs as they need them
 * (at most GB_MAX_EXECS), each grown to the largest plan it ran;
 * gb_exec_set_free waits for their GPU work first. */
hd_status *gb_exec_set_create(be_graph *bg);
void gb_exec_set_free(be_graph *bg);
/* A plan's slots, one per instance; freeing waits for the plan's GPU work. */
hd_status *gb_plan_slots_create(be_plan *bp);
void gb_plan_slots_free(be_plan *bp);
hd_status *gb_plan_run(be_plan *bp, void *const *inputs, void *const *outputs, void *stream);
/* The same, eager (no graph replay) with a timing event around each step;
 * waits for the stream before (so the run's start is known on the host
 * clock) and after (so its times are). */
hd_status *gb_plan_run_profiled(be_plan *bp, void *const *inputs, void *const *outputs, void *stream,
                                be_run_profile *prof);
/* Device bytes graph bg holds: weights, run instances, plans' folded data. */
void gb_graph_memory(be_graph *bg, be_graph_memory *out);
/* Adds (bytes > 0) or takes back a plan's device bytes in bg's figures. */
void gb_graph_count_plan(be_graph *bg, size_t bytes, int add);
/* Every step of bp, launched in order (c->mu held: the DNN handle). */
hd_status *gb_run_steps(be_plan *bp, const gb_launch *l);
/* Copies a tensor between channels last, [n, inner, c], and channels first,
 * [n, c, inner] (to_first), on the stream; a gpu_* kernel's return code. */
int gb_relayout(const void *src, void *dst, int dtype, int64_t n, int64_t c, int64_t inner, int to_first,
                gpuStream_t stream);
/* Step s's share of the run's zeroed memory (NULL when it asked for none):
 * all zeros when the run starts, written by nothing else in the run. */
void *gb_zeroed(const gb_launch *l, const gb_step *s);
/* Step s's variant-pack cache in the exec instance running it. */
dnn_varpack *gb_exec_varpack(const gb_launch *l, const be_plan *bp, const gb_step *s);

/* ---- helpers for family files (gb_program.c) ---- */

#define GB_OOM() hd_error(HD_ERR_OUT_OF_MEMORY, "%s:%d: out of host memory", __FILE__, __LINE__)

int gb_dtype_ok(int dtype);            /* f32, f16, bf16 */
/* NOT_SUPPORTED unless input k of n has a dtype the kernels take: the
 * support check of families whose kernels take any shape (their op's
 * check vetted the rest). */
hd_status *gb_support_float_input(const ir_graph *g, const ir_node *n, int k);
/* The plan tensor of value v, and its address under bindings b. */
const ir_tensor *gb_t(const be_plan *bp, int v);
void *gb_addr(const be_plan *bp, int v, const ir_bindings *b);
/* Whether input k of n is absent or a constant initializer: memory no
 * kernel writes, which an early-launched kernel may read before the kernel
 * before it ends (gpu_common.cuh, gpu::launch). */
int gb_input_const(const be_plan *bp, const ir_node *n, int k);
/* Every present input and output of n is a float type the kernels take and
 * all have the same dtype as input 0 (first `nin` inputs; -1: all). */
hd_status *gb_check_float_io(const ir_graph *g, const ir_node *n, int nin);
/* For byte-moving kernels: value v's elements are 1, 2, 4 or 8 bytes and
 * no output of n passes GPU_MAX_DIMS. */
hd_status *gb_check_elements(const ir_graph *g, const ir_node *n, int v);
/* Right-aligned numpy broadcast of a and b onto y, collapsed: adjacent dims
 * merge where both operands' strides stay contiguous over them
 * (gb_pointwise.c). bc is gpu/gpu_kernels.h's gpu_bcast. */
struct gpu_bcast;
hd_status *gb_bcast_build(const ir_tensor *a, const ir_tensor *b, const ir_tensor *y, struct gpu_bcast *bc);
/* The same with a and/or b read through a fused Transpose (perm of the
 * output's rank; NULL: none). */
hd_status *gb_bcast_build_perm(const ir_tensor *a, const int8_t *pa, const ir_tensor *b, const int8_t *pb,
                               const ir_tensor *y, struct gpu_bcast *bc);

#endif
