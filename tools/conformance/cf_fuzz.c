/* cf_fuzz: mutants of the node-test cases, and how each one ends. */
#include "tools/conformance/cf_fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hd_dtype.h"
#include "onnx/onnx.pb-c.h"
#include "tools/conformance/cf_model.h"
#include "tools/conformance/cf_tensor.h"
#include "tools/harness/harness.h"

#define MAX_IO 64

/* ---- deterministic randomness ---- */

static uint64_t rnd(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static size_t pick(uint64_t *s, size_t n) { return n ? (size_t)(rnd(s) % n) : 0; }

/* Values that break size arithmetic, indexing and loops. */
static const int64_t nasty_ints[] = {0, -1, 1, 2, 3, 7, -2, 65536, (int64_t)1 << 30, ((int64_t)1 << 30) - 2,
                                     (int64_t)1 << 31, INT32_MAX, INT32_MIN, (int64_t)1 << 62, INT64_MAX,
                                     INT64_MIN};
static const float nasty_floats[] = {0.0f, -1.0f, 1e30f, -1e30f, 1e-30f, 0.5f, 1.0f / 0.0f, -1.0f / 0.0f};
static const char *const nasty_strings[] = {"", "SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET", "garbage",
                                            "tanh", "linear", "nearest"};

/* ---- files ---- */

static int spit(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return 1;
  int bad = len && fwrite(data, 1, len, f) != len;
  return fclose(f) || bad;
}

/* ---- mutations ---- */

typedef enum mut_kind {
  MUT_BITFLIP,     /* 1-8 bits of model.onnx flipped */
  MUT_TRUNCATE,    /* model.onnx cut short */
  MUT_ATTR,        /* one attribute set to an extreme or odd value */
  MUT_GRAPH_SHAPE, /* a graph input's declared dim changed */
  MUT_INITIALIZER, /* an initializer's dims disagree with its data */
  MUT_INPUT_SHAPE, /* an input tensor of another shape than the model's */
  MUT_COUNT
} mut_kind;

static const char *const mut_names[MUT_COUNT] = {"bitflip", "truncate", "attribute", "graph-shape",
                                                 "initializer", "input-shape"};

static int repack(Onnx__ModelProto *mp, unsigned char **out, size_t *len) {
  *len = onnx__model_proto__get_packed_size(mp);
  *out = malloc(*len ? *len : 1);
  if (!*out) return 1;
  onnx__model_proto__pack(mp, *out);
  return 0;
}

static int mutate_attr(Onnx__ModelProto *mp, uint64_t *s, char *desc, size_t dlen) {
  Onnx__GraphProto *g = mp->graph;
  size_t total = 0;
  for (size_t i = 0; i < g->n_node; i++) total += g->node[i]->n_attribute;
  if (!total) return 1;
  size_t k = pick(s, total), ni = 0;
  while (k >= g->node[ni]->n_attribute) k -= g->node[ni++]->n_attribute;
  Onnx__NodeProto *n = g->node[ni];
  Onnx__AttributeProto *a = n->attribute[k];
  switch (a->type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
      a->i = nasty_ints[pick(s, sizeof nasty_ints / sizeof *nasty_ints)];
      snprintf(desc, dlen, "%s.%s = %lld", n->op_type, a->name, (long long)a->i);
      return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
      a->f = nasty_floats[pick(s, sizeof nasty_floats / sizeof *nasty_floats)];
      snprintf(desc, dlen, "%s.%s = %g", n->op_type, a->name, a->f);
      return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
      if (a->n_ints && pick(s, 3)) {
        size_t e = pick(s, a->n_ints);
        a->ints[e] = nasty_ints[pick(s, sizeof nasty_ints / sizeof *nasty_ints)];
        snprintf(desc, dlen, "%s.%s[%zu] = %lld", n->op_type, a->name, e, (long long)a->ints[e]);
      } else {
        size_t want = pick(s, a->n_ints + 3);
        int64_t *v = calloc(want ? want : 1, sizeof *v);
        if (!v) return 1;
        for (size_t e = 0; e < want; e++) v[e] = e < a->n_ints ? a->ints[e] : 1 + (int64_t)pick(s, 3);
        free(a->ints);
        a->ints = v;
        a->n_ints = want;
        snprintf(desc, dlen, "%s.%s has %zu values", n->op_type, a->name, want);
      }
      return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
      if (!a->n_floats) return 1;
      a->floats[pick(s, a->n_floats)] = nasty_floats[pick(s, sizeof nasty_floats / sizeof *nasty_floats)];
      snprintf(desc, dlen, "%s.%s: one value extreme", n->op_type, a->name);
      return 0;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
      const char *v = nasty_strings[pick(s, sizeof nasty_strings / sizeof *nasty_strings)];
      uint8_t *d = (uint8_t *)strdup(v);
      if (!d) return 1;
      free(a->s.data);
      a->s.data = d;
      a->s.len = strlen(v);
      snprintf(desc, dlen, "%s.%s = \"%s\"", n->op_type, a->name, v);
      return 0;
    }
    default:
      return 1;
  }
}

