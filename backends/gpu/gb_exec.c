/* gb_exec: running a plan, safely from any number of threads, in memory
 * bounded per partition.
 *
 * A compiled plan is read-only. The memory a run writes — arena, workspace,
 * graph-staging buffers — belongs to a *run instance* of the compiled graph
 * (the partition), shared by all its plans and grown to the largest one it
 * has run; what a plan keeps per instance — the captured GPU graph, the
 * pointers it was captured with, the cuDNN variant-pack caches — is that
 * plan's *slot* for the instance. A run holds its instance only while it
 * enqueues. The GPU work outlives that: each instance carries an event
 * recorded after its run's last launch, and the next run to take it is
 * ordered after that work:
 *   1. an idle instance last used on this run's stream (stream order);
 *   2. else an idle one whose event has completed;
 *   3. else a new one (at most GB_MAX_EXECS; memory permitting);
 *   4. else the least recently used idle one, with this run's stream made
 *      to wait on its event (GPU-side ordering, no host block).
 * So runs on different streams never share memory, and two runs on one
 * stream share an instance in stream order. A partition's device memory is
 * at most GB_MAX_EXECS instances of its largest plan, whatever the number
 * of cached shapes.
 *
 * Graph capture (be_options.graph_capture), per slot: a plan's first run
 * on an instance is eager (a warm-up: variant packs, lazy library state);
 * its second captures every launch into one GPU graph, keyed to the bound
 * input/output pointers, and launches it; later runs with the same
 * pointers only launch it. Each input or output whose pointer moves is
 * from then on bound to the instance's staging copy of it, copied in
 * (out) around the graph, and the slot captures once more: a decoder's
 * token ids and mask move every step, its KV cache holds still. The
 * copies pay against the launches a graph saves only up to a size (the
 * plan's move_at): when a larger buffer moves, that run is eager and a
 * graph is keyed to the new pointers if they hold still. Staging memory
 * is allocated only when a slot first stages. When the instance's buffers
 * move (it grew for a larger plan), its generation changes and the slot
 * captures again. Anything that makes capture fail turns it off for the
 * slot, which then runs eagerly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

#define GB_MAX_EXECS 8

struct gb_exec {
  int id;                  /* its slot in every plan of the graph */
  void *arena, *workspace, *zeroed, *stage, *moved;
  size_t arena_cap, workspace_cap, zeroed_cap, stage_cap, moved_cap; /* moved: staging for move_at */
  uint64_t gen;            /* bumped whenever a buffer moves */
  gpuEvent_t done;         /* recorded after the last run's launches */
  gpuStream_t stream;      /* where the last run went */
  int used;                /* done has been recorded */
  int busy;                /* a thread is enqueueing on it */
  uint64_t last_use;
};

struct gb_exec_set {
  pthread_mutex_t mu;
  pthread_cond_t idle;
  gb_exec *x[GB_MAX_EXECS];
  int n;
  uint64_t tick;
  size_t run_bytes;  /* buffers of every instance */
  size_t plan_bytes; /* plans' folded data (gb_graph_count_plan) */
};

/* What a plan keeps per instance; only the run holding the instance
 * touches it. */
struct gb_plan_slot {
  void *graph;              /* gpuGraphExec_t, or NULL */
  uint64_t gen;             /* the instance generation the graph was captured in */
  int runs;                 /* eager runs so far */
  int ran;                  /* the plan has run on this instance (its frees wait) */
  int capture_off;          /* capture failed or is impossible: run eagerly */
  int nstaged;              /* I/Os the graph reads/writes through the staging */
  uint8_t *staged;          /* per input, then output: bound to its staging copy */
  void **key_in, **key_out; /* pointers the graph (or the last run) was bound to */
  dnn_varpack *vp;          /* per step */
};

static size_t align_up(size_t n) { return (n + 255) / 256 * 256; }

static void sync_quiet(gb_exec *x) {
  if (x->used && gpuEventSynchronize(x->done) != gpuSuccess) (void)gpuGetLastError();
}

/* ---- instances ---- */

