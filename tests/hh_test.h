/* Small helpers shared by the ORT-level tests: open ORT, register the EP, pick
 * the device (ref here, a GPU under HIPDNN_EP_TEST_BACKEND=auto), and the
 * provider options that go with it. Header-only: each test is one program. */
#ifndef HH_TEST_H
#define HH_TEST_H

#include <stdio.h>
#include <string.h>

#include "tools/harness/harness.h"

#define HT_CHECK(cond, ...)                                          \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                  \
      fputc('\n', stderr);                                           \
      failures++;                                                    \
    }                                                                \
  } while (0)

/* Opens ORT, registers the EP and picks the device per the environment.
 * Returns 0, HH_SKIP (a GPU was asked for and none is listed; prints the SKIP
 * line) or 1 (error printed). On 0 and HH_SKIP, h must be closed. */
static inline int ht_setup(hh_ort *h, hh_target *t) {
  if (hh_ort_open(h, NULL)) {
    fprintf(stderr, "FAIL: %s\n", hh_err(h));
    return 1;
  }
  printf("ONNX Runtime %s (%s)\n", hh_ort_version(h), h->ort_lib);
  if (hh_ep_register(h, NULL)) {
    fprintf(stderr, "FAIL: %s\n", hh_err(h));
    hh_ort_close(h);
    return 1;
  }
  int rc = hh_target_pick(h, NULL, t);
  if (rc == HH_SKIP) {
    printf("SKIP: no GPU device listed\n");
    return HH_SKIP;
  }
  if (rc) {
    fprintf(stderr, "FAIL: %s\n", hh_err(h));
    hh_ort_close(h);
    return 1;
  }
  printf("device: %s backend=%s\n", HH_EP_NAME, t->backend);
  return 0;
}

/* Provider options for the target: backend=ref for the ref device; on a GPU,
 * use_tf32=0 so fp32 results can be held to fp32 tolerances. */
static inline size_t ht_ep_opts(const hh_target *t, const char **keys, const char **vals) {
  if (t->is_gpu) {
    keys[0] = "use_tf32";
    vals[0] = "0";
  } else {
    keys[0] = "backend";
    vals[0] = "ref";
  }
  return 1;
}

#endif
