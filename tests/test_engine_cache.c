/* test_engine_cache: the engine cache's parts that need no GPU.
 *   1. common/hd_diskcache: entries survive a save and a reopen; a damaged
 *      file (any byte changed, cut short at any length), another format
 *      version, a file that is not a cache, an unwritable path: each a
 *      warning or an error status and an empty cache, never a partial one,
 *      and never a crash; files that are not ours are never replaced;
 *      entries of another device's scope never answer for this one;
 *      concurrent writers (threads with one cache, threads with their own,
 *      processes) leave a whole file holding every entry.
 *   2. dnn_engine_choice as text: round trip; anything else is refused.
 *   3. dnn_plan_build over a mock backend API with several candidate
 *      engines: exhaustive search keeps the fastest and records a choice;
 *      replaying that choice gives the same engine and workspace with no
 *      timing; a choice that no longer fits (another engine or workspace at
 *      its place, a list too short, a config that no longer finalizes) is
 *      NOT_SUPPORTED, never another engine. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/dnn/dnn.h"
#include "backends/hip/hip_hipdnn.h"
#include "common/hd_diskcache.h"
#include "common/hd_dtype.h"
#include "tests/dnn_mock.h"
#include "tests/unit_test.h"
#ifdef HD_HAVE_CUDNN_TABLE
#include "backends/cuda/cu_cudnn.h"
#endif

#define CHECK UT_CHECKF

static char dir[256];

static void path_in_dir(char *buf, size_t cap, const char *name) { snprintf(buf, cap, "%s/%s", dir, name); }

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)len + 1);
  if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) b[len] = '\0';
  *n = b ? (size_t)len : 0;
  return b;
}

static void spit(const char *path, const char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    CHECK(0, "cannot write %s", path);
    return;
  }
  if (n && fwrite(b, 1, n, f) != n) CHECK(0, "short write to %s", path);
  fclose(f);
}

/* Opens path; the cache, or NULL. *warned: whether open gave a warning. */
static hd_diskcache *open_cache(const char *path, int *warned) {
  hd_diskcache *dc = NULL;
  hd_status *w = NULL;
  hd_status *st = hd_diskcache_open(path, &dc, &w);
  CHECK(!st, "open %s: %s", path, st ? hd_status_msg(st) : "");
  hd_status_free(st);
  *warned = w != NULL;
  hd_status_free(w);
  return dc;
}

/* ---- 1. the file ---- */

#define SCOPE_A "cuDNN 91900 | NVIDIA H100 80GB HBM3 cc 9.0 | hipdnn-ep 0.1.0 keys 1"
#define SCOPE_B "cuDNN 91400 | NVIDIA H200 cc 9.0 | hipdnn-ep 0.1.0 keys 1"

