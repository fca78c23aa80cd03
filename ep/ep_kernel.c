/* One compiled partition. Its graph is compiled once (weights to the
 * device); a plan is built the first time each input-shape signature is
 * seen and reused after, so a steady run only binds pointers and launches.
 *
 * Concurrency (ORT may call Compute from many threads at once): a run's
 * own state (shapes, pointers, staging) lives in a run_state of the calling
 * thread; the plan cache is guarded by a mutex and its entries are
 * reference-counted, so evicting a plan never frees one another thread is
 * running; what a run writes on the device belongs to the backend's
 * per-run instances, ordered on the GPU (backends/gpu/gb_exec.c).
 *
 * An input whose width may grow every run (GenAI's attention mask) is
 * padded with zeros to a bucketed width where the plan computes the same
 * results at it (plan/plan_pad.c): the run binds its own padded copy, and
 * one plan (one captured graph) serves the bucket. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/ep_ep.h"
#include "plan/plan.h"

/* Plans kept per partition; the least recently used goes first. */
#define EP_MAX_PLANS 32

typedef struct plan_entry {
  ir_shape *shapes; /* one per graph input */
  ir_plan *plan;
  be_plan *bp;
  uint64_t last_use;
  int refs;         /* the cache's reference + one per run using it */
} plan_entry;

typedef struct ep_kernel {
  OrtNodeComputeInfo base;
  ep_ep *ep;
  char *name;
  ir_graph *g;
  be_graph *bg;
  int device;         /* the backend's tensors live in device memory */
  pthread_mutex_t mu; /* guards plans, nplans, tick, warned_host */
  plan_entry *plans[EP_MAX_PLANS];
  int nplans;
  uint64_t tick;
  int warned_host;
  uint8_t *must_fold; /* per node: computed at plan time only (plan_eval.must_fold) */
  plan_pad *pad;      /* the input plans may take padded, or NULL */
} ep_kernel;

/* What one Compute call reads and binds; owned by the calling thread. */
typedef struct run_state {
  void *stream;     /* this run's compute stream (NULL on the host) */
  ir_shape *shapes; /* per input */
  ir_shape *padded_shapes; /* per input: shapes with the padded input's width planned (plan_for_run) */
  void **in_ptrs, **out_ptrs;
  void **out_host;  /* per output: the host tensor to copy back to, or NULL */
  void **stage;     /* per input, then per output: device staging, or NULL */
  void *padded;     /* the padded copy of input k->pad->input, or NULL */
  void *pad_src;    /* what it was copied from */
  int must_sync;    /* the host must wait for the stream before returning */
  ep_prof_run *prof; /* NULL unless this run is profiled (ep_profile.h) */
} run_state;

static ep_kernel *kernel_of(OrtNodeComputeInfo *p) { return (ep_kernel *)(void *)p; }

static void plan_entry_free(ep_kernel *k, plan_entry *e) {
  if (!e) return;
  be_plan_free(k->ep->dev->be, e->bp); /* waits for the plan's GPU work */
  plan_free(e->plan);
  free(e->shapes);
  free(e);
}

static void plan_release(ep_kernel *k, plan_entry *e) {
  pthread_mutex_lock(&k->mu);
  int last = --e->refs == 0;
  pthread_mutex_unlock(&k->mu);
  if (last) plan_entry_free(k, e);
}

static int same_shapes(const ir_shape *a, const ir_shape *b, int n) {
  for (int i = 0; i < n; i++) {
    if (a[i].rank != b[i].rank) return 0;
    if (memcmp(a[i].dims, b[i].dims, sizeof(int64_t) * (size_t)a[i].rank) != 0) return 0;
  }
  return 1;
}

/* How plan_acquire may go about a plan it does not have. */
typedef enum plan_miss {
  PLAN_MISS_NONE,   /* leave it: *out = NULL */
  PLAN_MISS_BUILD,  /* build it */
  PLAN_MISS_PADDED, /* build it if it holds at the run's own width (plan_pad_holds) */
} plan_miss;

