/* Loading the EP library: registration through ORT, the devices it lists, a
 * session on its device, the errors ORT and the EP must give cleanly, and the
 * two exported entry points called directly. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

static int failures;

/* A tiny Conv model: the session check needs something for the EP to claim. */
static hh_model *small_conv(hh_ort *h) {
  hh_conv_desc d = {.nd = 2, .n = 1, .c = 2, .m = 3, .in = {5, 5}, .k = {3, 3}, .bias = 1, .seed = 5};
  hh_model *m = NULL;
  if (hh_conv_model(h, &d, &m)) fprintf(stderr, "building the model: %s\n", hh_err(h));
  return m;
}

static void check_devices(hh_ort *h) {
  const OrtEpDevice *devs[16];
  size_t n = hh_ep_devices(h, NULL, devs, 16);
  HT_CHECK(n >= 1, "GetEpDevices lists no %s device", HH_EP_NAME);
  size_t n_ref = 0;
  for (size_t i = 0; i < n && i < 16; i++) {
    const char *be = hh_device_backend(h, devs[i]);
    const char *vendor = h->api->EpDevice_EpVendor(devs[i]);
    const OrtHardwareDevice *hw = h->api->EpDevice_Device(devs[i]);
    OrtHardwareDeviceType type = h->api->HardwareDevice_Type(hw);
    printf("  device %zu: backend=%s vendor=%s hw_type=%d\n", i, be, vendor ? vendor : "(null)", (int)type);
    HT_CHECK(vendor && strcmp(vendor, "hipdnn-ep") == 0, "EP vendor is '%s'", vendor ? vendor : "(null)");
    HT_CHECK(strcmp(be, "ref") == 0 || strcmp(be, "cuda") == 0 || strcmp(be, "hip") == 0,
             "ep_metadata backend is '%s'", be);
    if (strcmp(be, "ref") == 0) {
      n_ref++;
      HT_CHECK(type == OrtHardwareDeviceType_CPU, "the ref device is on hardware type %d, not CPU", (int)type);
    } else {
      HT_CHECK(type == OrtHardwareDeviceType_GPU, "the %s device is on hardware type %d, not GPU", be, (int)type);
    }
  }
  HT_CHECK(n_ref == 1, "%zu ref devices listed, want exactly 1", n_ref);
  /* One device per EP name (a session's devices share one memory info):
   * the registration name offers a GPU when there is one, else the CPU. */
  size_t n_main = 0;
  for (size_t i = 0; i < n && i < 16; i++) {
    const char *name = h->api->EpDevice_EpName(devs[i]);
    printf("  device %zu: EP name %s\n", i, name);
    if (strcmp(name, HH_EP_NAME) == 0) {
      n_main++;
      int gpu = h->api->HardwareDevice_Type(h->api->EpDevice_Device(devs[i])) == OrtHardwareDeviceType_GPU;
      HT_CHECK(gpu == (n > 1), "the registration name offers the %s though %zu device(s) are listed",
               gpu ? "GPU" : "CPU", n);
    }
    for (size_t j = 0; j < i; j++)
      HT_CHECK(strcmp(name, h->api->EpDevice_EpName(devs[j])) != 0, "two devices under the EP name %s", name);
  }
  HT_CHECK(n_main == 1, "%zu devices under the registration name %s, want 1", n_main, HH_EP_NAME);
}

static void check_session(hh_ort *h, const hh_target *t, hh_model *m) {
  const char *keys[2], *vals[2];
  size_t nk = ht_ep_opts(t, keys, vals);
  hh_session_cfg cfg = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = nk, .disable_cpu_fallback = 1};
  OrtSession *s = NULL;
  if (hh_session_create(h, &cfg, hh_model_ort(m), NULL, &s)) {
    HT_CHECK(0, "session with %s (%s=%s): %s", HH_EP_NAME, keys[0], vals[0], hh_err(h));
    return;
  }
  hh_assign a = {0};
  if (hh_assignment(h, s, &a) == 0) {
    HT_CHECK(hh_assign_count(&a, HH_EP_NAME, "Conv") == 1, "the Conv is not on %s", HH_EP_NAME);
    hh_assign_free(&a);
  } else {
    HT_CHECK(0, "%s", hh_err(h));
  }
  int64_t xd[4] = {1, 2, 5, 5};
  hh_tensor x, y = {0};
  if (hh_tensor_alloc(&x, HD_DT_F32, 4, xd) == 0) {
    hh_tensor_fill_random(&x, 3);
    HT_CHECK(hh_session_run(h, s, &x, 1, &y, 1) == 0, "run: %s", hh_err(h));
    HT_CHECK(y.rank == 4 && y.dims[1] == 3 && y.dims[2] == 5 - 2, "output shape wrong");
    hh_tensor_free(&y);
    hh_tensor_free(&x);
  }
  hh_session_free(h, s);
}

