/* test_gpu_kernels: kernels of gpu/ that no ONNX model reaches on demand,
 * called directly against plain CPU loops: gpu_conv_generic (the last-resort
 * convolution when the DNN library has no engine at a plan's shape) and
 * gpu_conv_transpose (ConvTranspose without a data-gradient engine), over
 * groups, strides, dilations, pads, bias, residual and an activation; and
 * gpu_graph_memsets_to_kernels, a captured graph's memsets rewritten as
 * kernels (or dropped inside memory the graph clears first), against the
 * bytes the memsets themselves write; and which depthwise kernel a shape
 * goes to (host-side: it runs without a GPU too).
 * Without a GPU it prints "SKIP: <reason>" and exits 77 (1 if the host-side
 * check failed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_kernels.h"
#include "gpu/gpu_vendor.h"

typedef struct conv_case {
  const char *name;
  int64_t n, c, co, ih, iw, kh, kw, sh, sw, ph, pw, dh, dw, group;
  int bias, res, act;
  int transpose; /* gpu_conv_transpose: c in, co out, w [c, co / group, kh, kw]; no residual */
} conv_case;

static const conv_case cases[] = {
    {"plain 3x3", 2, 5, 7, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, OP_ACT_NONE, 0},
    {"stride 2, bias, relu", 1, 8, 6, 13, 10, 3, 2, 2, 2, 1, 0, 1, 1, 1, 1, 0, OP_ACT_RELU, 0},
    {"groups 4, dilation 2", 2, 8, 12, 12, 12, 3, 3, 1, 1, 2, 2, 2, 2, 4, 1, 1, OP_ACT_NONE, 0},
    {"depthwise-like, clip", 1, 6, 6, 7, 7, 5, 5, 1, 1, 2, 2, 1, 1, 6, 1, 0, OP_ACT_CLIP, 0},
    {"1d lifted, stride 3", 3, 4, 5, 1, 40, 1, 7, 1, 3, 0, 3, 1, 1, 1, 0, 1, OP_ACT_TANH, 0},
    {"T plain 3x3", 2, 5, 7, 6, 7, 3, 3, 1, 1, 0, 0, 1, 1, 1, 0, 0, OP_ACT_NONE, 1},
    {"T stride 2, pads, bias", 1, 6, 4, 5, 6, 3, 4, 2, 2, 1, 1, 1, 1, 1, 1, 0, OP_ACT_NONE, 1},
    {"T groups 2, stride 3x2, dil 2", 2, 8, 6, 4, 5, 3, 3, 3, 2, 2, 1, 2, 2, 2, 1, 0, OP_ACT_RELU, 1},
    {"T depthwise, stride 2", 1, 6, 6, 7, 7, 4, 4, 2, 2, 1, 1, 1, 1, 6, 1, 0, OP_ACT_NONE, 1},
    {"T 1d lifted, stride 4", 3, 4, 3, 1, 17, 1, 5, 1, 4, 0, 2, 1, 1, 1, 1, 0, OP_ACT_CLIP, 1},
};

static float frand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) % 2001) / 1000.0f - 1.0f;
}