static hd_status *plan_build(ep_kernel *k, const ir_shape *shapes, plan_miss miss, plan_entry **out) {
  *out = NULL;
  int nin = k->g->ninputs;
  plan_entry *e = calloc(1, sizeof *e);
  if (!e) return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  e->shapes = malloc(sizeof(ir_shape) * (size_t)(nin ? nin : 1));
  hd_status *st = e->shapes ? NULL : hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  if (!st) {
    memcpy(e->shapes, shapes, sizeof(ir_shape) * (size_t)nin);
    const plan_eval host = {NULL, ref_step_run, k->must_fold};
    st = plan_create(k->g, shapes, &host, &e->plan);
  }
  /* A padded width that does not hold (a prefill; a present longer than
   * the past) may not plan at all: the run's own width will say. */
  if (miss == PLAN_MISS_PADDED && (st || !plan_pad_holds(k->pad, e->plan))) {
    hd_status_free(st);
    plan_entry_free(k, e);
    return NULL;
  }
  if (!st) st = be_plan_compile(k->ep->dev->be, k->bg, e->plan, &e->bp);
  if (st && miss == PLAN_MISS_PADDED) { /* nor compile: the run's own width may */
    hd_status_free(st);
    st = NULL;
    plan_entry_free(k, e);
    return NULL;
  }
  if (st) {
    plan_entry_free(k, e);
    return st;
  }
  *out = e;
  return NULL;
}

/* The plan for these shapes, with a reference for the caller (give it back
 * with plan_release), or *out = NULL where `miss` leaves it. Built under
 * the lock: the first run at a new shape pays for it, and no two threads
 * build the same plan. */
static hd_status *plan_acquire(ep_kernel *k, const ir_shape *shapes, plan_miss miss, plan_entry **out,
                               int *built) {
  int nin = k->g->ninputs;
  plan_entry *evicted = NULL;
  hd_status *st = NULL;
  pthread_mutex_lock(&k->mu);
  plan_entry *e = NULL;
  for (int i = 0; i < k->nplans && !e; i++)
    if (same_shapes(k->plans[i]->shapes, shapes, nin)) e = k->plans[i];
  if (!e && miss != PLAN_MISS_NONE) {
    st = plan_build(k, shapes, miss, &e);
    *built = e != NULL;
    if (!st && e) {
      if (k->nplans == EP_MAX_PLANS) {
        int lru = 0;
        for (int i = 1; i < k->nplans; i++)
          if (k->plans[i]->last_use < k->plans[lru]->last_use) lru = i;
        evicted = k->plans[lru];
        k->plans[lru] = k->plans[--k->nplans];
        if (--evicted->refs > 0) evicted = NULL; /* its last run frees it */
      }
      e->refs = 1;
      k->plans[k->nplans++] = e;
      HD_LOG(HD_LOG_VERBOSE, "'%s': new plan (%d cached), arena %zu bytes", k->name, k->nplans,
             e->plan->arena_bytes);
    }
  }
  if (e && !st) {
    e->refs++;
    e->last_use = ++k->tick;
  }
  pthread_mutex_unlock(&k->mu);
  plan_entry_free(k, evicted);
  *out = st ? NULL : e;
  return st;
}

static int on_host(const OrtValue *v) {
  const OrtMemoryDevice *md = ep_ep_api->Value_GetMemoryDevice(v);
  return md && (ep_ep_api->MemoryDevice_GetDeviceType(md) == OrtMemoryInfoDeviceType_CPU);
}

static void warn_host(ep_kernel *k, const char *what, int i) {
  pthread_mutex_lock(&k->mu);
  int first = k->warned_host++ == 0;
  pthread_mutex_unlock(&k->mu);
  if (first)
    HD_LOG(HD_LOG_WARNING, "'%s': %s %d arrived in host memory: staging it through the device", k->name, what, i);
}

/* Device memory for one staged tensor, ordered on this run's stream. */
static hd_status *stage_alloc(ep_kernel *k, run_state *rs, int slot, size_t bytes) {
  return ep_allocator_alloc_on(k->ep->device_alloc, bytes ? bytes : 1, rs->stream, &rs->stage[slot]);
}

