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
  be_alloc alloc; /* the EP's host pool for run buffers, or none (malloc) */
};

/* What one run writes: runs on several threads at once each take their own,
 * kept on the graph's free list between runs (shared by all its plans,
 * grown to the largest plan run with them). */
typedef struct ref_exec {
  void *arena;
  size_t arena_cap;
  ref_scratch scratch;
  struct ref_exec *next;
} ref_exec;

struct be_graph {
  const ir_graph *g; /* owned by the caller, outlives this */
  be_context *c;
  pthread_mutex_t mu;
  ref_exec *idle;    /* free list */
  size_t weights;    /* constant bytes of g (read in place) */
  size_t run_bytes;  /* arenas and scratch of every exec (under mu) */
};

struct be_plan {
  be_graph *bg;
  const ir_plan *p; /* owned by the caller, outlives this */
  size_t scratch_floats;
};

/* Every family's implementation, ref_family_<family> in ref_<family>.c.
 * The reference backend runs every op there is (it is the oracle): a family
 * without one fails to link, naming the symbol. */
#define REF_FAMILY_DECL_(family, type) extern const ref_family ref_family_##family;
OP_FAMILY_LIST(REF_FAMILY_DECL_)
#undef REF_FAMILY_DECL_

static const ref_family *const ref_ops[OP_COUNT] = {
#define REF_OP_(kind, family) [OP_##kind] = &ref_family_##family,
    OP_LIST(REF_OP_)
#undef REF_OP_
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

int64_t ref_f64_to_i64(double v, int64_t lo, int64_t hi) {
  if (v != v) return 0;
  if (v <= (double)lo) return lo;
  if (v >= (double)hi) return hi; /* (double)INT64_MAX rounds up: >= catches it */
  return (int64_t)v;
}

double ref_load_f64(int dtype, const void *base, size_t i) {
  switch (dtype) {
    case HD_DT_F64: return ((const double *)base)[i];
    case HD_DT_F32: case HD_DT_F16: case HD_DT_BF16: return ref_load(dtype, base, i);
    case HD_DT_U64: return (double)((const uint64_t *)base)[i];
    default: return (double)ref_load_i64(dtype, base, i);
  }
}

int64_t ref_load_i64(int dtype, const void *base, size_t i) {
  switch (dtype) {
    case HD_DT_BOOL: return ((const uint8_t *)base)[i] != 0;
    case HD_DT_U8: return ((const uint8_t *)base)[i];
    case HD_DT_I8: return ((const int8_t *)base)[i];
    case HD_DT_U16: return ((const uint16_t *)base)[i];
    case HD_DT_I16: return ((const int16_t *)base)[i];
    case HD_DT_U32: return ((const uint32_t *)base)[i];
    case HD_DT_I32: return ((const int32_t *)base)[i];
    case HD_DT_I64: return ((const int64_t *)base)[i];
    case HD_DT_U64: return (int64_t)((const uint64_t *)base)[i]; /* wraps past 2^63, as C casts */
    case HD_DT_F64: case HD_DT_F32: case HD_DT_F16: case HD_DT_BF16:
      return ref_f64_to_i64(ref_load_f64(dtype, base, i), INT64_MIN, INT64_MAX);
    default: return 0;
  }
}

void ref_store_i64(int dtype, void *base, size_t i, int64_t v) {
  switch (dtype) {
    case HD_DT_BOOL: ((uint8_t *)base)[i] = v != 0; break;
    case HD_DT_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
    case HD_DT_I8: ((int8_t *)base)[i] = (int8_t)v; break;
    case HD_DT_U16: ((uint16_t *)base)[i] = (uint16_t)v; break;
    case HD_DT_I16: ((int16_t *)base)[i] = (int16_t)v; break;
    case HD_DT_U32: ((uint32_t *)base)[i] = (uint32_t)v; break;
    case HD_DT_I32: ((int32_t *)base)[i] = (int32_t)v; break;
    case HD_DT_I64: ((int64_t *)base)[i] = v; break;
    case HD_DT_U64: ((uint64_t *)base)[i] = (uint64_t)v; break;
    case HD_DT_F64: ((double *)base)[i] = (double)v; break;
    default: ref_store(dtype, base, i, (float)v); break;
  }
}

void ref_store_f64(int dtype, void *base, size_t i, double v) {
  switch (dtype) {
    case HD_DT_F64: ((double *)base)[i] = v; break;
    case HD_DT_F32: case HD_DT_F16: case HD_DT_BF16: ref_store(dtype, base, i, (float)v); break;
    case HD_DT_BOOL: ((uint8_t *)base)[i] = v != 0; break; /* NaN is true, as C's bool */
    case HD_DT_U8: ((uint8_t *)base)[i] = (uint8_t)ref_f64_to_i64(v, 0, UINT8_MAX); break;
    case HD_DT_I8: ((int8_t *)base)[i] = (int8_t)ref_f64_to_i64(v, INT8_MIN, INT8_MAX); break;
    case HD_DT_U16: ((uint16_t *)base)[i] = (uint16_t)ref_f64_to_i64(v, 0, UINT16_MAX); break;
    case HD_DT_I16: ((int16_t *)base)[i] = (int16_t)ref_f64_to_i64(v, INT16_MIN, INT16_MAX); break;
    case HD_DT_U32: ((uint32_t *)base)[i] = (uint32_t)ref_f64_to_i64(v, 0, UINT32_MAX); break;
    case HD_DT_I32: ((int32_t *)base)[i] = (int32_t)ref_f64_to_i64(v, INT32_MIN, INT32_MAX); break;
    case HD_DT_I64: ((int64_t *)base)[i] = ref_f64_to_i64(v, INT64_MIN, INT64_MAX); break;
    case HD_DT_U64: ((uint64_t *)base)[i] = v <= 0 || v != v ? 0 : v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v; break;
    default: break;
  }
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
  (void)m; (void)ordinal;
  be_context *c;
  HD_ALLOC_OR_RETURN(c, 1);
  c->opts = *opts;
  if (alloc && alloc->alloc && alloc->free) c->alloc = *alloc;
  *out = c;
  return NULL;
}

static void ref_context_destroy(be_context *c) { free(c); }

static hd_status *ref_supports_node(be_context *c, const ir_graph *g, int node) {
  (void)c;
  int k = g->nodes[node].kind;
  if (k <= OP_UNKNOWN || k >= OP_COUNT || !ref_ops[k])
    return hd_error(HD_ERR_NOT_SUPPORTED, "ref backend does not run %s", g->nodes[node].op_type);
  return NULL;
}

static hd_status *ref_graph_compile(be_context *c, const ir_graph *g, be_graph **out) {
  for (int i = 0; i < g->nnodes; i++) {
    if (g->nodes[i].dead) continue;
    HD_TRY(ref_supports_node(c, g, i));
  }
  be_graph *bg;
  HD_ALLOC_OR_RETURN(bg, 1);
  bg->g = g;
  bg->c = c;
  for (int v = 0; v < g->nvalues; v++)
    if (g->values[v].is_const && g->values[v].data) bg->weights += g->values[v].nbytes;
  pthread_mutex_init(&bg->mu, NULL);
  *out = bg;
  return NULL;
}

static void buf_free(be_context *c, void *p) {
  if (!p) return;
  if (c->alloc.free) c->alloc.free(c->alloc.ctx, p);
  else free(p);
}

static void exec_free(be_context *c, ref_exec *x) {
  if (!x) return;
  buf_free(c, x->arena);
  buf_free(c, x->scratch.buf);
  free(x);
}

static void ref_graph_free(be_graph *bg) {
  if (!bg) return;
  while (bg->idle) {
    ref_exec *x = bg->idle;
    bg->idle = x->next;
    exec_free(bg->c, x);
  }
  pthread_mutex_destroy(&bg->mu);
  free(bg);
}

static hd_status *ref_plan_compile(be_graph *bg, const ir_plan *p, be_plan **out) {
  be_plan *bp;
  HD_ALLOC_OR_RETURN(bp, 1);
  bp->bg = bg;
  bp->p = p;
  for (int i = 0; i < p->nsteps; i++) {
    int k = p->g->nodes[p->steps[i].node].kind;
    size_t need = ref_ops[k]->scratch ? ref_ops[k]->scratch(p, &p->steps[i]) : 0;
    if (need > bp->scratch_floats) bp->scratch_floats = need;
  }
  *out = bp;
  return NULL;
}

static void ref_plan_free(be_plan *bp) { free(bp); }

/* Adds to (or takes from) the run buffers' figure. */
static void count_run(be_graph *bg, size_t bytes, int add) {
  pthread_mutex_lock(&bg->mu);
  bg->run_bytes = add ? bg->run_bytes + bytes : bg->run_bytes - bytes;
  pthread_mutex_unlock(&bg->mu);
}

/* Grows *buf to at least need bytes (contents not kept). The figure never
 * counts a byte the pool does not hold: it drops before the free and grows
 * after the allocation (a memory sample reads both). */
static int grow(be_graph *bg, void **buf, size_t *cap, size_t need) {
  if (need <= *cap) return 1;
  be_context *c = bg->c;
  count_run(bg, *cap, 0);
  buf_free(c, *buf);
  *buf = NULL;
  if (c->alloc.alloc) {
    hd_status *st = c->alloc.alloc(c->alloc.ctx, need, buf);
    if (st) *buf = NULL;
    hd_status_free(st);
  } else {
    *buf = malloc(need);
  }
  *cap = *buf ? need : 0;
  count_run(bg, *cap, 1);
  return *buf != NULL;
}

static hd_status *exec_take(be_plan *bp, ref_exec **out) {
  be_graph *bg = bp->bg;
  pthread_mutex_lock(&bg->mu);
  ref_exec *x = bg->idle;
  if (x) bg->idle = x->next;
  pthread_mutex_unlock(&bg->mu);
  if (!x && !(x = calloc(1, sizeof *x))) return hd_error(HD_ERR_OUT_OF_MEMORY, "ref: out of host memory");
  size_t fcap = x->scratch.floats * sizeof(float);
  int ok = grow(bg, &x->arena, &x->arena_cap, bp->p->arena_bytes) &&
           grow(bg, (void **)&x->scratch.buf, &fcap, bp->scratch_floats * sizeof(float));
  x->scratch.floats = fcap / sizeof(float);
  if (!ok) {
    count_run(bg, x->arena_cap + fcap, 0);
    exec_free(bg->c, x);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "ref: out of host memory for a %zu-byte arena", bp->p->arena_bytes);
  }
  *out = x;
  return NULL;
}

