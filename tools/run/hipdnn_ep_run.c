/* hipdnn-ep-run: runs a model with HipDNNExecutionProvider and with ONNX
 * Runtime's CPU EP on the same seeded random inputs, and reports which EP ran
 * which nodes (and why the EP left each other node), how far the outputs
 * differ, and how fast each was (run_perf.c).
 *
 * Exit status: 0 = outputs match (PASS); 1 = mismatch (FAIL) or any other
 * error; 2 = the model file is missing or cannot be parsed. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/hd_dtype.h"
#include "tools/harness/harness.h"
#include "tools/run/run_perf.h"

#define MAX_IO 64
#define MAX_BATCHES 16
/* Input sets the --threads check cycles through (each run alone first). */
#define STRESS_CASES 16
#define MAX_OPTIONS 32

typedef struct opts {
  const char *model;   /* NULL = embedded default CNN */
  const char *backend; /* "auto" | "ref" */
  int iters;           /* timed runs (and --threads runs per thread) */
  int iters_set;       /* --iters given: with --duration, whichever ends first */
  int warmup;
  double duration_s;   /* 0: time --iters runs */
  int io_binding;      /* inputs and outputs in the device's memory */
  int noptions;        /* --option KEY=VALUE, passed to the EP as given */
  struct {
    char key[64];
    char val[256];
  } options[MAX_OPTIONS];
  int64_t batch;       /* the first of batches */
  int64_t batches[MAX_BATCHES];
  int nbatches;
  int threads;         /* 0: no concurrency check */
  int compare;         /* compare against the CPU EP */
  const char *json;
  const char *profile; /* --profile FILE: ORT's profile of one run, our steps in it */
  uint64_t seed;
  int tf32;            /* -1 = EP default */
  const char *precision; /* --precision: provider option precision, or NULL */
  int64_t seq;         /* every symbolic dim but the first */
  int64_t int_max;     /* integer inputs (ids) in [0, int_max) */
  int nshapes;         /* --shape NAME=D0,D1,...: fixed shapes of named inputs */
  struct {
    char name[128];
    int rank;
    int64_t dims[HH_MAX_RANK];
  } shapes[MAX_IO];
} opts;

static void usage(FILE *f) {
  fprintf(f,
          "usage: hipdnn-ep-run [MODEL.onnx] [--backend ref|auto] [--batch N[,N...]]\n"
          "                     [--warmup N] [--iters N] [--duration SECONDS] [--io-binding]\n"
          "                     [--option KEY=VALUE]... [--tf32 0|1] [--precision fp32|fp16|bf16]\n"
          "                     [--threads N]\n"
          "                     [--compare cpu|none] [--json FILE] [--seed N] [--seq N]\n"
          "                     [--shape NAME=D0,D1,...] [--int-max N] [--profile FILE]\n"
          "Runs MODEL (default: a small built-in CNN) with HipDNNExecutionProvider and\n"
          "with the CPU EP on seeded random inputs; prints node placement per EP and the\n"
          "number of partitions, why the EP left each other node (node, op, where it\n"
          "runs, the EP's reason; also nodes the EP claimed that ONNX Runtime put\n"
          "elsewhere), the max abs/rel error against the CPU EP (PASS/FAIL) at each\n"
          "batch, and latency and throughput. A float output whose CPU EP values are all\n"
          "equal carries no signal to compare: FAIL.\n"
          "\n"
          "  --backend ref|auto   the device: auto (default) = the GPU if one is listed,\n"
          "                       else the CPU reference backend; ref = that backend\n"
          "  --batch N[,N...]     batch sizes to check (the first one is timed; default 1)\n"
          "  --warmup N           untimed runs before timing (default 2)\n"
          "  --iters N            timed runs (default 20; given with --duration, a cap)\n"
          "  --duration SECONDS   time runs until SECONDS have passed (at least one run)\n"
          "  --io-binding         inputs and outputs of the EP's runs live in its device's\n"
          "                       memory, bound through an IoBinding (allocated by the\n"
          "                       session's allocator of the device's memory info; the\n"
          "                       reference backend's device computes in CPU memory);\n"
          "                       outputs are copied back only to be compared\n"
          "  --option KEY=VALUE   a provider option for the EP, as given (repeatable; see\n"
          "                       README 'Provider options'; an unknown key fails with the\n"
          "                       EP's message); it overrides the tool's own backend=ref\n"
          "                       and --tf32 / --precision\n"
          "  --tf32 0|1           provider option use_tf32 (GPU fp32 math on TF32 cores)\n"
          "  --precision P        provider option precision: an fp32 model computed in fp16\n"
          "                       or bf16 inside the EP's partitions (fp32 at their inputs\n"
          "                       and outputs); its float outputs are then judged by their\n"
          "                       relative L2 error against the CPU EP's fp32 result:\n"
          "                       at most 1e-2 for fp16, 5e-2 for bf16 (README 'Precision')\n"
          "  --threads N          then runs one session from N threads, --iters runs each,\n"
          "                       over %d inputs of the --batch sizes (host tensors), and\n"
          "                       checks every output against the same input run alone:\n"
          "                       prints 'concurrency: N threads x M runs: W wrong, E\n"
          "                       errors' and throughput; any wrong output or error fails\n"
          "  --compare cpu|none   compare with (and time) the CPU EP (default cpu)\n"
          "  --json FILE          every figure as JSON: placement, the nodes off the EP\n"
          "                       and why, errors, latency min/mean/p50/p90/p99/max and\n"
          "                       throughput per EP, provider options, IO binding\n"
          "  --seed N             input data seed (default 1234)\n"
          "  --seq N              every symbolic dim but the first (default 8)\n"
          "  --shape NAME=D0,...  a named input's shape (repeatable)\n"
          "  --int-max N          token ids in [0, N) (default 16)\n"
          "  --profile FILE       keep the profile of the memory run below (Chrome trace\n"
          "                       JSON: ORT's events and each step of our partitions)\n"
          "\n"
          "Inputs: a symbolic first dim is the batch, other symbolic dims --seq. Integer\n"
          "inputs: names with 'mask' get ones, 'type' or 'segment' 0/1, 'position' 0, 1,\n"
          "2, ... along the last dim, others (token ids) values in [0, --int-max).\n"
          "Timing: --warmup runs, then --iters runs or runs for --duration seconds; the\n"
          "CPU EP is timed the same way. Percentiles are nearest-rank; runs/s counts\n"
          "inferences, samples/s multiplies by the batch. Runs past a few seconds show a\n"
          "progress line on stderr (rewritten in place on a terminal).\n"
          "Last, one more run under ONNX Runtime's run profiling gives the EP's memory\n"
          "figures (the 'memory:' line, and --json's 'memory').\n"
          "Exit: 0 PASS, 1 FAIL or any error, 2 the model is missing or unparsable.\n"
          "env: HIPDNN_EP_LIB (EP library), HIPDNN_EP_ORT_LIB (libonnxruntime.so),\n"
          "     HH_ORT_LOG_LEVEL 0-4 (ONNX Runtime's log on stderr; default 2, warnings)\n",
          STRESS_CASES);
}

