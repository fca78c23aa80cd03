/* cf_runner: finds the cases and runs each in its own child process, a few
 * at a time, with a time limit per case. */
#ifndef CF_RUNNER_H
#define CF_RUNNER_H

#include <stdio.h>

#include "tools/conformance/cf_case.h"
#include "tools/conformance/cf_run.h"

typedef struct cf_runner_opts {
  const char *cases_dir;
  const char *filter;   /* POSIX extended regex on the case name, NULL = all */
  int jobs;             /* children at once, >= 1 */
  double timeout_s;     /* per case */
  int verbose;          /* one line per case, and the children's output */
  FILE *log;            /* progress lines (fail/crash/timeout always) */
  /* What each child does with its case folder: NULL = cf_case_run. */
  void (*case_fn)(const cf_config *cfg, const char *dir, const char *name, cf_result *r);
} cf_runner_opts;

/* Fills run (cases in name order). Returns 0, or non-zero when the run could
 * not start (no such folder, bad regex, no case): message on stderr. */
int cf_runner_run(const cf_config *cfg, const cf_runner_opts *o, cf_run *run);

#endif
