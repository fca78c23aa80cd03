/* ops: one family per file pair, ops/<family>.{h,c}. The header holds the
 * family's parameters and its OP_FAMILY line (ops/op_types.h); the .c file
 * an op_def per kind: how to read its ONNX attributes, which inputs it can
 * run (dtypes, ranks: vendor-free limits), and how its output shapes and
 * resolved parameters follow from concrete input shapes. The registry
 * (op_registry.h, generated from the OP_FAMILY lines) gives the kinds and
 * the parameter union; backends build their tables from it too
 * (ref_family_<family>, gb_family_<family>), so adding a family touches
 * its own files and no list anywhere. op_util.h's OP_DEF writes a kind's
 * op_def from the family's <family>_parse/_check/_infer. */
#ifndef OPS_H
#define OPS_H

#include "ir/ir.h"
#include "ops/op_registry.h" /* generated into the build tree */

typedef enum op_kind {
  OP_UNKNOWN = IR_OP_UNKNOWN, /* an ONNX node we do not run: kept for graph connectivity */
#define OP_ENUM_(kind, family) OP_##kind,
  OP_LIST(OP_ENUM_)
#undef OP_ENUM_
  OP_COUNT
} op_kind;

/* A node's or a plan step's parameters: one member per family. */
typedef union op_params {
#define OP_MEMBER_(family, type) type family;
  OP_FAMILY_LIST(OP_MEMBER_)
#undef OP_MEMBER_
} op_params;

_Static_assert(sizeof(op_params) <= sizeof(ir_params), "op_params outgrew IR_PARAMS_BYTES (ir/ir.h)");

/* The parameters of a node or plan step (anything with an ir_params p). */
#define OP_P(holder) ((op_params *)(void *)&(holder)->p)

/* How an op reads its node's attributes. ep/ implements it over ORT's node
 * attributes; tests implement it over plain tables. Every getter sets
 * *found to 0 when the attribute is absent (not an error). */
typedef struct op_attrs {
  void *ctx;
  hd_status *(*get_int)(void *ctx, const char *name, int64_t *v, int *found);
  hd_status *(*get_float)(void *ctx, const char *name, float *v, int *found);
  /* Reads up to max values; *n is the attribute's length (may exceed max). */
  hd_status *(*get_ints)(void *ctx, const char *name, int64_t *v, int max, int *n, int *found);
  hd_status *(*get_floats)(void *ctx, const char *name, float *v, int max, int *n, int *found);
  hd_status *(*get_string)(void *ctx, const char *name, char *buf, size_t cap, int *found);
  /* A TENSOR attribute (ConstantOfShape's value): its dtype, element count
   * and up to cap bytes of its data (NOT_SUPPORTED when larger). */
  hd_status *(*get_tensor)(void *ctx, const char *name, int *dtype, int64_t *numel, void *buf, size_t cap,
                           int *found);
} op_attrs;

