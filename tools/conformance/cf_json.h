/* cf_json: just enough JSON for the runner's own result files: a string
 * escaper for writing and a small reader (objects, arrays, strings,
 * numbers, true/false/null) for merging results. */
#ifndef CF_JSON_H
#define CF_JSON_H

#include <stddef.h>
#include <stdio.h>

enum cf_jtype { CF_JNULL, CF_JBOOL, CF_JNUM, CF_JSTR, CF_JARR, CF_JOBJ };

typedef struct cf_jv {
  int type;
  double num;            /* CF_JNUM, CF_JBOOL (0/1) */
  char *str;             /* CF_JSTR */
  size_t n;              /* CF_JARR, CF_JOBJ: entries */
  struct cf_jv **items;  /* CF_JARR, CF_JOBJ values */
  char **keys;           /* CF_JOBJ */
} cf_jv;

/* Writes s as a JSON string literal (quotes included). */
void cf_json_str(FILE *f, const char *s);

/* Parses text; NULL on error with a message in err. */
cf_jv *cf_json_parse(const char *text, char *err, size_t errlen);
/* Reads and parses a file. */
cf_jv *cf_json_load(const char *path, char *err, size_t errlen);
void cf_json_free(cf_jv *v);

/* Member of an object (NULL if absent or not an object). */
const cf_jv *cf_json_get(const cf_jv *obj, const char *key);
/* String member or def; number member or def. */
const char *cf_json_gets(const cf_jv *obj, const char *key, const char *def);
double cf_json_getn(const cf_jv *obj, const char *key, double def);

#endif
