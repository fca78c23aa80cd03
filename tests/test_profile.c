/* test_profile: the EP's per-step profile, written while several threads
 * run one session, and its memory figures.
 *
 * The model (hh_residual_block_model, dynamic batch):
 *   X -> conv1 -> relu1 -> conv2 -> residual Add(X) -> relu2 -> Y -> pool -> P
 * which the EP fuses into three steps (conv1+relu1, conv2+residual+relu2,
 * pool). Three sessions, each writing files into DIR:
 *   A  ORT session profiling (EnableProfiling) and provider option
 *      profile_file: THREADS threads x ITERS runs over two batch sizes, every
 *      output checked against the CPU EP;
 *   B  no profiling: one run, and no file may appear;
 *   C  ORT run profiling (RunOptionsEnableProfiling) of one run.
 * On a GPU, the pool's totals must also come through ORT's allocator API
 * (CreateAllocator on the session + GetStats). Then it writes
 * DIR/expect.json (the files, the run counts, the model's
 * node names and weight bytes) for tests/profile/check_profile.py, which
 * checks the JSON itself: every run's steps present exactly once, positive
 * durations, names matching the model's nodes, inside ORT's node events,
 * and consistent memory figures.
 *
 *   test_profile --dir DIR [--threads N] [--iters N]
 * (ref backend; a GPU with HIPDNN_EP_TEST_BACKEND=auto) */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

#define C 8
#define NCASES 2

static int failures;

static const char *const k_nodes[] = {"conv1", "relu1", "conv2", "residual", "relu2", "pool"};

/* A session of our EP on m; prefix: ORT session profiling into it, or NULL;
 * trace: provider option profile_file, or NULL. */
static int open_session(hh_ort *h, const hh_target *t, hh_model *m, const char *prefix, const char *trace,
                        OrtSession **s) {
  const OrtApi *a = h->api;
  const char *keys[3], *vals[3];
  size_t nk = ht_ep_opts(t, keys, vals);
  if (trace) keys[nk] = "profile_file", vals[nk++] = trace;
  OrtSessionOptions *so = NULL;
  int rc = hh_check(h, a->CreateSessionOptions(&so), "CreateSessionOptions") ||
           hh_check(h, a->AddSessionConfigEntry(so, "session.disable_cpu_ep_fallback", "1"), "config") ||
           (prefix && hh_check(h, a->EnableProfiling(so, prefix), "EnableProfiling")) ||
           hh_check(h, a->SessionOptionsAppendExecutionProvider_V2(so, h->env, &t->dev, 1, keys, vals, nk),
                    "SessionOptionsAppendExecutionProvider_V2") ||
           hh_check(h, h->ed->CreateSessionFromModel(h->env, hh_model_ort(m), so, s), "CreateSession");
  if (so) a->ReleaseSessionOptions(so);
  if (rc) fprintf(stderr, "FAIL: session: %s\n", hh_err(h));
  return rc;
}

/* Case i: batch 1 + i, a seeded input, the CPU EP's outputs as reference. */
static int make_case(hh_ort *h, OrtSession *s_cpu, hh_case *k, int i) {
  int64_t d[4] = {1 + i, C, 8, 8};
  k->n_in = 1;
  k->n_out = 2;
  k->items = d[0];
  if (hh_tensor_alloc(&k->in[0], HD_DT_F32, 4, d)) return 1;
  hh_tensor_fill_random(&k->in[0], 100 + (uint64_t)i);
  if (hh_session_run(h, s_cpu, k->in, 1, k->ref, 2)) {
    fprintf(stderr, "FAIL: CPU EP: %s\n", hh_err(h));
    return 1;
  }
  return 0;
}

/* The one file in dir whose name starts with stem, or "" (two is an error). */
static int find_file(const char *dir, const char *stem, char *out, size_t cap) {
  int n = 0;
  out[0] = '\0';
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));)
    if (strncmp(e->d_name, stem, strlen(stem)) == 0 && strstr(e->d_name, ".json"))
      n++, snprintf(out, cap, "%s/%s", dir, e->d_name);
  if (d) closedir(d);
  return n;
}

/* ORT's view of our pool: the session's allocator for our device memory,
 * its GetStats keys, consistent with the weights the session holds. */
