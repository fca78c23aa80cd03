/* Conv and ConvTranspose (ONNX opsets 1-22): 1D/2D/3D, explicit or
 * automatic pads, strides, dilations, groups, optional bias; fp32 and fp16.
 * ConvTranspose also output_padding and output_shape, resolved into pads
 * and output sizes as ONNX Runtime's CPU EP does; where ONNX's reference
 * and ONNX Runtime give different outputs the node is not claimed. */
#include <string.h>

#include "common/hd_math.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

/* ConvTranspose's own attributes. An output_padding of the stride or more
 * stays with the CPU EP, which refuses it (its output could not come from
 * a convolution of the input's size). */
static hd_status *convt_parse(const op_attrs *a, op_conv *c) {
  int ns = c->nspatial;
  HD_TRY(op_attr_ints_exact(a, "output_padding", 0, c->output_padding, ns));
  for (int i = 0; i < ns; i++)
    if (c->output_padding[i] < 0 || c->output_padding[i] >= c->strides[i])
      return hd_error(HD_ERR_NOT_SUPPORTED, "ConvTranspose output_padding %lld outside [0, stride %lld)",
                      (long long)c->output_padding[i], (long long)c->strides[i]);
  if (c->auto_pad == OP_PAD_VALID)
    for (int i = 0; i < ns; i++)
      if (c->pads_begin[i] || c->pads_end[i])
        return hd_error(HD_ERR_NOT_SUPPORTED, "ConvTranspose with auto_pad VALID and pads");
  int64_t shape[OP_MAX_SPATIAL];
  int cnt = 0, found = 0;
  HD_TRY(a->get_ints(a->ctx, "output_shape", shape, OP_MAX_SPATIAL, &cnt, &found));
  if (!found) return NULL;
  if (cnt != ns) /* ONNX's checker takes the spatial sizes only */
    return hd_error(HD_ERR_NOT_SUPPORTED, "ConvTranspose output_shape of %d values for %d spatial dims", cnt, ns);
  for (int i = 0; i < ns; i++) {
    if (shape[i] < 1 || shape[i] > HD_MAX_NUMEL)
      return hd_error(HD_ERR_NOT_SUPPORTED, "ConvTranspose output_shape value %lld", (long long)shape[i]);
    c->output_shape[i] = shape[i];
  }
  return NULL;
}

static hd_status *conv_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  op_conv *c = &OP_P(n)->conv;
  memset(c, 0, sizeof *c);
  const char *op = n->op_type;
  if (n->nin < 2 || n->in[0] == IR_NONE || n->in[1] == IR_NONE)
    return hd_error(HD_ERR_INVALID_ARG, "%s needs inputs X and W", op);
  int rank = g->values[n->in[0]].rank;
  if (rank < 0) rank = g->values[n->in[1]].rank;
  if (rank < 3 || rank > 2 + OP_MAX_SPATIAL)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s of rank %d (1D-3D only)", op, rank);
  int ns = rank - 2;
  c->nspatial = ns;
  c->transpose = n->kind == OP_CONV_TRANSPOSE;

  char pad_mode[32] = "NOTSET";
  int found = 0;
  HD_TRY(a->get_string(a->ctx, "auto_pad", pad_mode, sizeof pad_mode, &found));
  if (!found || strcmp(pad_mode, "NOTSET") == 0) c->auto_pad = OP_PAD_NOTSET;
  else if (strcmp(pad_mode, "SAME_UPPER") == 0) c->auto_pad = OP_PAD_SAME_UPPER;
  else if (strcmp(pad_mode, "SAME_LOWER") == 0) c->auto_pad = OP_PAD_SAME_LOWER;
  else if (strcmp(pad_mode, "VALID") == 0) c->auto_pad = OP_PAD_VALID;
  else return hd_error(HD_ERR_INVALID_ARG, "%s auto_pad '%s' is not valid", op, pad_mode);

  HD_TRY(op_attr_ints_exact(a, "kernel_shape", 0, c->kernel, ns));
  HD_TRY(op_attr_ints_exact(a, "strides", 1, c->strides, ns));
  HD_TRY(op_attr_ints_exact(a, "dilations", 1, c->dilations, ns));
  int64_t pads[2 * OP_MAX_SPATIAL];
  HD_TRY(op_attr_ints_exact(a, "pads", 0, pads, 2 * ns));
  for (int i = 0; i < ns; i++) {
    c->pads_begin[i] = pads[i];
    c->pads_end[i] = pads[ns + i];
  }
  HD_TRY(op_window_limits(op, ns, c->kernel, 0, c->strides, c->dilations, c->pads_begin, c->pads_end));
  HD_TRY(op_attr_int(a, "group", 1, &c->group));
  if (c->group < 1) return hd_error(HD_ERR_INVALID_ARG, "%s group %lld < 1", op, (long long)c->group);
  if (c->group > HD_MAX_NUMEL) return hd_error(HD_ERR_NOT_SUPPORTED, "%s group %lld", op, (long long)c->group);
  c->has_bias = n->nin >= 3 && n->in[2] != IR_NONE;
  return c->transpose ? convt_parse(a, c) : NULL;
}

