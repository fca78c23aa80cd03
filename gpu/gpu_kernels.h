/* gpu_kernels: extern "C" launchers of the project's own GPU kernels, shared
 * by backends/cuda and backends/hip. Each family lives in one .cu file.
 * Launchers return the runtime's error code as an int (0 = success) and
 * never synchronize. Plain C declarations: host C code includes this. */
#ifndef GPU_KERNELS_H
#define GPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Activations are op_act_kind values (OP_ACT_*), with op_act_apply as the
 * one definition of each: the same header host code uses. */
#include "ops/op_act.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types the kernels take (values of hd_dtype, repeated here so that
 * gpu/ depends on nothing above it). */
enum {
  GPU_DT_F32 = 1,
  GPU_DT_U8 = 2,
  GPU_DT_I8 = 3,
  GPU_DT_I32 = 6,
  GPU_DT_I64 = 7,
  GPU_DT_BOOL = 9,
  GPU_DT_F16 = 10,
  GPU_DT_F64 = 11,
  GPU_DT_BF16 = 16
};

/* gpu_graph.cu: replaces each memset node of a captured graph (a
 * gpuGraph_t, not instantiated) with a kernel node writing the same bytes,
 * with the same edges; *rewritten counts them. cleared (NULL: none) is
 * memory the graph's first node sets to zeros, cleared_bytes long: a
 * memset of zeros inside it that no other memset overlaps is dropped
 * instead (*dropped), its edges joined. HIPDNN_EP_GRAPH_MEMSETS=keep leaves
 * every memset. */
int gpu_graph_memsets_to_kernels(void *graph, const void *cleared, size_t cleared_bytes, int *rewritten,
                                 int *dropped);

/* gpu_epilogue.cu: in place on y (dtype, n elements, NC[spatial] layout with
 * `inner` elements per channel plane and `channels` channels):
 *   y = act(y + bias[c] + residual)
 * bias (dtype, `channels` elements) and residual (dtype, like y) may be NULL.
 * Arithmetic in fp32. Returns -1 for a dtype it does not take. */
int gpu_conv_epilogue(void *y, const void *bias, const void *residual, int dtype, int64_t n,
                      int64_t channels, int64_t inner, int act, float alpha, float beta,
                      void *stream);
/* The same from y into out of out_dtype (dtype itself, or fp16 / bf16 from
 * fp32): a conv's epilogue and the Cast after it in one pass, rounding
 * as gpu_cast does. out may be y when the types match. */
int gpu_conv_epilogue_to(const void *y, void *out, const void *bias, const void *residual, int dtype,
                         int out_dtype, int64_t n, int64_t channels, int64_t inner, int act, float alpha,
                         float beta, void *stream);

/* gpu_conv1x1.cu: a 1x1 convolution (stride 1, no pads, one group) of
 * n images of c <= GPU_CONV1X1_MAX_C input channels, channels first:
 *   y[n, m, p] = act(sum_c w[m, c] x[n, c, p] + bias[m] + residual[n, m, p])
 * (hw pixels a plane; bias and residual may be NULL), y of out_dtype: dtype,
 * or fp16 / bf16 from fp32 (no residual then). -1: sizes or types not
 * taken (gpu_conv1x1_few_fits). */
#define GPU_CONV1X1_MAX_C 32
int gpu_conv1x1_few(const void *x, const void *w, const void *bias, const void *residual, void *y, int dtype,
                    int out_dtype, int64_t n, int64_t c, int64_t m, int64_t hw, int act, float alpha, float beta,
                    void *stream);
int gpu_conv1x1_few_fits(int64_t n, int64_t c, int64_t m, int64_t hw);

/* A 2D convolution's sizes (NCHW, w [co, c / group, kh, kw]). */
typedef struct gpu_conv2d_shape {
  int64_t n, c, co, ih, iw, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
} gpu_conv2d_shape;

/* gpu_depthwise.cu: y = act(depthwise_conv2d(x', w) + bias[c] + residual),
 * NCHW, one filter of kh x kw per channel (co = c, w is [c, 1, kh, kw]);
 * bias and residual may be NULL. x' = x, or with a prologue (pre may be
 * NULL) x' = pre->act(x + pre->bias[c]) for every input element read (zero
 * padding stays zero). Returns -1 for a dtype or size it does not take
 * (gpu_conv_depthwise_fits). */
typedef struct gpu_dw_prologue {
  const void *bias; /* dtype, c elements, or NULL */
  int act;
  float alpha, beta;
} gpu_dw_prologue;
int gpu_conv_depthwise(const void *x, const void *w, const void *bias, const void *residual, void *y,
                       int dtype, const gpu_conv2d_shape *s, int act, float alpha, float beta,
                       const gpu_dw_prologue *pre, void *stream);
