#include "ep/ep_factory.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HIPDNN_EP_VERSION
#error "HIPDNN_EP_VERSION must be defined by the build"
#endif

static ep_factory *factory_of(const OrtEpFactory *p) { return (ep_factory *)(void *)p; }
static ep_device *device_of(ep_factory *f) { return &f->lib->devices[f->device]; }
static int is_ref_device(const ep_lib *lib, const ep_device *d) { return d->be == lib->ref; }

static const char *ORT_API_CALL f_get_name(const OrtEpFactory *p) { return factory_of(p)->name; }
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
  snprintf(name, sizeof name, "HipDNN_%s_%d", be_name(d->be), d->ordinal);
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

static void device_init(ep_lib *lib, ep_device *d, be_module *be, int ordinal) {
  memset(d, 0, sizeof *d);
  d->lib = lib;
  pthread_mutex_init(&d->pools_mu, NULL);
  pthread_mutex_init(&d->shared_mu, NULL);
  d->be = be;
  d->ordinal = ordinal;
}

/* ORT found no such GPU (containers without /sys/class/drm): describe it ourselves. */
static hd_status *describe_gpu(ep_device *d) {
  OrtKeyValuePairs *md = NULL;
  ep_api->CreateKeyValuePairs(&md);
  ep_api->AddKeyValuePair(md, "pci_bus_id", d->info.pci_bus_id);
  ep_api->AddKeyValuePair(md, "Description", d->info.name);
  OrtStatus *os = ep_ep_api->CreateHardwareDevice(OrtHardwareDeviceType_GPU, d->info.vendor_id, d->info.pci_device_id,
                                                  d->info.vendor_id == 0x10DE ? "NVIDIA" : "AMD", md, &d->own_hw);
  ep_api->ReleaseKeyValuePairs(md);
  HD_TRY(ep_from_ort(os, "creating a hardware device"));
  d->hw = d->own_hw;
  HD_LOG(HD_LOG_INFO, "GPU %d (%s, %s) not listed by ONNX Runtime: described by the EP", d->ordinal, d->info.name,
         d->info.pci_bus_id);
  return NULL;
}

/* Every device of the library: GPUs 0..ngpu-1, then the CPU. */
static hd_status *build_devices(ep_lib *lib) {
  for (int i = 0; i < lib->ngpu; i++) {
    ep_device *d = &lib->devices[lib->ndevices++];
    device_init(lib, d, lib->gpu, i);
    HD_TRY(be_device_info_get(lib->gpu, i, &d->info));
    HD_TRY(make_memory_infos(d));
  }
  ep_device *d = &lib->devices[lib->ndevices++];
  device_init(lib, d, lib->ref, 0);
  return be_device_info_get(lib->ref, 0, &d->info);
}

/* Our devices as ORT's hardware devices, once: ORT's own where it lists
 * them, else described by us. */
static hd_status *attach_hardware(ep_lib *lib, const OrtHardwareDevice *const *hw, size_t nhw) {
  pthread_mutex_lock(&lib->mu);
  hd_status *st = NULL;
  for (int i = 0; i < lib->ndevices && !st; i++) {
    ep_device *d = &lib->devices[i];
    if (d->hw) continue;
    if (i < lib->ngpu) {
      d->hw = find_hw(hw, nhw, &d->info);
      if (!d->hw) st = describe_gpu(d);
      continue;
    }
    for (size_t k = 0; k < nhw && !d->hw; k++)
      if (ep_api->HardwareDevice_Type(hw[k]) == OrtHardwareDeviceType_CPU) d->hw = hw[k];
    if (!d->hw) {
      st = ep_from_ort(ep_ep_api->CreateHardwareDevice(OrtHardwareDeviceType_CPU, 0, 0, "CPU", NULL, &d->own_hw),
                       "creating the CPU hardware device");
      d->hw = d->own_hw;
    }
  }
  pthread_mutex_unlock(&lib->mu);
  return st;
}

static OrtStatus *ORT_API_CALL f_get_supported_devices(OrtEpFactory *p, const OrtHardwareDevice *const *hw,
                                                       size_t nhw, OrtEpDevice **out, size_t max_out,
                                                       size_t *nout) {
  ep_factory *f = factory_of(p);
  *nout = 0;
  hd_status *st = attach_hardware(f->lib, hw, nhw);
  if (st) return ep_status_to_ort(st);
  if (max_out < 1) return NULL;
  ep_device *d = device_of(f);
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
  return NULL;
}

/* The backend option against the device chosen: the CPU runs only the
 * reference backend (auto picks it), a GPU only its own backend. */
