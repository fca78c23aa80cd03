/* ep_profile: see ep_profile.h. */
#include "ep/ep_profile.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "ep/ep_ep.h"

/* A long profiled session must not take the host's memory: past this many
 * events per sink, the rest are counted, not kept (ORT's own cap is 1e6). */
#define EP_PROF_MAX_EVENTS 1000000
#define EP_PROF_MAX_ARGS 16
/* ORT events open on one thread at once (run > executor > node: 3). */
#define EP_PROF_STACK 16
#define EP_PROF_COUNTER (-1) /* a memory sample: trace only */

typedef struct prof_event {
  int64_t start_ns, dur_ns; /* CLOCK_MONOTONIC */
  int64_t anchor_ns;        /* our clock when the ORT event it ran in began (0: none) */
  uint64_t anchor_id;       /* that ORT event's correlation id (ORT's clock, us) */
  int tid;
  int cat;                  /* OrtProfilingEventCategory, or EP_PROF_COUNTER */
  int nargs;
  uint32_t json;            /* bit i: arg i's value is JSON */
  char *text;               /* name\0key0\0value0\0key1\0... */
} prof_event;

typedef struct event_list {
  prof_event *v;
  size_t n, cap;
  size_t dropped;
} event_list;

/* One OrtEpProfilerImpl: a profiling session (session- or run-level). */
typedef struct ep_prof {
  OrtEpProfilerImpl base;
  ep_prof_hub *hub;
  int started, ended;
  int64_t start_ns;  /* our clock at StartProfiling */
  int64_t offset_ns; /* ORT's time since its profiling start, at that moment */
  int64_t id_base;   /* an event's correlation id minus its ORT timestamp (-1: not seen yet) */
  event_list events;
  struct ep_prof *next;
} ep_prof;

struct ep_prof_hub {
  pthread_mutex_t mu;
  int refs;             /* the EP's, and one per profiler */
  struct ep_ep *ep;     /* NULL once detached */
  char provider[EP_NAME_MAX + 8];
  char backend[16];
  ep_prof *profilers;
  char *trace_path;     /* immutable: read without the lock */
  int64_t trace_t0;
  event_list trace;
};

struct ep_prof_run {
  ep_prof_hub *hub;
  ep_prof *target; /* the ORT profiler open on this thread at the start, or NULL */
  int64_t anchor_ns;  /* our clock when target's innermost open ORT event began */
  uint64_t anchor_id; /* that event's correlation id */
  int tid;
  event_list events;
};

/* The profilers whose ORT events are open on this thread, innermost last.
 * The hub is kept beside the profiler so a lookup never reads a profiler
 * that might be gone (it is checked against the hub's list, locked). */
static _Thread_local struct {
  ep_prof *p;
  ep_prof_hub *hub;
  uint64_t id;      /* the ORT event's correlation id */
  int64_t begin_ns; /* our clock at its StartEvent */
} tls_open[EP_PROF_STACK];
static _Thread_local int tls_depth, tls_overflow;

static int thread_id(void) { return (int)syscall(SYS_gettid); }

const char *ep_prof_type_name(int dtype) {
  switch (dtype) {
    case HD_DT_F32: return "float";
    case HD_DT_F64: return "double";
    default: return hd_dtype_name(dtype);
  }
}

/* ---- events ---- */

static void event_free(prof_event *e) { free(e->text); }

