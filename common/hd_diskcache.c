/* hd_diskcache: see the header for the file format and the rules. */
#include "common/hd_diskcache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER_PREFIX "hipdnn-ep cache "
#define PATH_MAX_BYTES 4000 /* leaves room for the ".lock" and temporary names */

unsigned long long hd_fnv1a64(unsigned long long h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

typedef struct dc_entry {
  unsigned long long hash; /* of the key: compared before the key itself */
  char *key, *value;
  int pending;             /* put since the last save */
} dc_entry;

typedef struct dc_table {
  dc_entry *e;
  int n, cap;
} dc_table;

struct hd_diskcache {
  char *path;
  pthread_mutex_t mu; /* the table and saves */
  dc_table t;
  int npending;
};

/* What a read found at the path, and what a save may do with it. */
typedef enum dc_file {
  DC_FILE_ABSENT,  /* no file, or an empty one: write it */
  DC_FILE_OK,      /* a whole cache of this format */
  DC_FILE_DAMAGED, /* ours (starts with the header) but corrupt or cut short: replace it */
  DC_FILE_FOREIGN, /* another format version, not a cache, or unreadable: leave it alone */
} dc_file;

static unsigned long long key_hash(const char *key) { return hd_fnv1a64(HD_FNV_OFFSET, key, strlen(key)); }

static unsigned long long entry_sum(const char *key, size_t klen, const char *value, size_t vlen) {
  unsigned long long h = hd_fnv1a64(HD_FNV_OFFSET, key, klen);
  h = hd_fnv1a64(h, "\t", 1);
  return hd_fnv1a64(h, value, vlen);
}

/* Printable ASCII, no tab or newline (space allowed). */
static int text_ok(const char *s, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) return 0;
  return 1;
}

static void table_free(dc_table *t) {
  for (int i = 0; i < t->n; ++i) {
    free(t->e[i].key);
    free(t->e[i].value);
  }
  free(t->e);
  memset(t, 0, sizeof *t);
}

static dc_entry *table_find(dc_table *t, const char *key, unsigned long long h) {
  for (int i = 0; i < t->n; ++i)
    if (t->e[i].hash == h && strcmp(t->e[i].key, key) == 0) return &t->e[i];
  return NULL;
}

/* Sets key -> value (copies both); the entry, or NULL when out of memory. */
static dc_entry *table_set(dc_table *t, const char *key, size_t klen, const char *value, size_t vlen) {
  char *k = malloc(klen + 1), *v = malloc(vlen + 1);
  if (!k || !v) {
    free(k);
    free(v);
    return NULL;
  }
  memcpy(k, key, klen);
  k[klen] = '\0';
  memcpy(v, value, vlen);
  v[vlen] = '\0';
  unsigned long long h = key_hash(k);
  dc_entry *e = table_find(t, k, h);
  if (e) {
    free(k);
    free(e->value);
    e->value = v;
    return e;
  }
  if (t->n == t->cap) {
    int cap = t->cap ? 2 * t->cap : 32;
    dc_entry *a = realloc(t->e, (size_t)cap * sizeof *a);
    if (!a) {
      free(k);
      free(v);
      return NULL;
    }
    t->e = a;
    t->cap = cap;
  }
  e = &t->e[t->n++];
  memset(e, 0, sizeof *e);
  e->hash = h;
  e->key = k;
  e->value = v;
  return e;
}

