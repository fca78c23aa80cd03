/* gb_exec: running a plan, safely from any number of threads.
 *
 * A compiled plan is read-only. Everything a run writes — the arena, the
 * workspace, the staging buffers, the captured GPU graph, the variant-pack
 * caches — belongs to an exec instance, and a run holds its instance only
 * while it enqueues. The GPU work outlives that: each instance carries an
 * event recorded after its run's last launch, and the next run to take it
 * is ordered after that work:
 *   1. an idle instance last used on this run's stream (stream order);
 *   2. else an idle one whose event has completed;
 *   3. else a new one (at most GB_MAX_EXECS; memory permitting);
 *   4. else the least recently used idle one, with this run's stream made
 *      to wait on its event (GPU-side ordering, no host block).
 * So runs on different streams never share memory, and two runs on one
 * stream share an instance in stream order.
 *
 * Graph capture (be_options.graph_capture), per instance: its first run is
 * eager (a warm-up: variant packs, lazy library state); its second captures
 * every launch into one GPU graph, keyed to the bound input/output pointers,
 * and launches it; later runs with the same pointers only launch it. When
 * the pointers change, the instance re-captures once against its own
 * staging buffers and from then on copies inputs in and outputs out around
 * the graph. Anything that makes capture fail turns it off for the
 * instance, which then runs eagerly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"

#define GB_MAX_EXECS 8

struct gb_exec {
  void *arena;
  void *workspace;
  void *stage;              /* staging buffers for inputs, then outputs */
  void **key_in, **key_out; /* pointers the graph (or the last run) was bound to */
  void **stage_in, **stage_out;
  dnn_varpack *vp;          /* per step */
  int runs;                 /* eager runs so far */
  int capture_off;          /* capture failed or is impossible: run eagerly */
  int staged;               /* the graph reads/writes the staging buffers */
  void *graph;              /* gpuGraphExec_t, or NULL */
  gpuEvent_t done;          /* recorded after the last run's launches */
  gpuStream_t stream;       /* where the last run went */
  int used;                 /* done has been recorded */
  int busy;                 /* a thread is enqueueing on it */
  uint64_t last_use;
};

struct gb_exec_set {
  pthread_mutex_t mu;
  pthread_cond_t idle;
  gb_exec *x[GB_MAX_EXECS];
  int n;
  uint64_t tick;
};

static size_t align_up(size_t n) { return (n + 255) / 256 * 256; }

static void exec_free(be_plan *bp, gb_exec *x) {
  if (!x) return;
  be_context *c = bp->bg->c;
  if (x->used && gpuEventSynchronize(x->done) != gpuSuccess) (void)gpuGetLastError();
  if (x->done && gpuEventDestroy(x->done) != gpuSuccess) (void)gpuGetLastError();
  if (x->graph && gpuGraphExecDestroy((gpuGraphExec_t)x->graph) != gpuSuccess)
    (void)gpuGetLastError();
  for (int i = 0; x->vp && i < bp->nsteps; ++i) dnn_varpack_free(&c->m->vd, &x->vp[i]);
  if (x->arena) c->alloc.free(c->alloc.ctx, x->arena);
  if (x->workspace) c->alloc.free(c->alloc.ctx, x->workspace);
  if (x->stage) c->alloc.free(c->alloc.ctx, x->stage);
  free(x->vp);
  free(x->key_in);
  free(x);
}

static hd_status *dev_alloc(be_context *c, size_t bytes, const char *what, void **p) {
  hd_status *st = c->alloc.alloc(c->alloc.ctx, bytes, p);
  if (st) *p = NULL;
  return st ? hd_status_wrap(st, "%s: %s of %zu bytes: ", gb_backend_name, what, bytes) : NULL;
}

static hd_status *exec_create(be_plan *bp, gb_exec **out) {
  *out = NULL;
  be_context *c = bp->bg->c;
  const ir_graph *g = bp->bg->g;
  gb_exec *x = calloc(1, sizeof *x);
  if (!x) return GB_OOM();
  size_t nio = (size_t)(g->ninputs + g->noutputs + 1);
  x->key_in = calloc(2 * nio, sizeof(void *));
  x->vp = calloc((size_t)(bp->nsteps ? bp->nsteps : 1), sizeof *x->vp);
  if (!x->key_in || !x->vp) {
    exec_free(bp, x);
    return GB_OOM();
  }
  x->key_out = x->key_in + g->ninputs;
  x->stage_in = x->key_in + nio;
  x->stage_out = x->stage_in + g->ninputs;
  hd_status *st = gb_status(gpuEventCreateWithFlags(&x->done, gpuEventDisableTiming),
                            "gpuEventCreateWithFlags", __FILE__, __LINE__);
  if (!st && bp->p.arena_bytes) st = dev_alloc(c, bp->p.arena_bytes, "arena", &x->arena);
  if (!st && bp->workspace_bytes) st = dev_alloc(c, bp->workspace_bytes, "workspace", &x->workspace);
  if (!st && c->opts.graph_capture) {
    size_t total = 0;
    for (int i = 0; i < g->ninputs; ++i) total += align_up(bp->p.t[g->inputs[i]].nbytes);
    for (int i = 0; i < g->noutputs; ++i) total += align_up(bp->p.t[g->outputs[i]].nbytes);
    st = dev_alloc(c, total ? total : 256, "graph staging buffers", &x->stage);
    char *at = x->stage;
    for (int i = 0; !st && i < g->ninputs; ++i) {
      x->stage_in[i] = at;
      at += align_up(bp->p.t[g->inputs[i]].nbytes);
    }
    for (int i = 0; !st && i < g->noutputs; ++i) {
      x->stage_out[i] = at;
      at += align_up(bp->p.t[g->outputs[i]].nbytes);
    }
  }
  if (st) {
    exec_free(bp, x);
    return st;
  }
  *out = x;
  return NULL;
}

