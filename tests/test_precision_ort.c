/* Provider option precision=fp16 / bf16 through ONNX Runtime: fp32 models
 * (a CNN: Conv, BatchNormalization, Relu, MaxPool, GlobalAveragePool,
 * Gemm; a transformer block as exporters write it: LayerNormalization,
 * MatMul projections with bias, multi-head attention through Reshape /
 * Transpose / Softmax, GELU written out with Erf, residual Adds) run on
 * the EP in half precision and are compared with the CPU EP's fp32 answer
 * on the same model.
 *
 * Each must: put every node on the EP in one partition; give fp32 outputs
 * (the partition's boundary stays fp32: the EP's log says one Cast per
 * partition input and output, and no node kept in fp32); carry signal
 * (the reference output is not constant); stay within half precision's
 * error, relative L2 <= 1e-2 for fp16 and 5e-2 for bf16 (fp16 rounds to
 * 11 significant bits, 2^-11 = 4.9e-4, and these models land near 1e-3;
 * bf16 to 8 bits, 8x coarser; a broken kernel gives errors near 1); and
 * differ from fp32 by more than 1e-5 (fp32 lands at 1e-7 on the reference
 * backend and 1e-6 on a GPU without TF32), so half precision really ran.
 * On the reference backend here; on a GPU under HIPDNN_EP_TEST_BACKEND=auto. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

static int failures;

/* ---- models ---- */

typedef struct mb {
  hh_model *m;
  int rc;
  uint64_t seed;
} mb;

static void init(mb *b, const char *name, int rank, const int64_t *dims, double scale) {
  b->rc = b->rc || hh_model_random_initializer(b->m, name, rank, dims, b->seed++, scale, NULL);
}

static void scalar(mb *b, const char *name, float v) {
  hh_tensor t;
  if (b->rc || hh_tensor_alloc(&t, HD_DT_F32, 0, NULL)) {
    b->rc = 1;
    return;
  }
  hh_tensor_set(&t, 0, v);
  b->rc = hh_model_initializer(b->m, name, &t);
  hh_tensor_free(&t);
}

static void ints(mb *b, const char *name, int n, const int64_t *v) {
  hh_tensor t;
  int64_t d[1] = {n};
  if (b->rc || hh_tensor_alloc(&t, HD_DT_I64, 1, d)) {
    b->rc = 1;
    return;
  }
  for (int i = 0; i < n; i++) hh_tensor_set(&t, (size_t)i, (double)v[i]);
  b->rc = hh_model_initializer(b->m, name, &t);
  hh_tensor_free(&t);
}

static void op(mb *b, const char *type, const char *name, const char *const *ins, size_t nin, const char *out,
               const hh_attr *attrs, size_t nattrs) {
  const char *outs[1] = {out};
  b->rc = b->rc || hh_model_node(b->m, type, "", name, ins, nin, outs, 1, attrs, nattrs);
}

#define OP(b, type, name, out, attrs, nattrs, ...)                                              \
  do {                                                                                         \
    const char *ins_[] = {__VA_ARGS__};                                                        \
    op(b, type, name, ins_, sizeof ins_ / sizeof ins_[0], out, attrs, nattrs);                 \
  } while (0)

/* X [N,3,16,16] -> Conv 3x3 (8) + BN + Relu -> MaxPool 2x2 -> Conv 3x3 (16)
 * + Relu -> GlobalAveragePool -> Flatten -> Gemm (10) -> Y */
