/* gb_attention: attention at the plan's shapes, from the strided layout
 * the op computes (ops/attention.h), three ways:
 *   - the DNN library's fused SDPA (dnn_sdpa_graph): half precision
 *     without a causal cut, with or without an additive bias (the one SDPA
 *     operation of cuDNN 9.13+ without; with one, the graph of matmuls,
 *     pointwise ops and reductions cuDNN fuses); a boolean key mask (the
 *     exporters' padding) as a bias built once a run for every step that
 *     reads it (key_bias_form), every operand
 *     with unit-stride rows and 16-byte aligned starts, where the library
 *     has an engine for the shape (the heuristics' first config, or under
 *     exhaustive search the fastest candidate, timed as convolutions' are;
 *     not kept in the engine cache); `HIPDNN_EP_CUDNN_SDPA=0` turns it off
 *     (for A/B runs). Measured against the flash kernel in
 *     docs/architecture.md ("Attention");
 *   - gpu/gpu_attention.cu's fused kernel (scores stay on chip): any dtype,
 *     GQA, decode, short sequences;
 *   - with a BLAS, fp32, S * L >= GB_ATTN_GEMM_MIN_SCORES, V and the output
 *     with unit-stride head dims (Q and K either way round): scores = Q K^T as one strided-batched GEMM (tensor cores,
 *     TF32 when allowed) into the workspace, the masks and softmax in one
 *     pass over them, then P V as a GEMM writing the output in place. The
 *     fused kernel runs on the CUDA cores; at ViT's 197 x 197 scores per
 *     head it measured slower than the tensor-core GEMMs (docs/architecture.md).
 *     Where Q, K and V are views whose batch does not step by heads x
 *     head stride (ViT's packed projection read in place at batch > 1,
 *     plan_build.c), they are first packed into the workspace, so the
 *     GEMMs stay one batched call each rather than one a batch. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

#define GB_ATTN_GEMM_MIN_SCORES (176 * 176)
#define GB_ATTN_GEMM_MAX_SCORE_BYTES ((size_t)256 << 20)

typedef struct gb_attn_step {
  op_attn_layout l;
  int library;         /* the DNN library's SDPA runs it (plan) */
  dnn_plan plan;
  float scale;         /* the plan's scale, bound by value */
  void *qk, *pv;       /* the BLAS matmuls (GEMM form), or NULL: the fused kernel */
  int64_t groups;      /* GEMM form: launches (batches that do not collapse into the heads' stride) */
  size_t scores_bytes; /* GEMM form: the workspace the scores take, before the BLAS's */
  int64_t sstride;     /* GEMM form: elements from one head's scores to the next */
  int pack;            /* GEMM form: Q, K and V packed [B, H, S|L, D] into the workspace first */
  size_t pack_at[3];   /* their byte offsets in it */
  /* library form of a key mask: the step whose zeroed memory holds the
   * mask's bias ([B, L], the dtype), which that step builds each run
   * before its SDPA; -1 without one */
  int key_bias_step;
  int key_mask, key_bias_dtype; /* the mask's value and the bias's dtype */
  /* library form: the plan's workspace in this step's zeroed memory, from
   * byte ws_at on (a small one: every run clears it before its first
   * launch, so a captured graph drops the library's own clear of it,
   * gpu_graph.cu), or -1: in the run's shared workspace */
  int64_t ws_at;
} gb_attn_step;

/* A library SDPA workspace up to this size lives in its step's zeroed
 * memory (cuDNN clears part of its workspace on every execute: a node of
 * ~1 us between two kernels of a captured graph, one a layer). */
#define GB_SDPA_ZEROED_MAX ((int64_t)256 << 10)

/* Whether every operand's batch steps by heads x its head stride. */
static int batch_folds(const op_attn_layout *l, int with_qkv, int with_o) {
  return l->batch == 1 || ((!with_qkv || (l->q_st[0] == l->heads * l->q_st[1] && l->k_st[0] == l->heads * l->k_st[1] &&
                                          l->v_st[0] == l->heads * l->v_st[1])) &&
                           (!with_o || l->o_st[0] == l->heads * l->o_st[1]));
}

/* The strides Q, K and V have packed [B, H, S|L, D] (pack_st[i][4]). */
static void packed_strides(const op_attn_layout *l, int64_t st[3][4]) {
  const int64_t rows[3] = {l->seq, l->kv_len, l->kv_len}, cols[3] = {l->head_dim, l->head_dim, l->v_dim};
  for (int i = 0; i < 3; i++) st[i][3] = 1, st[i][2] = cols[i], st[i][1] = rows[i] * cols[i], st[i][0] = l->heads * st[i][1];
}

