/* backend: the one interface between the EP core and a compute backend.
 *
 * A backend module (ref: built into the core; cuda, hip: loadable modules)
 * exposes a be_vtable. Objects, top down:
 *   be_module   the loaded backend: devices, raw memory, copies, streams
 *   be_context  one per EP instance on one device: library handles, options
 *   be_graph    a compiled partition, shape-free: weights on the device
 *   be_plan     a be_graph at one input-shape signature: everything a run
 *               needs, built once; a run only binds pointers and launches
 * Nothing here includes ORT headers. Only backends/backend.c calls through the
 * vtable; everyone else uses the be_* wrappers declared below. */
#ifndef BACKEND_H
#define BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/hd_log.h"
#include "common/hd_status.h"
#include "ir/ir.h"
#include "ops/ops.h"

#define BE_API_VERSION 6

/* The symbol a loadable backend module exports:
 *   hd_status *hipdnn_ep_backend_open(int api_version, const be_host *host,
 *                                     be_module **out);                     */
#define BE_OPEN_SYMBOL "hipdnn_ep_backend_open"

typedef struct be_module be_module;
typedef struct be_context be_context;
typedef struct be_graph be_graph;
typedef struct be_plan be_plan;

/* The layout of what core and module share: the IR structs, the parameter
 * union, the op registry (kinds and their order), the vtable and statuses.
 * Two builds with different layouts would misread each other's data
 * without a word, so a module compares the core's with its own at open and
 * refuses a mismatch, naming both. */
typedef struct be_layout {
  uint64_t hash;      /* FNV-1a over sizes[] and the registry's text */
  uint32_t op_count;
  uint32_t sizes[9];  /* ir_value, ir_node, ir_graph, ir_tensor, ir_step, ir_plan, op_params, be_vtable, status layout */
} be_layout;

/* What the core hands a module at open. */
typedef struct be_host {
  hd_log_sink log_sink;
  void *log_user;
  be_layout layout;   /* the core's (filled by be_module_open) */
} be_host;

typedef struct be_device_info {
  char name[128];
  uint32_t vendor_id;      /* PCI vendor id: 0x10DE NVIDIA, 0x1002 AMD */
  uint32_t pci_device_id;
  char pci_bus_id[32];     /* "0000:00:06.0", lower case; "" for the CPU */
  size_t total_memory;
  int ordinal;             /* the runtime's device number */
} be_device_info;

typedef enum be_copy_kind {
  BE_COPY_HOST_TO_DEVICE,
  BE_COPY_DEVICE_TO_HOST,
  BE_COPY_DEVICE_TO_DEVICE,
} be_copy_kind;

/* Engine choice, as ORT's CUDA EP names it (cudnn_conv_algo_search). */
typedef enum be_algo_search {
  BE_ALGO_HEURISTIC = 0,
  BE_ALGO_EXHAUSTIVE,
  BE_ALGO_DEFAULT,
} be_algo_search;

typedef struct be_options {
  int use_tf32;               /* fp32 convolutions and matmuls may use TF32 */
  be_algo_search algo_search;
  size_t workspace_limit;     /* bytes a plan may ask for; 0 = no limit */
  /* GPU graph capture: a plan's launches are captured into one graph on its
   * second run and replayed after (ep: enable_cuda_graph). 0 = off. */
  int graph_capture;
  /* With BE_ALGO_EXHAUSTIVE: the file that keeps timed engine choices
   * between sessions and processes (common/hd_diskcache.h); "" = none. */
  char engine_cache_file[4096];
} be_options;

/* Device memory a context uses for weights, arenas and workspaces: the EP's
 * caching pool, so gpu_mem_limit and statistics see everything. */
typedef struct be_alloc {
  void *ctx;
  hd_status *(*alloc)(void *ctx, size_t bytes, void **p);
  void (*free)(void *ctx, void *p);
} be_alloc;

/* Per-step times of one profiled run (ep/ turns them into ORT's profile
 * events). The caller owns it, one per run, so concurrent runs never share
 * one; the backend fills steps[0..n) in the order it ran them. */
typedef struct be_step_time {
  int step;          /* index into the plan's steps (ir_plan.steps) */
  int64_t start_ns;  /* CLOCK_MONOTONIC; a GPU step's start is placed on
                      * the host clock from the run's first event */
  int64_t dur_ns;
} be_step_time;

typedef struct be_run_profile {
  be_step_time *steps; /* room for cap entries */
  int cap;
  int n;               /* filled by the backend */
} be_run_profile;

