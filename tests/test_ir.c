/* Unit tests of ir/: partitioning, plans and the arena, Conv shape
 * inference, and the ref backend on a hand-built graph. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "ir/ir.h"
#include "ops/ops.h"
#include "plan/plan.h"
#include "tests/attr_table.h"
#include "tests/unit_test.h"

static int add_value(ir_graph *g, const char *name, int rank, const int64_t *dims) {
  int v = IR_NONE;
  UT_OK(ir_graph_add_value(g, name, HD_DT_F32, rank, dims, &v));
  return v;
}

/* A chain a -> n0 -> n1 -> n2 -> n3 where n2 is unclaimable, plus a side
 * edge n0 -> n3. Claiming n0, n1, n3 in one partition would let a path
 * (n1 -> n2 -> n3) leave and re-enter it. */
static void test_partition_no_reentry(void) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t d[1] = {4};
  int a = add_value(g, "a", 1, d), b = add_value(g, "b", 1, d), c = add_value(g, "c", 1, d);
  int e = add_value(g, "e", 1, d), f = add_value(g, "f", 1, d);
  int in0[1] = {a}, out0[1] = {b};
  int in1[1] = {b}, out1[1] = {c};
  int in2[1] = {c}, out2[1] = {e};
  int in3[2] = {e, b}, out3[1] = {f};
  UT_OK(ir_graph_add_node(g, OP_CONV, "n0", "X", 1, in0, 1, out0, 1, NULL));
  UT_OK(ir_graph_add_node(g, OP_CONV, "n1", "X", 1, in1, 1, out1, 1, NULL));
  UT_OK(ir_graph_add_node(g, OP_UNKNOWN, "n2", "Y", 1, in2, 1, out2, 1, NULL));
  UT_OK(ir_graph_add_node(g, OP_CONV, "n3", "X", 1, in3, 2, out3, 1, NULL));
  int ins[1] = {a}, outs[1] = {f};
  UT_OK(ir_graph_set_io(g, ins, 1, outs, 1));
  UT_OK(ir_graph_finalize(g));
  uint8_t claim[4] = {1, 1, 0, 1};
  int part[4], nparts = 0;
  UT_OK(plan_partition(g, claim, NULL, part, &nparts));
  UT_CHECK(nparts == 2);
  UT_CHECK(part[0] == part[1]);
  UT_CHECK(part[2] == IR_NONE);
  UT_CHECK(part[3] != part[0] && part[3] != IR_NONE);
  /* everything claimable: one partition */
  uint8_t all[4] = {1, 1, 1, 1};
  UT_OK(plan_partition(g, all, NULL, part, &nparts));
  UT_CHECK(nparts == 1);
  ir_graph_free(g);
}

/* x -> conv0 -> conv1 -> conv2 -> y: intermediates share arena bytes once
 * dead, and Conv's SAME_UPPER / SAME_LOWER pads resolve as ONNX says. */
/* The graph ORT gets when each partition becomes one node (every unclaimed
 * node stays a node of its own) must be acyclic: Kahn's algorithm over the
 * contracted graph. 1 when it is. */
static int contracted_acyclic(const ir_graph *g, const int *part, int nparts) {
  int nn = g->nnodes, nc = nparts + nn;
  int *id = malloc(sizeof(int) * (size_t)nn), *indeg = calloc((size_t)nc, sizeof(int));
  uint8_t *edge = calloc((size_t)nc * (size_t)nc, 1);
  int *queue = malloc(sizeof(int) * (size_t)nc);
  for (int i = 0; i < nn; i++) id[i] = part[i] != IR_NONE ? part[i] : nparts + i;
  for (int i = 0; i < nn; i++)
    for (int k = 0; k < g->nodes[i].nin; k++) {
      int p = g->values[g->nodes[i].in[k]].producer;
      if (p == IR_NONE || id[p] == id[i] || edge[id[p] * nc + id[i]]) continue;
      edge[id[p] * nc + id[i]] = 1;
      indeg[id[i]]++;
    }
  /* contracted nodes that exist: the partitions, and the unclaimed nodes */
  int present = nparts, head = 0, tail = 0, seen = 0;
  for (int i = 0; i < nn; i++) present += part[i] == IR_NONE;
  for (int c = 0; c < nc; c++) {
    int exists = c < nparts || part[c - nparts] == IR_NONE;
    if (exists && indeg[c] == 0) queue[tail++] = c;
  }
  while (head < tail) {
    int c = queue[head++];
    seen++;
    for (int d = 0; d < nc; d++)
      if (edge[c * nc + d] && --indeg[d] == 0) queue[tail++] = d;
  }
  free(id);
  free(indeg);
  free(edge);
  free(queue);
  return seen == present;
}

/* Two partitions feeding each other: p1 -> p2 at one node and p2 -> p1 at
 * another contracts to a cycle, though no path leaves and re-enters either.
 *   a, b: unclaimed sources.  m1 = f(a), m2 = f(b)   (claimed)
 *   x = g(m1, b') ... modelled as: c1 = m1 op m2? We build the rotary shape:
 *   u = U(a) [claimed], v = U(b) [claimed]
 *   s1 = u*X1, s2 = v*X2, s3 = v*X1, s4 = u*X2   (X1, X2 unclaimed inputs)
 *   real = s1 - s2, imag = s3 + s4, out = concat(real, imag) */
