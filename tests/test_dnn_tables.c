/* test_dnn_tables: the cuDNN and hipDNN tables cover everything the
 * descriptor builder uses. Needs no GPU and no DNN library:
 *   1. each table (plain data) names and values every DNN_NAMES entry, or
 *      marks it absent where that is allowed (DNN_OPTIONAL_NAMES); values of
 *      one kind (ATTR_, TYPE_, BACKEND_, ...) are distinct; every entry point
 *      has a symbol with the vendor's prefix;
 *   2. the builder, run against a mock backend API with each table's values,
 *      builds, plans and executes every convolution it can emit (fused or not,
 *      each activation, 2D and 3D, fp32 and fp16) without touching a name the
 *      vendor lacks and passing only values that are in the table.
 * The hipDNN table is always checked; the cuDNN one when cuDNN's headers
 * were found at configure time (HD_HAVE_CUDNN_TABLE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/dnn/dnn.h"
#include "tests/dnn_mock.h"
#include "tests/unit_test.h"
#include "backends/hip/hip_hipdnn.h"
#include "common/hd_dtype.h"
#ifdef HD_HAVE_CUDNN_TABLE
#include "backends/cuda/cu_cudnn.h"
#endif

#define CHECK UT_CHECKF

/* ---- 1. the table as data ---- */

static const char *kinds[] = {"STATUS_", "BACKEND_", "TYPE_", "DATA_", "HEUR_MODE_",
                              "NUMERICAL_NOTE_", "POINTWISE_", "ATTR_", "RESAMPLE_",
                              "REDUCE_", "PROPAGATE_"};

static const char *kind_of(dnn_name n) {
  const char *s = dnn_name_str(n);
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
    if (strncmp(s, kinds[k], strlen(kinds[k])) == 0) return kinds[k];
  size_t len = strlen(s);
  if (len > 4 && strcmp(s + len - 4, "_PAD") == 0) return "_PAD"; /* the padding modes */
  return ""; /* CROSS_CORRELATION: a kind of its own */
}

