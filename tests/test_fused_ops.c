/* Patterns the fusion passes (plan/plan_fuse.c) merge, as small multi-node
 * models, on HipDNNExecutionProvider against ONNX Runtime's CPU EP: every
 * node must run on our EP and the outputs must match. ORT's own graph
 * optimizations are off, so each pattern reaches the EP as written (ORT's
 * transpose optimizer would otherwise move the Transposes). test_fuse checks
 * the same passes on the IR; this checks what the backends make of them:
 * on a GPU, the BLAS's GELU epilogue, the layer norm's channel-major
 * kernels and the binary kernel's transposed reads. fp16 cases are checked
 * against the fp32 twin of the model (the same values, exact in fp16).
 *
 * usage: test_fused_ops [--filter SUBSTRING] [--list] */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

static int failures;

#define F32 HD_DT_F32
#define F16 HD_DT_F16

/* What a case's builder works with: the model, its float type, and the
 * case's own type (the values are drawn in it, so an fp32 twin of an fp16
 * case holds the same numbers). */
typedef struct bctx {
  hh_model *m;
  int dt, own;
  uint64_t seed;
  int rc;
} bctx;

/* A random initializer (uniform in [-scale, scale] + shift). */
static const char *w(bctx *b, const char *name, int rank, const int64_t *dims, double scale, double shift) {
  hh_tensor t = {0}, c = {0};
  if (b->rc || hh_tensor_alloc(&t, b->own, rank, dims)) {
    b->rc = 1;
    return name;
  }
  hh_tensor_fill_random(&t, b->seed++);
  for (size_t i = 0; i < t.n; i++) hh_tensor_set(&t, i, hh_tensor_get(&t, i) * scale + shift);
  b->rc = hh_tensor_convert(&t, b->dt, &c) || hh_model_initializer(b->m, name, &c);
  hh_tensor_free(&t);
  hh_tensor_free(&c);
  return name;
}

/* A scalar float initializer (rank 0), rounded to the case's type. */
static const char *k(bctx *b, const char *name, float v) {
  hh_tensor t = {0}, c = {0};
  if (b->rc || hh_tensor_alloc(&t, b->own, 0, NULL)) {
    b->rc = 1;
    return name;
  }
  hh_tensor_set(&t, 0, v);
  b->rc = hh_tensor_convert(&t, b->dt, &c) || hh_model_initializer(b->m, name, &c);
  hh_tensor_free(&t);
  hh_tensor_free(&c);
  return name;
}

/* An int64 initializer (a Reshape's shape). */
static const char *ints(bctx *b, const char *name, int n, const int64_t *v) {
  hh_tensor t = {0};
  int64_t d = n;
  if (b->rc || hh_tensor_alloc(&t, HD_DT_I64, 1, &d)) {
    b->rc = 1;
    return name;
  }
  for (int i = 0; i < n; i++) hh_tensor_set(&t, (size_t)i, (double)v[i]);
  b->rc = hh_model_initializer(b->m, name, &t);
  hh_tensor_free(&t);
  return name;
}

static void node(bctx *b, const char *op, const char *a0, const char *a1, const char *out, const hh_attr *at,
                 size_t nat) {
  const char *ins[2] = {a0, a1}, *outs[1] = {out};
  if (!b->rc) b->rc = hh_model_node(b->m, op, NULL, out, ins, a1 ? 2 : 1, outs, 1, at, nat);
}

static void transpose(bctx *b, const char *in, const char *out, int r, const int64_t *perm) {
  hh_attr a = hh_attr_ints("perm", perm, (size_t)r);
  node(b, "Transpose", in, NULL, out, &a, 1);
}

static void layernorm(bctx *b, const char *in, const char *out, int64_t c) {
  char sc[64], bi[64];
  snprintf(sc, sizeof sc, "%s_scale", out);
  snprintf(bi, sizeof bi, "%s_bias", out);
  const char *ins[3] = {in, w(b, sc, 1, &c, 0.5, 1.0), w(b, bi, 1, &c, 0.2, 0.0)}, *outs[1] = {out};
  hh_attr at[2] = {hh_attr_int("axis", -1), hh_attr_float("epsilon", 1e-6f)};
  if (!b->rc) b->rc = hh_model_node(b->m, "LayerNormalization", NULL, out, ins, 3, outs, 1, at, 2);
}

/* GELU's tanh form written out, reading x, writing out: dynamo's (GPT-2's
 * gelu_new: Pow, x * 0.5 first) or torch 1.13's (x * x * x, 0.5 last). */
static void gelu_tanh(bctx *b, const char *x, const char *out, int dynamo) {
  if (dynamo) {
    node(b, "Mul", x, k(b, "g_half", 0.5f), "g_xh", NULL, 0);
    node(b, "Pow", x, k(b, "g_three", 3.0f), "g_cube", NULL, 0);
  } else {
    node(b, "Mul", x, x, "g_sq", NULL, 0);
    node(b, "Mul", x, "g_sq", "g_cube", NULL, 0);
  }
  node(b, "Mul", k(b, "g_c", 0.044715f), "g_cube", "g_m2", NULL, 0);
  node(b, "Add", x, "g_m2", "g_a1", NULL, 0);
  node(b, "Mul", "g_a1", k(b, "g_s", 0.7978845608f), "g_m3", NULL, 0);
  node(b, "Tanh", "g_m3", NULL, "g_t", NULL, 0);
  node(b, "Add", "g_t", k(b, "g_one", 1.0f), "g_a2", NULL, 0);
  if (dynamo) {
    node(b, "Mul", "g_xh", "g_a2", out, NULL, 0);
  } else {
    node(b, "Mul", x, "g_a2", "g_xa", NULL, 0);
    node(b, "Mul", k(b, "g_half", 0.5f), "g_xa", out, NULL, 0);
  }
}

typedef struct fcase {
  const char *name;
  int dtype;                 /* 0 = F32 */
  int nin;
  int rank[2];
  int64_t dims[2][6];
  int nout;                  /* 0 = 1 */
  void (*build)(bctx *b);    /* inputs "x0", "x1" are declared; makes "y" (and "y1") */
} fcase;

