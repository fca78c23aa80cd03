/* plan_build: the graph at concrete input shapes.
 * Shapes flow forward through each op's infer(). Values known on the host
 * (constants, the outputs of shape-only ops, the outputs of ops whose
 * inputs are all known) are computed right then by the host evaluator and
 * packed into one folded block: shape arithmetic never becomes GPU work.
 * The remaining intermediate tensors get offsets in one arena, reusing the
 * bytes of tensors whose last reader has run (first fit over live blocks,
 * in step order). */
#include <stdlib.h>
#include <string.h>

#include "common/hd_math.h"
#include "plan/plan.h"
#include "ops/ops.h"

/* Live arena blocks, kept sorted by offset. */
typedef struct arena_block {
  size_t offset, size;
  int value;
} arena_block;

typedef struct arena {
  arena_block *blocks;
  int n, cap;
  size_t high;
} arena;

static hd_status *arena_alloc(arena *a, size_t size, int value, size_t *offset) {
  if (!hd_align_size(size ? size : 1, IR_ARENA_ALIGN, &size))
    return hd_error(HD_ERR_NOT_SUPPORTED, "ir_plan: a tensor of %zu bytes", size);
  size_t at = 0;
  int pos = 0;
  for (; pos < a->n; pos++) {
    if (a->blocks[pos].offset >= at + size) break;
    size_t end = a->blocks[pos].offset + a->blocks[pos].size;
    if (end > at) at = end;
  }
  if (a->n == a->cap) {
    int ncap = a->cap ? a->cap * 2 : 32;
    arena_block *nb = realloc(a->blocks, sizeof(arena_block) * (size_t)ncap);
    if (!nb) return hd_error(HD_ERR_OUT_OF_MEMORY, "ir_plan: out of host memory");
    a->blocks = nb;
    a->cap = ncap;
  }
  size_t end;
  if (!hd_add_size(at, size, &end)) return hd_error(HD_ERR_NOT_SUPPORTED, "ir_plan: the arena passes the address space");
  memmove(&a->blocks[pos + 1], &a->blocks[pos], sizeof(arena_block) * (size_t)(a->n - pos));
  a->blocks[pos] = (arena_block){at, size, value};
  a->n++;
  if (end > a->high) a->high = end;
  *offset = at;
  return NULL;
}

static void arena_release(arena *a, int value) {
  for (int i = 0; i < a->n; i++) {
    if (a->blocks[i].value != value) continue;
    memmove(&a->blocks[i], &a->blocks[i + 1], sizeof(arena_block) * (size_t)(a->n - i - 1));
    a->n--;
    return;
  }
}

/* Frees the bytes of step s's inputs that s read last (node: its node). */
static void release_inputs(arena *a, const ir_node *node, const ir_tensor *t, const int *last_use, int s) {
  for (int k = 0; k < node->nin; k++) {
    int v = node->in[k];
    if (v == IR_NONE) continue;
    while (t[v].storage == IR_ST_ALIAS) v = t[v].index;
    if (t[v].storage == IR_ST_ARENA && last_use[v] == s) arena_release(a, v);
  }
}

/* The bytes of Gather step n's index when they are known on the host (a
 * constant, a folded value, or a view of one); else NULL. */
static const char *gather_index_host(const ir_node *n, const ir_tensor *t) {
  if (n->kind != OP_GATHER || n->nin != 2 || n->nout != 1) return NULL;
  const ir_tensor *idx = &t[n->in[1]];
  const ir_tensor *root = idx->storage == IR_ST_ALIAS ? &t[idx->index] : idx;
  size_t at = idx->storage == IR_ST_ALIAS ? idx->offset : 0;
  if ((root->storage != IR_ST_CONST && root->storage != IR_ST_FOLDED) || !root->host) return NULL;
  if (idx->dtype != HD_DT_I64 && idx->dtype != HD_DT_I32) return NULL;
  return (const char *)root->host + at;
}

static int64_t index_at(const char *ih, int dtype, int64_t k) {
  if (dtype == HD_DT_I64) {
    int64_t i;
    memcpy(&i, ih + (size_t)k * sizeof i, sizeof i);
    return i;
  }
  int32_t i32;
  memcpy(&i32, ih + (size_t)k * sizeof i32, sizeof i32);
  return i32;
}

/* The one index of Gather step n (known on the host), in range: *axis,
 * *index. */
static int gather_index(const ir_node *n, const op_params *p, const ir_tensor *t, int *axis, int64_t *index) {
  const char *ih = gather_index_host(n, t);
  if (!ih) return 0;
  const ir_tensor *x = &t[n->in[0]], *idx = &t[n->in[1]];
  int a = p->gather.axis;
  if (ir_numel(idx->rank, idx->dims) != 1 || a < 0 || a >= x->rank) return 0;
  int64_t i = index_at(ih, idx->dtype, 0);
  if (i < 0) i += x->dims[a];
  if (i < 0 || i >= x->dims[a]) return 0;
  *axis = a, *index = i;
  return 1;
}

