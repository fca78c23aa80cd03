/* plan_layout: channels last (NHWC) inside a partition, one pass over a
 * compiled partition's graph after fusion and precision.
 *
 * Why: cuDNN's half-precision convolution engines are NHWC; given NCHW
 * they transpose the input and the output around every convolution (on an
 * H100, ResNet-50 at batch 32 in fp16 spent 0.81 of its 3.1 ms of kernels
 * in those transposes), and a 1x1 convolution in NCHW is a matmul per
 * image where NHWC makes it one matmul over the batch with the bias and
 * ReLU in the BLAS's epilogue. Models that run channel-last code inside an
 * NCHW network (ConvNeXt) move their channels back and forth around every
 * block; channels last, those moves are gone.
 *
 * Which nodes, in topological order:
 *   - 2D Conv of one group (op_conv.channels_last; W's constant permuted to
 *     [M, kh, kw, C] here once) where the op and the backend take it; and
 *     depthwise ones (one filter a channel, W [C, kh, kw, 1]);
 *   - pools, BatchNormalization, elementwise unary/binary ops, Cast and
 *     Concat with a channels-last input, every input of rank 4 (constants
 *     are permuted here; any other value gets a Transpose), of one element,
 *     or a constant of lower rank (broadcast as NCHW: padded to rank 4 and
 *     permuted here);
 *   - what fusion left of the Transposes around channel-last code written
 *     into an NCHW model (ConvNeXt: Conv -> Transpose(0,2,3,1) ->
 *     LayerNorm -> MLP -> Transpose(0,3,1,2) -> Add): a norm over the
 *     channels of a channels-last input (op_norm.in_chan 1) reads it as
 *     rows, one writing its output channel-major (out_chan 1) writes rows;
 *     a binary op reading rows as NCHW (a fused Transpose(0,3,1,2)) reads
 *     them as they are; and a Transpose(0,3,1,2) of rows is no work at all:
 *     its output's channels-last twin is its input.
 * a node's rank-4 values then hold [N, H, W, C]. Where a channels-first
 * value meets a channels-last reader, one Transpose (perm 0,2,3,1) follows
 * its producer; where a channels-last value has a channels-first reader or
 * is a partition output, one Transpose back (0,3,1,2) restores the
 * original value. Only where the convolutions outnumber those Transposes
 * two to one is the graph changed (ResNet-50: 53 convolutions, 2
 * Transposes; ConvNeXt-T: 22 and 2, and none of the Transposes its blocks
 * and downsamplings moved channels with). PLAN_LAYOUT_DENSE leaves out the
 * depthwise convolutions and the channel-moving forms (the pass before
 * they were added: MobileNetV2 and ConvNeXt then stay channels first). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_log.h"
#include "ops/ops.h"
#include "plan/plan.h"

static const int8_t to_last[4] = {0, 2, 3, 1}, to_first[4] = {0, 3, 1, 2};

typedef struct lay_transpose {
  int src, dst, after; /* after: the node it follows, or IR_NONE (first) */
  const int8_t *perm;
} lay_transpose;

typedef struct lay {
  ir_graph *g;
  int nv0, n0;
  int dense_only;  /* PLAN_LAYOUT_DENSE: one-group convolutions and their followers alone */
  int all_depthwise; /* PLAN_LAYOUT_ALL: depthwise convolutions channels last whatever moves */
  uint8_t *last;   /* per node: computes channels last */
  int *twin;       /* per original value: the value holding it channels last, or IR_NONE */
  uint8_t *made;   /* per original value: its producer writes the twin (channels last) */
  lay_transpose *tr;
  int ntr, cap_tr;
  plan_layout_report *rep;
} lay;

static int is_elementwise(const ir_node *n) {
  if (op_node_in_family(n, "unary")) return !OP_P(n)->unary.has_bias;
  return op_node_in_family(n, "binary") || n->kind == OP_CAST; /* a binary's permuted inputs: binary_rows_input */
}

/* Input k of binary node n reads rows [N, H, W, C] as NCHW through a fused
 * Transpose(0,3,1,2): channels last, it reads them as they are. Not a value
 * this pass lays out itself (that one's twin would be read). */
static int binary_rows_input(const lay *L, const ir_node *n, int k) {
  const op_binary *b = &OP_P(n)->binary;
  int v = k < n->nin ? n->in[k] : IR_NONE;
  return k < 2 && v != IR_NONE && v < L->nv0 && (b->permuted >> k & 1) && L->g->values[v].rank == 4 &&
         !L->made[v] && !memcmp(b->perm[k], to_first, 4);
}

