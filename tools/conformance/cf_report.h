/* cf_report: a run's results for people: the per-op table and counts on a
 * terminal, and the markdown document (one run, or a CPU-machine run and a
 * GPU-machine run side by side). */
#ifndef CF_REPORT_H
#define CF_REPORT_H

#include <stdio.h>

#include "tools/conformance/cf_run.h"

/* Per-op table, then one line of counts of every class. The caller prints
 * the final "N passed, N failed" line (cf_report_summary). */
void cf_report_text(FILE *f, const cf_run *run, int table);
/* "N passed, N failed" (no newline): failed = fail + crash + timeout. */
void cf_report_summary(FILE *f, const cf_run *run);

/* Markdown from n (1 or 2) runs; 0 on success. */
int cf_report_markdown(const char *path, const cf_run *const *runs, int n);

#endif
