/* hd_diskcache: a small key -> value cache kept in one file, shared by the
 * threads of a process and by processes (the GPU backends keep their timed
 * engine choices in it: provider option engine_cache_file).
 *
 * Keys and values are printable ASCII without tabs. The file is text:
 *     hipdnn-ep cache 1
 *     <checksum> <key>\t<value>        one line per entry; the checksum is
 *     ...                              FNV-1a 64 of "key\tvalue", in hex
 *     end <number of entries>
 * A file is taken whole or not at all: a bad checksum, a malformed line, a
 * missing end line (a truncated file) or another format version gives a
 * warning and an empty cache, never a partly read one.
 *
 * Saving is safe with any number of writers: under an advisory lock on
 * "<path>.lock" (best effort: where locks do not work, concurrent savers
 * may drop each other's new entries, never corrupt the file) it re-reads the
 * file, merges it with this cache's entries (this cache's win), writes a
 * temporary file beside it and renames it over the file. A file that is not
 * a cache of this format (another version, or not a cache at all: a
 * mistyped path) is never replaced. */
#ifndef HD_DISKCACHE_H
#define HD_DISKCACHE_H

#include <stddef.h>

#include "common/hd_status.h"

#define HD_DISKCACHE_FORMAT 1
#define HD_DISKCACHE_MAX_KEY 1024  /* bytes, without the terminator */
#define HD_DISKCACHE_MAX_VALUE 256
#define HD_DISKCACHE_MAX_FILE (16u << 20)

typedef struct hd_diskcache hd_diskcache;

/* Opens the cache kept at path and reads the file. A missing file is an
 * empty cache. A file that cannot be read or is not a whole cache of this
 * format leaves the cache empty and sets *warning (the caller logs and
 * frees it); *out is usable either way. Fails only for a bad path or host
 * memory. */
hd_status *hd_diskcache_open(const char *path, hd_diskcache **out, hd_status **warning);
/* Frees the cache without saving. */
void hd_diskcache_close(hd_diskcache *dc);
const char *hd_diskcache_path(const hd_diskcache *dc);
/* Entries held now. */
int hd_diskcache_count(hd_diskcache *dc);

/* Copies key's value into value[cap]; 1 when found, else 0 (value ""). */
int hd_diskcache_get(hd_diskcache *dc, const char *key, char *value, size_t cap);
/* Sets key's value (kept in memory until hd_diskcache_save). INVALID_ARG
 * for a key or value that is empty, too long, or not printable ASCII
 * without tabs. */
hd_status *hd_diskcache_put(hd_diskcache *dc, const char *key, const char *value);
/* Writes the entries put since the last save, merged with the file as it
 * is now; does nothing when none were put. Entries the file gained from
 * other writers become visible to hd_diskcache_get. An error leaves the
 * file as it was and the new entries pending for the next save. */
hd_status *hd_diskcache_save(hd_diskcache *dc);

/* FNV-1a 64 of n bytes, continuing from h (start: HD_FNV_OFFSET): the
 * checksum of the entries, also usable to shorten keys. */
#define HD_FNV_OFFSET 0xcbf29ce484222325ull
unsigned long long hd_fnv1a64(unsigned long long h, const void *p, size_t n);

#endif
