/* plan: the passes over an imported graph and the plans built from it,
 * above ops/ (they call each op's infer and read its parameters):
 *   plan_partition.c  GetCapability: claimable nodes -> fusable partitions
 *   plan_fuse.c       fusions (BatchNorm folding, bias/activation/residual)
 *   plan_build.c      a graph at concrete input shapes: shapes, resolved
 *                     parameters, views, and one liveness-planned arena
 *   plan_match.c      multi-node patterns, for fusions that span more than
 *                     a producer and its consumer
 *   plan_precision.c  the `precision` option: an fp32 partition computed in
 *                     fp16 or bf16, fp32 at its inputs and outputs
 *   plan_layout.c     channels last (NHWC) for convolution chains
 *   plan_pad.c        inputs a plan may take zero-padded (a growing mask) */
#ifndef PLAN_H
#define PLAN_H

#include <stdint.h>

#include "ir/ir.h"

/* Groups claimable nodes into partitions ORT can fuse: no path between two
 * nodes of one partition leaves it. part[i] = partition id or IR_NONE.
 * Returns the number of partitions in *nparts. A node whose inputs must be
 * known at plan time (value inputs; every input of a fold_only node, one
 * the planner must compute because no device runs it; fold_only may be
 * NULL) joins the partition that computes them, or stays unclaimed
 * (part[i] = IR_NONE though claimable[i]). */
hd_status *plan_partition(const ir_graph *g, const uint8_t *claimable, const uint8_t *fold_only, int *part,
                          int *nparts);

/* Folds BatchNormalization into Conv, and residual Adds, MatMul biases and
 * activations into their producers. *nfused counts the nodes removed. */
hd_status *plan_fuse(ir_graph *g, int *nfused);
/* The fusions that want plan_layout's result, run after it (plan_fuse.c:
 * a MatMul's per-column scale, 3c again, and residual Add, 8). nfused as
 * plan_fuse's. */
hd_status *plan_fuse_late(ir_graph *g, int *nfused);

/* ---- precision (plan_precision.c) ---- */

/* Whether the backend runs node `node` of g as it now is (its dtypes
 * included): NULL, or the reason it does not (NOT_SUPPORTED). */
typedef struct plan_support {
  void *ctx;
  hd_status *(*supports)(void *ctx, const ir_graph *g, int node);
} plan_support;

typedef struct plan_precision_report {
  int half_nodes;  /* nodes now computing in half precision */
  int f32_nodes;   /* nodes on fp32 data that stay fp32 (the log says why) */
  int casts;       /* Cast nodes added */
  int consts;      /* fp32 constants converted */
  int gelu_tanh;   /* matmuls whose GELU now runs in the tanh form */
  int fp32_first;  /* tensor-core ops kept fp32 by fp32_first */
} plan_precision_report;

/* What the `precision` option and its companions ask of the pass. */
typedef struct plan_precision_opts {
  int half;       /* HD_DT_F16 or HD_DT_BF16; HD_DT_F32 changes nothing */
  int gelu_tanh;  /* half_gelu=tanh: a half MatMul/Gemm's exact GELU computes the tanh form */
  int fp32_first; /* fp32_first_layers: the graph's first N tensor-core ops (in order, as fused) stay fp32 */
} plan_precision_opts;

/* Rewrites a partition of fp32 data to compute in o->half: value dtypes,
 * converted constants, Cast nodes where a value crosses precisions, one
 * per value and direction; graph inputs and outputs stay fp32. Node by
 * node: the rule in plan_precision.c, each half-precision node checked by
 * its op and by sup (may be NULL: ops only). Run after plan_fuse. rep may
 * be NULL. */
hd_status *plan_precision(ir_graph *g, const plan_precision_opts *o, const plan_support *sup,
                          plan_precision_report *rep);

/* ---- layout (plan_layout.c) ---- */

typedef enum plan_layout_mode {
  PLAN_LAYOUT_NEVER = 0,  /* channels first everywhere */
  PLAN_LAYOUT_ALWAYS = 1, /* where the rule says (plan_layout.c) */
  PLAN_LAYOUT_DENSE = 2,  /* the same, one-group convolutions alone (no depthwise, no channel-moving forms) */
  PLAN_LAYOUT_ALL = 3,    /* the same, depthwise convolutions too where no channel moves (A/B runs) */
} plan_layout_mode;

