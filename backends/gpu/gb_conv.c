/* gb_conv: Conv, on whichever of four paths runs its shape best:
 *   depthwise 2D      gpu_conv_depthwise (one pass, epilogue fused; channels
 *                     last gpu_conv_depthwise_nhwc)
 *   1x1, stride 1     a BLAS matmul per image + gpu_conv_epilogue; of few
 *                     input channels, gpu_conv1x1_few (epilogue fused)
 *   few taps (stems)  gpu_conv_direct (c * kh * kw <= GPU_DIRECT_MAX_TAPS)
 *   everything else   the DNN library (backends/dnn): execution plans fused
 *                     with bias, residual and activation where the library
 *                     has an engine for the graph, else conv + epilogue.
 * ConvTranspose (1D/2D): the library's convolution data gradient (bias and
 * activation in gpu_conv_epilogue: its engines fuse no bias), else, with
 * no engine or no such operation (hipDNN), gpu_conv_transpose.
 * Execution plans are cached per context by convolution signature:
 * supports_node's probe, repeated layers and new plans of the same shapes
 * reuse them. After a plan's steps compile, conv_link moves the epilogue of
 * a matmul whose only reader is a depthwise conv into that conv's input
 * prologue, saving one pass over the (expanded) activation, and lets an
 * fp32 matmul's epilogue write the Cast to half precision that follows it.
 * Channels last (op_conv.channels_last, 2D Conv, plan_layout's choice): a
 * 1x1 conv is one matmul over every pixel of the batch, [N*H*W, C] x W^T,
 * with the residual (as the BLAS's C), the bias and a ReLU in the BLAS's
 * epilogue; every other shape is
 * the library's, with channels-last strides (cuDNN's half-precision engines
 * are NHWC: in NCHW they transpose both ways around each conv); with no
 * engine at the real shape, the generic kernel between two relayouts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "common/hd_diskcache.h"
#include "gpu/gpu_kernels.h"
#include "ops/ops.h"

extern const gb_family gb_family_conv; /* defined at the end of this file */

/* ---- the convolution signature and its cached plans ---- */

typedef struct gb_conv_key {
  int dtype;
  int nspatial; /* after lifting 1D to 2D */
  int has_bias, has_residual;
  int act_kind;
  float act_alpha, act_beta;
  int exhaustive; /* engines timed (BE_ALGO_EXHAUSTIVE), not the heuristic's first */
  int transpose;  /* ConvTranspose: w [x's C, y's C / group, ...] */
  int channels_last; /* stored NHWC (w [M, kh, kw, C / group]); x, w, y below are NCHW-ordered */
  int64_t x[5], w[5], y[5];
  int64_t pre[3], post[3], stride[3], dil[3];
} gb_conv_key;

typedef struct gb_conv_entry {
  gb_conv_key key;
  hd_status *err;  /* the build's failure, kept: a probe that failed fails again */
  dnn_plan plan;
  int fused;       /* bias/residual/act are inside plan; else the epilogue does them */
  int refs;        /* plan steps running it (c->mu) */
  uint64_t last_use;
} gb_conv_entry;

/* Entries kept per context; past it the least recently used entry no plan
 * step holds is dropped (failures count like plans). */
#define GB_CONV_CACHE_MAX 256

struct gb_conv_cache {
  gb_conv_entry **e;
  int n, cap;
  uint64_t tick;
};

typedef enum gb_conv_path {
  CONV_LIBRARY = 0, /* a DNN library plan (e) */
  CONV_DEPTHWISE,   /* gpu_conv_depthwise */
  CONV_MATMUL,      /* the BLAS matmul mm, then the epilogue */
  CONV_DIRECT,      /* gpu_conv_direct */
  CONV_GENERIC,     /* gpu_conv_generic: no library engine at this shape */
  CONV_TRANSPOSE,   /* gpu_conv_transpose: ConvTranspose without a library engine */
  CONV_1X1_FEW,     /* gpu_conv1x1_few: a 1x1 conv of few input channels */
} gb_conv_path;

/* Per step: how it runs and the tensors it reads. */
typedef struct gb_conv_step {
  gb_conv_path path;
  const gb_conv_entry *e;
  int vx, vw, vb, vr, vy;
  int64_t numel, channels, inner; /* of y, for the epilogue */
  void *mm;
  int mm_epilogue;                 /* the BLAS adds the residual and bias and applies act (channels last) */
  gpu_conv2d_shape shape;          /* for the kernels of our own */
  gb_conv_key key;
  /* conv_link: a CONV_MATMUL whose epilogue its reader does (deferred), and
   * that reader, a CONV_DEPTHWISE, with the producer's bias and act. */
  int deferred;
  int pre_vb;
  op_act pre_act;
  /* conv_link: a channels-first fp32 CONV_MATMUL or CONV_1X1_FEW whose
   * only reader is a Cast to fp16/bf16 writes that Cast's output (vcast, of
   * dtype cast_dtype) itself; the Cast step is absorbed. */
  int vcast, cast_dtype;
} gb_conv_step;

static gpu_conv2d_shape conv2d_shape(const gb_conv_key *k) {
  gpu_conv2d_shape s = {.n = k->x[0], .c = k->x[1], .co = k->y[1], .ih = k->x[2], .iw = k->x[3],
                        .oh = k->y[2], .ow = k->y[3], .kh = k->w[2], .kw = k->w[3],
                        .sh = k->stride[0], .sw = k->stride[1], .ph = k->pre[0], .pw = k->pre[1],
                        .dh = k->dil[0], .dw = k->dil[1]};
  return s;
}

/* One kh x kw filter per channel, as many outputs as inputs, in 2D (1D is
 * lifted to 2D by conv_key), at sizes gpu_conv_depthwise takes. */
static int is_depthwise(const gb_conv_key *k) {
  gpu_conv2d_shape s = conv2d_shape(k);
  const char *env = getenv("HIPDNN_EP_DEPTHWISE_NHWC"); /* "library": channels last on the library (A/B runs) */
  if (k->channels_last && env && !strcmp(env, "library")) return 0;
  return k->nspatial == 2 && k->w[1] == 1 && k->w[0] == k->x[1] && k->y[1] == k->x[1] &&
         (k->channels_last ? gpu_conv_depthwise_nhwc_fits(&s) : gpu_conv_depthwise_fits(&s));
}

