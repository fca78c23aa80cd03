/* cf_case: runs one ONNX node test case through ONNX Runtime (via the
 * harness) and classifies it. Meant to run in a child process: it loads
 * ORT itself and may crash with it. */
#ifndef CF_CASE_H
#define CF_CASE_H

#include <stddef.h>

enum cf_status {
  CF_PASS,          /* claimed by our EP, outputs match */
  CF_FAIL,          /* claimed and wrong, or our EP breaks a case ORT runs */
  CF_NOT_CLAIMED,   /* our EP took no node */
  CF_ORT_ERROR,     /* the CPU EP alone cannot load or run it either */
  CF_UNSUPPORTED,   /* the runner cannot feed or compare it (sequences, strings...) */
  CF_CRASH,         /* the case's process died on a signal */
  CF_TIMEOUT,       /* the case's process ran past the time limit */
  CF_N_STATUS
};

/* "pass", "fail", "not-claimed", "ort-error", "runner-unsupported", "crash",
 * "timeout"; and back (-1 if unknown). */
const char *cf_status_name(int status);
int cf_status_parse(const char *name);

typedef struct cf_config {
  const char *backend;   /* "ref", "auto", or "cpu" (CPU EP only: self-test) */
  const char *ort_lib;   /* NULL: the harness default (env HIPDNN_EP_ORT_LIB) */
  const char *ep_lib;    /* NULL: the harness default (env HIPDNN_EP_LIB) */
  int intra_threads;     /* per session; 0 = ORT default */
  int tf32;              /* GPU: 0 strict (use_tf32=0, ONNX's tolerances); 1 the EP's
                          * default TF32 math, judged by cf_tolerance_tf32 */
} cf_config;

/* What one case's process sends back (a fixed-size record, written whole
 * to a pipe). */
typedef struct cf_result {
  int status;            /* enum cf_status */
  int nodes;             /* top-level nodes of the model */
  int ep_nodes;          /* nodes ORT assigned to our EP (-1 unknown) */
  char device[16];       /* backend that ran it: "ref", "cuda", "cpu", ... */
  char detail[1000];     /* why, for everything but pass / not-claimed */
} cf_result;

struct hh_tensor;
/* Reads dir/test_data_set_0/<prefix>_K.pb for K = 0, 1, ... while present
 * (at most max). 0, or 1 with the reason in msg. */
int cf_read_set(const char *dir, const char *prefix, struct hh_tensor *out, size_t max, size_t *n, char *msg,
                size_t len);

/* Runs the case in folder dir (model.onnx + test_data_set_0/). */
void cf_case_run(const cf_config *cfg, const char *dir, const char *name, cf_result *r);

/* Loads ORT, registers the EP and picks the device as cf_case_run would,
 * without a model: the check done once before a run. 0 = ready, otherwise
 * non-zero with the reason in msg. */
int cf_case_preflight(const cf_config *cfg, char *version, size_t vlen, char *msg, size_t mlen);

#endif
