/* Unit tests of the uniform axes a plan finds (ir_tensor.uniform): from a
 * constant's data, through elementwise ops and Expand, and into an
 * attention's mask strides. The graph is the key padding mask transformers
 * builds for BERT: a [B, 1, 1, S] padding mask And a constant [1, 1, S, S],
 * Expanded to [B, 1, S, S], Where(mask, 0, fill), read by an Attention.
 * With an all-true constant the mask repeats along the query rows and the
 * attention reads it with a row stride of 0; with a causal constant it
 * does not. */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/attention.h"
#include "ops/binary.h"
#include "ops/ops.h"
#include "plan/plan.h"
#include "tests/attr_table.h"
#include "tests/unit_test.h"

enum { B = 2, H = 2, S = 8, HD = 4 };

static int value(ir_graph *g, const char *name, int dtype, int rank, const int64_t *dims) {
  int v = IR_NONE;
  UT_OK(ir_graph_add_value(g, name, dtype, rank, dims, &v));
  return v;
}

static int constant(ir_graph *g, const char *name, int dtype, int rank, const int64_t *dims, const void *data,
                    size_t bytes) {
  int v = value(g, name, dtype, rank, dims);
  UT_OK(ir_value_set_data(g, v, data, bytes));
  return v;
}

/* Adds an ONNX node of one output, parsed by its op as ep/ would. */
static int add(ir_graph *g, const char *type, int opset, const int *in, int nin, const char *out_name, int dtype,
               int out_rank) {
  const op_def *def = op_find(NULL, type, opset);
  UT_CHECK(def != NULL);
  if (!def) return IR_NONE;
  int64_t dyn[4] = {IR_DIM_DYNAMIC, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC};
  int out = value(g, out_name, dtype, out_rank, dyn), idx;
  UT_OK(ir_graph_add_node(g, def->kind, out_name, type, opset, in, nin, &out, 1, &idx));
  attr_table t = {NULL, 0};
  op_attrs a = attr_table_reader(&t);
  UT_OK(def->parse(g, &g->nodes[idx], &a));
  return out;
}

/* causal: the constant keeps (row, key) for key <= row, else every pair. */
static void test_key_padding(int causal) {
  ir_graph *g = NULL;
  UT_OK(ir_graph_create(&g));
  int64_t dyn4[4] = {IR_DIM_DYNAMIC, 1, 1, IR_DIM_DYNAMIC};
  int keep = value(g, "keep", HD_DT_BOOL, 4, dyn4);
  int64_t qd[4] = {B, H, S, HD};
  int q = value(g, "q", HD_DT_F32, 4, qd), k = value(g, "k", HD_DT_F32, 4, qd), v = value(g, "v", HD_DT_F32, 4, qd);
  unsigned char pairs[S * S];
  for (int i = 0; i < S * S; i++) pairs[i] = !causal || i % S <= i / S;
  int c = constant(g, "pairs", HD_DT_BOOL, 4, (const int64_t[]){1, 1, S, S}, pairs, sizeof pairs);
  int both = add(g, "And", 7, (int[]){c, keep}, 2, "both", HD_DT_BOOL, 4);
  const int64_t shape[4] = {B, 1, S, S};
  int to = constant(g, "shape", HD_DT_I64, 1, (const int64_t[]){4}, shape, sizeof shape);
  int wide = add(g, "Expand", 13, (int[]){both, to}, 2, "wide", HD_DT_BOOL, 4);
  float zero = 0.f, fill = -1e4f;
  int z = constant(g, "zero", HD_DT_F32, 0, NULL, &zero, sizeof zero);
  int f = constant(g, "fill", HD_DT_F32, 0, NULL, &fill, sizeof fill);
  int bias = add(g, "Where", 16, (int[]){wide, z, f}, 3, "bias", HD_DT_F32, 4);
  int y = add(g, "Attention", 23, (int[]){q, k, v, bias}, 4, "y", HD_DT_F32, 4);
  UT_OK(ir_graph_set_io(g, (int[]){keep, q, k, v}, 4, &y, 1));

  ir_shape shapes[4] = {{4, {B, 1, 1, S}}, {4, {B, H, S, HD}}, {4, {B, H, S, HD}}, {4, {B, H, S, HD}}};
  ir_plan *p = NULL;
  UT_OK(plan_create(g, shapes, NULL, &p));
  if (p) {
    const unsigned rows = 1u << 2, keys = 1u << 3, batch = 1u;
    /* the constant: every pair (uniform both ways) or the causal one (neither) */
    UT_CHECKF((p->t[c].uniform & (rows | keys)) == (causal ? 0 : rows | keys), "constant: uniform 0x%x",
              p->t[c].uniform);
    /* And, Expand, Where: repeated along the rows unless the constant varies there */
    const int chain[3] = {both, wide, bias};
    for (int i = 0; i < 3; i++)
      UT_CHECKF((p->t[chain[i]].uniform & (rows | keys | batch)) == (causal ? 0 : rows), "%s: uniform 0x%x",
                g->values[chain[i]].name, p->t[chain[i]].uniform);
    /* the attention reads the mask's first row for every row, or each row */
    const ir_node *n = NULL;
    for (int i = 0; i < g->nnodes; i++)
      if (g->nodes[i].out[0] == y) n = &g->nodes[i];
    UT_CHECK(n != NULL);
    for (int s = 0; n && s < p->nsteps; s++) {
      if (&g->nodes[p->steps[s].node] != n) continue;
      op_attn_layout l;
      UT_OK(op_attention_layout(n, &OP_P(&p->steps[s])->attention, p->t, &l));
      const op_attention *ap = &OP_P(&p->steps[s])->attention;
      const int64_t *st = ap->in_bias >= 0 ? l.bias_st : l.mask_st;
      UT_CHECKF(st[2] == (causal ? S : 0) && st[3] == 1 && st[0] == S * S && st[1] == 0,
                "attention mask strides %lld %lld %lld %lld", (long long)st[0], (long long)st[1], (long long)st[2],
                (long long)st[3]);
    }
  }
  plan_free(p);
  ir_graph_free(g);
}