static void test_round_trip(void) {
  char path[512];
  path_in_dir(path, sizeof path, "sub/dir/rt.txt"); /* folders made on save */
  int warned = 0;
  hd_diskcache *dc = open_cache(path, &warned);
  if (!dc) return;
  CHECK(!warned && hd_diskcache_count(dc) == 0, "a missing file: an empty cache, no warning");
  char v[64];
  CHECK(!hd_diskcache_get(dc, "nothing", v, sizeof v) && v[0] == '\0', "get of a missing key");
  UT_OK(hd_diskcache_save(dc)); /* nothing put: nothing written */
  struct stat sb;
  CHECK(stat(path, &sb) != 0, "a save with nothing new wrote the file");
  char key[128], val[64];
  for (int i = 0; i < 40; ++i) {
    snprintf(key, sizeof key, "%s | conv f16 x 1,%d,56,56", i % 2 ? SCOPE_A : SCOPE_B, 8 * (i + 1));
    snprintf(val, sizeof val, "mode A index %d engine %d workspace %d", i % 8, 100 + i, 1024 * i);
    UT_OK(hd_diskcache_put(dc, key, val));
  }
  UT_OK(hd_diskcache_put(dc, "re-put", "first"));
  UT_OK(hd_diskcache_put(dc, "re-put", "second")); /* the last value wins */
  UT_OK(hd_diskcache_save(dc));
  hd_diskcache_close(dc);

  size_t n = 0;
  char *text = slurp(path, &n);
  CHECK(text && strncmp(text, "hipdnn-ep cache 1\n", 18) == 0 && n > 8 && strcmp(text + n - 8, "\nend 41\n") == 0,
        "file layout: %.40s ... %s", text ? text : "(none)", text && n > 8 ? text + n - 8 : "");
  free(text);
  CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0644, "file mode %o", (unsigned)(sb.st_mode & 0777));

  dc = open_cache(path, &warned);
  if (!dc) return;
  CHECK(!warned && hd_diskcache_count(dc) == 41, "reopened: %d entries, warned %d", hd_diskcache_count(dc), warned);
  int same = 0;
  for (int i = 0; i < 40; ++i) {
    snprintf(key, sizeof key, "%s | conv f16 x 1,%d,56,56", i % 2 ? SCOPE_A : SCOPE_B, 8 * (i + 1));
    snprintf(val, sizeof val, "mode A index %d engine %d workspace %d", i % 8, 100 + i, 1024 * i);
    same += hd_diskcache_get(dc, key, v, sizeof v) && strcmp(v, val) == 0;
  }
  CHECK(same == 40, "%d of 40 entries came back as written", same);
  CHECK(hd_diskcache_get(dc, "re-put", v, sizeof v) && strcmp(v, "second") == 0, "re-put: %s", v);
  /* Another device's scope never answers for this one. */
  snprintf(key, sizeof key, "%s | conv f16 x 1,%d,56,56", SCOPE_A, 8);
  CHECK(!hd_diskcache_get(dc, key, v, sizeof v), "scope B's entry answered a key of scope A");
  /* A buffer too small for the value: not found rather than cut. */
  CHECK(!hd_diskcache_get(dc, "re-put", v, 4) && v[0] == '\0', "value cut to a small buffer");
  /* Keys and values the format cannot hold. */
  char longkey[HD_DISKCACHE_MAX_KEY + 2];
  memset(longkey, 'k', sizeof longkey - 1);
  longkey[sizeof longkey - 1] = '\0';
  UT_ERR(hd_diskcache_put(dc, longkey, "v"), HD_ERR_INVALID_ARG);
  UT_ERR(hd_diskcache_put(dc, "", "v"), HD_ERR_INVALID_ARG);
  UT_ERR(hd_diskcache_put(dc, "a\tb", "v"), HD_ERR_INVALID_ARG);
  UT_ERR(hd_diskcache_put(dc, "a\nb", "v"), HD_ERR_INVALID_ARG);
  UT_ERR(hd_diskcache_put(dc, "k", "x\ny"), HD_ERR_INVALID_ARG);
  UT_ERR(hd_diskcache_put(dc, "k", ""), HD_ERR_INVALID_ARG);
  UT_ERR(hd_diskcache_put(dc, "k\xc3\xa9", "v"), HD_ERR_INVALID_ARG);
  hd_diskcache_close(dc);
  hd_diskcache *bad = NULL;
  hd_status *w = NULL;
  UT_ERR(hd_diskcache_open("", &bad, &w), HD_ERR_INVALID_ARG);
  CHECK(!bad && !w, "a refused open handed out a cache");
}

/* A valid file of a few entries at path; its bytes in *text (caller frees). */
static char *good_file(const char *path, size_t *n) {
  int warned;
  hd_diskcache *dc = open_cache(path, &warned);
  if (!dc) return NULL;
  UT_OK(hd_diskcache_put(dc, SCOPE_A " | conv f32 x 1,64,56,56", "mode A index 0 engine 7 workspace 0"));
  UT_OK(hd_diskcache_put(dc, SCOPE_A " | conv f32 x 1,128,28,28", "mode A index 2 engine 33 workspace 4096"));
  UT_OK(hd_diskcache_put(dc, SCOPE_B " | conv f16 x 8,64,56,56", "mode FALLBACK index 1 engine 5 workspace 512"));
  UT_OK(hd_diskcache_save(dc));
  hd_diskcache_close(dc);
  return slurp(path, n);
}