static void exec_free(be_graph *bg, gb_exec *x) {
  if (!x) return;
  be_context *c = bg->c;
  sync_quiet(x);
  if (x->done && gpuEventDestroy(x->done) != gpuSuccess) (void)gpuGetLastError();
  if (x->arena) c->alloc.free(c->alloc.ctx, x->arena);
  if (x->workspace) c->alloc.free(c->alloc.ctx, x->workspace);
  if (x->zeroed) c->alloc.free(c->alloc.ctx, x->zeroed);
  if (x->stage) c->alloc.free(c->alloc.ctx, x->stage);
  if (x->moved) c->alloc.free(c->alloc.ctx, x->moved);
  free(x);
}

static hd_status *exec_create(int id, gb_exec **out) {
  *out = NULL;
  gb_exec *x = calloc(1, sizeof *x);
  if (!x) return GB_OOM();
  x->id = id;
  hd_status *st = gb_status(gpuEventCreateWithFlags(&x->done, gpuEventDisableTiming),
                            "gpuEventCreateWithFlags", __FILE__, __LINE__);
  if (st) {
    free(x);
    return st;
  }
  *out = x;
  return NULL;
}

/* Moves one of the graph's memory figures (run_bytes or plan_bytes). */
static void count_bytes(be_graph *bg, size_t *figure, size_t bytes, int add) {
  pthread_mutex_lock(&bg->execs->mu);
  *figure = add ? *figure + bytes : *figure - bytes;
  pthread_mutex_unlock(&bg->execs->mu);
}

/* Makes *buf hold at least need bytes; the old buffer goes only once the
 * GPU is done with it (the caller holds x, so no run is enqueueing on it). */
static hd_status *ensure(be_graph *bg, gb_exec *x, void **buf, size_t *cap, size_t need, const char *what) {
  if (need <= *cap) return NULL;
  be_context *c = bg->c;
  sync_quiet(x);
  /* The figure never counts a byte the pool does not hold: it drops before
   * the free and grows after the allocation (a memory sample reads both). */
  count_bytes(bg, &bg->execs->run_bytes, *cap, 0);
  if (*buf) c->alloc.free(c->alloc.ctx, *buf);
  *buf = NULL;
  *cap = 0;
  x->gen++;
  hd_status *st = c->alloc.alloc(c->alloc.ctx, need, buf);
  if (st) *buf = NULL;
  else *cap = need;
  count_bytes(bg, &bg->execs->run_bytes, *cap, 1);
  return st ? hd_status_wrap(st, "%s: %s of %zu bytes: ", gb_backend_name, what, need) : NULL;
}

/* x's buffers, large enough for plan bp (staging when graphs or this run
 * need it). */
static hd_status *exec_fit(be_plan *bp, gb_exec *x, int need_stage) {
  be_graph *bg = bp->bg;
  HD_TRY(ensure(bg, x, &x->arena, &x->arena_cap, bp->p.arena_bytes, "arena"));
  HD_TRY(ensure(bg, x, &x->workspace, &x->workspace_cap, bp->workspace_bytes, "workspace"));
  HD_TRY(ensure(bg, x, &x->zeroed, &x->zeroed_cap, bp->zeroed_bytes, "zeroed memory"));
  if (need_stage) HD_TRY(ensure(bg, x, &x->stage, &x->stage_cap, bp->stage_bytes, "staging"));
  return NULL;
}

hd_status *gb_exec_set_create(be_graph *bg) {
  gb_exec_set *xs = calloc(1, sizeof *xs);
  if (!xs) return GB_OOM();
  pthread_mutex_init(&xs->mu, NULL);
  pthread_cond_init(&xs->idle, NULL);
  bg->execs = xs;
  return NULL;
}

void gb_exec_set_free(be_graph *bg) {
  gb_exec_set *xs = bg->execs;
  if (!xs) return;
  for (int i = 0; i < xs->n; ++i) exec_free(bg, xs->x[i]);
  pthread_cond_destroy(&xs->idle);
  pthread_mutex_destroy(&xs->mu);
  free(xs);
  bg->execs = NULL;
}

static int exec_finished(gb_exec *x) {
  if (!x->used) return 1;
  gpuError_t e = gpuEventQuery(x->done);
  if (e == gpuSuccess) return 1;
  (void)gpuGetLastError(); /* gpuErrorNotReady is not an error */
  return 0;
}

