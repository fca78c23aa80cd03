/* ir_partition: group claimable nodes into partitions that ORT can fuse.
 *
 * ORT requires that no path between two nodes of one fused partition leaves
 * it (the fused node would depend on itself). Walking nodes in topological
 * order we keep, per node, the set of partitions it is in or downstream of
 * (`reach`). A claimable node may join the partition of one of its producers
 * unless some producer outside that partition is downstream of it: then a
 * path would leave the partition and come back. Otherwise it starts a new one. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef uint64_t word;
#define WBITS 64

static int bit_get(const word *s, int i) { return (int)((s[i / WBITS] >> (i % WBITS)) & 1u); }
static void bit_set(word *s, int i) { s[i / WBITS] |= (word)1 << (i % WBITS); }

hd_status *ir_partition(const ir_graph *g, const uint8_t *claimable, int *part, int *nparts) {
  int n = g->nnodes;
  int max_parts = 0;
  for (int i = 0; i < n; i++) max_parts += claimable[i] ? 1 : 0;
  *nparts = 0;
  for (int i = 0; i < n; i++) part[i] = IR_NONE;
  if (max_parts == 0) return NULL;

  size_t words = (size_t)(max_parts + WBITS - 1) / WBITS;
  word *reach = calloc((size_t)n * words, sizeof(word));
  word *bad = calloc(words, sizeof(word));
  if (!reach || !bad) {
    free(reach);
    free(bad);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "ir_partition: out of host memory (%d nodes)", n);
  }

  for (int i = 0; i < n; i++) {
    const ir_node *node = &g->nodes[i];
    word *r = reach + (size_t)i * words;
    memset(bad, 0, words * sizeof(word));
    /* union of producers' reach; `bad` = partitions reached through a
     * producer that is not itself in that partition */
    for (int k = 0; k < node->nin; k++) {
      int v = node->in[k];
      if (v == IR_NONE) continue;
      int pn = g->values[v].producer;
      if (pn == IR_NONE || node->dead) continue;
      const word *pr = reach + (size_t)pn * words;
      for (size_t w = 0; w < words; w++) {
        r[w] |= pr[w];
        word own = 0;
        if (part[pn] != IR_NONE && (size_t)(part[pn] / WBITS) == w)
          own = (word)1 << (part[pn] % WBITS);
        bad[w] |= pr[w] & ~own;
      }
    }
    if (!claimable[i] || node->dead) continue;
    int chosen = IR_NONE;
    for (int k = 0; k < node->nin && chosen == IR_NONE; k++) {
      int v = node->in[k];
      if (v == IR_NONE) continue;
      int pn = g->values[v].producer;
      if (pn == IR_NONE || part[pn] == IR_NONE) continue;
      if (!bit_get(bad, part[pn])) chosen = part[pn];
    }
    if (chosen == IR_NONE) chosen = (*nparts)++;
    part[i] = chosen;
    bit_set(r, chosen);
  }
  free(reach);
  free(bad);
  return NULL;
}
