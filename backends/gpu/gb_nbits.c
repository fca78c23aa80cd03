/* gb_nbits: MatMulNBits. The packed 4-bit B, its scales and zero points stay
 * on the device as the model gives them (uploaded once with the graph's
 * constants), so a step reads each weight as half a byte. Per plan, by the
 * rows M of A (its leading dims):
 *   - M up to gpu_nbits_gemv_max_m (decode, batched decode), or no BLAS:
 *     gpu_nbits_gemv, one pass over B per 8 rows of A (per 32 rows of fp16
 *     A on tensor cores from GB_NBITS_MMA_MIN_M rows), dequantised in
 *     registers, fp32 sums (a workspace of fp32 partial sums when it splits
 *     K over blocks);
 *   - larger M (prefill): column chunks of B dequantised into the workspace
 *     as A's type, each multiplied by the BLAS (tensor cores; TF32 only when
 *     use_tf32 allows) with the bias in its epilogue.
 * A one-row GEMV also does the RMS norm right before it, in its staging
 * of A, where it can (nbits_link).
 * Under glu (a gated MLP's gate and up projections in one, plan_fuse.c)
 * the GEMV applies the activation and the product as it stores; the GEMM
 * path writes each chunk's product to the workspace and gpu_nbits_glu
 * pairs its columns into y.
 * Why 8 rows: the GEMV keeps 8 rows of sums in registers, and past that
 * re-reads B once per 8 rows with its CUDA-core work growing with M, while
 * the GEMM path costs a fixed ~4.5 bytes a weight in fp16 (read 0.5, write
 * 2, read 2) with the multiply on tensor cores. Measured on an H100 (K = N
 * = 4096, fp16, block 32; test_backend_cuda --bench-nbits): GEMV 8.3,
 * 10.7, 17.0, 29.6 us at M = 1, 2, 4, 8; dequantise + GEMM 30.5-31 us for
 * any M up to 32: the two cross near M = 8. The tensor-core form costs
 * about what one row does at any M up to 32. */
#include <stdlib.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

/* Rows of fp16 A from which the GEMV runs on tensor cores (see
 * gpu_nbits.cu; HIPDNN_EP_NBITS_MMA_MIN_M overrides it, 0: never). */
#define GB_NBITS_MMA_MIN_M 2
/* Most bytes of B dequantised at once: a column chunk this small mostly
 * stays in the 50 MB L2 of an H100/H200 between the dequantising kernel's
 * writes and the GEMM's reads, and bounds the workspace for any N (an LLM
 * head of 128k columns would need 1 GB dequantised whole). */
#define GB_NBITS_CHUNK_BYTES ((size_t)16 << 20)
/* Chunk widths are multiples of 128 columns: every chunk's output, bias and
 * weights start 256-byte aligned, as the BLAS's algorithms assume. */
#define GB_NBITS_CHUNK_ALIGN 128

/* The environment's number `name` (>= 0), else dflt; read per plan.
 * Benchmarks and tests use HIPDNN_EP_NBITS_GEMV_MAX_M (the most rows the
 * GEMV takes) and HIPDNN_EP_NBITS_MMA_MIN_M to time and check each path at
 * one shape. */
static int64_t env_rows(const char *name, int64_t dflt) {
  const char *v = getenv(name);
  char *end = NULL;
  long long m = v && v[0] ? strtoll(v, &end, 10) : -1;
  return m >= 0 && end && *end == '\0' ? (int64_t)m : dflt;
}

typedef struct gb_nbits_step {
  gpu_nbits_desc d; /* sizes; pointers bound per run */
  const gb_step *norm; /* the RMS norm before it, absorbed into the GEMV's staging of A (nbits_link) */
  int dtype;
  int64_t chunk;    /* GEMM path: columns dequantised per BLAS call; 0: GEMV */
  void *mm, *mm_tail; /* the BLAS's matmuls for full chunks and the last one */
  size_t w_bytes;   /* GEMM path: workspace the dequantised chunk takes (256-aligned) */
  size_t v_bytes;   /* GEMM path under glu: the chunk's product, [m, chunk] (256-aligned) */
} gb_nbits_step;

