/* cf_case: one ONNX node test case through ORT with our EP, classified.
 *
 * Order of decisions:
 *   1. the model's graph inputs/outputs must all be tensors, and the
 *      test_data_set_0 tensors readable in a dtype the harness holds;
 *      otherwise runner-unsupported;
 *   2. session with our EP (CPU EP as fallback); no node assigned to our EP
 *      -> not-claimed (the case is not run);
 *   3. run, compare every output_K.pb (cf_compare) -> pass or fail;
 *   4. when the EP session cannot be created or run, the same model runs
 *      with the CPU EP alone: if that fails too the case is ort-error,
 *      otherwise our EP broke it: fail.
 * Backend "cpu" skips our EP entirely: every case counts as claimed and the
 * CPU EP's outputs are compared, a self-test of the reader and comparator. */
#include "tools/conformance/cf_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tools/conformance/cf_compare.h"
#include "tools/conformance/cf_model.h"
#include "tools/conformance/cf_tensor.h"
#include "tools/harness/harness.h"

#define CF_MAX_IO 64

static const char *status_names[CF_N_STATUS] = {
  "pass", "fail", "not-claimed", "ort-error", "runner-unsupported", "crash", "timeout"};

const char *cf_status_name(int s) {
  return s >= 0 && s < CF_N_STATUS ? status_names[s] : "?";
}

int cf_status_parse(const char *name) {
  for (int s = 0; s < CF_N_STATUS; ++s)
    if (strcmp(name, status_names[s]) == 0) return s;
  return -1;
}

static void say(cf_result *r, int status, const char *fmt, const char *a, const char *b) {
  r->status = status;
  snprintf(r->detail, sizeof r->detail, fmt, a ? a : "", b ? b : "");
}

/* Test data of one case, as harness tensors. */
typedef struct case_data {
  hh_tensor in[CF_MAX_IO], exp[CF_MAX_IO];
  size_t n_in, n_exp;
} case_data;

static void data_free(case_data *d) {
  for (size_t i = 0; i < d->n_in; ++i) hh_tensor_free(&d->in[i]);
  for (size_t i = 0; i < d->n_exp; ++i) hh_tensor_free(&d->exp[i]);
  d->n_in = d->n_exp = 0;
}

int cf_read_set(const char *dir, const char *prefix, hh_tensor *out, size_t max, size_t *n, char *msg,
                size_t len) {
  char path[4096], err[512];
  *n = 0;
  for (size_t k = 0;; ++k) {
    snprintf(path, sizeof path, "%s/test_data_set_0/%s_%zu.pb", dir, prefix, k);
    FILE *f = fopen(path, "rb");
    if (!f) break;
    fclose(f);
    if (k >= max) { snprintf(msg, len, "more than %zu %ss", max, prefix); return 1; }
    cf_tensor t;
    int rc = cf_tensor_read(path, &t, err, sizeof err);
    if (rc == 2) { snprintf(msg, len, "%s", err); return 1; }
    if (rc) { snprintf(msg, len, "read error: %s", err); return 1; }
    if (hd_dtype_size(t.dtype) == 0 || t.rank > HH_MAX_RANK) {
      snprintf(msg, len, "harness cannot hold %s_%zu: %s tensor of rank %zu", prefix, k, cf_dtype_name(t.dtype),
               t.rank);
      cf_tensor_free(&t);
      return 1;
    }
    rc = hh_tensor_alloc(&out[k], t.dtype, (int)t.rank, t.dims);
    if (!rc && t.nbytes) memcpy(out[k].data, t.data, t.nbytes);
    cf_tensor_free(&t);
    if (rc) { snprintf(msg, len, "out of memory"); return 1; }
    *n = k + 1;
  }
  return 0;
}

/* cf_read_set into a case result: CF_UNSUPPORTED with the reason. */
static int read_set(const char *dir, const char *prefix, hh_tensor *out, size_t *n, cf_result *r) {
  char msg[600];
  if (!cf_read_set(dir, prefix, out, CF_MAX_IO, n, msg, sizeof msg)) return 0;
  say(r, CF_UNSUPPORTED, "%s", msg, NULL);
  return 1;
}

