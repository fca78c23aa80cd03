/* Provider options: an unknown key or a bad value must fail session creation
 * with a message that names the key; good values must be accepted; and on
 * a GPU the options that change something must change it: gpu_mem_limit
 * refuses what does not fit (naming the limit) and use_tf32=0 brings a
 * large MatMul to fp32 accuracy where TF32 is visibly coarser. (On the
 * reference backend memory is host memory and math is fp32: those two have
 * no effect there, and the test says so.) */
#include <math.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

static int failures;

typedef struct opt_case {
  const char *key, *val;
  int ok; /* 1 = must be accepted */
} opt_case;

/* What a refusal of a bad value must also say: the values allowed. */
static const char *const k_allowed[][2] = {
    {"precision", "fp32, fp16 or bf16"},
    {"half_gelu", "tanh or exact"},
    {"backend", "auto, ref, cuda or hip"},
    {"cudnn_conv_algo_search", "EXHAUSTIVE, HEURISTIC or DEFAULT"},
};

static const char *allowed_values(const char *key) {
  for (size_t i = 0; i < sizeof k_allowed / sizeof k_allowed[0]; i++)
    if (strcmp(k_allowed[i][0], key) == 0) return k_allowed[i][1];
  return NULL;
}

static const opt_case k_cases[] = {
    {"no_such_option", "1", 0},
    {"use_tf32", "7", 0},
    {"use_tf32", "", 0},
    {"device_id", "-3", 0},
    {"device_id", "zero", 0},
    {"gpu_mem_limit", "abc", 0},
    {"gpu_mem_limit", "-5", 0},
    {"cudnn_conv_algo_search", "FAST", 0},
    {"prefer_nhwc", "2", 0},
    {"enable_cuda_graph", "yes", 0},
    {"backend", "tpu", 0},
    {"precision", "fp64", 0},
    {"precision", "FP16", 0},
    {"precision", "", 0},
    {"half_gelu", "erf", 0},
    {"fp32_first_layers", "-1", 0},
    {"fp32_first_layers", "two", 0},
    /* Accepted values (the target's own backend option is added first). */
    {"use_tf32", "0", 1},
    {"use_tf32", "1", 1},
    {"gpu_mem_limit", "1073741824", 1},
    {"cudnn_conv_algo_search", "HEURISTIC", 1},
    {"cudnn_conv_algo_search", "EXHAUSTIVE", 1},
    {"cudnn_conv_algo_search", "DEFAULT", 1},
    {"engine_cache_file", "", 1}, /* off */
    {"engine_cache_file", "/nonexistent-dir/hipdnn-ep-engines.txt", 1}, /* used with EXHAUSTIVE only */
    {"prefer_nhwc", "0", 1},
    {"prefer_nhwc", "1", 1},
    {"prefer_nhwc", "auto", 0},
    {"enable_cuda_graph", "0", 1},
    {"precision", "fp32", 1},
    {"precision", "fp16", 1},
    {"precision", "bf16", 1},
    {"half_gelu", "tanh", 1},
    {"half_gelu", "exact", 1},
    {"fp32_first_layers", "0", 1},
    {"fp32_first_layers", "8", 1},
    /* What onnxruntime-genai and the umbrella EP's callers always send. */
    {"model_arch", "llama", 1},
    {"profile", "hip", 1},
};

/* Y = X[m,k] @ W[k,n] with W a constant. */
static int matmul_model(hh_ort *h, int64_t m, int64_t k, int64_t n, hh_model **out) {
  hh_model *md = hh_model_new(h);
  int64_t xd[2] = {m, k}, wd[2] = {k, n}, yd[2] = {m, n};
  hh_tensor w;
  int rc = !md || hh_model_input(md, "X", HD_DT_F32, 2, xd) || hh_tensor_alloc(&w, HD_DT_F32, 2, wd);
  if (!rc) {
    hh_tensor_fill_random(&w, 5);
    rc = hh_model_initializer(md, "W", &w);
    hh_tensor_free(&w);
  }
  const char *ins[2] = {"X", "W"}, *outs[1] = {"Y"};
  rc = rc || hh_model_node(md, "MatMul", "", "mm", ins, 2, outs, 1, NULL, 0) ||
       hh_model_output(md, "Y", HD_DT_F32, 2, yd) || hh_model_finish(md, 17);
  if (rc) {
    hh_model_free(md);
    return 1;
  }
  *out = md;
  return 0;
}

