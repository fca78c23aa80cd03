/* gb_mmcache: the BLAS's matmul plans, one per (descriptor, workspace
 * limit), shared by every plan step that runs that matmul. A plan is built
 * per input-shape signature, and an LLM's decode step is a new signature
 * every token (the attention mask grows), while its ~80 matmuls repeat
 * exactly: asking the BLAS's heuristics for each of them again was most of
 * a step's plan build. Entries are counted per holding step; past
 * GB_MM_CACHE_MAX the least recently used one no step holds is dropped.
 * Failures are not cached (the callers fall back to another path).
 * Sharing is safe because a plan is read-only but for the attributes a run
 * sets just before its matmul (the bias pointer), and runs enqueue their
 * steps holding c->mu (gb_exec.c).
 *
 * Which algorithm: the BLAS heuristic's first; under exhaustive search
 * the fastest of its first GB_MM_RANKS, timed here on zeroed scratch
 * operands and kept in the engine cache as the heuristic's rank. Its first
 * is often not the fastest where a grid of output tiles leaves the GPU
 * part idle (H100, fp16 with bias: [197 x 3072] x [3072 x 768] 9.0 us for
 * the first, 7.0 for the second; [1024 x 3072] x [3072 x 768] 12.5 and
 * 9.9 for the third). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "common/hd_diskcache.h"
#include "common/hd_dtype.h"

#define GB_MM_CACHE_MAX 512
/* Scratch operands past this are not allocated to time a matmul: its
 * heuristic's first runs. */
#define GB_MM_TUNE_MAX_BYTES ((size_t)256 << 20)
/* Runs a CUDA graph holds when a candidate is timed: back to back from one
 * graph, as plans replay (eager launches would time the host). */
#define GB_MM_TUNE_RUNS 20
/* Another algorithm than the heuristic's first only when it times this
 * much faster: times of a few microseconds differ by noise, and one that
 * timed a little faster alone ran slower among a model's kernels (BERT
 * b1 fp16, 0.48-0.50 -> 0.57-0.65 ms taking the fastest at any margin). */
#define GB_MM_TUNE_MARGIN 0.9f

typedef struct gb_mm_entry {
  gb_mm_desc d;
  size_t limit, ws;
  void *mm;
  int refs;
  uint64_t last_use;
} gb_mm_entry;

struct gb_mm_cache {
  pthread_mutex_t mu;
  gb_mm_entry *e;
  int n, cap;
  uint64_t tick;
};

/* Field by field: designated initialisers leave padding unspecified. */
static int desc_eq(const gb_mm_desc *a, const gb_mm_desc *b) {
  return a->dtype == b->dtype && a->allow_tf32 == b->allow_tf32 && a->m == b->m && a->n == b->n && a->k == b->k &&
         a->trans_a == b->trans_a && a->trans_b == b->trans_b && a->lda == b->lda && a->ldb == b->ldb &&
         a->batch == b->batch && a->stride_a == b->stride_a && a->stride_b == b->stride_b && a->ldd == b->ldd &&
         a->stride_d == b->stride_d && a->bias == b->bias && a->relu == b->relu && a->gelu == b->gelu && a->accumulate == b->accumulate && !memcmp(&a->alpha, &b->alpha, sizeof a->alpha);
}

hd_status *gb_mm_cache_create(gb_mm_cache **out) {
  gb_mm_cache *mc = calloc(1, sizeof *mc);
  if (!mc) return GB_OOM();
  pthread_mutex_init(&mc->mu, NULL);
  *out = mc;
  return NULL;
}

void gb_mm_cache_free(be_context *c) {
  gb_mm_cache *mc = c->mm;
  if (!mc) return;
  for (int i = 0; i < mc->n; ++i) c->m->blas.mm_free(mc->e[i].mm);
  free(mc->e);
  pthread_mutex_destroy(&mc->mu);
  free(mc);
  c->mm = NULL;
}

