/* cf_compare: output comparison with the rule of ONNX's backend test runner.
 *
 * The rule, as read in onnx/onnx (onnx/backend/test/runner/__init__.py,
 * Runner.assert_similar_outputs, and onnx/backend/test/case/node/__init__.py
 * where every node TestCase is built): the number of outputs must agree;
 * for each output the shape must be equal, then the dtype, then the values
 * are checked with numpy.testing.assert_allclose(actual, expected, rtol, atol)
 * (string tensors with exact equality instead). rtol and atol come from the
 * case's TestCase: node test cases are all built with rtol=1e-3, atol=1e-7,
 * and a backend may pass per-test overrides as keyword arguments (the
 * loader also reads rtol/atol from a case folder's data.json; the node
 * folders have none). assert_allclose treats NaN as equal to NaN, needs
 * infinities to sit at the same places with the same sign, and elsewhere
 * asks |actual - expected| <= atol + rtol * |expected|.
 *
 * numpy evaluates that inequality in the arrays' own dtype (the Python
 * float tolerances do not promote a float32 or float16 array), so float32
 * outputs are compared in float arithmetic, float16 ones with each step
 * rounded to half (numpy computes half ops in float and rounds), and
 * bfloat16 ones (ml_dtypes arrays, since ONNX 1.15's numpy_helper) rounded
 * to bfloat16 the same way. This file does the same.
 *
 * For integer and bool outputs assert_allclose with atol=1e-7 is exact
 * equality; here they are compared exactly as integers (no rounding through
 * double for 64-bit values). The 8-, 4- and 2-bit float formats are compared
 * exactly by value (NaN equal to NaN): numpy would compute in those formats,
 * where rtol=1e-3 rounds to at most one unit in the last place of the
 * smallest numbers; exact comparison is the stricter reading. */
#include "tools/conformance/cf_compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/hd_dtype.h"

/* Per-case tolerance overrides, the equivalent of a backend's per-test
 * keyword arguments. Each entry must say why it is there. */
static const struct { const char *name; double rtol, atol; } overrides[] = {
  {NULL, 0, 0},
};

void cf_tolerance(const char *case_name, double *rtol, double *atol) {
  *rtol = 1e-3;
  *atol = 1e-7;
  for (size_t i = 0; overrides[i].name; ++i)
    if (strcmp(overrides[i].name, case_name) == 0) {
      *rtol = overrides[i].rtol;
      *atol = overrides[i].atol;
    }
}

void cf_tolerance_tf32(double max_abs_expected, double *rtol, double *atol) {
  *rtol = 1e-2;
  *atol = 1e-7 + 1e-3 * max_abs_expected;
}

static int is_int_type(int32_t t) {
  switch (t) {
  case CF_UINT8: case CF_INT8: case CF_UINT16: case CF_INT16: case CF_INT32:
  case CF_INT64: case CF_BOOL: case CF_UINT32: case CF_UINT64: case CF_UINT4:
  case CF_INT4: case CF_UINT2: case CF_INT2:
    return 1;
  default:
    return 0;
  }
}

static int is_unsigned(int32_t t) {
  return t == CF_UINT8 || t == CF_UINT16 || t == CF_UINT32 || t == CF_UINT64 ||
         t == CF_UINT4 || t == CF_UINT2;
}

/* Rounds a value to the output dtype's precision (float16/bfloat16 through
 * float, as numpy and ml_dtypes do). */
static double rnd(int32_t t, double v) {
  switch (t) {
  case CF_FLOAT: return (float)v;
  case CF_FLOAT16: return hd_f16_to_f32(hd_f32_to_f16((float)v));
  case CF_BFLOAT16: return hd_bf16_to_f32(hd_f32_to_bf16((float)v));
  default: return v;
  }
}

/* One element of assert_allclose in dtype t. */
static int close_enough(int32_t t, double x, double y, double rtol, double atol) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  if (isinf(x) || isinf(y)) return x == y;
  if (t == CF_FLOAT) {
    float d = fabsf((float)x - (float)y);
    float tol = (float)atol + (float)rtol * fabsf((float)y);
    return d <= tol;
  }
  if (t == CF_DOUBLE) return fabs(x - y) <= atol + rtol * fabs(y);
  if (t == CF_FLOAT16 || t == CF_BFLOAT16) {
    /* each operand and each result rounded to the dtype, as numpy does */
    double d = fabs(rnd(t, x - y));
    double tol = rnd(t, rnd(t, atol) + rnd(t, rnd(t, rtol) * fabs(y)));
    return d <= tol;
  }
  return x == y; /* 8-, 4-, 2-bit floats: exact */
}

