#include "ep/ep_ep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "plan/plan.h"

static ep_ep *ep_of(const OrtEp *p) { return (ep_ep *)(void *)p; }

static const char *ORT_API_CALL e_get_name(const OrtEp *p) { return ep_of(p)->name; }

/* Why op_mark_host_known left node n out: a value input it reads when the
 * plan is built is not known then. */
static hd_status *host_unknown_reason(const ir_graph *g, const ir_node *n) {
  for (int k = 0; k < n->nin; k++) {
    if (!op_input_on_host(n, k, 0) || g->values[n->in[k]].host_known) continue;
    const ir_value *v = &g->values[n->in[k]];
    if (v->producer == IR_NONE)
      return hd_error(HD_ERR_NOT_SUPPORTED,
                      "input %d '%s' must be known when the plan is built, but it is a graph input (its values "
                      "come with each run)",
                      k, v->name);
    const ir_node *p = &g->nodes[v->producer];
    return hd_error(HD_ERR_NOT_SUPPORTED,
                    "input %d '%s' must be known when the plan is built, but %s '%s' computes it from values known "
                    "only at run time",
                    k, v->name, p->op_type, p->name);
  }
  return hd_error(HD_ERR_NOT_SUPPORTED, "an input whose values it reads is not known at plan time");
}

/* Why plan_partition left claimable node i out: the values it reads when
 * the plan is built must be computed in its own partition. */
static void log_outside_partition(const ir_graph *g, int i, const uint8_t *fold_only, const int *part) {
  const ir_node *n = &g->nodes[i];
  int need = IR_NONE, first = IR_NONE;
  for (int k = 0; k < n->nin; k++) {
    if (!op_input_on_host(n, k, fold_only[i])) continue;
    const ir_value *v = &g->values[n->in[k]];
    if (v->is_const) continue;
    int pn = v->producer;
    if (pn == IR_NONE) {
      HD_LOG(HD_LOG_VERBOSE, "not claiming %s '%s': input %d '%s' must be known when the plan is built, but it is a "
             "graph input", n->op_type, n->name, k, v->name);
      return;
    }
    if (part[pn] == IR_NONE) {
      HD_LOG(HD_LOG_VERBOSE, "not claiming %s '%s': input %d '%s' must be computed when the plan is built, but its "
             "producer %s '%s' is left to another EP", n->op_type, n->name, k, v->name, g->nodes[pn].op_type,
             g->nodes[pn].name);
      return;
    }
    if (need != IR_NONE && need != part[pn]) {
      HD_LOG(HD_LOG_VERBOSE,
             "not claiming %s '%s': the values it reads when the plan is built come from two partitions (%s '%s' "
             "and %s '%s')",
             n->op_type, n->name, g->nodes[first].op_type, g->nodes[first].name, g->nodes[pn].op_type,
             g->nodes[pn].name);
      return;
    }
    need = part[pn];
    first = pn;
  }
  if (need == IR_NONE) {
    HD_LOG(HD_LOG_VERBOSE, "not claiming %s '%s': the partitioner found no partition for it", n->op_type, n->name);
    return;
  }
  HD_LOG(HD_LOG_VERBOSE,
         "not claiming %s '%s': joining partition %d, which computes the values it reads when the plan is built, "
         "would put a node outside the partition on a path inside it",
         n->op_type, n->name, need);
}

/* Node i of an imported graph: 0 not ours, 1 the backend runs it, 2 only
 * the planner can (its outputs are known at plan time, computed on the host:
 * shape arithmetic the device does not run). ops_ok: our op parsed and
 * checked it, and its value inputs are known (op_mark_host_known). The
 * reason goes to the log either way. */
