/* Layer normalisations over the trailing dims from axis on, fp32/fp16 with
 * fp32 statistics:
 *   LayerNormalization (17)                X, Scale, B?  -> Y, Mean?, InvStdDev?
 *   SimplifiedLayerNormalization (ORT, 1)  X, scale      -> Y, inv_std_var?   (RMS)
 *   RMSNormalization (23)                  X, scale      -> Y                 (RMS)
 *   com.microsoft SkipLayerNormalization (1)
 *       input, skip, gamma, beta?, bias?   -> output, mean?, inv_std_var?, input_skip_bias_sum?
 *   com.microsoft SkipSimplifiedLayerNormalization (1)
 *       input, skip, gamma, bias?          -> output, mean?, inv_std_var?, input_skip_bias_sum?
 * The skip forms normalise the last dim; skip may broadcast over leading
 * dims. Scale and bias have exactly the normalised elements. Transposes
 * that move the normalised axis around the norm may be fused into it
 * (op_norm.in_chan / out_chan; plan_fuse.c). */
#include <string.h>

#include "ops/op_util.h"

static hd_status *norm_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_norm *p = &OP_P(n)->norm;
  memset(p, 0, sizeof *p);
  p->in_skip = p->in_bias = p->in_skip_bias = p->out_mean = p->out_inv = p->out_sum = -1;
  p->in_chan = p->out_chan = -1;
  p->in_scale = 1;
  int64_t axis = -1, stash = 1;
  switch (n->kind) {
    case OP_LAYER_NORMALIZATION:
      p->in_bias = op_input(n, 2) != IR_NONE ? 2 : -1;
      p->out_mean = op_has_output(n, 1) ? 1 : -1;
      p->out_inv = op_has_output(n, 2) ? 2 : -1;
      break;
    case OP_SIMPLIFIED_LAYER_NORMALIZATION:
    case OP_RMS_NORMALIZATION:
      p->rms = 1;
      if (n->kind == OP_SIMPLIFIED_LAYER_NORMALIZATION) p->out_inv = op_has_output(n, 1) ? 1 : -1;
      else if (op_has_output(n, 1)) return hd_error(HD_ERR_INVALID_ARG, "RMSNormalization has one output");
      break;
    case OP_SKIP_LAYER_NORMALIZATION:
    case OP_SKIP_SIMPLIFIED_LAYER_NORMALIZATION: {
      int simplified = n->kind == OP_SKIP_SIMPLIFIED_LAYER_NORMALIZATION;
      p->rms = simplified;
      p->in_skip = 1;
      p->in_scale = 2;
      if (simplified) {
        p->in_skip_bias = op_input(n, 3) != IR_NONE ? 3 : -1;
      } else {
        p->in_bias = op_input(n, 3) != IR_NONE ? 3 : -1;
        p->in_skip_bias = op_input(n, 4) != IR_NONE ? 4 : -1;
      }
      p->out_mean = op_has_output(n, 1) ? 1 : -1;
      p->out_inv = op_has_output(n, 2) ? 2 : -1;
      p->out_sum = op_has_output(n, 3) ? 3 : -1;
      break;
    }
    default: return hd_error(HD_ERR_INTERNAL, "norm parse for kind %d", (int)n->kind);
  }
  if (op_input(n, 0) == IR_NONE || op_input(n, p->in_scale) == IR_NONE || (p->in_skip > 0 && op_input(n, 1) == IR_NONE) ||
      !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "%s is missing an input or its output", n->op_type);
  if (p->in_skip < 0) HD_TRY(op_attr_int(a, "axis", -1, &axis));
  HD_TRY(op_attr_float(a, "epsilon", n->kind == OP_SKIP_LAYER_NORMALIZATION ? 1e-12f : 1e-5f, &p->epsilon));
  if (n->kind != OP_SKIP_LAYER_NORMALIZATION && n->kind != OP_SKIP_SIMPLIFIED_LAYER_NORMALIZATION)
    HD_TRY(op_attr_int(a, "stash_type", 1, &stash));
  if (stash != 1) return hd_error(HD_ERR_NOT_SUPPORTED, "%s with stash_type %lld", n->op_type, (long long)stash);
  if (axis < -IR_MAX_RANK || axis >= IR_MAX_RANK) return hd_error(HD_ERR_INVALID_ARG, "%s axis %lld", n->op_type, (long long)axis);
  p->axis = (int)axis;
  return NULL;
}

