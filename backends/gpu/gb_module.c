/* gb_module: the GPU backend module's entry point, devices, raw memory,
 * copies, streams and events. GPU runtime calls go through gpu_vendor.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"

hd_status *gb_status(gpuError_t e, const char *call, const char *file, int line) {
  if (e == gpuSuccess) return NULL;
  (void)gpuGetLastError(); /* clear a non-sticky error so later calls start clean */
  hd_code code = e == gpuErrorMemoryAllocation ? HD_ERR_OUT_OF_MEMORY : HD_ERR_BACKEND;
  return hd_error(code, "%s:%d: %s failed: %s (%s)", file, line, call, gpuGetErrorString(e),
                  gpuGetErrorName(e));
}

static gb_module *mod(be_module *m) { return (gb_module *)m; }

static hd_status *check_ordinal(be_module *m, int ordinal) {
  if (ordinal < 0 || ordinal >= mod(m)->ndev)
    return hd_error(HD_ERR_INVALID_ARG, "%s: no device %d (%d visible)", gb_backend_name, ordinal,
                    mod(m)->ndev);
  return NULL;
}

static void gb_close(be_module *m) {
  if (!m) return;
  gb_dnn_unload(mod(m));
  free(m);
}

static int gb_device_count(be_module *m) { return mod(m)->ndev; }

/* The PCI device (product) id: the runtime does not report it; sysfs does. */
static uint32_t pci_product_id(const char *bus_id) {
  char path[128];
  snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/device", bus_id);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  unsigned v = 0;
  if (fscanf(f, "%x", &v) != 1) v = 0;
  fclose(f);
  return v;
}

static hd_status *gb_device_info(be_module *m, int ordinal, be_device_info *out) {
  HD_TRY(check_ordinal(m, ordinal));
  gpuDeviceProp prop;
  GB_CHECK(gpuGetDeviceProperties(&prop, ordinal));
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%.127s", prop.name);
  out->vendor_id = GPU_VENDOR_ID;
  snprintf(out->pci_bus_id, sizeof out->pci_bus_id, "%04x:%02x:%02x.0",
           (unsigned)prop.pciDomainID, (unsigned)prop.pciBusID, (unsigned)prop.pciDeviceID);
  out->pci_device_id = pci_product_id(out->pci_bus_id);
  out->total_memory = prop.totalGlobalMem;
  out->ordinal = ordinal;
  return NULL;
}

static hd_status *gb_mem_alloc(be_module *m, int ordinal, size_t bytes, void **p) {
  *p = NULL;
  HD_TRY(check_ordinal(m, ordinal));
  GB_CHECK(gpuSetDevice(ordinal));
  gpuError_t e = gpuMalloc(p, bytes ? bytes : 1);
  if (e != gpuSuccess) {
    *p = NULL;
    return hd_status_wrap(gb_status(e, "gpuMalloc", __FILE__, __LINE__),
                          "%s device %d, %zu bytes: ", gb_backend_name, ordinal, bytes);
  }
  return NULL;
}

static void gb_mem_free(be_module *m, int ordinal, void *p) {
  (void)m;
  if (!p) return;
  if (gpuSetDevice(ordinal) != gpuSuccess || gpuFree(p) != gpuSuccess) (void)gpuGetLastError();
}

static hd_status *gb_host_alloc_pinned(be_module *m, size_t bytes, void **p) {
  (void)m;
  *p = NULL;
  gpuError_t e = gpuMallocHost(p, bytes ? bytes : 1);
  if (e != gpuSuccess) {
    *p = NULL;
    return hd_status_wrap(gb_status(e, "gpuMallocHost", __FILE__, __LINE__), "%zu bytes: ", bytes);
  }
  return NULL;
}

static void gb_host_free_pinned(be_module *m, void *p) {
  (void)m;
  if (p && gpuFreeHost(p) != gpuSuccess) (void)gpuGetLastError();
}

static hd_status *gb_mem_info(be_module *m, int ordinal, size_t *free_bytes, size_t *total_bytes) {
  HD_TRY(check_ordinal(m, ordinal));
  GB_CHECK(gpuSetDevice(ordinal));
  GB_CHECK(gpuMemGetInfo(free_bytes, total_bytes));
  return NULL;
}

