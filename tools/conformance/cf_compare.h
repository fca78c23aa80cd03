/* cf_compare: is an output tensor what an ONNX node test expects? */
#ifndef CF_COMPARE_H
#define CF_COMPARE_H

#include <stddef.h>

#include "tools/conformance/cf_tensor.h"

/* The tolerances of ONNX's backend test runner for the named case
 * (e.g. "test_abs"): rtol 1e-3, atol 1e-7 unless overridden. */
void cf_tolerance(const char *case_name, double *rtol, double *atol);

/* TF32 mode (fp32 matmuls and convolutions on TF32 tensor cores, 10-bit
 * mantissa operands, fp32 accumulation): each product carries a relative
 * error up to 2^-10, so a sum of many terms is off by up to about 1e-3 of
 * the terms' magnitude, whatever the result's. The rule: |a - e| <= 1e-2 |e|
 * + 1e-3 max|e| over the output. Given expected's max |e|. */
void cf_tolerance_tf32(double max_abs_expected, double *rtol, double *atol);

/* Compares actual against expected. Returns 0 when they match, otherwise 1
 * with a one-line reason in msg (shape, dtype, or the element count that
 * differs, the first differing element and the largest difference). */
int cf_compare(const cf_tensor *actual, const cf_tensor *expected, double rtol,
               double atol, char *msg, size_t msglen);

#endif