/* A Transpose(0,3,1,2) of rows: its output's twin is its input. */
static int is_to_first(const ir_graph *g, const ir_node *n) {
  if (n->kind != OP_TRANSPOSE || n->nin < 1 || n->in[0] == IR_NONE || n->nout != 1) return 0;
  const op_copy *p = &OP_P(n)->copy;
  return p->has_axes && p->n == 4 && !memcmp(p->axes, to_first, 4) && g->values[n->in[0]].rank == 4;
}

/* A depthwise 2D Conv: one filter a channel, as many outputs as inputs. */
static int is_depthwise(const ir_graph *g, const ir_node *n) {
  const op_conv *c = &OP_P(n)->conv;
  const ir_value *w = &g->values[n->in[1]];
  return c->group > 1 && w->rank == 4 && w->dims[0] == c->group && w->dims[1] == 1;
}

/* A constant of rank 1 to 3 and more than one element: it broadcasts
 * against NCHW, so channels last it is the rank-4 constant padded with
 * leading ones and permuted. */
static int low_rank_const(const ir_value *v) {
  return v->is_const && v->data && v->rank >= 1 && v->rank < 4 && ir_numel(v->rank, v->dims) > 1;
}

/* How node n computes channels last: which inputs follow the layout (bit
 * k: read through a twin) and whether its output does (written as one). */
typedef struct lay_form {
  unsigned in;
  int out;
} lay_form;

static lay_form form_of(const lay *L, const ir_node *n) {
  const ir_graph *g = L->g;
  lay_form f = {0, 1};
  if (n->kind == OP_CONV) {
    f.in = 1u | 2u | (OP_P(n)->conv.has_residual ? 8u : 0u);
  } else if (n->kind == OP_BATCHNORM || op_node_in_family(n, "pool")) {
    f.in = 1u;
  } else if (op_node_in_family(n, "norm")) {
    f.in = OP_P(n)->norm.in_chan == 1 ? 1u : 0u;
    f.out = OP_P(n)->norm.out_chan == 1;
  } else if (!is_to_first(g, n)) {
    int binary = op_node_in_family(n, "binary");
    for (int k = 0; k < n->nin && k < 32; k++) {
      int v = n->in[k];
      if (v == IR_NONE || (binary && binary_rows_input(L, n, k))) continue;
      if (g->values[v].rank == 4 || low_rank_const(&g->values[v])) f.in |= 1u << k;
    }
  }
  return f;
}

/* v's dims (and symbols) at rank 4: a lower rank padded with leading ones. */
static void dims4(const ir_value *v, int64_t *d, uint32_t *s) {
  int pad = v->rank < 4 ? 4 - v->rank : 0;
  for (int i = 0; i < 4; i++) {
    d[i] = i < pad ? 1 : v->dims[i - pad];
    if (s) s[i] = i < pad ? 0 : v->sym[i - pad];
  }
}

/* v's dims permuted by perm (rank 4; a lower rank padded with leading ones). */
static void permute_dims(ir_value *v, const int8_t *perm) {
  int64_t pd[4], d[4];
  uint32_t ps[4], s[4];
  dims4(v, pd, ps);
  for (int i = 0; i < 4; i++) d[i] = pd[perm[i]], s[i] = ps[perm[i]];
  v->rank = 4;
  memcpy(v->dims, d, sizeof d);
  memcpy(v->sym, s, sizeof s);
}

/* Bit k of m (0 past the mask's 32 bits). */
static int has_bit(unsigned m, int k) { return k < 32 && (m >> k & 1); }

/* Node n's parameters for channels last. */
static void set_channels_last(const lay *L, ir_node *n) {
  if (n->kind == OP_CONV) {
    OP_P(n)->conv.channels_last = 1;
  } else if (n->kind == OP_BATCHNORM) {
    OP_P(n)->batchnorm.channels_last = 1;
  } else if (n->kind == OP_CONCAT) { /* NCHW axis a is at to_first[a] */
    OP_P(n)->concat.axis = to_first[(OP_P(n)->concat.axis + 4) % 4];
  } else if (op_node_in_family(n, "pool")) {
    OP_P(n)->pool.channels_last = 1;
  } else if (op_node_in_family(n, "norm")) { /* the channels its fused Transposes moved are last already */
    if (OP_P(n)->norm.in_chan == 1) OP_P(n)->norm.in_chan = -1;
    if (OP_P(n)->norm.out_chan == 1) OP_P(n)->norm.out_chan = -1;
  } else if (op_node_in_family(n, "binary")) {
    unsigned rows = 0;
    for (int k = 0; k < 2; k++) rows |= (unsigned)binary_rows_input(L, n, k) << k;
    OP_P(n)->binary.permuted &= ~(int)rows;
  }
}