static void check_allocator_stats(hh_ort *h, const hh_target *t, OrtSession *s, size_t weight_bytes) {
  const OrtApi *a = h->api;
  if (!t->is_gpu) {
    printf("SKIP allocator stats: on the reference backend the EP's tensors are in ORT's CPU memory (no device "
           "allocator of ours); its pool figures are checked in the profile\n");
    return;
  }
  const OrtMemoryInfo *mi = a->EpDevice_MemoryInfo(t->dev, OrtDeviceMemoryType_DEFAULT);
  OrtAllocator *al = NULL;
  OrtKeyValuePairs *kv = NULL;
  if (!mi || hh_check(h, a->CreateAllocator(s, mi, &al), "CreateAllocator") ||
      (al->GetStats && hh_check(h, al->GetStats(al, &kv), "GetStats")) || !kv) {
    HT_CHECK(0, "ORT's allocator for our device memory gave no statistics: %s", hh_err(h));
    if (al) a->ReleaseAllocator(al);
    return;
  }
  const char *const *keys = NULL, *const *vals = NULL;
  size_t n = 0;
  a->GetKeyValuePairs(kv, &keys, &vals, &n);
  double in_use = -1, max_in_use = -1, total = -1;
  for (size_t i = 0; i < n; i++) {
    printf("  allocator stat %s = %s\n", keys[i], vals[i]);
    if (!strcmp(keys[i], "InUse")) in_use = atof(vals[i]);
    if (!strcmp(keys[i], "MaxInUse")) max_in_use = atof(vals[i]);
    if (!strcmp(keys[i], "TotalAllocated")) total = atof(vals[i]);
  }
  HT_CHECK(in_use >= (double)weight_bytes && max_in_use >= in_use && total >= in_use,
           "allocator stats InUse %g, MaxInUse %g, TotalAllocated %g (the session's weights alone are %zu bytes)",
           in_use, max_in_use, total, weight_bytes);
  a->ReleaseKeyValuePairs(kv);
  a->ReleaseAllocator(al);
}

