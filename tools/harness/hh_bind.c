/* IO binding: a session run on inputs and outputs that already live in the
 * memory of the EP's device, as an application that keeps its tensors on
 * the GPU runs it (no copies by ORT around each run). */
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tools/harness/harness.h"

int hh_binding_create(hh_ort *h, OrtSession *s, const OrtEpDevice *dev, hh_binding *b) {
  const OrtApi *a = h->api;
  const char *name = NULL;
  memset(b, 0, sizeof *b);
  /* No DEFAULT memory info: the device computes in host memory (our
   * reference backend's CPU device registers none). */
  b->mem = dev ? a->EpDevice_MemoryInfo(dev, OrtDeviceMemoryType_DEFAULT) : NULL;
  b->on_device = b->mem != NULL;
  if (!b->mem) b->mem = h->cpu_mem;
  if (hh_check(h, a->MemoryInfoGetName(b->mem, &name), "MemoryInfoGetName") ||
      hh_check(h, a->MemoryInfoGetId(b->mem, &b->mem_id), "MemoryInfoGetId"))
    return 1;
  snprintf(b->mem_name, sizeof b->mem_name, "%s", name ? name : "?");
  /* The session's allocator for that memory: for device memory, our EP's
   * (it counts against gpu_mem_limit as the session's own tensors do). */
  if (hh_check(h, a->CreateAllocator(s, b->mem, &b->alloc), "CreateAllocator(session, device memory info)") ||
      hh_check(h, a->CreateIoBinding(s, &b->io), "CreateIoBinding")) {
    hh_binding_free(h, b);
    return 1;
  }
  return 0;
}

static void release_values(hh_ort *h, OrtValue **v, size_t *n) {
  for (size_t i = 0; i < *n; i++)
    if (v[i]) h->api->ReleaseValue(v[i]), v[i] = NULL;
  *n = 0;
}

/* Copies host data into a tensor in b's memory, or back. */
static int copy_between(hh_ort *h, const hh_binding *b, OrtValue *dev_value, hh_tensor *host, int to_device) {
  const OrtApi *a = h->api;
  size_t bytes = host->n * hd_dtype_size(host->dtype);
  if (!b->on_device) {
    void *p = NULL;
    if (hh_check(h, a->GetTensorMutableData(dev_value, &p), "GetTensorMutableData")) return 1;
    if (bytes) memcpy(to_device ? p : host->data, to_device ? host->data : p, bytes);
    return 0;
  }
  OrtValue *hv = NULL;
  if (hh_tensor_to_value(h, host, &hv)) return 1;
  OrtValue *src = to_device ? hv : dev_value, *dst = to_device ? dev_value : hv;
  int rc = hh_check(h, a->CopyTensors(h->env, (const OrtValue *const *)&src, &dst, NULL, 1),
                    to_device ? "CopyTensors(host to device)" : "CopyTensors(device to host)");
  a->ReleaseValue(hv);
  return rc;
}

int hh_binding_set_inputs(hh_ort *h, OrtSession *s, hh_binding *b, const hh_tensor *inputs, size_t n_in) {
  const OrtApi *a = h->api;
  hh_io *ios = calloc(HH_BIND_MAX_IO, sizeof *ios);
  size_t ni = 0, no = 0;
  int rc = 1;
  if (!ios) return hh_fail(h, "out of host memory");
  a->ClearBoundInputs(b->io);
  a->ClearBoundOutputs(b->io);
  release_values(h, b->in, &b->n_in);
  release_values(h, b->out, &b->n_out);
  b->outputs_bound = 0;
  if (hh_session_inputs(h, s, ios, HH_BIND_MAX_IO, &ni)) goto done;
  if (ni != n_in || ni > HH_BIND_MAX_IO) {
    hh_fail(h, "model has %zu inputs, %zu given (at most %d bound)", ni, n_in, HH_BIND_MAX_IO);
    goto done;
  }
  for (size_t i = 0; i < ni; i++) {
    const hh_tensor *t = &inputs[i];
    if (hh_check(h,
                 a->CreateTensorAsOrtValue(b->alloc, t->dims, (size_t)t->rank, (ONNXTensorElementDataType)t->dtype,
                                           &b->in[i]),
                 "CreateTensorAsOrtValue(device memory)"))
      goto done;
    b->n_in = i + 1;
    if (copy_between(h, b, b->in[i], (hh_tensor *)t, 1)) goto done;
    if (hh_check(h, a->BindInput(b->io, ios[i].name, b->in[i]), "BindInput")) goto done;
  }
  if (hh_session_outputs(h, s, ios, HH_BIND_MAX_IO, &no)) goto done;
  if (no > HH_BIND_MAX_IO) {
    hh_fail(h, "model has %zu outputs (at most %d bound)", no, HH_BIND_MAX_IO);
    goto done;
  }
  for (size_t i = 0; i < no; i++)
    if (hh_check(h, a->BindOutputToDevice(b->io, ios[i].name, b->mem), "BindOutputToDevice")) goto done;
  rc = 0;
done:
  free(ios);
  return rc;
}

