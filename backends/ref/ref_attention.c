/* Reference attention: per query row, every score in double, then a
 * softmax and the weighted sum of V rows, from the strided layout
 * (ops/attention.h) so every input form reads the same way. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "backends/ref/ref.h"

/* Whether the mask masks score (s, k) (the causal cut is the caller's). */
static int masked_at(const op_attention *q, const op_attn_layout *l, const ir_tensor *mt, const void *mask, int64_t b,
                     int64_t h, int64_t s, int64_t k) {
  if (!mask) return 0;
  if (q->mask_form == OP_ATTN_MASK_LENS) return k >= ref_load_i64(mt->dtype, mask, (size_t)(b * l->mask_st[0]));
  size_t at = (size_t)(b * l->mask_st[0] + h * l->mask_st[1] + s * l->mask_st[2] + k * l->mask_st[3]);
  return (ref_load_i64(mt->dtype, mask, at) <= 0) != q->mask_invert; /* kept above zero */
}

static hd_status *ref_attention(const ir_plan *p, const ir_step *s, const ir_bindings *bd, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const op_attention *q = &OP_P(s)->attention;
  if (n->kind == OP_MS_ATTENTION) return hd_error(HD_ERR_INTERNAL, "ref: %s was not lowered", n->op_type);
  op_attn_layout l;
  HD_TRY(op_attention_layout(n, q, p->t, &l));
  int dt = p->t[n->in[q->in_q]].dtype;
  const void *qp = ir_tensor_addr(p, n->in[q->in_q], bd), *kp = ir_tensor_addr(p, n->in[q->in_k], bd);
  const void *vp = ir_tensor_addr(p, n->in[q->in_v], bd);
  const void *mask = ir_input_addr(p, n, q->in_mask, bd), *bias = ir_input_addr(p, n, q->in_bias, bd);
  const ir_tensor *mt = q->in_mask >= 0 ? &p->t[n->in[q->in_mask]] : NULL;
  void *y = ir_tensor_addr(p, n->out[0], bd);
  double *sc = malloc(sizeof(double) * (size_t)(l.kv_len > 0 ? l.kv_len : 1));
  if (!sc) return hd_error(HD_ERR_OUT_OF_MEMORY, "ref attention: out of host memory");
  int64_t group = l.heads / l.kv_heads;
  for (int64_t b = 0; b < l.batch; b++)
    for (int64_t h = 0; h < l.heads; h++)
      for (int64_t r = 0; r < l.seq; r++) {
        int64_t kh = h / group;
        size_t qrow = (size_t)(l.q_off + b * l.q_st[0] + h * l.q_st[1] + r * l.q_st[2]);
        double mx = -HUGE_VAL, sum = 0.0;
        for (int64_t k = 0; k < l.kv_len; k++) {
          size_t krow = (size_t)(l.k_off + b * l.k_st[0] + kh * l.k_st[1] + k * l.k_st[2]);
          double dot = 0.0;
          for (int64_t d = 0; d < l.head_dim; d++)
            dot += (double)ref_load(dt, qp, qrow + (size_t)(d * l.q_st[3])) * ref_load(dt, kp, krow + (size_t)(d * l.k_st[3]));
          double v = (double)l.scale * dot;
          const int cut = l.causal && k > r;
          if (cut && q->mask_add) v = -FLT_MAX; /* op_attention: the contrib kernels' causal cut */
          else if (cut || masked_at(q, &l, mt, mask, b, h, r, k)) v = q->mask_add ? v + q->fill : q->fill;
          if (bias)
            v += ref_load(dt, bias, (size_t)(b * l.bias_st[0] + h * l.bias_st[1] + r * l.bias_st[2] + k * l.bias_st[3]));
          sc[k] = v;
          if (v > mx) mx = v;
        }
        for (int64_t k = 0; k < l.kv_len; k++) sum += sc[k] = mx == -HUGE_VAL ? 0.0 : exp(sc[k] - mx);
        size_t orow = (size_t)(b * l.o_st[0] + h * l.o_st[1] + r * l.o_st[2]);
        for (int64_t d = 0; d < l.v_dim; d++) {
          double acc = 0.0;
          for (int64_t k = 0; k < l.kv_len; k++)
            acc += sc[k] * ref_load(dt, vp, (size_t)(l.v_off + b * l.v_st[0] + kh * l.v_st[1] + k * l.v_st[2] + d * l.v_st[3]));
          ref_store(dt, y, orow + (size_t)(d * l.o_st[3]), (float)(sum > 0.0 || !q->empty_zero ? acc / sum : 0.0));
        }
      }
  free(sc);
  return NULL;
}

const ref_family ref_family_attention = {.run = ref_attention};