static int parse_int(const char *s, long long lo, long long hi, long long *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || !end || *end || end == s || v < lo || v > hi) return 1;
  *out = v;
  return 0;
}

static int parse_args(int argc, char **argv, opts *o) {
  memset(o, 0, sizeof *o);
  o->backend = "auto";
  o->iters = 20;
  o->warmup = 2;
  o->batch = 1;
  o->batches[0] = 1;
  o->nbatches = 1;
  o->compare = 1;
  o->seed = 1234;
  o->tf32 = -1;
  o->seq = 8;
  o->int_max = 16;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
    long long n = 0;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      exit(0);
    } else if (strcmp(a, "--io-binding") == 0) {
      o->io_binding = 1;
      continue;
    } else if (a[0] != '-' || strcmp(a, "-") == 0) {
      if (o->model) {
        fprintf(stderr, "hipdnn-ep-run: more than one model given ('%s', '%s')\n", o->model, a);
        return 1;
      }
      o->model = a;
      continue;
    } else if (!v) {
      fprintf(stderr, "hipdnn-ep-run: %s needs a value (see --help)\n", a);
      return 1;
    } else if (strcmp(a, "--backend") == 0) {
      if (strcmp(v, "ref") && strcmp(v, "auto")) {
        fprintf(stderr, "hipdnn-ep-run: --backend must be ref or auto, not '%s'\n", v);
        return 1;
      }
      o->backend = v;
    } else if (strcmp(a, "--iters") == 0) {
      if (parse_int(v, 1, 1000000, &n)) {
        fprintf(stderr, "hipdnn-ep-run: --iters wants a positive integer, not '%s'\n", v);
        return 1;
      }
      o->iters = (int)n;
      o->iters_set = 1;
    } else if (strcmp(a, "--warmup") == 0) {
      if (parse_int(v, 0, 1000000, &n)) {
        fprintf(stderr, "hipdnn-ep-run: --warmup wants a non-negative integer, not '%s'\n", v);
        return 1;
      }
      o->warmup = (int)n;
    } else if (strcmp(a, "--duration") == 0) {
      char *end = NULL;
      errno = 0;
      double d = strtod(v, &end);
      if (errno || !end || *end || end == v || !(d > 0) || d > 1e6) {
        fprintf(stderr, "hipdnn-ep-run: --duration wants a positive number of seconds, not '%s'\n", v);
        return 1;
      }
      o->duration_s = d;
    } else if (strcmp(a, "--option") == 0) {
      const char *eq = strchr(v, '=');
      if (!eq || eq == v || (size_t)(eq - v) >= sizeof o->options[0].key ||
          strlen(eq + 1) >= sizeof o->options[0].val || o->noptions == MAX_OPTIONS) {
        fprintf(stderr, "hipdnn-ep-run: --option wants KEY=VALUE (at most %d of them), not '%s'\n", MAX_OPTIONS, v);
        return 1;
      }
      int k = o->noptions;
      for (int j = 0; j < o->noptions; j++) /* the last of a key wins */
        if (strncmp(o->options[j].key, v, (size_t)(eq - v)) == 0 && !o->options[j].key[eq - v]) k = j;
      if (k == o->noptions) o->noptions++;
      snprintf(o->options[k].key, sizeof o->options[k].key, "%.*s", (int)(eq - v), v);
      snprintf(o->options[k].val, sizeof o->options[k].val, "%s", eq + 1);
    } else if (strcmp(a, "--batch") == 0) {
      o->nbatches = 0;
      char buf[256];
      snprintf(buf, sizeof buf, "%s", v);
      for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->nbatches == MAX_BATCHES || parse_int(tok, 1, 1 << 20, &n)) {
          fprintf(stderr, "hipdnn-ep-run: --batch wants up to %d positive integers separated by commas, not '%s'\n",
                  MAX_BATCHES, v);
          return 1;
        }
        o->batches[o->nbatches++] = n;
      }
      if (!o->nbatches) {
        fprintf(stderr, "hipdnn-ep-run: --batch needs a value\n");
        return 1;
      }
      o->batch = o->batches[0];
    } else if (strcmp(a, "--threads") == 0) {
      if (parse_int(v, 1, 1024, &n)) {
        fprintf(stderr, "hipdnn-ep-run: --threads wants an integer from 1 to 1024, not '%s'\n", v);
        return 1;
      }
      o->threads = (int)n;
    } else if (strcmp(a, "--compare") == 0) {
      if (strcmp(v, "cpu") && strcmp(v, "none")) {
        fprintf(stderr, "hipdnn-ep-run: --compare must be cpu or none, not '%s'\n", v);
        return 1;
      }
      o->compare = strcmp(v, "cpu") == 0;
    } else if (strcmp(a, "--json") == 0) {
      o->json = v;
    } else if (strcmp(a, "--profile") == 0) {
      o->profile = v;
    } else if (strcmp(a, "--seed") == 0) {
      if (parse_int(v, 0, 0x7fffffffffffffffLL, &n)) {
        fprintf(stderr, "hipdnn-ep-run: --seed wants a non-negative integer, not '%s'\n", v);
        return 1;
      }
      o->seed = (uint64_t)n;
    } else if (strcmp(a, "--seq") == 0 || strcmp(a, "--int-max") == 0) {
      if (parse_int(v, 1, 1 << 24, &n)) {
        fprintf(stderr, "hipdnn-ep-run: %s wants an integer from 1 to %d, not '%s'\n", a, 1 << 24, v);
        return 1;
      }
      if (a[2] == 's') o->seq = n;
      else o->int_max = n;
    } else if (strcmp(a, "--shape") == 0) {
      const char *eq = strchr(v, '=');
      if (!eq || eq == v || (size_t)(eq - v) >= sizeof o->shapes[0].name || o->nshapes == MAX_IO) {
        fprintf(stderr, "hipdnn-ep-run: --shape wants NAME=D0,D1,... not '%s'\n", v);
        return 1;
      }
      int k = o->nshapes++;
      snprintf(o->shapes[k].name, sizeof o->shapes[k].name, "%.*s", (int)(eq - v), v);
      char buf[256];
      snprintf(buf, sizeof buf, "%s", eq + 1);
      o->shapes[k].rank = 0;
      for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->shapes[k].rank == HH_MAX_RANK || parse_int(tok, 0, 1LL << 40, &n)) {
          fprintf(stderr, "hipdnn-ep-run: --shape %s: dims must be up to %d non-negative integers\n", v, HH_MAX_RANK);
          return 1;
        }
        o->shapes[k].dims[o->shapes[k].rank++] = n;
      }
    } else if (strcmp(a, "--precision") == 0) {
      if (strcmp(v, "fp32") && strcmp(v, "fp16") && strcmp(v, "bf16")) {
        fprintf(stderr, "hipdnn-ep-run: --precision must be fp32, fp16 or bf16, not '%s'\n", v);
        return 1;
      }
      o->precision = v;
    } else if (strcmp(a, "--tf32") == 0) {
      if (strcmp(v, "0") && strcmp(v, "1")) {
        fprintf(stderr, "hipdnn-ep-run: --tf32 must be 0 or 1, not '%s'\n", v);
        return 1;
      }
      o->tf32 = v[0] - '0';
    } else {
      fprintf(stderr, "hipdnn-ep-run: unknown option '%s' (see --help)\n", a);
      return 1;
    }
    i++;
  }
  return 0;
}

