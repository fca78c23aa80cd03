/* test_backend_hip: the HIP module (libhipdnn_ep_hip.so) loads with its HIP
 * runtime and opens, or fails cleanly with NOT_FOUND (no AMD GPU or driver,
 * no hipDNN). On a machine with an AMD GPU and hipDNN it exits 77 (SKIP):
 * running there is for a later test. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"

typedef hd_status *(*open_fn_t)(int api_version, const be_host *host, be_module **out);

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
  be_module *m = NULL;
  hd_status *st = open_fn(BE_API_VERSION, NULL, &m);
  if (!st) {
    printf("hip module opened: %d device(s); SKIP (running on AMD is not tested here)\n",
           m->vt->device_count(m));
    m->vt->close(m);
    return 77;
  }
  int ok = hd_status_code(st) == HD_ERR_NOT_FOUND && !m;
  printf("%s: hip module open: %s\n", ok ? "PASS" : "FAIL", hd_status_msg(st));
  hd_status_free(st);
  return ok ? 0 : 1;
}
