/* Unit tests of the caching device pool over a fake source. */
#include <stdint.h>
#include <string.h>

#include "common/hd_pool.h"
#include "tests/unit_test.h"

typedef struct fake_source {
  size_t capacity, used;
  int live;
} fake_source;

static hd_status *fake_alloc(void *ctx, size_t bytes, void **p) {
  fake_source *s = ctx;
  if (s->used + bytes > s->capacity) return hd_error(HD_ERR_OUT_OF_MEMORY, "fake device full");
  size_t *blk = malloc(bytes + sizeof(size_t));
  if (!blk) return hd_error(HD_ERR_OUT_OF_MEMORY, "host");
  blk[0] = bytes;
  s->used += bytes;
  s->live++;
  *p = blk + 1;
  return NULL;
}

static void fake_free(void *ctx, void *p) {
  fake_source *s = ctx;
  size_t *blk = (size_t *)p - 1;
  s->used -= blk[0];
  s->live--;
  free(blk);
}

/* ---- a simulated GPU for the stream rules ----
 * Streams are small integers cast to pointers. Each stream has a counter of
 * work queued and of work finished; an event remembers the queued count of
 * its stream at record time and is done once the finished count reaches it.
 * The test finishes work by hand, so "still running" is under its control. */
#define NSTREAMS 5
typedef struct fake_gpu {
  long queued[NSTREAMS + 1], finished[NSTREAMS + 1];
  int events_live;
  int host_waits, gpu_waits;
  long waited_for[NSTREAMS + 1]; /* per stream: work it waits on (gpu waits) */
  int destroyed[NSTREAMS + 1];   /* recording on a destroyed stream is a bug */
} fake_gpu;
static fake_gpu gpu;

typedef struct fake_event {
  int stream;
  long at;
} fake_event;

#define S(i) ((void *)(intptr_t)(i))
static int sid(void *s) { return (int)(intptr_t)s; }

static hd_status *ev_create(void *ctx, void **ev) {
  (void)ctx;
  *ev = calloc(1, sizeof(fake_event));
  gpu.events_live++;
  return *ev ? NULL : hd_error(HD_ERR_OUT_OF_MEMORY, "host");
}
static void ev_destroy(void *ctx, void *ev) {
  (void)ctx;
  gpu.events_live--;
  free(ev);
}
static hd_status *ev_record(void *ctx, void *ev, void *stream) {
  (void)ctx;
  fake_event *e = ev;
  e->stream = sid(stream);
  UT_CHECK(!gpu.destroyed[e->stream]);
  e->at = gpu.queued[e->stream];
  return NULL;
}
static int ev_done(void *ctx, void *ev) {
  (void)ctx;
  fake_event *e = ev;
  return gpu.finished[e->stream] >= e->at;
}
static hd_status *ev_wait(void *ctx, void *ev, void *stream) {
  (void)ctx;
  fake_event *e = ev;
  if (!stream) { /* the host waits: the work finishes */
    gpu.host_waits++;
    if (gpu.finished[e->stream] < e->at) gpu.finished[e->stream] = e->at;
  } else {
    gpu.gpu_waits++;
    gpu.waited_for[sid(stream)] = e->at;
  }
  return NULL;
}
static void launch(int stream) { gpu.queued[stream]++; }
static void finish_all(int stream) { gpu.finished[stream] = gpu.queued[stream]; }