/* A 1x1 kernel, stride 1, no pads, one group: per image, a matrix product
 * Y[M, HW] = W[M, C] X[C, HW]. */
static int is_pointwise(const gb_conv_key *k) {
  for (int i = 0; i < k->nspatial; ++i)
    if (k->w[2 + i] != 1 || k->stride[i] != 1 || k->pre[i] != 0 || k->post[i] != 0) return 0;
  return k->w[1] == k->x[1];
}

/* A channels-first pointwise conv of at most GPU_CONV1X1_MAX_C input
 * channels on gpu_conv1x1_few rather than a BLAS matmul: fp32 without TF32
 * (as fp32_first_layers runs the first layers), where the BLAS has no
 * tensor cores to use: MobileNetV2's 16 -> 96 channel expand at batch 32
 * (H200) took 175 us in cuBLASLt + the epilogue, 133 here. With TF32 or in
 * half precision the BLAS's matmul, its epilogue left to a depthwise
 * conv's prologue, measured faster (MobileNetV2 b32: fp32 with TF32 1.47
 * -> 1.53 ms, fp16 1.26 -> 1.41 on this kernel). HIPDNN_EP_CONV1X1_FEW:
 * "0" never, "fp32" with TF32 too, "all" every type (A/B runs). */
static int pointwise_few(const be_context *c, const gb_conv_key *k) {
  if (k->channels_last || !is_pointwise(k)) return 0;
  int64_t hw = 1;
  for (int i = 0; i < k->nspatial; ++i) hw *= k->x[2 + i];
  if (!gpu_conv1x1_few_fits(k->x[0], k->x[1], k->w[0], hw)) return 0;
  const char *env = getenv("HIPDNN_EP_CONV1X1_FEW");
  if (env && !strcmp(env, "0")) return 0;
  if (env && !strcmp(env, "all")) return 1;
  return k->dtype == HD_DT_F32 && (!c->opts.use_tf32 || (env && !strcmp(env, "fp32")));
}

/* The BLAS matmul of a pointwise conv; NULL (and no error) when the BLAS is
 * absent or has no algorithm, leaving the conv to the DNN library. The
 * BLAS's bias is per column, so bias, residual and activation go to the
 * epilogue kernel. Measured on an H200: cuDNN's heuristics chose a generic
 * direct kernel of about 1 ms per 1x1 conv of MobileNetV2 at batch 32. */
static hd_status *pointwise_matmul(be_context *c, const gb_conv_key *k, void **mm, size_t *ws, int *epilogue) {
  *mm = NULL;
  *ws = 0;
  *epilogue = 0;
  if (!c->blas) return NULL;
  int64_t hw = 1;
  for (int i = 0; i < k->nspatial; ++i) hw *= k->x[2 + i];
  gb_mm_desc md = {
      .dtype = k->dtype, .allow_tf32 = c->opts.use_tf32,
      .m = k->w[0], .n = hw, .k = k->x[1],
      .lda = k->x[1], .ldb = hw,
      .batch = k->x[0], .stride_a = 0, .stride_b = k->x[1] * hw,
      .alpha = 1.f,
  };
  if (k->channels_last) { /* Y[N*HW, M] = X[N*HW, C] W[M, C]^T: the bias is per column */
    md = (gb_mm_desc){
        .dtype = k->dtype, .allow_tf32 = c->opts.use_tf32,
        .m = k->x[0] * hw, .n = k->w[0], .k = k->x[1],
        .trans_b = 1, .lda = k->x[1], .ldb = k->x[1],
        .batch = 1, .alpha = 1.f,
    };
    *epilogue = k->act_kind == OP_ACT_NONE || k->act_kind == OP_ACT_RELU;
    if (*epilogue) { /* act(X W^T + residual + bias), all in the BLAS */
      md.bias = k->has_bias;
      md.relu = k->act_kind == OP_ACT_RELU;
      md.accumulate = k->has_residual;
    }
  }
  size_t limit = c->opts.workspace_limit ? c->opts.workspace_limit : (size_t)32 << 20;
  hd_status *st = gb_mm_get(c, &md, limit, mm, ws);
  if (st && hd_status_code(st) != HD_ERR_OUT_OF_MEMORY) {
    HD_LOG(HD_LOG_VERBOSE, "%s: 1x1 conv on the DNN library: %s", gb_backend_name, hd_status_msg(st));
    hd_status_free(st);
    *mm = NULL;
    *ws = 0;
    *epilogue = 0;
    return NULL;
  }
  return st;
}

/* One group, few taps: gpu_conv_direct's shapes. */
static int is_direct(const gb_conv_key *k) {
  gpu_conv2d_shape s = conv2d_shape(k);
  return !k->channels_last && k->nspatial == 2 && k->w[1] == k->x[1] && gpu_conv_direct_fits(&s);
}


/* ConvTranspose as the library's data gradient: the convolution from y's
 * shape with the same pads must give x's shape. It does except where
 * output_shape asks for one element past the natural size and
 * output_padding already reaches the stride's last position. */
static int transpose_is_gradient(const gb_conv_key *k) {
  for (int i = 0; i < k->nspatial; ++i) {
    int64_t room = k->y[2 + i] + k->pre[i] + k->post[i] - ((k->w[2 + i] - 1) * k->dil[i] + 1);
    if (room < 0 || room / k->stride[i] + 1 != k->x[2 + i]) return 0;
  }
  return 1;
}

