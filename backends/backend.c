/* The only caller of be_vtable members: required members are checked once at
 * open, optional ones get their defaults here. */
#include "backends/backend.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef hd_status *(*be_open_fn)(int api_version, const be_host *host, be_module **out);

/* The folder of the library this code is in (the core EP library). Loaded
 * through a symbolic link (AMD's umbrella EP loads a backend by its own file
 * name, e.g. a libhipgpu.so linked to ours), the modules are beside the
 * file itself, not beside the link: resolve it. */
static void self_dir(char *buf, size_t cap) {
  Dl_info info;
  buf[0] = '\0';
  if (dladdr((void *)&self_dir, &info) && info.dli_fname) {
    char *real = realpath(info.dli_fname, NULL);
    snprintf(buf, cap, "%s", real ? real : info.dli_fname);
    free(real);
    char *slash = strrchr(buf, '/');
    if (slash) *slash = '\0';
    else buf[0] = '\0';
  }
}

static hd_status *check_vtable(const be_vtable *vt, const char *name) {
  if (!vt || vt->api_version != BE_API_VERSION)
    return hd_error(HD_ERR_NOT_SUPPORTED, "backend '%s' speaks API version %d, the core %d", name,
                    vt ? vt->api_version : -1, BE_API_VERSION);
  if (!vt->close || !vt->device_count || !vt->device_info || !vt->context_create ||
      !vt->context_destroy || !vt->supports_node || !vt->graph_compile || !vt->graph_free ||
      !vt->plan_compile || !vt->plan_free || !vt->plan_run)
    return hd_error(HD_ERR_INTERNAL, "backend '%s' lacks a required member", name);
  if (!vt->host_memory && (!vt->mem_alloc || !vt->mem_free || !vt->copy || !vt->copy_rows_padded ||
                           !vt->stream_create ||
                           !vt->stream_destroy || !vt->stream_sync || !vt->event_create ||
                           !vt->event_destroy || !vt->event_record || !vt->stream_wait_event ||
                           !vt->event_sync || !vt->event_query))
    return hd_error(HD_ERR_INTERNAL, "device backend '%s' lacks a memory/stream member", name);
  return NULL;
}

hd_status *be_module_open(const char *name, const be_host *host, be_module **out) {
  *out = NULL;
  hd_status *st;
  if (strcmp(name, "ref") == 0) {
    st = ref_backend_open(host, out);
  } else {
    char dir[4096], path[4200];
    self_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s%slibhipdnn_ep_%s.so", dir, dir[0] ? "/" : "", name);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
      const char *why = dlerror();
      return hd_error(HD_ERR_NOT_FOUND, "backend module %s: %s", path, why ? why : "cannot load");
    }
    be_open_fn open_fn;
    *(void **)&open_fn = dlsym(dl, BE_OPEN_SYMBOL);
    if (!open_fn) {
      dlclose(dl);
      return hd_error(HD_ERR_NOT_FOUND, "backend module %s has no %s", path, BE_OPEN_SYMBOL);
    }
    be_host h = *host;
    h.layout = be_layout_of_build();
    st = open_fn(BE_API_VERSION, &h, out);
    /* The module stays loaded: its objects may outlive this call and a
     * module may keep vendor libraries open. It is never unloaded. */
  }
  if (!st) st = check_vtable((*out)->vt, name);
  if (st && *out) {
    (*out)->vt->close(*out);
    *out = NULL;
  }
  return st;
}

void be_module_close(be_module *m) {
  if (m) m->vt->close(m);
}

const char *be_name(const be_module *m) { return m->vt->name; }
int be_host_memory(const be_module *m) { return m->vt->host_memory; }
int be_device_count(be_module *m) { return m->vt->device_count(m); }

hd_status *be_device_info_get(be_module *m, int ordinal, be_device_info *out) {
  memset(out, 0, sizeof *out);
  return m->vt->device_info(m, ordinal, out);
}

hd_status *be_mem_alloc(be_module *m, int ordinal, size_t bytes, void **p) {
  if (!m->vt->mem_alloc) return hd_error(HD_ERR_INTERNAL, "backend %s has no device memory", m->vt->name);
  return m->vt->mem_alloc(m, ordinal, bytes, p);
}

void be_mem_free(be_module *m, int ordinal, void *p) {
  if (p && m->vt->mem_free) m->vt->mem_free(m, ordinal, p);
}

hd_status *be_host_alloc_pinned(be_module *m, size_t bytes, void **p) {
  if (!m->vt->host_alloc_pinned)
    return hd_error(HD_ERR_NOT_SUPPORTED, "backend %s has no pinned memory", m->vt->name);
  return m->vt->host_alloc_pinned(m, bytes, p);
}

void be_host_free_pinned(be_module *m, void *p) {
  if (p && m->vt->host_free_pinned) m->vt->host_free_pinned(m, p);
}

hd_status *be_mem_info(be_module *m, int ordinal, size_t *free_bytes, size_t *total_bytes) {
  *free_bytes = *total_bytes = 0;
  if (!m->vt->mem_info) return NULL;
  return m->vt->mem_info(m, ordinal, free_bytes, total_bytes);
}

