/* com.microsoft MatMulNBits (1): A [..., K] (fp32/fp16) times block-quantised
 * weights B^T, as ONNX Runtime's GenAI builder and quantizer write them.
 * Claimed: 4-bit codes, block_size a power of two >= 16 (K need not be a
 * multiple: the last block's padding codes are ignored), B, scales and
 * zero points constant initializers (the backends keep them as given),
 * zero points absent or packed uint8, bias optional. Left to the CPU EP:
 * other bit widths, g_idx, float zero points, prepacked weights. */
#include <string.h>

#include "common/hd_math.h"
#include "ops/op_util.h"

/* The largest K and N: kernels index a row and a column with 32-bit ints. */
#define NBITS_MAX_DIM ((int64_t)1 << 30)

static hd_status *nbits_parse(const ir_graph *g, ir_node *n, const op_attrs *a) {
  (void)g;
  op_nbits *p = &OP_P(n)->nbits;
  memset(p, 0, sizeof *p);
  if (op_input(n, 0) == IR_NONE || op_input(n, 1) == IR_NONE || op_input(n, 2) == IR_NONE || !op_has_output(n, 0))
    return hd_error(HD_ERR_INVALID_ARG, "MatMulNBits needs A, B, scales and an output");
  p->in_zp = op_input(n, 3) != IR_NONE ? 3 : -1;
  p->in_bias = op_input(n, 5) != IR_NONE ? 5 : -1;
  if (op_input(n, 4) != IR_NONE) return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits with g_idx");
  int64_t bits, prepacked, accuracy;
  HD_TRY(op_attr_int(a, "K", 0, &p->k));
  HD_TRY(op_attr_int(a, "N", 0, &p->n));
  HD_TRY(op_attr_int(a, "block_size", 0, &p->block_size));
  HD_TRY(op_attr_int(a, "bits", 4, &bits));
  HD_TRY(op_attr_int(a, "weight_prepacked", 0, &prepacked));
  /* accuracy_level lets a runtime compute in less precision; 0 leaves it
   * to the runtime (GenAI's builder writes 0 for CUDA/fp16 models), 1 asks
   * for fp32: the GPU's GEMV then keeps fp16 A as it is (gpu_nbits.cu) */
  HD_TRY(op_attr_int(a, "accuracy_level", 0, &accuracy));
  p->exact = accuracy == 1;
  if (bits != 4) return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits with %lld bits", (long long)bits);
  if (prepacked) return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits with prepacked weights");
  if (p->k < 1 || p->n < 1 || p->k > NBITS_MAX_DIM || p->n > NBITS_MAX_DIM)
    return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits with K %lld, N %lld", (long long)p->k, (long long)p->n);
  int64_t bs = p->block_size;
  if (bs < 16 || bs > NBITS_MAX_DIM || (bs & (bs - 1)) != 0)
    return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits with block_size %lld", (long long)bs);
  p->bits = 4;
  p->k_blocks = (p->k + bs - 1) / bs;
  p->zp_bytes = (p->k_blocks + 1) / 2;
  return NULL;
}

/* v has shape [d0] (1-D form) or [d0 / d1, d1] (2-D form); unknown dims pass. */
static int flat_or_2d(const ir_value *v, int64_t rows, int64_t cols) {
  if (v->rank == 1) return v->dims[0] < 0 || v->dims[0] == rows * cols;
  if (v->rank == 2) return (v->dims[0] < 0 || v->dims[0] == rows) && (v->dims[1] < 0 || v->dims[1] == cols);
  return 0;
}