typedef struct plan_layout_report {
  int convs;      /* convolutions the backend runs channels last */
  int transposes; /* Transposes that needs (at the partition's edges, mostly) */
  int consts;     /* constants permuted (weights) */
  int nodes;      /* nodes computing channels last, when applied */
  int applied;    /* the graph was changed: convs >= 2 * transposes */
} plan_layout_report;

/* Rewrites 2D convolution chains of a partition to compute channels last
 * (NHWC) where the op and the backend (sup, may be NULL) take it and the
 * convolutions outnumber the Transposes it needs two to one; the rule in
 * plan_layout.c. Run after plan_precision. rep may be NULL. */
hd_status *plan_layout(ir_graph *g, int mode, const plan_support *sup, plan_layout_report *rep);

/* ---- padded inputs (plan_pad.c) ---- */

/* A graph input whose plans may be built at a larger last-axis width than
 * the run's, the run binding a zero-padded copy: every result is the same
 * (GenAI's attention mask; the rule in plan_pad.c). */
typedef struct plan_pad {
  const ir_graph *g;
  int input; /* graph-input position */
  int *gqa;  /* GroupQueryAttention nodes reading the width */
  int ngqa;
} plan_pad;

/* The first input of g that may be padded, or *out = NULL when none. */
hd_status *plan_pad_find(const ir_graph *g, plan_pad **out);
void plan_pad_free(plan_pad *pp);
/* The width to plan at for these input shapes (the next power of two from
 * 64, at most every GroupQueryAttention's past length), or 0 when the
 * input's own width is the one to plan at. */
int64_t plan_pad_width(const plan_pad *pp, const ir_shape *shapes);
/* Whether p, built at a width from plan_pad_width, computes what the
 * run's own width would: each GroupQueryAttention a decode step of one
 * query row whose present is its past buffer. */
int plan_pad_holds(const plan_pad *pp, const ir_plan *p);

/* ---- patterns (plan_match.c) ---- */

#define PM_MAX_NODES 16
#define PM_MAX_CAPTURES 8
#define PM_ANY_KIND (-1)          /* a pattern node of any op kind */
#define PM_ANY (-1)               /* an input that may be anything */
#define PM_CAPTURE(k) (-2 - (k))  /* an input bound to capture slot k */

/* One node of a pattern. in[j]: the index of the pattern node producing
 * input j (earlier in the array), PM_CAPTURE(k) or PM_ANY. */
typedef struct pm_node {
  int kind;         /* op_kind, or PM_ANY_KIND */
  int nin;          /* inputs checked (the graph node may have more) */
  int in[4];
  int commutative;  /* inputs 0 and 1 may match swapped */
  /* Optional: 1 when graph node n (of the right kind) fits, e.g. an
   * attribute value or a constant's value. */
  int (*pred)(const ir_graph *g, const ir_node *n, void *user);
} pm_node;

/* Nodes in topological order; the last is the root. */
typedef struct pm_pattern {
  const char *name;
  const pm_node *nodes;
  int nnodes;
  int ncaptures;
} pm_pattern;

typedef struct pm_match {
  int node[PM_MAX_NODES];        /* the graph node each pattern node matched */
  int capture[PM_MAX_CAPTURES];  /* the graph value each slot bound */
} pm_match;

/* 1 when pattern p matches with its root at graph node `root`; every
 * matched node but the root is used only inside the match (so a fusion may
 * remove it). user goes to the predicates. The first consistent binding
 * is taken (commutative nodes try their inputs both ways). */
int plan_match(const ir_graph *g, const pm_pattern *p, int root, void *user, pm_match *m);

/* How the planner computes host-known values (ir_value.host_known): runs
 * step s of plan p on the host, with b binding host memory. The reference
 * backend's ref_step_run is the one ep/ passes. */
typedef struct plan_eval {
  void *ctx;
  hd_status *(*run_step)(void *ctx, const ir_plan *p, const ir_step *s, const ir_bindings *b);
  /* Per node, or NULL: 1 where the node must be computed at plan time
   * whatever its size (no device runs it, or its values are read on the
   * host: op_fold_closure). Others are folded only while small. */
  const uint8_t *must_fold;
} plan_eval;

/* The graph at these input shapes (in graph-input order). With eval, every
 * step whose inputs are known on the host (constants, values computed
 * earlier in the plan; a shape-only op needs only their shapes) is computed
 * now, once: its outputs are IR_ST_FOLDED, packed into p->folded, and it is
 * no step of the plan. Without eval nothing is folded. */
hd_status *plan_create(const ir_graph *g, const ir_shape *inputs, const plan_eval *eval, ir_plan **out);
void plan_free(ir_plan *p);

#endif
