#include "ep/ep_factory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HIPDNN_EP_VERSION
#error "HIPDNN_EP_VERSION must be defined by the build"
#endif

static ep_factory *factory_of(const OrtEpFactory *p) { return (ep_factory *)(void *)p; }

static const char *ORT_API_CALL f_get_name(const OrtEpFactory *p) { (void)p; return EP_NAME; }
static const char *ORT_API_CALL f_get_vendor(const OrtEpFactory *p) { (void)p; return EP_VENDOR; }
static uint32_t ORT_API_CALL f_get_vendor_id(const OrtEpFactory *p) { (void)p; return EP_VENDOR_ID; }
static const char *ORT_API_CALL f_get_version(const OrtEpFactory *p) { (void)p; return HIPDNN_EP_VERSION; }

/* "0000:00:06.0" and "00000000:00:06.0" name the same device: compare the
 * numbers, not the text. */
static int parse_bus_id(const char *s, unsigned *dom, unsigned *bus, unsigned *dev, unsigned *fn) {
  return s && sscanf(s, "%x:%x:%x.%x", dom, bus, dev, fn) == 4;
}

static int same_bus_id(const char *a, const char *b) {
  unsigned d1, b1, v1, f1, d2, b2, v2, f2;
  return parse_bus_id(a, &d1, &b1, &v1, &f1) && parse_bus_id(b, &d2, &b2, &v2, &f2) && d1 == d2 &&
         b1 == b2 && v1 == v2 && f1 == f2;
}

static const OrtHardwareDevice *find_hw(const OrtHardwareDevice *const *hw, size_t n,
                                        const be_device_info *info) {
  for (size_t i = 0; i < n; i++) {
    if (ep_api->HardwareDevice_Type(hw[i]) != OrtHardwareDeviceType_GPU) continue;
    if (ep_api->HardwareDevice_VendorId(hw[i]) != info->vendor_id) continue;
    const OrtKeyValuePairs *md = ep_api->HardwareDevice_Metadata(hw[i]);
    const char *bus = md ? ep_api->GetKeyValue(md, "pci_bus_id") : NULL;
    if (same_bus_id(bus, info->pci_bus_id)) return hw[i];
  }
  return NULL;
}

static hd_status *make_memory_infos(ep_device *d) {
  char name[64];
  snprintf(name, sizeof name, "HipDNN_%s_%d", d->be ? be_name(d->be) : "gpu", d->ordinal);
  EP_ORT_TRY(ep_api->CreateMemoryInfo_V2(name, OrtMemoryInfoDeviceType_GPU, d->info.vendor_id, d->ordinal,
                                         OrtDeviceMemoryType_DEFAULT, 0, OrtDeviceAllocator, &d->mem_device),
             "creating device memory info");
  snprintf(name, sizeof name, "HipDNN_%s_%d_pinned", be_name(d->be), d->ordinal);
  EP_ORT_TRY(ep_api->CreateMemoryInfo_V2(name, OrtMemoryInfoDeviceType_GPU, d->info.vendor_id, d->ordinal,
                                         OrtDeviceMemoryType_HOST_ACCESSIBLE, 0, OrtDeviceAllocator,
                                         &d->mem_pinned),
             "creating pinned memory info");
  return NULL;
}