static hd_status *norm_check(const ir_graph *g, const ir_node *n) {
  const op_norm *p = &OP_P(n)->norm;
  const ir_value *x = &g->values[n->in[0]];
  if (!op_is_float(x->dtype)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", n->op_type, hd_dtype_name(x->dtype));
  if (x->rank < 1) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of unknown or scalar rank", n->op_type);
  int ins[] = {p->in_skip, p->in_scale, p->in_bias, p->in_skip_bias};
  for (int i = 0; i < 4; i++)
    if (ins[i] >= 0 && g->values[n->in[ins[i]]].dtype != x->dtype)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s with inputs of mixed types", n->op_type);
  if (g->values[n->out[0]].dtype != x->dtype || (p->out_sum >= 0 && g->values[n->out[p->out_sum]].dtype != x->dtype))
    return hd_error(HD_ERR_INVALID_ARG, "%s output of another type", n->op_type);
  int outs[] = {p->out_mean, p->out_inv};
  for (int i = 0; i < 2; i++)
    if (outs[i] >= 0 && !op_is_float(g->values[n->out[outs[i]]].dtype))
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s statistics of type %s", n->op_type, hd_dtype_name(g->values[n->out[outs[i]]].dtype));
  int ax, r = x->rank; /* the sum's rank: an addend fused in may have more dims */
  if (p->in_skip >= 0 && g->values[n->in[p->in_skip]].rank > r) r = g->values[n->in[p->in_skip]].rank;
  return op_norm_axis(p->axis, r, &ax, n->op_type);
}

/* dims with axis `from` moved to position `to` (the others in order). */
static void move_axis(int rank, const int64_t *in, int from, int to, int64_t *out) {
  int64_t d = in[from];
  int64_t rest[IR_MAX_RANK];
  for (int i = 0, k = 0; i < rank; i++)
    if (i != from) rest[k++] = in[i];
  for (int i = 0, k = 0; i < rank; i++) out[i] = i == to ? d : rest[k++];
}

/* The dims addend k (0: x, 1: the skip; absent: rank -1) takes part with,
 * and the element strides they have in its tensor: read through a fused
 * transpose, x with in_chan moved last. */
static int addend(const ir_node *n, const op_norm *p, const ir_tensor *t, int k, int64_t *dims, int64_t *st) {
  int in = k ? p->in_skip : 0;
  if (in < 0) return -1;
  const ir_tensor *a = &t[n->in[in]];
  int64_t own[IR_MAX_RANK];
  ir_tensor_strides(a, own);
  if (p->permuted >> k & 1) {
    for (int d = 0; d < a->rank; d++) dims[d] = a->dims[p->perm[k][d]], st[d] = own[p->perm[k][d]];
  } else if (k == 0 && p->in_chan >= 0) {
    move_axis(a->rank, a->dims, p->in_chan, a->rank - 1, dims);
    move_axis(a->rank, own, p->in_chan, a->rank - 1, st);
  } else {
    for (int d = 0; d < a->rank; d++) dims[d] = a->dims[d], st[d] = own[d];
  }
  return a->rank;
}

/* The sum's dims: x's and the skip's broadcast (numpy's rules). */
static hd_status *sum_dims(const ir_node *n, const op_norm *p, const ir_tensor *t, int *rank, int64_t *dims) {
  int64_t xd[IR_MAX_RANK], sd[IR_MAX_RANK], st[IR_MAX_RANK];
  int xr = addend(n, p, t, 0, xd, st), sr = addend(n, p, t, 1, sd, st);
  int r = xr > sr ? xr : sr;
  for (int i = 1; i <= r; i++) {
    int64_t a = i <= xr ? xd[xr - i] : 1, b = i <= sr ? sd[sr - i] : 1;
    if (a != b && a != 1 && b != 1)
      return hd_error(HD_ERR_INVALID_ARG, "%s: the input and the skip do not broadcast (%lld against %lld)",
                      n->op_type, (long long)a, (long long)b);
    dims[r - i] = a == 1 ? b : a;
  }
  *rank = r;
  return NULL;
}

/* The rows and cols of n, from the sum's dims. */
static hd_status *rows_cols(const ir_node *n, const op_norm *p, const ir_tensor *t, int *rank, int64_t *dims, int *ax,
                            int64_t *rows, int64_t *cols) {
  HD_TRY(sum_dims(n, p, t, rank, dims));
  HD_TRY(op_norm_axis(p->axis, *rank, ax, n->op_type));
  *rows = ir_numel(*ax, dims);
  *cols = ir_numel(*rank - *ax, dims + *ax);
  return NULL;
}

/* Output 0's dims in the sum's order (r of them, dims) and their element
 * strides in it: stored through out_perm where that is set. */
static int output_dims(const ir_node *n, const op_norm *p, const ir_tensor *t, int r, const int64_t *dims,
                       int64_t *od, int64_t *os) {
  int64_t own[IR_MAX_RANK];
  ir_tensor_strides(&t[n->out[0]], own);
  for (int d = 0; d < r; d++) {
    od[d] = dims[d];
    os[d] = own[d];
  }
  if (p->out_permuted) /* stored dim d is the sum's dim out_perm[d] */
    for (int d = 0; d < r; d++) os[p->out_perm[d]] = own[d];
  return r;
}

hd_status *op_norm_rows_of(const ir_node *n, const op_norm *p, const ir_tensor *t, int k, op_norm_rows *m,
                           int64_t *rows, int64_t *cols) {
  int r, ax;
  int64_t dims[IR_MAX_RANK], ad[IR_MAX_RANK], as[IR_MAX_RANK];
  HD_TRY(rows_cols(n, p, t, &r, dims, &ax, rows, cols));
  if (!m) return NULL;
  memset(m, 0, sizeof *m);
  int ar = k == 2 ? output_dims(n, p, t, r, dims, ad, as) : addend(n, p, t, k, ad, as);
  if (ar < 0) return hd_error(HD_ERR_INTERNAL, "%s: no addend %d", n->op_type, k);
  /* right-aligned with the sum; a dim the addend broadcasts along moves 0 */
  int64_t st[IR_MAX_RANK], len[IR_MAX_RANK];
  for (int d = 0; d < r; d++) {
    int i = d - (r - ar);
    len[d] = i >= 0 ? ad[i] : 1;
    st[d] = len[d] == 1 ? 0 : as[i];
  }
  /* in a row: dims from ax that the addend broadcasts, then a packed suffix */
  int j = ax;
  while (j < r && len[j] == 1) j++;
  int64_t expect = 1;
  for (int d = r - 1; d >= j; d--) {
    if (len[d] != dims[d] || (dims[d] != 1 && st[d] != expect))
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: addend %d is not packed along the normalised dims", n->op_type, k);
    expect *= dims[d];
  }
  m->col_n = expect;
  /* the row dims, size-1 dims dropped and neighbours merged */
  for (int d = 0; d < ax; d++) {
    if (dims[d] == 1) continue;
    if (m->nd && m->stride[m->nd - 1] == st[d] * dims[d]) {
      m->dim[m->nd - 1] *= dims[d];
      m->stride[m->nd - 1] = st[d];
    } else {
      m->dim[m->nd] = dims[d];
      m->stride[m->nd++] = st[d];
    }
  }
  int64_t div = 1;
  for (int d = m->nd - 1; d >= 0; d--) m->div[d] = div, div *= m->dim[d];
  return NULL;
}

/* A map of packed rows (row r at r * cols). */
static void packed_map(int64_t rows, int64_t cols, op_norm_rows *m) {
  memset(m, 0, sizeof *m);
  m->nd = rows > 1;
  m->dim[0] = rows, m->div[0] = 1, m->stride[0] = cols, m->col_n = cols;
}

hd_status *op_norm_layout_of(const ir_node *n, const op_norm *p, const ir_tensor *t, op_norm_layout *l) {
  memset(l, 0, sizeof *l);
  const ir_tensor *xt = &t[n->in[0]], *yt = &t[n->out[0]];
  if (p->in_chan >= 0) l->x_inner = ir_numel(xt->rank - p->in_chan - 1, xt->dims + p->in_chan + 1);
  if (p->out_chan >= 0) l->y_inner = ir_numel(yt->rank - p->out_chan - 1, yt->dims + p->out_chan + 1);
  HD_TRY(op_norm_rows_of(n, p, t, 0, p->in_chan >= 0 ? NULL : &l->xm, &l->rows, &l->cols));
  if (p->in_skip >= 0) HD_TRY(op_norm_rows_of(n, p, t, 1, &l->sm, &l->rows, &l->cols));
  if (p->out_chan < 0) HD_TRY(op_norm_rows_of(n, p, t, 2, &l->ym, &l->rows, &l->cols));
  if (l->x_inner == 1) l->x_inner = 0, packed_map(l->rows, l->cols, &l->xm); /* packed after all */
  if (l->y_inner == 1) l->y_inner = 0, packed_map(l->rows, l->cols, &l->ym);
  return NULL;
}

/* perm[0..r) holds each of 0..r-1 once. */
static int is_permutation(const int8_t *perm, int r) {
  int seen = 0;
  for (int d = 0; d < r; d++) {
    if (perm[d] < 0 || perm[d] >= r || (seen >> perm[d] & 1)) return 0;
    seen |= 1 << perm[d];
  }
  return 1;
}

static hd_status *norm_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  (void)g;
  op_norm *p = &pp->norm;
  const ir_tensor *xs = &t[n->in[0]];
  int chans = p->in_chan >= 0 || p->out_chan >= 0;
  if (p->out_permuted && p->out_chan >= 0)
    return hd_error(HD_ERR_INVALID_ARG, "%s: two fused transposes of its output", n->op_type);
  if (p->in_chan >= xs->rank || (p->in_chan >= 0 && xs->rank < 2))
    return hd_error(HD_ERR_INVALID_ARG, "%s: fused transpose axis out of rank %d", n->op_type, xs->rank);
  for (int k = 0; k < 2; k++) {
    int in = k ? p->in_skip : 0;
    if (!(p->permuted >> k & 1)) continue;
    if (in < 0 || (k == 0 && p->in_chan >= 0))
      return hd_error(HD_ERR_INVALID_ARG, "%s: a fused transpose of addend %d it cannot take", n->op_type, k);
    if (!is_permutation(p->perm[k], t[n->in[in]].rank))
      return hd_error(HD_ERR_INVALID_ARG, "%s: fused transpose of addend %d is no permutation", n->op_type, k);
  }
  int r, ax;
  int64_t dims[IR_MAX_RANK], rows, cols;
  HD_TRY(rows_cols(n, p, t, &r, dims, &ax, &rows, &cols));
  if (p->out_chan >= r)
    return hd_error(HD_ERR_INVALID_ARG, "%s: fused transpose axis out of rank %d", n->op_type, r);
  if (chans && (ax != r - 1 || (p->in_chan >= 0 && p->in_skip >= 0)))
    return hd_error(HD_ERR_INVALID_ARG, "%s: fused transposes need the last axis and no skip", n->op_type);
  p->axis = ax;
  int vecs[] = {p->in_scale, p->in_bias, p->in_skip_bias};
  for (int i = 0; i < 3; i++) {
    if (vecs[i] < 0) continue;
    const ir_tensor *v = &t[n->in[vecs[i]]];
    if (ir_numel(v->rank, v->dims) != cols)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: input %d of %lld elements for rows of %lld", n->op_type, vecs[i],
                      (long long)ir_numel(v->rank, v->dims), (long long)cols);
  }
  /* each addend must be readable row by row (op_norm_rows_of says why not) */
  for (int k = 0; k < 2; k++) {
    op_norm_rows m;
    if (k == 0 && p->in_chan >= 0) continue;
    if (k == 1 && p->in_skip < 0) continue;
    HD_TRY(op_norm_rows_of(n, p, t, k, &m, &rows, &cols));
  }
  ir_tensor *y = &t[n->out[0]];
  y->rank = r;
  memcpy(y->dims, dims, sizeof dims);
  if (p->out_chan >= 0) move_axis(r, dims, r - 1, p->out_chan, y->dims);
  if (p->out_permuted) {
    if (!is_permutation(p->out_perm, r))
      return hd_error(HD_ERR_INVALID_ARG, "%s: fused transpose of its output is no permutation", n->op_type);
    for (int d = 0; d < r; d++) y->dims[d] = dims[p->out_perm[d]];
  }
  if (p->out_sum >= 0) t[n->out[p->out_sum]].rank = r, memcpy(t[n->out[p->out_sum]].dims, dims, sizeof dims);
  int stats[] = {p->out_mean, p->out_inv};
  for (int i = 0; i < 2; i++) {
    if (stats[i] < 0) continue;
    ir_tensor *o = &t[n->out[stats[i]]];
    o->rank = r;
    for (int d = 0; d < r; d++) o->dims[d] = d < ax ? dims[d] : 1;
  }
  return NULL;
}

OP_DEF(norm, LAYER_NORMALIZATION, "LayerNormalization", 17, 25)
OP_DEF(norm, SIMPLIFIED_LAYER_NORMALIZATION, "SimplifiedLayerNormalization", 1, 1)
OP_DEF(norm, RMS_NORMALIZATION, "RMSNormalization", 23, 25)
OP_DEF(norm, SKIP_LAYER_NORMALIZATION, "SkipLayerNormalization", 1, 1, .domain = "com.microsoft")
OP_DEF(norm, SKIP_SIMPLIFIED_LAYER_NORMALIZATION, "SkipSimplifiedLayerNormalization", 1, 1, .domain = "com.microsoft")
