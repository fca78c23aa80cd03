/* ep_profile: per-step profiles of compiled partitions, into ONNX Runtime's
 * profile and/or a Chrome-trace file of our own.
 *
 * ORT asks every EP for a profiler when a session is created (OrtEp::
 * CreateProfiler) and again per run under run-level profiling; it calls
 * StartProfiling only when profiling is on, then StartEvent/StopEvent around
 * each of its events, on the thread that runs them, and EndProfiling to
 * collect the EP's events into its JSON. So a run learns that it is being
 * profiled from a per-thread stack of the profilers whose events are open
 * on this thread: its step times go to the innermost one of its EP.
 * Independently, the provider option profile_file makes the EP record
 * every run and write a Chrome-trace JSON (chrome://tracing, Perfetto)
 * when the session is released.
 *
 * Thread safety: each run records into a buffer of its own and hands it
 * over under the hub's lock when it ends; profilers, the trace and the EP
 * pointer are all guarded by that lock. */
#ifndef EP_PROFILE_H
#define EP_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "ep/ep_ort.h"

struct ep_ep;
typedef struct ep_prof_hub ep_prof_hub;
typedef struct ep_prof_run ep_prof_run;

/* The session's memory, as profiles and tools report it (ep_ep.c fills it). */
typedef struct ep_mem_figures {
  const char *backend;  /* "ref", "cuda", "hip" */
  int host;             /* 1: host memory (reference backend) */
  size_t weights;       /* constants the compiled partitions read */
  size_t run;           /* arenas, workspaces and staging of their run instances */
  size_t plans;         /* per-plan device data (values folded at plan time) */
  int has_pool;         /* the pool figures below are known */
  int pool_shared;      /* 1: the device's process-wide pool, shared with other sessions */
  size_t pool_in_use, pool_cached, pool_peak, pool_limit;
} ep_mem_figures;

/* One argument of an event. json: value is JSON the caller made (shapes);
 * else text, made safe for ORT's writer (which escapes nothing). */
typedef struct ep_prof_arg {
  const char *key, *value;
  int json;
} ep_prof_arg;

/* trace_path: NULL, or the provider option profile_file's path. */
hd_status *ep_prof_hub_create(struct ep_ep *ep, const char *trace_path, ep_prof_hub **out);
/* The EP is going: writes the trace file, if any, and drops the EP's
 * reference (profilers ORT still holds keep the hub). */
void ep_prof_hub_detach(ep_prof_hub *hub);

/* OrtEp::CreateProfiler. */
OrtStatus *ep_prof_create_profiler(ep_prof_hub *hub, OrtEpProfilerImpl **out);

/* A run of a partition: NULL when nothing profiles it (the common case:
 * a thread-local read); else record its events and end it. */
ep_prof_run *ep_prof_run_begin(ep_prof_hub *hub);
/* One event: name, times on CLOCK_MONOTONIC (be_clock_ns), n args. */
void ep_prof_run_add(ep_prof_run *r, const char *name, int64_t start_ns, int64_t dur_ns, const ep_prof_arg *args,
                     int n);
/* Hands the run's events to the profiler that was active at its start (if
 * it still is) and to the trace, then frees the run. */
void ep_prof_run_end(ep_prof_run *r);

/* ORT's names for element types ("float", "int64"), as its profile writes them. */
const char *ep_prof_type_name(int dtype);

#endif
