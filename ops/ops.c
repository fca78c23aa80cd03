#include "ops/ops.h"

#include <string.h>

#include "common/hd_math.h"

#include "ops/op_defs.h"

static const op_def *const op_table[OP_COUNT] = {
#define OP_DEF_(kind, family) [OP_##kind] = &op_def_##kind,
    OP_LIST(OP_DEF_)
#undef OP_DEF_
};

static const char *const family_names[OP_COUNT] = {
#define OP_FAM_(kind, family) [OP_##kind] = #family,
    OP_LIST(OP_FAM_)
#undef OP_FAM_
};

const char *op_family_name(op_kind kind) {
  return kind > OP_UNKNOWN && kind < OP_COUNT ? family_names[kind] : "none";
}

int op_node_in_family(const ir_node *n, const char *family) {
  return n->kind != OP_UNKNOWN && strcmp(op_family_name((op_kind)n->kind), family) == 0;
}

static const char *norm_domain(const char *d) {
  return !d || !d[0] || strcmp(d, "ai.onnx") == 0 ? "" : d;
}

const op_def *op_find(const char *domain, const char *op_type, int since_version) {
  const char *want = norm_domain(domain);
  for (int k = 1; k < OP_COUNT; k++) {
    const op_def *d = op_table[k];
    if (strcmp(d->onnx_type, op_type) == 0 && strcmp(norm_domain(d->domain), want) == 0 &&
        since_version >= d->min_opset && since_version <= d->max_opset)
      return d;
  }
  return NULL;
}

int op_opsets(const char *domain, const char *op_type, int *min_opset, int *max_opset) {
  const char *want = norm_domain(domain);
  int found = 0;
  for (int k = 1; k < OP_COUNT; k++) {
    const op_def *d = op_table[k];
    if (strcmp(d->onnx_type, op_type) != 0 || strcmp(norm_domain(d->domain), want) != 0) continue;
    if (!found || d->min_opset < *min_opset) *min_opset = d->min_opset;
    if (!found || d->max_opset > *max_opset) *max_opset = d->max_opset;
    found = 1;
  }
  return found;
}

const op_def *op_get(op_kind kind) {
  return (kind > OP_UNKNOWN && kind < OP_COUNT) ? op_table[kind] : NULL;
}

const char *op_name(op_kind kind) {
  const op_def *d = op_get(kind);
  return d ? d->onnx_type : "unknown";
}

hd_status *op_attr_int(const op_attrs *a, const char *name, int64_t dflt, int64_t *v) {
  int found = 0;
  HD_TRY(a->get_int(a->ctx, name, v, &found));
  if (!found) *v = dflt;
  return NULL;
}

hd_status *op_attr_float(const op_attrs *a, const char *name, float dflt, float *v) {
  int found = 0;
  HD_TRY(a->get_float(a->ctx, name, v, &found));
  if (!found) *v = dflt;
  return NULL;
}

static int static_shape(const ir_value *v) {
  if (v->rank < 0) return 0;
  for (int d = 0; d < v->rank; d++)
    if (v->dims[d] < 0) return 0;
  return 1;
}

hd_status *op_check_static(const ir_graph *g, const ir_node *n, ir_tensor *t) {
  const op_def *def = op_get(n->kind);
  if (!def) return NULL;
  for (int k = 0; k < n->nin; k++) {
    if (n->in[k] == IR_NONE) continue;
    const ir_value *val = &g->values[n->in[k]];
    if (!static_shape(val)) return NULL;
    /* values computed from others (a shape) are known only in a plan */
    if (op_input_on_host(n, k, 0) && !(val->is_const && (val->data || val->nbytes == 0))) return NULL;
  }
  for (int k = 0; k < n->nin; k++) {
    int v = n->in[k];
    if (v == IR_NONE) continue;
    const ir_value *val = &g->values[v];
    memset(&t[v], 0, sizeof t[v]);
    t[v].dtype = val->dtype;
    t[v].rank = val->rank;
    memcpy(t[v].dims, val->dims, sizeof val->dims);
    t[v].storage = val->is_const ? IR_ST_CONST : IR_ST_INPUT;
    t[v].index = v;
    t[v].host = val->is_const ? val->data : NULL;
    t[v].nbytes = val->is_const ? val->nbytes : 0;
  }
  for (int k = 0; k < n->nout; k++)
    if (n->out[k] != IR_NONE) {
      memset(&t[n->out[k]], 0, sizeof t[n->out[k]]);
      t[n->out[k]].rank = -1;
    }
  op_params p = *OP_P(n);
  hd_status *st = def->infer(g, n, t, &p);
  if (st) {
    hd_status *ns = hd_error(HD_ERR_NOT_SUPPORTED, "fails at its input shapes: %s", hd_status_msg(st));
    hd_status_free(st);
    return ns;
  }
  for (int k = 0; k < n->nout; k++) {
    int v = n->out[k];
    if (v == IR_NONE) continue;
    const ir_tensor *o = &t[v];
    if (o->rank < 0) return hd_error(HD_ERR_NOT_SUPPORTED, "output %d got no shape", k);
    if (ir_numel(o->rank, o->dims) < 0)
      return hd_error(HD_ERR_NOT_SUPPORTED, "output %d has more than %lld elements", k, (long long)HD_MAX_NUMEL);
  }
  return NULL;
}

int op_input_on_host(const ir_node *n, int k, int fold) {
  const op_def *d = op_get((op_kind)n->kind);
  if (!d || k >= n->nin || n->in[k] == IR_NONE) return 0;
  if (k < 32 && (d->value_inputs >> k) & 1u) return 1;
  return fold && !d->shape_only;
}

void op_fold_closure(const ir_graph *g, const uint8_t *claimed, uint8_t *fold) {
  for (int i = g->nnodes - 1; i >= 0; i--) { /* consumers come after producers */
    const ir_node *n = &g->nodes[i];
    if (n->dead || (claimed && !claimed[i])) continue;
    for (int k = 0; k < n->nin; k++) {
      if (!op_input_on_host(n, k, fold[i])) continue;
      int p = g->values[n->in[k]].producer;
      if (p != IR_NONE && (!claimed || claimed[p])) fold[p] = 1;
    }
  }
}

int op_node_host_known(const ir_graph *g, const ir_node *n) {
  for (int k = 0; k < n->nout; k++)
    if (n->out[k] != IR_NONE && !g->values[n->out[k]].host_known) return 0;
  return 1;
}

int op_mark_host_known(ir_graph *g, uint8_t *runs) {
  for (int v = 0; v < g->nvalues; v++) g->values[v].host_known = g->values[v].is_const;
  int count = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    const op_def *d = op_get((op_kind)n->kind);
    if (n->dead || !d || !runs[i]) continue;
    for (int k = 0; k < n->nin; k++)
      if (op_input_on_host(n, k, 0) && !g->values[n->in[k]].host_known) runs[i] = 0;
    if (!runs[i]) continue;
    int known = 1;
    for (int k = 0; k < n->nin && known && !d->shape_only; k++)
      if (n->in[k] != IR_NONE && !g->values[n->in[k]].host_known) known = 0;
    if (!known) continue;
    for (int k = 0; k < n->nout; k++)
      if (n->out[k] != IR_NONE) g->values[n->out[k]].host_known = 1;
    count++;
  }
  return count;
}
