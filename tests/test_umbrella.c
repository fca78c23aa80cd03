/* Our EP behind AMD's umbrella EP (issue 18). tests/umbrella_shim is a test
 * double of the umbrella and its HIP backend shim: registered with ORT as
 * AMDGPUExecutionProvider, it loads our library and calls it as the umbrella
 * does (its header says how). Checked here, as GenAI uses the umbrella:
 * - its devices are listed and a session on them, with the umbrella's
 *   provider options (profile, model_arch) and another EP's config entry,
 *   places the model on AMDGPUExecutionProvider and matches the CPU EP;
 * - on a GPU: a tensor from the session's allocator for the umbrella's device
 *   memory info and one from the environment's allocator for its pinned
 *   info, filled and read back through the environment's CopyTensors;
 * - two sessions at once (GenAI's init and model sessions), then
 *   unregistering (the shim dlcloses our library: it stays mapped, being
 *   linked -z nodelete, ep/CMakeLists.txt says why), and registering again
 *   works: the same copy serves a new set of factories.
 * Without a GPU the shim offers the CPU and our EP runs its reference
 * backend; the GPU-only checks print a SKIP line. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

#define UMBRELLA_NAME "AMDGPUExecutionProvider"

#ifndef UMBRELLA_SHIM_LIB
#define UMBRELLA_SHIM_LIB "libhipdnn_umbrella_shim.so"
#endif

static int failures;

static const char *shim_lib(void) {
  const char *e = getenv("HIPDNN_EP_SHIM_LIB");
  return e && e[0] ? e : UMBRELLA_SHIM_LIB;
}

/* 1 while our EP library is loaded in this process (the shim loads it). */
static int ep_lib_loaded(void) {
  void *dl = dlopen(hh_default_ep_lib(), RTLD_NOW | RTLD_NOLOAD);
  if (dl) dlclose(dl);
  return dl != NULL;
}

/* The first device listed under the umbrella's name; *count: how many. */
static const OrtEpDevice *umbrella_device(hh_ort *h, size_t *count) {
  const OrtEpDevice *const *devs = NULL, *first = NULL;
  size_t n = 0;
  *count = 0;
  if (hh_check(h, h->api->GetEpDevices(h->env, &devs, &n), "GetEpDevices")) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(h->api->EpDevice_EpName(devs[i]), UMBRELLA_NAME) != 0) continue;
    if (!first) first = devs[i];
    (*count)++;
  }
  return first;
}

/* A session as GenAI makes one through the umbrella: its provider options
 * (under the umbrella's prefix, so the shim keeps them from us) and a config
 * entry of another EP, which reaches our EP and must not disturb it. The
 * umbrella takes one device per session: the first. */
static int umbrella_session(hh_ort *h, const OrtEpDevice *dev, const hh_model *m, OrtSession **out) {
  static const char *const keys[] = {"profile", "model_arch"}, *const vals[] = {"hip", "llama"};
  static const char *const cfg_keys[] = {"ep.migraphx.hip_graph_enable"}, *const cfg_vals[] = {"1"};
  hh_session_cfg cfg = {.dev = dev, .keys = keys, .vals = vals, .n_opts = 2, .disable_cpu_fallback = 1,
                        .config_keys = cfg_keys, .config_vals = cfg_vals, .n_config = 1};
  return hh_session_create(h, &cfg, hh_model_ort(m), NULL, out);
}

/* device_id past the GPUs there are: refused at session creation (the
 * umbrella's CreateEp names no device), the message naming the GPUs. The
 * umbrella drops its own options, so ours come under our fixed prefix. */
static void check_device_id_refused(hh_ort *h, const OrtEpDevice *dev, const hh_model *m) {
  static const char *const cfg_keys[] = {"ep.hipdnnexecutionprovider.device_id"}, *const cfg_vals[] = {"9"};
  hh_session_cfg cfg = {.dev = dev, .disable_cpu_fallback = 1, .config_keys = cfg_keys, .config_vals = cfg_vals,
                        .n_config = 1};
  OrtSession *s = NULL;
  int rc = hh_session_create(h, &cfg, hh_model_ort(m), NULL, &s);
  HT_CHECK(rc != 0, "device_id=9 was accepted");
  if (rc) {
    printf("  device_id=9: %s\n", hh_err(h));
    HT_CHECK(strstr(hh_err(h), "device_id=9") && strstr(hh_err(h), "the GPUs here are"),
             "the refusal does not name device_id=9 and the GPUs: %s", hh_err(h));
  }
  hh_session_free(h, s);
}

/* Runs x on s and on the CPU EP's session and compares. Our EP gets no
 * use_tf32=0 through the umbrella, so a GPU is held to TF32 tolerances. */
static void check_run(hh_ort *h, OrtSession *s, OrtSession *cpu, const hh_tensor *x, int is_gpu,
                      const char *what) {
  HT_CHECK(ht_run_against_cpu(h, s, cpu, x, hh_tol_for(HD_DT_F32, is_gpu), what),
           "%s: no output, or it differs from the CPU EP's", what);
}