/* ConvTranspose: W [C_in, C_out / group, k...]. */
static hd_status *convt_check(const ir_value *x, const ir_value *w, const op_conv *c) {
  if (w->dims[0] == 0 || w->dims[1] == 0) /* no input or output channels */
    return hd_error(HD_ERR_NOT_SUPPORTED, "ConvTranspose with W of 0 channels");
  if (x->dims[1] >= 0 && w->dims[0] >= 0 && w->dims[0] != x->dims[1])
    return hd_error(HD_ERR_INVALID_ARG, "ConvTranspose: W has %lld input channels, X has %lld",
                    (long long)w->dims[0], (long long)x->dims[1]);
  if (x->dims[1] >= 0 && x->dims[1] % c->group != 0)
    return hd_error(HD_ERR_INVALID_ARG, "ConvTranspose: %lld input channels not divisible by group %lld",
                    (long long)x->dims[1], (long long)c->group);
  return NULL;
}

static hd_status *conv_check(const ir_graph *g, const ir_node *n) {
  const op_conv *c = &OP_P(n)->conv;
  const ir_value *x = &g->values[n->in[0]], *w = &g->values[n->in[1]];
  const char *op = n->op_type;
  if (!op_is_float(x->dtype))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s input type %s", op, hd_dtype_name(x->dtype));
  if (w->dtype != x->dtype)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s with W of type %s", op, hd_dtype_name(w->dtype));
  if (c->has_bias && g->values[n->in[2]].dtype != x->dtype)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s with B of another type", op);
  if (x->rank != c->nspatial + 2 || w->rank != c->nspatial + 2)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s with unknown or mismatched ranks", op);
  if (c->transpose) return c->channels_last ? hd_error(HD_ERR_NOT_SUPPORTED, "ConvTranspose channels last")
                                            : convt_check(x, w, c);
  int ca = c->channels_last ? x->rank - 1 : 1; /* the channel axis of X and W */
  if (w->dims[ca] == 0) /* no input channels: the output is the bias alone */
    return hd_error(HD_ERR_NOT_SUPPORTED, "Conv with W of 0 input channels");
  if (x->dims[ca] >= 0 && w->dims[ca] >= 0 && w->dims[ca] * c->group != x->dims[ca])
    return hd_error(HD_ERR_INVALID_ARG, "Conv: W has %lld input channels x %lld groups, X has %lld",
                    (long long)w->dims[ca], (long long)c->group, (long long)x->dims[ca]);
  if (w->dims[0] >= 0 && w->dims[0] % c->group != 0)
    return hd_error(HD_ERR_INVALID_ARG, "Conv: %lld output channels not divisible by group %lld",
                    (long long)w->dims[0], (long long)c->group);
  return NULL;
}

/* One spatial dim of a ConvTranspose: pads and output size. The natural
 * size is what the input's windows cover, (in - 1) * s + span +
 * output_padding; output_shape or SAME (in * s) trim it to a target by a
 * total pad split between the ends, the odd one last for SAME_UPPER and
 * first otherwise (ONNX's rule, which ONNX Runtime 1.29 and 1.30 follow).
 * A target past the natural size: ONNX's reference pads by negative
 * amounts, ONNX Runtime by none. They agree only where output_shape asks
 * for one more element at the end (a trailing pad of -1 against 0: a last
 * element no input reaches), which ONNX Runtime takes when the stride
 * exceeds 1; anything else there is NOT_SUPPORTED. */
static hd_status *convt_dim(op_conv *c, int i, int64_t in, int64_t k, int64_t *out) {
  int64_t s = c->strides[i], d = c->dilations[i];
  if (in < 1 || in > HD_MAX_NUMEL || k < 1 || k > HD_MAX_WINDOW)
    return hd_error(HD_ERR_NOT_SUPPORTED, "ConvTranspose: input size %lld or kernel %lld out of range",
                    (long long)in, (long long)k);
  int64_t natural = (in - 1) * s + (k - 1) * d + 1 + c->output_padding[i];
  int same = c->auto_pad == OP_PAD_SAME_UPPER || c->auto_pad == OP_PAD_SAME_LOWER;
  int64_t target = c->output_shape[i] ? c->output_shape[i] : same ? in * s : 0;
  if (target) {
    int64_t total = natural - target;
    if (total == -1 && c->output_shape[i] && c->auto_pad != OP_PAD_SAME_UPPER && s > 1) {
      c->pads_begin[i] = c->pads_end[i] = 0;
      *out = target;
      return NULL;
    }
    if (total < 0)
      return hd_error(HD_ERR_NOT_SUPPORTED, "ConvTranspose: output size %lld past the natural %lld",
                      (long long)target, (long long)natural);
    c->pads_begin[i] = c->auto_pad == OP_PAD_SAME_UPPER ? total / 2 : total - total / 2;
    c->pads_end[i] = total - c->pads_begin[i];
  } else if (c->auto_pad == OP_PAD_VALID) {
    c->pads_begin[i] = c->pads_end[i] = 0;
  }
  if (c->pads_begin[i] > HD_MAX_WINDOW || c->pads_end[i] > HD_MAX_WINDOW)
    return hd_error(HD_ERR_NOT_SUPPORTED, "ConvTranspose: pads past the limits");
  *out = natural - c->pads_begin[i] - c->pads_end[i];
  if (*out < 1)
    return hd_error(HD_ERR_INVALID_ARG, "ConvTranspose: output size %lld (input %lld, pads %lld + %lld)",
                    (long long)*out, (long long)in, (long long)c->pads_begin[i], (long long)c->pads_end[i]);
  return NULL;
}