/* ---- the embedded model ---------------------------------------------------- */

typedef struct layer {
  const char *name;
  int64_t cout, k, stride, group;
  int64_t pads[4]; /* top, left, bottom, right */
  const char *auto_pad;
  int bias;
} layer;

/* Each Conv feeds the next; input [N, 3, 32, 32] with a symbolic batch. */
static const layer k_layers[] = {
    {"conv7x7_s2_asym", 16, 7, 2, 1, {3, 3, 2, 2}, NULL, 1},
    {"dw3x3", 16, 3, 1, 16, {1, 1, 1, 1}, NULL, 1},
    {"pw1x1_nobias", 32, 1, 1, 1, {0, 0, 0, 0}, NULL, 0},
    {"g4_5x5_s2_asym", 32, 5, 2, 4, {2, 2, 1, 1}, NULL, 1},
    {"conv3x3_s2_same", 64, 3, 2, 1, {0, 0, 0, 0}, "SAME_UPPER", 1},
    {"head1x1", 10, 1, 1, 1, {0, 0, 0, 0}, NULL, 1},
};

static int build_default_model(hh_ort *h, uint64_t seed, hh_model **out) {
  hh_model *m = hh_model_new(h);
  int64_t c = 3;
  char prev[80] = "input";
  int64_t xd[4] = {-1, 3, 32, 32};
  size_t nl = sizeof k_layers / sizeof k_layers[0];
  *out = NULL;
  if (!m) return 1;
  if (hh_model_input(m, "input", HD_DT_F32, 4, xd)) goto fail;
  for (size_t i = 0; i < nl; i++) {
    const layer *L = &k_layers[i];
    char wn[80], bn[80], yn[80];
    int64_t wd[4] = {L->cout, c / L->group, L->k, L->k};
    hh_tensor w, b;
    snprintf(wn, sizeof wn, "%s.W", L->name);
    snprintf(bn, sizeof bn, "%s.B", L->name);
    snprintf(yn, sizeof yn, i + 1 == nl ? "output" : "%s.Y", L->name);
    if (hh_tensor_alloc(&w, HD_DT_F32, 4, wd)) goto fail;
    hh_tensor_fill_random(&w, seed + 100 * i + 1);
    /* Scale by sqrt(3 / fan_in) so activations keep unit variance through
     * the chain instead of growing ~10x per layer. */
    double sc = sqrt(3.0 / (double)(wd[1] * L->k * L->k));
    for (size_t j = 0; j < w.n; j++) hh_tensor_set(&w, j, hh_tensor_get(&w, j) * sc);
    int rc = hh_model_initializer(m, wn, &w);
    hh_tensor_free(&w);
    if (rc) goto fail;
    if (L->bias) {
      int64_t bd[1] = {L->cout};
      if (hh_tensor_alloc(&b, HD_DT_F32, 1, bd)) goto fail;
      hh_tensor_fill_random(&b, seed + 100 * i + 2);
      rc = hh_model_initializer(m, bn, &b);
      hh_tensor_free(&b);
      if (rc) goto fail;
    }
    int64_t ks[2] = {L->k, L->k}, st[2] = {L->stride, L->stride};
    hh_attr at[5];
    size_t na = 0;
    at[na++] = hh_attr_ints("kernel_shape", ks, 2);
    at[na++] = hh_attr_ints("strides", st, 2);
    at[na++] = hh_attr_int("group", L->group);
    if (L->auto_pad)
      at[na++] = hh_attr_string("auto_pad", L->auto_pad);
    else
      at[na++] = hh_attr_ints("pads", L->pads, 4);
    const char *ins[3] = {prev, wn, bn};
    const char *outs[1] = {yn};
    if (hh_model_node(m, "Conv", "", L->name, ins, L->bias ? 3 : 2, outs, 1, at, na)) goto fail;
    snprintf(prev, sizeof prev, "%s", yn);
    c = L->cout;
  }
  {
    int64_t yd[4] = {-1, c, -1, -1};
    if (hh_model_output(m, "output", HD_DT_F32, 4, yd)) goto fail;
  }
  if (hh_model_finish(m, 17)) goto fail;
  *out = m;
  return 0;
fail:
  hh_model_free(m);
  return 1;
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

static void json_num(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, "%.6g", v);
  else
    fputs("null", f);
}

/* ---- --profile and the memory figures --------------------------------------- */

/* The EP's figures, from the hipdnn_ep_memory event it adds to ORT's profile. */
typedef struct mem_report {
  int known;
  char backend[16], memory[16], pool[16];
  double weights, run, plans, in_use, cached, peak, limit; /* bytes; < 0 unknown */
} mem_report;

/* The value of "key" in the one line of text at line (ORT writes an event
 * per line), as a number; -1 when absent. */
static double line_number(const char *line, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  const char *p = strstr(line, pat), *eol = strchr(line, '\n');
  if (!p || (eol && p > eol)) return -1;
  p += strlen(pat);
  while (*p == ' ' || *p == ':' || *p == '"') p++;
  char *end = NULL;
  double v = strtod(p, &end);
  return end == p ? -1 : v;
}

static void line_text(const char *line, const char *key, char *out, size_t cap) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  const char *p = strstr(line, pat), *eol = strchr(line, '\n');
  out[0] = '\0';
  if (!p || (eol && p > eol)) return;
  p += strlen(pat);
  while (*p == ' ' || *p == ':') p++;
  if (*p++ != '"') return;
  size_t n = 0;
  while (*p && *p != '"' && n + 1 < cap) out[n++] = *p++;
  out[n] = '\0';
}

