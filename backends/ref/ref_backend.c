/* The reference backend's module, context, graph and plan objects. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ref/ref.h"
#include "common/hd_dtype.h"
#include "ops/ops.h"

typedef struct ref_module {
  be_module base;
} ref_module;

struct be_context {
  be_options opts;
};

struct be_graph {
  const ir_graph *g; /* owned by the caller, outlives this */
};

/* What one run writes: runs on several threads at once each take their own
 * (kept on the plan's free list between runs). */
typedef struct ref_exec {
  void *arena;
  ref_scratch scratch;
  struct ref_exec *next;
} ref_exec;

struct be_plan {
  const ir_plan *p; /* owned by the caller, outlives this */
  size_t scratch_floats;
  pthread_mutex_t mu;
  ref_exec *idle;   /* free list */
};

/* Per op kind: its implementation and scratch need. Kinds without an entry
 * are not supported by ref. */
static const struct {
  ref_op_fn run;
  size_t (*scratch)(const ir_plan *p, const ir_step *s);
} ref_ops[OP_COUNT] = {
    [OP_CONV] = {ref_conv, ref_conv_scratch},
    [OP_RELU] = {ref_unary, NULL},
    [OP_LEAKY_RELU] = {ref_unary, NULL},
    [OP_CLIP] = {ref_unary, NULL},
    [OP_SIGMOID] = {ref_unary, NULL},
    [OP_HARD_SIGMOID] = {ref_unary, NULL},
    [OP_HARD_SWISH] = {ref_unary, NULL},
    [OP_TANH] = {ref_unary, NULL},
    [OP_ADD] = {ref_binary, NULL},
    [OP_SUB] = {ref_binary, NULL},
    [OP_MUL] = {ref_binary, NULL},
    [OP_DIV] = {ref_binary, NULL},
    [OP_BATCHNORM] = {ref_batchnorm, NULL},
    [OP_MAX_POOL] = {ref_pool, NULL},
    [OP_AVERAGE_POOL] = {ref_pool, NULL},
    [OP_GLOBAL_AVERAGE_POOL] = {ref_pool, NULL},
    [OP_GLOBAL_MAX_POOL] = {ref_pool, NULL},
    [OP_FLATTEN] = {ref_view_copy, NULL},
    [OP_RESHAPE] = {ref_view_copy, NULL},
    [OP_SQUEEZE] = {ref_view_copy, NULL},
    [OP_UNSQUEEZE] = {ref_view_copy, NULL},
    [OP_IDENTITY] = {ref_view_copy, NULL},
    [OP_DROPOUT] = {ref_view_copy, NULL},
    [OP_CONCAT] = {ref_concat, NULL},
    [OP_GEMM] = {ref_gemm, NULL},
    [OP_MATMUL] = {ref_gemm, NULL},
    [OP_SOFTMAX] = {ref_softmax, NULL},
    [OP_REDUCE_MEAN] = {ref_reduce_mean, ref_reduce_scratch},
};

float ref_load(int dtype, const void *base, size_t i) {
  switch (dtype) {
    case HD_DT_F32: return ((const float *)base)[i];
    case HD_DT_F16: return hd_f16_to_f32(((const uint16_t *)base)[i]);
    case HD_DT_BF16: return hd_bf16_to_f32(((const uint16_t *)base)[i]);
    case HD_DT_F64: return (float)((const double *)base)[i];
    default: return 0.0f;
  }
}

void ref_store(int dtype, void *base, size_t i, float v) {
  switch (dtype) {
    case HD_DT_F32: ((float *)base)[i] = v; break;
    case HD_DT_F16: ((uint16_t *)base)[i] = hd_f32_to_f16(v); break;
    case HD_DT_BF16: ((uint16_t *)base)[i] = hd_f32_to_bf16(v); break;
    case HD_DT_F64: ((double *)base)[i] = v; break;
    default: break;
  }
}

const float *ref_as_f32(int dtype, const void *src, size_t n, float *dst) {
  if (dtype == HD_DT_F32) return src;
  for (size_t i = 0; i < n; i++) dst[i] = ref_load(dtype, src, i);
  return dst;
}

static void ref_close(be_module *m) { free(m); }
static int ref_device_count(be_module *m) { (void)m; return 1; }

static hd_status *ref_device_info(be_module *m, int ordinal, be_device_info *out) {
  (void)m;
  if (ordinal != 0) return hd_error(HD_ERR_INVALID_ARG, "ref backend has one device, not %d", ordinal);
  strcpy(out->name, "CPU (reference backend)");
  out->ordinal = 0;
  return NULL;
}

static hd_status *ref_context_create(be_module *m, int ordinal, const be_options *opts,
                                     const be_alloc *alloc, be_context **out) {
  (void)m; (void)ordinal; (void)alloc;
  be_context *c;
  HD_ALLOC_OR_RETURN(c, 1);
  c->opts = *opts;
  *out = c;
  return NULL;
}

