/* cu_cudnn: the vendor half of the CUDA backend. Finds libcudnn.so.9 at run
 * time (the module links no cuDNN), loads the backend API's entry points by
 * dlsym and fills the dnn_vendor table with cudnn_backend.h's values.
 *
 * Where libcudnn comes from, in order:
 *   1. $HIPDNN_EP_CUDNN_LIBRARY, a path: used alone when set (tests point it
 *      at a bogus file to check the missing-library path);
 *   2. "libcudnn.so.9" on the library path (LD_LIBRARY_PATH, rpath, ld.so.cache);
 *   3. libcudnn.so.9 next to this module. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn_backend.h>
#include <cudnn_graph.h>

#include "backends/gpu/gb_internal.h"

const char gb_backend_name[] = "cuda";

#define CU_CUDNN_SONAME "libcudnn.so.9"
#define CU_CUDNN_MIN_VERSION 90000 /* 9.0.0 */

/* The values of every dnn_name, pasted from cuDNN's names. Some of them
 * (the graph/plan HANDLE attributes) are marked deprecated in cuDNN 9 but
 * are still what a plan built without a device-properties descriptor uses. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static const int64_t cudnn_values[DNN_NAME_COUNT] = {
#define CU_VALUE_(n) [DNN_##n] = (int64_t)CUDNN_##n,
    DNN_NAMES(CU_VALUE_)
#undef CU_VALUE_
};
#pragma GCC diagnostic pop

static void module_dir(char *buf, size_t cap) {
  Dl_info info;
  buf[0] = '\0';
  if (dladdr((void *)&module_dir, &info) && info.dli_fname) {
    snprintf(buf, cap, "%s", info.dli_fname);
    char *slash = strrchr(buf, '/');
    if (slash) *slash = '\0';
    else buf[0] = '\0';
  }
}

static void *try_open(const char *path, char *why, size_t cap) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    size_t len = strlen(why);
    snprintf(why + len, cap - len, "%s%s", len ? "; " : "", e ? e : path);
  }
  return h;
}

static void *sym(void *lib, const char *name, hd_status **st) {
  void *p = dlsym(lib, name);
  if (!p && !*st)
    *st = hd_error(HD_ERR_NOT_FOUND, "cuda backend: libcudnn lacks %s (cuDNN 9 needed)", name);
  return p;
}

static void last_error_string(char *buf, size_t cap);
static void (*cudnn_last_error_fn)(char *, size_t);
static void last_error_string(char *buf, size_t cap) {
  if (cudnn_last_error_fn) cudnn_last_error_fn(buf, cap);
}

hd_status *gb_dnn_load(gb_module *m) {
  char why[2048] = "";
  void *lib = NULL;
  const char *env = getenv("HIPDNN_EP_CUDNN_LIBRARY");
  if (env && env[0]) {
    lib = try_open(env, why, sizeof why);
    if (!lib)
      return hd_error(HD_ERR_NOT_FOUND,
                      "cuda backend: cuDNN not found at HIPDNN_EP_CUDNN_LIBRARY=%s: %s", env, why);
  } else {
    lib = try_open(CU_CUDNN_SONAME, why, sizeof why);
    if (!lib) {
      char dir[4096], path[4200];
      module_dir(dir, sizeof dir);
      if (dir[0]) {
        snprintf(path, sizeof path, "%s/%s", dir, CU_CUDNN_SONAME);
        lib = try_open(path, why, sizeof why);
      }
    }
    if (!lib)
      return hd_error(HD_ERR_NOT_FOUND,
                      "cuda backend: %s (cuDNN 9 for CUDA 13) not found on the library path nor "
                      "next to the module: %s. Install cuDNN 9 and put its lib folder on "
                      "LD_LIBRARY_PATH, or set HIPDNN_EP_CUDNN_LIBRARY to its path",
                      CU_CUDNN_SONAME, why);
  }

  hd_status *st = NULL;
  dnn_vendor *vd = &m->vd;
  memset(vd, 0, sizeof *vd);
  vd->name = "cuDNN";
  size_t (*get_version)(void);
  *(void **)&get_version = sym(lib, "cudnnGetVersion", &st);
  *(void **)&vd->create_descriptor = sym(lib, "cudnnBackendCreateDescriptor", &st);
  *(void **)&vd->destroy_descriptor = sym(lib, "cudnnBackendDestroyDescriptor", &st);
  *(void **)&vd->finalize = sym(lib, "cudnnBackendFinalize", &st);
  *(void **)&vd->set_attribute = sym(lib, "cudnnBackendSetAttribute", &st);
  *(void **)&vd->get_attribute = sym(lib, "cudnnBackendGetAttribute", &st);
  *(void **)&vd->execute = sym(lib, "cudnnBackendExecute", &st);
  *(void **)&vd->create = sym(lib, "cudnnCreate", &st);
  *(void **)&vd->destroy = sym(lib, "cudnnDestroy", &st);
  *(void **)&vd->set_stream = sym(lib, "cudnnSetStream", &st);
  *(void **)&vd->get_error_string = sym(lib, "cudnnGetErrorString", &st);
  /* Optional: cuDNN >= 9.0 has it; a NULL is fine. */
  *(void **)&cudnn_last_error_fn = dlsym(lib, "cudnnGetLastErrorString");
  vd->get_last_error_string = cudnn_last_error_fn ? last_error_string : NULL;
  if (!st) {
    vd->version = get_version();
    if (vd->version < CU_CUDNN_MIN_VERSION)
      st = hd_error(HD_ERR_NOT_FOUND, "cuda backend: cuDNN %zu found, 9.0 or later needed",
                    vd->version);
  }
  if (st) {
    dlclose(lib);
    memset(vd, 0, sizeof *vd);
    return st;
  }
  memcpy(vd->v, cudnn_values, sizeof vd->v);
  m->dnn_lib = lib;
  return NULL;
}

void gb_dnn_unload(gb_module *m) {
  /* The library stays mapped: cuDNN keeps process-wide state (and handles
   * of other modules may still use it); dlclose would only risk that. */
  (void)m;
}
