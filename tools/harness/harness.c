/* ORT loading, EP registration, devices, sessions, assignment info, host
 * tensors and runs. Model building, comparison and timing live in
 * hh_model.c and hh_compare.c. */
#include "tools/harness/harness.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"

#ifndef HH_DEFAULT_ORT_LIB
#define HH_DEFAULT_ORT_LIB "libonnxruntime.so"
#endif
#ifndef HH_DEFAULT_EP_LIB
#define HH_DEFAULT_EP_LIB "libhipdnn_ep.so"
#endif

const char *hh_default_ort_lib(void) {
  const char *e = getenv("HIPDNN_EP_ORT_LIB");
  return (e && *e) ? e : HH_DEFAULT_ORT_LIB;
}

const char *hh_default_ep_lib(void) {
  const char *e = getenv("HIPDNN_EP_LIB");
  return (e && *e) ? e : HH_DEFAULT_EP_LIB;
}

const char *hh_err(const hh_ort *h) { return h->err; }

int hh_fail(hh_ort *h, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->err, sizeof h->err, fmt, ap);
  va_end(ap);
  return 1;
}

int hh_check(hh_ort *h, OrtStatus *st, const char *what) {
  if (!st) return 0;
  snprintf(h->err, sizeof h->err, "%s: %s", what, h->api->GetErrorMessage(st));
  h->api->ReleaseStatus(st);
  return 1;
}

#define HH_TRY(h, call, what)                     \
  do {                                            \
    if (hh_check((h), (call), (what))) goto fail; \
  } while (0)

const char *hh_ort_version(const hh_ort *h) {
  return h->base ? h->base->GetVersionString() : "?";
}

int hh_ort_open(hh_ort *h, const char *ort_lib) {
  memset(h, 0, sizeof *h);
  if (!ort_lib) ort_lib = hh_default_ort_lib();
  snprintf(h->ort_lib, sizeof h->ort_lib, "%s", ort_lib);
  /* RTLD_LOCAL: the EP must not bind to ORT symbols by accident; it gets
   * everything through the OrtApiBase pointer. */
  h->dl = dlopen(ort_lib, RTLD_NOW | RTLD_LOCAL);
  if (!h->dl) return hh_fail(h, "cannot load ONNX Runtime '%s': %s", ort_lib, dlerror());
  const OrtApiBase *(*get_base)(void) = NULL;
  /* POSIX allows this object-to-function pointer conversion via memcpy. */
  void *sym = dlsym(h->dl, "OrtGetApiBase");
  if (!sym) {
    hh_fail(h, "'%s' has no OrtGetApiBase", ort_lib);
    goto fail_dl;
  }
  memcpy(&get_base, &sym, sizeof get_base);
  h->base = get_base();
  h->api = h->base->GetApi(ORT_API_VERSION);
  if (!h->api) {
    hh_fail(h, "ONNX Runtime %s does not provide API version %d", h->base->GetVersionString(),
            ORT_API_VERSION);
    goto fail_dl;
  }
  h->ed = h->api->GetModelEditorApi();
  if (!h->ed) {
    hh_fail(h, "ONNX Runtime %s has no Model Editor API (minimal build?)", hh_ort_version(h));
    goto fail_dl;
  }
  int level = ORT_LOGGING_LEVEL_WARNING;
  const char *lv = getenv("HH_ORT_LOG_LEVEL");
  if (lv && *lv >= '0' && *lv <= '4') level = *lv - '0';
  h->log_level = level;
  hh_log_set_level(level);
  HH_TRY(h, h->api->CreateEnvWithCustomLogger(hh_log_ort, NULL, (OrtLoggingLevel)level, "hh", &h->env),
         "CreateEnvWithCustomLogger");
  HH_TRY(h, h->api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &h->cpu_mem),
         "CreateCpuMemoryInfo");
  HH_TRY(h, h->api->GetAllocatorWithDefaultOptions(&h->alloc), "GetAllocatorWithDefaultOptions");
  return 0;
fail:
  if (h->cpu_mem) h->api->ReleaseMemoryInfo(h->cpu_mem);
  if (h->env) h->api->ReleaseEnv(h->env);
  h->cpu_mem = NULL;
  h->env = NULL;
