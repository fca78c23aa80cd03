/* ep_factory: the OrtEpFactory and what it owns: backend modules, the
 * devices we offer, data transfer. Also the types the other ep/ files share. */
#ifndef EP_FACTORY_H
#define EP_FACTORY_H

#include <pthread.h>

#include "backends/backend.h"
#include "common/hd_pool.h"
#include "ep/ep_options.h"
#include "ep/ep_ort.h"

#define EP_MAX_DEVICES 16

/* A device we offer: the CPU running the reference backend, or one GPU. */
typedef struct ep_device {
  be_module *be;                 /* owned by the factory */
  int ordinal;                   /* the backend's device number */
  be_device_info info;
  const OrtHardwareDevice *hw;   /* ORT's, or own_hw */
  OrtHardwareDevice *own_hw;     /* created by us when ORT listed no match */
  OrtMemoryInfo *mem_device;     /* GPU: device memory; kept for the factory's life */
  OrtMemoryInfo *mem_pinned;     /* GPU: pinned host memory */
  pthread_mutex_t pools_mu;      /* guards pools */
  struct shared_pool *pools;     /* every pool of this device's memory (ep_memory.c) */
} ep_device;

typedef struct ep_factory {
  OrtEpFactory base;
  const OrtLogger *logger;
  be_module *ref;
  be_module *gpu;                /* the GPU backend found, or NULL */
  ep_device devices[EP_MAX_DEVICES];
  int ndevices;
  int devices_built;
  OrtDataTransferImpl *transfer; /* GPU only */
} ep_factory;

hd_status *ep_factory_create(const OrtLogger *logger, ep_factory **out);
void ep_factory_destroy(ep_factory *f);
/* The device whose memory info matches (by device id and vendor), or NULL. */
ep_device *ep_factory_device_for_memory(ep_factory *f, const OrtMemoryDevice *md);

/* ---- implemented elsewhere in ep/ ---- */

/* ep_ep.c */
OrtStatus *ep_create(ep_factory *f, ep_device *dev, const ep_options *opts, const OrtLogger *logger,
                     OrtEp **out);
void ep_destroy(OrtEp *ep);

/* ep_memory.c: allocators over a pool, and data transfer */
typedef struct ep_allocator ep_allocator;
/* An allocator for info's memory. share: NULL for a new pool with this byte
 * limit (0: none), or an allocator whose pool to share (refcounted). */
hd_status *ep_allocator_create(ep_device *dev, const OrtMemoryInfo *info, size_t limit, ep_allocator *share,
                               ep_allocator **out);
OrtAllocator *ep_allocator_ort(ep_allocator *a);
void ep_allocator_destroy(OrtAllocator *a);
/* The pool behind an allocator, for backends' be_alloc. */
be_alloc ep_allocator_be(ep_allocator *a);
/* Memory for one run's use on stream (freed with ep_allocator_free: the
 * block is not reused until that stream's work before the free is done). */
hd_status *ep_allocator_alloc_on(ep_allocator *a, size_t bytes, void *stream, void **p);
void ep_allocator_free(ep_allocator *a, void *p);
/* Records that ptr, a block of one of dev's pools, is used on stream (its
 * free then waits for that work). 0: not ours; 1: recorded; 2: the block
 * has too many streams already: the caller must sync the stream. */
int ep_device_mark_use(ep_device *dev, void *ptr, void *stream);
/* Before a synced stream is destroyed: blocks that remember it (a tensor
 * that outlives its session) must not record events on it later. */
void ep_device_forget_stream(ep_device *dev, void *stream);
hd_status *ep_transfer_create(ep_factory *f, OrtDataTransferImpl **out);
/* ORT's Release of the transfer is a no-op: the factory owns it. */
void ep_transfer_destroy(OrtDataTransferImpl *t);

/* ep_stream.c */
hd_status *ep_stream_create(ep_device *dev, OrtSyncStreamImpl **out);

#endif
