/* The library's two exports: ORT calls these and nothing else. */
#include <stdlib.h>

#include "ep/ep_factory.h"

#define EP_EXPORT __attribute__((visibility("default")))

EP_EXPORT OrtStatus *CreateEpFactories(const char *registered_name, const OrtApiBase *api_base,
                                       const OrtLogger *default_logger, OrtEpFactory **factories,
                                       size_t max_factories, size_t *num_factories);
EP_EXPORT OrtStatus *ReleaseEpFactory(OrtEpFactory *factory);

OrtStatus *CreateEpFactories(const char *registered_name, const OrtApiBase *api_base,
                             const OrtLogger *default_logger, OrtEpFactory **factories, size_t max_factories,
                             size_t *num_factories) {
  (void)registered_name;
  *num_factories = 0;
  const OrtApi *api = api_base->GetApi(ORT_API_VERSION);
  if (!api) {
    /* The runtime is older than our headers: say so through the oldest API. */
    const OrtApi *old = api_base->GetApi(1);
    return old ? old->CreateStatus(ORT_NOT_IMPLEMENTED,
                                   EP_NAME ": this ONNX Runtime is older than API version 29, which the EP needs")
               : NULL;
  }
  ep_api = api;
  ep_ep_api = api->GetEpApi();
  if (max_factories < 1) return ep_ort_error(ORT_INVALID_ARGUMENT, "no room for a factory");
  ep_log_attach(default_logger);
  ep_factory *f = NULL;
  hd_status *st = ep_factory_create(default_logger, &f);
  if (st) {
    ep_log_detach(default_logger);
    return ep_status_to_ort(st);
  }
  factories[0] = &f->base;
  *num_factories = 1;
  return NULL;
}

OrtStatus *ReleaseEpFactory(OrtEpFactory *factory) {
  if (!factory) return NULL;
  ep_factory *f = (ep_factory *)(void *)factory;
  const OrtLogger *logger = f->logger;
  ep_factory_destroy(f);
  ep_log_detach(logger);
  return NULL;
}