static hd_status *check_backend(ep_factory *f, const ep_device *d, const ep_options *o) {
  int want_ref = strcmp(o->backend, "ref") == 0, is_auto = strcmp(o->backend, "auto") == 0;
  if (is_ref_device(f->lib, d)) {
    if (want_ref || is_auto) return NULL;
    return hd_error(HD_ERR_INVALID_ARG,
                    "backend=%s needs a GPU, but the device given is the CPU (the reference backend)%s%s%s",
                    o->backend, f->lib->ngpu > 0 ? "; GPU 0 is offered under the EP name '" : "; no GPU was found",
                    f->lib->ngpu > 0 ? f->lib->name : "", f->lib->ngpu > 0 ? "'" : "");
  }
  if (want_ref)
    return hd_error(HD_ERR_INVALID_ARG,
                    "backend=ref runs on the CPU, but a %s GPU device was given (the CPU is offered under the EP "
                    "name '%s_ref')",
                    be_name(d->be), f->lib->name);
  if (!is_auto && strcmp(o->backend, be_name(d->be)) != 0)
    return hd_error(HD_ERR_INVALID_ARG, "backend=%s, but the device given is run by the %s backend", o->backend,
                    be_name(d->be));
  return NULL;
}

/* Which device a session runs on. Devices given (ORT's hardware devices):
 * the one device_id names among them, else the first. None given (the
 * umbrella EP, direct callers): GPU device_id if set, the CPU if backend=ref,
 * else this name's device. */
static hd_status *pick_device(ep_factory *f, const OrtHardwareDevice *const *hw, size_t n, const ep_options *o,
                              ep_device **out) {
  ep_lib *lib = f->lib;
  ep_device *d = NULL;
  *out = NULL;
  if (n > 0) {
    ep_device *first = NULL;
    for (size_t k = 0; k < n; k++)
      for (int i = 0; i < lib->ndevices; i++) {
        ep_device *c = &lib->devices[i];
        if (c->hw != hw[k]) continue;
        if (!first) first = c;
        if (!d && o->device_id >= 0 && !is_ref_device(lib, c) && c->ordinal == o->device_id) d = c;
      }
    if (!first) return hd_error(HD_ERR_INVALID_ARG, "the device given is not one this EP offered");
    if (!d && o->device_id >= 0) {
      char given[32];
      snprintf(given, sizeof given, is_ref_device(lib, first) ? "the CPU" : "GPU %d", first->ordinal);
      return hd_error(HD_ERR_INVALID_ARG,
                      "device_id=%d, but the device given is %s (each GPU has its own EP name: GPU 0 is '%s', "
                      "GPU n is '%s_<n>')",
                      o->device_id, given, lib->name, lib->name);
    }
    if (!d) d = first;
  } else if (o->device_id >= 0) {
    if (o->device_id >= lib->ngpu) {
      char gpus[512] = "none";
      size_t at = 0;
      for (int i = 0; i < lib->ngpu && at < sizeof gpus; i++) {
        int w = snprintf(gpus + at, sizeof gpus - at, "%s%d: %s", i ? ", " : "", i, lib->devices[i].info.name);
        if (w < 0) break;
        at += (size_t)w;
      }
      return hd_error(HD_ERR_NOT_FOUND, "device_id=%d: the GPUs here are %s (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES "
                      "choose them)", o->device_id, gpus);
    }
    d = &lib->devices[o->device_id];
  } else if (strcmp(o->backend, "ref") == 0) {
    d = &lib->devices[lib->ngpu];
  } else {
    d = device_of(f);
  }
  HD_TRY(check_backend(f, d, o));
  *out = d;
  return NULL;
}

static OrtStatus *ORT_API_CALL f_create_ep(OrtEpFactory *p, const OrtHardwareDevice *const *hw,
                                           const OrtKeyValuePairs *const *meta, size_t n,
                                           const OrtSessionOptions *so, const OrtLogger *logger, OrtEp **out) {
  (void)meta;
  ep_factory *f = factory_of(p);
  *out = NULL;
  ep_options opts;
  hd_status *st = ep_options_parse(so, f->option_prefix, &opts);
  ep_device *dev = NULL;
  if (!st) st = pick_device(f, hw, n, &opts, &dev);
  if (st) return ep_status_to_ort(st);
  return ep_create(f, dev, &opts, logger, out);
}

static void ORT_API_CALL f_release_ep(OrtEpFactory *p, OrtEp *ep) {
  (void)p;
  ep_destroy(ep);
}

