/* Elementwise activations and unary math: Relu, LeakyRelu, Clip, Sigmoid,
 * HardSigmoid, HardSwish, Tanh, Erf, Gelu, Sqrt, Reciprocal, Exp, Log, Neg,
 * Abs, Sin, Cos, Floor, Ceil, Round, Sign, Softplus, Elu, and com.microsoft
 * Gelu, FastGelu, BiasGelu, QuickGelu (with a bias added first, where
 * given). One family: the kind is op_unary.act, which is also the form the
 * fusion passes fold into the producing op. fp32 and fp16. */
#include <float.h>
#include <string.h>

#include "ops/op_util.h"

static hd_status *unary_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  op_act *act = &OP_P(n)->unary.act;
  memset(&OP_P(n)->unary, 0, sizeof OP_P(n)->unary);
  char approx[16] = "none";
  int found = 0;
  switch (n->kind) {
    case OP_RELU: act->kind = OP_ACT_RELU; break;
    case OP_SIGMOID: act->kind = OP_ACT_SIGMOID; break;
    case OP_TANH: act->kind = OP_ACT_TANH; break;
    case OP_HARD_SWISH: act->kind = OP_ACT_HARD_SWISH; break;
    case OP_ERF: act->kind = OP_ACT_ERF; break;
    case OP_SQRT: act->kind = OP_ACT_SQRT; break;
    case OP_RECIPROCAL: act->kind = OP_ACT_RECIPROCAL; break;
    case OP_EXP: act->kind = OP_ACT_EXP; break;
    case OP_LOG: act->kind = OP_ACT_LOG; break;
    case OP_NEG: act->kind = OP_ACT_NEG; break;
    case OP_ABS: act->kind = OP_ACT_ABS; break;
    case OP_SIN: act->kind = OP_ACT_SIN; break;
    case OP_COS: act->kind = OP_ACT_COS; break;
    case OP_FLOOR: act->kind = OP_ACT_FLOOR; break;
    case OP_CEIL: act->kind = OP_ACT_CEIL; break;
    case OP_ROUND: act->kind = OP_ACT_ROUND; break;
    case OP_SIGN: act->kind = OP_ACT_SIGN; break;
    case OP_SOFTPLUS: act->kind = OP_ACT_SOFTPLUS; break;
    case OP_ELU:
      act->kind = OP_ACT_ELU;
      HD_TRY(op_attr_float(a, "alpha", 1.0f, &act->alpha));
      break;
    case OP_GELU:
      HD_TRY(a->get_string(a->ctx, "approximate", approx, sizeof approx, &found));
      if (strcmp(approx, "none") == 0) act->kind = OP_ACT_GELU;
      else if (strcmp(approx, "tanh") == 0) act->kind = OP_ACT_GELU_TANH;
      else return hd_error(HD_ERR_INVALID_ARG, "Gelu approximate '%s'", approx);
      break;
    case OP_MS_GELU: act->kind = OP_ACT_GELU; break;
    case OP_BIAS_GELU:
    case OP_FAST_GELU:
      act->kind = n->kind == OP_BIAS_GELU ? OP_ACT_GELU : OP_ACT_GELU_TANH;
      OP_P(n)->unary.has_bias = op_input(n, 1) != IR_NONE;
      if (n->kind == OP_BIAS_GELU && !OP_P(n)->unary.has_bias)
        return hd_error(HD_ERR_INVALID_ARG, "BiasGelu needs a bias");
      break;
    case OP_QUICK_GELU:
      act->kind = OP_ACT_QUICK_GELU;
      HD_TRY(op_attr_float(a, "alpha", 1.702f, &act->alpha));
      break;
    case OP_LEAKY_RELU:
      act->kind = OP_ACT_LEAKY_RELU;
      HD_TRY(op_attr_float(a, "alpha", 0.01f, &act->alpha));
      break;
    case OP_HARD_SIGMOID:
      act->kind = OP_ACT_HARD_SIGMOID;
      HD_TRY(op_attr_float(a, "alpha", 0.2f, &act->alpha));
      HD_TRY(op_attr_float(a, "beta", 0.5f, &act->beta));
      break;
    case OP_CLIP:
      act->kind = OP_ACT_CLIP;
      act->alpha = -FLT_MAX;
      act->beta = FLT_MAX;
      if (n->opset < 11) {
        HD_TRY(op_attr_float(a, "min", -FLT_MAX, &act->alpha));
        HD_TRY(op_attr_float(a, "max", FLT_MAX, &act->beta));
      } else {
        /* min/max are inputs: only constants become parameters. */
        op_const_info ci;
        if (op_input(n, 1) != IR_NONE) HD_TRY(op_const_scalar(g, n->in[1], &act->alpha, &ci));
        if (op_input(n, 2) != IR_NONE) HD_TRY(op_const_scalar(g, n->in[2], &act->beta, &ci));
      }
      /* ONNX clips as min(max(x, lo), hi): with lo > hi every value is hi. */
      if (act->alpha > act->beta) act->alpha = act->beta;
      break;
    default: return hd_error(HD_ERR_INTERNAL, "activation parse for kind %d", (int)n->kind);
  }
  return NULL;
}

