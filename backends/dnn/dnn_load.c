/* dnn_load: finds a vendor DNN library at run time and binds its table (see
 * dnn.h). Shared by the cuDNN and hipDNN modules: a vendor says where to look
 * (dnn_lib_spec), this file looks, in the same order for both. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/dnn/dnn.h"

int dnn_name_optional(dnn_name n) {
  switch (n) {
#define DNN_OPT_CASE_(x) case DNN_##x:
    DNN_OPTIONAL_NAMES(DNN_OPT_CASE_)
#undef DNN_OPT_CASE_
    return 1;
    default:
      return 0;
  }
}

/* The folder of the module this file is linked into ("" when unknown). */
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

/* dlopen, appending why it failed to `why`. */
static void *try_open(const char *path, char *why, size_t cap) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    size_t len = strlen(why);
    snprintf(why + len, cap - len, "%s%.600s", len ? "; " : "", e ? e : path);
  }
  return h;
}

hd_status *dnn_vendor_bind(dnn_vendor *vd, const dnn_table *t, void *lib) {
  memset(vd, 0, sizeof *vd);
  void *p[DNN_ENTRY_COUNT];
  for (int i = 0; i < DNN_ENTRY_COUNT; ++i) {
    p[i] = dlsym(lib, t->symbols[i]);
    if (!p[i] && i != DNN_ENTRY_get_last_error_string)
      return hd_error(HD_ERR_NOT_FOUND, "%s lacks %s (too old a release?)", t->vendor,
                      t->symbols[i]);
  }
  vd->name = t->vendor;
#define DNN_BIND_(f, s) *(void **)&vd->f = p[DNN_ENTRY_##f];
  DNN_ENTRY_POINTS(DNN_BIND_)
#undef DNN_BIND_
  memcpy(vd->v, t->values, sizeof vd->v);
  vd->not_supported_span = t->not_supported_span;
  return NULL;
}

hd_status *dnn_lib_open(const char *what, const char *env, const char *const *sonames, void **lib) {
  char why[2048] = "";
  void *h = NULL;
  *lib = NULL;
  const char *path_env = env ? getenv(env) : NULL;
  if (path_env && path_env[0]) {
    h = try_open(path_env, why, sizeof why);
    if (!h) return hd_error(HD_ERR_NOT_FOUND, "%s not found at %s=%s: %s", what, env, path_env, why);
  } else {
    for (int i = 0; !h && sonames[i]; ++i) h = try_open(sonames[i], why, sizeof why);
    char dir[4096], path[4200];
    module_dir(dir, sizeof dir);
    for (int i = 0; !h && dir[0] && sonames[i]; ++i) {
      snprintf(path, sizeof path, "%s/%s", dir, sonames[i]);
      h = try_open(path, why, sizeof why);
    }
    if (!h)
      return hd_error(HD_ERR_NOT_FOUND, "%s (%s) not found on the library path nor next to the module: %s",
                      what, sonames[0], why);
  }
  *lib = h;
  return NULL;
}

hd_status *dnn_vendor_load(const dnn_lib_spec *s, dnn_vendor *vd, void **lib) {
  void *h = NULL;
  *lib = NULL;
  hd_status *st = dnn_lib_open(s->table->vendor, s->env, s->sonames, &h);
  if (st) {
    hd_status *out = hd_error(HD_ERR_NOT_FOUND, "%s backend: %s. %s, or set %s to its path", s->backend,
                              hd_status_msg(st), s->hint, s->env);
    hd_status_free(st);
    return out;
  }
  st = dnn_vendor_bind(vd, s->table, h);
  if (st) {
    st = hd_status_wrap(st, "%s backend: ", s->backend);
  } else {
    vd->version = s->version ? s->version(h) : 0;
    if (s->min_version && vd->version < s->min_version)
      st = hd_error(HD_ERR_NOT_FOUND, "%s backend: %s %zu found, %zu or later needed", s->backend,
                    s->table->vendor, vd->version, s->min_version);
  }
  if (st) {
    dlclose(h);
    memset(vd, 0, sizeof *vd);
    return st;
  }
  *lib = h;
  return NULL;
}
