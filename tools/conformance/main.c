/* hipdnn-ep-conformance: every ONNX node test case through ONNX Runtime
 * with hipdnn-ep; see docs/conformance.md and usage() below. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/conformance/cf_case.h"
#include "tools/conformance/cf_fuzz.h"
#include "tools/conformance/cf_report.h"
#include "tools/conformance/cf_results.h"
#include "tools/conformance/cf_run.h"
#include "tools/conformance/cf_runner.h"

static void usage(FILE *f) {
  fprintf(f,
    "usage: hipdnn-ep-conformance --cases DIR [options]\n"
    "       hipdnn-ep-conformance --merge-markdown OUT.md REF.json [GPU.json]\n"
    "\n"
    "Runs each ONNX node test case (DIR/<case>/model.onnx + test_data_set_0) in its own\n"
    "process through ONNX Runtime with hipdnn-ep (CPU EP as fallback) and classifies it:\n"
    "pass, fail, not-claimed, ort-error, runner-unsupported, crash, timeout.\n"
    "The last line is \"N passed, N failed\" (failed = fail + crash + timeout); the exit\n"
    "status is 1 when failed > 0, 2 when the run cannot start.\n"
    "\n"
    "  --backend ref|auto|cpu  ref: the EP's CPU reference backend (default); auto: a GPU\n"
    "                          backend if the EP lists one, else ref; cpu: no EP, the CPU\n"
    "                          EP's outputs compared (self-test of reader and comparator)\n"
    "  --tf32 0|1              GPU math: 0 strict (use_tf32=0, ONNX's tolerances; the\n"
    "                          default), 1 the EP's default TF32 mode, judged by the\n"
    "                          TF32 rule |a-e| <= 1e-2|e| + 1e-3 max|e| (docs/conformance.md)\n"
    "  --filter REGEX          only cases whose name matches (POSIX extended regex)\n"
    "  --json FILE             results for machines (input of --merge-markdown)\n"
    "  --markdown FILE         results as markdown (one backend)\n"
    "  --jobs N                cases run at once (default 1)\n"
    "  --timeout S             seconds per case (default 60)\n"
    "  --threads N             ORT intra-op threads per session (default 1)\n"
    "  --ort-lib PATH          libonnxruntime.so (default: env HIPDNN_EP_ORT_LIB, else ORT 1.29)\n"
    "  --ep-lib PATH           libhipdnn_ep.so (default: env HIPDNN_EP_LIB, else build/lib)\n"
    "  --no-table              leave out the per-op table\n"
    "  --fuzz N                instead of the cases: N mutants of them (bit flips, truncated\n"
    "                          files, extreme attribute values, shapes that disagree), each\n"
    "                          through session creation and one Run with our EP in its own\n"
    "                          process; reports clean errors, crashes, hangs and answers that\n"
    "                          differ from the CPU EP's; exit 1 on any crash, hang or wrong answer\n"
    "  --seed N                fuzz seed (default 1)\n"
    "  --fuzz-dir DIR          where the mutants are written (default: a temporary folder,\n"
    "                          removed unless something failed)\n"
    "  --verbose               one line per case, with the case's own output\n");
}

/* Copies src into dst[len], cut short if needed. */
static void copy_str(char *dst, size_t len, const char *src) {
  size_t n = strnlen(src, len - 1);
  memcpy(dst, src, n);
  dst[n] = 0;
}

