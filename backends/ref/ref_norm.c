/* Reference layer normalisations: per row, three passes (sum, squared
 * deviations, output), statistics in double. Fused transposes
 * (op_norm.in_chan / out_chan) read x / write y channel-major; x, the
 * skip and y are otherwise read and written through their row maps
 * (op_norm_rows_of). */
#include <math.h>

#include "backends/ref/ref.h"

typedef struct norm_row {
  int dt;
  const void *x, *skip, *sbias;
  int64_t cols;
  op_norm_rows xm, sm, ym;  /* where x (unless x_inner), the skip and y (unless y_inner) lie */
  int64_t x_inner, y_inner; /* 0: packed rows; else stored [rows / inner, cols, inner] */
} norm_row;

/* Where row r, column c lives in a tensor stored channel-major [rows /
 * inner, cols, inner]. */
static size_t at_cm(int64_t inner, int64_t cols, int64_t r, int64_t c) {
  return (size_t)((r / inner * cols + c) * inner + r % inner);
}

/* Element c of row r of an addend read through its map. */
static size_t at_map(const op_norm_rows *m, int64_t r, int64_t c) {
  int64_t o = c % m->col_n;
  for (int d = 0; d < m->nd; d++) o += r / m->div[d] % m->dim[d] * m->stride[d];
  return (size_t)o;
}

/* s = x + skip + skip_bias at row r, column c, in fp32. */
static float row_value(const norm_row *w, int64_t r, int64_t c) {
  float v = ref_load(w->dt, w->x, w->x_inner ? at_cm(w->x_inner, w->cols, r, c) : at_map(&w->xm, r, c));
  if (w->skip) v += ref_load(w->dt, w->skip, at_map(&w->sm, r, c));
  if (w->sbias) v += ref_load(w->dt, w->sbias, (size_t)c);
  return v;
}

static hd_status *ref_norm(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const op_norm *q = &OP_P(s)->norm;
  op_norm_layout l;
  HD_TRY(op_norm_layout_of(n, q, p->t, &l));
  norm_row w = {.dt = p->t[n->in[0]].dtype,
                .x = ir_tensor_addr(p, n->in[0], b),
                .skip = ir_input_addr(p, n, q->in_skip, b),
                .sbias = ir_input_addr(p, n, q->in_skip_bias, b),
                .cols = l.cols,
                .xm = l.xm,
                .sm = l.sm,
                .ym = l.ym,
                .x_inner = l.x_inner,
                .y_inner = l.y_inner};
  const int64_t rows = l.rows;
  const void *scale = ir_input_addr(p, n, q->in_scale, b), *bias = ir_input_addr(p, n, q->in_bias, b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  void *mean_o = ir_output_addr(p, n, q->out_mean, b), *inv_o = ir_output_addr(p, n, q->out_inv, b);
  void *sum_o = ir_output_addr(p, n, q->out_sum, b);
  for (int64_t r = 0; r < rows; r++) {
    double sum = 0, sq = 0;
    for (int64_t c = 0; c < w.cols; c++) {
      float v = row_value(&w, r, c);
      sum += v;
      if (sum_o) ref_store(w.dt, sum_o, (size_t)(r * w.cols + c), v);
    }
    double mean = q->rms ? 0 : sum / (double)w.cols;
    for (int64_t c = 0; c < w.cols; c++) {
      double d = row_value(&w, r, c) - mean;
      sq += d * d;
    }
    double inv = 1.0 / sqrt(sq / (double)w.cols + (double)q->epsilon);
    for (int64_t c = 0; c < w.cols; c++) {
      double o = (row_value(&w, r, c) - mean) * inv * ref_load(w.dt, scale, (size_t)c);
      if (bias) o += ref_load(w.dt, bias, (size_t)c);
      ref_store(w.dt, y, w.y_inner ? at_cm(w.y_inner, w.cols, r, c) : at_map(&w.ym, r, c), (float)o);
    }
    if (mean_o) ref_store(p->t[n->out[q->out_mean]].dtype, mean_o, (size_t)r, (float)mean);
    if (inv_o) ref_store(p->t[n->out[q->out_inv]].dtype, inv_o, (size_t)r, (float)inv);
  }
  return NULL;
}

const ref_family ref_family_norm = {.run = ref_norm};