/* The devices we offer: each GPU of the GPU backend, then the CPU (ref). */
static hd_status *build_devices(ep_factory *f, const OrtHardwareDevice *const *hw, size_t nhw) {
  if (f->devices_built) return NULL;
  f->devices_built = 1;
  int ngpu = f->gpu ? be_device_count(f->gpu) : 0;
  for (int i = 0; i < ngpu && f->ndevices < EP_MAX_DEVICES - 1; i++) {
    ep_device *d = &f->devices[f->ndevices];
    memset(d, 0, sizeof *d);
    pthread_mutex_init(&d->pools_mu, NULL);
    d->be = f->gpu;
    d->ordinal = i;
    HD_TRY(be_device_info_get(f->gpu, i, &d->info));
    d->hw = find_hw(hw, nhw, &d->info);
    if (!d->hw) {
      /* ORT found no such GPU (containers without /sys/class/drm): describe it ourselves. */
      OrtKeyValuePairs *md = NULL;
      ep_api->CreateKeyValuePairs(&md);
      ep_api->AddKeyValuePair(md, "pci_bus_id", d->info.pci_bus_id);
      ep_api->AddKeyValuePair(md, "Description", d->info.name);
      OrtStatus *os = ep_ep_api->CreateHardwareDevice(OrtHardwareDeviceType_GPU, d->info.vendor_id,
                                                      d->info.pci_device_id, d->info.vendor_id == 0x10DE ? "NVIDIA" : "AMD",
                                                      md, &d->own_hw);
      ep_api->ReleaseKeyValuePairs(md);
      HD_TRY(ep_from_ort(os, "creating a hardware device"));
      d->hw = d->own_hw;
      HD_LOG(HD_LOG_INFO, "GPU %d (%s, %s) not listed by ONNX Runtime: described by the EP", i, d->info.name,
             d->info.pci_bus_id);
    }
    HD_TRY(make_memory_infos(d));
    f->ndevices++;
  }
  const OrtHardwareDevice *cpu = NULL;
  for (size_t i = 0; i < nhw && !cpu; i++)
    if (ep_api->HardwareDevice_Type(hw[i]) == OrtHardwareDeviceType_CPU) cpu = hw[i];
  ep_device *d = &f->devices[f->ndevices];
  memset(d, 0, sizeof *d);
  pthread_mutex_init(&d->pools_mu, NULL);
  if (!cpu) {
    /* CreateEp before GetSupportedDevices (a direct caller): describe the CPU ourselves. */
    HD_TRY(ep_from_ort(ep_ep_api->CreateHardwareDevice(OrtHardwareDeviceType_CPU, 0, 0, "CPU", NULL, &d->own_hw),
                       "creating the CPU hardware device"));
    cpu = d->own_hw;
  }
  d->be = f->ref;
  d->hw = cpu;
  f->ndevices++;
  return be_device_info_get(f->ref, 0, &d->info);
}

static OrtStatus *ORT_API_CALL f_get_supported_devices(OrtEpFactory *p, const OrtHardwareDevice *const *hw,
                                                       size_t nhw, OrtEpDevice **out, size_t max_out,
                                                       size_t *nout) {
  ep_factory *f = factory_of(p);
  *nout = 0;
  hd_status *st = build_devices(f, hw, nhw);
  if (st) return ep_status_to_ort(st);
  for (int i = 0; i < f->ndevices && *nout < max_out; i++) {
    ep_device *d = &f->devices[i];
    OrtKeyValuePairs *meta = NULL;
    ep_api->CreateKeyValuePairs(&meta);
    char ordinal[16];
    snprintf(ordinal, sizeof ordinal, "%d", d->ordinal);
    ep_api->AddKeyValuePair(meta, "backend", be_name(d->be));
    ep_api->AddKeyValuePair(meta, "device_id", ordinal);
    ep_api->AddKeyValuePair(meta, "device_name", d->info.name);
    if (d->info.pci_bus_id[0]) ep_api->AddKeyValuePair(meta, "pci_bus_id", d->info.pci_bus_id);
    OrtEpDevice *ed = NULL;
    OrtStatus *os = ep_ep_api->CreateEpDevice(p, d->hw, meta, NULL, &ed);
    ep_api->ReleaseKeyValuePairs(meta);
    if (os) return os;
    if (d->mem_device) {
      if ((os = ep_ep_api->EpDevice_AddAllocatorInfo(ed, d->mem_device)) ||
          (os = ep_ep_api->EpDevice_AddAllocatorInfo(ed, d->mem_pinned))) {
        ep_ep_api->ReleaseEpDevice(ed);
        return os;
      }
    }
    out[(*nout)++] = ed;
  }
  return NULL;
}

/* Which of our devices a session asked for. devices[] are ORT hardware
 * devices; we match them back to ours. With none, the default device: the
 * GPU numbered device_id (0 if unset), or the CPU when backend=ref. */
