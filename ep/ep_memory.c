/* Device and pinned allocators (OrtAllocator over a shared hd_pool) and the
 * data transfer between host and device memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/ep_factory.h"

/* A pool shared by several allocators; the last one frees it. Every pool
 * is on its device's list (ep_device_mark_use). */
typedef struct shared_pool {
  hd_pool *pool;
  int refs;
  pthread_mutex_t mu;
  struct shared_pool *next;
} shared_pool;

struct ep_allocator {
  OrtAllocator base;
  ep_device *dev;
  int holds_lib;  /* a reference on dev->lib (all but the device's own pools) */
  const OrtMemoryInfo *info;
  int pinned;
  shared_pool *sp;
};

static ep_allocator *alloc_of(const OrtAllocator *a) { return (ep_allocator *)(void *)a; }

static hd_status *src_device_alloc(void *ctx, size_t bytes, void **p) {
  ep_device *d = ctx;
  return be_mem_alloc(d->be, d->ordinal, bytes, p);
}
static void src_device_free(void *ctx, void *p) {
  ep_device *d = ctx;
  be_mem_free(d->be, d->ordinal, p);
}
static hd_status *src_pinned_alloc(void *ctx, size_t bytes, void **p) {
  ep_device *d = ctx;
  return be_host_alloc_pinned(d->be, bytes, p);
}
static void src_pinned_free(void *ctx, void *p) {
  ep_device *d = ctx;
  be_host_free_pinned(d->be, p);
}

/* Events from the device's backend order a block's reuse after the work
 * queued on the streams that used it (hd_pool.h). */
static hd_status *src_event_create(void *ctx, void **ev) {
  ep_device *d = ctx;
  return be_event_create(d->be, d->ordinal, ev);
}
static void src_event_destroy(void *ctx, void *ev) {
  ep_device *d = ctx;
  be_event_destroy(d->be, d->ordinal, ev);
}
static hd_status *src_event_record(void *ctx, void *ev, void *stream) {
  ep_device *d = ctx;
  return be_event_record(d->be, ev, stream);
}
static int src_event_done(void *ctx, void *ev) {
  ep_device *d = ctx;
  int done = 0;
  hd_status *st = be_event_query(d->be, ev, &done);
  hd_status_free(st);
  return !st && done;
}
static hd_status *src_wait(void *ctx, void *ev, void *stream) {
  ep_device *d = ctx;
  return stream ? be_stream_wait_event(d->be, stream, ev) : be_event_sync(d->be, ev);
}

static void *alloc_on(ep_allocator *ea, size_t size, void *stream) {
  void *p = NULL;
  hd_status *st = hd_pool_alloc_on(ea->sp->pool, size, stream, &p);
  if (st) {
    /* OrtAllocator has no status: ORT reports the NULL as out of memory. */
    HD_LOG(HD_LOG_WARNING, "%s", hd_status_msg(st));
    hd_status_free(st);
    return NULL;
  }
  return p;
}

static void *ORT_API_CALL a_alloc(OrtAllocator *a, size_t size) { return alloc_on(alloc_of(a), size, NULL); }

/* ORT hands the stream its kernels will use the memory on: the pool keeps
 * the block from other streams until that work is done. */
static void *ORT_API_CALL a_alloc_on_stream(OrtAllocator *a, size_t size, OrtSyncStream *stream) {
  return alloc_on(alloc_of(a), size, stream ? ep_api->SyncStream_GetHandle(stream) : NULL);
}

static void ORT_API_CALL a_free(OrtAllocator *a, void *p) { hd_pool_free(alloc_of(a)->sp->pool, p); }
static const OrtMemoryInfo *ORT_API_CALL a_info(const OrtAllocator *a) { return alloc_of(a)->info; }
static void *ORT_API_CALL a_reserve(OrtAllocator *a, size_t size) { return a_alloc(a, size); }

static OrtStatus *ORT_API_CALL a_get_stats(const OrtAllocator *a, OrtKeyValuePairs **out) {
  hd_pool_stats s;
  hd_pool_get_stats(alloc_of(a)->sp->pool, &s);
  ep_api->CreateKeyValuePairs(out);
  char buf[32];
  /* key names as ORT's own arena reports them */
#define STAT_(key, val) snprintf(buf, sizeof buf, "%llu", (unsigned long long)(val)), ep_api->AddKeyValuePair(*out, key, buf)
  STAT_("Limit", s.limit);
  STAT_("InUse", s.in_use);
  STAT_("TotalAllocated", s.in_use + s.cached);
  STAT_("MaxInUse", s.peak);
  STAT_("NumAllocs", s.allocs);
  STAT_("NumReserves", s.source_allocs);
  STAT_("NumFailures", s.failures);
#undef STAT_
  return NULL;
}

static OrtStatus *ORT_API_CALL a_shrink(OrtAllocator *a) {
  hd_pool_shrink(alloc_of(a)->sp->pool);
  return NULL;
}