/* Node i channels last, tried as it would run: the op's check and the
 * backend's support query on its values with permuted dims and its
 * parameters set (all restored after). NULL when both take it. */
static hd_status *probe(lay *L, int i, const plan_support *sup) {
  ir_graph *g = L->g;
  ir_node *n = &g->nodes[i];
  if (is_to_first(g, n)) return NULL; /* nothing left to run */
  int vals[40], nvals = 0;
  lay_form f = form_of(L, n);
  for (int k = 0; k < n->nin && k < 32; k++)
    if (has_bit(f.in, k)) vals[nvals++] = n->in[k];
  if (f.out) vals[nvals++] = n->out[0];
  for (int a = 0; a < nvals; a++)
    for (int b = 0; b < a; b++)
      if (vals[a] == vals[b]) return hd_error(HD_ERR_NOT_SUPPORTED, "a value read twice");
  ir_value kept[40];
  op_params saved = *OP_P(n);
  set_channels_last(L, n);
  for (int a = 0; a < nvals; a++) {
    kept[a] = g->values[vals[a]];
    permute_dims(&g->values[vals[a]], to_last);
  }
  hd_status *st = op_get((op_kind)n->kind)->check(g, n);
  if (!st && sup && sup->supports) st = sup->supports(sup->ctx, g, i);
  for (int a = 0; a < nvals; a++) g->values[vals[a]] = kept[a];
  *OP_P(n) = saved;
  return st;
}

/* Whether node i can compute channels last (its parameters unchanged). */
static int candidate(lay *L, int i) {
  ir_graph *g = L->g;
  const ir_node *n = &g->nodes[i];
  if (n->dead || n->kind == OP_UNKNOWN || n->nout != 1 || n->out[0] == IR_NONE || n->nin > 32) return 0;
  if (g->values[n->out[0]].rank != 4) return 0;
  if (is_to_first(g, n)) return !L->dense_only;
  const op_def *def = op_get((op_kind)n->kind);
  if (!def || def->shape_only || def->view || op_node_host_known(g, n)) return 0;
  if (n->kind == OP_CONV) {
    const op_conv *c = &OP_P(n)->conv;
    if (c->nspatial != 2 || c->transpose) return 0;
    return c->group == 1 || (!L->dense_only && is_depthwise(g, n));
  }
  int norm = op_node_in_family(n, "norm");
  if (norm) {
    const op_norm *p = &OP_P(n)->norm;
    if (L->dense_only || p->permuted || p->out_permuted || (p->in_chan != 1 && p->out_chan != 1)) return 0;
    if (p->in_chan == 1 && g->values[n->in[0]].rank != 4) return 0;
    if (p->in_chan != 1) return 1; /* rows in, channel-major out: rows out instead */
  }
  int follows = norm || n->kind == OP_BATCHNORM || n->kind == OP_CONCAT || is_elementwise(n) ||
                op_node_in_family(n, "pool");
  if (!follows) return 0;
  int binary = op_node_in_family(n, "binary"), any = 0;
  for (int k = 0; binary && k < 2 && k < n->nin; k++) /* inputs read permuted: rows alone, as they are */
    if ((OP_P(n)->binary.permuted >> k & 1) && (L->dense_only || !binary_rows_input(L, n, k))) return 0;
  if (n->kind == OP_CONCAT && (OP_P(n)->concat.axis < -4 || OP_P(n)->concat.axis > 3)) return 0;
  lay_form f = form_of(L, n);
  for (int k = 0; k < n->nin; k++) {
    int v = n->in[k];
    if (v == IR_NONE) continue;
    const ir_value *val = &g->values[v];
    if (!has_bit(f.in, k)) {
      /* BatchNormalization's per-channel parameters and a norm's keep their
       * shape; one element of known rank broadcasts the same in either
       * layout; rows read through a fused Transpose are read as they are */
      if (n->kind == OP_BATCHNORM || norm || (val->rank >= 0 && val->rank <= 4 && ir_numel(val->rank, val->dims) == 1))
        continue;
      if (binary && binary_rows_input(L, n, k)) {
        any = 1; /* its Transpose goes away */
        continue;
      }
      return 0;
    }
    if (val->rank < 4 && L->dense_only) return 0;
    any |= L->made[v]; /* others: constants (permuted) or a Transpose (counted) */
  }
  return any;
}