static hd_status *conv_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  op_conv *c = &pp->conv;
  const char *op = n->op_type;
  /* also called on nodes no parse has checked (a backend's support probe) */
  if (n->nin < 2 || n->in[0] == IR_NONE || n->in[1] == IR_NONE || c->group < 1)
    return hd_error(HD_ERR_INVALID_ARG, "%s: needs X, W and a group of at least 1", op);
  const ir_tensor *x = &t[n->in[0]], *w = &t[n->in[1]];
  int ns = c->nspatial;
  if (x->rank != ns + 2 || w->rank != ns + 2)
    return hd_error(HD_ERR_INVALID_ARG, "%s: X rank %d and W rank %d, expected %d", op, x->rank, w->rank, ns + 2);
  if (c->channels_last && c->transpose)
    return hd_error(HD_ERR_INVALID_ARG, "%s: channels last", op);
  /* channel axis and first spatial axis, of X, W and Y alike */
  int ca = c->channels_last ? ns + 1 : 1, s0 = c->channels_last ? 1 : 2;
  int64_t m; /* output channels */
  if (c->transpose) { /* W [C, M / group, k...] */
    if (w->dims[0] != x->dims[1] || x->dims[1] % c->group != 0)
      return hd_error(HD_ERR_INVALID_ARG, "%s: X has %lld channels, W %lld, group %lld", op, (long long)x->dims[1],
                      (long long)w->dims[0], (long long)c->group);
    m = w->dims[1] * c->group;
    if (m > HD_MAX_NUMEL) return hd_error(HD_ERR_NOT_SUPPORTED, "%s: %lld output channels", op, (long long)m);
  } else { /* W [M, C / group, k...], or [M, k..., C / group] */
    if (w->dims[ca] * c->group != x->dims[ca])
      return hd_error(HD_ERR_INVALID_ARG, "%s: X has %lld channels, W expects %lld x group %lld", op,
                      (long long)x->dims[ca], (long long)w->dims[ca], (long long)c->group);
    if (w->dims[0] % c->group != 0)
      return hd_error(HD_ERR_INVALID_ARG, "%s: output channels %lld not divisible by group", op,
                      (long long)w->dims[0]);
    m = w->dims[0];
  }
  if (c->has_bias) {
    const ir_tensor *b = &t[n->in[2]];
    if (b->rank != 1 || b->dims[0] != m)
      return hd_error(HD_ERR_INVALID_ARG, "%s: B must have shape [%lld]", op, (long long)m);
  }
  ir_tensor *y = &t[n->out[0]];
  y->rank = ns + 2;
  y->dims[0] = x->dims[0];
  y->dims[ca] = m;
  for (int i = 0; i < ns; i++) {
    int64_t k = w->dims[s0 + i];
    if (c->kernel[i] && c->kernel[i] != k)
      return hd_error(HD_ERR_INVALID_ARG, "%s: kernel_shape %lld differs from W's %lld", op,
                      (long long)c->kernel[i], (long long)k);
    c->kernel[i] = k;
    if (c->transpose)
      HD_TRY(convt_dim(c, i, x->dims[2 + i], k, &y->dims[2 + i]));
    else
      HD_TRY(op_window_out("Conv", x->dims[s0 + i], k, c->strides[i], c->dilations[i], c->auto_pad, 0,
                           &c->pads_begin[i], &c->pads_end[i], &y->dims[s0 + i]));
  }
  c->auto_pad = OP_PAD_NOTSET;
  memset(c->output_shape, 0, sizeof c->output_shape); /* resolved into the pads */
  if (c->has_residual) {
    const ir_tensor *r = &t[n->in[3]];
    if (r->rank != y->rank || memcmp(r->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) != 0)
      return hd_error(HD_ERR_INTERNAL, "Conv: fused residual shape differs from the output");
  }
  (void)g;
  return NULL;
}

OP_DEF(conv, CONV, "Conv", 1, 22)
OP_DEF(conv, CONV_TRANSPOSE, "ConvTranspose", 1, 22)
