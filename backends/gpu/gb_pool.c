/* gb_pool: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
 * Windowed 2D/3D pools run as the DNN library's resample graph where it has
 * an engine for the shape (measured with bench/dnn_ops.c on an H200: cuDNN
 * 0.070 ms vs our kernel 0.189 ms for ResNet-50's max pool at batch 32,
 * identical outputs); everything else, and every pool on a vendor without
 * resample (hipDNN), runs on gpu/gpu_pool.cu: dilations, ceil-mode
 * overhang, counted pads, 1D. Global pools are the whole-input window on
 * the library (6 us vs our row reduction's 10.5 us at ResNet-50's head),
 * else one 32-lane reduction per [n, c] row. Channels last (plan_layout):
 * windows on our channels-last kernel, 16-byte loads over the channels;
 * global pools on the library with channels-last strides, else that
 * kernel with the whole input as its window. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

typedef struct gb_pool_step {
  int library;        /* runs plan (the DNN library), not our kernel */
  dnn_plan plan;
  int global;
  int is_max;
  int channels_last;
  int64_t n, c;       /* images, channels */
  int64_t nc, len; /* global: rows and row length */
  gpu_pool_desc d;
} gb_pool_step;

static hd_status *pool_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  HD_TRY(gb_check_float_io(g, n, 1));
  int r = g->values[n->in[0]].rank;
  if (r >= 0 && (r < 3 || r > 5))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of rank %d (1-3 spatial dims)", gb_backend_name,
                    n->op_type, r);
  if (!OP_P(n)->pool.global && (OP_P(n)->pool.nspatial < 1 || OP_P(n)->pool.nspatial > 3))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s with %d spatial dims", gb_backend_name,
                    n->op_type, OP_P(n)->pool.nspatial);
  return NULL;
}

/* The DNN library's resample plan for a 2D/3D pool (d: lifted to 3 dims,
 * the last ns real), when the library has an engine and the pool is one it
 * computes the ONNX way: max, or average without the pads counted; no
 * dilation, no ceil-mode overhang. (cuDNN 9.19's average counting the pads
 * gave a different answer with asymmetric pads: test_backend_cuda's
 * avgpool_incl_pad_floor.) Otherwise ps->library stays 0 (our kernel) and
 * no error is returned, unless memory ran out. Called with the context's
 * mutex held. */
static hd_status *library_plan(be_context *c, const ir_tensor *x, const ir_tensor *y, int ns,
                               const gpu_pool_desc *d, gb_pool_step *ps, size_t *ws) {
  *ws = 0;
  if (ns < 2 || (!d->is_max && d->count_include_pad)) return NULL;
  /* cuDNN 9.19's bf16 resample with channels-last strides gave wrong
   * global averages (test_backend_cuda nhwc_stem_convs_gap): our kernels */
  if (ps->channels_last && x->dtype == HD_DT_BF16) return NULL;
  dnn_pool p;
  memset(&p, 0, sizeof p);
  p.is_max = d->is_max;
  p.count_include_pad = d->count_include_pad;
  p.nspatial = ns;
  for (int i = 0; i < ns; ++i) {
    int j = 3 - ns + i;
    if (d->dilation[j] != 1 ||
        (d->in[j] + d->pad_begin[j] + d->pad_end[j] - d->kernel[j]) / d->stride[j] + 1 != d->out[j])
      return NULL;
    p.window[i] = d->kernel[j];
    p.stride[i] = d->stride[j];
    p.pre_pad[i] = d->pad_begin[j];
    p.post_pad[i] = d->pad_end[j];
  }
  if (ps->channels_last) { /* NCHW-ordered dims, channels-last strides */
    int64_t xd[5], yd[5];
    xd[0] = x->dims[0], yd[0] = y->dims[0];
    xd[1] = x->dims[x->rank - 1], yd[1] = y->dims[y->rank - 1];
    for (int i = 2; i < x->rank; ++i) xd[i] = x->dims[i - 1], yd[i] = y->dims[i - 1];
    dnn_tensor_channels_last(&p.x, 1, x->dtype, x->rank, xd);
    dnn_tensor_channels_last(&p.y, 2, y->dtype, y->rank, yd);
  } else {
    dnn_tensor_packed(&p.x, 1, x->dtype, x->rank, x->dims);
    dnn_tensor_packed(&p.y, 2, y->dtype, y->rank, y->dims);
  }
  dnn_bag bag;
  dnn_bag_init(&bag, &c->m->vd);
  void *g = NULL;
  hd_status *st = dnn_pool_graph(&bag, c->handle, &p, &g);
  if (st) {
    dnn_bag_free(&bag);
  } else {
    dnn_plan_opts po = {.fp32_graph = x->dtype == HD_DT_F32,
                        .allow_tensor_core_fp32 = c->opts.use_tf32,
                        .workspace_limit = (int64_t)c->opts.workspace_limit,
                        .nuids = 2,
                        .uids = {1, 2}};
    st = dnn_plan_build(&bag, c->handle, g, &po, &ps->plan);
  }
  if (st && hd_status_code(st) == HD_ERR_OUT_OF_MEMORY) return st;
  if (st) {
    HD_LOG(HD_LOG_VERBOSE, "%s: pool on our kernel: %s", gb_backend_name, hd_status_msg(st));
    hd_status_free(st);
    return NULL;
  }
  ps->library = 1;
  *ws = (size_t)ps->plan.workspace;
  return NULL;
}