static int cnn_model(hh_ort *h, hh_model **out) {
  mb b = {hh_model_new(h), 0, 11};
  if (!b.m) return 1;
  int64_t xd[4] = {-1, 3, 16, 16}, yd[2] = {-1, 10};
  int64_t w1[4] = {8, 3, 3, 3}, c8[1] = {8}, w2[4] = {16, 8, 3, 3}, c16[1] = {16}, gw[2] = {10, 16}, c10[1] = {10};
  b.rc = hh_model_input(b.m, "X", HD_DT_F32, 4, xd);
  init(&b, "w1", 4, w1, 0.35);
  init(&b, "b1", 1, c8, 0.1);
  init(&b, "bn_scale", 1, c8, 0.3);
  init(&b, "bn_bias", 1, c8, 0.2);
  init(&b, "bn_mean", 1, c8, 0.1);
  init(&b, "w2", 4, w2, 0.15);
  init(&b, "b2", 1, c16, 0.1);
  init(&b, "gw", 2, gw, 0.4);
  init(&b, "gb", 1, c10, 0.1);
  hh_tensor var; /* positive variances */
  if (!b.rc && !hh_tensor_alloc(&var, HD_DT_F32, 1, c8)) {
    for (size_t i = 0; i < var.n; i++) hh_tensor_set(&var, i, 0.5 + 0.1 * (double)i);
    b.rc = hh_model_initializer(b.m, "bn_var", &var);
    hh_tensor_free(&var);
  }
  const int64_t pads[4] = {1, 1, 1, 1}, k2[2] = {2, 2};
  hh_attr conv_a[1] = {hh_attr_ints("pads", pads, 4)};
  hh_attr pool_a[2] = {hh_attr_ints("kernel_shape", k2, 2), hh_attr_ints("strides", k2, 2)};
  hh_attr gemm_a[1] = {hh_attr_int("transB", 1)};
  OP(&b, "Conv", "conv1", "c1", conv_a, 1, "X", "w1", "b1");
  OP(&b, "BatchNormalization", "bn1", "n1", NULL, 0, "c1", "bn_scale", "bn_bias", "bn_mean", "bn_var");
  OP(&b, "Relu", "relu1", "r1", NULL, 0, "n1");
  OP(&b, "MaxPool", "pool1", "p1", pool_a, 2, "r1");
  OP(&b, "Conv", "conv2", "c2", conv_a, 1, "p1", "w2", "b2");
  OP(&b, "Relu", "relu2", "r2", NULL, 0, "c2");
  OP(&b, "GlobalAveragePool", "gap", "g", NULL, 0, "r2");
  OP(&b, "Flatten", "flatten", "f", NULL, 0, "g");
  OP(&b, "Gemm", "fc", "Y", gemm_a, 1, "f", "gw", "gb");
  b.rc = b.rc || hh_model_output(b.m, "Y", HD_DT_F32, 2, yd) || hh_model_finish(b.m, 17);
  if (b.rc) {
    hh_model_free(b.m);
    return 1;
  }
  *out = b.m;
  return 0;
}

/* A post-norm BERT-style block, X [N,S,32], 4 heads of 8:
 *   q, k, v = X Wq + bq, ...  (each Reshape [0,0,4,8], Transpose to heads)
 *   A = Softmax(q k^T / sqrt 8) v -> Transpose, Reshape [0,0,32] -> Wo + bo
 *   R = LayerNorm(X + A); U = GELU(R W1 + b1) (Erf written out)
 *   Y = LayerNorm(R + U W2 + b2) */
