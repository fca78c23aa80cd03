/* MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool on fp32 and fp16,
 * 1D-3D. Explicit or automatic pads, strides, dilations, ceil_mode,
 * count_include_pad. MaxPool's optional Indices output is not run. */
#include <string.h>

#include "ops/op_util.h"

static hd_status *pool_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  op_pool *p = &OP_P(n)->pool;
  memset(p, 0, sizeof *p);
  if (n->nin != 1 || n->in[0] == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "%s needs one input and output Y", n->op_type);
  p->is_max = n->kind == OP_MAX_POOL || n->kind == OP_GLOBAL_MAX_POOL;
  p->global = n->kind == OP_GLOBAL_AVERAGE_POOL || n->kind == OP_GLOBAL_MAX_POOL;
  /* Indices: a second output the model reads; only Y is computed here. */
  if (op_has_output(n, 1)) return hd_error(HD_ERR_NOT_SUPPORTED, "%s with the Indices output", n->op_type);
  int rank = g->values[n->in[0]].rank;
  if (rank < 3 || rank > 2 + OP_MAX_SPATIAL)
    return hd_error(HD_ERR_NOT_SUPPORTED, "%s of rank %d (1D-3D only)", n->op_type, rank);
  int ns = p->nspatial = rank - 2;
  for (int i = 0; i < ns; i++) p->strides[i] = p->dilations[i] = 1;
  if (p->global) return NULL;

  char pad_mode[32] = "NOTSET";
  int found = 0;
  HD_TRY(a->get_string(a->ctx, "auto_pad", pad_mode, sizeof pad_mode, &found));
  if (!found || strcmp(pad_mode, "NOTSET") == 0) p->auto_pad = OP_PAD_NOTSET;
  else if (strcmp(pad_mode, "SAME_UPPER") == 0) p->auto_pad = OP_PAD_SAME_UPPER;
  else if (strcmp(pad_mode, "SAME_LOWER") == 0) p->auto_pad = OP_PAD_SAME_LOWER;
  else if (strcmp(pad_mode, "VALID") == 0) p->auto_pad = OP_PAD_VALID;
  else return hd_error(HD_ERR_INVALID_ARG, "%s auto_pad '%s' is not valid", n->op_type, pad_mode);

  int64_t k[OP_MAX_SPATIAL];
  int nk = 0;
  HD_TRY(a->get_ints(a->ctx, "kernel_shape", k, OP_MAX_SPATIAL, &nk, &found));
  if (!found || nk != ns)
    return hd_error(HD_ERR_INVALID_ARG, "%s needs kernel_shape with %d values", n->op_type, ns);
  memcpy(p->kernel, k, sizeof(int64_t) * (size_t)ns);
  /* Attributes a version's schema lacks are not read: ORT answers NOT_FOUND
   * for them rather than "absent". MaxPool: dilations and ceil_mode from
   * 10; AveragePool: count_include_pad from 7, ceil_mode from 10, dilations
   * from 19. */
  int has_dil = p->is_max ? n->opset >= 10 : n->opset >= 19;
  int has_ceil = n->opset >= 10, has_cip = !p->is_max && n->opset >= 7;
  HD_TRY(op_attr_ints_exact(a, "strides", 1, p->strides, ns));
  if (has_dil) HD_TRY(op_attr_ints_exact(a, "dilations", 1, p->dilations, ns));
  int64_t pads[2 * OP_MAX_SPATIAL];
  HD_TRY(op_attr_ints_exact(a, "pads", 0, pads, 2 * ns));
  for (int i = 0; i < ns; i++) {
    p->pads_begin[i] = pads[i];
    p->pads_end[i] = pads[ns + i];
  }
  HD_TRY(op_window_limits(n->op_type, ns, p->kernel, 1, p->strides, p->dilations, p->pads_begin, p->pads_end));
  if (has_ceil) HD_TRY(op_attr_flag(a, "ceil_mode", &p->ceil_mode));
  if (has_cip) HD_TRY(op_attr_flag(a, "count_include_pad", &p->count_include_pad));
  /* storage_order only orders Indices, which is never computed here. */
  return NULL;
}

static hd_status *pool_check(const ir_graph *g, const ir_node *n) {
  HD_TRY(op_check_float_io(g, n, n->op_type));
  return NULL;
}

static hd_status *pool_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  (void)g;
  op_pool *p = &pp->pool;
  const ir_tensor *x = &t[n->in[0]];
  ir_tensor *y = &t[n->out[0]];
  int ns = p->nspatial;
  if (x->rank != ns + 2) return hd_error(HD_ERR_INVALID_ARG, "%s: input rank %d", n->op_type, x->rank);
  /* As ONNX Runtime's pools: an empty input is legal only by its batch. */
  if (ir_numel(x->rank, x->dims) == 0 && x->dims[0] != 0)
    return hd_error(HD_ERR_INVALID_ARG, "%s: only the batch dim may be 0", n->op_type);
  int ca = p->channels_last ? ns + 1 : 1, s0 = p->channels_last ? 1 : 2;
  y->rank = x->rank;
  y->dims[0] = x->dims[0];
  y->dims[ca] = x->dims[ca];
  for (int i = 0; i < ns; i++) {
    int64_t in = x->dims[s0 + i];
    if (p->global) {
      p->kernel[i] = in;
      p->strides[i] = 1;
      p->dilations[i] = 1;
      p->pads_begin[i] = p->pads_end[i] = 0;
      y->dims[s0 + i] = 1;
      continue;
    }
    HD_TRY(op_window_out(n->op_type, in, p->kernel[i], p->strides[i], p->dilations[i], p->auto_pad, p->ceil_mode,
                         &p->pads_begin[i], &p->pads_end[i], &y->dims[s0 + i]));
  }
  p->auto_pad = OP_PAD_NOTSET;
  return NULL;
}

/* Every version: attributes a version lacks read as their defaults
 * (MaxPool 8: Indices, 10: ceil_mode and dilations, 12: int8 types, 22:
 * bf16; AveragePool 7: count_include_pad, 10: ceil_mode, 19: dilations). */
OP_DEF(pool, MAX_POOL, "MaxPool", 1, 22)
OP_DEF(pool, AVERAGE_POOL, "AveragePool", 1, 22)
OP_DEF(pool, GLOBAL_AVERAGE_POOL, "GlobalAveragePool", 1, 22)
OP_DEF(pool, GLOBAL_MAX_POOL, "GlobalMaxPool", 1, 22)
