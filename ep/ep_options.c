#include "ep/ep_options.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

void ep_options_default(ep_options *o) {
  memset(o, 0, sizeof *o);
  strcpy(o->backend, "auto");
  o->device_id = -1;
  o->precision = HD_DT_F32;
  /* channels last where plan_layout's rule finds it worth it: ResNet-50 on
   * an H100 in 0.42-0.54x the time in fp16, 0.53-0.72x in fp32 (TF32);
   * DenseNet-121 0.61-0.80x; MobileNetV2 and EfficientNet-B0 unchanged (the
   * rule leaves them channels first) */
  o->layout = PLAN_LAYOUT_ALWAYS;
  o->be.use_tf32 = 1; /* as PyTorch and ORT's CUDA EP do for convolutions */
  o->be.algo_search = BE_ALGO_HEURISTIC;
  /* Replaying a plan as one GPU graph cut batch-1 ResNet-style runs by ~40%
   * on an H200 and gives bitwise-equal results; enable_cuda_graph=0 opts out. */
  o->enable_cuda_graph = 1;
  o->be.graph_capture = 1;
}

static hd_status *bad(const char *key, const char *value, const char *want) {
  return hd_error(HD_ERR_INVALID_ARG, "provider option '%s' has value '%s': expected %s", key, value, want);
}

static int parse_u64(const char *s, uint64_t *v) {
  if (!s[0] || !isdigit((unsigned char)s[0])) return 0;
  errno = 0;
  char *end;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || *end) return 0;
  *v = x;
  return 1;
}

static hd_status *parse_bool(const char *key, const char *value, int *out) {
  if (strcmp(value, "1") == 0 || strcmp(value, "true") == 0) *out = 1;
  else if (strcmp(value, "0") == 0 || strcmp(value, "false") == 0) *out = 0;
  else return bad(key, value, "0 or 1");
  return NULL;
}

hd_status *ep_options_set(ep_options *o, const char *key, const char *value) {
  uint64_t u;
  if (strcmp(key, "backend") == 0) {
    if (strcmp(value, "auto") && strcmp(value, "ref") && strcmp(value, "cuda") && strcmp(value, "hip"))
      return bad(key, value, "auto, ref, cuda or hip");
    strcpy(o->backend, value);
    o->backend_explicit = strcmp(value, "auto") != 0;
  } else if (strcmp(key, "device_id") == 0) {
    if (!parse_u64(value, &u) || u > 1024) return bad(key, value, "a GPU number >= 0");
    o->device_id = (int)u;
  } else if (strcmp(key, "gpu_mem_limit") == 0) {
    if (!parse_u64(value, &u)) return bad(key, value, "a size in bytes");
    o->gpu_mem_limit = (size_t)u;
  } else if (strcmp(key, "use_tf32") == 0) {
    o->use_tf32_explicit = 1;
    return parse_bool(key, value, &o->be.use_tf32);
  } else if (strcmp(key, "prefer_nhwc") == 0) {
    int on = 0;
    HD_TRY(parse_bool(key, value, &on));
    o->layout = on ? PLAN_LAYOUT_ALWAYS : PLAN_LAYOUT_NEVER;
    return NULL;
  } else if (strcmp(key, "enable_cuda_graph") == 0) {
    HD_TRY(parse_bool(key, value, &o->enable_cuda_graph));
    o->be.graph_capture = o->enable_cuda_graph;
  } else if (strcmp(key, "cudnn_conv_algo_search") == 0) {
    if (strcmp(value, "HEURISTIC") == 0) o->be.algo_search = BE_ALGO_HEURISTIC;
    else if (strcmp(value, "EXHAUSTIVE") == 0) o->be.algo_search = BE_ALGO_EXHAUSTIVE;
    else if (strcmp(value, "DEFAULT") == 0) o->be.algo_search = BE_ALGO_DEFAULT;
    else return bad(key, value, "EXHAUSTIVE, HEURISTIC or DEFAULT");
  } else if (strcmp(key, "precision") == 0) {
    if (strcmp(value, "fp32") == 0) o->precision = HD_DT_F32;
    else if (strcmp(value, "fp16") == 0) o->precision = HD_DT_F16;
    else if (strcmp(value, "bf16") == 0) o->precision = HD_DT_BF16;
    else return bad(key, value, "fp32, fp16 or bf16");
  } else if (strcmp(key, "half_gelu") == 0) {
    if (strcmp(value, "tanh") == 0) o->half_gelu_exact = 0;
    else if (strcmp(value, "exact") == 0) o->half_gelu_exact = 1;
    else return bad(key, value, "tanh or exact");
  } else if (strcmp(key, "fp32_first_layers") == 0) {
    if (!parse_u64(value, &u) || u > 1000000) return bad(key, value, "a count from 0 to 1000000");
    o->fp32_first_layers = (int)u;
  } else if (strcmp(key, "profile_file") == 0) {
    if (strlen(value) >= sizeof o->profile_file) return bad(key, value, "a path shorter than 4096 bytes");
    strcpy(o->profile_file, value);
  } else if (strcmp(key, "engine_cache_file") == 0) {
    /* The backend adds ".lock" and temporary suffixes to it. */
    if (strlen(value) >= 4000) return bad(key, value, "a path shorter than 4000 bytes");
    strcpy(o->be.engine_cache_file, value);
  } else if (strcmp(key, "model_arch") == 0 || strcmp(key, "profile") == 0) {
    /* Sent by callers, not chosen by users: onnxruntime-genai always adds
     * model_arch (the model's type), and the umbrella EP's callers add
     * profile (its backend routing). Every graph gets the same treatment
     * here, so both are accepted and ignored. */
    HD_LOG(HD_LOG_VERBOSE, "provider option %s=%s: accepted, not used", key, value);
  } else {
    return hd_error(HD_ERR_INVALID_ARG,
                    "unknown provider option '%s' (known: backend, device_id, gpu_mem_limit, use_tf32, "
                    "prefer_nhwc, cudnn_conv_algo_search, engine_cache_file, enable_cuda_graph, precision, "
                    "half_gelu, fp32_first_layers, profile_file; accepted and ignored: model_arch, profile)",
                    key);
  }
  return NULL;
}