static hd_status *attention_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  return gb_support_float_input(g, n, OP_P(n)->attention.in_q);
}

/* Whether the boolean or integer mask of s is one the library takes as a
 * bias of its keys: it drops keys alone (no head or row varies it), a
 * dropped score is -inf (added or set alike), and a row whose every score
 * is dropped gives zeros (empty_zero: torch's exporters guard such rows,
 * and cuDNN gives them zeros); rows of the bias on 16 bytes. */
static int key_bias_form(const gb_step *s, const op_attn_layout *l, int64_t es) {
  const op_attention *p = &s->p.attention;
  return p->in_mask >= 0 && p->in_bias < 0 && p->mask_form == OP_ATTN_MASK_BCAST && isinf(p->fill) && p->fill < 0 &&
         p->empty_zero && l->mask_st[1] == 0 && (l->mask_st[2] == 0 || l->seq == 1) && l->kv_heads == l->heads &&
         (l->kv_len * es) % 16 == 0;
}

/* The step before s whose key bias s reads (the first to read the same mask
 * at the same dtype), or s itself, which then holds and builds it. */
static void key_bias_owner(be_plan *bp, gb_step *s, gb_attn_step *as, int dt) {
  const int self = (int)(s - bp->steps);
  as->key_mask = s->n->in[s->p.attention.in_mask];
  as->key_bias_dtype = dt;
  for (int i = 0; i < self; i++) {
    const gb_attn_step *o = bp->steps[i].f == s->f ? bp->steps[i].priv : NULL;
    if (o && o->key_bias_step == i && o->key_mask == as->key_mask && o->key_bias_dtype == dt &&
        o->l.batch == as->l.batch && o->l.kv_len == as->l.kv_len) {
      as->key_bias_step = i;
      return;
    }
  }
  as->key_bias_step = self;
  s->zeroed_bytes = (size_t)(as->l.batch * as->l.kv_len) * hd_dtype_size(dt);
}

/* The library's SDPA plan, when the attention is one it takes (library
 * set); NULL and no plan when not. A boolean mask goes as a bias of its
 * keys where key_bias_form takes it (cuDNN has no engine for a boolean
 * mask: dnn.h, dnn_sdpa); any other stays with the flash kernel, and so
 * does a bias under Softmax's rule for a row whose every score is -inf
 * (NaN): cuDNN gives such rows zeros, the Attention op's rule (empty_zero;
 * measured: test_backend_cuda attention_sdpa_key_bias). */