static hd_status *nbits_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  int dt = g->values[n->in[0]].dtype;
  if (dt != HD_DT_F32 && dt != HD_DT_F16)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of %s", gb_backend_name, n->op_type, hd_dtype_name(dt));
  if (g->values[n->out[0]].rank > GPU_MAX_DIMS)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %s of rank %d", gb_backend_name, n->op_type, g->values[n->out[0]].rank);
  return NULL;
}

/* The GEMV's workspace: its K-split partial sums, 256-byte rounded. */
static size_t gemv_workspace(const gb_nbits_step *ns) {
  return (gpu_nbits_gemv_ws(&ns->d, ns->dtype) + 255) / 256 * 256;
}

static void free_mms(be_context *c, gb_nbits_step *ns) {
  if (ns->mm) gb_mm_put(c, ns->mm);
  if (ns->mm_tail) gb_mm_put(c, ns->mm_tail);
  ns->mm = ns->mm_tail = NULL;
}

/* The GEMM path's matmuls, when the BLAS has them; else the step stays on
 * the GEMV (ns->chunk 0). */
static hd_status *gemm_path(be_context *c, const gb_step *s, gb_nbits_step *ns, size_t *ws) {
  const gpu_nbits_desc *d = &ns->d;
  size_t es = hd_dtype_size(ns->dtype);
  /* Under glu the chunk's product [m, chunk] waits in the workspace too:
   * both bounded alike. */
  const size_t per_col = (size_t)(d->glu_act && d->m > d->k ? d->m : d->k) * es;
  int64_t chunk = d->n;
  if ((size_t)d->n * per_col > GB_NBITS_CHUNK_BYTES) {
    chunk = (int64_t)(GB_NBITS_CHUNK_BYTES / per_col) / GB_NBITS_CHUNK_ALIGN * GB_NBITS_CHUNK_ALIGN;
    if (chunk < GB_NBITS_CHUNK_ALIGN) chunk = GB_NBITS_CHUNK_ALIGN;
    if (chunk > d->n) chunk = d->n;
  }
  int64_t tail = d->n % chunk;
  gb_mm_desc md = {.dtype = ns->dtype, .allow_tf32 = c->opts.use_tf32, .m = d->m, .n = chunk, .k = d->k,
                   .trans_b = 1, .lda = d->k, .ldb = d->k, .batch = 1, .ldd = d->glu_act ? chunk : d->n,
                   .bias = s->p.nbits.in_bias >= 0, .alpha = 1.0f};
  size_t limit = c->opts.workspace_limit ? c->opts.workspace_limit : (size_t)32 << 20, need = 0, need_tail = 0;
  hd_status *st = gb_mm_get(c, &md, limit, &ns->mm, &need);
  if (!st && tail) {
    md.n = tail;
    if (d->glu_act) md.ldd = tail; /* the product packed as gpu_nbits_glu reads it */
    st = gb_mm_get(c, &md, limit, &ns->mm_tail, &need_tail);
  }
  if (st) {
    free_mms(c, ns);
    HD_LOG(HD_LOG_VERBOSE, "%s: %s '%s' [%lld x %lld x %lld] on the GEMV kernel: %s", gb_backend_name,
           s->n->op_type, s->n->name, (long long)d->m, (long long)d->n, (long long)d->k, hd_status_msg(st));
    if (hd_status_code(st) == HD_ERR_OUT_OF_MEMORY) return st;
    hd_status_free(st);
    *ws = gemv_workspace(ns);
    return NULL;
  }
  ns->chunk = chunk;
  ns->w_bytes = ((size_t)(chunk * d->k) * es + 255) / 256 * 256;
  ns->v_bytes = d->glu_act ? ((size_t)(d->m * chunk) * es + 255) / 256 * 256 : 0;
  *ws = ns->w_bytes + ns->v_bytes + (need > need_tail ? need : need_tail);
  return NULL;
}