static hd_status *pick_device(ep_factory *f, const OrtHardwareDevice *const *hw, size_t n,
                              const ep_options *o, ep_device **out) {
  *out = NULL;
  int want_ref = strcmp(o->backend, "ref") == 0;
  if (n > 0) {
    for (int i = 0; i < f->ndevices && !*out; i++)
      if (f->devices[i].hw == hw[0]) *out = &f->devices[i];
    if (!*out) return hd_error(HD_ERR_INVALID_ARG, "the device given is not one this EP offered");
  } else {
    for (int i = 0; i < f->ndevices && !*out; i++) {
      ep_device *d = &f->devices[i];
      int is_ref = d->be == f->ref;
      if (want_ref ? is_ref : (!is_ref && (o->device_id < 0 || d->ordinal == o->device_id))) *out = d;
    }
    if (!*out)
      return hd_error(HD_ERR_NOT_FOUND, want_ref ? "the reference backend's CPU device is not available"
                                                 : "no GPU device%s: the GPU backend found none (use backend=ref "
                                                   "to run on the CPU reference backend)",
                      o->device_id >= 0 ? " with that device_id" : "");
  }
  ep_device *d = *out;
  if (d->be == f->ref) {
    if (!want_ref || !o->backend_explicit)
      return hd_error(HD_ERR_INVALID_ARG,
                      "the CPU device runs only the reference backend, which must be asked for: set provider "
                      "option backend=ref (or HIPDNN_EP_BACKEND=ref)");
    return NULL;
  }
  if (want_ref)
    return hd_error(HD_ERR_INVALID_ARG, "backend=ref runs on the CPU device, but a %s GPU device was given",
                    be_name(d->be));
  if (strcmp(o->backend, "auto") != 0 && strcmp(o->backend, be_name(d->be)) != 0)
    return hd_error(HD_ERR_INVALID_ARG, "backend=%s, but the device given is run by the %s backend", o->backend,
                    be_name(d->be));
  if (o->device_id >= 0 && o->device_id != d->ordinal)
    return hd_error(HD_ERR_INVALID_ARG, "device_id=%d, but the device given is GPU %d", o->device_id, d->ordinal);
  return NULL;
}

static OrtStatus *ORT_API_CALL f_create_ep(OrtEpFactory *p, const OrtHardwareDevice *const *hw,
                                           const OrtKeyValuePairs *const *meta, size_t n,
                                           const OrtSessionOptions *so, const OrtLogger *logger, OrtEp **out) {
  (void)meta;
  ep_factory *f = factory_of(p);
  *out = NULL;
  ep_options opts;
  hd_status *st = ep_options_parse(so, &opts);
  if (!st && !f->devices_built) st = build_devices(f, NULL, 0);
  ep_device *dev = NULL;
  if (!st) st = pick_device(f, hw, n, &opts, &dev);
  if (st) return ep_status_to_ort(st);
  return ep_create(f, dev, &opts, logger, out);
}

static void ORT_API_CALL f_release_ep(OrtEpFactory *p, OrtEp *ep) {
  (void)p;
  ep_destroy(ep);
}

ep_device *ep_factory_device_for_memory(ep_factory *f, const OrtMemoryDevice *md) {
  if (!md || ep_ep_api->MemoryDevice_GetDeviceType(md) != OrtMemoryInfoDeviceType_GPU) return NULL;
  uint32_t vendor = ep_ep_api->MemoryDevice_GetVendorId(md);
  int id = (int)ep_ep_api->MemoryDevice_GetDeviceId(md);
  for (int i = 0; i < f->ndevices; i++)
    if (f->devices[i].mem_device && f->devices[i].info.vendor_id == vendor && f->devices[i].ordinal == id)
      return &f->devices[i];
  return NULL;
}

static OrtStatus *ORT_API_CALL f_create_allocator(OrtEpFactory *p, const OrtMemoryInfo *info,
                                                  const OrtKeyValuePairs *opts, OrtAllocator **out) {
  (void)opts;
  ep_factory *f = factory_of(p);
  *out = NULL;
  ep_device *d = ep_factory_device_for_memory(f, ep_ep_api->MemoryInfo_GetMemoryDevice(info));
  if (!d) return ep_ort_error(ORT_INVALID_ARGUMENT, "no allocator for this memory info");
  ep_allocator *a = NULL;
  hd_status *st = ep_allocator_create(d, info, 0, NULL, &a);
  if (st) return ep_status_to_ort(st);
  *out = ep_allocator_ort(a);
  return NULL;
}

