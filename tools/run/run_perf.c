/* hipdnn-ep-run's timing: see run_perf.h. */
#include "tools/run/run_perf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Latencies kept for percentiles: past this many runs (a long --duration
 * of a fast model) a uniform sample of them (reservoir sampling) stands in,
 * so memory stays at 32 MiB; min, mean and max stay exact. */
#define KEEP_MAX (1L << 22)
/* The progress line starts after this long, then comes every TTY_EVERY on
 * a terminal (rewritten in place) or every LINE_EVERY in a log. */
#define PROGRESS_AFTER_MS 2000.0
#define TTY_EVERY_MS 250.0
#define LINE_EVERY_MS 5000.0

typedef struct progress {
  const run_perf_cfg *cfg;
  int tty, shown;
  double start, next;
} progress;

static void progress_tick(progress *pg, const char *phase, long done, long of, double t_phase) {
  double now = hh_now_ms();
  if (now - pg->start < PROGRESS_AFTER_MS || now < pg->next) return;
  pg->next = now + (pg->tty ? TTY_EVERY_MS : LINE_EVERY_MS);
  char runs[64], time[64] = "";
  if (of > 0) snprintf(runs, sizeof runs, "%ld/%ld", done, of);
  else snprintf(runs, sizeof runs, "%ld", done);
  double el = (now - t_phase) / 1000.0;
  if (pg->cfg->duration_s > 0 && strcmp(phase, "timed") == 0)
    snprintf(time, sizeof time, ", %.1f/%.1f s", el, pg->cfg->duration_s);
  else
    snprintf(time, sizeof time, ", %.1f s", el);
  fprintf(stderr, "%shipdnn-ep-run: %s: %s %s runs%s%s", pg->tty ? "\r" : "", pg->cfg->label, runs, phase, time,
          pg->tty ? "\033[K" : "\n");
  fflush(stderr);
  pg->shown = 1;
}