static hd_status *read_inputs(ep_kernel *k, OrtKernelContext *ctx, run_state *rs) {
  for (int i = 0; i < k->g->ninputs; i++) {
    const OrtValue *v = NULL;
    EP_ORT_TRY(ep_api->KernelContext_GetInput(ctx, (size_t)i, &v), "reading an input");
    if (!v) return hd_error(HD_ERR_INVALID_ARG, "input %d is missing", i);
    OrtTensorTypeAndShapeInfo *info = NULL;
    EP_ORT_TRY(ep_api->GetTensorTypeAndShape(v, &info), "reading an input shape");
    size_t rank = 0;
    OrtStatus *os = ep_api->GetDimensionsCount(info, &rank);
    if (!os && rank > IR_MAX_RANK) {
      ep_api->ReleaseTensorTypeAndShapeInfo(info);
      return hd_error(HD_ERR_NOT_SUPPORTED, "input %d has rank %zu", i, rank);
    }
    if (!os) os = ep_api->GetDimensions(info, rs->shapes[i].dims, rank);
    ep_api->ReleaseTensorTypeAndShapeInfo(info);
    EP_ORT_TRY(os, "reading an input shape");
    rs->shapes[i].rank = (int)rank;
    const void *data = NULL;
    EP_ORT_TRY(ep_api->GetTensorData(v, &data), "reading input data");
    rs->in_ptrs[i] = (void *)data; /* backends only read inputs */
    if (k->device && on_host(v)) {
      size_t bytes = 0;
      EP_ORT_TRY(ep_api->GetTensorSizeInBytes(v, &bytes), "reading an input size");
      warn_host(k, "input", i);
      HD_TRY(stage_alloc(k, rs, i, bytes));
      HD_TRY(be_copy(k->ep->dev->be, k->ep->dev->ordinal, rs->stage[i], data, bytes, BE_COPY_HOST_TO_DEVICE,
                     rs->stream));
      rs->in_ptrs[i] = rs->stage[i];
    }
  }
  return NULL;
}

static hd_status *bind_outputs(ep_kernel *k, OrtKernelContext *ctx, run_state *rs, const ir_plan *plan) {
  for (int j = 0; j < k->g->noutputs; j++) {
    const ir_tensor *t = &plan->t[k->g->outputs[j]];
    OrtValue *v = NULL;
    EP_ORT_TRY(ep_api->KernelContext_GetOutput(ctx, (size_t)j, t->dims, (size_t)t->rank, &v), "allocating an output");
    EP_ORT_TRY(ep_api->GetTensorMutableData(v, &rs->out_ptrs[j]), "reading output data");
    if (k->device && on_host(v)) {
      warn_host(k, "output", j);
      HD_TRY(stage_alloc(k, rs, k->g->ninputs + j, t->nbytes));
      rs->out_host[j] = rs->out_ptrs[j];
      rs->out_ptrs[j] = rs->stage[k->g->ninputs + j];
    }
  }
  return NULL;
}

/* ORT may free an input or output block as soon as this call returns, while
 * the GPU still works on it: tell its pool which stream uses it. */
static void mark_uses(ep_kernel *k, run_state *rs) {
  ep_device *dev = k->ep->dev;
  for (int i = 0; i < k->g->ninputs; i++)
    if (ep_device_mark_use(dev, rs->in_ptrs[i], rs->stream) == 2) rs->must_sync = 1;
  for (int j = 0; j < k->g->noutputs; j++)
    if (ep_device_mark_use(dev, rs->out_ptrs[j], rs->stream) == 2) rs->must_sync = 1;
  if (rs->pad_src && ep_device_mark_use(dev, rs->pad_src, rs->stream) == 2) rs->must_sync = 1;
}

/* ---- profiles: each step of a profiled run as one event ---- */

/* [{"float":[1,3,32,32]},...] of values vals[0..n), as ORT's profile
 * writes a node's input_type_shape; elements that do not fit are left out
 * (the text stays JSON). */