/* Whether Gather step n takes every slab of its axis once, in order (its
 * index, of any shape, holds 0, 1, ..., dims[axis] - 1), past unit dims:
 * its output is its input's bytes. transformers' encoders gather their
 * [B * S, 1] mask by b * S + s laid out [B, 1, 1, S] (torch's vmap,
 * exported). */
static int gather_all_in_order(const ir_node *n, const op_params *p, const ir_tensor *t) {
  const char *ih = gather_index_host(n, t);
  if (!ih) return 0;
  const ir_tensor *x = &t[n->in[0]], *idx = &t[n->in[1]];
  int a = p->gather.axis;
  if (a < 0 || a >= x->rank || ir_numel(idx->rank, idx->dims) != x->dims[a]) return 0;
  for (int d = 0; d < a; d++)
    if (x->dims[d] != 1) return 0;
  for (int64_t k = 0; k < x->dims[a]; k++)
    if (index_at(ih, idx->dtype, k) != k) return 0;
  return 1;
}

/* A Transpose or Slice, a Gather of one index on an axis with only unit
 * dims before it, a Gather of its whole axis in order, or an Expand to its
 * own shape, whose output is one contiguous run of its input: *bytes, the
 * run's offset. Such a step is a view at an offset (no copy) when the
 * offset keeps the arena's alignment, which kernels and library plans
 * assume. ViT's attention reads Q, K and V by Gathers of a packed [3, S, B,
 * E] tensor, and at batch 1 torch's exporter transposes [1, S, E] to [S,
 * 1, E] before each layer's projection. */
static int contiguous_run(const ir_node *n, const op_params *p, const ir_tensor *t, size_t *bytes) {
  int64_t off = -1, i;
  int a;
  const ir_tensor *x = &t[n->in[0]], *y = &t[n->out[0]];
  if (x->strided) return 0;
  if ((n->kind == OP_TRANSPOSE || n->kind == OP_SLICE) && n->nout == 1) {
    op_strided m;
    hd_status *st = op_copy_map(n, &p->copy, t, 0, &m);
    if (st) {
      hd_status_free(st);
      return 0;
    }
    if (m.rank == 1 && m.stride[0] == 1 && !m.mod[0]) off = m.offset;
  } else if (gather_index(n, p, t, &a, &i)) {
    for (int d = 0; d < a; d++)
      if (x->dims[d] != 1) return 0;
    off = i * ir_numel(x->rank - a - 1, x->dims + a + 1);
  } else if (gather_all_in_order(n, p, t)) {
    off = 0;
  } else if (n->kind == OP_EXPAND && n->nout == 1 && x->rank == y->rank &&
             !memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)x->rank)) {
    off = 0;
  }
  if (off < 0) return 0;
  *bytes = (size_t)off * hd_dtype_size(x->dtype);
  return *bytes % IR_ARENA_ALIGN == 0;
}

/* ---- strided aliases: copies an Attention reads through its strides ---- */

/* A strided view's layout as its dims' factors: dim d is factors first[d]
 * .. first[d + 1] - 1, outermost first, each a size and an element stride
 * (a dim of size 1 has none). A view that merges dims strided unevenly
 * keeps both factors of the merged dim (ViT's slice of its packed
 * projection, [S, B, E] strided, viewed as [S, B * H, D] at B > 1); a
 * later Transpose and view can part them again ([B, H, S, D] for the
 * Attention), whose dims then have plain strides. */
#define LAYOUT_FACTORS 24
typedef struct chain_layout {
  int rank, n;
  int first[IR_MAX_RANK + 1];
  int64_t size[LAYOUT_FACTORS], stride[LAYOUT_FACTORS];
} chain_layout;

static void layout_of(int rank, const int64_t *dims, const int64_t *st, chain_layout *l) {
  l->rank = rank, l->n = 0;
  for (int d = 0; d < rank; d++) {
    l->first[d] = l->n;
    if (dims[d] != 1) l->size[l->n] = dims[d], l->stride[l->n++] = st[d];
  }
  l->first[rank] = l->n;
}

/* Neighbouring factors of one dim that are evenly strided become one. */
static void layout_merge(chain_layout *l) {
  int n = 0;
  for (int d = 0; d < l->rank; d++) {
    int from = l->first[d], to = l->first[d + 1];
    l->first[d] = n;
    for (int f = from; f < to; f++) {
      if (n > l->first[d] && l->stride[n - 1] == l->size[f] * l->stride[f]) {
        l->size[n - 1] *= l->size[f];
        l->stride[n - 1] = l->stride[f];
      } else {
        l->size[n] = l->size[f], l->stride[n++] = l->stride[f];
      }
    }
  }
  l->first[l->rank] = n;
  l->n = n;
}

