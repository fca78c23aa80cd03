/* gb_pointwise: elementwise families on the project's own kernels
 * (gpu/gpu_pointwise.cu): unary activations, broadcast binary ops with a
 * fused activation, inference BatchNormalization as a per-channel affine,
 * and the device copy of a view whose output leaves the partition.
 * Why kernels and not the DNN library's pointwise graphs: a standalone
 * pointwise op is one memory-bound pass either way, the library would need a
 * runtime-compiled engine per shape (plan builds of milliseconds) and still
 * lacks HardSigmoid/HardSwish modes, and a kernel takes any broadcast. */
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"
#include "ops/ops.h"

static hd_status *no_support_needed(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  return gb_check_float_io(g, n, 1);
}

static int64_t numel_of(const be_plan *bp, int v) {
  const ir_tensor *t = gb_t(bp, v);
  return ir_numel(t->rank, t->dims);
}

/* ---- unary (with a bias: the broadcast add with the act fused) ---- */

static hd_status *unary_compile(be_plan *bp, gb_step *s, size_t *ws) {
  *ws = 0;
  if (!OP_P(s)->unary.has_bias) return NULL;
  gpu_bcast *bc = calloc(1, sizeof *bc);
  if (!bc) return GB_OOM();
  s->priv = bc;
  return gb_bcast_build(gb_t(bp, s->n->in[0]), gb_t(bp, s->n->in[1]), gb_t(bp, s->n->out[0]), bc);
}

static hd_status *unary_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_bindings *b = &l->b;
  gpuStream_t stream = l->stream;
  const ir_node *n = s->n;
  const op_act *a = &OP_P(s)->unary.act;
  if (s->priv) {
    if (numel_of(bp, n->out[0]) == 0) return NULL;
    gpu_binary_acts acts = {.act = (int)a->kind, .alpha = a->alpha, .beta = a->beta, .in_act = OP_ACT_NONE};
    GB_KERNEL(gpu_binary(gb_addr(bp, n->in[0], b), gb_addr(bp, n->in[1], b), gb_addr(bp, n->out[0], b),
                         gb_t(bp, n->out[0])->dtype, GPU_BIN_ADD, (const gpu_bcast *)s->priv, &acts, stream));
    return NULL;
  }
  GB_KERNEL(gpu_unary(gb_addr(bp, n->in[0], b), gb_addr(bp, n->out[0], b), gb_t(bp, n->in[0])->dtype,
                      numel_of(bp, n->out[0]), (int)(a->kind), a->alpha, a->beta, stream));
  return NULL;
}

static void free_priv(be_plan *bp, gb_step *s);

const gb_family gb_family_unary = {
    .name = "unary",
    .support = no_support_needed,
    .compile = unary_compile,
    .run = unary_run,
    .release = free_priv,
};

/* ---- binary with broadcasting ---- */

static hd_status *binary_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  if (n->nin != 2 || n->in[0] == IR_NONE || n->in[1] == IR_NONE)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s needs two inputs", gb_backend_name, n->op_type);
  int dt = g->values[n->in[0]].dtype;
  if (dt == HD_DT_I32 || dt == HD_DT_I64) { /* masks and lengths computed on the device (an LLM's seqlens_k) */
    op_binary_kind k = OP_P(n)->binary.kind;
    if (k != OP_BIN_ADD && k != OP_BIN_SUB && k != OP_BIN_MUL && k != OP_BIN_MIN && k != OP_BIN_MAX)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: integer %s", gb_backend_name, n->op_type);
    if (g->values[n->in[1]].dtype != dt || g->values[n->out[0]].dtype != dt || g->values[n->in[0]].rank > GPU_MAX_DIMS ||
        g->values[n->in[1]].rank > GPU_MAX_DIMS)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s with mixed types or rank over %d", gb_backend_name, n->op_type,
                      GPU_MAX_DIMS);
    return NULL;
  }
  return gb_check_float_io(g, n, 2);
}

/* Element strides of t's dims as the output's dims r (right-aligned, 0
 * where t broadcasts), t read as Transpose(t, perm) when perm is given. */