static int mutate_graph_shape(Onnx__ModelProto *mp, uint64_t *s, char *desc, size_t dlen) {
  Onnx__GraphProto *g = mp->graph;
  if (!g->n_input) return 1;
  Onnx__ValueInfoProto *v = g->input[pick(s, g->n_input)];
  Onnx__TypeProto *t = v->type;
  if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type->shape ||
      !t->tensor_type->shape->n_dim)
    return 1;
  Onnx__TensorShapeProto *sh = t->tensor_type->shape;
  Onnx__TensorShapeProto__Dimension *d = sh->dim[pick(s, sh->n_dim)];
  static const int64_t vals[] = {0, 1, 2, 3, 7, 1 << 20};
  int64_t nv = vals[pick(s, sizeof vals / sizeof *vals)];
  if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) free(d->dim_param);
  d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  d->dim_value = nv;
  snprintf(desc, dlen, "graph input '%s' declares a dim of %lld", v->name, (long long)nv);
  return 0;
}

static int mutate_initializer(Onnx__ModelProto *mp, uint64_t *s, char *desc, size_t dlen) {
  Onnx__GraphProto *g = mp->graph;
  if (!g->n_initializer) return 1;
  Onnx__TensorProto *t = g->initializer[pick(s, g->n_initializer)];
  if (t->n_dims && pick(s, 2)) {
    size_t e = pick(s, t->n_dims);
    t->dims[e] = pick(s, 2) ? t->dims[e] + 1 : 0;
    snprintf(desc, dlen, "initializer '%s' dim %zu = %lld (data unchanged)", t->name, e, (long long)t->dims[e]);
  } else if (t->has_raw_data && t->raw_data.len) {
    t->raw_data.len /= 2;
    snprintf(desc, dlen, "initializer '%s' holds half its bytes", t->name);
  } else {
    return 1;
  }
  return 0;
}

/* A TensorProto file of the given type and dims with random contents. */
static int write_tensor(const char *path, int32_t dtype, size_t rank, const int64_t *dims, const char *name,
                        uint64_t *s) {
  cf_tensor t;
  if (cf_tensor_alloc(&t, dtype, rank, dims)) return 1;
  unsigned char *b = t.data;
  for (size_t i = 0; i < t.nbytes; i++) b[i] = (unsigned char)rnd(s);
  if (dtype == CF_FLOAT) /* keep floats finite and small */
    for (size_t i = 0; i < t.count; i++) ((float *)t.data)[i] = (float)((double)(rnd(s) % 2001) / 1000.0 - 1.0);
  if (dtype == CF_BOOL)
    for (size_t i = 0; i < t.count; i++) b[i] &= 1;
  Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
  tp.n_dims = rank;
  tp.dims = (int64_t *)dims;
  tp.has_data_type = 1;
  tp.data_type = dtype;
  tp.name = (char *)name;
  tp.has_raw_data = 1;
  tp.raw_data.len = t.nbytes;
  tp.raw_data.data = t.data;
  size_t len = onnx__tensor_proto__get_packed_size(&tp);
  unsigned char *buf = malloc(len ? len : 1);
  int rc = !buf;
  if (buf) {
    onnx__tensor_proto__pack(&tp, buf);
    rc = spit(path, buf, len);
  }
  free(buf);
  cf_tensor_free(&t);
  return rc;
}