/* The CPU device runs the reference backend with backend=auto too (a caller
 * that hands every device of our name to a session on a machine without a
 * GPU gets a working session); a GPU backend asked for on it fails with a
 * message that says the device is the CPU. */
static void check_ref_device_options(hh_ort *h, hh_model *m) {
  const OrtEpDevice *ref = NULL;
  if (hh_ep_devices(h, "ref", &ref, 1) == 0) return; /* reported by check_devices */
  const char *keys[1] = {"backend"}, *vals[1] = {"cuda"};
  hh_session_cfg cfg = {.dev = ref, .disable_cpu_fallback = 1};
  OrtSession *s = NULL;
  HT_CHECK(hh_session_create(h, &cfg, hh_model_ort(m), NULL, &s) == 0,
           "a session on the CPU device without options failed: %s", hh_err(h));
  hh_session_free(h, s);
  s = NULL;
  cfg.keys = keys, cfg.vals = vals, cfg.n_opts = 1;
  int rc = hh_session_create(h, &cfg, hh_model_ort(m), NULL, &s);
  HT_CHECK(rc != 0, "a session on the CPU device with backend=cuda was created");
  if (rc) {
    printf("  backend=cuda on the CPU device: %s\n", hh_err(h));
    HT_CHECK(strstr(hh_err(h), "CPU") != NULL && strstr(hh_err(h), "backend=cuda") != NULL,
             "the error does not say the device is the CPU: %s", hh_err(h));
  }
  hh_session_free(h, s);
}

/* Every EP name, as a caller that hands a session all devices of a name:
 * the session is created and runs (on a machine with several GPUs this
 * covers NAME_1, NAME_2; everywhere the CPU's name). */
static void check_every_name(hh_ort *h, hh_model *m) {
  const OrtEpDevice *devs[16];
  size_t n = hh_ep_devices(h, NULL, devs, 16);
  for (size_t i = 0; i < n && i < 16; i++) {
    hh_session_cfg cfg = {.dev = devs[i], .disable_cpu_fallback = 1};
    OrtSession *s = NULL;
    const char *name = h->api->EpDevice_EpName(devs[i]);
    int rc = hh_session_create(h, &cfg, hh_model_ort(m), NULL, &s);
    HT_CHECK(rc == 0, "a session given every device of %s: %s", name, hh_err(h));
    int64_t xd[4] = {1, 2, 5, 5};
    hh_tensor x, y = {0};
    if (!rc && hh_tensor_alloc(&x, HD_DT_F32, 4, xd) == 0) {
      hh_tensor_fill_random(&x, 4);
      HT_CHECK(hh_session_run(h, s, &x, 1, &y, 1) == 0, "run on %s: %s", name, hh_err(h));
      printf("  %s (%s): session and run %s\n", name, hh_device_backend(h, devs[i]), y.n == 27 ? "ok" : "FAILED");
      HT_CHECK(y.n == 27, "run on %s: %zu outputs", name, y.n);
      hh_tensor_free(&y);
      hh_tensor_free(&x);
    }
    hh_session_free(h, s);
  }
}

/* device_id that names no device given: an error that says which device
 * was given and how GPUs are named. */
static void check_device_id_mismatch(hh_ort *h, const hh_target *t, hh_model *m) {
  const char *keys[2], *vals[2];
  size_t nk = ht_ep_opts(t, keys, vals);
  keys[nk] = "device_id", vals[nk++] = "7";
  hh_session_cfg cfg = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = nk, .disable_cpu_fallback = 1};
  OrtSession *s = NULL;
  int rc = hh_session_create(h, &cfg, hh_model_ort(m), NULL, &s);
  HT_CHECK(rc != 0, "device_id=7 with a device that is not GPU 7 was accepted");
  if (rc) {
    printf("  device_id=7: %s\n", hh_err(h));
    HT_CHECK(strstr(hh_err(h), "device_id=7") != NULL, "the error does not name device_id=7: %s", hh_err(h));
  }
  hh_session_free(h, s);
}

/* ---- direct calls into the library -------------------------------------------- */