ep_device *ep_lib_device_for_memory(ep_lib *lib, const OrtMemoryDevice *md) {
  if (!md || ep_ep_api->MemoryDevice_GetDeviceType(md) != OrtMemoryInfoDeviceType_GPU) return NULL;
  uint32_t vendor = ep_ep_api->MemoryDevice_GetVendorId(md);
  int id = (int)ep_ep_api->MemoryDevice_GetDeviceId(md);
  if (id < 0 || id >= lib->ngpu) return NULL;
  ep_device *d = &lib->devices[id];
  return d->info.vendor_id == vendor ? d : NULL;
}

/* ORT's shared (environment) allocators and the umbrella EP's come here:
 * the device's process-wide pool, whatever the memory info's name. */
static OrtStatus *ORT_API_CALL f_create_allocator(OrtEpFactory *p, const OrtMemoryInfo *info,
                                                  const OrtKeyValuePairs *opts, OrtAllocator **out) {
  (void)opts;
  ep_factory *f = factory_of(p);
  *out = NULL;
  ep_device *d = ep_lib_device_for_memory(f->lib, ep_ep_api->MemoryInfo_GetMemoryDevice(info));
  if (!d) return ep_ort_error(ORT_INVALID_ARGUMENT, "no allocator for this memory info: not a GPU of this EP");
  ep_allocator *a = NULL;
  hd_status *st = ep_allocator_create_shared(d, info, &a);
  if (st) return ep_status_to_ort(st);
  *out = ep_allocator_ort(a);
  return NULL;
}

static void ORT_API_CALL f_release_allocator(OrtEpFactory *p, OrtAllocator *a) {
  (void)p;
  ep_allocator_destroy(a);
}

/* One data transfer for the library's GPUs; none for the reference
 * backend's name (host memory only: ORT needs no copies). */
static OrtStatus *ORT_API_CALL f_create_data_transfer(OrtEpFactory *p, OrtDataTransferImpl **out) {
  ep_factory *f = factory_of(p);
  ep_lib *lib = f->lib;
  *out = NULL;
  if (!lib->gpu || f->device == lib->ngpu) return NULL;
  pthread_mutex_lock(&lib->mu);
  hd_status *st = lib->transfer ? NULL : ep_transfer_create(lib, &lib->transfer);
  pthread_mutex_unlock(&lib->mu);
  if (st) return ep_status_to_ort(st);
  *out = lib->transfer;
  return NULL;
}

static bool ORT_API_CALL f_is_stream_aware(const OrtEpFactory *p) {
  const ep_factory *f = factory_of(p);
  return f->device < f->lib->ngpu;
}

static OrtStatus *ORT_API_CALL f_create_stream(OrtEpFactory *p, const OrtMemoryDevice *md,
                                               const OrtKeyValuePairs *opts, OrtSyncStreamImpl **out) {
  (void)opts;
  *out = NULL;
  ep_device *d = ep_lib_device_for_memory(factory_of(p)->lib, md);
  if (!d) return ep_ort_error(ORT_INVALID_ARGUMENT, "no stream for this memory device");
  return ep_status_to_ort(ep_stream_create(d, out));
}

/* Opens the GPU backend modules; a missing module or GPU is one log line. */
static void open_gpu_backend(ep_lib *lib) {
  be_host host;
  hd_log_get_sink(&host.log_sink, &host.log_user);
  static const char *const names[] = {"cuda", "hip"};
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib->gpu; i++) {
    be_module *m = NULL;
    hd_status *st = be_module_open(names[i], &host, &m);
    if (st) {
      HD_LOG(HD_LOG_INFO, "%s backend not used: %s", names[i], hd_status_msg(st));
      hd_status_free(st);
      continue;
    }
    int n = be_device_count(m);
    if (n == 0) {
      HD_LOG(HD_LOG_INFO, "%s backend found no GPU", names[i]);
      be_module_close(m);
      continue;
    }
    lib->gpu = m;
    lib->ngpu = n < EP_MAX_DEVICES - 1 ? n : EP_MAX_DEVICES - 1;
  }
}

static void lib_destroy(ep_lib *lib) {
  for (int i = 0; i < lib->ndevices; i++) {
    ep_device *d = &lib->devices[i];
    ep_device_release_shared(d);
    if (d->mem_device) ep_api->ReleaseMemoryInfo(d->mem_device);
    if (d->mem_pinned) ep_api->ReleaseMemoryInfo(d->mem_pinned);
    if (d->own_hw) ep_ep_api->ReleaseHardwareDevice(d->own_hw);
    pthread_mutex_destroy(&d->pools_mu);
    pthread_mutex_destroy(&d->shared_mu);
  }
  ep_transfer_destroy(lib->transfer);
  be_module_close(lib->gpu);
  be_module_close(lib->ref);
  pthread_mutex_destroy(&lib->mu);
  free(lib);
}

