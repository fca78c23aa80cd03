/* Reference elementwise arithmetic with numpy broadcasting: each output
 * coordinate maps to each input through strides that are 0 where the input
 * broadcasts (and permuted for a fused Transpose). The fused activations:
 * in_act on input 0 first, act last. */
#include <math.h>

#include "backends/ref/ref.h"

void ref_bcast_strides(const ir_tensor *t, int r, int64_t *st) {
  int64_t acc = 1;
  for (int i = r - 1; i >= 0; i--) {
    int k = i - (r - t->rank);
    if (k < 0) {
      st[i] = 0;
      continue;
    }
    st[i] = t->dims[k] == 1 ? 0 : acc;
    acc *= t->dims[k];
  }
}

/* A fused Transpose (op_binary.perm): input t read as Transpose(t, perm),
 * of the output's rank r: the stride of output dim d is t's stride of
 * dim perm[d] (0 where that dim broadcasts). */
static void permuted_strides(const ir_tensor *t, const int8_t *perm, int r, int64_t *st) {
  int64_t own[IR_MAX_RANK], acc = 1;
  for (int i = t->rank - 1; i >= 0; i--) {
    own[i] = acc;
    acc *= t->dims[i];
  }
  for (int d = 0; d < r; d++) st[d] = t->dims[perm[d]] == 1 ? 0 : own[perm[d]];
}

static float apply_f(op_binary_kind k, float u, float v) {
  switch (k) {
    case OP_BIN_ADD: return u + v;
    case OP_BIN_SUB: return u - v;
    case OP_BIN_MUL: return u * v;
    case OP_BIN_DIV: return u / v;
    case OP_BIN_POW: return powf(u, v);
    case OP_BIN_MIN: return u != u || v != v ? u + v : (u < v ? u : v); /* NaN propagates */
    case OP_BIN_MAX: return u != u || v != v ? u + v : (u > v ? u : v);
    default: return (u + v) * 0.5f;
  }
}

/* Integer arithmetic as C does it on int64, wrapping (as two's complement
 * hardware does) rather than overflowing. */
static hd_status *apply_i(op_binary_kind k, int64_t u, int64_t v, int64_t *o) {
  switch (k) {
    case OP_BIN_ADD: *o = (int64_t)((uint64_t)u + (uint64_t)v); break;
    case OP_BIN_SUB: *o = (int64_t)((uint64_t)u - (uint64_t)v); break;
    case OP_BIN_MUL: *o = (int64_t)((uint64_t)u * (uint64_t)v); break;
    case OP_BIN_DIV:
      if (v == 0) return hd_error(HD_ERR_INVALID_ARG, "integer division by zero");
      *o = u == INT64_MIN && v == -1 ? INT64_MIN : u / v;
      break;
    case OP_BIN_MIN: *o = u < v ? u : v; break;
    case OP_BIN_MAX: *o = u > v ? u : v; break;
    default: return hd_error(HD_ERR_INTERNAL, "integer binary op %d", (int)k);
  }
  return NULL;
}

static hd_status *ref_binary(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *at = &p->t[n->in[0]], *bt = &p->t[n->in[1]], *yt = &p->t[n->out[0]];
  const void *a = ir_tensor_addr(p, n->in[0], b), *bb = ir_tensor_addr(p, n->in[1], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  const op_binary *q = &OP_P(s)->binary;
  int r = yt->rank, ints = yt->dtype == HD_DT_I32 || yt->dtype == HD_DT_I64;
  int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
  ref_bcast_strides(at, r, sa);
  ref_bcast_strides(bt, r, sb);
  if (q->permuted & 1) permuted_strides(at, q->perm[0], r, sa);
  if (q->permuted & 2) permuted_strides(bt, q->perm[1], r, sb);
  size_t cnt = (size_t)ir_numel(yt->rank, yt->dims);
  for (size_t i = 0; i < cnt; i++) {
    int64_t ia = 0, ib = 0;
    for (int d = 0; d < r; d++) {
      ia += idx[d] * sa[d];
      ib += idx[d] * sb[d];
    }
    if (ints) {
      int64_t o = 0;
      HD_TRY(apply_i(q->kind, ref_load_i64(at->dtype, a, (size_t)ia), ref_load_i64(bt->dtype, bb, (size_t)ib), &o));
      ref_store_i64(yt->dtype, y, i, o); /* int32 results wrap, as int32 arithmetic would */
    } else {
      float o = apply_f(q->kind, ref_apply_act(&q->in_act, ref_load(at->dtype, a, (size_t)ia)),
                        ref_load(bt->dtype, bb, (size_t)ib));
      ref_store(yt->dtype, y, i, ref_apply_act(&q->act, o));
    }
    for (int d = r - 1; d >= 0; d--) { /* the next output coordinate */
      if (++idx[d] < yt->dims[d]) break;
      idx[d] = 0;
    }
  }
  return NULL;
}

const ref_family ref_family_binary = {.run = ref_binary};
