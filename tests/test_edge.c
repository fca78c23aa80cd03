/* test_edge: models at the edges, through ONNX Runtime with our EP against
 * the CPU EP. Each must give the CPU EP's answer, or the same clean error,
 * never a crash:
 *   - a Conv over a batch of 0 (once a division by zero on ref);
 *   - ReduceMean over an axis of 0 (ONNX Runtime answers 0);
 *   - MatMul with an inner dim of 0 (zeros);
 *   - GlobalAveragePool over spatial dims of 0 (both refuse: "only N can be 0");
 *   - a Conv with pads of 2^30 - 2 feeding a pool (once a heap overflow):
 *     our EP must not claim it;
 *   - a model file cut short: session creation fails cleanly.
 * Runs on ref; on a GPU with HIPDNN_EP_TEST_BACKEND=auto. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

static int failures;

typedef struct one_node {
  const char *name, *op;
  int64_t xd[4];
  int xr;
  int dyn0;            /* X's dim 0 symbolic in the model */
  int64_t wd[4];
  int wr;              /* 0: no second input */
  hh_attr at[2];
  int nat;
  int64_t run_xd[4];   /* the shape run (xd when dyn0 is 0) */
  int expect_error;    /* both sessions must refuse at run time */
} one_node;

static hh_model *build(hh_ort *h, const one_node *c) {
  hh_model *m = hh_model_new(h);
  int64_t xd[4];
  memcpy(xd, c->xd, sizeof xd);
  if (c->dyn0) xd[0] = -1;
  int rc = !m || hh_model_input(m, "X", HD_DT_F32, c->xr, xd);
  if (!rc && c->wr) {
    hh_tensor w;
    rc = hh_tensor_alloc(&w, HD_DT_F32, c->wr, c->wd);
    if (!rc) {
      hh_tensor_fill_random(&w, 4);
      rc = hh_model_initializer(m, "W", &w);
      hh_tensor_free(&w);
    }
  }
  const char *ins[2] = {"X", "W"}, *outs[1] = {"Y"};
  rc = rc || hh_model_node(m, c->op, "", "n", ins, c->wr ? 2 : 1, outs, 1, c->at, (size_t)c->nat) ||
       hh_model_output(m, "Y", HD_DT_F32, -1, NULL) || hh_model_finish(m, 17);
  if (rc) {
    hh_model_free(m);
    return NULL;
  }
  return m;
}

static void run_case(hh_ort *h, const hh_target *t, const one_node *c) {
  hh_model *m = build(h, c);
  if (!m) {
    fprintf(stderr, "FAIL %s: building the model: %s\n", c->name, hh_err(h));
    failures++;
    return;
  }
  const char *keys[2], *vals[2];
  size_t nk = ht_ep_opts(t, keys, vals);
  hh_session_cfg ep = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = nk}, cpu = {0};
  OrtSession *se = NULL, *sc = NULL;
  if (hh_session_create(h, &ep, hh_model_ort(m), NULL, &se) || hh_session_create(h, &cpu, hh_model_ort(m), NULL, &sc)) {
    fprintf(stderr, "FAIL %s: session: %s\n", c->name, hh_err(h));
    failures++;
    goto done;
  }
  hh_tensor x, ye, yc;
  if (hh_tensor_alloc(&x, HD_DT_F32, c->xr, c->dyn0 ? c->run_xd : c->xd)) {
    failures++;
    goto done;
  }
  hh_tensor_fill_random(&x, 8);
  int fe = hh_session_run(h, se, &x, 1, &ye, 1);
  char ep_err[512];
  snprintf(ep_err, sizeof ep_err, "%s", fe ? hh_err(h) : "");
  int fc = hh_session_run(h, sc, &x, 1, &yc, 1);
  if (c->expect_error) {
    HT_CHECK(fe && fc, "%s: expected both to refuse (ours: %s; CPU EP: %s)", c->name, fe ? ep_err : "ran",
             fc ? hh_err(h) : "ran");
    printf("%s %-36s both refuse: %.120s\n", fe && fc ? "ok  " : "FAIL", c->name, ep_err);
  } else if (fe || fc) {
    HT_CHECK(0, "%s: ours %s, CPU EP %s", c->name, fe ? ep_err : "ran", fc ? hh_err(h) : "ran");
  } else {
    hh_cmp cmp;
    hh_compare(&ye, &yc, hh_tol_for(HD_DT_F32, 0), &cmp);
    int shape_ok = ye.rank == yc.rank && !memcmp(ye.dims, yc.dims, sizeof(int64_t) * (size_t)ye.rank);
    HT_CHECK(cmp.pass && shape_ok, "%s: differs from the CPU EP (%s)", c->name, cmp.why);
    printf("%s %-36s %zu elements, as the CPU EP\n", cmp.pass && shape_ok ? "ok  " : "FAIL", c->name, ye.n);
    hh_tensor_free(&ye);
    hh_tensor_free(&yc);
  }
  if (!fe && c->expect_error) hh_tensor_free(&ye);
  if (!fc && c->expect_error) hh_tensor_free(&yc);
  hh_tensor_free(&x);
