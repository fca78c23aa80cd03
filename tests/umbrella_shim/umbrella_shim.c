/* A test double of AMD's umbrella EP (onnxruntime-ep-amdgpu) with its HIP
 * backend shim: a plugin EP library that loads ours as its backend and calls
 * it the way the umbrella does (tests/test_umbrella.c drives it through ORT).
 * It is not a product: it wraps, forwards and checks nothing of its own.
 *
 * What it copies from the umbrella, because our EP must cope with each:
 * - our CreateEpFactories gets the umbrella's registration name unchanged,
 *   max_factories 1; our library is dlopen'ed on the first CreateEpFactories
 *   and dlclose'd after the last ReleaseEpFactory;
 * - its own devices and memory infos ("default"/"pinned", device id = the
 *   hardware device's index in ORT's list); ours are never asked for
 *   (our GetSupportedDevices is not called);
 * - CreateEp with no devices and a copy of the session options without the
 *   umbrella's own "ep.<lowercase name>." entries;
 * - an OrtEp that forwards only GetCapability, Compile,
 *   ReleaseNodeComputeInfos, OnRunStart, OnRunEnd, CreateAllocator,
 *   CreateSyncStreamForDevice and GetKernelRegistry (not
 *   IsConcurrentRunSupported, GetDefaultMemoryDevice, graph capture, Sync);
 * - allocators created lazily through our factory with its memory infos, and
 *   our data transfer wrapped.
 *
 * Our library's path: env HIPDNN_EP_LIB, else UMBRELLA_SHIM_BACKEND_LIB. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "onnxruntime_c_api.h"

#define SHIM_EXPORT __attribute__((visibility("default")))
#define SHIM_VENDOR_ID 0x1002u /* AMD: what the umbrella reports */
#define SHIM_MAX_GPUS 8
#define SHIM_NAME_MAX 128

SHIM_EXPORT OrtStatus *CreateEpFactories(const char *registered_name, const OrtApiBase *api_base,
                                         const OrtLogger *default_logger, OrtEpFactory **factories,
                                         size_t max_factories, size_t *num_factories);
SHIM_EXPORT OrtStatus *ReleaseEpFactory(OrtEpFactory *factory);

typedef OrtStatus *(*create_factories_fn)(const char *, const OrtApiBase *, const OrtLogger *, OrtEpFactory **,
                                          size_t, size_t *);
typedef OrtStatus *(*release_factory_fn)(OrtEpFactory *);

static const OrtApi *api;
static const OrtEpApi *ep_api;

/* ---- the backend library: loaded with the first factory, unloaded with the last ---- */

static struct {
  pthread_mutex_t mu;
  void *dl;
  create_factories_fn create;
  release_factory_fn release;
  int refs; /* shim factories alive */
} backend = {.mu = PTHREAD_MUTEX_INITIALIZER};

static OrtStatus *shim_error(const char *what, const char *detail) {
  char msg[1024];
  snprintf(msg, sizeof msg, "umbrella shim: %s%s%s", what, detail ? ": " : "", detail ? detail : "");
  return api->CreateStatus(ORT_FAIL, msg);
}

/* Called with backend.mu held. */
static OrtStatus *backend_load(void) {
  if (backend.refs++ > 0) return NULL;
  const char *path = getenv("HIPDNN_EP_LIB");
  if (!path || !path[0]) path = UMBRELLA_SHIM_BACKEND_LIB;
  backend.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  void *create = backend.dl ? dlsym(backend.dl, "CreateEpFactories") : NULL;
  void *release = backend.dl ? dlsym(backend.dl, "ReleaseEpFactory") : NULL;
  if (!create || !release) {
    OrtStatus *st = shim_error("loading the backend library", dlerror());
    if (backend.dl) dlclose(backend.dl);
    backend.dl = NULL;
    backend.refs = 0;
    return st;
  }
  /* Object pointers to function pointers: through memcpy, as ISO C allows. */
  memcpy(&backend.create, &create, sizeof create);
  memcpy(&backend.release, &release, sizeof release);
  return NULL;
}

/* Called with backend.mu held. */
static void backend_unload(void) {
  if (--backend.refs > 0) return;
  dlclose(backend.dl);
  backend.dl = NULL;
  backend.create = NULL;
  backend.release = NULL;
}

/* ---- factory ---- */

