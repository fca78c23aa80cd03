/* gb_program: contexts, the op table, compiled graphs and per-shape plans
 * of the GPU backend (runs are gb_exec.c).
 *
 * The op table (gb_ops below, by op_kind) is the one place that says which
 * family runs an op: supports_node, plan_compile and plan_run all reach a
 * family through it, so support and execution cannot drift apart. A kind
 * without an entry is not supported. Shape-only ops (op_def.view) are the
 * copy family: a plan aliases them, and a step for one (its output is a
 * partition output) is a device copy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"
#include "ops/ops.h"

/* ---- the op table ---- */

/* Every family's runner, gb_family_<family> in a gb_*.c file: a family
 * without one fails to link, naming the symbol. A family the GPU does not
 * run defines one with no support function (GB_NOT_ON_GPU): supports_node
 * refuses its ops, so they stay with ONNX Runtime's CPU EP. */
#define GB_FAMILY_DECL_(family, type) extern const gb_family gb_family_##family;
OP_FAMILY_LIST(GB_FAMILY_DECL_)
#undef GB_FAMILY_DECL_

static const gb_family *const gb_ops[OP_COUNT] = {
#define GB_OP_(kind, family) [OP_##kind] = &gb_family_##family,
    OP_LIST(GB_OP_)
#undef GB_OP_
};

/* The family that runs op kind k, or NULL. A view op (op_def.view) runs
 * only as a copy: plans alias it everywhere else. */
static const gb_family *family_of(int k) {
  if (k <= OP_UNKNOWN || k >= OP_COUNT) return NULL;
  const op_def *d = op_get((op_kind)k);
  if (d && d->view) return &gb_family_view;
  return gb_ops[k] && gb_ops[k]->support ? gb_ops[k] : NULL;
}

/* ---- helpers ---- */

hd_status *gb_kernel_status(int rc, const char *kernel, const char *file, int line) {
  if (rc == 0) return NULL;
  if (rc < 0) return hd_error(HD_ERR_INTERNAL, "%s:%d: %s: no kernel for these arguments", file,
                              line, kernel);
  return gb_status((gpuError_t)rc, kernel, file, line);
}

int gb_dtype_ok(int dt) { return dt == HD_DT_F32 || dt == HD_DT_F16 || dt == HD_DT_BF16; }

hd_status *gb_support_float_input(const ir_graph *g, const ir_node *n, int k) {
  int dt = g->values[n->in[k]].dtype;
  if (!gb_dtype_ok(dt)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of %s", gb_backend_name, n->op_type, hd_dtype_name(dt));
  return NULL;
}

const ir_tensor *gb_t(const be_plan *bp, int v) { return &bp->p.t[v]; }

void *gb_addr(const be_plan *bp, int v, const ir_bindings *b) {
  return v == IR_NONE ? NULL : ir_tensor_addr(&bp->p, v, b);
}

int gb_input_const(const be_plan *bp, const ir_node *n, int k) {
  return k < 0 || k >= n->nin || n->in[k] == IR_NONE || bp->p.g->values[n->in[k]].is_const;
}

hd_status *gb_check_float_io(const ir_graph *g, const ir_node *n, int nin) {
  if (n->nin < 1 || n->in[0] == IR_NONE)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: no input", gb_backend_name);
  int dt = g->values[n->in[0]].dtype;
  if (!gb_dtype_ok(dt))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of %s", gb_backend_name, n->op_type,
                    hd_dtype_name(dt));
  int upto = nin < 0 || nin > n->nin ? n->nin : nin;
  for (int i = 0; i < upto; ++i) {
    int v = n->in[i];
    if (v != IR_NONE && g->values[v].dtype != dt)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s with mixed input types", gb_backend_name,
                      n->op_type);
    if (v != IR_NONE && g->values[v].rank > GPU_MAX_DIMS)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of rank %d", gb_backend_name, n->op_type,
                      g->values[v].rank);
  }
  for (int i = 0; i < n->nout; ++i) {
    int v = n->out[i];
    if (v == IR_NONE) continue;
    if (i > 0)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s with a second output", gb_backend_name,
                      n->op_type);
    if (g->values[v].dtype != dt)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s output of another type", gb_backend_name,
                      n->op_type);
    if (g->values[v].rank > GPU_MAX_DIMS)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of rank %d", gb_backend_name, n->op_type,
                      g->values[v].rank);
  }
  return NULL;
}

