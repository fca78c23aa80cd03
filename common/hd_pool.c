#include "common/hd_pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_math.h"

/* Blocks are rounded to 512 bytes (small) or 2 MiB (large), the granules
 * device allocators work in, so near sizes share blocks. */
#define SMALL_ROUND 512u
#define LARGE_ROUND (2u << 20)
#define LARGE_MIN (1u << 20)
/* Streams a block remembers between its allocation and its free. */
#define MAX_USES 4
/* Free blocks are binned by floor(log2(size)): a request of size s fits
 * blocks of s..2s, which lie in its bin and the next. */
#define NBINS 64

typedef struct block_use {
  void *stream;
  void *event;  /* created on first need, kept for the block's life */
  int pending;  /* recorded at free; the work may not have finished */
} block_use;

typedef struct block {
  void *ptr;
  size_t size;
  int live;
  int quarantined; /* an event could not be recorded: never reused */
  int nuse;
  block_use use[MAX_USES];
  int prev, next;  /* the free list of its bin; -1 ends it */
} block;

struct hd_pool {
  hd_pool_source src;
  int streams;     /* the source has events */
  pthread_mutex_t mu;
  block *blocks;
  int n, cap;
  int *hash;       /* open addressing by ptr: block index + 1, 0 empty */
  size_t hcap;     /* a power of two, > 2 * cap */
  int bins[NBINS]; /* first free block of each bin, -1 none */
  hd_pool_stats stats;
};

static int round_size(size_t b, size_t *out) {
  return hd_align_size(b ? b : 1, b < LARGE_MIN ? SMALL_ROUND : LARGE_ROUND, out);
}

static int bin_of(size_t size) { return 63 - __builtin_clzll((unsigned long long)size); }

static size_t hash_ptr(const void *ptr, size_t hcap) {
  uint64_t x = (uint64_t)(uintptr_t)ptr;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (hcap - 1);
}

static int find(const hd_pool *p, const void *ptr) {
  if (!p->hcap) return -1;
  for (size_t h = hash_ptr(ptr, p->hcap);; h = (h + 1) & (p->hcap - 1)) {
    int i = p->hash[h] - 1;
    if (i < 0) return -1;
    if (p->blocks[i].ptr == ptr) return i;
  }
}

static void hash_insert(hd_pool *p, int i) {
  size_t h = hash_ptr(p->blocks[i].ptr, p->hcap);
  while (p->hash[h]) h = (h + 1) & (p->hcap - 1);
  p->hash[h] = i + 1;
}

static int rehash(hd_pool *p, size_t hcap) {
  int *nh = calloc(hcap, sizeof *nh);
  if (!nh) return 0;
  free(p->hash);
  p->hash = nh;
  p->hcap = hcap;
  for (int i = 0; i < p->n; i++) hash_insert(p, i);
  return 1;
}

static void bin_push(hd_pool *p, int i) {
  block *b = &p->blocks[i];
  int k = bin_of(b->size);
  b->prev = -1;
  b->next = p->bins[k];
  if (b->next >= 0) p->blocks[b->next].prev = i;
  p->bins[k] = i;
}

static void bin_remove(hd_pool *p, int i) {
  block *b = &p->blocks[i];
  if (b->prev >= 0) p->blocks[b->prev].next = b->next;
  else p->bins[bin_of(b->size)] = b->next;
  if (b->next >= 0) p->blocks[b->next].prev = b->prev;
  b->prev = b->next = -1;
}

/* Rebuilds the bins and the hash after blocks moved (release_cached). */
static void reindex(hd_pool *p) {
  for (int k = 0; k < NBINS; k++) p->bins[k] = -1;
  if (p->hcap) memset(p->hash, 0, p->hcap * sizeof *p->hash);
  for (int i = 0; i < p->n; i++) {
    if (p->hcap) hash_insert(p, i);
    if (!p->blocks[i].live && !p->blocks[i].quarantined) bin_push(p, i);
  }
}

hd_status *hd_pool_create(const hd_pool_source *src, size_t limit, hd_pool **out) {
  hd_pool *p;
  HD_ALLOC_OR_RETURN(p, 1);
  p->src = *src;
  p->streams = src->event_create && src->event_destroy && src->event_record && src->event_done && src->wait;
  p->stats.limit = limit;
  for (int k = 0; k < NBINS; k++) p->bins[k] = -1;
  pthread_mutex_init(&p->mu, NULL);
  *out = p;
  return NULL;
}

/* 1 when nothing queued before the block's free can still touch it, for a
 * user on `stream`: its own stream's work is ordered before the new use. */