fail_dl:
  dlclose(h->dl);
  h->dl = NULL;
  h->api = NULL;
  return 1;
}

void hh_ort_close(hh_ort *h) {
  if (!h->api) return;
  char keep[sizeof h->err];
  memcpy(keep, h->err, sizeof keep);
  (void)hh_ep_unregister(h);
  if (h->cpu_mem) h->api->ReleaseMemoryInfo(h->cpu_mem);
  if (h->env) h->api->ReleaseEnv(h->env);
  /* ORT is never dlclose'd: its static destructors may still run threads or
   * atexit handlers, and unloading under them crashes. The process ends soon
   * after anyway. */
  h->cpu_mem = NULL;
  h->env = NULL;
  h->api = NULL;
  memcpy(h->err, keep, sizeof keep);
}

int hh_ep_register_as(hh_ort *h, const char *reg_name, const char *ep_lib) {
  if (!ep_lib) ep_lib = hh_default_ep_lib();
  return hh_check(h, h->api->RegisterExecutionProviderLibrary(h->env, reg_name, ep_lib),
                  "RegisterExecutionProviderLibrary");
}

int hh_ep_register(hh_ort *h, const char *ep_lib) {
  if (!ep_lib) ep_lib = hh_default_ep_lib();
  if (hh_ep_register_as(h, HH_EP_NAME, ep_lib)) return 1;
  snprintf(h->ep_lib, sizeof h->ep_lib, "%s", ep_lib);
  snprintf(h->ep_reg_name, sizeof h->ep_reg_name, "%s", HH_EP_NAME);
  return 0;
}

int hh_ep_unregister(hh_ort *h) {
  if (!h->ep_reg_name[0]) return 0;
  int rc = hh_check(h, h->api->UnregisterExecutionProviderLibrary(h->env, h->ep_reg_name),
                    "UnregisterExecutionProviderLibrary");
  h->ep_reg_name[0] = 0;
  h->ep_lib[0] = 0;
  return rc;
}

/* ---- devices ---------------------------------------------------------------- */

int hh_is_ep_name(const char *name) {
  size_t n = strlen(HH_EP_NAME);
  return name && strncmp(name, HH_EP_NAME, n) == 0 && (name[n] == 0 || name[n] == '_');
}

const char *hh_device_backend(hh_ort *h, const OrtEpDevice *dev) {
  const OrtKeyValuePairs *md = h->api->EpDevice_EpMetadata(dev);
  const char *b = md ? h->api->GetKeyValue(md, "backend") : NULL;
  return b ? b : "";
}

static int backend_matches(const char *want, const char *have) {
  if (!want) return 1;
  if (strcmp(want, "gpu") == 0) return strcmp(have, "cuda") == 0 || strcmp(have, "hip") == 0;
  return strcmp(want, have) == 0;
}

size_t hh_ep_devices(hh_ort *h, const char *backend, const OrtEpDevice **out, size_t max) {
  const OrtEpDevice *const *devs = NULL;
  size_t n = 0, found = 0;
  if (hh_check(h, h->api->GetEpDevices(h->env, &devs, &n), "GetEpDevices")) return 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = h->api->EpDevice_EpName(devs[i]);
    if (!hh_is_ep_name(name)) continue;
    if (!backend_matches(backend, hh_device_backend(h, devs[i]))) continue;
    if (found < max) out[found] = devs[i];
    found++;
  }
  return found;
}

int hh_target_pick(hh_ort *h, const char *mode, hh_target *out) {
  memset(out, 0, sizeof *out);
  if (!mode) {
    const char *e = getenv("HIPDNN_EP_TEST_BACKEND");
    mode = (e && strcmp(e, "auto") == 0) ? "gpu" : "ref";
  }
  const OrtEpDevice *dev = NULL;
  if (strcmp(mode, "gpu") == 0 || strcmp(mode, "auto") == 0) {
    if (hh_ep_devices(h, "gpu", &dev, 1) > 0) {
      out->dev = dev;
      out->is_gpu = 1;
      snprintf(out->backend, sizeof out->backend, "%s", hh_device_backend(h, dev));
      return 0;
    }
    if (strcmp(mode, "gpu") == 0) {
      hh_fail(h, "no GPU device listed for %s", HH_EP_NAME);
      return HH_SKIP;
    }
  } else if (strcmp(mode, "ref") != 0) {
    return hh_fail(h, "unknown backend mode '%s' (ref|auto|gpu)", mode);
  }
  if (hh_ep_devices(h, "ref", &dev, 1) == 0)
    return hh_fail(h, "no %s device with ep_metadata backend=ref listed", HH_EP_NAME);
  out->dev = dev;
  snprintf(out->backend, sizeof out->backend, "ref");
  return 0;
}

