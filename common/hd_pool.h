/* hd_pool: a caching allocator over a raw source (cudaMalloc, hipMalloc).
 * Freed blocks are kept and reused for requests of similar size, so steady
 * runs allocate nothing from the device; hd_pool_shrink gives the cache
 * back. A byte limit covers cached and live blocks; when a request would
 * pass it the cache is released first, then the request fails cleanly.
 *
 * Streams. Device work is asynchronous: when a block is freed, kernels
 * queued on a stream may still read or write it. A block remembers the
 * streams it was used on (the one it was allocated on, and any recorded
 * with hd_pool_use); freeing it records an event on each. The block is then
 * handed out again only to the same stream (stream order protects it), or
 * once those events have completed, or — when nothing else fits — after the
 * new user's stream is made to wait on them. Without event callbacks in the
 * source (host memory, tests) streams are ignored. */
#ifndef HD_POOL_H
#define HD_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "common/hd_status.h"

typedef struct hd_pool hd_pool;

/* free must not return while queued work may still use the block (cudaFree
 * and hipFree synchronize): a block whose event could not be recorded is
 * given back that way. */
typedef struct hd_pool_source {
  void *ctx;
  hd_status *(*alloc)(void *ctx, size_t bytes, void **p);
  void (*free)(void *ctx, void *p);
  /* Optional, all or none: events that order reuse after queued work.
   * event_done: 1 when the work before the record has finished, else 0.
   * wait: stream NULL waits on the host; else the stream waits on the GPU. */
  hd_status *(*event_create)(void *ctx, void **ev);
  void (*event_destroy)(void *ctx, void *ev);
  hd_status *(*event_record)(void *ctx, void *ev, void *stream);
  int (*event_done)(void *ctx, void *ev);
  hd_status *(*wait)(void *ctx, void *ev, void *stream);
} hd_pool_source;

typedef struct hd_pool_stats {
  size_t in_use;        /* bytes handed out */
  size_t cached;        /* bytes held for reuse */
  size_t peak;          /* most bytes in use + cached at once */
  size_t limit;         /* 0: none */
  uint64_t allocs;      /* hd_pool_alloc calls that succeeded */
  uint64_t source_allocs; /* of those, how many reached the source */
  uint64_t failures;    /* requests refused (limit or source out of memory) */
  uint64_t stream_waits; /* reuses that had to wait for another stream's work */
} hd_pool_stats;

/* The largest request a pool takes (far beyond any device; keeps the size
 * arithmetic from overflowing). */
#define HD_POOL_MAX_BYTES ((size_t)1 << 50)

hd_status *hd_pool_create(const hd_pool_source *src, size_t limit, hd_pool **out);
/* Frees every cached block; live blocks are reported as a leak count. */
void hd_pool_destroy(hd_pool *p, size_t *leaked_blocks);
/* stream: where the block will be used first (NULL: the caller orders its
 * own uses, or it is host memory). */
hd_status *hd_pool_alloc(hd_pool *p, size_t bytes, void **out);
hd_status *hd_pool_alloc_on(hd_pool *p, size_t bytes, void *stream, void **out);
/* Records that live block ptr (the pointer an alloc returned) is used on
 * stream: its free will wait for that stream's work. 0 if ptr is not a
 * live block of this pool; 1 recorded (or known); 2 the block tracks its
 * most streams already: the caller must order the use itself (sync). */
int hd_pool_use(hd_pool *p, void *ptr, void *stream);
/* Forgets stream, which the caller has synced and is about to destroy: no
 * event is ever recorded on it again. */
void hd_pool_forget_stream(hd_pool *p, void *stream);
void hd_pool_free(hd_pool *p, void *ptr);
void hd_pool_shrink(hd_pool *p);
void hd_pool_get_stats(hd_pool *p, hd_pool_stats *out);
/* Calls fn(ctx, stats) while no allocation or free can change the pool: a
 * reader that adds up what it holds in the pool gets one consistent view.
 * fn runs under the pool's lock, so it must not allocate from or free to a
 * pool, nor wait on anything that does. */
void hd_pool_read_stats(hd_pool *p, void (*fn)(void *ctx, const hd_pool_stats *s), void *ctx);

#endif
