/* hd_math: checked arithmetic for sizes and shapes, and the hard limits the
 * IR lives within (SQLite's SQLITE_MAX_* habit: one place says how big
 * anything may be, and every size computed from model data is checked).
 * The checked helpers return 0 and leave *out unchanged on overflow. */
#ifndef HD_MATH_H
#define HD_MATH_H

#include <stddef.h>
#include <stdint.h>

/* Elements in one tensor, and any one dim (2^40: 1 TiB of bytes). */
#define HD_MAX_NUMEL ((int64_t)1 << 40)
/* Kernel sizes, strides, dilations and pads of convolutions and pools. */
#define HD_MAX_WINDOW ((int64_t)1 << 20)

static inline int hd_mul_size(size_t a, size_t b, size_t *out) {
  size_t r;
  if (__builtin_mul_overflow(a, b, &r)) return 0;
  *out = r;
  return 1;
}

static inline int hd_add_size(size_t a, size_t b, size_t *out) {
  size_t r;
  if (__builtin_add_overflow(a, b, &r)) return 0;
  *out = r;
  return 1;
}

static inline int hd_mul_i64(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return 0;
  *out = r;
  return 1;
}

static inline int hd_add_i64(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return 0;
  *out = r;
  return 1;
}

/* x rounded up to a multiple of align (> 0); 0 on overflow. */
static inline int hd_align_size(size_t x, size_t align, size_t *out) {
  size_t r;
  if (!hd_add_size(x, align - 1, &r)) return 0;
  *out = r / align * align;
  return 1;
}

#endif