/* 1 when gpu_conv_depthwise runs s on its shared-memory plane kernel
 * (stride-1 7 x 7, and 3 x 3 of 4M outputs or more), 0 on its strip
 * kernels: host-side, for tests. */
int gpu_conv_depthwise_on_plane(const gpu_conv2d_shape *s);
/* 1 when gpu_conv_depthwise takes the sizes of s (the caller checks the
 * depthwise structure). */
int gpu_conv_depthwise_fits(const gpu_conv2d_shape *s);
/* gpu_depthwise.cu: the same channels last, without a prologue: x [n, ih,
 * iw, c], w [c, kh, kw] (channels-last W [c, kh, kw, 1]), y and residual
 * [n, oh, ow, c]. Filters 3x3 and 5x5 of stride 1 or 2 and 7x7 of stride
 * 1, no dilation (gpu_conv_depthwise_nhwc_fits); -1 for others. */
int gpu_conv_depthwise_nhwc(const void *x, const void *w, const void *bias, const void *residual, void *y,
                            int dtype, const gpu_conv2d_shape *s, int act, float alpha, float beta, void *stream);
int gpu_conv_depthwise_nhwc_fits(const gpu_conv2d_shape *s);

/* gpu_direct.cu: y = act(conv2d(x, w) + bias[co] + residual), one group,
 * for filters of few taps (c * kh * kw <= GPU_DIRECT_MAX_TAPS): each thread
 * makes one output pixel for up to 32 output channels, weights in shared
 * memory. For stems like MobileNet's 3 -> 32 channel 3x3, which a DNN
 * library runs as a mostly idle implicit GEMM. -1: shape not taken
 * (gpu_conv_direct_fits). */
#define GPU_DIRECT_MAX_TAPS 64
int gpu_conv_direct(const void *x, const void *w, const void *bias, const void *residual, void *y,
                    int dtype, const gpu_conv2d_shape *s, int act, float alpha, float beta,
                    void *stream);
/* 1 when gpu_conv_direct takes the sizes of s (one group assumed). */
int gpu_conv_direct_fits(const gpu_conv2d_shape *s);
/* gpu_direct.cu: any 2D convolution with `group` groups (w [co, c/group,
 * kh, kw]), one thread per output: the last resort when the DNN library has
 * no engine at a plan's shape. Same epilogue as gpu_conv_direct. -1 for a
 * dtype or size it does not take (sizes of 2^30 and more). */
int gpu_conv_generic(const void *x, const void *w, const void *bias, const void *residual, void *y,
                     int dtype, const gpu_conv2d_shape *s, int64_t group, int act, float alpha, float beta,
                     void *stream);

/* gpu_direct.cu: y = act(conv_transpose2d(x, w) + bias[co]), NCHW,
 * `group` groups, w [c, co / group, kh, kw]; s's c/ih/iw are the input's,
 * co/oh/ow the output's and ph/pw the leading pads: y[oy] gathers every
 * x[iy] * w[ky] with oy = iy * sh - ph + ky * dh (and so for x). One thread
 * per output: the path when the DNN library has no data-gradient engine.
 * bias may be NULL. -1 for a dtype or size it does not take
 * (gpu_conv_transpose_fits). */
int gpu_conv_transpose(const void *x, const void *w, const void *bias, void *y, int dtype,
                       const gpu_conv2d_shape *s, int64_t group, int act, float alpha, float beta, void *stream);
int gpu_conv_transpose_fits(const gpu_conv2d_shape *s, int64_t group);

/* gpu_lrn.cu: LRN (ops/lrn.h) of x [n, c, inner] into y, fp32 sums. */
typedef struct gpu_lrn_desc {
  int64_t n, c, inner;
  int size;
  float alpha, beta, bias;
} gpu_lrn_desc;
int gpu_lrn(const void *x, void *y, int dtype, const gpu_lrn_desc *d, void *stream);

/* gpu_squeeze_excite.cu: squeeze-and-excitation (ops/squeeze_excite.h) of
 * x [n, c, hw] into y, in three kernels: the sums of parts of each channel
 * plane, the hidden layer per sample, then y = x * gate with each plane's
 * gate computed by the group of lanes scaling it. w1 [r, c], w2 [c, r] and
 * the biases (NULL: none) of x's dtype; fp32 arithmetic. ws: scratch of
 * gpu_squeeze_excite_ws bytes. -1 when it does not take the sizes
 * (gpu_squeeze_excite_fits). */
typedef struct gpu_se_desc {
  int64_t n, c, hw, r;
  const void *w1, *b1, *w2, *b2;
  int act, gate_act;
  float act_alpha, act_beta, gate_alpha, gate_beta;
} gpu_se_desc;
#define GPU_SE_MAX_CHANNELS 8192
int gpu_squeeze_excite_fits(int64_t c, int64_t r);
size_t gpu_squeeze_excite_ws(const gpu_se_desc *d);
int gpu_squeeze_excite(const void *x, void *y, int dtype, const gpu_se_desc *d, void *ws, void *stream);

