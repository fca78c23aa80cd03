/* cu_internal: the GPU backend module's private types.
 *
 * The module is three files:
 *   cu_module.c   devices, memory, copies, streams, events; the open symbol
 *   cu_program.c  contexts, supports_node, graph/plan compile, run
 *   cu_cudnn.c    the vendor half: finds libcudnn and fills the dnn_vendor
 * cu_module.c and cu_program.c call the GPU runtime only through gpu_vendor.h
 * (gpu* names) and the DNN library only through backends/dnn, so a HIP
 * module can compile them again with -DHIPDNN_EP_HIP and its own table file. */
#ifndef CU_INTERNAL_H
#define CU_INTERNAL_H

#include <pthread.h>

#include "backends/backend.h"
#include "backends/dnn/dnn.h"
#include "gpu/gpu_vendor.h"

typedef struct cu_module {
  be_module base;
  be_host host;
  void *dnn_lib;   /* the dlopen'ed vendor DNN library */
  dnn_vendor vd;
  int ndev;
} cu_module;

/* ---- the vendor half (cu_cudnn.c) ---- */

/* The backend's name ("cuda") and the runtime name for messages. */
extern const char cu_backend_name[];
/* Finds and loads the DNN library into m->dnn_lib / m->vd. NOT_FOUND, with
 * every place tried and why it failed, when it is missing or too old. */
hd_status *cu_dnn_load(cu_module *m);
void cu_dnn_unload(cu_module *m);

/* ---- errors ---- */

hd_status *cu_status(gpuError_t e, const char *call, const char *file, int line);
#define CU_CHECK(call) HD_TRY(cu_status((call), #call, __FILE__, __LINE__))

/* ---- the program half (cu_program.c) ---- */

hd_status *cu_context_create(be_module *m, int ordinal, const be_options *opts,
                             const be_alloc *alloc, be_context **out);
void cu_context_destroy(be_context *c);
hd_status *cu_supports_node(be_context *c, const ir_graph *g, int node);
hd_status *cu_graph_compile(be_context *c, const ir_graph *g, be_graph **out);
void cu_graph_free(be_graph *bg);
hd_status *cu_plan_compile(be_graph *bg, const ir_plan *p, be_plan **out);
void cu_plan_free(be_plan *bp);
hd_status *cu_plan_run(be_plan *bp, void *const *inputs, void *const *outputs, void *stream);

#endif