static void ORT_API_CALL f_release_allocator(OrtEpFactory *p, OrtAllocator *a) {
  (void)p;
  ep_allocator_destroy(a);
}

static OrtStatus *ORT_API_CALL f_create_data_transfer(OrtEpFactory *p, OrtDataTransferImpl **out) {
  ep_factory *f = factory_of(p);
  *out = NULL;
  if (!f->gpu) return NULL; /* host memory only: ORT needs no copies */
  if (!f->transfer) {
    hd_status *st = ep_transfer_create(f, &f->transfer);
    if (st) return ep_status_to_ort(st);
  }
  *out = f->transfer;
  return NULL;
}

static bool ORT_API_CALL f_is_stream_aware(const OrtEpFactory *p) { return factory_of(p)->gpu != NULL; }

static OrtStatus *ORT_API_CALL f_create_stream(OrtEpFactory *p, const OrtMemoryDevice *md,
                                               const OrtKeyValuePairs *opts, OrtSyncStreamImpl **out) {
  (void)opts;
  *out = NULL;
  ep_device *d = ep_factory_device_for_memory(factory_of(p), md);
  if (!d) return ep_ort_error(ORT_INVALID_ARGUMENT, "no stream for this memory device");
  return ep_status_to_ort(ep_stream_create(d, out));
}

/* Opens the GPU backend modules; a missing module or GPU is one log line. */
static void open_gpu_backend(ep_factory *f) {
  be_host host;
  hd_log_get_sink(&host.log_sink, &host.log_user);
  static const char *const names[] = {"cuda", "hip"};
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !f->gpu; i++) {
    be_module *m = NULL;
    hd_status *st = be_module_open(names[i], &host, &m);
    if (st) {
      HD_LOG(HD_LOG_INFO, "%s backend not used: %s", names[i], hd_status_msg(st));
      hd_status_free(st);
      continue;
    }
    if (be_device_count(m) == 0) {
      HD_LOG(HD_LOG_INFO, "%s backend found no GPU", names[i]);
      be_module_close(m);
      continue;
    }
    f->gpu = m;
  }
}

hd_status *ep_factory_create(const OrtLogger *logger, ep_factory **out) {
  ep_factory *f;
  HD_ALLOC_OR_RETURN(f, 1);
  f->base.ort_version_supported = ORT_API_VERSION;
  f->base.GetName = f_get_name;
  f->base.GetVendor = f_get_vendor;
  f->base.GetVendorId = f_get_vendor_id;
  f->base.GetVersion = f_get_version;
  f->base.GetSupportedDevices = f_get_supported_devices;
  f->base.CreateEp = f_create_ep;
  f->base.ReleaseEp = f_release_ep;
  f->base.CreateAllocator = f_create_allocator;
  f->base.ReleaseAllocator = f_release_allocator;
  f->base.CreateDataTransfer = f_create_data_transfer;
  f->base.IsStreamAware = f_is_stream_aware;
  f->base.CreateSyncStreamForDevice = f_create_stream;
  f->logger = logger;
  be_host host;
  hd_log_get_sink(&host.log_sink, &host.log_user);
  hd_status *st = be_module_open("ref", &host, &f->ref);
  if (st) {
    free(f);
    return st;
  }
  open_gpu_backend(f);
  *out = f;
  return NULL;
}

void ep_factory_destroy(ep_factory *f) {
  if (!f) return;
  for (int i = 0; i < f->ndevices; i++) {
    ep_device *d = &f->devices[i];
    if (d->mem_device) ep_api->ReleaseMemoryInfo(d->mem_device);
    if (d->mem_pinned) ep_api->ReleaseMemoryInfo(d->mem_pinned);
    if (d->own_hw) ep_ep_api->ReleaseHardwareDevice(d->own_hw);
    pthread_mutex_destroy(&d->pools_mu);
  }
  ep_transfer_destroy(f->transfer);
  be_module_close(f->gpu);
  be_module_close(f->ref);
  free(f);
}