/* ---- shapes passed by value (host C fills them) ---- */

#define GPU_MAX_DIMS 8

/* Broadcast binary op: out dims (collapsed, rank >= 1) and each operand's
 * element strides over them (0 where it is broadcast). */
typedef struct gpu_bcast {
  int rank;
  int64_t dims[GPU_MAX_DIMS];
  int64_t sa[GPU_MAX_DIMS];
  int64_t sb[GPU_MAX_DIMS];
} gpu_bcast;

enum { GPU_BIN_ADD = 0, GPU_BIN_SUB, GPU_BIN_MUL, GPU_BIN_DIV, GPU_BIN_POW, GPU_BIN_MIN, GPU_BIN_MAX, GPU_BIN_MEAN };

/* gpu_pointwise.cu: y = act(x), n elements (x == y allowed). */
int gpu_unary(const void *x, void *y, int dtype, int64_t n, int act, float alpha, float beta,
              void *stream);
/* y = act(in_act(a) op b) with broadcasting; y packed over bc->dims. The
 * activations (OP_ACT_*, with their alpha/beta): acts NULL = none; floats
 * only. */
typedef struct gpu_binary_acts {
  int act, in_act;
  float alpha, beta, in_alpha, in_beta;
} gpu_binary_acts;
int gpu_binary(const void *a, const void *b, void *y, int dtype, int op, const gpu_bcast *bc,
               const gpu_binary_acts *acts, void *stream);
/* Inference batch norm over [N, C, inner]: y = act((x - mean[c]) /
 * sqrt(var[c] + eps) * scale[c] + bias[c]); all of dtype, arithmetic in
 * fp32; act an op_act_kind with its alpha, beta. */
int gpu_batchnorm(const void *x, void *y, const void *scale, const void *bias, const void *mean,
                  const void *var, int dtype, float eps, int64_t n, int64_t channels,
                  int64_t inner, int act, float alpha, float beta, void *stream);

/* gpu_pool.cu: max / average pooling over 1-3 spatial dims of [nc, spatial]. */
typedef struct gpu_pool_desc {
  int nspatial;
  int is_max;
  int count_include_pad;
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad_begin[3], pad_end[3];
} gpu_pool_desc;
int gpu_pool(const void *x, void *y, int dtype, int64_t nc, const gpu_pool_desc *d, void *stream);
/* The same windows over n images stored channels last, [n, spatial..., c]
 * (a global pool: the whole input as the window). */
int gpu_pool_channels_last(const void *x, void *y, int dtype, int64_t n, int64_t c, const gpu_pool_desc *d,
                           void *stream);
/* Global pooling: rows of len elements each reduced to one (max or mean). */
int gpu_global_pool(const void *x, void *y, int dtype, int64_t rows, int64_t len, int is_max,
                    void *stream);

/* gpu_softmax.cu: softmax over the middle dim of [outer, len, inner]. */
int gpu_softmax(const void *x, void *y, int dtype, int64_t outer, int64_t len, int64_t inner,
                void *stream);

/* gpu_reduce.cu: a reduction (GPU_REDUCE_*) over the `red` dims; one output
 * per `keep` index, outputs packed in keep order. Strides are the input's, in
 * elements. Floats accumulate in fp32; int32/int64 (Sum, Max, Min, Prod) in
 * int64. An empty reduction (a red dim of 0) gives the op's value for the
 * empty set (0, 1, -inf, ...). */
enum {
  GPU_REDUCE_SUM,
  GPU_REDUCE_MEAN,
  GPU_REDUCE_MAX,
  GPU_REDUCE_MIN,
  GPU_REDUCE_PROD,
  GPU_REDUCE_L1,
  GPU_REDUCE_L2,
  GPU_REDUCE_SUM_SQUARE,
  GPU_REDUCE_LOG_SUM,
  GPU_REDUCE_LOG_SUM_EXP
};
typedef struct gpu_reduce_desc {
  int nkeep, nred;
  int64_t keep_dims[GPU_MAX_DIMS], keep_strides[GPU_MAX_DIMS];
  int64_t red_dims[GPU_MAX_DIMS], red_strides[GPU_MAX_DIMS];
} gpu_reduce_desc;
int gpu_reduce(const void *x, void *y, int dtype, int op, const gpu_reduce_desc *d, void *stream);

/* gpu_concat.cu: y[outer, width_total] (element size es bytes) gets each
 * input x[i][outer, width[i]] at column offset[i]. Up to 32 inputs a call. */
#define GPU_CONCAT_MAX 32
typedef struct gpu_concat_desc {
  int n;
  const void *x[GPU_CONCAT_MAX];
  int64_t width[GPU_CONCAT_MAX];
  int64_t offset[GPU_CONCAT_MAX];
} gpu_concat_desc;
int gpu_concat(void *y, int64_t es, int64_t outer, int64_t width_total,
               const gpu_concat_desc *d, void *stream);