static int load_data(const char *dir, case_data *d, cf_result *r) {
  char path[4096], err[512];
  cf_model m;
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  if (cf_model_read(path, &m, err, sizeof err)) {
    say(r, CF_UNSUPPORTED, "read error: %s", err, NULL);
    return 1;
  }
  r->nodes = (int)m.n_nodes;
  static const char *kinds[] = {"tensor", "sequence", "optional", "non-tensor"};
  int bad = 0;
  for (size_t i = 0; i < m.n_inputs && !bad; ++i)
    if (m.input_kinds[i] != CF_KIND_TENSOR) {
      say(r, CF_UNSUPPORTED, "%s graph input", kinds[m.input_kinds[i]], NULL);
      bad = 1;
    }
  for (size_t i = 0; i < m.n_outputs && !bad; ++i)
    if (m.output_kinds[i] != CF_KIND_TENSOR) {
      say(r, CF_UNSUPPORTED, "%s graph output", kinds[m.output_kinds[i]], NULL);
      bad = 1;
    }
  cf_model_free(&m);
  if (bad) return 1;
  if (read_set(dir, "input", d->in, &d->n_in, r) || read_set(dir, "output", d->exp, &d->n_exp, r)) {
    data_free(d);
    return 1;
  }
  if (d->n_exp == 0) {
    say(r, CF_UNSUPPORTED, "no output_0.pb", NULL, NULL);
    data_free(d);
    return 1;
  }
  return 0;
}

/* A cf_tensor view (no copy) of a harness tensor. */
static cf_tensor view(const hh_tensor *t) {
  cf_tensor v = {0};
  v.dtype = t->dtype;
  v.rank = (size_t)t->rank;
  v.dims = (int64_t *)t->dims;
  v.count = t->n;
  v.nbytes = t->n * hd_dtype_size(t->dtype);
  v.data = t->data;
  v.name = (char *)"";
  return v;
}

/* Compares outputs against the expected ones; 0 = all match, otherwise 1
 * with the first mismatch in msg. */
static int compare_all(const char *name, const case_data *d, const hh_tensor *outs, int tf32, char *msg,
                       size_t len) {
  double rtol, atol;
  cf_tolerance(name, &rtol, &atol);
  for (size_t k = 0; k < d->n_exp; ++k) {
    cf_tensor a = view(&outs[k]), e = view(&d->exp[k]);
    if (tf32 && d->exp[k].dtype == HD_DT_F32) {
      double top = 0;
      for (size_t i = 0; i < d->exp[k].n; ++i) {
        double v = fabs(hh_tensor_get(&d->exp[k], i));
        if (v > top && v < HUGE_VAL) top = v;
      }
      cf_tolerance_tf32(top, &rtol, &atol);
    }
    char why[800];
    if (cf_compare(&a, &e, rtol, atol, why, sizeof why)) {
      snprintf(msg, len, "output %zu: %s", k, why);
      return 1;
    }
  }
  return 0;
}

/* Runs the model with the CPU EP alone. 0 = it ran (outs filled), 1 = it
 * failed (reason in h->err). */
static int run_cpu(hh_ort *h, const cf_config *cfg, const char *model, const case_data *d,
                   hh_tensor *outs) {
  hh_session_cfg sc = {0};
  sc.intra_threads = cfg->intra_threads;
  OrtSession *s = NULL;
  if (hh_session_create(h, &sc, NULL, model, &s)) return 1;
  int rc = hh_session_run(h, s, d->in, d->n_in, outs, d->n_exp);
  hh_session_free(h, s);
  return rc;
}

static void free_outs(hh_tensor *outs, size_t n) {
  for (size_t i = 0; i < n; ++i) hh_tensor_free(&outs[i]);
}

/* Our EP failed with ep_err: ort-error if the CPU EP alone fails as well,
 * else fail. */
static void ep_failed(hh_ort *h, const cf_config *cfg, const char *model, const case_data *d,
                      const char *stage, const char *ep_err, cf_result *r) {
  static hh_tensor outs[CF_MAX_IO];
  char msg[600];
  snprintf(msg, sizeof msg, "%s", ep_err);
  if (run_cpu(h, cfg, model, d, outs)) {
    say(r, CF_ORT_ERROR, "CPU EP: %s", hh_err(h), NULL);
    return;
  }
  free_outs(outs, d->n_exp);
  r->status = CF_FAIL;
  snprintf(r->detail, sizeof r->detail, "with our EP, %s failed (CPU EP alone runs it): %s",
           stage, msg);
}

static int open_ort(const cf_config *cfg, hh_ort *h, hh_target *t, char *msg, size_t len) {
  if (hh_ort_open(h, cfg->ort_lib)) {
    snprintf(msg, len, "loading ONNX Runtime: %s", hh_err(h));
    return 1;
  }
  if (strcmp(cfg->backend, "cpu") == 0) {
    memset(t, 0, sizeof *t);
    snprintf(t->backend, sizeof t->backend, "cpu");
    return 0;
  }
  if (hh_ep_register(h, cfg->ep_lib)) {
    snprintf(msg, len, "registering the EP: %s", hh_err(h));
    hh_ort_close(h);
    return 1;
  }
  if (hh_target_pick(h, cfg->backend, t)) {
    snprintf(msg, len, "picking the %s device: %s", cfg->backend, hh_err(h));
    hh_ort_close(h);
    return 1;
  }
  return 0;
}