static hd_status *add_transpose(lay *L, int src, int dst, int after, const int8_t *perm) {
  if (L->ntr == L->cap_tr) {
    int cap = L->cap_tr ? 2 * L->cap_tr : 16;
    lay_transpose *t = realloc(L->tr, sizeof *t * (size_t)cap);
    if (!t) return hd_error(HD_ERR_OUT_OF_MEMORY, "layout: out of host memory");
    L->tr = t;
    L->cap_tr = cap;
  }
  L->tr[L->ntr++] = (lay_transpose){src, dst, after, perm};
  return NULL;
}

/* A new value like v with dims permuted by to_last (rank 4). */
static hd_status *twin_value(ir_graph *g, int v, int *out) {
  char name[512];
  snprintf(name, sizeof name, "%s/nhwc", g->values[v].name);
  ir_value src = g->values[v]; /* adding a value may move the array */
  permute_dims(&src, to_last);
  HD_TRY(ir_graph_add_value(g, name, src.dtype, 4, src.dims, out));
  ir_value *t = &g->values[*out];
  memcpy(t->sym, src.sym, sizeof t->sym);
  t->host_known = src.host_known;
  return NULL;
}

/* The channels-last twin of original value v as node reads it: a
 * permuted copy of a constant (of rank 4, or lower and padded), else a
 * value a Transpose after v's producer fills. */
static hd_status *input_twin(lay *L, int v, int *out) {
  if (L->twin[v] != IR_NONE) {
    *out = L->twin[v];
    return NULL;
  }
  ir_graph *g = L->g;
  int t;
  HD_TRY(twin_value(g, v, &t));
  const ir_value *c = &g->values[v];
  if (c->is_const && c->data) {
    size_t es = hd_dtype_size(c->dtype);
    int64_t d[4];
    dims4(c, d, NULL);
    int64_t d0 = d[0], d1 = d[1], d2 = d[2], d3 = d[3];
    if ((size_t)(d0 * d1 * d2 * d3) * es != c->nbytes)
      return hd_error(HD_ERR_INTERNAL, "layout: constant '%s' of %zu bytes", c->name, c->nbytes);
    char *p = malloc(c->nbytes ? c->nbytes : 1);
    if (!p) return hd_error(HD_ERR_OUT_OF_MEMORY, "layout: out of host memory permuting '%s'", c->name);
    const char *s = c->data;
    for (int64_t a = 0; a < d0; a++)
      for (int64_t ch = 0; ch < d1; ch++)
        for (int64_t h = 0; h < d2; h++)
          for (int64_t w = 0; w < d3; w++)
            memcpy(p + (size_t)(((a * d2 + h) * d3 + w) * d1 + ch) * es,
                   s + (size_t)(((a * d1 + ch) * d2 + h) * d3 + w) * es, es);
    hd_status *st = ir_value_set_data(g, t, p, c->nbytes);
    free(p);
    HD_TRY(st);
    g->values[t].host_known = 1;
    L->rep->consts++;
  } else {
    HD_TRY(add_transpose(L, v, t, g->values[v].producer, to_last));
  }
  L->twin[v] = t;
  *out = t;
  return NULL;
}

/* Node i channels last: inputs read through twins, its output written as
 * a twin (or, a Transpose(0,3,1,2) of rows, its input is the twin),
 * parameters set. */
static hd_status *convert(lay *L, int i) {
  ir_graph *g = L->g;
  ir_node *n = &g->nodes[i];
  if (is_to_first(g, n)) {
    L->twin[n->out[0]] = n->in[0];
    return NULL;
  }
  lay_form f = form_of(L, n);
  set_channels_last(L, n); /* before the inputs change: it looks at them */
  for (int k = 0; k < g->nodes[i].nin; k++) {
    int v = g->nodes[i].in[k], t = IR_NONE;
    if (v == IR_NONE || !has_bit(f.in, k)) continue;
    HD_TRY(input_twin(L, v, &t));
    g->nodes[i].in[k] = t;
  }
  if (!f.out) return NULL;
  int y = g->nodes[i].out[0], t = IR_NONE;
  HD_TRY(twin_value(g, y, &t));
  g->nodes[i].out[0] = t;
  L->twin[y] = t;
  return NULL;
}