static int run(const conv_case *cc) {
  gpu_conv2d_shape s = {.n = cc->n, .c = cc->c, .co = cc->co, .ih = cc->ih, .iw = cc->iw, .kh = cc->kh,
                        .kw = cc->kw, .sh = cc->sh, .sw = cc->sw, .ph = cc->ph, .pw = cc->pw, .dh = cc->dh,
                        .dw = cc->dw};
  if (cc->transpose) {
    s.oh = (cc->ih - 1) * cc->sh + (cc->kh - 1) * cc->dh + 1 - 2 * cc->ph;
    s.ow = (cc->iw - 1) * cc->sw + (cc->kw - 1) * cc->dw + 1 - 2 * cc->pw;
  } else {
    s.oh = (cc->ih + 2 * cc->ph - ((cc->kh - 1) * cc->dh + 1)) / cc->sh + 1;
    s.ow = (cc->iw + 2 * cc->pw - ((cc->kw - 1) * cc->dw + 1)) / cc->sw + 1;
  }
  size_t nx = (size_t)(s.n * s.c * s.ih * s.iw), nw = (size_t)(s.co * (s.c / cc->group) * s.kh * s.kw);
  size_t ny = (size_t)(s.n * s.co * s.oh * s.ow);
  float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)s.co * 4), *r = malloc(ny * 4);
  float *y = malloc(ny * 4), *ref = malloc(ny * 4);
  unsigned seed = 7;
  for (size_t i = 0; i < nx; i++) x[i] = frand(&seed);
  for (size_t i = 0; i < nw; i++) w[i] = frand(&seed);
  for (int64_t i = 0; i < s.co; i++) b[i] = frand(&seed);
  for (size_t i = 0; i < ny; i++) r[i] = frand(&seed);
  int64_t cpg = s.c / cc->group, copg = s.co / cc->group;
  for (int64_t img = 0; img < s.n; img++)
    for (int64_t co = 0; co < s.co; co++)
      for (int64_t oy = 0; oy < s.oh; oy++)
        for (int64_t ox = 0; ox < s.ow; ox++) {
          double acc = 0;
          for (int64_t ci = 0; ci < cpg; ci++)
            for (int64_t ky = 0; ky < s.kh; ky++)
              for (int64_t kx = 0; kx < s.kw; kx++) {
                int64_t c = co / copg * cpg + ci;
                if (cc->transpose) { /* oy = iy * sh - ph + ky * dh */
                  int64_t ty = oy + s.ph - ky * s.dh, tx = ox + s.pw - kx * s.dw;
                  if (ty < 0 || tx < 0 || ty % s.sh || tx % s.sw || ty / s.sh >= s.ih || tx / s.sw >= s.iw) continue;
                  acc += (double)x[((img * s.c + c) * s.ih + ty / s.sh) * s.iw + tx / s.sw] *
                         w[((c * copg + co % copg) * s.kh + ky) * s.kw + kx];
                  continue;
                }
                int64_t iy = oy * s.sh - s.ph + ky * s.dh, ix = ox * s.sw - s.pw + kx * s.dw;
                if (iy < 0 || iy >= s.ih || ix < 0 || ix >= s.iw) continue;
                acc += (double)x[((img * s.c + c) * s.ih + iy) * s.iw + ix] *
                       w[((co * cpg + ci) * s.kh + ky) * s.kw + kx];
              }
          size_t o = (size_t)(((img * s.co + co) * s.oh + oy) * s.ow + ox);
          float v = (float)acc + (cc->bias ? b[co] : 0.f) + (cc->res ? r[o] : 0.f);
          ref[o] = op_act_apply(cc->act, v, -0.5f, 0.5f);
        }
  void *dx, *dw, *db, *dr, *dy;
  int bad = gpuMalloc(&dx, nx * 4) || gpuMalloc(&dw, nw * 4) || gpuMalloc(&db, (size_t)s.co * 4) ||
            gpuMalloc(&dr, ny * 4) || gpuMalloc(&dy, ny * 4);
  bad = bad || gpuMemcpy(dx, x, nx * 4, gpuMemcpyHostToDevice) || gpuMemcpy(dw, w, nw * 4, gpuMemcpyHostToDevice) ||
        gpuMemcpy(db, b, (size_t)s.co * 4, gpuMemcpyHostToDevice) || gpuMemcpy(dr, r, ny * 4, gpuMemcpyHostToDevice);
  int rc = bad             ? -2
           : cc->transpose ? gpu_conv_transpose(dx, dw, cc->bias ? db : NULL, dy, GPU_DT_F32, &s, cc->group, cc->act,
                                                -0.5f, 0.5f, NULL)
                           : gpu_conv_generic(dx, dw, cc->bias ? db : NULL, cc->res ? dr : NULL, dy, GPU_DT_F32, &s,
                                              cc->group, cc->act, -0.5f, 0.5f, NULL);
  if (!rc) rc = gpuMemcpy(y, dy, ny * 4, gpuMemcpyDeviceToHost);
  double worst = 0;
  size_t nonfinite = 0;
  for (size_t i = 0; i < ny && !rc; i++) {
    if (!isfinite(y[i])) nonfinite++;
    else worst = fmax(worst, fabs((double)y[i] - ref[i]));
  }
  int ok = !rc && !nonfinite && worst < 1e-4;
  printf("%-4s %s %-30s [%lld,%lld,%lld,%lld] -> %lld: max abs %.2g%s\n", ok ? "ok" : "FAIL",
         cc->transpose ? "gpu_conv_transpose" : "gpu_conv_generic", cc->name,
         (long long)s.n, (long long)s.c, (long long)s.ih, (long long)s.iw, (long long)s.co, worst,
         rc ? " (launch failed)" : nonfinite ? " (non-finite outputs)" : "");
  gpuFree(dx), gpuFree(dw), gpuFree(db), gpuFree(dr), gpuFree(dy);
  free(x), free(w), free(b), free(r), free(y), free(ref);
  return ok;
}

/* A graph of overlapping memsets (so their order matters) of every store
 * width the rewrite picks, 2D included: rewritten, its nodes are kernels
 * and its bytes what the memsets wrote, in order; with
 * HIPDNN_EP_GRAPH_MEMSETS=keep the memsets stay. A second graph clears its
 * first `cleared` bytes first: the memsets of zeros inside them that no
 * other memset overlaps are dropped, and the bytes stay the same; a third
 * has no such clear, and keeps every memset. Each stays one chain. */