hd_status *be_copy(be_module *m, int ordinal, void *dst, const void *src, size_t bytes,
                   be_copy_kind kind, void *stream) {
  if (bytes == 0) return NULL;
  if (m->vt->host_memory) {
    memmove(dst, src, bytes);
    return NULL;
  }
  return m->vt->copy(m, ordinal, dst, src, bytes, kind, stream);
}

hd_status *be_copy_rows_padded(be_module *m, int ordinal, void *dst, size_t dst_pitch, const void *src,
                               size_t src_pitch, size_t row_bytes, size_t rows, be_copy_kind kind, void *stream) {
  if (dst_pitch < row_bytes || src_pitch < row_bytes)
    return hd_error(HD_ERR_INTERNAL, "a padded copy of %zu-byte rows to %zu-byte rows", row_bytes, dst_pitch);
  if (rows == 0 || dst_pitch == 0) return NULL;
  if (m->vt->host_memory) {
    for (size_t r = 0; r < rows; r++) {
      memmove((char *)dst + r * dst_pitch, (const char *)src + r * src_pitch, row_bytes);
      memset((char *)dst + r * dst_pitch + row_bytes, 0, dst_pitch - row_bytes);
    }
    return NULL;
  }
  return m->vt->copy_rows_padded(m, ordinal, dst, dst_pitch, src, src_pitch, row_bytes, rows, kind, stream);
}

hd_status *be_stream_create(be_module *m, int ordinal, void **stream) {
  *stream = NULL;
  return m->vt->stream_create ? m->vt->stream_create(m, ordinal, stream) : NULL;
}

void be_stream_destroy(be_module *m, int ordinal, void *stream) {
  if (stream && m->vt->stream_destroy) m->vt->stream_destroy(m, ordinal, stream);
}

hd_status *be_stream_sync(be_module *m, int ordinal, void *stream) {
  return m->vt->stream_sync ? m->vt->stream_sync(m, ordinal, stream) : NULL;
}

hd_status *be_event_create(be_module *m, int ordinal, void **event) {
  *event = NULL;
  return m->vt->event_create ? m->vt->event_create(m, ordinal, event) : NULL;
}

void be_event_destroy(be_module *m, int ordinal, void *event) {
  if (event && m->vt->event_destroy) m->vt->event_destroy(m, ordinal, event);
}

hd_status *be_event_record(be_module *m, void *event, void *stream) {
  return m->vt->event_record ? m->vt->event_record(m, event, stream) : NULL;
}

hd_status *be_stream_wait_event(be_module *m, void *stream, void *event) {
  return m->vt->stream_wait_event ? m->vt->stream_wait_event(m, stream, event) : NULL;
}

hd_status *be_event_sync(be_module *m, void *event) {
  return m->vt->event_sync ? m->vt->event_sync(m, event) : NULL;
}

hd_status *be_event_query(be_module *m, void *event, int *done) {
  *done = 1;
  return m->vt->event_query ? m->vt->event_query(m, event, done) : NULL;
}

hd_status *be_context_create(be_module *m, int ordinal, const be_options *opts,
                             const be_alloc *alloc, be_context **out) {
  *out = NULL;
  return m->vt->context_create(m, ordinal, opts, alloc, out);
}

void be_context_destroy(be_module *m, be_context *c) {
  if (c) m->vt->context_destroy(c);
}

hd_status *be_supports_node(be_module *m, be_context *c, const ir_graph *g, int node) {
  return m->vt->supports_node(c, g, node);
}

hd_status *be_graph_compile(be_module *m, be_context *c, const ir_graph *g, be_graph **out) {
  *out = NULL;
  return m->vt->graph_compile(c, g, out);
}

void be_graph_free(be_module *m, be_graph *bg) {
  if (bg) m->vt->graph_free(bg);
}

hd_status *be_plan_compile(be_module *m, be_graph *bg, const ir_plan *p, be_plan **out) {
  *out = NULL;
  return m->vt->plan_compile(bg, p, out);
}

void be_plan_free(be_module *m, be_plan *bp) {
  if (bp) m->vt->plan_free(bp);
}

hd_status *be_plan_run(be_module *m, be_plan *bp, void *const *inputs, void *const *outputs,
                       void *stream) {
  return m->vt->plan_run(bp, inputs, outputs, stream);
}

hd_status *be_plan_run_profiled(be_module *m, be_plan *bp, void *const *inputs, void *const *outputs,
                                void *stream, be_run_profile *prof) {
  prof->n = 0;
  if (m->vt->plan_run_profiled) return m->vt->plan_run_profiled(bp, inputs, outputs, stream, prof);
  int64_t t0 = be_clock_ns();
  hd_status *st = m->vt->plan_run(bp, inputs, outputs, stream);
  if (!st && prof->cap > 0) {
    prof->steps[0] = (be_step_time){.step = -1, .start_ns = t0, .dur_ns = be_clock_ns() - t0};
    prof->n = 1;
  }
  return st;
}

void be_graph_memory_get(be_module *m, be_graph *bg, be_graph_memory *out) {
  memset(out, 0, sizeof *out);
  if (bg && m->vt->graph_memory) m->vt->graph_memory(bg, out);
}