/* The Transposes, placed after their source's producer (before every node
 * for graph inputs). */
static hd_status *place(lay *L) {
  ir_graph *g = L->g;
  int n0 = g->nnodes;
  for (int c = 0; c < L->ntr; c++) {
    const lay_transpose *t = &L->tr[c];
    char name[512];
    snprintf(name, sizeof name, "%s/transpose", g->values[t->dst].name);
    int in[1] = {t->src}, out[1] = {t->dst}, idx;
    HD_TRY(ir_graph_add_node(g, OP_TRANSPOSE, name, "Transpose", 21, in, 1, out, 1, &idx));
    op_copy *p = &OP_P(&g->nodes[idx])->copy;
    memset(p, 0, sizeof *p);
    p->has_axes = 1;
    p->n = 4;
    memcpy(p->axes, t->perm, 4);
  }
  int *after = malloc(sizeof(int) * (size_t)(L->ntr + 1));
  if (!after) return hd_error(HD_ERR_OUT_OF_MEMORY, "layout: out of host memory");
  for (int c = 0; c < L->ntr; c++) after[c] = L->tr[c].after;
  hd_status *st = ir_graph_place_appended(g, n0, after);
  free(after);
  return st;
}

/* Transposes the decision needs: channels-first values a channels-last
 * node reads (constants are permuted instead), and channels-last values a
 * channels-first node or the partition's outputs read. */
static int count_transposes(const lay *L) {
  const ir_graph *g = L->g;
  uint8_t *to_l = calloc((size_t)L->nv0 + 1, 1), *to_f = calloc((size_t)L->nv0 + 1, 1);
  int n = 0;
  if (!to_l || !to_f) n = -1;
  for (int i = 0; i < L->n0 && n >= 0; i++) {
    const ir_node *nd = &g->nodes[i];
    if (nd->dead) continue;
    unsigned in = L->last[i] ? form_of(L, nd).in : 0;
    for (int k = 0; k < nd->nin; k++) {
      int v = nd->in[k];
      if (v == IR_NONE) continue;
      if (has_bit(in, k)) {
        if (!L->made[v] && !(g->values[v].is_const && g->values[v].data)) to_l[v] = 1;
      } else if (L->made[v]) {
        to_f[v] = 1;
      }
    }
  }
  for (int v = 0; v < L->nv0 && n >= 0; v++) n += to_l[v] + (to_f[v] || (L->made[v] && g->values[v].graph_output != IR_NONE));
  free(to_l);
  free(to_f);
  return n;
}

/* Whether node n, channels last, takes a channel move away: a Transpose
 * of rows, a norm or binary op reading or writing through one. */
static int moves_channels(const lay *L, const ir_node *n) {
  if (is_to_first(L->g, n)) return 1;
  if (op_node_in_family(n, "norm")) return OP_P(n)->norm.in_chan == 1 || OP_P(n)->norm.out_chan == 1;
  return op_node_in_family(n, "binary") && (binary_rows_input(L, n, 0) || binary_rows_input(L, n, 1));
}

/* Whether some node could take a channel move away (read before any
 * is chosen: choosing others only narrows binary_rows_input). Without one
 * the choice below finds no move, so it starts as PLAN_LAYOUT_DENSE
 * rather than probing the depthwise convolutions twice. */
static int any_channel_moves(const lay *L) {
  for (int i = 0; i < L->n0; i++)
    if (!L->g->nodes[i].dead && moves_channels(L, &L->g->nodes[i])) return 1;
  return 0;
}

/* The nodes that can compute channels last, in L->last and L->made; the
 * convolutions among them, and how many take a channel move away. */
static int select_nodes(lay *L, const plan_support *sup, int *moves) {
  ir_graph *g = L->g;
  int convs = 0;
  *moves = 0;
  memset(L->last, 0, (size_t)L->n0 + 1);
  memset(L->made, 0, (size_t)L->nv0 + 1);
  for (int i = 0; i < L->n0; i++) {
    if (!candidate(L, i)) continue;
    hd_status *st = probe(L, i, sup);
    if (st) {
      HD_LOG(HD_LOG_VERBOSE, "layout: %s '%s' stays channels first: %s", g->nodes[i].op_type, g->nodes[i].name,
             hd_status_msg(st));
      hd_status_free(st);
      continue;
    }
    convs += g->nodes[i].kind == OP_CONV;
    *moves += moves_channels(L, &g->nodes[i]);
    L->last[i] = 1;
    L->made[g->nodes[i].out[0]] = (uint8_t)form_of(L, &g->nodes[i]).out;
  }
  return convs;
}

