#include "common/hd_log.h"

#include <stdarg.h>
#include <stdio.h>

static hd_log_sink g_sink;
static void *g_sink_user;

void hd_log_set_sink(hd_log_sink sink, void *user) {
  g_sink = sink;
  g_sink_user = user;
}

void hd_log_get_sink(hd_log_sink *sink, void **user) {
  *sink = g_sink;
  *user = g_sink_user;
}

void hd_log_write(hd_log_level level, const char *file, int line, const char *func,
                  const char *fmt, ...) {
  hd_log_sink sink = g_sink;
  if (!sink) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  sink(g_sink_user, level, file, line, func, msg);
}
