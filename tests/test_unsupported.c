/* What the EP must leave to the CPU EP, and partial graphs:
 * - a Conv on int8 data (ONNX's Conv has no int8 type; the EP must not claim
 *   it whether or not ORT accepts the model),
 * - ConvInteger (the int8/uint8 convolution op) lands on the CPU EP and runs,
 * - Conv -> Hardmax -> Conv: both Convs on our EP, Hardmax (no op of ours) on
 *   the CPU EP, the result
 *   equal to the CPU EP's. */
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

static int failures;

static int ep_session(hh_ort *h, const hh_target *t, hh_model *m, OrtSession **s) {
  const char *keys[2], *vals[2];
  size_t nk = ht_ep_opts(t, keys, vals);
  hh_session_cfg cfg = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = nk};
  return hh_session_create(h, &cfg, hh_model_ort(m), NULL, s);
}

/* Runs m on our EP and on the CPU EP with the same input, and compares. */
static void run_both(hh_ort *h, const hh_target *t, hh_model *m, OrtSession *s_ep, hh_tensor *x, hh_tol tol,
                     const char *what) {
  hh_session_cfg cpu = {0};
  OrtSession *s_cpu = NULL;
  (void)t;
  if (hh_session_create(h, &cpu, hh_model_ort(m), NULL, &s_cpu)) {
    HT_CHECK(0, "%s: CPU session: %s", what, hh_err(h));
    return;
  }
  HT_CHECK(ht_run_against_cpu(h, s_ep, s_cpu, x, tol, what), "%s: results differ from the CPU EP", what);
  hh_session_free(h, s_cpu);
}

static void int8_conv(hh_ort *h, const hh_target *t) {
  hh_conv_desc d = {.dtype = HD_DT_I8, .nd = 2, .n = 1, .c = 2, .m = 3, .in = {5, 5}, .k = {3, 3}, .seed = 11};
  hh_model *m = NULL;
  OrtSession *s = NULL;
  if (hh_conv_model(h, &d, &m)) {
    HT_CHECK(0, "int8 Conv model: %s", hh_err(h));
    return;
  }
  if (ep_session(h, t, m, &s)) {
    /* ORT's type check rejects Conv(int8) before any EP sees it: then the
     * CPU-only session must fail the same way, or our EP caused it. */
    char ep_err[1024];
    snprintf(ep_err, sizeof ep_err, "%s", hh_err(h));
    hh_session_cfg cpu = {0};
    OrtSession *sc = NULL;
    int cpu_fail = hh_session_create(h, &cpu, hh_model_ort(m), NULL, &sc);
    hh_session_free(h, sc);
    printf("int8 Conv: ONNX Runtime rejects the model (%s)\n", ep_err);
    HT_CHECK(cpu_fail, "int8 Conv: only the session with %s failed: %s", HH_EP_NAME, ep_err);
  } else {
    hh_assign a = {0};
    if (hh_assignment(h, s, &a) == 0) {
      printf("int8 Conv assignment:\n");
      hh_assign_print(&a, stdout, "  ");
      HT_CHECK(hh_assign_count(&a, HH_EP_NAME, NULL) == 0, "int8 Conv was claimed by %s", HH_EP_NAME);
      hh_assign_free(&a);
    }
    int64_t xd[4] = {1, 2, 5, 5};
    hh_tensor x;
    if (hh_tensor_alloc(&x, HD_DT_I8, 4, xd) == 0) {
      hh_tensor_fill_random(&x, 12);
      run_both(h, t, m, s, &x, hh_tol_for(HD_DT_I8, 0), "int8 Conv");
      hh_tensor_free(&x);
    }
  }
  hh_session_free(h, s);
  hh_model_free(m);
}