static void test_partition_contracted_cycle(void) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t d[1] = {4};
  const char *names[] = {"a", "b", "x1", "x2", "u", "v", "s1", "s2", "s3", "s4", "real", "imag", "out"};
  int v[13];
  for (int i = 0; i < 13; i++) v[i] = add_value(g, names[i], 1, d);
  enum { A, B, X1, X2, U, V, S1, S2, S3, S4, REAL, IMAG, OUT };
  struct { int in[2], nin, out; } nodes[] = {
      {{v[A]}, 1, v[U]},           {{v[U], v[X1]}, 2, v[S1]},  {{v[B]}, 1, v[V]},
      {{v[V], v[X2]}, 2, v[S2]},   {{v[U], v[X2]}, 2, v[S4]},  {{v[S1], v[S2]}, 2, v[REAL]},
      {{v[V], v[X1]}, 2, v[S3]},   {{v[S3], v[S4]}, 2, v[IMAG]}, {{v[REAL], v[IMAG]}, 2, v[OUT]},
  };
  int nn = (int)(sizeof nodes / sizeof nodes[0]);
  for (int i = 0; i < nn; i++) {
    int out[1] = {nodes[i].out};
    UT_OK(ir_graph_add_node(g, OP_CONV, "n", "X", 1, nodes[i].in, nodes[i].nin, out, 1, NULL));
  }
  int ins[4] = {v[A], v[B], v[X1], v[X2]}, outs[1] = {v[OUT]};
  UT_OK(ir_graph_set_io(g, ins, 4, outs, 1));
  UT_OK(ir_graph_finalize(g));
  uint8_t claim[9];
  memset(claim, 1, sizeof claim);
  int part[9], nparts = 0;
  UT_OK(plan_partition(g, claim, NULL, part, &nparts));
  /* all claimable and connected: one partition, trivially acyclic */
  UT_CHECK(nparts == 1);
  /* random claim sets on this shape: the contracted graph stays acyclic */
  unsigned seed = 12345;
  for (int trial = 0; trial < 500; trial++) {
    for (int i = 0; i < nn; i++) {
      seed = seed * 1103515245u + 12345u;
      claim[i] = (uint8_t)((seed >> 16) & 1u);
    }
    UT_OK(plan_partition(g, claim, NULL, part, &nparts));
    int ok = contracted_acyclic(g, part, nparts);
    UT_CHECK(ok);
    if (!ok) break;
  }
  ir_graph_free(g);
}

/* Random DAGs (up to 14 nodes, 1-3 inputs each from earlier values) and
 * random claim sets: every partitioning contracts to an acyclic graph, and
 * every claimed node is in a partition. */
static void test_partition_random_dags(void) {
  unsigned seed = 2026;
  int bad = 0, trials = 0;
  for (int t = 0; t < 3000 && !bad; t++) {
    seed = seed * 1103515245u + 12345u;
    int nn = 3 + (int)((seed >> 16) % 12), nsrc = 1 + (int)((seed >> 8) % 3);
    ir_graph *g;
    UT_OK(ir_graph_create(&g));
    int64_t d[1] = {4};
    int vals[32], nv = 0;
    char name[16];
    for (int i = 0; i < nsrc; i++) {
      snprintf(name, sizeof name, "src%d", i);
      vals[nv++] = add_value(g, name, 1, d);
    }
    for (int i = 0; i < nn; i++) {
      int in[3], nin = 1 + (int)((seed >> (i % 16)) % 3);
      for (int k = 0; k < nin; k++) {
        seed = seed * 1103515245u + 12345u;
        in[k] = vals[(seed >> 16) % (unsigned)nv];
      }
      snprintf(name, sizeof name, "v%d", i);
      int out[1] = {add_value(g, name, 1, d)};
      UT_OK(ir_graph_add_node(g, OP_CONV, name, "X", 1, in, nin, out, 1, NULL));
      vals[nv++] = out[0];
    }
    int outs[1] = {vals[nv - 1]};
    UT_OK(ir_graph_set_io(g, vals, nsrc, outs, 1));
    UT_OK(ir_graph_finalize(g));
    uint8_t claim[16];
    int part[16], nparts = 0;
    for (int i = 0; i < nn; i++) {
      seed = seed * 1103515245u + 12345u;
      claim[i] = (uint8_t)((seed >> 16) % 4 != 0); /* most claimable */
    }
    UT_OK(plan_partition(g, claim, NULL, part, &nparts));
    for (int i = 0; i < nn; i++)
      if ((claim[i] != 0) != (part[i] != IR_NONE)) bad = 1;
    if (!contracted_acyclic(g, part, nparts)) bad = 1;
    trials++;
    ir_graph_free(g);
  }
  UT_CHECK(!bad);
  if (bad) fprintf(stderr, "partition: a cyclic or incomplete partitioning after %d random graphs\n", trials);
}

/* One Conv, parsed from an attribute table as GetCapability parses it:
 * x [xd] -> y with W [wd]. Returns the parse (and, when it passes, the
 * static check's) verdict; *g keeps the graph for more checks. */
static hd_status *conv_node(const int64_t *xd, const int64_t *wd, const attr *at, int nat, ir_graph **out) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int x = add_value(g, "x", 4, xd), w = add_value(g, "w", 4, wd), y = add_value(g, "y", -1, NULL);
  g->values[w].is_const = 1; /* weights whose data GetCapability does not read */
  int in[2] = {x, w}, outv[1] = {y}, n;
  UT_OK(ir_graph_add_node(g, OP_CONV, "conv", "Conv", 11, in, 2, outv, 1, &n));
  int ins[1] = {x};
  UT_OK(ir_graph_set_io(g, ins, 1, outv, 1));
  UT_OK(ir_graph_finalize(g));
  attr_table tab = {at, nat};
  op_attrs a = attr_table_reader(&tab);
  const op_def *d = op_get(OP_CONV);
  hd_status *st = d->parse(g, &g->nodes[n], &a);
  if (!st) st = d->check(g, &g->nodes[n]);
  ir_tensor *t = calloc((size_t)g->nvalues, sizeof *t);
  if (!st) st = op_check_static(g, &g->nodes[n], t);
  free(t);
  *out = g;
  return st;
}