/* Parses a whole file (buf[n]) into t; the state, and why when not OK. */
static dc_file parse(const char *buf, size_t n, dc_table *t, char *why, size_t cap) {
  if (n == 0) return DC_FILE_ABSENT;
  const size_t hp = sizeof HEADER_PREFIX - 1;
  const char *nl = memchr(buf, '\n', n);
  size_t l0 = nl ? (size_t)(nl - buf) : n;
  if (l0 < hp || memcmp(buf, HEADER_PREFIX, hp) != 0) {
    if (!nl && memcmp(buf, HEADER_PREFIX, n < hp ? n : hp) == 0) {
      snprintf(why, cap, "cut short inside its first line");
      return DC_FILE_DAMAGED;
    }
    snprintf(why, cap, "not an engine cache (its first line is not \"" HEADER_PREFIX "%d\")",
             HD_DISKCACHE_FORMAT);
    return DC_FILE_FOREIGN;
  }
  if (!nl) {
    snprintf(why, cap, "cut short inside its first line");
    return DC_FILE_DAMAGED;
  }
  long version = 0;
  int digits = 0;
  for (size_t i = hp; i < l0; ++i, ++digits) {
    if (buf[i] < '0' || buf[i] > '9' || digits > 6) {
      snprintf(why, cap, "a malformed first line");
      return DC_FILE_DAMAGED;
    }
    version = version * 10 + (buf[i] - '0');
  }
  if (!digits) {
    snprintf(why, cap, "a malformed first line");
    return DC_FILE_DAMAGED;
  }
  if (version != HD_DISKCACHE_FORMAT) {
    snprintf(why, cap, "format version %ld (this build reads version %d)", version, HD_DISKCACHE_FORMAT);
    return DC_FILE_FOREIGN;
  }
  size_t pos = l0 + 1;
  int line = 2;
  while (pos < n) {
    const char *s = buf + pos;
    const char *e = memchr(s, '\n', n - pos);
    if (!e) {
      snprintf(why, cap, "cut short in line %d", line);
      return DC_FILE_DAMAGED;
    }
    size_t len = (size_t)(e - s);
    if (len >= 4 && memcmp(s, "end ", 4) == 0) {
      long count = 0;
      int nd = 0;
      for (size_t i = 4; i < len; ++i, ++nd) {
        if (s[i] < '0' || s[i] > '9' || nd > 9) {
          nd = -1;
          break;
        }
        count = count * 10 + (s[i] - '0');
      }
      if (nd <= 0) {
        snprintf(why, cap, "a malformed end line (line %d)", line);
        return DC_FILE_DAMAGED;
      }
      if (count != line - 2) {
        snprintf(why, cap, "%d entries where its end line says %ld", line - 2, count);
        return DC_FILE_DAMAGED;
      }
      if (pos + len + 1 != n) {
        snprintf(why, cap, "data after its end line (line %d)", line);
        return DC_FILE_DAMAGED;
      }
      return DC_FILE_OK;
    }
    /* <16 hex> <key>\t<value> */
    const char *tab = len > 17 ? memchr(s + 17, '\t', len - 17) : NULL;
    unsigned long long sum = 0;
    int hex_ok = len > 17 && s[16] == ' ';
    for (int i = 0; i < 16 && hex_ok; ++i) {
      char c = s[i];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) hex_ok = 0;
      sum = sum << 4 | (unsigned long long)(d < 0 ? 0 : d);
    }
    if (!hex_ok || !tab) {
      snprintf(why, cap, "a malformed entry (line %d)", line);
      return DC_FILE_DAMAGED;
    }
    const char *key = s + 17, *value = tab + 1;
    size_t klen = (size_t)(tab - key), vlen = (size_t)(e - value);
    if (klen == 0 || vlen == 0 || klen > HD_DISKCACHE_MAX_KEY || vlen > HD_DISKCACHE_MAX_VALUE ||
        !text_ok(key, klen) || !text_ok(value, vlen)) {
      snprintf(why, cap, "a malformed entry (line %d)", line);
      return DC_FILE_DAMAGED;
    }
    if (entry_sum(key, klen, value, vlen) != sum) {
      snprintf(why, cap, "a checksum mismatch (line %d)", line);
      return DC_FILE_DAMAGED;
    }
    if (!table_set(t, key, klen, value, vlen)) {
      snprintf(why, cap, "out of host memory reading it");
      return DC_FILE_FOREIGN; /* not replaced: it may well be whole */
    }
    pos += len + 1;
    ++line;
  }
  snprintf(why, cap, "cut short (no end line after %d entries)", line - 2);
  return DC_FILE_DAMAGED;
}

/* Reads the file at path into t (empty unless OK); *why for DAMAGED and
 * FOREIGN. */
