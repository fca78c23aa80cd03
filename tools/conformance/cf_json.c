/* cf_json: JSON string escaping and a recursive-descent reader. */
#include "tools/conformance/cf_json.h"

#include <stdlib.h>
#include <string.h>

void cf_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; ++p) {
    switch (*p) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
      /* control bytes, and any byte of a non-ASCII text (error messages may
       * quote a corrupt model's bytes), as \u00XX: the file stays valid */
      if (*p < 0x20 || *p >= 0x7f) fprintf(f, "\\u%04x", *p);
      else fputc(*p, f);
    }
  }
  fputc('"', f);
}

typedef struct parser {
  const char *p;
  char *err;
  size_t errlen;
  int depth;
} parser;

static void ws(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t') ps->p++;
}

static cf_jv *fail(parser *ps, const char *what) {
  if (!ps->err[0]) snprintf(ps->err, ps->errlen, "JSON: %s near '%.20s'", what, ps->p);
  return NULL;
}

static void put_utf8(char *out, size_t *n, unsigned cp) {
  if (cp < 0x80) out[(*n)++] = (char)cp;
  else if (cp < 0x800) {
    out[(*n)++] = (char)(0xc0 | (cp >> 6));
    out[(*n)++] = (char)(0x80 | (cp & 0x3f));
  } else {
    out[(*n)++] = (char)(0xe0 | (cp >> 12));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[(*n)++] = (char)(0x80 | (cp & 0x3f));
  }
}

/* At an opening quote; returns a malloc'ed string. */
static char *parse_str(parser *ps) {
  const char *q = ++ps->p;
  size_t cap = 16;
  while (*q && *q != '"') { if (*q == '\\' && q[1]) q++; q++; cap++; }
  if (*q != '"') { fail(ps, "unterminated string"); return NULL; }
  char *out = malloc(cap * 3);
  if (!out) return NULL;
  size_t n = 0;
  while (*ps->p != '"') {
    char c = *ps->p++;
    if (c != '\\') { out[n++] = c; continue; }
    c = *ps->p++;
    switch (c) {
    case 'n': out[n++] = '\n'; break;
    case 't': out[n++] = '\t'; break;
    case 'r': out[n++] = '\r'; break;
    case 'b': out[n++] = '\b'; break;
    case 'f': out[n++] = '\f'; break;
    case 'u': {
      unsigned cp = 0;
      for (int i = 0; i < 4; ++i) {
        char h = *ps->p;
        unsigned v = h >= '0' && h <= '9' ? (unsigned)(h - '0')
                   : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                   : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10) : 99u;
        if (v == 99u) { free(out); fail(ps, "bad \\u escape"); return NULL; }
        cp = cp * 16 + v;
        ps->p++;
      }
      put_utf8(out, &n, cp);
      break;
    }
    default: out[n++] = c; break;
    }
  }
  ps->p++;
  out[n] = 0;
  return out;
}

static cf_jv *parse_value(parser *ps);

static int append(cf_jv *v, char *key, cf_jv *item) {
  if (v->n == 0 || (v->n >= 4 && (v->n & (v->n - 1)) == 0)) { /* capacity 4, 8, 16, ... */
    size_t cap = v->n ? v->n * 2 : 4;
    cf_jv **items = realloc(v->items, cap * sizeof *items);
    if (!items) return 1;
    v->items = items;
    if (v->type == CF_JOBJ) {
      char **keys = realloc(v->keys, cap * sizeof *keys);
      if (!keys) return 1;
      v->keys = keys;
    }
  }
  v->items[v->n] = item;
  if (v->type == CF_JOBJ) v->keys[v->n] = key;
  v->n++;
  return 0;
}

static cf_jv *parse_container(parser *ps, int type) {
  char close = type == CF_JOBJ ? '}' : ']';
  cf_jv *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  v->type = type;
  ps->p++;
  ws(ps);
  if (*ps->p == close) { ps->p++; return v; }
  for (;;) {
    char *key = NULL;
    ws(ps);
    if (type == CF_JOBJ) {
      if (*ps->p != '"') { fail(ps, "expected a key"); goto bad; }
      if (!(key = parse_str(ps))) goto bad;
      ws(ps);
      if (*ps->p != ':') { free(key); fail(ps, "expected ':'"); goto bad; }
      ps->p++;
    }
    cf_jv *item = parse_value(ps);
    if (!item || append(v, key, item)) { free(key); cf_json_free(item); goto bad; }
    ws(ps);
    if (*ps->p == ',') { ps->p++; continue; }
    if (*ps->p == close) { ps->p++; return v; }
    fail(ps, "expected ',' or a closing bracket");
    goto bad;
  }
bad:
  cf_json_free(v);
  return NULL;
}

static cf_jv *parse_value(parser *ps) {
  ws(ps);
  if (++ps->depth > 64) return fail(ps, "nested too deeply");
  cf_jv *v = NULL;
  char c = *ps->p;
  if (c == '{') v = parse_container(ps, CF_JOBJ);
  else if (c == '[') v = parse_container(ps, CF_JARR);
  else if (c == '"') {
    char *s = parse_str(ps);
    if (s && (v = calloc(1, sizeof *v))) { v->type = CF_JSTR; v->str = s; }
    else free(s);
  } else if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5)) {
    if ((v = calloc(1, sizeof *v))) { v->type = CF_JBOOL; v->num = c == 't'; }
    ps->p += c == 't' ? 4 : 5;
  } else if (!strncmp(ps->p, "null", 4)) {
    v = calloc(1, sizeof *v);
    ps->p += 4;
  } else {
    char *end;
    double d = strtod(ps->p, &end);
    if (end == ps->p) return fail(ps, "unexpected character");
    ps->p = end;
    if ((v = calloc(1, sizeof *v))) { v->type = CF_JNUM; v->num = d; }
  }
  ps->depth--;
  return v;
}

cf_jv *cf_json_parse(const char *text, char *err, size_t errlen) {
  parser ps = {text, err, errlen, 0};
  err[0] = 0;
  cf_jv *v = parse_value(&ps);
  if (v) {
    ws(&ps);
    if (*ps.p) { cf_json_free(v); v = fail(&ps, "trailing characters"); }
  }
  if (!v && !err[0]) snprintf(err, errlen, "JSON: out of memory");
  return v;
}

cf_jv *cf_json_load(const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) { snprintf(err, errlen, "cannot open %s", path); return NULL; }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - 1 - n, f);
    if (n < cap - 1) break;
    char *nb = realloc(buf, cap * 2);
    if (!nb) { free(buf); buf = NULL; break; }
    buf = nb;
    cap *= 2;
  }
  fclose(f);
  if (!buf) { snprintf(err, errlen, "out of memory reading %s", path); return NULL; }
  buf[n] = 0;
  cf_jv *v = cf_json_parse(buf, err, errlen);
  free(buf);
  return v;
}

void cf_json_free(cf_jv *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n; ++i) {
    cf_json_free(v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->str);
  free(v);
}

const cf_jv *cf_json_get(const cf_jv *obj, const char *key) {
  if (!obj || obj->type != CF_JOBJ) return NULL;
  for (size_t i = 0; i < obj->n; ++i)
    if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
  return NULL;
}

const char *cf_json_gets(const cf_jv *obj, const char *key, const char *def) {
  const cf_jv *v = cf_json_get(obj, key);
  return v && v->type == CF_JSTR ? v->str : def;
}

double cf_json_getn(const cf_jv *obj, const char *key, double def) {
  const cf_jv *v = cf_json_get(obj, key);
  return v && (v->type == CF_JNUM || v->type == CF_JBOOL) ? v->num : def;
}