/* The sizes that once wrapped (issue: Conv pads of 2^30 - 2 feeding a pool
 * made a [1,1,2^31,2^31] intermediate of "0 bytes") are refused before a
 * plan exists, and a plan never computes a wrapped size. */
static void test_size_limits(void) {
  ir_graph *g = NULL;
  int64_t xd[4] = {1, 1, 1, 1}, wd[4] = {1, 1, 1, 1};
  attr huge_pads[] = {{.name = "pads", .n = 4, .i = {(1 << 30) - 2, (1 << 30) - 2, (1 << 30) - 2, (1 << 30) - 2}}};
  UT_ERR(conv_node(xd, wd, huge_pads, 1, &g), HD_ERR_NOT_SUPPORTED);
  ir_graph_free(g);
  attr huge_stride[] = {{.name = "strides", .n = 2, .i = {(int64_t)1 << 31, 1}}};
  UT_ERR(conv_node(xd, wd, huge_stride, 1, &g), HD_ERR_NOT_SUPPORTED);
  ir_graph_free(g);
  /* within the window limits, but the output passes 2^40 elements */
  int64_t bigx[4] = {1, 1, (int64_t)1 << 20, (int64_t)1 << 20};
  attr pads20[] = {{.name = "pads", .n = 4, .i = {1 << 20, 1 << 20, 1 << 20, 1 << 20}}};
  UT_ERR(conv_node(bigx, wd, pads20, 1, &g), HD_ERR_NOT_SUPPORTED);
  ir_graph_free(g);
  /* a plan at input shapes whose intermediate is too large: refused */
  attr pads_ok[] = {{.name = "pads", .n = 4, .i = {1 << 19, 1 << 19, 1 << 19, 1 << 19}}};
  int64_t dynx[4] = {-1, 1, -1, -1};
  UT_OK(conv_node(dynx, wd, pads_ok, 1, &g));
  float one = 1.0f;
  UT_OK(ir_value_set_data(g, ir_graph_find_value(g, "w"), &one, sizeof one));
  ir_shape in = {4, {1 << 21, 1, 1 << 20, 1 << 20}};
  ir_plan *p = NULL;
  UT_ERR(plan_create(g, &in, NULL, &p), HD_ERR_NOT_SUPPORTED);
  UT_CHECK(p == NULL);
  ir_graph_free(g);
  /* element counts: checked, never wrapped */
  int64_t wrap[3] = {(int64_t)1 << 31, (int64_t)1 << 31, 4};
  UT_CHECK(ir_numel(3, wrap) == -1);
  int64_t zero_after[3] = {(int64_t)1 << 40, (int64_t)1 << 30, 0};
  UT_CHECK(ir_numel(3, zero_after) == 0);
  int64_t unknown[2] = {4, IR_DIM_DYNAMIC};
  UT_CHECK(ir_numel(2, unknown) == -1);
  /* a Conv with W of 0 input channels is left to the CPU EP */
  int64_t x0[4] = {1, 0, 4, 4}, w0[4] = {2, 0, 1, 1};
  UT_ERR(conv_node(x0, w0, NULL, 0, &g), HD_ERR_NOT_SUPPORTED);
  ir_graph_free(g);
  /* the NaN-aware difference the tests compare with */
  int mism = 0;
  UT_CHECK(ut_diff(1.0, 1.5, &mism) == 0.5 && !mism);
  (void)ut_diff(NAN, 1.0, &mism);
  UT_CHECK(mism);
  mism = 0;
  (void)ut_diff(NAN, NAN, &mism);
  (void)ut_diff(INFINITY, INFINITY, &mism);
  UT_CHECK(!mism);
  (void)ut_diff(INFINITY, -INFINITY, &mism);
  UT_CHECK(mism);
}

/* Empty tensors: a plan whose every step has empty outputs runs no kernel,
 * and the ref backend runs it (a Conv over a batch of 0 once divided by 0). */
static void test_empty_batch(void) {
  ir_graph *g = NULL;
  int64_t xd[4] = {-1, 2, 5, 5}, wd[4] = {3, 2, 3, 3};
  UT_OK(conv_node(xd, wd, NULL, 0, &g));
  float w[54];
  for (int i = 0; i < 54; i++) w[i] = 0.1f * (float)(i % 5);
  UT_OK(ir_value_set_data(g, ir_graph_find_value(g, "w"), w, sizeof w));
  ir_shape in = {4, {0, 2, 5, 5}};
  ir_plan *p = NULL;
  UT_OK(plan_create(g, &in, NULL, &p));
  UT_CHECK(p && p->nsteps == 0);
  UT_CHECK(p && p->t[g->outputs[0]].dims[0] == 0 && p->t[g->outputs[0]].nbytes == 0);
  be_module *m = NULL;
  be_host host = {0};
  UT_OK(be_module_open("ref", &host, &m));
  be_context *c = NULL;
  be_options o = {0};
  be_alloc none = {0};
  be_graph *bg = NULL;
  be_plan *bp = NULL;
  UT_OK(be_context_create(m, 0, &o, &none, &c));
  UT_OK(be_graph_compile(m, c, g, &bg));
  UT_OK(be_plan_compile(m, bg, p, &bp));
  float dummy = 0;
  void *ins[1] = {&dummy}, *outs[1] = {&dummy};
  UT_OK(be_plan_run(m, bp, ins, outs, NULL));
  be_plan_free(m, bp);
  be_graph_free(m, bg);
  be_context_destroy(m, c);
  be_module_close(m);
  plan_free(p);
  ir_graph_free(g);
}

/* The op registry (generated from the family headers): every kind has an op_def that
 * names itself, its family, an opset range op_find answers with, and a
 * reference implementation (the ref backend supports every kind; a family
 * without ref_family_<f> would not even link). */