static hd_status *library_form(be_plan *bp, gb_step *s, gb_attn_step *as, size_t *ws) {
  be_context *c = bp->bg->c;
  const op_attention *p = &s->p.attention;
  const op_attn_layout *l = &as->l;
  int dt = gb_t(bp, s->n->in[p->in_q])->dtype;
  const char *env = getenv("HIPDNN_EP_CUDNN_SDPA");
  if ((dt != HD_DT_F16 && dt != HD_DT_BF16) || l->causal || l->heads % l->kv_heads != 0 || l->head_dim % 8 != 0 ||
      l->v_dim % 8 != 0 || (env && strcmp(env, "0") == 0))
    return NULL;
  int has_bias = p->in_bias >= 0, key_bias = key_bias_form(s, l, (int64_t)hd_dtype_size(dt));
  if ((p->in_mask >= 0 && !key_bias) || (has_bias && (!p->empty_zero || l->kv_heads != l->heads ||
                                       gb_t(bp, s->n->in[p->in_bias])->dtype != dt ||
                                       (l->bias_st[3] != 1 && l->kv_len > 1))))
    return NULL;
  /* unit-stride rows; every start and row, head and batch step on 16 bytes */
  const int64_t *st[4] = {l->q_st, l->k_st, l->v_st, l->o_st};
  const int64_t off[4] = {l->q_off, l->k_off, l->v_off, 0};
  const int ins[3] = {p->in_q, p->in_k, p->in_v};
  int64_t es = (int64_t)hd_dtype_size(dt);
  for (int i = 0; i < 4; i++) {
    if (st[i][3] != 1 || off[i] * es % 16 != 0) return NULL;
    for (int k = l->batch > 1 ? 0 : 1; k < 3; k++)
      if (st[i][k] * es % 16 != 0) return NULL;
    const ir_tensor *t = gb_t(bp, i < 3 ? s->n->in[ins[i]] : s->n->out[0]);
    if (t->storage == IR_ST_ALIAS && t->offset % 16 != 0) return NULL;
  }
  if (has_bias) { /* the bias's rows, heads and batches too (zero where it broadcasts) */
    for (int k = 0; k < 3; k++)
      if (l->bias_st[k] * es % 16 != 0) return NULL;
    const ir_tensor *t = gb_t(bp, s->n->in[p->in_bias]);
    if (t->storage == IR_ST_ALIAS && t->offset % 16 != 0) return NULL;
  }
  dnn_sdpa a;
  memset(&a, 0, sizeof a);
  dnn_tensor *io[4] = {&a.q, &a.k, &a.v, &a.o};
  const int64_t rows[4] = {l->seq, l->kv_len, l->kv_len, l->seq}, cols[4] = {l->head_dim, l->head_dim, l->v_dim, l->v_dim};
  for (int i = 0; i < 4; i++) {
    const int64_t dims[4] = {l->batch, i == 1 || i == 2 ? l->kv_heads : l->heads, rows[i], cols[i]};
    dnn_tensor_packed(io[i], i + 1, dt, 4, dims);
    memcpy(io[i]->strides, st[i], sizeof io[i]->strides[0] * 4);
  }
  const int64_t scores[4] = {l->batch, l->heads, l->seq, l->kv_len};
  dnn_plan_opts po = {.workspace_limit = (int64_t)c->opts.workspace_limit, .nuids = 5, .uids = {1, 2, 3, 4, 5}};
  if (has_bias || key_bias) {
    dnn_tensor_packed(&a.bias, 6, dt, 4, scores);
    if (key_bias) {
      const int64_t kst[4] = {l->kv_len, 0, 0, 1};
      memcpy(a.bias.strides, kst, sizeof kst);
    } else {
      memcpy(a.bias.strides, l->bias_st, sizeof l->bias_st);
    }
    a.has_bias = 1;
    po.uids[po.nuids++] = 6;
  }
  a.scale_uid = 5;
  as->scale = l->scale;
  dnn_bag bag;
  dnn_bag_init(&bag, &c->m->vd);
  void *g = NULL;
  hd_status *e = dnn_sdpa_graph(&bag, c->handle, &a, &g);
  if (e) {
    dnn_bag_free(&bag);
  } else {
    gb_tuner tu;
    memset(&tu, 0, sizeof tu);
    /* exhaustive search times the one-operation form's candidates (the
     * tuner binds Q, K, V, O and the scale) */
    int timed = c->opts.algo_search == BE_ALGO_EXHAUSTIVE && po.nuids == 5;
    if (timed) { /* the candidates timed over zeroed operands of the views' spans */
      e = gb_tuner_open(&tu, c);
      for (int i = 0; i < 4 && !e; i++) {
        int64_t span = 1;
        for (int k = 0; k < 4; k++) span += (io[i]->dims[k] - 1) * io[i]->strides[k];
        e = gb_tuner_buffer(&tu, (size_t)(span * es));
      }
      tu.value = l->scale;
      tu.value_at = 4;
      po.time_fn = gb_tuner_time;
      po.time_user = &tu;
      po.max_candidates = 8;
    }
    if (!e) e = dnn_plan_build(&bag, c->handle, g, &po, &as->plan);
    else dnn_bag_free(&bag);
    if (timed) gb_tuner_close(&tu);
  }
  if (e && hd_status_code(e) == HD_ERR_OUT_OF_MEMORY) return e;
  if (e) {
    HD_LOG(HD_LOG_VERBOSE, "%s: attention on our kernel: %s", gb_backend_name, hd_status_msg(e));
    hd_status_free(e);
    return NULL;
  }
  as->library = 1;
  if (key_bias) key_bias_owner(bp, s, as, dt);
  const char *wenv = getenv("HIPDNN_EP_SDPA_WORKSPACE"); /* "shared": in the run's workspace (A/B runs) */
  if (as->plan.workspace > 0 && as->plan.workspace <= GB_SDPA_ZEROED_MAX && !(wenv && !strcmp(wenv, "shared"))) {
    as->ws_at = (int64_t)((s->zeroed_bytes + 255) / 256 * 256);
    s->zeroed_bytes = (size_t)as->ws_at + (size_t)as->plan.workspace;
  } else {
    *ws = (size_t)as->plan.workspace;
  }
  HD_LOG(HD_LOG_VERBOSE, "%s: attention on the library's SDPA: engine %lld, workspace %lld", gb_backend_name,
         (long long)as->plan.engine, (long long)as->plan.workspace);
  return NULL;
}