done:
  hh_session_free(h, se);
  hh_session_free(h, sc);
  hh_model_free(m);
}

/* Conv(pads 2^30 - 2) -> GlobalAveragePool: not claimed by us (the CPU EP
 * would need an intermediate of 2^62 elements; it is not run). */
static void huge_pads(hh_ort *h, const hh_target *t) {
  hh_model *m = hh_model_new(h);
  int64_t xd[4] = {1, 1, 1, 1}, pads[4] = {(1 << 30) - 2, (1 << 30) - 2, (1 << 30) - 2, (1 << 30) - 2};
  hh_attr at[1] = {hh_attr_ints("pads", pads, 4)};
  hh_tensor w;
  int rc = !m || hh_model_input(m, "X", HD_DT_F32, 4, xd) || hh_tensor_alloc(&w, HD_DT_F32, 4, xd);
  if (!rc) {
    hh_tensor_fill_random(&w, 2);
    rc = hh_model_initializer(m, "W", &w);
    hh_tensor_free(&w);
  }
  const char *ins[2] = {"X", "W"}, *c[1] = {"C"}, *y[1] = {"Y"};
  rc = rc || hh_model_node(m, "Conv", "", "conv", ins, 2, c, 1, at, 1) ||
       hh_model_node(m, "GlobalAveragePool", "", "gap", c, 1, y, 1, NULL, 0) ||
       hh_model_output(m, "Y", HD_DT_F32, 4, xd) || hh_model_finish(m, 17);
  const char *keys[2], *vals[2];
  size_t nk = ht_ep_opts(t, keys, vals);
  hh_session_cfg ep = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = nk};
  OrtSession *s = NULL;
  hh_assign a = {0};
  rc = rc || hh_session_create(h, &ep, hh_model_ort(m), NULL, &s) || hh_assignment(h, s, &a);
  int ours = rc ? -1 : hh_assign_count(&a, HH_EP_NAME, "Conv");
  HT_CHECK(!rc && ours == 0, "Conv with pads of 2^30 - 2: %s", rc ? hh_err(h) : "claimed by our EP");
  printf("%s %-36s left to the CPU EP\n", !rc && ours == 0 ? "ok  " : "FAIL", "Conv with pads of 2^30 - 2");
  hh_assign_free(&a);
  hh_session_free(h, s);
  hh_model_free(m);
}

/* The first bytes of a ModelProto (what a cut download looks like): a
 * clean error from session creation. */
static void truncated(hh_ort *h, const hh_target *t) {
  char path[] = "/tmp/hipdnn-ep-edge-XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
  static const unsigned char prefix[] = {0x08, 0x08, 0x12, 0x07, 0x70, 0x79, 0x74, 0x6f, 0x72,
                                         0x63, 0x68, 0x3a, 0x80, 0x01, 0x0a, 0x42, 0x0a, 0x01};
  int rc = !f || fwrite(prefix, 1, sizeof prefix, f) != sizeof prefix;
  if (f) rc |= fclose(f) != 0;
  const char *keys[2], *vals[2];
  size_t nk = ht_ep_opts(t, keys, vals);
  hh_session_cfg ep = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = nk};
  OrtSession *s = NULL;
  int fail = rc ? 0 : hh_session_create(h, &ep, NULL, path, &s);
  HT_CHECK(!rc && fail, "a truncated model file: %s", rc ? "could not write it" : "a session was made");
  printf("%s %-36s %.100s\n", !rc && fail ? "ok  " : "FAIL", "a truncated model file", fail ? hh_err(h) : "");
  hh_session_free(h, s);
  remove(path);
}

int main(void) {
  hh_ort h;
  hh_target t;
  int rc = ht_setup(&h, &t);
  if (rc) return rc;
  int64_t ax1[1] = {1};
  static const one_node cases[] = {
      {.name = "Conv over a batch of 0", .op = "Conv", .xd = {2, 3, 6, 6}, .xr = 4, .dyn0 = 1,
       .wd = {4, 3, 3, 3}, .wr = 4, .run_xd = {0, 3, 6, 6}},
      {.name = "MatMul with an inner dim of 0", .op = "MatMul", .xd = {3, 0}, .xr = 2, .wd = {0, 4}, .wr = 2},
      {.name = "GlobalAveragePool over 0x0", .op = "GlobalAveragePool", .xd = {1, 2, 0, 0}, .xr = 4,
       .expect_error = 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&h, &t, &cases[i]);
  one_node rm = {.name = "ReduceMean over an axis of 0", .op = "ReduceMean", .xd = {3, 0}, .xr = 2, .nat = 1};
  rm.at[0] = hh_attr_ints("axes", ax1, 1);
  run_case(&h, &t, &rm);
  huge_pads(&h, &t);
  truncated(&h, &t);
  hh_ort_close(&h);
  printf("test_edge: %s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
