/* dnn: the vendor-neutral descriptor builder (see dnn.h). */
#include "backends/dnn/dnn.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"

static const char *const dnn_names_[DNN_NAME_COUNT] = {
#define DNN_STR_(n) #n,
    DNN_NAMES(DNN_STR_)
#undef DNN_STR_
};

const char *dnn_name_str(dnn_name n) {
  return (n >= 0 && n < DNN_NAME_COUNT) ? dnn_names_[n] : "?";
}

hd_status *dnn_status(const dnn_vendor *vd, int st, const char *call, const char *file,
                      int line) {
  if (st == (int)vd->v[DNN_STATUS_SUCCESS]) return NULL;
  char last[512] = "";
  if (vd->get_last_error_string) vd->get_last_error_string(last, sizeof last);
  const char *es = vd->get_error_string ? vd->get_error_string(st) : NULL;
  hd_code code = HD_ERR_BACKEND;
  /* cuDNN groups statuses by thousands (3000-3999: "not supported"); hipDNN
   * has one such status. The table says how many. */
  int64_t ns = vd->v[DNN_STATUS_NOT_SUPPORTED];
  int64_t span = vd->not_supported_span > 0 ? vd->not_supported_span : 1;
  if (st >= ns && st < ns + span) code = HD_ERR_NOT_SUPPORTED;
  return hd_error(code, "%s:%d: %s: %s failed: %s (%d)%s%s", file, line, vd->name, call,
                  es ? es : "unknown status", st, last[0] ? ": " : "", last);
}

#define VCALL(b, call) HD_TRY(dnn_status((b)->vd, (call), #call, __FILE__, __LINE__))

/* ---- bag ---- */

void dnn_bag_init(dnn_bag *b, const dnn_vendor *vd) {
  memset(b, 0, sizeof *b);
  b->vd = vd;
}

/* A name the vendor lacks reached a call: a builder bug (see DNN_OPTIONAL_NAMES). */
static hd_status *absent(const dnn_vendor *vd, dnn_name n) {
  return hd_error(HD_ERR_INTERNAL, "%s has no %s: the builder must not use it", vd->name,
                  dnn_name_str(n));
}

hd_status *dnn_bag_create(dnn_bag *b, dnn_name type, void **desc) {
  *desc = NULL;
  if (!dnn_has(b->vd, type)) return absent(b->vd, type);
  if (b->n == b->cap) {
    int cap = b->cap ? b->cap * 2 : 16;
    void **d = realloc(b->d, (size_t)cap * sizeof *d);
    if (!d) return hd_error(HD_ERR_OUT_OF_MEMORY, "%s:%d: out of host memory", __FILE__, __LINE__);
    b->d = d;
    b->cap = cap;
  }
  void *x = NULL;
  int st = b->vd->create_descriptor((int)b->vd->v[type], &x);
  if (st != (int)b->vd->v[DNN_STATUS_SUCCESS] || !x)
    return hd_status_wrap(dnn_status(b->vd, st ? st : -1, "CreateDescriptor", __FILE__, __LINE__),
                          "%s: ", dnn_name_str(type));
  b->d[b->n++] = x;
  *desc = x;
  return NULL;
}

void dnn_bag_free(dnn_bag *b) {
  /* Reverse order: plans before the graphs they were built from. */
  for (int i = b->n - 1; i >= 0; --i) b->vd->destroy_descriptor(b->d[i]);
  free(b->d);
  b->d = NULL;
  b->n = b->cap = 0;
}

hd_status *dnn_set(const dnn_vendor *vd, void *desc, dnn_name attr, dnn_name type, int64_t count,
                   const void *elems) {
  if (!dnn_has(vd, attr)) return absent(vd, attr);
  if (!dnn_has(vd, type)) return absent(vd, type);
  int st = vd->set_attribute(desc, (int)vd->v[attr], (int)vd->v[type], count, elems);
  if (st == (int)vd->v[DNN_STATUS_SUCCESS]) return NULL;
  return hd_status_wrap(dnn_status(vd, st, "SetAttribute", __FILE__, __LINE__), "%s: ",
                        dnn_name_str(attr));
}

hd_status *dnn_finalize(const dnn_vendor *vd, void *desc, const char *what) {
  int st = vd->finalize(desc);
  if (st == (int)vd->v[DNN_STATUS_SUCCESS]) return NULL;
  return hd_status_wrap(dnn_status(vd, st, "Finalize", __FILE__, __LINE__), "%s: ", what);
}

/* ---- tensors ---- */

void dnn_packed_strides(int rank, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= dims[i] > 0 ? dims[i] : 1;
  }
}

void dnn_tensor_channels_last(dnn_tensor *t, int64_t uid, int dtype, int rank, const int64_t *dims) {
  dnn_tensor_packed(t, uid, dtype, rank, dims);
  int64_t s = 1;
  t->strides[1] = s;
  s *= dims[1] > 0 ? dims[1] : 1;
  for (int i = rank - 1; i >= 2; --i) {
    t->strides[i] = s;
    s *= dims[i] > 0 ? dims[i] : 1;
  }
  t->strides[0] = s;
}

void dnn_tensor_packed(dnn_tensor *t, int64_t uid, int dtype, int rank, const int64_t *dims) {
  memset(t, 0, sizeof *t);
  t->uid = uid;
  t->dtype = dtype;
  t->rank = rank;
  memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
  dnn_packed_strides(rank, dims, t->strides);
  t->alignment = 16;
}

hd_status *dnn_data_type(const dnn_vendor *vd, int dtype, int64_t *out) {
  switch (dtype) {
    case HD_DT_F32: *out = vd->v[DNN_DATA_FLOAT]; return NULL;
    case HD_DT_F16: *out = vd->v[DNN_DATA_HALF]; return NULL;
    case HD_DT_BF16: *out = vd->v[DNN_DATA_BFLOAT16]; return NULL;
    case HD_DT_F64: *out = vd->v[DNN_DATA_DOUBLE]; return NULL;
    default:
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: no data type for %s", vd->name,
                      hd_dtype_name(dtype));
  }
}