/* The key of conv node n at the shapes in t[] with resolved parameters pc. */
static hd_status *conv_key(const ir_node *n, const op_conv *pc, const ir_tensor *t,
                           gb_conv_key *k) {
  memset(k, 0, sizeof *k);
  const ir_tensor *x = &t[n->in[0]], *w = &t[n->in[1]], *y = &t[n->out[0]];
  int ns = pc->nspatial;
  if (ns < 1 || ns > 3 || x->rank != ns + 2 || w->rank != ns + 2 || y->rank != ns + 2)
    return hd_error(HD_ERR_NOT_SUPPORTED, "cuda: Conv with %d spatial dims, ranks %d/%d/%d", ns,
                    x->rank, w->rank, y->rank);
  int dt = x->dtype;
  if (!gb_dtype_ok(dt) || w->dtype != dt)
    return hd_error(HD_ERR_NOT_SUPPORTED, "cuda: Conv of %s x %s", hd_dtype_name(dt),
                    hd_dtype_name(w->dtype));
  if (pc->has_bias && t[n->in[2]].dtype != dt)
    return hd_error(HD_ERR_NOT_SUPPORTED, "cuda: Conv bias of another type");
  if (pc->has_residual) {
    const ir_tensor *r = &t[n->in[3]];
    if (r->dtype != dt || r->rank != y->rank ||
        memcmp(r->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) != 0)
      return hd_error(HD_ERR_NOT_SUPPORTED, "cuda: Conv residual of another type or shape");
  }
  if (pc->auto_pad != OP_PAD_NOTSET)
    return hd_error(HD_ERR_INTERNAL, "cuda: Conv pads not resolved");
  if (pc->transpose && ns > 2)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: ConvTranspose in %dD (1D and 2D only)", gb_backend_name, ns);
  if (pc->channels_last && (ns != 2 || pc->transpose))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: channels-last %s in %dD (2D Conv only)", gb_backend_name,
                    n->op_type, ns);
  k->transpose = pc->transpose;
  k->channels_last = pc->channels_last;
  k->dtype = dt;
  k->has_bias = pc->has_bias;
  k->has_residual = pc->has_residual;
  k->act_kind = (int)pc->act.kind;
  k->act_alpha = pc->act.alpha;
  k->act_beta = pc->act.beta;
  /* 1D is 2D with a unit height. */
  int lift = ns == 1;
  k->nspatial = lift ? 2 : ns;
  int r = k->nspatial + 2;
  for (int i = 0, j = 0; i < r; ++i) {
    if (lift && i == 2) {
      k->x[i] = k->w[i] = k->y[i] = 1;
      continue;
    }
    int at = k->channels_last ? (j == 0 ? 0 : j == 1 ? r - 1 : j - 1) : j; /* stored axis of NCHW axis j */
    k->x[i] = x->dims[at];
    k->w[i] = w->dims[at];
    k->y[i] = y->dims[at];
    ++j;
  }
  for (int i = 0, j = 0; i < k->nspatial; ++i) {
    if (lift && i == 0) {
      k->pre[i] = k->post[i] = 0;
      k->stride[i] = k->dil[i] = 1;
      continue;
    }
    k->pre[i] = pc->pads_begin[j];
    k->post[i] = pc->pads_end[j];
    k->stride[i] = pc->strides[j];
    k->dil[i] = pc->dilations[j];
    ++j;
  }
  for (int i = 0; i < r; ++i)
    if (k->x[i] <= 0 || k->w[i] <= 0 || k->y[i] <= 0)
      return hd_error(HD_ERR_NOT_SUPPORTED, "cuda: Conv with an empty tensor");
  return NULL;
}

enum { UID_X = 1, UID_W = 2, UID_B = 3, UID_R = 4, UID_Y = 5 };

#define GB_CONV_TIMED 8 /* candidates exhaustive search times */

/* Exhaustive engine choice: the candidates timed by gb_tuner_time over
 * scratch tensors (zeros) in uid order: x, w, [b], [r], y. Called with the
 * context's mutex held. */

static hd_status *tuner_init(gb_tuner *t, be_context *c, const gb_conv_key *k,
                             dnn_plan_opts *po) {
  HD_TRY(gb_tuner_open(t, c));
  int r = k->nspatial + 2;
  size_t es = hd_dtype_size(k->dtype);
  size_t nx = (size_t)ir_numel(r, k->x), nw = (size_t)ir_numel(r, k->w);
  size_t ny = (size_t)ir_numel(r, k->y);
  for (int i = 0; i < po->nuids; ++i) {
    int64_t u = po->uids[i];
    size_t n = u == UID_X ? nx : u == UID_W ? nw : u == UID_B ? (size_t)k->y[1] : ny;
    HD_TRY(gb_tuner_buffer(t, n * es));
  }
  po->time_fn = gb_tuner_time;
  po->time_user = t;
  po->max_candidates = GB_CONV_TIMED;
  return NULL;
}

/* The library's graph of k (fused with bias, residual and activation, or
 * the convolution alone) into *bag / *og, and the plan options binding it. */
static hd_status *conv_graph(be_context *c, const gb_conv_key *k, int fuse, dnn_bag *bag, void **og,
                             dnn_plan_opts *po) {
  const dnn_vendor *vd = &c->m->vd;
  int r = k->nspatial + 2;
  dnn_conv dc;
  memset(&dc, 0, sizeof dc);
  void (*tensor)(dnn_tensor *, int64_t, int, int, const int64_t *) =
      k->channels_last ? dnn_tensor_channels_last : dnn_tensor_packed;
  tensor(&dc.x, UID_X, k->dtype, r, k->x);
  tensor(&dc.w, UID_W, k->dtype, r, k->w);
  tensor(&dc.y, UID_Y, k->dtype, r, k->y);
  int64_t bd[5] = {1, k->y[1], 1, 1, 1};
  tensor(&dc.b, UID_B, k->dtype, r, bd);
  tensor(&dc.r, UID_R, k->dtype, r, k->y);
  dc.has_bias = k->has_bias;
  dc.has_residual = k->has_residual;
  dc.act.kind = (op_act_kind)k->act_kind;
  dc.act.alpha = k->act_alpha;
  dc.act.beta = k->act_beta;
  dc.compute_dtype = HD_DT_F32;
  dc.nspatial = k->nspatial;
  dc.transpose = k->transpose;
  memcpy(dc.pre_pad, k->pre, sizeof dc.pre_pad);
  memcpy(dc.post_pad, k->post, sizeof dc.post_pad);
  memcpy(dc.stride, k->stride, sizeof dc.stride);
  memcpy(dc.dilation, k->dil, sizeof dc.dilation);

  dnn_bag_init(bag, vd);
  *og = NULL;
  hd_status *st = dnn_conv_graph(bag, c->handle, &dc, fuse, og);
  if (st) {
    dnn_bag_free(bag);
    return st;
  }
  memset(po, 0, sizeof *po);
  po->allow_tensor_core_fp32 = c->opts.use_tf32;
  po->fp32_graph = k->dtype == HD_DT_F32;
  po->workspace_limit = (int64_t)c->opts.workspace_limit;
  po->uids[po->nuids++] = UID_X;
  po->uids[po->nuids++] = UID_W;
  if (fuse && k->has_bias) po->uids[po->nuids++] = UID_B;
  if (fuse && k->has_residual) po->uids[po->nuids++] = UID_R;
  po->uids[po->nuids++] = UID_Y;
  return NULL;
}