static void check_data(const dnn_table *t) {
  int absent = 0;
  for (int n = 0; n < DNN_NAME_COUNT; ++n) {
    const char *name = dnn_name_str((dnn_name)n);
    const char *spelled = t->names[n];
    int64_t v = t->values[n];
    if (!spelled || v == DNN_ABSENT) {
      ++absent;
      CHECK(!spelled && v == DNN_ABSENT, "%s %s: a name without a value or a value without a name",
            t->vendor, name);
      CHECK(dnn_name_optional((dnn_name)n), "%s lacks %s, which the builder needs", t->vendor, name);
      continue;
    }
    CHECK(strncmp(spelled, t->prefix, strlen(t->prefix)) == 0, "%s %s spelled %s", t->vendor,
          name, spelled);
    for (int m = 0; m < n; ++m)
      if (t->names[m] && strcmp(kind_of((dnn_name)n), kind_of((dnn_name)m)) == 0)
        CHECK(t->values[m] != v, "%s: %s and %s are both %lld", t->vendor, name,
              dnn_name_str((dnn_name)m), (long long)v);
  }
  /* The names that only make sense together. */
  const dnn_name pairs[][2] = {
      {DNN_BACKEND_CONVOLUTION_DESCRIPTOR, DNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC},
      {DNN_BACKEND_POINTWISE_DESCRIPTOR, DNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR},
      {DNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, DNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; ++i)
    CHECK((t->names[pairs[i][0]] == NULL) == (t->names[pairs[i][1]] == NULL),
          "%s: %s and %s must be both present or both absent", t->vendor,
          dnn_name_str(pairs[i][0]), dnn_name_str(pairs[i][1]));
  char lower[16];
  size_t pl = strlen(t->prefix) - 1; /* "HIPDNN_" -> "hipdnn" */
  for (size_t i = 0; i < pl && i < sizeof lower - 1; ++i)
    lower[i] = (char)(t->prefix[i] | 0x20);
  lower[pl < sizeof lower - 1 ? pl : sizeof lower - 1] = '\0';
  for (int e = 0; e < DNN_ENTRY_COUNT; ++e)
    CHECK(t->symbols[e] && strncmp(t->symbols[e], lower, strlen(lower)) == 0,
          "%s: entry point %d has symbol %s", t->vendor, e, t->symbols[e] ? t->symbols[e] : "(none)");
  CHECK(t->not_supported_span >= 1, "%s: not_supported_span %lld", t->vendor,
        (long long)t->not_supported_span);
  printf("%s: %d names (%d absent by design), %d entry points\n", t->vendor, DNN_NAME_COUNT,
         absent, DNN_ENTRY_COUNT);
}

/* ---- 2. the builder against a mock backend API ---- */

static const dnn_table *cur; /* the table the mock checks against */
static int bad_calls, calls;
enum { MOCK_OK = 0, MOCK_BAD = 123456 }; /* both tables' SUCCESS is 0 */

typedef struct mock_desc {
  int type;
  void *linked; /* an ENGINECFG's engine */
} mock_desc;

/* Is v the value of some name of kind `kind` in the current table? */
static int known(int64_t v, const char *kind) {
  for (int n = 0; n < DNN_NAME_COUNT; ++n)
    if (cur->names[n] && cur->values[n] == v && strcmp(kind_of((dnn_name)n), kind) == 0) return 1;
  return 0;
}

static int bad(const char *what, int v) {
  ++bad_calls;
  printf("FAIL %s: mock got %s %d, not in the table\n", cur->vendor, what, v);
  return MOCK_BAD;
}

static int m_create_descriptor(int type, void **desc) {
  ++calls;
  if (!known(type, "BACKEND_")) return bad("descriptor type", type);
  mock_desc *d = calloc(1, sizeof *d);
  d->type = type;
  *desc = d;
  return MOCK_OK;
}
static int m_destroy_descriptor(void *desc) {
  free(desc);
  return MOCK_OK;
}
static int m_finalize(void *desc) {
  (void)desc;
  ++calls;
  return MOCK_OK;
}
static int m_set_attribute(void *desc, int name, int type, int64_t count, const void *elems) {
  (void)desc, (void)elems;
  ++calls;
  if (!known(name, "ATTR_")) return bad("attribute", name);
  if (!known(type, "TYPE_")) return bad("attribute type", type);
  if (count < 1) return bad("element count", (int)count);
  return MOCK_OK;
}
static int m_get_attribute(void *desc, int name, int type, int64_t requested, int64_t *count,
                           void *elems) {
  ++calls;
  if (!known(name, "ATTR_")) return bad("attribute", name);
  if (!known(type, "TYPE_")) return bad("attribute type", type);
  const int64_t *v = cur->values;
  *count = 0;
  if (name == v[DNN_ATTR_ENGINEHEUR_RESULTS]) { /* one engine config */
    *count = 1;
  } else if (name == v[DNN_ATTR_ENGINECFG_ENGINE]) {
    *count = 1;
    if (requested >= 1) ((mock_desc *)desc)->linked = ((void **)elems)[0];
  } else if (name == v[DNN_ATTR_ENGINE_GLOBAL_INDEX] || name == v[DNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE]) {
    *count = 1;
    if (requested >= 1) *(int64_t *)elems = name == v[DNN_ATTR_ENGINE_GLOBAL_INDEX] ? 7 : 0;
  }
  return MOCK_OK;
}
static int m_execute(void *handle, void *plan, void *variant_pack) {
  (void)handle;
  ++calls;
  if (!plan || !variant_pack) return bad("execute without plan or pack", 0);
  return MOCK_OK;
}

static void mock_vendor(const dnn_table *t, dnn_vendor *vd) {
  memset(vd, 0, sizeof *vd);
  vd->name = t->vendor;
  vd->create_descriptor = m_create_descriptor;
  vd->destroy_descriptor = m_destroy_descriptor;
  vd->finalize = m_finalize;
  vd->set_attribute = m_set_attribute;
  vd->get_attribute = m_get_attribute;
  vd->execute = m_execute;
  dnn_mock_handle_calls(vd);
  memcpy(vd->v, t->values, sizeof vd->v);
  vd->not_supported_span = t->not_supported_span;
}

/* Builds, plans and runs one convolution; 1 when it went through. A
 * transposed one (the data gradient of the same convolution: x and y
 * swap) goes through where the vendor has its names, else must be
 * NOT_SUPPORTED. */
static int run_conv(const dnn_vendor *vd, int nsp, int dtype, int fuse, int bias, int res,
                    op_act_kind act, int transpose) {
  dnn_conv c;
  memset(&c, 0, sizeof c);
  int rank = nsp + 2;
  int64_t xd[5] = {2, 8, 9, 9, 9}, wd[5] = {4, 8, 3, 3, 3}, yd[5] = {2, 4, 7, 7, 7};
  int64_t bd[5] = {1, 4, 1, 1, 1};
  dnn_tensor_packed(&c.x, 1, dtype, rank, transpose ? yd : xd);
  dnn_tensor_packed(&c.w, 2, dtype, rank, wd);
  dnn_tensor_packed(&c.y, 3, dtype, rank, transpose ? xd : yd);
  c.transpose = transpose;
  dnn_tensor_packed(&c.b, 4, dtype, rank, bd);
  dnn_tensor_packed(&c.r, 5, dtype, rank, yd);
  c.has_bias = bias;
  c.has_residual = res;
  c.act.kind = act;
  c.act.alpha = act == OP_ACT_CLIP ? 0.f : 0.1f;
  c.act.beta = 6.f;
  c.compute_dtype = HD_DT_F32;
  c.nspatial = nsp;
  for (int i = 0; i < 3; ++i) c.stride[i] = c.dilation[i] = 1;

  void *handle = NULL;
  vd->create(&handle);
  dnn_bag bag;
  dnn_bag_init(&bag, vd);
  void *g = NULL;
  hd_status *st = dnn_conv_graph(&bag, handle, &c, fuse, &g);
  dnn_plan p;
  memset(&p, 0, sizeof p);
  dnn_plan_opts o = {.fp32_graph = dtype == HD_DT_F32, .allow_tensor_core_fp32 = 0};
  int64_t uids[] = {1, 2, 3, 4, 5};
  o.nuids = 3;
  memcpy(o.uids, uids, sizeof(int64_t) * 3);
  if (fuse && bias) o.uids[o.nuids++] = 4;
  if (fuse && res) o.uids[o.nuids++] = 5;
  if (!st) st = dnn_plan_build(&bag, handle, g, &o, &p);
  else dnn_bag_free(&bag);
  void *ptrs[5] = {(void *)16, (void *)32, (void *)48, (void *)64, (void *)80};
  if (!st) st = dnn_plan_execute(&p, handle, ptrs, NULL, NULL);
  int ok = st == NULL;
  if (transpose && !dnn_has(vd, DNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR))
    CHECK(st && hd_status_code(st) == HD_ERR_NOT_SUPPORTED,
          "%s: transposed conv without the vendor's names: want NOT_SUPPORTED, got %s", vd->name,
          st ? hd_status_msg(st) : "success");
  else
    CHECK(ok, "%s: conv %dD dtype %d fuse %d bias %d res %d act %d transpose %d: %s", vd->name, nsp,
          dtype, fuse, bias, res, (int)act, transpose, st ? hd_status_msg(st) : "");
  hd_status_free(st);
  dnn_plan_free(&p);
  vd->destroy(handle);
  return ok;
}

/* The standalone pointwise, pool and reduce graphs (bench/dnn_ops.c's):
 * built, planned and run where the vendor has the names, NOT_SUPPORTED
 * (never an internal error) where it lacks them. Returns the graphs that
 * went through. */
static int run_other_graphs(const dnn_vendor *vd) {
  int64_t xd[4] = {2, 8, 9, 9}, cd[4] = {1, 8, 1, 1}, pd[4] = {2, 8, 5, 5}, rd[4] = {2, 8, 1, 1};
  dnn_tensor x, b, y, py, ry;
  dnn_tensor_packed(&x, 1, HD_DT_F32, 4, xd);
  dnn_tensor_packed(&b, 2, HD_DT_F32, 4, cd);
  dnn_tensor_packed(&y, 3, HD_DT_F32, 4, xd);
  dnn_tensor_packed(&py, 3, HD_DT_F32, 4, pd);
  dnn_tensor_packed(&ry, 3, HD_DT_F32, 4, rd);
  dnn_pool pool = {.x = x, .y = py, .is_max = 1, .nspatial = 2, .window = {3, 3},
                   .stride = {2, 2}, .pre_pad = {1, 1}, .post_pad = {1, 1}};
  op_act relu = {.kind = OP_ACT_RELU};
  int full = dnn_has(vd, DNN_BACKEND_RESAMPLE_DESCRIPTOR), ok = 0;
  for (int k = 0; k < 4; ++k) {
    void *handle = NULL, *g = NULL;
    vd->create(&handle);
    dnn_bag bag;
    dnn_bag_init(&bag, vd);
    hd_status *st = k == 0   ? dnn_pointwise_graph(&bag, handle, &x, &b, &y, DNN_POINTWISE_ADD,
                                                   &relu, &g)
                    : k == 1 ? dnn_pointwise_graph(&bag, handle, &x, &b, &y, DNN_POINTWISE_MUL,
                                                   NULL, &g)
                    : k == 2 ? dnn_pool_graph(&bag, handle, &pool, &g)
                             : dnn_reduce_graph(&bag, handle, &x, &ry, 1, &g);
    dnn_plan p;
    memset(&p, 0, sizeof p);
    dnn_plan_opts o = {.fp32_graph = 1, .nuids = 2, .uids = {1, 3}};
    if (k < 2) o.uids[o.nuids++] = 2;
    if (!st) st = dnn_plan_build(&bag, handle, g, &o, &p);
    else dnn_bag_free(&bag);
    void *ptrs[3] = {(void *)16, (void *)32, (void *)48};
    if (!st) st = dnn_plan_execute(&p, handle, ptrs, NULL, NULL);
    if (full || k == 0)
      CHECK(!st, "%s: graph %d: %s", vd->name, k, st ? hd_status_msg(st) : "");
    else
      CHECK(st && hd_status_code(st) == HD_ERR_NOT_SUPPORTED,
            "%s: graph %d without the vendor's names: want NOT_SUPPORTED, got %s", vd->name, k,
            st ? hd_status_msg(st) : "success");
    ok += st == NULL;
    hd_status_free(st);
    dnn_plan_free(&p);
    vd->destroy(handle);
  }
  return ok;
}

/* The SDPA graphs: form 0 the one operation (GQA-shaped: 8 heads over 2 KV
 * heads, Q read in place from a packed projection), form 1 with a key bias
 * ([B, 1, 1, L], broadcast by zero strides), the scale by value. Built,
 * planned and run where the vendor has the names, NOT_SUPPORTED where not;
 * 1 when it went through. */
static int run_sdpa(const dnn_vendor *vd, int form) {
  dnn_sdpa a;
  memset(&a, 0, sizeof a);
  int64_t qd[4] = {2, 8, 5, 64}, kd[4] = {2, form ? 8 : 2, 7, 64};
  dnn_tensor_packed(&a.q, 1, HD_DT_F16, 4, qd);
  const int64_t qst[4] = {5 * 3 * 512, 64, 3 * 512, 1}, keys_st[4] = {7, 0, 0, 1};
  memcpy(a.q.strides, qst, sizeof qst);
  dnn_tensor_packed(&a.k, 2, HD_DT_F16, 4, kd);
  dnn_tensor_packed(&a.v, 3, HD_DT_F16, 4, kd);
  dnn_tensor_packed(&a.o, 4, HD_DT_F16, 4, qd);
  a.scale_uid = 5;
  if (form) {
    const int64_t sd[4] = {2, 8, 5, 7};
    dnn_tensor_packed(&a.bias, 6, HD_DT_F16, 4, sd);
    memcpy(a.bias.strides, keys_st, sizeof keys_st);
    a.has_bias = 1;
  }
  void *handle = NULL, *g = NULL;
  vd->create(&handle);
  dnn_bag bag;
  dnn_bag_init(&bag, vd);
  hd_status *st = dnn_sdpa_graph(&bag, handle, &a, &g);
  dnn_plan p;
  memset(&p, 0, sizeof p);
  dnn_plan_opts o = {.nuids = form ? 6 : 5, .uids = {1, 2, 3, 4, 5, 6}};
  if (!st) st = dnn_plan_build(&bag, handle, g, &o, &p);
  else dnn_bag_free(&bag);
  float scale = 0.125f;
  void *ptrs[6] = {(void *)16, (void *)32, (void *)48, (void *)64, &scale, (void *)80};
  if (!st) st = dnn_plan_execute(&p, handle, ptrs, NULL, NULL);
  if (dnn_has(vd, form ? DNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR : DNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR))
    CHECK(!st, "%s: SDPA graph %d: %s", vd->name, form, st ? hd_status_msg(st) : "");
  else
    CHECK(st && hd_status_code(st) == HD_ERR_NOT_SUPPORTED,
          "%s: SDPA graph %d without the vendor's names: want NOT_SUPPORTED, got %s", vd->name, form,
          st ? hd_status_msg(st) : "success");
  int ok = st == NULL;
  hd_status_free(st);
  dnn_plan_free(&p);
  vd->destroy(handle);
  return ok;
}

static void check_builder(const dnn_table *t) {
  dnn_vendor vd;
  cur = t;
  bad_calls = calls = 0;
  mock_vendor(t, &vd);
  const op_act_kind acts[] = {OP_ACT_NONE, OP_ACT_RELU, OP_ACT_LEAKY_RELU, OP_ACT_CLIP,
                              OP_ACT_SIGMOID, OP_ACT_TANH};
  int n = 0, ok = 0;
  for (int nsp = 2; nsp <= 3; ++nsp)
    for (int dt = 0; dt < 2; ++dt)
      for (int fuse = 0; fuse <= 1; ++fuse)
        for (int bias = 0; bias <= 1; ++bias)
          for (int res = 0; res <= 1; ++res)
            for (size_t a = 0; a < sizeof acts / sizeof acts[0]; ++a, ++n)
              ok += run_conv(&vd, nsp, dt ? HD_DT_F16 : HD_DT_F32, fuse, bias, res, acts[a], 0);
  int transposed = 0;
  for (int nsp = 2; nsp <= 3; ++nsp)
    for (int dt = 0; dt < 2; ++dt) transposed += run_conv(&vd, nsp, dt ? HD_DT_F16 : HD_DT_F32, 0, 0, 0, OP_ACT_NONE, 1);
  int others = run_other_graphs(&vd);
  int sdpa = 0;
  for (int form = 0; form < 2; form++) sdpa += run_sdpa(&vd, form);
  CHECK(bad_calls == 0, "%s: %d calls with values not in the table", t->vendor, bad_calls);
  /* The statuses the builder classifies. */
  hd_status *s1 = dnn_status(&vd, (int)vd.v[DNN_STATUS_NOT_SUPPORTED], "x", __FILE__, __LINE__);
  CHECK(s1 && hd_status_code(s1) == HD_ERR_NOT_SUPPORTED, "%s: NOT_SUPPORTED status", t->vendor);
  hd_status_free(s1);
  hd_status *s2 = dnn_status(&vd, (int)(vd.v[DNN_STATUS_NOT_SUPPORTED] + t->not_supported_span),
                             "x", __FILE__, __LINE__);
  CHECK(s2 && hd_status_code(s2) == HD_ERR_BACKEND, "%s: the status after NOT_SUPPORTED's range",
        t->vendor);
  hd_status_free(s2);
  printf("%s: builder over a mock API: %d/%d convolutions built, planned and run, %d/4 transposed, "
         "%d/4 pointwise/pool/reduce graphs and %d/2 SDPA graphs (%d calls)\n",
         t->vendor, ok, n, transposed, others, sdpa, calls);
}

int main(void) {
  const dnn_table *tables[] = {
      &hip_hipdnn_table,
#ifdef HD_HAVE_CUDNN_TABLE
      &cu_cudnn_table,
#endif
  };
  size_t nt = sizeof tables / sizeof tables[0];
  for (size_t i = 0; i < nt; ++i) {
    check_data(tables[i]);
    check_builder(tables[i]);
  }
#ifndef HD_HAVE_CUDNN_TABLE
  printf("cuDNN table not built (no cudnn_backend.h at configure time): hipDNN checked alone\n");
#endif
  printf("%s\n", ut_failures ? "FAILED" : "PASS");
  return ut_failures ? 1 : 0;
}