/* gpu_gemm.cu: y[batch, m, n] (packed) = act(alpha * op(A) op(B) + beta * C).
 * Element (i, k) of op(A) of batch b is at A[a_off(b) + i * a_rs + k * a_cs],
 * (k, j) of op(B) at B[b_off(b) + k * b_rs + j * b_cs]; the batch index is
 * decomposed over bdims (row major) with per-dim strides a_bs, b_bs. C (may
 * be NULL) is broadcast: C[i * c_rs + j * c_cs]. fp32 accumulation. */
#define GPU_GEMM_MAX_BATCH_DIMS 6
typedef struct gpu_gemm_desc {
  int64_t m, n, k;
  int64_t batch;
  int nbd;
  int64_t bdims[GPU_GEMM_MAX_BATCH_DIMS];
  int64_t a_bs[GPU_GEMM_MAX_BATCH_DIMS], b_bs[GPU_GEMM_MAX_BATCH_DIMS];
  int64_t a_rs, a_cs, b_rs, b_cs;
  int64_t c_rs, c_cs;
  float alpha, beta;
  int act;
  float act_alpha, act_beta;
} gpu_gemm_desc;
int gpu_gemm(const void *a, const void *b, const void *c, void *y, int dtype,
             const gpu_gemm_desc *d, void *stream);
/* After a library matmul: in place on y[rows, n], row r of matrix row r % m:
 *   y = act(y + beta * C[(r % m) * c_rs + j * c_cs])   (C may be NULL) */
int gpu_gemm_epilogue(void *y, const void *c, int dtype, int64_t rows, int64_t m, int64_t n,
                      int64_t c_rs, int64_t c_cs, float beta, int act, float alpha,
                      float act_beta, void *stream);

/* gpu_cast.cu: n elements of type src to type dst (GPU_DT_*; the
 * reference backend's conversion rules). gpu_cast_takes: 1 for the types
 * it converts. */
int gpu_cast_takes(int dtype);
int gpu_cast(const void *x, int src, void *y, int dst, int64_t n, void *stream);

/* gpu_logic.cu: y (bool bytes) = a op b with broadcasting over bc, a and b
 * of dtype (floats, int8/uint8/int32/int64, bool); b NULL for the unary
 * ops (Not, IsNaN, IsInf with detect_neg / detect_pos), bc then the flat
 * shape of a. The op numbers are ops/logic.h's op_logic_kind. */
enum {
  GPU_LOGIC_EQ = 0,
  GPU_LOGIC_LT,
  GPU_LOGIC_LE,
  GPU_LOGIC_GT,
  GPU_LOGIC_GE,
  GPU_LOGIC_AND,
  GPU_LOGIC_OR,
  GPU_LOGIC_XOR,
  GPU_LOGIC_NOT,
  GPU_LOGIC_ISNAN,
  GPU_LOGIC_ISINF
};
int gpu_logic(const void *a, const void *b, void *y, int dtype, int op, const gpu_bcast *bc, int detect_neg,
              int detect_pos, void *stream);

/* gpu_select.cu: y = cond ? x : z (cond bool bytes), all broadcast over
 * w's dims with per-operand element strides (0 where broadcast); Trilu:
 * n elements of matrices rows x cols, kept where col - row >= k (upper) or
 * <= k (lower), else zero. Elements of esize bytes (1, 2, 4, 8). */
typedef struct gpu_where_desc {
  int rank;
  int64_t dims[GPU_MAX_DIMS];
  int64_t sc[GPU_MAX_DIMS], sx[GPU_MAX_DIMS], sz[GPU_MAX_DIMS];
} gpu_where_desc;
int gpu_where(const void *cond, const void *x, const void *z, void *y, int64_t esize, const gpu_where_desc *w, void *stream);
int gpu_trilu(const void *x, void *y, int64_t esize, int64_t n, int64_t rows, int64_t cols, int64_t k, int upper,
              void *stream);

/* gpu_norm.cu: per row r of rows x cols (dtype):
 *   s = x + skip + sbias[c];  mean = rms ? 0 : avg(s);
 *   inv = 1 / sqrt(avg((s - mean)^2) + eps);  y = (s - mean) * inv * scale[c] + bias[c]
 * skip, sbias, bias, sum (s, dtype), mean and inv (fp32, one per row) may
 * be NULL. fp32 statistics. x and skip are read, and y written, through
 * row maps (xm, sm, ym: ops/norm.h's op_norm_rows: broadcasts and fused
 * transposes); sum is packed rows. x is instead stored channel-major [rows /
 * inner, cols, inner] when x_inner > 0 (row r = o * inner + j at (o * cols
 * + c) * inner + j: a Transpose fused into the norm), and so is y when
 * y_inner > 0; when both are set they are equal; skip, sbias and sum only
 * when x is not. */
