/* gb_gqa: GroupQueryAttention. For one new token a batch, one kernel,
 * gpu/gpu_gqa_decode.cu: it rotates Q and the new K, appends K/V to present
 * (in place when present is past's buffer, as GenAI binds it; a separate
 * present first gets past's rows from gpu/gpu_gqa.cu) and attends, every
 * load of a block in flight at once, key ranges merged by the last block of
 * each KV head to finish (its arrival counters in the run's zeroed memory).
 * Otherwise, or for shapes that kernel does not take, two steps:
 * gpu/gpu_gqa.cu rotates the new tokens' Q (into the workspace) and K and
 * appends K/V, then gpu/gpu_attention.cu's fused kernel attends. Each
 * batch's key count comes from seqlens_k on the device, so a run never
 * reads a length on the host. */
#include <math.h>

#include "backends/gpu/gb_internal.h"
#include "gpu/gpu_kernels.h"

static hd_status *gqa_support(be_context *c, const ir_graph *g, const ir_node *n) {
  (void)c;
  return gb_support_float_input(g, n, 0);
}

/* Decode (one new token): the fused kernel's rows become the query heads
 * of each KV head (every K/V tile read once per group, not once per query
 * head) and the keys are split over enough blocks to fill the GPU; the
 * ranges are merged by a second kernel. A batch-1 decode otherwise has only
 * heads blocks, each walking the whole cache. */
#define GB_GQA_BLOCKS_WANTED 264 /* about two per multiprocessor of an H100 */

static int64_t decode_splits(const op_gqa *p, const op_gqa_dims *l, int64_t *split_len) {
  int64_t group = p->heads / p->kv_heads, blocks = l->batch * p->kv_heads * ((group + 3) / 4);
  int64_t n = (GB_GQA_BLOCKS_WANTED + blocks - 1) / blocks, most = (l->present_len + 63) / 64;
  if (n > most) n = most;
  if (n < 1) n = 1;
  *split_len = ((l->present_len + n - 1) / n + 31) / 32 * 32;
  return *split_len > 0 ? (l->present_len + *split_len - 1) / *split_len : 1;
}

static size_t qbuf_bytes(const op_gqa *p, const op_gqa_dims *l, int dt) {
  size_t b = p->rotary ? hd_dtype_size(dt) * (size_t)(l->batch * l->seq * p->heads * l->head_dim) : 0;
  return (b + 255) / 256 * 256;
}

/* Decode's own kernel (gpu/gpu_gqa_decode.cu): its key ranges' partial
 * sums in the workspace after the rotated Q. 0 ranges: it does not take
 * these sizes and the fused kernel runs the step. */
static int64_t decode_kernel_splits(const op_gqa *p, const op_gqa_dims *l, int dt) {
  if (l->seq != 1) return 0;
  return gpu_gqa_decode_splits(dt, l->batch, p->kv_heads, l->head_dim, p->heads / p->kv_heads, l->present_len);
}

static size_t decode_partial_floats(const op_gqa *p, const op_gqa_dims *l, int64_t splits) {
  return splits > 1 ? (size_t)(l->batch * p->heads * splits * (l->head_dim + 2)) : 0;
}

/* Its arrival counters, one a KV head (the step's zeroed memory). */
static int64_t decode_counters(const op_gqa *p, const op_gqa_dims *l, int64_t splits) {
  return splits > 1 ? l->batch * p->kv_heads : 0;
}

static hd_status *gqa_compile(be_plan *bp, gb_step *s, size_t *ws) {
  const op_gqa *p = &s->p.gqa;
  op_gqa_dims l;
  HD_TRY(op_gqa_layout(s->n, p, bp->p.t, &l));
  if (l.head_dim > GPU_ATTN_MAX_DIM)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: attention head size %lld over %d", gb_backend_name, (long long)l.head_dim, GPU_ATTN_MAX_DIM);
  int dt = gb_t(bp, s->n->in[0])->dtype;
  *ws = qbuf_bytes(p, &l, dt);
  if (l.seq == 1) {
    int64_t len, split = decode_splits(p, &l, &len), own = decode_kernel_splits(p, &l, dt);
    size_t fused = split > 1 ? (size_t)(l.batch * p->heads * split * (l.head_dim + 2)) : 0;
    size_t mine = decode_partial_floats(p, &l, own);
    *ws += sizeof(float) * (fused > mine ? fused : mine);
    s->zeroed_bytes = sizeof(unsigned) * (size_t)decode_counters(p, &l, own);
  }
  return NULL;
}