/* MatMul + bias -> tanh GELU (dynamo's form) */
static void b_gelu_pow(bctx *b) {
  int64_t wd[2] = {16, 24}, bd = 24;
  node(b, "MatMul", "x0", w(b, "w", 2, wd, 0.3, 0.0), "mm", NULL, 0);
  node(b, "Add", "mm", w(b, "bias", 1, &bd, 0.2, 0.0), "h", NULL, 0);
  gelu_tanh(b, "h", "y", 1);
}

/* Gemm (no C) -> Reshape -> tanh GELU (torch 1.13's form): GPT-2's
 * addmm -> view -> gelu_new, the activation moved through the view */
static void b_gelu_mul_reshape(bctx *b) {
  int64_t wd[2] = {16, 24}, shape[3] = {2, 5, 24};
  node(b, "Gemm", "x0", w(b, "w", 2, wd, 0.3, 0.0), "gm", NULL, 0);
  node(b, "Reshape", "gm", ints(b, "shape", 3, shape), "h", NULL, 0);
  gelu_tanh(b, "h", "y", 0);
}

/* Gemm with C at widths where the GPU's BLAS applies bias and GELU */
static void b_gelu_wide(bctx *b) {
  int64_t wd[2] = {256, 1024}, cd = 1024;
  const char *ins[3] = {"x0", w(b, "w", 2, wd, 0.1, 0.0), w(b, "c", 1, &cd, 0.2, 0.0)}, *outs[1] = {"h"};
  if (!b->rc) b->rc = hh_model_node(b->m, "Gemm", NULL, "gemm", ins, 3, outs, 1, NULL, 0);
  gelu_tanh(b, "h", "y", 1);
}

static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};

/* NCHW -> Transpose -> LayerNorm over C -> Transpose back (LayerNorm2d) */
static void ln_both(bctx *b, int64_t c) {
  transpose(b, "x0", "t", 4, to_nhwc);
  layernorm(b, "t", "n", c);
  transpose(b, "n", "y", 4, to_nchw);
}
static void b_ln_both_96(bctx *b) { ln_both(b, 96); }
static void b_ln_both_384(bctx *b) { ln_both(b, 384); }
static void b_ln_both_768(bctx *b) { ln_both(b, 768); }
static void b_ln_both_1536(bctx *b) { ln_both(b, 1536); }

/* NCHW -> Transpose -> LayerNorm -> MatMul (ConvNeXt's block: the norm
 * writes NHWC rows) */
/* The weights shrink as 1/sqrt(c) from 0.3 at 48 channels: fp16's rounding
 * of the normalised values adds up over the matmul's c terms, and at 0.3
 * a 384-wide row's worst element missed fp16's absolute tolerance. */
static void ln_in(bctx *b, int64_t c) {
  int64_t wd[2] = {c, 20};
  transpose(b, "x0", "t", 4, to_nhwc);
  layernorm(b, "t", "n", c);
  node(b, "MatMul", "n", w(b, "w", 2, wd, 0.3 * sqrt(48.0 / (double)c), 0.0), "y", NULL, 0);
}
static void b_ln_in(bctx *b) { ln_in(b, 48); }
static void b_ln_in_96(bctx *b) { ln_in(b, 96); }
static void b_ln_in_384(bctx *b) { ln_in(b, 384); }

/* Add -> LayerNorm (the Add becomes its skip; the sum is also an output)
 * -> Transpose to NCHW */
static void b_ln_skip_out(bctx *b) {
  node(b, "Add", "x0", "x1", "y1", NULL, 0);
  layernorm(b, "y1", "n", 32);
  transpose(b, "n", "y", 4, to_nchw);
}

/* Add -> LayerNorm over 768 (GPT-2's residual: the norm adds the skip and
 * writes the sum, an output too) */
static void b_add_ln_sum(bctx *b) {
  node(b, "Add", "x0", "x1", "y1", NULL, 0);
  layernorm(b, "y1", "y", 768);
}

/* ViT's residual: the attention output [S, B, E] transposed to [B, S, E]
 * and added to the residual stream, then LayerNorm; the sum is an output
 * too. The norm takes the Add and reads the transposed addend through the
 * permutation (as x, or as the skip when it is the Add's second input). */
static void add_ln_transposed(bctx *b, int64_t c, int second) {
  static const int64_t swap[3] = {1, 0, 2};
  transpose(b, "x0", "t", 3, swap);
  node(b, "Add", second ? "x1" : "t", second ? "t" : "x1", "y1", NULL, 0);
  layernorm(b, "y1", "y", c);
}
static void b_add_ln_t32(bctx *b) { add_ln_transposed(b, 32, 0); }
static void b_add_ln_t768(bctx *b) { add_ln_transposed(b, 768, 1); }
static void b_add_ln_t2048(bctx *b) { add_ln_transposed(b, 2048, 0); }

/* the addend transposed over three leading dims no two of which merge, so
 * the norm reads it through a map of three dims (the GPU's strided kernel) */
static void b_add_ln_rev3(bctx *b) {
  static const int64_t rev[4] = {2, 1, 0, 3};
  transpose(b, "x0", "t", 4, rev);
  node(b, "Add", "t", "x1", "y1", NULL, 0);
  layernorm(b, "y1", "y", 32);
}

/* LayerNorm -> Transpose(1, 0, 2) -> MatMul (ViT's attention input: the
 * norm writes its rows in the transposed order) */
static void ln_transposed_out(bctx *b, int64_t c) {
  static const int64_t swap[3] = {1, 0, 2};
  int64_t wd[2] = {c, 24};
  layernorm(b, "x0", "n", c);
  transpose(b, "n", "t", 3, swap);
  node(b, "MatMul", "t", w(b, "w", 2, wd, 0.3, 0.0), "y", NULL, 0);
}
static void b_ln_tout_32(bctx *b) { ln_transposed_out(b, 32); }
static void b_ln_tout_768(bctx *b) { ln_transposed_out(b, 768); }

/* Add -> LayerNorm with addends that broadcast: both of them ([2, 1, C] +
 * [1, 5, C]), or one along the normalised dim ([2, 5, 1] + [2, 5, C]) */