/* Takes an instance for a run on `stream` (the order in the header above). */
static hd_status *exec_acquire(be_graph *bg, gpuStream_t stream, gb_exec **out) {
  gb_exec_set *xs = bg->execs;
  hd_status *create_err = NULL;
  gb_exec *pick = NULL;
  int must_wait = 0;
  pthread_mutex_lock(&xs->mu);
  for (;;) {
    for (int i = 0; i < xs->n && !pick; ++i)
      if (!xs->x[i]->busy && (!xs->x[i]->used || xs->x[i]->stream == stream)) pick = xs->x[i];
    for (int i = 0; i < xs->n && !pick; ++i)
      if (!xs->x[i]->busy && exec_finished(xs->x[i])) pick = xs->x[i];
    if (!pick && xs->n < GB_MAX_EXECS && !create_err) {
      gb_exec *x = NULL;
      create_err = exec_create(xs->n, &x);
      if (!create_err) pick = xs->x[xs->n++] = x;
    }
    for (int i = 0; i < xs->n && !pick; ++i) {
      if (xs->x[i]->busy) continue;
      if (!pick || xs->x[i]->last_use < pick->last_use) pick = xs->x[i];
      must_wait = 1;
    }
    if (pick || xs->n == 0) break;
    pthread_cond_wait(&xs->idle, &xs->mu); /* every instance is being enqueued on */
  }
  if (pick) pick->busy = 1;
  pthread_mutex_unlock(&xs->mu);
  if (!pick) return create_err;
  hd_status_free(create_err);
  *out = pick;
  if (must_wait && pick->used && pick->stream != stream) {
    gpuError_t e = gpuStreamWaitEvent(stream, pick->done, 0);
    if (e != gpuSuccess) { /* order it on the host instead */
      (void)gpuGetLastError();
      sync_quiet(pick);
    }
  }
  return NULL;
}

/* Marks the end of this run's launches on the instance and gives it back. */
static void exec_release(be_graph *bg, gb_exec *x, gpuStream_t stream) {
  gb_exec_set *xs = bg->execs;
  if (gpuEventRecord(x->done, stream) == gpuSuccess) {
    x->used = 1;
    x->stream = stream;
  } else { /* cannot mark the end on the GPU: wait for it here */
    (void)gpuGetLastError();
    if (gpuStreamSynchronize(stream) != gpuSuccess) { /* nor on the stream: the whole device */
      (void)gpuGetLastError();
      if (gpuDeviceSynchronize() != gpuSuccess) (void)gpuGetLastError();
    }
    x->used = 0;
  }
  pthread_mutex_lock(&xs->mu);
  x->busy = 0;
  x->last_use = ++xs->tick;
  pthread_cond_broadcast(&xs->idle);
  pthread_mutex_unlock(&xs->mu);
}

/* ---- plan slots ---- */

static void slot_clear(be_plan *bp, gb_plan_slot *sl) {
  if (sl->graph && gpuGraphExecDestroy((gpuGraphExec_t)sl->graph) != gpuSuccess) (void)gpuGetLastError();
  sl->graph = NULL;
  sl->runs = sl->capture_off = sl->nstaged = 0;
  if (sl->staged) memset(sl->staged, 0, (size_t)(bp->bg->g->ninputs + bp->bg->g->noutputs));
  for (int i = 0; sl->vp && i < bp->nsteps; ++i) dnn_varpack_free(&bp->bg->c->m->vd, &sl->vp[i]);
}

/* Input i, or output i - ninputs, of plan bp. */
static const ir_tensor *io_tensor(const be_plan *bp, int i) {
  const ir_graph *g = bp->bg->g;
  return &bp->p.t[i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs]];
}

static size_t io_bytes(const be_plan *bp, int i) { return io_tensor(bp, i)->nbytes; }

/* Copying an input in or an output out around a graph, at ~1.5 TB/s,
 * against the ~4 us of host launch time a captured step saves: staging
 * pays while the bytes stay under this per step. */
#define GB_STAGE_BYTES_PER_STEP ((size_t)3 << 20)

/* Which inputs and outputs may be staged under a graph: the smallest
 * first, while their bytes together pay (GB_STAGE_BYTES_PER_STEP). */