static hd_status *gqa_run(be_plan *bp, gb_step *s, const gb_launch *lc) {
  const ir_node *n = s->n;
  const op_gqa *p = &s->p.gqa;
  op_gqa_dims l;
  HD_TRY(op_gqa_layout(n, p, bp->p.t, &l));
  int dt = gb_t(bp, n->in[0])->dtype;
  const ir_bindings *b = &lc->b;
  int64_t H = p->heads, KH = p->kv_heads, D = l.head_dim, S = l.seq, PL = l.present_len;
  gpu_gqa_desc g = {.batch = l.batch, .seq = S, .heads = H, .kv_heads = KH, .head_dim = D, .past_len = l.past_len,
                    .present_len = PL, .rot_dim = l.rot_dim, .table_rows = l.table_rows,
                    .first_prompt = p->first_prompt, .interleaved = p->interleaved,
                    .q = gb_addr(bp, n->in[0], b), .k = ir_input_addr(&bp->p, n, p->packed ? -1 : 1, b),
                    .v = ir_input_addr(&bp->p, n, p->packed ? -1 : 2, b),
                    .past_k = ir_input_addr(&bp->p, n, p->has_past ? 3 : -1, b),
                    .past_v = ir_input_addr(&bp->p, n, p->has_past ? 4 : -1, b),
                    .cos = ir_input_addr(&bp->p, n, p->rotary ? 7 : -1, b), .sin = ir_input_addr(&bp->p, n, p->rotary ? 8 : -1, b),
                    .seqlens = gb_addr(bp, n->in[5], b), .q_out = p->rotary ? lc->workspace : NULL,
                    .present_k = gb_addr(bp, n->out[1], b), .present_v = gb_addr(bp, n->out[2], b)};
  int64_t own = S == 1 ? decode_kernel_splits(p, &l, dt) : 0;
  float *partial = (float *)((char *)lc->workspace + qbuf_bytes(p, &l, dt));
  if (own > 0 && ((uintptr_t)g.present_k | (uintptr_t)g.present_v) % 16 == 0) {
    /* decode: one kernel appends and attends (a separate present gets past's rows first) */
    size_t es = hd_dtype_size(dt);
    int64_t qw = p->packed ? (H + 2 * KH) * D : H * D;
    g.past_only = 1;
    GB_KERNEL(gpu_gqa_append(&g, dt, lc->stream));
    gpu_gqa_decode_desc dd = {
        .batch = l.batch, .kv_heads = KH, .group = H / KH, .head_dim = D, .present_len = PL, .q_batch_stride = qw,
        .kv_batch_stride = p->packed ? qw : KH * D, .out_batch_stride = H * D, .window = p->window,
        .rot_dim = l.rot_dim, .table_rows = l.table_rows, .scale = l.scale, .softcap = p->softcap,
        .first_prompt = p->first_prompt, .interleaved = p->interleaved, .q = g.q,
        .k_new = p->packed ? (const char *)g.q + (size_t)(H * D) * es : g.k,
        .v_new = p->packed ? (const char *)g.q + (size_t)((H + KH) * D) * es : g.v, .cos = g.cos, .sin = g.sin,
        .k = g.present_k, .v = g.present_v, .seqlens = g.seqlens, .out = gb_addr(bp, n->out[0], b),
        .partial = own > 1 ? partial : NULL, .partial_ml = own > 1 ? partial + l.batch * H * own * D : NULL,
        .arrivals = own > 1 ? (unsigned *)gb_zeroed(lc, s) : NULL};
    int rc = gpu_gqa_decode(&dd, dt, lc->stream);
    if (rc != -1) return gb_kernel_status(rc, "gpu_gqa_decode", __FILE__, __LINE__);
    g.past_only = 0; /* not taken after all (a pointer it cannot use): the two steps below, past copied again */
  }
  GB_KERNEL(gpu_gqa_append(&g, dt, lc->stream));
  /* Q: the rotated copy [B, S, H, D], or the input (packed: Q|K|V per token) */
  int64_t qw = p->rotary ? H * D : p->packed ? (H + 2 * KH) * D : H * D;
  gpu_attn_desc d = {.batch = l.batch, .heads = H, .kv_heads = KH, .seq = S, .kv_len = PL, .head_dim = D, .v_dim = D,
                     .q_st = {S * qw, D, qw, 1}, .k_st = {KH * PL * D, PL * D, D, 1}, .v_st = {KH * PL * D, PL * D, D, 1},
                     .o_st = {S * H * D, D, H * D, 1}, .scale = l.scale, .fill = -INFINITY, .causal = 1, .empty_zero = 1,
                     .tf32 = bp->bg->c->opts.use_tf32,
                     .q = p->rotary ? lc->workspace : g.q, .k = g.present_k, .v = g.present_v,
                     .out = gb_addr(bp, n->out[0], b), .seqlens = g.seqlens, .first_prompt = p->first_prompt,
                     .window = p->window, .softcap = p->softcap};
  if (S == 1) { /* decode: rows = the group's query heads (ops strides: head h = kh * group + row) */
    int64_t group = H / KH, len, split = decode_splits(p, &l, &len);
    d.heads = KH, d.seq = group, d.fold = 1;
    d.q_st[1] = group * D, d.q_st[2] = D;
    d.o_st[1] = group * D, d.o_st[2] = D;
    if (split > 1) d.split = split, d.split_len = len, d.partial = (float *)((char *)lc->workspace + qbuf_bytes(p, &l, dt));
  }
  GB_KERNEL(gpu_attention(&d, dt, lc->stream));
  return NULL;
}

const gb_family gb_family_gqa = {
    .name = "gqa",
    .support = gqa_support,
    .compile = gqa_compile,
    .run = gqa_run,
};