static void test_registry(void) {
  be_module *m = NULL;
  be_host host = {0};
  UT_OK(be_module_open("ref", &host, &m));
  be_context *c = NULL;
  be_options o = {0};
  be_alloc none = {0};
  UT_OK(be_context_create(m, 0, &o, &none, &c));
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t d[1] = {4};
  int x = add_value(g, "x", 1, d), y = add_value(g, "y", 1, d);
  for (int k = 1; k < OP_COUNT; k++) {
    const op_def *def = op_get((op_kind)k);
    UT_CHECK(def && def->kind == (op_kind)k);
    if (!def) continue;
    UT_CHECK(def->onnx_type && def->onnx_type[0] && def->parse && def->check && def->infer);
    UT_CHECK(def->min_opset >= 1 && def->min_opset <= def->max_opset);
    UT_CHECK(op_find(def->domain, def->onnx_type, def->min_opset) == def);
    UT_CHECK(op_find(def->domain, def->onnx_type, def->max_opset) == def);
    UT_CHECK(strcmp(op_family_name((op_kind)k), "none") != 0);
    int n;
    UT_OK(ir_graph_add_node(g, k, def->onnx_type, def->onnx_type, def->min_opset, &x, 1, &y, 1, &n));
    UT_OK(be_supports_node(m, c, g, n));
  }
  /* domains: a default-domain op is not found in another domain */
  UT_CHECK(op_find("com.microsoft", "Conv", 11) == NULL);
  UT_CHECK(op_find("ai.onnx", "Conv", 11) == op_get(OP_CONV));
  ir_graph_free(g);
  be_context_destroy(m, c);
  be_module_close(m);
}

static ir_graph *conv_chain(op_auto_pad pad_mode, int64_t stride) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t xd[4] = {1, 2, IR_DIM_DYNAMIC, IR_DIM_DYNAMIC}, wd[4] = {2, 2, 4, 3};
  int x = add_value(g, "x", 4, xd);
  float w[2 * 2 * 4 * 3];
  for (int i = 0; i < 48; i++) w[i] = (float)((i % 7) - 3) * 0.25f;
  int prev = x;
  for (int i = 0; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "w%d", i);
    int wv = add_value(g, name, 4, wd);
    UT_OK(ir_value_set_data(g, wv, w, sizeof w));
    snprintf(name, sizeof name, "y%d", i);
    int y = add_value(g, name, -1, NULL);
    int in[2] = {prev, wv}, out[1] = {y};
    int n;
    UT_OK(ir_graph_add_node(g, OP_CONV, name, "Conv", 11, in, 2, out, 1, &n));
    op_conv *c = &OP_P(&g->nodes[n])->conv;
    c->nspatial = 2;
    c->group = 1;
    c->auto_pad = pad_mode;
    for (int k = 0; k < 2; k++) c->strides[k] = stride, c->dilations[k] = 1;
    prev = y;
  }
  int ins[1] = {x}, outs[1] = {prev};
  UT_OK(ir_graph_set_io(g, ins, 1, outs, 1));
  UT_OK(ir_graph_finalize(g));
  return g;
}

static void test_plan_and_pads(void) {
  ir_graph *g = conv_chain(OP_PAD_SAME_UPPER, 1);
  ir_shape in = {4, {1, 2, 9, 7}};
  ir_plan *p = NULL;
  UT_OK(plan_create(g, &in, NULL, &p));
  if (!p) return;
  UT_CHECK(p->nsteps == 3);
  /* kernel 4x3, stride 1, SAME_UPPER: total pad 3 -> begin 1, end 2 (H); 2 -> 1,1 (W) */
  UT_CHECK(OP_P(&p->steps[0])->conv.pads_begin[0] == 1 && OP_P(&p->steps[0])->conv.pads_end[0] == 2);
  UT_CHECK(OP_P(&p->steps[0])->conv.pads_begin[1] == 1 && OP_P(&p->steps[0])->conv.pads_end[1] == 1);
  const ir_tensor *y2 = &p->t[ir_graph_find_value(g, "y2")];
  UT_CHECK(y2->rank == 4 && y2->dims[2] == 9 && y2->dims[3] == 7 && y2->storage == IR_ST_OUTPUT);
  const ir_tensor *y0 = &p->t[ir_graph_find_value(g, "y0")], *y1 = &p->t[ir_graph_find_value(g, "y1")];
  UT_CHECK(y0->storage == IR_ST_ARENA && y1->storage == IR_ST_ARENA);
  UT_CHECK(y0->offset != y1->offset); /* y0 is live while y1 is written */
  UT_CHECK(p->arena_bytes >= 2 * y0->nbytes);
  plan_free(p);
  /* a wrong static dim is an error, not a crash */
  ir_shape bad = {4, {1, 3, 9, 7}};
  UT_ERR(plan_create(g, &bad, NULL, &p), HD_ERR_INVALID_ARG);
  ir_graph_free(g);

  g = conv_chain(OP_PAD_SAME_LOWER, 2);
  ir_shape in2 = {4, {1, 2, 10, 7}};
  UT_OK(plan_create(g, &in2, NULL, &p));
  if (p) {
    /* H: in 10, stride 2 -> out 5, total = 4*2+4-10 = 2 -> 1,1. W: in 7 -> out 4, total = 3*2+3-7 = 2 */
    UT_CHECK(OP_P(&p->steps[0])->conv.pads_begin[0] == 1 && OP_P(&p->steps[0])->conv.pads_end[0] == 1);
    UT_CHECK(p->t[ir_graph_find_value(g, "y0")].dims[2] == 5);
    plan_free(p);
  }
  ir_graph_free(g);
}