static void b_add_ln_bcast(bctx *b) {
  node(b, "Add", "x0", "x1", "s", NULL, 0);
  layernorm(b, "s", "y", 32);
}

/* the same, the broadcast addend first, the norm's output transposed to
 * NCHW (the norm writes channel planes, reading x through its row map) */
static void b_add_ln_bcast_nchw(bctx *b) {
  node(b, "Add", "x0", "x1", "s", NULL, 0);
  layernorm(b, "s", "n", 32);
  transpose(b, "n", "y", 4, to_nchw);
}

/* NHWC -> Transpose -> residual Add in NCHW (ConvNeXt's block output) */
static void b_transpose_add(bctx *b) {
  transpose(b, "x0", "t", 4, to_nchw);
  node(b, "Add", "t", "x1", "y", NULL, 0);
}

/* Sub with the transposed input second (the operand order matters) */
static void b_transpose_sub_second(bctx *b) {
  transpose(b, "x0", "t", 4, to_nchw);
  node(b, "Sub", "x1", "t", "y", NULL, 0);
}

/* both inputs transposed, by different permutations */
static void b_transpose_mul_both(bctx *b) {
  static const int64_t pa[4] = {0, 2, 1, 3}, pb[4] = {3, 1, 2, 0};
  transpose(b, "x0", "ta", 4, pa);
  transpose(b, "x1", "tb", 4, pb);
  node(b, "Mul", "ta", "tb", "y", NULL, 0);
}

/* a transposed input and a broadcast constant ([C, 1, 1], ConvNeXt's layer
 * scale): Sub, so the operand order matters */
static void b_transpose_sub_bcast(bctx *b) {
  int64_t gd[3] = {48, 1, 1};
  transpose(b, "x0", "t", 4, to_nchw);
  node(b, "Sub", w(b, "g", 3, gd, 0.5, 0.0), "t", "y", NULL, 0);
}

/* A squeeze-and-excitation block as torchvision's EfficientNet exports
 * it: GlobalAveragePool -> Conv 1x1 -> SiLU (Sigmoid, Mul) -> Conv 1x1 ->
 * Sigmoid -> Mul(gate, x): one SqueezeExcite step. */
static void squeeze_excite(bctx *b, int64_t c, int64_t r) {
  int64_t w1d[4] = {r, c, 1, 1}, w2d[4] = {c, r, 1, 1};
  node(b, "GlobalAveragePool", "x0", NULL, "se_m", NULL, 0);
  const char *c1[3] = {"se_m", w(b, "se_w1", 4, w1d, 0.3, 0.0), w(b, "se_b1", 1, &r, 0.2, 0.0)};
  const char *c2[3] = {"se_a", w(b, "se_w2", 4, w2d, 0.3, 0.0), w(b, "se_b2", 1, &c, 0.2, 0.5)};
  const char *o1[1] = {"se_h"}, *o2[1] = {"se_e"};
  if (!b->rc) b->rc = hh_model_node(b->m, "Conv", NULL, "se_reduce", c1, 3, o1, 1, NULL, 0);
  node(b, "Sigmoid", "se_h", NULL, "se_s", NULL, 0);
  node(b, "Mul", "se_h", "se_s", "se_a", NULL, 0);
  if (!b->rc) b->rc = hh_model_node(b->m, "Conv", NULL, "se_expand", c2, 3, o2, 1, NULL, 0);
  node(b, "Sigmoid", "se_e", NULL, "se_g", NULL, 0);
  node(b, "Mul", "se_g", "x0", "y", NULL, 0);
}
static void b_se_small(bctx *b) { squeeze_excite(b, 24, 6); }
static void b_se_wide(bctx *b) { squeeze_excite(b, 1152, 48); }

/* DenseNet's pre-activation, Concat -> BatchNormalization -> Relu: one
 * BatchNormalization applying the ReLU (planes of 7x7, 56x56 and 5x3) */
static void b_concat_bn_relu(bctx *b) {
  int64_t c = 48;
  const char *ins[2] = {"x0", "x1"}, *outs[1] = {"cat"};
  hh_attr ax = hh_attr_int("axis", 1);
  if (!b->rc) b->rc = hh_model_node(b->m, "Concat", NULL, "cat", ins, 2, outs, 1, &ax, 1);
  const char *bn[5] = {"cat", w(b, "bs", 1, &c, 0.5, 1.0), w(b, "bb", 1, &c, 0.3, 0.0), w(b, "bm", 1, &c, 0.2, 0.0),
                       w(b, "bv", 1, &c, 0.3, 1.0)},
             *bo[1] = {"bn"};
  if (!b->rc) b->rc = hh_model_node(b->m, "BatchNormalization", NULL, "bn", bn, 5, bo, 1, NULL, 0);
  node(b, "Relu", "bn", NULL, "y", NULL, 0);
}

/* A convolution then SiLU (Sigmoid, Mul), EfficientNet's body: the SiLU
 * becomes the convolution's activation on whichever path its shape takes
 * (gb_conv.c: a 1x1 as a BLAS matmul + epilogue, a depthwise kernel, the
 * direct kernel for a 3-channel stem, the DNN library + epilogue). */
static void conv_silu(bctx *b, int64_t ci, int64_t co, int64_t kk, int64_t stride, int64_t group) {
  int64_t wd[4] = {co, ci / group, kk, kk};
  const int64_t pads[4] = {kk / 2, kk / 2, kk / 2, kk / 2}, strides[2] = {stride, stride};
  hh_attr at[3] = {hh_attr_ints("pads", pads, 4), hh_attr_ints("strides", strides, 2), hh_attr_int("group", group)};
  const char *ins[3] = {"x0", w(b, "cw", 4, wd, 0.4, 0.0), w(b, "cb", 1, &co, 0.2, 0.1)}, *outs[1] = {"c"};
  if (!b->rc) b->rc = hh_model_node(b->m, "Conv", NULL, "conv", ins, 3, outs, 1, at, 3);
  node(b, "Sigmoid", "c", NULL, "cs", NULL, 0);
  node(b, "Mul", "c", "cs", "y", NULL, 0);
}
static void b_conv_silu_1x1(bctx *b) { conv_silu(b, 32, 48, 1, 1, 1); }
/* EfficientNet's expand then depthwise, each with its SiLU: the 1x1's
 * epilogue stays its own (gb_conv.c: conv_link moves only cheap
 * activations into the depthwise prologue) */