static hd_status *plan_move_places(be_plan *bp) {
  const ir_graph *g = bp->bg->g;
  int nio = g->ninputs + g->noutputs;
  bp->move_at = malloc(sizeof(size_t) * (size_t)(nio + 1));
  if (!bp->move_at) return GB_OOM();
  for (int i = 0; i < nio; ++i) bp->move_at[i] = GB_NOT_STAGED;
  size_t budget = (size_t)(bp->nsteps + 1) * GB_STAGE_BYTES_PER_STEP, at = 0;
  for (;;) { /* nio is a partition's inputs and outputs: tens to hundreds */
    int pick = -1;
    for (int i = 0; i < nio; ++i)
      if (bp->move_at[i] == GB_NOT_STAGED && (pick < 0 || io_bytes(bp, i) < io_bytes(bp, pick))) pick = i;
    if (pick < 0 || at + align_up(io_bytes(bp, pick)) > budget) break;
    bp->move_at[pick] = at;
    at += align_up(io_bytes(bp, pick));
  }
  bp->move_bytes = at ? at : 256;
  return NULL;
}

hd_status *gb_plan_slots_create(be_plan *bp) {
  const ir_graph *g = bp->bg->g;
  bp->slots = calloc(GB_MAX_EXECS, sizeof *bp->slots);
  if (!bp->slots) return GB_OOM();
  size_t nio = (size_t)(g->ninputs + g->noutputs + 1);
  for (int i = 0; i < GB_MAX_EXECS; ++i) {
    gb_plan_slot *sl = &bp->slots[i];
    sl->key_in = calloc(nio, sizeof(void *));
    sl->staged = calloc(nio, 1);
    sl->vp = calloc((size_t)(bp->nsteps ? bp->nsteps : 1), sizeof *sl->vp);
    if (!sl->key_in || !sl->staged || !sl->vp) return GB_OOM(); /* gb_plan_slots_free cleans up */
    sl->key_out = sl->key_in + g->ninputs;
  }
  size_t total = 0;
  for (int i = 0; i < g->ninputs + g->noutputs; ++i) total += align_up(io_bytes(bp, i));
  bp->stage_bytes = total ? total : 256;
  return plan_move_places(bp);
}

void gb_plan_slots_free(be_plan *bp) {
  if (!bp->slots) return;
  gb_exec_set *xs = bp->bg->execs;
  /* Work of this plan (a graph, or eager kernels reading the plan's folded
   * values) may still run on an instance: wait for the instances it ran on
   * (no run of this plan is enqueueing: it is being freed; runs of other
   * plans may hold an instance for a moment). */
  if (xs) {
    pthread_mutex_lock(&xs->mu);
    for (int i = 0; i < xs->n; ++i) {
      if (!bp->slots[i].graph && !bp->slots[i].ran) continue;
      while (xs->x[i]->busy) pthread_cond_wait(&xs->idle, &xs->mu);
      sync_quiet(xs->x[i]);
    }
    pthread_mutex_unlock(&xs->mu);
  }
  for (int i = 0; i < GB_MAX_EXECS; ++i) {
    gb_plan_slot *sl = &bp->slots[i];
    slot_clear(bp, sl);
    free(sl->vp);
    free(sl->key_in);
    free(sl->staged);
  }
  free(bp->slots);
  bp->slots = NULL;
  free(bp->move_at);
  bp->move_at = NULL;
}

void *gb_zeroed(const gb_launch *l, const gb_step *s) {
  return s->zeroed_bytes && l->zeroed ? (char *)l->zeroed + s->zeroed_at : NULL;
}

dnn_varpack *gb_exec_varpack(const gb_launch *l, const be_plan *bp, const gb_step *s) {
  return &l->slot->vp[s - bp->steps];
}

/* ---- runs ---- */

hd_status *gb_run_steps(be_plan *bp, const gb_launch *l) {
  be_context *c = bp->bg->c;
  const dnn_vendor *vd = &c->m->vd;
  HD_TRY(dnn_status(vd, vd->set_stream(c->handle, l->stream), "set stream", __FILE__, __LINE__));
  /* One clear for every step's counters (a node of a captured graph), so
   * no kernel has to zero them for another. */
  if (bp->zeroed_bytes) GB_CHECK(gpuMemsetAsync(l->zeroed, 0, bp->zeroed_bytes, l->stream));
  if (l->step_events) {
    *l->first_event_ns = be_clock_ns();
    GB_CHECK(gpuEventRecord(l->step_events[0], l->stream));
  }
  for (int i = 0; i < bp->nsteps; ++i) {
    hd_status *st = bp->steps[i].absorbed ? NULL : bp->steps[i].f->run(bp, &bp->steps[i], l);
    if (st) return hd_status_wrap(st, "%s: node '%s' (%s): ", gb_backend_name,
                                  bp->steps[i].n->name, bp->steps[i].n->op_type);
    if (l->step_events) GB_CHECK(gpuEventRecord(l->step_events[i + 1], l->stream));
  }
  return NULL;
}