static void shapes_json(char *buf, size_t cap, const ir_plan *p, const int *vals, int n) {
  size_t len = 1;
  buf[0] = '[';
  for (int i = 0; i < n; i++) {
    if (vals[i] == IR_NONE) continue;
    const ir_tensor *t = &p->t[vals[i]];
    char one[256];
    int at = snprintf(one, sizeof one, "%s{\"%s\":[", len > 1 ? "," : "", ep_prof_type_name(t->dtype));
    for (int d = 0; d < t->rank && at < (int)sizeof one; d++)
      at += snprintf(one + at, sizeof one - (size_t)at, "%s%lld", d ? "," : "", (long long)t->dims[d]);
    if (at + 3 >= (int)sizeof one || len + (size_t)at + 3 >= cap) break;
    memcpy(buf + len, one, (size_t)at);
    len += (size_t)at;
    memcpy(buf + len, "]}", 2);
    len += 2;
  }
  buf[len++] = ']';
  buf[len] = '\0';
}

static void profile_step(ep_kernel *k, run_state *rs, const ir_plan *p, const be_step_time *t) {
  char nodes[1024], ins[2048], outs[1024], step[16], dur[32];
  snprintf(dur, sizeof dur, "%lld", (long long)t->dur_ns);
  snprintf(step, sizeof step, "%d", t->step);
  const char *be = be_name(k->ep->dev->be);
  if (t->step < 0 || t->step >= p->nsteps) { /* the backend timed the plan as a whole */
    ep_prof_arg args[] = {{"op_name", "partition", 0}, {"provider", k->ep->name, 0}, {"partition", k->name, 0},
                          {"backend", be, 0}, {"dur_ns", dur, 0}};
    ep_prof_run_add(rs->prof, k->name, t->start_ns, t->dur_ns, args, (int)(sizeof args / sizeof args[0]));
    return;
  }
  const ir_node *n = &p->g->nodes[p->steps[t->step].node];
  snprintf(nodes, sizeof nodes, "%s%s%s", n->name, n->fused && n->name[0] ? "," : "", n->fused ? n->fused : "");
  char unnamed[96];
  snprintf(unnamed, sizeof unnamed, "%s (step %d, unnamed)", n->op_type, t->step);
  shapes_json(ins, sizeof ins, p, n->in, n->nin);
  shapes_json(outs, sizeof outs, p, n->out, n->nout);
  ep_prof_arg args[] = {{"op_name", n->op_type, 0},  {"nodes", nodes, 0},          {"input_type_shape", ins, 1},
                        {"output_type_shape", outs, 1}, {"provider", k->ep->name, 0}, {"partition", k->name, 0},
                        {"backend", be, 0},          {"step", step, 0},            {"dur_ns", dur, 0}};
  ep_prof_run_add(rs->prof, n->name[0] ? n->name : unnamed, t->start_ns, t->dur_ns, args,
                  (int)(sizeof args / sizeof args[0]));
}

/* A new input-shape signature: the plan build (shapes, folding, the
 * backend's compile) is part of this run's time. */
static void profile_plan_build(ep_kernel *k, run_state *rs, const plan_entry *e, int64_t t0) {
  int64_t dur = be_clock_ns() - t0;
  char name[512], ins[2048], steps[16], arena[32], dns[32];
  snprintf(name, sizeof name, "%s plan build", k->name);
  shapes_json(ins, sizeof ins, e->plan, k->g->inputs, k->g->ninputs);
  snprintf(steps, sizeof steps, "%d", e->plan->nsteps);
  snprintf(arena, sizeof arena, "%zu", e->plan->arena_bytes);
  snprintf(dns, sizeof dns, "%lld", (long long)dur);
  ep_prof_arg args[] = {{"op_name", "plan build", 0}, {"input_type_shape", ins, 1}, {"provider", k->ep->name, 0},
                        {"partition", k->name, 0},     {"steps", steps, 0},         {"arena_bytes", arena, 0},
                        {"dur_ns", dns, 0}};
  ep_prof_run_add(rs->prof, name, t0, dur, args, (int)(sizeof args / sizeof args[0]));
}

