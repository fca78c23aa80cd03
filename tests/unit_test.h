/* A tiny assertion vocabulary for the CPU unit tests (no ORT). */
#ifndef UNIT_TEST_H
#define UNIT_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "common/hd_status.h"

static int ut_failures, ut_checks; /* per test program */

#define UT_CHECK(cond)                                                          \
  do {                                                                          \
    ut_checks++;                                                                \
    if (!(cond)) {                                                              \
      ut_failures++;                                                            \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
    }                                                                           \
  } while (0)

#define UT_OK(expr)                                                                         \
  do {                                                                                      \
    hd_status *ut_st_ = (expr);                                                             \
    ut_checks++;                                                                            \
    if (ut_st_) {                                                                           \
      ut_failures++;                                                                        \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, hd_status_msg(ut_st_)); \
      hd_status_free(ut_st_);                                                               \
    }                                                                                       \
  } while (0)

/* UT_CHECK with a printf message, on stdout beside the test's own lines. */
#define UT_CHECKF(cond, ...)                                      \
  do {                                                            \
    ut_checks++;                                                  \
    if (!(cond)) {                                                \
      ut_failures++;                                              \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                 \
      printf(__VA_ARGS__);                                        \
      printf("\n");                                               \
    }                                                             \
  } while (0)

/* Expects an error of the given code; frees it. */
#define UT_ERR(expr, code)                                                                   \
  do {                                                                                       \
    hd_status *ut_st_ = (expr);                                                              \
    ut_checks++;                                                                             \
    if (hd_status_code(ut_st_) != (code)) {                                                  \
      ut_failures++;                                                                         \
      fprintf(stderr, "%s:%d: %s: expected error %d, got %d (%s)\n", __FILE__, __LINE__, #expr, \
              (int)(code), (int)hd_status_code(ut_st_), hd_status_msg(ut_st_));              \
    }                                                                                        \
    hd_status_free(ut_st_);                                                                  \
  } while (0)

/* |got - ref| for tolerance checks that cannot miss a NaN: a non-finite
 * value on either side must be matched exactly on the other (NaN by NaN,
 * an infinity by the same infinity), else *mismatch is set (and stays set).
 * Matched non-finite pairs count as 0. */
static inline double ut_diff(double got, double ref, int *mismatch) {
  int gf = got == got && got - got == 0, rf = ref == ref && ref - ref == 0; /* finite? */
  if (gf && rf) return got > ref ? got - ref : ref - got;
  int same = (got != got && ref != ref) || got == ref; /* both NaN, or the same infinity */
  if (!same) *mismatch = 1;
  return 0.0;
}

static inline int ut_finish(const char *name) {
  printf("%s: %d checks, %d failed\n", name, ut_checks, ut_failures);
  return ut_failures ? 1 : 0;
}

#endif
