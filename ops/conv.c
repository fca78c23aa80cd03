/* Conv (ONNX opsets 1-22): 1D/2D/3D, explicit or automatic pads, strides,
 * dilations, groups, optional bias; fp32 and fp16. */
#include <string.h>

#include "common/hd_math.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

static hd_status *conv_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  op_conv *c = &OP_P(n)->conv;
  memset(c, 0, sizeof *c);
  if (n->nin < 2 || n->in[0] == IR_NONE || n->in[1] == IR_NONE)
    return hd_error(HD_ERR_INVALID_ARG, "Conv needs inputs X and W");
  int rank = g->values[n->in[0]].rank;
  if (rank < 0) rank = g->values[n->in[1]].rank;
  if (rank < 3 || rank > 2 + OP_MAX_SPATIAL)
    return hd_error(HD_ERR_NOT_SUPPORTED, "Conv of rank %d (1D-3D only)", rank);
  int ns = rank - 2;
  c->nspatial = ns;

  char pad_mode[32] = "NOTSET";
  int found = 0;
  HD_TRY(a->get_string(a->ctx, "auto_pad", pad_mode, sizeof pad_mode, &found));
  if (!found || strcmp(pad_mode, "NOTSET") == 0) c->auto_pad = OP_PAD_NOTSET;
  else if (strcmp(pad_mode, "SAME_UPPER") == 0) c->auto_pad = OP_PAD_SAME_UPPER;
  else if (strcmp(pad_mode, "SAME_LOWER") == 0) c->auto_pad = OP_PAD_SAME_LOWER;
  else if (strcmp(pad_mode, "VALID") == 0) c->auto_pad = OP_PAD_VALID;
  else return hd_error(HD_ERR_INVALID_ARG, "Conv auto_pad '%s' is not valid", pad_mode);

  HD_TRY(op_attr_ints_exact(a, "kernel_shape", 0, c->kernel, ns));
  HD_TRY(op_attr_ints_exact(a, "strides", 1, c->strides, ns));
  HD_TRY(op_attr_ints_exact(a, "dilations", 1, c->dilations, ns));
  int64_t pads[2 * OP_MAX_SPATIAL];
  HD_TRY(op_attr_ints_exact(a, "pads", 0, pads, 2 * ns));
  for (int i = 0; i < ns; i++) {
    c->pads_begin[i] = pads[i];
    c->pads_end[i] = pads[ns + i];
  }
  HD_TRY(op_window_limits("Conv", ns, c->kernel, 0, c->strides, c->dilations, c->pads_begin, c->pads_end));
  HD_TRY(op_attr_int(a, "group", 1, &c->group));
  if (c->group < 1) return hd_error(HD_ERR_INVALID_ARG, "Conv group %lld < 1", (long long)c->group);
  if (c->group > HD_MAX_NUMEL) return hd_error(HD_ERR_NOT_SUPPORTED, "Conv group %lld", (long long)c->group);
  c->has_bias = n->nin >= 3 && n->in[2] != IR_NONE;
  return NULL;
}

static int is_float(int dt) { return dt == HD_DT_F32 || dt == HD_DT_F16; }

static hd_status *conv_check(const ir_graph *g, const ir_node *n) {
  const op_conv *c = &OP_P(n)->conv;
  const ir_value *x = &g->values[n->in[0]], *w = &g->values[n->in[1]];
  if (!is_float(x->dtype))
    return hd_error(HD_ERR_NOT_SUPPORTED, "Conv input type %s", hd_dtype_name(x->dtype));
  if (w->dtype != x->dtype)
    return hd_error(HD_ERR_NOT_SUPPORTED, "Conv with W of type %s", hd_dtype_name(w->dtype));
  if (c->has_bias && g->values[n->in[2]].dtype != x->dtype)
    return hd_error(HD_ERR_NOT_SUPPORTED, "Conv with B of another type");
  if (x->rank != c->nspatial + 2 || w->rank != c->nspatial + 2)
    return hd_error(HD_ERR_NOT_SUPPORTED, "Conv with unknown or mismatched ranks");
  if (w->dims[1] == 0) /* no input channels: the output is the bias alone */
    return hd_error(HD_ERR_NOT_SUPPORTED, "Conv with W of 0 input channels");
  if (x->dims[1] >= 0 && w->dims[1] >= 0 && w->dims[1] * c->group != x->dims[1])
    return hd_error(HD_ERR_INVALID_ARG, "Conv: W has %lld input channels x %lld groups, X has %lld",
                    (long long)w->dims[1], (long long)c->group, (long long)x->dims[1]);
  if (w->dims[0] >= 0 && w->dims[0] % c->group != 0)
    return hd_error(HD_ERR_INVALID_ARG, "Conv: %lld output channels not divisible by group %lld",
                    (long long)w->dims[0], (long long)c->group);
  return NULL;
}

static hd_status *conv_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  op_conv *c = &pp->conv;
  const ir_tensor *x = &t[n->in[0]], *w = &t[n->in[1]];
  int ns = c->nspatial;
  if (x->rank != ns + 2 || w->rank != ns + 2)
    return hd_error(HD_ERR_INVALID_ARG, "Conv: X rank %d and W rank %d, expected %d", x->rank, w->rank, ns + 2);
  if (w->dims[1] * c->group != x->dims[1])
    return hd_error(HD_ERR_INVALID_ARG, "Conv: X has %lld channels, W expects %lld x group %lld",
                    (long long)x->dims[1], (long long)w->dims[1], (long long)c->group);
  if (w->dims[0] % c->group != 0)
    return hd_error(HD_ERR_INVALID_ARG, "Conv: output channels %lld not divisible by group",
                    (long long)w->dims[0]);
  if (c->has_bias) {
    const ir_tensor *b = &t[n->in[2]];
    if (b->rank != 1 || b->dims[0] != w->dims[0])
      return hd_error(HD_ERR_INVALID_ARG, "Conv: B must have shape [%lld]", (long long)w->dims[0]);
  }
  ir_tensor *y = &t[n->out[0]];
  y->rank = ns + 2;
  y->dims[0] = x->dims[0];
  y->dims[1] = w->dims[0];
  for (int i = 0; i < ns; i++) {
    int64_t k = w->dims[2 + i];
    if (c->kernel[i] && c->kernel[i] != k)
      return hd_error(HD_ERR_INVALID_ARG, "Conv: kernel_shape %lld differs from W's %lld",
                      (long long)c->kernel[i], (long long)k);
    c->kernel[i] = k;
    HD_TRY(op_window_out("Conv", x->dims[2 + i], k, c->strides[i], c->dilations[i], c->auto_pad, 0,
                         &c->pads_begin[i], &c->pads_end[i], &y->dims[2 + i]));
  }
  c->auto_pad = OP_PAD_NOTSET;
  if (c->has_residual) {
    const ir_tensor *r = &t[n->in[3]];
    if (r->rank != y->rank || memcmp(r->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) != 0)
      return hd_error(HD_ERR_INTERNAL, "Conv: fused residual shape differs from the output");
  }
  (void)g;
  return NULL;
}

OP_DEF(conv, CONV, "Conv", 1, 22)