static hd_status *run_profiled(ep_kernel *k, run_state *rs, plan_entry *e) {
  be_run_profile prof = {.cap = e->plan->nsteps + 1};
  prof.steps = calloc((size_t)prof.cap, sizeof *prof.steps);
  if (!prof.steps) return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  hd_status *st = be_plan_run_profiled(k->ep->dev->be, e->bp, rs->in_ptrs, rs->out_ptrs, rs->stream, &prof);
  for (int i = 0; i < prof.n && !st; i++) profile_step(k, rs, e->plan, &prof.steps[i]);
  free(prof.steps);
  return st;
}

/* Binds a copy of input k->pad->input padded with zeros to the width plan
 * e was built at; owned by the run, ordered on its stream. */
static hd_status *pad_input(ep_kernel *k, run_state *rs, const plan_entry *e) {
  int i = k->pad->input;
  const ir_shape *have = &rs->shapes[i], *want = &e->shapes[i];
  if (have->rank < 1 || have->rank != want->rank) return NULL;
  int64_t w = have->dims[have->rank - 1], to = want->dims[want->rank - 1];
  if (w == to) return NULL;
  size_t esz = hd_dtype_size(k->g->values[k->g->inputs[i]].dtype);
  size_t rows = (size_t)ir_numel(have->rank - 1, have->dims), bytes = rows * (size_t)to * esz;
  if (k->device) HD_TRY(ep_allocator_alloc_on(k->ep->device_alloc, bytes ? bytes : 1, rs->stream, &rs->padded));
  else if (!(rs->padded = malloc(bytes ? bytes : 1))) return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  rs->pad_src = rs->in_ptrs[i];
  HD_TRY(be_copy_rows_padded(k->ep->dev->be, k->ep->dev->ordinal, rs->padded, (size_t)to * esz, rs->pad_src,
                             (size_t)w * esz, (size_t)w * esz, rows, BE_COPY_DEVICE_TO_DEVICE, rs->stream));
  rs->in_ptrs[i] = rs->padded;
  return NULL;
}

/* The plan for this run: the one for its shapes where cached; else, where
 * an input may be padded, the one for the padded width if it holds there
 * (plan_pad.c); else one built for its shapes. */
static hd_status *plan_for_run(ep_kernel *k, run_state *rs, plan_entry **e, int *built) {
  int64_t width = k->pad ? plan_pad_width(k->pad, rs->shapes) : 0;
  if (width) {
    HD_TRY(plan_acquire(k, rs->shapes, PLAN_MISS_NONE, e, built));
    if (*e) return NULL;
    ir_shape *padded = rs->padded_shapes;
    memcpy(padded, rs->shapes, sizeof(ir_shape) * (size_t)k->g->ninputs);
    ir_shape *x = &padded[k->pad->input];
    x->dims[x->rank - 1] = width;
    hd_status *st = plan_acquire(k, padded, PLAN_MISS_PADDED, e, built);
    if (st || *e) return st;
  }
  return plan_acquire(k, rs->shapes, PLAN_MISS_BUILD, e, built);
}

