/* Unit checks of the harness's own arithmetic (no ORT needed): comparison,
 * tolerances, Conv output sizes, seeded fill, conversions, and the join of
 * the EP's claim log with ORT's node placement. */
#include <math.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"

static int failures;

static void check_compare(void) {
  int64_t d[2] = {2, 3};
  hh_tensor a, b;
  hh_cmp c;
  hh_tol tol = {1e-4, 1e-4};
  hh_tensor_alloc(&a, HD_DT_F32, 2, d);
  hh_tensor_alloc(&b, HD_DT_F32, 2, d);
  for (size_t i = 0; i < 6; i++) hh_tensor_set(&a, i, (double)i), hh_tensor_set(&b, i, (double)i);
  HT_CHECK(hh_compare(&a, &b, tol, &c) && c.max_abs == 0, "equal tensors fail");
  hh_tensor_set(&a, 4, 4.0 + 1e-3); /* element [1,1] */
  HT_CHECK(!hh_compare(&a, &b, tol, &c), "an error of 1e-3 passes");
  HT_CHECK(c.worst == 4 && c.worst_coord[0] == 1 && c.worst_coord[1] == 1 && c.n_bad == 1, "worst %zu [%lld,%lld]",
           c.worst, (long long)c.worst_coord[0], (long long)c.worst_coord[1]);
  HT_CHECK(fabs(c.max_abs - 1e-3) < 1e-6, "max_abs %g", c.max_abs);
  hh_tensor_set(&a, 4, 4.0 + 3e-4); /* within atol + rtol * 4 = 5e-4 */
  HT_CHECK(hh_compare(&a, &b, tol, &c), "an error inside atol + rtol*|ref| fails");
  hh_tensor_set(&a, 4, 4.0);
  hh_tensor_set(&b, 2, NAN);
  HT_CHECK(!hh_compare(&a, &b, tol, &c) && c.n_nonfinite_mismatch == 1, "NaN in ref only is not caught");
  hh_tensor_set(&a, 2, NAN);
  HT_CHECK(hh_compare(&a, &b, tol, &c), "NaN in both fails");
  hh_tensor_set(&a, 2, INFINITY);
  hh_tensor_set(&b, 2, -INFINITY);
  HT_CHECK(!hh_compare(&a, &b, tol, &c), "+inf vs -inf passes");
  hh_tensor_free(&a);
  int64_t d2[2] = {3, 2};
  hh_tensor_alloc(&a, HD_DT_F32, 2, d2);
  HT_CHECK(!hh_compare(&a, &b, tol, &c) && c.why[0], "shape mismatch not reported");
  hh_tensor_free(&a);
  hh_tensor_free(&b);
}

static void check_conv_dims(void) {
  hh_conv_desc d = {.nd = 2, .k = {3, 3}, .strides = {2, 2}};
  HT_CHECK(hh_conv_out_dim(&d, 0, 10) == 4, "VALID-like k3 s2 on 10");
  d.auto_pad = "SAME_UPPER";
  HT_CHECK(hh_conv_out_dim(&d, 0, 10) == 5, "SAME k3 s2 on 10");
  d.auto_pad = NULL;
  d.has_pads = 1;
  d.pads[0] = 1, d.pads[2] = 2;
  HT_CHECK(hh_conv_out_dim(&d, 0, 10) == 6, "pads 1,2 k3 s2 on 10");
  d.dilations[0] = 3, d.dilations[1] = 3;
  HT_CHECK(hh_conv_out_dim(&d, 0, 10) == 4, "d3 k3 s2 pads 1,2 on 10: %lld", (long long)hh_conv_out_dim(&d, 0, 10));
}

static void check_fill(void) {
  int64_t d[1] = {1000};
  hh_tensor a, b, h16, back;
  hh_tensor_alloc(&a, HD_DT_F32, 1, d);
  hh_tensor_alloc(&b, HD_DT_F32, 1, d);
  hh_tensor_fill_random(&a, 42);
  hh_tensor_fill_random(&b, 42);
  HT_CHECK(memcmp(a.data, b.data, 4000) == 0, "same seed, different data");
  double lo = 1, hi = -1;
  for (size_t i = 0; i < a.n; i++) lo = fmin(lo, hh_tensor_get(&a, i)), hi = fmax(hi, hh_tensor_get(&a, i));
  HT_CHECK(lo >= -1 && hi <= 1 && lo < -0.9 && hi > 0.9, "fill range [%g, %g]", lo, hi);
  hh_tensor_fill_random(&b, 43);
  HT_CHECK(memcmp(a.data, b.data, 4000) != 0, "different seeds, same data");
  /* fp16 round trip: converting the fp16 tensor to f32 equals rounding. */
  hh_tensor_convert(&a, HD_DT_F16, &h16);
  hh_tensor_convert(&h16, HD_DT_F32, &back);
  hh_tensor_round_f16(&a);
  HT_CHECK(memcmp(a.data, back.data, 4000) == 0, "fp16 conversion and rounding disagree");
  hh_tensor_free(&a);
  hh_tensor_free(&b);
  hh_tensor_free(&h16);
  hh_tensor_free(&back);
  HT_CHECK(hh_tol_for(HD_DT_F16, 0).rtol > hh_tol_for(HD_DT_F32, 0).rtol, "fp16 tolerance not looser than fp32");
  HT_CHECK(hh_tol_for(HD_DT_I32, 0).atol == 0, "integers not exact");
}

