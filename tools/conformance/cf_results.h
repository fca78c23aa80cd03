/* cf_results: a run's results as a JSON file, written and read back (to
 * merge a CPU-machine run and a GPU-machine run into one document). */
#ifndef CF_RESULTS_H
#define CF_RESULTS_H

#include "tools/conformance/cf_run.h"

/* 0 on success; messages on stderr. */
int cf_results_save(const char *path, const cf_run *run);
int cf_results_load(const char *path, cf_run *run);

#endif