static void list_clear(event_list *l) {
  for (size_t i = 0; i < l->n; i++) event_free(&l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* Takes e (its text) into l; a full list counts it as dropped. */
static void list_push(event_list *l, prof_event e) {
  if (l->n == l->cap && l->n < EP_PROF_MAX_EVENTS) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    prof_event *v = realloc(l->v, cap * sizeof *v);
    if (v) l->v = v, l->cap = cap;
  }
  if (l->n < l->cap) {
    l->v[l->n++] = e;
  } else {
    event_free(&e);
    l->dropped++;
  }
}

static size_t event_text_len(const prof_event *e) {
  const char *p = e->text;
  for (int i = 0; i < 1 + 2 * e->nargs; i++) p += strlen(p) + 1;
  return (size_t)(p - e->text);
}

static prof_event event_copy(const prof_event *e) {
  prof_event c = *e;
  size_t len = event_text_len(e);
  c.text = malloc(len);
  if (c.text) memcpy(c.text, e->text, len);
  else c.nargs = 0, c.text = NULL;
  return c;
}

/* ORT writes names and values into its JSON as they are, and takes a value
 * that starts with '[' or '{' for JSON: text we hand it must hold no quote,
 * backslash or control character, and must not start so. */
static void put_text(char *dst, const char *src, int value) {
  size_t i = 0;
  for (; src[i]; i++) {
    unsigned char c = (unsigned char)src[i];
    dst[i] = c == '"' ? '\'' : c == '\\' ? '/' : c < 0x20 ? ' ' : (char)c;
  }
  dst[i] = '\0';
  if (value && (dst[0] == '[' || dst[0] == '{')) dst[0] = '(';
}

static int event_make(prof_event *e, int cat, int tid, const char *name, int64_t start_ns, int64_t dur_ns,
                      const ep_prof_arg *args, int n) {
  memset(e, 0, sizeof *e);
  if (n > EP_PROF_MAX_ARGS) n = EP_PROF_MAX_ARGS;
  size_t len = strlen(name) + 1;
  for (int i = 0; i < n; i++) len += strlen(args[i].key) + strlen(args[i].value ? args[i].value : "") + 2;
  e->text = malloc(len);
  if (!e->text) return 0;
  char *p = e->text;
  put_text(p, name, 0);
  p += strlen(p) + 1;
  for (int i = 0; i < n; i++) {
    const char *v = args[i].value ? args[i].value : "";
    put_text(p, args[i].key, 0);
    p += strlen(p) + 1;
    if (args[i].json) {
      strcpy(p, v);
      e->json |= 1u << i;
    } else {
      put_text(p, v, 1);
    }
    p += strlen(p) + 1;
  }
  e->nargs = n;
  e->cat = cat;
  e->tid = tid;
  e->start_ns = start_ns;
  e->dur_ns = dur_ns;
  return 1;
}

/* Points names[0] at the event's name and keys/vals at its args. */
static void event_fields(const prof_event *e, const char **name, const char **keys, const char **vals) {
  const char *p = e->text;
  *name = p;
  p += strlen(p) + 1;
  for (int i = 0; i < e->nargs; i++) {
    keys[i] = p;
    p += strlen(p) + 1;
    vals[i] = p;
    p += strlen(p) + 1;
  }
}

/* ---- the hub ---- */

static void hub_unref(ep_prof_hub *hub) {
  pthread_mutex_lock(&hub->mu);
  int last = --hub->refs == 0;
  pthread_mutex_unlock(&hub->mu);
  if (!last) return;
  list_clear(&hub->trace);
  free(hub->trace_path);
  pthread_mutex_destroy(&hub->mu);
  free(hub);
}

hd_status *ep_prof_hub_create(struct ep_ep *ep, const char *trace_path, ep_prof_hub **out) {
  ep_prof_hub *hub;
  HD_ALLOC_OR_RETURN(hub, 1);
  hub->refs = 1;
  hub->ep = ep;
  snprintf(hub->provider, sizeof hub->provider, "%s", ep->name);
  snprintf(hub->backend, sizeof hub->backend, "%s", be_name(ep->dev->be));
  hub->trace_t0 = be_clock_ns();
  if (trace_path && trace_path[0]) {
    hub->trace_path = strdup(trace_path);
    if (!hub->trace_path) {
      free(hub);
      return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    HD_LOG(HD_LOG_INFO, "profile_file: every run's steps go to %s when the session is released", trace_path);
  }
  pthread_mutex_init(&hub->mu, NULL);
  *out = hub;
  return NULL;
}

static ep_mem_figures figures_of(ep_prof_hub *hub, int *known) {
  ep_mem_figures m;
  memset(&m, 0, sizeof m);
  *known = hub->ep != NULL;
  if (hub->ep) ep_memory_figures(hub->ep, &m);
  return m;
}

static void size_str(char *buf, size_t n, size_t v) { snprintf(buf, n, "%zu", v); }

/* The memory figures as event args (strings in bufs). */
static int memory_args(const ep_mem_figures *m, const char *provider, ep_prof_arg *args, char bufs[][32]) {
  int n = 0;
  args[n++] = (ep_prof_arg){"provider", provider, 0};
  args[n++] = (ep_prof_arg){"backend", m->backend ? m->backend : "", 0};
  args[n++] = (ep_prof_arg){"memory", m->host ? "host" : "device", 0};
  size_t vals[7] = {m->weights, m->run, m->plans, m->pool_in_use, m->pool_cached, m->pool_peak, m->pool_limit};
  static const char *const keys[7] = {"weights_bytes",     "run_buffers_bytes", "plan_bytes",      "pool_in_use_bytes",
                                      "pool_cached_bytes", "pool_peak_bytes",   "pool_limit_bytes"};
  for (int i = 0; i < 7; i++) {
    if (i >= 3 && !m->has_pool) break;
    size_str(bufs[i], 32, vals[i]);
    args[n++] = (ep_prof_arg){keys[i], bufs[i], 0};
  }
  args[n++] = (ep_prof_arg){"pool", !m->has_pool ? "none" : m->pool_shared ? "process-wide" : "session", 0};
  return n;
}

/* ---- the Chrome-trace file ---- */

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static const char *cat_name(int cat) {
  switch (cat) {
    case OrtProfilingEventCategory_SESSION: return "Session";
    case OrtProfilingEventCategory_NODE: return "Node";
    case OrtProfilingEventCategory_KERNEL: return "Kernel";
    default: return "Api";
  }
}

/* Chrome's trace event format (the JSON object form): complete events
 * ("X", microseconds from the session's creation) and counters ("C"). */
static int write_trace(ep_prof_hub *hub, FILE *f) {
  int pid = (int)getpid();
  fputs("{\"traceEvents\": [\n", f);
  fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": {\"name\": ", pid);
  char title[256];
  snprintf(title, sizeof title, "%s (backend %s)", hub->provider, hub->backend);
  json_str(f, title);
  fputs("}}", f);
  const char *keys[EP_PROF_MAX_ARGS], *vals[EP_PROF_MAX_ARGS], *name;
  for (size_t i = 0; i < hub->trace.n; i++) {
    const prof_event *e = &hub->trace.v[i];
    if (!e->text) continue;
    event_fields(e, &name, keys, vals);
    double ts = (double)(e->start_ns - hub->trace_t0) / 1e3;
    fputs(",\n{\"name\": ", f);
    json_str(f, name);
    if (e->cat == EP_PROF_COUNTER) {
      fprintf(f, ", \"ph\": \"C\", \"pid\": %d, \"ts\": %.3f, \"args\": {", pid, ts);
    } else {
      fputs(", \"cat\": ", f);
      json_str(f, cat_name(e->cat));
      fprintf(f, ", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": {", pid, e->tid, ts,
              (double)e->dur_ns / 1e3);
    }
    for (int a = 0; a < e->nargs; a++) {
      fputs(a ? ", " : "", f);
      json_str(f, keys[a]);
      fputs(": ", f);
      if ((e->json >> a) & 1) fputs(vals[a], f);
      else if (e->cat == EP_PROF_COUNTER) fputs(vals[a], f); /* counters: numbers */
      else json_str(f, vals[a]);
    }
    fputs("}}", f);
  }
  fputs("\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {\"provider\": ", f);
  json_str(f, hub->provider);
  fputs(", \"backend\": ", f);
  json_str(f, hub->backend);
  fprintf(f, ", \"dropped_events\": %zu}}\n", hub->trace.dropped);
  return ferror(f) ? 1 : 0;
}

void ep_prof_hub_detach(ep_prof_hub *hub) {
  if (!hub) return;
  pthread_mutex_lock(&hub->mu);
  hub->ep = NULL;
  pthread_mutex_unlock(&hub->mu);
  if (hub->trace_path) {
    FILE *f = fopen(hub->trace_path, "w");
    int bad = !f || write_trace(hub, f);
    if (f && fclose(f)) bad = 1;
    if (bad)
      HD_LOG(HD_LOG_WARNING, "profile_file: cannot write %s: %s", hub->trace_path, strerror(errno));
    else
      HD_LOG(HD_LOG_INFO, "profile_file: wrote %zu events to %s", hub->trace.n, hub->trace_path);
  }
  hub_unref(hub);
}

/* ---- ORT's profiler ---- */

static ep_prof *prof_of(OrtEpProfilerImpl *p) { return (ep_prof *)(void *)p; }

static void ORT_API_CALL p_release(OrtEpProfilerImpl *impl) {
  ep_prof *p = prof_of(impl);
  ep_prof_hub *hub = p->hub;
  pthread_mutex_lock(&hub->mu);
  for (ep_prof **pp = &hub->profilers; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  pthread_mutex_unlock(&hub->mu);
  list_clear(&p->events);
  free(p);
  hub_unref(hub);
}

/* HIPDNN_EP_PROFILE_START_DELAY_US: a test's stand-in for this thread losing
 * the CPU between ORT's reading of its clock (offset_ns) and ours. */
static void start_delay(void) {
  const char *v = getenv("HIPDNN_EP_PROFILE_START_DELAY_US");
  long long us = v ? atoll(v) : 0;
  if (us <= 0) return;
  struct timespec ts = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static OrtStatus *ORT_API_CALL p_start(OrtEpProfilerImpl *impl, int64_t offset_ns) {
  ep_prof *p = prof_of(impl);
  start_delay();
  pthread_mutex_lock(&p->hub->mu);
  p->started = 1;
  p->ended = 0;
  p->start_ns = be_clock_ns();
  p->offset_ns = offset_ns;
  p->id_base = -1;
  pthread_mutex_unlock(&p->hub->mu);
  return NULL;
}

/* ORT opens and closes its events in order on each thread (run, executor,
 * node), and calls a kernel's Compute inside them on the same thread. An
 * event's id is its start on ORT's clock (whole microseconds); our clock
 * here is a little after that start. */
static OrtStatus *ORT_API_CALL p_start_event(OrtEpProfilerImpl *impl, uint64_t id) {
  if (tls_depth < EP_PROF_STACK) {
    tls_open[tls_depth].p = prof_of(impl);
    tls_open[tls_depth].hub = prof_of(impl)->hub;
    tls_open[tls_depth].id = id;
    tls_open[tls_depth].begin_ns = be_clock_ns();
    tls_depth++;
  } else {
    tls_overflow++;
  }
  return NULL;
}

/* The ending event's timestamp (since ORT's profiling start) against its id
 * gives where ids start: an id then maps to a timestamp exactly. */
static OrtStatus *ORT_API_CALL p_stop_event(OrtEpProfilerImpl *impl, uint64_t id, const OrtProfilingEvent *ev) {
  int64_t ts = -1;
  OrtStatus *os = ev ? ep_ep_api->ProfilingEvent_GetTimestampUs(ev, &ts) : NULL;
  if (os) ep_api->ReleaseStatus(os), ts = -1;
  if (ts >= 0 && id >= (uint64_t)ts) {
    ep_prof *p = prof_of(impl);
    pthread_mutex_lock(&p->hub->mu);
    if (p->id_base < 0) p->id_base = (int64_t)(id - (uint64_t)ts);
    pthread_mutex_unlock(&p->hub->mu);
  }
  if (tls_overflow) tls_overflow--;
  else if (tls_depth > 0) tls_depth--;
  return NULL;
}

/* Microseconds on ORT's profiling clock of event e's start. From the start
 * of the ORT event it ran in (a node's, for a step) where ORT has told us
 * where ids start: our clock at that event's StartEvent is at or after the
 * event's own start, so a step measured from it lies inside the event,
 * whatever happened between StartProfiling's offset and our reading of our
 * clock there (a thread preempted between the two put a run's steps before
 * ORT's node events under a loaded CI). Else from that offset. */
static int64_t ort_us(const ep_prof *p, int64_t id_base, const prof_event *e) {
  int64_t ns = p->offset_ns + (e->start_ns - p->start_ns);
  if (e->anchor_ns && id_base >= 0 && e->anchor_id >= (uint64_t)id_base)
    ns = (int64_t)(e->anchor_id - (uint64_t)id_base) * 1000 + (e->start_ns - e->anchor_ns);
  return ns > 0 ? ns / 1000 : 0;
}

static OrtStatus *add_batch(OrtProfilingEventsContainer *c, OrtProfilingEvent **batch, size_t *n) {
  OrtStatus *os = *n ? ep_ep_api->ProfilingEventsContainer_AddEvents(c, (const OrtProfilingEvent *const *)batch, *n)
                     : NULL;
  for (size_t i = 0; i < *n; i++) ep_ep_api->ReleaseProfilingEvent(batch[i]);
  *n = 0;
  return os;
}

static OrtStatus *ORT_API_CALL p_end(OrtEpProfilerImpl *impl, OrtProfilingEventsContainer *c) {
  ep_prof *p = prof_of(impl);
  ep_prof_hub *hub = p->hub;
  pthread_mutex_lock(&hub->mu);
  event_list evs = p->events;
  memset(&p->events, 0, sizeof p->events);
  const int64_t id_base = p->id_base;
  int was_started = p->started && !p->ended;
  p->ended = 1;
  /* The session's memory now, as one more event (the EP may be gone: a
   * session releases its EP before its profiler). */
  int known = 0;
  ep_mem_figures m = figures_of(hub, &known);
  pthread_mutex_unlock(&hub->mu);
  if (known && was_started) {
    ep_prof_arg args[EP_PROF_MAX_ARGS];
    char bufs[8][32];
    int n = memory_args(&m, hub->provider, args, bufs);
    prof_event e;
    if (event_make(&e, OrtProfilingEventCategory_SESSION, thread_id(), "hipdnn_ep_memory", be_clock_ns(), 0, args, n))
      list_push(&evs, e);
  }
  if (evs.dropped)
    HD_LOG(HD_LOG_WARNING, "profile: %zu step events past the %d kept were dropped", evs.dropped, EP_PROF_MAX_EVENTS);
  int pid = (int)getpid();
  OrtStatus *os = NULL;
  OrtProfilingEvent *batch[256];
  size_t nb = 0;
  const char *keys[EP_PROF_MAX_ARGS], *vals[EP_PROF_MAX_ARGS], *name;
  for (size_t i = 0; i < evs.n && !os; i++) {
    const prof_event *e = &evs.v[i];
    if (!e->text) continue;
    event_fields(e, &name, keys, vals);
    /* ORT keeps whole microseconds: a step under 1 us (or below a GPU
     * timer's resolution) shows as 1; its dur_ns argument is exact. */
    int64_t dur_us = e->dur_ns <= 0 ? 0 : (e->dur_ns + 999) / 1000;
    if (e->cat == OrtProfilingEventCategory_KERNEL && dur_us < 1) dur_us = 1;
    os = ep_ep_api->CreateProfilingEvent((OrtProfilingEventCategory)e->cat, pid, e->tid, name, ort_us(p, id_base, e),
                                         dur_us, keys, vals, (size_t)e->nargs, &batch[nb]);
    if (!os && ++nb == sizeof batch / sizeof batch[0]) os = add_batch(c, batch, &nb);
  }
  OrtStatus *last = add_batch(c, batch, &nb);
  if (!os) os = last;
  else if (last) ep_api->ReleaseStatus(last);
  list_clear(&evs);
  return os;
}

OrtStatus *ep_prof_create_profiler(ep_prof_hub *hub, OrtEpProfilerImpl **out) {
  *out = NULL;
  ep_prof *p = calloc(1, sizeof *p);
  if (!p) return ep_ort_error(ORT_FAIL, "out of host memory");
  p->base.ort_version_supported = ORT_API_VERSION;
  p->base.Release = p_release;
  p->base.StartProfiling = p_start;
  p->base.StartEvent = p_start_event;
  p->base.StopEvent = p_stop_event;
  p->base.EndProfiling = p_end;
  p->hub = hub;
  pthread_mutex_lock(&hub->mu);
  hub->refs++;
  p->next = hub->profilers;
  hub->profilers = p;
  pthread_mutex_unlock(&hub->mu);
  *out = &p->base;
  return NULL;
}

/* ---- runs ---- */

ep_prof_run *ep_prof_run_begin(ep_prof_hub *hub) {
  int open = -1;
  for (int i = tls_depth - 1; i >= 0 && open < 0; i--)
    if (tls_open[i].hub == hub) open = i;
  ep_prof *target = open >= 0 ? tls_open[open].p : NULL;
  if (!target && !hub->trace_path) return NULL;
  ep_prof_run *r = calloc(1, sizeof *r);
  if (!r) return NULL; /* profiling is best effort: the run goes on */
  r->hub = hub;
  r->target = target;
  if (target) r->anchor_id = tls_open[open].id, r->anchor_ns = tls_open[open].begin_ns;
  r->tid = thread_id();
  return r;
}

void ep_prof_run_add(ep_prof_run *r, const char *name, int64_t start_ns, int64_t dur_ns, const ep_prof_arg *args,
                     int n) {
  prof_event e;
  if (r && event_make(&e, OrtProfilingEventCategory_KERNEL, r->tid, name, start_ns, dur_ns, args, n)) {
    e.anchor_ns = r->anchor_ns, e.anchor_id = r->anchor_id;
    list_push(&r->events, e);
  }
}

void ep_prof_run_end(ep_prof_run *r) {
  if (!r) return;
  ep_prof_hub *hub = r->hub;
  /* A trace gets a memory sample per run. The EP is alive: this run is in
   * one of its partitions. */
  prof_event sample;
  int has_sample = 0;
  if (hub->trace_path && hub->ep) {
    ep_mem_figures m;
    ep_memory_figures(hub->ep, &m);
    char b[4][32];
    size_str(b[0], 32, m.weights);
    size_str(b[1], 32, m.run + m.plans);
    size_str(b[2], 32, m.pool_in_use);
    size_str(b[3], 32, m.pool_peak);
    ep_prof_arg args[4] = {{"weights", b[0], 0}, {"run buffers", b[1], 0}, {"pool in use", b[2], 0},
                           {"pool peak", b[3], 0}};
    has_sample = event_make(&sample, EP_PROF_COUNTER, r->tid, "memory (bytes)", be_clock_ns(), 0, args,
                            m.has_pool ? 4 : 2);
  }
  pthread_mutex_lock(&hub->mu);
  ep_prof *live = NULL;
  for (ep_prof *p = hub->profilers; p && r->target; p = p->next)
    if (p == r->target && p->started && !p->ended) live = p;
  for (size_t i = 0; i < r->events.n; i++) {
    if (hub->trace_path) list_push(&hub->trace, event_copy(&r->events.v[i]));
    if (live) list_push(&live->events, r->events.v[i]), r->events.v[i].text = NULL;
  }
  if (has_sample) list_push(&hub->trace, sample);
  pthread_mutex_unlock(&hub->mu);
  list_clear(&r->events);
  free(r);
}