static void test_damage(void) {
  char path[512];
  path_in_dir(path, sizeof path, "damage.txt");
  size_t n = 0;
  char *orig = good_file(path, &n);
  if (!orig || n < 40) {
    CHECK(0, "no file to damage");
    free(orig);
    return;
  }
  /* Cut short at every length: empty (no warning) or refused whole. */
  int partial = 0, silent = 0;
  for (size_t len = 0; len < n; ++len) {
    spit(path, orig, len);
    int warned;
    hd_diskcache *dc = open_cache(path, &warned);
    if (!dc) continue;
    if (hd_diskcache_count(dc) != 0) ++partial;
    if (len > 0 && !warned) ++silent;
    hd_diskcache_close(dc);
  }
  CHECK(partial == 0, "%d truncated files were partly read", partial);
  CHECK(silent == 0, "%d truncated files gave no warning", silent);
  /* Any one byte changed (past the header, whose damage is covered by
   * the cuts and the version checks below). */
  int accepted = 0;
  for (size_t i = 18; i < n; ++i) {
    char *b = malloc(n);
    memcpy(b, orig, n);
    b[i] = b[i] == 'x' ? 'y' : 'x';
    spit(path, b, n);
    free(b);
    int warned;
    hd_diskcache *dc = open_cache(path, &warned);
    if (!dc) continue;
    if (hd_diskcache_count(dc) != 0 || !warned) ++accepted;
    hd_diskcache_close(dc);
  }
  CHECK(accepted == 0, "%d files with one byte changed were read", accepted);
  /* Data after the end line. */
  char *extra = malloc(n + 8);
  memcpy(extra, orig, n);
  memcpy(extra + n, "more\n", 5);
  spit(path, extra, n + 5);
  free(extra);
  int warned;
  hd_diskcache *dc = open_cache(path, &warned);
  if (dc) {
    CHECK(warned && hd_diskcache_count(dc) == 0, "data after the end line was accepted");
    /* A damaged cache of ours is replaced by a whole one on save. */
    UT_OK(hd_diskcache_put(dc, "new key", "new value"));
    UT_OK(hd_diskcache_save(dc));
    hd_diskcache_close(dc);
    dc = open_cache(path, &warned);
    char v[64];
    CHECK(dc && !warned && hd_diskcache_count(dc) == 1 && hd_diskcache_get(dc, "new key", v, sizeof v),
          "the damaged file was not replaced by a whole one");
    hd_diskcache_close(dc);
  }
  free(orig);
}

/* Files that are not this format's: read as empty with a warning, and a
 * save leaves them byte for byte as they were. */
static void test_foreign(void) {
  const char *bodies[] = {
      "hipdnn-ep cache 2\n0123456789abcdef k\tv\nend 1\n", /* a newer format */
      "hipdnn-ep cache 0\nend 0\n",                         /* an older one */
      "\x08\x07\x12\x0bpytorch\x1a\x05" "1.13.1",            /* a model: a mistyped path */
      "# my notes\nnot a cache\n",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; ++i) {
    char path[512];
    snprintf(path, sizeof path, "%s/foreign%zu.txt", dir, i);
    size_t len = strlen(bodies[i]);
    spit(path, bodies[i], len);
    int warned;
    hd_diskcache *dc = open_cache(path, &warned);
    if (!dc) continue;
    CHECK(warned && hd_diskcache_count(dc) == 0, "foreign file %zu: warned %d, %d entries", i, warned,
          hd_diskcache_count(dc));
    UT_OK(hd_diskcache_put(dc, "k", "v"));
    hd_status *st = hd_diskcache_save(dc);
    CHECK(st != NULL, "foreign file %zu: the save claims to have replaced it", i);
    hd_status_free(st);
    char v[8];
    CHECK(hd_diskcache_get(dc, "k", v, sizeof v), "foreign file %zu: the entry put is gone", i);
    hd_diskcache_close(dc);
    size_t n = 0;
    char *now = slurp(path, &n);
    CHECK(now && n == len && memcmp(now, bodies[i], len) == 0, "foreign file %zu was changed", i);
    free(now);
  }
  /* A path that is a folder: a warning, and no save over it. */
  char path[512];
  path_in_dir(path, sizeof path, "a-folder");
  mkdir(path, 0755);
  int warned;
  hd_diskcache *dc = open_cache(path, &warned);
  if (dc) {
    CHECK(warned, "a folder as the cache file gave no warning");
    UT_OK(hd_diskcache_put(dc, "k", "v"));
    hd_status *st = hd_diskcache_save(dc);
    CHECK(st != NULL, "a save over a folder succeeded");
    hd_status_free(st);
    hd_diskcache_close(dc);
  }
}