static int ready_for(hd_pool *p, block *b, void *stream) {
  for (int u = 0; u < b->nuse; u++) {
    block_use *bu = &b->use[u];
    if (!bu->pending) continue;
    if (stream && bu->stream == stream) continue;
    if (!p->src.event_done(p->src.ctx, bu->event)) return 0;
    bu->pending = 0;
  }
  return 1;
}

/* Makes `stream` (or the host, for NULL) wait for every pending use. */
static hd_status *wait_uses(hd_pool *p, block *b, void *stream) {
  for (int u = 0; u < b->nuse; u++) {
    block_use *bu = &b->use[u];
    if (!bu->pending || (stream && bu->stream == stream)) continue;
    HD_TRY(p->src.wait(p->src.ctx, bu->event, stream));
    if (!stream) bu->pending = 0;
  }
  return NULL;
}

static void destroy_events(hd_pool *p, block *b) {
  for (int u = 0; u < MAX_USES; u++)
    if (b->use[u].event) p->src.event_destroy(p->src.ctx, b->use[u].event);
}

/* Gives a cached block back to the source; waits for its pending work first. */
static void release_block(hd_pool *p, block *b) {
  if (p->streams) {
    hd_status_free(wait_uses(p, b, NULL));
    destroy_events(p, b);
  }
  p->src.free(p->src.ctx, b->ptr);
}

static void release_cached(hd_pool *p) {
  int w = 0;
  for (int i = 0; i < p->n; i++) {
    if (p->blocks[i].live) {
      p->blocks[w++] = p->blocks[i];
      continue;
    }
    release_block(p, &p->blocks[i]);
    p->stats.cached -= p->blocks[i].size;
  }
  p->n = w;
  reindex(p);
}

void hd_pool_destroy(hd_pool *p, size_t *leaked_blocks) {
  if (!p) return;
  size_t leaked = 0;
  for (int i = 0; i < p->n; i++) {
    if (p->blocks[i].live) leaked++;
    release_block(p, &p->blocks[i]);
  }
  if (leaked_blocks) *leaked_blocks = leaked;
  pthread_mutex_destroy(&p->mu);
  free(p->blocks);
  free(p->hash);
  free(p);
}

/* The smallest cached block of size..2*size that `stream` may use now, or
 * -1; *waitable: the smallest one it could use after waiting. */
static int best_fit(hd_pool *p, size_t size, void *stream, int *waitable) {
  int best = -1;
  *waitable = -1;
  int k0 = bin_of(size);
  for (int k = k0; k <= k0 + 1 && k < NBINS; k++) {
    for (int i = p->bins[k]; i >= 0; i = p->blocks[i].next) {
      block *b = &p->blocks[i];
      if (b->size < size || b->size / 2 > size) continue;
      if (best >= 0 && b->size >= p->blocks[best].size) continue;
      if (!p->streams || ready_for(p, b, stream)) best = i;
      else if (*waitable < 0 || b->size < p->blocks[*waitable].size) *waitable = i;
    }
  }
  return best;
}

static void take(hd_pool *p, int i, void *stream, void **out) {
  block *b = &p->blocks[i];
  bin_remove(p, i);
  b->live = 1;
  b->nuse = 0;
  if (stream && p->streams) b->use[b->nuse++] = (block_use){stream, b->use[0].event, 0};
  p->stats.cached -= b->size;
  p->stats.in_use += b->size;
  *out = b->ptr;
}

static hd_status *grow_tables(hd_pool *p) {
  if (p->n == p->cap) {
    int ncap = p->cap ? p->cap * 2 : 64;
    block *nb = realloc(p->blocks, sizeof(block) * (size_t)ncap);
    if (!nb) return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory in the device pool");
    p->blocks = nb;
    p->cap = ncap;
  }
  if (p->hcap <= 2 * (size_t)p->cap && !rehash(p, 4 * (size_t)p->cap))
    return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory in the device pool");
  return NULL;
}

/* Reuses cached block i after making `stream` wait for its pending work. */
static int take_after_wait(hd_pool *p, int i, void *stream, void **out) {
  hd_status *st = wait_uses(p, &p->blocks[i], stream);
  if (st) {
    hd_status_free(st);
    return 0;
  }
  p->stats.stream_waits++;
  take(p, i, stream, out);
  return 1;
}

static hd_status *source_alloc(hd_pool *p, size_t size, void **ptr) {
  HD_TRY(grow_tables(p));
  return p->src.alloc(p->src.ctx, size, ptr);
}