static int mutate_input(const char *src, const char *dst, uint64_t *s, char *desc, size_t dlen) {
  char path[4400], err[256];
  size_t n = 0;
  for (;; n++) {
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", src, n);
    struct stat st;
    if (stat(path, &st)) break;
  }
  if (!n) return 1;
  size_t k = pick(s, n);
  snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", src, k);
  cf_tensor t;
  if (cf_tensor_read(path, &t, err, sizeof err)) return 1;
  int64_t dims[8];
  size_t rank = t.rank < 8 ? t.rank : 8;
  if (rank) memcpy(dims, t.dims, rank * sizeof *dims);
  int how = (int)pick(s, 3);
  if (how == 0 && rank < 8) { /* one more leading dim */
    memmove(dims + 1, dims, rank * sizeof *dims);
    dims[0] = 1 + (int64_t)pick(s, 2);
    rank++;
  } else if (how == 1 && rank) { /* one dim fewer */
    rank--;
  } else if (rank) { /* one dim 0, 1 or grown */
    size_t e = pick(s, rank);
    static const int64_t vals[] = {0, 1, 2};
    dims[e] = pick(s, 2) ? vals[pick(s, 3)] : dims[e] + 1 + (int64_t)pick(s, 3);
  }
  size_t count = 1;
  for (size_t i = 0; i < rank; i++) count *= (size_t)(dims[i] < 0 ? 0 : dims[i]);
  int rc = 1;
  if (count <= ((size_t)1 << 24)) {
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dst, k);
    rc = write_tensor(path, t.dtype, rank, dims, t.name, s);
    snprintf(desc, dlen, "input %zu given with rank %zu (was %zu)", k, rank, t.rank);
  }
  cf_tensor_free(&t);
  return rc;
}

static int copy_inputs(const char *src, const char *dst) {
  char from[4400], to[4400];
  for (size_t k = 0;; k++) {
    snprintf(from, sizeof from, "%s/test_data_set_0/input_%zu.pb", src, k);
    size_t len = 0;
    unsigned char *b = cf_slurp(from, &len);
    if (!b) return 0;
    snprintf(to, sizeof to, "%s/test_data_set_0/input_%zu.pb", dst, k);
    int rc = spit(to, b, len);
    free(b);
    if (rc) return 1;
  }
}

/* One mutant of case folder src into dst; desc says what changed. */
static int make_mutant(const char *src, const char *dst, mut_kind kind, uint64_t *s, char *desc, size_t dlen) {
  char path[4400];
  snprintf(path, sizeof path, "%s/test_data_set_0", dst);
  if (mkdir(dst, 0755) || mkdir(path, 0755)) return 1;
  if (copy_inputs(src, dst)) return 1;
  snprintf(path, sizeof path, "%s/model.onnx", src);
  size_t len = 0;
  unsigned char *model = cf_slurp(path, &len);
  if (!model || len < 2) {
    free(model);
    return 1;
  }
  unsigned char *out = NULL;
  size_t olen = 0;
  int rc = 0;
  if (kind == MUT_INPUT_SHAPE && mutate_input(src, dst, s, desc, dlen)) kind = MUT_BITFLIP;
  if (kind == MUT_ATTR || kind == MUT_GRAPH_SHAPE || kind == MUT_INITIALIZER) {
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, model);
    int bad = !mp || !mp->graph;
    if (!bad) {
      bad = kind == MUT_ATTR          ? mutate_attr(mp, s, desc, dlen)
            : kind == MUT_GRAPH_SHAPE ? mutate_graph_shape(mp, s, desc, dlen)
                                      : mutate_initializer(mp, s, desc, dlen);
    }
    if (!bad) bad = repack(mp, &out, &olen);
    if (mp) onnx__model_proto__free_unpacked(mp, NULL);
    if (bad) kind = MUT_BITFLIP; /* nothing of that kind to mutate */
  }
  if (kind == MUT_BITFLIP) {
    int flips = 1 + (int)pick(s, 8);
    for (int i = 0; i < flips; i++) model[pick(s, len)] ^= (unsigned char)(1u << pick(s, 8));
    snprintf(desc, dlen, "%d bit(s) of model.onnx flipped", flips);
  } else if (kind == MUT_TRUNCATE) {
    len = 1 + pick(s, len - 1);
    snprintf(desc, dlen, "model.onnx cut to %zu bytes", len);
  }
  snprintf(path, sizeof path, "%s/model.onnx", dst);
  rc = out ? spit(path, out, olen) : spit(path, model, len);
  free(out);
  free(model);
  return rc;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int list_cases(const char *dir, const char *filter, char ***names, size_t *n) {
  DIR *d = opendir(dir);
  if (!d) return 1;
  regex_t re;
  if (filter && regcomp(&re, filter, REG_EXTENDED | REG_NOSUB)) {
    closedir(d);
    return 1;
  }
  size_t cap = 0;
  *names = NULL;
  *n = 0;
  struct dirent *e;
  char path[4400];
  int rc = 0;
  while ((e = readdir(d)) && !rc) {
    struct stat st;
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name);
    if (e->d_name[0] == '.' || stat(path, &st)) continue;
    if (filter && regexec(&re, e->d_name, 0, NULL, 0)) continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 256;
      char **nn = realloc(*names, cap * sizeof *nn);
      if (!nn) rc = 1;
      else *names = nn;
    }
    if (!rc && !((*names)[(*n)++] = strdup(e->d_name))) rc = 1;
  }
  closedir(d);
  if (filter) regfree(&re);
  if (!rc) qsort(*names, *n, sizeof **names, cmp_name);
  return rc;
}