/* A path no one can write (under a regular file): errors, no crash, and the
 * cache keeps working in memory. Permissions would not do: tests may run as
 * root. */
static void test_unwritable(void) {
  char file[512], path[600];
  path_in_dir(file, sizeof file, "plain-file");
  spit(file, "x", 1);
  snprintf(path, sizeof path, "%s/cache.txt", file);
  int warned;
  hd_diskcache *dc = open_cache(path, &warned);
  if (!dc) return;
  CHECK(!warned, "an unreachable missing file: no warning at open (nothing to read)");
  UT_OK(hd_diskcache_put(dc, "k", "v"));
  hd_status *st = hd_diskcache_save(dc);
  CHECK(st && strstr(hd_status_msg(st), path), "save to an unwritable path: %s", st ? hd_status_msg(st) : "ok");
  hd_status_free(st);
  st = hd_diskcache_save(dc); /* still pending: fails again, the same way */
  CHECK(st != NULL, "the second save to an unwritable path succeeded");
  hd_status_free(st);
  char v[8];
  CHECK(hd_diskcache_get(dc, "k", v, sizeof v) && strcmp(v, "v") == 0, "the entry is gone after a failed save");
  hd_diskcache_close(dc);
}

/* ---- concurrency ---- */

enum { WRITERS = 6, PER_WRITER = 25 };

typedef struct writer_arg {
  const char *path;
  hd_diskcache *shared; /* NULL: the writer opens its own */
  int id;
  int errors;
} writer_arg;

static void *writer(void *p) {
  writer_arg *a = p;
  hd_diskcache *dc = a->shared;
  if (!dc) {
    hd_status *w = NULL;
    hd_status *st = hd_diskcache_open(a->path, &dc, &w);
    hd_status_free(w);
    if (st) {
      hd_status_free(st);
      a->errors++;
      return NULL;
    }
  }
  char key[64], val[64], got[64];
  for (int i = 0; i < PER_WRITER; ++i) {
    snprintf(key, sizeof key, "writer %d entry %d", a->id, i);
    snprintf(val, sizeof val, "mode A index %d engine %d workspace 0", i % 8, a->id * 1000 + i);
    hd_status *st = hd_diskcache_put(dc, key, val);
    if (!st) st = hd_diskcache_save(dc);
    if (st) {
      a->errors++;
      hd_status_free(st);
    }
    if (!hd_diskcache_get(dc, key, got, sizeof got) || strcmp(got, val) != 0) a->errors++;
  }
  if (!a->shared) hd_diskcache_close(dc);
  return NULL;
}

/* The file at path is whole and holds every writer's every entry. */
static void check_all_there(const char *path, const char *what) {
  int warned;
  hd_diskcache *dc = open_cache(path, &warned);
  if (!dc) return;
  int found = 0;
  char key[64], val[64], got[64];
  for (int w = 0; w < WRITERS; ++w)
    for (int i = 0; i < PER_WRITER; ++i) {
      snprintf(key, sizeof key, "writer %d entry %d", w, i);
      snprintf(val, sizeof val, "mode A index %d engine %d workspace 0", i % 8, w * 1000 + i);
      found += hd_diskcache_get(dc, key, got, sizeof got) && strcmp(got, val) == 0;
    }
  CHECK(!warned && found == WRITERS * PER_WRITER, "%s: warned %d, %d of %d entries in the file", what, warned, found,
        WRITERS * PER_WRITER);
  hd_diskcache_close(dc);
}