static void dims_text(char *buf, size_t cap, int n, const int64_t *d) {
  size_t o = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && o < cap; ++i)
    o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? "," : "", (long long)d[i]);
}

/* The engine cache's key of k's graph: everything that decides which
 * candidates are timed (the graph, fused or not, the TF32 filter, the
 * workspace limit, how many are timed). */
static int conv_cache_key(const be_context *c, const gb_conv_key *k, int fuse, char *buf, size_t cap) {
  int r = k->nspatial + 2, ns = k->nspatial;
  char x[128], w[128], y[128], pre[128], post[128], st[128], dil[128]; /* room for 5 full int64s */
  dims_text(x, sizeof x, r, k->x);
  dims_text(w, sizeof w, r, k->w);
  dims_text(y, sizeof y, r, k->y);
  dims_text(pre, sizeof pre, ns, k->pre);
  dims_text(post, sizeof post, ns, k->post);
  dims_text(st, sizeof st, ns, k->stride);
  dims_text(dil, sizeof dil, ns, k->dil);
  int n = snprintf(buf, cap,
                   "conv%s%s %s x %s w %s y %s pads %s/%s strides %s dilations %s bias %d residual %d act %s %.9g %.9g "
                   "%s tf32 %d workspace_limit %zu timed %d",
                   k->transpose ? " transposed" : "", k->channels_last ? " nhwc" : "", hd_dtype_name(k->dtype), x,
                   w, y, pre, post, st, dil,
                   k->has_bias, k->has_residual, op_act_name((op_act_kind)k->act_kind), (double)k->act_alpha,
                   (double)k->act_beta, fuse ? "fused" : "alone", c->opts.use_tf32, c->opts.workspace_limit,
                   GB_CONV_TIMED);
  return n > 0 && (size_t)n < cap; /* a cut key could name two convolutions: not cached */
}

/* The plan of k's graph. Heuristic choice: the library's first engine.
 * Exhaustive: the choice in the engine cache when it replays (no timing),
 * else the fastest of the first candidates, timed here and cached. */
static hd_status *build_plan(be_context *c, const gb_conv_key *k, int fuse, dnn_plan *out) {
  dnn_bag bag;
  void *og;
  dnn_plan_opts po;
  char ckey[HD_DISKCACHE_MAX_KEY];
  dnn_engine_choice cached;
  int use_cache = k->exhaustive && c->engines && conv_cache_key(c, k, fuse, ckey, sizeof ckey);
  if (use_cache && gb_engine_cache_get(c, ckey, &cached)) {
    HD_TRY(conv_graph(c, k, fuse, &bag, &og, &po));
    po.replay = &cached;
    hd_status *st = dnn_plan_build(&bag, c->handle, og, &po, out);
    if (!st) {
      c->engines_replayed++;
      HD_LOG(HD_LOG_VERBOSE, "%s: engine cache: %s: engine %lld, no timing", gb_backend_name, ckey,
             (long long)out->engine);
      return NULL;
    }
    if (hd_status_code(st) == HD_ERR_OUT_OF_MEMORY) return st;
    HD_LOG(HD_LOG_WARNING, "%s: engine cache %s: %s: %s; timing the candidates again", gb_backend_name,
           c->opts.engine_cache_file, ckey, hd_status_msg(st));
    hd_status_free(st);
  }
  HD_TRY(conv_graph(c, k, fuse, &bag, &og, &po));
  gb_tuner tu;
  memset(&tu, 0, sizeof tu);
  if (k->exhaustive) {
    hd_status *st = tuner_init(&tu, c, k, &po);
    if (st) {
      gb_tuner_close(&tu);
      dnn_bag_free(&bag);
      return st;
    }
  }
  hd_status *st = dnn_plan_build(&bag, c->handle, og, &po, out);
  if (k->exhaustive) gb_tuner_close(&tu);
  if (!st && k->exhaustive) {
    c->engines_timed++;
    c->engines_candidates += out->ncandidates;
    if (use_cache) gb_engine_cache_put(c, ckey, &out->choice);
  }
  return st;
}

static void key_text(const gb_conv_key *k, char *buf, size_t cap) {
  snprintf(buf, cap,
           "%s%s%s x[%lld,%lld,%lld,%lld%s] w[%lld,%lld,...] y[...,%lld,%lld] bias %d res %d act %s",
           k->transpose ? "transposed " : "", k->channels_last ? "nhwc " : "", hd_dtype_name(k->dtype), (long long)k->x[0], (long long)k->x[1], (long long)k->x[2],
           (long long)k->x[3], k->nspatial == 3 ? ",..." : "", (long long)k->w[0],
           (long long)k->w[1], (long long)k->y[2], (long long)k->y[3], k->has_bias,
           k->has_residual, op_act_name((op_act_kind)k->act_kind));
}