int cf_case_preflight(const cf_config *cfg, char *version, size_t vlen, char *msg, size_t mlen) {
  static hh_ort h;
  hh_target t;
  if (open_ort(cfg, &h, &t, msg, mlen)) return 1;
  snprintf(version, vlen, "%s", hh_ort_version(&h));
  snprintf(msg, mlen, "%s", t.backend);
  hh_ort_close(&h);
  return 0;
}

void cf_case_run(const cf_config *cfg, const char *dir, const char *name, cf_result *r) {
  static case_data d;   /* large: keep off the stack */
  static hh_tensor outs[CF_MAX_IO];
  static hh_ort h;
  char model[4096], msg[800];
  memset(r, 0, sizeof *r);
  r->ep_nodes = -1;
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  if (load_data(dir, &d, r)) return;

  hh_target t;
  if (open_ort(cfg, &h, &t, msg, sizeof msg)) {
    say(r, CF_CRASH, "%s", msg, NULL); /* not the case's fault, but never a pass */
    data_free(&d);
    return;
  }
  snprintf(r->device, sizeof r->device, "%s", t.backend);

  if (strcmp(cfg->backend, "cpu") == 0) {
    r->ep_nodes = r->nodes;
    if (run_cpu(&h, cfg, model, &d, outs)) {
      say(r, CF_ORT_ERROR, "CPU EP: %s", hh_err(&h), NULL);
    } else {
      r->status = compare_all(name, &d, outs, 0, r->detail, sizeof r->detail) ? CF_FAIL : CF_PASS;
      free_outs(outs, d.n_exp);
    }
    goto out;
  }

  /* On a GPU the mode is explicit: strict (use_tf32=0) unless asked for TF32. */
  const char *keys[] = {"backend", "use_tf32"};
  const char *vals[] = {t.backend, cfg->tf32 ? "1" : "0"};
  int tf32 = t.is_gpu && cfg->tf32;
  hh_session_cfg sc = {0};
  sc.dev = t.dev;
  sc.keys = keys;
  sc.vals = vals;
  sc.n_opts = t.is_gpu ? 2 : 1;
  sc.intra_threads = cfg->intra_threads;
  OrtSession *s = NULL;
  if (hh_session_create(&h, &sc, NULL, model, &s)) {
    snprintf(msg, sizeof msg, "%s", hh_err(&h));
    ep_failed(&h, cfg, model, &d, "session creation", msg, r);
    goto out;
  }
  hh_assign a;
  if (hh_assignment(&h, s, &a)) {
    say(r, CF_FAIL, "reading the node assignment: %s", hh_err(&h), NULL);
    hh_session_free(&h, s);
    goto out;
  }
  r->ep_nodes = hh_assign_count(&a, HH_EP_NAME, NULL);
  hh_assign_free(&a);
  if (r->ep_nodes == 0) {
    r->status = CF_NOT_CLAIMED;
    hh_session_free(&h, s);
    goto out;
  }
  int rc = hh_session_run(&h, s, d.in, d.n_in, outs, d.n_exp);
  hh_session_free(&h, s);
  if (rc) {
    snprintf(msg, sizeof msg, "%s", hh_err(&h));
    ep_failed(&h, cfg, model, &d, "the run", msg, r);
    goto out;
  }
  if (!compare_all(name, &d, outs, tf32, msg, sizeof msg)) {
    r->status = CF_PASS;
    free_outs(outs, d.n_exp);
    goto out;
  }
  free_outs(outs, d.n_exp);
  /* Wrong. Say whether the CPU EP gets it right, to help whoever fixes it. */
  r->status = CF_FAIL;
  const char *cpu = "CPU EP alone: fails to run";
  char cmp[8];
  if (!run_cpu(&h, cfg, model, &d, outs)) {
    cpu = compare_all(name, &d, outs, 0, cmp, sizeof cmp) ? "CPU EP alone: also differs"
                                                     : "CPU EP alone: matches";
    free_outs(outs, d.n_exp);
  }
  snprintf(r->detail, sizeof r->detail, "%s (%s)", msg, cpu);
out:
  hh_ort_close(&h);
  data_free(&d);
}