hd_status *dnn_tensor_create(dnn_bag *b, const dnn_tensor *t, void **desc) {
  const dnn_vendor *vd = b->vd;
  int64_t dt;
  HD_TRY(dnn_data_type(vd, t->dtype, &dt));
  if (t->rank < 1 || t->rank > DNN_MAX_RANK)
    return hd_error(HD_ERR_INTERNAL, "%s:%d: tensor rank %d", __FILE__, __LINE__, t->rank);
  void *d;
  HD_TRY(dnn_bag_create(b, DNN_BACKEND_TENSOR_DESCRIPTOR, &d));
  int dt32 = (int)dt;
  bool virt = t->is_virtual != 0;
  int64_t align = t->alignment > 0 ? t->alignment : 16;
  HD_TRY(dnn_set(vd, d, DNN_ATTR_TENSOR_DATA_TYPE, DNN_TYPE_DATA_TYPE, 1, &dt32));
  HD_TRY(dnn_set(vd, d, DNN_ATTR_TENSOR_DIMENSIONS, DNN_TYPE_INT64, t->rank, t->dims));
  HD_TRY(dnn_set(vd, d, DNN_ATTR_TENSOR_STRIDES, DNN_TYPE_INT64, t->rank, t->strides));
  HD_TRY(dnn_set(vd, d, DNN_ATTR_TENSOR_UNIQUE_ID, DNN_TYPE_INT64, 1, &t->uid));
  HD_TRY(dnn_set(vd, d, DNN_ATTR_TENSOR_BYTE_ALIGNMENT, DNN_TYPE_INT64, 1, &align));
  HD_TRY(dnn_set(vd, d, DNN_ATTR_TENSOR_IS_VIRTUAL, DNN_TYPE_BOOLEAN, 1, &virt));
  if (t->by_value) {
    if (!dnn_has(vd, DNN_ATTR_TENSOR_IS_BY_VALUE))
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s has no %s", vd->name, dnn_name_str(DNN_ATTR_TENSOR_IS_BY_VALUE));
    bool by_value = true;
    HD_TRY(dnn_set(vd, d, DNN_ATTR_TENSOR_IS_BY_VALUE, DNN_TYPE_BOOLEAN, 1, &by_value));
  }
  HD_TRY(dnn_finalize(vd, d, "tensor"));
  *desc = d;
  return NULL;
}

/* ---- operations ---- */

int dnn_act_fusable(const op_act *a) {
  switch (a->kind) {
    case OP_ACT_NONE:
    case OP_ACT_RELU:
    case OP_ACT_LEAKY_RELU:
    case OP_ACT_CLIP:
    case OP_ACT_SIGMOID:
    case OP_ACT_TANH:
      return 1;
    default:
      return 0;
  }
}

/* The mode attributes of a pointwise op, on desc. */
static hd_status *pointwise_params(const dnn_vendor *vd, void *desc, dnn_name mode,
                                   const op_act *act) {
  int m = (int)vd->v[mode];
  int prec = (int)vd->v[DNN_DATA_FLOAT];
  HD_TRY(dnn_set(vd, desc, DNN_ATTR_POINTWISE_MODE, DNN_TYPE_POINTWISE_MODE, 1, &m));
  HD_TRY(dnn_set(vd, desc, DNN_ATTR_POINTWISE_MATH_PREC, DNN_TYPE_DATA_TYPE, 1, &prec));
  if (act && act->kind == OP_ACT_LEAKY_RELU) {
    float zero = 0.f, slope = act->alpha;
    HD_TRY(dnn_set(vd, desc, DNN_ATTR_POINTWISE_RELU_LOWER_CLIP, DNN_TYPE_FLOAT, 1, &zero));
    HD_TRY(dnn_set(vd, desc, DNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, DNN_TYPE_FLOAT, 1, &slope));
  } else if (act && act->kind == OP_ACT_CLIP) {
    float lo = act->alpha, hi = act->beta;
    HD_TRY(dnn_set(vd, desc, DNN_ATTR_POINTWISE_RELU_LOWER_CLIP, DNN_TYPE_FLOAT, 1, &lo));
    HD_TRY(dnn_set(vd, desc, DNN_ATTR_POINTWISE_RELU_UPPER_CLIP, DNN_TYPE_FLOAT, 1, &hi));
  }
  return NULL;
}

/* A pointwise op y = mode(x [, bx]) with fp32 math. The mode attributes go
 * on a pointwise descriptor (cuDNN) or on the operation itself (hipDNN). */
static hd_status *pointwise_op(dnn_bag *b, dnn_name mode, const op_act *act, void *x, void *bx,
                               void *y, void **op) {
  const dnn_vendor *vd = b->vd;
  void *pw = NULL, *o;
  int separate = dnn_has(vd, DNN_BACKEND_POINTWISE_DESCRIPTOR);
  if (separate) {
    HD_TRY(dnn_bag_create(b, DNN_BACKEND_POINTWISE_DESCRIPTOR, &pw));
    HD_TRY(pointwise_params(vd, pw, mode, act));
    HD_TRY(dnn_finalize(vd, pw, "pointwise"));
  }
  HD_TRY(dnn_bag_create(b, DNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &o));
  if (separate)
    HD_TRY(dnn_set(vd, o, DNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, DNN_TYPE_BACKEND_DESCRIPTOR,
                   1, &pw));
  else
    HD_TRY(pointwise_params(vd, o, mode, act));
  HD_TRY(dnn_set(vd, o, DNN_ATTR_OPERATION_POINTWISE_XDESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &x));
  if (bx)
    HD_TRY(
        dnn_set(vd, o, DNN_ATTR_OPERATION_POINTWISE_BDESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &bx));
  HD_TRY(dnn_set(vd, o, DNN_ATTR_OPERATION_POINTWISE_YDESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &y));
  HD_TRY(dnn_finalize(vd, o, "pointwise operation"));
  *op = o;
  return NULL;
}

static dnn_name act_mode(op_act_kind k) {
  switch (k) {
    case OP_ACT_SIGMOID: return DNN_POINTWISE_SIGMOID_FWD;
    case OP_ACT_TANH: return DNN_POINTWISE_TANH_FWD;
    default: return DNN_POINTWISE_RELU_FWD; /* relu, leaky relu, clip */
  }
}

/* An optional name the vendor lacks, asked for by a graph that needs it. */
static hd_status *lacks(const dnn_vendor *vd, dnn_name n) {
  return hd_error(HD_ERR_NOT_SUPPORTED, "%s has no %s", vd->name, dnn_name_str(n));
}

/* The operation graph of ops[0..n). The handle attribute is deprecated in
 * newer cuDNN (still honoured): a refusal is not fatal, Finalize says
 * whether it was needed. NULL handle: a device-less build (checks
 * descriptors; finds no engines). */
static hd_status *op_graph(dnn_bag *b, void *handle, void **ops, int n, void **opgraph) {
  const dnn_vendor *vd = b->vd;
  void *g;
  HD_TRY(dnn_bag_create(b, DNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &g));
  if (handle)
    hd_status_free(dnn_set(vd, g, DNN_ATTR_OPERATIONGRAPH_HANDLE, DNN_TYPE_HANDLE, 1, &handle));
  HD_TRY(dnn_set(vd, g, DNN_ATTR_OPERATIONGRAPH_OPS, DNN_TYPE_BACKEND_DESCRIPTOR, n, ops));
  HD_TRY(dnn_finalize(vd, g, "operation graph"));
  *opgraph = g;
  return NULL;
}

