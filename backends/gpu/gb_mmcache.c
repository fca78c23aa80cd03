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
 * steps holding c->mu (gb_exec.c). */
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"

#define GB_MM_CACHE_MAX 512

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
  HD_TRY(c->m->blas.mm_create(c->blas, d, limit, &made, &need));
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