hd_status *ref_step_run(void *ctx, const ir_plan *p, const ir_step *s, const ir_bindings *b) {
  (void)ctx;
  int k = p->g->nodes[s->node].kind;
  if (k <= OP_UNKNOWN || k >= OP_COUNT) return hd_error(HD_ERR_INTERNAL, "ref: no op for kind %d", k);
  ref_scratch scratch = {0};
  scratch.floats = ref_ops[k]->scratch ? ref_ops[k]->scratch(p, s) : 0;
  if (scratch.floats && !(scratch.buf = malloc(scratch.floats * sizeof(float))))
    return hd_error(HD_ERR_OUT_OF_MEMORY, "ref: out of host memory");
  hd_status *st = ref_ops[k]->run(p, s, b, &scratch);
  free(scratch.buf);
  return st;
}

/* prof: NULL, or per-step host times of this run. */
static hd_status *run_plan(be_plan *bp, void *const *inputs, void *const *outputs, be_run_profile *prof) {
  ref_exec *x = NULL;
  HD_TRY(exec_take(bp, &x));
  ir_bindings b = {.inputs = inputs, .outputs = outputs, .consts = NULL, .arena = x->arena};
  const ir_plan *p = bp->p;
  hd_status *st = NULL;
  for (int i = 0; i < p->nsteps && !st; i++) {
    const ir_node *n = &p->g->nodes[p->steps[i].node];
    int64_t t0 = prof ? be_clock_ns() : 0;
    st = ref_ops[n->kind]->run(p, &p->steps[i], &b, &x->scratch);
    if (st) st = hd_status_wrap(st, "ref: node '%s' (%s): ", n->name, n->op_type);
    if (prof && prof->n < prof->cap)
      prof->steps[prof->n++] = (be_step_time){.step = i, .start_ns = t0, .dur_ns = be_clock_ns() - t0};
  }
  pthread_mutex_lock(&bp->bg->mu);
  x->next = bp->bg->idle;
  bp->bg->idle = x;
  pthread_mutex_unlock(&bp->bg->mu);
  return st;
}

static hd_status *ref_plan_run(be_plan *bp, void *const *inputs, void *const *outputs, void *stream) {
  (void)stream;
  return run_plan(bp, inputs, outputs, NULL);
}

static hd_status *ref_plan_run_profiled(be_plan *bp, void *const *inputs, void *const *outputs, void *stream,
                                        be_run_profile *prof) {
  (void)stream;
  return run_plan(bp, inputs, outputs, prof);
}

static void ref_graph_memory(be_graph *bg, be_graph_memory *out) {
  pthread_mutex_lock(&bg->mu);
  out->weights = bg->weights;
  out->run = bg->run_bytes;
  out->plans = 0;
  pthread_mutex_unlock(&bg->mu);
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
    .plan_run_profiled = ref_plan_run_profiled,
    .graph_memory = ref_graph_memory,
};

hd_status *ref_backend_open(const be_host *host, be_module **out) {
  (void)host;
  ref_module *m;
  HD_ALLOC_OR_RETURN(m, 1);
  m->base.vt = &ref_vtable;
  *out = &m->base;
  return NULL;
}
