/* LRN (ONNX opsets 1 and 13): NCHW, fp32 and fp16. ONNX Runtime's CPU EP
 * runs 4-D inputs and odd sizes only: the others stay with it, which
 * reports them. */
#include <math.h>
#include <string.h>

#include "ops/op_util.h"

/* A window wider than any channel count a model has: larger sizes are the
 * CPU EP's (and fuzzed attributes cannot overflow the window's ends). */
#define LRN_MAX_SIZE (1 << 20)

static hd_status *lrn_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_lrn *p = &OP_P(n)->lrn;
  memset(p, 0, sizeof *p);
  if (op_input(n, 0) == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "LRN needs input X and output Y");
  int64_t size = 0;
  int found = 0;
  HD_TRY(a->get_int(a->ctx, "size", &size, &found));
  if (!found) return hd_error(HD_ERR_INVALID_ARG, "LRN needs the size attribute");
  if (size < 1 || size > LRN_MAX_SIZE || size % 2 == 0)
    return hd_error(HD_ERR_NOT_SUPPORTED, "LRN size %lld (odd sizes only)", (long long)size);
  p->size = (int)size;
  HD_TRY(op_attr_float(a, "alpha", 1e-4f, &p->alpha));
  HD_TRY(op_attr_float(a, "beta", 0.75f, &p->beta));
  HD_TRY(op_attr_float(a, "bias", 1.0f, &p->bias));
  if (!isfinite(p->alpha) || !isfinite(p->beta) || !isfinite(p->bias))
    return hd_error(HD_ERR_NOT_SUPPORTED, "LRN with a non-finite alpha, beta or bias");
  return NULL;
}

static hd_status *lrn_check(const ir_graph *g, const ir_node *n) {
  HD_TRY(op_check_float_io(g, n, "LRN"));
  if (g->values[n->in[0]].rank != 4)
    return hd_error(HD_ERR_NOT_SUPPORTED, "LRN of rank %d (NCHW only)", g->values[n->in[0]].rank);
  return NULL;
}

static hd_status *lrn_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  (void)g;
  (void)pp;
  const ir_tensor *x = &t[n->in[0]];
  if (x->rank != 4) return hd_error(HD_ERR_INVALID_ARG, "LRN: X of rank %d", x->rank);
  ir_tensor *y = &t[n->out[0]];
  y->rank = x->rank;
  memcpy(y->dims, x->dims, sizeof x->dims);
  return NULL;
}

OP_DEF(lrn, LRN, "LRN", 1, 13)
