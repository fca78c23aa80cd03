/* Conv on HipDNNExecutionProvider against ONNX Runtime's CPU EP, one
 * Model Editor model per case. Each EP session has CPU fallback disabled and
 * the assignment info must show the Conv on our EP, so a case cannot pass by
 * quietly running on the CPU.
 *
 * fp16 cases are checked against the fp32 twin of the model (same values,
 * exactly representable in fp16) on the CPU EP: an fp16 result is judged
 * against the exact answer, not against another fp16 approximation.
 *
 * usage: test_conv [--filter SUBSTRING] [--list] [--cpu-self-check]
 *   --cpu-self-check runs the "EP" side on the CPU EP too (harness check,
 *   no EP needed). */
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

static int failures;

typedef struct conv_case {
  const char *name;
  hh_conv_desc d;
  int64_t batch2;    /* dynamic batch: a second run with this batch (0 = none) */
  int64_t in2[3];    /* dynamic spatial: a second run with these sizes */
} conv_case;

#define F32 HD_DT_F32
#define F16 HD_DT_F16

/* Sizes stay small: the ref backend is a plain loop and the suite runs under
 * ASan on 2 cores, twice (ORT 1.29 and 1.30). */
static const conv_case k_cases[] = {
    /* kernel sizes */
    {.name = "k1", .d = {.nd = 2, .n = 1, .c = 3, .m = 16, .in = {12, 12}, .k = {1, 1}, .bias = 1}},
    {.name = "k3", .d = {.nd = 2, .n = 1, .c = 3, .m = 16, .in = {12, 12}, .k = {3, 3}, .bias = 1}},
    {.name = "k5", .d = {.nd = 2, .n = 1, .c = 3, .m = 16, .in = {12, 12}, .k = {5, 5}, .bias = 1}},
    {.name = "k7", .d = {.nd = 2, .n = 1, .c = 3, .m = 16, .in = {12, 12}, .k = {7, 7}, .bias = 1}},
    {.name = "k3x5_rect", .d = {.nd = 2, .n = 1, .c = 3, .m = 8, .in = {9, 13}, .k = {3, 5}}},
    {.name = "k3_no_kernel_shape", .d = {.nd = 2, .n = 1, .c = 3, .m = 8, .in = {10, 10}, .k = {3, 3}, .no_kernel_shape = 1}},
    /* strides */
    {.name = "s1", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {11, 11}, .k = {3, 3}, .strides = {1, 1}}},
    {.name = "s2", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {11, 11}, .k = {3, 3}, .strides = {2, 2}}},
    {.name = "s3", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {11, 11}, .k = {3, 3}, .strides = {3, 3}}},
    {.name = "s1x3", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {11, 11}, .k = {3, 3}, .strides = {1, 3}}},
    /* pads */
    {.name = "pad1_sym", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {10, 10}, .k = {3, 3}, .has_pads = 1, .pads = {1, 1, 1, 1}}},
    {.name = "pad_asym", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {10, 10}, .k = {3, 3}, .has_pads = 1, .pads = {0, 1, 2, 0}}},
    {.name = "pad_asym_s2_k5", .d = {.nd = 2, .n = 2, .c = 4, .m = 8, .in = {11, 10}, .k = {5, 5}, .strides = {2, 2},
                        .has_pads = 1, .pads = {2, 1, 1, 2}, .bias = 1}},
    {.name = "pad_bigger_than_half_k", .d = {.nd = 2, .n = 1, .c = 2, .m = 4, .in = {6, 6}, .k = {3, 3}, .has_pads = 1,
                                .pads = {2, 2, 2, 2}}},
    /* auto_pad: odd total padding (k3 s2 on 10) makes SAME_UPPER and SAME_LOWER differ */
    {.name = "autopad_NOTSET", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {10, 10}, .k = {3, 3}, .strides = {2, 2},
                        .auto_pad = "NOTSET", .has_pads = 1, .pads = {1, 0, 0, 1}}},
    {.name = "autopad_SAME_UPPER", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {10, 10}, .k = {3, 3}, .strides = {2, 2},
                            .auto_pad = "SAME_UPPER", .bias = 1}},
    {.name = "autopad_SAME_LOWER", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {10, 10}, .k = {3, 3}, .strides = {2, 2},
                            .auto_pad = "SAME_LOWER", .bias = 1}},
    {.name = "autopad_VALID", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {10, 10}, .k = {3, 3}, .strides = {2, 2},
                       .auto_pad = "VALID"}},
    {.name = "autopad_SAME_UPPER_k4_s1", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {9, 9}, .k = {4, 4},
                                  .auto_pad = "SAME_UPPER"}},
    {.name = "autopad_SAME_LOWER_k4_s1", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {9, 9}, .k = {4, 4},
                                  .auto_pad = "SAME_LOWER"}},
    /* dilations */
    {.name = "d1", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {12, 12}, .k = {3, 3}, .dilations = {1, 1}}},
    {.name = "d2", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {12, 12}, .k = {3, 3}, .dilations = {2, 2}, .has_pads = 1,
            .pads = {2, 2, 2, 2}}},
    {.name = "d3", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {12, 12}, .k = {3, 3}, .dilations = {3, 3}}},
    {.name = "d2_s2_pad_asym", .d = {.nd = 2, .n = 1, .c = 4, .m = 8, .in = {13, 12}, .k = {3, 3}, .dilations = {2, 1},
                        .strides = {2, 2}, .has_pads = 1, .pads = {1, 0, 2, 1}, .bias = 1}},
    /* groups */
    {.name = "g1", .d = {.nd = 2, .n = 1, .c = 8, .m = 8, .in = {8, 8}, .k = {3, 3}, .group = 1}},
    {.name = "g2", .d = {.nd = 2, .n = 1, .c = 8, .m = 12, .in = {8, 8}, .k = {3, 3}, .group = 2, .bias = 1}},
    {.name = "g4_k5", .d = {.nd = 2, .n = 1, .c = 16, .m = 16, .in = {8, 8}, .k = {5, 5}, .group = 4, .has_pads = 1,
               .pads = {2, 2, 2, 2}}},
    {.name = "depthwise", .d = {.nd = 2, .n = 2, .c = 16, .m = 16, .in = {10, 10}, .k = {3, 3}, .group = 16, .has_pads = 1,
                   .pads = {1, 1, 1, 1}, .bias = 1}},
    {.name = "depthwise_s2", .d = {.nd = 2, .n = 1, .c = 16, .m = 16, .in = {11, 11}, .k = {3, 3}, .group = 16,
                      .strides = {2, 2}, .auto_pad = "SAME_UPPER"}},
    {.name = "depthwise_7x7", .d = {.nd = 2, .n = 2, .c = 12, .m = 12, .in = {13, 11}, .k = {7, 7}, .group = 12,
                                   .has_pads = 1, .pads = {3, 3, 3, 3}, .bias = 1}},
    {.name = "depthwise_x2", .d = {.nd = 2, .n = 1, .c = 8, .m = 16, .in = {8, 8}, .k = {3, 3}, .group = 8}},
    /* batch */
    {.name = "batch1", .d = {.nd = 2, .n = 1, .c = 3, .m = 8, .in = {8, 8}, .k = {3, 3}, .bias = 1}},
    {.name = "batch3", .d = {.nd = 2, .n = 3, .c = 3, .m = 8, .in = {8, 8}, .k = {3, 3}, .bias = 1}},
    {.name = "batch8", .d = {.nd = 2, .n = 8, .c = 3, .m = 8, .in = {8, 8}, .k = {3, 3}, .bias = 1}},
    /* channels */
    {.name = "c1", .d = {.nd = 2, .n = 1, .c = 1, .m = 1, .in = {9, 9}, .k = {3, 3}}},
    {.name = "c3", .d = {.nd = 2, .n = 1, .c = 3, .m = 3, .in = {9, 9}, .k = {3, 3}}},
    {.name = "c16", .d = {.nd = 2, .n = 1, .c = 16, .m = 16, .in = {9, 9}, .k = {3, 3}, .bias = 1}},
    {.name = "c64", .d = {.nd = 2, .n = 1, .c = 64, .m = 64, .in = {8, 8}, .k = {3, 3}, .has_pads = 1, .pads = {1, 1, 1, 1},
             .bias = 1}},
    {.name = "c64_k1", .d = {.nd = 2, .n = 2, .c = 64, .m = 32, .in = {6, 6}, .k = {1, 1}}},
    /* 1D */
    {.name = "1d_k3", .d = {.nd = 1, .n = 2, .c = 4, .m = 8, .in = {20}, .k = {3}, .bias = 1}},
    {.name = "1d_k5_s2_pad_asym", .d = {.nd = 1, .n = 1, .c = 4, .m = 8, .in = {21}, .k = {5}, .strides = {2}, .has_pads = 1,
                           .pads = {3, 1}}},
    {.name = "1d_d2_g2", .d = {.nd = 1, .n = 1, .c = 4, .m = 4, .in = {16}, .k = {3}, .dilations = {2}, .group = 2}},
    {.name = "1d_same_lower", .d = {.nd = 1, .n = 1, .c = 3, .m = 5, .in = {10}, .k = {4}, .strides = {3},
                       .auto_pad = "SAME_LOWER"}},
    /* 3D */
    {.name = "3d_k3", .d = {.nd = 3, .n = 1, .c = 3, .m = 4, .in = {6, 6, 6}, .k = {3, 3, 3}, .bias = 1}},
    {.name = "3d_s2_pad_asym", .d = {.nd = 3, .n = 2, .c = 2, .m = 4, .in = {7, 6, 5}, .k = {3, 3, 3}, .strides = {2, 2, 1},
                        .has_pads = 1, .pads = {1, 0, 1, 0, 1, 1}}},
    {.name = "3d_d2_depthwise", .d = {.nd = 3, .n = 1, .c = 4, .m = 4, .in = {7, 7, 7}, .k = {3, 3, 3}, .dilations = {2, 2, 2},
                         .group = 4, .bias = 1}},
    {.name = "3d_k1x3x5_valid", .d = {.nd = 3, .n = 1, .c = 2, .m = 3, .in = {5, 6, 7}, .k = {1, 3, 5}, .auto_pad = "VALID"}},
    /* fp16 */
    {.name = "f16_k3", .d = {.dtype = F16, .nd = 2, .n = 1, .c = 3, .m = 8, .in = {10, 10}, .k = {3, 3}, .bias = 1}},
    {.name = "f16_k7_s2_pad_asym", .d = {.dtype = F16, .nd = 2, .n = 2, .c = 4, .m = 8, .in = {12, 12}, .k = {7, 7},
                            .strides = {2, 2}, .has_pads = 1, .pads = {3, 2, 2, 3}}},
    {.name = "f16_depthwise", .d = {.dtype = F16, .nd = 2, .n = 1, .c = 16, .m = 16, .in = {8, 8}, .k = {3, 3}, .group = 16,
                       .auto_pad = "SAME_UPPER", .bias = 1}},
    {.name = "f16_c64", .d = {.dtype = F16, .nd = 2, .n = 1, .c = 64, .m = 16, .in = {6, 6}, .k = {3, 3}}},
    {.name = "f16_1d", .d = {.dtype = F16, .nd = 1, .n = 3, .c = 4, .m = 4, .in = {17}, .k = {5}, .dilations = {2}, .bias = 1}},
    {.name = "f16_3d", .d = {.dtype = F16, .nd = 3, .n = 1, .c = 2, .m = 4, .in = {5, 5, 5}, .k = {3, 3, 3}, .group = 2,
                .auto_pad = "SAME_LOWER"}},
    {.name = "f16_dynamic_batch", .d = {.dtype = F16, .nd = 2, .n = 1, .c = 3, .m = 4, .in = {8, 8}, .k = {3, 3},
                           .dynamic_batch = 1, .bias = 1}, .batch2 = 4},
    /* dynamic shapes: two runs with different shapes in one session */
    {.name = "dynamic_batch", .d = {.nd = 2, .n = 2, .c = 3, .m = 8, .in = {9, 9}, .k = {3, 3}, .dynamic_batch = 1, .bias = 1},
     .batch2 = 5},
    {.name = "dynamic_batch_1d", .d = {.nd = 1, .n = 1, .c = 3, .m = 4, .in = {15}, .k = {3}, .dynamic_batch = 1}, .batch2 = 3},
    {.name = "dynamic_spatial", .d = {.nd = 2, .n = 1, .c = 3, .m = 4, .in = {8, 8}, .k = {3, 3}, .strides = {2, 2},
                         .auto_pad = "SAME_UPPER", .dynamic_batch = 1, .dynamic_spatial = 1},
     .batch2 = 2, .in2 = {11, 6}},
    /* opsets (Conv-1 and Conv-11 schemas; 22 is the newest) */
    {.name = "opset7", .d = {.nd = 2, .n = 1, .c = 3, .m = 4, .in = {8, 8}, .k = {3, 3}, .opset = 7, .bias = 1}},
    {.name = "opset11", .d = {.nd = 2, .n = 1, .c = 3, .m = 4, .in = {8, 8}, .k = {3, 3}, .opset = 11}},
    {.name = "opset22", .d = {.nd = 2, .n = 1, .c = 3, .m = 4, .in = {8, 8}, .k = {3, 3}, .opset = 22, .bias = 1}},
};

