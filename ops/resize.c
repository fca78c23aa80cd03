/* Resize (11-19): X, roi?, scales?, sizes? -> Y. Modes nearest (any element
 * type: backends move bytes) and linear (fp32/fp16; separable over every
 * dim whose scale is not 1). scales or sizes are value inputs (known when
 * the plan is built); roi is read only by tf_crop_and_resize, which is
 * not claimed. Output dim = floor(scale * in) in float (ONNX Runtime's);
 * from sizes the scale is out / in in float. Left to the CPU EP: cubic,
 * antialias, exclude_outside, tf_crop_and_resize, keep_aspect_ratio_policy
 * other than stretch. */
#include <string.h>

#include "common/hd_math.h"
#include "ops/op_util.h"

enum { RESIZE_IN_ROI = 1, RESIZE_IN_SCALES = 2, RESIZE_IN_SIZES = 3 };

/* Index of s in names (count of them), or -1. */
static int pick(const char *s, const char *const *names, int count) {
  for (int i = 0; i < count; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

/* String attribute `name` (default dflt) as one of names (in enum order). */
static hd_status *attr_choice(const op_attrs *a, const char *name, const char *dflt, const char *const *names,
                              int count, int *out) {
  char s[40];
  int found = 0;
  HD_TRY(a->get_string(a->ctx, name, s, sizeof s, &found));
  *out = pick(found ? s : dflt, names, count);
  if (*out < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "Resize %s '%s'", name, s);
  return NULL;
}

static hd_status *resize_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_resize *p = &OP_P(n)->resize;
  memset(p, 0, sizeof *p);
  if (op_input(n, 0) == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "Resize needs X and an output");
  if (op_input(n, RESIZE_IN_SCALES) == IR_NONE && op_input(n, RESIZE_IN_SIZES) == IR_NONE)
    return hd_error(HD_ERR_INVALID_ARG, "Resize needs scales or sizes");
  static const char *const modes[] = {"nearest", "linear"};
  static const char *const coords[] = {"half_pixel",           "pytorch_half_pixel", "align_corners",
                                       "asymmetric",           "tf_half_pixel_for_nn",
                                       "half_pixel_symmetric"};
  static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  int v;
  HD_TRY(attr_choice(a, "mode", "nearest", modes, 2, &v));
  p->mode = (op_resize_mode)v;
  HD_TRY(attr_choice(a, "coordinate_transformation_mode", "half_pixel", coords, n->opset >= 19 ? 6 : 5, &v));
  p->coord = (op_resize_coord)v;
  HD_TRY(attr_choice(a, "nearest_mode", "round_prefer_floor", nearest, 4, &v));
  p->nearest = (op_resize_nearest)v;
  int64_t flag;
  HD_TRY(op_attr_int(a, "exclude_outside", 0, &flag));
  if (flag) return hd_error(HD_ERR_NOT_SUPPORTED, "Resize with exclude_outside");
  if (n->opset >= 18) {
    HD_TRY(op_attr_int(a, "antialias", 0, &flag));
    if (flag) return hd_error(HD_ERR_NOT_SUPPORTED, "Resize with antialias");
    static const char *const policies[] = {"stretch"};
    HD_TRY(attr_choice(a, "keep_aspect_ratio_policy", "stretch", policies, 1, &v));
    int64_t axes[IR_MAX_RANK];
    int cnt = 0, found = 0;
    HD_TRY(a->get_ints(a->ctx, "axes", axes, IR_MAX_RANK, &cnt, &found));
    if (found && (cnt < 1 || cnt > IR_MAX_RANK)) return hd_error(HD_ERR_NOT_SUPPORTED, "Resize with %d axes", cnt);
    for (int i = 0; found && i < cnt; i++) {
      if (axes[i] < -IR_MAX_RANK || axes[i] >= IR_MAX_RANK)
        return hd_error(HD_ERR_INVALID_ARG, "Resize axis %lld", (long long)axes[i]);
      p->axes[i] = (int8_t)axes[i];
    }
    p->naxes = found ? cnt : 0;
  }
  return NULL;
}

static hd_status *resize_check(const ir_graph *g, const ir_node *n) {
  const op_resize *p = &OP_P(n)->resize;
  const ir_value *x = &g->values[n->in[0]];
  int ok = p->mode == OP_RESIZE_NEAREST ? op_is_data(x->dtype) : op_is_float(x->dtype);
  if (!ok) return hd_error(HD_ERR_NOT_SUPPORTED, "Resize (%s) of type %s", p->mode ? "linear" : "nearest", hd_dtype_name(x->dtype));
  if (x->rank < 1) return hd_error(HD_ERR_NOT_SUPPORTED, "Resize of rank %d", x->rank);
  if (g->values[n->out[0]].dtype != x->dtype) return hd_error(HD_ERR_INVALID_ARG, "Resize output of another type");
  if (op_input(n, RESIZE_IN_SCALES) != IR_NONE && g->values[n->in[RESIZE_IN_SCALES]].dtype != HD_DT_F32)
    return hd_error(HD_ERR_INVALID_ARG, "Resize scales of type %s", hd_dtype_name(g->values[n->in[RESIZE_IN_SCALES]].dtype));
  if (op_input(n, RESIZE_IN_SIZES) != IR_NONE && g->values[n->in[RESIZE_IN_SIZES]].dtype != HD_DT_I64)
    return hd_error(HD_ERR_INVALID_ARG, "Resize sizes of type %s", hd_dtype_name(g->values[n->in[RESIZE_IN_SIZES]].dtype));
  return NULL;
}

/* The float scales of input v (known on the host): at most max of them. */
static hd_status *read_scales(const ir_graph *g, const ir_tensor *t, int v, float *out, int max, int *cnt) {
  int64_t numel = ir_numel(t[v].rank, t[v].dims);
  *cnt = 0;
  if (numel < 0 || numel > max) return hd_error(HD_ERR_INVALID_ARG, "Resize: %lld scales", (long long)numel);
  if (numel && !t[v].host)
    return hd_error(HD_ERR_NOT_SUPPORTED, "the values of '%s' are not known when the plan is built", g->values[v].name);
  if (numel) memcpy(out, t[v].host, sizeof(float) * (size_t)numel);
  *cnt = (int)numel;
  return NULL;
}

static hd_status *resize_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  op_resize *p = &pp->resize;
  const ir_tensor *x = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  float scales[IR_MAX_RANK];
  int64_t sizes[IR_MAX_RANK];
  int nscales = 0, nsizes = 0, naxes = p->naxes ? p->naxes : x->rank;
  if (op_input(n, RESIZE_IN_SCALES) != IR_NONE)
    HD_TRY(read_scales(g, t, n->in[RESIZE_IN_SCALES], scales, IR_MAX_RANK, &nscales));
  if (op_input(n, RESIZE_IN_SIZES) != IR_NONE)
    HD_TRY(op_value_ints(g, t, n->in[RESIZE_IN_SIZES], sizes, IR_MAX_RANK, &nsizes));
  if ((nscales == 0) == (nsizes == 0)) return hd_error(HD_ERR_INVALID_ARG, "Resize needs one of scales and sizes");
  if ((nscales ? nscales : nsizes) != naxes)
    return hd_error(HD_ERR_INVALID_ARG, "Resize: %d values for %d axes", nscales ? nscales : nsizes, naxes);
  uint8_t seen[IR_MAX_RANK] = {0};
  for (int d = 0; d < x->rank; d++) p->scale[d] = 1.0f, y->dims[d] = x->dims[d];
  for (int i = 0; i < naxes; i++) {
    int ax = i;
    if (p->naxes) HD_TRY(op_norm_axis(p->axes[i], x->rank, &ax, "Resize"));
    if (seen[ax]) return hd_error(HD_ERR_INVALID_ARG, "Resize: axis %d repeated", ax);
    seen[ax] = 1;
    float in = (float)x->dims[ax];
    if (nscales) {
      float s = scales[i];
      if (!(s > 0.0f)) return hd_error(HD_ERR_INVALID_ARG, "Resize: scale %g", (double)s);
      if ((double)s * in > (double)HD_MAX_NUMEL) return hd_error(HD_ERR_NOT_SUPPORTED, "Resize: output dim too large");
      p->scale[ax] = s;
      y->dims[ax] = (int64_t)(s * in);
      /* ONNX's reference takes the resized length as s * in unrounded in
       * these two modes, ONNX Runtime the output dim: where they differ,
       * no answer is right for both */
      double len = (double)s * in;
      if ((p->coord == OP_RESIZE_ALIGN_CORNERS && len != (double)y->dims[ax]) ||
          (p->coord == OP_RESIZE_PYTORCH_HALF_PIXEL && y->dims[ax] == 1 && len != 1.0))
        return hd_error(HD_ERR_NOT_SUPPORTED, "Resize: %s at a scale that gives %g elements, not %lld",
                        p->coord == OP_RESIZE_ALIGN_CORNERS ? "align_corners" : "pytorch_half_pixel", len,
                        (long long)y->dims[ax]);
    } else {
      if (sizes[i] <= 0 || sizes[i] > HD_MAX_NUMEL || x->dims[ax] == 0)
        return hd_error(HD_ERR_NOT_SUPPORTED, "Resize: size %lld of a dim of %lld", (long long)sizes[i],
                        (long long)x->dims[ax]);
      p->scale[ax] = (float)sizes[i] / in;
      y->dims[ax] = sizes[i];
    }
    /* a dim at scale 1 is copied as it is: its size must not change */
    if (p->scale[ax] == 1.0f && y->dims[ax] != x->dims[ax])
      return hd_error(HD_ERR_NOT_SUPPORTED, "Resize: %lld to %lld elements at scale 1", (long long)x->dims[ax],
                      (long long)y->dims[ax]);
  }
  y->rank = x->rank;
  return NULL;
}

hd_status *op_resize_map_of(const ir_node *n, const op_resize *p, const ir_tensor *t, op_resize_map *m) {
  const ir_tensor *x = &t[n->in[0]], *y = &t[n->out[0]];
  memset(m, 0, sizeof *m);
  for (int d = 0; d < x->rank; d++) {
    if (y->rank != x->rank || (p->scale[d] == 1.0f && y->dims[d] != x->dims[d]))
      return hd_error(HD_ERR_INTERNAL, "Resize: the plan's scales do not fit");
    int r = m->rank - 1;
    if (r >= 0 && p->scale[d] == 1.0f && m->scale[r] == 1.0f) { /* both unscaled: one dim */
      m->dims[r] *= y->dims[d];
      m->in_dims[r] *= x->dims[d];
      continue;
    }
    m->dims[m->rank] = y->dims[d];
    m->in_dims[m->rank] = x->dims[d];
    m->scale[m->rank++] = p->scale[d];
  }
  return NULL;
}

OP_DEF(resize, RESIZE, "Resize", 11, 19, .value_inputs = (1u << RESIZE_IN_SCALES) | (1u << RESIZE_IN_SIZES))