/* Runs plan p of g once on the reference backend. */
static void ref_run(const ir_graph *g, const ir_plan *p, void *const *ins, void *const *outs) {
  be_module *m = NULL;
  be_host host = {0};
  be_options opts = {0};
  be_context *ctx = NULL;
  be_graph *bg = NULL;
  be_plan *bp = NULL;
  UT_OK(be_module_open("ref", &host, &m));
  if (!m) return;
  UT_OK(be_context_create(m, 0, &opts, &(be_alloc){0}, &ctx));
  UT_OK(be_graph_compile(m, ctx, g, &bg));
  UT_OK(be_plan_compile(m, bg, p, &bp));
  if (bp) UT_OK(be_plan_run(m, bp, ins, outs, NULL));
  be_plan_free(m, bp);
  be_graph_free(m, bg);
  be_context_destroy(m, ctx);
  be_module_close(m);
}

/* The ref backend on the chain gives what a direct evaluation gives. */
static void test_ref_runs_chain(void) {
  ir_graph *g = conv_chain(OP_PAD_VALID, 1);
  ir_shape in = {4, {1, 2, 12, 9}};
  ir_plan *p = NULL;
  UT_OK(plan_create(g, &in, NULL, &p));
  if (!p) {
    ir_graph_free(g);
    return;
  }
  float x[1 * 2 * 12 * 9];
  for (int i = 0; i < (int)(sizeof x / sizeof x[0]); i++) x[i] = sinf((float)i);
  const ir_tensor *yt = &p->t[g->outputs[0]];
  UT_CHECK(yt->dims[2] == 3 && yt->dims[3] == 3); /* 12-3*3 = 3; 9-3*2 = 3 */
  float y[2 * 3 * 3];
  void *ins[1] = {x}, *outs[1] = {y};
  ref_run(g, p, ins, outs);
  /* direct evaluation of three VALID convs */
  const float *w = g->values[ir_graph_find_value(g, "w0")].data;
  float cur[2 * 12 * 9], nxt[2 * 12 * 9];
  memcpy(cur, x, sizeof x);
  int H = 12, W = 9;
  for (int layer = 0; layer < 3; layer++) {
    int oh = H - 3, ow = W - 2;
    for (int m2 = 0; m2 < 2; m2++)
      for (int i = 0; i < oh; i++)
        for (int j = 0; j < ow; j++) {
          double acc = 0;
          for (int c = 0; c < 2; c++)
            for (int ki = 0; ki < 4; ki++)
              for (int kj = 0; kj < 3; kj++)
                acc += (double)cur[(c * H + i + ki) * W + j + kj] * w[((m2 * 2 + c) * 4 + ki) * 3 + kj];
          nxt[(m2 * oh + i) * ow + j] = (float)acc;
        }
    H = oh, W = ow;
    memcpy(cur, nxt, sizeof(float) * (size_t)(2 * H * W));
  }
  double worst = 0;
  int nonfinite = 0;
  for (int i = 0; i < 18; i++) worst = fmax(worst, ut_diff(y[i], cur[i], &nonfinite));
  UT_CHECK(!nonfinite);
  UT_CHECK(worst < 1e-4);
  plan_free(p);
  ir_graph_free(g);
}

/* One ONNX node of a hand-built graph: parsed by its op as ep/ would. */
typedef struct ir_node_spec {
  const char *type;
  int opset, in[2], nin, out;
  const attr *a;
  int na;
} ir_node_spec;

/* Adds and parses one ai.onnx node. */
static void add_node(ir_graph *g, const char *type, int opset, const int *in, int nin, const int *out, int nout,
                     const attr *a, int na) {
  const op_def *def = op_find("", type, opset);
  int idx;
  UT_OK(ir_graph_add_node(g, def->kind, type, type, opset, in, nin, out, nout, &idx));
  attr_table at = {a, na};
  op_attrs oa = attr_table_reader(&at);
  UT_OK(def->parse(g, &g->nodes[idx], &oa));
}

/* Adds and parses nodes[0..n) in order; the graph's input x and output y. */
static void add_nodes(ir_graph *g, const ir_node_spec *nodes, int n, int x, int y) {
  for (int k = 0; k < n; k++)
    add_node(g, nodes[k].type, nodes[k].opset, nodes[k].in, nodes[k].nin, &nodes[k].out, 1, nodes[k].a, nodes[k].na);
  int ins[1] = {x}, outs[1] = {y};
  UT_OK(ir_graph_set_io(g, ins, 1, outs, 1));
  UT_OK(ir_graph_finalize(g));
}

/* x [3, 1, h, w] -> Relu -> r -> Gather(r, 2, axis 0) -> g -> Transpose
 * (1, 0, 2) -> t -> Add(t, t) -> y. The Gather's output is one contiguous
 * run of r and the Transpose only moves a unit dim: both are views of r at
 * an offset when the offset keeps the arena's 256-byte alignment (h x w =
 * 128 floats: 1 KiB), else the Gather runs (h x w = 15). */
