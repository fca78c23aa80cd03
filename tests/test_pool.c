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

int main(void) {
  fake_source src = {.capacity = 64u << 20};
  hd_pool_source ps = {&src, fake_alloc, fake_free};
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
  hd_pool_source ps2 = {&tiny, fake_alloc, fake_free};
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
