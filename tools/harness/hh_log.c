/* ORT's log as the harness sees it: the env's logging function prints what
 * the user asked for to stderr, and keeps our EP's own messages while a
 * capture is on. That is how a tool learns, without linking the EP, why the
 * EP declined each node: the EP says so in verbose lines through ORT's
 * logger (ep/ep_ep.c).
 *
 * ORT keeps one env per process and calls this function from any thread,
 * so the state is one per process, under a mutex. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/harness/harness.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_print_level = ORT_LOGGING_LEVEL_WARNING;
static int g_capturing;
static char *g_buf; /* captured lines */
static size_t g_len, g_cap;

void hh_log_set_level(int level) {
  pthread_mutex_lock(&g_mu);
  g_print_level = level;
  pthread_mutex_unlock(&g_mu);
}

/* Appends one line (newlines inside msg become spaces); drops it when out
 * of memory: a lost log line must not fail the run. */
static void keep_line(const char *msg) {
  size_t n = strlen(msg);
  if (g_len + n + 2 > g_cap) {
    size_t cap = g_cap ? g_cap : 4096;
    while (g_len + n + 2 > cap) cap *= 2;
    char *b = realloc(g_buf, cap);
    if (!b) return;
    g_buf = b;
    g_cap = cap;
  }
  for (size_t i = 0; i < n; i++) g_buf[g_len++] = msg[i] == '\n' ? ' ' : msg[i];
  g_buf[g_len++] = '\n';
  g_buf[g_len] = 0;
}

void ORT_API_CALL hh_log_ort(void *param, OrtLoggingLevel severity, const char *category, const char *logid,
                             const char *code_location, const char *message) {
  static const char letters[] = "VIWEF";
  static const char prefix[] = "[" HH_EP_NAME "] ";
  (void)param;
  if (!message) return;
  pthread_mutex_lock(&g_mu);
  if (g_capturing && strncmp(message, prefix, sizeof prefix - 1) == 0) keep_line(message + sizeof prefix - 1);
  if ((int)severity >= g_print_level) {
    /* the layout of ORT's default sink: time [S:category:logid, where] message */
    struct timespec ts;
    struct tm tm;
    char when[32] = "";
    clock_gettime(CLOCK_REALTIME, &ts);
    if (localtime_r(&ts.tv_sec, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    int s = (int)severity;
    fprintf(stderr, "%s.%06ld [%c:%s:%s, %s] %s\n", when, ts.tv_nsec / 1000, s >= 0 && s <= 4 ? letters[s] : '?',
            category ? category : "", logid ? logid : "", code_location ? code_location : "", message);
  }
  pthread_mutex_unlock(&g_mu);
}

int hh_log_capture_begin(hh_ort *h) {
  pthread_mutex_lock(&g_mu);
  g_capturing = 1;
  g_len = 0;
  if (g_buf) g_buf[0] = 0;
  pthread_mutex_unlock(&g_mu);
  return hh_check(h, h->api->UpdateEnvWithCustomLogLevel(h->env, ORT_LOGGING_LEVEL_VERBOSE),
                  "UpdateEnvWithCustomLogLevel");
}

int hh_log_capture_end(hh_ort *h, char **text) {
  int rc = hh_check(h, h->api->UpdateEnvWithCustomLogLevel(h->env, (OrtLoggingLevel)h->log_level),
                    "UpdateEnvWithCustomLogLevel");
  pthread_mutex_lock(&g_mu);
  g_capturing = 0;
  *text = g_buf ? g_buf : calloc(1, 1);
  g_buf = NULL;
  g_len = g_cap = 0;
  pthread_mutex_unlock(&g_mu);
  if (!*text) return hh_fail(h, "out of host memory");
  if (rc) free(*text), *text = NULL;
  return rc;
}