static void test_contiguous_views(void) {
  for (int aligned = 0; aligned < 2; aligned++) {
    int64_t h = aligned ? 8 : 3, w = aligned ? 16 : 5;
    ir_graph *g;
    UT_OK(ir_graph_create(&g));
    int64_t xd[4] = {3, 1, h, w}, one[1] = {1};
    int x = add_value(g, "x", 4, xd), r = add_value(g, "r", -1, NULL), gv = add_value(g, "g", -1, NULL);
    int t = add_value(g, "t", -1, NULL), y = add_value(g, "y", -1, NULL);
    int idx = IR_NONE;
    UT_OK(ir_graph_add_value(g, "idx", HD_DT_I64, 0, one, &idx));
    int64_t two = 2;
    UT_OK(ir_value_set_data(g, idx, &two, sizeof two));
    static const attr perm[] = {{.name = "perm", .n = 3, .i = {1, 0, 2}}};
    static const attr axis0[] = {{.name = "axis", .n = -1, .i = {0}}};
    const ir_node_spec nodes[] = {{"Relu", 14, {x}, 1, r, NULL, 0},
                                  {"Gather", 13, {r, idx}, 2, gv, axis0, 1},
                                  {"Transpose", 13, {gv}, 1, t, perm, 1},
                                  {"Add", 14, {t, t}, 2, y, NULL, 0}};
    add_nodes(g, nodes, 4, x, y);
    ir_shape in = {4, {3, 1, h, w}};
    ir_plan *p = NULL;
    UT_OK(plan_create(g, &in, NULL, &p));
    if (!p) {
      ir_graph_free(g);
      continue;
    }
    const ir_tensor *tg = &p->t[gv], *tt = &p->t[t];
    if (aligned) {
      UT_CHECK(p->nsteps == 2);
      UT_CHECK(tg->storage == IR_ST_ALIAS && tg->index == r && tg->offset == (size_t)(2 * h * w) * sizeof(float));
      UT_CHECK(tt->storage == IR_ST_ALIAS && tt->index == r && tt->offset == tg->offset);
    } else {
      UT_CHECK(p->nsteps == 3 && tg->storage == IR_ST_ARENA);
      UT_CHECK(tt->storage == IR_ST_ALIAS && tt->index == gv && tt->offset == 0);
    }
    /* the numbers: y = 2 relu(x[2]) */
    float xs[3 * 8 * 16], ys[8 * 16];
    for (int i = 0; i < 3 * h * w; i++) xs[i] = sinf((float)i * 0.7f);
    void *bi[1] = {xs}, *bo[1] = {ys};
    ref_run(g, p, bi, bo);
    int bad = 0;
    for (int i = 0; i < h * w; i++) bad += ys[i] != 2.0f * fmaxf(xs[2 * h * w + i], 0.0f);
    UT_CHECK(bad == 0);
    plan_free(p);
    ir_graph_free(g);
  }
}

/* x [6, 1, 64] -> Relu -> r -> Gather(r, idx [2, 1, 3], axis 0) -> g ->
 * Expand(g, its own shape) -> e -> Add(e, e) -> y. An index holding 0..5
 * in order takes r whole (transformers' encoders gather their mask so) and
 * the Expand changes nothing: both are views of r, one step left. An index
 * out of order (0, 2, 1, ...) gathers: two steps. */
static void test_whole_axis_views(void) {
  for (int in_order = 0; in_order < 2; in_order++) {
    ir_graph *g;
    UT_OK(ir_graph_create(&g));
    int64_t xd[3] = {6, 1, 64}, id[3] = {2, 1, 3}, shape_d[1] = {5};
    int x = add_value(g, "x", 3, xd), r = add_value(g, "r", -1, NULL), gv = add_value(g, "g", -1, NULL);
    int e = add_value(g, "e", -1, NULL), y = add_value(g, "y", -1, NULL), idx = IR_NONE, shape = IR_NONE;
    UT_OK(ir_graph_add_value(g, "idx", HD_DT_I64, 3, id, &idx));
    const int64_t order[6] = {0, 1, 2, 3, 4, 5}, swapped[6] = {0, 2, 1, 3, 4, 5}, to[5] = {2, 1, 3, 1, 64};
    UT_OK(ir_value_set_data(g, idx, in_order ? order : swapped, sizeof order));
    UT_OK(ir_graph_add_value(g, "shape", HD_DT_I64, 1, shape_d, &shape));
    UT_OK(ir_value_set_data(g, shape, to, sizeof to));
    static const attr axis0[] = {{.name = "axis", .n = -1, .i = {0}}};
    const ir_node_spec nodes[] = {{"Relu", 14, {x}, 1, r, NULL, 0},
                                  {"Gather", 13, {r, idx}, 2, gv, axis0, 1},
                                  {"Expand", 13, {gv, shape}, 2, e, NULL, 0},
                                  {"Add", 14, {e, e}, 2, y, NULL, 0}};
    add_nodes(g, nodes, 4, x, y);
    ir_shape in = {3, {6, 1, 64}};
    ir_plan *p = NULL;
    UT_OK(plan_create(g, &in, NULL, &p));
    if (!p) {
      ir_graph_free(g);
      continue;
    }
    const ir_tensor *tg = &p->t[gv], *te = &p->t[e];
    UT_CHECK(te->rank == 5 && te->dims[0] == 2 && te->dims[1] == 1 && te->dims[2] == 3 && te->dims[3] == 1);
    if (in_order) {
      UT_CHECK(p->nsteps == 2 && tg->storage == IR_ST_ALIAS && tg->index == r && tg->offset == 0);
      UT_CHECK(te->storage == IR_ST_ALIAS && te->index == r && te->offset == 0);
    } else {
      UT_CHECK(p->nsteps == 3 && tg->storage == IR_ST_ARENA);
      UT_CHECK(te->storage == IR_ST_ALIAS && te->index == gv && te->offset == 0);
    }
    /* the numbers: y = 2 relu(x[order[j]]) */
    float xs[6 * 64], ys[6 * 64];
    for (int i = 0; i < 6 * 64; i++) xs[i] = sinf((float)i * 0.37f);
    void *bi[1] = {xs}, *bo[1] = {ys};
    ref_run(g, p, bi, bo);
    int bad = 0;
    for (int j = 0; j < 6; j++)
      for (int c = 0; c < 64; c++)
        bad += ys[j * 64 + c] != 2.0f * fmaxf(xs[(in_order ? order : swapped)[j] * 64 + c], 0.0f);
    UT_CHECK(bad == 0);
    plan_free(p);
    ir_graph_free(g);
  }
}

/* The Gather's index computed when the plan is built, then viewed:
 * Unsqueeze(Sub(3, 1)) is a view of a folded value, whose bytes move into
 * the plan's folded block; the Gather reads the index there and is a view
 * of x's Relu at 2 x h x w floats. */