static hd_status *run(ep_kernel *k, OrtKernelContext *ctx, run_state *rs) {
  be_module *be = k->ep->dev->be;
  if (k->device) EP_ORT_TRY(ep_api->KernelContext_GetGPUComputeStream(ctx, &rs->stream), "reading the compute stream");
  HD_TRY(read_inputs(k, ctx, rs));
  plan_entry *e = NULL;
  int built = 0;
  int64_t t_plan = rs->prof ? be_clock_ns() : 0;
  HD_TRY(plan_for_run(k, rs, &e, &built));
  if (rs->prof && built) profile_plan_build(k, rs, e, t_plan);
  hd_status *st = k->pad ? pad_input(k, rs, e) : NULL;
  if (!st) st = bind_outputs(k, ctx, rs, e->plan);
  if (!st && k->device) mark_uses(k, rs);
  if (!st) st = rs->prof ? run_profiled(k, rs, e) : be_plan_run(be, e->bp, rs->in_ptrs, rs->out_ptrs, rs->stream);
  /* Outputs known at plan time (a shape, a constant mask) are plan data. */
  for (int j = 0; j < k->g->noutputs && !st; j++) {
    const ir_tensor *t = &e->plan->t[k->g->outputs[j]];
    if (t->storage == IR_ST_FOLDED)
      st = be_copy(be, k->ep->dev->ordinal, rs->out_ptrs[j], t->host, t->nbytes,
                   k->device ? BE_COPY_HOST_TO_DEVICE : BE_COPY_DEVICE_TO_DEVICE, rs->stream);
  }
  for (int j = 0; j < k->g->noutputs && !st; j++) {
    if (!rs->out_host[j]) continue;
    st = be_copy(be, k->ep->dev->ordinal, rs->out_host[j], rs->out_ptrs[j], e->plan->t[k->g->outputs[j]].nbytes,
                 BE_COPY_DEVICE_TO_HOST, rs->stream);
    rs->must_sync = 1; /* a host consumer reads it as soon as we return */
  }
  plan_release(k, e);
  if (rs->must_sync) {
    hd_status *ss = be_stream_sync(be, k->ep->dev->ordinal, rs->stream);
    if (!st) st = ss;
    else hd_status_free(ss);
  }
  return st;
}

static OrtStatus *ORT_API_CALL k_create_state(OrtNodeComputeInfo *p, OrtNodeComputeContext *c, void **state) {
  (void)c;
  *state = kernel_of(p);
  return NULL;
}

static OrtStatus *ORT_API_CALL k_compute(OrtNodeComputeInfo *p, void *state, OrtKernelContext *ctx) {
  (void)state;
  ep_kernel *k = kernel_of(p);
  size_t nin = (size_t)k->g->ninputs, nout = (size_t)k->g->noutputs;
  run_state rs = {0};
  rs.prof = ep_prof_run_begin(k->ep->prof);
  rs.shapes = calloc(2 * (nin + 1), sizeof *rs.shapes);
  void **ptrs = calloc(3 * (nin + nout) + 4, sizeof(void *));
  hd_status *st = NULL;
  if (!rs.shapes || !ptrs) {
    st = hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  } else {
    rs.padded_shapes = rs.shapes + nin + 1;
    rs.in_ptrs = ptrs;
    rs.out_ptrs = rs.in_ptrs + nin + 1;
    rs.out_host = rs.out_ptrs + nout + 1;
    rs.stage = rs.out_host + nout + 1;
    st = run(k, ctx, &rs);
  }
  /* Staging blocks go back to the pool, which keeps them from other
   * streams until this run's work on them is done. */
  for (size_t i = 0; ptrs && i < nin + nout; i++)
    if (rs.stage[i]) ep_allocator_free(k->ep->device_alloc, rs.stage[i]);
  if (rs.padded && k->device) ep_allocator_free(k->ep->device_alloc, rs.padded);
  else free(rs.padded);
  free(ptrs);
  free(rs.shapes);
  ep_prof_run_end(rs.prof);
  return ep_status_to_ort(st ? hd_status_wrap(st, "running '%s': ", k->name) : NULL);
}

static void ORT_API_CALL k_release_state(OrtNodeComputeInfo *p, void *state) {
  (void)p;
  (void)state; /* the state is the kernel itself */
}

/* The nodes the planner must compute (no device runs them, or their values
 * are read on the host), and the constants kept on the host: those such
 * nodes read, and small ones (shapes, axes, scalars the planner may fold).
 * A device backend holds its own copy of the weights: the host copy of the
 * rest (the size of the model) goes. The reference backend reads them all. */
/* Constants up to this size keep their host copy: the planner may fold the
 * small computations on them. */
#define EP_KEEP_CONST_BYTES ((size_t)64 << 10)
/* Larger ones up to this size keep it where a node whose outputs are known
 * at plan time reads them (a Gather of position embeddings by positions
 * made from the input's shape: folded there, it never runs on the device). */
