/* ir_graph: building and checking the EP's graph. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

#include "common/hd_math.h"

static char *dup_str(const char *s) {
  size_t n = strlen(s ? s : "") + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s ? s : "", n);
  return d;
}

/* Grows *arr (of elem bytes) so that index `need` fits. */
static hd_status *grow(void **arr, int *cap, int need, size_t elem) {
  if (need < *cap) return NULL;
  int ncap = *cap ? *cap * 2 : 16;
  while (ncap <= need) ncap *= 2;
  void *p = realloc(*arr, (size_t)ncap * elem);
  if (!p) return hd_error(HD_ERR_OUT_OF_MEMORY, "ir: out of host memory growing graph");
  memset((char *)p + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
  *arr = p;
  *cap = ncap;
  return NULL;
}

hd_status *ir_graph_create(ir_graph **out) {
  ir_graph *g;
  HD_ALLOC_OR_RETURN(g, 1);
  *out = g;
  return NULL;
}

void ir_graph_free(ir_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->nvalues; i++) {
    free(g->values[i].name);
    free(g->values[i].data);
  }
  for (int i = 0; i < g->nnodes; i++) {
    free(g->nodes[i].name);
    free(g->nodes[i].op_type);
    free(g->nodes[i].fused);
    free(g->nodes[i].in);
    free(g->nodes[i].out);
  }
  free(g->values);
  free(g->by_name);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  free(g);
}

static size_t name_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return (size_t)h;
}

uint32_t ir_sym_hash(const char *name) {
  uint32_t h = (uint32_t)name_hash(name);
  return h ? h : 1;
}

int ir_dims_equal(const ir_value *a, int i, const ir_value *b, int j) {
  if (a->dims[i] >= 0 || b->dims[j] >= 0) return a->dims[i] == b->dims[j];
  return a->sym[i] != 0 && a->sym[i] == b->sym[j];
}

static void index_put(ir_graph *g, int v) {
  size_t h = name_hash(g->values[v].name) & (g->by_name_cap - 1);
  while (g->by_name[h]) h = (h + 1) & (g->by_name_cap - 1);
  g->by_name[h] = v + 1;
}

/* Room in the name index for one more value. */
static hd_status *index_grow(ir_graph *g) {
  if (g->by_name_cap > 2 * (size_t)(g->nvalues + 1)) return NULL;
  size_t cap = g->by_name_cap ? 2 * g->by_name_cap : 64;
  while (cap <= 2 * (size_t)(g->nvalues + 1)) cap *= 2;
  int *idx = calloc(cap, sizeof *idx);
  if (!idx) return hd_error(HD_ERR_OUT_OF_MEMORY, "ir: out of host memory");
  free(g->by_name);
  g->by_name = idx;
  g->by_name_cap = cap;
  for (int v = 0; v < g->nvalues; v++) index_put(g, v);
  return NULL;
}

hd_status *ir_graph_add_value(ir_graph *g, const char *name, int dtype, int rank,
                              const int64_t *dims, int *idx) {
  if (rank > IR_MAX_RANK)
    return hd_error(HD_ERR_NOT_SUPPORTED, "value '%s': rank %d exceeds %d", name, rank, IR_MAX_RANK);
  HD_TRY(index_grow(g));
  HD_TRY(grow((void **)&g->values, &g->cap_values, g->nvalues, sizeof(ir_value)));
  ir_value *v = &g->values[g->nvalues];
  memset(v, 0, sizeof *v);
  v->name = dup_str(name);
  if (!v->name) return hd_error(HD_ERR_OUT_OF_MEMORY, "ir: out of host memory");
  v->dtype = dtype;
  v->rank = rank;
  for (int i = 0; i < rank && dims; i++) v->dims[i] = dims[i];
  v->producer = IR_NONE;
  v->graph_input = IR_NONE;
  v->graph_output = IR_NONE;
  *idx = g->nvalues++;
  index_put(g, *idx);
  return NULL;
}

void ir_value_drop_data(ir_graph *g, int v) {
  free(g->values[v].data);
  g->values[v].data = NULL;
}

int ir_graph_find_value(const ir_graph *g, const char *name) {
  if (!g->by_name_cap) return IR_NONE;
  for (size_t h = name_hash(name) & (g->by_name_cap - 1);; h = (h + 1) & (g->by_name_cap - 1)) {
    int v = g->by_name[h] - 1;
    if (v < 0) return IR_NONE;
    if (strcmp(g->values[v].name, name) == 0) return v;
  }
}

