/* One compiled partition. Its graph is compiled once (weights to the
 * device); a plan is built the first time each input-shape signature is
 * seen and reused after, so a steady run only binds pointers and launches. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ep/ep_ep.h"

/* Plans kept per partition; the least recently used goes first. */
#define EP_MAX_PLANS 32

typedef struct plan_entry {
  ir_shape *shapes; /* one per graph input */
  ir_plan *plan;
  be_plan *bp;
  uint64_t last_use;
} plan_entry;

typedef struct ep_kernel {
  OrtNodeComputeInfo base;
  ep_ep *ep;
  char *name;
  ir_graph *g;
  be_graph *bg;
  pthread_mutex_t mu; /* one run at a time: a plan owns its arena */
  plan_entry plans[EP_MAX_PLANS];
  int nplans;
  uint64_t tick;
  void *stream;       /* this run's compute stream */
  ir_shape *shapes;   /* this run's input shapes */
  void **in_ptrs, **out_ptrs;
  /* Device copies of tensors ORT handed over in host memory (GPU backends
   * only; ORT should place them on our device, this keeps a GPU kernel
   * from ever reading a host pointer if it does not). */
  void **in_stage, **out_stage;
  size_t *in_stage_bytes, *out_stage_bytes;
  void **out_host;    /* this run's host outputs to copy back, or NULL */
  int warned_host;
} ep_kernel;

static ep_kernel *kernel_of(OrtNodeComputeInfo *p) { return (ep_kernel *)(void *)p; }

static void plan_entry_clear(ep_kernel *k, plan_entry *e) {
  be_module *be = k->ep->dev->be;
  be_plan_free(be, e->bp);
  ir_plan_free(e->plan);
  free(e->shapes);
  memset(e, 0, sizeof *e);
}

static int same_shapes(const ir_shape *a, const ir_shape *b, int n) {
  for (int i = 0; i < n; i++) {
    if (a[i].rank != b[i].rank) return 0;
    if (memcmp(a[i].dims, b[i].dims, sizeof(int64_t) * (size_t)a[i].rank) != 0) return 0;
  }
  return 1;
}

static hd_status *plan_for_shapes(ep_kernel *k, plan_entry **out) {
  int nin = k->g->ninputs;
  for (int i = 0; i < k->nplans; i++) {
    if (same_shapes(k->plans[i].shapes, k->shapes, nin)) {
      *out = &k->plans[i];
      return NULL;
    }
  }
  plan_entry *e;
  if (k->nplans < EP_MAX_PLANS) {
    e = &k->plans[k->nplans++];
  } else {
    e = &k->plans[0];
    for (int i = 1; i < k->nplans; i++)
      if (k->plans[i].last_use < e->last_use) e = &k->plans[i];
    plan_entry_clear(k, e);
  }
  e->shapes = malloc(sizeof(ir_shape) * (size_t)(nin ? nin : 1));
  hd_status *st = e->shapes ? NULL : hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  if (!st) {
    memcpy(e->shapes, k->shapes, sizeof(ir_shape) * (size_t)nin);
    st = ir_plan_create(k->g, k->shapes, &e->plan);
  }
  if (!st) st = be_plan_compile(k->ep->dev->be, k->bg, e->plan, &e->bp);
  if (st) {
    plan_entry_clear(k, e);
    *e = k->plans[--k->nplans]; /* keep the table dense */
    memset(&k->plans[k->nplans], 0, sizeof(plan_entry));
    return st;
  }
  HD_LOG(HD_LOG_VERBOSE, "'%s': new plan (%d cached), arena %zu bytes", k->name, k->nplans, e->plan->arena_bytes);
  *out = e;
  return NULL;
}

static int on_host(const OrtValue *v) {
  const OrtMemoryDevice *md = ep_ep_api->Value_GetMemoryDevice(v);
  return md && (ep_ep_api->MemoryDevice_GetDeviceType(md) == OrtMemoryInfoDeviceType_CPU);
}