static hd_status *unary_check(const ir_graph *g, const ir_node *n) {
  HD_TRY(op_check_float_io(g, n, n->op_type));
  if (n->nout > 1 && op_has_output(n, 1))
    return hd_error(HD_ERR_INVALID_ARG, "%s has one output", n->op_type);
  if (OP_P(n)->unary.has_bias) {
    const ir_value *x = &g->values[n->in[0]], *b = &g->values[n->in[1]];
    if (b->rank != 1 || x->rank < 1 || (b->dims[0] >= 0 && x->dims[x->rank - 1] >= 0 && b->dims[0] != x->dims[x->rank - 1]))
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s with a bias that is not one row of the last dim", n->op_type);
  }
  return NULL;
}

static hd_status *unary_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p) {
  (void)g;
  const ir_tensor *x = &t[n->in[0]];
  if (p->unary.has_bias && (x->rank < 1 || t[n->in[1]].rank != 1 || t[n->in[1]].dims[0] != x->dims[x->rank - 1]))
    return hd_error(HD_ERR_INVALID_ARG, "%s: bias of another size than the last dim", n->op_type);
  ir_tensor *y = &t[n->out[0]];
  y->rank = x->rank;
  memcpy(y->dims, x->dims, sizeof x->dims);
  return NULL;
}

/* Opset ranges: the first version without the legacy consumed_inputs
 * attribute, up to the newest (later versions only added types). Clip 6
 * reads min/max attributes, 11+ constant inputs. */
OP_DEF(unary, RELU, "Relu", 6, 14, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, LEAKY_RELU, "LeakyRelu", 6, 16, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, CLIP, "Clip", 6, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, SIGMOID, "Sigmoid", 6, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, HARD_SIGMOID, "HardSigmoid", 6, 22, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, HARD_SWISH, "HardSwish", 14, 22, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, TANH, "Tanh", 6, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, ERF, "Erf", 9, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, GELU, "Gelu", 20, 20, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, SQRT, "Sqrt", 6, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, RECIPROCAL, "Reciprocal", 6, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, EXP, "Exp", 6, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, LOG, "Log", 6, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, NEG, "Neg", 6, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, ABS, "Abs", 6, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, SIN, "Sin", 7, 22, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, COS, "Cos", 7, 22, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, FLOOR, "Floor", 6, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, CEIL, "Ceil", 6, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, ROUND, "Round", 11, 22, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, SIGN, "Sign", 9, 13, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, SOFTPLUS, "Softplus", 1, 22, .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, ELU, "Elu", 6, 22, .elementwise_axis = op_broadcast_axis)
/* ONNX Runtime's contrib GELUs: Gelu (exact), FastGelu (tanh form, bias
 * optional), BiasGelu (exact, bias), QuickGelu (x * sigmoid(alpha x)). */
OP_DEF(unary, MS_GELU, "Gelu", 1, 1, .domain = "com.microsoft", .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, FAST_GELU, "FastGelu", 1, 1, .domain = "com.microsoft", .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, BIAS_GELU, "BiasGelu", 1, 1, .domain = "com.microsoft", .elementwise_axis = op_broadcast_axis)
OP_DEF(unary, QUICK_GELU, "QuickGelu", 1, 1, .domain = "com.microsoft", .elementwise_axis = op_broadcast_axis)