hd_status *ir_value_set_data(ir_graph *g, int v, const void *data, size_t nbytes) {
  ir_value *val = &g->values[v];
  void *copy = malloc(nbytes ? nbytes : 1);
  if (!copy) return hd_error(HD_ERR_OUT_OF_MEMORY, "ir: out of host memory copying '%s'", val->name);
  if (nbytes) memcpy(copy, data, nbytes);
  free(val->data);
  val->data = copy;
  val->nbytes = nbytes;
  val->is_const = 1;
  return NULL;
}

hd_status *ir_graph_add_node(ir_graph *g, int kind, const char *name, const char *op_type,
                             int opset, const int *in, int nin, const int *out, int nout,
                             int *idx) {
  HD_TRY(grow((void **)&g->nodes, &g->cap_nodes, g->nnodes, sizeof(ir_node)));
  ir_node *n = &g->nodes[g->nnodes];
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->opset = opset;
  n->nin = nin;
  n->nout = nout;
  n->name = dup_str(name);
  n->op_type = dup_str(op_type);
  n->in = malloc(sizeof(int) * (size_t)(nin ? nin : 1));
  n->out = malloc(sizeof(int) * (size_t)(nout ? nout : 1));
  if (!n->name || !n->op_type || !n->in || !n->out) {
    free(n->name); free(n->op_type); free(n->in); free(n->out);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "ir: out of host memory");
  }
  if (nin) memcpy(n->in, in, sizeof(int) * (size_t)nin);
  if (nout) memcpy(n->out, out, sizeof(int) * (size_t)nout);
  if (idx) *idx = g->nnodes;
  g->nnodes++;
  return NULL;
}

void ir_node_absorb(ir_node *into, const ir_node *gone) {
  const char *parts[3] = {into->fused, gone->name, gone->fused};
  size_t len = 1;
  for (int i = 0; i < 3; i++) len += parts[i] && parts[i][0] ? strlen(parts[i]) + 1 : 0;
  char *s = malloc(len);
  if (!s) return;
  s[0] = '\0';
  for (int i = 0; i < 3; i++) {
    if (!parts[i] || !parts[i][0]) continue;
    if (s[0]) strcat(s, ",");
    strcat(s, parts[i]);
  }
  free(into->fused);
  into->fused = s;
}

hd_status *ir_graph_insert_node(ir_graph *g, int at, int kind, const char *name, const char *op_type,
                                int opset, const int *in, int nin, const int *out, int nout) {
  if (at < 0 || at > g->nnodes) return hd_error(HD_ERR_INTERNAL, "ir: insert at node %d of %d", at, g->nnodes);
  int idx;
  HD_TRY(ir_graph_add_node(g, kind, name, op_type, opset, in, nin, out, nout, &idx));
  ir_node n = g->nodes[idx];
  memmove(&g->nodes[at + 1], &g->nodes[at], sizeof(ir_node) * (size_t)(idx - at));
  g->nodes[at] = n;
  return NULL;
}

hd_status *ir_graph_place_appended(ir_graph *g, int first, const int *after) {
  int n = g->nnodes - first;
  if (first < 0 || n < 0) return hd_error(HD_ERR_INTERNAL, "ir: nodes from %d of %d placed", first, g->nnodes);
  if (!n) return NULL;
  ir_node *order = malloc(sizeof *order * (size_t)g->nnodes);
  if (!order) return hd_error(HD_ERR_OUT_OF_MEMORY, "ir: out of host memory");
  int w = 0;
  for (int k = 0; k < n; k++)
    if (after[k] == IR_NONE) order[w++] = g->nodes[first + k];
  for (int i = 0; i < first; i++) {
    order[w++] = g->nodes[i];
    for (int k = 0; k < n; k++)
      if (after[k] == i) order[w++] = g->nodes[first + k];
  }
  if (w != g->nnodes) {
    free(order);
    return hd_error(HD_ERR_INTERNAL, "ir: a placed node follows no node");
  }
  free(g->nodes);
  g->nodes = order;
  g->cap_nodes = g->nnodes;
  return NULL;
}

static hd_status *copy_ints(int **dst, int *ndst, const int *src, int n) {
  free(*dst);
  *dst = malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (!*dst) return hd_error(HD_ERR_OUT_OF_MEMORY, "ir: out of host memory");
  if (n) memcpy(*dst, src, sizeof(int) * (size_t)n);
  *ndst = n;
  return NULL;
}