static gb_launch launch_of(be_plan *bp, gb_exec *x, void *const *inputs, void *const *outputs,
                           gpuStream_t stream) {
  gb_launch l = {.b = {.inputs = inputs, .outputs = outputs, .consts = bp->bg->consts, .arena = x->arena,
                       .folded = bp->folded},
                 .stream = stream,
                 .workspace = x->workspace,
                 .workspace_bytes = bp->workspace_bytes,
                 .zeroed = x->zeroed,
                 .slot = &bp->slots[x->id]};
  return l;
}

/* Eager: every step launched, the DNN handle held; step_events: NULL, or
 * timing events around the steps (gb_launch). */
static hd_status *run_eager(be_plan *bp, gb_exec *x, void *const *inputs, void *const *outputs,
                            gpuStream_t stream, gpuEvent_t *step_events, int64_t *first_event_ns) {
  be_context *c = bp->bg->c;
  gb_launch l = launch_of(bp, x, inputs, outputs, stream);
  l.step_events = step_events;
  l.first_event_ns = first_event_ns;
  pthread_mutex_lock(&c->mu);
  hd_status *st = gb_run_steps(bp, &l);
  pthread_mutex_unlock(&c->mu);
  l.slot->runs++;
  return st;
}

/* Captures the plan bound to inputs/outputs into the slot's graph
 * (instantiated, or updated in place when one exists). NULL on success; on
 * failure a status saying why (the caller runs eagerly from then on). */
static hd_status *capture(be_plan *bp, gb_exec *x, void *const *inputs, void *const *outputs,
                          gpuStream_t stream) {
  be_context *c = bp->bg->c;
  gb_launch l = launch_of(bp, x, inputs, outputs, stream);
  gb_plan_slot *sl = l.slot;
  pthread_mutex_lock(&c->mu);
  gpuError_t e = gpuStreamBeginCapture(stream, gpuStreamCaptureModeThreadLocal);
  hd_status *st = e == gpuSuccess ? gb_run_steps(bp, &l)
                                  : gb_status(e, "gpuStreamBeginCapture", __FILE__, __LINE__);
  gpuGraph_t graph = NULL;
  if (e == gpuSuccess) e = gpuStreamEndCapture(stream, &graph);
  pthread_mutex_unlock(&c->mu);
  if (st || e != gpuSuccess || !graph) {
    if (graph) (void)gpuGraphDestroy(graph);
    (void)gpuGetLastError();
    return st ? st : gb_status(e != gpuSuccess ? e : gpuErrorNotReady, "gpuStreamEndCapture", __FILE__, __LINE__);
  }
  /* memset nodes (the DNN library's workspace clears) as kernel nodes: a
   * replayed memset idles the GPU for microseconds around it */
  int memsets = 0, dropped = 0;
  e = (gpuError_t)gpu_graph_memsets_to_kernels(graph, bp->zeroed_bytes ? x->zeroed : NULL, bp->zeroed_bytes,
                                               &memsets, &dropped);
  if (e != gpuSuccess) {
    (void)gpuGraphDestroy(graph);
    (void)gpuGetLastError();
    return gb_status(e, "rewriting the captured graph's memset nodes", __FILE__, __LINE__);
  }
  if (!sl->graph && (memsets || dropped))
    HD_LOG(HD_LOG_VERBOSE, "%s: captured graph: %d memset nodes as kernel nodes, %d dropped (the run's clear)",
           gb_backend_name, memsets, dropped);
  if (sl->graph) {
    if (gpuGraphExecUpdate((gpuGraphExec_t)sl->graph, graph) == gpuSuccess) {
      (void)gpuGraphDestroy(graph);
      return NULL;
    }
    (void)gpuGetLastError();
    (void)gpuGraphExecDestroy((gpuGraphExec_t)sl->graph);
    sl->graph = NULL;
  }
  gpuGraphExec_t exec = NULL;
  e = gpuGraphInstantiate(&exec, graph);
  (void)gpuGraphDestroy(graph);
  if (e != gpuSuccess) return gb_status(e, "gpuGraphInstantiate", __FILE__, __LINE__);
  sl->graph = exec;
  return NULL;
}