hd_status *gb_exec_set_create(be_plan *bp) {
  gb_exec_set *xs = calloc(1, sizeof *xs);
  if (!xs) return GB_OOM();
  pthread_mutex_init(&xs->mu, NULL);
  pthread_cond_init(&xs->idle, NULL);
  bp->execs = xs;
  return NULL;
}

void gb_exec_set_free(be_plan *bp) {
  gb_exec_set *xs = bp->execs;
  if (!xs) return;
  for (int i = 0; i < xs->n; ++i) exec_free(bp, xs->x[i]);
  pthread_cond_destroy(&xs->idle);
  pthread_mutex_destroy(&xs->mu);
  free(xs);
  bp->execs = NULL;
}

static int exec_finished(gb_exec *x) {
  if (!x->used) return 1;
  gpuError_t e = gpuEventQuery(x->done);
  if (e == gpuSuccess) return 1;
  (void)gpuGetLastError(); /* gpuErrorNotReady is not an error */
  return 0;
}

/* Takes an instance for a run on `stream` (the order in the header above). */
static hd_status *exec_acquire(be_plan *bp, gpuStream_t stream, gb_exec **out) {
  gb_exec_set *xs = bp->execs;
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
      create_err = exec_create(bp, &x);
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
  if (create_err) {
    HD_LOG(HD_LOG_VERBOSE, "%s: no new run instance (%s); sharing one", gb_backend_name,
           hd_status_msg(create_err));
    hd_status_free(create_err);
  }
  *out = pick;
  if (must_wait && pick->used && pick->stream != stream) {
    gpuError_t e = gpuStreamWaitEvent(stream, pick->done, 0);
    if (e != gpuSuccess) { /* order it on the host instead */
      (void)gpuGetLastError();
      if (gpuEventSynchronize(pick->done) != gpuSuccess) (void)gpuGetLastError();
    }
  }
  return NULL;
}

/* Marks the end of this run's launches on the instance and gives it back. */
static void exec_release(be_plan *bp, gb_exec *x, gpuStream_t stream) {
  gb_exec_set *xs = bp->execs;
  if (gpuEventRecord(x->done, stream) == gpuSuccess) {
    x->used = 1;
    x->stream = stream;
  } else { /* cannot mark the end on the GPU: wait for it here */
    (void)gpuGetLastError();
    if (gpuStreamSynchronize(stream) != gpuSuccess) (void)gpuGetLastError();
    x->used = 0;
  }
  pthread_mutex_lock(&xs->mu);
  x->busy = 0;
  x->last_use = ++xs->tick;
  pthread_cond_signal(&xs->idle);
  pthread_mutex_unlock(&xs->mu);
}

dnn_varpack *gb_exec_varpack(const gb_launch *l, const be_plan *bp, const gb_step *s) {
  return &l->x->vp[s - bp->steps];
}

hd_status *gb_run_steps(be_plan *bp, const gb_launch *l) {
  be_context *c = bp->bg->c;
  const dnn_vendor *vd = &c->m->vd;
  HD_TRY(dnn_status(vd, vd->set_stream(c->handle, l->stream), "set stream", __FILE__, __LINE__));
  for (int i = 0; i < bp->nsteps; ++i) {
    hd_status *st = bp->steps[i].f->run(bp, &bp->steps[i], l);
    if (st) return hd_status_wrap(st, "%s: node '%s' (%s): ", gb_backend_name,
                                  bp->steps[i].n->name, bp->steps[i].n->op_type);
  }
  return NULL;
}

static gb_launch launch_of(be_plan *bp, gb_exec *x, void *const *inputs, void *const *outputs,
                           gpuStream_t stream) {
  gb_launch l = {.b = {.inputs = inputs, .outputs = outputs, .consts = bp->bg->consts, .arena = x->arena},
                 .stream = stream,
                 .workspace = x->workspace,
                 .workspace_bytes = bp->workspace_bytes,
                 .x = x};
  return l;
}

/* Eager: every step launched, the DNN handle held. */
static hd_status *run_eager(be_plan *bp, gb_exec *x, void *const *inputs, void *const *outputs,
                            gpuStream_t stream) {
  be_context *c = bp->bg->c;
  gb_launch l = launch_of(bp, x, inputs, outputs, stream);
  pthread_mutex_lock(&c->mu);
  hd_status *st = gb_run_steps(bp, &l);
  pthread_mutex_unlock(&c->mu);
  x->runs++;
  return st;
}