static hd_status *bcast_strides(const ir_tensor *t, const int8_t *perm, const ir_tensor *y, int64_t *st) {
  int r = y->rank;
  if (t->rank > r || (perm && t->rank != r))
    return hd_error(HD_ERR_INTERNAL, "%s: broadcast of rank %d to %d", gb_backend_name, t->rank, r);
  int64_t own[GPU_MAX_DIMS], acc = 1;
  for (int i = t->rank - 1; i >= 0; --i) {
    own[i] = acc;
    acc *= t->dims[i];
  }
  for (int d = 0; d < r; ++d) {
    int k = d - (r - t->rank);
    if (k < 0) {
      st[d] = 0;
      continue;
    }
    int src = perm ? perm[k] : k;
    int64_t e = t->dims[src];
    if (e != 1 && e != y->dims[d])
      return hd_error(HD_ERR_INTERNAL, "%s: dim %lld does not broadcast to %lld", gb_backend_name, (long long)e,
                      (long long)y->dims[d]);
    st[d] = e == 1 ? 0 : own[src];
  }
  return NULL;
}

hd_status *gb_bcast_build(const ir_tensor *a, const ir_tensor *b, const ir_tensor *y,
                          gpu_bcast *bc) {
  return gb_bcast_build_perm(a, NULL, b, NULL, y, bc);
}

hd_status *gb_bcast_build_perm(const ir_tensor *a, const int8_t *pa, const ir_tensor *b, const int8_t *pb,
                               const ir_tensor *y, gpu_bcast *bc) {
  int r = y->rank;
  if (r > GPU_MAX_DIMS || a->rank > r || b->rank > r)
    return hd_error(HD_ERR_INTERNAL, "%s: broadcast of ranks %d, %d to %d", gb_backend_name,
                    a->rank, b->rank, r);
  int64_t dims[GPU_MAX_DIMS], sa[GPU_MAX_DIMS], sb[GPU_MAX_DIMS];
  HD_TRY(bcast_strides(a, pa, y, sa));
  HD_TRY(bcast_strides(b, pb, y, sb));
  for (int d = 0; d < r; ++d) dims[d] = y->dims[d];
  /* collapse: drop unit dims, merge contiguous neighbours */
  memset(bc, 0, sizeof *bc);
  for (int d = 0; d < r; ++d) {
    if (dims[d] == 1) continue;
    int k = bc->rank;
    if (k > 0 && bc->sa[k - 1] == sa[d] * dims[d] && bc->sb[k - 1] == sb[d] * dims[d]) {
      bc->dims[k - 1] *= dims[d];
      bc->sa[k - 1] = sa[d];
      bc->sb[k - 1] = sb[d];
      continue;
    }
    bc->dims[k] = dims[d];
    bc->sa[k] = sa[d];
    bc->sb[k] = sb[d];
    bc->rank++;
  }
  if (bc->rank == 0) {
    bc->rank = 1;
    bc->dims[0] = 1;
    bc->sa[0] = bc->sb[0] = 0;
  }
  return NULL;
}

static hd_status *binary_compile(be_plan *bp, gb_step *s, size_t *ws) {
  *ws = 0;
  gpu_bcast *bc = calloc(1, sizeof *bc);
  if (!bc) return GB_OOM();
  s->priv = bc;
  const ir_node *n = s->n;
  const op_binary *q = &OP_P(s)->binary;
  return gb_bcast_build_perm(gb_t(bp, n->in[0]), q->permuted & 1 ? q->perm[0] : NULL, gb_t(bp, n->in[1]),
                             q->permuted & 2 ? q->perm[1] : NULL, gb_t(bp, n->out[0]), bc);
}

static void free_priv(be_plan *bp, gb_step *s) {
  (void)bp;
  free(s->priv);
  s->priv = NULL;
}

