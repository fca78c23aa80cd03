/* ep_graph: an OrtGraph imported as an ir_graph, each node parsed and
 * checked by its op. */
#ifndef EP_GRAPH_H
#define EP_GRAPH_H

#include "ep/ep_ort.h"
#include "ir/ir.h"

typedef struct ep_graph {
  ir_graph *g;
  const OrtNode **nodes;   /* ORT node of each ir node (valid while the OrtGraph is) */
  hd_status **why;         /* per node: NULL when our ops can run it, else the reason */
  int nimported;           /* nodes imported (why[] and nodes[]): passes may add more to g */
} ep_graph;

/* with_data: copy constant initializers (Compile) or only note them
 * (GetCapability). Does not finalize graph io: see ep_graph_set_io. */
hd_status *ep_graph_import(const OrtGraph *graph, int with_data, ep_graph *out);
/* Sets the ir graph's inputs and outputs to the named values, in order, and
 * finalizes it. */
hd_status *ep_graph_set_io(ep_graph *eg, const char *const *inputs, int ninputs,
                           const char *const *outputs, int noutputs);
void ep_graph_free(ep_graph *eg);

#endif