static void parse_memory(const char *text, mem_report *m) {
  memset(m, 0, sizeof *m);
  const char *ev = strstr(text, "\"hipdnn_ep_memory\"");
  if (!ev) return;
  while (ev > text && ev[-1] != '\n') ev--;
  m->known = 1;
  line_text(ev, "backend", m->backend, sizeof m->backend);
  line_text(ev, "memory", m->memory, sizeof m->memory);
  line_text(ev, "pool", m->pool, sizeof m->pool);
  m->weights = line_number(ev, "weights_bytes");
  m->run = line_number(ev, "run_buffers_bytes");
  m->plans = line_number(ev, "plan_bytes");
  m->in_use = line_number(ev, "pool_in_use_bytes");
  m->cached = line_number(ev, "pool_cached_bytes");
  m->peak = line_number(ev, "pool_peak_bytes");
  m->limit = line_number(ev, "pool_limit_bytes");
}

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap) {
      char *b = realloc(buf, 2 * cap + 1);
      if (!b) free(buf);
      buf = b;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  return buf;
}

static int copy_file(const char *from, const char *to) {
  char *text = read_all(from);
  FILE *f = text ? fopen(to, "wb") : NULL;
  int bad = !f || fputs(text, f) < 0;
  if (f && fclose(f)) bad = 1;
  free(text);
  return bad;
}

/* One run of s with ORT's run profiling on (a temporary folder for its
 * file): reads the EP's memory figures from it, and keeps it as keep (when
 * given). Returns nonzero with a message in h when the run or the file fails. */
static int profile_run(hh_ort *h, OrtSession *s, const hh_io *in_io, const hh_tensor *ins, size_t n_in,
                       const hh_io *out_io, size_t n_out, const char *keep, mem_report *m) {
  const OrtApi *a = h->api;
  char dir[] = "/tmp/hipdnn-ep-run-XXXXXX", prefix[64], file[512] = "";
  OrtRunOptions *ro = NULL;
  OrtValue *in_vals[MAX_IO] = {0}, *out_vals[MAX_IO] = {0};
  const char *in_names[MAX_IO], *out_names[MAX_IO];
  int rc = 1;
  memset(m, 0, sizeof *m);
  if (!mkdtemp(dir)) return hh_fail(h, "cannot make a folder for the profile: %s", strerror(errno));
  snprintf(prefix, sizeof prefix, "%s/run", dir);
  if (hh_check(h, a->CreateRunOptions(&ro), "CreateRunOptions") ||
      hh_check(h, a->RunOptionsEnableProfiling(ro, prefix), "RunOptionsEnableProfiling"))
    goto done;
  for (size_t i = 0; i < n_in; i++) {
    in_names[i] = in_io[i].name;
    if (hh_tensor_to_value(h, &ins[i], &in_vals[i])) goto done;
  }
  for (size_t i = 0; i < n_out; i++) out_names[i] = out_io[i].name;
  if (hh_check(h, a->Run(s, ro, in_names, (const OrtValue *const *)in_vals, n_in, out_names, n_out, out_vals),
               "the profiled run"))
    goto done;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));)
    if (strstr(e->d_name, ".json")) snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
  if (d) closedir(d);
  char *text = file[0] ? read_all(file) : NULL;
  if (!text) {
    hh_fail(h, "ONNX Runtime wrote no profile under %s", dir);
    goto done;
  }
  parse_memory(text, m);
  free(text);
  if (keep && rename(file, keep) != 0 && copy_file(file, keep)) {
    hh_fail(h, "cannot write the profile to '%s': %s", keep, strerror(errno));
    goto done;
  }
  rc = 0;
done:
  for (size_t i = 0; i < MAX_IO; i++) {
    if (in_vals[i]) a->ReleaseValue(in_vals[i]);
    if (out_vals[i]) a->ReleaseValue(out_vals[i]);
  }
  if (ro) a->ReleaseRunOptions(ro);
  if (file[0]) unlink(file);
  rmdir(dir);
  return rc;
}

/* "memory: ..." (MiB), saying which memory and which pool it is. */
static void print_memory(const mem_report *m, FILE *f) {
  const double mib = 1024.0 * 1024.0;
  if (!m->known) {
    fprintf(f, "memory: not reported by the EP\n");
    return;
  }
  int host = strcmp(m->memory, "host") == 0;
  fprintf(f, "%s: weights %.2f MiB, run buffers %.2f MiB", host ? "host memory (reference backend)"
                                                             : "device memory", m->weights / mib,
          (m->run + (m->plans > 0 ? m->plans : 0)) / mib);
  if (m->in_use >= 0)
    fprintf(f, ", pool in use %.2f MiB, peak %.2f MiB", m->in_use / mib, m->peak / mib);
  if (host)
    fprintf(f, " (the pool holds the run buffers; the weights are the model's constants, read in place)\n");
  else
    fprintf(f, " (%s pool: weights, run buffers and ONNX Runtime's tensors on the GPU)\n",
            strcmp(m->pool, "session") == 0 ? "the session's own" : "the process-wide");
}

static void json_memory(FILE *f, const mem_report *m) {
  if (!m->known) {
    fputs("null", f);
    return;
  }
  fputs("{\"backend\": ", f);
  json_str(f, m->backend);
  fputs(", \"memory\": ", f);
  json_str(f, m->memory);
  fputs(", \"pool\": ", f);
  json_str(f, m->pool);
  const char *keys[] = {"weights_bytes", "run_buffers_bytes", "plan_bytes", "pool_in_use_bytes",
                        "pool_cached_bytes", "pool_peak_bytes", "pool_limit_bytes"};
  const double vals[] = {m->weights, m->run, m->plans, m->in_use, m->cached, m->peak, m->limit};
  for (int i = 0; i < 7; i++) {
    fprintf(f, ", \"%s\": ", keys[i]);
    if (vals[i] >= 0) fprintf(f, "%.0f", vals[i]);
    else fputs("null", f);
  }
  fputc('}', f);
}

/* ---- main ------------------------------------------------------------------ */

typedef struct result {
  hh_target target;
  hh_assign assign;
  size_t n_out;
  hh_io outs[MAX_IO];
  hh_cmp cmp[MAX_IO];
  hh_tol tol;
  int compared, pass;
  double rel_l2_limit; /* > 0: fp32 outputs judged by relative L2 (precision fp16 / bf16) */
  run_perf p_ep, p_cpu;
  const char *opt_keys[MAX_OPTIONS + 3], *opt_vals[MAX_OPTIONS + 3]; /* as passed to the EP */
  size_t n_opts;
  hh_offloads offloads; /* nodes not on the EP, and why */
  int offloads_ok;      /* the EP's reasons were collected */
  hh_binding bind;      /* --io-binding */
  hh_stress_result stress;
  int stress_ok;
  mem_report mem;
} result;

/* ---- inputs ---------------------------------------------------------------- */

static int name_has(const char *name, const char *word) {
  for (const char *p = name; *p; p++)
    if (strncasecmp(p, word, strlen(word)) == 0) return 1;
  return 0;
}

