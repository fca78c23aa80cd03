/* plan_pad: an input a plan may take wider than it came, zero-padded along
 * its last axis: GenAI's attention mask.
 *
 * A decoder without graph capture passes attention_mask [B, total], one
 * column wider every step, so every decode step is a new input shape: a
 * new plan, and no captured graph to replay. The mask reaches the graph in
 * two ways only (make_attention_mask_reformatting_for_gqa):
 *   ReduceSum over its columns -> seqlens_k: zero columns add nothing;
 *   Shape -> Gather(1) -> total_sequence_length of GroupQueryAttention,
 *     which a decode step (one query row, past rows kept in a buffer at
 *     least as long) reads only to size present as max(total, past), the
 *     past's length either way (ops/gqa.h): first_prompt is false at any
 *     total above one.
 * So where every path from the input is one of those, the plan built at a
 * rounded-up width serves every width below it, given the mask padded with
 * zeros: one plan (and one captured graph) per width bucket. The decode
 * conditions are the plan's to check (plan_pad_holds): a prefill, or a
 * present longer than the past, gets its exact width. */
#include <stdlib.h>
#include <string.h>

#include "ops/gqa.h"
#include "ops/ops.h"
#include "ops/op_util.h"
#include "plan/plan.h"

/* The smallest bucket: widths round up to a power of two from here. */
#define PAD_MIN_WIDTH 64

/* What a value holds, followed from the padded input. */
typedef enum pad_form {
  PAD_ROWS,  /* the input's elements (cast, copied): zeros past the width */
  PAD_SHAPE, /* a shape vector whose element `at` is the width */
  PAD_WIDTH, /* the width itself (one element) */
} pad_form;

typedef struct pad_walk {
  const ir_graph *g;
  int rank;          /* of the padded input */
  int64_t shape_len; /* of the shape vector a PAD_SHAPE walk follows */
  int *gqa, ngqa, cap;
} pad_walk;

static int add_gqa(pad_walk *w, int node) {
  for (int i = 0; i < w->ngqa; i++)
    if (w->gqa[i] == node) return 1;
  if (w->ngqa == w->cap) {
    int cap = w->cap ? 2 * w->cap : 16;
    int *grown = realloc(w->gqa, sizeof(int) * (size_t)cap);
    if (!grown) return 0;
    w->gqa = grown, w->cap = cap;
  }
  w->gqa[w->ngqa++] = node;
  return 1;
}

/* Whether ReduceSum node n sums over the input's last axis. */
static int sums_last_axis(const pad_walk *w, const ir_node *n) {
  const op_reduce *r = &OP_P(n)->reduce;
  int64_t axes[8];
  int naxes = r->naxes;
  memcpy(axes, r->axes, sizeof axes);
  if (op_input(n, 1) != IR_NONE) { /* opset 13: a constant input */
    op_const_info ci;
    hd_status *st = op_const_ints(w->g, n->in[1], axes, 8, &ci);
    if (st || !ci.have) {
      hd_status_free(st);
      return 0;
    }
    naxes = ci.n;
  }
  if (naxes == 0) return 1; /* all axes (noop_with_empty_axes is refused at parse) */
  for (int i = 0; i < naxes; i++)
    if (axes[i] == w->rank - 1 || axes[i] == -1) return 1;
  return 0;
}

/* Gather node n of a shape vector, by constant indices: 1 when it picks
 * element `at` (*whole: the output is that one element), 0 when it picks
 * only others, -1 when it cannot say. */
static int gather_picks(const pad_walk *w, const ir_node *n, int64_t at, int *whole) {
  int axis = OP_P(n)->gather.axis;
  if (axis != 0 && axis != -1) return -1;
  int64_t idx[IR_MAX_RANK];
  op_const_info ci;
  hd_status *st = op_const_ints(w->g, n->in[1], idx, IR_MAX_RANK, &ci);
  if (st || !ci.have || ci.n > IR_MAX_RANK) {
    hd_status_free(st);
    return -1;
  }
  int picks = 0;
  for (int i = 0; i < ci.n; i++)
    if ((idx[i] < 0 ? idx[i] + w->shape_len : idx[i]) == at) picks = 1;
  *whole = ci.n == 1;
  return picks;
}

static int walk(pad_walk *w, int v, pad_form form, int64_t at);

/* Whether node n, reading v (of the given form) at input k, keeps the
 * graph's results the same at any padded width; follows its output. */