/* After the first run, binds the outputs ORT allocated, so later runs write
 * into them rather than allocate again. */
static int keep_outputs(hh_ort *h, OrtSession *s, hh_binding *b) {
  const OrtApi *a = h->api;
  OrtValue **vals = NULL;
  size_t count = 0;
  hh_io *ios = NULL;
  size_t no = 0;
  int rc = 1;
  if (hh_check(h, a->GetBoundOutputValues(b->io, h->alloc, &vals, &count), "GetBoundOutputValues")) return 1;
  ios = calloc(HH_BIND_MAX_IO, sizeof *ios);
  int bad = !ios ? hh_fail(h, "out of host memory") : hh_session_outputs(h, s, ios, HH_BIND_MAX_IO, &no);
  if (!bad && (no != count || count > HH_BIND_MAX_IO))
    bad = hh_fail(h, "IO binding: %zu outputs bound, %zu in the model", count, no);
  for (size_t i = 0; i < count; i++) {
    if (bad) a->ReleaseValue(vals[i]);
    else b->out[i] = vals[i];
  }
  if (bad) goto done;
  b->n_out = count;
  a->ClearBoundOutputs(b->io);
  for (size_t i = 0; i < count; i++)
    if (hh_check(h, a->BindOutput(b->io, ios[i].name, b->out[i]), "BindOutput")) goto done;
  b->outputs_bound = 1;
  rc = 0;
done:
  if (vals) {
    OrtStatus *st = a->AllocatorFree(h->alloc, vals);
    if (st) a->ReleaseStatus(st);
  }
  free(ios);
  return rc;
}

int hh_binding_run(hh_ort *h, OrtSession *s, hh_binding *b) {
  const OrtApi *a = h->api;
  if (hh_check(h, a->RunWithBinding(s, NULL, b->io), "RunWithBinding") ||
      hh_check(h, a->SynchronizeBoundOutputs(b->io), "SynchronizeBoundOutputs"))
    return 1;
  return b->outputs_bound ? 0 : keep_outputs(h, s, b);
}

int hh_binding_outputs(hh_ort *h, hh_binding *b, hh_tensor *outputs, size_t n_out) {
  const OrtApi *a = h->api;
  for (size_t i = 0; i < n_out; i++) memset(&outputs[i], 0, sizeof outputs[i]);
  if (!b->outputs_bound || n_out > b->n_out) return hh_fail(h, "IO binding: no outputs (run first)");
  for (size_t i = 0; i < n_out; i++) {
    OrtTensorTypeAndShapeInfo *info = NULL;
    ONNXTensorElementDataType et;
    size_t rank = 0;
    int64_t dims[HH_MAX_RANK];
    int bad = hh_check(h, a->GetTensorTypeAndShape(b->out[i], &info), "GetTensorTypeAndShape") ||
              hh_check(h, a->GetTensorElementType(info, &et), "GetTensorElementType") ||
              hh_check(h, a->GetDimensionsCount(info, &rank), "GetDimensionsCount") ||
              (rank > HH_MAX_RANK && hh_fail(h, "output rank %zu > %d", rank, HH_MAX_RANK)) ||
              hh_check(h, a->GetDimensions(info, dims, rank), "GetDimensions") ||
              (hh_tensor_alloc(&outputs[i], (int)et, (int)rank, dims) &&
               hh_fail(h, "cannot hold an output of type %d", (int)et)) ||
              copy_between(h, b, b->out[i], &outputs[i], 0);
    if (info) a->ReleaseTensorTypeAndShapeInfo(info);
    if (bad) {
      for (size_t j = 0; j <= i; j++) hh_tensor_free(&outputs[j]);
      return 1;
    }
  }
  return 0;
}

void hh_binding_free(hh_ort *h, hh_binding *b) {
  if (!h->api) return;
  if (b->io) h->api->ClearBoundInputs(b->io), h->api->ClearBoundOutputs(b->io);
  release_values(h, b->in, &b->n_in);
  release_values(h, b->out, &b->n_out);
  if (b->io) h->api->ReleaseIoBinding(b->io);
  if (b->alloc) h->api->ReleaseAllocator(b->alloc);
  memset(b, 0, sizeof *b);
}
