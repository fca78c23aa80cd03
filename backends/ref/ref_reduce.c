/* Reference reductions: every input element is folded into the output
 * element its coordinates map to (reduced dims dropped). Floats in double,
 * int32/int64 in int64 (wrapping, as the CPU EP's integer sums do);
 * LogSumExp subtracts each output's largest finite element first. */
#include <math.h>
#include <stdlib.h>

#include "backends/ref/ref.h"

static size_t ref_reduce_scratch(const ir_plan *p, const ir_step *s) {
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *yt = &p->t[n->out[0]];
  /* Two doubles (or int64s) per output element, as four floats: the
   * accumulator and LogSumExp's shift. */
  return 4 * (size_t)ir_numel(yt->rank, yt->dims);
}

/* Walks x in order, keeping o, the output element of x's current element
 * (the output strides of reduced dims are 0). */
typedef struct red_iter {
  const ir_tensor *xt;
  int64_t ost[IR_MAX_RANK], idx[IR_MAX_RANK], o;
} red_iter;

/* Returns the number of elements reduced into each output. */
static int64_t iter_init(red_iter *it, const ir_tensor *xt, const op_reduce *r) {
  uint8_t red[IR_MAX_RANK] = {0};
  for (int i = 0; i < r->naxes; i++) red[r->axes[i]] = 1;
  it->xt = xt;
  it->o = 0;
  int64_t st = 1, count = 1;
  for (int d = xt->rank - 1; d >= 0; d--) {
    it->idx[d] = 0;
    if (red[d]) {
      it->ost[d] = 0;
      count *= xt->dims[d];
    } else {
      it->ost[d] = st;
      st *= xt->dims[d];
    }
  }
  return count;
}

static void iter_next(red_iter *it) {
  for (int d = it->xt->rank - 1; d >= 0; d--) {
    if (++it->idx[d] < it->xt->dims[d]) {
      it->o += it->ost[d];
      return;
    }
    it->o -= (it->xt->dims[d] - 1) * it->ost[d];
    it->idx[d] = 0;
  }
}

static hd_status *reduce_int(const ir_tensor *xt, const ir_tensor *yt, const op_reduce *r, const void *x, void *y,
                             int64_t *acc) {
  red_iter it;
  iter_init(&it, xt, r);
  size_t ny = (size_t)ir_numel(yt->rank, yt->dims), nx = (size_t)ir_numel(xt->rank, xt->dims);
  int i32 = xt->dtype == HD_DT_I32;
  int64_t init = 0;
  switch (r->kind) {
    case OP_RED_SUM: init = 0; break;
    case OP_RED_MAX: init = i32 ? INT32_MIN : INT64_MIN; break;
    case OP_RED_MIN: init = i32 ? INT32_MAX : INT64_MAX; break;
    case OP_RED_PROD: init = 1; break;
    default: return hd_error(HD_ERR_INTERNAL, "ref reduce: integer kind %d", (int)r->kind);
  }
  for (size_t i = 0; i < ny; i++) acc[i] = init;
  for (size_t i = 0; i < nx; i++, iter_next(&it)) {
    int64_t v = ref_load_i64(xt->dtype, x, i), *a = &acc[it.o];
    switch (r->kind) {
      case OP_RED_SUM: *a = (int64_t)((uint64_t)*a + (uint64_t)v); break;
      case OP_RED_MAX: *a = v > *a ? v : *a; break;
      case OP_RED_MIN: *a = v < *a ? v : *a; break;
      default: *a = (int64_t)((uint64_t)*a * (uint64_t)v); break;
    }
  }
  for (size_t i = 0; i < ny; i++) ref_store_i64(yt->dtype, y, i, acc[i]);
  return NULL;
}

static void reduce_float(const ir_tensor *xt, const ir_tensor *yt, const op_reduce *r, const void *x, void *y,
                         double *acc, double *shift) {
  red_iter it;
  int64_t count = iter_init(&it, xt, r);
  size_t ny = (size_t)ir_numel(yt->rank, yt->dims), nx = (size_t)ir_numel(xt->rank, xt->dims);
  op_reduce_kind k = r->kind;
  double init = k == OP_RED_MAX ? -INFINITY : k == OP_RED_MIN ? INFINITY : k == OP_RED_PROD ? 1.0 : 0.0;
  for (size_t i = 0; i < ny; i++) {
    acc[i] = init;
    shift[i] = -INFINITY;
  }
  if (k == OP_RED_LOG_SUM_EXP) {
    for (size_t i = 0; i < nx; i++, iter_next(&it)) {
      double v = ref_load_f64(xt->dtype, x, i);
      if (isfinite(v) && v > shift[it.o]) shift[it.o] = v;
    }
    iter_init(&it, xt, r);
    for (size_t i = 0; i < ny; i++)
      if (!isfinite(shift[i])) shift[i] = 0.0; /* no finite element */
  }
  for (size_t i = 0; i < nx; i++, iter_next(&it)) {
    double v = ref_load_f64(xt->dtype, x, i), *a = &acc[it.o];
    switch (k) {
      case OP_RED_MAX: *a = (isnan(*a) || *a >= v) ? *a : v; break; /* NaN wins */
      case OP_RED_MIN: *a = (isnan(*a) || *a <= v) ? *a : v; break;
      case OP_RED_PROD: *a *= v; break;
      case OP_RED_L1: *a += fabs(v); break;
      case OP_RED_L2: case OP_RED_SUM_SQUARE: *a += v * v; break;
      case OP_RED_LOG_SUM_EXP: *a += exp(v - shift[it.o]); break;
      default: *a += v; break;
    }
  }
  for (size_t i = 0; i < ny; i++) {
    double v = acc[i];
    switch (k) {
      case OP_RED_MEAN: v = count ? v / (double)count : 0.0; break; /* empty: 0, as ONNX Runtime gives */
      case OP_RED_L2: v = sqrt(v); break;
      case OP_RED_LOG_SUM: v = log(v); break;
      case OP_RED_LOG_SUM_EXP: v = log(v) + shift[i]; break;
      default: break;
    }
    ref_store_f64(yt->dtype, y, i, v);
  }
}

static hd_status *ref_reduce(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  const ir_node *n = &p->g->nodes[s->node];
  const op_reduce *r = &OP_P(s)->reduce;
  const ir_tensor *xt = &p->t[n->in[0]], *yt = &p->t[n->out[0]];
  const void *x = ir_tensor_addr(p, n->in[0], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  size_t ny = (size_t)ir_numel(yt->rank, yt->dims);
  if (scratch->floats < 4 * ny) return hd_error(HD_ERR_INTERNAL, "ref %s: scratch too small", n->op_type);
  if (xt->dtype == HD_DT_I32 || xt->dtype == HD_DT_I64)
    return reduce_int(xt, yt, r, x, y, (int64_t *)(void *)scratch->buf);
  double *acc = (double *)(void *)scratch->buf;
  reduce_float(xt, yt, r, x, y, acc, acc + ny);
  return NULL;
}

const ref_family ref_family_reduce = {.run = ref_reduce, .scratch = ref_reduce_scratch};
