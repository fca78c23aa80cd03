/* The usage example of the README the project grew from
 * (../shared/seeds/hipdnn-ep-readme.md), step by step in C: register the
 * library as "HipDNN", take the device whose EP name is "HipDNN", append it
 * with no options, create a session on a model file, run it. Then, beyond
 * the example: the Conv ran on "HipDNN", and its output matches the CPU
 * EP's on the same input. On a machine without a GPU the "HipDNN" device is
 * the CPU, running the reference backend.
 *
 *   test_seed_readme MODEL.onnx   (a one-Conv model: the example's op) */
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

static int failures;

/* The example's steps; the session comes back in *out. */
static int example(hh_ort *h, const char *model, OrtSession **out) {
  const OrtApi *api = h->api;
  if (hh_check(h, api->RegisterExecutionProviderLibrary(h->env, "HipDNN", hh_default_ep_lib()),
               "RegisterExecutionProviderLibrary(HipDNN)"))
    return 1;
  const OrtEpDevice *const *devices = NULL;
  size_t n = 0;
  if (hh_check(h, api->GetEpDevices(h->env, &devices, &n), "GetEpDevices")) return 1;
  const OrtEpDevice *hipdnn_device = NULL;
  for (size_t i = 0; i < n && !hipdnn_device; i++)
    if (strcmp(api->EpDevice_EpName(devices[i]), "HipDNN") == 0) hipdnn_device = devices[i];
  if (!hipdnn_device) return hh_fail(h, "no device whose EpName() is \"HipDNN\"");
  OrtSessionOptions *so = NULL;
  int rc = hh_check(h, api->CreateSessionOptions(&so), "CreateSessionOptions") ||
           hh_check(h, api->AddSessionConfigEntry(so, "session.record_ep_graph_assignment_info", "1"),
                    "AddSessionConfigEntry") ||
           hh_check(h, api->SessionOptionsAppendExecutionProvider_V2(so, h->env, &hipdnn_device, 1, NULL, NULL, 0),
                    "SessionOptionsAppendExecutionProvider_V2") ||
           hh_check(h, api->CreateSession(h->env, model, so, out), "CreateSession");
  if (so) api->ReleaseSessionOptions(so);
  if (!rc) {
    OrtHardwareDeviceType type = api->HardwareDevice_Type(api->EpDevice_Device(hipdnn_device));
    printf("HipDNN device: %s\n", type == OrtHardwareDeviceType_GPU ? "a GPU" : "the CPU (reference backend)");
  }
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
    return 2;
  }
  hh_ort h;
  if (hh_ort_open(&h, NULL)) {
    fprintf(stderr, "FAIL: %s\n", hh_err(&h));
    return 1;
  }
  OrtSession *ours = NULL, *cpu = NULL;
  hh_session_cfg cpu_cfg = {0};
  enum { MAX_IN = 4 };
  hh_io in[MAX_IN];
  size_t nin = 0;
  hh_tensor x[MAX_IN], y_ours = {0}, y_cpu = {0};
  memset(x, 0, sizeof x);
  if (example(&h, argv[1], &ours)) {
    HT_CHECK(0, "the example: %s", hh_err(&h));
    goto done;
  }
  hh_assign as = {0};
  if (hh_assignment(&h, ours, &as) == 0) {
    HT_CHECK(hh_assign_count(&as, "HipDNN", "Conv") == 1, "the Conv is not on HipDNN:");
    hh_assign_print(&as, stdout, "  ");
    hh_assign_free(&as);
  } else {
    HT_CHECK(0, "%s", hh_err(&h));
  }
  if (hh_session_create(&h, &cpu_cfg, NULL, argv[1], &cpu) || hh_session_inputs(&h, ours, in, MAX_IN, &nin)) {
    HT_CHECK(0, "%s", hh_err(&h));
    goto done;
  }
  HT_CHECK(nin >= 1 && nin <= MAX_IN, "the model has %zu inputs", nin);
  if (nin < 1 || nin > MAX_IN) goto done;
  /* Every input random (the conformance model takes the weight as an input). */
  for (size_t i = 0; i < nin; i++) {
    if (hh_tensor_alloc(&x[i], in[i].dtype, in[i].rank, in[i].dims)) {
      HT_CHECK(0, "input %s: %s", in[i].name, hh_err(&h));
      goto done;
    }
    hh_tensor_fill_random(&x[i], 11 + i);
  }
  if (hh_session_run(&h, ours, x, nin, &y_ours, 1) || hh_session_run(&h, cpu, x, nin, &y_cpu, 1)) {
    HT_CHECK(0, "run: %s", hh_err(&h));
    goto done;
  }
  hh_tol tol = hh_tol_for(y_cpu.dtype, 1);
  size_t bad = 0, signal = 0;
  for (size_t i = 0; i < y_cpu.n && y_ours.n == y_cpu.n; i++) {
    double a = hh_tensor_get(&y_ours, i), b = hh_tensor_get(&y_cpu, i);
    bad += !(a - b <= tol.atol + tol.rtol * (b < 0 ? -b : b) && b - a <= tol.atol + tol.rtol * (b < 0 ? -b : b));
    signal += b != 0;
  }
  HT_CHECK(y_ours.n == y_cpu.n && bad == 0, "%zu of %zu outputs differ from the CPU EP's", bad, y_cpu.n);
  HT_CHECK(signal > y_cpu.n / 2, "the CPU EP's output is mostly zeros: the comparison carries no signal");
  printf("output: %zu values, all within tolerance of the CPU EP\n", y_cpu.n);
done:
  for (size_t i = 0; i < MAX_IN; i++) hh_tensor_free(&x[i]);
  hh_tensor_free(&y_ours);
  hh_tensor_free(&y_cpu);
  hh_session_free(&h, ours);
  hh_session_free(&h, cpu);
  if (h.api) {
    OrtStatus *st = h.api->UnregisterExecutionProviderLibrary(h.env, "HipDNN");
    if (st) h.api->ReleaseStatus(st);
  }
  hh_ort_close(&h);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