/* The preflight in a child process, so the parent never loads ORT. */
static int preflight(const cf_config *cfg, cf_run *run) {
  int p[2];
  if (pipe(p)) { perror("pipe"); return 1; }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) { perror("fork"); return 1; }
  if (pid == 0) {
    close(p[0]);
    char msg[1024] = {0}, ver[32] = {0};
    char out[1 + sizeof ver + sizeof msg];
    out[0] = (char)cf_case_preflight(cfg, ver, sizeof ver, msg, sizeof msg);
    memcpy(out + 1, ver, sizeof ver);
    memcpy(out + 1 + sizeof ver, msg, sizeof msg);
    ssize_t w = write(p[1], out, sizeof out);
    _exit(w == (ssize_t)sizeof out ? 0 : 3);
  }
  close(p[1]);
  char in[1 + 32 + 1024];
  size_t got = 0;
  while (got < sizeof in) {
    ssize_t r = read(p[0], in + got, sizeof in - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(p[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (got != sizeof in) {
    fprintf(stderr, "hipdnn-ep-conformance: loading ONNX Runtime / the EP crashed (status %d)\n", st);
    return 1;
  }
  in[1 + 31] = 0;
  in[sizeof in - 1] = 0;
  if (in[0]) {
    fprintf(stderr, "hipdnn-ep-conformance: %s\n", in + 1 + 32);
    return 1;
  }
  copy_str(run->ort_version, sizeof run->ort_version, in + 1);
  copy_str(run->device, sizeof run->device, in + 1 + 32);
  return 0;
}

static int merge(int argc, char **argv, int i) {
  if (argc - i < 2 || argc - i > 3) { usage(stderr); return 2; }
  cf_run runs[2];
  const cf_run *ptrs[2];
  int n = 0, rc = 0;
  for (int k = i + 1; k < argc; ++k) {
    if (cf_results_load(argv[k], &runs[n])) { rc = 2; break; }
    ptrs[n] = &runs[n];
    n++;
  }
  if (!rc && cf_report_markdown(argv[i], ptrs, n)) rc = 2;
  for (int k = 0; k < n; ++k) cf_run_free(&runs[k]);
  return rc;
}

/* --fuzz: mutants into a folder, then run like cases with cf_fuzz_case. */
static int run_fuzz(const cf_config *cfg, cf_runner_opts *o, cf_run *run, int n, unsigned long long seed,
                    const char *dir, const char *json) {
  char tmp[] = "/tmp/hipdnn-ep-fuzz.XXXXXX";
  const char *out = dir;
  if (!out && !(out = mkdtemp(tmp))) { perror("mkdtemp"); return 2; }
  if (dir) mkdir(dir, 0755);
  if (cf_fuzz_make(o->cases_dir, o->filter, out, n, seed)) return 2;
  cf_runner_opts fo = *o;
  fo.cases_dir = out;
  fo.filter = NULL;
  fo.case_fn = cf_fuzz_case;
  fo.log = NULL; /* the report lists every failure with its mutation */
  if (cf_runner_run(cfg, &fo, run)) { cf_run_free(run); return 2; }
  /* Crashes and hangs again with the CPU EP alone: ORT's own, or ours? */
  int *own = calloc(run->n + 1, sizeof *own);
  cf_run again;
  memset(&again, 0, sizeof again);
  cf_config cpu = *cfg;
  cpu.backend = "cpu";
  for (size_t i = 0; own && i < run->n; ++i) {
    if (!cf_failed(run->cases[i].r.status) || run->cases[i].r.status == CF_FAIL) continue;
    cf_runner_opts one = fo;
    char re[600];
    snprintf(re, sizeof re, "^%s$", run->cases[i].name);
    one.filter = re;
    memset(&again, 0, sizeof again);
    if (!cf_runner_run(&cpu, &one, &again) && again.n == 1)
      own[i] = cf_failed(again.cases[0].r.status);
    cf_run_free(&again);
  }
  int failed = cf_fuzz_report(stdout, run, out, own);
  free(own);
  if (json && cf_results_save(json, run)) failed = 1;
  printf("fuzz seed %llu; mutants in %s%s\n", seed, out, !dir && !failed ? " (removed)" : "");
  if (!dir && !failed) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
    if (system(cmd) != 0) fprintf(stderr, "hipdnn-ep-conformance: could not remove %s\n", out);
  }
  cf_run_free(run);
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  cf_config cfg = {.backend = "ref", .intra_threads = 1};
  cf_runner_opts o = {.jobs = 1, .timeout_s = 60, .log = stdout};
  const char *json = NULL, *md = NULL, *fuzz_dir = NULL;
  int table = 1, fuzz = 0;
  unsigned long long seed = 1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    if (!strcmp(a, "--merge-markdown")) return merge(argc, argv, i + 1);
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
    if (!strcmp(a, "--no-table")) { table = 0; continue; }
    if (!strcmp(a, "--verbose")) { o.verbose = 1; continue; }
    if (!more) { fprintf(stderr, "hipdnn-ep-conformance: %s needs a value\n", a); usage(stderr); return 2; }
    const char *v = argv[++i];
    if (!strcmp(a, "--cases")) o.cases_dir = v;
    else if (!strcmp(a, "--backend")) cfg.backend = v;
    else if (!strcmp(a, "--filter")) o.filter = v;
    else if (!strcmp(a, "--tf32")) {
      if (strcmp(v, "0") && strcmp(v, "1")) { fprintf(stderr, "hipdnn-ep-conformance: --tf32 must be 0 or 1\n"); return 2; }
      cfg.tf32 = v[0] - '0';
    }
    else if (!strcmp(a, "--json")) json = v;
    else if (!strcmp(a, "--markdown")) md = v;
    else if (!strcmp(a, "--jobs")) o.jobs = atoi(v);
    else if (!strcmp(a, "--timeout")) o.timeout_s = atof(v);
    else if (!strcmp(a, "--threads")) cfg.intra_threads = atoi(v);
    else if (!strcmp(a, "--ort-lib")) cfg.ort_lib = v;
    else if (!strcmp(a, "--ep-lib")) cfg.ep_lib = v;
    else if (!strcmp(a, "--fuzz")) fuzz = atoi(v);
    else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--fuzz-dir")) fuzz_dir = v;
    else { fprintf(stderr, "hipdnn-ep-conformance: unknown option %s\n", a); usage(stderr); return 2; }
  }
  if (!o.cases_dir) { usage(stderr); return 2; }
  if (strcmp(cfg.backend, "ref") && strcmp(cfg.backend, "auto") && strcmp(cfg.backend, "cpu")) {
    fprintf(stderr, "hipdnn-ep-conformance: --backend must be ref, auto or cpu\n");
    return 2;
  }
  if (o.jobs < 1 || o.timeout_s <= 0) {
    fprintf(stderr, "hipdnn-ep-conformance: --jobs and --timeout must be positive\n");
    return 2;
  }

  cf_run run;
  memset(&run, 0, sizeof run);
  snprintf(run.backend, sizeof run.backend, "%s", cfg.backend);
  run.tf32 = cfg.tf32;
  snprintf(run.cases_dir, sizeof run.cases_dir, "%s", o.cases_dir);
  snprintf(run.filter, sizeof run.filter, "%s", o.filter ? o.filter : "");
  run.jobs = o.jobs;
  run.timeout_s = o.timeout_s;
  if (preflight(&cfg, &run)) return 2;
  if (fuzz > 0) return run_fuzz(&cfg, &o, &run, fuzz, seed, fuzz_dir, json);
  if (cf_runner_run(&cfg, &o, &run)) { cf_run_free(&run); return 2; }

  int rc = 0;
  if (json && cf_results_save(json, &run)) rc = 2;
  if (md) {
    const cf_run *one[1] = {&run};
    if (cf_report_markdown(md, one, 1)) rc = 2;
  }
  cf_report_text(stdout, &run, table);
  cf_report_summary(stdout, &run);
  fputc('\n', stdout);
  int c[CF_N_STATUS];
  cf_run_counts(&run, c);
  if (!rc && c[CF_FAIL] + c[CF_CRASH] + c[CF_TIMEOUT] > 0) rc = 1;
  cf_run_free(&run);
  return rc;
}
