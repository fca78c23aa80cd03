/* gb_internal: the GPU backend's private types.
 *
 * One GPU backend, built once per vendor into its own module:
 *   backends/gpu/gb_module.c   devices, memory, copies, streams, events; open
 *   backends/gpu/gb_program.c  contexts, supports_node, graph/plan compile, run
 *   backends/cuda/cu_cudnn.c   the NVIDIA half: finds libcudnn, fills dnn_vendor
 *   backends/hip/              the AMD half: hipDNN's table, the HIP build
 * gb_*.c call the GPU runtime only through gpu/gpu_vendor.h (gpu* names) and
 * the DNN library only through backends/dnn (the descriptor builder). */
#ifndef GB_INTERNAL_H
#define GB_INTERNAL_H

#include <pthread.h>

#include "backends/backend.h"
#include "backends/dnn/dnn.h"
#include "gpu/gpu_vendor.h"

typedef struct gb_module {
  be_module base;
  be_host host;
  void *dnn_lib;   /* the dlopen'ed vendor DNN library */
  dnn_vendor vd;
  int ndev;
} gb_module;

/* ---- the vendor half (gb_cudnn.c) ---- */

/* The backend's name ("cuda") and the runtime name for messages. */
extern const char gb_backend_name[];
/* Finds and loads the DNN library into m->dnn_lib / m->vd. NOT_FOUND, with
 * every place tried and why it failed, when it is missing or too old. */
hd_status *gb_dnn_load(gb_module *m);
void gb_dnn_unload(gb_module *m);

/* ---- errors ---- */

hd_status *gb_status(gpuError_t e, const char *call, const char *file, int line);
#define GB_CHECK(call) HD_TRY(gb_status((call), #call, __FILE__, __LINE__))

/* ---- the program half (gb_program.c) ---- */

hd_status *gb_context_create(be_module *m, int ordinal, const be_options *opts,
                             const be_alloc *alloc, be_context **out);
void gb_context_destroy(be_context *c);
hd_status *gb_supports_node(be_context *c, const ir_graph *g, int node);
hd_status *gb_graph_compile(be_context *c, const ir_graph *g, be_graph **out);
void gb_graph_free(be_graph *bg);
hd_status *gb_plan_compile(be_graph *bg, const ir_plan *p, be_plan **out);
void gb_plan_free(be_plan *bp);
hd_status *gb_plan_run(be_plan *bp, void *const *inputs, void *const *outputs, void *stream);

#endif