hd_status *ep_allocator_create(ep_device *dev, const OrtMemoryInfo *info, size_t limit, ep_allocator *share,
                               ep_allocator **out) {
  ep_allocator *a;
  HD_ALLOC_OR_RETURN(a, 1);
  a->base.version = ORT_API_VERSION;
  a->base.Alloc = a_alloc;
  a->base.Free = a_free;
  a->base.Info = a_info;
  a->base.Reserve = a_reserve;
  a->base.GetStats = a_get_stats;
  a->base.Shrink = a_shrink;
  a->base.AllocOnStream = a_alloc_on_stream;
  a->dev = dev;
  a->holds_lib = 1;
  ep_lib_retain(dev->lib);
  a->info = info;
  a->pinned = ep_ep_api->MemoryDevice_GetMemoryType(ep_ep_api->MemoryInfo_GetMemoryDevice(info)) ==
              OrtDeviceMemoryType_HOST_ACCESSIBLE;
  if (share) {
    a->sp = share->sp;
    pthread_mutex_lock(&a->sp->mu);
    a->sp->refs++;
    pthread_mutex_unlock(&a->sp->mu);
    *out = a;
    return NULL;
  }
  a->sp = calloc(1, sizeof *a->sp);
  if (!a->sp) {
    free(a);
    ep_lib_release(dev->lib);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
  }
  hd_pool_source src = {.ctx = dev,
                        .alloc = a->pinned ? src_pinned_alloc : src_device_alloc,
                        .free = a->pinned ? src_pinned_free : src_device_free,
                        .event_create = src_event_create,
                        .event_destroy = src_event_destroy,
                        .event_record = src_event_record,
                        .event_done = src_event_done,
                        .wait = src_wait};
  hd_status *st = hd_pool_create(&src, limit, &a->sp->pool);
  if (st) {
    free(a->sp);
    free(a);
    ep_lib_release(dev->lib);
    return st;
  }
  a->sp->refs = 1;
  pthread_mutex_init(&a->sp->mu, NULL);
  pthread_mutex_lock(&dev->pools_mu);
  a->sp->next = dev->pools;
  dev->pools = a->sp;
  pthread_mutex_unlock(&dev->pools_mu);
  *out = a;
  return NULL;
}

hd_status *ep_allocator_create_shared(ep_device *dev, const OrtMemoryInfo *info, ep_allocator **out) {
  int pinned = ep_ep_api->MemoryDevice_GetMemoryType(ep_ep_api->MemoryInfo_GetMemoryDevice(info)) ==
               OrtDeviceMemoryType_HOST_ACCESSIBLE;
  pthread_mutex_lock(&dev->shared_mu);
  ep_allocator **base = pinned ? &dev->shared_pinned : &dev->shared_device;
  hd_status *st = NULL;
  if (!*base) {
    st = ep_allocator_create(dev, pinned ? dev->mem_pinned : dev->mem_device, 0, NULL, base);
    /* owned by the library state, freed with it: no reference on it */
    if (!st) (*base)->holds_lib = 0, ep_lib_release(dev->lib);
  }
  if (!st) st = ep_allocator_create(dev, info, 0, *base, out);
  pthread_mutex_unlock(&dev->shared_mu);
  return st;
}

void ep_device_release_shared(ep_device *dev) {
  if (dev->shared_device) ep_allocator_destroy(&dev->shared_device->base);
  if (dev->shared_pinned) ep_allocator_destroy(&dev->shared_pinned->base);
  dev->shared_device = dev->shared_pinned = NULL;
}

int ep_device_mark_use(ep_device *dev, void *ptr, void *stream) {
  int rc = 0;
  pthread_mutex_lock(&dev->pools_mu);
  for (shared_pool *sp = dev->pools; sp && !rc; sp = sp->next) rc = hd_pool_use(sp->pool, ptr, stream);
  pthread_mutex_unlock(&dev->pools_mu);
  return rc;
}

void ep_device_forget_stream(ep_device *dev, void *stream) {
  pthread_mutex_lock(&dev->pools_mu);
  for (shared_pool *sp = dev->pools; sp; sp = sp->next) hd_pool_forget_stream(sp->pool, stream);
  pthread_mutex_unlock(&dev->pools_mu);
}

OrtAllocator *ep_allocator_ort(ep_allocator *a) { return &a->base; }

void ep_allocator_destroy(OrtAllocator *oa) {
  if (!oa) return;
  ep_allocator *a = alloc_of(oa);
  pthread_mutex_lock(&a->sp->mu);
  int last = --a->sp->refs == 0;
  pthread_mutex_unlock(&a->sp->mu);
  if (last) {
    pthread_mutex_lock(&a->dev->pools_mu);
    for (shared_pool **pp = &a->dev->pools; *pp; pp = &(*pp)->next)
      if (*pp == a->sp) {
        *pp = a->sp->next;
        break;
      }
    pthread_mutex_unlock(&a->dev->pools_mu);
    size_t leaked = 0;
    hd_pool_destroy(a->sp->pool, &leaked);
    if (leaked) HD_LOG(HD_LOG_WARNING, "%zu device block(s) still in use when their allocator was released", leaked);
    pthread_mutex_destroy(&a->sp->mu);
    free(a->sp);
  }
  ep_lib *lib = a->holds_lib ? a->dev->lib : NULL;
  free(a);
  if (lib) ep_lib_release(lib);
}