/* What a compiled graph holds, in bytes, now. */
typedef struct be_graph_memory {
  size_t weights;  /* constants the backend reads: device copies on a GPU,
                    * the graph's host data on the reference backend */
  size_t run;      /* arenas, workspaces and staging of its run instances */
  size_t plans;    /* per-plan data (the device copy of values folded at plan time) */
} be_graph_memory;

typedef struct be_vtable {
  int api_version;
  const char *name;     /* "ref", "cuda", "hip" */
  int host_memory;      /* 1: tensors live in host memory (ref) */

  void (*close)(be_module *m);

  /* devices */
  int (*device_count)(be_module *m);
  hd_status *(*device_info)(be_module *m, int ordinal, be_device_info *out);

  /* raw memory; NULL for host-memory backends */
  hd_status *(*mem_alloc)(be_module *m, int ordinal, size_t bytes, void **p);
  void (*mem_free)(be_module *m, int ordinal, void *p);
  hd_status *(*host_alloc_pinned)(be_module *m, size_t bytes, void **p);
  void (*host_free_pinned)(be_module *m, void *p);
  hd_status *(*mem_info)(be_module *m, int ordinal, size_t *free_bytes, size_t *total_bytes);
  /* stream NULL: synchronous */
  hd_status *(*copy)(be_module *m, int ordinal, void *dst, const void *src, size_t bytes,
                     be_copy_kind kind, void *stream);
  /* rows of row_bytes, src_pitch apart, to rows dst_pitch apart in device
   * memory dst, each zeroed past row_bytes (be_copy_rows_padded) */
  hd_status *(*copy_rows_padded)(be_module *m, int ordinal, void *dst, size_t dst_pitch, const void *src,
                                 size_t src_pitch, size_t row_bytes, size_t rows, be_copy_kind kind, void *stream);

  /* streams and events (opaque runtime handles) */
  hd_status *(*stream_create)(be_module *m, int ordinal, void **stream);
  void (*stream_destroy)(be_module *m, int ordinal, void *stream);
  hd_status *(*stream_sync)(be_module *m, int ordinal, void *stream);
  hd_status *(*event_create)(be_module *m, int ordinal, void **event);
  void (*event_destroy)(be_module *m, int ordinal, void *event);
  hd_status *(*event_record)(be_module *m, void *event, void *stream);
  hd_status *(*stream_wait_event)(be_module *m, void *stream, void *event);
  hd_status *(*event_sync)(be_module *m, void *event);
  /* *done = 1 when the work before the event's last record has finished. */
  hd_status *(*event_query)(be_module *m, void *event, int *done);

  /* compile and run */
  hd_status *(*context_create)(be_module *m, int ordinal, const be_options *opts,
                               const be_alloc *alloc, be_context **out);
  void (*context_destroy)(be_context *c);
  /* May this backend run node `node` of g? Shapes may be dynamic. Must be
   * decisive: a node it accepts must compile at any shape the op's own check
   * allows, or it fails cleanly at compile time with a status. */
  hd_status *(*supports_node)(be_context *c, const ir_graph *g, int node);
  hd_status *(*graph_compile)(be_context *c, const ir_graph *g, be_graph **out);
  void (*graph_free)(be_graph *bg);
  hd_status *(*plan_compile)(be_graph *bg, const ir_plan *p, be_plan **out);
  void (*plan_free)(be_plan *bp);
  /* inputs/outputs: device pointers in graph-input/output order. */
  hd_status *(*plan_run)(be_plan *bp, void *const *inputs, void *const *outputs, void *stream);
  /* Optional. plan_run timing each step into prof (host clock, or GPU
   * events around each launch with no graph replay); returns once the
   * times are known (a GPU run waits for its stream). */
  hd_status *(*plan_run_profiled)(be_plan *bp, void *const *inputs, void *const *outputs, void *stream,
                                  be_run_profile *prof);
  /* Optional. The memory bg holds now (any thread, any time). */
  void (*graph_memory)(be_graph *bg, be_graph_memory *out);
} be_vtable;

static inline uint64_t be_fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

/* This build's layout (each side computes its own from the same source). */
static inline be_layout be_layout_of_build(void) {
  be_layout l;
  memset(&l, 0, sizeof l);
  const uint32_t sizes[9] = {sizeof(ir_value), sizeof(ir_node), sizeof(ir_graph), sizeof(ir_tensor),
                             sizeof(ir_step), sizeof(ir_plan), sizeof(op_params), sizeof(be_vtable),
                             HD_STATUS_LAYOUT};
  memcpy(l.sizes, sizes, sizeof sizes);
  l.op_count = OP_COUNT;
  uint64_t h = be_fnv1a(0xcbf29ce484222325ull, l.sizes, sizeof l.sizes);
  h = be_fnv1a(h, &l.op_count, sizeof l.op_count);
  l.hash = be_fnv1a(h, OP_REGISTRY_TEXT, sizeof OP_REGISTRY_TEXT - 1);
  return l;
}