int cf_fuzz_make(const char *cases_dir, const char *filter, const char *out_dir, int n, uint64_t seed) {
  char **names = NULL;
  size_t ncase = 0;
  if (list_cases(cases_dir, filter, &names, &ncase) || !ncase) {
    fprintf(stderr, "hipdnn-ep-conformance: --fuzz: no case in %s%s%s\n", cases_dir, filter ? " matching " : "",
            filter ? filter : "");
    free(names);
    return 1;
  }
  uint64_t s = seed;
  int rc = 0;
  for (int i = 0; i < n && !rc; i++) {
    const char *c = names[pick(&s, ncase)];
    mut_kind kind = (mut_kind)pick(&s, MUT_COUNT);
    char src[4200], dst[4200], desc[512] = "";
    snprintf(src, sizeof src, "%s/%s", cases_dir, c);
    snprintf(dst, sizeof dst, "%s/fuzz%05d_%s_%s", out_dir, i, mut_names[kind], c);
    rc = make_mutant(src, dst, kind, &s, desc, sizeof desc);
    if (!rc) {
      char path[4400];
      snprintf(path, sizeof path, "%s/mutation.txt", dst);
      char line[1200];
      int m = snprintf(line, sizeof line, "%s of %s: %s\n", mut_names[kind], c, desc);
      rc = spit(path, line, (size_t)m);
    }
    if (rc) fprintf(stderr, "hipdnn-ep-conformance: --fuzz: writing %s: %s\n", dst, strerror(errno));
  }
  for (size_t i = 0; i < ncase; i++) free(names[i]);
  free(names);
  return rc;
}

/* ---- the child ---- */

static void tag(cf_result *r, int status, const char *t, const char *msg) {
  r->status = status;
  snprintf(r->detail, sizeof r->detail, "[%s] %.900s", t, msg ? msg : "");
}

/* The CPU EP alone on the mutant: 0 when it creates a session and runs. */
static int cpu_runs(hh_ort *h, const char *model, const hh_tensor *in, size_t n_in) {
  static hh_tensor out[MAX_IO];
  static hh_io ios[MAX_IO];
  hh_session_cfg cpu = {.intra_threads = 1};
  OrtSession *s = NULL;
  size_t n_out = 0;
  if (hh_session_create(h, &cpu, NULL, model, &s)) return 1;
  int rc = hh_session_outputs(h, s, ios, MAX_IO, &n_out) || n_out > MAX_IO ||
           hh_session_run(h, s, in, n_in, out, n_out);
  hh_session_free(h, s);
  if (!rc)
    for (size_t k = 0; k < n_out; k++) hh_tensor_free(&out[k]);
  return rc;
}