/* Defaults that depend on other options, once every key is set: under
 * precision fp16/bf16 with fp32_first_layers > 0, use_tf32 defaults to 0,
 * since TF32 would round the kept ops' inputs and weights to fp16's 10
 * mantissa bits again (an explicit use_tf32 wins). */
static void settle(ep_options *o) {
  if (o->precision != HD_DT_F32 && o->fp32_first_layers > 0 && !o->use_tf32_explicit) o->be.use_tf32 = 0;
}

hd_status *ep_options_parse(const OrtSessionOptions *so, const char *prefix, ep_options *out) {
  ep_options_default(out);
  const char *env = getenv("HIPDNN_EP_BACKEND");
  if (env && env[0]) {
    hd_status *st = ep_options_set(out, "backend", env);
    if (st) return hd_status_wrap(st, "environment HIPDNN_EP_BACKEND: ");
  }
  if (!so) return NULL;
  OrtKeyValuePairs *kv = NULL;
  EP_ORT_TRY(ep_api->GetSessionOptionsConfigEntries(so, &kv), "reading session options");
  const char *const *keys = NULL, *const *values = NULL;
  size_t n = 0;
  ep_api->GetKeyValuePairs(kv, &keys, &values, &n);
  /* The recommended name's prefix first, then the EP's own (which wins).
   * A caller that registers us under its own name and consumes its own
   * prefix (AMD's umbrella EP strips "ep.<its name>.*") still passes the
   * fixed one through. */
  const char *prefixes[2] = {EP_OPTION_PREFIX, prefix};
  hd_status *st = NULL;
  for (int p = strcmp(prefix, EP_OPTION_PREFIX) == 0; p < 2 && !st; p++) {
    size_t plen = strlen(prefixes[p]);
    for (size_t i = 0; i < n && !st; i++)
      if (strncmp(keys[i], prefixes[p], plen) == 0) st = ep_options_set(out, keys[i] + plen, values[i]);
  }
  ep_api->ReleaseKeyValuePairs(kv);
  settle(out);
  return st;
}

