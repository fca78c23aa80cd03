/* Squeeze-and-excitation (ops/squeeze_excite.h): an op of the EP's own,
 * made by the fusion pass (plan/plan_fuse_se.c) and never read from a
 * model, so parse refuses every node and check vets what the pass made. */
#include <string.h>

#include "ops/op_util.h"

static hd_status *squeeze_excite_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  (void)a;
  return hd_error(HD_ERR_NOT_SUPPORTED, "%s is made by the EP's fusion pass, not read from models", n->op_type);
}

/* w is [rows, cols, 1...] of rank `rank`, or rows / cols dynamic (-1: any). */
static int proj_shape(const ir_value *w, int rank, int64_t rows, int64_t cols) {
  if (w->rank != rank || w->dims[0] < 1 || w->dims[1] < 1) return 0;
  if ((rows >= 0 && w->dims[0] != rows) || (cols >= 0 && w->dims[1] != cols)) return 0;
  for (int d = 2; d < rank; d++)
    if (w->dims[d] != 1) return 0;
  return 1;
}

static int vector_of(const ir_value *b, int64_t len) { return b->rank == 1 && b->dims[0] == len; }

static hd_status *squeeze_excite_check(const ir_graph *g, const ir_node *n) {
  if (n->nin != SE_NIN || n->in[SE_IN_W1] == IR_NONE || n->in[SE_IN_W2] == IR_NONE)
    return hd_error(HD_ERR_INVALID_ARG, "%s needs x, w1, b1?, w2, b2?", n->op_type);
  HD_TRY(op_check_float_io(g, n, n->op_type));
  const ir_value *x = &g->values[n->in[SE_IN_X]];
  const ir_value *w1 = &g->values[n->in[SE_IN_W1]], *w2 = &g->values[n->in[SE_IN_W2]];
  if (x->rank < 3) return hd_error(HD_ERR_NOT_SUPPORTED, "%s of rank %d", n->op_type, x->rank);
  for (int k = SE_IN_W1; k < SE_NIN; k++)
    if (n->in[k] != IR_NONE && !g->values[n->in[k]].is_const)
      return hd_error(HD_ERR_NOT_SUPPORTED, "%s input %d not constant", n->op_type, k);
  if (!proj_shape(w1, x->rank, -1, x->dims[1] >= 0 ? x->dims[1] : -1) ||
      !proj_shape(w2, x->rank, w1->dims[1], w1->dims[0]))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: projections of shapes that do not chain", n->op_type);
  if (w1->dims[0] > OP_SE_MAX_CHANNELS || w1->dims[1] > OP_SE_MAX_CHANNELS)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s of %lld x %lld channels (at most %d)", n->op_type,
                    (long long)w1->dims[1], (long long)w1->dims[0], OP_SE_MAX_CHANNELS);
  if ((n->in[SE_IN_B1] != IR_NONE && !vector_of(&g->values[n->in[SE_IN_B1]], w1->dims[0])) ||
      (n->in[SE_IN_B2] != IR_NONE && !vector_of(&g->values[n->in[SE_IN_B2]], w2->dims[0])))
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s: biases of the wrong length", n->op_type);
  return NULL;
}

static hd_status *squeeze_excite_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  (void)pp;
  const ir_tensor *x = &t[n->in[SE_IN_X]];
  int64_t c = g->values[n->in[SE_IN_W1]].dims[1];
  if (x->rank < 3 || x->dims[1] != c)
    return hd_error(HD_ERR_INVALID_ARG, "%s: input of %lld channels for projections of %lld", n->op_type,
                    (long long)(x->rank >= 2 ? x->dims[1] : -1), (long long)c);
  ir_tensor *y = &t[n->out[0]];
  y->rank = x->rank;
  memcpy(y->dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  return NULL;
}

/* A domain of the EP's own: no model's node is ever this op. */
OP_DEF(squeeze_excite, SQUEEZE_EXCITE, "SqueezeExcite", 1, 1, .domain = "hipdnn.fused")
