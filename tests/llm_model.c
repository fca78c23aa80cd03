#include "tests/llm_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *lm_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
      free(buf);
      buf = NULL;
    } else {
      buf[n] = 0;
      if (len) *len = (size_t)n;
    }
  }
  fclose(f);
  return buf;
}

/* The number after "key": in our own generated JSON (keys are unique). */
static int json_int(const char *json, const char *key, int *out) {
  char pat[128];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  const char *p = strstr(json, pat);
  if (!p || !(p = strchr(p + strlen(pat), ':'))) return 1;
  char *end = NULL;
  long v = strtol(p + 1, &end, 10);
  if (end == p + 1) return 1;
  *out = (int)v;
  return 0;
}

int lm_model_open(const char *dir, lm_model *m) {
  char path[2200];
  memset(m, 0, sizeof *m);
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(path, sizeof path, "%s/SKIP", dir);
    char *why = lm_slurp(path, NULL);
    if (why) {
      printf("SKIP: %s: no model generated: %s", dir, why);
      free(why);
      return 77;
    }
    fprintf(stderr, "FAIL: %s/model.onnx does not exist (and no SKIP reason beside it)\n", dir);
    return 1;
  }
  fclose(f);
  snprintf(path, sizeof path, "%s/genai_config.json", dir);
  char *js = lm_slurp(path, NULL);
  if (!js) {
    fprintf(stderr, "FAIL: cannot read %s\n", path);
    return 1;
  }
  int rc = json_int(js, "num_hidden_layers", &m->layers) || json_int(js, "num_key_value_heads", &m->kv_heads) ||
           json_int(js, "head_size", &m->head_size) || json_int(js, "vocab_size", &m->vocab) ||
           json_int(js, "max_length", &m->max_length);
  m->has_cache = strstr(js, "\"past_key_names\"") != NULL;
  free(js);
  if (rc || m->layers <= 0 || m->layers > LM_MAX_LAYERS || m->max_length <= 0 || m->max_length > LM_MAX_LEN) {
    fprintf(stderr, "FAIL: %s: missing or out-of-range decoder fields\n", path);
    return 1;
  }
  snprintf(m->path, sizeof m->path, "%s/model.onnx", dir);
  return 0;
}

int64_t lm_prompt_token(int64_t row, int64_t col, int vocab) { return (1 + 17 * col + 101 * row) % vocab; }