typedef struct memset_op {
  size_t at, bytes, rows, pitch;
  int value;
  int dropped; /* the rewrite drops it (second graph) */
} memset_op;

static const memset_op memset_ops[] = {
    {0, 4096, 1, 0, 0x00, 0},    /* 16-byte stores */
    {3, 1001, 1, 0, 0x5a, 0},    /* bytes */
    {64, 40, 7, 96, 0x11, 0},    /* rows: 8-byte stores */
    {518, 10, 1, 0, 0x7f, 0},    /* 2-byte stores */
    {1024, 12, 3, 20, 0xc3, 0},  /* rows of 4-byte stores */
};

enum { CLEARED = 3072 };
static const memset_op cleared_ops[] = {
    {0, CLEARED, 1, 0, 0x00, 0},  /* the clear itself */
    {256, 512, 1, 0, 0x00, 1},    /* zeros inside: dropped */
    {1024, 64, 1, 0, 0x5a, 0},    /* not zeros */
    {2048, 32, 4, 128, 0x00, 1},  /* rows of zeros inside: dropped */
    {2900, 100, 1, 0, 0x00, 0},   /* zeros overlapping the next one */
    {2950, 200, 1, 0, 0x00, 0},   /* ... and the previous one, past the cleared bytes */
    {3500, 16, 1, 0, 0x00, 0},    /* zeros outside */
};

/* The same memsets with no clear first: none is dropped. */
static const memset_op uncleared_ops[] = {
    {256, 512, 1, 0, 0x00, 0},
    {1024, 64, 1, 0, 0x5a, 0},
    {2048, 32, 4, 128, 0x00, 0},
    {3500, 16, 1, 0, 0x00, 0},
};

static int graph_memsets(const char *what, const memset_op *ops, size_t nops, int keep, size_t cleared) {
  enum { BYTES = 4096 };
  unsigned char *want = malloc(BYTES), *got = malloc(BYTES), *d = NULL;
  memset(want, 0xee, BYTES);
  size_t want_dropped = 0;
  for (size_t i = 0; i < nops; i++) {
    const memset_op *o = &ops[i];
    for (size_t r = 0; r < o->rows; r++) memset(want + o->at + r * o->pitch, o->value, o->bytes);
    want_dropped += !keep && o->dropped;
  }
  gpuStream_t st = NULL;
  gpuGraph_t g = NULL;
  gpuGraphExec_t x = NULL;
  int ok = gpuMalloc((void **)&d, BYTES) == gpuSuccess && gpuStreamCreateWithFlags(&st, gpuStreamNonBlocking) == gpuSuccess;
  ok = ok && gpuStreamBeginCapture(st, gpuStreamCaptureModeThreadLocal) == gpuSuccess;
  for (size_t i = 0; ok && i < nops; i++) {
    const memset_op *o = &ops[i];
    ok = (o->rows > 1 ? gpuMemset2DAsync(d + o->at, o->pitch, o->value, o->bytes, o->rows, st)
                      : gpuMemsetAsync(d + o->at, o->value, o->bytes, st)) == gpuSuccess;
  }
  ok = gpuStreamEndCapture(st, &g) == gpuSuccess && ok;
  int rewritten = -1, dropped = -1;
  if (keep) setenv("HIPDNN_EP_GRAPH_MEMSETS", "keep", 1);
  ok = ok && gpu_graph_memsets_to_kernels(g, cleared ? d : NULL, cleared, &rewritten, &dropped) == 0;
  unsetenv("HIPDNN_EP_GRAPH_MEMSETS");
  size_t n = 0, memsets = 0, roots = 0;
  gpuGraphNode_t nodes[16];
  ok = ok && gpuGraphGetNodes(g, NULL, &n) == gpuSuccess && n <= 16 && gpuGraphGetNodes(g, nodes, &n) == gpuSuccess;
  /* the captured chain stays one chain: a dropped node's successor still waits for its predecessor */
  ok = ok && gpuGraphGetRootNodes(g, NULL, &roots) == gpuSuccess;
  for (size_t i = 0; ok && i < n; i++) {
    gpuGraphNodeType t;
    ok = gpuGraphNodeGetType(nodes[i], &t) == gpuSuccess;
    memsets += t == gpuGraphNodeTypeMemset;
  }
  /* replayed twice over poisoned memory: the second replay reads nothing the first left */
  for (int rep = 0; ok && rep < 2; rep++) {
    ok = (rep || gpuGraphInstantiate(&x, g) == gpuSuccess) && gpuMemsetAsync(d, 0xee, BYTES, st) == gpuSuccess &&
         gpuGraphLaunch(x, st) == gpuSuccess && gpuMemcpyAsync(got, d, BYTES, gpuMemcpyDeviceToHost, st) == gpuSuccess &&
         gpuStreamSynchronize(st) == gpuSuccess;
    size_t bad = 0;
    for (size_t i = 0; ok && i < BYTES; i++) bad += got[i] != want[i];
    if (bad) {
      printf("FAIL graph memsets (%s): %zu of %d bytes differ\n", what, bad, BYTES);
      ok = 0;
    }
  }
  /* each memset node of a width the rewrite takes became a kernel node, or went */
  const size_t want_n = nops - want_dropped, want_memsets = keep ? nops : 0;
  if (ok && (memsets != want_memsets || n != want_n || dropped != (int)want_dropped || roots != 1 ||
             rewritten != (keep ? 0 : (int)want_n))) {
    printf("FAIL graph memsets (%s): %zu nodes, %zu memsets, %d rewritten, %d dropped, %zu roots\n", what, n,
           memsets, rewritten, dropped, roots);
    ok = 0;
  } else if (ok) {
    printf("ok   graph memsets (%s): %zu nodes, %zu memsets, %d dropped, bytes as the memsets write them\n", what,
           n, memsets, dropped);
  } else {
    printf("FAIL graph memsets (%s): %s\n", what, gpuGetErrorString(gpuGetLastError()));
  }
  if (x) gpuGraphExecDestroy(x);
  if (g) gpuGraphDestroy(g);
  if (st) gpuStreamDestroy(st);
  gpuFree(d);
  free(want), free(got);
  return ok;
}

