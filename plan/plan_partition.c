/* ir_partition: group claimable nodes into partitions that ORT can fuse.
 *
 * ORT replaces each partition by one fused node, so the graph with every
 * partition contracted to a node must stay acyclic. (It is not enough that no
 * path leaves a partition and re-enters it: two partitions feeding each
 * other, p1 -> p2 at one node and p2 -> p1 at another, also form a cycle.)
 *
 * Walking nodes in topological order we keep a DAG over partitions: deps[q]
 * is the set of partitions q's nodes read from, directly or through nodes we
 * do not claim. A claimable node joins the partition p of one of its
 * producers unless p is reachable, in that DAG, from what the node reads
 * outside p: then p would depend on itself. Failing that it tries the last
 * few partitions the same way, and only then starts a new one. */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "ops/ops.h"

typedef uint64_t word;
#define WBITS 64

static int bit_get(const word *s, int i) { return (int)((s[i / WBITS] >> (i % WBITS)) & 1u); }
static void bit_set(word *s, int i) { s[i / WBITS] |= (word)1 << (i % WBITS); }
static void bits_or(word *d, const word *s, size_t w) {
  for (size_t i = 0; i < w; i++) d[i] |= s[i];
}

typedef struct part_state {
  const ir_graph *g;
  const int *part;
  size_t words;
  word *front;  /* per node: partitions it reads through unclaimed nodes only (unclaimed nodes) */
  word *deps;   /* per partition: partitions its nodes read from */
  word *seen;   /* scratch for reach() */
  int *stack;   /* scratch for reach() */
} part_state;

/* The partitions node i's input k brings: its producer's partition, or, for
 * an unclaimed producer, what that producer reads. */
static void add_input_parts(part_state *s, int i, int skip_part, word *out) {
  const ir_node *node = &s->g->nodes[i];
  for (int k = 0; k < node->nin; k++) {
    int v = node->in[k];
    if (v == IR_NONE) continue;
    int pn = s->g->values[v].producer;
    if (pn == IR_NONE) continue;
    if (s->part[pn] != IR_NONE) {
      if (s->part[pn] != skip_part) bit_set(out, s->part[pn]);
    } else {
      bits_or(out, s->front + (size_t)pn * s->words, s->words);
    }
  }
}

/* Is partition p reachable from the set `from` in the partition DAG? */
static int reach(part_state *s, const word *from, int p, int nparts) {
  memset(s->seen, 0, s->words * sizeof(word));
  int top = 0;
  for (int q = 0; q < nparts; q++)
    if (bit_get(from, q)) bit_set(s->seen, q), s->stack[top++] = q;
  while (top > 0) {
    int q = s->stack[--top];
    if (q == p) return 1;
    const word *d = s->deps + (size_t)q * s->words;
    for (int r = 0; r < nparts; r++)
      if (bit_get(d, r) && !bit_get(s->seen, r)) bit_set(s->seen, r), s->stack[top++] = r;
  }
  return 0;
}

/* Node i needs some inputs' values on the host at plan time (ops.h:
 * op_input_on_host): their producers must be in its partition, where the
 * planner computes them. The one partition they share, IR_NONE when there
 * are none, or -2 when that cannot be (a producer outside every
 * partition, a graph input, or producers in two partitions). */
static int host_inputs_part(const ir_graph *g, int i, const uint8_t *fold_only, const int *part) {
  const ir_node *node = &g->nodes[i];
  int need = IR_NONE;
  for (int k = 0; k < node->nin; k++) {
    if (!op_input_on_host(node, k, fold_only && fold_only[i])) continue;
    const ir_value *v = &g->values[node->in[k]];
    if (v->is_const) continue;
    int pn = v->producer;
    if (pn == IR_NONE || part[pn] == IR_NONE) return -2;
    if (need != IR_NONE && need != part[pn]) return -2;
    need = part[pn];
  }
  return need;
}

hd_status *plan_partition(const ir_graph *g, const uint8_t *claimable, const uint8_t *fold_only, int *part,
                          int *nparts) {
  int n = g->nnodes;
  int max_parts = 0;
  for (int i = 0; i < n; i++) max_parts += claimable[i] && !g->nodes[i].dead ? 1 : 0;
  *nparts = 0;
  for (int i = 0; i < n; i++) part[i] = IR_NONE;
  if (max_parts == 0) return NULL;

  part_state s = {.g = g, .part = part, .words = (size_t)(max_parts + WBITS - 1) / WBITS};
  s.front = calloc((size_t)n * s.words, sizeof(word));
  s.deps = calloc((size_t)max_parts * s.words, sizeof(word));
  s.seen = calloc(s.words, sizeof(word));
  s.stack = calloc((size_t)max_parts, sizeof(int));
  word *outside = calloc(s.words, sizeof(word));
  hd_status *st = NULL;
  if (!s.front || !s.deps || !s.seen || !s.stack || !outside)
    st = hd_error(HD_ERR_OUT_OF_MEMORY, "ir_partition: out of host memory (%d nodes)", n);

  for (int i = 0; i < n && !st; i++) {
    const ir_node *node = &g->nodes[i];
    if (node->dead) continue;
    if (!claimable[i]) {
      add_input_parts(&s, i, IR_NONE, s.front + (size_t)i * s.words);
      continue;
    }
    int chosen = IR_NONE;
    int need = host_inputs_part(g, i, fold_only, part);
    if (need != IR_NONE) { /* that partition or none */
      if (need >= 0) {
        memset(outside, 0, s.words * sizeof(word));
        add_input_parts(&s, i, need, outside);
        if (!reach(&s, outside, need, *nparts)) {
          chosen = need;
          bits_or(s.deps + (size_t)need * s.words, outside, s.words);
        }
      }
      if (chosen == IR_NONE) add_input_parts(&s, i, IR_NONE, s.front + (size_t)i * s.words);
      else part[i] = chosen;
      continue;
    }
    for (int k = 0; k < node->nin && chosen == IR_NONE; k++) {
      int v = node->in[k];
      int pn = v == IR_NONE ? IR_NONE : g->values[v].producer;
      if (pn == IR_NONE || part[pn] == IR_NONE) continue;
      int p = part[pn];
      memset(outside, 0, s.words * sizeof(word));
      add_input_parts(&s, i, p, outside);
      if (!reach(&s, outside, p, *nparts)) {
        chosen = p;
        bits_or(s.deps + (size_t)p * s.words, outside, s.words);
      }
    }
    /* No producer's partition fits (or none is claimed): join a recent
     * partition if that stays acyclic, rather than start one more fused node. */
    for (int p = *nparts - 1; p >= 0 && p >= *nparts - 8 && chosen == IR_NONE; p--) {
      memset(outside, 0, s.words * sizeof(word));
      add_input_parts(&s, i, p, outside);
      if (!reach(&s, outside, p, *nparts)) {
        chosen = p;
        bits_or(s.deps + (size_t)p * s.words, outside, s.words);
      }
    }
    if (chosen == IR_NONE) {
      chosen = (*nparts)++;
      add_input_parts(&s, i, IR_NONE, s.deps + (size_t)chosen * s.words);
    }
    part[i] = chosen;
  }
  free(s.front);
  free(s.deps);
  free(s.seen);
  free(s.stack);
  free(outside);
  return st;
}