/* Relative L2 error of the EP's Y against the CPU EP's, with these options;
 * -1 when the run fails (message in h). */
static double matmul_error_n(hh_ort *h, const hh_target *t, hh_model *m, const hh_tensor *x, const char **keys,
                             const char **vals, size_t n) {
  hh_session_cfg ep = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = n, .disable_cpu_fallback = 1};
  hh_session_cfg cpu = {0};
  OrtSession *se = NULL, *sc = NULL;
  hh_tensor ye, yc;
  double err = -1;
  if (!hh_session_create(h, &ep, hh_model_ort(m), NULL, &se) && !hh_session_create(h, &cpu, hh_model_ort(m), NULL, &sc) &&
      !hh_session_run(h, se, x, 1, &ye, 1)) {
    if (!hh_session_run(h, sc, x, 1, &yc, 1)) {
      double num = 0, den = 0;
      for (size_t i = 0; i < yc.n; i++) {
        double d = hh_tensor_get(&ye, i) - hh_tensor_get(&yc, i);
        num += d * d;
        den += hh_tensor_get(&yc, i) * hh_tensor_get(&yc, i);
      }
      err = sqrt(num / (den > 0 ? den : 1));
      hh_tensor_free(&yc);
    }
    hh_tensor_free(&ye);
  }
  hh_session_free(h, se);
  hh_session_free(h, sc);
  return err;
}

static double matmul_error(hh_ort *h, const hh_target *t, hh_model *m, const hh_tensor *x, const char *key,
                           const char *val) {
  const char *keys[1] = {key}, *vals[1] = {val};
  return matmul_error_n(h, t, m, x, keys, vals, 1);
}

/* fp32_first_layers under precision=fp16: the model's one MatMul, its
 * first tensor-core op, stays fp32 (the CPU EP's answer, not fp16's); on a
 * GPU TF32 is then off unless use_tf32 says otherwise. */
static void first_layers(hh_ort *h, const hh_target *t, hh_model *m, const hh_tensor *x) {
  const char *k1[1] = {"precision"}, *v1[1] = {"fp16"};
  const char *k2[2] = {"precision", "fp32_first_layers"}, *v2[2] = {"fp16", "1"};
  const char *k3[3] = {"precision", "fp32_first_layers", "use_tf32"}, *v3[3] = {"fp16", "1", "1"};
  double half = matmul_error_n(h, t, m, x, k1, v1, 1), kept = matmul_error_n(h, t, m, x, k2, v2, 2);
  HT_CHECK(half > 1e-5 && half < 1e-2, "precision=fp16: rel L2 %.3g against the CPU EP (half expected)", half);
  HT_CHECK(kept >= 0 && kept < 1e-5, "precision=fp16 fp32_first_layers=1: rel L2 %.3g (fp32 expected)", kept);
  printf("%s fp32_first_layers=1 keeps the first MatMul fp32: rel L2 vs the CPU EP %.2g, %.2g without it\n",
         half > 1e-5 && kept >= 0 && kept < 1e-5 ? "ok  " : "FAIL", kept, half);
  if (!t->is_gpu) return;
  double tf32 = matmul_error_n(h, t, m, x, k3, v3, 3);
  HT_CHECK(tf32 > 10 * kept && tf32 < 1e-2, "... with use_tf32=1: rel L2 %.3g (TF32 expected)", tf32);
  printf("%s ... with use_tf32=1 given: rel L2 %.2g (TF32)\n", tf32 > 10 * kept && tf32 < 1e-2 ? "ok  " : "FAIL",
         tf32);
}

/* The effects of fp32_first_layers, and of gpu_mem_limit and use_tf32 on a
 * GPU. */