/* A device buffer of at least `bytes` in *buf (grown from the EP's pool). */
static hd_status *stage_buffer(ep_kernel *k, void **buf, size_t *have, size_t bytes) {
  if (*buf && *have >= bytes) return NULL;
  be_alloc a = ep_allocator_be(k->ep->device_alloc);
  if (*buf) a.free(a.ctx, *buf);
  *buf = NULL;
  *have = 0;
  HD_TRY(a.alloc(a.ctx, bytes ? bytes : 1, buf));
  *have = bytes;
  return NULL;
}

static void warn_host(ep_kernel *k, const char *what, int i) {
  if (k->warned_host++) return;
  HD_LOG(HD_LOG_WARNING, "'%s': %s %d arrived in host memory: staging it through the device", k->name, what, i);
}

static hd_status *read_inputs(ep_kernel *k, OrtKernelContext *ctx) {
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
    if (!os) os = ep_api->GetDimensions(info, k->shapes[i].dims, rank);
    ep_api->ReleaseTensorTypeAndShapeInfo(info);
    EP_ORT_TRY(os, "reading an input shape");
    k->shapes[i].rank = (int)rank;
    const void *data = NULL;
    EP_ORT_TRY(ep_api->GetTensorData(v, &data), "reading input data");
    k->in_ptrs[i] = (void *)data; /* backends only read inputs */
    if (k->in_stage && on_host(v)) {
      size_t bytes = 0;
      EP_ORT_TRY(ep_api->GetTensorSizeInBytes(v, &bytes), "reading an input size");
      warn_host(k, "input", i);
      HD_TRY(stage_buffer(k, &k->in_stage[i], &k->in_stage_bytes[i], bytes));
      HD_TRY(be_copy(k->ep->dev->be, k->ep->dev->ordinal, k->in_stage[i], data, bytes, BE_COPY_HOST_TO_DEVICE,
                     k->stream));
      k->in_ptrs[i] = k->in_stage[i];
    }
  }
  return NULL;
}

static hd_status *run_locked(ep_kernel *k, OrtKernelContext *ctx) {
  k->stream = NULL;
  if (!be_host_memory(k->ep->dev->be))
    EP_ORT_TRY(ep_api->KernelContext_GetGPUComputeStream(ctx, &k->stream), "reading the compute stream");
  HD_TRY(read_inputs(k, ctx));
  plan_entry *e = NULL;
  HD_TRY(plan_for_shapes(k, &e));
  e->last_use = ++k->tick;
  for (int j = 0; j < k->g->noutputs; j++) {
    const ir_tensor *t = &e->plan->t[k->g->outputs[j]];
    OrtValue *v = NULL;
    EP_ORT_TRY(ep_api->KernelContext_GetOutput(ctx, (size_t)j, t->dims, (size_t)t->rank, &v), "allocating an output");
    EP_ORT_TRY(ep_api->GetTensorMutableData(v, &k->out_ptrs[j]), "reading output data");
    k->out_host[j] = NULL;
    if (k->out_stage && on_host(v)) {
      warn_host(k, "output", j);
      HD_TRY(stage_buffer(k, &k->out_stage[j], &k->out_stage_bytes[j], t->nbytes));
      k->out_host[j] = k->out_ptrs[j];
      k->out_ptrs[j] = k->out_stage[j];
    }
  }
  be_module *be = k->ep->dev->be;
  HD_TRY(be_plan_run(be, e->bp, k->in_ptrs, k->out_ptrs, k->stream));
  int copied = 0;
  for (int j = 0; j < k->g->noutputs; j++) {
    if (!k->out_host[j]) continue;
    HD_TRY(be_copy(be, k->ep->dev->ordinal, k->out_host[j], k->out_stage[j], e->plan->t[k->g->outputs[j]].nbytes,
                   BE_COPY_DEVICE_TO_HOST, k->stream));
    copied = 1;
  }
  /* a host consumer reads these as soon as we return */
  return copied ? be_stream_sync(be, k->ep->dev->ordinal, k->stream) : NULL;
}