/* Our EP refused the mutant: was it ORT refusing it anyway, or our EP
 * failing a model the CPU EP runs ("claimed, then failed")? */
static void ep_refused(hh_ort *h, const char *model, const hh_tensor *in, size_t n_in, const char *stage,
                       cf_result *r) {
  char msg[900], t[32];
  snprintf(msg, sizeof msg, "%s", hh_err(h));
  snprintf(t, sizeof t, cpu_runs(h, model, in, n_in) ? "rejected" : "%s-only", stage);
  tag(r, CF_ORT_ERROR, t, msg);
}

void cf_fuzz_case(const cf_config *cfg, const char *dir, const char *name, cf_result *r) {
  (void)name;
  static hh_tensor in[MAX_IO], out[MAX_IO], ref[MAX_IO];
  static hh_ort h;
  static hh_io ios[MAX_IO];
  char model[4200], msg[800];
  size_t n_in = 0, n_out = 0;
  memset(r, 0, sizeof *r);
  r->ep_nodes = -1;
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  if (cf_read_set(dir, "input", in, MAX_IO, &n_in, msg, sizeof msg)) {
    tag(r, CF_UNSUPPORTED, "inputs", msg);
    return;
  }
  hh_target t;
  if (!strcmp(cfg->backend, "cpu")) { /* attribution of a crash: the CPU EP alone */
    if (hh_ort_open(&h, cfg->ort_lib)) tag(r, CF_CRASH, "setup", hh_err(&h));
    else tag(r, CF_PASS, cpu_runs(&h, model, in, n_in) ? "rejected" : "cpu-runs", NULL);
    goto out;
  }
  if (hh_ort_open(&h, cfg->ort_lib) || hh_ep_register(&h, cfg->ep_lib) || hh_target_pick(&h, cfg->backend, &t)) {
    tag(r, CF_CRASH, "setup", hh_err(&h)); /* never a pass */
    goto out;
  }
  snprintf(r->device, sizeof r->device, "%s", t.backend);
  const char *keys[] = {"backend", "use_tf32"}, *vals[] = {t.backend, "0"};
  hh_session_cfg sc = {.dev = t.dev, .keys = keys, .vals = vals, .n_opts = t.is_gpu ? 2 : 1, .intra_threads = 1};
  OrtSession *s = NULL;
  if (hh_session_create(&h, &sc, NULL, model, &s)) {
    ep_refused(&h, model, in, n_in, "ep-session", r);
    goto out;
  }
  hh_assign a;
  if (!hh_assignment(&h, s, &a)) {
    r->ep_nodes = hh_assign_count(&a, HH_EP_NAME, NULL);
    hh_assign_free(&a);
  }
  if (r->ep_nodes == 0) {
    tag(r, CF_NOT_CLAIMED, "not-claimed", NULL);
    hh_session_free(&h, s);
    goto out;
  }
  if (hh_session_outputs(&h, s, ios, MAX_IO, &n_out) || n_out > MAX_IO) {
    tag(r, CF_ORT_ERROR, "ep-session", hh_err(&h));
    hh_session_free(&h, s);
    goto out;
  }
  int rc = hh_session_run(&h, s, in, n_in, out, n_out);
  hh_session_free(&h, s);
  if (rc) {
    ep_refused(&h, model, in, n_in, "ep-run", r);
    goto out;
  }
  /* It ran: the CPU EP alone must give the same answer. */
  hh_session_cfg cpu = {.intra_threads = 1};
  if (hh_session_create(&h, &cpu, NULL, model, &s)) {
    tag(r, CF_PASS, "cpu-refuses", hh_err(&h));
  } else {
    rc = hh_session_run(&h, s, in, n_in, ref, n_out);
    hh_session_free(&h, s);
    if (rc) {
      tag(r, CF_PASS, "cpu-refuses", hh_err(&h));
    } else {
      tag(r, CF_PASS, "same", NULL);
      for (size_t k = 0; k < n_out && r->status == CF_PASS; k++) {
        hh_cmp cmp;
        hh_tol tol = hh_tol_for(ref[k].dtype, 0);
        if (!hh_compare(&out[k], &ref[k], tol, &cmp)) {
          snprintf(msg, sizeof msg, "output %zu: %zu of %zu elements differ from the CPU EP's (max abs %.3g)%s%s", k,
                   cmp.n_bad + cmp.n_nonfinite_mismatch, cmp.n, cmp.max_abs, cmp.why[0] ? ": " : "", cmp.why);
          tag(r, CF_FAIL, "differs", msg);
        }
      }
      for (size_t k = 0; k < n_out; k++) hh_tensor_free(&ref[k]);
    }
  }
  for (size_t k = 0; k < n_out; k++) hh_tensor_free(&out[k]);
out:
  for (size_t k = 0; k < n_in; k++) hh_tensor_free(&in[k]);
  hh_ort_close(&h);
}