/* Integer (and bool) inputs get values a model expects, by name: attention
 * masks all ones, token type ids 0/1, position ids 0, 1, 2, ..., anything
 * else (token ids) uniform in [0, int_max). */
static void fill_integers(hh_tensor *t, const char *name, const opts *o, uint64_t seed) {
  int64_t last = t->rank ? t->dims[t->rank - 1] : 1;
  uint64_t r = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t e = 0; e < t->n; e++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    double v;
    if (name_has(name, "mask") || t->dtype == HD_DT_BOOL) v = 1;
    else if (name_has(name, "type") || name_has(name, "segment")) v = (double)((r >> 33) & 1);
    else if (name_has(name, "position")) v = (double)((int64_t)e % (last > 0 ? last : 1));
    else v = (double)((r >> 33) % (uint64_t)o->int_max);
    hh_tensor_set(t, e, v);
  }
}

/* Seeded inputs at the model's shapes (see usage). */
static int make_inputs(const hh_io *io, size_t n_in, int64_t batch, const opts *o, uint64_t seed, hh_tensor *ins) {
  for (size_t i = 0; i < n_in; i++) {
    int64_t d[HH_MAX_RANK];
    int rank = io[i].rank;
    for (int k = 0; k < rank; k++) d[k] = io[i].dims[k] >= 0 ? io[i].dims[k] : (k == 0 ? batch : o->seq);
    for (int s = 0; s < o->nshapes; s++)
      if (strcmp(o->shapes[s].name, io[i].name) == 0) {
        rank = o->shapes[s].rank;
        memcpy(d, o->shapes[s].dims, sizeof(int64_t) * (size_t)rank);
      }
    if (hh_tensor_alloc(&ins[i], io[i].dtype, rank, d)) {
      fprintf(stderr, "hipdnn-ep-run: input '%s' has unsupported type %s\n", io[i].name, hd_dtype_name(io[i].dtype));
      return 1;
    }
    int dt = io[i].dtype;
    if (dt == HD_DT_F32 || dt == HD_DT_F16 || dt == HD_DT_BF16 || dt == HD_DT_F64)
      hh_tensor_fill_random(&ins[i], seed + 7919 * (i + 1));
    else
      fill_integers(&ins[i], io[i].name, o, seed + 7919 * (i + 1));
  }
  return 0;
}

/* A float output whose reference values are all equal carries no signal
 * (a zero-initialised head): comparing it proves nothing. */
static int has_signal(const hh_tensor *ref) {
  int dt = ref->dtype;
  if (ref->n < 2 || !(dt == HD_DT_F32 || dt == HD_DT_F16 || dt == HD_DT_BF16 || dt == HD_DT_F64)) return 1;
  double first = hh_tensor_get(ref, 0);
  for (size_t e = 1; e < ref->n; e++)
    if (hh_tensor_get(ref, e) != first) return 1;
  return 0;
}

/* ---- --threads ------------------------------------------------------------- */

/* One session from o->threads threads over STRESS_CASES inputs (batches in
 * turn), each output against the same input run alone, before the threads.
 * Tolerance as a user would judge it: 1e-3 x (1 + max |output|). */
static int run_threads(hh_ort *h, OrtSession *s, const opts *o, const hh_io *io, size_t n_in, size_t n_out,
                       result *r) {
  static hh_case cases[STRESS_CASES];
  int rc = 1;
  double top = 0;
  if (n_in > HH_STRESS_MAX_IO || n_out > HH_STRESS_MAX_IO) {
    fprintf(stderr, "hipdnn-ep-run: --threads takes models of at most %d inputs and outputs\n", HH_STRESS_MAX_IO);
    return 1;
  }
  for (int c = 0; c < STRESS_CASES; c++) {
    hh_case *k = &cases[c];
    k->n_in = n_in;
    k->n_out = n_out;
    k->items = o->batches[c % o->nbatches];
    if (make_inputs(io, n_in, k->items, o, o->seed + 1000003ull * (uint64_t)(c + 1), k->in)) goto done;
    if (hh_case_reference(h, s, k)) {
      fprintf(stderr, "hipdnn-ep-run: --threads: the run alone: %s\n", hh_err(h));
      goto done;
    }
    for (size_t j = 0; j < n_out; j++)
      for (size_t e = 0; e < k->ref[j].n; e++) {
        double v = fabs(hh_tensor_get(&k->ref[j], e));
        if (v > top) top = v;
      }
  }
  hh_stress_cfg cfg = {.threads = o->threads, .iters = o->iters, .tol = {.atol = 1e-3 * (1.0 + top), .rtol = 0},
                       .timeout_s = 600};
  int bad = hh_stress_run(h, s, cases, STRESS_CASES, &cfg, &r->stress);
  hh_stress_print(&r->stress, o->threads, stdout);
  if (r->stress.hung) {
    fflush(stdout);
    _exit(1); /* the hung threads hold the session: nothing can be released */
  }
  r->stress_ok = !bad;
  rc = 0;
done:
  for (int c = 0; c < STRESS_CASES; c++) hh_case_free(&cases[c]);
  return rc;
}

/* The nodes not on the EP and why, as a JSON array. */
static void json_offloads(FILE *f, const hh_offloads *o) {
  fputc('[', f);
  for (size_t i = 0; i < o->n; i++) {
    const hh_offload *x = &o->rows[i];
    fputs(i ? ",\n    {\"node\": " : "\n    {\"node\": ", f);
    json_str(f, x->name);
    fputs(", \"op\": ", f);
    json_str(f, x->op);
    fputs(", \"domain\": ", f);
    json_str(f, x->domain);
    fputs(", \"ep\": ", f);
    if (x->ep[0]) json_str(f, x->ep);
    else fputs("null", f);
    fprintf(f, ", \"claimed\": %s, \"reason\": ", x->claimed ? "true" : "false");
    json_str(f, x->reason);
    fputc('}', f);
  }
  fputs(o->n ? "\n  ]" : "]", f);
}