/* ---- sessions ---------------------------------------------------------------- */

int hh_session_create(hh_ort *h, const hh_session_cfg *cfg, const OrtModel *model,
                      const char *path, OrtSession **out) {
  const OrtApi *a = h->api;
  OrtSessionOptions *so = NULL;
  *out = NULL;
  HH_TRY(h, a->CreateSessionOptions(&so), "CreateSessionOptions");
  HH_TRY(h, a->AddSessionConfigEntry(so, "session.record_ep_graph_assignment_info", "1"),
         "AddSessionConfigEntry(record_ep_graph_assignment_info)");
  HH_TRY(h, a->SetSessionLogSeverityLevel(so, h->log_level), "SetSessionLogSeverityLevel");
  if (cfg && cfg->disable_cpu_fallback)
    HH_TRY(h, a->AddSessionConfigEntry(so, "session.disable_cpu_ep_fallback", "1"),
           "AddSessionConfigEntry(disable_cpu_ep_fallback)");
  if (cfg && cfg->intra_threads > 0)
    HH_TRY(h, a->SetIntraOpNumThreads(so, cfg->intra_threads), "SetIntraOpNumThreads");
  if (cfg && cfg->graph_opt_level != 0)
    HH_TRY(h,
           a->SetSessionGraphOptimizationLevel(
               so, cfg->graph_opt_level < 0 ? ORT_DISABLE_ALL : (GraphOptimizationLevel)cfg->graph_opt_level),
           "SetSessionGraphOptimizationLevel");
  for (size_t i = 0; cfg && i < cfg->n_config; i++)
    HH_TRY(h, a->AddSessionConfigEntry(so, cfg->config_keys[i], cfg->config_vals[i]), "AddSessionConfigEntry");
  if (cfg && cfg->dev)
    HH_TRY(h,
           a->SessionOptionsAppendExecutionProvider_V2(so, h->env, &cfg->dev, 1, cfg->keys, cfg->vals,
                                                       cfg->n_opts),
           "SessionOptionsAppendExecutionProvider_V2");
  if (model)
    HH_TRY(h, h->ed->CreateSessionFromModel(h->env, model, so, out), "CreateSession");
  else
    HH_TRY(h, a->CreateSession(h->env, path, so, out), "CreateSession");
  a->ReleaseSessionOptions(so);
  return 0;
fail:
  if (so) a->ReleaseSessionOptions(so);
  return 1;
}

void hh_session_free(hh_ort *h, OrtSession *s) {
  if (s) h->api->ReleaseSession(s);
}

static int type_to_io(hh_ort *h, OrtTypeInfo *ti, hh_io *io) {
  const OrtTensorTypeAndShapeInfo *tti = NULL;
  enum ONNXType ot = ONNX_TYPE_UNKNOWN;
  if (hh_check(h, h->api->GetOnnxTypeFromTypeInfo(ti, &ot), "GetOnnxTypeFromTypeInfo")) return 1;
  if (ot != ONNX_TYPE_TENSOR) return hh_fail(h, "graph input/output '%s' is not a tensor", io->name);
  if (hh_check(h, h->api->CastTypeInfoToTensorInfo(ti, &tti), "CastTypeInfoToTensorInfo")) return 1;
  ONNXTensorElementDataType et;
  size_t rank = 0;
  if (hh_check(h, h->api->GetTensorElementType(tti, &et), "GetTensorElementType")) return 1;
  if (hh_check(h, h->api->GetDimensionsCount(tti, &rank), "GetDimensionsCount")) return 1;
  if (rank > HH_MAX_RANK) return hh_fail(h, "'%s' has rank %zu > %d", io->name, rank, HH_MAX_RANK);
  if (hh_check(h, h->api->GetDimensions(tti, io->dims, rank), "GetDimensions")) return 1;
  io->dtype = (int)et;
  io->rank = (int)rank;
  return 0;
}