/* The instance's staging of every input and output of plan bp (a run
 * with misaligned pointers): inputs, then outputs. */
static void stage_ptrs(const be_plan *bp, const gb_exec *x, void **in, void **out) {
  const ir_graph *g = bp->bg->g;
  char *at = x->stage;
  for (int i = 0; i < g->ninputs; ++i) {
    in[i] = at;
    at += align_up(bp->p.t[g->inputs[i]].nbytes);
  }
  for (int i = 0; i < g->noutputs; ++i) {
    out[i] = at;
    at += align_up(bp->p.t[g->outputs[i]].nbytes);
  }
}

static hd_status *copy_io(void *const *dst, void *const *src, const ir_plan *p, const int *vals,
                          int n, gpuStream_t stream) {
  for (int i = 0; i < n; ++i) {
    ir_storage sto = p->t[vals[i]].storage;
    if (sto != IR_ST_INPUT && sto != IR_ST_OUTPUT) continue; /* a folded output is copied by the caller */
    size_t bytes = p->t[vals[i]].nbytes;
    if (bytes && dst[i] != src[i])
      GB_CHECK(gpuMemcpyAsync(dst[i], src[i], bytes, gpuMemcpyDeviceToDevice, stream));
  }
  return NULL;
}

/* Copies the staged inputs (to_stage) or outputs (from the staging) of
 * slot sl around its graph. */
static hd_status *copy_staged(const be_plan *bp, const gb_exec *x, const gb_plan_slot *sl, void *const *inputs,
                              void *const *outputs, int to_stage, gpuStream_t stream) {
  const ir_graph *g = bp->bg->g;
  int from = to_stage ? 0 : g->ninputs, to = to_stage ? g->ninputs : g->ninputs + g->noutputs;
  for (int i = from; i < to; ++i) {
    const ir_tensor *t = io_tensor(bp, i);
    size_t bytes = t->nbytes;
    if (!sl->staged[i] || !bytes || (t->storage != IR_ST_INPUT && t->storage != IR_ST_OUTPUT)) continue;
    char *stage = (char *)x->moved + bp->move_at[i];
    void *user = i < g->ninputs ? inputs[i] : outputs[i - g->ninputs];
    GB_CHECK(gpuMemcpyAsync(to_stage ? stage : user, to_stage ? (void *)user : stage, bytes, gpuMemcpyDeviceToDevice,
                            stream));
  }
  return NULL;
}

/* Whether I/O i, bound to its caller's buffer, moved since the slot was keyed. */
static int io_moved(const gb_plan_slot *sl, int ni, void *const *inputs, void *const *outputs, int i) {
  return !sl->staged[i] && (i < ni ? inputs[i] != sl->key_in[i] : outputs[i - ni] != sl->key_out[i - ni]);
}

static void key_to(const be_plan *bp, gb_plan_slot *sl, void *const *inputs, void *const *outputs) {
  const ir_graph *g = bp->bg->g;
  memcpy(sl->key_in, inputs, sizeof(void *) * (size_t)g->ninputs);
  memcpy(sl->key_out, outputs, sizeof(void *) * (size_t)g->noutputs);
}

/* A run through the slot's captured graph; *done = 0 when the caller must
 * run eagerly instead. */