#define GPU_NORM_CACHE_COLS 8192
typedef struct gpu_norm_rows {
  int nd;
  int64_t dim[GPU_MAX_DIMS], div[GPU_MAX_DIMS], stride[GPU_MAX_DIMS];
  int64_t col_n;
} gpu_norm_rows;
typedef struct gpu_norm_desc {
  int64_t rows, cols;
  float eps;
  int rms;
  int params_const; /* scale and bias are constants (loaded before the kernel before ends) */
  /* set by gpu_layernorm from the maps: 0 where every map is one dim of
   * packed rows (x, skip and y row r at r * x_rs, s_rs, y_rs), so the
   * kernels read only these first bytes of the parameters (each further
   * constant-cache line is a miss at a kernel's start) */
  int mapped;
  int64_t x_rs, s_rs, y_rs;
  const void *skip, *sbias, *scale, *bias;
  void *sum, *mean, *inv;
  int64_t x_inner, y_inner;
  gpu_norm_rows xm, sm, ym;
} gpu_norm_desc;
int gpu_layernorm(const void *x, void *y, int dtype, const gpu_norm_desc *d, void *stream);

/* gpu_embed.cu: EmbedLayerNormalization per token t = (b, s) of batch x seq:
 *   e = word[ids[t]] + pos[pos_ids ? pos_ids[b * pos_batch_stride + s] : s]
 *       + seg[seg_ids[t]]   (seg may be NULL);  sum[t] = e (sum may be NULL)
 *   out[t] = (e - mean) / sqrt(var + eps) * gamma + beta   (fp32 statistics)
 * An index outside its table gives the token zeros. mask_index (may be
 * NULL): per b, the count of mask[b, :] == 1 (0 without a mask). */
#define GPU_EMBED_MAX_HIDDEN 8192
typedef struct gpu_embed_desc {
  int64_t batch, seq, hidden, word_rows, pos_rows, seg_rows, pos_batch_stride;
  float eps;
  const int32_t *ids, *seg_ids, *mask, *pos_ids;
  const void *word, *pos, *seg, *gamma, *beta;
  void *out, *sum;
  int32_t *mask_index;
} gpu_embed_desc;
int gpu_embed_layernorm(const gpu_embed_desc *d, int dtype, void *stream);

/* gpu_nbits.cu: MatMulNBits over 4-bit block-quantised weights kept as the
 * model gives them. B [n, k_blocks, block_size / 2], two codes a byte, low
 * nibble first; w[j][k] = (code - zp) * scales[j * k_blocks + k / block_size],
 * zp the 4-bit zero point of that block in zp[j * zp_bytes + blk / 2] (low
 * nibble for even blocks), 8 when zp is NULL. Codes past k (the last block's
 * padding) are ignored. A [m, k], y [m, n], scales and bias (may be NULL) of
 * dtype (f32 or f16). fp32 arithmetic. */
#define GPU_NBITS_GEMV_ROWS 8
typedef struct gpu_nbits_desc {
  int64_t m, n, k, block_size, k_blocks, zp_bytes;
  const void *a, *scales, *bias;
  const uint8_t *b, *zp;
  void *y;
  float *ws; /* the GEMV's partial sums: gpu_nbits_gemv_ws bytes */
  /* op_nbits.glu: rows of B in (gate, up) pairs, y [m, n / 2] =
   * act(gate) * up (OP_ACT_NONE: y [m, n], the plain product) */
  int glu_act;
  float glu_alpha, glu_beta;
  /* fp16 A as it is, not staged as int16 with block scales (the integer
   * form is a few ulps of A off where an A-block mixes magnitudes 10^3+
   * apart): accuracy_level 1 */
  int exact;
  /* fp16 A of at least this many rows takes the tensor-core form where it
   * is built (CUDA, sm_80 and up) and takes the blocks (32 codes or more,
   * a power of two); 0: never */
  int64_t mma_min_m;
  /* The longest K slice a GEMV block takes, in codes (0: the kernel's
   * choice; tests set it to split K at small shapes) */
  int64_t slice_max;
  /* A K split's arrival counts, one a column block
   * (gpu_nbits_gemv_arrivals): zero before a step's first pass, and each
   * pass leaves them zero. The block arriving last at a column block adds
   * the slices' partial sums in slice order. NULL: a second kernel adds
   * them. */
  unsigned *arrivals;
  /* Let the next kernel start as soon as this one's blocks have waited for
   * the one before (else at the end of their loops) */
  int next_early;
  /* A one-row pass may take gemv_bulk (CUDA, sm_90 and up): each block
   * copies its columns' weights into shared memory at once, before it
   * waits for the kernel before (gpu_nbits.cu); 0: gemv_rows always */
  int bulk;
  /* An RMS norm the GEMV applies to A as it stages it (a decode step's
   * SimplifiedLayerNormalization or SkipSimplifiedLayerNormalization before
   * its MatMulNBits; gpu_nbits_gemv_norm_ok): for each row of a, s = a +
   * norm_skip + norm_sbias (each may be NULL) and A = s * norm_scale /
   * sqrt(mean(s^2) + norm_eps), the sums of squares in fp32 over the row
   * each block stages whole, the 1 / rms applied to the dot products.
   * norm_sum (may be NULL) gets s, written by the grid's first block.
   * norm_scale NULL: A as it is. */
  const void *norm_skip, *norm_sbias, *norm_scale;
  void *norm_sum;
  float norm_eps;
} gpu_nbits_desc;
/* y = a w^T + bias without a dequantised copy: each block stages a slice
 * of up to GPU_NBITS_GEMV_ROWS rows of a in shared memory (fp32) and each
 * 32-lane group streams two or four rows of B over it (passes of that many
 * rows when m is larger); under d->mma_min_m, up to 32 rows a pass on
 * tensor cores. A short N splits K over blocks, each writing fp32
 * partial sums to d->ws that the last block to arrive at a column block
 * (d->arrivals) or a second kernel adds in slice order (the same sums
 * whichever block adds them). -1 for a dtype or alignment it does not take (B must be
 * 8-byte aligned). */