static hd_status *lib_create(const char *name, ep_lib **out) {
  if (!name || !name[0]) return hd_error(HD_ERR_INVALID_ARG, "an empty registration name: it is the EP's name");
  if (strlen(name) >= EP_NAME_MAX)
    return hd_error(HD_ERR_INVALID_ARG, "registration name '%s' is too long: at most %d characters", name,
                    EP_NAME_MAX - 1);
  ep_lib *lib;
  HD_ALLOC_OR_RETURN(lib, 1);
  snprintf(lib->name, sizeof lib->name, "%s", name);
  pthread_mutex_init(&lib->mu, NULL);
  be_host host;
  hd_log_get_sink(&host.log_sink, &host.log_user);
  hd_status *st = be_module_open("ref", &host, &lib->ref);
  if (st) {
    lib_destroy(lib);
    return st;
  }
  open_gpu_backend(lib);
  if ((st = build_devices(lib))) {
    lib_destroy(lib);
    return st;
  }
  *out = lib;
  return NULL;
}

static hd_status *factory_create(ep_lib *lib, const char *suffix, int device, const OrtLogger *logger,
                                 ep_factory **out) {
  ep_factory *f;
  HD_ALLOC_OR_RETURN(f, 1);
  snprintf(f->name, sizeof f->name, "%s%s", lib->name, suffix);
  /* ORT lower-cases the EP name for the prefix of provider options. */
  size_t k = (size_t)snprintf(f->option_prefix, sizeof f->option_prefix, "ep.");
  for (size_t i = 0; f->name[i] && k + 2 < sizeof f->option_prefix; i++)
    f->option_prefix[k++] = (char)tolower((unsigned char)f->name[i]);
  f->option_prefix[k++] = '.';
  f->option_prefix[k] = 0;
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
  f->lib = lib;
  f->logger = logger;
  f->device = device;
  *out = f;
  return NULL;
}

hd_status *ep_factories_create(const char *registered_name, const OrtLogger *logger, OrtEpFactory **out, size_t max,
                               size_t *n) {
  *n = 0;
  ep_lib *lib = NULL;
  HD_TRY(lib_create(registered_name, &lib));
  /* The registration name offers GPU 0, or the CPU when there is no GPU;
   * then the CPU under "_ref", then GPU n under "_<n>" while ORT has room. */
  int plan[EP_MAX_FACTORIES];
  char suffix[EP_MAX_FACTORIES][16];
  int nplan = 0;
  plan[nplan] = 0, suffix[nplan++][0] = 0; /* devices[0]: GPU 0, or the CPU when there is no GPU */
  if (lib->ngpu > 0) plan[nplan] = lib->ngpu, snprintf(suffix[nplan++], 16, "_ref");
  for (int g = 1; g < lib->ngpu && nplan < EP_MAX_FACTORIES; g++) plan[nplan] = g, snprintf(suffix[nplan++], 16, "_%d", g);
  if (lib->ngpu > EP_MAX_FACTORIES - 1)
    HD_LOG(HD_LOG_WARNING, "%d GPUs, but ONNX Runtime takes %d EP factories per library: GPUs %d and up are not "
           "offered (choose the GPUs with CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES)", lib->ngpu, EP_MAX_FACTORIES,
           EP_MAX_FACTORIES - 1);
  hd_status *st = NULL;
  for (int i = 0; i < nplan && (size_t)i < max && !st; i++) {
    ep_factory *f = NULL;
    st = factory_create(lib, suffix[i], plan[i], logger, &f);
    if (st) break;
    lib->refs++;
    out[(*n)++] = &f->base;
  }
  if (st) {
    for (size_t i = 0; i < *n; i++) ep_factory_release(factory_of(out[i]));
    if (*n == 0) lib_destroy(lib);
    *n = 0;
  }
  return st;
}

void ep_lib_retain(ep_lib *lib) {
  pthread_mutex_lock(&lib->mu);
  lib->refs++;
  pthread_mutex_unlock(&lib->mu);
}

void ep_lib_release(ep_lib *lib) {
  pthread_mutex_lock(&lib->mu);
  int last = --lib->refs == 0;
  pthread_mutex_unlock(&lib->mu);
  if (last) lib_destroy(lib);
}

void ep_factory_release(ep_factory *f) {
  if (!f) return;
  ep_lib *lib = f->lib;
  free(f);
  ep_lib_release(lib);
}