static int node_ok(pad_walk *w, const ir_node *n, int k, pad_form form, int64_t at) {
  op_kind kind = (op_kind)n->kind;
  int passes = kind == OP_CAST || kind == OP_IDENTITY;
  switch (form) {
  case PAD_ROWS:
    if (passes && k == 0) return walk(w, n->out[0], PAD_ROWS, at);
    if (kind == OP_REDUCE_SUM && k == 0) return sums_last_axis(w, n);
    if (kind == OP_SHAPE && k == 0) {
      const op_shape *s = &OP_P(n)->shape;
      int64_t start = s->start < 0 ? s->start + w->rank : s->start;
      int64_t end = !s->has_end ? w->rank : s->end < 0 ? s->end + w->rank : s->end;
      if (start < 0) start = 0;
      if (end > w->rank) end = w->rank;
      if (w->rank - 1 < start || w->rank - 1 >= end) return 1; /* the width is not in it */
      if (end - start == 1) return walk(w, n->out[0], PAD_WIDTH, 0);
      w->shape_len = end - start;
      return walk(w, n->out[0], PAD_SHAPE, w->rank - 1 - start);
    }
    return 0;
  case PAD_SHAPE:
    if (kind == OP_GATHER && k == 0) {
      int whole = 0, picks = gather_picks(w, n, at, &whole);
      if (picks == 0) return 1;
      return picks > 0 && whole && walk(w, n->out[0], PAD_WIDTH, 0);
    }
    return 0;
  case PAD_WIDTH:
    if ((passes || kind == OP_SQUEEZE || kind == OP_UNSQUEEZE || kind == OP_RESHAPE) && k == 0)
      return walk(w, n->out[0], PAD_WIDTH, 0);
    if (kind == OP_MS_GROUP_QUERY_ATTENTION && k == 6) {
      int past = op_input(n, 3);
      return past != IR_NONE && w->g->values[past].graph_input != IR_NONE && add_gqa(w, (int)(n - w->g->nodes));
    }
    return 0;
  }
  return 0;
}

static int walk(pad_walk *w, int v, pad_form form, int64_t at) {
  const ir_graph *g = w->g;
  if (g->values[v].graph_output != IR_NONE) return 0; /* seen outside: must be exact */
  for (int i = 0; i < g->nnodes; i++) {
    const ir_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int k = 0; k < n->nin; k++)
      if (n->in[k] == v && !node_ok(w, n, k, form, at)) return 0;
  }
  return 1;
}

void plan_pad_free(plan_pad *pp) {
  if (!pp) return;
  free(pp->gqa);
  free(pp);
}

hd_status *plan_pad_find(const ir_graph *g, plan_pad **out) {
  *out = NULL;
  for (int i = 0; i < g->ninputs; i++) {
    const ir_value *v = &g->values[g->inputs[i]];
    if (!op_is_int(v->dtype) || v->rank < 1 || v->nuses == 0) continue;
    pad_walk w = {.g = g, .rank = v->rank};
    if (!walk(&w, g->inputs[i], PAD_ROWS, 0)) {
      free(w.gqa);
      continue;
    }
    plan_pad *pp = calloc(1, sizeof *pp);
    if (!pp) {
      free(w.gqa);
      return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    pp->g = g, pp->input = i, pp->gqa = w.gqa, pp->ngqa = w.ngqa;
    *out = pp;
    return NULL;
  }
  return NULL;
}

int64_t plan_pad_width(const plan_pad *pp, const ir_shape *shapes) {
  const ir_shape *x = &shapes[pp->input];
  if (x->rank < 1) return 0;
  int64_t width = x->dims[x->rank - 1];
  if (width < (pp->ngqa ? 2 : 1)) return 0; /* one column may be a one-token first prompt */
  int64_t cap = INT64_MAX;
  for (int i = 0; i < pp->ngqa; i++) {
    const ir_node *n = &pp->g->nodes[pp->gqa[i]];
    const ir_shape *past = &shapes[pp->g->values[n->in[3]].graph_input];
    if (past->rank != 4) return 0;
    if (past->dims[2] < cap) cap = past->dims[2];
    /* the rotary tables must cover the planned total too (a constant's rows) */
    const ir_value *cos = op_input(n, 7) != IR_NONE ? &pp->g->values[n->in[7]] : NULL;
    if (cos && cos->rank >= 1 && cos->dims[0] >= 0 && cos->dims[0] < cap) cap = cos->dims[0];
  }
  int64_t padded = PAD_MIN_WIDTH;
  while (padded < width && padded < cap && padded <= INT64_MAX / 2) padded *= 2;
  if (padded > cap) padded = cap;
  return padded > width ? padded : 0;
}

int plan_pad_holds(const plan_pad *pp, const ir_plan *p) {
  for (int i = 0; i < pp->ngqa; i++) {
    const ir_step *s = NULL;
    for (int j = 0; j < p->nsteps && !s; j++)
      if (p->steps[j].node == pp->gqa[i]) s = &p->steps[j];
    if (!s) return 0;
    const ir_node *n = &pp->g->nodes[s->node];
    const op_gqa *q = &OP_P(s)->gqa;
    op_gqa_dims l;
    hd_status *st = op_gqa_layout(n, q, p->t, &l);
    if (st) {
      hd_status_free(st);
      return 0;
    }
    if (q->first_prompt || l.seq != 1 || l.present_len != l.past_len) return 0;
  }
  return 1;
}