static int write_json(const char *path, const opts *o, hh_ort *h, const result *r) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "hipdnn-ep-run: cannot write '%s': %s\n", path, strerror(errno));
    return 1;
  }
  fputs("{\n  \"model\": ", f);
  json_str(f, o->model ? o->model : "(built-in CNN)");
  fputs(",\n  \"ort_version\": ", f);
  json_str(f, hh_ort_version(h));
  fputs(",\n  \"backend\": ", f);
  json_str(f, r->target.backend);
  fprintf(f, ",\n  \"batch\": %lld,\n  \"seed\": %llu,\n  \"provider_options\": {", (long long)o->batch,
          (unsigned long long)o->seed);
  for (size_t i = 0; i < r->n_opts; i++) {
    if (i) fputs(", ", f);
    json_str(f, r->opt_keys[i]);
    fputs(": ", f);
    json_str(f, r->opt_vals[i]);
  }
  fputs("},\n  \"io_binding\": ", f);
  if (o->io_binding) {
    fputs("{\"memory\": ", f);
    json_str(f, r->bind.mem_name);
    fprintf(f, ", \"device_id\": %d, \"device_memory\": %s}", r->bind.mem_id, r->bind.on_device ? "true" : "false");
  } else {
    fputs("null", f);
  }
  fputs(",\n  \"assignment\": [", f);
  for (size_t i = 0; i < r->assign.n; i++) {
    fputs(i ? ",\n    {\"ep\": " : "\n    {\"ep\": ", f);
    json_str(f, r->assign.rows[i].ep);
    fputs(", \"op\": ", f);
    json_str(f, r->assign.rows[i].op);
    fprintf(f, ", \"count\": %d}", r->assign.rows[i].count);
  }
  fprintf(f, "\n  ],\n  \"nodes_on_ep\": %d,\n  \"partitions\": %d,\n  \"not_on_ep\": ",
          hh_assign_count(&r->assign, HH_EP_NAME, NULL), r->assign.ep_partitions);
  if (r->offloads_ok) json_offloads(f, &r->offloads);
  else fputs("null", f);
  fprintf(f, ",\n  \"claimed_but_elsewhere\": %zu,\n", r->offloads.n_claimed);
  if (r->compared) {
    fprintf(f, "  \"compare\": {\"against\": \"CPUExecutionProvider\", \"pass\": %s, \"atol\": ",
            r->pass ? "true" : "false");
    json_num(f, r->tol.atol);
    fputs(", \"rtol\": ", f);
    json_num(f, r->tol.rtol);
    fputs(", \"rel_l2_limit\": ", f);
    if (r->rel_l2_limit > 0) json_num(f, r->rel_l2_limit);
    else fputs("null", f);
    fputs(", \"outputs\": [", f);
    for (size_t i = 0; i < r->n_out; i++) {
      const hh_cmp *c = &r->cmp[i];
      fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
      json_str(f, r->outs[i].name);
      fprintf(f, ", \"pass\": %s, \"max_abs\": ", c->pass ? "true" : "false");
      json_num(f, c->max_abs);
      fputs(", \"max_rel\": ", f);
      json_num(f, c->max_rel);
      fputs(", \"rel_l2\": ", f);
      json_num(f, c->rel_l2);
      fprintf(f, ", \"bad\": %zu, \"worst_index\": %zu", c->n_bad, c->worst);
      if (c->why[0]) {
        fputs(", \"error\": ", f);
        json_str(f, c->why);
      }
      fputc('}', f);
    }
    fputs("\n  ]},\n", f);
  } else {
    fputs("  \"compare\": null,\n", f);
  }
  fputs("  \"duration_s\": ", f);
  json_num(f, o->duration_s);
  fputs(",\n  \"latency\": {\"ep\": ", f);
  run_perf_json(f, &r->p_ep);
  fputs(",\n              \"cpu\": ", f);
  if (r->compared)
    run_perf_json(f, &r->p_cpu);
  else
    fputs("null", f);
  fputs("}", f);
  if (o->threads) {
    const hh_stress_result *t = &r->stress;
    fprintf(f, ",\n  \"concurrency\": {\"threads\": %d, \"runs\": %ld, \"wrong\": %ld, \"errors\": %ld, \"seconds\": ",
            o->threads, t->runs, t->wrong, t->errors);
    json_num(f, t->seconds);
    fputc('}', f);
  }
  fputs(",\n  \"memory\": ", f);
  json_memory(f, &r->mem);
  fputs(",\n  \"profile\": ", f);
  if (o->profile) json_str(f, o->profile);
  else fputs("null", f);
  fputs("\n}\n", f);
  if (fclose(f)) {
    fprintf(stderr, "hipdnn-ep-run: cannot write '%s'\n", path);
    return 1;
  }
  return 0;
}

/* ---- the EP's session ---------------------------------------------------------- */

/* The provider options: backend=ref on the reference device, --tf32,
 * --precision, then every --option (which replaces the tool's own of the
 * same key). */
static void provider_options(const opts *o, result *r) {
  size_t n = 0;
  if (!r->target.is_gpu) r->opt_keys[n] = "backend", r->opt_vals[n++] = "ref";
  if (o->tf32 >= 0) r->opt_keys[n] = "use_tf32", r->opt_vals[n++] = o->tf32 ? "1" : "0";
  if (o->precision) r->opt_keys[n] = "precision", r->opt_vals[n++] = o->precision;
  for (int i = 0; i < o->noptions; i++) {
    size_t k = n;
    for (size_t j = 0; j < n; j++)
      if (strcmp(r->opt_keys[j], o->options[i].key) == 0) k = j;
    r->opt_keys[k] = o->options[i].key;
    r->opt_vals[k] = o->options[i].val;
    if (k == n) n++;
  }
  r->n_opts = n;
}

/* Whether fp32 results may carry TF32 rounding: on a GPU unless use_tf32
 * is 0. */
static int uses_tf32(const result *r) {
  if (!r->target.is_gpu) return 0;
  for (size_t i = 0; i < r->n_opts; i++)
    if (strcmp(r->opt_keys[i], "use_tf32") == 0) return strcmp(r->opt_vals[i], "0") != 0;
  return 1;
}

/* The largest relative L2 error an fp32 output may have against the CPU EP
 * when the EP computes it in half precision (provider option precision),
 * or 0 when it computes in fp32 (outputs are then judged element by
 * element). fp16 rounds to 11 significant bits (2^-11 relative); a random
 * network of tens of layers lands near 1e-3 (docs/user-guide.md,
 * "Precision"), and 1e-2 is the bar. bf16 rounds to 8 bits, 8x
 * coarser: 5e-2. A wrong kernel gives errors of order 1. */
static double half_rel_l2_limit(const result *r) {
  for (size_t i = 0; i < r->n_opts; i++) {
    if (strcmp(r->opt_keys[i], "precision") != 0) continue;
    if (strcmp(r->opt_vals[i], "fp16") == 0) return 1e-2;
    if (strcmp(r->opt_vals[i], "bf16") == 0) return 5e-2;
  }
  return 0;
}

/* Creates the EP's session while keeping what the EP logs, so that its
 * reason for each node it declines is known (hh_place.c). */