static void check_assignment(hh_ort *h, OrtSession *s) {
  hh_assign a;
  if (hh_assignment(h, s, &a)) {
    HT_CHECK(0, "%s", hh_err(h));
    return;
  }
  hh_assign_print(&a, stdout, "  ");
  HT_CHECK(hh_assign_count(&a, UMBRELLA_NAME, "Conv") == 1, "the Conv is not on %s", UMBRELLA_NAME);
  HT_CHECK(hh_assign_count(&a, UMBRELLA_NAME, NULL) == hh_assign_count(&a, NULL, NULL),
           "nodes on other EPs than %s", UMBRELLA_NAME);
  hh_assign_free(&a);
}

#define GPU_TRY(call, what)                 \
  if (hh_check(h, (call), what)) {          \
    HT_CHECK(0, "%s", hh_err(h));           \
    goto done;                              \
  }

/* Memory the umbrella's callers get from ORT for the umbrella's memory infos
 * (our allocators behind them), filled and read back through our data
 * transfer: host -> device -> pinned and host, with no stream. */
static void check_gpu_memory(hh_ort *h, OrtSession *s, const OrtEpDevice *dev) {
  const OrtApi *a = h->api;
  enum { N = 1000 };
  static float src[N], back[N];
  for (int i = 0; i < N; i++) src[i] = (float)i * 0.25f - 17.0f;
  memset(back, 0, sizeof back);
  const int64_t shape[1] = {N};
  const OrtMemoryInfo *device_info = a->EpDevice_MemoryInfo(dev, OrtDeviceMemoryType_DEFAULT);
  const OrtMemoryInfo *pinned_info = a->EpDevice_MemoryInfo(dev, OrtDeviceMemoryType_HOST_ACCESSIBLE);
  OrtAllocator *session_alloc = NULL, *pinned_alloc = NULL;
  OrtValue *host_src = NULL, *host_back = NULL, *on_device = NULL, *on_pinned = NULL;
  HT_CHECK(device_info && pinned_info, "the umbrella's device offers no device or pinned memory info");
  if (!device_info || !pinned_info) return;
  GPU_TRY(a->CreateAllocator(s, device_info, &session_alloc), "CreateAllocator(session, umbrella device memory)");
  GPU_TRY(a->GetSharedAllocator(h->env, pinned_info, &pinned_alloc), "GetSharedAllocator(umbrella pinned memory)");
  HT_CHECK(pinned_alloc != NULL, "no shared allocator for the umbrella's pinned memory info");
  if (!pinned_alloc) goto done;
  GPU_TRY(a->CreateTensorAsOrtValue(session_alloc, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &on_device),
          "a tensor from the session allocator");
  GPU_TRY(a->CreateTensorAsOrtValue(pinned_alloc, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &on_pinned),
          "a tensor from the shared pinned allocator");
  const OrtMemoryInfo *got_info = NULL;
  int differ = 1;
  GPU_TRY(a->GetTensorMemoryInfo(on_device, &got_info), "GetTensorMemoryInfo");
  GPU_TRY(a->CompareMemoryInfo(got_info, device_info, &differ), "CompareMemoryInfo");
  HT_CHECK(differ == 0, "the session allocator's tensor does not report the umbrella's device memory info");
  GPU_TRY(a->CreateTensorWithDataAsOrtValue(h->cpu_mem, src, sizeof src, shape, 1,
                                            ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &host_src),
          "a host tensor");
  GPU_TRY(a->CreateTensorWithDataAsOrtValue(h->cpu_mem, back, sizeof back, shape, 1,
                                            ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &host_back),
          "a host tensor");
  /* One destination memory per call (CopyTensors' rule). */
  GPU_TRY(a->CopyTensors(h->env, (const OrtValue *const *)&host_src, &on_device, NULL, 1), "CopyTensors host->device");
  GPU_TRY(a->CopyTensors(h->env, (const OrtValue *const *)&on_device, &on_pinned, NULL, 1),
          "CopyTensors device->pinned");
  GPU_TRY(a->CopyTensors(h->env, (const OrtValue *const *)&on_device, &host_back, NULL, 1),
          "CopyTensors device->host");
  void *pinned_data = NULL;
  GPU_TRY(a->GetTensorMutableData(on_pinned, &pinned_data), "GetTensorMutableData(pinned)");
  HT_CHECK(memcmp(pinned_data, src, sizeof src) == 0, "host -> device -> pinned changed the bytes");
  HT_CHECK(memcmp(back, src, sizeof src) == 0, "host -> device -> host changed the bytes");
  printf("  %d floats host -> device (session allocator) -> pinned (shared allocator) and host: %s\n", N,
         memcmp(pinned_data, src, sizeof src) == 0 && memcmp(back, src, sizeof src) == 0 ? "equal" : "DIFFERENT");
done:
  if (host_src) a->ReleaseValue(host_src);
  if (host_back) a->ReleaseValue(host_back);
  if (on_device) a->ReleaseValue(on_device);
  if (on_pinned) a->ReleaseValue(on_pinned);
  if (session_alloc) a->ReleaseAllocator(session_alloc);
}

