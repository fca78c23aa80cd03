/* plan_fuse_projections: MatMuls of one input by constant weights whose
 * outputs an Attention reads as Q, K and V (BERT's three projections,
 * after the attention and bias fusions) become one MatMul by the weights
 * side by side, and a Split of its output's last axis:
 *   A x [K, N1] (+ b1), A x [K, N2] (+ b2), ...
 *   -> A x [K, N1 + N2 + ...] (+ [b1 b2 ...]) -> Split(N1, N2, ...)
 * One GEMM of N1 + N2 + ... columns instead of several small ones (at
 * BERT's 128 rows each of them is latency, not work), and the plan reads
 * the Split's outputs in place as strided views (plan_build.c), so the
 * Split costs no copy either. Only where every output reaches the
 * Attention through views: anything else would make the Split a copy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_fuse.h"

#define MAX_PARTS 16

/* v is read only as an Attention's Q, K or V, directly or through views
 * (Reshape, ...), and leaves no partition. */
static int read_by_attention(const ir_graph *g, int v, int depth) {
  const ir_value *val = &g->values[v];
  if (depth > 4 || val->graph_output != IR_NONE || val->nuses < 1) return 0;
  int readers = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int k = 0; k < n->nin; k++) {
      if (n->in[k] != v) continue;
      readers++;
      if (n->kind == OP_ATTENTION) {
        const op_attention *a = &OP_P(n)->attention;
        if (k != a->in_q && k != a->in_k && k != a->in_v) return 0;
      } else if (op_get((op_kind)n->kind) && op_get((op_kind)n->kind)->view && k == 0 && n->nout >= 1 &&
                 n->out[0] != IR_NONE) {
        if (!read_by_attention(g, n->out[0], depth + 1)) return 0;
      } else {
        return 0;
      }
    }
  }
  return readers == val->nuses;
}

/* Node i is a MatMul of input a by a constant [K, N] weight of a's dtype
 * (and a constant [N] bias), N known, whose output an Attention reads;
 * *n its N. Epilogues must match the first one's: same bias presence,
 * activation and scales. */
static int projection(const ir_graph *g, int i, int a, const op_gemm *like, int64_t *n) {
  const ir_node *mm = &g->nodes[i];
  if (!pf_is_kind(mm, OP_MATMUL) || mm->nin < 2 || mm->in[0] != a || mm->nout != 1) return 0;
  const op_gemm *gm = &OP_P(mm)->gemm;
  if (gm->trans_a || gm->trans_b || gm->alpha != 1.0f || gm->act.kind != OP_ACT_NONE) return 0;
  if (like && (gm->has_c != like->has_c || gm->beta != like->beta)) return 0;
  const ir_value *w = &g->values[mm->in[1]], *x = &g->values[a], *y = &g->values[mm->out[0]];
  if (!w->is_const || !w->data || w->rank != 2 || w->dtype != x->dtype || y->dtype != x->dtype || w->dims[1] <= 0 ||
      x->rank < 2 || y->rank != x->rank || w->dims[0] != x->dims[x->rank - 1])
    return 0;
  if (gm->has_c) {
    if (mm->nin < 3 || mm->in[2] == IR_NONE) return 0;
    const ir_value *b = &g->values[mm->in[2]];
    if (!b->is_const || !b->data || b->dtype != x->dtype || ir_numel(b->rank, b->dims) != w->dims[1]) return 0;
  }
  *n = w->dims[1];
  return read_by_attention(g, mm->out[0], 0);
}

hd_status *pf_merge_projections(ir_graph *g, int ni, int *changed) {
  int a = g->nodes[ni].nin >= 1 ? g->nodes[ni].in[0] : IR_NONE;
  int64_t n[MAX_PARTS], total = 0;
  int parts[MAX_PARTS], np = 0;
  if (a == IR_NONE || !projection(g, ni, a, NULL, &n[0])) return NULL;
  const op_gemm first = OP_P(&g->nodes[ni])->gemm;
  for (int i = ni; i < g->nnodes && np < MAX_PARTS; i++)
    if (i == ni || projection(g, i, a, &first, &n[np])) parts[np++] = i;
  if (np < 2) return NULL;
  for (int k = 0; k < np; k++) total += n[k];
  const ir_value *x = &g->values[a];
  const int dt = x->dtype;
  const int64_t kdim = x->dims[x->rank - 1];
  const size_t es = hd_dtype_size(dt), row = (size_t)total * es;
  char *w = malloc(row * (size_t)kdim), *b = first.has_c ? malloc(row) : NULL;
  if (!w || (first.has_c && !b)) {
    free(w);
    free(b);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "merging projections: out of host memory");
  }
  size_t col = 0; /* bytes into a merged row */
  for (int k = 0; k < np; k++) {
    const ir_node *mm = &g->nodes[parts[k]];
    const char *src = g->values[mm->in[1]].data;
    const size_t part = (size_t)n[k] * es;
    for (int64_t r = 0; r < kdim; r++) memcpy(w + (size_t)r * row + col, src + (size_t)r * part, part);
    if (b) memcpy(b + col, g->values[mm->in[2]].data, part);
    col += part;
  }
  /* the merged weight, bias, output and split sizes (values may move: no pointers into them kept) */
  const ir_node *lead = &g->nodes[ni];
  char name[512];
  int64_t wd[2] = {kdim, total}, ydims[IR_MAX_RANK], nparts = np;
  int yr = x->rank, wv = IR_NONE, bv = IR_NONE, yv = IR_NONE, sv = IR_NONE, outs[MAX_PARTS];
  memcpy(ydims, x->dims, sizeof ydims);
  ydims[yr - 1] = total;
  for (int k = 0; k < np; k++) outs[k] = g->nodes[parts[k]].out[0];
  snprintf(name, sizeof name, "%s/merged", lead->name);
  hd_status *st = ir_graph_add_value(g, name, dt, 2, wd, &wv);
  if (!st) st = ir_value_set_data(g, wv, w, row * (size_t)kdim);
  if (!st && b) {
    snprintf(name, sizeof name, "%s/merged_bias", g->nodes[ni].name);
    st = ir_graph_add_value(g, name, dt, 1, &total, &bv);
    if (!st) st = ir_value_set_data(g, bv, b, row);
  }
  free(w);
  free(b);
  HD_TRY(st);
  snprintf(name, sizeof name, "%s/merged_out", g->nodes[ni].name);
  HD_TRY(ir_graph_add_value(g, name, dt, yr, ydims, &yv));
  snprintf(name, sizeof name, "%s/merged_sizes", g->nodes[ni].name);
  HD_TRY(ir_graph_add_value(g, name, HD_DT_I64, 1, &nparts, &sv));
  HD_TRY(ir_value_set_data(g, sv, n, sizeof(int64_t) * (size_t)np));
  /* the first MatMul becomes the merged one; the Split follows it */
  ir_node *mm = &g->nodes[ni];
  mm->in[1] = wv;
  if (first.has_c) mm->in[2] = bv;
  mm->out[0] = yv;
  for (int k = 1; k < np; k++) {
    ir_node *gone = &g->nodes[parts[k]];
    pf_absorb(mm, gone);
  }
  snprintf(name, sizeof name, "%s/split", g->nodes[ni].name);
  int split_in[2] = {yv, sv};
  HD_TRY(ir_graph_insert_node(g, ni + 1, OP_SPLIT, name, "Split", 13, split_in, 2, outs, np));
  ir_node *split = &g->nodes[ni + 1];
  memset(&split->p, 0, sizeof split->p);
  OP_P(split)->copy.axis = -1;
  *changed = 1;
  return NULL;
}