hd_status *gb_check_elements(const ir_graph *g, const ir_node *n, int v) {
  size_t es = hd_dtype_size(g->values[v].dtype);
  if (es != 1 && es != 2 && es != 4 && es != 8)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of %zu-byte elements", gb_backend_name, n->op_type, es);
  for (int k = 0; k < n->nout; ++k)
    if (n->out[k] != IR_NONE && g->values[n->out[k]].rank > GPU_MAX_DIMS)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of rank %d", gb_backend_name, n->op_type,
                      g->values[n->out[k]].rank);
  return NULL;
}

/* ---- contexts ---- */

static pthread_mutex_t gb_blas_mu = PTHREAD_MUTEX_INITIALIZER;

static void blas_load_once(gb_module *m) {
  pthread_mutex_lock(&gb_blas_mu);
  if (m->blas_state == 0) {
    m->blas_state = -1;
    if (gb_blas_load) {
      hd_status *st = gb_blas_load(m);
      if (st) {
        HD_LOG(HD_LOG_INFO, "%s backend: no BLAS library, matmuls run the built-in kernel: %s",
               gb_backend_name, hd_status_msg(st));
        hd_status_free(st);
      } else {
        m->blas_state = 1;
        HD_LOG(HD_LOG_INFO, "%s backend: matmuls on %s", gb_backend_name, m->blas.name);
      }
    }
  }
  pthread_mutex_unlock(&gb_blas_mu);
}

hd_status *gb_context_create(be_module *m, int ordinal, const be_options *opts,
                             const be_alloc *alloc, be_context **out) {
  *out = NULL;
  gb_module *cm = (gb_module *)m;
  if (ordinal < 0 || ordinal >= cm->ndev)
    return hd_error(HD_ERR_INVALID_ARG, "%s: no device %d (%d visible)", gb_backend_name, ordinal,
                    cm->ndev);
  if (!alloc || !alloc->alloc || !alloc->free)
    return hd_error(HD_ERR_INVALID_ARG, "%s: context without an allocator", gb_backend_name);
  be_context *c = calloc(1, sizeof *c);
  if (!c) return GB_OOM();
  c->m = cm;
  c->ordinal = ordinal;
  if (opts) {
    c->opts = *opts;
  } else {
    c->opts.use_tf32 = 1;
  }
  c->alloc = *alloc;
  hd_status *st = gb_status(gpuSetDevice(ordinal), "gpuSetDevice", __FILE__, __LINE__);
  if (!st) st = dnn_status(&cm->vd, cm->vd.create(&c->handle), "create handle", __FILE__, __LINE__);
  if (!st) {
    blas_load_once(cm);
    if (cm->blas_state == 1) {
      hd_status *bs = cm->blas.handle_create(&c->blas);
      if (bs) {
        HD_LOG(HD_LOG_WARNING, "%s: %s handle: %s; matmuls run the built-in kernel",
               gb_backend_name, cm->blas.name, hd_status_msg(bs));
        hd_status_free(bs);
        c->blas = NULL;
      }
    }
    if (c->blas) st = gb_mm_cache_create(&c->mm);
  }
  if (!st) st = gb_engine_cache_open(c);
  if (st) {
    gb_engine_cache_close(c);
    gb_mm_cache_free(c);
    if (c->blas) cm->blas.handle_destroy(c->blas);
    if (c->handle) cm->vd.destroy(c->handle);
    free(c);
    return st;
  }
  pthread_mutex_init(&c->mu, NULL);
  *out = c;
  return NULL;
}

void gb_context_destroy(be_context *c) {
  if (!c) return;
  (void)gpuSetDevice(c->ordinal);
  gb_engine_cache_close(c);
  gb_conv_cache_free(c);
  gb_mm_cache_free(c);
  if (c->blas) c->m->blas.handle_destroy(c->blas);
  if (c->handle) c->m->vd.destroy(c->handle);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

/* ---- support ---- */

hd_status *gb_supports_node(be_context *c, const ir_graph *g, int node) {
  const ir_node *n = &g->nodes[node];
  const gb_family *f = family_of(n->kind);
  if (!f && n->kind > OP_UNKNOWN && n->kind < OP_COUNT && gb_ops[n->kind]) /* GB_NOT_ON_GPU */
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s backend leaves %s to plan time", gb_backend_name, n->op_type);
  if (!f)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s backend does not run %s", gb_backend_name,
                    n->op_type);
  return f->support(c, g, n);
}