/* ---- the report ---- */

static int own_count(const cf_run *run, const int *own, int status) {
  int n = 0;
  for (size_t i = 0; i < run->n; i++) n += own[i] && run->cases[i].r.status == status;
  return n;
}

static void read_mutation(const char *dir, const char *name, char *buf, size_t len) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s/mutation.txt", dir, name);
  size_t n = 0;
  unsigned char *b = cf_slurp(path, &n);
  snprintf(buf, len, "%.*s", b ? (int)n : 0, b ? (const char *)b : "");
  char *nl = strchr(buf, '\n');
  if (nl) *nl = 0;
  free(b);
}

int cf_fuzz_report(FILE *f, const cf_run *run, const char *dir, const int *ort_own) {
  static const char *const tags[] = {"rejected", "ep-session-only", "ep-run-only", "same", "cpu-refuses",
                                     "differs", "not-claimed"};
  enum { NTAG = sizeof tags / sizeof *tags };
  int counts[CF_N_STATUS] = {0}, tcount[NTAG] = {0}, failed = 0, own = 0;
  for (size_t i = 0; i < run->n; i++) {
    const cf_case_rec *c = &run->cases[i];
    counts[c->r.status]++;
    for (int k = 0; k < NTAG; k++) {
      char t[32];
      snprintf(t, sizeof t, "[%s]", tags[k]);
      if (!strncmp(c->r.detail, t, strlen(t))) tcount[k]++;
    }
    char m[600];
    if (cf_failed(c->r.status) && ort_own && ort_own[i]) {
      own++;
      read_mutation(dir, c->name, m, sizeof m);
      fprintf(f, "ONNX Runtime itself %s on %s (%s), with or without our EP\n",
              c->r.status == CF_TIMEOUT ? "hangs" : "crashes", c->name, m);
      continue;
    }
    if (!cf_failed(c->r.status)) continue;
    failed++;
    read_mutation(dir, c->name, m, sizeof m);
    fprintf(f, "FUZZ %s %s (%s): %.400s\n", cf_status_name(c->r.status), c->name, m, c->r.detail);
  }
  fprintf(f, "fuzz: %zu mutants (backend %s on %s, ORT %s, %.1f s)\n", run->n, run->backend, run->device,
          run->ort_version, run->wall_s);
  fprintf(f, "  clean errors: %d (ONNX Runtime refuses it with or without our EP: %d; our EP's session "
             "refused a model the CPU EP runs: %d; our EP's run did: %d)\n",
          counts[CF_ORT_ERROR], tcount[0], tcount[1], tcount[2]);
  fprintf(f, "  ran: %d (same answer as the CPU EP: %d; the CPU EP refuses it at run time: %d); not claimed: %d; "
             "unreadable inputs: %d\n",
          counts[CF_PASS], tcount[3], tcount[4], counts[CF_NOT_CLAIMED], counts[CF_UNSUPPORTED]);
  fprintf(f, "  crashes: %d, hangs: %d, wrong answers: %d (ours; ONNX Runtime's own crashes and hangs: %d)\n",
          counts[CF_CRASH] - (ort_own ? own_count(run, ort_own, CF_CRASH) : 0),
          counts[CF_TIMEOUT] - (ort_own ? own_count(run, ort_own, CF_TIMEOUT) : 0), counts[CF_FAIL], own);
  return failed;
}