typedef struct shim_factory {
  OrtEpFactory base;
  OrtEpFactory *backend; /* our EP's factory */
  char name[SHIM_NAME_MAX];
  /* Per offered GPU (by its index in ORT's device list): device and pinned
   * memory infos, kept for the factory's life (ORT holds the pointers). */
  OrtMemoryInfo *mem_default[SHIM_MAX_GPUS], *mem_pinned[SHIM_MAX_GPUS];
  /* Allocators it made: owned by the factory, as the umbrella's are (its
   * ReleaseAllocator is a no-op; they go, ours released through our
   * factory, before our factory does). */
  pthread_mutex_t allocs_mu;
  struct shim_allocator *allocs;
} shim_factory;

static shim_factory *factory_of(const OrtEpFactory *p) { return (shim_factory *)(void *)p; }

static const char *ORT_API_CALL f_get_name(const OrtEpFactory *p) { return factory_of(p)->name; }
static const char *ORT_API_CALL f_get_vendor(const OrtEpFactory *p) { (void)p; return "AMD"; }
static uint32_t ORT_API_CALL f_get_vendor_id(const OrtEpFactory *p) { (void)p; return SHIM_VENDOR_ID; }
static const char *ORT_API_CALL f_get_version(const OrtEpFactory *p) { (void)p; return "0.0.0-test-shim"; }

/* The umbrella offers AMD GPUs only; NVIDIA's too here, so the same test
 * runs our CUDA backend on the NVIDIA GPU machine. */
static int is_our_gpu(const OrtHardwareDevice *hw) {
  uint32_t vendor = api->HardwareDevice_VendorId(hw);
  return api->HardwareDevice_Type(hw) == OrtHardwareDeviceType_GPU && (vendor == 0x1002u || vendor == 0x10DEu);
}

static OrtStatus *offer_gpu(shim_factory *f, const OrtHardwareDevice *hw, size_t index, OrtEpDevice **out) {
  uint32_t vendor = api->HardwareDevice_VendorId(hw);
  OrtStatus *st = NULL;
  if (!f->mem_default[index]) {
    if ((st = api->CreateMemoryInfo_V2("default", OrtMemoryInfoDeviceType_GPU, vendor, (int32_t)index,
                                       OrtDeviceMemoryType_DEFAULT, 0, OrtDeviceAllocator, &f->mem_default[index])) ||
        (st = api->CreateMemoryInfo_V2("pinned", OrtMemoryInfoDeviceType_GPU, vendor, (int32_t)index,
                                       OrtDeviceMemoryType_HOST_ACCESSIBLE, 0, OrtDeviceAllocator,
                                       &f->mem_pinned[index])))
      return st;
  }
  if ((st = ep_api->CreateEpDevice(&f->base, hw, NULL, NULL, out))) return st;
  if ((st = ep_api->EpDevice_AddAllocatorInfo(*out, f->mem_default[index])) ||
      (st = ep_api->EpDevice_AddAllocatorInfo(*out, f->mem_pinned[index]))) {
    ep_api->ReleaseEpDevice(*out);
    *out = NULL;
  }
  return st;
}

/* Our vendors' GPUs, each with its memory infos. With none (the CPU-only
 * CI machine) the CPU, without memory infos: our EP then runs its reference
 * backend on host memory. */
static OrtStatus *ORT_API_CALL f_get_supported_devices(OrtEpFactory *p, const OrtHardwareDevice *const *hw,
                                                       size_t nhw, OrtEpDevice **out, size_t max_out,
                                                       size_t *nout) {
  shim_factory *f = factory_of(p);
  *nout = 0;
  for (size_t i = 0; i < nhw && i < SHIM_MAX_GPUS && *nout < max_out; i++) {
    if (!is_our_gpu(hw[i])) continue;
    OrtStatus *st = offer_gpu(f, hw[i], i, &out[*nout]);
    if (st) return st;
    (*nout)++;
  }
  for (size_t i = 0; i < nhw && *nout == 0 && max_out > 0; i++) {
    if (api->HardwareDevice_Type(hw[i]) != OrtHardwareDeviceType_CPU) continue;
    OrtStatus *st = ep_api->CreateEpDevice(p, hw[i], NULL, NULL, &out[0]);
    if (st) return st;
    *nout = 1;
  }
  return NULL;
}

/* The umbrella's own provider options: "ep.<its name, lower-cased by ORT>.<key>". */
static int is_umbrella_option(const shim_factory *f, const char *key) {
  size_t n = strlen(f->name);
  return strncmp(key, "ep.", 3) == 0 && strncasecmp(key + 3, f->name, n) == 0 && key[3 + n] == '.';
}