static void run_threads(const char *path, hd_diskcache *shared, const char *what) {
  pthread_t t[WRITERS];
  writer_arg a[WRITERS];
  for (int i = 0; i < WRITERS; ++i) {
    a[i] = (writer_arg){.path = path, .shared = shared, .id = i};
    pthread_create(&t[i], NULL, writer, &a[i]);
  }
  int errors = 0;
  for (int i = 0; i < WRITERS; ++i) {
    pthread_join(t[i], NULL);
    errors += a[i].errors;
  }
  CHECK(errors == 0, "%s: %d errors in the writers", what, errors);
  check_all_there(path, what);
}

static void test_concurrent(void) {
  char path[512];
  /* Threads sharing one cache (one session's plans built at once). */
  path_in_dir(path, sizeof path, "threads-shared.txt");
  int warned;
  hd_diskcache *dc = open_cache(path, &warned);
  if (dc) {
    run_threads(path, dc, "threads, one cache");
    hd_diskcache_close(dc);
  }
  /* Threads with a cache each (sessions of one process). */
  path_in_dir(path, sizeof path, "threads-own.txt");
  run_threads(path, NULL, "threads, a cache each");
  /* Processes. */
  path_in_dir(path, sizeof path, "processes.txt");
  pid_t pids[WRITERS];
  for (int i = 0; i < WRITERS; ++i) {
    pids[i] = fork();
    if (pids[i] == 0) {
      writer_arg a = {.path = path, .id = i};
      writer(&a);
      _exit(a.errors ? 1 : 0);
    }
  }
  int failed = 0;
  for (int i = 0; i < WRITERS; ++i) {
    int status = 0;
    if (pids[i] < 0 || waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) || WEXITSTATUS(status))
      ++failed;
  }
  CHECK(failed == 0, "processes: %d writers failed", failed);
  check_all_there(path, "processes");
  /* No temporary file is left behind. */
  char cmd[700];
  snprintf(cmd, sizeof cmd, "ls %s | grep 'txt\\.' | grep -qv '\\.lock$'", dir);
  CHECK(system(cmd) != 0, "temporary files left in %s", dir);
}

/* ---- 2. choices as text ---- */

