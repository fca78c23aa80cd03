/* run_perf: hipdnn-ep-run's timing, the way onnxruntime_perf_test times a
 * session: warm-up runs, then timed runs until a count or a duration is
 * reached; latency min/mean/p50/p90/p99/max, throughput in runs and samples
 * per second; a progress line on stderr when it takes a while. */
#ifndef RUN_PERF_H
#define RUN_PERF_H

#include <stdint.h>
#include <stdio.h>

#include "tools/harness/harness.h"

typedef struct run_perf_cfg {
  int warmup;        /* untimed runs first */
  long iters;        /* stop after this many timed runs; 0 = no count */
  double duration_s; /* stop once this much time has passed; 0 = none */
  int64_t batch;     /* samples per run (for samples/s) */
  const char *label; /* names the runs on the progress line */
} run_perf_cfg;

typedef struct run_perf {
  long runs;          /* timed runs */
  int warmup;
  double seconds;     /* wall time of the timed runs, end to end */
  double min_ms, mean_ms, p50_ms, p90_ms, p99_ms, max_ms;
  double runs_per_s;  /* inferences per second */
  double samples_per_s;
  int64_t batch;
  int sampled;        /* percentiles from a uniform sample of the runs (too many to keep) */
} run_perf;

/* One run; nonzero when it failed (its message in the caller's hh_ort). */
typedef int (*run_perf_fn)(void *ctx);
/* cfg->warmup runs, then timed runs until cfg->iters or cfg->duration_s
 * (whichever comes first; at least one run). Returns fn's failure. */
int run_perf_measure(const run_perf_cfg *cfg, run_perf_fn fn, void *ctx, run_perf *out);
/* Statistics of n latencies in ms (sorts ms): nearest-rank percentiles. */
void run_perf_stats(double *ms, long n, run_perf *out);

/* A session run on host tensors (ORT copies them where the EP wants them). */
typedef struct run_plain {
  hh_ort *h;
  OrtSession *s;
  const char *in_names[64], *out_names[64];
  OrtValue *in_vals[64];
  hh_io *ios; /* names' storage */
  size_t n_in, n_out;
} run_plain;
int run_plain_open(hh_ort *h, OrtSession *s, const hh_tensor *inputs, size_t n_in, run_plain *p);
int run_plain_once(void *p); /* a run_perf_fn over run_plain */
void run_plain_close(run_plain *p);

/* A run through an IO binding (inputs set with hh_binding_set_inputs). */
typedef struct run_bound {
  hh_ort *h;
  OrtSession *s;
  hh_binding *b;
} run_bound;
int run_bound_once(void *p); /* a run_perf_fn over run_bound */

/* "label  runs  min  mean  p50  p90  p99  max  runs/s  samples/s" */
void run_perf_print_header(FILE *f);
void run_perf_print_row(FILE *f, const char *label, const run_perf *p);
/* A JSON object of every figure (iters, warmup, seconds, *_ms, ...). */
void run_perf_json(FILE *f, const run_perf *p);

#endif
