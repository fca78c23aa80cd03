/* test_genai_contract: our EP called the way onnxruntime-genai's AMD GPU path
 * calls its backend (../shared/GENAI-AND-UMBRELLA.md, issue 18):
 *  - the library registered as "AMDGPUExecutionProvider", and every device
 *    of that EP name handed to each session;
 *  - an init session on a one-node model (a Constant: the EP may claim
 *    nothing), kept open, whose allocator is found by a memory info built as
 *    GenAI builds it ("Hip", the device id of the first device's memory info;
 *    the vendor is our device's, which on AMD is exactly GenAI's);
 *  - GenAI's config entries (model_arch under our prefix, profile, other
 *    EPs' ep.migraphx.* / ep.directml.* entries);
 *  - the KV cache allocated from the init session's allocator, zeroed by an
 *    environment CopyTensors with no stream, bound through IoBinding as both
 *    past_key_values.N.* and present.N.* of a second session;
 *  - decode inputs written by the CPU into pinned memory from ORT's shared
 *    allocator for the device's HOST_ACCESSIBLE memory info, logits copied
 *    back with an environment CopyTensors and no stream;
 *  - a prefill and --steps greedy steps whose tokens must equal the CPU EP's
 *    running the same loop in host memory;
 *  - --generators N: N decodes of one session at once, each on its own
 *    thread with its own KV cache (GenAI's generators share a model's
 *    session), prompts 8 tokens apart so their masks' widths differ: every
 *    step's logits must equal (rel L2 <= 1e-5) and every token be the
 *    same as that decode run alone.
 * On a machine without a GPU the name offers the CPU (reference backend):
 * device memory is host memory there, and the GPU-only parts say SKIP.
 *
 *   test_genai_contract --model DIR [--prompt 12] [--steps 20] [--generators N] */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tests/hh_test.h"
#include "tests/llm_model.h"

#define GENAI_EP "AMDGPUExecutionProvider"
#define GC_MAX_DEVICES 8
#define GC_MAX_STEPS 256
#define GC_MAX_GENERATORS 8
#define GC_PROMPT_APART 8 /* tokens between the generators' prompts */

static int failures;

/* Where a decode keeps its tensors: device memory + pinned inputs (GPU), or
 * host memory for both (CPU EP, or our CPU device). */
typedef struct gc_mem {
  OrtAllocator *device; /* KV cache and logits */
  OrtAllocator *inputs; /* input_ids and attention_mask, written by the CPU */
  int on_gpu;
} gc_mem;

typedef struct gc_decode {
  int64_t tokens[GC_MAX_STEPS + 1];
  double min_spread; /* the smallest max-min of a logits row: they must carry signal */
  float *logits;     /* NULL, or room for each step's last logits row ([steps + 1][vocab]) */
} gc_decode;

static int gc_fail(hh_ort *h, const char *what) {
  fprintf(stderr, "FAIL: %s: %s\n", what, hh_err(h));
  failures++;
  return 1;
}

/* Every OrtEpDevice of the EP name, as GenAI collects them. */
static size_t genai_devices(hh_ort *h, const OrtEpDevice **out, size_t max) {
  const OrtEpDevice *const *all = NULL;
  size_t n = 0, found = 0;
  if (hh_check(h, h->api->GetEpDevices(h->env, &all, &n), "GetEpDevices")) return 0;
  for (size_t i = 0; i < n && found < max; i++)
    if (strcmp(h->api->EpDevice_EpName(all[i]), GENAI_EP) == 0) out[found++] = all[i];
  return found;
}

