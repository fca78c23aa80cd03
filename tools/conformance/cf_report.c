/* cf_report: tables and markdown. A case counts once under each distinct op
 * type among its top-level nodes (a function-expanded case such as
 * test_softmax_example_expanded counts under every op of its body), so the
 * per-op rows say how often each op was exercised, claimed and right. */
#include "tools/conformance/cf_report.h"

#include <stdlib.h>
#include <string.h>

/* How a GPU run judged fp32: strict, or by the TF32 rule. */
static const char *mode_label(const cf_run *r) {
  if (!strcmp(r->device, "ref") || !strcmp(r->device, "cpu") || !r->device[0]) return "";
  return r->tf32 ? " (TF32 mode, TF32 tolerances)" : " (strict: use_tf32=0)";
}

typedef struct op_row {
  const char *op;
  int cases[2], claimed[2], pass[2], fail[2];
} op_row;

static int cmp_row(const void *a, const void *b) {
  return strcmp(((const op_row *)a)->op, ((const op_row *)b)->op);
}

/* Rows for every op in any of the runs; NULL on out of memory. */
static op_row *op_table(const cf_run *const *runs, int nruns, size_t *n_rows) {
  size_t cap = 64, n = 0;
  op_row *rows = calloc(cap, sizeof *rows);
  if (!rows) return NULL;
  for (int r = 0; r < nruns; ++r)
    for (size_t i = 0; i < runs[r]->n; ++i) {
      const cf_case_rec *c = &runs[r]->cases[i];
      for (size_t k = 0; k < c->n_ops; ++k) {
        size_t j = 0;
        while (j < n && strcmp(rows[j].op, c->ops[k]) != 0) j++;
        if (j == n) {
          if (n == cap) {
            op_row *nr = realloc(rows, 2 * cap * sizeof *rows);
            if (!nr) { free(rows); return NULL; }
            rows = nr;
            cap *= 2;
          }
          memset(&rows[n], 0, sizeof rows[n]);
          rows[n++].op = c->ops[k];
        }
        int s = c->r.status;
        rows[j].cases[r]++;
        rows[j].claimed[r] += cf_claimed(s);
        rows[j].pass[r] += s == CF_PASS;
        rows[j].fail[r] += cf_failed(s);
      }
    }
  qsort(rows, n, sizeof *rows, cmp_row);
  *n_rows = n;
  return rows;
}

void cf_report_text(FILE *f, const cf_run *run, int table) {
  if (table) {
    size_t n = 0;
    const cf_run *runs[1] = {run};
    op_row *rows = op_table(runs, 1, &n);
    if (rows) {
      fprintf(f, "%-36s %6s %8s %6s %6s\n", "op type", "cases", "claimed", "pass", "fail");
      for (size_t i = 0; i < n; ++i)
        fprintf(f, "%-36s %6d %8d %6d %6d\n", rows[i].op, rows[i].cases[0], rows[i].claimed[0],
                rows[i].pass[0], rows[i].fail[0]);
      free(rows);
    }
  }
  int c[CF_N_STATUS];
  cf_run_counts(run, c);
  fprintf(f,
          "%zu cases (backend %s on %s%s, ORT %s, %.1f s): not-claimed %d, ort-error %d, "
          "runner-unsupported %d, crash %d, timeout %d, fail %d, pass %d\n",
          run->n, run->backend, run->device, mode_label(run), run->ort_version, run->wall_s, c[CF_NOT_CLAIMED],
          c[CF_ORT_ERROR], c[CF_UNSUPPORTED], c[CF_CRASH], c[CF_TIMEOUT], c[CF_FAIL], c[CF_PASS]);
}

void cf_report_summary(FILE *f, const cf_run *run) {
  int c[CF_N_STATUS];
  cf_run_counts(run, c);
  fprintf(f, "%d passed, %d failed", c[CF_PASS], c[CF_FAIL] + c[CF_CRASH] + c[CF_TIMEOUT]);
}

/* ---- markdown ------------------------------------------------------------- */

/* A table cell: '|' escaped, line breaks flattened, the cases folder's path
 * (machine-specific) left out, at most max chars. */
static void cell(FILE *f, const char *s, const char *strip, size_t max) {
  size_t n = 0, sl = strip ? strlen(strip) : 0;
  while (*s && n < max) {
    if (sl && strncmp(s, strip, sl) == 0) {
      s += sl;
      if (*s == '/') s++;
      continue;
    }
    if (*s == '|') fputs("\\|", f);
    else if (*s == '\n' || *s == '\r' || *s == '\t') fputc(' ', f);
    else if (*s == '`') fputc('\'', f);
    else fputc(*s, f);
    s++;
    n++;
  }
  if (*s) fputs("...", f);
}