static hd_status *nbits_compile(be_plan *bp, gb_step *s, size_t *ws) {
  *ws = 0;
  be_context *c = bp->bg->c;
  const ir_node *n = s->n;
  const op_nbits *p = &s->p.nbits;
  gb_nbits_step *ns = calloc(1, sizeof *ns);
  if (!ns) return GB_OOM();
  s->priv = ns;
  const ir_tensor *A = gb_t(bp, n->in[0]);
  ns->dtype = A->dtype;
  ns->d = (gpu_nbits_desc){.m = ir_numel(A->rank, A->dims) / p->k, .n = p->n, .k = p->k,
                           .block_size = p->block_size, .k_blocks = p->k_blocks, .zp_bytes = p->zp_bytes,
                           .glu_act = (int)p->glu.kind, .glu_alpha = p->glu.alpha, .glu_beta = p->glu.beta,
                           .exact = p->exact, .mma_min_m = env_rows("HIPDNN_EP_NBITS_MMA_MIN_M", GB_NBITS_MMA_MIN_M),
                           .slice_max = env_rows("HIPDNN_EP_NBITS_SLICE_MAX", 0),
                           .next_early = env_rows("HIPDNN_EP_NBITS_NEXT_EARLY", 1) != 0,
                           .bulk = env_rows("HIPDNN_EP_NBITS_BULK", 1) != 0};
  const int64_t gemv_max_m = env_rows("HIPDNN_EP_NBITS_GEMV_MAX_M", gpu_nbits_gemv_max_m(&ns->d, ns->dtype));
  if (ns->d.m > gemv_max_m && c->blas) return gemm_path(c, s, ns, ws);
  *ws = gemv_workspace(ns);
  if (ns->d.m == 1 && gpu_nbits_gemv_bulk(&ns->d, ns->dtype))
    HD_LOG(HD_LOG_VERBOSE, "%s: MatMulNBits '%s' [1 x %lld x %lld]: one row with its weights copied to shared memory",
           gb_backend_name, n->name, (long long)ns->d.n, (long long)ns->d.k);
  /* a K split's arrival counters (the run's zeroed memory) */
  s->zeroed_bytes = sizeof(unsigned) * (size_t)gpu_nbits_gemv_arrivals(&ns->d, ns->dtype);
  return NULL;
}

static hd_status *nbits_run(be_plan *bp, gb_step *s, const gb_launch *l) {
  const ir_node *n = s->n;
  const op_nbits *p = &s->p.nbits;
  const gb_nbits_step *ns = s->priv;
  gpu_nbits_desc d = ns->d;
  if (d.m == 0) return NULL;
  d.a = gb_addr(bp, n->in[0], &l->b);
  d.b = gb_addr(bp, n->in[1], &l->b);
  d.scales = gb_addr(bp, n->in[2], &l->b);
  d.zp = ir_input_addr(&bp->p, n, p->in_zp, &l->b);
  d.bias = ir_input_addr(&bp->p, n, p->in_bias, &l->b);
  d.y = gb_addr(bp, n->out[0], &l->b);
  if (!ns->chunk) {
    d.ws = l->workspace; /* the K-split partial sums, when the plan asked for them */
    d.arrivals = gb_zeroed(l, s);
    if (ns->norm) { /* A is the norm's: its input, skip and sum */
      gpu_norm_desc nd;
      gb_norm_bind(bp, ns->norm, l, &nd);
      d.a = gb_addr(bp, ns->norm->n->in[0], &l->b);
      d.norm_skip = nd.skip, d.norm_sbias = nd.sbias, d.norm_scale = nd.scale, d.norm_sum = nd.sum;
      d.norm_eps = nd.eps;
    }
    GB_KERNEL(gpu_nbits_gemv(&d, ns->dtype, l->stream));
    return NULL;
  }
  be_context *c = bp->bg->c;
  size_t es = hd_dtype_size(ns->dtype);
  void *w = l->workspace, *v = (char *)l->workspace + ns->w_bytes, *bws = (char *)v + ns->v_bytes;
  size_t bws_bytes = l->workspace_bytes - ns->w_bytes - ns->v_bytes;
  for (int64_t n0 = 0; n0 < d.n; n0 += ns->chunk) {
    int64_t nc = d.n - n0 < ns->chunk ? d.n - n0 : ns->chunk;
    GB_KERNEL(gpu_nbits_dequant(&d, n0, nc, w, ns->dtype, l->stream));
    const void *bias = d.bias ? (const char *)d.bias + (size_t)n0 * es : NULL;
    void *out = d.glu_act ? v : (char *)d.y + (size_t)n0 * es;
    HD_TRY(c->m->blas.mm_run(c->blas, nc == ns->chunk ? ns->mm : ns->mm_tail, d.a, w, NULL, out, bias, bws, bws_bytes,
                             l->stream));
    if (d.glu_act) GB_KERNEL(gpu_nbits_glu(&d, v, n0, nc, ns->dtype, l->stream));
  }
  return NULL;
}