static void test_view_of_folded_index(void) {
  ir_graph *g;
  UT_OK(ir_graph_create(&g));
  int64_t xd[4] = {3, 1, 8, 16}, one[1] = {1};
  int x = add_value(g, "x", 4, xd), r = add_value(g, "r", -1, NULL), gv = add_value(g, "g", -1, NULL);
  int y = add_value(g, "y", -1, NULL);
  int c3 = IR_NONE, c1 = IR_NONE, ax = IR_NONE, d = IR_NONE, iu = IR_NONE;
  int64_t three = 3, onev = 1, zero = 0;
  UT_OK(ir_graph_add_value(g, "c3", HD_DT_I64, 0, one, &c3));
  UT_OK(ir_graph_add_value(g, "c1", HD_DT_I64, 0, one, &c1));
  UT_OK(ir_graph_add_value(g, "axes", HD_DT_I64, 1, one, &ax));
  UT_OK(ir_graph_add_value(g, "d", HD_DT_I64, -1, NULL, &d));
  UT_OK(ir_graph_add_value(g, "iu", HD_DT_I64, -1, NULL, &iu));
  UT_OK(ir_value_set_data(g, c3, &three, sizeof three));
  UT_OK(ir_value_set_data(g, c1, &onev, sizeof onev));
  UT_OK(ir_value_set_data(g, ax, &zero, sizeof zero));
  static const attr axis0[] = {{.name = "axis", .n = -1, .i = {0}}};
  const ir_node_spec nodes[] = {{"Relu", 14, {x}, 1, r, NULL, 0},          {"Sub", 14, {c3, c1}, 2, d, NULL, 0},
                                {"Unsqueeze", 13, {d, ax}, 2, iu, NULL, 0}, {"Gather", 13, {r, iu}, 2, gv, axis0, 1},
                                {"Add", 14, {gv, gv}, 2, y, NULL, 0}};
  add_nodes(g, nodes, 5, x, y);
  uint8_t *fold = calloc((size_t)g->nnodes + 1, 1);
  op_fold_closure(g, NULL, fold);
  const plan_eval eval = {NULL, ref_step_run, fold};
  ir_shape in = {4, {3, 1, 8, 16}};
  ir_plan *p = NULL;
  UT_OK(plan_create(g, &in, &eval, &p));
  free(fold);
  if (p) {
    const ir_tensor *tg = &p->t[gv];
    UT_CHECK(tg->storage == IR_ST_ALIAS && tg->index == r && tg->offset == 2 * 8 * 16 * sizeof(float));
    float xs[3 * 8 * 16], ys[8 * 16];
    for (int i = 0; i < 3 * 8 * 16; i++) xs[i] = cosf((float)i * 0.3f);
    void *bi[1] = {xs}, *bo[1] = {ys};
    ref_run(g, p, bi, bo);
    int bad = 0;
    for (int i = 0; i < 8 * 16; i++) bad += ys[i] != 2.0f * fmaxf(xs[2 * 8 * 16 + i], 0.0f);
    UT_CHECK(bad == 0);
    plan_free(p);
  }
  ir_graph_free(g);
}

/* x [2, 6, 48] -> Relu -> r, then Q, K and V [2, 2, 6, 8] (2 heads of 8)
 * read from r's rows, into a 4-D Attention:
 *   form 0 (GPT-2's): Split(r, last axis, 3) -> Reshape [2, 6, 2, 8] ->
 *     Transpose (0, 2, 1, 3), each;
 *   form 1 (ViT's): Reshape [2, 6, 3, 2, 8] -> Transpose (2, 0, 3, 1, 4) ->
 *     Gather 0, 1, 2 on axis 0;
 *   form 2: form 0 with Q also added to the output (an Add reads
 *     contiguous bytes).
 * Forms 0 and 1 run no copy: the Split's or the Transpose's outputs and
 * all that follows are strided aliases of r. Form 2 runs the Split and
 * Q's Transpose (K's and V's read the Split's outputs in place). The
 * numbers against attention computed here. */
