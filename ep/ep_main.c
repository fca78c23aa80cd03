/* The library's two exports: ORT calls these and nothing else. */
#include <stdlib.h>

#include "ep/ep_factory.h"

#define EP_EXPORT __attribute__((visibility("default")))

EP_EXPORT OrtStatus *CreateEpFactories(const char *registered_name, const OrtApiBase *api_base,
                                       const OrtLogger *default_logger, OrtEpFactory **factories,
                                       size_t max_factories, size_t *num_factories);
EP_EXPORT OrtStatus *ReleaseEpFactory(OrtEpFactory *factory);

/* The registration name is the EP name (what OrtEpDevice and OrtEp report,
 * and the prefix of provider options), as callers that register us under
 * their own name (onnxruntime-genai, AMD's umbrella EP) expect. */
OrtStatus *CreateEpFactories(const char *registered_name, const OrtApiBase *api_base,
                             const OrtLogger *default_logger, OrtEpFactory **factories, size_t max_factories,
                             size_t *num_factories) {
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
  hd_status *st = ep_factories_create(registered_name, default_logger, factories, max_factories, num_factories);
  if (st) {
    ep_log_detach(default_logger);
    return ep_status_to_ort(st);
  }
  /* One log attachment per factory: each release detaches one. */
  for (size_t i = 1; i < *num_factories; i++) ep_log_attach(default_logger);
  return NULL;
}

OrtStatus *ReleaseEpFactory(OrtEpFactory *factory) {
  if (!factory) return NULL;
  ep_factory *f = (ep_factory *)(void *)factory;
  const OrtLogger *logger = f->logger;
  ep_factory_release(f);
  ep_log_detach(logger);
  return NULL;
}