/* Plain strides of l's dims, where each dim is one factor (a dim of size 1
 * takes the stride it would have packed inside the next); 0 where not. */
static int layout_strides(const chain_layout *l, int64_t *st) {
  int64_t inner = 1;
  for (int d = l->rank - 1; d >= 0; d--) {
    int nf = l->first[d + 1] - l->first[d];
    if (nf > 1) return 0;
    if (nf == 1) {
      st[d] = l->stride[l->first[d]];
      inner = st[d] * l->size[l->first[d]];
    } else {
      st[d] = inner;
    }
  }
  return 1;
}

/* l viewed, element order kept, as dims yd: factors split where a dim's
 * boundary falls inside one (the sizes must divide). 0 where they do not. */
static int layout_view(chain_layout *l, int yr, const int64_t *yd) {
  int64_t size[LAYOUT_FACTORS], stride[LAYOUT_FACTORS]; /* innermost first */
  int count[IR_MAX_RANK], m = 0, k = l->n - 1;
  int64_t cur = k >= 0 ? l->size[k] : 1, cst = k >= 0 ? l->stride[k] : 0;
  for (int d = yr - 1; d >= 0; d--) {
    int64_t need = yd[d];
    count[d] = 0;
    while (need > 1) {
      if (k < 0 || m == LAYOUT_FACTORS) return 0;
      int64_t take = cur <= need ? cur : need;
      if ((cur <= need ? need : cur) % take) return 0;
      size[m] = take, stride[m++] = cst, count[d]++;
      need /= take;
      if (take == cur) {
        if (--k >= 0) cur = l->size[k], cst = l->stride[k];
      } else {
        cur /= take, cst *= take;
      }
    }
  }
  if (k >= 0) return 0; /* elements left over */
  l->rank = yr, l->n = m;
  for (int i = 0; i < m; i++) l->size[i] = size[m - 1 - i], l->stride[i] = stride[m - 1 - i];
  for (int d = 0, at = 0; d <= yr; at += d < yr ? count[d] : 0, d++) l->first[d] = at;
  layout_merge(l);
  return 1;
}

/* l with its dims in the order perm. */
static void layout_transpose(chain_layout *l, const int8_t *perm) {
  chain_layout o = {.rank = l->rank};
  for (int d = 0; d < l->rank; d++) {
    o.first[d] = o.n;
    for (int f = l->first[perm[d]]; f < l->first[perm[d] + 1]; f++) o.size[o.n] = l->size[f], o.stride[o.n++] = l->stride[f];
  }
  o.first[l->rank] = o.n;
  layout_merge(&o);
  *l = o;
}

/* Index i of dim a taken (the dim replaced by ir dims of size 1): the
 * element offset it adds. */
static int64_t layout_take(chain_layout *l, int a, int64_t i, int ir) {
  int64_t off = 0;
  for (int f = l->first[a + 1] - 1; f >= l->first[a]; f--) {
    off += i % l->size[f] * l->stride[f];
    i /= l->size[f];
  }
  chain_layout o = {.rank = l->rank - 1 + ir};
  for (int d = 0, od = 0; d < l->rank; d++) {
    if (d == a) {
      for (int j = 0; j < ir; j++) o.first[od++] = o.n;
      continue;
    }
    o.first[od++] = o.n;
    for (int f = l->first[d]; f < l->first[d + 1]; f++) o.size[o.n] = l->size[f], o.stride[o.n++] = l->stride[f];
  }
  o.first[o.rank] = o.n;
  *l = o;
  return off;
}

/* The values a strided alias makes strided in turn, and the steps that no
 * longer run. */
#define CHAIN_MAX 48
typedef struct strided_chain {
  const uint8_t *elided; /* steps that read nothing at run time (folded, or empty) */
  int n;
  int value[CHAIN_MAX], step[CHAIN_MAX];
  size_t offset[CHAIN_MAX];
  chain_layout layout[CHAIN_MAX];
} strided_chain;

static int chain_add(strided_chain *c, int v, int s, size_t off, const chain_layout *l) {
  if (c->n >= CHAIN_MAX) return 0;
  c->value[c->n] = v, c->step[c->n] = s, c->offset[c->n] = off;
  c->layout[c->n] = *l;
  c->n++;
  return 1;
}

static int strided_readers(const ir_graph *g, const ir_plan *p, const ir_tensor *t, int at, int from, int depth,
                           strided_chain *c);