/* The GEMM form's matmuls, when it applies; NULL (and no matmuls) when not. */
static hd_status *gemm_form(be_plan *bp, gb_step *s, gb_attn_step *as, size_t *ws) {
  be_context *c = bp->bg->c;
  const op_attn_layout *l = &as->l;
  int dt = gb_t(bp, s->n->in[s->p.attention.in_q])->dtype;
  if (!c->blas || dt != HD_DT_F32 || l->kv_heads != l->heads || l->seq * l->kv_len < GB_ATTN_GEMM_MIN_SCORES)
    return NULL;
  /* Q, K and V packed first where only their batch keeps the GEMMs from
   * one call (the output's must fold: it is written in place); each
   * packed head then starts on 256 bytes */
  int64_t pst[3][4];
  packed_strides(l, pst);
  as->pack = !batch_folds(l, 1, 0) && batch_folds(l, 0, 1) && (pst[0][1] * (int64_t)sizeof(float)) % 256 == 0 &&
             (pst[1][1] * (int64_t)sizeof(float)) % 256 == 0 && (pst[2][1] * (int64_t)sizeof(float)) % 256 == 0;
  const int64_t *q_st = as->pack ? pst[0] : l->q_st, *k_st = as->pack ? pst[1] : l->k_st,
                *v_st = as->pack ? pst[2] : l->v_st;
  /* Q and K may be stored either way round (exporters often write K^T) */
  int ta = q_st[3] != 1, tb = k_st[3] == 1;
  if ((ta && q_st[2] != 1) || (!tb && k_st[2] != 1) || v_st[3] != 1 || l->o_st[3] != 1) return NULL;
  /* the BLAS picks algorithms for 256-byte aligned matrices: every matrix's start must be */
  int64_t bmul = l->batch > 1, unpacked = !as->pack;
  const int64_t starts[] = {unpacked * l->q_off, unpacked * l->k_off, unpacked * l->v_off, bmul * q_st[0], q_st[1],
                            bmul * k_st[0], k_st[1], bmul * v_st[0], v_st[1], bmul * l->o_st[0], l->o_st[1]};
  for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
    if ((starts[i] * (int64_t)sizeof(float)) % 256 != 0) return NULL;
  /* and the tensors themselves: a strided alias (a Split's column range) starts on 16 bytes only */
  const int ops[3] = {s->p.attention.in_q, s->p.attention.in_k, s->p.attention.in_v};
  for (int i = 0; i < 3 && !as->pack; i++) {
    const ir_tensor *t = gb_t(bp, s->n->in[ops[i]]);
    if (t->storage == IR_ST_ALIAS && t->offset % 256 != 0) return NULL;
  }
  as->sstride = (l->seq * l->kv_len + 63) / 64 * 64; /* each head's scores 256-byte aligned */
  size_t scores = sizeof(float) * (size_t)(l->batch * l->heads * as->sstride);
  if (scores > GB_ATTN_GEMM_MAX_SCORE_BYTES) return NULL;
  size_t packed = 0;
  for (int i = 0; i < 3 && as->pack; i++) {
    as->pack_at[i] = (scores + 255) / 256 * 256 + packed;
    packed += sizeof(float) * (size_t)(l->batch * pst[i][0]);
  }
  /* the batch dim folds into the heads' when every operand steps by heads x head stride */
  int fold = as->pack || batch_folds(l, 1, 1);
  int64_t batch = fold ? l->batch * l->heads : l->heads;
  as->groups = fold ? 1 : l->batch;
  gb_mm_desc qk = {.dtype = dt, .allow_tf32 = c->opts.use_tf32, .m = l->seq, .n = l->kv_len, .k = l->head_dim,
                   .trans_a = ta, .trans_b = tb, .lda = ta ? q_st[3] : q_st[2],
                   .ldb = tb ? k_st[2] : k_st[3], .batch = batch,
                   .stride_a = q_st[1], .stride_b = k_st[1], .stride_d = as->sstride, .alpha = l->scale};
  gb_mm_desc pv = {.dtype = dt, .allow_tf32 = c->opts.use_tf32, .m = l->seq, .n = l->v_dim, .k = l->kv_len,
                   .lda = l->kv_len, .ldb = v_st[2], .batch = batch, .stride_a = as->sstride,
                   .stride_b = v_st[1], .ldd = l->o_st[2], .stride_d = l->o_st[1], .alpha = 1.0f};
  size_t limit = c->opts.workspace_limit ? c->opts.workspace_limit : (size_t)32 << 20, need1 = 0, need2 = 0;
  hd_status *st = gb_mm_get(c, &qk, limit, &as->qk, &need1);
  if (!st) st = gb_mm_get(c, &pv, limit, &as->pv, &need2);
  if (st) { /* no algorithm: the fused kernel runs it */
    if (as->qk) gb_mm_put(c, as->qk);
    if (as->pv) gb_mm_put(c, as->pv);
    as->qk = as->pv = NULL;
    if (hd_status_code(st) == HD_ERR_OUT_OF_MEMORY) return st;
    hd_status_free(st);
    return NULL;
  }
  as->scores_bytes = (scores + 255) / 256 * 256 + packed;
  *ws = as->scores_bytes + (need1 > need2 ? need1 : need2);
  return NULL;
}

