/* hh_stress: one session run from many threads at once, every output
 * checked against the output of the same input run alone. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/hd_dtype.h"
#include "tools/harness/harness.h"

typedef struct stress_job stress_job;

typedef struct stress_worker {
  stress_job *job;
  int index;
  pthread_t thread;
  hh_ort h; /* a copy: its own error buffer */
} stress_worker;

struct stress_job {
  const hh_stress_cfg *cfg;
  OrtSession *s;
  const hh_case *cases;
  size_t ncases;
  pthread_mutex_t mu;
  pthread_cond_t done_cv;
  int running;
  hh_stress_result r;
};

static void note_first(char *dst, size_t cap, const char *msg) {
  if (!dst[0]) snprintf(dst, cap, "%s", msg);
}

/* Every element within the case's tolerance of the run alone (the same
 * numpy.allclose rule the rest of the harness uses); *exact when bitwise. */
static int same_answer(const hh_case *c, const hh_tensor *got, hh_tol tol, int *exact, char *why, size_t cap) {
  *exact = 1;
  for (size_t o = 0; o < c->n_out; o++) {
    const hh_tensor *ref = &c->ref[o];
    if (got[o].n != ref->n || got[o].dtype != ref->dtype) {
      snprintf(why, cap, "output %zu: %zu elements of type %d, alone %zu of type %d", o, got[o].n, got[o].dtype,
               ref->n, ref->dtype);
      *exact = 0;
      return 0;
    }
    size_t bytes = ref->n * hd_dtype_size(ref->dtype);
    if (memcmp(got[o].data, ref->data, bytes) != 0) *exact = 0;
    hh_cmp cmp;
    if (!hh_compare(&got[o], ref, tol, &cmp)) {
      snprintf(why, cap, "output %zu: %zu of %zu elements differ from the run alone, max abs %.3g (got %.6g, alone %.6g)",
               o, cmp.n_bad + cmp.n_nonfinite_mismatch, cmp.n, cmp.max_abs, cmp.worst_got, cmp.worst_ref);
      return 0;
    }
  }
  return 1;
}

static void *worker_main(void *arg) {
  stress_worker *w = arg;
  stress_job *j = w->job;
  const hh_stress_cfg *cfg = j->cfg;
  hh_tensor outs[HH_STRESS_MAX_IO];
  uint64_t rng = (uint64_t)w->index * 0x9e3779b97f4a7c15ull + 1;
  for (int it = 0; it < cfg->iters; it++) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    const hh_case *c = &j->cases[(rng >> 33) % j->ncases];
    int bad = 0, exact = 1, err = 0;
    char why[512] = "";
    if (hh_session_run(&w->h, j->s, c->in, c->n_in, outs, c->n_out)) {
      err = 1;
      snprintf(why, sizeof why, "thread %d run %d: %s", w->index, it, hh_err(&w->h));
    } else {
      bad = !same_answer(c, outs, cfg->tol, &exact, why, sizeof why);
      for (size_t o = 0; o < c->n_out; o++) hh_tensor_free(&outs[o]);
    }
    pthread_mutex_lock(&j->mu);
    j->r.runs++;
    j->r.items += c->items;
    if (err) {
      j->r.errors++;
      note_first(j->r.first_error, sizeof j->r.first_error, why);
    } else if (bad) {
      j->r.wrong++;
      note_first(j->r.first_wrong, sizeof j->r.first_wrong, why);
    } else if (!exact) {
      j->r.inexact++;
    }
    pthread_mutex_unlock(&j->mu);
  }
  pthread_mutex_lock(&j->mu);
  j->running--;
  pthread_cond_signal(&j->done_cv);
  pthread_mutex_unlock(&j->mu);
  return NULL;
}