static hd_status *alloc_locked(hd_pool *p, size_t bytes, void *stream, void **out) {
  size_t size;
  if (bytes > HD_POOL_MAX_BYTES || !round_size(bytes, &size))
    return hd_error(HD_ERR_OUT_OF_MEMORY, "device allocation of %zu bytes refused (too large)", bytes);
  int waitable = -1;
  int best = best_fit(p, size, stream, &waitable);
  if (best >= 0) {
    take(p, best, stream, out);
    return NULL;
  }
  size_t limit = p->stats.limit;
  if (limit && p->stats.in_use + p->stats.cached + size > limit) {
    /* No new memory under the limit: a block still in use by another
     * stream's queued work is better than dropping the cache. */
    if (waitable >= 0 && take_after_wait(p, waitable, stream, out)) return NULL;
    release_cached(p);
    waitable = -1;
    if (p->stats.in_use + size > limit)
      return hd_error(HD_ERR_OUT_OF_MEMORY,
                      "device memory limit: %zu bytes requested, %zu of the %zu-byte gpu_mem_limit in use",
                      bytes, p->stats.in_use, limit);
  }
  void *ptr = NULL;
  hd_status *st = source_alloc(p, size, &ptr);
  if (st && waitable >= 0 && take_after_wait(p, waitable, stream, out)) {
    hd_status_free(st);
    return NULL;
  }
  if (st && p->stats.cached) { /* the cache may be what fills the device */
    hd_status_free(st);
    release_cached(p);
    st = source_alloc(p, size, &ptr);
  }
  if (st) return st;
  block *b = &p->blocks[p->n];
  memset(b, 0, sizeof *b);
  b->ptr = ptr;
  b->size = size;
  b->live = 1;
  b->prev = b->next = -1;
  if (stream && p->streams) b->use[b->nuse++] = (block_use){stream, NULL, 0};
  hash_insert(p, p->n++);
  p->stats.in_use += size;
  p->stats.source_allocs++;
  *out = ptr;
  return NULL;
}

hd_status *hd_pool_alloc_on(hd_pool *p, size_t bytes, void *stream, void **out) {
  *out = NULL;
  pthread_mutex_lock(&p->mu);
  hd_status *st = alloc_locked(p, bytes, stream, out);
  if (st) p->stats.failures++;
  else p->stats.allocs++;
  size_t total = p->stats.in_use + p->stats.cached;
  if (total > p->stats.peak) p->stats.peak = total;
  pthread_mutex_unlock(&p->mu);
  return st;
}

hd_status *hd_pool_alloc(hd_pool *p, size_t bytes, void **out) { return hd_pool_alloc_on(p, bytes, NULL, out); }

int hd_pool_use(hd_pool *p, void *ptr, void *stream) {
  int rc = 0;
  pthread_mutex_lock(&p->mu);
  int i = find(p, ptr);
  if (i >= 0 && p->blocks[i].live) {
    block *b = &p->blocks[i];
    rc = 1;
    int known = !stream || !p->streams;
    for (int u = 0; u < b->nuse && !known; u++) known = b->use[u].stream == stream;
    if (!known) {
      if (b->nuse < MAX_USES) {
        b->use[b->nuse].stream = stream;
        b->use[b->nuse++].pending = 0;
      } else {
        rc = 2;
      }
    }
  }
  pthread_mutex_unlock(&p->mu);
  return rc;
}

void hd_pool_forget_stream(hd_pool *p, void *stream) {
  if (!stream || !p->streams) return;
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    block *b = &p->blocks[i];
    int w = 0;
    for (int u = 0; u < b->nuse; u++) {
      if (b->use[u].stream != stream) {
        block_use keep = b->use[u];
        b->use[u] = b->use[w]; /* swap: the dropped use's event stays for reuse */
        b->use[w++] = keep;
      } else {
        b->use[u].pending = 0;
        b->use[u].stream = NULL;
      }
    }
    b->nuse = w;
  }
  pthread_mutex_unlock(&p->mu);
}

void hd_pool_free(hd_pool *p, void *ptr) {
  if (!ptr) return;
  pthread_mutex_lock(&p->mu);
  int i = find(p, ptr);
  if (i >= 0 && p->blocks[i].live) {
    block *b = &p->blocks[i];
    b->live = 0;
    p->stats.in_use -= b->size;
    p->stats.cached += b->size;
    for (int u = 0; u < b->nuse; u++) {
      block_use *bu = &b->use[u];
      hd_status *st = bu->event ? NULL : p->src.event_create(p->src.ctx, &bu->event);
      if (!st) st = p->src.event_record(p->src.ctx, bu->event, bu->stream);
      if (st) { /* no way to know when the GPU is done with it: keep it out of use */
        hd_status_free(st);
        b->quarantined = 1;
      }
      bu->pending = !st;
    }
    if (!b->quarantined) bin_push(p, i);
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

void hd_pool_read_stats(hd_pool *p, void (*fn)(void *ctx, const hd_pool_stats *s), void *ctx) {
  pthread_mutex_lock(&p->mu);
  fn(ctx, &p->stats);
  pthread_mutex_unlock(&p->mu);
}
