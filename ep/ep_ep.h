/* ep_ep: the OrtEp of one session, and the compiled partitions it runs. */
#ifndef EP_EP_H
#define EP_EP_H

#include "ep/ep_factory.h"
#include "ep/ep_graph.h"

typedef struct ep_ep {
  OrtEp base;
  ep_lib *lib;                 /* referenced: the EP may outlive its factory */
  char name[EP_NAME_MAX + 8];  /* the factory's EP name */
  ep_device *dev;
  const OrtLogger *logger;
  ep_options opts;
  ep_allocator *device_alloc;  /* GPU: the session's pool (gpu_mem_limit) */
  be_context *ctx;
} ep_ep;

/* ep_kernel.c: one compiled partition as ORT's OrtNodeComputeInfo. Takes
 * the imported graph (its OrtNode pointers are not kept). */
hd_status *ep_kernel_create(ep_ep *ep, const char *name, ep_graph *eg, OrtNodeComputeInfo **out);
void ep_kernel_destroy(OrtNodeComputeInfo *info);

#endif