int hh_stress_start(hh_ort *h, OrtSession *s, const hh_case *cases, size_t ncases, const hh_stress_cfg *cfg,
                    hh_stress **out) {
  *out = NULL;
  if (ncases == 0 || cfg->threads < 1 || cfg->iters < 0) return hh_fail(h, "stress: nothing to run");
  for (size_t i = 0; i < ncases; i++)
    if (cases[i].n_out > HH_STRESS_MAX_IO) return hh_fail(h, "stress: too many outputs");
  hh_stress *st = calloc(1, sizeof *st);
  stress_worker *ws = calloc((size_t)cfg->threads, sizeof *ws);
  stress_job *j = calloc(1, sizeof *j);
  if (!st || !ws || !j) {
    free(st);
    free(ws);
    free(j);
    return hh_fail(h, "stress: out of host memory");
  }
  j->cfg = cfg;
  j->s = s;
  j->cases = cases;
  j->ncases = ncases;
  pthread_mutex_init(&j->mu, NULL);
  pthread_cond_init(&j->done_cv, NULL);
  st->job = j;
  st->workers = ws;
  st->nthreads = cfg->threads;
  st->t0 = hh_now_ms();
  for (int i = 0; i < cfg->threads; i++) {
    ws[i].job = j;
    ws[i].index = i;
    ws[i].h = *h;
    pthread_mutex_lock(&j->mu);
    j->running++;
    pthread_mutex_unlock(&j->mu);
    if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) != 0) {
      pthread_mutex_lock(&j->mu);
      j->running--;
      j->r.errors++;
      note_first(j->r.first_error, sizeof j->r.first_error, "pthread_create failed");
      pthread_mutex_unlock(&j->mu);
      ws[i].job = NULL;
    }
  }
  *out = st;
  return 0;
}

int hh_stress_wait(hh_stress *st, double timeout_s, hh_stress_result *out) {
  stress_job *j = st->job;
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += (time_t)timeout_s;
  int hung = 0;
  pthread_mutex_lock(&j->mu);
  while (j->running > 0 && !hung)
    if (pthread_cond_timedwait(&j->done_cv, &j->mu, &deadline) != 0 && j->running > 0) hung = 1;
  *out = j->r;
  pthread_mutex_unlock(&j->mu);
  out->seconds = (hh_now_ms() - st->t0) / 1000.0;
  out->hung = hung;
  if (hung) return 1; /* the threads are left to the process: never join a hang */
  for (int i = 0; i < st->nthreads; i++)
    if (st->workers[i].job) pthread_join(st->workers[i].thread, NULL);
  pthread_cond_destroy(&j->done_cv);
  pthread_mutex_destroy(&j->mu);
  free(j);
  free(st->workers);
  free(st);
  return out->wrong || out->errors ? 1 : 0;
}

int hh_stress_run(hh_ort *h, OrtSession *s, const hh_case *cases, size_t ncases, const hh_stress_cfg *cfg,
                  hh_stress_result *out) {
  memset(out, 0, sizeof *out);
  hh_stress *st = NULL;
  if (hh_stress_start(h, s, cases, ncases, cfg, &st)) return 1;
  return hh_stress_wait(st, cfg->timeout_s, out);
}

int hh_case_reference(hh_ort *h, OrtSession *s, hh_case *c) {
  return hh_session_run(h, s, c->in, c->n_in, c->ref, c->n_out);
}

void hh_case_free(hh_case *c) {
  for (size_t i = 0; i < c->n_in; i++) hh_tensor_free(&c->in[i]);
  for (size_t i = 0; i < c->n_out; i++) hh_tensor_free(&c->ref[i]);
  memset(c, 0, sizeof *c);
}

void hh_stress_print(const hh_stress_result *r, int threads, FILE *f) {
  fprintf(f, "concurrency: %d threads x %ld runs: %ld wrong, %ld errors%s\n", threads,
          threads ? r->runs / threads : 0, r->wrong, r->errors, r->hung ? ", HUNG (no progress before the deadline)" : "");
  fprintf(f, "  %.2f s, %.1f runs/s, %.1f items/s; %ld of the right answers not bitwise equal to the run alone\n",
          r->seconds, r->seconds > 0 ? r->runs / r->seconds : 0.0, r->seconds > 0 ? r->items / r->seconds : 0.0,
          r->inexact);
  if (r->first_wrong[0]) fprintf(f, "  first wrong: %s\n", r->first_wrong);
  if (r->first_error[0]) fprintf(f, "  first error: %s\n", r->first_error);
}