/* Decides; rewrites only where worth it (above). Depthwise convolutions go
 * channels last only where that takes channel moves away: our depthwise
 * kernel is faster channels first (MobileNetV2 fp32 on an H200, all of it
 * channels last: batch 1 0.445 against 0.359 ms, batch 32 2.09 against
 * 1.66), so a graph that moves no channels is laid out as for
 * PLAN_LAYOUT_DENSE (PLAN_LAYOUT_ALL: not, for A/B runs). */
static hd_status *run(lay *L, const plan_support *sup) {
  ir_graph *g = L->g;
  if (!L->dense_only && !L->all_depthwise && !any_channel_moves(L)) L->dense_only = 1;
  int moves = 0, convs = select_nodes(L, sup, &moves);
  if (!moves && !L->dense_only && !L->all_depthwise) {
    L->dense_only = 1;
    convs = select_nodes(L, sup, &moves);
  }
  int transposes = count_transposes(L);
  if (transposes < 0) return hd_error(HD_ERR_OUT_OF_MEMORY, "layout: out of host memory");
  L->rep->convs = convs;
  L->rep->transposes = transposes;
  if (!convs || convs < 2 * transposes) return NULL;
  for (int i = 0; i < L->n0; i++)
    if (L->last[i]) {
      HD_TRY(convert(L, i));
      L->rep->nodes++;
    }
  /* channels-last values a channels-first reader or the outputs still read */
  int *uses = calloc((size_t)g->nvalues + 1, sizeof *uses);
  if (!uses) return hd_error(HD_ERR_OUT_OF_MEMORY, "layout: out of host memory");
  for (int i = 0; i < L->n0; i++)
    for (int k = 0; k < g->nodes[i].nin && !g->nodes[i].dead; k++)
      if (g->nodes[i].in[k] != IR_NONE) uses[g->nodes[i].in[k]]++;
  hd_status *st = NULL;
  for (int v = 0; v < L->nv0 && !st; v++) {
    int read = uses[v] || g->values[v].graph_output != IR_NONE, p = g->values[v].producer;
    if (L->made[v] && p != IR_NONE && is_to_first(g, &g->nodes[p])) {
      g->nodes[p].dead = !read; /* that Transpose is the one a reader would need */
    } else if (L->made[v] && read) {
      st = add_transpose(L, L->twin[v], v, p, to_first);
    }
    if (!uses[v] && g->values[v].is_const && L->twin[v] != IR_NONE) ir_value_drop_data(g, v); /* permuted */
  }
  free(uses);
  HD_TRY(st);
  L->rep->applied = 1;
  return place(L);
}

hd_status *plan_layout(ir_graph *g, int mode, const plan_support *sup, plan_layout_report *rep) {
  plan_layout_report scratch;
  if (!rep) rep = &scratch;
  memset(rep, 0, sizeof *rep);
  if (mode == PLAN_LAYOUT_NEVER) return NULL;
  HD_TRY(ir_graph_finalize(g));
  uint8_t *runs = malloc((size_t)g->nnodes + 1);
  if (!runs) return hd_error(HD_ERR_OUT_OF_MEMORY, "layout: out of host memory");
  memset(runs, 1, (size_t)g->nnodes + 1);
  op_mark_host_known(g, runs);
  free(runs);

  lay L = {.g = g, .nv0 = g->nvalues, .n0 = g->nnodes, .dense_only = mode == PLAN_LAYOUT_DENSE,
           .all_depthwise = mode == PLAN_LAYOUT_ALL, .rep = rep};
  L.last = calloc((size_t)L.n0 + 1, 1);
  L.made = calloc((size_t)L.nv0 + 1, 1);
  L.twin = malloc(((size_t)L.nv0 + 1) * sizeof(int));
  hd_status *st = NULL;
  if (!L.last || !L.made || !L.twin) st = hd_error(HD_ERR_OUT_OF_MEMORY, "layout: out of host memory");
  for (int v = 0; v < L.nv0 && !st; v++) L.twin[v] = IR_NONE;
  if (!st) st = run(&L, sup);
  if (!st && rep->applied) st = ir_graph_finalize(g);
  free(L.last);
  free(L.made);
  free(L.twin);
  free(L.tr);
  return st;
}