/* Q, K and V packed [B, H, S|L, D] into the workspace (GEMM form, pack). */
static hd_status *pack_operands(const gb_attn_step *as, const gpu_attn_desc *d, char *ws, void *stream) {
  const op_attn_layout *l = &as->l;
  const void *src[3] = {d->q, d->k, d->v};
  const int64_t *st[3] = {l->q_st, l->k_st, l->v_st}, off[3] = {l->q_off, l->k_off, l->v_off};
  const int64_t rows[3] = {l->seq, l->kv_len, l->kv_len}, cols[3] = {l->head_dim, l->head_dim, l->v_dim};
  for (int i = 0; i < 3; i++) {
    gpu_strided m = {.rank = 4, .dims = {l->batch, l->heads, rows[i], cols[i]}, .offset = off[i]};
    for (int k = 0; k < 4; k++) m.stride[k] = st[i][k];
    GB_KERNEL(gpu_strided_copy(src[i], ws + as->pack_at[i], sizeof(float), &m, stream));
  }
  return NULL;
}

static hd_status *attention_compile(be_plan *bp, gb_step *s, size_t *ws) {
  *ws = 0;
  if (s->n->kind == OP_MS_ATTENTION) return hd_error(HD_ERR_INTERNAL, "%s: %s was not lowered", gb_backend_name, s->n->op_type);
  gb_attn_step *as = calloc(1, sizeof *as);
  if (!as) return GB_OOM();
  s->priv = as;
  as->key_bias_step = -1;
  as->ws_at = -1;
  HD_TRY(op_attention_layout(s->n, &s->p.attention, bp->p.t, &as->l));
  if (as->l.head_dim > GPU_ATTN_MAX_DIM || as->l.v_dim > GPU_ATTN_MAX_DIM)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: attention head size %lld/%lld over %d", gb_backend_name,
                    (long long)as->l.head_dim, (long long)as->l.v_dim, GPU_ATTN_MAX_DIM);
  HD_TRY(library_form(bp, s, as, ws));
  return as->library ? NULL : gemm_form(bp, s, as, ws);
}

