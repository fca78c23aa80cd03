/* hd_pool: a caching allocator over a raw source (cudaMalloc, hipMalloc).
 * Freed blocks are kept and reused for requests of similar size, so steady
 * runs allocate nothing from the device; hd_pool_shrink gives the cache
 * back. A byte limit covers cached and live blocks; when a request would
 * pass it the cache is released first, then the request fails cleanly. */
#ifndef HD_POOL_H
#define HD_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "common/hd_status.h"

typedef struct hd_pool hd_pool;

typedef struct hd_pool_source {
  void *ctx;
  hd_status *(*alloc)(void *ctx, size_t bytes, void **p);
  void (*free)(void *ctx, void *p);
} hd_pool_source;

typedef struct hd_pool_stats {
  size_t in_use;        /* bytes handed out */
  size_t cached;        /* bytes held for reuse */
  size_t peak;          /* most bytes in use + cached at once */
  size_t limit;         /* 0: none */
  uint64_t allocs;      /* hd_pool_alloc calls that succeeded */
  uint64_t source_allocs; /* of those, how many reached the source */
  uint64_t failures;    /* requests refused (limit or source out of memory) */
} hd_pool_stats;

hd_status *hd_pool_create(const hd_pool_source *src, size_t limit, hd_pool **out);
/* Frees every cached block; live blocks are reported as a leak count. */
void hd_pool_destroy(hd_pool *p, size_t *leaked_blocks);
hd_status *hd_pool_alloc(hd_pool *p, size_t bytes, void **out);
void hd_pool_free(hd_pool *p, void *ptr);
void hd_pool_shrink(hd_pool *p);
void hd_pool_get_stats(hd_pool *p, hd_pool_stats *out);

#endif