/* Step s read in place from its input v (layout lv, byte offset off): a
 * view (Reshape, ...), a Transpose, or a Gather of one known index gives
 * its output's layout and offset; it joins the chain if every step
 * reading that output reads it strided too. */
static int strided_step(const ir_graph *g, const ir_plan *p, const ir_tensor *t, int s, int v,
                        const chain_layout *lv, size_t off, int depth, strided_chain *c) {
  const ir_node *n = &g->nodes[p->steps[s].node];
  const op_params *pp = OP_P(&p->steps[s]);
  if (n->nin < 1 || n->in[0] != v || n->nout != 1 || n->out[0] == IR_NONE) return 0;
  const ir_tensor *x = &t[v], *y = &t[n->out[0]];
  chain_layout l = *lv;
  int64_t i;
  int a;
  if (op_get(n->kind)->view) {
    if (ir_numel(x->rank, x->dims) <= 0 || !layout_view(&l, y->rank, y->dims)) return 0;
  } else if (n->kind == OP_TRANSPOSE) {
    layout_transpose(&l, pp->copy.axes);
  } else if (gather_index(n, pp, t, &a, &i)) {
    off += (size_t)layout_take(&l, a, i, y->rank - (x->rank - 1)) * hd_dtype_size(x->dtype);
  } else {
    return 0;
  }
  return chain_add(c, n->out[0], s, off, &l) && strided_readers(g, p, t, c->n - 1, s + 1, depth + 1, c);
}

/* Every step from `from` on reading chain entry `at`'s value reads it
 * strided: as an Attention's Q, K or V (its layout reads strides, so each
 * of its dims must have one), or through a strided step. The value leaves
 * no partition. */
static int strided_readers(const ir_graph *g, const ir_plan *p, const ir_tensor *t, int at, int from, int depth,
                           strided_chain *c) {
  const int v = c->value[at];
  if (depth > 8 || t[v].storage != IR_ST_NONE) return 0;
  int readers = 0;
  for (int s = from; s < p->nsteps; s++) {
    const ir_node *n = &g->nodes[p->steps[s].node];
    for (int k = 0; k < n->nin && !c->elided[s]; k++) {
      if (n->in[k] != v) continue;
      readers++;
      if (n->kind == OP_ATTENTION) {
        const op_attention *a = &OP_P(&p->steps[s])->attention;
        int64_t st[IR_MAX_RANK];
        if ((k != a->in_q && k != a->in_k && k != a->in_v) || !layout_strides(&c->layout[at], st)) return 0;
      } else if (k != 0 || !strided_step(g, p, t, s, v, &c->layout[at], c->offset[at], depth, c)) {
        return 0;
      }
    }
  }
  return readers > 0;
}

/* Step s, a Split, Transpose or one-index Gather of an arena tensor, whose
 * outputs only Attentions read, through views, Transposes and Gathers:
 * those outputs and what follows them become strided aliases of the
 * input, and those steps do not run. GPT-2's Split of its packed QKV
 * projection and the Transposes of its K; ViT's Transpose and Gathers of
 * its packed projection. Offsets on 16 bytes (the tensor-core
 * attention's loads). */
static int alias_strided(const ir_graph *g, ir_plan *p, int s, ir_tensor *t, uint8_t *elided) {
  const ir_node *n = &g->nodes[p->steps[s].node];
  if ((n->kind != OP_SPLIT && n->kind != OP_TRANSPOSE && n->kind != OP_GATHER) || n->nin < 1) return 0;
  int x = n->in[0], root = x;
  while (t[root].storage == IR_ST_ALIAS) root = t[root].index;
  if (t[x].strided || t[root].storage != IR_ST_NONE) return 0; /* arena bytes only */
  int64_t xs[IR_MAX_RANK];
  ir_tensor_strides(&t[x], xs);
  size_t base = t[x].storage == IR_ST_ALIAS ? t[x].offset : 0;
  static _Thread_local strided_chain c; /* ~24 KB: not on the stack */
  c.n = 0, c.elided = elided;
  if (n->kind == OP_SPLIT) {
    const int ax = OP_P(&p->steps[s])->copy.axis;
    int64_t at = 0;
    for (int k = 0; k < n->nout; k++) {
      int y = n->out[k];
      chain_layout l;
      if (y != IR_NONE) layout_of(t[y].rank, t[y].dims, xs, &l);
      if (y == IR_NONE || !chain_add(&c, y, s, base + (size_t)(at * xs[ax]) * hd_dtype_size(t[x].dtype), &l) ||
          !strided_readers(g, p, t, c.n - 1, s + 1, 0, &c))
        return 0;
      at += t[y].dims[ax];
    }
  } else {
    chain_layout l;
    layout_of(t[x].rank, t[x].dims, xs, &l);
    if (!strided_step(g, p, t, s, x, &l, base, 0, &c)) return 0;
  }
  for (int k = 0; k < c.n; k++)
    if (c.offset[k] % 16) return 0;
  for (int k = 0; k < c.n; k++) {
    ir_tensor *y = &t[c.value[k]];
    y->storage = IR_ST_ALIAS, y->index = root, y->offset = c.offset[k];
    y->strided = 1;
    /* a value whose dims have no plain strides is read by no step that
     * runs (strided_readers): its strides are never used; zeros say so */
    if (!layout_strides(&c.layout[k], y->strides)) memset(y->strides, 0, sizeof y->strides);
    elided[c.step[k]] = 1;
  }
  return 1;
}

