/* cf_model: model.onnx -> op types and graph input/output kinds. */
#include "tools/conformance/cf_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void kind_of(const Onnx__ValueInfoProto *v, int *kind, int *dtype) {
  *kind = CF_KIND_OTHER;
  *dtype = 0;
  const Onnx__TypeProto *t = v->type;
  if (!t) return;
  switch (t->value_case) {
  case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
    *kind = CF_KIND_TENSOR;
    if (t->tensor_type && t->tensor_type->has_elem_type) *dtype = t->tensor_type->elem_type;
    break;
  case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: *kind = CF_KIND_SEQUENCE; break;
  case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: *kind = CF_KIND_OPTIONAL; break;
  default: break;
  }
}

unsigned char *cf_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) {
      buf = malloc((size_t)n + 1);
      if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
      *len = (size_t)n;
    }
  }
  fclose(f);
  return buf;
}

int cf_model_read(const char *path, cf_model *m, char *err, size_t errlen) {
  memset(m, 0, sizeof *m);
  size_t len = 0;
  unsigned char *buf = cf_slurp(path, &len);
  if (!buf) { snprintf(err, errlen, "cannot read %s", path); return 1; }
  Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
  free(buf);
  if (!mp || !mp->graph) {
    snprintf(err, errlen, "%s is not a ModelProto with a graph", path);
    if (mp) onnx__model_proto__free_unpacked(mp, NULL);
    return 1;
  }
  const Onnx__GraphProto *g = mp->graph;
  int rc = 0;

  m->n_nodes = g->n_node;
  m->ops = calloc(g->n_node ? g->n_node : 1, sizeof *m->ops);
  m->input_kinds = calloc(g->n_input + 1, sizeof(int));
  m->input_dtypes = calloc(g->n_input + 1, sizeof(int));
  m->output_kinds = calloc(g->n_output + 1, sizeof(int));
  m->output_dtypes = calloc(g->n_output + 1, sizeof(int));
  if (!m->ops || !m->input_kinds || !m->input_dtypes || !m->output_kinds || !m->output_dtypes) {
    rc = 1;
    goto done;
  }
  for (size_t i = 0; i < g->n_node; ++i) {
    const Onnx__NodeProto *n = g->node[i];
    const char *dom = n->domain ? n->domain : "";
    const char *op = n->op_type ? n->op_type : "?";
    char name[256];
    if (dom[0] && strcmp(dom, "ai.onnx") != 0) snprintf(name, sizeof name, "%s:%s", dom, op);
    else snprintf(name, sizeof name, "%s", op);
    int seen = 0;
    for (size_t k = 0; k < m->n_ops && !seen; ++k) seen = strcmp(m->ops[k], name) == 0;
    if (!seen) {
      if (!(m->ops[m->n_ops] = strdup(name))) { rc = 1; goto done; }
      m->n_ops++;
    }
  }
  qsort(m->ops, m->n_ops, sizeof *m->ops, cmp_str);

  /* Graph inputs that are also initializers are not fed by the test data
   * (the ONNX runner skips them the same way when it numbers input_K.pb). */
  for (size_t i = 0; i < g->n_input; ++i) {
    const char *nm = g->input[i]->name ? g->input[i]->name : "";
    int init = 0;
    for (size_t k = 0; k < g->n_initializer && !init; ++k)
      init = g->initializer[k]->name && strcmp(g->initializer[k]->name, nm) == 0;
    if (init) continue;
    kind_of(g->input[i], &m->input_kinds[m->n_inputs], &m->input_dtypes[m->n_inputs]);
    m->n_inputs++;
  }
  for (size_t i = 0; i < g->n_output; ++i)
    kind_of(g->output[i], &m->output_kinds[i], &m->output_dtypes[i]);
  m->n_outputs = g->n_output;

done:
  onnx__model_proto__free_unpacked(mp, NULL);
  if (rc) {
    snprintf(err, errlen, "out of memory reading %s", path);
    cf_model_free(m);
  }
  return rc;
}

void cf_model_free(cf_model *m) {
  for (size_t i = 0; i < m->n_ops; ++i) free(m->ops[i]);
  free(m->ops);
  free(m->input_kinds);
  free(m->input_dtypes);
  free(m->output_kinds);
  free(m->output_dtypes);
  memset(m, 0, sizeof *m);
}