/* The convolution's parameters on desc. Groups follow from x's C over w's C/G. */
static hd_status *conv_params(const dnn_vendor *vd, void *desc, const dnn_conv *c) {
  int64_t ct;
  HD_TRY(dnn_data_type(vd, c->compute_dtype, &ct));
  int ct32 = (int)ct, mode = (int)vd->v[DNN_CROSS_CORRELATION];
  int64_t nsp = c->nspatial;
  HD_TRY(dnn_set(vd, desc, DNN_ATTR_CONVOLUTION_COMP_TYPE, DNN_TYPE_DATA_TYPE, 1, &ct32));
  HD_TRY(dnn_set(vd, desc, DNN_ATTR_CONVOLUTION_CONV_MODE, DNN_TYPE_CONVOLUTION_MODE, 1, &mode));
  if (dnn_has(vd, DNN_ATTR_CONVOLUTION_SPATIAL_DIMS))
    HD_TRY(dnn_set(vd, desc, DNN_ATTR_CONVOLUTION_SPATIAL_DIMS, DNN_TYPE_INT64, 1, &nsp));
  HD_TRY(dnn_set(vd, desc, DNN_ATTR_CONVOLUTION_PRE_PADDINGS, DNN_TYPE_INT64, nsp, c->pre_pad));
  HD_TRY(dnn_set(vd, desc, DNN_ATTR_CONVOLUTION_POST_PADDINGS, DNN_TYPE_INT64, nsp, c->post_pad));
  HD_TRY(dnn_set(vd, desc, DNN_ATTR_CONVOLUTION_FILTER_STRIDES, DNN_TYPE_INT64, nsp, c->stride));
  HD_TRY(dnn_set(vd, desc, DNN_ATTR_CONVOLUTION_DILATIONS, DNN_TYPE_INT64, nsp, c->dilation));
  return NULL;
}

/* A convolution operation's alpha = 1 and beta = 0, in the type its io
 * asks for (double for fp64, else float); each only where the vendor has
 * the attribute. */
static hd_status *conv_set_scales(const dnn_vendor *vd, void *op, const dnn_conv *c, dnn_name alpha_attr,
                                  dnn_name beta_attr) {
  dnn_name type = c->x.dtype == HD_DT_F64 ? DNN_TYPE_DOUBLE : DNN_TYPE_FLOAT;
  float alpha_f = 1.f, beta_f = 0.f;
  double alpha_d = 1.0, beta_d = 0.0;
  const void *alpha = type == DNN_TYPE_DOUBLE ? (const void *)&alpha_d : (const void *)&alpha_f;
  const void *beta = type == DNN_TYPE_DOUBLE ? (const void *)&beta_d : (const void *)&beta_f;
  if (dnn_has(vd, alpha_attr)) HD_TRY(dnn_set(vd, op, alpha_attr, type, 1, alpha));
  if (dnn_has(vd, beta_attr)) HD_TRY(dnn_set(vd, op, beta_attr, type, 1, beta));
  return NULL;
}

/* The data gradient of the convolution that c's parameters describe, from
 * dy (c->x) into dx (c->y). cd: the convolution descriptor, or NULL when
 * the vendor takes its attributes on the operation. */
static hd_status *conv_bwd_data_op(dnn_bag *b, const dnn_conv *c, void *cd, void *dy, void *w, void *dx,
                                   void **op) {
  const dnn_vendor *vd = b->vd;
  void *o;
  HD_TRY(dnn_bag_create(b, DNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, &o));
  HD_TRY(dnn_set(vd, o, DNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &dy));
  HD_TRY(dnn_set(vd, o, DNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &w));
  HD_TRY(dnn_set(vd, o, DNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &dx));
  if (cd)
    HD_TRY(dnn_set(vd, o, DNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd));
  else
    HD_TRY(conv_params(vd, o, c));
  HD_TRY(conv_set_scales(vd, o, c, DNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                         DNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA));
  HD_TRY(dnn_finalize(vd, o, "convolution backward data"));
  *op = o;
  return NULL;
}

static const dnn_name bwd_data_names[] = {
#define DNN_LIST_(n) DNN_##n,
    DNN_CONV_BWD_DATA_NAMES(DNN_LIST_)
#undef DNN_LIST_
};

hd_status *dnn_conv_graph(dnn_bag *b, void *handle, const dnn_conv *c, int fuse, void **opgraph) {
  const dnn_vendor *vd = b->vd;
  if (c->nspatial < 2 || c->nspatial > 3)
    return hd_error(HD_ERR_INTERNAL, "%s:%d: conv with %d spatial dims", __FILE__, __LINE__,
                    c->nspatial);
  if (c->transpose) {
    if (fuse) return hd_error(HD_ERR_NOT_SUPPORTED, "%s: transposed convolutions are built unfused", vd->name);
    for (size_t i = 0; i < sizeof bwd_data_names / sizeof bwd_data_names[0]; ++i)
      if (!dnn_has(vd, bwd_data_names[i])) return lacks(vd, bwd_data_names[i]);
  }
  int nb = 0;
  if (fuse) nb = c->has_bias + c->has_residual + (c->act.kind != OP_ACT_NONE);
  if (fuse && !dnn_act_fusable(&c->act))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: activation %d has no pointwise mode", vd->name,
                    (int)c->act.kind);

  void *x, *w, *y;
  HD_TRY(dnn_tensor_create(b, &c->x, &x));
  HD_TRY(dnn_tensor_create(b, &c->w, &w));
  HD_TRY(dnn_tensor_create(b, &c->y, &y));

  /* The convolution's parameters: on a convolution descriptor (cuDNN) or
   * on the forward operation itself (hipDNN). */
  void *cd = NULL;
  int separate = dnn_has(vd, DNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  if (separate) {
    HD_TRY(dnn_bag_create(b, DNN_BACKEND_CONVOLUTION_DESCRIPTOR, &cd));
    HD_TRY(conv_params(vd, cd, c));
    HD_TRY(dnn_finalize(vd, cd, "convolution"));
  }
  if (c->transpose) {
    void *op;
    HD_TRY(conv_bwd_data_op(b, c, cd, x, w, y, &op));
    return op_graph(b, handle, &op, 1, opgraph);
  }

  /* The chain conv → [+b] → [+r] → [act] → y; intermediates virtual fp32. */
  void *ops[4];
  int nops = 0;
  dnn_tensor vt = c->y;
  vt.is_virtual = 1;
  vt.dtype = c->compute_dtype;
  void *cur;
  if (nb == 0) {
    cur = y;
  } else {
    vt.uid = 1000;
    HD_TRY(dnn_tensor_create(b, &vt, &cur));
  }
  void *conv;
  HD_TRY(dnn_bag_create(b, DNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &conv));
  HD_TRY(dnn_set(vd, conv, DNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, DNN_TYPE_BACKEND_DESCRIPTOR,
                 1, &x));
  HD_TRY(dnn_set(vd, conv, DNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, DNN_TYPE_BACKEND_DESCRIPTOR,
                 1, &w));
  HD_TRY(dnn_set(vd, conv, DNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, DNN_TYPE_BACKEND_DESCRIPTOR,
                 1, &cur));
  if (separate)
    HD_TRY(dnn_set(vd, conv, DNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                   DNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd));
  else
    HD_TRY(conv_params(vd, conv, c));
  HD_TRY(conv_set_scales(vd, conv, c, DNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                         DNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA));
  HD_TRY(dnn_finalize(vd, conv, "convolution forward"));
  ops[nops++] = conv;

  int left = nb;
  if (fuse && c->has_bias) {
    void *bt, *next;
    HD_TRY(dnn_tensor_create(b, &c->b, &bt));
    --left;
    if (left == 0) {
      next = y;
    } else {
      vt.uid = 1001;
      HD_TRY(dnn_tensor_create(b, &vt, &next));
    }
    HD_TRY(pointwise_op(b, DNN_POINTWISE_ADD, NULL, cur, bt, next, &ops[nops++]));
    cur = next;
  }
  if (fuse && c->has_residual) {
    void *rt, *next;
    HD_TRY(dnn_tensor_create(b, &c->r, &rt));
    --left;
    if (left == 0) {
      next = y;
    } else {
      vt.uid = 1002;
      HD_TRY(dnn_tensor_create(b, &vt, &next));
    }
    HD_TRY(pointwise_op(b, DNN_POINTWISE_ADD, NULL, cur, rt, next, &ops[nops++]));
    cur = next;
  }
  if (fuse && c->act.kind != OP_ACT_NONE)
    HD_TRY(pointwise_op(b, act_mode(c->act.kind), &c->act, cur, NULL, y, &ops[nops++]));

  return op_graph(b, handle, ops, nops, opgraph);
}