int gpu_nbits_gemv(const gpu_nbits_desc *d, int dtype, void *stream);
/* Bytes of d->ws gpu_nbits_gemv needs at d's sizes (0: none). */
size_t gpu_nbits_gemv_ws(const gpu_nbits_desc *d, int dtype);
/* Arrival counters d->arrivals holds (0: no pass splits K). */
int64_t gpu_nbits_gemv_arrivals(const gpu_nbits_desc *d, int dtype);
/* Whether gpu_nbits_gemv at d's sizes takes d->norm_scale: one pass of the
 * GEMV that stages a whole row of A a block (not the tensor-core form, K
 * not split). */
int gpu_nbits_gemv_norm_ok(const gpu_nbits_desc *d, int dtype);
/* Whether gpu_nbits_gemv's one-row passes at d's sizes take gemv_bulk on
 * the current GPU (d's pointers as given; NULL ones are aligned). */
int gpu_nbits_gemv_bulk(const gpu_nbits_desc *d, int dtype);
/* Rows of A a pass of gpu_nbits_gemv takes at d's element type and blocks:
 * 32 on tensor cores, else GPU_NBITS_GEMV_ROWS (past them it re-reads B). */
int64_t gpu_nbits_gemv_max_m(const gpu_nbits_desc *d, int dtype);
/* w [nc, k] (dtype, rows packed) = the weights of rows n0 .. n0 + nc - 1 of
 * B (a and y not read): for a BLAS GEMM over them. */
int gpu_nbits_dequant(const gpu_nbits_desc *d, int64_t n0, int64_t nc, void *w, int dtype, void *stream);
/* Under glu: y[:, (n0 + c) / 2] = act(v[:, c]) * v[:, c + 1] for even c <
 * nc, v [m, nc] (dtype) the product over rows n0 .. n0 + nc - 1 of B (n0
 * and nc even). */
int gpu_nbits_glu(const gpu_nbits_desc *d, const void *v, int64_t n0, int64_t nc, int dtype, void *stream);

/* gpu_attention.cu: per (b, h, s) query row, over keys l < kv_len (kv
 * head h / (heads / kv_heads)):
 *   x_l = scale * q . k_l;  masked: x_l = mask_add ? x_l + fill : fill
 *   (masked: causal and l > s, or mask[b, h, s, l] == 0 (!= 0 with
 *   mask_invert), or with mask_lens
 *   l >= mask[b]);  x_l += bias[b, h, s, l];  out = softmax(x) . v
 * Operands at element offsets and strides over (b, h, row, col); mask
 * (bool, int32 or int64) and bias (dtype) strides over (b, h, s, l), 0 to
 * broadcast. head_dim and v_dim up to GPU_ATTN_MAX_DIM. fp32 scores and
 * sums (an online softmax over tiles of keys). */
