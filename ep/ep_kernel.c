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
  ir_shape *shapes;   /* this run's input shapes */
  void **in_ptrs, **out_ptrs;
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
  }
  return NULL;
}

static hd_status *run_locked(ep_kernel *k, OrtKernelContext *ctx) {
  HD_TRY(read_inputs(k, ctx));
  plan_entry *e = NULL;
  HD_TRY(plan_for_shapes(k, &e));
  e->last_use = ++k->tick;
  for (int j = 0; j < k->g->noutputs; j++) {
    const ir_tensor *t = &e->plan->t[k->g->outputs[j]];
    OrtValue *v = NULL;
    EP_ORT_TRY(ep_api->KernelContext_GetOutput(ctx, (size_t)j, t->dims, (size_t)t->rank, &v), "allocating an output");
    EP_ORT_TRY(ep_api->GetTensorMutableData(v, &k->out_ptrs[j]), "reading output data");
  }
  void *stream = NULL;
  if (!be_host_memory(k->ep->dev->be))
    EP_ORT_TRY(ep_api->KernelContext_GetGPUComputeStream(ctx, &stream), "reading the compute stream");
  return be_plan_run(k->ep->dev->be, e->bp, k->in_ptrs, k->out_ptrs, stream);
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
  hd_status *st = (!k->name || !k->shapes || !k->in_ptrs || !k->out_ptrs)
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
  be_graph_free(k->ep->dev->be, k->bg);
  ir_graph_free(k->g);
  pthread_mutex_destroy(&k->mu);
  free(k->name);
  free(k->shapes);
  free(k->in_ptrs);
  free(k->out_ptrs);
  free(k);
}