/* Runs one input shape through both sessions and compares. */
static int run_shape(hh_ort *h, const conv_case *cc, OrtSession *s_ep, OrtSession *s_ref, int64_t n,
                     const int64_t *sp, uint64_t seed) {
  const hh_conv_desc *d = &cc->d;
  int dt = d->dtype ? d->dtype : F32;
  int64_t xd[5] = {n, d->c};
  hh_tensor x = {0}, xr = {0}, y = {0}, yr = {0};
  int ok = 0;
  for (int i = 0; i < d->nd; i++) xd[2 + i] = sp[i];
  if (hh_tensor_alloc(&x, dt, d->nd + 2, xd)) {
    fprintf(stderr, "FAIL %s: cannot allocate input\n", cc->name);
    return 0;
  }
  hh_tensor_fill_random(&x, seed);
  /* The reference session is fp32 for fp16 cases: same values, widened. */
  if (hh_tensor_convert(&x, dt == F16 ? F32 : dt, &xr)) goto done;
  if (hh_session_run(h, s_ep, &x, 1, &y, 1)) {
    fprintf(stderr, "FAIL %s (N=%lld): run on %s: %s\n", cc->name, (long long)n, HH_EP_NAME, hh_err(h));
    goto done;
  }
  if (hh_session_run(h, s_ref, &xr, 1, &yr, 1)) {
    fprintf(stderr, "FAIL %s (N=%lld): run on the CPU EP: %s\n", cc->name, (long long)n, hh_err(h));
    goto done;
  }
  /* The shape from ONNX's formula, computed here: catches attributes that
   * did not reach the model as meant (both sessions would agree on those). */
  for (int i = 0; i < d->nd; i++) {
    int64_t want = hh_conv_out_dim(d, i, sp[i]);
    if (yr.rank != d->nd + 2 || yr.dims[0] != n || yr.dims[1] != d->m || yr.dims[2 + i] != want) {
      fprintf(stderr, "FAIL %s (N=%lld): CPU EP output dim %d is %lld, ONNX's formula gives %lld\n", cc->name,
              (long long)n, 2 + i, (long long)(yr.rank > 2 + i ? yr.dims[2 + i] : -1), (long long)want);
      goto done;
    }
  }
  char what[160];
  snprintf(what, sizeof what, "%s (N=%lld)", cc->name, (long long)n);
  ok = ht_check_close(&y, &yr, dt, what);
done:
  hh_tensor_free(&x);
  hh_tensor_free(&xr);
  hh_tensor_free(&y);
  hh_tensor_free(&yr);
  return ok;
}