/* The cached plan for k, built on first use. Call with c->mu held. */
static hd_status *conv_entry(be_context *c, const gb_conv_key *k, const gb_conv_entry **out) {
  if (!c->conv) {
    c->conv = calloc(1, sizeof *c->conv);
    if (!c->conv) return GB_OOM();
  }
  gb_conv_cache *cc = c->conv;
  for (int i = 0; i < cc->n; ++i) {
    if (memcmp(&cc->e[i]->key, k, sizeof *k) == 0) {
      *out = cc->e[i];
      cc->e[i]->last_use = ++cc->tick;
      if (cc->e[i]->err)
        return hd_error(hd_status_code(cc->e[i]->err), "%s", hd_status_msg(cc->e[i]->err));
      return NULL;
    }
  }
  if (cc->n >= GB_CONV_CACHE_MAX) {
    int lru = -1;
    for (int i = 0; i < cc->n; ++i)
      if (!cc->e[i]->refs && (lru < 0 || cc->e[i]->last_use < cc->e[lru]->last_use)) lru = i;
    if (lru >= 0) { /* else every entry is in use: the cache grows past its bound */
      dnn_plan_free(&cc->e[lru]->plan);
      hd_status_free(cc->e[lru]->err);
      free(cc->e[lru]);
      cc->e[lru] = cc->e[--cc->n];
    }
  }
  if (cc->n == cc->cap) {
    int cap = cc->cap ? 2 * cc->cap : 16;
    gb_conv_entry **a = realloc(cc->e, (size_t)cap * sizeof *a);
    if (!a) return GB_OOM();
    cc->e = a;
    cc->cap = cap;
  }
  gb_conv_entry *e = calloc(1, sizeof *e);
  if (!e) return hd_error(HD_ERR_OUT_OF_MEMORY, "%s:%d: out of host memory", __FILE__, __LINE__);
  e->key = *k;
  char text[256];
  key_text(k, text, sizeof text);
  int extras = k->has_bias || k->has_residual || k->act_kind != OP_ACT_NONE;
  hd_status *st = NULL;
  e->fused = 1;
  if (extras) {
    op_act a = {.kind = (op_act_kind)k->act_kind};
    if (!k->transpose && dnn_act_fusable(&a)) {
      st = build_plan(c, k, 1, &e->plan);
      if (!st) {
        HD_LOG(HD_LOG_VERBOSE, "cuda: conv %s: fused, engine %lld (of %d timed), workspace %lld",
               text, (long long)e->plan.engine, e->plan.ncandidates, (long long)e->plan.workspace);
      } else {
        HD_LOG(HD_LOG_VERBOSE, "cuda: conv %s: no fused engine (%s); conv + epilogue", text,
               hd_status_msg(st));
        hd_status_free(st);
        st = NULL;
        e->fused = 0;
      }
    } else {
      e->fused = 0;
    }
  }
  if (!extras || !e->fused) {
    st = build_plan(c, k, 0, &e->plan);
    if (!st)
      HD_LOG(HD_LOG_VERBOSE, "cuda: conv %s: %s, engine %lld (of %d timed), workspace %lld", text,
             extras ? "conv + epilogue" : "conv", (long long)e->plan.engine,
             e->plan.ncandidates, (long long)e->plan.workspace);
  }
  if (st) {
    /* Keep failures too, except memory ones (they may pass later). */
    st = hd_status_wrap(st, "cuda: conv %s: ", text);
    if (hd_status_code(st) == HD_ERR_OUT_OF_MEMORY) {
      free(e);
      return st;
    }
    e->err = st;
    st = hd_error(hd_status_code(e->err), "%s", hd_status_msg(e->err));
  }
  e->last_use = ++cc->tick;
  cc->e[cc->n++] = e;
  *out = e;
  return st;
}


void gb_conv_cache_free(be_context *c) {
  gb_conv_cache *cc = c->conv;
  if (!cc) return;
  for (int i = 0; i < cc->n; ++i) {
    dnn_plan_free(&cc->e[i]->plan);
    hd_status_free(cc->e[i]->err);
    free(cc->e[i]);
  }
  free(cc->e);
  free(cc);
  c->conv = NULL;
}

/* ---- the family ---- */

static hd_status *conv_support(be_context *c, const ir_graph *g, const ir_node *n) {
  const op_def *def = op_get(n->kind);
  if (!def || !def->infer) return hd_error(HD_ERR_INTERNAL, "cuda: no op definition for Conv");
  const op_conv *pc = &OP_P(n)->conv;

  /* Probe at a representative shape: dynamic batch 1, dynamic spatial dims
   * a little larger than the kernel's span. Axes below are NCHW's; wd(a)
   * reads W's dim of NCHW axis a however W is stored. */
  ir_tensor *t = calloc((size_t)g->nvalues, sizeof *t);
  if (!t) return GB_OOM();
  hd_status *st = NULL;
  int last = pc->channels_last;
  const ir_value *wv = &g->values[n->in[1]];
#define STORED_AXIS(a, rank) (last ? ((a) == 0 ? 0 : (a) == 1 ? (rank) - 1 : (a) - 1) : (a))
#define wd(a) (wv->rank >= 2 ? wv->dims[STORED_AXIS(a, wv->rank)] : -1)
  for (int i = 0; i < n->nin && i < 3 && !st; ++i) {
    int v = n->in[i];
    if (v == IR_NONE) continue;
    const ir_value *val = &g->values[v];
    ir_tensor *tt = &t[v];
    tt->dtype = val->dtype;
    tt->rank = val->rank;
    if (val->rank < 0 || val->rank > IR_MAX_RANK) {
      st = hd_error(HD_ERR_NOT_SUPPORTED, "cuda: Conv input of unknown rank");
      break;
    }
    for (int d = 0; d < val->rank; ++d) {
      int64_t dim = val->dims[d];
      int a = i == 2 ? d : last ? (d == 0 ? 0 : d == val->rank - 1 ? 1 : d + 1) : d; /* d's NCHW axis */
      if (dim < 0) {
        if (i == 0 && a >= 2 && a - 2 < OP_MAX_SPATIAL) {
          int64_t k = wv->rank == val->rank && wd(a) > 0 ? wd(a) : 3;
          dim = (k - 1) * pc->dilations[a - 2] + 1 + pc->strides[a - 2] + 7;
        } else if (i == 0 && a == 1 && pc->transpose && wd(0) > 0) {
          dim = wd(0);
        } else if (i == 0 && a == 1 && !pc->transpose && wd(1) > 0) {
          dim = wd(1) * pc->group;
        } else if (i == 2 && pc->transpose && wd(1) > 0) {
          dim = wd(1) * pc->group;
        } else if (i == 2 && !pc->transpose && wd(0) > 0) {
          dim = wd(0);
        } else {
          dim = 1;
        }
      }
      tt->dims[d] = dim;
    }
  }
#undef wd
#undef STORED_AXIS
  op_params p = *OP_P(n);
  p.conv.has_residual = 0; /* shaped after y below */
  if (!st) st = def->infer(g, n, t, &p);
  if (!st && pc->has_residual) {
    if (n->nin < 4 || n->in[3] == IR_NONE) {
      st = hd_error(HD_ERR_INVALID_ARG, "cuda: Conv residual flagged but absent");
    } else {
      ir_tensor *r = &t[n->in[3]], *y = &t[n->out[0]];
      r->dtype = g->values[n->in[3]].dtype;
      r->rank = y->rank;
      memcpy(r->dims, y->dims, sizeof r->dims);
      p.conv.has_residual = 1;
    }
  }
  if (!st) t[n->out[0]].dtype = g->values[n->out[0]].dtype;
  gb_conv_key k;
  if (!st) st = conv_key(n, &p.conv, t, &k);
  free(t);
  if (st) return st;
  if (k.transpose) { /* gpu_conv_transpose runs what the library cannot: no plan to probe */
    gpu_conv2d_shape s = conv2d_shape(&k);
    if (!gpu_conv_transpose_fits(&s, k.y[1] / k.w[1]))
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: ConvTranspose of sizes past the kernel's", gb_backend_name);
    return NULL;
  }
  if (is_depthwise(&k) || pointwise_few(c, &k)) return NULL; /* our kernel: no plan to probe */
  if (!is_pointwise(&k) && is_direct(&k)) return NULL;

  pthread_mutex_lock(&c->mu);
  (void)gpuSetDevice(c->ordinal);
  const gb_conv_entry *e = NULL;
  st = conv_entry(c, &k, &e);
  pthread_mutex_unlock(&c->mu);
  if (st && hd_status_code(st) != HD_ERR_OUT_OF_MEMORY) {
    /* No engine, or the library refused the graph: the node stays on ORT. */
    hd_status *ns = hd_error(HD_ERR_NOT_SUPPORTED, "%s", hd_status_msg(st));
    hd_status_free(st);
    return ns;
  }
  return st;
}