/* ---- uniform axes (ir_tensor.uniform) ---- */

/* Known data up to this many elements is read for its uniform axes: masks
 * of a few thousand, not weights. */
enum { UNIFORM_SCAN_MAX = 1 << 16 };

/* The dims of t (known data on the host) along which its elements repeat. */
static unsigned uniform_of_data(const ir_tensor *t) {
  int64_t n = ir_numel(t->rank, t->dims);
  size_t es = hd_dtype_size(t->dtype);
  if (!t->host || n <= 0 || n > UNIFORM_SCAN_MAX || !es) return 0;
  const unsigned char *x = t->host;
  unsigned bits = 0;
  size_t inner = es; /* bytes a step of dim d spans */
  for (int d = t->rank - 1; d >= 0; d--) {
    int64_t len = t->dims[d];
    int same = len > 1;
    /* each slab of dim d at index a > 0 equals the one at index 0 of its block */
    for (size_t block = 0; same && block < (size_t)n * es; block += (size_t)len * inner)
      for (int64_t a = 1; a < len && same; a++)
        same = memcmp(x + block + (size_t)a * inner, x + block, inner) == 0;
    if (same) bits |= 1u << d;
    inner *= (size_t)len;
  }
  return bits;
}

/* Output o of node n: the uniform axes its data shows when known and
 * small, else those every broadcast input of an elementwise op holds (an
 * input's axis of size 1, or absent, broadcasts). */
static unsigned uniform_of_output(const ir_node *n, const op_def *def, const ir_tensor *t, int o) {
  if (t[o].host && ir_numel(t[o].rank, t[o].dims) <= UNIFORM_SCAN_MAX) return uniform_of_data(&t[o]);
  if (!def->elementwise_axis) return 0;
  int r = t[o].rank;
  unsigned bits = r > 0 ? (1u << r) - 1 : 0;
  for (int k = 0; k < n->nin; k++) {
    int v = n->in[k];
    if (v == IR_NONE || (def->value_inputs >> k & 1u)) continue;
    for (int d = 0; d < r; d++) {
      int dk = def->elementwise_axis(n, k, d, r, t[v].rank);
      if (dk >= 0 && t[v].dims[dk] != 1 && !(t[v].uniform >> dk & 1u)) bits &= ~(1u << d);
    }
  }
  return bits;
}

static hd_status *bind_inputs(const ir_graph *g, const ir_shape *inputs, ir_tensor *t) {
  for (int i = 0; i < g->ninputs; i++) {
    const ir_value *v = &g->values[g->inputs[i]];
    ir_tensor *dst = &t[g->inputs[i]];
    if (inputs[i].rank != v->rank)
      return hd_error(HD_ERR_INVALID_ARG, "input '%s': rank %d given, model says %d", v->name,
                      inputs[i].rank, v->rank);
    for (int d = 0; d < v->rank; d++) {
      int64_t want = v->dims[d], got = inputs[i].dims[d];
      if (got < 0 || (want >= 0 && want != got))
        return hd_error(HD_ERR_INVALID_ARG, "input '%s': dim %d is %lld, model says %lld", v->name, d,
                        (long long)got, (long long)want);
      dst->dims[d] = got;
    }
    dst->rank = v->rank;
    dst->storage = IR_ST_INPUT;
    dst->index = i;
  }
  return NULL;
}

/* Folded values past this many elements are computed on the device, unless
 * only the host can compute them (plan_eval.must_fold). */
#define FOLD_MAX_NUMEL ((int64_t)1 << 22)

/* Node n can be computed now on the host: every input it reads is known
 * there (a shape-only op reads none), it is no view (views of known values
 * alias them instead), and its outputs are small or it must be folded.
 * A must-fold node that cannot be is an error. */
