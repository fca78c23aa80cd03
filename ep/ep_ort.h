/* ep_ort: the ORT API tables, status conversion and logging shared by ep/. */
#ifndef EP_ORT_H
#define EP_ORT_H

#include <onnxruntime_c_api.h> /* also declares the plugin EP API */

#include "common/hd_log.h"
#include "common/hd_status.h"

/* The recommended registration name; the EP takes the name it is registered
 * under (ep_main.c). Also the prefix of our error and log messages. */
#define EP_NAME "HipDNNExecutionProvider"
/* Provider options are read under "ep.<lowercase EP name>." and, whatever
 * the name, under this fixed prefix (ep_options.c says why). */
#define EP_OPTION_PREFIX "ep.hipdnnexecutionprovider."
#define EP_VENDOR "hipdnn-ep"
#define EP_VENDOR_ID 0x1002u /* AMD: the project's home vendor */

extern const OrtApi *ep_api;       /* set by CreateEpFactories */
extern const OrtEpApi *ep_ep_api;

/* Converts and frees st; NULL stays NULL. */
OrtStatus *ep_status_to_ort(hd_status *st);
/* An OrtStatus from a printf message, prefixed with the EP name. */
OrtStatus *ep_ort_error(OrtErrorCode code, const char *fmt, ...) HD_PRINTF(2, 3);
/* Converts and releases an ORT status into ours, with context. */
hd_status *ep_from_ort(OrtStatus *st, const char *what);

#define EP_ORT_TRY(call, what)                                  \
  do {                                                          \
    hd_status *ep_try_st_ = ep_from_ort((call), (what));        \
    if (ep_try_st_) return ep_try_st_;                          \
  } while (0)

/* Routes hd_log to this logger until ep_log_detach(logger). */
void ep_log_attach(const OrtLogger *logger);
void ep_log_detach(const OrtLogger *logger);

#endif