static hd_status *run_graph(be_plan *bp, gb_exec *x, void *const *inputs, void *const *outputs,
                            gpuStream_t stream, int *done) {
  const ir_graph *g = bp->bg->g;
  gb_plan_slot *sl = &bp->slots[x->id];
  *done = 0;
  int ni = g->ninputs, nio = g->ninputs + g->noutputs;
  if (sl->gen != x->gen) { /* the instance's buffers moved: start over */
    slot_clear(bp, sl);
    sl->gen = x->gen;
  }
  if (sl->runs < 1) { /* the warm-up run is eager; remember its pointers */
    key_to(bp, sl, inputs, outputs);
    return NULL;
  }
  gpuStreamCaptureStatus cs = gpuStreamCaptureStatusNone;
  if (!stream || gpuStreamIsCapturing(stream, &cs) != gpuSuccess || cs != gpuStreamCaptureStatusNone) {
    (void)gpuGetLastError();
    return NULL; /* the legacy stream, or the caller is capturing us: eager */
  }
  /* What moved since the graph (or the warm-up) was keyed, besides what
   * the graph already reads through the staging. */
  int moved = 0, too_large = 0;
  for (int i = 0; i < nio; ++i) {
    if (!io_moved(sl, ni, inputs, outputs, i)) continue;
    moved++;
    too_large |= bp->move_at[i] == GB_NOT_STAGED;
  }
  if (too_large) { /* no graph for this run; one keyed to these pointers if they hold still */
    if (sl->graph && gpuGraphExecDestroy((gpuGraphExec_t)sl->graph) != gpuSuccess) (void)gpuGetLastError();
    sl->graph = NULL;
    key_to(bp, sl, inputs, outputs);
    return NULL;
  }
  if (!sl->graph || moved) {
    for (int i = 0; i < nio; ++i)
      if (io_moved(sl, ni, inputs, outputs, i)) sl->staged[i] = 1, sl->nstaged++;
    if (sl->nstaged) {
      hd_status *st = ensure(bp->bg, x, &x->moved, &x->moved_cap, bp->move_bytes, "staging");
      if (st) { /* no memory to stage through: this slot runs eagerly */
        HD_LOG(HD_LOG_WARNING, "%s: graph capture off for this plan instance: %s", gb_backend_name, hd_status_msg(st));
        hd_status_free(st);
        slot_clear(bp, sl);
        sl->capture_off = 1;
        return NULL;
      }
      if (sl->gen != x->gen) { /* new staging: every buffer counts as moved; warm up again */
        slot_clear(bp, sl);
        sl->gen = x->gen;
        key_to(bp, sl, inputs, outputs);
        return NULL;
      }
    }
    /* bound: the staging copy where staged, the caller's buffer elsewhere */
    void **bound = calloc((size_t)nio + 1, sizeof(void *));
    if (!bound) return GB_OOM();
    for (int i = 0; i < nio; ++i)
      bound[i] = sl->staged[i] ? (char *)x->moved + bp->move_at[i] : i < ni ? inputs[i] : outputs[i - ni];
    hd_status *st = capture(bp, x, bound, bound + ni, stream);
    free(bound);
    if (st) {
      HD_LOG(HD_LOG_WARNING, "%s: graph capture off for this plan instance, runs stay eager: %s",
             gb_backend_name, hd_status_msg(st));
      hd_status_free(st);
      sl->capture_off = 1;
      return NULL;
    }
    key_to(bp, sl, inputs, outputs);
  }
  HD_TRY(copy_staged(bp, x, sl, inputs, outputs, 1, stream));
  GB_CHECK(gpuGraphLaunch((gpuGraphExec_t)sl->graph, stream));
  HD_TRY(copy_staged(bp, x, sl, inputs, outputs, 0, stream));
  *done = 1;
  return NULL;
}

/* A pointer the DNN library's plans may not take (they ask for 16 bytes). */
static int misaligned(void *const *ptrs, int n) {
  for (int i = 0; i < n; ++i)
    if ((uintptr_t)ptrs[i] % 16) return 1;
  return 0;
}

/* step_events: NULL, or timing events (a profiled run: always eager). */
static hd_status *plan_run(be_plan *bp, void *const *inputs, void *const *outputs, void *stream,
                           gpuEvent_t *step_events, int64_t *first_event_ns) {
  be_context *c = bp->bg->c;
  const ir_graph *g = bp->bg->g;
  gpuStream_t s = (gpuStream_t)stream;
  HD_TRY(gb_status(gpuSetDevice(c->ordinal), "gpuSetDevice", __FILE__, __LINE__));
  /* Misaligned tensors (an IOBinding into the middle of a buffer) run
   * through the instance's aligned staging buffers rather than fail. */
  int restage = misaligned(inputs, g->ninputs) || misaligned(outputs, g->noutputs);
  void **staged = restage ? calloc((size_t)(g->ninputs + g->noutputs + 1), sizeof(void *)) : NULL;
  if (restage && !staged) return GB_OOM();
  gb_exec *x = NULL;
  hd_status *st = exec_acquire(bp->bg, s, &x);
  if (st) {
    free(staged);
    return st;
  }
  int done = 0;
  st = exec_fit(bp, x, restage);
  void *const *in = inputs, *const *out = outputs;
  if (!st && restage) {
    stage_ptrs(bp, x, staged, staged + g->ninputs);
    in = staged;
    out = staged + g->ninputs;
    st = copy_io(staged, inputs, &bp->p, g->inputs, g->ninputs, s);
  }
  gb_plan_slot *sl = &bp->slots[x->id];
  sl->ran = 1;
  if (!st && c->opts.graph_capture && !sl->capture_off && !step_events) st = run_graph(bp, x, in, out, s, &done);
  if (!st && !done) st = run_eager(bp, x, in, out, s, step_events, first_event_ns);
  if (!st && restage) st = copy_io(outputs, out, &bp->p, g->outputs, g->noutputs, s);
  exec_release(bp->bg, x, s);
  free(staged);
  return st;
}