static int node_claimable(ep_ep *ep, ep_graph *eg, int i, int ops_ok) {
  const ir_node *n = &eg->g->nodes[i];
  hd_status *why = eg->why[i];
  eg->why[i] = NULL;
  if (!why && !ops_ok) why = host_unknown_reason(eg->g, n);
  if (!why) why = be_supports_node(ep->dev->be, ep->ctx, eg->g, i);
  if (why && ops_ok && op_node_host_known(eg->g, n)) {
    HD_LOG(HD_LOG_VERBOSE, "claiming %s '%s' for plan time only: %s", n->op_type, n->name, hd_status_msg(why));
    hd_status_free(why);
    return 2;
  }
  if (why) {
    HD_LOG(HD_LOG_VERBOSE, "not claiming %s '%s': %s", n->op_type, n->name, hd_status_msg(why));
    hd_status_free(why);
    return 0;
  }
  return 1;
}

static OrtStatus *ORT_API_CALL e_get_capability(OrtEp *p, const OrtGraph *graph, OrtEpGraphSupportInfo *info) {
  ep_ep *ep = ep_of(p);
  ep_graph eg;
  hd_status *st = ep_graph_import(graph, 0, &eg);
  if (st) return ep_status_to_ort(hd_status_wrap(st, "GetCapability: "));
  st = ir_graph_finalize(eg.g);
  int n = eg.g->nnodes;
  uint8_t *claim = calloc((size_t)n + 1, 1), *fold_only = calloc((size_t)n + 1, 1);
  int *part = calloc((size_t)n + 1, sizeof(int));
  const OrtNode **group = calloc((size_t)n + 1, sizeof *group);
  if (!st && (!claim || !fold_only || !part || !group)) st = hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  for (int i = 0; i < n && !st; i++) claim[i] = !eg.why[i];
  if (!st) op_mark_host_known(eg.g, claim);
  for (int i = 0; i < n && !st; i++) {
    int c = node_claimable(ep, &eg, i, claim[i]);
    claim[i] = c != 0;
    fold_only[i] = c == 2;
  }
  if (!st) op_fold_closure(eg.g, claim, fold_only);
  int nparts = 0;
  if (!st) st = plan_partition(eg.g, claim, fold_only, part, &nparts);
  for (int i = 0; i < n && !st; i++)
    if (claim[i] && part[i] == IR_NONE) log_outside_partition(eg.g, i, fold_only, part);
  OrtNodeFusionOptions fuse = {.ort_version_supported = ORT_API_VERSION, .drop_constant_initializers = true};
  for (int pi = 0; pi < nparts && !st; pi++) {
    size_t k = 0;
    char names[512] = "";
    for (int i = 0; i < n; i++) {
      if (part[i] != pi) continue;
      group[k++] = eg.nodes[i];
      /* one line per node: tools match these to where ORT put each node
       * (tools/harness/hh_place.c reads this form and "not claiming") */
      HD_LOG(HD_LOG_VERBOSE, "claiming %s '%s' in partition %d", eg.g->nodes[i].op_type, eg.g->nodes[i].name, pi);
      size_t used = strlen(names);
      if (used + 40 < sizeof names) snprintf(names + used, sizeof names - used, " %d:%s", i, eg.g->nodes[i].op_type);
    }
    HD_LOG(HD_LOG_VERBOSE, "partition %d:%s", pi, names);
    st = ep_from_ort(ep_ep_api->EpGraphSupportInfo_AddNodesToFuse(info, group, k, &fuse), "claiming nodes");
  }
  if (!st) HD_LOG(HD_LOG_INFO, "GetCapability: %d node(s), %d partition(s)", n, nparts);
  free(claim);
  free(fold_only);
  free(part);
  free(group);
  ep_graph_free(&eg);
  return ep_status_to_ort(st);
}