static void ref_context_destroy(be_context *c) { free(c); }

static hd_status *ref_supports_node(be_context *c, const ir_graph *g, int node) {
  (void)c;
  op_kind k = g->nodes[node].kind;
  if (k <= OP_UNKNOWN || k >= OP_COUNT || !ref_ops[k].run)
    return hd_error(HD_ERR_NOT_SUPPORTED, "ref backend does not run %s", g->nodes[node].op_type);
  return NULL;
}

static hd_status *ref_graph_compile(be_context *c, const ir_graph *g, be_graph **out) {
  (void)c;
  for (int i = 0; i < g->nnodes; i++) {
    if (g->nodes[i].dead) continue;
    HD_TRY(ref_supports_node(c, g, i));
  }
  be_graph *bg;
  HD_ALLOC_OR_RETURN(bg, 1);
  bg->g = g;
  *out = bg;
  return NULL;
}

static void ref_graph_free(be_graph *bg) { free(bg); }

static hd_status *ref_plan_compile(be_graph *bg, const ir_plan *p, be_plan **out) {
  (void)bg;
  be_plan *bp;
  HD_ALLOC_OR_RETURN(bp, 1);
  bp->p = p;
  for (int i = 0; i < p->nsteps; i++) {
    op_kind k = p->g->nodes[p->steps[i].node].kind;
    size_t need = ref_ops[k].scratch ? ref_ops[k].scratch(p, &p->steps[i]) : 0;
    if (need > bp->scratch_floats) bp->scratch_floats = need;
  }
  pthread_mutex_init(&bp->mu, NULL);
  *out = bp;
  return NULL;
}

static void exec_free(ref_exec *x) {
  if (!x) return;
  free(x->arena);
  free(x->scratch.buf);
  free(x);
}

static void ref_plan_free(be_plan *bp) {
  if (!bp) return;
  while (bp->idle) {
    ref_exec *x = bp->idle;
    bp->idle = x->next;
    exec_free(x);
  }
  pthread_mutex_destroy(&bp->mu);
  free(bp);
}

static hd_status *exec_take(be_plan *bp, ref_exec **out) {
  pthread_mutex_lock(&bp->mu);
  ref_exec *x = bp->idle;
  if (x) bp->idle = x->next;
  pthread_mutex_unlock(&bp->mu);
  if (!x) {
    const ir_plan *p = bp->p;
    x = calloc(1, sizeof *x);
    if (x) {
      x->arena = p->arena_bytes ? malloc(p->arena_bytes) : NULL;
      x->scratch.floats = bp->scratch_floats;
      x->scratch.buf = bp->scratch_floats ? malloc(bp->scratch_floats * sizeof(float)) : NULL;
    }
    if (!x || (p->arena_bytes && !x->arena) || (bp->scratch_floats && !x->scratch.buf)) {
      exec_free(x);
      return hd_error(HD_ERR_OUT_OF_MEMORY, "ref: out of host memory for a %zu-byte arena", p->arena_bytes);
    }
  }
  *out = x;
  return NULL;
}

static hd_status *ref_plan_run(be_plan *bp, void *const *inputs, void *const *outputs, void *stream) {
  (void)stream;
  ref_exec *x = NULL;
  HD_TRY(exec_take(bp, &x));
  ir_bindings b = {.inputs = inputs, .outputs = outputs, .consts = NULL, .arena = x->arena};
  const ir_plan *p = bp->p;
  hd_status *st = NULL;
  for (int i = 0; i < p->nsteps && !st; i++) {
    const ir_node *n = &p->g->nodes[p->steps[i].node];
    st = ref_ops[n->kind].run(p, &p->steps[i], &b, &x->scratch);
    if (st) st = hd_status_wrap(st, "ref: node '%s' (%s): ", n->name, n->op_type);
  }
  pthread_mutex_lock(&bp->mu);
  x->next = bp->idle;
  bp->idle = x;
  pthread_mutex_unlock(&bp->mu);
  return st;
}

static const be_vtable ref_vtable = {
    .api_version = BE_API_VERSION,
    .name = "ref",
    .host_memory = 1,
    .close = ref_close,
    .device_count = ref_device_count,
    .device_info = ref_device_info,
    .context_create = ref_context_create,
    .context_destroy = ref_context_destroy,
    .supports_node = ref_supports_node,
    .graph_compile = ref_graph_compile,
    .graph_free = ref_graph_free,
    .plan_compile = ref_plan_compile,
    .plan_free = ref_plan_free,
    .plan_run = ref_plan_run,
};

hd_status *ref_backend_open(const be_host *host, be_module **out) {
  (void)host;
  ref_module *m;
  HD_ALLOC_OR_RETURN(m, 1);
  m->base.vt = &ref_vtable;
  *out = &m->base;
  return NULL;
}