/* A copy of the session's config entries without the umbrella's own. */
static OrtStatus *options_for_backend(const shim_factory *f, const OrtSessionOptions *so, OrtSessionOptions **out) {
  OrtKeyValuePairs *entries = NULL;
  OrtStatus *st = api->CreateSessionOptions(out);
  if (!st) st = api->GetSessionOptionsConfigEntries(so, &entries);
  const char *const *keys = NULL, *const *values = NULL;
  size_t n = 0;
  if (!st) api->GetKeyValuePairs(entries, &keys, &values, &n);
  for (size_t i = 0; i < n && !st; i++)
    if (!is_umbrella_option(f, keys[i])) st = api->AddSessionConfigEntry(*out, keys[i], values[i]);
  if (entries) api->ReleaseKeyValuePairs(entries);
  if (st && *out) {
    api->ReleaseSessionOptions(*out);
    *out = NULL;
  }
  return st;
}

/* ---- OrtEp: ours inside, under the umbrella's name ---- */

typedef struct shim_ep {
  OrtEp base;
  shim_factory *f;
  OrtEp *backend;
} shim_ep;

static shim_ep *ep_of(const OrtEp *p) { return (shim_ep *)(void *)p; }
static OrtEp *inner(const OrtEp *p) { return ep_of(p)->backend; }

static const char *ORT_API_CALL e_get_name(const OrtEp *p) { return ep_of(p)->f->name; }

static OrtStatus *ORT_API_CALL e_get_capability(OrtEp *p, const OrtGraph *graph, OrtEpGraphSupportInfo *info) {
  return inner(p)->GetCapability(inner(p), graph, info);
}

static OrtStatus *ORT_API_CALL e_compile(OrtEp *p, const OrtGraph **graphs, const OrtNode **fused, size_t count,
                                         OrtNodeComputeInfo **infos, OrtNode **ctx_nodes) {
  return inner(p)->Compile(inner(p), graphs, fused, count, infos, ctx_nodes);
}

static void ORT_API_CALL e_release_infos(OrtEp *p, OrtNodeComputeInfo **infos, size_t n) {
  inner(p)->ReleaseNodeComputeInfos(inner(p), infos, n);
}

/* The optional functions: the backend's when it has one, else success with
 * nothing done (a NULL result), as the umbrella does. */
static OrtStatus *ORT_API_CALL e_run_start(OrtEp *p, const OrtRunOptions *ro) {
  return inner(p)->OnRunStart ? inner(p)->OnRunStart(inner(p), ro) : NULL;
}

static OrtStatus *ORT_API_CALL e_run_end(OrtEp *p, const OrtRunOptions *ro, bool sync_stream) {
  return inner(p)->OnRunEnd ? inner(p)->OnRunEnd(inner(p), ro, sync_stream) : NULL;
}

static OrtStatus *ORT_API_CALL e_create_allocator(OrtEp *p, const OrtMemoryInfo *info, OrtAllocator **out) {
  *out = NULL;
  return inner(p)->CreateAllocator ? inner(p)->CreateAllocator(inner(p), info, out) : NULL;
}

static OrtStatus *ORT_API_CALL e_create_stream(OrtEp *p, const OrtMemoryDevice *md, OrtSyncStreamImpl **out) {
  *out = NULL;
  return inner(p)->CreateSyncStreamForDevice ? inner(p)->CreateSyncStreamForDevice(inner(p), md, out) : NULL;
}

static OrtStatus *ORT_API_CALL e_kernel_registry(OrtEp *p, const OrtKernelRegistry **out) {
  *out = NULL;
  return inner(p)->GetKernelRegistry ? inner(p)->GetKernelRegistry(inner(p), out) : NULL;
}

/* Exactly what the umbrella's OrtEp forwards; the rest stays NULL. */
static const OrtEp shim_ep_functions = {
    .ort_version_supported = ORT_API_VERSION,
    .GetName = e_get_name,
    .GetCapability = e_get_capability,
    .Compile = e_compile,
    .ReleaseNodeComputeInfos = e_release_infos,
    .OnRunStart = e_run_start,
    .OnRunEnd = e_run_end,
    .CreateAllocator = e_create_allocator,
    .CreateSyncStreamForDevice = e_create_stream,
    .GetKernelRegistry = e_kernel_registry,
};

static OrtStatus *ORT_API_CALL f_create_ep(OrtEpFactory *p, const OrtHardwareDevice *const *hw,
                                           const OrtKeyValuePairs *const *meta, size_t n,
                                           const OrtSessionOptions *so, const OrtLogger *logger, OrtEp **out) {
  (void)hw, (void)meta;
  shim_factory *f = factory_of(p);
  *out = NULL;
  if (n > 1) return shim_error("one device per session", NULL);
  shim_ep *ep = calloc(1, sizeof *ep);
  if (!ep) return shim_error("out of memory", NULL);
  OrtSessionOptions *backend_so = NULL;
  OrtStatus *st = options_for_backend(f, so, &backend_so);
  if (!st) st = f->backend->CreateEp(f->backend, NULL, NULL, 0, backend_so, logger, &ep->backend);
  if (backend_so) api->ReleaseSessionOptions(backend_so);
  if (st) {
    free(ep);
    return st;
  }
  ep->base = shim_ep_functions;
  ep->f = f;
  *out = &ep->base;
  return NULL;
}