static hd_status *pool_compile(be_plan *bp, gb_step *s, size_t *ws) {
  *ws = 0;
  gb_pool_step *ps = calloc(1, sizeof *ps);
  if (!ps) return GB_OOM();
  s->priv = ps;
  const op_pool *p = &OP_P(s)->pool;
  const ir_tensor *x = gb_t(bp, s->n->in[0]), *y = gb_t(bp, s->n->out[0]);
  int ns = x->rank - 2;
  if (ns < 1 || ns > 3 || y->rank != x->rank)
    return hd_error(HD_ERR_INTERNAL, "%s: pooling of rank %d to %d", gb_backend_name, x->rank,
                    y->rank);
  ps->global = p->global;
  ps->is_max = p->is_max;
  ps->channels_last = p->channels_last;
  int s0 = p->channels_last ? 1 : 2; /* the first spatial axis */
  ps->n = x->dims[0];
  ps->c = x->dims[p->channels_last ? x->rank - 1 : 1];
  ps->nc = ps->n * ps->c;
  ps->len = ir_numel(ns, x->dims + s0);
  if (p->global && ps->len <= 0) return NULL; /* no window for the library: our kernel reports it */
  if (!p->global && p->nspatial != ns)
    return hd_error(HD_ERR_INTERNAL, "%s: pooling over %d of %d spatial dims", gb_backend_name,
                    p->nspatial, ns);
  /* Lift to 3 spatial dims: leading unit dims. A global pool is the window
   * of the whole input (for the library; our kernel reduces rows). */
  gpu_pool_desc *d = &ps->d;
  d->nspatial = 3;
  d->is_max = p->is_max;
  d->count_include_pad = p->global ? 0 : p->count_include_pad;
  int off = 3 - ns;
  for (int i = 0; i < 3; ++i) {
    int j = i - off;
    int lifted = j < 0;
    d->in[i] = lifted ? 1 : x->dims[s0 + j];
    d->out[i] = lifted ? 1 : y->dims[s0 + j];
    d->kernel[i] = lifted ? 1 : p->global ? x->dims[s0 + j] : p->kernel[j];
    d->stride[i] = lifted || p->global ? 1 : p->strides[j];
    d->dilation[i] = lifted || p->global ? 1 : (p->dilations[j] > 0 ? p->dilations[j] : 1);
    d->pad_begin[i] = lifted || p->global ? 0 : p->pads_begin[j];
    d->pad_end[i] = lifted || p->global ? 0 : p->pads_end[j];
    if (d->kernel[i] < 1 || d->stride[i] < 1)
      return hd_error(HD_ERR_INTERNAL, "%s: pooling kernel %lld stride %lld", gb_backend_name,
                      (long long)d->kernel[i], (long long)d->stride[i]);
  }
  /* Channels last, a window of ours: cuDNN's resample took 108 us for
   * ResNet-50's 3x3/2 max pool at batch 32 in fp16 (H100) */
  if (p->channels_last && !p->global) return NULL;
  return library_plan(bp->bg->c, x, y, ns, d, ps, ws);
}

/* Our kernels on [n, c, spatial] x into y. */
static hd_status *pool_kernel(const gb_pool_step *ps, const void *x, void *y, int dt, gpuStream_t stream) {
  if (ps->global)
    GB_KERNEL(gpu_global_pool(x, y, dt, ps->nc, ps->len, ps->is_max, stream));
  else
    GB_KERNEL(gpu_pool(x, y, dt, ps->nc, &ps->d, stream));
  return NULL;
}

static hd_status *pool_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_bindings *b = &l->b;
  gpuStream_t stream = l->stream;
  gb_pool_step *ps = s->priv;
  void *x = gb_addr(bp, s->n->in[0], b), *y = gb_addr(bp, s->n->out[0], b);
  int dt = gb_t(bp, s->n->in[0])->dtype;
  /* The plan was made for 16-byte aligned tensors (arena and ORT's
   * allocations are); anything else takes our kernel. */
  if (ps->library && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0) {
    void *ptrs[2] = {x, y};
    be_context *c = bp->bg->c;
    HD_TRY(dnn_plan_execute(&ps->plan, c->handle, ptrs, l->workspace, gb_exec_varpack(l, bp, s)));
  } else if (ps->channels_last) {
    GB_KERNEL(gpu_pool_channels_last(x, y, dt, ps->n, ps->c, &ps->d, stream));
  } else {
    HD_TRY(pool_kernel(ps, x, y, dt, stream));
  }
  return NULL;
}

static void pool_release(be_plan *bp, gb_step *s) {
  (void)bp;
  gb_pool_step *ps = s->priv;
  if (ps && ps->library) dnn_plan_free(&ps->plan);
  free(s->priv);
  s->priv = NULL;
}

const gb_family gb_family_pool = {
    .name = "pool",
    .support = pool_support,
    .compile = pool_compile,
    .run = pool_run,
    .release = pool_release,
};