static void test_choice_text(void) {
  dnn_engine_choice c = {.heur_mode = DNN_HEUR_MODE_A, .index = 3, .engine = 17, .workspace = 1048576}, d;
  char buf[128];
  dnn_engine_choice_format(&c, buf, sizeof buf);
  CHECK(strcmp(buf, "mode A index 3 engine 17 workspace 1048576") == 0, "format: %s", buf);
  memset(&d, 0, sizeof d);
  CHECK(dnn_engine_choice_parse(buf, &d) && d.heur_mode == c.heur_mode && d.index == 3 && d.engine == 17 &&
            d.workspace == 1048576,
        "parse of %s", buf);
  c.heur_mode = DNN_HEUR_MODE_FALLBACK;
  c.workspace = 0;
  dnn_engine_choice_format(&c, buf, sizeof buf);
  CHECK(dnn_engine_choice_parse(buf, &d) && d.heur_mode == DNN_HEUR_MODE_FALLBACK && d.workspace == 0, "%s", buf);
  const char *bad[] = {"", "mode A", "mode B index 1 engine 2 workspace 3", "mode A index -1 engine 2 workspace 3",
                       "mode A index 1 engine 2 workspace 3 ", "mode A index 1 engine 2 workspace 3x",
                       "mode A index 01 engine 2 workspace 3", "mode A  index 1 engine 2 workspace 3",
                       "mode A index 1 engine 2 workspace -3", "mode A index 99999999999 engine 2 workspace 3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
    CHECK(!dnn_engine_choice_parse(bad[i], &d), "parse accepted \"%s\"", bad[i]);
}

/* ---- 3. the builder's choice and its replay, over a mock API ---- */

static const dnn_table *cur;
enum { MOCK_OK = 0, MOCK_NCFG = 6 };

/* The configs heuristics propose, per mode (A, FALLBACK): engine, workspace,
 * time in ms; and whether the plan of config i finalizes. */
static int64_t m_engine[2][MOCK_NCFG], m_ws[2][MOCK_NCFG];
static float m_ms[2][MOCK_NCFG];
static int m_finalizes[2][MOCK_NCFG];
static int m_ncfg[2];
static int m_timed;

typedef struct mock_desc {
  int type;
  int mode; /* a heuristics descriptor's mode: 0 A, 1 FALLBACK */
  int cfg;  /* an ENGINECFG's (and its ENGINE's, and a plan's) place: mode * MOCK_NCFG + index; -1 none */
} mock_desc;

static int mode_of(int64_t v) { return v == cur->values[DNN_HEUR_MODE_A] ? 0 : 1; }

static int m_create_descriptor(int type, void **desc) {
  mock_desc *d = calloc(1, sizeof *d);
  d->type = type;
  d->cfg = -1;
  *desc = d;
  return MOCK_OK;
}
static int m_destroy_descriptor(void *desc) {
  free(desc);
  return MOCK_OK;
}
static int m_finalize(void *desc) {
  mock_desc *d = desc;
  if (d->type == cur->values[DNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR] && d->cfg >= 0 &&
      !m_finalizes[d->cfg / MOCK_NCFG][d->cfg % MOCK_NCFG])
    return (int)cur->values[DNN_STATUS_NOT_SUPPORTED];
  return MOCK_OK;
}
static int m_set_attribute(void *desc, int name, int type, int64_t count, const void *elems) {
  (void)type, (void)count;
  mock_desc *d = desc;
  if (name == cur->values[DNN_ATTR_ENGINEHEUR_MODE]) d->mode = mode_of(*(const int *)elems);
  if (name == cur->values[DNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG]) d->cfg = ((mock_desc *const *)elems)[0]->cfg;
  return MOCK_OK;
}
static int m_get_attribute(void *desc, int name, int type, int64_t requested, int64_t *count, void *elems) {
  (void)type;
  mock_desc *d = desc;
  const int64_t *v = cur->values;
  *count = 0;
  if (name == v[DNN_ATTR_ENGINEHEUR_RESULTS]) {
    *count = requested ? (requested < m_ncfg[d->mode] ? requested : m_ncfg[d->mode]) : m_ncfg[d->mode];
    for (int64_t i = 0; i < *count && requested; ++i) ((mock_desc **)elems)[i]->cfg = d->mode * MOCK_NCFG + (int)i;
  } else if (name == v[DNN_ATTR_ENGINECFG_ENGINE]) {
    *count = 1;
    if (requested >= 1) ((mock_desc **)elems)[0]->cfg = d->cfg;
  } else if (name == v[DNN_ATTR_ENGINE_GLOBAL_INDEX] && d->cfg >= 0) {
    *count = 1;
    *(int64_t *)elems = m_engine[d->cfg / MOCK_NCFG][d->cfg % MOCK_NCFG];
  } else if (name == v[DNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE] && d->cfg >= 0) {
    *count = 1;
    *(int64_t *)elems = m_ws[d->cfg / MOCK_NCFG][d->cfg % MOCK_NCFG];
  }
  return MOCK_OK;
}
static int m_execute(void *handle, void *plan, void *vp) {
  (void)handle, (void)plan, (void)vp;
  return MOCK_OK;
}

static hd_status *time_by_engine(void *user, const dnn_plan *cand, float *ms) {
  (void)user;
  ++m_timed;
  for (int m = 0; m < 2; ++m)
    for (int i = 0; i < m_ncfg[m]; ++i)
      if (m_engine[m][i] == cand->engine) {
        *ms = m_ms[m][i];
        return NULL;
      }
  *ms = -1.f;
  return NULL;
}

/* Builds a conv graph and a plan over it; the status (plan in *p on success). */
static hd_status *plan(const dnn_vendor *vd, int exhaustive, const dnn_engine_choice *replay, dnn_plan *p) {
  dnn_conv c;
  memset(&c, 0, sizeof c);
  int64_t xd[4] = {2, 8, 9, 9}, wd[4] = {4, 8, 3, 3}, yd[4] = {2, 4, 7, 7};
  dnn_tensor_packed(&c.x, 1, HD_DT_F16, 4, xd);
  dnn_tensor_packed(&c.w, 2, HD_DT_F16, 4, wd);
  dnn_tensor_packed(&c.y, 3, HD_DT_F16, 4, yd);
  c.compute_dtype = HD_DT_F32;
  c.nspatial = 2;
  for (int i = 0; i < 3; ++i) c.stride[i] = c.dilation[i] = 1;
  void *handle = NULL;
  vd->create(&handle);
  dnn_bag bag;
  dnn_bag_init(&bag, vd);
  void *g = NULL;
  memset(p, 0, sizeof *p);
  HD_TRY(dnn_conv_graph(&bag, handle, &c, 0, &g));
  dnn_plan_opts o = {.allow_tensor_core_fp32 = 1, .nuids = 3, .uids = {1, 2, 3}, .replay = replay};
  if (exhaustive) {
    o.time_fn = time_by_engine;
    o.max_candidates = 4;
  }
  return dnn_plan_build(&bag, handle, g, &o, p);
}

static void check_replay(const dnn_table *t) {
  cur = t;
  dnn_vendor vd;
  memset(&vd, 0, sizeof vd);
  vd.name = t->vendor;
  vd.create_descriptor = m_create_descriptor;
  vd.destroy_descriptor = m_destroy_descriptor;
  vd.finalize = m_finalize;
  vd.set_attribute = m_set_attribute;
  vd.get_attribute = m_get_attribute;
  vd.execute = m_execute;
  dnn_mock_handle_calls(&vd);
  memcpy(vd.v, t->values, sizeof vd.v);
  vd.not_supported_span = t->not_supported_span;
  int has_a = dnn_has(&vd, DNN_HEUR_MODE_A);
  /* Mode A (where the vendor has it) proposes 6 configs: the 2nd does not
   * finalize, the 4th is the fastest of the first four that do, the 6th
   * is faster still but past the candidates timed. FALLBACK: 3 configs. */
  const int64_t eng[MOCK_NCFG] = {11, 12, 13, 14, 15, 16}, ws[MOCK_NCFG] = {0, 64, 128, 256, 512, 1024};
  const float ms[MOCK_NCFG] = {5.f, 1.f, 4.f, 2.f, 3.f, 0.5f};
  for (int i = 0; i < MOCK_NCFG; ++i) {
    m_engine[0][i] = eng[i];
    m_ws[0][i] = ws[i];
    m_ms[0][i] = ms[i];
    m_finalizes[0][i] = i != 1;
    m_engine[1][i] = 30 + i;
    m_ws[1][i] = 8 * i;
    m_ms[1][i] = 3.f - (float)i;
    m_finalizes[1][i] = 1;
  }
  m_ncfg[0] = has_a ? MOCK_NCFG : 0;
  m_ncfg[1] = 3;
  /* The exhaustive choice. */
  dnn_plan p;
  m_timed = 0;
  hd_status *st = plan(&vd, 1, NULL, &p);
  CHECK(!st, "%s: exhaustive plan: %s", t->vendor, st ? hd_status_msg(st) : "");
  hd_status_free(st);
  int64_t want_engine = has_a ? 14 : 32, want_ws = has_a ? 256 : 16;
  int want_index = has_a ? 3 : 2;
  dnn_name want_mode = has_a ? DNN_HEUR_MODE_A : DNN_HEUR_MODE_FALLBACK;
  CHECK(!st && p.engine == want_engine && p.workspace == want_ws && p.ncandidates == (has_a ? 4 : 3) &&
            m_timed == p.ncandidates,
        "%s: exhaustive chose engine %lld (workspace %lld) of %d timed (%d calls); want %lld", t->vendor,
        (long long)p.engine, (long long)p.workspace, p.ncandidates, m_timed, (long long)want_engine);
  dnn_engine_choice ch = p.choice;
  CHECK(ch.heur_mode == want_mode && ch.index == want_index && ch.engine == want_engine && ch.workspace == want_ws,
        "%s: recorded choice mode %d index %d engine %lld workspace %lld", t->vendor, (int)ch.heur_mode, ch.index,
        (long long)ch.engine, (long long)ch.workspace);
  dnn_plan_free(&p);
  /* Its replay: the same engine, no timing (time_fn given, not called). */
  m_timed = 0;
  st = plan(&vd, 1, &ch, &p);
  CHECK(!st && p.engine == want_engine && p.workspace == want_ws && m_timed == 0 && p.ncandidates == 0,
        "%s: replay: %s engine %lld, %d timed", t->vendor, st ? hd_status_msg(st) : "", (long long)p.engine, m_timed);
  hd_status_free(st);
  dnn_plan_free(&p);
  /* The heuristic choice is unchanged by all this: the first that finalizes. */
  st = plan(&vd, 0, NULL, &p);
  CHECK(!st && p.engine == (has_a ? 11 : 30) && p.choice.index == 0, "%s: heuristic choice: engine %lld",
        t->vendor, (long long)p.engine);
  hd_status_free(st);
  dnn_plan_free(&p);
  /* Choices that no longer fit: refused, never another engine. */
  dnn_engine_choice stale[4] = {ch, ch, ch, ch};
  stale[0].engine += 100;     /* another engine at its place */
  stale[1].workspace += 8;    /* another workspace */
  stale[2].index = 40;        /* past the list */
  stale[3].heur_mode = has_a ? DNN_HEUR_MODE_FALLBACK : DNN_HEUR_MODE_A; /* another list, or one the vendor lacks */
  for (int i = 0; i < 4; ++i) {
    m_timed = 0;
    st = plan(&vd, 1, &stale[i], &p);
    CHECK(st && hd_status_code(st) == HD_ERR_NOT_SUPPORTED && m_timed == 0 && !p.plan,
          "%s: stale choice %d: %s", t->vendor, i, st ? hd_status_msg(st) : "accepted");
    if (st) printf("%s: stale choice %d refused: %s\n", t->vendor, i, hd_status_msg(st));
    hd_status_free(st);
    dnn_plan_free(&p);
  }
  /* The chosen config no longer finalizes. */
  m_finalizes[want_mode == DNN_HEUR_MODE_A ? 0 : 1][want_index] = 0;
  st = plan(&vd, 1, &ch, &p);
  CHECK(st && hd_status_code(st) == HD_ERR_NOT_SUPPORTED, "%s: a choice that no longer finalizes: %s", t->vendor,
        st ? hd_status_msg(st) : "accepted");
  hd_status_free(st);
  dnn_plan_free(&p);
  printf("%s: exhaustive choice recorded and replayed without timing; stale choices refused\n", t->vendor);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/hipdnn-engine-cache-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    printf("FAIL: mkdtemp %s: %s\n", dir, strerror(errno));
    return 1;
  }
  test_round_trip();
  test_damage();
  test_foreign();
  test_unwritable();
  test_concurrent();
  test_choice_text();
  check_replay(&hip_hipdnn_table);
#ifdef HD_HAVE_CUDNN_TABLE
  check_replay(&cu_cudnn_table);
#else
  printf("cuDNN table not built: the replay is checked on hipDNN's table alone (FALLBACK heuristics)\n");
#endif
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("note: could not remove %s\n", dir);
  printf("%d checks, %d failures\n%s\n", ut_checks, ut_failures, ut_failures ? "FAILED" : "PASS");
  return ut_failures ? 1 : 0;
}