static dc_file file_read(const char *path, dc_table *t, hd_status **why) {
  *why = NULL;
  memset(t, 0, sizeof *t);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return DC_FILE_ABSENT; /* a save says why it cannot write */
    *why = hd_error(HD_ERR_INVALID_ARG, "engine cache %s: cannot open it: %s", path, strerror(errno));
    return DC_FILE_FOREIGN;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    *why = hd_error(HD_ERR_INVALID_ARG, "engine cache %s: not a regular file", path);
    return DC_FILE_FOREIGN;
  }
  if ((unsigned long long)sb.st_size > HD_DISKCACHE_MAX_FILE) {
    close(fd);
    *why = hd_error(HD_ERR_INVALID_ARG, "engine cache %s: %lld bytes, over the %u a cache may have", path,
                    (long long)sb.st_size, (unsigned)HD_DISKCACHE_MAX_FILE);
    return DC_FILE_FOREIGN;
  }
  /* Read to the end, not to st_size: a writer elsewhere never changes the
   * file in place (it renames a new one over it), so this is one version. */
  size_t cap = (size_t)sb.st_size + 1, n = 0;
  char *buf = malloc(cap);
  if (!buf) {
    close(fd);
    *why = hd_error(HD_ERR_OUT_OF_MEMORY, "engine cache %s: out of host memory", path);
    return DC_FILE_FOREIGN;
  }
  for (;;) {
    if (n == cap) {
      if (cap > HD_DISKCACHE_MAX_FILE) break;
      char *b = realloc(buf, cap * 2);
      if (!b) break;
      buf = b;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      free(buf);
      close(fd);
      *why = hd_error(HD_ERR_INVALID_ARG, "engine cache %s: cannot read it: %s", path, strerror(err));
      return DC_FILE_FOREIGN;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  char reason[160] = "";
  dc_file fs = n > HD_DISKCACHE_MAX_FILE ? DC_FILE_FOREIGN : parse(buf, n, t, reason, sizeof reason);
  if (n > HD_DISKCACHE_MAX_FILE) snprintf(reason, sizeof reason, "grew past %u bytes", (unsigned)HD_DISKCACHE_MAX_FILE);
  free(buf);
  if (fs != DC_FILE_OK) table_free(t);
  if (fs == DC_FILE_DAMAGED || fs == DC_FILE_FOREIGN)
    *why = hd_error(HD_ERR_INVALID_ARG, "engine cache %s: %s", path, reason);
  return fs;
}

static hd_status *write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return hd_error(HD_ERR_BACKEND, "%s", strerror(errno));
    p += w;
    n -= (size_t)w;
  }
  return NULL;
}

/* The folders above path, made where missing (as mkdir -p). */
static void make_parents(const char *path) {
  char dir[PATH_MAX_BYTES + 1];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return;
  *slash = '\0';
  for (char *p = dir + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    (void)mkdir(dir, 0755);
    *p = '/';
  }
  (void)mkdir(dir, 0755);
}

/* Writes every entry of t to a temporary file beside path and renames it
 * over path: a reader sees the old file or the new one, never a mix. */
static hd_status *file_write(const char *path, const dc_table *t) {
  size_t bytes = sizeof HEADER_PREFIX + 16 + 32;
  for (int i = 0; i < t->n; ++i) bytes += strlen(t->e[i].key) + strlen(t->e[i].value) + 20;
  char *buf = malloc(bytes);
  if (!buf) return hd_error(HD_ERR_OUT_OF_MEMORY, "engine cache %s: out of host memory", path);
  size_t n = (size_t)snprintf(buf, bytes, HEADER_PREFIX "%d\n", HD_DISKCACHE_FORMAT);
  for (int i = 0; i < t->n; ++i) {
    const dc_entry *e = &t->e[i];
    size_t kl = strlen(e->key), vl = strlen(e->value);
    n += (size_t)snprintf(buf + n, bytes - n, "%016llx %s\t%s\n", entry_sum(e->key, kl, e->value, vl), e->key,
                          e->value);
  }
  n += (size_t)snprintf(buf + n, bytes - n, "end %d\n", t->n);
  char tmp[PATH_MAX_BYTES + 16];
  snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
  make_parents(path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int err = errno;
    free(buf);
    return hd_error(HD_ERR_BACKEND, "engine cache %s: cannot create a file beside it: %s", path, strerror(err));
  }
  hd_status *st = write_all(fd, buf, n);
  free(buf);
  /* mkstemp makes the file 0600; a cache is no secret and may be shared. */
  if (!st && fchmod(fd, 0644) != 0) st = hd_error(HD_ERR_BACKEND, "fchmod: %s", strerror(errno));
  /* On disk before the rename, so a crash leaves the old file or the new. */
  if (!st && fsync(fd) != 0) st = hd_error(HD_ERR_BACKEND, "fsync: %s", strerror(errno));
  if (close(fd) != 0 && !st) st = hd_error(HD_ERR_BACKEND, "close: %s", strerror(errno));
  if (!st && rename(tmp, path) != 0) st = hd_error(HD_ERR_BACKEND, "rename: %s", strerror(errno));
  if (st) {
    (void)unlink(tmp);
    return hd_status_wrap(st, "engine cache %s: writing it: ", path);
  }
  return NULL;
}

hd_status *hd_diskcache_open(const char *path, hd_diskcache **out, hd_status **warning) {
  *out = NULL;
  *warning = NULL;
  if (!path || !path[0]) return hd_error(HD_ERR_INVALID_ARG, "engine cache: an empty path");
  if (strlen(path) > PATH_MAX_BYTES)
    return hd_error(HD_ERR_INVALID_ARG, "engine cache: a path longer than %d bytes", PATH_MAX_BYTES);
  hd_diskcache *dc = calloc(1, sizeof *dc);
  if (!dc || !(dc->path = strdup(path))) {
    free(dc);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "engine cache %s: out of host memory", path);
  }
  pthread_mutex_init(&dc->mu, NULL);
  (void)file_read(path, &dc->t, warning);
  *out = dc;
  return NULL;
}

