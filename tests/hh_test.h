/* Small helpers shared by the ORT-level tests: open ORT, register the EP, pick
 * the device (ref here, a GPU under HIPDNN_EP_TEST_BACKEND=auto), and the
 * provider options that go with it. Header-only: each test is one program. */
#ifndef HH_TEST_H
#define HH_TEST_H

#include <stdio.h>
#include <string.h>

#include "tools/harness/harness.h"

#define HT_CHECK(cond, ...)                                          \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                  \
      fputc('\n', stderr);                                           \
      failures++;                                                    \
    }                                                                \
  } while (0)

/* Opens ORT, registers the EP and picks the device per the environment.
 * Returns 0, HH_SKIP (a GPU was asked for and none is listed; prints the SKIP
 * line; h is closed) or 1 (error printed; h is closed). On 0, h must be
 * closed. */
static inline int ht_setup(hh_ort *h, hh_target *t) {
  if (hh_ort_open(h, NULL)) {
    fprintf(stderr, "FAIL: %s\n", hh_err(h));
    return 1;
  }
  printf("ONNX Runtime %s (%s)\n", hh_ort_version(h), h->ort_lib);
  if (hh_ep_register(h, NULL)) {
    fprintf(stderr, "FAIL: %s\n", hh_err(h));
    hh_ort_close(h);
    return 1;
  }
  int rc = hh_target_pick(h, NULL, t);
  if (rc == HH_SKIP) {
    printf("SKIP: no GPU device listed\n");
    hh_ort_close(h);
    return HH_SKIP;
  }
  if (rc) {
    fprintf(stderr, "FAIL: %s\n", hh_err(h));
    hh_ort_close(h);
    return 1;
  }
  printf("device: %s backend=%s\n", HH_EP_NAME, t->backend);
  return 0;
}

/* Provider options for the target: backend=ref for the ref device; on a GPU,
 * use_tf32=0 so fp32 results can be held to fp32 tolerances. */
static inline size_t ht_ep_opts(const hh_target *t, const char **keys, const char **vals) {
  if (t->is_gpu) {
    keys[0] = "use_tf32";
    vals[0] = "0";
  } else {
    keys[0] = "backend";
    vals[0] = "ref";
  }
  return 1;
}

/* The session pair of a table-driven case: m under ep_cfg, the reference
 * model mr on the CPU EP, and where ORT placed m's nodes. Returns 1 after
 * printing "FAIL <name>: ..." when any step fails (the caller frees what was
 * made), else 0. */
static inline int ht_open_pair(hh_ort *h, const hh_session_cfg *ep_cfg, hh_model *m, hh_model *mr,
                               const char *name, OrtSession **s_ep, OrtSession **s_ref,
                               hh_assign *a) {
  hh_session_cfg cpu_cfg = {0};
  if (hh_session_create(h, ep_cfg, hh_model_ort(m), NULL, s_ep)) {
    fprintf(stderr, "FAIL %s: session with %s: %s\n", name, HH_EP_NAME, hh_err(h));
    return 1;
  }
  if (hh_session_create(h, &cpu_cfg, hh_model_ort(mr), NULL, s_ref)) {
    fprintf(stderr, "FAIL %s: CPU EP session: %s\n", name, hh_err(h));
    return 1;
  }
  if (hh_assignment(h, *s_ep, a)) {
    fprintf(stderr, "FAIL %s: %s\n", name, hh_err(h));
    return 1;
  }
  return 0;
}

/* Frees what ht_open_pair made, and both models (any may be NULL/empty). */
static inline void ht_close_pair(hh_ort *h, hh_assign *a, OrtSession *s_ep, OrtSession *s_ref,
                                 hh_model *m, hh_model *mr) {
  hh_assign_free(a);
  hh_session_free(h, s_ep);
  hh_session_free(h, s_ref);
  hh_model_free(m);
  hh_model_free(mr);
}

/* Compares y with the reference at dtype's tolerance; on a mismatch prints
 * "FAIL <what>: " and the worst element. Returns 1 when they match. */
static inline int ht_check_close_at(const hh_tensor *y, const hh_tensor *ref, hh_tol tol, const char *what) {
  hh_cmp c;
  hh_compare(y, ref, tol, &c);
  if (!c.pass) {
    fprintf(stderr, "FAIL %s: ", what);
    hh_cmp_print(&c, tol, stderr);
  }
  return c.pass;
}
static inline int ht_check_close(const hh_tensor *y, const hh_tensor *ref, int dtype, const char *what) {
  return ht_check_close_at(y, ref, hh_tol_for(dtype, 0), what);
}