hd_status *dnn_pointwise_graph(dnn_bag *b, void *handle, const dnn_tensor *x,
                               const dnn_tensor *bx, const dnn_tensor *y, dnn_name op,
                               const op_act *act, void **opgraph) {
  const dnn_vendor *vd = b->vd;
  if (!dnn_has(vd, op)) return lacks(vd, op);
  if (act && act->kind != OP_ACT_NONE && !dnn_act_fusable(act))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: activation %d has no pointwise mode", vd->name,
                    (int)act->kind);
  int has_act = act && act->kind != OP_ACT_NONE;
  void *tx, *tb, *ty, *mid, *ops[2];
  HD_TRY(dnn_tensor_create(b, x, &tx));
  HD_TRY(dnn_tensor_create(b, bx, &tb));
  HD_TRY(dnn_tensor_create(b, y, &ty));
  mid = ty;
  if (has_act) {
    dnn_tensor vt = *y;
    vt.uid = 1000;
    vt.is_virtual = 1;
    vt.dtype = HD_DT_F32;
    HD_TRY(dnn_tensor_create(b, &vt, &mid));
  }
  HD_TRY(pointwise_op(b, op, NULL, tx, tb, mid, &ops[0]));
  if (has_act) HD_TRY(pointwise_op(b, act_mode(act->kind), act, mid, NULL, ty, &ops[1]));
  return op_graph(b, handle, ops, has_act ? 2 : 1, opgraph);
}

static const dnn_name pool_names[] = {
    DNN_BACKEND_RESAMPLE_DESCRIPTOR,      DNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR,
    DNN_TYPE_RESAMPLE_MODE,               DNN_TYPE_PADDING_MODE,
    DNN_RESAMPLE_MAXPOOL,                 DNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING,
    DNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING, DNN_NEG_INF_PAD,
    DNN_ZERO_PAD,                         DNN_TYPE_NAN_PROPOGATION,
    DNN_PROPAGATE_NAN,
};

hd_status *dnn_pool_graph(dnn_bag *b, void *handle, const dnn_pool *p, void **opgraph) {
  const dnn_vendor *vd = b->vd;
  for (size_t i = 0; i < sizeof pool_names / sizeof pool_names[0]; ++i)
    if (!dnn_has(vd, pool_names[i])) return lacks(vd, pool_names[i]);
  void *tx, *ty, *rd, *op;
  HD_TRY(dnn_tensor_create(b, &p->x, &tx));
  HD_TRY(dnn_tensor_create(b, &p->y, &ty));
  dnn_name mode_name = p->is_max              ? DNN_RESAMPLE_MAXPOOL
                       : p->count_include_pad ? DNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING
                                              : DNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING;
  int mode = (int)vd->v[mode_name];
  int pad = (int)vd->v[p->is_max ? DNN_NEG_INF_PAD : DNN_ZERO_PAD];
  int ct = (int)vd->v[DNN_DATA_FLOAT], nan = (int)vd->v[DNN_PROPAGATE_NAN];
  int64_t nsp = p->nspatial;
  HD_TRY(dnn_bag_create(b, DNN_BACKEND_RESAMPLE_DESCRIPTOR, &rd));
  HD_TRY(dnn_set(vd, rd, DNN_ATTR_RESAMPLE_MODE, DNN_TYPE_RESAMPLE_MODE, 1, &mode));
  HD_TRY(dnn_set(vd, rd, DNN_ATTR_RESAMPLE_COMP_TYPE, DNN_TYPE_DATA_TYPE, 1, &ct));
  HD_TRY(dnn_set(vd, rd, DNN_ATTR_RESAMPLE_SPATIAL_DIMS, DNN_TYPE_INT64, 1, &nsp));
  HD_TRY(dnn_set(vd, rd, DNN_ATTR_RESAMPLE_PADDING_MODE, DNN_TYPE_PADDING_MODE, 1, &pad));
  HD_TRY(dnn_set(vd, rd, DNN_ATTR_RESAMPLE_NAN_PROPAGATION, DNN_TYPE_NAN_PROPOGATION, 1, &nan));
  HD_TRY(dnn_set(vd, rd, DNN_ATTR_RESAMPLE_WINDOW_DIMS, DNN_TYPE_INT64, nsp, p->window));
  HD_TRY(dnn_set(vd, rd, DNN_ATTR_RESAMPLE_STRIDES, DNN_TYPE_INT64, nsp, p->stride));
  HD_TRY(dnn_set(vd, rd, DNN_ATTR_RESAMPLE_PRE_PADDINGS, DNN_TYPE_INT64, nsp, p->pre_pad));
  HD_TRY(dnn_set(vd, rd, DNN_ATTR_RESAMPLE_POST_PADDINGS, DNN_TYPE_INT64, nsp, p->post_pad));
  HD_TRY(dnn_finalize(vd, rd, "resample"));
  HD_TRY(dnn_bag_create(b, DNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR, &op));
  HD_TRY(dnn_set(vd, op, DNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1,
                 &tx));
  HD_TRY(dnn_set(vd, op, DNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1,
                 &ty));
  HD_TRY(dnn_set(vd, op, DNN_ATTR_OPERATION_RESAMPLE_FWD_DESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1,
                 &rd));
  HD_TRY(dnn_finalize(vd, op, "resample forward"));
  return op_graph(b, handle, &op, 1, opgraph);
}