static void test_streams(void) {
  fake_source src = {.capacity = 64u << 20};
  hd_pool_source ps = {.ctx = &src, .alloc = fake_alloc, .free = fake_free, .event_create = ev_create,
                       .event_destroy = ev_destroy, .event_record = ev_record, .event_done = ev_done,
                       .wait = ev_wait};
  hd_pool *pool;
  UT_OK(hd_pool_create(&ps, 0, &pool));

  /* A block freed while stream 1 still has work on it: stream 2 gets fresh
   * memory, stream 1 (stream order) gets the block back at once. */
  void *a = NULL, *b = NULL, *c = NULL;
  UT_OK(hd_pool_alloc_on(pool, 4096, S(1), &a));
  launch(1); /* a kernel reads a */
  hd_pool_free(pool, a);
  UT_OK(hd_pool_alloc_on(pool, 4096, S(2), &b));
  UT_CHECK(b != a);
  UT_OK(hd_pool_alloc_on(pool, 4096, S(1), &c));
  UT_CHECK(c == a);
  hd_pool_free(pool, b);
  hd_pool_free(pool, c);

  /* Once stream 1's work is done, anyone may reuse its blocks. */
  finish_all(1);
  void *d = NULL;
  UT_OK(hd_pool_alloc_on(pool, 4096, S(3), &d));
  UT_CHECK(d == a || d == b);
  hd_pool_free(pool, d);

  /* A block used on a second stream (hd_pool_use) waits for both. */
  void *e = NULL, *f = NULL;
  UT_OK(hd_pool_alloc_on(pool, 1u << 20, S(1), &e));
  UT_CHECK(hd_pool_use(pool, e, S(2)) == 1);
  UT_CHECK(hd_pool_use(pool, (char *)e + 16, S(2)) == 0); /* not a block start */
  launch(1);
  launch(2);
  hd_pool_free(pool, e);
  finish_all(1); /* stream 2 still reads e */
  UT_OK(hd_pool_alloc_on(pool, 1u << 20, S(3), &f));
  UT_CHECK(f != e);
  hd_pool_free(pool, f);
  finish_all(2);
  finish_all(3);

  /* Host allocations (no stream) take only blocks no queued work touches. */
  void *g = NULL, *h = NULL;
  UT_OK(hd_pool_alloc_on(pool, 8192, S(1), &g));
  launch(1);
  hd_pool_free(pool, g);
  UT_OK(hd_pool_alloc(pool, 8192, &h));
  UT_CHECK(h != g);
  hd_pool_free(pool, h);
  finish_all(1);

  /* Under the limit, reuse of a busy block waits on the GPU instead of
   * failing: stream 2 is made to wait for stream 1's event. */
  hd_pool_stats st;
  hd_pool_get_stats(pool, &st);
  hd_pool_shrink(pool);
  hd_pool *lim;
  UT_OK(hd_pool_create(&ps, 4u << 20, &lim));
  void *x = NULL, *y = NULL;
  UT_OK(hd_pool_alloc_on(lim, 3u << 20, S(1), &x));
  launch(1);
  hd_pool_free(lim, x);
  int waits = gpu.gpu_waits;
  UT_OK(hd_pool_alloc_on(lim, 3u << 20, S(2), &y));
  UT_CHECK(y == x);
  UT_CHECK(gpu.gpu_waits == waits + 1 && gpu.waited_for[2] == gpu.queued[1]);
  hd_pool_get_stats(lim, &st);
  UT_CHECK(st.stream_waits == 1);
  /* the host waits for pending work before giving memory back */
  launch(2);
  hd_pool_free(lim, y);
  int hw = gpu.host_waits;
  hd_pool_shrink(lim);
  UT_CHECK(gpu.host_waits > hw && gpu.finished[2] == gpu.queued[2]);

  /* A block tracks at most 4 streams; a fifth use asks the caller to sync. */
  void *m = NULL;
  UT_OK(hd_pool_alloc_on(pool, 4096, S(1), &m));
  for (int s = 2; s <= 4; s++) UT_CHECK(hd_pool_use(pool, m, S(s)) == 1);
  UT_CHECK(hd_pool_use(pool, m, S(3)) == 1); /* known already */
  UT_CHECK(hd_pool_use(pool, m, S(5)) == 2);
  /* A stream destroyed while a block remembers it (a tensor that outlives
   * its session): once forgotten, the free records nothing on it. */
  launch(4);
  finish_all(4); /* the owner syncs before destroying */
  hd_pool_forget_stream(pool, S(4));
  gpu.destroyed[4] = 1;
  UT_CHECK(hd_pool_use(pool, m, S(5)) == 1); /* its slot is free again */
  hd_pool_free(pool, m);
  for (int s = 1; s <= NSTREAMS; s++) finish_all(s);
  gpu.destroyed[4] = 0;

  size_t leaked = 1;
  hd_pool_destroy(lim, &leaked);
  UT_CHECK(leaked == 0);
  hd_pool_destroy(pool, &leaked);
  UT_CHECK(leaked == 0);
  UT_CHECK(src.live == 0 && gpu.events_live == 0);
}