static const cf_case_rec *find_case(const cf_run *run, const char *name) {
  size_t lo = 0, hi = run->n; /* cases are in name order */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(run->cases[mid].name, name);
    if (!c) return &run->cases[mid];
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  for (size_t i = 0; i < run->n; ++i) /* in case a file was not sorted */
    if (!strcmp(run->cases[i].name, name)) return &run->cases[i];
  return NULL;
}

static void label(FILE *f, const cf_run *r) {
  fprintf(f, "%s backend%s, ORT %s", r->device[0] ? r->device : r->backend, mode_label(r), r->ort_version);
}

/* Cases of run r with the given status; for a second run only those whose
 * status differs from the first run's (base). */
static void list_status(FILE *f, const cf_run *r, const cf_run *base, int status,
                        const char *title) {
  int any = 0;
  for (size_t i = 0; i < r->n; ++i) {
    const cf_case_rec *c = &r->cases[i];
    if (c->r.status != status) continue;
    const cf_case_rec *b = base ? find_case(base, c->name) : NULL;
    if (b && b->r.status == status) continue;
    if (!any) {
      fprintf(f, "\n### %s: ", title);
      label(f, r);
      if (base) fprintf(f, " (where the first column's status differs)");
      fprintf(f, "\n\n| case | reason |\n|---|---|\n");
      any = 1;
    }
    fprintf(f, "| %s | ", c->name);
    cell(f, c->r.detail, r->cases_dir, 240);
    fprintf(f, " |\n");
  }
}