/* A reduction op y = mode(x) over the dims where y is 1, fp32 math. */
static hd_status *reduction_op(dnn_bag *b, dnn_name mode, void *x, void *y, void **op) {
  const dnn_vendor *vd = b->vd;
  void *rd, *o;
  int m = (int)vd->v[mode], ct = (int)vd->v[DNN_DATA_FLOAT];
  HD_TRY(dnn_bag_create(b, DNN_BACKEND_REDUCTION_DESCRIPTOR, &rd));
  HD_TRY(dnn_set(vd, rd, DNN_ATTR_REDUCTION_OPERATOR, DNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &m));
  HD_TRY(dnn_set(vd, rd, DNN_ATTR_REDUCTION_COMP_TYPE, DNN_TYPE_DATA_TYPE, 1, &ct));
  HD_TRY(dnn_finalize(vd, rd, "reduction"));
  HD_TRY(dnn_bag_create(b, DNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, &o));
  HD_TRY(dnn_set(vd, o, DNN_ATTR_OPERATION_REDUCTION_XDESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &x));
  HD_TRY(dnn_set(vd, o, DNN_ATTR_OPERATION_REDUCTION_YDESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &y));
  HD_TRY(dnn_set(vd, o, DNN_ATTR_OPERATION_REDUCTION_DESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd));
  HD_TRY(dnn_finalize(vd, o, "reduction operation"));
  *op = o;
  return NULL;
}

hd_status *dnn_reduce_graph(dnn_bag *b, void *handle, const dnn_tensor *x, const dnn_tensor *y,
                            int avg, void **opgraph) {
  const dnn_vendor *vd = b->vd;
  dnn_name mode_name = avg ? DNN_REDUCE_TENSOR_AVG : DNN_REDUCE_TENSOR_ADD;
  static const dnn_name need[] = {DNN_BACKEND_REDUCTION_DESCRIPTOR,
                                  DNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
                                  DNN_TYPE_REDUCTION_OPERATOR_TYPE};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; ++i)
    if (!dnn_has(vd, need[i])) return lacks(vd, need[i]);
  if (!dnn_has(vd, mode_name)) return lacks(vd, mode_name);
  void *tx, *ty, *op;
  HD_TRY(dnn_tensor_create(b, x, &tx));
  HD_TRY(dnn_tensor_create(b, y, &ty));
  HD_TRY(reduction_op(b, mode_name, tx, ty, &op));
  return op_graph(b, handle, &op, 1, opgraph);
}

/* The SDPA graph's running state: its bag, ops so far and the next
 * virtual tensor's uid. */
typedef struct sdpa_build {
  dnn_bag *b;
  void *ops[12];
  int nops;
  int64_t uid;
} sdpa_build;

/* A virtual fp32 (or dtype) tensor of dims [B, H, S, cols], packed. */
static hd_status *sdpa_virtual(sdpa_build *g, const int64_t *bhs, int64_t cols, int dtype, void **t) {
  dnn_tensor v;
  const int64_t dims[4] = {bhs[0], bhs[1], bhs[2], cols};
  dnn_tensor_packed(&v, g->uid++, dtype, 4, dims);
  v.is_virtual = 1;
  return dnn_tensor_create(g->b, &v, t);
}

static hd_status *sdpa_pointwise(sdpa_build *g, dnn_name mode, void *x, void *bx, void *y) {
  return pointwise_op(g->b, mode, NULL, x, bx, y, &g->ops[g->nops++]);
}

static hd_status *sdpa_matmul(sdpa_build *g, void *a, void *bm, void *c) {
  const dnn_vendor *vd = g->b->vd;
  void *md, *op;
  int ct = (int)vd->v[DNN_DATA_FLOAT];
  HD_TRY(dnn_bag_create(g->b, DNN_BACKEND_MATMUL_DESCRIPTOR, &md));
  HD_TRY(dnn_set(vd, md, DNN_ATTR_MATMUL_COMP_TYPE, DNN_TYPE_DATA_TYPE, 1, &ct));
  HD_TRY(dnn_finalize(vd, md, "matmul"));
  HD_TRY(dnn_bag_create(g->b, DNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, &op));
  HD_TRY(dnn_set(vd, op, DNN_ATTR_OPERATION_MATMUL_ADESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &a));
  HD_TRY(dnn_set(vd, op, DNN_ATTR_OPERATION_MATMUL_BDESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &bm));
  HD_TRY(dnn_set(vd, op, DNN_ATTR_OPERATION_MATMUL_CDESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &c));
  HD_TRY(dnn_set(vd, op, DNN_ATTR_OPERATION_MATMUL_DESC, DNN_TYPE_BACKEND_DESCRIPTOR, 1, &md));
  HD_TRY(dnn_finalize(vd, op, "matmul operation"));
  g->ops[g->nops++] = op;
  return NULL;
}

static hd_status *sdpa_reduce(sdpa_build *g, dnn_name mode, void *x, void *y) {
  return reduction_op(g->b, mode, x, y, &g->ops[g->nops++]);
}

static hd_status *sdpa_scalar(dnn_bag *b, int64_t uid, void **t) {
  dnn_tensor s = {.uid = uid, .dtype = HD_DT_F32, .rank = 4, .dims = {1, 1, 1, 1},
                  .strides = {1, 1, 1, 1}, .by_value = 1};
  return dnn_tensor_create(b, &s, t);
}

/* The biased form, op by op, in the shape the library's fused engine
 * matches: the scores' max, exp and sum, the statistics (log of the sum
 * plus the max: unused, but part of the pattern) and P = exp / sum in the
 * io dtype into the second matmul. */