/* "layout 0x...: N op kinds, ir_node X bytes, op_params Y bytes". */
static inline void be_layout_describe(const be_layout *l, char *buf, size_t n) {
  snprintf(buf, n, "layout %016llx: %u op kinds, ir_node %u bytes, op_params %u bytes, vtable %u bytes",
           (unsigned long long)l->hash, l->op_count, l->sizes[1], l->sizes[6], l->sizes[7]);
}

/* Every module object starts with this. */
struct be_module {
  const be_vtable *vt;
};

/* ---- the wrappers (backends/backend.c) ---- */

/* Opens "ref" (built in) or a loadable module "cuda" / "hip" found next to
 * the core library. NOT_FOUND when the module or its runtime is missing. */
/* host's layout is filled in here (be_layout_of_build). */
hd_status *be_module_open(const char *name, const be_host *host, be_module **out);
void be_module_close(be_module *m);
const char *be_name(const be_module *m);
int be_host_memory(const be_module *m);

int be_device_count(be_module *m);
hd_status *be_device_info_get(be_module *m, int ordinal, be_device_info *out);
hd_status *be_mem_alloc(be_module *m, int ordinal, size_t bytes, void **p);
void be_mem_free(be_module *m, int ordinal, void *p);
hd_status *be_host_alloc_pinned(be_module *m, size_t bytes, void **p);
void be_host_free_pinned(be_module *m, void *p);
hd_status *be_mem_info(be_module *m, int ordinal, size_t *free_bytes, size_t *total_bytes);
hd_status *be_copy(be_module *m, int ordinal, void *dst, const void *src, size_t bytes,
                   be_copy_kind kind, void *stream);
/* Copies `rows` rows of row_bytes, src_pitch bytes apart in src, to rows
 * dst_pitch (>= row_bytes) apart in dst, zeroing each dst row past
 * row_bytes: a tensor widened along its last axis. dst is device memory
 * (host memory on a host-memory backend); kind says where src is. */
hd_status *be_copy_rows_padded(be_module *m, int ordinal, void *dst, size_t dst_pitch, const void *src,
                               size_t src_pitch, size_t row_bytes, size_t rows, be_copy_kind kind, void *stream);
hd_status *be_stream_create(be_module *m, int ordinal, void **stream);
void be_stream_destroy(be_module *m, int ordinal, void *stream);
hd_status *be_stream_sync(be_module *m, int ordinal, void *stream);
hd_status *be_event_create(be_module *m, int ordinal, void **event);
void be_event_destroy(be_module *m, int ordinal, void *event);
hd_status *be_event_record(be_module *m, void *event, void *stream);
hd_status *be_stream_wait_event(be_module *m, void *stream, void *event);
hd_status *be_event_sync(be_module *m, void *event);
hd_status *be_event_query(be_module *m, void *event, int *done);

hd_status *be_context_create(be_module *m, int ordinal, const be_options *opts,
                             const be_alloc *alloc, be_context **out);
void be_context_destroy(be_module *m, be_context *c);
hd_status *be_supports_node(be_module *m, be_context *c, const ir_graph *g, int node);
hd_status *be_graph_compile(be_module *m, be_context *c, const ir_graph *g, be_graph **out);
void be_graph_free(be_module *m, be_graph *bg);
hd_status *be_plan_compile(be_module *m, be_graph *bg, const ir_plan *p, be_plan **out);
void be_plan_free(be_module *m, be_plan *bp);
hd_status *be_plan_run(be_module *m, be_plan *bp, void *const *inputs, void *const *outputs,
                       void *stream);

/* be_plan_run with per-step times in prof. A backend without the member
 * gives one entry, step -1: the host time of the whole call. */
hd_status *be_plan_run_profiled(be_module *m, be_plan *bp, void *const *inputs, void *const *outputs,
                                void *stream, be_run_profile *prof);
/* Zeros where the backend does not say. */
void be_graph_memory_get(be_module *m, be_graph *bg, be_graph_memory *out);
/* CLOCK_MONOTONIC in nanoseconds: the clock of be_step_time (inline: the
 * modules share it without linking the core). */
static inline int64_t be_clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The built-in reference backend (backends/ref). */
hd_status *ref_backend_open(const be_host *host, be_module **out);
/* One step of a plan on the host, in plain C (the reference kernels): how
 * plans compute the values known at plan time (plan_eval's run_step; ctx
 * unused). Any backend's plans use it: the values are host data. */
hd_status *ref_step_run(void *ctx, const ir_plan *p, const ir_step *s, const ir_bindings *b);

#endif
