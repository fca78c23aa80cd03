/* Generators whose inputs are values known when a plan is built, so the
 * planner computes them then:
 *   ConstantOfShape (9-25)  the shape input's values; every element the
 *                           value attribute (default fp32 0)
 *   Range (11-25)           start, limit, delta scalars (float, double,
 *                           int16, int32, int64): max(ceil((limit - start)
 *                           / delta), 0) elements start, start + delta, ...
 *                           (accumulated in the type, as ONNX Runtime does) */
#include <math.h>
#include <string.h>

#include "common/hd_math.h"
#include "ops/op_util.h"

static hd_status *fill_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  op_fill *f = &OP_P(n)->fill;
  memset(f, 0, sizeof *f);
  if (!op_has_output(n, 0)) return hd_error(HD_ERR_INVALID_ARG, "%s needs an output", n->op_type);
  if (n->kind == OP_RANGE) {
    if (n->nin != 3 || op_input(n, 0) == IR_NONE || op_input(n, 1) == IR_NONE || op_input(n, 2) == IR_NONE)
      return hd_error(HD_ERR_INVALID_ARG, "Range needs start, limit and delta");
    return NULL;
  }
  if (op_input(n, 0) == IR_NONE) return hd_error(HD_ERR_INVALID_ARG, "ConstantOfShape needs its shape input");
  int dtype = HD_DT_F32, found = 0;
  int64_t numel = 1;
  HD_TRY(a->get_tensor(a->ctx, "value", &dtype, &numel, f->value, sizeof f->value, &found));
  if (found && numel != 1) return hd_error(HD_ERR_INVALID_ARG, "ConstantOfShape value of %lld elements", (long long)numel);
  if (found && dtype != g->values[n->out[0]].dtype)
    return hd_error(HD_ERR_INVALID_ARG, "ConstantOfShape value of %s for an output of %s", hd_dtype_name(dtype),
                    hd_dtype_name(g->values[n->out[0]].dtype));
  return NULL;
}

static int range_type(int dt) {
  return dt == HD_DT_F32 || dt == HD_DT_F64 || dt == HD_DT_I16 || dt == HD_DT_I32 || dt == HD_DT_I64;
}

static hd_status *fill_check(const ir_graph *g, const ir_node *n) {
  int dt = g->values[n->out[0]].dtype;
  if (!op_is_data(dt)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of type %s", n->op_type, hd_dtype_name(dt));
  if (n->kind == OP_CONSTANT_OF_SHAPE) {
    if (g->values[n->in[0]].dtype != HD_DT_I64) return hd_error(HD_ERR_INVALID_ARG, "ConstantOfShape shape of another type");
    return NULL;
  }
  if (!range_type(dt)) return hd_error(HD_ERR_NOT_SUPPORTED, "Range of type %s", hd_dtype_name(dt));
  for (int k = 0; k < 3; k++) {
    const ir_value *v = &g->values[n->in[k]];
    if (v->dtype != dt) return hd_error(HD_ERR_INVALID_ARG, "Range input %d of another type", k);
    if (v->rank > 0 && !(v->rank == 1 && v->dims[0] == 1))
      return hd_error(HD_ERR_INVALID_ARG, "Range input %d is no scalar", k);
  }
  return NULL;
}

/* A scalar value input as a double and (for integer types) an int64. */
static hd_status *scalar_value(const ir_graph *g, const ir_tensor *t, int v, double *d, int64_t *i) {
  const ir_tensor *x = &t[v];
  if (ir_numel(x->rank, x->dims) != 1) return hd_error(HD_ERR_INVALID_ARG, "'%s' is no scalar", g->values[v].name);
  if (!x->host) return hd_error(HD_ERR_NOT_SUPPORTED, "the value of '%s' is not known when the plan is built", g->values[v].name);
  *i = 0;
  switch (x->dtype) {
    case HD_DT_F32: { float f; memcpy(&f, x->host, 4); *d = f; return NULL; }
    case HD_DT_F64: memcpy(d, x->host, 8); return NULL;
    case HD_DT_I16: { int16_t s; memcpy(&s, x->host, 2); *i = s; break; }
    case HD_DT_I32: { int32_t s; memcpy(&s, x->host, 4); *i = s; break; }
    case HD_DT_I64: memcpy(i, x->host, 8); break;
    default: return hd_error(HD_ERR_NOT_SUPPORTED, "Range of type %s", hd_dtype_name(x->dtype));
  }
  *d = (double)*i;
  return NULL;
}

static hd_status *fill_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  ir_tensor *y = &t[n->out[0]];
  if (n->kind == OP_CONSTANT_OF_SHAPE) {
    const ir_tensor *s = &t[n->in[0]];
    if (s->rank != 1) return hd_error(HD_ERR_INVALID_ARG, "ConstantOfShape shape of rank %d", s->rank);
    int cnt = 0;
    HD_TRY(op_value_ints(g, t, n->in[0], y->dims, IR_MAX_RANK, &cnt));
    for (int i = 0; i < cnt; i++)
      if (y->dims[i] < 0) return hd_error(HD_ERR_INVALID_ARG, "ConstantOfShape dim %lld", (long long)y->dims[i]);
    y->rank = cnt;
    return NULL;
  }
  op_fill *f = &p->fill;
  double start, limit, delta;
  int64_t is, il, id;
  HD_TRY(scalar_value(g, t, n->in[0], &start, &is));
  HD_TRY(scalar_value(g, t, n->in[1], &limit, &il));
  HD_TRY(scalar_value(g, t, n->in[2], &delta, &id));
  int ints = t[n->in[0]].dtype != HD_DT_F32 && t[n->in[0]].dtype != HD_DT_F64;
  double len;
  if (ints) {
    if (id == 0) return hd_error(HD_ERR_INVALID_ARG, "Range with delta 0");
    /* ceil((limit - start) / delta) in exact integer arithmetic */
    __int128 span = (__int128)il - is, q = span / id;
    if (q * id != span && ((span > 0) == (id > 0))) q++;
    len = (double)(q < 0 ? 0 : q);
  } else {
    if (delta == 0 || delta != delta) return hd_error(HD_ERR_INVALID_ARG, "Range with delta %g", delta);
    len = ceil((limit - start) / delta);
    if (!(len > 0)) len = 0; /* also NaN */
  }
  if (len > (double)HD_MAX_NUMEL) return hd_error(HD_ERR_NOT_SUPPORTED, "Range of %g elements", len);
  y->rank = 1;
  y->dims[0] = (int64_t)len;
  f->istart = is, f->idelta = id, f->fstart = start, f->fdelta = delta;
  return NULL;
}

OP_DEF(fill, CONSTANT_OF_SHAPE, "ConstantOfShape", 9, 25, .value_inputs = 1u)

OP_DEF(fill, RANGE, "Range", 11, 25, .value_inputs = 7u)
