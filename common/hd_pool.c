#include "common/hd_pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Blocks are rounded to 512 bytes (small) or 2 MiB (large), the granules
 * device allocators work in, so near sizes share blocks. */
#define SMALL_ROUND 512u
#define LARGE_ROUND (2u << 20)
#define LARGE_MIN (1u << 20)

typedef struct block {
  void *ptr;
  size_t size;
  int live;
} block;

struct hd_pool {
  hd_pool_source src;
  pthread_mutex_t mu;
  block *blocks;
  int n, cap;
  hd_pool_stats stats;
};

static size_t round_size(size_t b) {
  size_t r = b < LARGE_MIN ? SMALL_ROUND : LARGE_ROUND;
  return (b + r - 1) / r * r;
}

hd_status *hd_pool_create(const hd_pool_source *src, size_t limit, hd_pool **out) {
  hd_pool *p;
  HD_ALLOC_OR_RETURN(p, 1);
  p->src = *src;
  p->stats.limit = limit;
  pthread_mutex_init(&p->mu, NULL);
  *out = p;
  return NULL;
}

static void release_cached(hd_pool *p) {
  int w = 0;
  for (int i = 0; i < p->n; i++) {
    if (p->blocks[i].live) {
      p->blocks[w++] = p->blocks[i];
      continue;
    }
    p->src.free(p->src.ctx, p->blocks[i].ptr);
    p->stats.cached -= p->blocks[i].size;
  }
  p->n = w;
}

void hd_pool_destroy(hd_pool *p, size_t *leaked_blocks) {
  if (!p) return;
  size_t leaked = 0;
  for (int i = 0; i < p->n; i++) {
    if (p->blocks[i].live) leaked++;
    p->src.free(p->src.ctx, p->blocks[i].ptr);
  }
  if (leaked_blocks) *leaked_blocks = leaked;
  pthread_mutex_destroy(&p->mu);
  free(p->blocks);
  free(p);
}

static hd_status *alloc_locked(hd_pool *p, size_t bytes, void **out) {
  size_t size = round_size(bytes ? bytes : 1);
  /* best fit among cached blocks, wasting at most half */
  int best = -1;
  for (int i = 0; i < p->n; i++) {
    block *b = &p->blocks[i];
    if (b->live || b->size < size || b->size > 2 * size) continue;
    if (best < 0 || b->size < p->blocks[best].size) best = i;
  }
  if (best >= 0) {
    p->blocks[best].live = 1;
    p->stats.cached -= p->blocks[best].size;
    p->stats.in_use += p->blocks[best].size;
    *out = p->blocks[best].ptr;
    return NULL;
  }
  size_t limit = p->stats.limit;
  if (limit && p->stats.in_use + p->stats.cached + size > limit) release_cached(p);
  if (limit && p->stats.in_use + size > limit)
    return hd_error(HD_ERR_OUT_OF_MEMORY,
                    "device memory limit: %zu bytes requested, %zu of the %zu-byte gpu_mem_limit in use",
                    bytes, p->stats.in_use, limit);
  if (p->n == p->cap) {
    int ncap = p->cap ? p->cap * 2 : 64;
    block *nb = realloc(p->blocks, sizeof(block) * (size_t)ncap);
    if (!nb) return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory in the device pool");
    p->blocks = nb;
    p->cap = ncap;
  }
  void *ptr = NULL;
  hd_status *st = p->src.alloc(p->src.ctx, size, &ptr);
  if (st && p->stats.cached) { /* the cache may be what fills the device */
    hd_status_free(st);
    release_cached(p);
    st = p->src.alloc(p->src.ctx, size, &ptr);
  }
  if (st) return st;
  p->blocks[p->n++] = (block){ptr, size, 1};
  p->stats.in_use += size;
  p->stats.source_allocs++;
  *out = ptr;
  return NULL;
}

hd_status *hd_pool_alloc(hd_pool *p, size_t bytes, void **out) {
  *out = NULL;
  pthread_mutex_lock(&p->mu);
  hd_status *st = alloc_locked(p, bytes, out);
  if (st) p->stats.failures++;
  else p->stats.allocs++;
  size_t total = p->stats.in_use + p->stats.cached;
  if (total > p->stats.peak) p->stats.peak = total;
  pthread_mutex_unlock(&p->mu);
  return st;
}

void hd_pool_free(hd_pool *p, void *ptr) {
  if (!ptr) return;
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    if (p->blocks[i].ptr != ptr || !p->blocks[i].live) continue;
    p->blocks[i].live = 0;
    p->stats.in_use -= p->blocks[i].size;
    p->stats.cached += p->blocks[i].size;
    break;
  }
  pthread_mutex_unlock(&p->mu);
}

void hd_pool_shrink(hd_pool *p) {
  pthread_mutex_lock(&p->mu);
  release_cached(p);
  pthread_mutex_unlock(&p->mu);
}

void hd_pool_get_stats(hd_pool *p, hd_pool_stats *out) {
  pthread_mutex_lock(&p->mu);
  *out = p->stats;
  pthread_mutex_unlock(&p->mu);
}