/* The EP's GetCapability lines (ep/ep_ep.c's forms) against a placement:
 * the last word on a named node wins, unnamed nodes match in order, a
 * claimed node ORT put elsewhere is flagged, a node made by ORT has no word,
 * a declined node missing from the graph is listed as gone. */
static void check_placement(void) {
  const char *log =
      "GetCapability: 9 node(s), 2 partition(s)\n"
      "not claiming Hardmax 'hm': the EP has no Hardmax op\n"
      "claiming Shape 'shape0' for plan time only: the backend does not run Shape\n"
      "claiming Shape 'shape0' in partition 0\n"
      "claiming Conv 'conv' in partition 0\n"
      "not claiming Relu 'r': Relu of type int32\n"
      "claiming Relu 'r' in partition 1\n"
      "not claiming Mul 'folded': Mul of type int8\n"
      "not claiming Hardmax '': reason A\n"
      "not claiming Hardmax '': reason B\n"
      "not claiming Pad 'quote's': Pad: pads -1, 0\n";
  hh_claims c;
  HT_CHECK(hh_claims_parse(log, &c) == 0 && c.n == 8, "%zu claims parsed, want 8", c.n);
  if (c.n != 8) {
    hh_claims_free(&c);
    return;
  }
  HT_CHECK(strcmp(c.rows[0].name, "hm") == 0 && strcmp(c.rows[0].op, "Hardmax") == 0 && !c.rows[0].claimed &&
               strcmp(c.rows[0].reason, "the EP has no Hardmax op") == 0,
           "row 0: %s %s %d '%s'", c.rows[0].op, c.rows[0].name, c.rows[0].claimed, c.rows[0].reason);
  HT_CHECK(c.rows[1].claimed && strcmp(c.rows[1].name, "shape0") == 0, "shape0 not claimed");
  HT_CHECK(c.rows[3].claimed && strcmp(c.rows[3].name, "r") == 0, "the last word on 'r' (claimed) lost");
  HT_CHECK(strcmp(c.rows[7].name, "quote's") == 0 && strcmp(c.rows[7].reason, "Pad: pads -1, 0") == 0,
           "a name with a quote: '%s' '%s'", c.rows[7].name, c.rows[7].reason);
  static const hh_node_place places[] = {
      {"conv", "Conv", "", HH_EP_NAME, 0},
      {"shape0", "Shape", "", "CPUExecutionProvider", 1},
      {"hm", "Hardmax", "", "CPUExecutionProvider", 1},
      {"r", "Relu", "", HH_EP_NAME "_1", 2},
      {"FusedConv_7", "FusedConv", "com.microsoft", "CPUExecutionProvider", 3},
      {"", "Hardmax", "", "CPUExecutionProvider", 3},
      {"", "Hardmax", "", "CPUExecutionProvider", 3},
      {"quote's", "Pad", "", "CPUExecutionProvider", 3},
  };
  hh_offloads o;
  HT_CHECK(hh_offloads_make(places, sizeof places / sizeof places[0], &c, &o) == 0 && o.n == 7,
           "%zu offloads, want 7", o.n);
  if (o.n == 7) {
    HT_CHECK(strcmp(o.rows[0].name, "shape0") == 0 && o.rows[0].claimed && o.n_claimed == 1 &&
                 strstr(o.rows[0].reason, "CPUExecutionProvider"),
             "claimed-but-elsewhere row: %s %d '%s'", o.rows[0].name, o.rows[0].claimed, o.rows[0].reason);
    HT_CHECK(strcmp(o.rows[1].name, "hm") == 0 && strcmp(o.rows[1].reason, "the EP has no Hardmax op") == 0,
             "hm: '%s'", o.rows[1].reason);
    HT_CHECK(strcmp(o.rows[2].op, "FusedConv") == 0 && strstr(o.rows[2].reason, "no word"),
             "a node ORT made: '%s'", o.rows[2].reason);
    HT_CHECK(strcmp(o.rows[3].reason, "reason A") == 0 && strcmp(o.rows[4].reason, "reason B") == 0,
             "unnamed nodes: '%s', '%s'", o.rows[3].reason, o.rows[4].reason);
    HT_CHECK(strcmp(o.rows[5].name, "quote's") == 0 && strcmp(o.rows[5].ep, "CPUExecutionProvider") == 0,
             "quote's: %s on '%s'", o.rows[5].name, o.rows[5].ep);
    HT_CHECK(strcmp(o.rows[6].name, "folded") == 0 && !o.rows[6].ep[0] && !o.rows[6].claimed &&
                 strcmp(o.rows[6].reason, "Mul of type int8") == 0,
             "a declined node gone from the graph: %s on '%s'", o.rows[6].name, o.rows[6].ep);
  }
  hh_offloads_free(&o);
  hh_claims_free(&c);
}

int main(void) {
  check_compare();
  check_conv_dims();
  check_fill();
  check_placement();
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