static int session_ios(hh_ort *h, OrtSession *s, int outputs, hh_io *out, size_t max, size_t *n) {
  const OrtApi *a = h->api;
  size_t count = 0;
  if (hh_check(h, outputs ? a->SessionGetOutputCount(s, &count) : a->SessionGetInputCount(s, &count),
               "SessionGet*Count"))
    return 1;
  *n = count;
  for (size_t i = 0; i < count && i < max; i++) {
    char *name = NULL;
    OrtTypeInfo *ti = NULL;
    if (hh_check(h,
                 outputs ? a->SessionGetOutputName(s, i, h->alloc, &name)
                         : a->SessionGetInputName(s, i, h->alloc, &name),
                 "SessionGet*Name"))
      return 1;
    snprintf(out[i].name, sizeof out[i].name, "%s", name);
    OrtStatus *fst = a->AllocatorFree(h->alloc, name);
    if (fst) a->ReleaseStatus(fst);
    if (hh_check(h,
                 outputs ? a->SessionGetOutputTypeInfo(s, i, &ti) : a->SessionGetInputTypeInfo(s, i, &ti),
                 "SessionGet*TypeInfo"))
      return 1;
    int rc = type_to_io(h, ti, &out[i]);
    a->ReleaseTypeInfo(ti);
    if (rc) return rc;
  }
  return 0;
}

int hh_session_inputs(hh_ort *h, OrtSession *s, hh_io *out, size_t max, size_t *n) {
  return session_ios(h, s, 0, out, max, n);
}

int hh_session_outputs(hh_ort *h, OrtSession *s, hh_io *out, size_t max, size_t *n) {
  return session_ios(h, s, 1, out, max, n);
}

/* ---- assignment info ---------------------------------------------------------- */

static int assign_add(hh_assign *a, const char *ep, const char *op) {
  for (size_t i = 0; i < a->n; i++)
    if (strcmp(a->rows[i].ep, ep) == 0 && strcmp(a->rows[i].op, op) == 0) {
      a->rows[i].count++;
      return 0;
    }
  hh_assign_row *r = realloc(a->rows, (a->n + 1) * sizeof *r);
  if (!r) return 1;
  a->rows = r;
  memset(&r[a->n], 0, sizeof r[a->n]);
  snprintf(r[a->n].ep, sizeof r[a->n].ep, "%s", ep);
  snprintf(r[a->n].op, sizeof r[a->n].op, "%s", op);
  r[a->n].count = 1;
  a->n++;
  return 0;
}

int hh_assignment(hh_ort *h, OrtSession *s, hh_assign *out) {
  hh_node_place *p = NULL;
  size_t n = 0;
  memset(out, 0, sizeof *out);
  if (hh_node_places(h, s, &p, &n)) return 1;
  for (size_t i = 0; i < n; i++) {
    if ((i == 0 || p[i].subgraph != p[i - 1].subgraph) && hh_is_ep_name(p[i].ep)) out->ep_partitions++;
    if (assign_add(out, p[i].ep, p[i].op)) {
      free(p);
      hh_assign_free(out);
      return hh_fail(h, "out of memory");
    }
  }
  free(p);
  return 0;
}

int hh_assign_count(const hh_assign *a, const char *ep, const char *op) {
  int c = 0;
  for (size_t i = 0; i < a->n; i++)
    if ((!ep || strcmp(ep, a->rows[i].ep) == 0 || (strcmp(ep, HH_EP_NAME) == 0 && hh_is_ep_name(a->rows[i].ep))) &&
        (!op || strcmp(op, a->rows[i].op) == 0))
      c += a->rows[i].count;
  return c;
}

void hh_assign_print(const hh_assign *a, FILE *f, const char *indent) {
  if (!indent) indent = "";
  if (a->n == 0) fprintf(f, "%s(no nodes)\n", indent);
  for (size_t i = 0; i < a->n; i++)
    fprintf(f, "%s%-28s %-24s %d\n", indent, a->rows[i].ep, a->rows[i].op, a->rows[i].count);
}

void hh_assign_free(hh_assign *a) {
  free(a->rows);
  a->rows = NULL;
  a->n = 0;
}

/* ---- host tensors ---------------------------------------------------------------- */

