#include "ops/op_util.h"

#include "common/hd_math.h"

#include <string.h>

int op_is_float(int dtype) { return dtype == HD_DT_F32 || dtype == HD_DT_F16 || dtype == HD_DT_BF16; }

int op_is_data(int dtype) { return dtype != HD_DT_STRING && hd_dtype_size(dtype) > 0; }

int op_is_int(int dtype) {
  switch (dtype) {
    case HD_DT_U8: case HD_DT_I8: case HD_DT_U16: case HD_DT_I16:
    case HD_DT_I32: case HD_DT_I64: case HD_DT_U32: case HD_DT_U64: return 1;
    default: return 0;
  }
}

int op_input(const ir_node *n, int k) { return k < n->nin ? n->in[k] : IR_NONE; }

int op_has_output(const ir_node *n, int k) { return k < n->nout && n->out[k] != IR_NONE; }

hd_status *op_check_float_io(const ir_graph *g, const ir_node *n, const char *what) {
  if (n->nin < 1 || n->in[0] == IR_NONE || n->nout < 1 || n->out[0] == IR_NONE)
    return hd_error(HD_ERR_INVALID_ARG, "%s needs an input and an output", what);
  int dt = g->values[n->in[0]].dtype;
  if (!op_is_float(dt)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", what, hd_dtype_name(dt));
  for (int k = 0; k < n->nin; k++) {
    if (n->in[k] == IR_NONE) continue;
    const ir_value *v = &g->values[n->in[k]];
    if (v->dtype != dt)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s with inputs of types %s and %s", what, hd_dtype_name(dt),
                      hd_dtype_name(v->dtype));
    if (v->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "%s input %d of unknown rank", what, k);
  }
  if (g->values[n->out[0]].dtype != dt)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s output of type %s", what, hd_dtype_name(g->values[n->out[0]].dtype));
  return NULL;
}

