/* test_stress: one session run from many threads, with more input shapes
 * than the plan cache holds, while a second session runs beside it. Every
 * output is checked against the same input run alone (itself checked
 * against the CPU EP), and the whole test has a deadline: a hang fails it.
 *
 * The model (hh_residual_block_model): a residual block with dynamic batch
 * and spatial dims,
 *   X -> Conv3x3+B -> Relu -> Conv3x3+B -> Add(X) -> Relu -> Y
 *   Y -> GlobalAveragePool -> P
 * so a plan has intermediates in its arena, fusions and two outputs.
 * Session A: default options (GPU: graph capture on), 8 threads over 40
 * shapes (the cache keeps 32: plans are evicted while others run them).
 * Session B: enable_cuda_graph=0, 4 threads over 6 shapes, at the same time.
 *
 *   test_stress [--threads N] [--iters N]   (ref backend; GPU with
 *                                            HIPDNN_EP_TEST_BACKEND=auto) */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

#define C 8
#define NCASES_A 40
#define NCASES_B 6

static int failures;

/* Case i of a session: its shape, seeded input, output alone on the EP
 * (checked against the CPU EP: the references must be right and carry
 * signal, or the test proves nothing). */
static int make_case(hh_ort *h, OrtSession *s_ep, OrtSession *s_cpu, hh_case *k, int64_t n, int64_t hw,
                     uint64_t seed, const char *what) {
  int64_t d[4] = {n, C, hw, hw + 1};
  k->n_in = 1;
  k->n_out = 2;
  k->items = n;
  if (hh_tensor_alloc(&k->in[0], HD_DT_F32, 4, d)) return 1;
  hh_tensor_fill_random(&k->in[0], seed);
  if (hh_case_reference(h, s_ep, k)) {
    fprintf(stderr, "FAIL %s [%lld,%d,%lld,%lld]: run alone: %s\n", what, (long long)n, C, (long long)hw,
            (long long)hw + 1, hh_err(h));
    return 1;
  }
  hh_tensor cpu[2];
  if (hh_session_run(h, s_cpu, k->in, 1, cpu, 2)) {
    fprintf(stderr, "FAIL %s: CPU EP: %s\n", what, hh_err(h));
    return 1;
  }
  for (int o = 0; o < 2; o++) {
    hh_cmp cmp;
    hh_tol tol = {.atol = 1e-4, .rtol = 1e-4};
    hh_compare(&k->ref[o], &cpu[o], tol, &cmp);
    double top = 0;
    for (size_t e = 0; e < cpu[o].n; e++) top = fmax(top, fabs(hh_tensor_get(&cpu[o], e)));
    HT_CHECK(cmp.pass, "%s output %d at batch %lld, %lldx%lld: alone vs CPU EP max abs %g", what, o,
             (long long)n, (long long)hw, (long long)hw + 1, cmp.max_abs);
    HT_CHECK(top > 0.05, "%s output %d carries no signal (max |y| = %g)", what, o, top);
    hh_tensor_free(&cpu[o]);
  }
  return 0;
}

static int open_session(hh_ort *h, const hh_target *t, hh_model *m, int graphs, OrtSession **s) {
  const char *keys[3], *vals[3];
  size_t nk = 0;
  if (!t->is_gpu) keys[nk] = "backend", vals[nk++] = "ref";
  if (!graphs) keys[nk] = "enable_cuda_graph", vals[nk++] = "0";
  hh_session_cfg cfg = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = nk, .disable_cpu_fallback = 1};
  if (hh_session_create(h, &cfg, hh_model_ort(m), NULL, s)) {
    fprintf(stderr, "FAIL: session: %s\n", hh_err(h));
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  int threads = 8, iters = 40;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--iters")) iters = atoi(argv[i + 1]);
  }
  hh_ort h;
  hh_target t;
  int rc = ht_setup(&h, &t);
  if (rc) return rc;
  hh_model *m = NULL;
  OrtSession *sa = NULL, *sb = NULL, *scpu = NULL;
  static hh_case ca[NCASES_A], cb[NCASES_B];
  hh_session_cfg cpu_cfg = {0};
  if (hh_residual_block_model(&h, C, -1, &m, NULL) || open_session(&h, &t, m, 1, &sa) || open_session(&h, &t, m, 0, &sb) ||
      hh_session_create(&h, &cpu_cfg, hh_model_ort(m), NULL, &scpu)) {
    fprintf(stderr, "FAIL: setup: %s\n", hh_err(&h));
    failures++;
    goto done;
  }
  /* A: batch 1-2 x 20 spatial sizes = 40 shapes; B: 6 others. */
  for (int i = 0; i < NCASES_A && !failures; i++)
    if (make_case(&h, sa, scpu, &ca[i], 1 + i % 2, 4 + i / 2, 100 + (uint64_t)i, "session A")) failures++;
  for (int i = 0; i < NCASES_B && !failures; i++)
    if (make_case(&h, sb, scpu, &cb[i], 1 + i % 3, 5 + 3 * i, 900 + (uint64_t)i, "session B")) failures++;
  if (failures) goto done;

  hh_stress_cfg cfg_a = {.threads = threads, .iters = iters, .tol = {.atol = 1e-5, .rtol = 1e-5}, .timeout_s = 300};
  hh_stress_cfg cfg_b = cfg_a;
  cfg_b.threads = threads / 2 ? threads / 2 : 1;
  hh_stress *ja = NULL, *jb = NULL;
  hh_stress_result ra, rb;
  if (hh_stress_start(&h, sa, ca, NCASES_A, &cfg_a, &ja) || hh_stress_start(&h, sb, cb, NCASES_B, &cfg_b, &jb)) {
    fprintf(stderr, "FAIL: %s\n", hh_err(&h));
    return 1; /* threads may be running: no cleanup */
  }
  hh_stress_wait(ja, cfg_a.timeout_s, &ra);
  hh_stress_wait(jb, cfg_b.timeout_s, &rb);
  printf("session A (%d shapes, plan cache evicting): ", NCASES_A);
  hh_stress_print(&ra, cfg_a.threads, stdout);
  printf("session B (%d shapes, beside A): ", NCASES_B);
  hh_stress_print(&rb, cfg_b.threads, stdout);
  if (ra.hung || rb.hung) {
    fprintf(stderr, "FAIL: a run hung\n");
    fflush(stdout);
    _exit(1);
  }
  HT_CHECK(ra.wrong == 0 && ra.errors == 0, "session A: %ld wrong, %ld errors", ra.wrong, ra.errors);
  HT_CHECK(rb.wrong == 0 && rb.errors == 0, "session B: %ld wrong, %ld errors", rb.wrong, rb.errors);
  HT_CHECK(ra.runs == (long)cfg_a.threads * iters && rb.runs == (long)cfg_b.threads * iters,
           "runs done: %ld and %ld", ra.runs, rb.runs);

done:
  for (int i = 0; i < NCASES_A; i++) hh_case_free(&ca[i]);
  for (int i = 0; i < NCASES_B; i++) hh_case_free(&cb[i]);
  hh_session_free(&h, sa);
  hh_session_free(&h, sb);
  hh_session_free(&h, scpu);
  hh_model_free(m);
  hh_ort_close(&h);
  printf("test_stress: %s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
