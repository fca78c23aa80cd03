/* cf_results: cf_run <-> JSON.
 *
 * {"tool": "hipdnn-ep-conformance", "format": 1, "backend": "ref",
 *  "device": "ref", "ort_version": "1.29.0", "date": "2026-11-25 20:00 UTC",
 *  "cases_dir": "...",
 *  "filter": "", "jobs": 1, "timeout_s": 60, "wall_s": 123.4,
 *  "counts": {"pass": N, "fail": N, ...},
 *  "cases": [{"name": "test_abs", "ops": ["Abs"], "status": "pass",
 *             "nodes": 1, "ep_nodes": 1, "device": "ref", "ms": 41.2,
 *             "detail": ""}, ...]} */
#include "tools/conformance/cf_results.h"

#include <stdio.h>
#include <string.h>

#include "tools/conformance/cf_json.h"

int cf_results_save(const char *path, const cf_run *run) {
  FILE *f = fopen(path, "w");
  if (!f) { fprintf(stderr, "hipdnn-ep-conformance: cannot write %s\n", path); return 1; }
  int counts[CF_N_STATUS];
  cf_run_counts(run, counts);
  fprintf(f, "{\"tool\": \"hipdnn-ep-conformance\", \"format\": 1,\n \"backend\": ");
  cf_json_str(f, run->backend);
  fprintf(f, ", \"device\": ");
  cf_json_str(f, run->device);
  fprintf(f, ", \"ort_version\": ");
  cf_json_str(f, run->ort_version);
  fprintf(f, ", \"date\": ");
  cf_json_str(f, run->date);
  fprintf(f, ", \"tf32\": %d", run->tf32);
  fprintf(f, ",\n \"cases_dir\": ");
  cf_json_str(f, run->cases_dir);
  fprintf(f, ", \"filter\": ");
  cf_json_str(f, run->filter);
  fprintf(f, ",\n \"jobs\": %d, \"timeout_s\": %g, \"wall_s\": %.1f,\n \"counts\": {", run->jobs,
          run->timeout_s, run->wall_s);
  for (int s = 0; s < CF_N_STATUS; ++s)
    fprintf(f, "%s\"%s\": %d", s ? ", " : "", cf_status_name(s), counts[s]);
  fprintf(f, "},\n \"cases\": [\n");
  for (size_t i = 0; i < run->n; ++i) {
    const cf_case_rec *c = &run->cases[i];
    fprintf(f, "  {\"name\": ");
    cf_json_str(f, c->name);
    fprintf(f, ", \"ops\": [");
    for (size_t k = 0; k < c->n_ops; ++k) {
      if (k) fprintf(f, ", ");
      cf_json_str(f, c->ops[k]);
    }
    fprintf(f, "], \"status\": \"%s\", \"nodes\": %d, \"ep_nodes\": %d, \"device\": ",
            cf_status_name(c->r.status), c->r.nodes, c->r.ep_nodes);
    cf_json_str(f, c->r.device);
    fprintf(f, ", \"ms\": %.1f, \"detail\": ", c->ms);
    cf_json_str(f, c->r.detail);
    fprintf(f, "}%s\n", i + 1 < run->n ? "," : "");
  }
  fprintf(f, " ]}\n");
  if (fclose(f)) { fprintf(stderr, "hipdnn-ep-conformance: error writing %s\n", path); return 1; }
  return 0;
}

static void copy(char *dst, size_t len, const char *src) {
  snprintf(dst, len, "%s", src ? src : "");
}

int cf_results_load(const char *path, cf_run *run) {
  char err[256];
  cf_jv *root = cf_json_load(path, err, sizeof err);
  if (!root) { fprintf(stderr, "hipdnn-ep-conformance: %s: %s\n", path, err); return 1; }
  int rc = 1;
  memset(run, 0, sizeof *run);
  const cf_jv *cases = cf_json_get(root, "cases");
  if (strcmp(cf_json_gets(root, "tool", ""), "hipdnn-ep-conformance") != 0 || !cases ||
      cases->type != CF_JARR) {
    fprintf(stderr, "hipdnn-ep-conformance: %s is not a result file of this tool\n", path);
    goto out;
  }
  copy(run->backend, sizeof run->backend, cf_json_gets(root, "backend", ""));
  copy(run->device, sizeof run->device, cf_json_gets(root, "device", ""));
  copy(run->ort_version, sizeof run->ort_version, cf_json_gets(root, "ort_version", ""));
  copy(run->date, sizeof run->date, cf_json_gets(root, "date", ""));
  copy(run->cases_dir, sizeof run->cases_dir, cf_json_gets(root, "cases_dir", ""));
  copy(run->filter, sizeof run->filter, cf_json_gets(root, "filter", ""));
  run->jobs = (int)cf_json_getn(root, "jobs", 1);
  run->tf32 = (int)cf_json_getn(root, "tf32", 0);
  run->timeout_s = cf_json_getn(root, "timeout_s", 0);
  run->wall_s = cf_json_getn(root, "wall_s", 0);
  for (size_t i = 0; i < cases->n; ++i) {
    const cf_jv *c = cases->items[i];
    const cf_jv *ops = cf_json_get(c, "ops");
    char *names[256];
    size_t n_ops = 0;
    for (size_t k = 0; ops && ops->type == CF_JARR && k < ops->n && n_ops < 256; ++k)
      if (ops->items[k]->type == CF_JSTR) names[n_ops++] = ops->items[k]->str;
    cf_case_rec *rec = cf_run_add(run, cf_json_gets(c, "name", "?"), names, n_ops);
    if (!rec) { fprintf(stderr, "hipdnn-ep-conformance: out of memory\n"); goto out; }
    int st = cf_status_parse(cf_json_gets(c, "status", ""));
    if (st < 0) {
      fprintf(stderr, "hipdnn-ep-conformance: %s: case %s has an unknown status\n", path, rec->name);
      goto out;
    }
    rec->r.status = st;
    rec->r.nodes = (int)cf_json_getn(c, "nodes", 0);
    rec->r.ep_nodes = (int)cf_json_getn(c, "ep_nodes", -1);
    copy(rec->r.device, sizeof rec->r.device, cf_json_gets(c, "device", ""));
    copy(rec->r.detail, sizeof rec->r.detail, cf_json_gets(c, "detail", ""));
    rec->ms = cf_json_getn(c, "ms", 0);
  }
  rc = 0;
out:
  cf_json_free(root);
  if (rc) cf_run_free(run);
  return rc;
}