typedef OrtStatus *(*create_fn)(const char *, const OrtApiBase *, const OrtLogger *, OrtEpFactory **, size_t,
                                size_t *);
typedef OrtStatus *(*release_fn)(OrtEpFactory *);

static void check_direct(hh_ort *h) {
  void *lib = dlopen(hh_default_ep_lib(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    HT_CHECK(0, "dlopen %s: %s", hh_default_ep_lib(), dlerror());
    return;
  }
  create_fn create = NULL;
  release_fn release = NULL;
  void *s1 = dlsym(lib, "CreateEpFactories"), *s2 = dlsym(lib, "ReleaseEpFactory");
  HT_CHECK(s1 && s2, "CreateEpFactories / ReleaseEpFactory not exported");
  if (!s1 || !s2) {
    dlclose(lib);
    return;
  }
  memcpy(&create, &s1, sizeof create);
  memcpy(&release, &s2, sizeof release);

  OrtEpFactory *fa[4] = {0}, *fb[4] = {0};
  size_t na = 0, nb = 0;
  /* No OrtLogger can be made from outside ORT: pass NULL (the EP must then
   * not log through it). */
  HT_CHECK(hh_check(h, create("direct_a", h->base, NULL, fa, 4, &na), "CreateEpFactories #1") == 0, "%s",
           hh_err(h));
  HT_CHECK(hh_check(h, create("direct_b", h->base, NULL, fb, 4, &nb), "CreateEpFactories #2") == 0, "%s",
           hh_err(h));
  HT_CHECK(na >= 1 && na <= 4 && nb == na, "factories: %zu then %zu", na, nb);
  if (na >= 1 && fa[0]) {
    OrtEpFactory *f = fa[0];
    const char *name = f->GetName(f), *vendor = f->GetVendor(f);
    HT_CHECK(name && strcmp(name, "direct_a") == 0, "factory name '%s', not the registration name 'direct_a'",
             name ? name : "(null)");
    const char *name_b = fb[0] ? fb[0]->GetName(fb[0]) : NULL;
    HT_CHECK(name_b && strcmp(name_b, "direct_b") == 0, "second factory name '%s', not 'direct_b'",
             name_b ? name_b : "(null)");
    HT_CHECK(vendor && strcmp(vendor, "hipdnn-ep") == 0, "factory vendor '%s'", vendor ? vendor : "(null)");
    HT_CHECK(f->GetVendorId && f->GetVendorId(f) == 0x1002, "factory vendor id 0x%x",
             f->GetVendorId ? (unsigned)f->GetVendorId(f) : 0u);
    const char *ver = f->GetVersion ? f->GetVersion(f) : NULL;
    HT_CHECK(ver && strcmp(ver, "0.1.0") == 0, "factory version '%s'", ver ? ver : "(null)");
    HT_CHECK(f->CreateDataTransfer != NULL, "CreateDataTransfer is NULL (ORT 1.29 calls it unconditionally)");
    HT_CHECK(fb[0] && fb[0] != fa[0], "the two calls returned the same factory object");

    /* CreateEp with no devices (the umbrella EP's call) runs on the name's
     * device: the first GPU, or the CPU when there is none. Its EP reports
     * the registration name. */
    OrtSessionOptions *so = NULL;
    if (f->CreateEp && hh_check(h, h->api->CreateSessionOptions(&so), "CreateSessionOptions") == 0) {
      OrtEp *ep = NULL;
      OrtStatus *st = f->CreateEp(f, NULL, NULL, 0, so, NULL, &ep);
      HT_CHECK(st == NULL && ep != NULL, "CreateEp(num_devices=0) failed: %s",
               st ? h->api->GetErrorMessage(st) : "no EP");
      if (st) h->api->ReleaseStatus(st);
      if (ep) {
        const char *en = ep->GetName(ep);
        HT_CHECK(en && strcmp(en, "direct_a") == 0, "the EP's name is '%s', not 'direct_a'", en ? en : "(null)");
        printf("  CreateEp(num_devices=0), no options: EP '%s'\n", en ? en : "(null)");
      }
      if (ep && f->ReleaseEp) f->ReleaseEp(f, ep);
      ep = NULL;
      /* Options are read under the EP's own name. */
      HT_CHECK(hh_check(h, h->api->AddSessionConfigEntry(so, "ep.direct_a.backend", "ref"),
                        "AddSessionConfigEntry") == 0, "%s", hh_err(h));
      st = f->CreateEp(f, NULL, NULL, 0, so, NULL, &ep);
      HT_CHECK(st == NULL && ep != NULL, "CreateEp(num_devices=0, backend=ref) failed: %s",
               st ? h->api->GetErrorMessage(st) : "no EP");
      if (st) h->api->ReleaseStatus(st);
      if (ep && f->ReleaseEp) f->ReleaseEp(f, ep);
      ep = NULL;
      /* ... and under the recommended name's prefix whatever the EP's name
       * (a caller such as the umbrella EP strips its own prefix): a bad
       * value there must fail, naming the key; the EP's own prefix wins. */
      HT_CHECK(hh_check(h, h->api->AddSessionConfigEntry(so, "ep.hipdnnexecutionprovider.use_tf32", "7"),
                        "AddSessionConfigEntry") == 0, "%s", hh_err(h));
      st = f->CreateEp(f, NULL, NULL, 0, so, NULL, &ep);
      HT_CHECK(st && strstr(h->api->GetErrorMessage(st), "use_tf32"),
               "use_tf32=7 under ep.hipdnnexecutionprovider. was not read by the EP named direct_a");
      if (st) h->api->ReleaseStatus(st);
      if (ep && f->ReleaseEp) f->ReleaseEp(f, ep);
      h->api->ReleaseSessionOptions(so);
    } else {
      printf("  skipped CreateEp(num_devices=0): %s\n", f->CreateEp ? hh_err(h) : "CreateEp is NULL");
    }
  }
  /* Release in reverse order of creation. */
  for (size_t i = nb; i-- > 0;)
    if (fb[i]) HT_CHECK(hh_check(h, release(fb[i]), "ReleaseEpFactory b") == 0, "%s", hh_err(h));
  for (size_t i = na; i-- > 0;)
    if (fa[i]) HT_CHECK(hh_check(h, release(fa[i]), "ReleaseEpFactory a") == 0, "%s", hh_err(h));
  dlclose(lib);
}

/* A second registration under the same name: an error, and the first one
 * keeps working. Its own run (--dup-registration): ORT 1.29/1.30 load the
 * library and create its factories before they find the name taken, and then
 * never release them (Environment::RegisterExecutionProviderLibrary drops the
 * loaded library on that error), so LeakSanitizer reports the EP's factory as
 * leaked; the sanitizer build runs this mode with leak checks off. */
static int dup_registration(hh_ort *h, const hh_target *t, hh_model *m) {
  int rc = hh_ep_register_as(h, HH_EP_NAME, NULL);
  HT_CHECK(rc != 0, "registering twice under one name succeeded");
  if (rc) printf("  second registration: %s\n", hh_err(h));
  const OrtEpDevice *d = NULL;
  HT_CHECK(hh_ep_devices(h, NULL, &d, 1) >= 1, "devices gone after the failed second registration");
  if (m) check_session(h, t, m);
  return 0;
}

int main(int argc, char **argv) {
  int dup_only = argc > 1 && strcmp(argv[1], "--dup-registration") == 0;
  hh_ort h;
  hh_target t;
  int rc = ht_setup(&h, &t);
  if (rc) return rc;
  hh_model *m = small_conv(&h);
  HT_CHECK(m != NULL, "no model");
  if (dup_only) {
    dup_registration(&h, &t, m);
    hh_model_free(m);
    hh_ort_close(&h);
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
  }

  printf("devices:\n");
  check_devices(&h);
  if (m) {
    check_session(&h, &t, m);
    check_ref_device_options(&h, m);
    check_every_name(&h, m);
    check_device_id_mismatch(&h, &t, m);
  }

  /* Unregister: the devices go; register again: they come back. */
  const OrtEpDevice *d = NULL;
  HT_CHECK(hh_ep_unregister(&h) == 0, "unregister: %s", hh_err(&h));
  HT_CHECK(hh_ep_devices(&h, NULL, &d, 1) == 0, "devices still listed after unregistering");
  HT_CHECK(hh_ep_register(&h, NULL) == 0, "register again: %s", hh_err(&h));
  HT_CHECK(hh_target_pick(&h, t.is_gpu ? "gpu" : "ref", &t) == 0, "no device after re-registering: %s",
           hh_err(&h));
  if (m && t.dev) check_session(&h, &t, m);
  HT_CHECK(hh_ep_unregister(&h) == 0, "unregister: %s", hh_err(&h));

  /* With ORT's registration gone, drive the exports ourselves. */
  check_direct(&h);

  hh_model_free(m);
  hh_ort_close(&h);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