static void ORT_API_CALL f_release_ep(OrtEpFactory *p, OrtEp *e) {
  shim_factory *f = factory_of(p);
  if (!e) return;
  f->backend->ReleaseEp(f->backend, inner(e));
  free(ep_of(e));
}

/* ---- allocators: the umbrella's memory info, ours made on first use ---- */

typedef struct shim_allocator {
  OrtAllocator base;
  shim_factory *f;
  const OrtMemoryInfo *info; /* the umbrella's */
  pthread_mutex_t mu;
  OrtAllocator *backend;     /* ours, from the first Alloc on */
  struct shim_allocator *next; /* the factory's list */
} shim_allocator;

static shim_allocator *alloc_of(const OrtAllocator *a) { return (shim_allocator *)(void *)a; }

static void *ORT_API_CALL a_alloc(OrtAllocator *p, size_t bytes) {
  shim_allocator *a = alloc_of(p);
  pthread_mutex_lock(&a->mu);
  if (!a->backend) {
    OrtEpFactory *bf = a->f->backend;
    OrtStatus *st = bf->CreateAllocator(bf, a->info, NULL, &a->backend);
    if (st) {
      fprintf(stderr, "umbrella shim: the backend's CreateAllocator failed: %s\n", api->GetErrorMessage(st));
      api->ReleaseStatus(st);
    }
  }
  pthread_mutex_unlock(&a->mu);
  return a->backend ? a->backend->Alloc(a->backend, bytes) : NULL;
}

static void ORT_API_CALL a_free(OrtAllocator *p, void *ptr) {
  shim_allocator *a = alloc_of(p);
  if (ptr) a->backend->Free(a->backend, ptr);
}

static const OrtMemoryInfo *ORT_API_CALL a_info(const OrtAllocator *p) { return alloc_of(p)->info; }

static OrtStatus *ORT_API_CALL f_create_allocator(OrtEpFactory *p, const OrtMemoryInfo *info,
                                                  const OrtKeyValuePairs *opts, OrtAllocator **out) {
  (void)opts;
  shim_allocator *a = calloc(1, sizeof *a);
  *out = NULL;
  if (!a) return shim_error("out of memory", NULL);
  a->base = (OrtAllocator){.version = ORT_API_VERSION, .Alloc = a_alloc, .Free = a_free, .Info = a_info};
  a->f = factory_of(p);
  a->info = info;
  pthread_mutex_init(&a->mu, NULL);
  pthread_mutex_lock(&a->f->allocs_mu);
  a->next = a->f->allocs;
  a->f->allocs = a;
  pthread_mutex_unlock(&a->f->allocs_mu);
  *out = &a->base;
  return NULL;
}

/* A no-op, as the umbrella's: ORT may call it after the factory is gone
 * (an environment allocator outlives its library's factories). */
static void ORT_API_CALL f_release_allocator(OrtEpFactory *p, OrtAllocator *oa) {
  (void)p;
  (void)oa;
}

/* The factory's allocators, ours released through our factory while it
 * still exists. */
static void release_allocators(shim_factory *f) {
  for (shim_allocator *a = f->allocs, *next; a; a = next) {
    next = a->next;
    if (a->backend) f->backend->ReleaseAllocator(f->backend, a->backend);
    pthread_mutex_destroy(&a->mu);
    free(a);
  }
  f->allocs = NULL;
}

/* ---- data transfer: ours, called with ORT's devices and values unchanged ---- */

typedef struct shim_transfer {
  OrtDataTransferImpl base;
  OrtDataTransferImpl *backend; /* ours; never released here, as the umbrella does */
} shim_transfer;

static OrtDataTransferImpl *inner_transfer(const OrtDataTransferImpl *t) {
  return ((const shim_transfer *)(const void *)t)->backend;
}

static bool ORT_API_CALL t_can_copy(const OrtDataTransferImpl *t, const OrtMemoryDevice *src,
                                    const OrtMemoryDevice *dst) {
  return inner_transfer(t)->CanCopy(inner_transfer(t), src, dst);
}