static void b_conv_silu_expand_dw(bctx *b) {
  int64_t w1[4] = {48, 16, 1, 1}, w2[4] = {48, 1, 3, 3}, co = 48;
  const int64_t pads[4] = {1, 1, 1, 1};
  hh_attr at[2] = {hh_attr_ints("pads", pads, 4), hh_attr_int("group", 48)};
  const char *in1[3] = {"x0", w(b, "ew", 4, w1, 0.4, 0.0), w(b, "eb", 1, &co, 0.2, 0.1)}, *o1[1] = {"e"};
  if (!b->rc) b->rc = hh_model_node(b->m, "Conv", NULL, "expand", in1, 3, o1, 1, NULL, 0);
  node(b, "Sigmoid", "e", NULL, "es", NULL, 0);
  node(b, "Mul", "e", "es", "ea", NULL, 0);
  const char *in2[3] = {"ea", w(b, "dw", 4, w2, 0.4, 0.0), w(b, "db", 1, &co, 0.2, -0.1)}, *o2[1] = {"d"};
  if (!b->rc) b->rc = hh_model_node(b->m, "Conv", NULL, "depthwise", in2, 3, o2, 1, at, 2);
  node(b, "Sigmoid", "d", NULL, "ds", NULL, 0);
  node(b, "Mul", "ds", "d", "y", NULL, 0);
}
static void b_conv_silu_dw(bctx *b) { conv_silu(b, 48, 48, 3, 2, 48); }
static void b_conv_silu_stem(bctx *b) { conv_silu(b, 3, 32, 3, 2, 1); }
static void b_conv_silu_3x3(bctx *b) { conv_silu(b, 32, 40, 3, 1, 1); }

/* Attention with BERT's key padding mask as transformers builds it: keep =
 * x1 > 0 ([B, 1, 1, S]), And a constant of all true [1, 1, S, S] (computed
 * at plan time), Expanded to [B, 1, S, S], Where(keep, 0, -10000) added to
 * the scores. The plan finds the mask repeated along the rows: the GPU's
 * tensor-core kernel reads it once a key. K^T and V are weights. */
static void attn_key_padding(bctx *b, int layers, int gathered) {
  const int64_t kt[4] = {2, 4, 64, 80}, v[4] = {2, 4, 80, 64}, pd[4] = {1, 1, 80, 80}, shape[4] = {2, 1, 80, 80};
  if (gathered) { /* x1 [2, 80] as torch's vmap exports it: rows b * 80 + s of the flat mask, in order */
    int64_t order[160], flat[2] = {160, 1}, keys[4] = {2, 1, 1, 80};
    for (int i = 0; i < 160; i++) order[i] = i;
    hh_attr ax0 = hh_attr_int("axis", 0);
    node(b, "Greater", "x1", k(b, "zero", 0.f), "keep2", NULL, 0);
    node(b, "Reshape", "keep2", ints(b, "flat_shape", 2, flat), "flat", NULL, 0);
    node(b, "Gather", "flat", ints(b, "rows", 160, order), "rows_kept", &ax0, 1);
    node(b, "Reshape", "rows_kept", ints(b, "keys_shape", 4, keys), "keep", NULL, 0);
  } else {
    node(b, "Greater", "x1", k(b, "zero", 0.f), "keep", NULL, 0);
  }
  node(b, "Greater", w(b, "pairs_src", 4, pd, 0.5, 1.5), "zero", "pairs", NULL, 0);
  node(b, "And", "pairs", "keep", "both", NULL, 0);
  node(b, "Expand", "both", ints(b, "shape", 4, shape), "wide", NULL, 0);
  const char *ins[3] = {"wide", "zero", k(b, "fill", -10000.f)}, *outs[1] = {"bias"};
  if (!b->rc) b->rc = hh_model_node(b->m, "Where", NULL, "bias", ins, 3, outs, 1, NULL, 0);
  hh_attr ax = hh_attr_int("axis", -1);
  static const char *names[2][7] = {{"kt", "qk", "scores", "masked", "p", "v", "o0"},
                                    {"kt1", "qk1", "scores1", "masked1", "p1", "v1", "y1"}};
  for (int l = 0; l < layers; l++) {
    const char *const *n = names[l], *q = l ? names[l - 1][6] : "x0", *out = l == layers - 1 ? "y" : n[6];
    node(b, "MatMul", q, w(b, n[0], 4, kt, 1.0, 0.0), n[1], NULL, 0);
    node(b, "Mul", n[1], k(b, l ? "scale1" : "scale", 0.125f), n[2], NULL, 0);
    node(b, "Add", n[2], "bias", n[3], NULL, 0);
    node(b, "Softmax", n[3], NULL, n[4], &ax, 1);
    node(b, "MatMul", n[4], w(b, n[5], 4, v, 1.0, 0.0), out, NULL, 0);
  }
}
static void b_attn_key_padding(bctx *b) { attn_key_padding(b, 1, 0); }
/* two layers reading one mask Where (ONNX Runtime's common-subexpression
 * pass leaves transformers' encoders so): both read the mask */
static void b_attn_key_padding_x2(bctx *b) { attn_key_padding(b, 2, 0); }
/* the mask gathered from a flat [B * S, 1] in order (a view) */
static void b_attn_key_padding_gathered(bctx *b) { attn_key_padding(b, 1, 1); }

/* An int64 scalar initializer (a Gather's index). */
static const char *i0(bctx *b, const char *name, int64_t v) {
  hh_tensor t = {0};
  if (b->rc || hh_tensor_alloc(&t, HD_DT_I64, 0, NULL)) {
    b->rc = 1;
    return name;
  }
  hh_tensor_set(&t, 0, (double)v);
  b->rc = hh_model_initializer(b->m, name, &t);
  hh_tensor_free(&t);
  return name;
}

