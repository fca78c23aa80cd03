/* ir: the EP's graph types, vendor-free and op-free: the bottom layer.
 *
 * An ir_graph is what ep/ imports from ORT: values (tensors) and nodes in
 * topological order. A node's kind and parameters belong to ops/ (op_kind,
 * op_params); here they are an int and an opaque, aligned blob, so this
 * layer depends on nothing above it. An ir_plan is that graph for one
 * concrete set of input shapes: every tensor's shape, every node's resolved
 * parameters, and where each tensor lives (graph input/output, constant, or
 * an offset into one arena planned by liveness). plan/ builds plans;
 * backends compile them into programs. */
#ifndef IR_H
#define IR_H

#include <stddef.h>
#include <stdint.h>

#include "common/hd_dtype.h"
#include "common/hd_status.h"

#define IR_MAX_RANK 8
#define IR_DIM_DYNAMIC (-1)
#define IR_NONE (-1) /* an absent optional input */
#define IR_OP_UNKNOWN 0 /* a node kind no op runs (kept for connectivity) */

/* Storage for a node's parameters: ops/ reads and writes it as its
 * op_params union (OP_P in ops/ops.h checks that the union fits). */
#define IR_PARAMS_BYTES 256
typedef union ir_params {
  int64_t align_i;
  double align_d;
  void *align_p;
  unsigned char bytes[IR_PARAMS_BYTES];
} ir_params;

typedef struct ir_value {
  char *name;
  int dtype;                   /* hd_dtype */
  int rank;                    /* -1: unknown */
  int64_t dims[IR_MAX_RANK];   /* IR_DIM_DYNAMIC where symbolic */
  /* Per dynamic dim: a hash of its symbol ("batch", "seq"), nonzero, or 0
   * when unnamed. Two dims with the same nonzero symbol are equal at run
   * time (ONNX's meaning of a dim_param); two dims without are unknown. */
  uint32_t sym[IR_MAX_RANK];
  void *data;                  /* constant initializer data (host, owned), or NULL */
  size_t nbytes;               /* of data */
  int is_const;                /* a constant initializer (data may be absent at capability time) */
  /* Known on the host when a plan is built: a constant, the output of a
   * shape-only op (Shape), or of an op whose inputs are all host-known.
   * Such values are computed at plan time, never on a device. */
  int host_known;
  int producer;                /* node index, or IR_NONE */
  int nuses;                   /* consuming node inputs */
  int graph_input;             /* index in graph inputs, or IR_NONE */
  int graph_output;            /* index in graph outputs, or IR_NONE */
} ir_value;

typedef struct ir_node {
  int kind;        /* op_kind (ops/ops.h), or IR_OP_UNKNOWN */
  char *name;
  char *op_type;   /* the ONNX op type, for messages and reports */
  int opset;       /* the op's since-version */
  int nin, nout;
  int *in;         /* value indices; IR_NONE for absent optional inputs */
  int *out;
  ir_params p;     /* op_params (ops/ops.h: OP_P(node)) */
  int dead;        /* removed by a pass */
  char *fused;     /* names of the nodes fusion folded into this one,
                    * comma-separated (profiles name them), or NULL */
} ir_node;

typedef struct ir_graph {
  ir_value *values;
  int nvalues, cap_values;
  int *by_name;                /* open-addressing index of values by name: index + 1, 0 empty */
  size_t by_name_cap;          /* a power of two, > 2 * nvalues */
  ir_node *nodes;
  int nnodes, cap_nodes;
  int *inputs, ninputs;
  int *outputs, noutputs;
} ir_graph;

hd_status *ir_graph_create(ir_graph **out);
void ir_graph_free(ir_graph *g);
/* Adds a value; dims may be NULL when rank <= 0. Returns its index in *idx. */
hd_status *ir_graph_add_value(ir_graph *g, const char *name, int dtype, int rank,
                              const int64_t *dims, int *idx);
int ir_graph_find_value(const ir_graph *g, const char *name);
/* Copies nbytes of data into the value, marking it constant. */
hd_status *ir_value_set_data(ir_graph *g, int v, const void *data, size_t nbytes);
/* Frees the host copy of a constant's data (a device backend has its own);
 * nbytes stays, so plans still know the constant's size. */
void ir_value_drop_data(ir_graph *g, int v);
hd_status *ir_graph_add_node(ir_graph *g, int kind, const char *name, const char *op_type,
                             int opset, const int *in, int nin, const int *out, int nout,
                             int *idx);
/* Inserts a node before node `at` (later nodes move up by one): for passes
 * that rewrite one node into several, keeping topological order. */
hd_status *ir_graph_insert_node(ir_graph *g, int at, int kind, const char *name, const char *op_type,
                                int opset, const int *in, int nin, const int *out, int nout);