hd_status *gb_plan_run(be_plan *bp, void *const *inputs, void *const *outputs, void *stream) {
  return plan_run(bp, inputs, outputs, stream, NULL, NULL);
}

hd_status *gb_plan_run_profiled(be_plan *bp, void *const *inputs, void *const *outputs, void *stream,
                                be_run_profile *prof) {
  gpuStream_t s = (gpuStream_t)stream;
  int n = bp->nsteps;
  prof->n = 0;
  /* A stream the caller is capturing cannot be waited on or timed: run
   * it as usual, with no times. */
  gpuStreamCaptureStatus cs = gpuStreamCaptureStatusNone;
  if (s && (gpuStreamIsCapturing(s, &cs) != gpuSuccess || cs != gpuStreamCaptureStatusNone)) {
    (void)gpuGetLastError();
    return gb_plan_run(bp, inputs, outputs, stream);
  }
  HD_TRY(gb_status(gpuSetDevice(bp->bg->c->ordinal), "gpuSetDevice", __FILE__, __LINE__));
  gpuEvent_t *ev = calloc((size_t)n + 1, sizeof *ev);
  if (!ev) return GB_OOM();
  hd_status *st = NULL;
  int made = 0;
  for (; made <= n && !st; made++)
    st = gb_status(gpuEventCreateWithFlags(&ev[made], gpuEventDefault), "gpuEventCreateWithFlags", __FILE__, __LINE__);
  if (st) made--;
  /* Work queued before this run is not its own: on an idle stream, the
   * run's first event marks (within a launch latency) the host time it
   * was recorded at. */
  if (!st) st = gb_status(gpuStreamSynchronize(s), "gpuStreamSynchronize", __FILE__, __LINE__);
  int64_t t0 = be_clock_ns();
  if (!st) st = plan_run(bp, inputs, outputs, stream, ev, &t0);
  if (!st) st = gb_status(gpuEventSynchronize(ev[n]), "gpuEventSynchronize", __FILE__, __LINE__);
  for (int i = 0; i < n && !st && prof->n < prof->cap; i++) {
    float at = 0, dur = 0;
    st = gb_status(gpuEventElapsedTime(&at, ev[0], ev[i]), "gpuEventElapsedTime", __FILE__, __LINE__);
    if (!st) st = gb_status(gpuEventElapsedTime(&dur, ev[i], ev[i + 1]), "gpuEventElapsedTime", __FILE__, __LINE__);
    if (!st)
      prof->steps[prof->n++] =
          (be_step_time){.step = i, .start_ns = t0 + (int64_t)(at * 1e6), .dur_ns = (int64_t)(dur * 1e6)};
  }
  for (int i = 0; i < made; i++)
    if (gpuEventDestroy(ev[i]) != gpuSuccess) (void)gpuGetLastError();
  free(ev);
  return st;
}

void gb_graph_count_plan(be_graph *bg, size_t bytes, int add) { count_bytes(bg, &bg->execs->plan_bytes, bytes, add); }

void gb_graph_memory(be_graph *bg, be_graph_memory *out) {
  out->weights = bg->const_bytes;
  pthread_mutex_lock(&bg->execs->mu);
  out->run = bg->execs->run_bytes;
  out->plans = bg->execs->plan_bytes;
  pthread_mutex_unlock(&bg->execs->mu);
}