/* The names of a node's inputs or outputs, pointing into ORT's strings. */
static hd_status *io_names(const OrtNode *node, int outputs, const char ***names, int *n) {
  size_t count = 0;
  EP_ORT_TRY(outputs ? ep_api->Node_GetNumOutputs(node, &count) : ep_api->Node_GetNumInputs(node, &count),
             "counting fused node values");
  const OrtValueInfo **vis = calloc(count + 1, sizeof *vis);
  *names = calloc(count + 1, sizeof **names);
  *n = 0;
  if (!vis || !*names) {
    free(vis);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  hd_status *st = ep_from_ort(outputs ? ep_api->Node_GetOutputs(node, vis, count)
                                      : ep_api->Node_GetInputs(node, vis, count),
                              "reading fused node values");
  for (size_t i = 0; i < count && !st; i++) {
    if (!vis[i]) continue;
    st = ep_from_ort(ep_api->GetValueInfoName(vis[i], &(*names)[*n]), "reading a value name");
    if (!st) (*n)++;
  }
  free(vis);
  return st;
}

/* plan_precision's and plan_layout's question to the backend: node as it
 * would be changed. */
static hd_status *precision_supports(void *ctx, const ir_graph *g, int node) {
  ep_ep *ep = ctx;
  return be_supports_node(ep->dev->be, ep->ctx, g, node);
}

static hd_status *compile_one(ep_ep *ep, const OrtGraph *graph, const OrtNode *fused, OrtNodeComputeInfo **out) {
  const char *name = NULL;
  EP_ORT_TRY(ep_api->Node_GetName(fused, &name), "reading the fused node name");
  ep_graph eg;
  HD_TRY(ep_graph_import(graph, 1, &eg));
  const char **in = NULL, **outs = NULL;
  int nin = 0, nout = 0;
  hd_status *st = io_names(fused, 0, &in, &nin);
  if (!st) st = io_names(fused, 1, &outs, &nout);
  if (!st) st = ep_graph_set_io(&eg, in, nin, outs, nout);
  for (int i = 0; i < eg.g->nnodes && !st; i++)
    if (eg.why[i]) st = hd_status_wrap(eg.why[i], "node '%s': ", eg.g->nodes[i].name), eg.why[i] = NULL;
  free(in);
  free(outs);
  int nfused = 0;
  if (!st) st = plan_fuse(eg.g, &nfused);
  if (!st && nfused) HD_LOG(HD_LOG_VERBOSE, "'%s': %d node(s) fused away", name, nfused);
  if (!st && ep->opts.precision != HD_DT_F32) {
    plan_support sup = {ep, precision_supports};
    plan_precision_report rep;
    plan_precision_opts po = {.half = ep->opts.precision,
                              .gelu_tanh = !ep->opts.half_gelu_exact,
                              .fp32_first = ep->opts.fp32_first_layers};
    st = plan_precision(eg.g, &po, &sup, &rep);
    if (!st)
      HD_LOG(HD_LOG_VERBOSE,
             "'%s': %d node(s) in %s, %d kept in fp32, %d cast(s) added, %d constant(s) converted, "
             "%d matmul GELU(s) in the tanh form; of the fp32 ones, %d the first tensor-core op(s)",
             name, rep.half_nodes, hd_dtype_name(ep->opts.precision), rep.f32_nodes, rep.casts, rep.consts,
             rep.gelu_tanh, rep.fp32_first);
  }
  if (!st && ep->opts.layout != PLAN_LAYOUT_NEVER) {
    plan_support sup = {ep, precision_supports};
    plan_layout_report rep;
    /* HIPDNN_EP_LAYOUT_DEPTHWISE=0: the pass without its depthwise and
     * channel-moving forms; =all: depthwise convolutions channels last
     * even where no channel moves; for A/B runs (user guide) */
    const char *dw = getenv("HIPDNN_EP_LAYOUT_DEPTHWISE");
    int mode = ep->opts.layout;
    if (mode == PLAN_LAYOUT_ALWAYS && dw && !strcmp(dw, "0")) mode = PLAN_LAYOUT_DENSE;
    if (mode == PLAN_LAYOUT_ALWAYS && dw && !strcmp(dw, "all")) mode = PLAN_LAYOUT_ALL;
    st = plan_layout(eg.g, mode, &sup, &rep);
    if (!st && rep.convs)
      HD_LOG(HD_LOG_VERBOSE, "'%s': channels last %s: %d conv(s) can, %d Transpose(s) needed; %d node(s), %d constant(s) permuted",
             name, rep.applied ? "applied" : "not applied", rep.convs, rep.transposes, rep.nodes, rep.consts);
  }
  const char *late = getenv("HIPDNN_EP_FUSE_LATE"); /* 0: without the late fusions, for A/B runs (user guide) */
  int nlate = 0;
  if (!st && !(late && !strcmp(late, "0"))) st = plan_fuse_late(eg.g, &nlate);
  if (!st && nlate) HD_LOG(HD_LOG_VERBOSE, "'%s': %d node(s) fused away after the layout", name, nlate);
  if (!st) st = ep_kernel_create(ep, name, &eg, out);
  ep_graph_free(&eg);
  return st ? hd_status_wrap(st, "compiling '%s': ", name) : NULL;
}

static OrtStatus *ORT_API_CALL e_compile(OrtEp *p, const OrtGraph **graphs, const OrtNode **fused, size_t count,
                                         OrtNodeComputeInfo **infos, OrtNode **ctx_nodes) {
  ep_ep *ep = ep_of(p);
  for (size_t i = 0; i < count; i++) {
    infos[i] = NULL;
    if (ctx_nodes) ctx_nodes[i] = NULL;
  }
  for (size_t i = 0; i < count; i++) {
    hd_status *st = compile_one(ep, graphs[i], fused[i], &infos[i]);
    if (st) {
      for (size_t j = 0; j < i; j++) ep_kernel_destroy(infos[j]), infos[j] = NULL;
      return ep_status_to_ort(st);
    }
  }
  return NULL;
}

static void ORT_API_CALL e_release_infos(OrtEp *p, OrtNodeComputeInfo **infos, size_t n) {
  (void)p;
  for (size_t i = 0; i < n; i++) ep_kernel_destroy(infos[i]);
}

/* The session's device memory comes from the pool our steps use too (the
 * device's process-wide pool, or the session's own with gpu_mem_limit), so
 * the limit and the statistics cover ORT's tensors and ours alike. The
 * memory info may be another caller's naming our device (the umbrella EP's):
 * the allocator reports it as given. */
static OrtStatus *ORT_API_CALL e_create_allocator(OrtEp *p, const OrtMemoryInfo *info, OrtAllocator **out) {
  ep_ep *ep = ep_of(p);
  *out = NULL;
  const OrtMemoryDevice *md = ep_ep_api->MemoryInfo_GetMemoryDevice(info);
  ep_device *d = ep_lib_device_for_memory(ep->lib, md);
  if (!d) return ep_ort_error(ORT_INVALID_ARGUMENT, "no allocator for this memory info: not a GPU of this EP");
  int is_device = ep_ep_api->MemoryDevice_GetMemoryType(md) == OrtDeviceMemoryType_DEFAULT;
  /* A caller that created us with no devices (the umbrella EP) names the
   * device only in its memory infos: memory of another GPU than the one we
   * compute on would be a wrong answer, so refuse it. */
  if (is_device && d != ep->dev)
    return ep_ort_error(ORT_INVALID_ARGUMENT,
                        "the session runs on GPU %d but ONNX Runtime asks for device memory of GPU %d: with no "
                        "device given, choose the GPU with provider option device_id (or "
                        "ep.hipdnnexecutionprovider.device_id) or CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES",
                        ep->dev->ordinal, d->ordinal);
  ep_allocator *a = NULL;
  hd_status *st = d == ep->dev && is_device ? ep_allocator_create(d, info, 0, ep->device_alloc, &a)
                                            : ep_allocator_create_shared(d, info, &a);
  if (st) return ep_status_to_ort(st);
  *out = ep_allocator_ort(a);
  return NULL;
}

/* Callers that wrap our OrtEp (the umbrella EP) ask the EP, not the
 * factory, for streams. */
static OrtStatus *ORT_API_CALL e_create_stream(OrtEp *p, const OrtMemoryDevice *md, OrtSyncStreamImpl **out) {
  ep_ep *ep = ep_of(p);
  *out = NULL;
  ep_device *d = ep_lib_device_for_memory(ep->lib, md);
  if (!d) return ep_ort_error(ORT_INVALID_ARGUMENT, "no stream for this memory device");
  return ep_status_to_ort(ep_stream_create(d, out));
}

/* Our device memory is where ORT must put the inputs and outputs of our
 * fused nodes (it inserts copies at EP boundaries from this). */
static OrtStatus *ORT_API_CALL e_default_memory_device(const OrtEp *p, const OrtMemoryDevice **device) {
  const ep_ep *ep = (const ep_ep *)(const void *)p;
  *device = ep->dev->mem_device ? ep_ep_api->MemoryInfo_GetMemoryDevice(ep->dev->mem_device) : NULL;
  return NULL;
}

static OrtStatus *ORT_API_CALL e_concurrent_run(OrtEp *p, bool *ok) {
  (void)p;
  *ok = true; /* each compiled partition serialises its runs (ep_kernel.c) */
  return NULL;
}

/* ORT asks for one at session creation whether or not profiling is on,
 * and one per run under run-level profiling; StartProfiling says it is on. */
static OrtStatus *ORT_API_CALL e_create_profiler(OrtEp *p, OrtEpProfilerImpl **out) {
  return ep_prof_create_profiler(ep_of(p)->prof, out);
}

hd_status *ep_kernels_add(ep_ep *ep, OrtNodeComputeInfo *k) {
  hd_status *st = NULL;
  pthread_mutex_lock(&ep->kernels_mu);
  if (ep->nkernels == ep->cap_kernels) {
    int cap = ep->cap_kernels ? 2 * ep->cap_kernels : 8;
    OrtNodeComputeInfo **v = realloc(ep->kernels, sizeof *v * (size_t)cap);
    if (v) ep->kernels = v, ep->cap_kernels = cap;
    else st = hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  if (!st) ep->kernels[ep->nkernels++] = k;
  pthread_mutex_unlock(&ep->kernels_mu);
  return st;
}

void ep_kernels_remove(ep_ep *ep, OrtNodeComputeInfo *k) {
  pthread_mutex_lock(&ep->kernels_mu);
  for (int i = 0; i < ep->nkernels; i++)
    if (ep->kernels[i] == k) {
      ep->kernels[i] = ep->kernels[--ep->nkernels];
      break;
    }
  pthread_mutex_unlock(&ep->kernels_mu);
}

typedef struct figures_read {
  ep_ep *ep;
  ep_mem_figures *out;
} figures_read;

/* The partitions' figures and the pool's, under the pool's lock. The lock
 * order is pool, then the partition list, then a graph's figures (no path
 * takes them the other way: backends allocate and free outside their
 * graphs' locks). */
static void read_figures(void *ctx, const hd_pool_stats *s) {
  figures_read *r = ctx;
  ep_mem_figures *out = r->out;
  pthread_mutex_lock(&r->ep->kernels_mu);
  for (int i = 0; i < r->ep->nkernels; i++) {
    be_graph_memory m;
    ep_kernel_memory(r->ep->kernels[i], &m);
    out->weights += m.weights;
    out->run += m.run;
    out->plans += m.plans;
  }
  pthread_mutex_unlock(&r->ep->kernels_mu);
  if (!s) return;
  out->has_pool = 1;
  out->pool_in_use = s->in_use;
  out->pool_cached = s->cached;
  out->pool_peak = s->peak;
  out->pool_limit = s->limit;
}

void ep_memory_figures(ep_ep *ep, ep_mem_figures *out) {
  memset(out, 0, sizeof *out);
  out->backend = be_name(ep->dev->be);
  out->host = be_host_memory(ep->dev->be);
  hd_pool *pool = ep->device_alloc ? ep_allocator_pool(ep->device_alloc) : ep->host_pool;
  figures_read r = {ep, out};
  /* Other threads' runs allocate and free while we read. Backends count a
   * buffer only while the pool holds it (the figure drops before the free
   * and grows after the allocation), so figures read while the pool cannot
   * change are one snapshot: the pool in use covers what the partitions
   * hold in it. */
  if (pool) hd_pool_read_stats(pool, read_figures, &r);
  else read_figures(&r, NULL);
  out->pool_shared = pool && ep->device_alloc && !ep->opts.gpu_mem_limit;
}

/* The reference backend's run buffers come from a host pool of the
 * session's own, so its figures are measured the way a GPU's are. */
static hd_status *host_alloc(void *ctx, size_t bytes, void **p) {
  (void)ctx;
  *p = malloc(bytes ? bytes : 1);
  return *p ? NULL : hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory (%zu bytes)", bytes);
}
static void host_free(void *ctx, void *p) {
  (void)ctx;
  free(p);
}
static hd_status *be_pool_alloc(void *ctx, size_t bytes, void **p) { return hd_pool_alloc(ctx, bytes, p); }
static void be_pool_free(void *ctx, void *p) { hd_pool_free(ctx, p); }

OrtStatus *ep_create(ep_factory *f, ep_device *dev, const ep_options *opts, const OrtLogger *logger, OrtEp **out) {
  ep_ep *ep = calloc(1, sizeof *ep);
  if (!ep) return ep_ort_error(ORT_FAIL, "out of host memory");
  ep->base.ort_version_supported = ORT_API_VERSION;
  ep->base.GetName = e_get_name;
  ep->base.GetCapability = e_get_capability;
  ep->base.Compile = e_compile;
  ep->base.ReleaseNodeComputeInfos = e_release_infos;
  ep->base.IsConcurrentRunSupported = e_concurrent_run;
  ep->base.CreateProfiler = e_create_profiler;
  pthread_mutex_init(&ep->kernels_mu, NULL);
  ep->lib = f->lib;
  ep_lib_retain(ep->lib); /* the EP may outlive its factory */
  snprintf(ep->name, sizeof ep->name, "%s", f->name);
  ep->dev = dev;
  ep->logger = logger;
  ep->opts = *opts;
  hd_status *st = NULL;
  be_alloc alloc = {0};
  if (dev->mem_device) {
    ep->base.CreateAllocator = e_create_allocator;
    ep->base.GetDefaultMemoryDevice = e_default_memory_device;
    ep->base.CreateSyncStreamForDevice = e_create_stream;
    st = opts->gpu_mem_limit ? ep_allocator_create(dev, dev->mem_device, opts->gpu_mem_limit, NULL, &ep->device_alloc)
                             : ep_allocator_create_shared(dev, dev->mem_device, &ep->device_alloc);
    if (!st) alloc = ep_allocator_be(ep->device_alloc);
  } else {
    hd_pool_source src = {.alloc = host_alloc, .free = host_free};
    st = hd_pool_create(&src, 0, &ep->host_pool);
    if (!st) alloc = (be_alloc){ep->host_pool, be_pool_alloc, be_pool_free};
  }
  if (!st) st = be_context_create(dev->be, dev->ordinal, &opts->be, &alloc, &ep->ctx);
  if (!st) st = ep_prof_hub_create(ep, opts->profile_file[0] ? opts->profile_file : NULL, &ep->prof);
  if (st) {
    ep_destroy(&ep->base);
    return ep_status_to_ort(hd_status_wrap(st, "creating the EP on %s: ", dev->info.name));
  }
  HD_LOG(HD_LOG_INFO, "EP '%s' created on %s (backend %s)", ep->name, dev->info.name, be_name(dev->be));
  *out = &ep->base;
  return NULL;
}

void ep_destroy(OrtEp *p) {
  if (!p) return;
  ep_ep *ep = ep_of(p);
  ep_prof_hub_detach(ep->prof); /* writes profile_file */
  be_context_destroy(ep->dev->be, ep->ctx);
  if (ep->device_alloc) ep_allocator_destroy(ep_allocator_ort(ep->device_alloc));
  if (ep->host_pool) {
    size_t leaked = 0;
    hd_pool_destroy(ep->host_pool, &leaked);
    if (leaked) HD_LOG(HD_LOG_WARNING, "%zu host block(s) still in use when the session was released", leaked);
  }
  free(ep->kernels);
  pthread_mutex_destroy(&ep->kernels_mu);
  ep_lib *lib = ep->lib;
  free(ep);
  ep_lib_release(lib);
}