/* Records that fusion folded node `gone` (and what was folded into it)
 * into `into`: the names only, for profiles and messages; best effort (a
 * failed allocation leaves the record short). Call before gone's name is
 * freed or overwritten. */
void ir_node_absorb(ir_node *into, const ir_node *gone);
/* Moves the nodes appended since node `first` into place: appended node k
 * right after node after[k] (< first), or before every node when after[k]
 * is IR_NONE; nodes placed after the same node keep their order. For
 * passes that add nodes behind their inputs' producers. */
hd_status *ir_graph_place_appended(ir_graph *g, int first, const int *after);
hd_status *ir_graph_set_io(ir_graph *g, const int *inputs, int ninputs, const int *outputs,
                           int noutputs);
/* Recomputes producers, use counts and graph io indices; checks topological order. */
hd_status *ir_graph_finalize(ir_graph *g);

/* The nonzero hash of a dim symbol's name, as ir_value.sym keeps it. */
uint32_t ir_sym_hash(const char *name);
/* Dim i of a and dim j of b are equal whatever the run: static and equal,
 * or the same named symbol. */
int ir_dims_equal(const ir_value *a, int i, const ir_value *b, int j);

/* Elements of a shape; -1 when a dim is unknown (negative) or the count
 * passes HD_MAX_NUMEL (hd_math.h), so no caller ever sees a wrapped size. */
int64_t ir_numel(int rank, const int64_t *dims);

/* ---- plans: the graph at concrete shapes ---- */

typedef enum ir_storage {
  IR_ST_NONE = 0, /* absent, or a value no step touches */
  IR_ST_INPUT,    /* graph input `index` */
  IR_ST_OUTPUT,   /* graph output `index` */
  IR_ST_CONST,    /* constant data of the graph value */
  IR_ST_ARENA,    /* arena + offset */
  IR_ST_ALIAS,    /* bytes of value `index` from byte `offset` on (views,
                   * and copies that move one contiguous run) */
  IR_ST_FOLDED,   /* computed at plan time: host bytes at host; a device
                   * backend keeps a copy of the plan's folded block */
} ir_storage;

typedef struct ir_tensor {
  int dtype;
  int rank;
  int64_t dims[IR_MAX_RANK];
  size_t nbytes;
  ir_storage storage;
  int index;
  size_t offset;       /* in the arena, (folded) in the plan's folded block, or (alias) in its root */
  const void *host;    /* host bytes when known at plan time (constants, folded), else NULL */
  /* strided (an alias only): element i of dim d lies i x strides[d]
   * elements on from offset, not where a contiguous layout puts it (a
   * Split's column range, a Transpose, read in place); only steps that
   * read strides (ir_tensor_strides) are given such a tensor */
  int strided;
  int64_t strides[IR_MAX_RANK];
  /* bit d: the elements along dim d are all equal (for each index of the
   * other dims), so a reader may step over d with a stride of 0: a key
   * padding mask expanded over the query rows. Found at plan time
   * (constants' data, elementwise ops); dims of size 1 need no bit. */
  unsigned uniform;
} ir_tensor;

/* Element strides of t's dims (contiguous, or a strided alias's). */
void ir_tensor_strides(const ir_tensor *t, int64_t *st);

typedef struct ir_step {
  int node;       /* index into the graph's nodes */
  ir_params p;    /* op_params resolved for these shapes (OP_P(step)) */
} ir_step;

typedef struct ir_plan {
  const ir_graph *g;
  ir_tensor *t;     /* one per graph value */
  ir_step *steps;
  int nsteps;
  size_t arena_bytes;
  void *folded;     /* the values computed at plan time, one block (host) */
  size_t folded_bytes;
} ir_plan;

#define IR_ARENA_ALIGN 256

/* Shapes of the graph inputs, in graph-input order. */
typedef struct ir_shape {
  int rank;
  int64_t dims[IR_MAX_RANK];
} ir_shape;

/* Where a tensor's bytes are, given the run's bindings. */
typedef struct ir_bindings {
  void *const *inputs;
  void *const *outputs;
  void *const *consts; /* per value index: the backend's copy of constant data */
  void *arena;
  void *folded;        /* the backend's copy of the plan's folded block (NULL: the host's) */
} ir_bindings;

void *ir_tensor_addr(const ir_plan *p, int value, const ir_bindings *b);
/* Node n's input (output) at position k, or NULL when k < 0: ops keep an
 * optional input's position, -1 when absent. */
void *ir_input_addr(const ir_plan *p, const ir_node *n, int k, const ir_bindings *b);
void *ir_output_addr(const ir_plan *p, const ir_node *n, int k, const ir_bindings *b);

#endif