void hd_diskcache_close(hd_diskcache *dc) {
  if (!dc) return;
  table_free(&dc->t);
  pthread_mutex_destroy(&dc->mu);
  free(dc->path);
  free(dc);
}

const char *hd_diskcache_path(const hd_diskcache *dc) { return dc->path; }

int hd_diskcache_count(hd_diskcache *dc) {
  pthread_mutex_lock(&dc->mu);
  int n = dc->t.n;
  pthread_mutex_unlock(&dc->mu);
  return n;
}

int hd_diskcache_get(hd_diskcache *dc, const char *key, char *value, size_t cap) {
  if (cap) value[0] = '\0';
  pthread_mutex_lock(&dc->mu);
  const dc_entry *e = table_find(&dc->t, key, key_hash(key));
  int found = e && strlen(e->value) < cap;
  if (found) memcpy(value, e->value, strlen(e->value) + 1);
  pthread_mutex_unlock(&dc->mu);
  return found;
}

hd_status *hd_diskcache_put(hd_diskcache *dc, const char *key, const char *value) {
  size_t kl = strlen(key), vl = strlen(value);
  if (!kl || kl > HD_DISKCACHE_MAX_KEY || !text_ok(key, kl))
    return hd_error(HD_ERR_INVALID_ARG, "engine cache: a key that is empty, over %d bytes, or not printable ASCII",
                    HD_DISKCACHE_MAX_KEY);
  if (!vl || vl > HD_DISKCACHE_MAX_VALUE || !text_ok(value, vl))
    return hd_error(HD_ERR_INVALID_ARG, "engine cache: a value that is empty, over %d bytes, or not printable ASCII",
                    HD_DISKCACHE_MAX_VALUE);
  pthread_mutex_lock(&dc->mu);
  dc_entry *e = table_set(&dc->t, key, kl, value, vl);
  if (e && !e->pending) {
    e->pending = 1;
    dc->npending++;
  }
  pthread_mutex_unlock(&dc->mu);
  return e ? NULL : hd_error(HD_ERR_OUT_OF_MEMORY, "engine cache: out of host memory");
}

/* An exclusive lock on "<path>.lock" (a separate file: the cache itself is
 * replaced by rename, and a lock on a replaced file guards nothing); -1
 * when there is none to be had: the save goes on without it. */
static int lock_take(const char *path) {
  char lp[PATH_MAX_BYTES + 8];
  snprintf(lp, sizeof lp, "%s.lock", path);
  make_parents(path);
  int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  while (flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    close(fd);
    return -1;
  }
  return fd;
}

static void lock_give(int fd) {
  if (fd < 0) return;
  (void)flock(fd, LOCK_UN);
  close(fd);
}

hd_status *hd_diskcache_save(hd_diskcache *dc) {
  pthread_mutex_lock(&dc->mu);
  if (!dc->npending) {
    pthread_mutex_unlock(&dc->mu);
    return NULL;
  }
  int lk = lock_take(dc->path);
  dc_table ft;
  hd_status *why = NULL, *st = NULL;
  dc_file fs = file_read(dc->path, &ft, &why);
  if (fs == DC_FILE_FOREIGN) {
    st = hd_error(hd_status_code(why), "%s; left as it is, the new entries not saved", hd_status_msg(why));
    hd_status_free(why);
  } else {
    hd_status_free(why); /* damaged: replaced by a whole one */
    /* Entries other writers saved: theirs where this cache has nothing new. */
    for (int i = 0; i < ft.n && !st; ++i) {
      dc_entry *mine = table_find(&dc->t, ft.e[i].key, ft.e[i].hash);
      if (mine && mine->pending) continue;
      if (!table_set(&dc->t, ft.e[i].key, strlen(ft.e[i].key), ft.e[i].value, strlen(ft.e[i].value)))
        st = hd_error(HD_ERR_OUT_OF_MEMORY, "engine cache %s: out of host memory", dc->path);
    }
    if (!st) st = file_write(dc->path, &dc->t);
    if (!st) {
      for (int i = 0; i < dc->t.n; ++i) dc->t.e[i].pending = 0;
      dc->npending = 0;
    }
  }
  table_free(&ft);
  lock_give(lk);
  pthread_mutex_unlock(&dc->mu);
  return st;
}