/* torchvision's MultiheadAttention (batch_first, as ViT exports it) at
 * batch > 1: x [S, B, E] -> packed projection -> Reshape [S, B, 3, E] ->
 * Unsqueeze -> Transpose (3, 1, 2, 0, 4) -> Squeeze -> Gather q, k, v ->
 * Reshape [S, B * H, D] -> Transpose (1, 0, 2) -> Reshape [B, H, S, D] ->
 * attention. The plan reads q, k and v in place through views that merge
 * unevenly strided dims (plan_build.c, chain_layout); at 180 tokens in
 * fp32 a GPU takes the two-GEMM form, which packs them first. */
static void vit_mha(bctx *b, int64_t S, int64_t B) {
  const int64_t E = 128, H = 2, D = 64;
  int64_t wd[2] = {E, 3 * E}, bd = 3 * E;
  const int64_t s4[4] = {S, B, 3, E}, s3[3] = {S, B * H, D}, sh[4] = {B, H, S, D}, zero = 0, three = 3;
  static const int64_t p5[5] = {3, 1, 2, 0, 4}, swap[3] = {1, 0, 2}, kt[4] = {0, 1, 3, 2};
  node(b, "MatMul", "x0", w(b, "w", 2, wd, 0.1, 0.0), "mm", NULL, 0);
  node(b, "Add", w(b, "bias", 1, &bd, 0.2, 0.0), "mm", "proj", NULL, 0);
  node(b, "Reshape", "proj", ints(b, "s4", 4, s4), "r4", NULL, 0);
  node(b, "Unsqueeze", "r4", ints(b, "ax0", 1, &zero), "un", NULL, 0);
  hh_attr pa = hh_attr_ints("perm", p5, 5);
  node(b, "Transpose", "un", NULL, "tr", &pa, 1);
  node(b, "Squeeze", "tr", ints(b, "ax3", 1, &three), "sq", NULL, 0);
  static const char *names[3][5] = {{"g0", "i0", "m0", "t0", "q"}, {"g1", "i1", "m1", "t1", "k"},
                                    {"g2", "i2", "m2", "t2", "v"}};
  hh_attr gx = hh_attr_int("axis", 0);
  for (int i = 0; i < 3; i++) {
    node(b, "Gather", "sq", i0(b, names[i][1], i), names[i][0], &gx, 1);
    node(b, "Reshape", names[i][0], ints(b, i == 0 ? "s3" : i == 1 ? "s3b" : "s3c", 3, s3), names[i][2], NULL, 0);
    transpose(b, names[i][2], names[i][3], 3, swap);
    node(b, "Reshape", names[i][3], ints(b, i == 0 ? "sh" : i == 1 ? "shb" : "shc", 4, sh), names[i][4], NULL, 0);
  }
  transpose(b, "k", "kt", 4, kt);
  node(b, "MatMul", "q", "kt", "sc", NULL, 0);
  node(b, "Div", "sc", k(b, "sqrt_d", 8.0f), "sd", NULL, 0);
  hh_attr ax = hh_attr_int("axis", -1);
  node(b, "Softmax", "sd", NULL, "p", &ax, 1);
  node(b, "MatMul", "p", "v", "y", NULL, 0);
}
static void b_vit_mha(bctx *b) { vit_mha(b, 9, 3); }
static void b_vit_mha_long(bctx *b) { vit_mha(b, 180, 2); }

/* torchvision's ConvNeXt as exported: a 2x2/2 stem conv and LayerNorm2d
 * (Transpose, LayerNormalization, Transpose), two blocks (depthwise 7x7 ->
 * Transpose -> LayerNormalization -> MatMul + bias -> erf GELU written out
 * -> MatMul + bias -> Transpose -> Mul(gamma [C,1,1]) -> Add(x)),
 * LayerNorm2d and a 2x2/2 conv, a block. The EP lays it out channels last
 * whole (plan_layout.c: depthwise convs and the channel-moving forms) and
 * fuses the layer scales and residuals into the blocks' second MatMuls
 * (plan_fuse_late). Names are the output's with suffixes. */
static const char *cnx_name(char (*buf)[48], int k, const char *out, const char *suffix) {
  snprintf(buf[k], sizeof buf[k], "%s_%s", out, suffix);
  return buf[k];
}
static void cnx_conv(bctx *b, const char *in, const char *out, int64_t ci, int64_t co, int64_t kk, int depthwise) {
  char nm[2][48];
  int64_t wd[4] = {co, depthwise ? 1 : ci, kk, kk}, p = depthwise ? kk / 2 : 0, st = depthwise ? 1 : kk;
  const int64_t pads[4] = {p, p, p, p}, strides[2] = {st, st};
  hh_attr at[3] = {hh_attr_ints("pads", pads, 4), hh_attr_ints("strides", strides, 2),
                   hh_attr_int("group", depthwise ? ci : 1)};
  const char *ins[3] = {in, w(b, cnx_name(nm, 0, out, "w"), 4, wd, 0.3, 0.0), w(b, cnx_name(nm, 1, out, "b"), 1, &co, 0.2, 0.0)};
  const char *outs[1] = {out};
  if (!b->rc) b->rc = hh_model_node(b->m, "Conv", NULL, out, ins, 3, outs, 1, at, 3);
}
static void cnx_ln2d(bctx *b, const char *in, const char *out, int64_t c) {
  char nm[2][48];
  transpose(b, in, cnx_name(nm, 0, out, "t"), 4, to_nhwc);
  layernorm(b, nm[0], cnx_name(nm, 1, out, "n"), c);
  transpose(b, nm[1], out, 4, to_nchw);
}
static void cnx_block(bctx *b, const char *in, const char *out, int64_t c) {
  char nm[16][48];
  int64_t c4 = 4 * c, w1[2] = {c, c4}, w2[2] = {c4, c}, gd[3] = {c, 1, 1};
  cnx_conv(b, in, cnx_name(nm, 0, out, "dw"), c, c, 7, 1);
  transpose(b, nm[0], cnx_name(nm, 1, out, "t"), 4, to_nhwc);
  layernorm(b, nm[1], cnx_name(nm, 2, out, "n"), c);
  node(b, "MatMul", nm[2], w(b, cnx_name(nm, 3, out, "w1"), 2, w1, 0.3, 0.0), cnx_name(nm, 4, out, "m1"), NULL, 0);
  node(b, "Add", nm[4], w(b, cnx_name(nm, 5, out, "b1"), 1, &c4, 0.2, 0.0), cnx_name(nm, 6, out, "h"), NULL, 0);
  /* erf GELU as torch writes it: x * 0.5 * (1 + erf(x / sqrt 2)) */
  node(b, "Div", nm[6], k(b, cnx_name(nm, 7, out, "sqrt2"), 1.4142135f), cnx_name(nm, 8, out, "gd"), NULL, 0);
  node(b, "Erf", nm[8], NULL, cnx_name(nm, 9, out, "ge"), NULL, 0);
  node(b, "Add", nm[9], k(b, cnx_name(nm, 10, out, "one"), 1.0f), cnx_name(nm, 11, out, "ga"), NULL, 0);
  node(b, "Mul", nm[6], nm[11], cnx_name(nm, 12, out, "gm"), NULL, 0);
  node(b, "Mul", nm[12], k(b, cnx_name(nm, 13, out, "half"), 0.5f), cnx_name(nm, 14, out, "g"), NULL, 0);
  node(b, "MatMul", nm[14], w(b, cnx_name(nm, 15, out, "w2"), 2, w2, 0.15, 0.0), cnx_name(nm, 0, out, "m2"), NULL, 0);
  node(b, "Add", nm[0], w(b, cnx_name(nm, 1, out, "b2"), 1, &c, 0.2, 0.0), cnx_name(nm, 2, out, "o"), NULL, 0);
  transpose(b, nm[2], cnx_name(nm, 3, out, "back"), 4, to_nchw);
  node(b, "Mul", w(b, cnx_name(nm, 4, out, "gamma"), 3, gd, 0.3, 0.5), nm[3], cnx_name(nm, 5, out, "scaled"), NULL, 0);
  node(b, "Add", nm[5], in, out, NULL, 0);
}
/* BERT's and GPT-2's embeddings: x plus the rows of a position table (a
 * weight over 64 KiB, whose host copy a device backend keeps only because
 * this is foldable) gathered by positions sliced from an arange up to x's
 * length (known when a plan is built), then the norm. */