hd_status *ir_graph_set_io(ir_graph *g, const int *inputs, int ninputs, const int *outputs,
                           int noutputs) {
  HD_TRY(copy_ints(&g->inputs, &g->ninputs, inputs, ninputs));
  return copy_ints(&g->outputs, &g->noutputs, outputs, noutputs);
}

hd_status *ir_graph_finalize(ir_graph *g) {
  for (int i = 0; i < g->nvalues; i++) {
    g->values[i].producer = IR_NONE;
    g->values[i].nuses = 0;
    g->values[i].graph_input = IR_NONE;
    g->values[i].graph_output = IR_NONE;
  }
  for (int i = 0; i < g->ninputs; i++) g->values[g->inputs[i]].graph_input = i;
  for (int i = 0; i < g->noutputs; i++) g->values[g->outputs[i]].graph_output = i;
  for (int n = 0; n < g->nnodes; n++) {
    ir_node *node = &g->nodes[n];
    if (node->dead) continue;
    for (int i = 0; i < node->nin; i++) {
      int v = node->in[i];
      if (v == IR_NONE) continue;
      if (v < 0 || v >= g->nvalues)
        return hd_error(HD_ERR_INTERNAL, "node '%s': input %d out of range", node->name, i);
      ir_value *val = &g->values[v];
      if (val->producer == IR_NONE && val->graph_input == IR_NONE && !val->is_const &&
          val->rank >= 0 && val->dtype != HD_DT_UNDEFINED) {
        /* a value produced by a later node, or by nothing at all */
        int later = 0;
        for (int m = n + 1; m < g->nnodes && !later; m++)
          for (int j = 0; j < g->nodes[m].nout; j++)
            if (g->nodes[m].out[j] == v) later = 1;
        if (later)
          return hd_error(HD_ERR_INVALID_ARG, "node '%s': input '%s' is produced later: graph not topologically sorted",
                          node->name, val->name);
      }
      val->nuses++;
    }
    for (int i = 0; i < node->nout; i++) {
      int v = node->out[i];
      if (v == IR_NONE) continue;
      if (g->values[v].producer != IR_NONE)
        return hd_error(HD_ERR_INVALID_ARG, "value '%s' has two producers", g->values[v].name);
      g->values[v].producer = n;
    }
  }
  return NULL;
}

int64_t ir_numel(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0 || dims[i] > HD_MAX_NUMEL) return -1;
    if (!hd_mul_i64(n, dims[i], &n) || n > HD_MAX_NUMEL) {
      /* a later 0 still makes it empty */
      for (int j = i + 1; j < rank; j++)
        if (dims[j] == 0) return 0;
      return -1;
    }
  }
  return n;
}

void *ir_tensor_addr(const ir_plan *p, int value, const ir_bindings *b) {
  const ir_tensor *t = &p->t[value];
  switch (t->storage) {
    case IR_ST_INPUT: return b->inputs[t->index];
    case IR_ST_OUTPUT: return b->outputs[t->index];
    case IR_ST_CONST: return b->consts ? b->consts[value] : p->g->values[value].data;
    case IR_ST_ARENA: return (char *)b->arena + t->offset;
    case IR_ST_ALIAS: {
      char *root = ir_tensor_addr(p, t->index, b);
      return root ? root + t->offset : NULL;
    }
    case IR_ST_FOLDED: return b->folded ? (char *)b->folded + t->offset : (void *)t->host;
    default: return (void *)t->host; /* while a plan is built: a view of a known value */
  }
}

void *ir_input_addr(const ir_plan *p, const ir_node *n, int k, const ir_bindings *b) {
  return k < 0 || k >= n->nin || n->in[k] == IR_NONE ? NULL : ir_tensor_addr(p, n->in[k], b);
}

void *ir_output_addr(const ir_plan *p, const ir_node *n, int k, const ir_bindings *b) {
  return k < 0 || k >= n->nout || n->out[k] == IR_NONE ? NULL : ir_tensor_addr(p, n->out[k], b);
}

void ir_tensor_strides(const ir_tensor *t, int64_t *st) {
  int64_t acc = 1;
  for (int i = t->rank - 1; i >= 0; i--) {
    st[i] = t->strided ? t->strides[i] : acc;
    acc *= t->dims[i];
  }
}
