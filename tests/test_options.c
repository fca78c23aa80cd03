/* Provider options: an unknown key or a bad value must fail session creation
 * with a message that names the key; good values must be accepted. */
#include <string.h>

#include "tests/hh_test.h"

static int failures;

typedef struct opt_case {
  const char *key, *val;
  int ok; /* 1 = must be accepted */
} opt_case;

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
    /* Accepted values (the target's own backend option is added first). */
    {"use_tf32", "0", 1},
    {"use_tf32", "1", 1},
    {"gpu_mem_limit", "1073741824", 1},
    {"cudnn_conv_algo_search", "HEURISTIC", 1},
    {"cudnn_conv_algo_search", "EXHAUSTIVE", 1},
    {"cudnn_conv_algo_search", "DEFAULT", 1},
    {"prefer_nhwc", "0", 1},
    {"enable_cuda_graph", "0", 1},
};

int main(void) {
  hh_ort h;
  hh_target t;
  int rc = ht_setup(&h, &t);
  if (rc == HH_SKIP) hh_ort_close(&h);
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
      if (fail) HT_CHECK(strstr(hh_err(&h), c->key) != NULL, "the error does not name '%s': %s", c->key, hh_err(&h));
      printf("%s %s='%s' -> %s\n", fail && strstr(hh_err(&h), c->key) ? "ok  " : "FAIL", c->key, c->val,
             fail ? hh_err(&h) : "(accepted)");
    }
    hh_session_free(&h, s);
  }
  hh_model_free(m);
  hh_ort_close(&h);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