static int block_model(hh_ort *h, hh_model **out) {
  mb b = {hh_model_new(h), 0, 101};
  if (!b.m) return 1;
  int64_t xd[3] = {-1, -1, 32}, w[2] = {32, 32}, d32[1] = {32}, w1[2] = {32, 64}, d64[1] = {64}, w2[2] = {64, 32};
  b.rc = hh_model_input(b.m, "X", HD_DT_F32, 3, xd);
  const char *p[4] = {"q", "k", "v", "o"};
  for (int i = 0; i < 4; i++) {
    char wn[8], bn[8];
    snprintf(wn, sizeof wn, "w%s", p[i]);
    snprintf(bn, sizeof bn, "b%s", p[i]);
    init(&b, wn, 2, w, 0.3);
    init(&b, bn, 1, d32, 0.1);
  }
  init(&b, "w1", 2, w1, 0.3);
  init(&b, "b1", 1, d64, 0.1);
  init(&b, "w2", 2, w2, 0.2);
  init(&b, "b2", 1, d32, 0.1);
  init(&b, "ln1_b", 1, d32, 0.1);
  init(&b, "ln2_b", 1, d32, 0.1);
  hh_tensor gamma;
  for (int i = 0; i < 2 && !b.rc; i++) {
    if (hh_tensor_alloc(&gamma, HD_DT_F32, 1, d32)) {
      b.rc = 1;
      break;
    }
    for (size_t j = 0; j < gamma.n; j++) hh_tensor_set(&gamma, j, 1.0 + 0.01 * (double)j);
    b.rc = hh_model_initializer(b.m, i ? "ln2_g" : "ln1_g", &gamma);
    hh_tensor_free(&gamma);
  }
  const int64_t heads[4] = {0, 0, 4, 8}, merged[3] = {0, 0, 32}, perm[4] = {0, 2, 1, 3}, kperm[4] = {0, 2, 3, 1};
  ints(&b, "heads", 4, heads);
  ints(&b, "merged", 3, merged);
  scalar(&b, "sqrt_d", 2.8284271f);
  scalar(&b, "sqrt2", 1.4142135f);
  scalar(&b, "one", 1.0f);
  scalar(&b, "half", 0.5f);
  hh_attr tr_a[1] = {hh_attr_ints("perm", perm, 4)}, trk_a[1] = {hh_attr_ints("perm", kperm, 4)};
  hh_attr sm_a[1] = {hh_attr_int("axis", -1)}, ln_a[1] = {hh_attr_int("axis", -1)};
  for (int i = 0; i < 3; i++) {
    char mm[8], wn[8], bn[8], ad[8], rs[8], tr[8];
    snprintf(mm, sizeof mm, "%s_mm", p[i]);
    snprintf(wn, sizeof wn, "w%s", p[i]);
    snprintf(bn, sizeof bn, "b%s", p[i]);
    snprintf(ad, sizeof ad, "%s_b", p[i]);
    snprintf(rs, sizeof rs, "%s_r", p[i]);
    snprintf(tr, sizeof tr, "%s_t", p[i]);
    OP(&b, "MatMul", mm, mm, NULL, 0, "X", wn);
    OP(&b, "Add", ad, ad, NULL, 0, mm, bn);
    OP(&b, "Reshape", rs, rs, NULL, 0, ad, "heads");
    OP(&b, "Transpose", tr, tr, i == 1 ? trk_a : tr_a, 1, rs);
  }
  OP(&b, "MatMul", "scores", "s", NULL, 0, "q_t", "k_t");
  OP(&b, "Div", "scale", "ss", NULL, 0, "s", "sqrt_d");
  OP(&b, "Softmax", "softmax", "pr", sm_a, 1, "ss");
  OP(&b, "MatMul", "context", "ctx", NULL, 0, "pr", "v_t");
  OP(&b, "Transpose", "ctx_t", "ctx_t", tr_a, 1, "ctx");
  OP(&b, "Reshape", "ctx_r", "ctx_r", NULL, 0, "ctx_t", "merged");
  OP(&b, "MatMul", "o_mm", "o_mm", NULL, 0, "ctx_r", "wo");
  OP(&b, "Add", "o_b", "o_b", NULL, 0, "o_mm", "bo");
  OP(&b, "Add", "res1", "res1", NULL, 0, "X", "o_b");
  OP(&b, "LayerNormalization", "ln1", "R", ln_a, 1, "res1", "ln1_g", "ln1_b");
  OP(&b, "MatMul", "ff1", "u", NULL, 0, "R", "w1");
  OP(&b, "Add", "ff1_b", "ub", NULL, 0, "u", "b1");
  OP(&b, "Div", "gelu_div", "gd", NULL, 0, "ub", "sqrt2");
  OP(&b, "Erf", "gelu_erf", "ge", NULL, 0, "gd");
  OP(&b, "Add", "gelu_add", "ga", NULL, 0, "ge", "one");
  OP(&b, "Mul", "gelu_mul", "gm", NULL, 0, "ub", "ga");
  OP(&b, "Mul", "gelu_half", "gl", NULL, 0, "gm", "half");
  OP(&b, "MatMul", "ff2", "f2", NULL, 0, "gl", "w2");
  OP(&b, "Add", "ff2_b", "f2b", NULL, 0, "f2", "b2");
  OP(&b, "Add", "res2", "res2", NULL, 0, "R", "f2b");
  OP(&b, "LayerNormalization", "ln2", "Y", ln_a, 1, "res2", "ln2_g", "ln2_b");
  b.rc = b.rc || hh_model_output(b.m, "Y", HD_DT_F32, 3, xd) || hh_model_finish(b.m, 17);
  if (b.rc) {
    hh_model_free(b.m);
    return 1;
  }
  *out = b.m;
  return 0;
}

