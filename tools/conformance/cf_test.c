/* cf_test: unit checks of the runner's reader and comparator (no ORT).
 * Usage: cf_test CASES_DIR  (reads test_abs and test_cast_FLOAT_to_FLOAT16). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tools/conformance/cf_compare.h"
#include "tools/conformance/cf_tensor.h"

static int failures;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                     \
    }                                                                 \
  } while (0)

static cf_tensor make(int32_t dtype, size_t n) {
  cf_tensor t;
  int64_t dims[1] = {(int64_t)n};
  cf_tensor_alloc(&t, dtype, 1, dims);
  return t;
}

static int cmp1(int32_t dtype, double got, double exp) {
  cf_tensor a = make(dtype, 1), e = make(dtype, 1);
  if (dtype == CF_FLOAT) { ((float *)a.data)[0] = (float)got; ((float *)e.data)[0] = (float)exp; }
  if (dtype == CF_DOUBLE) { ((double *)a.data)[0] = got; ((double *)e.data)[0] = exp; }
  if (dtype == CF_FLOAT16) {
    ((uint16_t *)a.data)[0] = hd_f32_to_f16((float)got);
    ((uint16_t *)e.data)[0] = hd_f32_to_f16((float)exp);
  }
  char msg[512];
  int r = cf_compare(&a, &e, 1e-3, 1e-7, msg, sizeof msg);
  cf_tensor_free(&a);
  cf_tensor_free(&e);
  return r;
}

int main(int argc, char **argv) {
  /* assert_allclose: |a - e| <= atol + rtol * |e| */
  CHECK(cmp1(CF_FLOAT, 1.0009, 1.0) == 0);
  CHECK(cmp1(CF_FLOAT, 1.0011, 1.0) == 1);
  CHECK(cmp1(CF_DOUBLE, 1e-7, 0.0) == 0);
  CHECK(cmp1(CF_DOUBLE, 2e-7, 0.0) == 1);
  CHECK(cmp1(CF_FLOAT, NAN, NAN) == 0);
  CHECK(cmp1(CF_FLOAT, NAN, 1.0) == 1);
  CHECK(cmp1(CF_FLOAT, 1.0, NAN) == 1);
  CHECK(cmp1(CF_FLOAT, INFINITY, INFINITY) == 0);
  CHECK(cmp1(CF_FLOAT, -INFINITY, INFINITY) == 1);
  CHECK(cmp1(CF_FLOAT, 3.4e38, INFINITY) == 1);
  /* float16: one ulp at 1.0 is 2^-10 ~ 9.8e-4 <= rtol 1e-3 (in half): passes */
  CHECK(cmp1(CF_FLOAT16, 1.0 + 1.0 / 1024, 1.0) == 0);
  CHECK(cmp1(CF_FLOAT16, 1.0 + 2.0 / 1024, 1.0) == 1);

  /* integers exactly, beyond double's 53 bits */
  cf_tensor a = make(CF_INT64, 1), e = make(CF_INT64, 1);
  ((int64_t *)a.data)[0] = (1ll << 53) + 1;
  ((int64_t *)e.data)[0] = 1ll << 53;
  char msg[512];
  CHECK(cf_compare(&a, &e, 1e-3, 1e-7, msg, sizeof msg) == 1);
  ((int64_t *)a.data)[0] = 1ll << 53;
  CHECK(cf_compare(&a, &e, 1e-3, 1e-7, msg, sizeof msg) == 0);
  cf_tensor_free(&a);
  cf_tensor_free(&e);

  /* shape and dtype must match */
  a = make(CF_FLOAT, 2);
  e = make(CF_FLOAT, 3);
  CHECK(cf_compare(&a, &e, 1e-3, 1e-7, msg, sizeof msg) == 1 && strstr(msg, "shape"));
  cf_tensor_free(&e);
  e = make(CF_DOUBLE, 2);
  CHECK(cf_compare(&a, &e, 1e-3, 1e-7, msg, sizeof msg) == 1 && strstr(msg, "dtype"));
  cf_tensor_free(&a);
  cf_tensor_free(&e);

  /* sub-byte packing: int4 low nibble first, sign-extended */
  a = make(CF_INT4, 3);
  ((unsigned char *)a.data)[0] = 0x9f; /* elem0 = 0xf = -1, elem1 = 0x9 = -7 */
  ((unsigned char *)a.data)[1] = 0x07; /* elem2 = 7 */
  CHECK(a.nbytes == 2);
  CHECK(cf_tensor_get_i64(&a, 0) == -1 && cf_tensor_get_i64(&a, 1) == -7 &&
        cf_tensor_get_i64(&a, 2) == 7);
  cf_tensor_free(&a);

  /* .pb reading */
  if (argc > 1) {
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/test_abs/test_data_set_0/input_0.pb", argv[1]);
    cf_tensor t;
    CHECK(cf_tensor_read(path, &t, err, sizeof err) == 0);
    if (!failures) {
      CHECK(t.dtype == CF_FLOAT && t.rank == 3 && t.dims[0] == 3 && t.dims[1] == 4 &&
            t.dims[2] == 5 && t.count == 60 && t.nbytes == 240);
      cf_tensor_free(&t);
    }
    snprintf(path, sizeof path, "%s/test_strnormalizer_export_monday_casesensintive_lower/test_data_set_0/input_0.pb",
             argv[1]);
    CHECK(cf_tensor_read(path, &t, err, sizeof err) == 2); /* string: unsupported */
  }
  if (failures) fprintf(stderr, "cf_test: %d check(s) failed\n", failures);
  else printf("cf_test: all checks passed\n");
  return failures != 0;
}