static void b_position_embeddings(bctx *b) {
  enum { P = 1024, D = 64 };
  int64_t pos[P];
  for (int i = 0; i < P; i++) pos[i] = i;
  const int64_t wd[2] = {P, D}, one = 1, zero = 0;
  node(b, "Shape", "x0", NULL, "shape", NULL, 0);
  node(b, "Gather", "shape", ints(b, "axis1", 1, &one), "len", NULL, 0);
  const char *sl[3] = {ints(b, "positions", P, pos), ints(b, "start0", 1, &zero), "len"}, *so[1] = {"pids"};
  if (!b->rc) b->rc = hh_model_node(b->m, "Slice", NULL, "pids", sl, 3, so, 1, NULL, 0);
  node(b, "Gather", w(b, "wpe", 2, wd, 1.0, 0.0), "pids", "pe", NULL, 0);
  node(b, "Add", "x0", "pe", "sum", NULL, 0);
  layernorm(b, "sum", "y", D);
}

static void b_convnext(bctx *b) {
  cnx_conv(b, "x0", "stem", 3, 16, 2, 0);
  cnx_ln2d(b, "stem", "s0", 16);
  cnx_block(b, "s0", "b1", 16);
  cnx_block(b, "b1", "b2", 16);
  cnx_ln2d(b, "b2", "d0", 16);
  cnx_conv(b, "d0", "d1", 16, 32, 2, 0);
  cnx_block(b, "d1", "y", 32);
}