static hd_status *gb_copy(be_module *m, int ordinal, void *dst, const void *src, size_t bytes,
                          be_copy_kind kind, void *stream) {
  HD_TRY(check_ordinal(m, ordinal));
  if (bytes == 0) return NULL;
  GB_CHECK(gpuSetDevice(ordinal));
  int k = kind == BE_COPY_HOST_TO_DEVICE   ? gpuMemcpyHostToDevice
          : kind == BE_COPY_DEVICE_TO_HOST ? gpuMemcpyDeviceToHost
                                           : gpuMemcpyDeviceToDevice;
  if (stream)
    GB_CHECK(gpuMemcpyAsync(dst, src, bytes, k, (gpuStream_t)stream));
  else
    GB_CHECK(gpuMemcpy(dst, src, bytes, k));
  return NULL;
}

static hd_status *gb_copy_rows_padded(be_module *m, int ordinal, void *dst, size_t dst_pitch, const void *src,
                                      size_t src_pitch, size_t row_bytes, size_t rows, be_copy_kind kind,
                                      void *stream) {
  HD_TRY(check_ordinal(m, ordinal));
  if (kind == BE_COPY_DEVICE_TO_HOST) return hd_error(HD_ERR_INTERNAL, "a padded copy to host memory");
  GB_CHECK(gpuSetDevice(ordinal));
  gpuStream_t s = (gpuStream_t)stream;
  int k = kind == BE_COPY_HOST_TO_DEVICE ? gpuMemcpyHostToDevice : gpuMemcpyDeviceToDevice;
  if (row_bytes) GB_CHECK(gpuMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows, k, s));
  if (dst_pitch > row_bytes)
    GB_CHECK(gpuMemset2DAsync((char *)dst + row_bytes, dst_pitch, 0, dst_pitch - row_bytes, rows, s));
  return NULL;
}

static hd_status *gb_stream_create(be_module *m, int ordinal, void **stream) {
  *stream = NULL;
  HD_TRY(check_ordinal(m, ordinal));
  GB_CHECK(gpuSetDevice(ordinal));
  gpuStream_t s;
  GB_CHECK(gpuStreamCreateWithFlags(&s, gpuStreamNonBlocking));
  *stream = (void *)s;
  return NULL;
}

static void gb_stream_destroy(be_module *m, int ordinal, void *stream) {
  (void)m;
  if (!stream) return;
  if (gpuSetDevice(ordinal) != gpuSuccess || gpuStreamDestroy((gpuStream_t)stream) != gpuSuccess)
    (void)gpuGetLastError();
}

static hd_status *gb_stream_sync(be_module *m, int ordinal, void *stream) {
  HD_TRY(check_ordinal(m, ordinal));
  GB_CHECK(gpuSetDevice(ordinal));
  GB_CHECK(gpuStreamSynchronize((gpuStream_t)stream));
  return NULL;
}

static hd_status *gb_event_create(be_module *m, int ordinal, void **event) {
  *event = NULL;
  HD_TRY(check_ordinal(m, ordinal));
  GB_CHECK(gpuSetDevice(ordinal));
  gpuEvent_t e;
  GB_CHECK(gpuEventCreateWithFlags(&e, gpuEventDisableTiming));
  *event = (void *)e;
  return NULL;
}

static void gb_event_destroy(be_module *m, int ordinal, void *event) {
  (void)m;
  if (!event) return;
  if (gpuSetDevice(ordinal) != gpuSuccess || gpuEventDestroy((gpuEvent_t)event) != gpuSuccess)
    (void)gpuGetLastError();
}

static hd_status *gb_event_record(be_module *m, void *event, void *stream) {
  (void)m;
  GB_CHECK(gpuEventRecord((gpuEvent_t)event, (gpuStream_t)stream));
  return NULL;
}

static hd_status *gb_stream_wait_event(be_module *m, void *stream, void *event) {
  (void)m;
  GB_CHECK(gpuStreamWaitEvent((gpuStream_t)stream, (gpuEvent_t)event, 0));
  return NULL;
}

static hd_status *gb_event_sync(be_module *m, void *event) {
  (void)m;
  GB_CHECK(gpuEventSynchronize((gpuEvent_t)event));
  return NULL;
}