/* ---- checks ---- */

/* The EP's summary of its precision pass over one partition
 * ("'NAME': H node(s) in TYPE, K kept in fp32, C cast(s) added, ..."). */
static int precision_summary(const char *log, int *half, int *kept, int *casts) {
  const char *at = strstr(log, " node(s) in ");
  if (!at) return 0;
  const char *start = at;
  while (start > log && start[-1] != ' ') start--;
  return sscanf(start, "%d node(s) in %*s %d kept in fp32, %d cast(s) added", half, kept, casts) == 3;
}

static double rel_l2(const hh_tensor *got, const hh_tensor *ref, int *finite) {
  double num = 0, den = 0;
  *finite = got->n == ref->n && got->n > 0;
  for (size_t i = 0; i < ref->n && *finite; i++) {
    double g = hh_tensor_get(got, i), r = hh_tensor_get(ref, i);
    if (!isfinite(g)) *finite = 0;
    num += (g - r) * (g - r);
    den += r * r;
  }
  return den > 0 ? sqrt(num / den) : INFINITY;
}

static int has_signal(const hh_tensor *t) {
  for (size_t i = 1; i < t->n; i++)
    if (hh_tensor_get(t, i) != hh_tensor_get(t, 0)) return 1;
  return 0;
}

/* Runs model m (one input of shape xd) with precision `prec` (NULL: the
 * default) on the target; *err: rel L2 against the CPU EP. */
static int run_case(hh_ort *h, const hh_target *t, hh_model *m, const char *name, const char *prec, const int64_t *xd,
                    int xrank, double *err) {
  const char *keys[3], *vals[3];
  size_t nk = ht_ep_opts(t, keys, vals);
  if (prec) keys[nk] = "precision", vals[nk++] = prec;
  hh_session_cfg cfg = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = nk, .disable_cpu_fallback = 1};
  hh_session_cfg cpu = {0};
  OrtSession *se = NULL, *sc = NULL;
  hh_assign a = {0};
  hh_tensor x = {0}, y = {0}, yr = {0};
  char *log = NULL;
  int ok = 0;
  const char *what = prec ? prec : "fp32";
  *err = -1;
  if (hh_log_capture_begin(h)) {
    fprintf(stderr, "FAIL %s %s: %s\n", name, what, hh_err(h));
    return 0;
  }
  int rc = hh_session_create(h, &cfg, hh_model_ort(m), NULL, &se);
  char created[sizeof h->err];
  memcpy(created, h->err, sizeof created);
  if (hh_log_capture_end(h, &log)) log = NULL;
  if (rc) {
    fprintf(stderr, "FAIL %s %s: session with %s: %s\n", name, what, HH_EP_NAME, created);
    goto done;
  }
  if (hh_session_create(h, &cpu, hh_model_ort(m), NULL, &sc) || hh_assignment(h, se, &a) ||
      hh_tensor_alloc(&x, HD_DT_F32, xrank, xd)) {
    fprintf(stderr, "FAIL %s %s: %s\n", name, what, hh_err(h));
    goto done;
  }
  hh_tensor_fill_random(&x, 7);
  if (hh_session_run(h, se, &x, 1, &y, 1) || hh_session_run(h, sc, &x, 1, &yr, 1)) {
    fprintf(stderr, "FAIL %s %s: run: %s\n", name, what, hh_err(h));
    goto done;
  }
  int total = hh_assign_count(&a, NULL, NULL), on_ep = hh_assign_count(&a, HH_EP_NAME, NULL);
  HT_CHECK(total > 0 && on_ep == total && a.ep_partitions == 1, "%s %s: %d/%d nodes on the EP in %d partition(s)",
           name, what, on_ep, total, a.ep_partitions);
  HT_CHECK(y.dtype == HD_DT_F32, "%s %s: output of %s", name, what, hd_dtype_name(y.dtype));
  HT_CHECK(has_signal(&yr), "%s: the CPU EP's output is constant: no signal to compare", name);
  int finite = 0;
  *err = rel_l2(&y, &yr, &finite);
  HT_CHECK(finite, "%s %s: output not finite or of another size", name, what);
  if (prec) {
    int half = -1, kept = -1, casts = -1;
    int found = log && precision_summary(log, &half, &kept, &casts);
    HT_CHECK(found, "%s %s: the EP did not report its precision pass", name, what);
    /* the boundary: one Cast for the input, one for the output, no node
     * left in fp32 */
    HT_CHECK(!found || (casts == 2 && kept == 0 && half > 0), "%s %s: %d node(s) in half, %d kept fp32, %d cast(s)",
             name, what, half, kept, casts);
    printf("  %s %s: %d node(s) in half precision, %d kept in fp32, %d cast(s) at the boundary\n", name, what, half,
           kept, casts);
  }
  ok = 1;