int hh_tensor_alloc(hh_tensor *t, int dtype, int rank, const int64_t *dims) {
  memset(t, 0, sizeof *t);
  size_t es = hd_dtype_size(dtype);
  if (es == 0 || rank < 0 || rank > HH_MAX_RANK) return 1;
  size_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0) return 1;
    t->dims[i] = dims[i];
    n *= (size_t)dims[i];
  }
  t->dtype = dtype;
  t->rank = rank;
  t->n = n;
  /* calloc(0) may return NULL; keep one byte so data is never NULL. */
  t->data = calloc(n ? n : 1, es);
  return t->data ? 0 : 1;
}

void hh_tensor_free(hh_tensor *t) {
  free(t->data);
  memset(t, 0, sizeof *t);
}

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void hh_tensor_fill_random(hh_tensor *t, uint64_t seed) {
  uint64_t s = seed;
  for (size_t i = 0; i < t->n; i++) {
    uint64_t r = splitmix64(&s);
    double u = (double)(r >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
    switch (t->dtype) {
      case HD_DT_F32: case HD_DT_F16: case HD_DT_BF16: case HD_DT_F64:
        hh_tensor_set(t, i, 2.0 * u - 1.0);
        break;
      case HD_DT_U8: case HD_DT_U16: case HD_DT_U32: case HD_DT_U64:
        hh_tensor_set(t, i, (double)(r % 17));
        break;
      default:
        hh_tensor_set(t, i, (double)(r % 17) - 8.0);
        break;
    }
  }
}

double hh_tensor_get(const hh_tensor *t, size_t i) {
  const void *p = t->data;
  switch (t->dtype) {
    case HD_DT_F32: return ((const float *)p)[i];
    case HD_DT_F64: return ((const double *)p)[i];
    case HD_DT_F16: return hd_f16_to_f32(((const uint16_t *)p)[i]);
    case HD_DT_BF16: return hd_bf16_to_f32(((const uint16_t *)p)[i]);
    case HD_DT_I8: return ((const int8_t *)p)[i];
    case HD_DT_U8: return ((const uint8_t *)p)[i];
    case HD_DT_I16: return ((const int16_t *)p)[i];
    case HD_DT_U16: return ((const uint16_t *)p)[i];
    case HD_DT_I32: return ((const int32_t *)p)[i];
    case HD_DT_U32: return ((const uint32_t *)p)[i];
    case HD_DT_I64: return (double)((const int64_t *)p)[i];
    case HD_DT_U64: return (double)((const uint64_t *)p)[i];
    case HD_DT_BOOL: return ((const uint8_t *)p)[i] ? 1.0 : 0.0;
    default: return 0.0;
  }
}

void hh_tensor_set(hh_tensor *t, size_t i, double v) {
  void *p = t->data;
  switch (t->dtype) {
    case HD_DT_F32: ((float *)p)[i] = (float)v; break;
    case HD_DT_F64: ((double *)p)[i] = v; break;
    case HD_DT_F16: ((uint16_t *)p)[i] = hd_f32_to_f16((float)v); break;
    case HD_DT_BF16: ((uint16_t *)p)[i] = hd_f32_to_bf16((float)v); break;
    case HD_DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case HD_DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case HD_DT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case HD_DT_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case HD_DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case HD_DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case HD_DT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case HD_DT_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case HD_DT_BOOL: ((uint8_t *)p)[i] = v != 0.0; break;
    default: break;
  }
}

void hh_tensor_round_f16(hh_tensor *t) {
  for (size_t i = 0; i < t->n; i++) hh_tensor_set(t, i, hd_f16_to_f32(hd_f32_to_f16((float)hh_tensor_get(t, i))));
}

int hh_tensor_convert(const hh_tensor *src, int dtype, hh_tensor *out) {
  if (hh_tensor_alloc(out, dtype, src->rank, src->dims)) return 1;
  for (size_t i = 0; i < src->n; i++) hh_tensor_set(out, i, hh_tensor_get(src, i));
  return 0;
}

int hh_tensor_to_value(hh_ort *h, const hh_tensor *t, OrtValue **out) {
  size_t bytes = t->n * hd_dtype_size(t->dtype);
  /* ORT's API takes void*; it does not write inputs. */
  return hh_check(h,
                  h->api->CreateTensorWithDataAsOrtValue(h->cpu_mem, t->data, bytes, t->dims, (size_t)t->rank,
                                                         (ONNXTensorElementDataType)t->dtype, out),
                  "CreateTensorWithDataAsOrtValue");
}

int hh_value_to_tensor(hh_ort *h, const OrtValue *v, hh_tensor *out) {
  const OrtApi *a = h->api;
  OrtTensorTypeAndShapeInfo *info = NULL;
  ONNXTensorElementDataType et;
  size_t rank = 0;
  int64_t dims[HH_MAX_RANK];
  const void *src = NULL;
  memset(out, 0, sizeof *out);
  HH_TRY(h, a->GetTensorTypeAndShape(v, &info), "GetTensorTypeAndShape");
  HH_TRY(h, a->GetTensorElementType(info, &et), "GetTensorElementType");
  HH_TRY(h, a->GetDimensionsCount(info, &rank), "GetDimensionsCount");
  if (rank > HH_MAX_RANK) {
    hh_fail(h, "output rank %zu > %d", rank, HH_MAX_RANK);
    goto fail;
  }
  HH_TRY(h, a->GetDimensions(info, dims, rank), "GetDimensions");
  if (hh_tensor_alloc(out, (int)et, (int)rank, dims)) {
    hh_fail(h, "cannot hold an output of type %d", (int)et);
    goto fail;
  }
  HH_TRY(h, a->GetTensorData(v, &src), "GetTensorData");
  if (out->n) memcpy(out->data, src, out->n * hd_dtype_size(out->dtype));
  a->ReleaseTensorTypeAndShapeInfo(info);
  return 0;
fail:
  if (info) a->ReleaseTensorTypeAndShapeInfo(info);
  hh_tensor_free(out);
  return 1;
}

#define HH_MAX_IO 64

int hh_session_run(hh_ort *h, OrtSession *s, const hh_tensor *inputs, size_t n_in, hh_tensor *outputs,
                   size_t n_out) {
  const OrtApi *a = h->api;
  /* per call (threads may run one session at once); large: off the stack */
  hh_io *ins = calloc(2 * HH_MAX_IO, sizeof *ins), *outs = ins ? ins + HH_MAX_IO : NULL;
  const char *in_names[HH_MAX_IO], *out_names[HH_MAX_IO];
  OrtValue *in_vals[HH_MAX_IO] = {0}, *out_vals[HH_MAX_IO] = {0};
  size_t ni = 0, no = 0;
  int rc = 1;
  for (size_t i = 0; i < n_out; i++) memset(&outputs[i], 0, sizeof outputs[i]);
  if (!ins) return hh_fail(h, "out of host memory");
  if (hh_session_inputs(h, s, ins, HH_MAX_IO, &ni) || hh_session_outputs(h, s, outs, HH_MAX_IO, &no)) {
    free(ins);
    return 1;
  }
  if (ni != n_in || ni > HH_MAX_IO || n_out > no || n_out > HH_MAX_IO) {
    free(ins);
    return ni != n_in ? hh_fail(h, "model has %zu inputs, %zu given", ni, n_in)
                      : hh_fail(h, "too many inputs/outputs (%zu in, %zu out)", ni, no);
  }
  for (size_t i = 0; i < ni; i++) {
    in_names[i] = ins[i].name;
    if (hh_tensor_to_value(h, &inputs[i], &in_vals[i])) goto done;
  }
  for (size_t i = 0; i < n_out; i++) out_names[i] = outs[i].name;
  HH_TRY(h, a->Run(s, NULL, in_names, (const OrtValue *const *)in_vals, ni, out_names, n_out, out_vals), "Run");
  for (size_t i = 0; i < n_out; i++)
    if (hh_value_to_tensor(h, out_vals[i], &outputs[i])) goto done;
  rc = 0;
  goto done;
fail:
done:
  for (size_t i = 0; i < ni; i++)
    if (in_vals[i]) a->ReleaseValue(in_vals[i]);
  for (size_t i = 0; i < n_out; i++)
    if (out_vals[i]) a->ReleaseValue(out_vals[i]);
  if (rc)
    for (size_t i = 0; i < n_out; i++) hh_tensor_free(&outputs[i]);
  free(ins);
  return rc;
}