/* ConvTranspose: the library's data gradient where it has an engine, else
 * our kernel. supports_node probes no plan (the kernel runs any shape), so
 * any refusal of the library's but running out of memory falls back here:
 * a claimed node never fails for it. */
static hd_status *convt_compile(be_context *c, gb_conv_step *cs, size_t *workspace) {
  gb_conv_key k = cs->key;
  cs->path = CONV_TRANSPOSE;
  if (!transpose_is_gradient(&k)) return NULL;
  k.exhaustive = c->opts.algo_search == BE_ALGO_EXHAUSTIVE;
  const gb_conv_entry *e = NULL;
  hd_status *st = conv_entry(c, &k, &e);
  if (st && hd_status_code(st) != HD_ERR_OUT_OF_MEMORY) {
    int expected = hd_status_code(st) == HD_ERR_NOT_SUPPORTED; /* no engine, or no such operation */
    HD_LOG(expected ? HD_LOG_VERBOSE : HD_LOG_WARNING, "%s: ConvTranspose on our kernel: %s", gb_backend_name,
           hd_status_msg(st));
    hd_status_free(st);
    return NULL;
  }
  HD_TRY(st);
  cs->path = CONV_LIBRARY;
  cs->e = e;
  ((gb_conv_entry *)e)->refs++; /* the cache keeps it while this step lives */
  *workspace = (size_t)e->plan.workspace;
  return NULL;
}

static hd_status *conv_compile(be_plan *bp, gb_step *s, size_t *workspace) {
  be_context *c = bp->bg->c;
  const ir_node *n = s->n;
  gb_conv_step *cs = calloc(1, sizeof *cs);
  if (!cs) return GB_OOM();
  s->priv = cs;
  gb_conv_key k;
  HD_TRY(conv_key(n, &OP_P(s)->conv, bp->p.t, &k));
  cs->vx = n->in[0];
  cs->vw = n->in[1];
  cs->vb = OP_P(s)->conv.has_bias ? n->in[2] : IR_NONE;
  cs->vr = OP_P(s)->conv.has_residual ? n->in[3] : IR_NONE;
  cs->vy = n->out[0];
  const ir_tensor *y = &bp->p.t[cs->vy];
  cs->numel = ir_numel(y->rank, y->dims);
  cs->channels = k.y[1];
  /* the epilogue's planes: one element each when the channel is fastest */
  cs->inner = k.channels_last ? 1 : cs->channels > 0 && y->dims[0] > 0 ? cs->numel / (y->dims[0] * cs->channels) : 1;
  cs->key = k;
  cs->shape = conv2d_shape(&k);
  cs->pre_vb = IR_NONE;
  cs->vcast = IR_NONE;
  *workspace = 0;
  if (k.transpose) return convt_compile(c, cs, workspace);
  if (is_depthwise(&k)) {
    cs->path = CONV_DEPTHWISE;
    return NULL;
  }
  if (pointwise_few(c, &k)) {
    cs->path = CONV_1X1_FEW;
    return NULL;
  }
  if (is_pointwise(&k)) {
    HD_TRY(pointwise_matmul(c, &k, &cs->mm, workspace, &cs->mm_epilogue));
    if (cs->mm) {
      cs->path = CONV_MATMUL;
      return NULL;
    }
  } else if (is_direct(&k)) {
    cs->path = CONV_DIRECT;
    return NULL;
  }
  /* Tuning happens here, at real shapes, never in supports_node's probe. */
  k.exhaustive = c->opts.algo_search == BE_ALGO_EXHAUSTIVE;
  const gb_conv_entry *e = NULL;
  hd_status *st = conv_entry(c, &k, &e);
  if (st && hd_status_code(st) == HD_ERR_NOT_SUPPORTED && k.nspatial == 2 && k.w[1] > 0) {
    /* supports_node's probe found an engine at a stand-in shape; this one
     * has none. Never fail a node after claiming it: the slow kernel. */
    HD_LOG(HD_LOG_WARNING, "%s: no engine for this convolution at its real shape (%s); it runs on the "
           "generic direct kernel, slowly", gb_backend_name, hd_status_msg(st));
    hd_status_free(st);
    cs->path = CONV_GENERIC;
    if (k.channels_last) /* x, w, y (and the residual) relaid out channels first */
      *workspace = (size_t)(ir_numel(4, k.x) + ir_numel(4, k.w) + 2 * ir_numel(4, k.y)) * hd_dtype_size(k.dtype) +
                   4 * 256;
    return NULL;
  }
  HD_TRY(st);
  cs->e = e;
  ((gb_conv_entry *)e)->refs++; /* the cache keeps it while this step lives */
  *workspace = (size_t)cs->e->plan.workspace;
  return NULL;
}