static hd_status *foldable(const ir_graph *g, int n, const op_def *def, const ir_tensor *t, const plan_eval *eval,
                           int *yes) {
  const ir_node *node = &g->nodes[n];
  int must = eval->must_fold && eval->must_fold[n];
  *yes = 0;
  if (def->view) return NULL;
  for (int k = 0; k < node->nin && !def->shape_only; k++)
    if (node->in[k] != IR_NONE && !t[node->in[k]].host)
      return must ? hd_error(HD_ERR_INTERNAL, "node '%s' (%s) runs at plan time but input '%s' is not known then",
                             node->name, node->op_type, g->values[node->in[k]].name)
                  : NULL;
  for (int k = 0; k < node->nout && !must; k++) {
    int v = node->out[k];
    if (v == IR_NONE) continue;
    int64_t numel = ir_numel(t[v].rank, t[v].dims);
    if (numel < 0 || numel > FOLD_MAX_NUMEL) return NULL;
  }
  *yes = 1;
  return NULL;
}

/* Computes step s on the host into a fresh buffer per output (stable
 * addresses while the plan grows; packed into one block at the end). */
static hd_status *fold_step(const ir_graph *g, ir_plan *p, const ir_step *s, const plan_eval *eval, void **bufs,
                            void *const *none) {
  const ir_node *node = &g->nodes[s->node];
  ir_tensor *t = p->t;
  for (int k = 0; k < node->nout; k++) {
    int v = node->out[k];
    if (v == IR_NONE) continue;
    size_t bytes = (size_t)ir_numel(t[v].rank, t[v].dims) * hd_dtype_size(t[v].dtype);
    bufs[v] = calloc(1, bytes ? bytes : 1);
    if (!bufs[v]) return hd_error(HD_ERR_OUT_OF_MEMORY, "ir_plan: out of host memory");
    t[v].host = bufs[v];
    t[v].storage = IR_ST_FOLDED;
  }
  ir_bindings b = {.inputs = none, .outputs = none, .consts = NULL, .arena = NULL, .folded = NULL};
  hd_status *st = eval->run_step(eval->ctx, p, s, &b);
  return st ? hd_status_wrap(st, "computing node '%s' (%s) at plan time: ", node->name, node->op_type) : NULL;
}

/* The folded buffers, packed into p->folded (aligned like the arena). */
static hd_status *pack_folded(const ir_graph *g, ir_plan *p, void **bufs) {
  ir_tensor *t = p->t;
  size_t total = 0;
  for (int v = 0; v < g->nvalues; v++)
    if (bufs[v]) {
      size_t a;
      if (!hd_align_size(t[v].nbytes ? t[v].nbytes : 1, IR_ARENA_ALIGN, &a) || !hd_add_size(total, a, &total))
        return hd_error(HD_ERR_NOT_SUPPORTED, "ir_plan: folded values too large");
    }
  if (!total) return NULL;
  p->folded = calloc(1, total);
  if (!p->folded) return hd_error(HD_ERR_OUT_OF_MEMORY, "ir_plan: out of host memory");
  p->folded_bytes = total;
  size_t at = 0;
  for (int v = 0; v < g->nvalues; v++) {
    if (!bufs[v]) continue;
    memcpy((char *)p->folded + at, bufs[v], t[v].nbytes);
    t[v].offset = at;
    t[v].host = (char *)p->folded + at;
    at += (t[v].nbytes + IR_ARENA_ALIGN - 1) / IR_ARENA_ALIGN * IR_ARENA_ALIGN;
  }
  return NULL;
}