/* Session options as GenAI's AMD GPU path sets them; every device given. */
static int genai_session(hh_ort *h, const OrtEpDevice *const *devs, size_t ndev, int with_config,
                         const OrtModel *model, const char *path, OrtSession **out) {
  const OrtApi *a = h->api;
  OrtSessionOptions *so = NULL;
  static const char *const cfg[][2] = {
      {"ep.migraphx.static_pad_seq", "1"},      {"ep.migraphx.hip_graph_enable", "1"},
      {"ep.directml.enable_host_accessible", "1"}, {"session.record_ep_graph_assignment_info", "1"},
  };
  const char *keys[2] = {"model_arch", "profile"}, *vals[2] = {"llama", "hip"};
  int rc = hh_check(h, a->CreateSessionOptions(&so), "CreateSessionOptions");
  for (size_t i = 0; i < sizeof cfg / sizeof cfg[0] && !rc && with_config; i++)
    rc = hh_check(h, a->AddSessionConfigEntry(so, cfg[i][0], cfg[i][1]), "AddSessionConfigEntry");
  if (!rc)
    rc = hh_check(h, a->SessionOptionsAppendExecutionProvider_V2(so, h->env, devs, ndev, keys, vals,
                                                                 with_config ? 2 : 0),
                  "SessionOptionsAppendExecutionProvider_V2");
  if (!rc)
    rc = model ? hh_check(h, h->ed->CreateSessionFromModel(h->env, model, so, out), "CreateSession(init model)")
               : hh_check(h, a->CreateSession(h->env, path, so, out), "CreateSession(decoder)");
  if (so) a->ReleaseSessionOptions(so);
  return rc;
}

/* GenAI's init model: one Constant, output "values" float[1]. */
static int init_model(hh_ort *h, hh_model **out) {
  hh_model *m = hh_model_new(h);
  static const float zero[1] = {0};
  hh_attr value = {.name = "value_floats", .kind = HH_ATTR_FLOATS, .floats = zero, .n = 1};
  const char *outs[1] = {"values"};
  int64_t dims[1] = {1};
  if (!m || hh_model_node(m, "Constant", "", "constant", NULL, 0, outs, 1, &value, 1) ||
      hh_model_output(m, "values", HD_DT_F32, 1, dims) || hh_model_finish(m, 21)) {
    hh_model_free(m);
    return 1;
  }
  *out = m;
  return 0;
}

static int new_tensor(hh_ort *h, OrtAllocator *al, int dtype, const int64_t *dims, size_t rank, OrtValue **out,
                      void **data) {
  *out = NULL;
  if (hh_check(h, h->api->CreateTensorAsOrtValue(al, dims, rank, (ONNXTensorElementDataType)dtype, out),
               "CreateTensorAsOrtValue"))
    return 1;
  return data ? hh_check(h, h->api->GetTensorMutableData(*out, data), "GetTensorMutableData") : 0;
}

/* A host OrtValue over t's storage, copied from or to a device value with
 * the environment's CopyTensors and no stream (complete on return). */
static int env_copy(hh_ort *h, OrtValue *src, OrtValue *dst) {
  return hh_check(h, h->api->CopyTensors(h->env, (const OrtValue *const *)&src, &dst, NULL, 1), "CopyTensors");
}

/* KV buffers [1, kv_heads, max_length, head_size], zeroed as GenAI does:
 * on a GPU by copying a host zero buffer in. */
static int kv_alloc(hh_ort *h, const lm_model *m, const gc_mem *mem, OrtValue **kv) {
  int64_t dims[4] = {1, m->kv_heads, m->max_length, m->head_size};
  size_t bytes = (size_t)(m->kv_heads * m->max_length * m->head_size) * hd_dtype_size(m->dtype);
  for (int i = 0; i < 2 * m->layers; i++) {
    void *p = NULL;
    if (new_tensor(h, mem->device, m->dtype, dims, 4, &kv[i], mem->on_gpu ? NULL : &p)) return 1;
    if (!mem->on_gpu) {
      memset(p, 0, bytes);
      continue;
    }
    hh_tensor zero;
    OrtValue *zv = NULL;
    int rc = hh_tensor_alloc(&zero, m->dtype, 4, dims) || hh_tensor_to_value(h, &zero, &zv) || env_copy(h, zv, kv[i]);
    if (zv) h->api->ReleaseValue(zv);
    hh_tensor_free(&zero);
    if (rc) return 1;
  }
  return 0;
}

/* One run: ids (s tokens of seq from pos) with attention_mask ones over
 * total columns; the greedy token of the last position comes back. */
