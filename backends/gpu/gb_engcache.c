/* gb_engcache: a context's engine cache, the timed engine choices of
 * exhaustive search kept on disk (be_options.engine_cache_file), so a later
 * session builds the same plans without timing anything.
 *
 * The file is common/hd_diskcache's; a choice is dnn_engine_choice's text.
 * Every key starts with the context's scope: the DNN library and its
 * version, the GPU's name and compute capability, and this EP's version
 * and key version, so a file shared by several GPUs or installs only
 * answers for the one that timed an entry. Any trouble with the file (it
 * cannot be read or written, it is damaged, an entry no longer replays) is
 * a warning and the engines are timed as if there were no cache. */
#include <stdio.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "common/hd_diskcache.h"

#ifndef HIPDNN_EP_VERSION
#error "HIPDNN_EP_VERSION must be defined by the build"
#endif

/* Bump when what a key describes changes meaning (the graph a conv key
 * builds, the candidates it times): older entries then stop matching. */
#define GB_ENGINE_KEY_VERSION 1

hd_status *gb_engine_cache_open(be_context *c) {
  if (c->opts.algo_search != BE_ALGO_EXHAUSTIVE) return NULL;
  if (!c->opts.engine_cache_file[0]) {
    HD_LOG(HD_LOG_INFO, "%s: exhaustive engine search with no engine cache file: each session times its "
           "engines again (provider option engine_cache_file keeps them)", gb_backend_name);
    return NULL;
  }
  gpuDeviceProp prop;
  GB_CHECK(gpuGetDeviceProperties(&prop, c->ordinal));
  char name[sizeof prop.name + 1];
  snprintf(name, sizeof name, "%s", prop.name);
  for (char *p = name; *p; ++p)
    if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e) *p = '?'; /* keys are printable */
  snprintf(c->engine_scope, sizeof c->engine_scope, "%s %zu | %s cc %d.%d | hipdnn-ep %s keys %d",
           c->m->vd.name, c->m->vd.version, name, prop.major, prop.minor, HIPDNN_EP_VERSION,
           GB_ENGINE_KEY_VERSION);
  hd_status *warning = NULL;
  HD_TRY(hd_diskcache_open(c->opts.engine_cache_file, &c->engines, &warning));
  if (warning) {
    HD_LOG(HD_LOG_WARNING, "%s: %s; engines are timed as without it, and it is rewritten when they are",
           gb_backend_name, hd_status_msg(warning));
    hd_status_free(warning);
  }
  HD_LOG(HD_LOG_VERBOSE, "%s: engine cache %s: %d entries (all devices); this one is \"%s\"", gb_backend_name,
         c->opts.engine_cache_file, hd_diskcache_count(c->engines), c->engine_scope);
  return NULL;
}

/* 0 when the key does not fit the file's limit: such a convolution is
 * timed in every session, never confused with another. */
static int full_key(const be_context *c, const char *op_key, char *buf, size_t cap) {
  int n = snprintf(buf, cap, "%s | %s", c->engine_scope, op_key);
  return n > 0 && (size_t)n < cap && (size_t)n <= HD_DISKCACHE_MAX_KEY;
}

int gb_engine_cache_get_text(be_context *c, const char *op_key, char *value, size_t cap) {
  char key[HD_DISKCACHE_MAX_KEY + 64];
  return c->engines && full_key(c, op_key, key, sizeof key) && hd_diskcache_get(c->engines, key, value, cap);
}

/* An entry that does not parse: a warning, and the caller times instead. */
void gb_engine_cache_unreadable(be_context *c, const char *op_key, const char *value) {
  HD_LOG(HD_LOG_WARNING, "%s: engine cache %s: the entry for %s is unreadable (\"%s\"); timing instead",
         gb_backend_name, c->opts.engine_cache_file, op_key, value);
}

int gb_engine_cache_get(be_context *c, const char *op_key, dnn_engine_choice *out) {
  char value[HD_DISKCACHE_MAX_VALUE + 1];
  if (!gb_engine_cache_get_text(c, op_key, value, sizeof value)) return 0;
  if (dnn_engine_choice_parse(value, out)) return 1;
  gb_engine_cache_unreadable(c, op_key, value);
  return 0;
}

void gb_engine_cache_put(be_context *c, const char *op_key, const dnn_engine_choice *choice) {
  char value[128];
  dnn_engine_choice_format(choice, value, sizeof value);
  gb_engine_cache_put_text(c, op_key, value);
}

void gb_engine_cache_put_text(be_context *c, const char *op_key, const char *value) {
  if (!c->engines) return;
  char key[HD_DISKCACHE_MAX_KEY + 64];
  if (!full_key(c, op_key, key, sizeof key)) {
    HD_LOG(HD_LOG_VERBOSE, "%s: engine cache: a key over %d bytes, not cached (%s)", gb_backend_name,
           HD_DISKCACHE_MAX_KEY, op_key);
    return;
  }
  hd_status *st = hd_diskcache_put(c->engines, key, value);
  if (st) {
    HD_LOG(HD_LOG_WARNING, "%s: %s (%s); not cached", gb_backend_name, hd_status_msg(st), op_key);
    hd_status_free(st);
  }
}

void gb_engine_cache_save(be_context *c) {
  if (!c->engines) return;
  hd_status *st = hd_diskcache_save(c->engines);
  if (!st) return;
  /* Once per context: a file that cannot be written fails every save. */
  pthread_mutex_lock(&c->mu);
  int first = !c->engines_warned;
  c->engines_warned = 1;
  pthread_mutex_unlock(&c->mu);
  HD_LOG(first ? HD_LOG_WARNING : HD_LOG_VERBOSE, "%s: %s; the engines timed here are timed again next time",
         gb_backend_name, hd_status_msg(st));
  hd_status_free(st);
}

void gb_engine_cache_close(be_context *c) {
  if (!c->engines) return;
  gb_engine_cache_save(c);
  HD_LOG(HD_LOG_INFO, "%s: engine cache %s: %d choices replayed, %d timed (%d candidates)", gb_backend_name,
         c->opts.engine_cache_file, c->engines_replayed, c->engines_timed, c->engines_candidates);
  hd_diskcache_close(c->engines);
  c->engines = NULL;
}