/* Drops the least recently used entry no step holds, if any. */
static void evict_one(be_context *c, gb_mm_cache *mc) {
  int lru = -1;
  for (int i = 0; i < mc->n; ++i)
    if (!mc->e[i].refs && (lru < 0 || mc->e[i].last_use < mc->e[lru].last_use)) lru = i;
  if (lru < 0) return; /* every entry is held: the cache grows past its bound */
  c->m->blas.mm_free(mc->e[lru].mm);
  mc->e[lru] = mc->e[--mc->n];
}

/* Elements a stored operand spans: rows of ld, and batch - 1 strides. */
static size_t span(int64_t rows, int64_t ld, int64_t batch, int64_t stride) {
  return (size_t)(rows * ld + (batch > 1 ? (batch - 1) * stride : 0));
}

/* Scratch for timing d (gb_tuner: A, B, D (also C), the bias; the
 * workspace), or *too_large and nothing made past GB_MM_TUNE_MAX_BYTES. */
static hd_status *tuner_init(gb_tuner *t, be_context *c, const gb_mm_desc *d, size_t limit, int *too_large) {
  size_t es = hd_dtype_size(d->dtype);
  int64_t ldd = d->ldd ? d->ldd : d->n, sd = d->stride_d ? d->stride_d : d->m * d->n;
  size_t bytes[4] = {span(d->trans_a ? d->k : d->m, d->lda, d->batch, d->stride_a) * es,
                     span(d->trans_b ? d->n : d->k, d->ldb, d->batch, d->stride_b) * es,
                     span(d->m, ldd, d->batch, sd) * es, (size_t)d->n * es};
  *too_large = bytes[0] + bytes[1] + bytes[2] + limit > GB_MM_TUNE_MAX_BYTES;
  if (*too_large) return NULL;
  HD_TRY(gb_tuner_open(t, c));
  for (int i = 0; i < 4; ++i) HD_TRY(gb_tuner_buffer(t, bytes[i]));
  return gb_tuner_workspace(t, limit);
}

/* One candidate's time a run (ms): GB_MM_TUNE_RUNS runs captured in a graph,
 * replayed once to warm up, then timed up to three times, the best kept
 * (once when a replay takes over a millisecond: a large matmul's time
 * needs no second sample, and an LLM prefill's shapes are many). */
static hd_status *tuner_time(gb_tuner *t, const void *mm, float *ms) {
  be_context *c = t->c;
  const gb_blas *bl = &c->m->blas;
  *ms = -1.f;
  GB_CHECK(gpuStreamBeginCapture(t->stream, gpuStreamCaptureModeThreadLocal));
  hd_status *st = NULL;
  for (int i = 0; i < GB_MM_TUNE_RUNS && !st; ++i)
    st = bl->mm_run(c->blas, mm, t->bufs[0], t->bufs[1], t->bufs[2], t->bufs[2], t->bufs[3], t->ws, t->ws_bytes,
                    t->stream);
  gpuGraph_t graph = NULL;
  gpuError_t e = gpuStreamEndCapture(t->stream, &graph);
  gpuGraphExec_t exec = NULL;
  if (!st && e == gpuSuccess && graph) e = gpuGraphInstantiate(&exec, graph);
  if (graph) (void)gpuGraphDestroy(graph);
  if (!st && e != gpuSuccess) st = gb_status(e, "matmul tuning: capture", __FILE__, __LINE__);
  float best = -1.f;
  for (int rep = 0; rep < 4 && !st; ++rep) {
    if (rep) st = gb_status(gpuEventRecord(t->ev[0], t->stream), "gpuEventRecord", __FILE__, __LINE__);
    if (!st) st = gb_status(gpuGraphLaunch(exec, t->stream), "gpuGraphLaunch", __FILE__, __LINE__);
    if (!st && rep) st = gb_status(gpuEventRecord(t->ev[1], t->stream), "gpuEventRecord", __FILE__, __LINE__);
    if (!st) st = gb_status(gpuStreamSynchronize(t->stream), "gpuStreamSynchronize", __FILE__, __LINE__);
    float total = 0.f;
    if (!st && rep) st = gb_status(gpuEventElapsedTime(&total, t->ev[0], t->ev[1]), "gpuEventElapsedTime", __FILE__, __LINE__);
    if (!st && rep && (best < 0.f || total < best)) best = total;
    if (!st && rep && total > 1.f) break;
  }
  if (exec) (void)gpuGraphExecDestroy(exec);
  if (st) {
    (void)gpuGetLastError(); /* a candidate that failed to capture or run leaves no error behind for the next */
    return st;
  }
  *ms = best / GB_MM_TUNE_RUNS;
  return NULL;
}