static OrtStatus *ORT_API_CALL k_create_state(OrtNodeComputeInfo *p, OrtNodeComputeContext *c, void **state) {
  (void)c;
  *state = kernel_of(p);
  return NULL;
}

static OrtStatus *ORT_API_CALL k_compute(OrtNodeComputeInfo *p, void *state, OrtKernelContext *ctx) {
  (void)state;
  ep_kernel *k = kernel_of(p);
  pthread_mutex_lock(&k->mu);
  hd_status *st = run_locked(k, ctx);
  pthread_mutex_unlock(&k->mu);
  return ep_status_to_ort(st ? hd_status_wrap(st, "running '%s': ", k->name) : NULL);
}

static void ORT_API_CALL k_release_state(OrtNodeComputeInfo *p, void *state) {
  (void)p;
  (void)state; /* the state is the kernel itself */
}

hd_status *ep_kernel_create(ep_ep *ep, const char *name, ep_graph *eg, OrtNodeComputeInfo **out) {
  ep_kernel *k;
  HD_ALLOC_OR_RETURN(k, 1);
  k->base.ort_version_supported = ORT_API_VERSION;
  k->base.CreateState = k_create_state;
  k->base.Compute = k_compute;
  k->base.ReleaseState = k_release_state;
  k->ep = ep;
  pthread_mutex_init(&k->mu, NULL);
  k->g = eg->g; /* the kernel owns the graph from here on */
  eg->g = NULL;
  size_t nin = (size_t)k->g->ninputs + 1, nout = (size_t)k->g->noutputs + 1;
  k->name = strdup(name ? name : "");
  k->shapes = calloc(nin, sizeof *k->shapes);
  k->in_ptrs = calloc(nin, sizeof(void *));
  k->out_ptrs = calloc(nout, sizeof(void *));
  int device = !be_host_memory(ep->dev->be);
  if (device) {
    k->in_stage = calloc(nin, sizeof(void *));
    k->in_stage_bytes = calloc(nin, sizeof(size_t));
    k->out_stage = calloc(nout, sizeof(void *));
    k->out_stage_bytes = calloc(nout, sizeof(size_t));
  }
  k->out_host = calloc(nout, sizeof(void *));
  int oom = !k->name || !k->shapes || !k->in_ptrs || !k->out_ptrs || !k->out_host ||
            (device && (!k->in_stage || !k->in_stage_bytes || !k->out_stage || !k->out_stage_bytes));
  hd_status *st = oom
                      ? hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory")
                      : be_graph_compile(ep->dev->be, ep->ctx, k->g, &k->bg);
  if (st) {
    ep_kernel_destroy(&k->base);
    return st;
  }
  *out = &k->base;
  return NULL;
}

void ep_kernel_destroy(OrtNodeComputeInfo *p) {
  if (!p) return;
  ep_kernel *k = kernel_of(p);
  for (int i = 0; i < k->nplans; i++) plan_entry_clear(k, &k->plans[i]);
  if (k->in_stage || k->out_stage) {
    be_alloc a = ep_allocator_be(k->ep->device_alloc);
    for (int i = 0; k->in_stage && i < k->g->ninputs; i++) a.free(a.ctx, k->in_stage[i]);
    for (int i = 0; k->out_stage && i < k->g->noutputs; i++) a.free(a.ctx, k->out_stage[i]);
  }
  free(k->in_stage);
  free(k->in_stage_bytes);
  free(k->out_stage);
  free(k->out_stage_bytes);
  free(k->out_host);
  be_graph_free(k->ep->dev->be, k->bg);
  ir_graph_free(k->g);
  pthread_mutex_destroy(&k->mu);
  free(k->name);
  free(k->shapes);
  free(k->in_ptrs);
  free(k->out_ptrs);
  free(k);
}
