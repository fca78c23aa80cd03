/* ep_factory: the OrtEpFactory objects one CreateEpFactories call returns,
 * the library state they share (backend modules, devices, data transfer),
 * and the types the other ep/ files share.
 *
 * One EP name offers one device, so a caller that hands every device of a
 * name to one session meets ONNX Runtime's rule that a session's devices
 * share one memory info: the registration name offers the first GPU (or,
 * with no GPU, the CPU running the reference backend), "<name>_<n>" GPU n,
 * and "<name>_ref" the CPU on a machine with GPUs (docs/architecture.md). */
#ifndef EP_FACTORY_H
#define EP_FACTORY_H

#include <pthread.h>

#include "backends/backend.h"
#include "common/hd_pool.h"
#include "ep/ep_options.h"
#include "ep/ep_ort.h"

#define EP_MAX_DEVICES 16
/* ORT makes room for 4 factories per library (ep_library_plugin). */
#define EP_MAX_FACTORIES 4
#define EP_NAME_MAX 120 /* registration name, with its NUL */

/* A device we offer: the CPU running the reference backend, or one GPU. */
typedef struct ep_device {
  struct ep_lib *lib;            /* the library state it belongs to */
  be_module *be;                 /* owned by the library state */
  int ordinal;                   /* the backend's device number */
  be_device_info info;
  const OrtHardwareDevice *hw;   /* ORT's, or own_hw */
  OrtHardwareDevice *own_hw;     /* created by us when ORT listed no match */
  OrtMemoryInfo *mem_device;     /* GPU: device memory; kept for the factory's life */
  OrtMemoryInfo *mem_pinned;     /* GPU: pinned host memory */
  pthread_mutex_t pools_mu;      /* guards pools */
  struct shared_pool *pools;     /* every pool of this device's memory (ep_memory.c) */
  /* The process-wide pools of this device (device and pinned memory), made
   * on first use and kept until the library is released: memory one
   * session hands out stays valid in every other (GenAI's KV cache). */
  pthread_mutex_t shared_mu;
  struct ep_allocator *shared_device, *shared_pinned;
} ep_device;

/* What one CreateEpFactories call opens; freed with its last factory. */
typedef struct ep_lib {
  char name[EP_NAME_MAX];        /* the registration name */
  be_module *ref;
  be_module *gpu;                /* the GPU backend found, or NULL */
  int ngpu;
  pthread_mutex_t mu;            /* guards devices' hw, transfer and refs */
  ep_device devices[EP_MAX_DEVICES]; /* GPUs 0..ngpu-1, then the CPU */
  int ndevices;
  int refs;                      /* factories, EPs, streams and allocators handed out */
  OrtDataTransferImpl *transfer; /* GPU only */
} ep_lib;

typedef struct ep_factory {
  OrtEpFactory base;
  ep_lib *lib;
  const OrtLogger *logger;
  int device;                    /* the device this name offers: lib->devices[device] */
  char name[EP_NAME_MAX + 8];    /* the EP name: registration name [+ "_ref" | "_<n>"] */
  char option_prefix[EP_NAME_MAX + 16]; /* "ep.<lowercase name>." (ORT's session config keys) */
} ep_factory;

/* The factories for registered_name, at most max of them (the first offers
 * the default device). */
hd_status *ep_factories_create(const char *registered_name, const OrtLogger *logger, OrtEpFactory **out,
                               size_t max, size_t *n);
void ep_factory_release(ep_factory *f);
/* What ORT holds (factories, EPs, streams, allocators) keeps the library
 * state alive: ORT may release an allocator after the factory that made it
 * (AMD's umbrella EP releases in that order). */
void ep_lib_retain(ep_lib *lib);
void ep_lib_release(ep_lib *lib);
/* Our GPU device that a memory device names (GPU type, our vendor, device
 * id = the backend's ordinal), or NULL. Memory infos of other callers (the
 * umbrella EP's, GenAI's) match by these fields, never by name. */
ep_device *ep_lib_device_for_memory(ep_lib *lib, const OrtMemoryDevice *md);

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
/* An allocator reporting info over the device's process-wide pool for
 * info's memory type (device or pinned). */
hd_status *ep_allocator_create_shared(ep_device *dev, const OrtMemoryInfo *info, ep_allocator **out);
/* Releases the device's process-wide pools (library release). */
void ep_device_release_shared(ep_device *dev);
OrtAllocator *ep_allocator_ort(ep_allocator *a);
void ep_allocator_destroy(OrtAllocator *a);
/* The pool behind an allocator, for backends' be_alloc. */
be_alloc ep_allocator_be(ep_allocator *a);
hd_pool *ep_allocator_pool(ep_allocator *a);
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
hd_status *ep_transfer_create(ep_lib *lib, OrtDataTransferImpl **out);
/* ORT's Release of the transfer is a no-op: the factory owns it. */
void ep_transfer_destroy(OrtDataTransferImpl *t);

/* ep_stream.c */
hd_status *ep_stream_create(ep_device *dev, OrtSyncStreamImpl **out);

#endif