/* Runs the one input x on s_ep and on the CPU EP's session s_cpu (first
 * output of each) and compares at tol: prints "  <what>: PASS ..." or the
 * FAIL line with the worst element, or "FAIL <what>: ..." when a run fails.
 * Returns 1 when both ran and match. */
static inline int ht_run_against_cpu(hh_ort *h, OrtSession *s_ep, OrtSession *s_cpu, const hh_tensor *x,
                                     hh_tol tol, const char *what) {
  hh_tensor y = {0}, yr = {0};
  int pass = 0;
  if (hh_session_run(h, s_ep, x, 1, &y, 1)) {
    fprintf(stderr, "FAIL %s: run with the EP: %s\n", what, hh_err(h));
  } else if (hh_session_run(h, s_cpu, x, 1, &yr, 1)) {
    fprintf(stderr, "FAIL %s: run on the CPU EP: %s\n", what, hh_err(h));
  } else {
    hh_cmp c;
    hh_compare(&y, &yr, tol, &c);
    printf("  %s: ", what);
    hh_cmp_print(&c, tol, stdout);
    pass = c.pass;
  }
  hh_tensor_free(&y);
  hh_tensor_free(&yr);
  return pass;
}

/* ---- table-driven tests: the flags, the run loop, the summary ---- */

/* Parses --filter SUBSTRING, --list and one optional extra flag (NULL: none;
 * *extra set to 1 when given). Returns 0, or 2 after printing the usage. */
static inline int ht_parse_args(int argc, char **argv, const char *extra_flag, int *extra,
                                const char **filter, int *list) {
  *filter = NULL;
  *list = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
      *filter = argv[++i];
    } else if (strcmp(argv[i], "--list") == 0) {
      *list = 1;
    } else if (extra_flag && strcmp(argv[i], extra_flag) == 0) {
      *extra = 1;
    } else {
      fprintf(stderr, "usage: %s [--filter SUBSTRING] [--list]%s%s%s\n", argv[0], extra_flag ? " [" : "",
              extra_flag ? extra_flag : "", extra_flag ? "]" : "");
      return 2;
    }
  }
  return 0;
}

/* Runs the cases whose names contain filter, printing one line each and a
 * summary. run(i, user) returns 1 when case i passed. Returns 0 when every
 * case that ran passed and at least one ran, else 1. */
static inline int ht_run_cases(const char *what, size_t n, const char *(*name)(size_t i),
                               int (*run)(size_t i, void *user), void *user, const char *filter) {
  int ran = 0, passed = 0;
  double t0 = hh_now_ms();
  for (size_t i = 0; i < n; i++) {
    if (filter && !strstr(name(i), filter)) continue;
    ran++;
    double c0 = hh_now_ms();
    int ok = run(i, user);
    passed += ok;
    printf("%s %-34s %7.1f ms\n", ok ? "ok  " : "FAIL", name(i), hh_now_ms() - c0);
  }
  printf("%d/%d %s cases passed (%.1f s)\n", passed, ran, what, (hh_now_ms() - t0) / 1e3);
  if (ran == 0) fprintf(stderr, "FAIL: no case matches filter '%s'\n", filter ? filter : "");
  return ran > 0 && passed == ran ? 0 : 1;
}

/* The main of a table-driven test over ORT: the flags, --list, setup, the
 * run loop and its summary; run(h, t, i) returns 1 when case i passed.
 * Returns what main returns but for the caller's own failure count: 0, 1,
 * 2 (usage) or HH_SKIP. */
typedef struct ht_main_ctx {
  hh_ort *h;
  hh_target *t;
  int (*run)(hh_ort *h, hh_target *t, size_t i);
} ht_main_ctx;

static inline int ht_main_case(size_t i, void *user) {
  ht_main_ctx *c = user;
  return c->run(c->h, c->t, i);
}

static inline int ht_main(int argc, char **argv, const char *what, size_t n, const char *(*name)(size_t i),
                          int (*run)(hh_ort *h, hh_target *t, size_t i)) {
  const char *filter;
  int list;
  if (ht_parse_args(argc, argv, NULL, NULL, &filter, &list)) return 2;
  if (list) {
    for (size_t i = 0; i < n; i++) printf("%s\n", name(i));
    return 0;
  }
  hh_ort h;
  hh_target t = {0};
  int rc = ht_setup(&h, &t);
  if (rc) return rc;
  ht_main_ctx c = {&h, &t, run};
  rc = ht_run_cases(what, n, name, ht_main_case, &c, filter);
  hh_ort_close(&h);
  return rc;
}

#endif