static int create_ep_session(hh_ort *h, const opts *o, const hh_model *model, result *r, OrtSession **s,
                             hh_claims *claims) {
  char *said = NULL;
  hh_session_cfg cfg = {.dev = r->target.dev, .keys = r->opt_keys, .vals = r->opt_vals, .n_opts = r->n_opts};
  if (hh_log_capture_begin(h)) return 1;
  int rc = hh_session_create(h, &cfg, hh_model_ort(model), o->model, s);
  if (rc) {
    char err[sizeof h->err]; /* the session's error, not the capture's */
    memcpy(err, h->err, sizeof err);
    if (!hh_log_capture_end(h, &said)) free(said);
    memcpy(h->err, err, sizeof err);
    return 1;
  }
  if (hh_log_capture_end(h, &said)) return 1;
  if (hh_claims_parse(said, claims)) rc = hh_fail(h, "out of host memory");
  free(said);
  return rc;
}

/* Prints (and keeps) the nodes ORT runs elsewhere than on the EP, with the
 * EP's reason for each. */
static int report_offloads(hh_ort *h, OrtSession *s, const hh_claims *claims, result *r) {
  hh_node_place *places = NULL;
  size_t n = 0;
  if (hh_node_places(h, s, &places, &n)) return 1;
  int rc = hh_offloads_make(places, n, claims, &r->offloads);
  free(places);
  if (rc) return hh_fail(h, "out of host memory");
  r->offloads_ok = 1;
  size_t gone = 0;
  for (size_t i = 0; i < r->offloads.n; i++) gone += !r->offloads.rows[i].ep[0];
  if (r->offloads.n == 0) {
    printf("every node on %s\n", HH_EP_NAME);
    return 0;
  }
  printf("nodes not on %s: %zu (why: the EP's own reason at GetCapability", HH_EP_NAME, r->offloads.n - gone);
  if (gone) printf("; %zu more it declined that ONNX Runtime then fused or removed", gone);
  printf(")\n");
  hh_offloads_print(&r->offloads, stdout, "  ");
  if (r->offloads.n_claimed)
    printf("  %zu node(s) claimed by %s but assigned elsewhere by ONNX Runtime\n", r->offloads.n_claimed, HH_EP_NAME);
  return 0;
}

/* One run of the EP's session on ins: through the IO binding (inputs
 * copied to the device, outputs copied back) or on host tensors. */
static int run_ep(hh_ort *h, OrtSession *s, const opts *o, result *r, const hh_tensor *ins, size_t n_in,
                  hh_tensor *outs, size_t n_out) {
  if (!o->io_binding) return hh_session_run(h, s, ins, n_in, outs, n_out);
  return hh_binding_set_inputs(h, s, &r->bind, ins, n_in) || hh_binding_run(h, s, &r->bind) ||
         hh_binding_outputs(h, &r->bind, outs, n_out);
}

/* Times s on ins (the EP's through its binding when bound = 1). */
static int time_session(hh_ort *h, OrtSession *s, const opts *o, result *r, int bound, const hh_tensor *ins,
                        size_t n_in, const char *label, run_perf *out) {
  run_perf_cfg cfg = {.warmup = o->warmup,
                      .iters = o->duration_s > 0 && !o->iters_set ? 0 : o->iters,
                      .duration_s = o->duration_s,
                      .batch = o->batch,
                      .label = label};
  if (bound) {
    run_bound rb = {.h = h, .s = s, .b = &r->bind};
    if (hh_binding_set_inputs(h, s, &r->bind, ins, n_in)) return 1;
    return run_perf_measure(&cfg, run_bound_once, &rb, out);
  }
  run_plain rp;
  int rc = run_plain_open(h, s, ins, n_in, &rp) || run_perf_measure(&cfg, run_plain_once, &rp, out);
  run_plain_close(&rp);
  return rc;
}