static hd_status *be_alloc_fn(void *ctx, size_t bytes, void **p) { return hd_pool_alloc(ctx, bytes, p); }

hd_status *ep_allocator_alloc_on(ep_allocator *a, size_t bytes, void *stream, void **p) {
  return hd_pool_alloc_on(a->sp->pool, bytes, stream, p);
}

void ep_allocator_free(ep_allocator *a, void *p) { hd_pool_free(a->sp->pool, p); }
static void be_free_fn(void *ctx, void *p) { hd_pool_free(ctx, p); }

be_alloc ep_allocator_be(ep_allocator *a) { return (be_alloc){a->sp->pool, be_alloc_fn, be_free_fn}; }
hd_pool *ep_allocator_pool(ep_allocator *a) { return a->sp->pool; }

/* ---- data transfer ---- */

typedef struct ep_transfer {
  OrtDataTransferImpl base;
  ep_lib *lib;
} ep_transfer;

/* Host memory is CPU memory or our pinned memory; device memory is a GPU of ours. */
static int is_host(const OrtMemoryDevice *md) {
  return ep_ep_api->MemoryDevice_GetDeviceType(md) == OrtMemoryInfoDeviceType_CPU ||
         ep_ep_api->MemoryDevice_GetMemoryType(md) == OrtDeviceMemoryType_HOST_ACCESSIBLE;
}

static bool ORT_API_CALL t_can_copy(const OrtDataTransferImpl *t, const OrtMemoryDevice *src,
                                    const OrtMemoryDevice *dst) {
  ep_lib *lib = ((const ep_transfer *)(const void *)t)->lib;
  ep_device *ds = is_host(src) ? NULL : ep_lib_device_for_memory(lib, src);
  ep_device *dd = is_host(dst) ? NULL : ep_lib_device_for_memory(lib, dst);
  if (!ds && !dd) return false; /* host to host is ORT's own */
  return (ds || is_host(src)) && (dd || is_host(dst));
}

static OrtStatus *ORT_API_CALL t_copy(OrtDataTransferImpl *t, const OrtValue **src, OrtValue **dst,
                                      OrtSyncStream **streams, size_t n) {
  ep_lib *lib = ((ep_transfer *)(void *)t)->lib;
  for (size_t i = 0; i < n; i++) {
    const OrtMemoryDevice *ms = ep_ep_api->Value_GetMemoryDevice(src[i]);
    const OrtMemoryDevice *md = ep_ep_api->Value_GetMemoryDevice(dst[i]);
    ep_device *ds = is_host(ms) ? NULL : ep_lib_device_for_memory(lib, ms);
    ep_device *dd = is_host(md) ? NULL : ep_lib_device_for_memory(lib, md);
    ep_device *d = dd ? dd : ds;
    if (!d) return ep_ort_error(ORT_INVALID_ARGUMENT, "copy between memories this EP does not own");
    be_copy_kind kind = ds && dd ? BE_COPY_DEVICE_TO_DEVICE : ds ? BE_COPY_DEVICE_TO_HOST : BE_COPY_HOST_TO_DEVICE;
    const void *sp = NULL;
    void *dp = NULL;
    size_t bytes = 0;
    OrtStatus *os;
    if ((os = ep_api->GetTensorData(src[i], &sp)) || (os = ep_api->GetTensorMutableData(dst[i], &dp)) ||
        (os = ep_api->GetTensorSizeInBytes(src[i], &bytes)))
      return os;
    void *stream = streams && streams[i] ? ep_api->SyncStream_GetHandle(streams[i]) : NULL;
    /* The copy runs later: blocks freed before it ends wait for it. A block
     * that already tracks its most streams (2) cannot: finish the copy here. */
    int untracked = 0;
    if (stream) {
      untracked |= ep_device_mark_use(d, dp, stream) == 2;
      untracked |= ep_device_mark_use(d, (void *)sp, stream) == 2;
    }
    hd_status *st = be_copy(d->be, d->ordinal, dp, sp, bytes, kind, stream);
    /* Without a stream the copy must be complete on return. */
    if (!st && (!stream || untracked)) st = be_stream_sync(d->be, d->ordinal, stream);
    if (st) return ep_status_to_ort(hd_status_wrap(st, "copying %zu bytes: ", bytes));
  }
  return NULL;
}

static void ORT_API_CALL t_release(OrtDataTransferImpl *t) { (void)t; /* owned by the factory */ }

hd_status *ep_transfer_create(ep_lib *lib, OrtDataTransferImpl **out) {
  ep_transfer *t;
  HD_ALLOC_OR_RETURN(t, 1);
  t->base.ort_version_supported = ORT_API_VERSION;
  t->base.Release = t_release;
  t->base.CanCopy = t_can_copy;
  t->base.CopyTensors = t_copy;
  t->lib = lib;
  *out = &t->base;
  return NULL;
}

void ep_transfer_destroy(OrtDataTransferImpl *t) { free(t); }
