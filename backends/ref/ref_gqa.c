/* Reference GroupQueryAttention (ops/gqa.h): Q rotated into scratch (in
 * the input's type, as ONNX Runtime keeps it), the new K/V rows (K
 * rotated) written into present, then each query row's softmax over its
 * keys in double. Lengths or positions outside the buffers are errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ref/ref.h"

/* Input and element offset of row (b, s) of head hh, counted in the packed
 * Q | K | V order. */
static const void *new_row(const ir_plan *p, const ir_node *n, const op_gqa *q, const op_gqa_dims *l,
                           const ir_bindings *bd, int64_t b, int64_t hh, int64_t s, size_t *at) {
  int k = 0;
  int64_t h = hh, width = ((int64_t)q->heads + 2 * q->kv_heads) * l->head_dim;
  if (!q->packed) {
    k = hh < q->heads ? 0 : hh < q->heads + q->kv_heads ? 1 : 2;
    h = k == 0 ? hh : hh - q->heads - (k == 2 ? q->kv_heads : 0);
    width = (k == 0 ? q->heads : q->kv_heads) * l->head_dim;
  }
  *at = (size_t)((b * l->seq + s) * width + h * l->head_dim);
  return ir_tensor_addr(p, n->in[k], bd);
}

/* Step 2 of ops/gqa.h for batch b: present's rows, the new ones last. */
static hd_status *append(const ir_plan *p, const ir_node *n, const op_gqa *q, const op_gqa_dims *l,
                         const ir_bindings *bd, int64_t b, int64_t past_b, int64_t total, void *qbuf) {
  int dt = p->t[n->in[0]].dtype;
  int64_t S = l->seq, D = l->head_dim, H = q->heads, KH = q->kv_heads, PL = l->present_len;
  const void *past[2] = {ir_input_addr(p, n, q->has_past ? 3 : -1, bd), ir_input_addr(p, n, q->has_past ? 4 : -1, bd)};
  void *pres[2] = {ir_tensor_addr(p, n->out[1], bd), ir_tensor_addr(p, n->out[2], bd)};
  if (past[0] != pres[0] || past[1] != pres[1]) /* not one buffer: past's rows below past_b, zeros above */
    for (int k = 0; k < 2; k++)
      for (int64_t h = 0; h < KH; h++)
        for (int64_t r = 0; r < PL; r++)
          for (int64_t i = 0; i < D; i++) {
            size_t from = (size_t)(((b * KH + h) * l->past_len + r) * D + i);
            float v = r < past_b && r < l->past_len ? ref_load(dt, past[k], from) : 0.0f;
            ref_store(dt, pres[k], (size_t)(((b * KH + h) * PL + r) * D + i), v);
          }
  const void *cs = ir_input_addr(p, n, q->rotary ? 7 : -1, bd), *sn = ir_input_addr(p, n, q->rotary ? 8 : -1, bd);
  for (int64_t s = 0; s < S; s++) {
    int64_t pos = past_b + s < total ? past_b + s : 1;
    if (q->rotary && pos >= l->table_rows)
      return hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: position %lld past the %lld rows of the caches",
                      (long long)pos, (long long)l->table_rows);
    for (int64_t hh = 0; hh < H + 2 * KH; hh++) {
      size_t at;
      const void *src = new_row(p, n, q, l, bd, b, hh, s, &at);
      void *dst = hh < H ? qbuf : pres[hh >= H + KH];
      int64_t h = hh < H ? hh : hh - H - (hh >= H + KH ? KH : 0);
      size_t to = hh < H ? (size_t)(((b * S + s) * H + h) * D) : (size_t)(((b * KH + h) * PL + past_b + s) * D);
      if (q->rotary && hh < H + KH)
        ref_rope_row(dt, src, at, dst, to, cs, sn, (size_t)(pos * (l->rot_dim / 2)), D, l->rot_dim, q->interleaved);
      else
        for (int64_t i = 0; i < D; i++) ref_store(dt, dst, to + (size_t)i, ref_load(dt, src, at + (size_t)i));
    }
  }
  return NULL;
}

static hd_status *ref_gqa(const ir_plan *p, const ir_step *st, const ir_bindings *bd, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[st->node];
  const op_gqa *q = &OP_P(st)->gqa;
  op_gqa_dims l;
  HD_TRY(op_gqa_layout(n, q, p->t, &l));
  int dt = p->t[n->in[0]].dtype;
  int64_t S = l.seq, D = l.head_dim, H = q->heads, KH = q->kv_heads, PL = l.present_len;
  const int32_t *seqlens = ir_tensor_addr(p, n->in[5], bd);
  const void *pk = ir_tensor_addr(p, n->out[1], bd), *pv = ir_tensor_addr(p, n->out[2], bd);
  void *y = ir_tensor_addr(p, n->out[0], bd);
  void *qbuf = malloc(hd_dtype_size(dt) * (size_t)(l.batch * S * H * D) + 1);
  double *sc = malloc(sizeof(double) * (size_t)(PL + 1));
  hd_status *err = !qbuf || !sc ? hd_error(HD_ERR_OUT_OF_MEMORY, "ref GroupQueryAttention: out of host memory") : NULL;
  for (int64_t b = 0; b < l.batch && !err; b++) {
    int64_t total = (int64_t)seqlens[b] + 1, past_b = q->first_prompt ? 0 : total - S;
    if (total < 1 || total > PL || past_b < 0 || past_b + S > PL) {
      err = hd_error(HD_ERR_INVALID_ARG, "GroupQueryAttention: seqlens_k[%lld] = %d for %lld new tokens and a cache of %lld",
                     (long long)b, seqlens[b], (long long)S, (long long)PL);
      break;
    }
    err = append(p, n, q, &l, bd, b, past_b, total, qbuf);
    for (int64_t h = 0; h < H && !err; h++)
      for (int64_t s = 0; s < S; s++) {
        int64_t last = past_b + s, hi = last + 1 < total ? last + 1 : total;
        int64_t lo = q->window >= 0 && last - q->window + 1 > 0 ? last - q->window + 1 : 0;
        size_t qrow = (size_t)(((b * S + s) * H + h) * D), kv = (size_t)((b * KH + h / (H / KH)) * PL);
        double mx = -HUGE_VAL, sum = 0.0;
        for (int64_t k = lo; k < hi; k++) {
          double dot = 0.0;
          for (int64_t i = 0; i < D; i++)
            dot += (double)ref_load(dt, qbuf, qrow + (size_t)i) * ref_load(dt, pk, (kv + (size_t)k) * (size_t)D + (size_t)i);
          double v = (double)l.scale * dot;
          if (q->softcap > 0.0f) v = q->softcap * tanh(v / q->softcap);
          sc[k] = v;
          if (v > mx) mx = v;
        }
        for (int64_t k = lo; k < hi; k++) sum += sc[k] = exp(sc[k] - mx);
        for (int64_t i = 0; i < D; i++) {
          double acc = 0.0;
          for (int64_t k = lo; k < hi; k++) acc += sc[k] * ref_load(dt, pv, (kv + (size_t)k) * (size_t)D + (size_t)i);
          ref_store(dt, y, (size_t)((b * S + s) * H * D + h * D + i), (float)(sum > 0.0 ? acc / sum : 0.0));
        }
      }
  }
  free(qbuf);
  free(sc);
  return err;
}

const ref_family ref_family_gqa = {.run = ref_gqa};
