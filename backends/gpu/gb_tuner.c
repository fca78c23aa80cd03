/* gb_tuner: scratch for exhaustive search (cuDNN engines in gb_conv.c,
 * cuBLASLt algorithms in gb_mmcache.c): zeroed operand buffers, a
 * workspace grown on demand, a private stream and two events for timing.
 * Its users hold the context's mutex, so timings do not interleave with
 * each other or with runs' enqueues. */
#include <string.h>

#include "backends/gpu/gb_internal.h"

hd_status *gb_tuner_open(gb_tuner *t, be_context *c) {
  memset(t, 0, sizeof *t);
  t->c = c;
  t->value_at = -1;
  GB_CHECK(gpuStreamCreateWithFlags(&t->stream, gpuStreamNonBlocking));
  GB_CHECK(gpuEventCreateWithFlags(&t->ev[0], gpuEventDefault));
  GB_CHECK(gpuEventCreateWithFlags(&t->ev[1], gpuEventDefault));
  return NULL;
}

hd_status *gb_tuner_buffer(gb_tuner *t, size_t bytes) {
  if (t->nbufs == GB_TUNER_BUFS) return hd_error(HD_ERR_INTERNAL, "tuner: more than %d buffers", GB_TUNER_BUFS);
  be_context *c = t->c;
  HD_TRY(c->alloc.alloc(c->alloc.ctx, bytes ? bytes : 1, &t->bufs[t->nbufs]));
  t->nbufs++;
  GB_CHECK(gpuMemsetAsync(t->bufs[t->nbufs - 1], 0, bytes, t->stream));
  return NULL;
}

hd_status *gb_tuner_workspace(gb_tuner *t, size_t bytes) {
  if (bytes <= t->ws_bytes) return NULL;
  be_context *c = t->c;
  if (t->ws) c->alloc.free(c->alloc.ctx, t->ws);
  t->ws = NULL;
  t->ws_bytes = 0;
  HD_TRY(c->alloc.alloc(c->alloc.ctx, bytes, &t->ws));
  t->ws_bytes = bytes;
  return NULL;
}

/* Times one candidate plan (dnn_time_fn; user: the tuner): it runs twice
 * to warm up, then in batches of runs long enough to measure (a batch of 3
 * runs of a 20 us convolution picked engines 4-14% slower than the
 * heuristics' first at batch 1 on an H100), its time the best batch's
 * mean. The plan's tensors are the tuner's buffers in order, with the
 * by-value scalar at value_at where it has one. */
hd_status *gb_tuner_time(void *user, const dnn_plan *cand, float *ms) {
  gb_tuner *t = user;
  be_context *c = t->c;
  const dnn_vendor *vd = &c->m->vd;
  *ms = -1.f;
  HD_TRY(gb_tuner_workspace(t, (size_t)cand->workspace));
  void *ptrs[GB_TUNER_BUFS + 1];
  int n = 0;
  for (int i = 0; i < t->nbufs; ++i) {
    if (i == t->value_at) ptrs[n++] = &t->value;
    ptrs[n++] = t->bufs[i];
  }
  if (t->value_at >= t->nbufs) ptrs[n++] = &t->value;
  HD_TRY(dnn_status(vd, vd->set_stream(c->handle, t->stream), "set stream", __FILE__, __LINE__));
  for (int i = 0; i < 2; ++i) HD_TRY(dnn_plan_execute(cand, c->handle, ptrs, t->ws, NULL)); /* warm up */
  /* Runs a batch: enough for ~0.2 ms at the first batch's pace, 3 to 64. */
  int runs = 3;
  float best = -1.f;
  for (int batch = 0; batch < 3; ++batch) {
    GB_CHECK(gpuEventRecord(t->ev[0], t->stream));
    for (int i = 0; i < runs; ++i) HD_TRY(dnn_plan_execute(cand, c->handle, ptrs, t->ws, NULL));
    GB_CHECK(gpuEventRecord(t->ev[1], t->stream));
    GB_CHECK(gpuEventSynchronize(t->ev[1]));
    float total = 0.f;
    GB_CHECK(gpuEventElapsedTime(&total, t->ev[0], t->ev[1]));
    const float mean = total / (float)runs;
    if (best < 0.f || mean < best) best = mean;
    if (batch == 0 && mean > 0.f && mean * 64.f < 0.2f) runs = 64;
    else if (batch == 0 && mean > 0.f) runs = (int)(0.2f / mean) < 3 ? 3 : (int)(0.2f / mean);
  }
  *ms = best;
  HD_LOG(HD_LOG_VERBOSE, "cuda: tuning: engine %lld: %.4f ms (workspace %lld)",
         (long long)cand->engine, (double)*ms, (long long)cand->workspace);
  return NULL;
}

void gb_tuner_close(gb_tuner *t) {
  be_context *c = t->c;
  if (!c) return;
  if (t->stream) (void)gpuStreamSynchronize(t->stream);
  for (int i = 0; i < t->nbufs; ++i)
    if (t->bufs[i]) c->alloc.free(c->alloc.ctx, t->bufs[i]);
  if (t->ws) c->alloc.free(c->alloc.ctx, t->ws);
  for (int i = 0; i < 2; ++i)
    if (t->ev[i]) (void)gpuEventDestroy(t->ev[i]);
  if (t->stream) (void)gpuStreamDestroy(t->stream);
  (void)gpuGetLastError();
  memset(t, 0, sizeof *t);
}