static void index_str(const cf_tensor *t, size_t flat, char *buf, size_t len) {
  size_t pos = 0;
  buf[0] = 0;
  pos += (size_t)snprintf(buf + pos, len - pos, "[");
  /* unravel row-major */
  size_t idx[16] = {0};
  size_t r = t->rank < 16 ? t->rank : 16;
  for (size_t d = r; d-- > 0;) {
    size_t dim = t->dims[d] > 0 ? (size_t)t->dims[d] : 1;
    idx[d] = flat % dim;
    flat /= dim;
  }
  for (size_t d = 0; d < r && pos < len; ++d)
    pos += (size_t)snprintf(buf + pos, len - pos, d ? ",%zu" : "%zu", idx[d]);
  if (pos < len) snprintf(buf + pos, len - pos, "]");
}

static void shape_str(const cf_tensor *t, char *buf, size_t len) {
  size_t pos = (size_t)snprintf(buf, len, "(");
  for (size_t d = 0; d < t->rank && pos < len; ++d)
    pos += (size_t)snprintf(buf + pos, len - pos, d ? ",%lld" : "%lld", (long long)t->dims[d]);
  if (pos < len) snprintf(buf + pos, len - pos, ")");
}

int cf_compare(const cf_tensor *a, const cf_tensor *e, double rtol, double atol,
               char *msg, size_t msglen) {
  int same_shape = a->rank == e->rank;
  for (size_t d = 0; same_shape && d < a->rank; ++d) same_shape = a->dims[d] == e->dims[d];
  if (!same_shape) {
    char sa[128], se[128];
    shape_str(a, sa, sizeof sa);
    shape_str(e, se, sizeof se);
    snprintf(msg, msglen, "shape %s, expected %s", sa, se);
    return 1;
  }
  if (a->dtype != e->dtype) {
    snprintf(msg, msglen, "dtype %s, expected %s", cf_dtype_name(a->dtype),
             cf_dtype_name(e->dtype));
    return 1;
  }
  size_t bad = 0, first = 0;
  double worst = 0;
  int integer = is_int_type(e->dtype), uns = is_unsigned(e->dtype);
  for (size_t i = 0; i < e->count; ++i) {
    int ok;
    if (integer) {
      ok = uns ? cf_tensor_get_u64(a, i) == cf_tensor_get_u64(e, i)
               : cf_tensor_get_i64(a, i) == cf_tensor_get_i64(e, i);
    } else {
      double x = cf_tensor_get_f64(a, i), y = cf_tensor_get_f64(e, i);
      ok = close_enough(e->dtype, x, y, rtol, atol);
      if (!ok) {
        double diff = (isnan(x) || isnan(y) || isinf(x) || isinf(y)) ? INFINITY : fabs(x - y);
        if (diff > worst) worst = diff;
      }
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (!bad) return 0;
  char at[128];
  index_str(e, first, at, sizeof at);
  if (integer) {
    if (uns)
      snprintf(msg, msglen, "%zu of %zu %s elements differ; first at %s: got %llu, expected %llu",
               bad, e->count, cf_dtype_name(e->dtype), at,
               (unsigned long long)cf_tensor_get_u64(a, first),
               (unsigned long long)cf_tensor_get_u64(e, first));
    else
      snprintf(msg, msglen, "%zu of %zu %s elements differ; first at %s: got %lld, expected %lld",
               bad, e->count, cf_dtype_name(e->dtype), at,
               (long long)cf_tensor_get_i64(a, first), (long long)cf_tensor_get_i64(e, first));
  } else {
    snprintf(msg, msglen,
             "%zu of %zu %s elements differ (rtol %g, atol %g); first at %s: got %.9g, "
             "expected %.9g; max abs diff %.3g",
             bad, e->count, cf_dtype_name(e->dtype), rtol, atol, at,
             cf_tensor_get_f64(a, first), cf_tensor_get_f64(e, first), worst);
  }
  return 1;
}