static hd_status *attention_run(be_plan *bp, gb_step *s, const gb_launch *lc) {
  const ir_node *n = s->n;
  const op_attention *p = &s->p.attention;
  const gb_attn_step *as = s->priv;
  const op_attn_layout *l = &as->l;
  gpu_attn_desc d = {.batch = l->batch, .heads = l->heads, .kv_heads = l->kv_heads, .seq = l->seq,
                     .kv_len = l->kv_len, .head_dim = l->head_dim, .v_dim = l->v_dim,
                     .q_off = l->q_off, .k_off = l->k_off, .v_off = l->v_off,
                     .scale = l->scale, .fill = p->fill, .causal = l->causal, .mask_add = p->mask_add,
                     .mask_lens = p->mask_form == OP_ATTN_MASK_LENS, .mask_invert = p->mask_invert,
                     .empty_zero = p->empty_zero, .tf32 = bp->bg->c->opts.use_tf32,
                     .q = gb_addr(bp, n->in[p->in_q], &lc->b), .k = gb_addr(bp, n->in[p->in_k], &lc->b),
                     .v = gb_addr(bp, n->in[p->in_v], &lc->b), .out = gb_addr(bp, n->out[0], &lc->b)};
  for (int i = 0; i < 4; i++) {
    d.q_st[i] = l->q_st[i], d.k_st[i] = l->k_st[i], d.v_st[i] = l->v_st[i], d.o_st[i] = l->o_st[i];
    d.mask_st[i] = l->mask_st[i], d.bias_st[i] = l->bias_st[i];
  }
  d.mask = ir_input_addr(&bp->p, n, p->in_mask, &lc->b);
  d.bias = ir_input_addr(&bp->p, n, p->in_bias, &lc->b);
  if (d.mask) d.mask_dtype = gb_t(bp, n->in[p->in_mask])->dtype;
  int dt = gb_t(bp, n->in[p->in_q])->dtype;
  if (as->library) {
    size_t es = hd_dtype_size(dt);
    void *bias = (void *)d.bias;
    if (as->key_bias_step >= 0) { /* the mask's bias, built by its first reader (even one that runs the flash kernel) */
      bias = (char *)lc->zeroed + bp->steps[as->key_bias_step].zeroed_at;
      if (as->key_bias_step == (int)(s - bp->steps)) GB_KERNEL(gpu_attention_key_bias(&d, bias, dt, lc->stream));
    }
    /* in the plan's uid order: Q, K, V, O, the scale, [bias] */
    void *ptrs[6] = {(char *)d.q + l->q_off * es, (char *)d.k + l->k_off * es, (char *)d.v + l->v_off * es, d.out,
                     (void *)&as->scale, bias};
    /* the plan was made for 16-byte aligned operands (arena and ORT
     * allocations are); a caller's odd buffer takes the flash kernel */
    int aligned = 1;
    for (int i = 0; i < as->plan.nuids; i++) aligned &= i == 4 || (uintptr_t)ptrs[i] % 16 == 0;
    if (aligned) {
      be_context *c = bp->bg->c;
      void *ws = as->ws_at >= 0 ? (char *)lc->zeroed + s->zeroed_at + as->ws_at : lc->workspace;
      HD_TRY(dnn_plan_execute(&as->plan, c->handle, ptrs, ws, gb_exec_varpack(lc, bp, s)));
      return NULL;
    }
  }
  if (!as->qk) {
    GB_KERNEL(gpu_attention(&d, dt, lc->stream));
    return NULL;
  }
  /* the GEMM form: fp32, so element offsets are float offsets */
  be_context *c = bp->bg->c;
  float *scores = lc->workspace;
  void *bws = (char *)lc->workspace + as->scores_bytes;
  size_t bws_bytes = lc->workspace_bytes - as->scores_bytes;
  int64_t per = (as->groups > 1 ? l->heads : l->batch * l->heads) * as->sstride;
  if (as->pack) {
    HD_TRY(pack_operands(as, &d, lc->workspace, lc->stream));
    d.q = (char *)lc->workspace + as->pack_at[0], d.k = (char *)lc->workspace + as->pack_at[1];
    d.v = (char *)lc->workspace + as->pack_at[2];
  }
  const int64_t q_off = as->pack ? 0 : l->q_off, k_off = as->pack ? 0 : l->k_off, v_off = as->pack ? 0 : l->v_off;
  for (int64_t g = 0; g < as->groups; g++) {
    const float *q = (const float *)d.q + q_off + g * l->q_st[0], *k = (const float *)d.k + k_off + g * l->k_st[0];
    HD_TRY(c->m->blas.mm_run(c->blas, as->qk, q, k, NULL, scores + g * per, NULL, bws, bws_bytes, lc->stream));
  }
  GB_KERNEL(gpu_attention_softmax(&d, scores, as->sstride, lc->stream));
  for (int64_t g = 0; g < as->groups; g++) {
    const float *v = (const float *)d.v + v_off + g * l->v_st[0];
    HD_TRY(c->m->blas.mm_run(c->blas, as->pv, scores + g * per, v, NULL, (float *)d.out + g * l->o_st[0], NULL, bws,
                             bws_bytes, lc->stream));
  }
  return NULL;
}

static void attention_release(be_plan *bp, gb_step *s) {
  gb_attn_step *as = s->priv;
  if (as && as->library) dnn_plan_free(&as->plan);
  if (as && as->qk) gb_mm_put(bp->bg->c, as->qk);
  if (as && as->pv) gb_mm_put(bp->bg->c, as->pv);
  free(as);
  s->priv = NULL;
}

const gb_family gb_family_attention = {
    .name = "attention",
    .support = attention_support,
    .compile = attention_compile,
    .run = attention_run,
    .release = attention_release,
};
