#include "ep/ep_ort.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

const OrtApi *ep_api;
const OrtEpApi *ep_ep_api;

static OrtErrorCode ort_code(hd_code c) {
  switch (c) {
    case HD_ERR_INVALID_ARG: return ORT_INVALID_ARGUMENT;
    case HD_ERR_NOT_SUPPORTED: return ORT_NOT_IMPLEMENTED;
    case HD_ERR_NOT_FOUND: return ORT_NO_SUCHFILE;
    case HD_ERR_OUT_OF_MEMORY:
    case HD_ERR_BACKEND: return ORT_EP_FAIL;
    default: return ORT_FAIL;
  }
}

OrtStatus *ep_status_to_ort(hd_status *st) {
  if (!st) return NULL;
  OrtStatus *o = ep_ort_error(ort_code(hd_status_code(st)), "%s", hd_status_msg(st));
  hd_status_free(st);
  return o;
}

OrtStatus *ep_ort_error(OrtErrorCode code, const char *fmt, ...) {
  char msg[2048];
  int n = snprintf(msg, sizeof msg, "%s: ", EP_NAME);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
  va_end(ap);
  return ep_api->CreateStatus(code, msg);
}

hd_status *ep_from_ort(OrtStatus *st, const char *what) {
  if (!st) return NULL;
  hd_status *h = hd_error(HD_ERR_BACKEND, "%s: %s", what, ep_api->GetErrorMessage(st));
  ep_api->ReleaseStatus(st);
  return h;
}

/* The logger hd_log goes to: the first factory's default logger, which lives
 * as long as ORT's environment. */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static const OrtLogger *log_logger;
static int log_refs;

static void ort_sink(void *user, hd_log_level level, const char *file, int line, const char *func,
                     const char *msg) {
  (void)user;
  static const OrtLoggingLevel levels[] = {ORT_LOGGING_LEVEL_VERBOSE, ORT_LOGGING_LEVEL_INFO,
                                           ORT_LOGGING_LEVEL_WARNING, ORT_LOGGING_LEVEL_ERROR};
  pthread_mutex_lock(&log_mu);
  const OrtLogger *lg = log_logger;
  if (lg) {
    char full[1200];
    snprintf(full, sizeof full, "[%s] %s", EP_NAME, msg);
    OrtStatus *st = ep_api->Logger_LogMessage(lg, levels[level], full, file, line, func);
    if (st) ep_api->ReleaseStatus(st);
  }
  pthread_mutex_unlock(&log_mu);
}

void ep_log_attach(const OrtLogger *logger) {
  pthread_mutex_lock(&log_mu);
  if (log_refs++ == 0) log_logger = logger;
  pthread_mutex_unlock(&log_mu);
  hd_log_set_sink(ort_sink, NULL);
}

void ep_log_detach(const OrtLogger *logger) {
  (void)logger;
  pthread_mutex_lock(&log_mu);
  if (--log_refs == 0) log_logger = NULL;
  pthread_mutex_unlock(&log_mu);
}