/* The step of plan bp that produces value v, or NULL. */
static gb_step *producer_step(be_plan *bp, int v) {
  for (int i = 0; i < bp->nsteps; ++i)
    if (bp->steps[i].n->nout > 0 && bp->steps[i].n->out[0] == v) return &bp->steps[i];
  return NULL;
}

/* An activation of a few instructions, no exp/erf/tanh: one the depthwise
 * prologue can apply at every tap. EfficientNet's SiLU there (9 exps per
 * output at 3x3) took b1 0.51 -> 0.56 ms, b32 2.9 -> 3.1 (H100). */
static int act_cheap(int kind) {
  switch (kind) {
    case OP_ACT_NONE:
    case OP_ACT_RELU:
    case OP_ACT_LEAKY_RELU:
    case OP_ACT_CLIP:
    case OP_ACT_HARD_SIGMOID:
    case OP_ACT_HARD_SWISH:
      return 1;
    default:
      return 0;
  }
}

/* A channels-first matmul conv whose only reader is a Cast from its type to
 * fp16 or bf16 (fp32_first_layers' boundary: an fp32 layer before half
 * ones) writes the Cast's output from its epilogue, in the narrower type:
 * the fp32 result is then read once, not read and written by the epilogue
 * and read again by the Cast. MobileNetV2 at batch 32 (H200): the 16 -> 96
 * expand's epilogue and Cast were 100 + 59 us over 154 MB of fp32. */
static void conv_absorb_cast(be_plan *bp, gb_step *s) {
  gb_conv_step *cs = s->priv;
  if ((cs->path != CONV_MATMUL && cs->path != CONV_1X1_FEW) || cs->key.channels_last ||
      cs->key.dtype != HD_DT_F32 || cs->vr != IR_NONE)
    return;
  /* The Cast's output is written a step early: its arena bytes may be those
   * of the conv's inputs (freed after the conv), so the Cast must be the
   * next step (nothing else runs between) and the kernel writing it must
   * read no input at those bytes (elements of other sizes at the same
   * bytes would race; the matmul's x and w are done with before its
   * epilogue, the one-pass kernel reads them while other blocks write). */
  const char *env = getenv("HIPDNN_EP_EPILOGUE_CAST"); /* "0": the Cast runs alone (A/B runs) */
  if (env && !strcmp(env, "0")) return;
  gb_step *rs = gb_only_reader(bp, cs->vy);
  if (!rs || rs != s + 1 || rs->n->kind != OP_CAST) return;
  const int out = rs->n->out[0];
  if (gb_arena_overlap(bp, cs->vb, out) ||
      (cs->path == CONV_1X1_FEW && (gb_arena_overlap(bp, cs->vx, out) || gb_arena_overlap(bp, cs->vw, out))))
    return;
  const int to = bp->bg->g->values[out].dtype;
  if (to != HD_DT_F16 && to != HD_DT_BF16) return;
  cs->vcast = out;
  cs->cast_dtype = to;
  rs->absorbed = 1;
  HD_LOG(HD_LOG_VERBOSE, "%s: conv '%s' writes its Cast's %s output from its epilogue", gb_backend_name, s->n->name,
         hd_dtype_name(to));
}

/* A depthwise conv that is the only reader of a matmul conv's output (not a
 * partition output) takes the matmul's bias and a cheap activation as its
 * prologue: the expanded activation of an inverted-residual block is then
 * written once and read once. A residual stays with the matmul's epilogue. */
static void conv_link(be_plan *bp, gb_step *s) {
  gb_conv_step *cs = s->priv;
  conv_absorb_cast(bp, s);
  if (cs->path != CONV_DEPTHWISE || cs->key.channels_last) return;
  const ir_value *xv = &bp->bg->g->values[cs->vx];
  if (xv->nuses != 1 || xv->graph_output != IR_NONE) return;
  gb_step *ps = producer_step(bp, cs->vx);
  if (!ps || ps->f != &gb_family_conv) return;
  gb_conv_step *pc = ps->priv;
  if (pc->path != CONV_MATMUL || pc->key.channels_last || pc->vr != IR_NONE || pc->deferred ||
      !act_cheap(pc->key.act_kind))
    return;
  pc->deferred = 1;
  cs->pre_vb = pc->vb;
  cs->pre_act.kind = (op_act_kind)pc->key.act_kind;
  cs->pre_act.alpha = pc->key.act_alpha;
  cs->pre_act.beta = pc->key.act_beta;
}

static void conv_release(be_plan *bp, gb_step *s) {
  gb_conv_step *cs = s->priv;
  if (!cs) return;
  if (cs->e) {
    be_context *c = bp->bg->c;
    pthread_mutex_lock(&c->mu);
    ((gb_conv_entry *)cs->e)->refs--;
    pthread_mutex_unlock(&c->mu);
  }
  if (cs->mm) gb_mm_put(bp->bg->c, cs->mm);
  free(cs);
  s->priv = NULL;
}

/* A channels-last conv no library engine runs at its real shape: the
 * generic kernel on channels-first copies in the workspace. */
static hd_status *generic_channels_last(const gb_conv_step *cs, const void *x, const void *w, const void *bias,
                                        const void *res, void *y, const gb_launch *l) {
  const gb_conv_key *k = &cs->key;
  gpuStream_t stream = l->stream;
  size_t es = hd_dtype_size(k->dtype), at = 0;
  char *ws = l->workspace;
  void *part[4];
  const int64_t *dims[4] = {k->x, k->w, k->y, k->y};
  for (int i = 0; i < 4; ++i) {
    part[i] = ws + at;
    at += ((size_t)ir_numel(4, dims[i]) * es + 255) / 256 * 256;
  }
  if (at > l->workspace_bytes) return hd_error(HD_ERR_INTERNAL, "channels-last conv: workspace too small");
  GB_KERNEL(gb_relayout(x, part[0], k->dtype, k->x[0], k->x[1], k->x[2] * k->x[3], 1, stream));
  GB_KERNEL(gb_relayout(w, part[1], k->dtype, k->w[0], k->w[1], k->w[2] * k->w[3], 1, stream));
  if (res) GB_KERNEL(gb_relayout(res, part[3], k->dtype, k->y[0], k->y[1], k->y[2] * k->y[3], 1, stream));
  GB_KERNEL(gpu_conv_generic(part[0], part[1], bias, res ? part[3] : NULL, part[2], k->dtype, &cs->shape,
                             k->x[1] / k->w[1], k->act_kind, k->act_alpha, k->act_beta, stream));
  GB_KERNEL(gb_relayout(part[2], y, k->dtype, k->y[0], k->y[1], k->y[2] * k->y[3], 0, stream));
  return NULL;
}