static int count_files(const char *dir) {
  int n = 0;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

int main(int argc, char **argv) {
  int threads = 4, iters = 6;
  const char *dir = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--iters")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
  }
  if (!dir) {
    fprintf(stderr, "usage: test_profile --dir DIR [--threads N] [--iters N]\n");
    return 2;
  }
  /* A clean folder: the checks count files. */
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  if (system(cmd) != 0) {
    fprintf(stderr, "FAIL: cannot make %s\n", dir);
    return 1;
  }
  hh_ort h;
  hh_target t;
  int rc = ht_setup(&h, &t);
  if (rc) return rc;
  const OrtApi *a = h.api;
  hh_model *m = NULL;
  OrtSession *sa = NULL, *sb = NULL, *sc = NULL, *scpu = NULL;
  static hh_case cases[NCASES];
  hh_session_cfg cpu_cfg = {0};
  char prefix[4096], trace[4096], ort_file[4096] = "", run_file[4096] = "", sub[4096];
  size_t weight_bytes = 0;
  long runs = (long)threads * iters;
  snprintf(prefix, sizeof prefix, "%s/session", dir);
  snprintf(trace, sizeof trace, "%s/trace.json", dir);

  if (hh_residual_block_model(&h, C, 8, &m, &weight_bytes) || hh_session_create(&h, &cpu_cfg, hh_model_ort(m), NULL, &scpu)) {
    fprintf(stderr, "FAIL: setup: %s\n", hh_err(&h));
    failures++;
    goto done;
  }
  for (int i = 0; i < NCASES && !failures; i++)
    if (make_case(&h, scpu, &cases[i], i)) failures++;
  if (failures) goto done;

  /* A: session profiling and profile_file, from several threads at once. */
  if (open_session(&h, &t, m, prefix, trace, &sa)) {
    failures++;
    goto done;
  }
  hh_stress_cfg cfg = {.threads = threads, .iters = iters, .tol = {.atol = 1e-4, .rtol = 1e-4}, .timeout_s = 300};
  hh_stress_result r;
  hh_stress_run(&h, sa, cases, NCASES, &cfg, &r);
  printf("session A: ");
  hh_stress_print(&r, threads, stdout);
  if (r.hung) {
    fprintf(stderr, "FAIL: a run hung\n");
    fflush(stdout);
    _exit(1);
  }
  HT_CHECK(r.wrong == 0 && r.errors == 0 && r.runs == runs, "%ld runs, %ld wrong, %ld errors (%s%s)", r.runs,
           r.wrong, r.errors, r.first_wrong, r.first_error);
  check_allocator_stats(&h, &t, sa, weight_bytes);
  char *path = NULL;
  if (hh_check(&h, a->SessionEndProfiling(sa, h.alloc, &path), "SessionEndProfiling")) {
    fprintf(stderr, "FAIL: %s\n", hh_err(&h));
    failures++;
  } else {
    snprintf(ort_file, sizeof ort_file, "%s", path);
    hh_check(&h, a->AllocatorFree(h.alloc, path), "AllocatorFree");
  }
  hh_session_free(&h, sa); /* writes the trace */
  sa = NULL;
  HT_CHECK(access(trace, R_OK) == 0, "profile_file %s was not written", trace);

  /* B: nothing asked for, nothing written. */
  snprintf(sub, sizeof sub, "%s/quiet", dir);
  mkdir(sub, 0777);
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) && chdir(sub) == 0 && !open_session(&h, &t, m, NULL, NULL, &sb)) {
    hh_tensor outs[2];
    if (hh_session_run(&h, sb, cases[0].in, 1, outs, 2)) {
      fprintf(stderr, "FAIL: session B: %s\n", hh_err(&h));
      failures++;
    } else {
      hh_tensor_free(&outs[0]);
      hh_tensor_free(&outs[1]);
    }
    hh_session_free(&h, sb);
    sb = NULL;
    HT_CHECK(count_files(sub) == 0, "a session without profiling wrote %d file(s) into %s", count_files(sub), sub);
    HT_CHECK(chdir(cwd) == 0, "cannot go back to %s", cwd);
  } else {
    failures++;
  }

  /* C: one run under ORT's run profiling. */
  snprintf(prefix, sizeof prefix, "%s/run", dir);
  if (!open_session(&h, &t, m, NULL, NULL, &sc)) {
    OrtRunOptions *ro = NULL;
    OrtValue *in = NULL, *outs[2] = {NULL, NULL};
    const char *in_names[1] = {"X"}, *out_names[2] = {"Y", "P"};
    if (hh_check(&h, a->CreateRunOptions(&ro), "CreateRunOptions") ||
        hh_check(&h, a->RunOptionsEnableProfiling(ro, prefix), "RunOptionsEnableProfiling") ||
        hh_tensor_to_value(&h, &cases[0].in[0], &in) ||
        hh_check(&h, a->Run(sc, ro, in_names, (const OrtValue *const *)&in, 1, out_names, 2, outs), "Run")) {
      fprintf(stderr, "FAIL: session C: %s\n", hh_err(&h));
      failures++;
    }
    for (int i = 0; i < 2; i++)
      if (outs[i]) a->ReleaseValue(outs[i]);
    if (in) a->ReleaseValue(in);
    if (ro) a->ReleaseRunOptions(ro);
    hh_session_free(&h, sc);
    sc = NULL;
    HT_CHECK(find_file(dir, "run", run_file, sizeof run_file) == 1, "run profiling: no single run_*.json in %s", dir);
  } else {
    failures++;
  }

  {
    char expect[4200];
    snprintf(expect, sizeof expect, "%s/expect.json", dir);
    FILE *f = fopen(expect, "w");
    if (!f) {
      fprintf(stderr, "FAIL: cannot write %s\n", expect);
      failures++;
      goto done;
    }
    fprintf(f, "{\"backend\": \"%s\", \"weights_bytes\": %zu, \"nodes\": [", t.backend, weight_bytes);
    for (size_t i = 0; i < sizeof k_nodes / sizeof k_nodes[0]; i++) fprintf(f, "%s\"%s\"", i ? ", " : "", k_nodes[i]);
    fprintf(f, "],\n \"files\": [\n");
    fprintf(f, "  {\"kind\": \"ort\", \"path\": \"%s\", \"runs\": %ld, \"shapes\": %d},\n", ort_file, runs, NCASES);
    fprintf(f, "  {\"kind\": \"trace\", \"path\": \"%s\", \"runs\": %ld, \"shapes\": %d},\n", trace, runs, NCASES);
    fprintf(f, "  {\"kind\": \"ort\", \"path\": \"%s\", \"runs\": 1, \"shapes\": 1}\n ]}\n", run_file);
    if (fclose(f)) failures++;
    printf("expectations: %s\n", expect);
  }

done:
  for (int i = 0; i < NCASES; i++) hh_case_free(&cases[i]);
  hh_session_free(&h, sa);
  hh_session_free(&h, sb);
  hh_session_free(&h, sc);
  hh_session_free(&h, scpu);
  hh_model_free(m);
  hh_ort_close(&h);
  printf("test_profile: %s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
