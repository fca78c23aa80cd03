/* plan_match: finds a small DAG of ops (a pattern) in a graph, for fusions
 * that span more than a producer and its consumer: attention's MatMul ->
 * scale -> mask -> Softmax -> MatMul, LayerNorm written as ReduceMean, Sub,
 * Pow, Sqrt, Div, GELU written with Erf. A pattern is declared as data (in
 * the ops/ file or fusion table that uses it); matching is a backtracking
 * walk from the pattern's root down its inputs:
 *   - a pattern node matches a live graph node of its kind (or any kind),
 *     with at least as many inputs, and its predicate (when given) agrees;
 *   - an input that names another pattern node must be produced by the
 *     graph node that pattern node matches (a pattern node used twice must
 *     match one graph node: a diamond stays a diamond);
 *   - an input that names a capture slot binds a graph value, the same one
 *     wherever the slot appears;
 *   - commutative nodes may match their first two inputs swapped;
 *   - every matched node but the root is used only inside the match and
 *     is no graph output, so fusing it away changes nothing else. */
#include <string.h>

#include "ops/ops.h"
#include "plan/plan.h"

typedef struct match_state {
  const ir_graph *g;
  const pm_pattern *p;
  pm_match *m;
  void *user;
} match_state;

static int match_node(match_state *s, int pi, int gn);

/* Input j of pattern node pn against graph value v. */
static int match_input(match_state *s, const pm_node *pn, int j, int v) {
  int ref = pn->in[j];
  if (ref == PM_ANY) return 1;
  if (ref <= PM_CAPTURE(0)) {
    int slot = PM_CAPTURE(0) - ref;
    if (s->m->capture[slot] == IR_NONE) {
      s->m->capture[slot] = v;
      return 1;
    }
    return s->m->capture[slot] == v;
  }
  if (v == IR_NONE) return 0;
  int producer = s->g->values[v].producer;
  return producer != IR_NONE && match_node(s, ref, producer);
}

/* A snapshot of the bindings, for backtracking. */
typedef struct saved {
  int node[PM_MAX_NODES];
  int capture[PM_MAX_CAPTURES];
} saved;

static void save(const match_state *s, saved *sv) {
  memcpy(sv->node, s->m->node, sizeof sv->node);
  memcpy(sv->capture, s->m->capture, sizeof sv->capture);
}

static void restore(match_state *s, const saved *sv) {
  memcpy(s->m->node, sv->node, sizeof sv->node);
  memcpy(s->m->capture, sv->capture, sizeof sv->capture);
}

static int match_node(match_state *s, int pi, int gn) {
  if (s->m->node[pi] != IR_NONE) return s->m->node[pi] == gn; /* seen: the same node again */
  const pm_node *pn = &s->p->nodes[pi];
  const ir_node *n = &s->g->nodes[gn];
  if (n->dead || (pn->kind != PM_ANY_KIND && n->kind != pn->kind) || n->nin < pn->nin) return 0;
  if (pn->pred && !pn->pred(s->g, n, s->user)) return 0;
  s->m->node[pi] = gn;
  saved sv;
  save(s, &sv);
  int ok = 1;
  for (int j = 0; j < pn->nin && ok; j++) ok = match_input(s, pn, j, n->in[j]);
  if (!ok && pn->commutative && pn->nin >= 2) {
    restore(s, &sv);
    ok = match_input(s, pn, 0, n->in[1]) && match_input(s, pn, 1, n->in[0]);
    for (int j = 2; j < pn->nin && ok; j++) ok = match_input(s, pn, j, n->in[j]);
  }
  if (!ok) {
    restore(s, &sv);
    s->m->node[pi] = IR_NONE;
  }
  return ok;
}

/* Every matched node but the root: its output read only by matched nodes,
 * and not a graph output. */
static int contained(const match_state *s) {
  const ir_graph *g = s->g;
  int root = s->p->nnodes - 1;
  for (int pi = 0; pi < root; pi++) {
    const ir_node *n = &g->nodes[s->m->node[pi]];
    for (int k = 0; k < n->nout; k++) {
      int v = n->out[k];
      if (v == IR_NONE) continue;
      if (g->values[v].graph_output != IR_NONE) return 0;
      int inside = 0;
      for (int q = 0; q < s->p->nnodes; q++) {
        const ir_node *c = &g->nodes[s->m->node[q]];
        for (int j = 0; j < c->nin; j++) inside += c->in[j] == v;
      }
      if (inside != g->values[v].nuses) return 0;
    }
  }
  return 1;
}

int plan_match(const ir_graph *g, const pm_pattern *p, int root, void *user, pm_match *m) {
  if (p->nnodes < 1 || p->nnodes > PM_MAX_NODES || p->ncaptures > PM_MAX_CAPTURES) return 0;
  for (int i = 0; i < PM_MAX_NODES; i++) m->node[i] = IR_NONE;
  for (int i = 0; i < PM_MAX_CAPTURES; i++) m->capture[i] = IR_NONE;
  match_state s = {g, p, m, user};
  return match_node(&s, p->nnodes - 1, root) && contained(&s);
}
