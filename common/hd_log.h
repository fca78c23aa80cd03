/* hd_log: logging for layers that cannot see ORT's logger.
 * ep/ installs a sink that forwards to ORT's logger; a GPU module gets the
 * core's sink through its init call. Without a sink, messages are dropped:
 * a library never prints to stdout. */
#ifndef HD_LOG_H
#define HD_LOG_H

#include "common/hd_status.h"

typedef enum hd_log_level {
  HD_LOG_VERBOSE = 0,
  HD_LOG_INFO = 1,
  HD_LOG_WARNING = 2,
  HD_LOG_ERROR = 3,
} hd_log_level;

typedef void (*hd_log_sink)(void *user, hd_log_level level, const char *file, int line,
                            const char *func, const char *msg);

void hd_log_set_sink(hd_log_sink sink, void *user);
void hd_log_get_sink(hd_log_sink *sink, void **user);
void hd_log_write(hd_log_level level, const char *file, int line, const char *func,
                  const char *fmt, ...) HD_PRINTF(5, 6);

#define HD_LOG(level, ...) hd_log_write((level), __FILE__, __LINE__, __func__, __VA_ARGS__)

#endif
