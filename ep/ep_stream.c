/* ORT's sync-stream interface over a backend stream and events, so ORT runs
 * our copies and compute on our stream and orders them against other EPs. */
#include <stdlib.h>

#include "ep/ep_factory.h"

typedef struct ep_stream {
  OrtSyncStreamImpl base;
  ep_device *dev;
  void *stream;
} ep_stream;

typedef struct ep_notification {
  OrtSyncNotificationImpl base;
  ep_stream *producer;
  void *event;
} ep_notification;

static ep_stream *stream_of(OrtSyncStreamImpl *s) { return (ep_stream *)(void *)s; }
static ep_notification *note_of(OrtSyncNotificationImpl *n) { return (ep_notification *)(void *)n; }

static void ORT_API_CALL n_release(OrtSyncNotificationImpl *p) {
  ep_notification *n = note_of(p);
  be_event_destroy(n->producer->dev->be, n->producer->dev->ordinal, n->event);
  free(n);
}

static OrtStatus *ORT_API_CALL n_activate(OrtSyncNotificationImpl *p) {
  ep_notification *n = note_of(p);
  return ep_status_to_ort(be_event_record(n->producer->dev->be, n->event, n->producer->stream));
}

static OrtStatus *ORT_API_CALL n_wait_on_device(OrtSyncNotificationImpl *p, OrtSyncStream *consumer) {
  ep_notification *n = note_of(p);
  be_module *be = n->producer->dev->be;
  /* A CPU consumer comes as NULL (ORT 1.29): wait on the host instead. */
  void *cs = consumer ? ep_api->SyncStream_GetHandle(consumer) : NULL;
  if (!cs) return ep_status_to_ort(be_event_sync(be, n->event));
  return ep_status_to_ort(be_stream_wait_event(be, cs, n->event));
}

static OrtStatus *ORT_API_CALL n_wait_on_host(OrtSyncNotificationImpl *p) {
  ep_notification *n = note_of(p);
  return ep_status_to_ort(be_event_sync(n->producer->dev->be, n->event));
}

static void ORT_API_CALL s_release(OrtSyncStreamImpl *p) {
  ep_stream *s = stream_of(p);
  hd_status_free(be_stream_sync(s->dev->be, s->dev->ordinal, s->stream));
  ep_device_forget_stream(s->dev, s->stream);
  be_stream_destroy(s->dev->be, s->dev->ordinal, s->stream);
  ep_lib *lib = s->dev->lib;
  free(s);
  ep_lib_release(lib);
}

static void *ORT_API_CALL s_get_handle(OrtSyncStreamImpl *p) { return stream_of(p)->stream; }

static OrtStatus *ORT_API_CALL s_create_notification(OrtSyncStreamImpl *p, OrtSyncNotificationImpl **out) {
  ep_stream *s = stream_of(p);
  *out = NULL;
  ep_notification *n = calloc(1, sizeof *n);
  if (!n) return ep_ort_error(ORT_FAIL, "out of host memory");
  n->base.ort_version_supported = ORT_API_VERSION;
  n->base.Release = n_release;
  n->base.Activate = n_activate;
  n->base.WaitOnDevice = n_wait_on_device;
  n->base.WaitOnHost = n_wait_on_host;
  n->producer = s;
  hd_status *st = be_event_create(s->dev->be, s->dev->ordinal, &n->event);
  if (st) {
    free(n);
    return ep_status_to_ort(st);
  }
  *out = &n->base;
  return NULL;
}

static OrtStatus *ORT_API_CALL s_flush(OrtSyncStreamImpl *p) {
  ep_stream *s = stream_of(p);
  return ep_status_to_ort(be_stream_sync(s->dev->be, s->dev->ordinal, s->stream));
}

hd_status *ep_stream_create(ep_device *dev, OrtSyncStreamImpl **out) {
  ep_stream *s;
  HD_ALLOC_OR_RETURN(s, 1);
  s->base.ort_version_supported = ORT_API_VERSION;
  s->base.Release = s_release;
  s->base.GetHandle = s_get_handle;
  s->base.CreateNotification = s_create_notification;
  s->base.Flush = s_flush;
  s->base.OnSessionRunEnd = s_flush;
  s->dev = dev;
  hd_status *st = be_stream_create(dev->be, dev->ordinal, &s->stream);
  if (st) {
    free(s);
    return st;
  }
  ep_lib_retain(dev->lib);
  *out = &s->base;
  return NULL;
}
