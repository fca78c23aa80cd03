/* Comparing outputs and timing runs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/hd_dtype.h"
#include "tools/harness/harness.h"

/* Tolerances, |got - ref| <= atol + rtol * |ref|, for inputs uniform in
 * [-1, 1] as the harness fills them:
 * - fp32: a different summation order changes a dot product of K terms by
 *   about sqrt(K) * 2^-24 * |partial sums|; for K up to ~10^4 and outputs of
 *   magnitude up to ~30 that stays well under 1e-4 absolute.
 * - fp16: both sides round the final value to fp16 (2^-11 relative), and may
 *   round differently from fp32 sums that differ in the last bits: allow a
 *   few ulps (5e-3 relative) plus 2e-3 absolute for results near zero that
 *   come from cancellation.
 * - tf32: products of 10-bit-mantissa inputs err by ~2^-10 relative each,
 *   random signs add them like sqrt(K): 2e-2 absolute, 1e-2 relative.
 * - bf16: 8-bit mantissa: 2e-2 relative, 1e-2 absolute.
 * - integers: exact. */
hh_tol hh_tol_for(int dtype, int tf32) {
  hh_tol t = {0.0, 0.0};
  switch (dtype) {
    case HD_DT_F32: t = tf32 ? (hh_tol){2e-2, 1e-2} : (hh_tol){1e-4, 1e-4}; break;
    case HD_DT_F16: t = (hh_tol){2e-3, 5e-3}; break;
    case HD_DT_BF16: t = (hh_tol){1e-2, 2e-2}; break;
    case HD_DT_F64: t = (hh_tol){1e-10, 1e-10}; break;
    default: break;
  }
  return t;
}

static int hh_is_float(int dt) {
  return dt == HD_DT_F32 || dt == HD_DT_F16 || dt == HD_DT_BF16 || dt == HD_DT_F64;
}

static void unravel(const hh_tensor *t, size_t idx, int64_t *coord) {
  for (int d = t->rank - 1; d >= 0; d--) {
    int64_t dim = t->dims[d] > 0 ? t->dims[d] : 1;
    coord[d] = (int64_t)(idx % (size_t)dim);
    idx /= (size_t)dim;
  }
}

int hh_compare(const hh_tensor *got, const hh_tensor *ref, hh_tol tol, hh_cmp *out) {
  memset(out, 0, sizeof *out);
  out->rank = ref->rank;
  out->n = ref->n;
  /* Different float types are fine (an fp16 result against an fp32
   * reference): both are read as double. Anything else must match. */
  int both_float = hh_is_float(got->dtype) && hh_is_float(ref->dtype);
  if (got->dtype != ref->dtype && !both_float) {
    snprintf(out->why, sizeof out->why, "dtype %s vs reference %s", hd_dtype_name(got->dtype),
             hd_dtype_name(ref->dtype));
    return 0;
  }
  int same = got->rank == ref->rank;
  for (int i = 0; same && i < ref->rank; i++) same = got->dims[i] == ref->dims[i];
  if (!same) {
    char a[100] = "", b[100] = "";
    for (int i = 0; i < got->rank; i++)
      snprintf(a + strlen(a), sizeof a - strlen(a), "%s%lld", i ? "," : "", (long long)got->dims[i]);
    for (int i = 0; i < ref->rank; i++)
      snprintf(b + strlen(b), sizeof b - strlen(b), "%s%lld", i ? "," : "", (long long)ref->dims[i]);
    snprintf(out->why, sizeof out->why, "shape [%s] vs reference [%s]", a, b);
    return 0;
  }
  double worst_score = -1.0, diff2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < ref->n; i++) {
    double g = hh_tensor_get(got, i), r = hh_tensor_get(ref, i);
    double score; /* how far past tolerance: > 1 fails */
    if (!isfinite(g) || !isfinite(r)) {
      int match = (isnan(g) && isnan(r)) || (isinf(g) && isinf(r) && (g > 0) == (r > 0));
      if (!match) out->n_nonfinite_mismatch++;
      score = match ? 0.0 : INFINITY;
    } else {
      double d = fabs(g - r);
      diff2 += d * d;
      ref2 += r * r;
      double bound = tol.atol + tol.rtol * fabs(r);
      double rel = d / fmax(fabs(r), tol.atol > 0 ? tol.atol : 1e-30);
      if (d > out->max_abs) out->max_abs = d;
      if (rel > out->max_rel) out->max_rel = rel;
      score = bound > 0 ? d / bound : (d > 0 ? INFINITY : 0.0);
    }
    if (score > 1.0) out->n_bad++;
    if (score > worst_score) {
      worst_score = score;
      out->worst = i;
      out->worst_got = g;
      out->worst_ref = r;
    }
  }
  out->rel_l2 = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
  if (ref->n) unravel(ref, out->worst, out->worst_coord);
  out->pass = out->n_bad == 0;
  return out->pass;
}