static void effects(hh_ort *h, const hh_target *t) {
  hh_model *m = NULL;
  hh_tensor x;
  int64_t xd[2] = {256, 2048};
  if (matmul_model(h, 256, 2048, 512, &m) || hh_tensor_alloc(&x, HD_DT_F32, 2, xd)) {
    fprintf(stderr, "FAIL: building the MatMul model: %s\n", hh_err(h));
    failures++;
    return;
  }
  hh_tensor_fill_random(&x, 6);
  first_layers(h, t, m, &x);
  if (!t->is_gpu) {
    printf("note gpu_mem_limit and use_tf32 do nothing on the reference backend (host memory, fp32 math): "
           "their effects are checked on a GPU\n");
    hh_tensor_free(&x);
    hh_model_free(m);
    return;
  }
  double strict = matmul_error(h, t, m, &x, "use_tf32", "0");
  double tf32 = matmul_error(h, t, m, &x, "use_tf32", "1");
  HT_CHECK(strict >= 0 && strict < 1e-5, "use_tf32=0: rel L2 %.3g against the CPU EP (fp32 expected)", strict);
  HT_CHECK(tf32 >= 0 && tf32 < 1e-2 && tf32 > 10 * strict, "use_tf32=1: rel L2 %.3g vs %.3g without TF32", tf32, strict);
  printf("%s use_tf32 changes numerics: rel L2 vs the CPU EP %.2g with use_tf32=0, %.2g with use_tf32=1\n",
         strict >= 0 && strict < 1e-5 && tf32 > 10 * strict ? "ok  " : "FAIL", strict, tf32);
  /* 4 MiB of weights do not fit in 1 MiB: a clear error naming the limit. */
  double lim = matmul_error(h, t, m, &x, "gpu_mem_limit", "1048576");
  int named = lim < 0 && strstr(hh_err(h), "gpu_mem_limit") != NULL;
  HT_CHECK(named, "gpu_mem_limit=1MiB with 4 MiB of weights: %s", lim < 0 ? hh_err(h) : "it ran");
  printf("%s gpu_mem_limit=1048576 refuses 4 MiB of weights: %s\n", named ? "ok  " : "FAIL",
         lim < 0 ? hh_err(h) : "(it ran)");
  double roomy = matmul_error(h, t, m, &x, "gpu_mem_limit", "268435456");
  HT_CHECK(roomy >= 0, "gpu_mem_limit=256MiB: %s", hh_err(h));
  printf("%s gpu_mem_limit=268435456 runs it (rel L2 %.2g)\n", roomy >= 0 ? "ok  " : "FAIL", roomy);
  hh_tensor_free(&x);
  hh_model_free(m);
}

int main(void) {
  hh_ort h;
  hh_target t;
  int rc = ht_setup(&h, &t);
  if (rc) return rc;
  hh_conv_desc d = {.nd = 2, .n = 1, .c = 2, .m = 2, .in = {4, 4}, .k = {3, 3}, .seed = 9};
  hh_model *m = NULL;
  if (hh_conv_model(&h, &d, &m)) {
    fprintf(stderr, "FAIL: building the model: %s\n", hh_err(&h));
    hh_ort_close(&h);
    return 1;
  }
  size_t nc = sizeof k_cases / sizeof k_cases[0];
  for (size_t i = 0; i < nc; i++) {
    const opt_case *c = &k_cases[i];
    const char *keys[3], *vals[3];
    size_t nk = ht_ep_opts(&t, keys, vals);
    /* Replace the target's own option when the case sets the same key: a key
     * given twice would test ORT's handling of duplicates, not ours. */
    size_t at = (strcmp(keys[0], c->key) == 0) ? 0 : nk++;
    keys[at] = c->key;
    vals[at] = c->val;
    hh_session_cfg cfg = {.dev = t.dev, .keys = keys, .vals = vals, .n_opts = nk, .disable_cpu_fallback = 1};
    OrtSession *s = NULL;
    int fail = hh_session_create(&h, &cfg, hh_model_ort(m), NULL, &s);
    if (c->ok) {
      HT_CHECK(!fail, "%s=%s was rejected: %s", c->key, c->val, hh_err(&h));
      printf("%s %s=%s accepted\n", fail ? "FAIL" : "ok  ", c->key, c->val);
    } else {
      HT_CHECK(fail, "%s='%s' was accepted", c->key, c->val);
      const char *names = strcmp(c->key, "no_such_option") ? allowed_values(c->key) : NULL;
      int named = fail && strstr(hh_err(&h), c->key) && (!names || strstr(hh_err(&h), names));
      if (fail) HT_CHECK(named, "the error does not name '%s'%s%s: %s", c->key, names ? " and " : "",
                         names ? names : "", hh_err(&h));
      printf("%s %s='%s' -> %s\n", named ? "ok  " : "FAIL", c->key, c->val, fail ? hh_err(&h) : "(accepted)");
    }
    hh_session_free(&h, s);
  }
  hh_model_free(m);
  effects(&h, &t);
  hh_ort_close(&h);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