static void progress_end(progress *pg) {
  if (pg->shown && pg->tty) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p% of the runs at or
 * below it (onnxruntime_perf_test's and the usual definition). */
static double rank_pct(const double *sorted, long n, double p) {
  long r = (long)ceil(p / 100.0 * (double)n);
  if (r < 1) r = 1;
  if (r > n) r = n;
  return sorted[r - 1];
}

void run_perf_stats(double *ms, long n, run_perf *out) {
  if (n <= 0) return;
  qsort(ms, (size_t)n, sizeof *ms, cmp_double);
  double sum = 0;
  for (long i = 0; i < n; i++) sum += ms[i];
  out->min_ms = ms[0];
  out->max_ms = ms[n - 1];
  out->mean_ms = sum / (double)n;
  out->p50_ms = rank_pct(ms, n, 50);
  out->p90_ms = rank_pct(ms, n, 90);
  out->p99_ms = rank_pct(ms, n, 99);
}

int run_perf_measure(const run_perf_cfg *cfg, run_perf_fn fn, void *ctx, run_perf *out) {
  progress pg = {.cfg = cfg, .tty = isatty(STDERR_FILENO), .start = hh_now_ms()};
  memset(out, 0, sizeof *out);
  out->warmup = cfg->warmup;
  out->batch = cfg->batch;
  for (int i = 0; i < cfg->warmup; i++) {
    if (fn(ctx)) {
      progress_end(&pg);
      return 1;
    }
    progress_tick(&pg, "warm-up", i + 1, cfg->warmup, pg.start);
  }
  long cap = cfg->iters > 0 && cfg->iters < KEEP_MAX ? cfg->iters : 1024;
  double *ms = malloc((size_t)cap * sizeof *ms);
  if (!ms) return 1;
  long n = 0, kept = 0;
  double sum = 0, lo = INFINITY, hi = 0;
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  double begin = hh_now_ms(), end = begin;
  for (;;) {
    if (cfg->iters > 0 && n >= cfg->iters) break;
    if (cfg->duration_s > 0 && n > 0 && end - begin >= cfg->duration_s * 1000.0) break;
    double t0 = hh_now_ms();
    int rc = fn(ctx);
    end = hh_now_ms();
    if (rc) {
      free(ms);
      progress_end(&pg);
      return 1;
    }
    double t = end - t0;
    n++;
    sum += t;
    if (t < lo) lo = t;
    if (t > hi) hi = t;
    if (kept < KEEP_MAX) {
      if (kept == cap) {
        long ncap = cap * 2 < KEEP_MAX ? cap * 2 : KEEP_MAX;
        double *m2 = realloc(ms, (size_t)ncap * sizeof *ms);
        if (!m2) {
          free(ms);
          progress_end(&pg);
          return 1;
        }
        ms = m2;
        cap = ncap;
      }
      ms[kept++] = t;
    } else {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t j = (rng >> 11) % (uint64_t)n;
      if (j < (uint64_t)KEEP_MAX) ms[j] = t;
    }
    progress_tick(&pg, "timed", n, cfg->iters, begin);
  }
  progress_end(&pg);
  run_perf_stats(ms, kept, out);
  free(ms);
  out->runs = n;
  out->sampled = n > kept;
  out->min_ms = lo;
  out->max_ms = hi;
  out->mean_ms = sum / (double)n;
  out->seconds = (end - begin) / 1000.0;
  out->runs_per_s = out->seconds > 0 ? (double)n / out->seconds : 0;
  out->samples_per_s = out->runs_per_s * (double)cfg->batch;
  return 0;
}

/* ---- the runs ---------------------------------------------------------------- */

int run_plain_open(hh_ort *h, OrtSession *s, const hh_tensor *inputs, size_t n_in, run_plain *p) {
  size_t ni = 0, no = 0;
  memset(p, 0, sizeof *p);
  p->h = h;
  p->s = s;
  p->ios = calloc(128, sizeof *p->ios);
  if (!p->ios) return hh_fail(h, "out of host memory");
  if (hh_session_inputs(h, s, p->ios, 64, &ni) || hh_session_outputs(h, s, p->ios + 64, 64, &no)) return 1;
  if (ni != n_in || ni > 64 || no > 64)
    return hh_fail(h, "timing: model has %zu inputs and %zu outputs, %zu inputs given (at most 64 each)", ni, no,
                   n_in);
  for (size_t i = 0; i < ni; i++) {
    p->in_names[i] = p->ios[i].name;
    if (hh_tensor_to_value(h, &inputs[i], &p->in_vals[i])) return 1;
    p->n_in = i + 1;
  }
  for (size_t i = 0; i < no; i++) p->out_names[i] = p->ios[64 + i].name;
  p->n_out = no;
  return 0;
}

int run_plain_once(void *ctx) {
  run_plain *p = ctx;
  const OrtApi *a = p->h->api;
  OrtValue *ov[64] = {0};
  OrtStatus *st = a->Run(p->s, NULL, p->in_names, (const OrtValue *const *)p->in_vals, p->n_in, p->out_names,
                         p->n_out, ov);
  for (size_t i = 0; i < p->n_out; i++)
    if (ov[i]) a->ReleaseValue(ov[i]);
  return hh_check(p->h, st, "Run");
}

void run_plain_close(run_plain *p) {
  for (size_t i = 0; i < p->n_in; i++)
    if (p->in_vals[i]) p->h->api->ReleaseValue(p->in_vals[i]);
  free(p->ios);
  memset(p, 0, sizeof *p);
}

int run_bound_once(void *ctx) {
  run_bound *r = ctx;
  return hh_binding_run(r->h, r->s, r->b);
}

/* ---- reports ----------------------------------------------------------------- */

void run_perf_print_header(FILE *f) {
  fprintf(f, "  %-26s %7s %9s %9s %9s %9s %9s %9s %10s %10s\n", "latency (ms)", "runs", "min", "mean", "p50", "p90",
          "p99", "max", "runs/s", "samples/s");
}

void run_perf_print_row(FILE *f, const char *label, const run_perf *p) {
  fprintf(f, "  %-26s %7ld %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %10.1f %10.1f\n", label, p->runs, p->min_ms, p->mean_ms,
          p->p50_ms, p->p90_ms, p->p99_ms, p->max_ms, p->runs_per_s, p->samples_per_s);
}

static void num(FILE *f, const char *key, double v) {
  fprintf(f, ", \"%s\": ", key);
  if (isfinite(v)) fprintf(f, "%.6g", v);
  else fputs("null", f);
}

void run_perf_json(FILE *f, const run_perf *p) {
  fprintf(f, "{\"iters\": %ld, \"warmup\": %d", p->runs, p->warmup);
  num(f, "seconds", p->seconds);
  num(f, "min_ms", p->min_ms);
  num(f, "mean_ms", p->mean_ms);
  num(f, "median_ms", p->p50_ms);
  num(f, "p50_ms", p->p50_ms);
  num(f, "p90_ms", p->p90_ms);
  num(f, "p99_ms", p->p99_ms);
  num(f, "max_ms", p->max_ms);
  num(f, "inferences_per_s", p->runs_per_s);
  fprintf(f, ", \"batch\": %lld", (long long)p->batch);
  num(f, "samples_per_s", p->samples_per_s);
  fprintf(f, ", \"percentiles_sampled\": %s}", p->sampled ? "true" : "false");
}