/* A constant whose rows each hold one value: uniform along the keys only;
 * a negative zero is not the same bytes as zero, so not uniform. */
static void test_constant_data(void) {
  ir_graph *g = NULL;
  UT_OK(ir_graph_create(&g));
  float rowwise[3 * 5], signed_zero[4] = {0.f, -0.f, 0.f, 0.f};
  for (int i = 0; i < 15; i++) rowwise[i] = (float)(i / 5);
  int a = constant(g, "rowwise", HD_DT_F32, 2, (const int64_t[]){3, 5}, rowwise, sizeof rowwise);
  int z = constant(g, "signed_zero", HD_DT_F32, 1, (const int64_t[]){4}, signed_zero, sizeof signed_zero);
  int y = add(g, "Add", 14, (int[]){a, a}, 2, "y", HD_DT_F32, 2);
  int x = value(g, "x", HD_DT_F32, 1, (const int64_t[]){4});
  int w = add(g, "Mul", 14, (int[]){x, z}, 2, "w", HD_DT_F32, 1);
  UT_OK(ir_graph_set_io(g, &x, 1, (int[]){y, w}, 2));
  ir_shape shapes[1] = {{1, {4}}};
  ir_plan *p = NULL;
  UT_OK(plan_create(g, shapes, NULL, &p));
  if (p) {
    UT_CHECKF(p->t[a].uniform == 2u, "rowwise: uniform 0x%x", p->t[a].uniform);
    UT_CHECKF(p->t[y].uniform == 2u, "rowwise + rowwise: uniform 0x%x", p->t[y].uniform);
    UT_CHECKF(p->t[z].uniform == 0u, "signed zeros: uniform 0x%x", p->t[z].uniform);
    UT_CHECKF(p->t[w].uniform == 0u, "x * signed zeros: uniform 0x%x", p->t[w].uniform);
  }
  plan_free(p);
  ir_graph_free(g);
}

/* A binary node reading input 0 through a fused Transpose (op_binary.perm,
 * as the fusion pass writes it): its axes map through the permutation.
 * a [4, 1, 3] varies along its first axis, read as [1, 4, 3]; b [1, 4, 3]
 * is one value throughout. Their sum varies along axis 1 (a's axis 0),
 * though a's axis 1 has size 1. */
static void test_permuted_binary(void) {
  ir_graph *g = NULL;
  UT_OK(ir_graph_create(&g));
  float av[12], bv[12];
  for (int i = 0; i < 12; i++) av[i] = (float)(i / 3), bv[i] = 2.f;
  int a = constant(g, "a", HD_DT_F32, 3, (const int64_t[]){4, 1, 3}, av, sizeof av);
  int b = constant(g, "b", HD_DT_F32, 3, (const int64_t[]){1, 4, 3}, bv, sizeof bv);
  int y = add(g, "Add", 14, (int[]){a, b}, 2, "y", HD_DT_F32, 3);
  op_binary *bp = &OP_P(&g->nodes[g->nnodes - 1])->binary;
  bp->permuted = 1;
  bp->perm[0][0] = 1, bp->perm[0][1] = 0, bp->perm[0][2] = 2;
  int x = value(g, "x", HD_DT_F32, 1, (const int64_t[]){1});
  UT_OK(ir_graph_set_io(g, &x, 1, &y, 1));
  ir_shape shapes[1] = {{1, {1}}};
  ir_plan *p = NULL;
  UT_OK(plan_create(g, shapes, NULL, &p));
  if (p) {
    UT_CHECKF(p->t[a].uniform == 4u, "a: uniform 0x%x", p->t[a].uniform); /* size-1 dims get no bit */
    UT_CHECKF(p->t[y].uniform == 5u, "a^T + b: uniform 0x%x, want axes 0 and 2", p->t[y].uniform);
  }
  plan_free(p);
  ir_graph_free(g);
}

int main(void) {
  test_permuted_binary();
  test_key_padding(0);
  test_key_padding(1);
  test_constant_data();
  return ut_finish("test_plan_uniform");
}