hd_status *op_check_data_io(const ir_graph *g, const ir_node *n, const char *what) {
  if (n->nin < 1 || n->in[0] == IR_NONE || n->nout < 1 || n->out[0] == IR_NONE)
    return hd_error(HD_ERR_INVALID_ARG, "%s needs an input and an output", what);
  int dt = g->values[n->in[0]].dtype;
  if (!op_is_data(dt)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", what, hd_dtype_name(dt));
  for (int k = 0; k < n->nin; k++) {
    if (n->in[k] == IR_NONE) continue;
    const ir_value *v = &g->values[n->in[k]];
    if (v->dtype != dt) return hd_error(HD_ERR_INVALID_ARG, "%s with inputs of types %s and %s", what, hd_dtype_name(dt), hd_dtype_name(v->dtype));
    if (v->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "%s input %d of unknown rank", what, k);
  }
  if (g->values[n->out[0]].dtype != dt)
    return hd_error(HD_ERR_INVALID_ARG, "%s output of type %s", what, hd_dtype_name(g->values[n->out[0]].dtype));
  return NULL;
}

/* Data absent though elements exist: GetCapability's import. */
static int data_pending(const ir_value *v) {
  return !v->data && (v->rank < 0 || ir_numel(v->rank, v->dims) != 0);
}

hd_status *op_const_ints(const ir_graph *g, int v, int64_t *out, int max, op_const_info *ci) {
  const ir_value *val = &g->values[v];
  ci->have = ci->n = 0;
  if (!val->is_const) return hd_error(HD_ERR_NOT_SUPPORTED, "'%s' is not a constant", val->name);
  if (val->dtype != HD_DT_I64 && val->dtype != HD_DT_I32)
    return hd_error(HD_ERR_NOT_SUPPORTED, "'%s' has type %s", val->name, hd_dtype_name(val->dtype));
  if (data_pending(val)) return NULL;
  size_t esz = hd_dtype_size(val->dtype);
  size_t cnt = val->nbytes / esz;
  if (cnt > (size_t)max)
    return hd_error(HD_ERR_NOT_SUPPORTED, "'%s' has %zu values (at most %d)", val->name, cnt, max);
  for (size_t i = 0; i < cnt; i++) {
    if (val->dtype == HD_DT_I64) memcpy(&out[i], (const char *)val->data + i * 8, 8);
    else {
      int32_t x;
      memcpy(&x, (const char *)val->data + i * 4, 4);
      out[i] = x;
    }
  }
  ci->have = 1;
  ci->n = (int)cnt;
  return NULL;
}

hd_status *op_value_ints(const ir_graph *g, const ir_tensor *t, int v, int64_t *out, int max, int *n) {
  const ir_tensor *x = &t[v];
  const char *name = g->values[v].name;
  *n = 0;
  if (x->dtype != HD_DT_I64 && x->dtype != HD_DT_I32)
    return hd_error(HD_ERR_NOT_SUPPORTED, "'%s' has type %s", name, hd_dtype_name(x->dtype));
  int64_t cnt = ir_numel(x->rank, x->dims);
  if (cnt < 0 || cnt > max) return hd_error(HD_ERR_NOT_SUPPORTED, "'%s' has %lld values (at most %d)", name, (long long)cnt, max);
  if (cnt && !x->host) return hd_error(HD_ERR_NOT_SUPPORTED, "the values of '%s' are not known when the plan is built", name);
  for (int64_t i = 0; i < cnt; i++) {
    if (x->dtype == HD_DT_I64) {
      memcpy(&out[i], (const char *)x->host + i * 8, 8);
    } else {
      int32_t y;
      memcpy(&y, (const char *)x->host + i * 4, 4);
      out[i] = y;
    }
  }
  *n = (int)cnt;
  return NULL;
}

hd_status *op_const_scalar(const ir_graph *g, int v, float *out, op_const_info *ci) {
  const ir_value *val = &g->values[v];
  ci->have = ci->n = 0;
  if (!val->is_const) return hd_error(HD_ERR_NOT_SUPPORTED, "'%s' is not a constant", val->name);
  if (!op_is_float(val->dtype))
    return hd_error(HD_ERR_NOT_SUPPORTED, "'%s' has type %s", val->name, hd_dtype_name(val->dtype));
  if (val->rank > 0 && ir_numel(val->rank, val->dims) != 1)
    return hd_error(HD_ERR_INVALID_ARG, "'%s' is not a scalar", val->name);
  if (data_pending(val)) return NULL;
  if (val->nbytes != hd_dtype_size(val->dtype))
    return hd_error(HD_ERR_INVALID_ARG, "'%s' is not a scalar", val->name);
  if (val->dtype == HD_DT_F32) memcpy(out, val->data, 4);
  else {
    uint16_t h;
    memcpy(&h, val->data, 2);
    *out = val->dtype == HD_DT_BF16 ? hd_bf16_to_f32(h) : hd_f16_to_f32(h);
  }
  ci->have = 1;
  ci->n = 1;
  return NULL;
}

hd_status *op_norm_axis(int64_t a, int r, int *out, const char *what) {
  if (a < -(int64_t)r || a >= r)
    return hd_error(HD_ERR_INVALID_ARG, "%s: axis %lld out of range for rank %d", what, (long long)a, r);
  *out = (int)(a < 0 ? a + r : a);
  return NULL;
}

int op_broadcast_axis(const ir_node *n, int k, int d, int out_rank, int in_rank) {
  (void)n, (void)k;
  return d - (out_rank - in_rank);
}

hd_status *op_broadcast(int ra, const int64_t *da, int rb, const int64_t *db, int *rout, int64_t *dout) {
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - ra), ib = i - (r - rb);
    int64_t a = ia >= 0 ? da[ia] : 1, b = ib >= 0 ? db[ib] : 1;
    if (a == b || b == 1) dout[i] = a;
    else if (a == 1) dout[i] = b;
    else return hd_error(HD_ERR_INVALID_ARG, "shapes do not broadcast: dim %d is %lld and %lld", i,
                         (long long)a, (long long)b);
  }
  *rout = r;
  return NULL;
}