static int run_case(hh_ort *h, const hh_target *t, const conv_case *cc, int cpu_self_check) {
  hh_conv_desc d = cc->d, dr = cc->d;
  hh_model *m = NULL, *mr = NULL;
  OrtSession *s_ep = NULL, *s_ref = NULL;
  hh_assign a = {0};
  int ok = 0;
  d.seed = dr.seed = (uint64_t)(cc - k_cases) + 1;
  if (d.dtype == F16) {
    dr.dtype = F32;
    dr.f16_values = 1;
  }
  if (hh_conv_model(h, &d, &m) || hh_conv_model(h, &dr, &mr)) {
    fprintf(stderr, "FAIL %s: building the model: %s\n", cc->name, hh_err(h));
    goto done;
  }
  const char *keys[4], *vals[4];
  size_t nk = ht_ep_opts(t, keys, vals);
  hh_session_cfg ep_cfg = {.dev = t->dev, .keys = keys, .vals = vals, .n_opts = nk, .disable_cpu_fallback = 1};
  if (cpu_self_check) ep_cfg = (hh_session_cfg){0};
  if (ht_open_pair(h, &ep_cfg, m, mr, cc->name, &s_ep, &s_ref, &a)) goto done;
  const char *want_ep = cpu_self_check ? "CPUExecutionProvider" : HH_EP_NAME;
  if (hh_assign_count(&a, want_ep, "Conv") != 1 || hh_assign_count(&a, NULL, NULL) != 1) {
    fprintf(stderr, "FAIL %s: the Conv did not run (alone) on %s; assignment:\n", cc->name, want_ep);
    hh_assign_print(&a, stderr, "  ");
    goto done;
  }
  if (!run_shape(h, cc, s_ep, s_ref, d.n, d.in, d.seed * 31 + 7)) goto done;
  if (cc->batch2 || cc->in2[0]) {
    int64_t n2 = cc->batch2 ? cc->batch2 : d.n;
    const int64_t *sp2 = cc->in2[0] ? cc->in2 : d.in;
    if (!run_shape(h, cc, s_ep, s_ref, n2, sp2, d.seed * 31 + 8)) goto done;
    /* Back to the first shape: a per-shape plan cache must not mix them up. */
    if (!run_shape(h, cc, s_ep, s_ref, d.n, d.in, d.seed * 31 + 9)) goto done;
  }
  ok = 1;
done:
  ht_close_pair(h, &a, s_ep, s_ref, m, mr);
  return ok;
}