/* ---- graphs: constants on the device ---- */

hd_status *gb_graph_compile(be_context *c, const ir_graph *g, be_graph **out) {
  *out = NULL;
  /* No node check here: a partition may hold nodes only the planner runs
   * (Shape, integer shape arithmetic); plan compiles refuse any step that
   * reaches the device without a family. */
  be_graph *bg = calloc(1, sizeof *bg);
  if (!bg) return GB_OOM();
  bg->c = c;
  bg->g = g;
  bg->consts = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof *bg->consts);
  if (!bg->consts) {
    free(bg);
    return GB_OOM();
  }
  hd_status *st = gb_status(gpuSetDevice(c->ordinal), "gpuSetDevice", __FILE__, __LINE__);
  /* Upload each constant a live node reads, once. */
  uint8_t *used = calloc((size_t)(g->nvalues ? g->nvalues : 1), 1);
  if (!used && !st) st = GB_OOM();
  for (int i = 0; i < g->nnodes && used; ++i) {
    if (g->nodes[i].dead) continue;
    for (int j = 0; j < g->nodes[i].nin; ++j)
      if (g->nodes[i].in[j] != IR_NONE) used[g->nodes[i].in[j]] = 1;
  }
  /* One allocation for all of them, each 256-byte aligned: weights live as
   * long as the graph, and one block per weight would be rounded to the
   * pool's 2 MiB granule each (BERT-base's 768 x 768 matrices, 2.25 MiB,
   * took 4 MiB apiece: 112 MiB over its 415). */
  size_t total = 0;
  for (int v = 0; v < g->nvalues && used && !st; ++v) {
    const ir_value *val = &g->values[v];
    if (!used[v] || !val->is_const || !val->data || val->nbytes == 0) continue;
    size_t at = (total + 255) / 256 * 256;
    if (at < total || at + val->nbytes < at)
      st = hd_error(HD_ERR_INVALID_ARG, "%s: weights past the size limit", gb_backend_name);
    else
      total = at + val->nbytes;
  }
  if (!st && total) {
    st = c->alloc.alloc(c->alloc.ctx, total, &bg->const_block);
    if (st) {
      bg->const_block = NULL;
      st = hd_status_wrap(st, "%s: the graph's weights (%zu bytes): ", gb_backend_name, total);
    }
  }
  size_t at = 0;
  for (int v = 0; v < g->nvalues && used && !st && bg->const_block; ++v) {
    const ir_value *val = &g->values[v];
    if (!used[v] || !val->is_const || !val->data || val->nbytes == 0) continue;
    at = (at + 255) / 256 * 256;
    bg->consts[v] = (char *)bg->const_block + at;
    at += val->nbytes;
    bg->const_bytes += val->nbytes;
    st = gb_status(gpuMemcpy(bg->consts[v], val->data, val->nbytes, gpuMemcpyHostToDevice),
                   "gpuMemcpy(weights)", __FILE__, __LINE__);
    if (st)
      st = hd_status_wrap(st, "%s: weights '%s' (%zu bytes): ", gb_backend_name, val->name, val->nbytes);
  }
  free(used);
  if (!st) st = gb_exec_set_create(bg);
  if (st) {
    gb_graph_free(bg);
    return st;
  }
  *out = bg;
  return NULL;
}

void gb_graph_free(be_graph *bg) {
  if (!bg) return;
  gb_exec_set_free(bg); /* waits for the graph's GPU work */
  if (bg->const_block) bg->c->alloc.free(bg->c->alloc.ctx, bg->const_block);
  free(bg->consts);
  free(bg);
}

/* ---- plans ---- */

gb_step *gb_only_reader(be_plan *bp, int v) {
  const ir_value *val = &bp->bg->g->values[v];
  if (val->nuses != 1 || val->graph_output != IR_NONE) return NULL;
  for (int i = 0; i < bp->nsteps; ++i)
    for (int k = 0; k < bp->steps[i].n->nin; ++k)
      if (bp->steps[i].n->in[k] == v) return &bp->steps[i];
  return NULL;
}

/* Value v's arena bytes [*lo, *hi); 0 when v is not in the arena. */
static int arena_range(const be_plan *bp, int v, size_t *lo, size_t *hi) {
  if (v == IR_NONE) return 0;
  const ir_tensor *t = bp->p.t;
  size_t off = 0, n = t[v].nbytes;
  while (t[v].storage == IR_ST_ALIAS) {
    off += t[v].offset;
    v = t[v].index;
  }
  if (t[v].storage != IR_ST_ARENA) return 0;
  *lo = t[v].offset + off;
  *hi = *lo + n;
  return 1;
}