static const fcase k_cases[] = {
    {"gelu_tanh_pow_matmul_bias", 0, 1, {3}, {{2, 5, 16}}, 0, b_gelu_pow},
    {"gelu_tanh_mul_gemm_reshape", 0, 1, {2}, {{10, 16}}, 0, b_gelu_mul_reshape},
    {"gelu_tanh_gemm_wide", 0, 1, {2}, {{32, 256}}, 0, b_gelu_wide},
    {"f16_gelu_tanh_gemm_wide", F16, 1, {2}, {{32, 256}}, 0, b_gelu_wide},
    {"ln_transposes_96", 0, 1, {4}, {{2, 96, 7, 7}}, 0, b_ln_both_96},
    {"ln_transposes_384", 0, 1, {4}, {{1, 384, 5, 14}}, 0, b_ln_both_384},
    {"ln_transposes_768", 0, 1, {4}, {{1, 768, 3, 5}}, 0, b_ln_both_768},
    {"ln_transposes_1536", 0, 1, {4}, {{1, 1536, 2, 3}}, 0, b_ln_both_1536},
    {"f16_ln_transposes_96", F16, 1, {4}, {{2, 96, 7, 7}}, 0, b_ln_both_96},
    /* channel planes in and out in 16-byte (80 positions) and 8-byte (36) pieces */
    {"f16_ln_transposes_96_pieces", F16, 1, {4}, {{2, 96, 8, 10}}, 0, b_ln_both_96},
    {"f16_ln_transposes_384_pieces", F16, 1, {4}, {{1, 384, 6, 6}}, 0, b_ln_both_384},
    {"ln_transpose_in_matmul", 0, 1, {4}, {{1, 48, 5, 6}}, 0, b_ln_in},
    {"f16_ln_transpose_in_matmul", F16, 1, {4}, {{2, 48, 9, 10}}, 0, b_ln_in},
    /* 16-byte loads (positions a multiple of 8), a ragged last tile (200 =
     * 6 x 32 + 8), 384 channels (16 positions a tile), 8-byte loads (196) */
    {"f16_ln_transpose_in_matmul_96", F16, 1, {4}, {{2, 96, 8, 12}}, 0, b_ln_in_96},
    {"f16_ln_transpose_in_matmul_ragged", F16, 1, {4}, {{1, 96, 10, 20}}, 0, b_ln_in_96},
    {"f16_ln_transpose_in_matmul_384", F16, 1, {4}, {{1, 384, 7, 8}}, 0, b_ln_in_384},
    {"ln_transpose_in_matmul_196", 0, 1, {4}, {{2, 96, 14, 14}}, 0, b_ln_in_96},
    {"ln_skip_transpose_out", 0, 2, {4, 4}, {{1, 4, 5, 32}, {1, 4, 5, 32}}, 2, b_ln_skip_out},
    {"add_layernorm_768_sum", 0, 2, {3, 3}, {{1, 9, 768}, {1, 9, 768}}, 2, b_add_ln_sum},
    {"add_ln_transposed_residual", 0, 2, {3, 3}, {{6, 2, 32}, {2, 6, 32}}, 2, b_add_ln_t32},
    {"add_ln_transposed_skip_768", 0, 2, {3, 3}, {{5, 3, 768}, {3, 5, 768}}, 2, b_add_ln_t768},
    {"f16_add_ln_transposed_skip_768", F16, 2, {3, 3}, {{5, 3, 768}, {3, 5, 768}}, 2, b_add_ln_t768},
    {"f16_add_ln_transposed_2048", F16, 2, {3, 3}, {{3, 2, 2048}, {2, 3, 2048}}, 2, b_add_ln_t2048},
    {"ln_transposed_out_matmul", 0, 1, {3}, {{2, 5, 32}}, 0, b_ln_tout_32},
    {"f16_ln_transposed_out_matmul_768", F16, 1, {3}, {{4, 7, 768}}, 0, b_ln_tout_768},
    {"add_ln_transposed_3d_map", 0, 2, {4, 4}, {{4, 3, 2, 32}, {2, 3, 4, 32}}, 2, b_add_ln_rev3},
    {"f16_add_ln_transposed_3d_map", F16, 2, {4, 4}, {{4, 3, 2, 32}, {2, 3, 4, 32}}, 2, b_add_ln_rev3},
    {"add_ln_broadcast_both", 0, 2, {3, 3}, {{2, 1, 32}, {1, 5, 32}}, 0, b_add_ln_bcast},
    {"add_ln_broadcast_along_row", 0, 2, {3, 3}, {{2, 5, 1}, {2, 5, 32}}, 0, b_add_ln_bcast},
    {"add_ln_broadcast_nchw_out", 0, 2, {4, 4}, {{1, 1, 5, 32}, {2, 4, 5, 32}}, 0, b_add_ln_bcast_nchw},
    {"f16_add_ln_broadcast_both", F16, 2, {3, 3}, {{2, 1, 32}, {1, 5, 32}}, 0, b_add_ln_bcast},
    {"transpose_add", 0, 2, {4, 4}, {{2, 7, 7, 48}, {2, 48, 7, 7}}, 0, b_transpose_add},
    {"f16_transpose_add", F16, 2, {4, 4}, {{2, 7, 7, 48}, {2, 48, 7, 7}}, 0, b_transpose_add},
    {"f16_transpose_add_ragged_tiles", F16, 2, {4, 4}, {{3, 9, 13, 40}, {3, 40, 9, 13}}, 0, b_transpose_add},
    {"transpose_sub_second", 0, 2, {4, 4}, {{2, 9, 13, 40}, {2, 40, 9, 13}}, 0, b_transpose_sub_second},
    {"transpose_mul_both", 0, 2, {4, 4}, {{2, 4, 3, 5}, {5, 3, 4, 2}}, 0, b_transpose_mul_both},
    {"transpose_sub_bcast", 0, 1, {4}, {{2, 5, 6, 48}}, 0, b_transpose_sub_bcast},
    {"squeeze_excite", 0, 1, {4}, {{2, 24, 9, 11}}, 0, b_se_small},
    {"squeeze_excite_large_planes", 0, 1, {4}, {{1, 24, 112, 112}}, 0, b_se_small},
    {"squeeze_excite_1152", 0, 1, {4}, {{3, 1152, 7, 7}}, 0, b_se_wide},
    {"f16_squeeze_excite", F16, 1, {4}, {{2, 24, 9, 11}}, 0, b_se_small},
    {"concat_bn_relu_7x7", 0, 2, {4, 4}, {{2, 32, 7, 7}, {2, 16, 7, 7}}, 0, b_concat_bn_relu},
    {"concat_bn_relu_56x56", 0, 2, {4, 4}, {{2, 16, 56, 56}, {2, 32, 56, 56}}, 0, b_concat_bn_relu},
    {"concat_bn_relu_5x3", 0, 2, {4, 4}, {{3, 24, 5, 3}, {3, 24, 5, 3}}, 0, b_concat_bn_relu},
    {"f16_concat_bn_relu_7x7", F16, 2, {4, 4}, {{2, 32, 7, 7}, {2, 16, 7, 7}}, 0, b_concat_bn_relu},
    {"conv_silu_1x1", 0, 1, {4}, {{2, 32, 14, 14}}, 0, b_conv_silu_1x1},
    {"conv_silu_depthwise", 0, 1, {4}, {{2, 48, 14, 14}}, 0, b_conv_silu_dw},
    {"conv_silu_stem", 0, 1, {4}, {{2, 3, 32, 32}}, 0, b_conv_silu_stem},
    {"conv_silu_3x3", 0, 1, {4}, {{2, 32, 14, 14}}, 0, b_conv_silu_3x3},
    {"f16_conv_silu_1x1", F16, 1, {4}, {{2, 32, 14, 14}}, 0, b_conv_silu_1x1},
    {"f16_conv_silu_depthwise", F16, 1, {4}, {{2, 48, 14, 14}}, 0, b_conv_silu_dw},
    {"conv_silu_expand_depthwise", 0, 1, {4}, {{2, 16, 14, 14}}, 0, b_conv_silu_expand_dw},
    {"f16_conv_silu_expand_depthwise", F16, 1, {4}, {{2, 16, 14, 14}}, 0, b_conv_silu_expand_dw},
    {"vit_attention_batch3", 0, 1, {3}, {{9, 3, 128}}, 0, b_vit_mha},
    {"f16_vit_attention_batch3", F16, 1, {3}, {{9, 3, 128}}, 0, b_vit_mha},
    {"vit_attention_batch2_180", 0, 1, {3}, {{180, 2, 128}}, 0, b_vit_mha_long},
    {"attention_key_padding_expanded", 0, 2, {4, 4}, {{2, 4, 80, 64}, {2, 1, 1, 80}}, 0, b_attn_key_padding},
    {"f16_attention_key_padding_expanded", F16, 2, {4, 4}, {{2, 4, 80, 64}, {2, 1, 1, 80}}, 0, b_attn_key_padding},
    {"attention_x2_shared_mask", 0, 2, {4, 4}, {{2, 4, 80, 64}, {2, 1, 1, 80}}, 0, b_attn_key_padding_x2},
    {"f16_attention_x2_shared_mask", F16, 2, {4, 4}, {{2, 4, 80, 64}, {2, 1, 1, 80}}, 0, b_attn_key_padding_x2},
    {"attention_mask_gathered", 0, 2, {4, 2}, {{2, 4, 80, 64}, {2, 80}}, 0, b_attn_key_padding_gathered},
    {"f16_attention_mask_gathered", F16, 2, {4, 2}, {{2, 4, 80, 64}, {2, 80}}, 0, b_attn_key_padding_gathered},
    {"convnext_blocks_channels_last", 0, 1, {4}, {{2, 3, 24, 20}}, 0, b_convnext},
    {"f16_convnext_blocks_channels_last", F16, 1, {4}, {{2, 3, 24, 20}}, 0, b_convnext},
    {"position_embeddings_folded", 0, 1, {3}, {{2, 40, 64}}, 0, b_position_embeddings},
    {"f16_position_embeddings_folded", F16, 1, {3}, {{2, 40, 64}}, 0, b_position_embeddings},
};