static void conv_integer(hh_ort *h, const hh_target *t) {
  hh_model *m = hh_model_new(h);
  OrtSession *s = NULL;
  hh_tensor w = {0}, x = {0};
  int64_t xd[4] = {1, 2, 6, 6}, wd[4] = {4, 2, 3, 3}, yd[4] = {1, 4, 4, 4};
  const char *ins[2] = {"X", "W"}, *outs[1] = {"Y"};
  int64_t ks[2] = {3, 3};
  hh_attr at[1] = {hh_attr_ints("kernel_shape", ks, 2)};
  if (!m || hh_model_input(m, "X", HD_DT_U8, 4, xd) || hh_model_output(m, "Y", HD_DT_I32, 4, yd) ||
      hh_tensor_alloc(&w, HD_DT_U8, 4, wd)) {
    HT_CHECK(0, "ConvInteger model: %s", hh_err(h));
    goto done;
  }
  hh_tensor_fill_random(&w, 21);
  if (hh_model_initializer(m, "W", &w) || hh_model_node(m, "ConvInteger", "", "convint", ins, 2, outs, 1, at, 1) ||
      hh_model_finish(m, 17)) {
    HT_CHECK(0, "ConvInteger model: %s", hh_err(h));
    goto done;
  }
  if (ep_session(h, t, m, &s)) {
    HT_CHECK(0, "ConvInteger session: %s", hh_err(h));
    goto done;
  }
  hh_assign a = {0};
  if (hh_assignment(h, s, &a) == 0) {
    printf("ConvInteger assignment:\n");
    hh_assign_print(&a, stdout, "  ");
    HT_CHECK(hh_assign_count(&a, "CPUExecutionProvider", "ConvInteger") == 1, "ConvInteger is not on the CPU EP");
    HT_CHECK(hh_assign_count(&a, HH_EP_NAME, NULL) == 0, "%s claimed a node of ConvInteger", HH_EP_NAME);
    hh_assign_free(&a);
  }
  if (hh_tensor_alloc(&x, HD_DT_U8, 4, xd) == 0) {
    hh_tensor_fill_random(&x, 22);
    run_both(h, t, m, s, &x, hh_tol_for(HD_DT_I32, 0), "ConvInteger");
  }
done:
  hh_tensor_free(&w);
  hh_tensor_free(&x);
  hh_session_free(h, s);
  hh_model_free(m);
}

static void partial_graph(hh_ort *h, const hh_target *t) {
  hh_model *m = hh_model_new(h);
  OrtSession *s = NULL;
  hh_tensor w1 = {0}, w2 = {0}, x = {0};
  int64_t xd[4] = {2, 3, 8, 8}, w1d[4] = {4, 3, 3, 3}, w2d[4] = {5, 4, 3, 3}, yd[4] = {2, 5, 4, 4};
  int64_t ks[2] = {3, 3};
  hh_attr at[1] = {hh_attr_ints("kernel_shape", ks, 2)};
  const char *c1_in[2] = {"X", "W1"}, *c1_out[1] = {"A"};
  const char *hm_in[1] = {"A"}, *hm_out[1] = {"B"};
  const char *c2_in[2] = {"B", "W2"}, *c2_out[1] = {"Y"};
  if (!m || hh_model_input(m, "X", HD_DT_F32, 4, xd) || hh_model_output(m, "Y", HD_DT_F32, 4, yd) ||
      hh_tensor_alloc(&w1, HD_DT_F32, 4, w1d) || hh_tensor_alloc(&w2, HD_DT_F32, 4, w2d)) {
    HT_CHECK(0, "partial model: %s", hh_err(h));
    goto done;
  }
  hh_tensor_fill_random(&w1, 31);
  hh_tensor_fill_random(&w2, 32);
  if (hh_model_initializer(m, "W1", &w1) || hh_model_initializer(m, "W2", &w2) ||
      hh_model_node(m, "Conv", "", "conv1", c1_in, 2, c1_out, 1, at, 1) ||
      hh_model_node(m, "Hardmax", "", "hardmax", hm_in, 1, hm_out, 1, NULL, 0) ||
      hh_model_node(m, "Conv", "", "conv2", c2_in, 2, c2_out, 1, at, 1) || hh_model_finish(m, 17)) {
    HT_CHECK(0, "partial model: %s", hh_err(h));
    goto done;
  }
  if (ep_session(h, t, m, &s)) {
    HT_CHECK(0, "partial model session: %s", hh_err(h));
    goto done;
  }
  hh_assign a = {0};
  if (hh_assignment(h, s, &a) == 0) {
    printf("Conv -> Hardmax -> Conv assignment:\n");
    hh_assign_print(&a, stdout, "  ");
    HT_CHECK(hh_assign_count(&a, HH_EP_NAME, "Conv") == 2, "not both Convs on %s", HH_EP_NAME);
    HT_CHECK(hh_assign_count(&a, "CPUExecutionProvider", "Hardmax") == 1, "Hardmax is not on the CPU EP");
    hh_assign_free(&a);
  }
  if (hh_tensor_alloc(&x, HD_DT_F32, 4, xd) == 0) {
    hh_tensor_fill_random(&x, 33);
    run_both(h, t, m, s, &x, hh_tol_for(HD_DT_F32, 0), "Conv -> Hardmax -> Conv");
  }
done:
  hh_tensor_free(&w1);
  hh_tensor_free(&w2);
  hh_tensor_free(&x);
  hh_session_free(h, s);
  hh_model_free(m);
}

int main(void) {
  hh_ort h;
  hh_target t;
  int rc = ht_setup(&h, &t);
  if (rc) return rc;
  int8_conv(&h, &t);
  conv_integer(&h, &t);
  partial_graph(&h, &t);
  hh_ort_close(&h);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