/* The descriptor as an engine cache key (the BLAS and its version in it:
 * a rank names an algorithm of one library build). */
static int mm_key(const be_context *c, const gb_mm_desc *d, size_t limit, char *buf, size_t cap) {
  int n = snprintf(buf, cap,
                   "matmul %s %zu | %s tf32 %d m %lld n %lld k %lld t %d %d ld %lld %lld batch %lld st %lld %lld "
                   "ldd %lld %lld bias %d relu %d gelu %d acc %d ws %zu",
                   c->m->blas.name, c->m->blas.version, hd_dtype_name(d->dtype), d->allow_tf32, (long long)d->m,
                   (long long)d->n, (long long)d->k, d->trans_a, d->trans_b, (long long)d->lda, (long long)d->ldb,
                   (long long)d->batch, (long long)d->stride_a, (long long)d->stride_b, (long long)d->ldd,
                   (long long)d->stride_d, d->bias, d->relu, d->gelu, d->accumulate, limit);
  return n > 0 && (size_t)n < cap;
}

/* Exhaustive search: the fastest of the heuristic's first GB_MM_RANKS
 * (every candidate timed; one that fails to build or run is skipped).
 * Called with c->mu held (plans compile under it), so no run's enqueue and
 * no other timing interleaves. */
static hd_status *mm_tune(be_context *c, const gb_mm_desc *d, size_t limit, const char *key, int *rank) {
  const gb_blas *bl = &c->m->blas;
  gb_tuner t;
  memset(&t, 0, sizeof t);
  int too_large = 0;
  hd_status *st = tuner_init(&t, c, d, limit, &too_large);
  float best = -1.f, first = -1.f;
  int timed = 0;
  for (int r = 0; r < GB_MM_RANKS && !st && !too_large; ++r) {
    void *mm = NULL;
    size_t need = 0;
    hd_status *cs = bl->mm_create(c->blas, d, limit, r, &mm, &need);
    float ms = -1.f;
    if (!cs) cs = tuner_time(&t, mm, &ms);
    if (mm) bl->mm_free(mm);
    if (cs) {
      int stop = hd_status_code(cs) == HD_ERR_NOT_SUPPORTED; /* the list ended */
      HD_LOG(HD_LOG_VERBOSE, "%s: tuning: matmul rank %d: %s", gb_backend_name, r, hd_status_msg(cs));
      if (hd_status_code(cs) == HD_ERR_OUT_OF_MEMORY) st = cs;
      else hd_status_free(cs);
      if (stop) break;
      continue;
    }
    timed++;
    HD_LOG(HD_LOG_VERBOSE, "%s: tuning: matmul rank %d: %.4f ms (workspace %zu)", gb_backend_name, r, (double)ms,
           need);
    if (r == 0) first = ms;
    if (best < 0.f || ms < best) best = ms, *rank = r;
  }
  if (first > 0.f && best > GB_MM_TUNE_MARGIN * first) *rank = 0;
  gb_tuner_close(&t);
  if (st) return st;
  if (timed) {
    c->engines_timed++;
    c->engines_candidates += timed;
    char value[32];
    snprintf(value, sizeof value, "rank %d", *rank);
    if (key) gb_engine_cache_put_text(c, key, value);
  }
  HD_LOG(HD_LOG_VERBOSE, "%s: %s: rank %d (of %d timed)", gb_backend_name, key ? key : "matmul (no key)", *rank,
         timed);
  return NULL;
}

/* The algorithm's rank for d: 0 (the heuristic's first), or under
 * exhaustive search the cached choice, else the timed one. */
