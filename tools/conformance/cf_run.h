/* cf_run: the results of one conformance run (one backend, one ORT). */
#ifndef CF_RUN_H
#define CF_RUN_H

#include <stddef.h>

#include "tools/conformance/cf_case.h"

typedef struct cf_case_rec {
  char *name;      /* case folder name, e.g. "test_abs" */
  char **ops;      /* distinct op types of its top-level nodes */
  size_t n_ops;
  cf_result r;
  double ms;       /* wall time of its process */
} cf_case_rec;

typedef struct cf_run {
  char backend[16];      /* requested: ref, auto, cpu */
  char device[16];       /* what ran: ref, cuda, hip, cpu */
  int tf32;              /* GPU mode: 0 strict, 1 TF32 (cf_tolerance_tf32) */
  char ort_version[32];
  char date[32];         /* when the run ended, UTC ("" in older result files) */
  char cases_dir[1024];
  char filter[256];
  double wall_s;
  double timeout_s;
  int jobs;
  size_t n, cap;
  cf_case_rec *cases;
} cf_run;

/* Counts per enum cf_status. */
void cf_run_counts(const cf_run *run, int counts[CF_N_STATUS]);
/* Adds a case (copies name and ops); returns its record or NULL. */
cf_case_rec *cf_run_add(cf_run *run, const char *name, char *const *ops, size_t n_ops);
void cf_run_free(cf_run *run);

/* A case "claimed" for the tables: our EP took nodes, or its process died
 * with it (crash/timeout), or our EP broke a case ORT runs (fail). */
int cf_claimed(int status);
/* fail + crash + timeout: what makes a run fail. */
int cf_failed(int status);

#endif