static int step(hh_ort *h, OrtSession *s, const lm_model *m, const gc_mem *mem, OrtValue **kv, const int64_t *seq,
                int64_t pos, int64_t n, int64_t total, int64_t *next, double *spread, float *row) {
  const OrtApi *a = h->api;
  OrtIoBinding *io = NULL;
  OrtValue *ids = NULL, *mask = NULL, *logits = NULL, *host_logits = NULL;
  hh_tensor lt = {0};
  int64_t ids_dims[2] = {1, n}, mask_dims[2] = {1, total}, logit_dims[3] = {1, n, m->vocab};
  int64_t *pi = NULL, *pm = NULL;
  int rc = new_tensor(h, mem->inputs, HD_DT_I64, ids_dims, 2, &ids, (void **)&pi) ||
           new_tensor(h, mem->inputs, HD_DT_I64, mask_dims, 2, &mask, (void **)&pm) ||
           new_tensor(h, mem->device, m->dtype, logit_dims, 3, &logits, NULL) ||
           hh_check(h, a->CreateIoBinding(s, &io), "CreateIoBinding");
  if (!rc) {
    for (int64_t j = 0; j < n; j++) pi[j] = seq[pos + j];
    for (int64_t j = 0; j < total; j++) pm[j] = 1;
    rc = hh_check(h, a->BindInput(io, "input_ids", ids), "BindInput(input_ids)") ||
         hh_check(h, a->BindInput(io, "attention_mask", mask), "BindInput(attention_mask)") ||
         hh_check(h, a->BindOutput(io, "logits", logits), "BindOutput(logits)");
  }
  for (int i = 0; i < 2 * m->layers && !rc; i++) {
    char past[64], present[64];
    snprintf(past, sizeof past, "past_key_values.%d.%s", i / 2, i % 2 ? "value" : "key");
    snprintf(present, sizeof present, "present.%d.%s", i / 2, i % 2 ? "value" : "key");
    /* past_present_share_buffer: one buffer, both names */
    rc = hh_check(h, a->BindInput(io, past, kv[i]), "BindInput(past)") ||
         hh_check(h, a->BindOutput(io, present, kv[i]), "BindOutput(present)");
  }
  if (!rc) rc = hh_check(h, a->RunWithBinding(s, NULL, io), "RunWithBinding");
  if (!rc && mem->on_gpu) {
    rc = hh_tensor_alloc(&lt, m->dtype, 3, logit_dims) || hh_tensor_to_value(h, &lt, &host_logits) ||
         env_copy(h, logits, host_logits);
  } else if (!rc) {
    rc = hh_value_to_tensor(h, logits, &lt);
  }
  if (!rc) {
    size_t off = (size_t)((n - 1) * m->vocab), best = 0;
    double hi = -INFINITY, lo = INFINITY;
    for (size_t v = 0; v < (size_t)m->vocab; v++) {
      double x = hh_tensor_get(&lt, off + v);
      if (row) row[v] = (float)x;
      if (x > hi) hi = x, best = v;
      if (x < lo) lo = x;
    }
    *next = (int64_t)best;
    *spread = hi - lo;
  }
  if (io) a->ReleaseIoBinding(io);
  if (host_logits) a->ReleaseValue(host_logits);
  hh_tensor_free(&lt);
  if (logits) a->ReleaseValue(logits);
  if (mask) a->ReleaseValue(mask);
  if (ids) a->ReleaseValue(ids);
  return rc;
}

/* A prefill of the prompt, then steps greedy tokens. */
static int decode(hh_ort *h, OrtSession *s, const lm_model *m, const gc_mem *mem, int64_t prompt, int steps,
                  gc_decode *out) {
  OrtValue *kv[2 * LM_MAX_LAYERS] = {0};
  int64_t seq[LM_MAX_LEN];
  for (int64_t j = 0; j < prompt; j++) seq[j] = lm_prompt_token(0, j, m->vocab);
  out->min_spread = INFINITY;
  int rc = kv_alloc(h, m, mem, kv);
  int64_t len = prompt;
  for (int k = 0; k <= steps && !rc; k++) {
    double spread = 0;
    int64_t pos = k == 0 ? 0 : len - 1, n = k == 0 ? prompt : 1;
    rc = step(h, s, m, mem, kv, seq, pos, n, len, &out->tokens[k], &spread,
              out->logits ? out->logits + (size_t)k * (size_t)m->vocab : NULL);
    if (rc) break;
    if (spread < out->min_spread) out->min_spread = spread;
    seq[len++] = out->tokens[k];
  }
  for (int i = 0; i < 2 * m->layers; i++)
    if (kv[i]) h->api->ReleaseValue(kv[i]);
  return rc;
}

/* ---- generators at once ---- */

typedef struct gc_gen {
  hh_ort h; /* a copy: its own error text */
  OrtSession *s;
  const lm_model *m;
  const gc_mem *mem;
  int64_t prompt;
  int steps, rc;
  gc_decode alone, together;
} gc_gen;