/* Which depthwise kernel a shape goes to (host-side, no GPU needed): the
 * plane kernel for stride-1 7 x 7 and for 3 x 3 of 4M outputs or more,
 * the strip kernels otherwise; test_backend_cuda's depthwise cases then
 * check both kinds' numbers on a GPU. */
static int depthwise_routes(void) {
  static const struct {
    const char *name;
    gpu_conv2d_shape s;
    int plane;
  } r[] = {
      /* n, c, co, ih, iw, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw */
      {"3x3 56-wide bands (f16_dw_3x3_bands)", {8, 192, 192, 56, 56, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1}, 1},
      {"3x3 28-wide planes (f16_dw_3x3_planes)", {32, 192, 192, 28, 28, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1}, 1},
      {"3x3 MobileNetV2 b32 56x56", {32, 144, 144, 56, 56, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1}, 1},
      {"3x3 under 4M outputs (MobileNetV2 b1)", {1, 144, 144, 56, 56, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1}, 0},
      {"3x3 stride 2", {32, 96, 96, 112, 112, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1}, 0},
      {"5x5 stride 1", {32, 480, 480, 14, 14, 14, 14, 5, 5, 1, 1, 2, 2, 1, 1}, 0},
      {"7x7 (ConvNeXt b1)", {1, 96, 96, 56, 56, 56, 56, 7, 7, 1, 1, 3, 3, 1, 1}, 1},
  };
  const char *off = getenv("HIPDNN_EP_DEPTHWISE_PLANE");
  int on = !(off && !strcmp(off, "0")), fails = 0;
  for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
    int got = gpu_conv_depthwise_on_plane(&r[i].s), want = r[i].plane && on;
    printf("%s depthwise route %s: %s\n", got == want ? "ok  " : "FAIL", r[i].name, got ? "plane kernel" : "strips");
    fails += got != want;
  }
  return fails;
}

int main(void) {
  int route_fails = depthwise_routes();
  int ndev = 0;
  if (gpuGetDeviceCount(&ndev) != gpuSuccess || ndev == 0) {
    printf("SKIP: no GPU (%s)%s\n", gpuGetErrorString(gpuGetLastError()),
           route_fails ? "; but the depthwise routes FAILED" : "; the depthwise routes passed");
    return route_fails ? 1 : 77;
  }
  int fails = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) fails += !run(&cases[i]);
  const size_t nm = sizeof memset_ops / sizeof memset_ops[0], nc = sizeof cleared_ops / sizeof cleared_ops[0];
  fails += !graph_memsets("rewritten", memset_ops, nm, 0, 0) + !graph_memsets("kept", memset_ops, nm, 1, 0);
  fails += !graph_memsets("cleared first", cleared_ops, nc, 0, CLEARED) +
           !graph_memsets("cleared first, kept", cleared_ops, nc, 1, CLEARED);
  fails += !graph_memsets("no clear", uncleared_ops, sizeof uncleared_ops / sizeof uncleared_ops[0], 0, CLEARED);
  fails += route_fails;
  printf("test_gpu_kernels: %d of %zu failed\n", fails, sizeof cases / sizeof cases[0] + 6);
  return fails ? 1 : 0;
}
