/* hip_hipdnn: the vendor half of the HIP backend. Finds libhipdnn_backend.so
 * at run time (the module links no hipDNN) and binds hip_hipdnn_table into the
 * module's dnn_vendor (backends/dnn/dnn_load.c).
 *
 * Where libhipdnn_backend.so comes from, in order:
 *   1. $HIPDNN_EP_HIPDNN_LIBRARY, a path: used alone when set;
 *   2. "libhipdnn_backend.so" on the library path (LD_LIBRARY_PATH, rpath,
 *      ld.so.cache): e.g. TheRock's lib/ folder on LD_LIBRARY_PATH;
 *   3. libhipdnn_backend.so next to this module.
 * hipDNN itself then finds its engine plugins (HIPDNN_PLUGIN_DIR; docs/amd.md). */
#include <dlfcn.h>
#include <stdlib.h>

#include "backends/gpu/gb_internal.h"
#include "backends/hip/hip_hipdnn.h"

const char gb_backend_name[] = "hip";

/* hipDNN reports "MAJOR.MINOR.PATCH.TWEAK" (hipdnnVersionString_ext; older
 * releases: the deprecated hipdnnGetVersion_ext), as MAJOR*10000+MINOR*100+PATCH. */
static size_t hip_version(void *lib) {
  const char *(*version_string)(void);
  int (*get_version)(const char **);
  const char *s = NULL;
  *(void **)&version_string = dlsym(lib, "hipdnnVersionString_ext");
  *(void **)&get_version = dlsym(lib, "hipdnnGetVersion_ext");
  if (version_string) s = version_string();
  else if (get_version && get_version(&s) != 0) s = NULL;
  if (!s) return 0;
  char *end;
  unsigned long part[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    part[i] = strtoul(s, &end, 10);
    if (*end != '.') break;
    s = end + 1;
  }
  return (size_t)(part[0] * 10000 + part[1] * 100 + part[2]);
}

static const char *const hip_sonames[] = {"libhipdnn_backend.so", NULL};

static const dnn_lib_spec hip_spec = {
    .backend = "hip",
    .table = &hip_hipdnn_table,
    .env = "HIPDNN_EP_HIPDNN_LIBRARY",
    .sonames = hip_sonames,
    .hint = "Install hipDNN (TheRock) and put its lib folder on LD_LIBRARY_PATH",
    .version = hip_version,
    .min_version = 0, /* hipDNN has no stable ABI to check against yet */
};

hd_status *gb_dnn_load(gb_module *m) { return dnn_vendor_load(&hip_spec, &m->vd, &m->dnn_lib); }

void gb_dnn_unload(gb_module *m) {
  /* The library stays mapped: hipDNN keeps its loaded engine plugins
   * process-wide (lazy unloading by default); dlclose would only risk that. */
  (void)m;
}