done:
  free(log);
  hh_tensor_free(&x);
  hh_tensor_free(&y);
  hh_tensor_free(&yr);
  hh_assign_free(&a);
  hh_session_free(h, se);
  hh_session_free(h, sc);
  return ok;
}

static void check_model(hh_ort *h, const hh_target *t, hh_model *m, const char *name, const int64_t *xd, int xrank) {
  double e32 = -1, e16 = -1, ebf = -1;
  int ok = run_case(h, t, m, name, NULL, xd, xrank, &e32);
  ok &= run_case(h, t, m, name, "fp16", xd, xrank, &e16);
  ok &= run_case(h, t, m, name, "bf16", xd, xrank, &ebf);
  HT_CHECK(ok, "%s: a run failed", name);
  if (!ok) return;
  HT_CHECK(e32 < 1e-5, "%s: fp32 rel L2 %.3g", name, e32);
  HT_CHECK(e16 <= 1e-2 && e16 > 1e-5, "%s: fp16 rel L2 %.3g (want (1e-5, 1e-2])", name, e16);
  HT_CHECK(ebf <= 5e-2 && ebf > 1e-5, "%s: bf16 rel L2 %.3g (want (1e-5, 5e-2])", name, ebf);
  printf("%s %s: rel L2 vs the CPU EP (fp32): fp32 %.2e, fp16 %.2e (limit 1e-2), bf16 %.2e (limit 5e-2)\n",
         e16 <= 1e-2 && ebf <= 5e-2 && e16 > 1e-5 && ebf > 1e-5 && e32 < 1e-5 ? "ok  " : "FAIL", name, e32, e16, ebf);
}

int main(void) {
  hh_ort h;
  hh_target t;
  int rc = ht_setup(&h, &t);
  if (rc) return rc;
  hh_model *cnn = NULL, *block = NULL;
  if (cnn_model(&h, &cnn) || block_model(&h, &block)) {
    fprintf(stderr, "FAIL: building the models: %s\n", hh_err(&h));
    hh_model_free(cnn);
    hh_ort_close(&h);
    return 1;
  }
  const int64_t cnn_x[4] = {2, 3, 16, 16}, block_x[3] = {2, 7, 32};
  check_model(&h, &t, cnn, "cnn", cnn_x, 4);
  check_model(&h, &t, block, "transformer block", block_x, 3);
  hh_model_free(cnn);
  hh_model_free(block);
  hh_ort_close(&h);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