int gb_arena_overlap(const be_plan *bp, int a, int b) {
  size_t alo, ahi, blo, bhi;
  return arena_range(bp, a, &alo, &ahi) && arena_range(bp, b, &blo, &bhi) && alo < bhi && blo < ahi;
}

hd_status *gb_plan_compile(be_graph *bg, const ir_plan *p, be_plan **out) {
  *out = NULL;
  be_context *c = bg->c;
  const ir_graph *g = bg->g;
  be_plan *bp = calloc(1, sizeof *bp);
  if (!bp) return GB_OOM();
  bp->bg = bg;
  bp->p.g = g;
  bp->p.arena_bytes = p->arena_bytes;
  bp->p.folded = p->folded; /* host bytes stay the caller's (the plan outlives this) */
  bp->p.folded_bytes = p->folded_bytes;
  bp->p.t = malloc(sizeof *bp->p.t * (size_t)(g->nvalues ? g->nvalues : 1));
  bp->steps = calloc((size_t)(p->nsteps ? p->nsteps : 1), sizeof *bp->steps);
  if (!bp->p.t || !bp->steps) {
    gb_plan_free(bp);
    return GB_OOM();
  }
  memcpy(bp->p.t, p->t, sizeof *bp->p.t * (size_t)g->nvalues);

  hd_status *st = NULL;
  size_t ws = 0;
  pthread_mutex_lock(&c->mu);
  st = gb_status(gpuSetDevice(c->ordinal), "gpuSetDevice", __FILE__, __LINE__);
  for (int i = 0; i < p->nsteps && !st; ++i) {
    const ir_step *s = &p->steps[i];
    const ir_node *n = &g->nodes[s->node];
    gb_step *cs = &bp->steps[bp->nsteps];
    cs->n = n;
    cs->p = *OP_P(s);
    cs->f = family_of(n->kind);
    if (!cs->f) {
      st = hd_error(HD_ERR_NOT_SUPPORTED, "%s backend does not run %s", gb_backend_name,
                    n->op_type);
      break;
    }
    size_t need = 0;
    if (cs->f->compile) st = cs->f->compile(bp, cs, &need);
    bp->nsteps++; /* a failed step too: gb_plan_free releases it, after c->mu */
    if (st) {
      st = hd_status_wrap(st, "node '%s' (%s): ", n->name, n->op_type);
      break;
    }
    if (need > ws) ws = need;
    cs->zeroed_at = bp->zeroed_bytes;
    bp->zeroed_bytes += (cs->zeroed_bytes + 255) / 256 * 256;
  }
  for (int i = 0; i < bp->nsteps && !st; ++i)
    if (bp->steps[i].f->link) bp->steps[i].f->link(bp, &bp->steps[i]);
  pthread_mutex_unlock(&c->mu);
  gb_engine_cache_save(c); /* what this plan timed, for the next session */
  bp->workspace_bytes = ws;
  /* The values computed at plan time that device steps read: one copy. */
  if (!st && p->folded_bytes) {
    st = c->alloc.alloc(c->alloc.ctx, p->folded_bytes, &bp->folded);
    if (st) bp->folded = NULL;
    else st = gb_status(gpuMemcpy(bp->folded, p->folded, p->folded_bytes, gpuMemcpyHostToDevice), "gpuMemcpy(folded)",
                        __FILE__, __LINE__);
  }
  if (!st) st = gb_plan_slots_create(bp);
  if (st) {
    gb_plan_free(bp);
    return st;
  }
  if (bp->folded) {
    bp->counted = p->folded_bytes;
    gb_graph_count_plan(bg, bp->counted, 1);
  }
  *out = bp;
  return NULL;
}

void gb_plan_free(be_plan *bp) {
  if (!bp) return;
  gb_plan_slots_free(bp); /* waits for the plan's GPU work */
  if (bp->counted) gb_graph_count_plan(bp->bg, bp->counted, 0);
  if (bp->folded) bp->bg->c->alloc.free(bp->bg->c->alloc.ctx, bp->folded);
  for (int i = 0; i < bp->nsteps; ++i)
    if (bp->steps[i].f->release) bp->steps[i].f->release(bp, &bp->steps[i]);
  free(bp->p.t);
  free(bp->steps);
  free(bp);
}