typedef struct conv_run_ctx {
  hh_ort *h;
  hh_target *t;
  int cpu_self_check;
} conv_run_ctx;

static const char *case_name(size_t i) { return k_cases[i].name; }

static int case_run(size_t i, void *user) {
  conv_run_ctx *r = user;
  return run_case(r->h, r->t, &k_cases[i], r->cpu_self_check);
}

int main(int argc, char **argv) {
  const char *filter;
  int list, cpu_self_check = 0;
  if (ht_parse_args(argc, argv, "--cpu-self-check", &cpu_self_check, &filter, &list)) return 2;
  size_t nc = sizeof k_cases / sizeof k_cases[0];
  if (list) {
    for (size_t i = 0; i < nc; i++) printf("%s\n", k_cases[i].name);
    return 0;
  }
  hh_ort h;
  hh_target t = {0};
  if (cpu_self_check) {
    if (hh_ort_open(&h, NULL)) {
      fprintf(stderr, "FAIL: %s\n", hh_err(&h));
      return 1;
    }
  } else {
    int rc = ht_setup(&h, &t);
      if (rc) return rc;
  }
  conv_run_ctx r = {&h, &t, cpu_self_check};
  int rc = ht_run_cases("conv", nc, case_name, case_run, &r, filter);
  hh_ort_close(&h);
  return rc == 0 && failures == 0 ? 0 : 1;
}