int cf_report_markdown(const char *path, const cf_run *const *runs, int n) {
  FILE *f = fopen(path, "w");
  if (!f) { fprintf(stderr, "hipdnn-ep-conformance: cannot write %s\n", path); return 1; }
  size_t n_rows = 0;
  op_row *rows = op_table(runs, n, &n_rows);
  if (!rows) { fclose(f); return 1; }

  fprintf(f, "# ONNX node test conformance\n\n");
  fprintf(f, "<!-- Generated by `make conformance-doc` (tools/conformance, "
             "hipdnn-ep-conformance --merge-markdown); do not edit by hand. -->\n\n");
  fprintf(f,
          "Every ONNX backend node test case (`onnx/backend/test/data/node`, see "
          "`../shared/onnx-node-tests/SOURCE.md`) is loaded into an ONNX Runtime session "
          "with hipdnn-ep (CPU EP as fallback), run on `test_data_set_0`, and each output is "
          "compared with the expected one the way ONNX's own backend test runner does "
          "(`assert_allclose`, rtol 1e-3, atol 1e-7; integers and bools exact; shape and "
          "dtype must match).\n\n"
          "- **pass**: our EP took at least one node and every output matches.\n"
          "- **fail**: our EP took nodes and an output is wrong, or the session/run fails "
          "with our EP while the CPU EP alone runs the case. Also counted as failed: "
          "**crash** (the case's process died on a signal) and **timeout**.\n"
          "- **not-claimed**: our EP took no node; ONNX Runtime's CPU EP ran everything.\n"
          "- **ort-error**: ONNX Runtime with the CPU EP alone cannot load or run the case.\n"
          "- **runner-unsupported**: the runner cannot feed or compare the case (sequence or "
          "optional values, string tensors, element types the harness does not hold).\n\n"
          "A claimed case that is wrong is a bug, always: the gate in `tests/conformance.cmake` "
          "fails on any fail, crash or timeout.\n\n"
          "On a GPU the run is **strict** by default (`--tf32 0`: provider option `use_tf32=0`, "
          "fp32 math in fp32, ONNX's tolerances). The EP's default TF32 mode (`--tf32 1`) is "
          "reported separately and judged by a TF32 rule, |actual - expected| <= 1e-2 |expected| "
          "+ 1e-3 max|expected| over the output: TF32 rounds matmul and convolution operands to "
          "a 10-bit mantissa, so a sum of many terms is off by about 1e-3 of the terms' "
          "magnitude whatever the result's (scripts/gpu-check.sh runs both).\n\n"
          "Reproduce: `make conformance-doc` runs the ref backend here and merges the GPU "
          "column from `docs/conformance-gpu.json` when that file exists. The GPU column comes "
          "from the GPU machine: `build/bin/hipdnn-ep-conformance --cases <node tests> "
          "--backend auto --tf32 0 --json conformance-gpu.json`, brought back as "
          "`docs/conformance-gpu.json`. One case: `--filter '^test_abs$' --verbose`.\n\n");

  fprintf(f, "## Summary\n\n| | ");
  for (int r = 0; r < n; ++r) { label(f, runs[r]); fprintf(f, " | "); }
  fprintf(f, "\n|---|");
  for (int r = 0; r < n; ++r) fprintf(f, "---:|");
  fprintf(f, "\n");
  static const int order[] = {CF_PASS, CF_FAIL, CF_CRASH, CF_TIMEOUT, CF_NOT_CLAIMED,
                              CF_ORT_ERROR, CF_UNSUPPORTED};
  int counts[2][CF_N_STATUS];
  for (int r = 0; r < n; ++r) cf_run_counts(runs[r], counts[r]);
  for (size_t k = 0; k < sizeof order / sizeof order[0]; ++k) {
    fprintf(f, "| %s |", cf_status_name(order[k]));
    for (int r = 0; r < n; ++r) fprintf(f, " %d |", counts[r][order[k]]);
    fprintf(f, "\n");
  }
  fprintf(f, "| cases |");
  for (int r = 0; r < n; ++r) fprintf(f, " %zu |", runs[r]->n);
  fprintf(f, "\n| wall time (s) |");
  for (int r = 0; r < n; ++r) fprintf(f, " %.0f |", runs[r]->wall_s);
  fprintf(f, "\n| run on |");
  for (int r = 0; r < n; ++r) fprintf(f, " %s |", runs[r]->date[0] ? runs[r]->date : "not recorded");
  fprintf(f, "\n");
  for (int r = 0; r < n; ++r)
    if (runs[r]->filter[0]) {
      fprintf(f, "\nRun %d (", r + 1);
      label(f, runs[r]);
      fprintf(f, ") used --filter `%s`.\n", runs[r]->filter);
    }

  fprintf(f, "\n## By op type\n\nA case counts under each op type of its top-level nodes "
             "(function-expanded cases under each op of the body). fail includes crash and "
             "timeout.\n\n| op type | cases |");
  for (int r = 0; r < n; ++r)
    fprintf(f, " %s claimed | %s pass | %s fail |", runs[r]->device, runs[r]->device,
            runs[r]->device);
  fprintf(f, "\n|---|---:|");
  for (int r = 0; r < n; ++r) fprintf(f, "---:|---:|---:|");
  fprintf(f, "\n");
  for (size_t i = 0; i < n_rows; ++i) {
    int any = 0;
    for (int r = 0; r < n; ++r) any |= rows[i].claimed[r];
    fprintf(f, "| %s%s%s | %d |", any ? "**" : "", rows[i].op, any ? "**" : "",
            rows[i].cases[0] ? rows[i].cases[0] : rows[i].cases[n - 1]);
    for (int r = 0; r < n; ++r)
      fprintf(f, " %d | %d | %d |", rows[i].claimed[r], rows[i].pass[r], rows[i].fail[r]);
    fprintf(f, "\n");
  }
  free(rows);

  fprintf(f, "\n## Claimed cases\n\nEvery case that some backend claimed (or failed, crashed "
             "or timed out on), with its status per backend.\n\n| case |");
  for (int r = 0; r < n; ++r) { fprintf(f, " "); label(f, runs[r]); fprintf(f, " |"); }
  fprintf(f, "\n|---|");
  for (int r = 0; r < n; ++r) fprintf(f, "---|");
  fprintf(f, "\n");
  /* union of names in order: walk run 0, then names only in run 1 */
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < runs[r]->n; ++i) {
      const char *name = runs[r]->cases[i].name;
      if (r == 1 && find_case(runs[0], name)) continue;
      int claimed = 0;
      const cf_case_rec *c[2] = {NULL, NULL};
      for (int q = 0; q < n; ++q) {
        c[q] = find_case(runs[q], name);
        if (c[q]) claimed |= cf_claimed(c[q]->r.status);
      }
      if (!claimed) continue;
      fprintf(f, "| %s |", name);
      for (int q = 0; q < n; ++q) {
        if (!c[q]) { fprintf(f, " (not run) |"); continue; }
        int s = c[q]->r.status;
        fprintf(f, " %s%s%s", cf_failed(s) ? "**" : "", cf_status_name(s), cf_failed(s) ? "**" : "");
        if (cf_claimed(s) && c[q]->r.ep_nodes >= 0)
          fprintf(f, " (%d/%d nodes)", c[q]->r.ep_nodes, c[q]->r.nodes);
        fprintf(f, " |");
      }
      fprintf(f, "\n");
    }

  fprintf(f, "\n## Cases that did not pass\n\nFailures first (none is acceptable), then "
             "the cases ORT cannot run and those the runner cannot feed.\n");
  static const int listed[] = {CF_FAIL, CF_CRASH, CF_TIMEOUT, CF_ORT_ERROR, CF_UNSUPPORTED};
  for (size_t k = 0; k < sizeof listed / sizeof listed[0]; ++k)
    for (int r = 0; r < n; ++r)
      list_status(f, runs[r], (r && !cf_failed(listed[k])) ? runs[0] : NULL, listed[k],
                  cf_status_name(listed[k]));
  if (fclose(f)) { fprintf(stderr, "hipdnn-ep-conformance: error writing %s\n", path); return 1; }
  return 0;
}