static void *gen_thread(void *arg) {
  gc_gen *g = arg;
  g->rc = decode(&g->h, g->s, g->m, g->mem, g->prompt, g->steps, &g->together);
  return NULL;
}

static double rel_l2(const float *a, const float *b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]), den += (double)b[i] * b[i];
  return sqrt(num) / (den > 0 ? sqrt(den) : 1);
}

/* n decodes of s at once, each against the same decode run alone first. */
static void generators(hh_ort *h, OrtSession *s, const lm_model *m, const gc_mem *mem, int64_t prompt, int steps,
                       int n) {
  gc_gen *gs = calloc((size_t)n, sizeof *gs);
  pthread_t th[GC_MAX_GENERATORS];
  size_t per = (size_t)(steps + 1) * (size_t)m->vocab;
  int started = 0, bad = 0, wrong = 0;
  HT_CHECK(gs != NULL, "out of host memory");
  for (int i = 0; gs && i < n && !bad; i++) {
    gc_gen *g = &gs[i];
    g->h = *h, g->s = s, g->m = m, g->mem = mem, g->prompt = prompt + GC_PROMPT_APART * i, g->steps = steps;
    g->alone.logits = malloc(per * sizeof(float));
    g->together.logits = malloc(per * sizeof(float));
    if (!g->alone.logits || !g->together.logits) bad = gc_fail(h, "out of host memory");
    else if (decode(h, s, m, mem, g->prompt, steps, &g->alone)) bad = gc_fail(h, "a generator's decode alone");
  }
  for (; !bad && started < n; started++)
    if (pthread_create(&th[started], NULL, gen_thread, &gs[started])) {
      bad = gc_fail(h, "pthread_create");
      break;
    }
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  double worst = 0;
  for (int i = 0; !bad && i < n; i++) {
    gc_gen *g = &gs[i];
    if (g->rc) {
      fprintf(stderr, "FAIL generator %d (prompt %lld): %s\n", i, (long long)g->prompt, hh_err(&g->h));
      wrong++;
      continue;
    }
    for (int k = 0; k <= steps; k++) {
      double r = rel_l2(g->together.logits + (size_t)k * m->vocab, g->alone.logits + (size_t)k * m->vocab,
                        (size_t)m->vocab);
      if (!(r <= worst)) worst = r;
      if (!(r <= 1e-5) || g->together.tokens[k] != g->alone.tokens[k]) {
        fprintf(stderr, "FAIL generator %d (prompt %lld) step %d: token %lld, %lld alone; logits rel L2 %.3g\n", i,
                (long long)g->prompt, k, (long long)g->together.tokens[k], (long long)g->alone.tokens[k], r);
        wrong++;
        break;
      }
    }
  }
  failures += wrong;
  if (!bad)
    printf("%d generators at once (prompts %lld..%lld, %d steps): %d as each alone, worst logits rel L2 %.3g\n", n,
           (long long)prompt, (long long)(prompt + GC_PROMPT_APART * (n - 1)), steps, n - wrong, worst);
  for (int i = 0; gs && i < n; i++) free(gs[i].alone.logits), free(gs[i].together.logits);
  free(gs);
}

/* The element type of the decoder's KV inputs, from a session. */
static int kv_dtype(hh_ort *h, OrtSession *s, lm_model *m) {
  hh_io ios[2 + 2 * LM_MAX_LAYERS];
  size_t n = 0;
  if (hh_session_inputs(h, s, ios, 2 + 2 * LM_MAX_LAYERS, &n)) return 1;
  m->dtype = 0;
  for (size_t i = 0; i < n && i < 2 + 2 * LM_MAX_LAYERS; i++)
    if (strncmp(ios[i].name, "past_key_values.", 16) == 0) m->dtype = ios[i].dtype;
  if (!m->dtype) return hh_fail(h, "the model has no past_key_values inputs: not a GenAI decoder with a KV cache");
  return 0;
}

/* GenAI's device memory for the KV cache: the init session's allocator for
 * the memory info it builds, and ORT's shared pinned allocator. */