static void test_strided_views(void) {
  for (int form = 0; form < 3; form++) {
    ir_graph *g;
    UT_OK(ir_graph_create(&g));
    int64_t xd[3] = {2, 6, 48}, four[1] = {4}, five[1] = {5}, one[1] = {1};
    const int64_t heads[4] = {2, 6, 2, 8}, packed[5] = {2, 6, 3, 2, 8};
    int x = add_value(g, "x", 3, xd), r = add_value(g, "r", -1, NULL), a = add_value(g, "a", -1, NULL);
    int y = add_value(g, "y", -1, NULL), s4 = IR_NONE, s5 = IR_NONE, qkv[3], split[3];
    UT_OK(ir_graph_add_value(g, "s4", HD_DT_I64, 1, four, &s4));
    UT_OK(ir_graph_add_value(g, "s5", HD_DT_I64, 1, five, &s5));
    UT_OK(ir_value_set_data(g, s4, heads, sizeof heads));
    UT_OK(ir_value_set_data(g, s5, packed, sizeof packed));
    add_node(g, "Relu", 14, (int[]){x}, 1, (int[]){r}, 1, NULL, 0);
    static const attr last[] = {{.name = "axis", .n = -1, .i = {-1}}}, axis0[] = {{.name = "axis", .n = -1, .i = {0}}};
    static const attr perm4[] = {{.name = "perm", .n = 4, .i = {0, 2, 1, 3}}};
    static const attr perm5[] = {{.name = "perm", .n = 5, .i = {2, 0, 3, 1, 4}}};
    for (int k = 0; k < 3; k++) qkv[k] = add_value(g, k == 0 ? "q" : k == 1 ? "k" : "v", -1, NULL);
    if (form != 1) {
      for (int k = 0; k < 3; k++) split[k] = add_value(g, k == 0 ? "sq" : k == 1 ? "sk" : "sv", -1, NULL);
      add_node(g, "Split", 13, (int[]){r}, 1, split, 3, last, 1);
      for (int k = 0; k < 3; k++) {
        int h = add_value(g, k == 0 ? "hq" : k == 1 ? "hk" : "hv", -1, NULL);
        add_node(g, "Reshape", 14, (int[]){split[k], s4}, 2, (int[]){h}, 1, NULL, 0);
        add_node(g, "Transpose", 13, (int[]){h}, 1, (int[]){qkv[k]}, 1, perm4, 1);
      }
    } else {
      int h = add_value(g, "h", -1, NULL), t = add_value(g, "t", -1, NULL);
      add_node(g, "Reshape", 14, (int[]){r, s5}, 2, (int[]){h}, 1, NULL, 0);
      add_node(g, "Transpose", 13, (int[]){h}, 1, (int[]){t}, 1, perm5, 1);
      for (int k = 0; k < 3; k++) {
        int idx = IR_NONE;
        const int64_t iv = k;
        UT_OK(ir_graph_add_value(g, k == 0 ? "i0" : k == 1 ? "i1" : "i2", HD_DT_I64, 0, one, &idx));
        UT_OK(ir_value_set_data(g, idx, &iv, sizeof iv));
        add_node(g, "Gather", 13, (int[]){t, idx}, 2, (int[]){qkv[k]}, 1, axis0, 1);
      }
    }
    add_node(g, "Attention", 23, qkv, 3, (int[]){a}, 1, NULL, 0);
    add_node(g, "Add", 14, (int[]){a, form == 2 ? qkv[0] : a}, 2, (int[]){y}, 1, NULL, 0);
    UT_OK(ir_graph_set_io(g, (int[]){x}, 1, (int[]){y}, 1));
    UT_OK(ir_graph_finalize(g));
    ir_shape in = {3, {2, 6, 48}};
    ir_plan *p = NULL;
    UT_OK(plan_create(g, &in, NULL, &p));
    if (!p) {
      ir_graph_free(g);
      continue;
    }
    if (form != 2) {
      UT_CHECK(p->nsteps == 3); /* Relu, Attention, Add */
      for (int k = 0; k < 3; k++) {
        const ir_tensor *tk = &p->t[qkv[k]];
        int64_t st[4];
        ir_tensor_strides(tk, st);
        UT_CHECK(tk->storage == IR_ST_ALIAS && tk->index == r && tk->strided && tk->offset == 16 * sizeof(float) * k);
        UT_CHECK(st[0] == 6 * 48 && st[1] == 8 && st[2] == 48 && st[3] == 1);
      }
    } else {
      /* the Split and Q's Transpose run; K's and V's Transposes are strided aliases of the Split's outputs */
      UT_CHECK(p->nsteps == 5 && !p->t[split[0]].strided && p->t[qkv[0]].storage == IR_ST_ARENA);
      UT_CHECK(p->t[qkv[1]].strided && p->t[qkv[1]].index == split[1] && p->t[qkv[2]].index == split[2]);
    }
    float xs[2 * 6 * 48], ys[2 * 2 * 6 * 8];
    for (int i = 0; i < 2 * 6 * 48; i++) xs[i] = sinf((float)i * 0.37f) + 0.2f;
    void *bi[1] = {xs}, *bo[1] = {ys};
    ref_run(g, p, bi, bo);
    double worst = 0, norm = 0;
    int nonfinite = 0;
#define X(b, i, slot, h, d) fmax(xs[(b) * 288 + (i) * 48 + (slot) * 16 + (h) * 8 + (d)], 0)
    for (int b = 0; b < 2; b++)
      for (int h = 0; h < 2; h++)
        for (int i = 0; i < 6; i++) {
          double sc[6], mx = -1e30, sum = 0;
          for (int j = 0; j < 6; j++) {
            double dot = 0;
            for (int d = 0; d < 8; d++) dot += X(b, i, 0, h, d) * X(b, j, 1, h, d);
            sc[j] = dot / sqrt(8.0);
            mx = fmax(mx, sc[j]);
          }
          for (int j = 0; j < 6; j++) sum += sc[j] = exp(sc[j] - mx);
          for (int d = 0; d < 8; d++) {
            double o = 0;
            for (int j = 0; j < 6; j++) o += sc[j] / sum * X(b, j, 2, h, d);
            double want = o + (form == 2 ? X(b, i, 0, h, d) : o);
            worst = fmax(worst, ut_diff(ys[((b * 2 + h) * 6 + i) * 8 + d], (float)want, &nonfinite));
            norm += want * want;
          }
        }
#undef X
    UT_CHECK(!nonfinite && worst < 1e-5 && norm > 1.0);
    plan_free(p);
    ir_graph_free(g);
  }
}

static void test_op_table(void) {
  UT_CHECK(op_find("", "Conv", 11) == op_get(OP_CONV));
  UT_CHECK(op_find("ai.onnx", "Conv", 22) == op_get(OP_CONV));
  UT_CHECK(op_find("", "Conv", 23) == NULL);
  UT_CHECK(op_find("com.microsoft", "Conv", 11) == NULL);
  UT_CHECK(op_find("", "NoSuchOp", 11) == NULL);
}

int main(void) {
  test_op_table();
  test_partition_no_reentry();
  test_partition_contracted_cycle();
  test_partition_random_dags();
  test_registry();
  test_size_limits();
  test_empty_batch();
  test_plan_and_pads();
  test_ref_runs_chain();
  test_contiguous_views();
  test_whole_axis_views();
  test_strided_views();
  test_view_of_folded_index();
  return ut_finish("test_ir");
}
