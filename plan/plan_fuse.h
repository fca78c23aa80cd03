/* plan_fuse.h: what the fusion passes share (plan/plan_fuse*.c only). */
#ifndef PLAN_FUSE_H
#define PLAN_FUSE_H

#include "ops/ops.h"

/* n is live and of kind k. */
int pf_is_kind(const ir_node *n, op_kind k);
/* The node producing v if v feeds only one node input and leaves no partition. */
ir_node *pf_sole_producer(ir_graph *g, int v);
/* The node reading v if it is v's only reader and v leaves no partition, or IR_NONE. */
int pf_sole_consumer(const ir_graph *g, int v);
/* Node `gone`, folded into node `into`: its name joins into's fused list,
 * and it is dead (nothing runs it). */
void pf_absorb(ir_node *into, ir_node *gone);
/* Element i of a constant (float or int), as a double; NAN where it is none. */
double pf_const_elem(const ir_value *c, int64_t i);
/* Where Slice node n, of a 1-D vector with step 1 (a shape's Slice),
 * starts: an index into its input; -1 where it is not such a Slice. */
int64_t pf_slice_start(const ir_graph *g, const ir_node *n);
/* Element i of 1-D int value v (a shape) when it is known as the model
 * compiles: constants, and shape arithmetic over static dims; else NaN. */
double pf_vec_elem(const ir_graph *g, int v, int64_t i);
/* v's value when it is a one-element float known as the model compiles: a
 * constant, or computed from constants and static dims (an exporter's
 * 1 / sqrt(head size) from Shape, Slice, Cast, Sqrt, Div); else NaN. */
double pf_scalar_of(const ir_graph *g, int v);
/* The shapes are equal at every run (static and equal, or the same symbols). */
int pf_same_shape(const ir_value *a, const ir_value *b);

/* MatMul -> scale -> mask -> Softmax -> MatMul as one Attention node
 * (plan_fuse_attention.c), rooted at the second MatMul, node ri. */
hd_status *pf_fuse_attention(ir_graph *g, int ri, int *changed);

/* GlobalAveragePool -> 1x1 Conv -> act -> 1x1 Conv -> act -> Mul as one
 * SqueezeExcite node (plan_fuse_se.c), rooted at the Mul, node mi. */
hd_status *pf_fuse_squeeze_excite(ir_graph *g, int mi, int *changed);

/* A Conv whose stride is its kernel as a Transpose of the image and a
 * MatMul (plan_fuse_patchify.c), node ci. */
hd_status *pf_patchify_conv(ir_graph *g, int ci, int *changed);

/* MatMuls of one input by constant weights read as an Attention's Q, K
 * and V as one MatMul and a Split (plan_fuse_projections.c), starting at
 * node ni. */
hd_status *pf_merge_projections(ir_graph *g, int ni, int *changed);

#endif