typedef struct op_def {
  op_kind kind;
  const char *onnx_type;
  const char *domain;     /* NULL or "" = ai.onnx; "com.microsoft", ... */
  int min_opset, max_opset;
  /* Reads attributes into n->p. NOT_SUPPORTED for attribute values we do not
   * run (the node stays with the CPU EP); INVALID_ARG for malformed ones. */
  hd_status *(*parse)(const ir_graph *g, ir_node *n, const op_attrs *a);
  /* Vendor-free support check on dtypes, ranks and constness, with shapes
   * possibly dynamic. NOT_SUPPORTED with the reason. */
  hd_status *(*check)(const ir_graph *g, const ir_node *n);
  /* Output shapes (into t[], indexed by value) and resolved parameters
   * (into *p, initialised to n->p) for the concrete input shapes in t[]. */
  hd_status *(*infer)(const ir_graph *g, const ir_node *n, ir_tensor *t, op_params *p);
  /* A shape-only op: output 0 holds input 0's bytes (Reshape, Flatten, ...).
   * Plans alias it instead of running it, except where its output is a
   * partition output: then backends copy input 0 to output 0. */
  int view;
  /* Reads only its inputs' shapes, never their data (Shape, Size): its
   * outputs are always known when a plan is built, and computed then. */
  int shape_only;
  /* Elementwise ops (Add, Where, Cast, Expand: output element i is a
   * function of the inputs' elements at i, value inputs aside): the axis
   * of input k (of rank in_rank) that output axis d reads, -1 where the
   * input has none; op_broadcast_axis is numpy's rule. NULL for other ops.
   * Plans carry repeated axes through it: an axis along which every input
   * is constant, or broadcast, is constant in the output (ir_tensor.uniform). */
  int (*elementwise_axis)(const ir_node *n, int k, int d, int out_rank, int in_rank);
  /* Bit k: infer reads input k's values (Reshape's shape, Slice's starts,
   * Range's bounds): the input must be known on the host when a plan is
   * built (a constant, or computed in the same partition from known
   * values); infer finds them in t[v].host. */
  unsigned value_inputs;
  /* Optional: rewrites node i into ops the backends run (a contrib op made
   * of a projection and an attention, say), inserting nodes before it with
   * ir_graph_insert_node; node i becomes the last of them. plan_fuse calls
   * it first, so fusions see the result; backends never see this kind in a
   * plan (their support check still judges it, before lowering). */
  hd_status *(*lower)(ir_graph *g, int i);
} op_def;

/* The op that runs `op_type` of `domain` (NULL, "" and "ai.onnx" are the
 * default domain) at schema version `since_version`, or NULL. */
const op_def *op_find(const char *domain, const char *op_type, int since_version);
/* The opsets some op_def runs op_type of domain at (the lowest and highest
 * of their ranges); 0 when there is none at any opset. For messages. */
int op_opsets(const char *domain, const char *op_type, int *min_opset, int *max_opset);
const op_def *op_get(op_kind kind);
const char *op_name(op_kind kind);
/* The family an op kind belongs to ("conv", "unary", ...). */
const char *op_family_name(op_kind kind);
/* Whether node n's op is of that family (an unknown op is of none). */
int op_node_in_family(const ir_node *n, const char *family);

/* At GetCapability: when every input of n has a static shape, infers n's
 * outputs as a plan will. A node that fails at those shapes, or whose
 * outputs pass the size limits, is not claimed: NOT_SUPPORTED with the
 * reason (so it never fails after being claimed). NULL when it passes or
 * shapes are not all known. The model's declared output shapes are not
 * compared: ONNX's shape inference and ORT's kernels disagree in places
 * (MaxPool's ceil_mode), and the kernels are what users get. t: scratch
 * for every value of g (nothing is kept in it). */
hd_status *op_check_static(const ir_graph *g, const ir_node *n, ir_tensor *t);

/* Marks the values known on the host when a plan is built (ir_value.
 * host_known): constants, and, node by node in order, the outputs of every
 * node that runs (runs[i] != 0) and is shape-only or reads only known
 * values. A node whose value inputs (op_def.value_inputs) are not known
 * cannot run: runs[i] is cleared. Returns the number of nodes whose
 * outputs are all known. */
int op_mark_host_known(ir_graph *g, uint8_t *runs);
/* Extends fold (nodes the planner must compute on the host) to every
 * claimed producer of a value a node reads on the host (op_input_on_host),
 * transitively. claimed may be NULL (all nodes). */
void op_fold_closure(const ir_graph *g, const uint8_t *claimed, uint8_t *fold);
/* 1 when node n needs input k's values on the host at plan time: one of
 * its value inputs, or any input of a node computed there (fold: n runs
 * only at plan time), except for shape-only ops. */
int op_input_on_host(const ir_node *n, int k, int fold);
/* 1 when every present output of node n is host-known: the planner
 * computes it, no backend runs it. */
int op_node_host_known(const ir_graph *g, const ir_node *n);

/* Helpers for op files. */
hd_status *op_attr_int(const op_attrs *a, const char *name, int64_t dflt, int64_t *v);
hd_status *op_attr_float(const op_attrs *a, const char *name, float dflt, float *v);

#endif