hd_status *op_attr_ints_exact(const op_attrs *a, const char *name, int64_t dflt, int64_t *dst, int len) {
  int64_t buf[8];
  int n = 0, found = 0;
  HD_TRY(a->get_ints(a->ctx, name, buf, 8, &n, &found));
  if (!found) {
    for (int i = 0; i < len; i++) dst[i] = dflt;
    return NULL;
  }
  if (n != len) return hd_error(HD_ERR_INVALID_ARG, "attribute %s has %d values, expected %d", name, n, len);
  memcpy(dst, buf, sizeof(int64_t) * (size_t)n);
  return NULL;
}

hd_status *op_window_limits(const char *op, int ns, const int64_t *kernel, int min_kernel, const int64_t *strides,
                            const int64_t *dilations, const int64_t *pads_begin, const int64_t *pads_end) {
  for (int i = 0; i < ns; i++) {
    if (kernel[i] < min_kernel || strides[i] < 1 || dilations[i] < 1 || pads_begin[i] < 0 || pads_end[i] < 0)
      return hd_error(HD_ERR_INVALID_ARG, "%s: kernel/stride/dilation below its minimum or a negative pad", op);
    if (kernel[i] > HD_MAX_WINDOW || strides[i] > HD_MAX_WINDOW || dilations[i] > HD_MAX_WINDOW ||
        pads_begin[i] > HD_MAX_WINDOW || pads_end[i] > HD_MAX_WINDOW)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: a kernel, stride, dilation or pad above %lld", op,
                      (long long)HD_MAX_WINDOW);
  }
  return NULL;
}

hd_status *op_window_out(const char *op, int64_t in, int64_t k, int64_t s, int64_t d, op_auto_pad ap, int ceil_mode,
                         int64_t *pb, int64_t *pe, int64_t *out) {
  /* every term is within the limits: in <= HD_MAX_NUMEL, the rest <= HD_MAX_WINDOW */
  if (in < 0 || in > HD_MAX_NUMEL || k > HD_MAX_WINDOW || k < 1)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: input size %lld or kernel %lld out of range", op, (long long)in,
                    (long long)k);
  int64_t span = (k - 1) * d + 1;
  if (ap == OP_PAD_SAME_UPPER || ap == OP_PAD_SAME_LOWER) {
    int64_t o = (in + s - 1) / s;
    int64_t total = (o - 1) * s + span - in;
    int64_t head = ap == OP_PAD_SAME_LOWER ? (total + 1) / 2 : total / 2;
    if (head < 0)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s: SAME padding gives a negative leading pad (%lld)", op,
                      (long long)head);
    *pb = head;
    *pe = total - head < 0 ? 0 : total - head;
    *out = o;
    return NULL;
  }
  if (ap == OP_PAD_VALID) *pb = *pe = 0;
  int64_t room = in + *pb + *pe - span;
  if (room < 0)
    return hd_error(HD_ERR_INVALID_ARG, "%s: input size %lld (%lld padded) smaller than the kernel span %lld", op,
                    (long long)in, (long long)(in + *pb + *pe), (long long)span);
  *out = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
  if (ceil_mode && (*out - 1) * s >= in + *pb) (*out)--;
  return NULL;
}

hd_status *op_attr_flag(const op_attrs *a, const char *name, int *v) {
  int64_t x = 0;
  HD_TRY(op_attr_int(a, name, 0, &x));
  if (x != 0 && x != 1) return hd_error(HD_ERR_NOT_SUPPORTED, "attribute %s = %lld (only 0 or 1 run here)", name, (long long)x);
  *v = (int)x;
  return NULL;
}