static hd_status *plan_build(const ir_graph *g, const ir_shape *inputs, const plan_eval *eval, ir_plan *p) {
  ir_tensor *t = p->t;
  for (int i = 0; i < g->nvalues; i++) {
    const ir_value *v = &g->values[i];
    t[i].dtype = v->dtype;
    t[i].rank = -1;
    if (v->is_const) {
      if (!v->data && v->nbytes == 0 && ir_numel(v->rank, v->dims) != 0)
        return hd_error(HD_ERR_INTERNAL, "constant '%s' has no data", v->name);
      t[i].rank = v->rank;
      memcpy(t[i].dims, v->dims, sizeof v->dims);
      t[i].storage = IR_ST_CONST;
      t[i].index = i;
      t[i].host = v->data; /* NULL when a device backend dropped it */
      t[i].uniform = uniform_of_data(&t[i]);
    }
  }
  HD_TRY(bind_inputs(g, inputs, t));

  int nv = g->nvalues ? g->nvalues : 1;
  int *last_use = malloc(sizeof(int) * (size_t)nv);
  uint8_t *elided = calloc((size_t)(g->nnodes ? g->nnodes : 1), 1);
  void **bufs = calloc((size_t)nv, sizeof *bufs);
  void **none = calloc((size_t)(g->ninputs + g->noutputs + 1), sizeof *none);
  if (!last_use || !elided || !bufs || !none) {
    free(last_use);
    free(elided);
    free(bufs);
    free(none);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "ir_plan: out of host memory");
  }
  for (int i = 0; i < g->nvalues; i++) last_use[i] = -1;

  /* 1. shapes and resolved parameters, node by node */
  hd_status *st = NULL;
  for (int n = 0; n < g->nnodes && !st; n++) {
    const ir_node *node = &g->nodes[n];
    if (node->dead) continue;
    const op_def *def = op_get(node->kind);
    if (!def) {
      st = hd_error(HD_ERR_INTERNAL, "node '%s' (%s) has no op in a compiled partition", node->name,
                    node->op_type);
      break;
    }
    for (int k = 0; k < node->nin && !st; k++) {
      int v = node->in[k];
      if (v != IR_NONE && t[v].rank < 0)
        st = hd_error(HD_ERR_INTERNAL, "node '%s': input '%s' has no shape", node->name, g->values[v].name);
    }
    if (st) break;
    ir_step *s = &p->steps[p->nsteps];
    s->node = n;
    s->p = node->p;
    st = def->infer(g, node, t, OP_P(s));
    if (st) {
      st = hd_status_wrap(st, "node '%s' (%s): ", node->name, node->op_type);
      break;
    }
    for (int k = 0; k < node->nout && !st; k++) {
      int v = node->out[k];
      if (v == IR_NONE) continue;
      t[v].dtype = g->values[v].dtype;
      if (t[v].rank < 0)
        st = hd_error(HD_ERR_INTERNAL, "node '%s': output '%s' got no shape", node->name, g->values[v].name);
      else if (ir_numel(t[v].rank, t[v].dims) >= 0)
        t[v].nbytes = (size_t)ir_numel(t[v].rank, t[v].dims) * hd_dtype_size(t[v].dtype);
    }
    if (st) break;
    int fold = 0;
    if (def->view && t[node->in[0]].host) {
      t[node->out[0]].host = t[node->in[0]].host; /* a view of a known value is known */
    } else if (eval && !(st = foldable(g, n, def, t, eval, &fold)) && fold) {
      st = fold_step(g, p, s, eval, bufs, none);
      elided[p->nsteps] = 1;
    }
    for (int k = 0; k < node->nout && !st; k++)
      if (node->out[k] != IR_NONE) t[node->out[k]].uniform = uniform_of_output(node, def, t, node->out[k]);
    p->nsteps++;
  }
  if (!st) st = pack_folded(g, p, bufs);
  for (int v = 0; v < g->nvalues; v++) free(bufs[v]);
  free(bufs);
  free(none);

  /* 2. sizes; graph outputs; views become aliases of their input's bytes */
  for (int i = 0; i < g->nvalues && !st; i++) {
    if (t[i].rank < 0) continue;
    int64_t numel = ir_numel(t[i].rank, t[i].dims);
    if (numel < 0)
      st = hd_error(HD_ERR_NOT_SUPPORTED, "tensor '%s' would have more than %lld elements", g->values[i].name,
                    (long long)HD_MAX_NUMEL);
    else
      t[i].nbytes = (size_t)numel * hd_dtype_size(t[i].dtype); /* <= 2^40 x 16: no overflow */
  }
  for (int i = 0; i < g->noutputs && !st; i++) {
    ir_tensor *o = &t[g->outputs[i]];
    if (o->storage == IR_ST_FOLDED) continue; /* known at plan time: the run copies it out */
    if (o->storage == IR_ST_INPUT || o->storage == IR_ST_CONST) {
      st = hd_error(HD_ERR_NOT_SUPPORTED, "graph output '%s' is a graph input or constant",
                    g->values[g->outputs[i]].name);
      break;
    }
    o->storage = IR_ST_OUTPUT;
    o->index = i;
  }
  /* Empty tensors are legal: a step all of whose outputs are empty has
   * nothing to compute and nothing to write, so no backend ever runs a
   * kernel over an empty output. (A step with a non-empty output from an
   * empty input is its op's business: a reduction over an empty axis gives
   * the empty-set value (ReduceMean 0), as ONNX Runtime's kernels do.) */
  for (int s = 0; s < p->nsteps && !st; s++) {
    const ir_node *node = &g->nodes[p->steps[s].node];
    int empty = 1;
    for (int k = 0; k < node->nout && empty; k++)
      if (node->out[k] != IR_NONE && t[node->out[k]].nbytes > 0) empty = 0;
    if (empty) elided[s] = 1;
  }
  for (int s = 0; s < p->nsteps && !st; s++) {
    const ir_node *node = &g->nodes[p->steps[s].node];
    size_t off = 0;
    if (elided[s] || t[node->out[0]].storage != IR_ST_NONE) continue;
    if (alias_strided(g, p, s, t, elided)) continue;
    int root = node->in[0];
    while (t[root].storage == IR_ST_ALIAS) root = t[root].index;
    /* a run inside a graph input stays a copy: the caller's buffer may be
     * less aligned than the arena, and library plans need 16 bytes */
    if (!op_get(node->kind)->view &&
        (t[root].storage == IR_ST_INPUT || !contiguous_run(node, OP_P(&p->steps[s]), t, &off)))
      continue;
    if (t[node->in[0]].storage == IR_ST_ALIAS) off += t[node->in[0]].offset;
    t[node->out[0]].storage = IR_ST_ALIAS;
    t[node->out[0]].index = root;
    t[node->out[0]].offset = off;
    if (t[node->in[0]].strided) /* alias_strided took every reader of a strided tensor */
      st = hd_error(HD_ERR_INTERNAL, "node '%s': a view of a strided tensor outside its chain", node->name);
    elided[s] = 1;
  }

  /* host bytes of views follow their root (the folded block moved) */
  for (int i = 0; i < g->nvalues && !st; i++) {
    if (t[i].storage == IR_ST_ALIAS) {
      int root = t[i].index;
      t[i].host = (t[root].storage == IR_ST_FOLDED || t[root].storage == IR_ST_CONST) && t[root].host
                      ? (const char *)t[root].host + t[i].offset
                      : NULL;
    } else if (t[i].storage != IR_ST_FOLDED && t[i].storage != IR_ST_CONST) {
      t[i].host = NULL;
    }
  }

  /* 3. liveness, counted on the value that owns the bytes */
  for (int s = 0; s < p->nsteps && !st; s++) {
    if (elided[s]) continue;
    const ir_node *node = &g->nodes[p->steps[s].node];
    for (int k = 0; k < node->nin; k++) {
      int v = node->in[k];
      if (v == IR_NONE) continue;
      while (t[v].storage == IR_ST_ALIAS) v = t[v].index;
      last_use[v] = s;
    }
  }

  /* 4. arena offsets, first fit, in step order. A normalization's inputs
   * come free one step late: the step after it never writes where the norm
   * read, so a backend may apply the norm as that step stages its input (the
   * GPU's one-row GEMV: gb_nbits.c's nbits_link). Freed at once, a decode
   * layer's skip-norm inputs gave their bytes to the QKV GEMV's output and
   * the norm ran as a kernel of its own. Other steps' bytes come free at
   * their last reader (freeing every step's a step late took 6-29% more
   * arena on the CNNs and ConvNeXt). */
  arena a = {0};
  int late = -1; /* the norm step whose inputs wait */
  for (int s = 0; s < p->nsteps && !st; s++) {
    if (elided[s]) continue;
    const ir_node *node = &g->nodes[p->steps[s].node];
    for (int k = 0; k < node->nout && !st; k++) {
      int v = node->out[k];
      if (v == IR_NONE || t[v].storage != IR_ST_NONE) continue;
      t[v].storage = IR_ST_ARENA;
      st = arena_alloc(&a, t[v].nbytes, v, &t[v].offset);
      if (last_use[v] < 0 && !st) arena_release(&a, v); /* unused output: scratch only */
    }
    if (late >= 0) release_inputs(&a, &g->nodes[p->steps[late].node], t, last_use, late);
    late = op_node_in_family(node, "norm") ? s : -1;
    if (late < 0) release_inputs(&a, node, t, last_use, s);
  }
  p->arena_bytes = a.high;
  free(a.blocks);

  /* 5. drop the elided steps */
  int w = 0;
  for (int s = 0; s < p->nsteps; s++)
    if (!elided[s]) p->steps[w++] = p->steps[s];
  p->nsteps = w;
  free(last_use);
  free(elided);
  return st;
}

hd_status *plan_create(const ir_graph *g, const ir_shape *inputs, const plan_eval *eval, ir_plan **out) {
  *out = NULL;
  ir_plan *p;
  HD_ALLOC_OR_RETURN(p, 1);
  p->g = g;
  p->t = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof(ir_tensor));
  p->steps = calloc((size_t)(g->nnodes ? g->nnodes : 1), sizeof(ir_step));
  if (!p->t || !p->steps) {
    plan_free(p);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "ir_plan: out of host memory");
  }
  hd_status *st = plan_build(g, inputs, eval, p);
  if (st) {
    plan_free(p);
    return st;
  }
  *out = p;
  return NULL;
}

void plan_free(ir_plan *p) {
  if (!p) return;
  free(p->folded);
  free(p->t);
  free(p->steps);
  free(p);
}