static hd_status *binary_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_bindings *b = &l->b;
  gpuStream_t stream = l->stream;
  const ir_node *n = s->n;
  const op_binary *pb = &OP_P(s)->binary;
  int op = (int)pb->kind; /* GPU_BIN_* number them the same */
  if (numel_of(bp, n->out[0]) == 0) return NULL;
  gpu_binary_acts acts = {.act = (int)pb->act.kind, .alpha = pb->act.alpha, .beta = pb->act.beta,
                          .in_act = (int)pb->in_act.kind, .in_alpha = pb->in_act.alpha, .in_beta = pb->in_act.beta};
  GB_KERNEL(gpu_binary(gb_addr(bp, n->in[0], b), gb_addr(bp, n->in[1], b),
                       gb_addr(bp, n->out[0], b), gb_t(bp, n->out[0])->dtype, op,
                       (const gpu_bcast *)s->priv, &acts, stream));
  return NULL;
}

_Static_assert(GPU_BIN_ADD == (int)OP_BIN_ADD && GPU_BIN_DIV == (int)OP_BIN_DIV && GPU_BIN_POW == (int)OP_BIN_POW &&
                   GPU_BIN_MEAN == (int)OP_BIN_MEAN,
               "GPU_BIN_* and op_binary_kind disagree");

const gb_family gb_family_binary = {
    .name = "binary",
    .support = binary_support,
    .compile = binary_compile,
    .run = binary_run,
    .release = free_priv,
};

/* ---- BatchNormalization (inference) ---- */

static hd_status *bn_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  if (n->nin != 5)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: BatchNormalization with %d inputs",
                    gb_backend_name, n->nin);
  for (int i = 0; i < 5; ++i)
    if (n->in[i] == IR_NONE)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: BatchNormalization input %d absent",
                      gb_backend_name, i);
  return gb_check_float_io(g, n, 5);
}

static hd_status *bn_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_bindings *b = &l->b;
  gpuStream_t stream = l->stream;
  const ir_node *n = s->n;
  const ir_tensor *x = gb_t(bp, n->in[0]);
  int64_t total = ir_numel(x->rank, x->dims);
  if (total == 0) return NULL;
  int last = OP_P(s)->batchnorm.channels_last; /* channels last: planes of one element */
  int64_t ch = x->rank >= 2 ? x->dims[last ? x->rank - 1 : 1] : 1;
  int64_t inner = !last && x->rank >= 2 && x->dims[0] > 0 && ch > 0 ? total / (x->dims[0] * ch) : 1;
  GB_KERNEL(gpu_batchnorm(gb_addr(bp, n->in[0], b), gb_addr(bp, n->out[0], b),
                          gb_addr(bp, n->in[1], b), gb_addr(bp, n->in[2], b),
                          gb_addr(bp, n->in[3], b), gb_addr(bp, n->in[4], b), x->dtype,
                          OP_P(s)->batchnorm.epsilon, total, ch, inner, OP_P(s)->batchnorm.act.kind,
                          OP_P(s)->batchnorm.act.alpha, OP_P(s)->batchnorm.act.beta, stream));
  return NULL;
}

const gb_family gb_family_batchnorm = {
    .name = "batchnorm",
    .support = bn_support,
    .run = bn_run,
};

/* ---- a view that is a partition output: a device copy ---- */

static hd_status *copy_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  (void)g;
  if (n->nin < 1 || n->in[0] == IR_NONE || n->nout < 1 || n->out[0] == IR_NONE)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s without data input/output", gb_backend_name,
                    n->op_type);
  for (int i = 1; i < n->nout; ++i)
    if (n->out[i] != IR_NONE)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s with a second output", gb_backend_name,
                      n->op_type);
  return NULL; /* bytes move as they are: any dtype */
}

static hd_status *copy_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_bindings *b = &l->b;
  gpuStream_t stream = l->stream;
  const ir_node *n = s->n;
  void *src = gb_addr(bp, n->in[0], b), *dst = gb_addr(bp, n->out[0], b);
  size_t bytes = gb_t(bp, n->out[0])->nbytes;
  if (bytes && src != dst)
    GB_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDeviceToDevice, stream));
  return NULL;
}

const gb_family gb_family_view = {
    .name = "view",
    .support = copy_support,
    .run = copy_run,
};
