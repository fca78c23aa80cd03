/* cu_cudnn: the vendor half of the CUDA backend. Finds libcudnn.so.9 at run
 * time (the module links no cuDNN) and binds cu_cudnn_table into the module's
 * dnn_vendor (backends/dnn/dnn_load.c).
 *
 * Where libcudnn comes from, in order:
 *   1. $HIPDNN_EP_CUDNN_LIBRARY, a path: used alone when set (tests point it
 *      at a bogus file to check the missing-library path);
 *   2. "libcudnn.so.9" on the library path (LD_LIBRARY_PATH, rpath, ld.so.cache);
 *   3. libcudnn.so.9 next to this module. */
#include <dlfcn.h>

#include "backends/cuda/cu_cudnn.h"
#include "backends/gpu/gb_internal.h"

const char gb_backend_name[] = "cuda";

static size_t cu_version(void *lib) {
  size_t (*get_version)(void);
  *(void **)&get_version = dlsym(lib, "cudnnGetVersion");
  return get_version ? get_version() : 0;
}

static const char *const cu_sonames[] = {"libcudnn.so.9", NULL};

static const dnn_lib_spec cu_spec = {
    .backend = "cuda",
    .table = &cu_cudnn_table,
    .env = "HIPDNN_EP_CUDNN_LIBRARY",
    .sonames = cu_sonames,
    .hint = "Install cuDNN 9 for CUDA 13 and put its lib folder on LD_LIBRARY_PATH",
    .version = cu_version,
    .min_version = 90000, /* 9.0.0 */
};

hd_status *gb_dnn_load(gb_module *m) { return dnn_vendor_load(&cu_spec, &m->vd, &m->dnn_lib); }

void gb_dnn_unload(gb_module *m) {
  /* The library stays mapped: cuDNN keeps process-wide state (and handles
   * of other modules may still use it); dlclose would only risk that. */
  (void)m;
}
