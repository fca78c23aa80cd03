/* BatchNormalization in inference mode (opsets 9-15): y = (x - mean) /
 * sqrt(var + epsilon) * scale + B per channel (dim 1). Training mode and
 * the running-statistics outputs are not run here. */
#include <string.h>

#include "ops/op_util.h"

static hd_status *bn_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  memset(&OP_P(n)->batchnorm, 0, sizeof OP_P(n)->batchnorm);
  if (n->nin != 5)
    return hd_error(HD_ERR_INVALID_ARG, "BatchNormalization needs 5 inputs, has %d", n->nin);
  for (int k = 0; k < 5; k++)
    if (n->in[k] == IR_NONE) return hd_error(HD_ERR_INVALID_ARG, "BatchNormalization input %d absent", k);
  if (!op_has_output(n, 0)) return hd_error(HD_ERR_INVALID_ARG, "BatchNormalization without output Y");
  HD_TRY(op_attr_float(a, "epsilon", 1e-5f, &OP_P(n)->batchnorm.epsilon));
  int64_t training = 0;
  if (n->opset >= 14) HD_TRY(op_attr_int(a, "training_mode", 0, &training));
  if (training) return hd_error(HD_ERR_NOT_SUPPORTED, "BatchNormalization in training mode");
  for (int k = 1; k < n->nout; k++)
    if (op_has_output(n, k))
      return hd_error(HD_ERR_NOT_SUPPORTED, "BatchNormalization with statistics output %d", k);
  return NULL;
}

static hd_status *bn_check(const ir_graph *g, const ir_node *n) {
  const ir_value *x = &g->values[n->in[0]];
  if (!op_is_float(x->dtype))
    return hd_error(HD_ERR_NOT_SUPPORTED, "BatchNormalization of type %s", hd_dtype_name(x->dtype));
  if (g->values[n->out[0]].dtype != x->dtype)
    return hd_error(HD_ERR_NOT_SUPPORTED, "BatchNormalization output of another type");
  if (x->rank < 2) return hd_error(HD_ERR_NOT_SUPPORTED, "BatchNormalization of rank %d", x->rank);
  /* Opset 15 lets scale/B and mean/var have their own float types. */
  for (int k = 1; k < 5; k++) {
    const ir_value *v = &g->values[n->in[k]];
    if (!op_is_float(v->dtype))
      return hd_error(HD_ERR_NOT_SUPPORTED, "BatchNormalization parameter of type %s", hd_dtype_name(v->dtype));
    if (v->rank != 1) return hd_error(HD_ERR_NOT_SUPPORTED, "BatchNormalization parameter of rank %d", v->rank);
    int64_t ch = x->dims[OP_P(n)->batchnorm.channels_last ? x->rank - 1 : 1];
    if (v->dims[0] >= 0 && ch >= 0 && v->dims[0] != ch)
      return hd_error(HD_ERR_INVALID_ARG, "BatchNormalization parameter %d has %lld values for %lld channels", k,
                      (long long)v->dims[0], (long long)ch);
  }
  return NULL;
}

static hd_status *bn_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  (void)g;
  const ir_tensor *x = &t[n->in[0]];
  int64_t ch = x->dims[p->batchnorm.channels_last ? x->rank - 1 : 1];
  for (int k = 1; k < 5; k++) {
    const ir_tensor *v = &t[n->in[k]];
    if (v->rank != 1 || v->dims[0] != ch)
      return hd_error(HD_ERR_INVALID_ARG, "BatchNormalization parameter %d must have shape [%lld]", k,
                      (long long)ch);
  }
  ir_tensor *y = &t[n->out[0]];
  y->rank = x->rank;
  memcpy(y->dims, x->dims, sizeof x->dims);
  return NULL;
}

/* 9: the spatial attribute is gone; 14: training_mode (refused when set);
 * 15: separate parameter types. */
OP_DEF(bn, BATCHNORM, "BatchNormalization", 9, 15)