void hh_cmp_print(const hh_cmp *c, hh_tol tol, FILE *f) {
  if (c->why[0]) {
    fprintf(f, "FAIL %s\n", c->why);
    return;
  }
  fprintf(f, "%s max_abs=%.3g max_rel=%.3g rel_l2=%.3g (atol=%.1g rtol=%.1g, %zu elements)", c->pass ? "PASS" : "FAIL",
          c->max_abs, c->max_rel, c->rel_l2, tol.atol, tol.rtol, c->n);
  if (!c->pass) {
    fprintf(f, " bad=%zu nonfinite_mismatch=%zu worst #%zu [", c->n_bad, c->n_nonfinite_mismatch, c->worst);
    for (int i = 0; i < c->rank; i++) fprintf(f, "%s%lld", i ? "," : "", (long long)c->worst_coord[i]);
    fprintf(f, "] got=%.9g ref=%.9g", c->worst_got, c->worst_ref);
  }
  fputc('\n', f);
}

/* ---- timing ---------------------------------------------------------------- */

double hh_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int hh_time_runs(hh_ort *h, OrtSession *s, const hh_tensor *inputs, size_t n_in, int warmup, int iters,
                 hh_timing *out) {
  const OrtApi *a = h->api;
  hh_io ins[64], outs[64];
  const char *in_names[64], *out_names[64];
  OrtValue *in_vals[64] = {0};
  size_t ni = 0, no = 0;
  double *t = NULL;
  int rc = 1;
  memset(out, 0, sizeof *out);
  if (iters < 1) iters = 1;
  if (hh_session_inputs(h, s, ins, 64, &ni) || hh_session_outputs(h, s, outs, 64, &no)) return 1;
  if (ni != n_in || ni > 64 || no > 64) return hh_fail(h, "timing: model has %zu inputs, %zu given", ni, n_in);
  t = malloc((size_t)iters * sizeof *t);
  if (!t) return hh_fail(h, "out of memory");
  for (size_t i = 0; i < ni; i++) {
    in_names[i] = ins[i].name;
    if (hh_tensor_to_value(h, &inputs[i], &in_vals[i])) goto done;
  }
  for (size_t i = 0; i < no; i++) out_names[i] = outs[i].name;
  for (int it = -warmup; it < iters; it++) {
    OrtValue *ov[64] = {0};
    double t0 = hh_now_ms();
    OrtStatus *st = a->Run(s, NULL, in_names, (const OrtValue *const *)in_vals, ni, out_names, no, ov);
    double t1 = hh_now_ms();
    for (size_t i = 0; i < no; i++)
      if (ov[i]) a->ReleaseValue(ov[i]);
    if (hh_check(h, st, "Run")) goto done;
    if (it >= 0) t[it] = t1 - t0;
  }
  qsort(t, (size_t)iters, sizeof *t, cmp_double);
  out->iters = iters;
  out->min_ms = t[0];
  out->median_ms = (iters % 2) ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]);
  /* p90: nearest rank (ceil(0.9 n)), the usual definition for small n. */
  int r90 = (int)ceil(0.9 * iters);
  out->p90_ms = t[(r90 < 1 ? 1 : r90) - 1];
  double sum = 0;
  for (int i = 0; i < iters; i++) sum += t[i];
  out->mean_ms = sum / iters;
  rc = 0;
done:
  for (size_t i = 0; i < ni; i++)
    if (in_vals[i]) a->ReleaseValue(in_vals[i]);
  free(t);
  return rc;
}