/* Many blocks of many sizes: every lookup and every free finds its block
 * (the hash and the size bins stay consistent through shrinks). */
static void test_many(void) {
  fake_source src = {.capacity = (size_t)1 << 40};
  hd_pool_source ps = {.ctx = &src, .alloc = fake_alloc, .free = fake_free};
  hd_pool *pool;
  UT_OK(hd_pool_create(&ps, 0, &pool));
  enum { N = 3000 };
  static void *ptrs[N];
  uint32_t r = 7;
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++) {
      r = r * 1103515245u + 12345u;
      UT_OK(hd_pool_alloc(pool, 1 + (r >> 8) % (3u << 20), &ptrs[i]));
    }
    for (int i = 0; i < N; i += 2) hd_pool_free(pool, ptrs[i]);
    if (round == 1) hd_pool_shrink(pool);
    for (int i = 1; i < N; i += 2) hd_pool_free(pool, ptrs[i]);
  }
  hd_pool_stats st;
  hd_pool_get_stats(pool, &st);
  UT_CHECK(st.in_use == 0);
  UT_CHECK(st.source_allocs < 3 * N); /* later rounds reused cached blocks */
  /* a request too large for size arithmetic is refused, not wrapped */
  void *huge = NULL;
  UT_ERR(hd_pool_alloc(pool, (size_t)-1, &huge), HD_ERR_OUT_OF_MEMORY);
  size_t leaked = 1;
  hd_pool_destroy(pool, &leaked);
  UT_CHECK(leaked == 0 && src.live == 0);
}

int main(void) {
  test_streams();
  test_many();
  fake_source src = {.capacity = 64u << 20};
  hd_pool_source ps = {.ctx = &src, .alloc = fake_alloc, .free = fake_free};
  hd_pool *pool;
  UT_OK(hd_pool_create(&ps, 16u << 20, &pool));

  /* reuse: a freed block serves the next request of similar size */
  void *a = NULL, *b = NULL;
  UT_OK(hd_pool_alloc(pool, 1000, &a));
  hd_pool_free(pool, a);
  UT_OK(hd_pool_alloc(pool, 900, &b));
  UT_CHECK(a == b);
  hd_pool_stats st;
  hd_pool_get_stats(pool, &st);
  UT_CHECK(st.source_allocs == 1 && st.allocs == 2);
  hd_pool_free(pool, b);

  /* limit: a request past gpu_mem_limit fails cleanly and the pool still works */
  void *big = NULL;
  UT_ERR(hd_pool_alloc(pool, 17u << 20, &big), HD_ERR_OUT_OF_MEMORY);
  UT_CHECK(big == NULL);
  UT_OK(hd_pool_alloc(pool, 8u << 20, &big));
  hd_pool_get_stats(pool, &st);
  UT_CHECK(st.failures == 1 && st.in_use >= (8u << 20));

  /* cached blocks are released to make room under the limit */
  hd_pool_free(pool, big);
  void *other = NULL;
  UT_OK(hd_pool_alloc(pool, 12u << 20, &other)); /* 8 MiB cached + 12 > 16: cache dropped first */
  hd_pool_free(pool, other);

  /* shrink gives everything cached back to the source */
  hd_pool_shrink(pool);
  hd_pool_get_stats(pool, &st);
  UT_CHECK(st.cached == 0 && st.in_use == 0);
  UT_CHECK(src.live == 0 && src.used == 0);

  /* source out of memory (no limit hit) is a status too */
  hd_pool *p2;
  fake_source tiny = {.capacity = 4096};
  hd_pool_source ps2 = {.ctx = &tiny, .alloc = fake_alloc, .free = fake_free};
  UT_OK(hd_pool_create(&ps2, 0, &p2));
  void *x = NULL;
  UT_ERR(hd_pool_alloc(p2, 1u << 20, &x), HD_ERR_OUT_OF_MEMORY);
  size_t leaked = 0;
  hd_pool_destroy(p2, &leaked);
  UT_CHECK(leaked == 0);

  void *live = NULL;
  UT_OK(hd_pool_alloc(pool, 100, &live));
  hd_pool_destroy(pool, &leaked);
  UT_CHECK(leaked == 1);
  UT_CHECK(src.live == 0);
  return ut_finish("test_pool");
}