static hd_status *gb_event_query(be_module *m, void *event, int *done) {
  (void)m;
  gpuError_t e = gpuEventQuery((gpuEvent_t)event);
  *done = e == gpuSuccess;
  if (e == gpuErrorNotReady) {
    (void)gpuGetLastError();
    return NULL;
  }
  GB_CHECK(e);
  return NULL;
}

static const be_vtable gb_vtable = {
    .api_version = BE_API_VERSION,
    .name = gb_backend_name,
    .host_memory = 0,
    .close = gb_close,
    .device_count = gb_device_count,
    .device_info = gb_device_info,
    .mem_alloc = gb_mem_alloc,
    .mem_free = gb_mem_free,
    .host_alloc_pinned = gb_host_alloc_pinned,
    .host_free_pinned = gb_host_free_pinned,
    .mem_info = gb_mem_info,
    .copy = gb_copy,
    .copy_rows_padded = gb_copy_rows_padded,
    .stream_create = gb_stream_create,
    .stream_destroy = gb_stream_destroy,
    .stream_sync = gb_stream_sync,
    .event_create = gb_event_create,
    .event_destroy = gb_event_destroy,
    .event_record = gb_event_record,
    .stream_wait_event = gb_stream_wait_event,
    .event_sync = gb_event_sync,
    .event_query = gb_event_query,
    .context_create = gb_context_create,
    .context_destroy = gb_context_destroy,
    .supports_node = gb_supports_node,
    .graph_compile = gb_graph_compile,
    .graph_free = gb_graph_free,
    .plan_compile = gb_plan_compile,
    .plan_free = gb_plan_free,
    .plan_run = gb_plan_run,
    .plan_run_profiled = gb_plan_run_profiled,
    .graph_memory = gb_graph_memory,
};

/* The one exported symbol (see gb_exports.map). */
__attribute__((visibility("default"))) hd_status *hipdnn_ep_backend_open(int api_version,
                                                                         const be_host *host,
                                                                         be_module **out);

hd_status *hipdnn_ep_backend_open(int api_version, const be_host *host, be_module **out) {
  *out = NULL;
  if (api_version != BE_API_VERSION)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s backend module speaks API version %d, the core %d",
                    gb_backend_name, BE_API_VERSION, api_version);
  /* Before anything else (a GPU included): a module of another build would
   * misread the core's graphs. */
  be_layout mine = be_layout_of_build();
  if (!host || host->layout.hash != mine.hash) {
    char a[256], b[256] = "none given";
    be_layout_describe(&mine, a, sizeof a);
    if (host) be_layout_describe(&host->layout, b, sizeof b);
    return hd_error(HD_ERR_NOT_SUPPORTED,
                    "%s backend module is from another build than the core: module %s; core %s. Install the "
                    "EP library and its modules from one build",
                    gb_backend_name, a, b);
  }
  if (host->log_sink) hd_log_set_sink(host->log_sink, host->log_user);

  /* GPUs first: on a machine without any, the DNN library is never loaded. */
  int ndev = 0;
  gpuError_t e = gpuGetDeviceCount(&ndev);
  if (e != gpuSuccess || ndev <= 0) {
    (void)gpuGetLastError();
    int drv = 0;
    (void)gpuDriverGetVersion(&drv);
    return hd_error(HD_ERR_NOT_FOUND, "%s backend: no usable GPU: %sGetDeviceCount: %s (%s)%s",
                    gb_backend_name, GPU_API_PREFIX, e == gpuSuccess ? "0 devices" : gpuGetErrorString(e),
                    e == gpuSuccess ? "visible devices" : gpuGetErrorName(e),
                    drv == 0 ? "; no GPU driver found" : "");
  }

  gb_module *m = calloc(1, sizeof *m);
  if (!m) return hd_error(HD_ERR_OUT_OF_MEMORY, "%s:%d: out of host memory", __FILE__, __LINE__);
  m->base.vt = &gb_vtable;
  if (host) m->host = *host;
  m->ndev = ndev;
  hd_status *st = gb_dnn_load(m);
  if (st) {
    free(m);
    return st;
  }
  HD_LOG(HD_LOG_INFO, "%s backend: %d device(s), %s %zu", gb_backend_name, ndev, m->vd.name,
         m->vd.version);
  *out = &m->base;
  return NULL;
}
