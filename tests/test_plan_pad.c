/* Unit tests of plan/plan_pad.c: which inputs a plan may take zero-padded
 * along their last axis, and the widths it plans at. Each case is a small
 * graph around an int64 mask [batch, width]; the decode conditions on
 * GroupQueryAttention are tested end to end (test_decoder counts the plans
 * a growing mask costs, and checks every step against the CPU EP). */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ops/ops.h"
#include "plan/plan.h"
#include "tests/attr_table.h"
#include "tests/unit_test.h"

static int int_value(ir_graph *g, const char *name, int rank, const int64_t *dims) {
  int v = IR_NONE;
  UT_OK(ir_graph_add_value(g, name, HD_DT_I64, rank, dims, &v));
  return v;
}

static int int_const(ir_graph *g, const char *name, int rank, const int64_t *dims, const int64_t *data) {
  int v = int_value(g, name, rank, dims);
  UT_OK(ir_value_set_data(g, v, data, sizeof(int64_t) * (size_t)ir_numel(rank, dims)));
  return v;
}

/* Adds an ONNX node, parsed by its op as ep/ would; returns its output. */
static int add(ir_graph *g, const char *type, int opset, const int *in, int nin, const char *out_name, int out_rank,
               const attr *attrs, int nattrs) {
  const op_def *def = op_find(NULL, type, opset);
  UT_CHECK(def != NULL);
  if (!def) return IR_NONE;
  int64_t dyn[2] = {IR_DIM_DYNAMIC, IR_DIM_DYNAMIC};
  int out = int_value(g, out_name, out_rank, dyn), idx;
  UT_OK(ir_graph_add_node(g, def->kind, out_name, type, opset, in, nin, &out, 1, &idx));
  attr_table t = {attrs, nattrs};
  op_attrs a = attr_table_reader(&t);
  UT_OK(def->parse(g, &g->nodes[idx], &a));
  return out;
}

/* The mask's ways into a graph. */
typedef enum mask_use {
  USE_SUM_COLUMNS,  /* ReduceSum over axis 1 (with a Shape -> Gather(0): the batch) */
  USE_SUM_ROWS,     /* ReduceSum over axis 0 */
  USE_WIDTH_OUT,    /* Shape -> Gather(1) as a graph output */
  USE_MUL,          /* the mask times itself */
  USE_SHAPE_OUT,    /* Shape as a graph output */
} mask_use;

/* A graph of a float input x (unused: never padded) and the mask, used as `use`. */
static ir_graph *mask_graph(mask_use use) {
  ir_graph *g = NULL;
  UT_OK(ir_graph_create(&g));
  int64_t dims[2] = {IR_DIM_DYNAMIC, IR_DIM_DYNAMIC}, one = 1, zero = 0;
  int x = IR_NONE;
  UT_OK(ir_graph_add_value(g, "x", HD_DT_F32, 2, dims, &x));
  int mask = int_value(g, "attention_mask", 2, dims), outs[3], nout = 0;
  switch (use) {
  case USE_SUM_COLUMNS:
  case USE_SUM_ROWS: {
    int axes = int_const(g, "axes", 1, &one, use == USE_SUM_COLUMNS ? &one : &zero);
    attr keep = {.name = "keepdims", .n = -1};
    outs[nout++] = add(g, "ReduceSum", 13, (int[]){mask, axes}, 2, "sum", 1, &keep, 1);
    if (use == USE_SUM_COLUMNS) {
      int shape = add(g, "Shape", 15, &mask, 1, "shape", 1, NULL, 0);
      int at0 = int_const(g, "zero", 0, NULL, &zero);
      attr axis = {.name = "axis", .n = -1};
      outs[nout++] = add(g, "Gather", 13, (int[]){shape, at0}, 2, "batch", 0, &axis, 1);
    }
    break;
  }
  case USE_WIDTH_OUT: {
    int shape = add(g, "Shape", 15, &mask, 1, "shape", 1, NULL, 0);
    int at1 = int_const(g, "one", 0, NULL, &one);
    attr axis = {.name = "axis", .n = -1};
    outs[nout++] = add(g, "Gather", 13, (int[]){shape, at1}, 2, "width", 0, &axis, 1);
    break;
  }
  case USE_MUL:
    outs[nout++] = add(g, "Mul", 14, (int[]){mask, mask}, 2, "square", 2, NULL, 0);
    break;
  case USE_SHAPE_OUT:
    outs[nout++] = add(g, "Shape", 15, &mask, 1, "shape", 1, NULL, 0);
    break;
  }
  UT_OK(ir_graph_set_io(g, (int[]){x, mask}, 2, outs, nout));
  UT_OK(ir_graph_finalize(g));
  return g;
}

static void test_which_inputs(void) {
  static const struct {
    mask_use use;
    int pads;
    const char *what;
  } cases[] = {
      {USE_SUM_COLUMNS, 1, "summed over its columns; its batch read"},
      {USE_SUM_ROWS, 0, "summed over its rows"},
      {USE_WIDTH_OUT, 0, "its width a graph output"},
      {USE_MUL, 0, "read element by element"},
      {USE_SHAPE_OUT, 0, "its shape a graph output"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ir_graph *g = mask_graph(cases[c].use);
    plan_pad *pp = NULL;
    UT_OK(plan_pad_find(g, &pp));
    UT_CHECKF((pp != NULL) == cases[c].pads, "mask %s: %s", cases[c].what, pp ? "padded" : "not padded");
    if (pp) UT_CHECKF(pp->input == 1 && pp->ngqa == 0, "mask %s: input %d, %d attentions", cases[c].what, pp->input,
                      pp->ngqa);
    printf("mask %s: %s\n", cases[c].what, pp ? "may be padded" : "exact widths");
    plan_pad_free(pp);
    ir_graph_free(g);
  }
}

static void test_widths(void) {
  ir_graph *g = mask_graph(USE_SUM_COLUMNS);
  plan_pad *pp = NULL;
  UT_OK(plan_pad_find(g, &pp));
  UT_CHECK(pp != NULL);
  /* width -> planned width (0: its own) */
  static const int64_t cases[][2] = {{1, 64}, {13, 64}, {63, 64}, {64, 0}, {65, 128}, {300, 512}, {4096, 0}};
  for (size_t c = 0; pp && c < sizeof cases / sizeof cases[0]; c++) {
    ir_shape shapes[2] = {{2, {2, 3}}, {2, {2, cases[c][0]}}};
    int64_t got = plan_pad_width(pp, shapes);
    UT_CHECKF(got == cases[c][1], "width %lld planned at %lld, want %lld", (long long)cases[c][0], (long long)got,
              (long long)cases[c][1]);
  }
  /* and the plan at a padded width computes the batch, not the width */
  ir_shape shapes[2] = {{2, {2, 3}}, {2, {3, 64}}};
  ir_plan *p = NULL;
  UT_OK(plan_create(g, shapes, NULL, &p));
  if (pp && p) UT_CHECK(plan_pad_holds(pp, p));
  plan_free(p);
  plan_pad_free(pp);
  ir_graph_free(g);
}

int main(void) {
  test_which_inputs();
  test_widths();
  return ut_finish("test_plan_pad");
}
