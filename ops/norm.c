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
  int ax;
  return op_norm_axis(p->axis, x->rank, &ax, n->op_type);
}

/* dims with axis `from` moved to position `to` (the others in order). */
static void move_axis(int rank, const int64_t *in, int from, int to, int64_t *out) {
  int64_t d = in[from];
  int64_t rest[IR_MAX_RANK];
  for (int i = 0, k = 0; i < rank; i++)
    if (i != from) rest[k++] = in[i];
  for (int i = 0, k = 0; i < rank; i++) out[i] = i == to ? d : rest[k++];
}

/* skip broadcasts to x: its leading 1s broadcast, the rest is x's trailing dims */
static int skip_fits(const ir_tensor *s, const ir_tensor *x) {
  int lead = 0;
  while (lead < s->rank - 1 && s->dims[lead] == 1) lead++;
  int r = s->rank - lead;
  if (r > x->rank) return 0;
  for (int i = 0; i < r; i++)
    if (s->dims[lead + i] != x->dims[x->rank - r + i]) return 0;
  return 1;
}

static hd_status *norm_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  (void)g;
  op_norm *p = &pp->norm;
  p->in_x = 0;
  if (p->in_skip >= 0 && p->in_chan < 0 && t[n->in[p->in_skip]].rank == t[n->in[0]].rank &&
      !skip_fits(&t[n->in[p->in_skip]], &t[n->in[0]]) &&
      skip_fits(&t[n->in[0]], &t[n->in[p->in_skip]])) { /* x broadcasts to the skip: they trade places */
    p->in_x = p->in_skip;
    p->in_skip = 0;
  }
  const ir_tensor *xs = &t[n->in[p->in_x]];
  ir_tensor xl = *xs; /* the rows as the norm sees them: x, or x with in_chan moved last */
  const ir_tensor *x = &xl;
  int chans = p->in_chan >= 0 || p->out_chan >= 0;
  if ((p->in_chan >= xs->rank) || (chans && (xs->rank < 1 || p->out_chan >= xs->rank)))
    return hd_error(HD_ERR_INVALID_ARG, "%s: fused transpose axis out of rank %d", n->op_type, xs->rank);
  if (p->in_chan >= 0) move_axis(xs->rank, xs->dims, p->in_chan, xs->rank - 1, xl.dims);
  int ax;
  HD_TRY(op_norm_axis(p->axis, x->rank, &ax, n->op_type));
  if (chans && (ax != x->rank - 1 || (p->in_chan >= 0 && p->in_skip >= 0)))
    return hd_error(HD_ERR_INVALID_ARG, "%s: fused transposes need the last axis and no skip", n->op_type);
  p->axis = ax;
  int64_t cols = ir_numel(x->rank - ax, x->dims + ax);
  int vecs[] = {p->in_scale, p->in_bias, p->in_skip_bias};
  for (int i = 0; i < 3; i++) {
    if (vecs[i] < 0) continue;
    const ir_tensor *v = &t[n->in[vecs[i]]];
    if (ir_numel(v->rank, v->dims) != cols)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: input %d of %lld elements for rows of %lld", n->op_type, vecs[i],
                      (long long)ir_numel(v->rank, v->dims), (long long)cols);
  }
  if (p->in_skip >= 0 && !skip_fits(&t[n->in[p->in_skip]], x))
    return hd_error(HD_ERR_INVALID_ARG, "%s: skip dims do not match the input's (nor the input the skip's)",
                    n->op_type);
  ir_tensor *y = &t[n->out[0]];
  y->rank = x->rank;
  memcpy(y->dims, x->dims, sizeof x->dims);
  if (p->out_chan >= 0) move_axis(x->rank, x->dims, x->rank - 1, p->out_chan, y->dims);
  if (p->out_sum >= 0) t[n->out[p->out_sum]].rank = x->rank, memcpy(t[n->out[p->out_sum]].dims, x->dims, sizeof x->dims);
  int stats[] = {p->out_mean, p->out_inv};
  for (int i = 0; i < 2; i++) {
    if (stats[i] < 0) continue;
    ir_tensor *o = &t[n->out[stats[i]]];
    o->rank = x->rank;
    for (int d = 0; d < x->rank; d++) o->dims[d] = d < ax ? x->dims[d] : 1;
  }
  return NULL;
}

OP_DEF(norm, LAYER_NORMALIZATION, "LayerNormalization", 17, 25)
OP_DEF(norm, SIMPLIFIED_LAYER_NORMALIZATION, "SimplifiedLayerNormalization", 1, 1)
OP_DEF(norm, RMS_NORMALIZATION, "RMSNormalization", 23, 25)
OP_DEF(norm, SKIP_LAYER_NORMALIZATION, "SkipLayerNormalization", 1, 1, .domain = "com.microsoft")
OP_DEF(norm, SKIP_SIMPLIFIED_LAYER_NORMALIZATION, "SkipSimplifiedLayerNormalization", 1, 1, .domain = "com.microsoft")