static hd_status *conv_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_bindings *b = &l->b;
  gpuStream_t stream = l->stream;
  be_context *c = bp->bg->c;
  gb_conv_step *cs = s->priv;
  void *x = gb_addr(bp, cs->vx, b);
  void *w = gb_addr(bp, cs->vw, b);
  void *y = gb_addr(bp, cs->vy, b);
  void *bias = gb_addr(bp, cs->vb, b);
  void *res = gb_addr(bp, cs->vr, b);
  void *cast_out = gb_addr(bp, cs->vcast, b); /* conv_absorb_cast: the Cast's output, written here */
  if (!x || !w || !y || (cs->vb != IR_NONE && !bias) || (cs->vr != IR_NONE && !res) ||
      (cs->vcast != IR_NONE && !cast_out))
    return hd_error(HD_ERR_INVALID_ARG, "a tensor has no memory bound");
  const gb_conv_key *k = &cs->key;
  const int act = (int)((op_act_kind)k->act_kind);
  switch (cs->path) {
    case CONV_DEPTHWISE: {
      if (k->channels_last) { /* conv_link gives channels-last readers no prologue */
        GB_KERNEL(gpu_conv_depthwise_nhwc(x, w, bias, res, y, k->dtype, &cs->shape, act, k->act_alpha,
                                          k->act_beta, stream));
        return NULL;
      }
      gpu_dw_prologue pre = {.bias = gb_addr(bp, cs->pre_vb, b),
                             .act = (int)(cs->pre_act.kind),
                             .alpha = cs->pre_act.alpha,
                             .beta = cs->pre_act.beta};
      int has_pre = pre.bias || pre.act != OP_ACT_NONE;
      GB_KERNEL(gpu_conv_depthwise(x, w, bias, res, y, k->dtype, &cs->shape, act, k->act_alpha, k->act_beta,
                                   has_pre ? &pre : NULL, stream));
      return NULL;
    }
    case CONV_GENERIC:
      if (k->channels_last) return generic_channels_last(cs, x, w, bias, res, y, l);
      GB_KERNEL(gpu_conv_generic(x, w, bias, res, y, k->dtype, &cs->shape, k->x[1] / k->w[1], act, k->act_alpha,
                                 k->act_beta, stream));
      return NULL;
    case CONV_TRANSPOSE:
      if (res) return hd_error(HD_ERR_INTERNAL, "ConvTranspose with a residual");
      GB_KERNEL(gpu_conv_transpose(x, w, bias, y, k->dtype, &cs->shape, k->y[1] / k->w[1], act, k->act_alpha,
                                   k->act_beta, stream));
      return NULL;
    case CONV_1X1_FEW:
      GB_KERNEL(gpu_conv1x1_few(x, w, bias, res, cast_out ? cast_out : y, k->dtype,
                                cast_out ? cs->cast_dtype : k->dtype, k->x[0], k->x[1], k->w[0],
                                cs->numel / (k->x[0] * k->w[0]), act, k->act_alpha, k->act_beta, stream));
      return NULL;
    case CONV_DIRECT:
      GB_KERNEL(gpu_conv_direct(x, w, bias, res, y, k->dtype, &cs->shape, act, k->act_alpha,
                                k->act_beta, stream));
      return NULL;
    case CONV_MATMUL:
      if (k->channels_last) {
        HD_TRY(c->m->blas.mm_run(c->blas, cs->mm, x, w, cs->mm_epilogue ? res : NULL, y,
                                 cs->mm_epilogue ? bias : NULL, l->workspace, l->workspace_bytes, stream));
        if (cs->mm_epilogue) return NULL;
      } else {
        HD_TRY(c->m->blas.mm_run(c->blas, cs->mm, w, x, NULL, y, NULL, l->workspace, l->workspace_bytes, stream));
      }
      if (cast_out) {
        GB_KERNEL(gpu_conv_epilogue_to(y, cast_out, bias, res, k->dtype, cs->cast_dtype, cs->numel, cs->channels,
                                       cs->inner, act, k->act_alpha, k->act_beta, stream));
      } else if (!cs->deferred && (bias || res || act != OP_ACT_NONE)) {
        GB_KERNEL(gpu_conv_epilogue(y, bias, res, k->dtype, cs->numel, cs->channels, cs->inner,
                                    act, k->act_alpha, k->act_beta, stream));
      }
      return NULL;
    case CONV_LIBRARY:
      break;
  }
  void *ptrs[5];
  int np = 0;
  ptrs[np++] = x;
  ptrs[np++] = w;
  if (cs->e->fused && bias) ptrs[np++] = bias;
  if (cs->e->fused && res) ptrs[np++] = res;
  ptrs[np++] = y;
  for (int i = 0; i < np; ++i)
    if ((uintptr_t)ptrs[i] % 16)
      return hd_error(HD_ERR_INVALID_ARG, "tensor %d of the convolution is not 16-byte aligned", i);
  HD_TRY(dnn_plan_execute(&cs->e->plan, c->handle, ptrs, l->workspace, gb_exec_varpack(l, bp, s)));
  if (!cs->e->fused) {
    int act = (int)((op_act_kind)cs->e->key.act_kind);
    GB_KERNEL(gpu_conv_epilogue(y, bias, res, cs->e->key.dtype, cs->numel, cs->channels,
                                cs->inner, act, cs->e->key.act_alpha, cs->e->key.act_beta,
                                stream));
  }
  return NULL;
}

const gb_family gb_family_conv = {
    .name = "conv",
    .support = conv_support,
    .compile = conv_compile,
    .run = conv_run,
    .link = conv_link,
    .release = conv_release,
};