static OrtStatus *ORT_API_CALL t_copy(OrtDataTransferImpl *t, const OrtValue **src, OrtValue **dst,
                                      OrtSyncStream **streams, size_t n) {
  return inner_transfer(t)->CopyTensors(inner_transfer(t), src, dst, streams, n);
}

static void ORT_API_CALL t_release(OrtDataTransferImpl *t) { free(t); }

static OrtStatus *ORT_API_CALL f_create_data_transfer(OrtEpFactory *p, OrtDataTransferImpl **out) {
  OrtEpFactory *bf = factory_of(p)->backend;
  OrtDataTransferImpl *bt = NULL;
  *out = NULL;
  OrtStatus *st = bf->CreateDataTransfer(bf, &bt);
  if (st || !bt) return st; /* none: host memory only */
  shim_transfer *t = calloc(1, sizeof *t);
  if (!t) return shim_error("out of memory", NULL);
  t->base = (OrtDataTransferImpl){
      .ort_version_supported = ORT_API_VERSION, .Release = t_release, .CanCopy = t_can_copy, .CopyTensors = t_copy};
  t->backend = bt;
  *out = &t->base;
  return NULL;
}

static bool ORT_API_CALL f_is_stream_aware(const OrtEpFactory *p) {
  OrtEpFactory *bf = factory_of(p)->backend;
  return bf->IsStreamAware(bf);
}

static OrtStatus *ORT_API_CALL f_create_stream(OrtEpFactory *p, const OrtMemoryDevice *md,
                                               const OrtKeyValuePairs *opts, OrtSyncStreamImpl **out) {
  OrtEpFactory *bf = factory_of(p)->backend;
  return bf->CreateSyncStreamForDevice(bf, md, opts, out);
}

/* ---- the exports ---- */

static void factory_free(shim_factory *f) {
  pthread_mutex_destroy(&f->allocs_mu);
  for (int i = 0; i < SHIM_MAX_GPUS; i++) {
    if (f->mem_default[i]) api->ReleaseMemoryInfo(f->mem_default[i]);
    if (f->mem_pinned[i]) api->ReleaseMemoryInfo(f->mem_pinned[i]);
  }
  free(f);
}

static const OrtEpFactory shim_factory_functions = {
    .ort_version_supported = ORT_API_VERSION,
    .GetName = f_get_name,
    .GetVendor = f_get_vendor,
    .GetVendorId = f_get_vendor_id,
    .GetVersion = f_get_version,
    .GetSupportedDevices = f_get_supported_devices,
    .CreateEp = f_create_ep,
    .ReleaseEp = f_release_ep,
    .CreateAllocator = f_create_allocator,
    .ReleaseAllocator = f_release_allocator,
    .CreateDataTransfer = f_create_data_transfer,
    .IsStreamAware = f_is_stream_aware,
    .CreateSyncStreamForDevice = f_create_stream,
};

static shim_factory *factory_new(const char *name) {
  shim_factory *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->base = shim_factory_functions;
  pthread_mutex_init(&f->allocs_mu, NULL);
  snprintf(f->name, sizeof f->name, "%s", name);
  return f;
}

OrtStatus *CreateEpFactories(const char *registered_name, const OrtApiBase *api_base,
                             const OrtLogger *default_logger, OrtEpFactory **factories, size_t max_factories,
                             size_t *num_factories) {
  *num_factories = 0;
  api = api_base->GetApi(ORT_API_VERSION);
  if (!api) return NULL; /* an older runtime: offer nothing */
  ep_api = api->GetEpApi();
  if (max_factories < 1) return shim_error("no room for a factory", NULL);
  shim_factory *f = factory_new(registered_name);
  if (!f) return shim_error("out of memory", NULL);
  pthread_mutex_lock(&backend.mu);
  OrtStatus *st = backend_load();
  size_t n = 0;
  if (!st) st = backend.create(registered_name, api_base, default_logger, &f->backend, 1, &n);
  if (!st && n != 1) st = shim_error("the backend made no factory", NULL);
  if (st) {
    if (backend.dl) {
      if (f->backend) backend.release(f->backend);
      backend_unload();
    }
    factory_free(f);
  }
  pthread_mutex_unlock(&backend.mu);
  if (st) return st;
  factories[0] = &f->base;
  *num_factories = 1;
  return NULL;
}

OrtStatus *ReleaseEpFactory(OrtEpFactory *p) {
  if (!p) return NULL;
  shim_factory *f = factory_of(p);
  pthread_mutex_lock(&backend.mu);
  release_allocators(f);
  OrtStatus *st = backend.release(f->backend);
  factory_free(f);
  backend_unload();
  pthread_mutex_unlock(&backend.mu);
  return st;
}