static hd_status *mm_rank(be_context *c, const gb_mm_desc *d, size_t limit, int *rank) {
  *rank = 0;
  if (c->opts.algo_search != BE_ALGO_EXHAUSTIVE) return NULL;
  char key[HD_DISKCACHE_MAX_KEY], value[HD_DISKCACHE_MAX_VALUE + 1];
  int keyed = mm_key(c, d, limit, key, sizeof key);
  if (keyed && gb_engine_cache_get_text(c, key, value, sizeof value)) {
    int r = -1, used = 0;
    if (sscanf(value, "rank %d%n", &r, &used) == 1 && value[used] == '\0' && r >= 0 && r < GB_MM_RANKS) {
      c->engines_replayed++;
      *rank = r;
      HD_LOG(HD_LOG_VERBOSE, "%s: engine cache: %s: rank %d, no timing", gb_backend_name, key, r);
      return NULL;
    }
    gb_engine_cache_unreadable(c, key, value);
  }
  return mm_tune(c, d, limit, keyed ? key : NULL, rank);
}

hd_status *gb_mm_get(be_context *c, const gb_mm_desc *d, size_t limit, void **mm, size_t *ws) {
  gb_mm_cache *mc = c->mm;
  *mm = NULL;
  *ws = 0;
  if (!mc) return hd_error(HD_ERR_NOT_SUPPORTED, "%s: no BLAS", gb_backend_name);
  pthread_mutex_lock(&mc->mu);
  for (int i = 0; i < mc->n; ++i)
    if (mc->e[i].limit == limit && desc_eq(&mc->e[i].d, d)) {
      mc->e[i].refs++;
      mc->e[i].last_use = ++mc->tick;
      *mm = mc->e[i].mm;
      *ws = mc->e[i].ws;
      pthread_mutex_unlock(&mc->mu);
      return NULL;
    }
  pthread_mutex_unlock(&mc->mu);
  /* built outside the lock (the heuristic query is the slow part); two
   * threads building the same one both insert: harmless, both are freed */
  void *made = NULL;
  size_t need = 0;
  int rank = 0;
  HD_TRY(mm_rank(c, d, limit, &rank));
  hd_status *st = c->m->blas.mm_create(c->blas, d, limit, rank, &made, &need);
  if (st && rank > 0 && hd_status_code(st) == HD_ERR_NOT_SUPPORTED) { /* a cached rank the list no longer has */
    HD_LOG(HD_LOG_WARNING, "%s: engine cache: matmul rank %d: %s; the heuristic's first instead", gb_backend_name,
           rank, hd_status_msg(st));
    hd_status_free(st);
    st = c->m->blas.mm_create(c->blas, d, limit, 0, &made, &need);
  }
  HD_TRY(st);
  pthread_mutex_lock(&mc->mu);
  if (mc->n >= GB_MM_CACHE_MAX) evict_one(c, mc);
  if (mc->n == mc->cap) {
    int cap = mc->cap ? 2 * mc->cap : 64;
    gb_mm_entry *a = realloc(mc->e, (size_t)cap * sizeof *a);
    if (!a) {
      pthread_mutex_unlock(&mc->mu);
      c->m->blas.mm_free(made);
      return GB_OOM();
    }
    mc->e = a, mc->cap = cap;
  }
  mc->e[mc->n++] = (gb_mm_entry){.d = *d, .limit = limit, .ws = need, .mm = made, .refs = 1, .last_use = ++mc->tick};
  pthread_mutex_unlock(&mc->mu);
  *mm = made;
  *ws = need;
  return NULL;
}

void gb_mm_put(be_context *c, void *mm) {
  gb_mm_cache *mc = c->mm;
  if (!mm || !mc) return;
  pthread_mutex_lock(&mc->mu);
  for (int i = 0; i < mc->n; ++i)
    if (mc->e[i].mm == mm) {
      if (mc->e[i].refs > 0) mc->e[i].refs--;
      break;
    }
  pthread_mutex_unlock(&mc->mu);
}