int main(int argc, char **argv) {
  opts o;
  hh_ort h;
  hh_model *model = NULL;
  OrtSession *s_ep = NULL, *s_cpu = NULL;
  hh_tensor ins[MAX_IO], outs_ep[MAX_IO], outs_cpu[MAX_IO];
  static hh_io in_io[MAX_IO];
  static result r;
  hh_claims claims = {0};
  size_t n_in = 0;
  int rc = 1;
  memset(ins, 0, sizeof ins);
  memset(outs_ep, 0, sizeof outs_ep);
  memset(outs_cpu, 0, sizeof outs_cpu);

  if (parse_args(argc, argv, &o)) return 1;
  if (o.model) {
    FILE *f = fopen(o.model, "rb");
    if (!f) {
      fprintf(stderr, "hipdnn-ep-run: cannot open model '%s': %s\n", o.model, strerror(errno));
      return 2;
    }
    fclose(f);
  }
  if (hh_ort_open(&h, NULL)) {
    fprintf(stderr, "hipdnn-ep-run: %s\n", hh_err(&h));
    return 1;
  }
  printf("ONNX Runtime %s (%s)\n", hh_ort_version(&h), h.ort_lib);

  /* The CPU session comes first: it tells a bad model file (exit 2) apart
   * from a problem of the EP. */
  hh_session_cfg cpu_cfg = {0};
  if (!o.model) {
    if (build_default_model(&h, o.seed, &model)) {
      fprintf(stderr, "hipdnn-ep-run: building the default model: %s\n", hh_err(&h));
      goto done;
    }
    printf("model: built-in CNN (%zu Conv layers, fp32, input [N,3,32,32])\n",
           sizeof k_layers / sizeof k_layers[0]);
  } else {
    printf("model: %s\n", o.model);
  }
  if (hh_session_create(&h, &cpu_cfg, hh_model_ort(model), o.model, &s_cpu)) {
    if (o.model) {
      fprintf(stderr, "hipdnn-ep-run: cannot load model '%s': %s\n", o.model, hh_err(&h));
      rc = 2;
    } else {
      fprintf(stderr, "hipdnn-ep-run: %s\n", hh_err(&h));
    }
    goto done;
  }

  if (hh_ep_register(&h, NULL)) {
    fprintf(stderr, "hipdnn-ep-run: %s\n", hh_err(&h));
    goto done;
  }
  {
    int pr = hh_target_pick(&h, o.backend, &r.target);
    if (pr) {
      fprintf(stderr, "hipdnn-ep-run: %s\n", hh_err(&h));
      goto done;
    }
  }
  if (!r.target.is_gpu && strcmp(o.backend, "auto") == 0)
    printf("no GPU device listed: using the reference CPU backend (provider option backend=ref)\n");
  printf("device: %s backend=%s\n", HH_EP_NAME, r.target.backend);
  provider_options(&o, &r);
  r.rel_l2_limit = half_rel_l2_limit(&r);
  printf("provider options:");
  for (size_t i = 0; i < r.n_opts; i++) printf(" %s=%s", r.opt_keys[i], r.opt_vals[i]);
  printf("%s\n", r.n_opts ? "" : " (none)");
  if (create_ep_session(&h, &o, model, &r, &s_ep, &claims)) {
    fprintf(stderr, "hipdnn-ep-run: %s\n", hh_err(&h));
    goto done;
  }
  if (hh_assignment(&h, s_ep, &r.assign)) {
    fprintf(stderr, "hipdnn-ep-run: %s\n", hh_err(&h));
    goto done;
  }
  printf("nodes per EP by op type:\n");
  hh_assign_print(&r.assign, stdout, "  ");
  printf("partitions on %s: %d\n", HH_EP_NAME, r.assign.ep_partitions);
  if (report_offloads(&h, s_ep, &claims, &r)) {
    fprintf(stderr, "hipdnn-ep-run: %s\n", hh_err(&h));
    goto done;
  }

  if (hh_session_inputs(&h, s_ep, in_io, MAX_IO, &n_in) || n_in > MAX_IO) {
    fprintf(stderr, "hipdnn-ep-run: %s\n", n_in > MAX_IO ? "too many inputs" : hh_err(&h));
    goto done;
  }
  if (hh_session_outputs(&h, s_ep, r.outs, MAX_IO, &r.n_out) || r.n_out > MAX_IO) {
    fprintf(stderr, "hipdnn-ep-run: %s\n", r.n_out > MAX_IO ? "too many outputs" : hh_err(&h));
    goto done;
  }
  if (o.io_binding) {
    if (hh_binding_create(&h, s_ep, r.target.dev, &r.bind)) {
      fprintf(stderr, "hipdnn-ep-run: --io-binding: %s\n", hh_err(&h));
      goto done;
    }
    if (r.bind.on_device)
      printf("io binding: inputs and outputs in %s memory (device %d) from the session's allocator\n",
             r.bind.mem_name, r.bind.mem_id);
    else
      printf("io binding: the device reports no device memory (it computes in host memory): inputs and outputs "
             "bound in %s memory from the session's allocator\n",
             r.bind.mem_name);
  }
  if (o.compare) {
    r.compared = 1;
    r.pass = 1;
  }
  /* Each batch: the EP against the CPU EP. The first batch's inputs stay in
   * ins[] for timing; its comparison goes to the report. */
  for (int bi = o.nbatches - 1; bi >= 0; bi--) {
    for (size_t i = 0; i < MAX_IO; i++) hh_tensor_free(&ins[i]), hh_tensor_free(&outs_ep[i]), hh_tensor_free(&outs_cpu[i]);
    if (make_inputs(in_io, n_in, o.batches[bi], &o, o.seed, ins)) goto done;
    if (run_ep(&h, s_ep, &o, &r, ins, n_in, outs_ep, r.n_out)) {
      fprintf(stderr, "hipdnn-ep-run: run with %s at batch %lld: %s\n", HH_EP_NAME, (long long)o.batches[bi],
              hh_err(&h));
      goto done;
    }
    if (!o.compare) continue;
    if (hh_session_run(&h, s_cpu, ins, n_in, outs_cpu, r.n_out)) {
      fprintf(stderr, "hipdnn-ep-run: run with the CPU EP: %s\n", hh_err(&h));
      goto done;
    }
    if (o.nbatches > 1) printf("outputs vs CPU EP, batch %lld:\n", (long long)o.batches[bi]);
    else printf("outputs vs CPU EP:\n");
    if (r.rel_l2_limit > 0)
      printf("  (half precision inside the EP: fp32 outputs pass at rel_l2 <= %g, all finite)\n", r.rel_l2_limit);
    for (size_t i = 0; i < r.n_out; i++) {
      /* GPU fp32 math uses TF32 unless told not to: judge it by TF32 bounds. */
      r.tol = hh_tol_for(outs_cpu[i].dtype, uses_tf32(&r));
      hh_compare(&outs_ep[i], &outs_cpu[i], r.tol, &r.cmp[i]);
      if (r.rel_l2_limit > 0 && outs_cpu[i].dtype == HD_DT_F32 && !r.cmp[i].why[0])
        r.cmp[i].pass = r.cmp[i].n_nonfinite_mismatch == 0 && r.cmp[i].rel_l2 <= r.rel_l2_limit;
      if (!has_signal(&outs_cpu[i])) {
        r.cmp[i].pass = 0;
        snprintf(r.cmp[i].why, sizeof r.cmp[i].why, "every CPU EP value is %g: no signal to compare",
                 hh_tensor_get(&outs_cpu[i], 0));
      }
      r.pass &= r.cmp[i].pass;
      printf("  %-24s ", r.outs[i].name);
      hh_cmp_print(&r.cmp[i], r.tol, stdout);
    }
  }
  fflush(stdout);
  if (time_session(&h, s_ep, &o, &r, o.io_binding, ins, n_in, HH_EP_NAME, &r.p_ep) ||
      (o.compare && time_session(&h, s_cpu, &o, &r, 0, ins, n_in, "CPUExecutionProvider", &r.p_cpu))) {
    fprintf(stderr, "hipdnn-ep-run: timing: %s\n", hh_err(&h));
    goto done;
  }
  printf("timing at batch %lld: %d warm-up run(s), then ", (long long)o.batch, o.warmup);
  if (o.duration_s > 0) printf("runs for %g s%s", o.duration_s, o.iters_set ? " (or --iters)" : "");
  else printf("%d runs", o.iters);
  printf("%s\n", o.io_binding ? "; the EP's through its IO binding" : "");
  run_perf_print_header(stdout);
  run_perf_print_row(stdout, HH_EP_NAME, &r.p_ep);
  if (o.compare) run_perf_print_row(stdout, "CPUExecutionProvider", &r.p_cpu);
  if (o.threads && run_threads(&h, s_ep, &o, in_io, n_in, r.n_out, &r)) goto done;
  if (profile_run(&h, s_ep, in_io, ins, n_in, r.outs, r.n_out, o.profile, &r.mem)) {
    fprintf(stderr, "hipdnn-ep-run: %s%s\n", o.profile ? "--profile: " : "memory figures: ", hh_err(&h));
    if (o.profile) goto done;
  }
  print_memory(&r.mem, stdout);
  if (o.profile) printf("profile: %s (one run, Chrome trace JSON)\n", o.profile);
  if (o.json && write_json(o.json, &o, &h, &r)) goto done;
  if (r.compared) printf("%s\n", r.pass ? "PASS" : "FAIL");
  rc = (!r.compared || r.pass) && (!o.threads || r.stress_ok) ? 0 : 1;

done:
  for (size_t i = 0; i < MAX_IO; i++) {
    hh_tensor_free(&ins[i]);
    hh_tensor_free(&outs_ep[i]);
    hh_tensor_free(&outs_cpu[i]);
  }
  hh_binding_free(&h, &r.bind);
  hh_claims_free(&claims);
  hh_offloads_free(&r.offloads);
  hh_assign_free(&r.assign);
  hh_session_free(&h, s_ep);
  hh_session_free(&h, s_cpu);
  hh_model_free(model);
  hh_ort_close(&h);
  return rc;
}