static hd_status *sdpa_biased(dnn_bag *b, void *handle, const dnn_sdpa *a, void *const *io, void *scale,
                              void **opgraph) {
  const dnn_vendor *vd = b->vd;
#define DNN_SDPA_NEED_(n) DNN_##n,
  static const dnn_name need[] = {DNN_SDPA_GRAPH_NAMES(DNN_SDPA_NEED_) DNN_BACKEND_REDUCTION_DESCRIPTOR,
                                  DNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, DNN_REDUCE_TENSOR_ADD};
#undef DNN_SDPA_NEED_
  for (size_t i = 0; i < sizeof need / sizeof need[0]; ++i)
    if (!dnn_has(vd, need[i])) return lacks(vd, need[i]);
  if (a->k.dims[1] != a->q.dims[1])
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: a biased SDPA graph with grouped heads", vd->name);
  sdpa_build g = {.b = b, .uid = 1000};
  const int64_t bhs[3] = {a->q.dims[0], a->q.dims[1], a->q.dims[2]}, L = a->k.dims[2];
  /* K^T: K's [B, H, L, D] read as [B, H, D, L] */
  dnn_tensor kt = a->k;
  kt.dims[2] = a->k.dims[3], kt.dims[3] = a->k.dims[2];
  kt.strides[2] = a->k.strides[3], kt.strides[3] = a->k.strides[2];
  void *tkt, *s, *x, *y;
  HD_TRY(dnn_tensor_create(b, &kt, &tkt));
  HD_TRY(sdpa_virtual(&g, bhs, L, HD_DT_F32, &s));
  HD_TRY(sdpa_matmul(&g, io[0], tkt, s));
  HD_TRY(sdpa_virtual(&g, bhs, L, HD_DT_F32, &x));
  HD_TRY(sdpa_pointwise(&g, DNN_POINTWISE_MUL, s, scale, x));
  void *bias;
  HD_TRY(dnn_tensor_create(b, &a->bias, &bias));
  HD_TRY(sdpa_virtual(&g, bhs, L, HD_DT_F32, &y));
  HD_TRY(sdpa_pointwise(&g, DNN_POINTWISE_ADD, x, bias, y));
  x = y;
  void *mx, *sub, *ex, *sum, *lg, *stats, *p;
  HD_TRY(sdpa_virtual(&g, bhs, 1, HD_DT_F32, &mx));
  HD_TRY(sdpa_reduce(&g, DNN_REDUCE_TENSOR_MAX, x, mx));
  HD_TRY(sdpa_virtual(&g, bhs, L, HD_DT_F32, &sub));
  HD_TRY(sdpa_pointwise(&g, DNN_POINTWISE_SUB, x, mx, sub));
  HD_TRY(sdpa_virtual(&g, bhs, L, HD_DT_F32, &ex));
  HD_TRY(sdpa_pointwise(&g, DNN_POINTWISE_EXP, sub, NULL, ex));
  HD_TRY(sdpa_virtual(&g, bhs, 1, HD_DT_F32, &sum));
  HD_TRY(sdpa_reduce(&g, DNN_REDUCE_TENSOR_ADD, ex, sum));
  HD_TRY(sdpa_virtual(&g, bhs, 1, HD_DT_F32, &lg));
  HD_TRY(sdpa_pointwise(&g, DNN_POINTWISE_LOG, sum, NULL, lg));
  HD_TRY(sdpa_virtual(&g, bhs, 1, HD_DT_F32, &stats));
  HD_TRY(sdpa_pointwise(&g, DNN_POINTWISE_ADD, mx, lg, stats));
  HD_TRY(sdpa_virtual(&g, bhs, L, a->q.dtype, &p));
  HD_TRY(sdpa_pointwise(&g, DNN_POINTWISE_DIV, ex, sum, p));
  HD_TRY(sdpa_matmul(&g, p, io[2], io[3]));
  return op_graph(b, handle, g.ops, g.nops, opgraph);
}

hd_status *dnn_sdpa_graph(dnn_bag *b, void *handle, const dnn_sdpa *a, void **opgraph) {
  const dnn_vendor *vd = b->vd;
  if (a->has_bias) {
    if (!dnn_has(vd, DNN_ATTR_TENSOR_IS_BY_VALUE)) return lacks(vd, DNN_ATTR_TENSOR_IS_BY_VALUE);
    const dnn_tensor *io[4] = {&a->q, &a->k, &a->v, &a->o};
    void *t[4] = {NULL, NULL, NULL, NULL}, *scale;
    for (int i = 0; i < 4; ++i) /* K is read as K^T */
      if (i != 1) HD_TRY(dnn_tensor_create(b, io[i], &t[i]));
    HD_TRY(sdpa_scalar(b, a->scale_uid, &scale));
    return sdpa_biased(b, handle, a, t, scale, opgraph);
  }
#define DNN_SDPA_NEED_(n) DNN_##n,
  static const dnn_name need[] = {DNN_SDPA_OP_NAMES(DNN_SDPA_NEED_) DNN_ATTR_TENSOR_IS_BY_VALUE};
#undef DNN_SDPA_NEED_
  for (size_t i = 0; i < sizeof need / sizeof need[0]; ++i)
    if (!dnn_has(vd, need[i])) return lacks(vd, need[i]);
  const dnn_tensor *io[4] = {&a->q, &a->k, &a->v, &a->o};
  static const dnn_name attr[5] = {DNN_ATTR_OPERATION_SDPA_FWD_QDESC, DNN_ATTR_OPERATION_SDPA_FWD_KDESC,
                                   DNN_ATTR_OPERATION_SDPA_FWD_VDESC, DNN_ATTR_OPERATION_SDPA_FWD_ODESC,
                                   DNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC};
  void *t[5], *op;
  for (int i = 0; i < 4; ++i) HD_TRY(dnn_tensor_create(b, io[i], &t[i]));
  HD_TRY(sdpa_scalar(b, a->scale_uid, &t[4]));
  HD_TRY(dnn_bag_create(b, DNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, &op));
  for (int i = 0; i < 5; ++i) HD_TRY(dnn_set(vd, op, attr[i], DNN_TYPE_BACKEND_DESCRIPTOR, 1, &t[i]));
  HD_TRY(dnn_finalize(vd, op, "SDPA operation"));
  return op_graph(b, handle, &op, 1, opgraph);
}

/* ---- engine choice ---- */

/* Why an engine config is skipped, or NULL to try it. */
static const char *cfg_filter(const dnn_vendor *vd, void *cfg, const dnn_plan_opts *o,
                              int64_t *engine_index, dnn_bag *tmp) {
  void *eng;
  *engine_index = -1;
  hd_status *st = dnn_bag_create(tmp, DNN_BACKEND_ENGINE_DESCRIPTOR, &eng);
  if (st) {
    hd_status_free(st);
    return "cannot create an engine descriptor";
  }
  int64_t n = 0;
  if (vd->get_attribute(cfg, (int)vd->v[DNN_ATTR_ENGINECFG_ENGINE],
                        (int)vd->v[DNN_TYPE_BACKEND_DESCRIPTOR], 1, &n, &eng) !=
      (int)vd->v[DNN_STATUS_SUCCESS])
    return "engine config has no engine";
  vd->get_attribute(eng, (int)vd->v[DNN_ATTR_ENGINE_GLOBAL_INDEX], (int)vd->v[DNN_TYPE_INT64], 1,
                    &n, engine_index);
  if (!o->fp32_graph || o->allow_tensor_core_fp32) return NULL;
  /* A vendor without numerical notes (hipDNN) cannot be filtered by them. */
  int has_tc = dnn_has(vd, DNN_NUMERICAL_NOTE_TENSOR_CORE);
  int has_dc = dnn_has(vd, DNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS);
  if (!has_tc && !has_dc) return NULL;
  int notes[32];
  n = 0;
  if (vd->get_attribute(eng, (int)vd->v[DNN_ATTR_ENGINE_NUMERICAL_NOTE],
                        (int)vd->v[DNN_TYPE_NUMERICAL_NOTE], 32, &n, notes) !=
      (int)vd->v[DNN_STATUS_SUCCESS])
    return "engine notes unreadable";
  for (int64_t i = 0; i < n && i < 32; ++i) {
    if ((has_tc && notes[i] == (int)vd->v[DNN_NUMERICAL_NOTE_TENSOR_CORE]) ||
        (has_dc && notes[i] == (int)vd->v[DNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS]))
      return "TF32 disallowed";
  }
  return NULL;
}

