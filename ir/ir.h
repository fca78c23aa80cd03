/* ir: the EP's graph, vendor-free.
 *
 * An ir_graph is what ep/ imports from ORT: values (tensors) and nodes in
 * topological order. An ir_plan is that graph for one concrete set of input
 * shapes: every tensor's shape, every node's resolved parameters, and where
 * each tensor lives (graph input/output, constant, or an offset into one
 * arena planned by liveness). Backends compile an ir_plan into a program. */
#ifndef IR_H
#define IR_H

#include <stddef.h>
#include <stdint.h>

#include "common/hd_dtype.h"
#include "common/hd_status.h"
#include "ops/op_params.h"

#define IR_MAX_RANK 8
#define IR_DIM_DYNAMIC (-1)
#define IR_NONE (-1) /* an absent optional input */

typedef struct ir_value {
  char *name;
  int dtype;                   /* hd_dtype */
  int rank;                    /* -1: unknown */
  int64_t dims[IR_MAX_RANK];   /* IR_DIM_DYNAMIC where symbolic */
  void *data;                  /* constant initializer data (host, owned), or NULL */
  size_t nbytes;               /* of data */
  int is_const;                /* a constant initializer (data may be absent at capability time) */
  int producer;                /* node index, or IR_NONE */
  int nuses;                   /* consuming node inputs */
  int graph_input;             /* index in graph inputs, or IR_NONE */
  int graph_output;            /* index in graph outputs, or IR_NONE */
} ir_value;

typedef struct ir_node {
  op_kind kind;
  char *name;
  char *op_type;   /* the ONNX op type, for messages and reports */
  int opset;       /* the op's since-version */
  int nin, nout;
  int *in;         /* value indices; IR_NONE for absent optional inputs */
  int *out;
  op_params p;
  int dead;        /* removed by a pass */
} ir_node;

typedef struct ir_graph {
  ir_value *values;
  int nvalues, cap_values;
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
hd_status *ir_graph_add_node(ir_graph *g, op_kind kind, const char *name, const char *op_type,
                             int opset, const int *in, int nin, const int *out, int nout,
                             int *idx);
hd_status *ir_graph_set_io(ir_graph *g, const int *inputs, int ninputs, const int *outputs,
                           int noutputs);
/* Recomputes producers, use counts and graph io indices; checks topological order. */
hd_status *ir_graph_finalize(ir_graph *g);

/* Elements of a shape; -1 when a dim is unknown (negative) or the count
 * passes HD_MAX_NUMEL (hd_math.h), so no caller ever sees a wrapped size. */
int64_t ir_numel(int rank, const int64_t *dims);

/* ---- fusion (ir_fuse.c) ---- */

/* Folds BatchNormalization into Conv, and residual Adds, MatMul biases and
 * activations into their producers. *nfused counts the nodes removed. */
hd_status *ir_fuse(ir_graph *g, int *nfused);

/* ---- partitioning (GetCapability) ---- */

/* Groups claimable nodes into partitions ORT can fuse: no path between two
 * nodes of one partition leaves it. part[i] = partition id or IR_NONE.
 * Returns the number of partitions in *nparts. */
hd_status *ir_partition(const ir_graph *g, const uint8_t *claimable, int *part, int *nparts);

/* ---- plans: the graph at concrete shapes ---- */

typedef enum ir_storage {
  IR_ST_NONE = 0, /* absent, or a value no step touches */
  IR_ST_INPUT,    /* graph input `index` */
  IR_ST_OUTPUT,   /* graph output `index` */
  IR_ST_CONST,    /* constant data of the graph value */
  IR_ST_ARENA,    /* arena + offset */
  IR_ST_ALIAS,    /* same bytes as value `index` (shape-only ops) */
} ir_storage;

typedef struct ir_tensor {
  int dtype;
  int rank;
  int64_t dims[IR_MAX_RANK];
  size_t nbytes;
  ir_storage storage;
  int index;
  size_t offset;
} ir_tensor;

typedef struct ir_step {
  int node;       /* index into the graph's nodes */
  op_params p;    /* parameters resolved for these shapes */
} ir_step;

typedef struct ir_plan {
  const ir_graph *g;
  ir_tensor *t;     /* one per graph value */
  ir_step *steps;
  int nsteps;
  size_t arena_bytes;
} ir_plan;

#define IR_ARENA_ALIGN 256

/* Shapes of the graph inputs, in graph-input order. */
typedef struct ir_shape {
  int rank;
  int64_t dims[IR_MAX_RANK];
} ir_shape;

hd_status *ir_plan_create(const ir_graph *g, const ir_shape *inputs, ir_plan **out);
void ir_plan_free(ir_plan *p);

/* Where a tensor's bytes are, given the run's bindings. */
typedef struct ir_bindings {
  void *const *inputs;
  void *const *outputs;
  void *const *consts; /* per value index: the backend's copy of constant data */
  void *arena;
} ir_bindings;

void *ir_tensor_addr(const ir_plan *p, int value, const ir_bindings *b);

#endif