static int build(hh_ort *h, const fcase *c, int dt, uint64_t seed, hh_model **out) {
  bctx b = {.m = hh_model_new(h), .dt = dt, .own = c->dtype ? c->dtype : F32, .seed = seed};
  b.rc = b.m ? 0 : 1;
  for (int i = 0; i < c->nin && !b.rc; i++) {
    char name[16];
    snprintf(name, sizeof name, "x%d", i);
    b.rc = hh_model_input(b.m, name, dt, c->rank[i], c->dims[i]);
  }
  if (!b.rc) c->build(&b);
  const char *outs[2] = {"y", "y1"};
  int nout = c->nout ? c->nout : 1;
  for (int k2 = 0; k2 < nout && !b.rc; k2++) b.rc = hh_model_output(b.m, outs[k2], dt, -1, NULL);
  if (!b.rc) b.rc = hh_model_finish(b.m, 17);
  if (b.rc) {
    hh_model_free(b.m);
    return 1;
  }
  *out = b.m;
  return 0;
}

static int run_case(hh_ort *h, const hh_target *t, const fcase *c) {
  int dt = c->dtype ? c->dtype : F32;
  uint64_t seed = (uint64_t)(c - k_cases) * 1000 + 7;
  hh_model *m = NULL, *mr = NULL;
  OrtSession *s_ep = NULL, *s_ref = NULL;
  hh_assign a = {0};
  hh_tensor x[2], xr[2], y[2], yr[2];
  memset(x, 0, sizeof x), memset(xr, 0, sizeof xr), memset(y, 0, sizeof y), memset(yr, 0, sizeof yr);
  int ok = 0;
  size_t nout = c->nout ? (size_t)c->nout : 1;
  if (build(h, c, dt, seed, &m) || build(h, c, dt == F16 ? F32 : dt, seed, &mr)) {
    fprintf(stderr, "FAIL %s: building the model: %s\n", c->name, hh_err(h));
    goto done;
  }
  const char *keys[4], *vals[4];
  size_t nk = ht_ep_opts(t, keys, vals);
  hh_session_cfg ep_cfg = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = nk, .disable_cpu_fallback = 1,
                           .graph_opt_level = -1};
  if (ht_open_pair(h, &ep_cfg, m, mr, c->name, &s_ep, &s_ref, &a)) goto done;
  int mine = hh_assign_count(&a, HH_EP_NAME, NULL), all = hh_assign_count(&a, NULL, NULL);
  if (mine != all || all == 0) {
    fprintf(stderr, "FAIL %s: %d of %d nodes on %s; assignment:\n", c->name, mine, all, HH_EP_NAME);
    hh_assign_print(&a, stderr, "  ");
    goto done;
  }
  for (int i = 0; i < c->nin; i++) {
    hh_tensor own = {0};
    if (hh_tensor_alloc(&own, dt, c->rank[i], c->dims[i])) goto done;
    hh_tensor_fill_random(&own, seed + 500 + (uint64_t)i);
    int bad = hh_tensor_convert(&own, dt, &x[i]) || hh_tensor_convert(&own, dt == F16 ? F32 : dt, &xr[i]);
    hh_tensor_free(&own);
    if (bad) goto done;
  }
  if (hh_session_run(h, s_ep, x, (size_t)c->nin, y, nout)) {
    fprintf(stderr, "FAIL %s: run with %s: %s\n", c->name, HH_EP_NAME, hh_err(h));
    goto done;
  }
  if (hh_session_run(h, s_ref, xr, (size_t)c->nin, yr, nout)) {
    fprintf(stderr, "FAIL %s: run on the CPU EP: %s\n", c->name, hh_err(h));
    goto done;
  }
  ok = 1;
  for (size_t k2 = 0; k2 < nout; k2++) {
    char what[96];
    snprintf(what, sizeof what, "%s output %zu", c->name, k2);
    ok &= ht_check_close(&y[k2], &yr[k2], dt, what);
  }
done:
  for (int i = 0; i < 2; i++) {
    hh_tensor_free(&x[i]);
    hh_tensor_free(&xr[i]);
    hh_tensor_free(&y[i]);
    hh_tensor_free(&yr[i]);
  }
  ht_close_pair(h, &a, s_ep, s_ref, m, mr);
  return ok;
}

static const char *case_name(size_t i) { return k_cases[i].name; }

static int case_run(hh_ort *h, hh_target *t, size_t i) { return run_case(h, t, &k_cases[i]); }

int main(int argc, char **argv) {
  int rc = ht_main(argc, argv, "fused pattern", sizeof k_cases / sizeof k_cases[0], case_name, case_run);
  return rc == 0 && failures == 0 ? 0 : rc ? rc : 1;
}
