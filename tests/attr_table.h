/* op_attrs over a small table, for unit tests that parse nodes without ORT
 * (test_fuse, test_backend_cuda). */
#ifndef ATTR_TABLE_H
#define ATTR_TABLE_H

#include <stdio.h>
#include <string.h>

#include "ops/ops.h"

typedef struct attr {
  const char *name;
  int n; /* ints count; -1 scalar int; -2 scalar float; -3 string */
  int64_t i[8];
  float f;
  const char *s;
} attr;

typedef struct attr_table {
  const attr *a;
  int n;
} attr_table;

static inline const attr *attr_find(void *ctx, const char *name) {
  attr_table *t = ctx;
  for (int k = 0; k < t->n; k++)
    if (strcmp(t->a[k].name, name) == 0) return &t->a[k];
  return NULL;
}

static inline hd_status *at_int(void *ctx, const char *name, int64_t *v, int *found) {
  const attr *a = attr_find(ctx, name);
  *found = a && a->n == -1;
  if (*found) *v = a->i[0];
  return NULL;
}

static inline hd_status *at_float(void *ctx, const char *name, float *v, int *found) {
  const attr *a = attr_find(ctx, name);
  *found = a && a->n == -2;
  if (*found) *v = a->f;
  return NULL;
}

static inline hd_status *at_ints(void *ctx, const char *name, int64_t *v, int max, int *n, int *found) {
  const attr *a = attr_find(ctx, name);
  *found = a && a->n >= 0;
  *n = *found ? a->n : 0;
  for (int k = 0; *found && k < a->n && k < max; k++) v[k] = a->i[k];
  return NULL;
}

static inline hd_status *at_floats(void *ctx, const char *name, float *v, int max, int *n, int *found) {
  (void)ctx, (void)name, (void)v, (void)max;
  *n = 0;
  *found = 0;
  return NULL;
}

static inline hd_status *at_string(void *ctx, const char *name, char *buf, size_t cap, int *found) {
  const attr *a = attr_find(ctx, name);
  *found = a && a->n == -3;
  if (*found) snprintf(buf, cap, "%s", a->s);
  return NULL;
}

/* The op_attrs reading table t. */
static inline hd_status *at_tensor(void *ctx, const char *name, int *dtype, int64_t *numel, void *buf, size_t cap,
                                   int *found) {
  (void)ctx, (void)name, (void)dtype, (void)numel, (void)buf, (void)cap;
  *found = 0; /* the tables hold no tensors */
  return NULL;
}

static inline op_attrs attr_table_reader(attr_table *t) {
  op_attrs a = {t, at_int, at_float, at_ints, at_floats, at_string, at_tensor};
  return a;
}

#endif
