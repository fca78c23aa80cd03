/* cf_run: bookkeeping of a run's case records. */
#include "tools/conformance/cf_run.h"

#include <stdlib.h>
#include <string.h>

void cf_run_counts(const cf_run *run, int counts[CF_N_STATUS]) {
  memset(counts, 0, sizeof(int) * CF_N_STATUS);
  for (size_t i = 0; i < run->n; ++i)
    if (run->cases[i].r.status >= 0 && run->cases[i].r.status < CF_N_STATUS)
      counts[run->cases[i].r.status]++;
}

cf_case_rec *cf_run_add(cf_run *run, const char *name, char *const *ops, size_t n_ops) {
  if (run->n == run->cap) {
    size_t cap = run->cap ? run->cap * 2 : 256;
    cf_case_rec *c = realloc(run->cases, cap * sizeof *c);
    if (!c) return NULL;
    run->cases = c;
    run->cap = cap;
  }
  cf_case_rec *c = &run->cases[run->n];
  memset(c, 0, sizeof *c);
  c->r.ep_nodes = -1;
  c->name = strdup(name);
  c->ops = calloc(n_ops ? n_ops : 1, sizeof *c->ops);
  if (!c->name || !c->ops) goto oom;
  for (size_t i = 0; i < n_ops; ++i) {
    if (!(c->ops[i] = strdup(ops[i]))) goto oom;
    c->n_ops++;
  }
  run->n++;
  return c;
oom:
  for (size_t i = 0; i < c->n_ops; ++i) free(c->ops[i]);
  free(c->ops);
  free(c->name);
  return NULL;
}

void cf_run_free(cf_run *run) {
  for (size_t i = 0; i < run->n; ++i) {
    for (size_t k = 0; k < run->cases[i].n_ops; ++k) free(run->cases[i].ops[k]);
    free(run->cases[i].ops);
    free(run->cases[i].name);
  }
  free(run->cases);
  run->cases = NULL;
  run->n = run->cap = 0;
}

int cf_claimed(int s) {
  return s == CF_PASS || s == CF_FAIL || s == CF_CRASH || s == CF_TIMEOUT;
}

int cf_failed(int s) {
  return s == CF_FAIL || s == CF_CRASH || s == CF_TIMEOUT;
}
