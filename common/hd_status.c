#include "common/hd_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hd_status {
  hd_code code;
  int is_static; /* never freed: see oom_status */
  char msg[];
};

/* Returned when allocating an error itself fails; never freed. A backend
 * module has its own copy of this file and of this object, so statuses say
 * themselves that they are static (the address would not tell the core). */
static struct {
  hd_code code;
  int is_static;
  char msg[40];
} oom_status = {HD_ERR_OUT_OF_MEMORY, 1, "out of host memory (creating an error)"};

static int is_static(const hd_status *st) { return st->is_static != 0; }

hd_status *hd_verror(hd_code code, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  hd_status *st = malloc(sizeof(*st) + (size_t)n + 1);
  if (!st) return (hd_status *)(void *)&oom_status;
  st->code = code == HD_OK ? HD_ERR_INTERNAL : code;
  st->is_static = 0;
  vsnprintf(st->msg, (size_t)n + 1, fmt, ap);
  return st;
}

hd_status *hd_error(hd_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hd_status *st = hd_verror(code, fmt, ap);
  va_end(ap);
  return st;
}

hd_status *hd_status_wrap(hd_status *st, const char *fmt, ...) {
  if (!st || is_static(st)) return st;
  char prefix[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  hd_status *out = hd_error(st->code, "%s%s", prefix, st->msg);
  if (is_static(out)) return st; /* keep the original rather than lose it */
  hd_status_free(st);
  return out;
}

hd_code hd_status_code(const hd_status *st) { return st ? st->code : HD_OK; }
const char *hd_status_msg(const hd_status *st) { return st ? st->msg : ""; }

void hd_status_free(hd_status *st) {
  if (st && !is_static(st)) free(st);
}
