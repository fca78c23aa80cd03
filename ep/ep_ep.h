/* ep_ep: the OrtEp of one session, and the compiled partitions it runs. */
#ifndef EP_EP_H
#define EP_EP_H

#include "ep/ep_factory.h"
#include "ep/ep_graph.h"
#include "ep/ep_profile.h"

typedef struct ep_ep {
  OrtEp base;
  ep_lib *lib;                 /* referenced: the EP may outlive its factory */
  char name[EP_NAME_MAX + 8];  /* the factory's EP name */
  ep_device *dev;
  const OrtLogger *logger;
  ep_options opts;
  ep_allocator *device_alloc;  /* GPU: the session's pool (gpu_mem_limit) */
  hd_pool *host_pool;          /* reference backend: its run buffers (host memory) */
  be_context *ctx;
  ep_prof_hub *prof;           /* profiles (ep_profile.c) */
  pthread_mutex_t kernels_mu;  /* guards kernels */
  OrtNodeComputeInfo **kernels; /* the compiled partitions, for memory figures */
  int nkernels, cap_kernels;
} ep_ep;

/* ep_kernel.c: one compiled partition as ORT's OrtNodeComputeInfo. Takes
 * the imported graph (its OrtNode pointers are not kept). */
hd_status *ep_kernel_create(ep_ep *ep, const char *name, ep_graph *eg, OrtNodeComputeInfo **out);
void ep_kernel_destroy(OrtNodeComputeInfo *info);
/* What the partition's compiled graph holds now. */
void ep_kernel_memory(OrtNodeComputeInfo *info, be_graph_memory *out);

/* The session's memory now: its partitions' weights and run buffers, and
 * the pool they come from (any thread). */
void ep_memory_figures(ep_ep *ep, ep_mem_figures *out);
/* Keeps the list of compiled partitions the figures add up. */
hd_status *ep_kernels_add(ep_ep *ep, OrtNodeComputeInfo *k);
void ep_kernels_remove(ep_ep *ep, OrtNodeComputeInfo *k);

#endif