/* A decode step's RMS norm right before a one-row GEMV whose A it makes
 * and which alone reads it is done in the GEMV's staging of A
 * (gpu_nbits_desc.norm_scale): the norm's kernel and a trip through memory
 * gone. Only what the staging computes: one packed row of K, no mean or
 * inverse outputs, no bias after the scale, no fused transposes. The sum
 * (x + skip) is written by the GEMV's first block while other blocks read
 * x and the skip, and the GEMV's output while they read all three: none
 * may share arena bytes with another. HIPDNN_EP_NBITS_NORM=0: the norm
 * runs alone (A/B runs). */
static void nbits_link(be_plan *bp, gb_step *s) {
  gb_nbits_step *ns = s->priv;
  if (!ns || ns->chunk || s == bp->steps || !env_rows("HIPDNN_EP_NBITS_NORM", 1)) return;
  gb_step *ps = s - 1;
  const gpu_norm_desc *nd = gb_norm_sizes(ps);
  if (!nd || ps->absorbed || !gpu_nbits_gemv_norm_ok(&ns->d, ns->dtype)) return;
  const ir_node *n = ps->n;
  const op_norm *p = &ps->p.norm;
  if (!p->rms || nd->rows != 1 || nd->cols != ns->d.k || nd->x_inner || nd->y_inner || s->n->in[0] != n->out[0] ||
      gb_only_reader(bp, n->out[0]) != s)
    return;
  /* op_norm keeps -1 for an absent input or output; its check made every
   * present one x's type, which is A's */
  if (p->in_chan >= 0 || p->out_chan >= 0 || p->permuted || p->out_permuted || p->out_mean >= 0 || p->out_inv >= 0 ||
      p->in_bias >= 0)
    return;
  const int skip = p->in_skip >= 0 ? n->in[p->in_skip] : IR_NONE;
  const int sum = p->out_sum >= 0 ? n->out[p->out_sum] : IR_NONE;
  if (nd->xm.col_n != nd->cols || nd->ym.col_n != nd->cols || (skip != IR_NONE && nd->sm.col_n != nd->cols)) return;
  const int y = s->n->out[0];
  if (gb_arena_overlap(bp, sum, n->in[0]) || gb_arena_overlap(bp, sum, skip) || gb_arena_overlap(bp, y, n->in[0]) ||
      gb_arena_overlap(bp, y, skip) || gb_arena_overlap(bp, y, sum))
    return;
  ns->norm = ps;
  ps->absorbed = 1;
  HD_LOG(HD_LOG_VERBOSE, "%s: MatMulNBits '%s' applies %s '%s' as it stages A", gb_backend_name, s->n->name, n->op_type,
         n->name);
}

static void nbits_release(be_plan *bp, gb_step *s) {
  gb_nbits_step *ns = s->priv;
  if (ns) free_mms(bp->bg->c, ns);
  free(ns);
  s->priv = NULL;
}

const gb_family gb_family_nbits = {
    .name = "nbits",
    .support = nbits_support,
    .compile = nbits_compile,
    .link = nbits_link,
    .run = nbits_run,
    .release = nbits_release,
};
