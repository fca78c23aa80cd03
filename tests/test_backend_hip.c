/* test_backend_hip: the HIP module (libhipdnn_ep_hip.so) as the core meets
 * it, on any machine (CI has no AMD GPU; the module still loads with its
 * HIP runtime):
 *   - a core speaking another API version is refused, naming both;
 *   - a core of another build (its layout hash differs) is refused before
 *     anything else, naming both layouts; so is a core that gives none;
 *   - with this build's layout it opens, or fails cleanly with NOT_FOUND
 *     (no AMD GPU or driver, no hipDNN), and every status it returns is
 *     freed here, by the core's side.
 * On a machine with an AMD GPU and hipDNN the last step opens the module:
 * it then lists its devices and closes it. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"

typedef hd_status *(*open_fn_t)(int api_version, const be_host *host, be_module **out);

static int failures;

#define CHECK(cond, ...)                     \
  do {                                       \
    if (!(cond)) {                           \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                   \
      printf("\n");                          \
      failures++;                            \
    }                                        \
  } while (0)

/* open_fn refuses: NOT_SUPPORTED, no module, and the message holds each of
 * the needles. */
static void expect_refusal(open_fn_t open_fn, int api, const be_host *h, const char *what, const char *n1,
                           const char *n2) {
  be_module *m = NULL;
  hd_status *st = open_fn(api, h, &m);
  CHECK(st && hd_status_code(st) == HD_ERR_NOT_SUPPORTED && !m, "%s: expected a refusal, got [%d] %s", what,
        (int)hd_status_code(st), hd_status_msg(st));
  CHECK(!n1 || strstr(hd_status_msg(st), n1), "%s: message lacks '%s': %s", what, n1, hd_status_msg(st));
  CHECK(!n2 || strstr(hd_status_msg(st), n2), "%s: message lacks '%s': %s", what, n2, hd_status_msg(st));
  printf("ok   %s: %s\n", what, hd_status_msg(st));
  hd_status_free(st);
  if (m) m->vt->close(m);
}

int main(void) {
  void *dl = dlopen(HD_HIP_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    printf("FAIL: %s\n", dlerror());
    return 1;
  }
  void *sym = dlsym(dl, BE_OPEN_SYMBOL);
  open_fn_t open_fn;
  memcpy(&open_fn, &sym, sizeof open_fn);
  if (!open_fn) {
    printf("FAIL: no %s\n", BE_OPEN_SYMBOL);
    return 1;
  }
  be_host host;
  memset(&host, 0, sizeof host);
  host.layout = be_layout_of_build();

  char v[32];
  snprintf(v, sizeof v, "%d", BE_API_VERSION + 1);
  expect_refusal(open_fn, BE_API_VERSION + 1, &host, "another API version", "API version", v);
  expect_refusal(open_fn, BE_API_VERSION, NULL, "no layout given", "another build", "none given");
  be_host other = host;
  other.layout.hash ^= 1;
  other.layout.op_count += 3;
  char want[32];
  snprintf(want, sizeof want, "%u op kinds", other.layout.op_count);
  expect_refusal(open_fn, BE_API_VERSION, &other, "a core of another build", "another build", want);

  be_module *m = NULL;
  hd_status *st = open_fn(BE_API_VERSION, &host, &m);
  if (!st) {
    printf("ok   hip module opened with this build's layout: %d device(s)\n", m->vt->device_count(m));
    m->vt->close(m);
  } else {
    CHECK(hd_status_code(st) == HD_ERR_NOT_FOUND && !m, "open: expected NOT_FOUND, got [%d] %s",
          (int)hd_status_code(st), hd_status_msg(st));
    printf("ok   hip module open with this build's layout: no AMD GPU here: %s\n", hd_status_msg(st));
    hd_status_free(st); /* a status the module made, freed by the core's copy of hd_status */
  }
  printf("test_backend_hip: %s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