static int device_memory(hh_ort *h, const OrtEpDevice *dev, OrtSession *init, OrtMemoryInfo **mi, gc_mem *mem) {
  const OrtApi *a = h->api;
  const OrtMemoryInfo *dev_mi = a->EpDevice_MemoryInfo(dev, OrtDeviceMemoryType_DEFAULT);
  const OrtMemoryInfo *pin_mi = a->EpDevice_MemoryInfo(dev, OrtDeviceMemoryType_HOST_ACCESSIBLE);
  int id = -1;
  uint32_t vendor = a->HardwareDevice_VendorId(a->EpDevice_Device(dev));
  if (hh_check(h, a->MemoryInfoGetId(dev_mi, &id), "MemoryInfoGetId")) return 1;
  /* GenAI: CreateMemoryInfo("Hip", OrtDeviceAllocator, id, OrtMemTypeDefault),
   * which ORT maps to an AMD GPU; with another vendor's GPU, the same fields
   * and that vendor. */
  OrtStatus *st = vendor == 0x1002
                      ? a->CreateMemoryInfo("Hip", OrtDeviceAllocator, id, OrtMemTypeDefault, mi)
                      : a->CreateMemoryInfo_V2("Hip", OrtMemoryInfoDeviceType_GPU, vendor, id,
                                               OrtDeviceMemoryType_DEFAULT, 0, OrtDeviceAllocator, mi);
  if (hh_check(h, st, "CreateMemoryInfo(Hip)") ||
      hh_check(h, a->CreateAllocator(init, *mi, &mem->device), "CreateAllocator(init session, Hip memory info)"))
    return 1;
  printf("allocator: GPU device id %d, vendor 0x%04x, from the init session\n", id, vendor);
  if (!pin_mi) return hh_fail(h, "the device lists no HOST_ACCESSIBLE memory info");
  if (hh_check(h, a->GetSharedAllocator(h->env, pin_mi, &mem->inputs), "GetSharedAllocator(HOST_ACCESSIBLE)"))
    return 1;
  if (!mem->inputs) return hh_fail(h, "no shared allocator for the HOST_ACCESSIBLE memory info");
  mem->on_gpu = 1;
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = NULL;
  int64_t prompt = 12;
  int steps = 20, ngen = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) dir = argv[++i];
    else if (strcmp(argv[i], "--prompt") == 0 && i + 1 < argc) prompt = atoll(argv[++i]);
    else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) steps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--generators") == 0 && i + 1 < argc) ngen = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s --model DIR [--prompt N] [--steps N] [--generators N]\n", argv[0]);
      return 2;
    }
  }
  if (!dir || prompt < 1 || steps < 1 || steps > GC_MAX_STEPS || ngen < 0 || ngen > GC_MAX_GENERATORS) {
    fprintf(stderr, "usage: %s --model DIR [--prompt N] [--steps 1..%d] [--generators 0..%d]\n", argv[0],
            GC_MAX_STEPS, GC_MAX_GENERATORS);
    return 2;
  }
  lm_model m;
  int rc = lm_model_open(dir, &m);
  if (rc) return rc;
  if (!m.has_cache || prompt + (ngen ? GC_PROMPT_APART * (ngen - 1) : 0) + steps > m.max_length) {
    fprintf(stderr, "FAIL: %s: needs a KV cache and max_length >= prompt + steps\n", dir);
    return 1;
  }
  hh_ort h;
  if (hh_ort_open(&h, NULL)) {
    fprintf(stderr, "FAIL: %s\n", hh_err(&h));
    return 1;
  }
  printf("ONNX Runtime %s (%s)\n", hh_ort_version(&h), h.ort_lib);
  OrtSession *init = NULL, *s_ep = NULL, *s_cpu = NULL;
  hh_model *im = NULL;
  OrtMemoryInfo *hip_mi = NULL;
  gc_mem mem = {.device = h.alloc, .inputs = h.alloc}, host = {.device = h.alloc, .inputs = h.alloc};
  gc_decode ours, cpu;
  memset(&ours, 0, sizeof ours), memset(&cpu, 0, sizeof cpu);
  const OrtEpDevice *devs[GC_MAX_DEVICES];
  size_t ndev = 0;
  if (hh_ep_register_as(&h, GENAI_EP, NULL)) {
    gc_fail(&h, "RegisterExecutionProviderLibrary as " GENAI_EP);
    goto done;
  }
  ndev = genai_devices(&h, devs, GC_MAX_DEVICES);
  HT_CHECK(ndev >= 1, "no device with the EP name " GENAI_EP);
  if (!ndev) goto done;
  int is_gpu = h.api->HardwareDevice_Type(h.api->EpDevice_Device(devs[0])) == OrtHardwareDeviceType_GPU;
  const char *want = getenv("HIPDNN_EP_TEST_BACKEND");
  if (!is_gpu && want && strcmp(want, "auto") == 0) {
    printf("SKIP: a GPU was asked for (HIPDNN_EP_TEST_BACKEND=auto) and " GENAI_EP " offers the CPU\n");
    rc = HH_SKIP;
    goto done;
  }
  printf("%zu device(s) named " GENAI_EP ", all given to each session; the first is the %s\n", ndev,
         is_gpu ? "GPU" : "CPU (reference backend)");

  if (init_model(&h, &im) || genai_session(&h, devs, ndev, 0, hh_model_ort(im), NULL, &init)) {
    gc_fail(&h, "init session");
    goto done;
  }
  if (is_gpu) {
    if (device_memory(&h, devs[0], init, &hip_mi, &mem)) {
      gc_fail(&h, "GenAI's device allocator");
      goto done;
    }
  } else {
    printf("SKIP (GPU only): the Hip memory info and pinned inputs: the CPU device has host memory only\n");
  }
  if (genai_session(&h, devs, ndev, 1, NULL, m.path, &s_ep) || kv_dtype(&h, s_ep, &m)) {
    gc_fail(&h, "decoder session with our EP");
    goto done;
  }
  hh_session_cfg cpu_cfg = {0};
  if (hh_session_create(&h, &cpu_cfg, NULL, m.path, &s_cpu)) {
    gc_fail(&h, "decoder session on the CPU EP");
    goto done;
  }
  hh_assign as = {0};
  if (hh_assignment(&h, s_ep, &as) == 0) {
    int ours_n = hh_assign_count(&as, GENAI_EP, NULL), all = hh_assign_count(&as, NULL, NULL);
    int gqa = hh_assign_count(&as, GENAI_EP, "GroupQueryAttention") + hh_assign_count(&as, GENAI_EP, "Attention");
    printf("placement: %d of %d nodes on " GENAI_EP ", %d attention node(s)\n", ours_n, all, gqa);
    HT_CHECK(ours_n == all && gqa == m.layers, "not every node on " GENAI_EP ":");
    if (ours_n != all) hh_assign_print(&as, stderr, "  ");
    hh_assign_free(&as);
  } else {
    gc_fail(&h, "placement");
  }
  if (decode(&h, s_ep, &m, &mem, prompt, steps, &ours)) gc_fail(&h, "decode on " GENAI_EP);
  else if (decode(&h, s_cpu, &m, &host, prompt, steps, &cpu)) gc_fail(&h, "decode on the CPU EP");
  else {
    int same = 1;
    printf("tokens (ours / CPU EP):");
    for (int k = 0; k <= steps; k++) {
      printf(" %lld/%lld", (long long)ours.tokens[k], (long long)cpu.tokens[k]);
      same &= ours.tokens[k] == cpu.tokens[k];
    }
    printf("\n");
    HT_CHECK(same, "the greedy tokens differ from the CPU EP's");
    HT_CHECK(cpu.min_spread > 1e-3, "the CPU EP's logits are flat (spread %g): the model carries no signal",
             cpu.min_spread);
    int distinct = 0;
    for (int k = 1; k <= steps; k++) distinct += cpu.tokens[k] != cpu.tokens[k - 1];
    HT_CHECK(distinct > 0, "the CPU EP repeats one token: a decode that carries no signal");
    if (ngen) generators(&h, s_ep, &m, &mem, prompt, steps, ngen);
  }
done:
  if (mem.device && mem.device != h.alloc) h.api->ReleaseAllocator(mem.device);
  if (hip_mi) h.api->ReleaseMemoryInfo(hip_mi);
  hh_session_free(&h, s_cpu);
  hh_session_free(&h, s_ep);
  hh_session_free(&h, init);
  hh_model_free(im);
  if (h.api) {
    OrtStatus *st = h.api->UnregisterExecutionProviderLibrary(h.env, GENAI_EP);
    if (st) h.api->ReleaseStatus(st);
  }
  hh_ort_close(&h);
  if (rc == HH_SKIP) return rc;
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