static hd_status *nbits_check(const ir_graph *g, const ir_node *n) {
  const op_nbits *p = &OP_P(n)->nbits;
  const ir_value *a = &g->values[n->in[0]], *b = &g->values[n->in[1]], *s = &g->values[n->in[2]];
  int dt = a->dtype;
  if (!op_is_float(dt)) return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits of type %s", hd_dtype_name(dt));
  if (s->dtype != dt || g->values[n->out[0]].dtype != dt ||
      (p->in_bias >= 0 && g->values[n->in[p->in_bias]].dtype != dt))
    return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits with scales, bias or output of another type");
  if (b->dtype != HD_DT_U8) return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits with B of type %s", hd_dtype_name(b->dtype));
  if (p->in_zp >= 0 && g->values[n->in[p->in_zp]].dtype != HD_DT_U8)
    return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits with zero points of type %s (only packed uint8)",
                    hd_dtype_name(g->values[n->in[p->in_zp]].dtype));
  /* the weights stay on the device as given: they must be constants */
  int consts[] = {1, 2, p->in_zp};
  for (int i = 0; i < 3; i++)
    if (consts[i] >= 0 && !g->values[n->in[consts[i]]].is_const)
      return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits input %d is not a constant initializer", consts[i]);
  if (a->rank < 1) return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits with A of rank %d", a->rank);
  if (a->dims[a->rank - 1] >= 0 && a->dims[a->rank - 1] != p->k)
    return hd_error(HD_ERR_INVALID_ARG, "MatMulNBits: A has %lld columns, K is %lld", (long long)a->dims[a->rank - 1],
                    (long long)p->k);
  int64_t blob = p->block_size / 2;
  if (b->rank != 3 || b->dims[0] != p->n || b->dims[1] != p->k_blocks || b->dims[2] != blob)
    return hd_error(HD_ERR_INVALID_ARG, "MatMulNBits: B is not [%lld, %lld, %lld]", (long long)p->n,
                    (long long)p->k_blocks, (long long)blob);
  if (!flat_or_2d(s, p->n, p->k_blocks))
    return hd_error(HD_ERR_INVALID_ARG, "MatMulNBits: scales are not [%lld * %lld]", (long long)p->n, (long long)p->k_blocks);
  if (p->in_zp >= 0 && !flat_or_2d(&g->values[n->in[p->in_zp]], p->n, p->zp_bytes))
    return hd_error(HD_ERR_INVALID_ARG, "MatMulNBits: zero points are not [%lld * %lld]", (long long)p->n,
                    (long long)p->zp_bytes);
  if (p->in_bias >= 0) {
    const ir_value *bias = &g->values[n->in[p->in_bias]];
    if (bias->rank != 1 || (bias->dims[0] >= 0 && bias->dims[0] != p->n))
      return hd_error(HD_ERR_INVALID_ARG, "MatMulNBits: bias is not [%lld]", (long long)p->n);
  }
  return NULL;
}

/* True when t has shape [rows * cols] or [rows, cols]. */
static int tensor_flat_or_2d(const ir_tensor *t, int64_t rows, int64_t cols) {
  return (t->rank == 1 && t->dims[0] == rows * cols) || (t->rank == 2 && t->dims[0] == rows && t->dims[1] == cols);
}

static hd_status *nbits_infer(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *pp) {
  (void)g;
  const op_nbits *p = &pp->nbits;
  const ir_tensor *a = &t[n->in[0]], *b = &t[n->in[1]];
  if (a->rank < 1 || a->dims[a->rank - 1] != p->k)
    return hd_error(HD_ERR_INVALID_ARG, "MatMulNBits: A is not [..., %lld]", (long long)p->k);
  if (b->rank != 3 || b->dims[0] != p->n || b->dims[1] != p->k_blocks || b->dims[2] != p->block_size / 2 ||
      !tensor_flat_or_2d(&t[n->in[2]], p->n, p->k_blocks) ||
      (p->in_zp >= 0 && !tensor_flat_or_2d(&t[n->in[p->in_zp]], p->n, p->zp_bytes)) ||
      (p->in_bias >= 0 && (t[n->in[p->in_bias]].rank != 1 || t[n->in[p->in_bias]].dims[0] != p->n)))
    return hd_error(HD_ERR_INVALID_ARG, "MatMulNBits: B, scales, zero points or bias of another shape");
  ir_tensor *y = &t[n->out[0]];
  y->rank = a->rank;
  memcpy(y->dims, a->dims, sizeof(int64_t) * (size_t)a->rank);
  y->dims[a->rank - 1] = op_nbits_out_cols(p);
  if (ir_numel(y->rank, y->dims) < 0)
    return hd_error(HD_ERR_NOT_SUPPORTED, "MatMulNBits output past %lld elements", (long long)HD_MAX_NUMEL);
  return NULL;
}

OP_DEF(nbits, MATMUL_NBITS, "MatMulNBits", 1, 1, .domain = "com.microsoft")