#define GPU_ATTN_MAX_DIM 256
typedef struct gpu_attn_desc {
  int64_t batch, heads, kv_heads, seq, kv_len, head_dim, v_dim;
  int64_t q_off, k_off, v_off;
  int64_t q_st[4], k_st[4], v_st[4], o_st[4], mask_st[4], bias_st[4];
  float scale, fill;
  int causal, mask_add, mask_lens, mask_invert, mask_dtype;
  int empty_zero; /* rows whose every score is -inf: zeros (else NaN) */
  int tf32;       /* fp32 operands may be rounded to TF32 (tensor cores), as the context allows matmuls */
  const void *q, *k, *v, *mask, *bias;
  void *out;
  /* GroupQueryAttention (ops/gqa.h), when seqlens is set: batch b has
   * seqlens[b] + 1 keys, its rows start at key past_b (0 when first_prompt,
   * else keys - seq) and causal is bottom-right: row s sees keys up to
   * past_b + s, and from past_b + s - window + 1 on when window >= 0; scores
   * softcap * tanh(score / softcap) when softcap > 0. Other masks unused. */
  const int32_t *seqlens;
  int first_prompt;
  int64_t window;
  float softcap;
  /* fold: the rows are the query heads of one KV head at one new token
   * (GQA decode: seq = heads per KV head, heads = kv_heads, strides to
   * match), so every row sits at position past_b. */
  int fold;
  /* split > 1: the keys are cut into `split` ranges of split_len (a
   * multiple of 32), one block each, combined by a second kernel through
   * `partial`: batch * heads * seq * split * (v_dim + 2) floats. */
  int64_t split, split_len;
  float *partial;
} gpu_attn_desc;
int gpu_attention(const gpu_attn_desc *d, int dtype, void *stream);
/* The additive bias of d's boolean or integer key mask (read at row 0, head
 * 0: one that broadcasts over both), for an attention library that takes a
 * bias and no mask: bias[b * kv_len + l] (dtype) = fill where the mask
 * drops key l of batch b, else 0. */
int gpu_attention_key_bias(const gpu_attn_desc *d, void *bias, int dtype, void *stream);

/* gpu_rotary.cu: rotary embedding (ops/rotary.h) of x into y, elements
 * (b, n, s, i) at b * st[0] + n * st[1] + s * st[2] + i in both; the row of
 * token (b, s) is b * seq + s (pos NULL), pos[b * seq + s] (pos_offset 0)
 * or pos[0] + s (pos_offset 1). A row outside the tables rotates to zeros. */
typedef struct gpu_rope_desc {
  int64_t batch, heads, seq, head_dim, rot_dim, table_rows;
  int64_t st[3];
  int interleaved, pos_offset;
  const void *x, *cos, *sin;
  const int64_t *pos;
  void *y;
} gpu_rope_desc;
int gpu_rotary(const gpu_rope_desc *d, int dtype, void *stream);

/* gpu_gqa.cu: steps 1 and 2 of GroupQueryAttention (ops/gqa.h): the new
 * tokens' Q (rotated) into q_out [B, S, heads, D] (when rotary), K (rotated)
 * and V into present_k/present_v [B, kv_heads, present_len, D] at rows
 * past_b + s; when past is not present's buffer, present's other rows are
 * past's (below past_b) or zeros. q/k/v: the inputs (k, v NULL: packed in
 * q). Rows outside present are skipped; positions outside the tables rotate
 * to zeros. past_only: only present's other rows (gpu_gqa_decode appends
 * the new ones). */
typedef struct gpu_gqa_desc {
  int64_t batch, seq, heads, kv_heads, head_dim, past_len, present_len, rot_dim, table_rows;
  int first_prompt, interleaved, past_only;
  const void *q, *k, *v, *past_k, *past_v, *cos, *sin;
  const int32_t *seqlens;
  void *q_out, *present_k, *present_v;
} gpu_gqa_desc;
int gpu_gqa_append(const gpu_gqa_desc *d, int dtype, void *stream);
/* gpu_gqa_decode.cu: GroupQueryAttention for one new token per batch, the
 * append included: q [B, 1, kv_heads * group heads, D] (q_batch_stride
 * elements a batch) and the new K and V heads k_new/v_new (kv_batch_stride
 * a batch) as the inputs hold them; Q and K rotated here when rot_dim > 0
 * (cos/sin tables of table_rows rows, interleaved or halves, as
 * gpu_gqa_append), the new K and V written into present k/v [B, kv_heads,
 * present_len, D] at the token's row, out [B, 1, heads * D]
 * (out_batch_stride a batch). Present's other rows must hold past already
 * (gpu_gqa_append's past_only when it is another buffer). Batch b sees
 * keys up to seqlens[b] (fewer with first_prompt or a window >= 0), scores
 * scaled, softcapped when softcap > 0. The keys are cut into
 * gpu_gqa_decode_splits ranges; past one, partial (B * kv_heads * group *
 * splits * D floats) and partial_ml (twice B * kv_heads * group * splits)
 * hold the ranges' sums, and arrivals (B * kv_heads counters, zero at the
 * launch) count the ranges done, so the last block of a KV head merges
 * them. -1 for a shape or a pointer it does not take (checked before it
 * writes anything). */
