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