static int register_shim(hh_ort *h) {
  if (hh_ep_register_as(h, UMBRELLA_NAME, shim_lib()) == 0) return 0;
  HT_CHECK(0, "registering %s as %s: %s", shim_lib(), UMBRELLA_NAME, hh_err(h));
  return 1;
}

static void unregister_shim(hh_ort *h, const char *when) {
  HT_CHECK(hh_check(h, h->api->UnregisterExecutionProviderLibrary(h->env, UMBRELLA_NAME), "unregister") == 0,
           "%s", hh_err(h));
  /* The shim dlclosed it; -z nodelete keeps it (unloading under the GPU
   * runtime it started crashed). */
  HT_CHECK(ep_lib_loaded(), "our library was unloaded after unregistering the shim %s: it must be -z nodelete",
           when);
}

/* GenAI's two sessions (init, then model) on the umbrella's device, both
 * alive at once, each run and compared. */
static void check_sessions(hh_ort *h, const OrtEpDevice *dev, int is_gpu, const hh_model *m, OrtSession *cpu,
                           const hh_tensor *x) {
  OrtSession *init = NULL, *model = NULL;
  if (umbrella_session(h, dev, m, &init)) {
    HT_CHECK(0, "a session on %s: %s", UMBRELLA_NAME, hh_err(h));
    return;
  }
  check_assignment(h, init);
  check_run(h, init, cpu, x, is_gpu, "init session");
  if (is_gpu)
    check_gpu_memory(h, init, dev);
  else
    printf("SKIP (needs a GPU): allocations for the umbrella's memory infos and copies through CopyTensors "
           "(the shim offers the CPU: no GPU listed)\n");
  if (umbrella_session(h, dev, m, &model))
    HT_CHECK(0, "a second session on %s: %s", UMBRELLA_NAME, hh_err(h));
  else
    check_run(h, model, cpu, x, is_gpu, "model session");
  hh_session_free(h, model);
  hh_session_free(h, init);
}

int main(void) {
  hh_ort h;
  if (hh_ort_open(&h, NULL)) {
    fprintf(stderr, "FAIL: %s\n", hh_err(&h));
    return 1;
  }
  printf("ONNX Runtime %s; shim %s; our EP %s\n", hh_ort_version(&h), shim_lib(), hh_default_ep_lib());
  HT_CHECK(!ep_lib_loaded(), "our library is loaded before the shim is registered");
  if (register_shim(&h)) {
    hh_ort_close(&h);
    return 1;
  }
  HT_CHECK(ep_lib_loaded(), "registering the shim did not load our library");
  size_t ndev = 0;
  const OrtEpDevice *dev = umbrella_device(&h, &ndev);
  HT_CHECK(dev != NULL, "no device listed under %s", UMBRELLA_NAME);
  int is_gpu = dev && h.api->HardwareDevice_Type(h.api->EpDevice_Device(dev)) == OrtHardwareDeviceType_GPU;
  printf("%zu device(s) under %s; the first is the %s\n", ndev, UMBRELLA_NAME, is_gpu ? "GPU" : "CPU");
  const char *want = getenv("HIPDNN_EP_TEST_BACKEND");
  if (dev && !is_gpu && want && strcmp(want, "auto") == 0) {
    printf("SKIP: HIPDNN_EP_TEST_BACKEND=auto, but the shim offers no GPU\n");
    unregister_shim(&h, "(skipped run)");
    hh_ort_close(&h);
    return HH_SKIP;
  }

  hh_conv_desc d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {9, 9}, .k = {3, 3},
                    .pads = {1, 1, 1, 1}, .has_pads = 1, .bias = 1, .seed = 18};
  const int64_t xdims[4] = {1, 4, 9, 9};
  hh_model *m = NULL;
  OrtSession *cpu = NULL;
  hh_tensor x = {0};
  if (hh_conv_model(&h, &d, &m) || hh_session_create(&h, NULL, hh_model_ort(m), NULL, &cpu) ||
      hh_tensor_alloc(&x, HD_DT_F32, 4, xdims)) {
    HT_CHECK(0, "setting up the model: %s", hh_err(&h));
  } else if (dev) {
    hh_tensor_fill_random(&x, 7);
    check_sessions(&h, dev, is_gpu, m, cpu, &x);
    check_device_id_refused(&h, dev, m);
  }
  unregister_shim(&h, "(first registration)");

  /* Loaded again in the same process (a second Generator set-up): the
   * same copy of our library makes new factories and works. */
  if (!failures && register_shim(&h) == 0) {
    dev = umbrella_device(&h, &ndev);
    OrtSession *again = NULL;
    if (!dev || umbrella_session(&h, dev, m, &again))
      HT_CHECK(0, "a session after registering again: %s", dev ? hh_err(&h) : "no device");
    else
      check_run(&h, again, cpu, &x, is_gpu, "after registering again");
    hh_session_free(&h, again);
    unregister_shim(&h, "(second registration)");
  }

  hh_tensor_free(&x);
  hh_session_free(&h, cpu);
  hh_model_free(m);
  hh_ort_close(&h);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