typedef struct gpu_gqa_decode_desc {
  int64_t batch, kv_heads, group, head_dim, present_len, q_batch_stride, kv_batch_stride, out_batch_stride, window;
  int64_t rot_dim, table_rows;
  float scale, softcap;
  int first_prompt, interleaved;
  const void *q, *k_new, *v_new, *cos, *sin;
  void *k, *v;
  const int32_t *seqlens;
  void *out;
  float *partial, *partial_ml;
  unsigned *arrivals;
} gpu_gqa_decode_desc;
/* The number of key ranges gpu_gqa_decode uses at these sizes, or 0 when
 * it does not take them (then it would return -1). */
int gpu_gqa_decode_splits(int dtype, int64_t batch, int64_t kv_heads, int64_t head_dim, int64_t group,
                          int64_t present_len);
int gpu_gqa_decode(const gpu_gqa_decode_desc *d, int dtype, void *stream);

/* The middle of attention done as two GEMMs (fp32): scores[b, h][s, l]
 * (already scale * q . k; rows packed, heads head_stride elements apart)
 * masked and biased as above, then softmax over l, in place. The desc's
 * q/k/v/out are not read. */
int gpu_attention_softmax(const gpu_attn_desc *d, float *scores, int64_t head_stride, void *stream);

/* gpu_copy.cu: y[i] = x[offset + sum_d c'_d * stride[d]] over y's dims,
 * c'_d the coordinate of i in dim d, taken modulo mod[d] where that is
 * nonzero; elements of esize bytes (1, 2, 4, 8). Strides may be 0 or
 * negative. (ops/copy.h's op_strided, for the GPU.) */
typedef struct gpu_strided {
  int rank;
  int64_t dims[GPU_MAX_DIMS];
  int64_t stride[GPU_MAX_DIMS];
  int64_t mod[GPU_MAX_DIMS];
  int64_t offset;
} gpu_strided;
int gpu_strided_copy(const void *x, void *y, int64_t esize, const gpu_strided *m, void *stream);

/* gpu_gather.cu: y[o, j, :] = x[o, idx[j], :] over rows of row_bytes
 * (outer x axis_dim rows in, outer x nidx out); idx int64 (idx64) or int32,
 * negative from the back; an index out of range gives a zero row. */
int gpu_gather(const void *x, const void *idx, int idx64, void *y, int64_t outer, int64_t axis_dim, int64_t nidx,
               int64_t row_bytes, void *stream);
/* GatherElements: y[c] = x[c with c[axis] = idx[c]], y and idx of dims,
 * x of element strides xstride; elements of esize bytes (1, 2, 4, 8). */
typedef struct gpu_gather_el {
  int rank, axis;
  int64_t total, axis_dim;
  int64_t dims[GPU_MAX_DIMS];
  int64_t xstride[GPU_MAX_DIMS];
} gpu_gather_el;
int gpu_gather_elements(const void *x, const void *idx, int idx64, void *y, int64_t esize, const gpu_gather_el *g,
                        void *stream);

/* gpu_pad.cu: Pad through ops/pad.h's map: y[i] (packed over dims) is
 * x[sum_d (start[d] + j_d) * in_stride[d]], j_d = c_d - pad[d] brought into
 * [0, extent[d]) by mode (GPU_PAD_*: ops/pad.h's op_pad_mode), or the fill
 * element (constant mode, j_d outside); elements of esize bytes (1, 2, 4,
 * 8), the fill in fill's first esize bytes. */
enum { GPU_PAD_CONSTANT = 0, GPU_PAD_REFLECT, GPU_PAD_EDGE, GPU_PAD_WRAP };
typedef struct gpu_pad_desc {
  int rank, mode;
  int64_t dims[GPU_MAX_DIMS], in_stride[GPU_MAX_DIMS];
  int64_t pad[GPU_MAX_DIMS], start[GPU_MAX_DIMS], extent[GPU_MAX_DIMS];
  uint8_t fill[8];
} gpu_pad_desc;
int gpu_pad(const void *x, void *y, int64_t esize, const gpu_pad_desc *d, void *stream);

/* gpu_resize.cu: Resize through ops/resize.h's map: output dims[d] from
 * in_dims[d] at scale[d] (a dim at scale 1 is copied), the input coordinate
 * in float as ONNX Runtime computes it (coord, nearest: ops/resize.h's
 * op_resize_coord and op_resize_nearest). Nearest moves elements of esize
 * bytes (1, 2, 4, 8); linear blends the two neighbours in every scaled dim
 * (dtype f32, f16, bf16; fp32 arithmetic). */
typedef struct gpu_resize_desc {
  int rank, coord, nearest;
  int64_t dims[GPU_MAX_DIMS], in_dims[GPU_MAX_DIMS];
  float scale[GPU_MAX_DIMS];
} gpu_resize_desc;
int gpu_resize_nearest(const void *x, void *y, int64_t esize, const gpu_resize_desc *d, void *stream);
int gpu_resize_linear(const void *x, void *y, int dtype, const gpu_resize_desc *d, void *stream);

#ifdef __cplusplus
}
#endif

#endif