#define EP_KEEP_FOLDED_INPUT_BYTES ((size_t)16 << 20)

static hd_status *find_folds(ep_kernel *k) {
  ir_graph *g = k->g;
  k->must_fold = calloc((size_t)g->nnodes + 1, 1);
  if (!k->must_fold) return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  if (!k->device) return NULL;
  for (int i = 0; i < g->nnodes; i++) {
    if (g->nodes[i].dead) continue;
    hd_status *why = be_supports_node(k->ep->dev->be, k->ep->ctx, g, i);
    k->must_fold[i] = why != NULL;
    hd_status_free(why);
  }
  op_fold_closure(g, NULL, k->must_fold);
  uint8_t *keep = calloc((size_t)g->nvalues + 1, 1);
  uint8_t *runs = malloc((size_t)g->nnodes + 1);
  if (!keep || !runs) {
    free(keep);
    free(runs);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  memset(runs, 1, (size_t)g->nnodes + 1);
  op_mark_host_known(g, runs); /* as the plan will see them: compiling rewrote the graph since GetCapability */
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    const int known = !n->dead && runs[i] && op_node_host_known(g, n);
    for (int j = 0; j < n->nin && !n->dead; j++) {
      if (op_input_on_host(n, j, k->must_fold[i])) keep[n->in[j]] = 1;
      if (known && n->in[j] != IR_NONE && g->values[n->in[j]].nbytes <= EP_KEEP_FOLDED_INPUT_BYTES) keep[n->in[j]] = 1;
    }
  }
  free(runs);
  for (int v = 0; v < g->nvalues; v++)
    if (g->values[v].is_const && !keep[v] && g->values[v].nbytes > EP_KEEP_CONST_BYTES) ir_value_drop_data(g, v);
  free(keep);
  return NULL;
}

hd_status *ep_kernel_create(ep_ep *ep, const char *name, ep_graph *eg, OrtNodeComputeInfo **out) {
  ep_kernel *k;
  HD_ALLOC_OR_RETURN(k, 1);
  k->base.ort_version_supported = ORT_API_VERSION;
  k->base.CreateState = k_create_state;
  k->base.Compute = k_compute;
  k->base.ReleaseState = k_release_state;
  k->ep = ep;
  k->device = !be_host_memory(ep->dev->be);
  pthread_mutex_init(&k->mu, NULL);
  k->g = eg->g; /* the kernel owns the graph from here on */
  eg->g = NULL;
  k->name = strdup(name ? name : "");
  hd_status *st = !k->name ? hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory")
                           : be_graph_compile(ep->dev->be, ep->ctx, k->g, &k->bg);
  if (st) {
    ep_kernel_destroy(&k->base);
    return st;
  }
  st = find_folds(k);
  if (!st) st = plan_pad_find(k->g, &k->pad);
  if (!st && k->pad)
    HD_LOG(HD_LOG_VERBOSE, "'%s': input '%s' may be padded to a planned width", k->name,
           k->g->values[k->g->inputs[k->pad->input]].name);
  if (!st) st = ep_kernels_add(ep, &k->base);
  if (st) {
    ep_kernel_destroy(&k->base);
    return st;
  }
  *out = &k->base;
  return NULL;
}

void ep_kernel_memory(OrtNodeComputeInfo *p, be_graph_memory *out) {
  ep_kernel *k = kernel_of(p);
  be_graph_memory_get(k->ep->dev->be, k->bg, out);
}

void ep_kernel_destroy(OrtNodeComputeInfo *p) {
  if (!p) return;
  ep_kernel *k = kernel_of(p);
  ep_kernels_remove(k->ep, p);
  for (int i = 0; i < k->nplans; i++) plan_entry_free(k, k->plans[i]);
  be_graph_free(k->ep->dev->be, k->bg);
  ir_graph_free(k->g);
  pthread_mutex_destroy(&k->mu);
  free(k->must_fold);
  plan_pad_free(k->pad);
  free(k->name);
  free(k);
}