/* Tries the configs heuristics mode `mode` proposes; p->plan set on success. */
static hd_status *try_heuristics(dnn_plan *p, void *handle, void *opgraph, dnn_name mode,
                                 const dnn_plan_opts *o, char *why, size_t why_cap) {
  dnn_bag *b = &p->bag;
  const dnn_vendor *vd = b->vd;
  void *heur;
  HD_TRY(dnn_bag_create(b, DNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
  int m = (int)vd->v[mode];
  HD_TRY(dnn_set(vd, heur, DNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, DNN_TYPE_BACKEND_DESCRIPTOR, 1,
                 &opgraph));
  HD_TRY(dnn_set(vd, heur, DNN_ATTR_ENGINEHEUR_MODE, DNN_TYPE_HEUR_MODE, 1, &m));
  hd_status *st = dnn_finalize(vd, heur, "engine heuristics");
  if (st) {
    snprintf(why, why_cap, "%s", hd_status_msg(st));
    hd_status_free(st);
    return NULL;
  }
  int64_t count = 0;
  VCALL(b, vd->get_attribute(heur, (int)vd->v[DNN_ATTR_ENGINEHEUR_RESULTS],
                             (int)vd->v[DNN_TYPE_BACKEND_DESCRIPTOR], 0, &count, NULL));
  if (count <= 0) {
    snprintf(why, why_cap, "heuristics %s proposed no engine", dnn_name_str(mode));
    return NULL;
  }
  if (count > 64) count = 64;
  void *cfgs[64];
  /* The configs live in a side bag: only the chosen one must outlive this. */
  dnn_bag tmp;
  dnn_bag_init(&tmp, vd);
  for (int64_t i = 0; i < count; ++i) {
    st = dnn_bag_create(&tmp, DNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]);
    if (st) {
      dnn_bag_free(&tmp);
      return st;
    }
  }
  int64_t got = 0;
  st = dnn_status(vd,
                  vd->get_attribute(heur, (int)vd->v[DNN_ATTR_ENGINEHEUR_RESULTS],
                                    (int)vd->v[DNN_TYPE_BACKEND_DESCRIPTOR], count, &got, cfgs),
                  "GetAttribute(ENGINEHEUR_RESULTS)", __FILE__, __LINE__);
  if (st) {
    dnn_bag_free(&tmp);
    return st;
  }
  int tried = 0, skipped = 0;
  const dnn_engine_choice *rp = o->replay;
  dnn_time_fn time_fn = rp ? NULL : o->time_fn;
  int want = time_fn ? (o->max_candidates > 0 ? o->max_candidates : 8) : 1;
  float best_ms = -1.f;
  char last[400] = "";
  int64_t first = rp ? rp->index : 0;
  if (rp && (first < 0 || first >= got || first >= count))
    snprintf(last, sizeof last, "the choice is config %lld of a list of %lld", (long long)first, (long long)got);
  for (int64_t i = first; i < got && i < count && tried < want && (!rp || i == first); ++i) {
    int64_t eidx;
    const char *skip = cfg_filter(vd, cfgs[i], o, &eidx, &tmp);
    if (skip) {
      ++skipped;
      snprintf(last, sizeof last, "engine %lld: %s", (long long)eidx, skip);
      continue;
    }
    if (rp && eidx != rp->engine) {
      ++skipped;
      snprintf(last, sizeof last, "config %lld is engine %lld, the choice engine %lld", (long long)i,
               (long long)eidx, (long long)rp->engine);
      continue;
    }
    void *plan;
    st = dnn_bag_create(&tmp, DNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    if (!st && handle) /* deprecated in newer cuDNN, still honoured: as above */
      hd_status_free(dnn_set(vd, plan, DNN_ATTR_EXECUTION_PLAN_HANDLE, DNN_TYPE_HANDLE, 1, &handle));
    if (!st)
      st = dnn_set(vd, plan, DNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, DNN_TYPE_BACKEND_DESCRIPTOR, 1,
                   &cfgs[i]);
    if (!st) st = dnn_finalize(vd, plan, "execution plan");
    int64_t ws = 0, n = 0;
    if (!st)
      st = dnn_status(vd,
                      vd->get_attribute(plan, (int)vd->v[DNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE],
                                        (int)vd->v[DNN_TYPE_INT64], 1, &n, &ws),
                      "GetAttribute(EXECUTION_PLAN_WORKSPACE_SIZE)", __FILE__, __LINE__);
    if (!st && o->workspace_limit > 0 && ws > o->workspace_limit)
      st = hd_error(HD_ERR_NOT_SUPPORTED, "workspace %lld over the limit %lld", (long long)ws,
                    (long long)o->workspace_limit);
    if (!st && rp && ws != rp->workspace)
      st = hd_error(HD_ERR_NOT_SUPPORTED, "workspace %lld, the choice's %lld", (long long)ws,
                    (long long)rp->workspace);
    float ms = 0.f;
    if (!st && time_fn) {
      dnn_plan cand = *p;
      cand.plan = plan;
      cand.workspace = ws;
      cand.engine = eidx;
      st = time_fn(o->time_user, &cand, &ms);
      if (!st && ms < 0)
        st = hd_error(HD_ERR_NOT_SUPPORTED, "engine %lld did not run", (long long)eidx);
    }
    if (st) {
      snprintf(last, sizeof last, "engine %lld: %s", (long long)eidx, hd_status_msg(st));
      /* Out of memory while timing ends the search with what it has. */
      int oom = hd_status_code(st) == HD_ERR_OUT_OF_MEMORY;
      hd_status_free(st);
      st = NULL;
      if (oom && p->plan) break;
      continue;
    }
    ++tried;
    /* A later candidate replaces an earlier one only when measurably faster:
     * the heuristics list them by expected speed, and times of tens of
     * microseconds move by a few percent between runs. */
    if (!p->plan || (time_fn && ms < best_ms * 0.97f)) {
      p->plan = plan;
      p->workspace = ws;
      p->engine = eidx;
      p->choice = (dnn_engine_choice){.heur_mode = mode, .index = (int)i, .engine = eidx, .workspace = ws};
      best_ms = ms;
    }
  }
  if (time_fn) p->ncandidates = tried;
  /* Move every descriptor of tmp into p->bag (the chosen config and plan
   * must live; the rest are freed with the plan, a few hundred bytes). */
  for (int i = 0; i < tmp.n; ++i) {
    if (b->n == b->cap) {
      int cap = b->cap ? b->cap * 2 : 16;
      void **d = realloc(b->d, (size_t)cap * sizeof *d);
      if (!d) {
        for (int j = i; j < tmp.n; ++j) vd->destroy_descriptor(tmp.d[j]);
        free(tmp.d);
        return hd_error(HD_ERR_OUT_OF_MEMORY, "%s:%d: out of host memory", __FILE__, __LINE__);
      }
      b->d = d;
      b->cap = cap;
    }
    b->d[b->n++] = tmp.d[i];
  }
  free(tmp.d);
  if (!p->plan)
    snprintf(why, why_cap, "heuristics %s: %lld configs, %d tried, %d filtered; last: %s",
             dnn_name_str(mode), (long long)got, tried, skipped, last[0] ? last : "-");
  return NULL;
}

hd_status *dnn_plan_build(dnn_bag *bag, void *handle, void *opgraph, const dnn_plan_opts *o,
                          dnn_plan *p) {
  memset(p, 0, sizeof *p);
  p->bag = *bag;
  dnn_bag_init(bag, bag->vd);
  p->engine = -1;
  if (o->nuids < 1 || o->nuids > DNN_MAX_UIDS) {
    dnn_plan_free(p);
    return hd_error(HD_ERR_INTERNAL, "%s:%d: %d bound tensors", __FILE__, __LINE__, o->nuids);
  }
  p->nuids = o->nuids;
  memcpy(p->uids, o->uids, sizeof(int64_t) * (size_t)o->nuids);
  char why_a[512] = "", why_f[512] = "";
  hd_status *st = NULL;
  if (o->replay) { /* the one list the choice came from */
    dnn_name m = o->replay->heur_mode;
    if ((m != DNN_HEUR_MODE_A && m != DNN_HEUR_MODE_FALLBACK) || !dnn_has(p->bag.vd, m))
      snprintf(why_a, sizeof why_a, "the choice names a heuristics mode this library lacks");
    else
      st = try_heuristics(p, handle, opgraph, m, o, why_a, sizeof why_a);
    if (!st && !p->plan)
      st = hd_error(HD_ERR_NOT_SUPPORTED, "%s: the engine choice does not replay: %s", p->bag.vd->name, why_a);
  } else {
    if (dnn_has(p->bag.vd, DNN_HEUR_MODE_A)) /* hipDNN has FALLBACK only */
      st = try_heuristics(p, handle, opgraph, DNN_HEUR_MODE_A, o, why_a, sizeof why_a);
    else
      snprintf(why_a, sizeof why_a, "no heuristics mode A");
    if (!st && !p->plan)
      st = try_heuristics(p, handle, opgraph, DNN_HEUR_MODE_FALLBACK, o, why_f, sizeof why_f);
    if (!st && !p->plan)
      st = hd_error(HD_ERR_NOT_SUPPORTED, "%s: no engine: %s; %s", p->bag.vd->name, why_a, why_f);
  }
  if (st) {
    dnn_plan_free(p);
    return st;
  }
  return NULL;
}

void dnn_plan_free(dnn_plan *p) {
  if (p->bag.vd) dnn_bag_free(&p->bag);
  p->plan = NULL;
}

static hd_status *varpack_build(const dnn_plan *p, void *const *ptrs, void *workspace,
                                void **out) {
  const dnn_vendor *vd = p->bag.vd;
  void *vp = NULL;
  *out = NULL;
  int st = vd->create_descriptor((int)vd->v[DNN_BACKEND_VARIANT_PACK_DESCRIPTOR], &vp);
  HD_TRY(dnn_status(vd, st, "CreateDescriptor(VARIANT_PACK)", __FILE__, __LINE__));
  hd_status *e =
      dnn_set(vd, vp, DNN_ATTR_VARIANT_PACK_UNIQUE_IDS, DNN_TYPE_INT64, p->nuids, p->uids);
  if (!e)
    e = dnn_set(vd, vp, DNN_ATTR_VARIANT_PACK_DATA_POINTERS, DNN_TYPE_VOID_PTR, p->nuids, ptrs);
  if (!e) e = dnn_set(vd, vp, DNN_ATTR_VARIANT_PACK_WORKSPACE, DNN_TYPE_VOID_PTR, 1, &workspace);
  if (!e) e = dnn_finalize(vd, vp, "variant pack");
  if (e) {
    vd->destroy_descriptor(vp);
    return e;
  }
  *out = vp;
  return NULL;
}

hd_status *dnn_plan_execute(const dnn_plan *p, void *handle, void *const *ptrs, void *workspace,
                            dnn_varpack *cache) {
  const dnn_vendor *vd = p->bag.vd;
  if (p->nuids > DNN_MAX_UIDS) return hd_error(HD_ERR_INTERNAL, "%s:%d: %d tensors", __FILE__, __LINE__, p->nuids);
  void *vp = NULL;
  if (cache && cache->desc && cache->n == p->nuids && cache->workspace == workspace &&
      memcmp(cache->ptrs, ptrs, sizeof(void *) * (size_t)p->nuids) == 0) {
    vp = cache->desc;
  } else {
    HD_TRY(varpack_build(p, ptrs, workspace, &vp));
    if (cache) {
      dnn_varpack_free(vd, cache);
      cache->desc = vp;
      cache->n = p->nuids;
      memcpy(cache->ptrs, ptrs, sizeof(void *) * (size_t)p->nuids);
      cache->workspace = workspace;
    }
  }
  hd_status *e = dnn_status(vd, vd->execute(handle, p->plan, vp), "Execute", __FILE__, __LINE__);
  if (!cache) vd->destroy_descriptor(vp);
  return e;
}

void dnn_varpack_free(const dnn_vendor *vd, dnn_varpack *vp) {
  if (vp->desc) vd->destroy_descriptor(vp->desc);
  memset(vp, 0, sizeof *vp);
}

/* ---- engine choices as text ---- */

int dnn_engine_choice_format(const dnn_engine_choice *c, char *buf, size_t cap) {
  return snprintf(buf, cap, "mode %s index %d engine %lld workspace %lld",
                  c->heur_mode == DNN_HEUR_MODE_A ? "A" : "FALLBACK", c->index, (long long)c->engine,
                  (long long)c->workspace);
}

int dnn_engine_choice_parse(const char *s, dnn_engine_choice *c) {
  char mode[16];
  int index = -1, end = -1;
  long long engine = -1, ws = -1;
  if (sscanf(s, "mode %15s index %d engine %lld workspace %lld%n", mode, &index, &engine, &ws, &end) != 4 ||
      end < 0 || s[end] != '\0' || index < 0 || engine < 0 || ws < 0)
    return 0;
  if (strcmp(mode, "A") == 0) c->heur_mode = DNN_HEUR_MODE_A;
  else if (strcmp(mode, "FALLBACK") == 0) c->heur_mode = DNN_HEUR_MODE_FALLBACK;
  else return 0;
  c->index = index;
  c->engine = engine;
  c->workspace = ws;
  /* Only the canonical spelling: a line that formats back differently
   * (leading zeros, "+", extra spaces) is not one this code wrote. */
  char back[128];
  dnn_engine_choice_format(c, back, sizeof back);
  return strcmp(back, s) == 0;
}