/* Captures the plan bound to inputs/outputs into x->graph (instantiated, or
 * updated in place when one exists). NULL on success; on failure a status
 * saying why (the caller turns capture off and runs eagerly). */
static hd_status *capture(be_plan *bp, gb_exec *x, void *const *inputs, void *const *outputs,
                          gpuStream_t stream) {
  be_context *c = bp->bg->c;
  gb_launch l = launch_of(bp, x, inputs, outputs, stream);
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
  if (x->graph) {
    if (gpuGraphExecUpdate((gpuGraphExec_t)x->graph, graph) == gpuSuccess) {
      (void)gpuGraphDestroy(graph);
      return NULL;
    }
    (void)gpuGetLastError();
    (void)gpuGraphExecDestroy((gpuGraphExec_t)x->graph);
    x->graph = NULL;
  }
  gpuGraphExec_t exec = NULL;
  e = gpuGraphInstantiate(&exec, graph);
  (void)gpuGraphDestroy(graph);
  if (e != gpuSuccess) return gb_status(e, "gpuGraphInstantiate", __FILE__, __LINE__);
  x->graph = exec;
  return NULL;
}

static int same_ptrs(void *const *a, void *const *b, int n) {
  for (int i = 0; i < n; ++i)
    if (a[i] != b[i]) return 0;
  return 1;
}

static hd_status *copy_io(void *const *dst, void *const *src, const ir_plan *p, const int *vals,
                          int n, gpuStream_t stream) {
  for (int i = 0; i < n; ++i) {
    size_t bytes = p->t[vals[i]].nbytes;
    if (bytes && dst[i] != src[i])
      GB_CHECK(gpuMemcpyAsync(dst[i], src[i], bytes, gpuMemcpyDeviceToDevice, stream));
  }
  return NULL;
}

/* A run through the instance's captured graph; *done = 0 when the caller
 * must run eagerly instead. */
static hd_status *run_graph(be_plan *bp, gb_exec *x, void *const *inputs, void *const *outputs,
                            gpuStream_t stream, int *done) {
  const ir_graph *g = bp->bg->g;
  *done = 0;
  int ni = g->ninputs, no = g->noutputs;
  int same = same_ptrs(x->key_in, inputs, ni) && same_ptrs(x->key_out, outputs, no);
  if (x->runs < 1) { /* the warm-up run is eager; remember its pointers */
    memcpy(x->key_in, inputs, sizeof(void *) * (size_t)ni);
    memcpy(x->key_out, outputs, sizeof(void *) * (size_t)no);
    return NULL;
  }
  gpuStreamCaptureStatus cs = gpuStreamCaptureStatusNone;
  if (!stream || gpuStreamIsCapturing(stream, &cs) != gpuSuccess ||
      cs != gpuStreamCaptureStatusNone) {
    (void)gpuGetLastError();
    return NULL; /* the legacy stream, or the caller is capturing us: eager */
  }
  if (!x->graph || (!x->staged && !same)) {
    /* First capture: keyed to the caller's pointers when they held still
     * since the warm-up; otherwise (and after any change) to the staging
     * buffers, for good. */
    int stage = x->graph != NULL || !same;
    hd_status *st = capture(bp, x, stage ? x->stage_in : inputs, stage ? x->stage_out : outputs, stream);
    if (st) {
      HD_LOG(HD_LOG_WARNING, "%s: graph capture off for this plan instance, runs stay eager: %s",
             gb_backend_name, hd_status_msg(st));
      hd_status_free(st);
      x->capture_off = 1;
      return NULL;
    }
    x->staged = stage;
    if (!stage) {
      memcpy(x->key_in, inputs, sizeof(void *) * (size_t)ni);
      memcpy(x->key_out, outputs, sizeof(void *) * (size_t)no);
    }
  }
  if (x->staged) HD_TRY(copy_io(x->stage_in, inputs, &bp->p, g->inputs, ni, stream));
  GB_CHECK(gpuGraphLaunch((gpuGraphExec_t)x->graph, stream));
  if (x->staged) HD_TRY(copy_io(outputs, x->stage_out, &bp->p, g->outputs, no, stream));
  *done = 1;
  return NULL;
}

hd_status *gb_plan_run(be_plan *bp, void *const *inputs, void *const *outputs, void *stream) {
  be_context *c = bp->bg->c;
  gpuStream_t s = (gpuStream_t)stream;
  HD_TRY(gb_status(gpuSetDevice(c->ordinal), "gpuSetDevice", __FILE__, __LINE__));
  gb_exec *x = NULL;
  HD_TRY(exec_acquire(bp, s, &x));
  int done = 0;
  hd_status *st = NULL;
  if (c->opts.graph_capture && x->stage && !x->capture_off) st = run_graph(bp, x, inputs, outputs, s, &done);
  if (!st && !done) st = run_eager(bp, x, inputs, outputs, s);
  exec_release(bp, x, s);
  return st;
}
