/* Reference Conv and ConvTranspose: direct convolution (ConvTranspose as
 * the scatter of each input element through the filter), any of 1D/2D/3D
 * handled as 3D with unit dims, accumulated in double. A channels-last
 * Conv reads X and W through channels-first fp32 copies and writes Y (and
 * reads the residual) at channels-last offsets. */
#include <math.h>

#include "backends/ref/ref.h"

float ref_apply_act(const op_act *a, float x) { return op_act_apply(a->kind, x, a->alpha, a->beta); }

/* Spatial geometry padded to 3 dims. */
typedef struct geom3 {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3];
} geom3;

static geom3 geom_of(const op_conv *c, const ir_tensor *x, const ir_tensor *w, const ir_tensor *y) {
  geom3 g;
  int off = 3 - c->nspatial, s0 = c->channels_last ? 1 : 2;
  for (int i = 0; i < 3; i++) {
    g.in[i] = g.out[i] = g.k[i] = g.s[i] = g.d[i] = 1;
    g.pb[i] = 0;
  }
  for (int i = 0; i < c->nspatial; i++) {
    g.in[off + i] = x->dims[s0 + i];
    g.out[off + i] = y->dims[s0 + i];
    g.k[off + i] = w->dims[s0 + i];
    g.s[off + i] = c->strides[i];
    g.d[off + i] = c->dilations[i];
    g.pb[off + i] = c->pads_begin[i];
  }
  return g;
}

/* Output positions o in [0, out) whose input o*s + off lies in [0, in). */
static void valid_range(int64_t off, int64_t s, int64_t in, int64_t out, int64_t *lo, int64_t *hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  *hi = in - 1 - off < 0 ? 0 : (in - 1 - off) / s + 1;
  if (*hi > out) *hi = out;
  if (*lo > *hi) *lo = *hi;
}

/* fp32 copies of X and W (half-precision inputs), then a double accumulator
 * for one output channel's plane. */
static size_t acc_offset(size_t xn, size_t wn) { return (xn + wn + 1) & ~(size_t)1; }

static int needs_copies(const op_conv *c, int dtype) { return dtype != HD_DT_F32 || c->channels_last; }

static size_t ref_conv_scratch(const ir_plan *p, const ir_step *s) {
  const ir_node *n = &p->g->nodes[s->node];
  const ir_tensor *x = &p->t[n->in[0]], *w = &p->t[n->in[1]], *y = &p->t[n->out[0]];
  int copies = needs_copies(&OP_P(s)->conv, x->dtype);
  size_t xn = copies ? (size_t)ir_numel(x->rank, x->dims) : 0;
  size_t wn = copies ? (size_t)ir_numel(w->rank, w->dims) : 0;
  int64_t m = y->dims[OP_P(s)->conv.channels_last ? y->rank - 1 : 1];
  size_t plane = (size_t)(ir_numel(y->rank, y->dims) / (y->dims[0] * m));
  return acc_offset(xn, wn) + 2 * plane;
}

/* src [outer, inner, c] (any float dtype) as fp32 [outer, c, inner] in dst. */
static const float *channels_first_f32(int dt, const void *src, int64_t outer, int64_t inner, int64_t c,
                                       float *dst) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      for (int64_t k = 0; k < c; k++)
        dst[(o * c + k) * inner + i] = (float)ref_load(dt, src, (size_t)((o * inner + i) * c + k));
  return dst;
}

/* ConvTranspose of image nb into output channel m's plane acc (bias
 * preset): each (input channel of m's group, kernel tap) adds w * x to the
 * outputs o = i * s - pb + t * d, a row of inputs at a time. */
static void convt_plane(const geom3 *g, const float *x, const float *w, int64_t nb, int64_t C, int64_t M,
                        int64_t G, int64_t m, double *acc) {
  int64_t Cg = C / G, Mg = M / G, grp = m / Mg;
  int64_t in_sz = g->in[0] * g->in[1] * g->in[2], k_sz = g->k[0] * g->k[1] * g->k[2];
  for (int64_t cg = 0; cg < Cg; cg++) {
    int64_t ci = grp * Cg + cg;
    const float *xc = x + (nb * C + ci) * in_sz;
    const float *wc = w + (ci * Mg + (m - grp * Mg)) * k_sz; /* W [C, M / G, k...] */
    for (int64_t k0 = 0; k0 < g->k[0]; k0++)
      for (int64_t k1 = 0; k1 < g->k[1]; k1++)
        for (int64_t k2 = 0; k2 < g->k[2]; k2++) {
          double wv = wc[(k0 * g->k[1] + k1) * g->k[2] + k2];
          int64_t off0 = k0 * g->d[0] - g->pb[0], off1 = k1 * g->d[1] - g->pb[1], off2 = k2 * g->d[2] - g->pb[2];
          int64_t lo0, hi0, lo1, hi1, lo2, hi2; /* inputs whose output lies inside y */
          valid_range(off0, g->s[0], g->out[0], g->in[0], &lo0, &hi0);
          valid_range(off1, g->s[1], g->out[1], g->in[1], &lo1, &hi1);
          valid_range(off2, g->s[2], g->out[2], g->in[2], &lo2, &hi2);
          for (int64_t i0 = lo0; i0 < hi0; i0++)
            for (int64_t i1 = lo1; i1 < hi1; i1++) {
              const float *xr = xc + (i0 * g->in[1] + i1) * g->in[2];
              double *ar = acc + ((i0 * g->s[0] + off0) * g->out[1] + i1 * g->s[1] + off1) * g->out[2];
              for (int64_t i2 = lo2; i2 < hi2; i2++) ar[i2 * g->s[2] + off2] += wv * xr[i2];
            }
        }
  }
}

/* Loop order: for each output channel, each (input channel, kernel tap)
 * adds w * x to a whole output plane, a contiguous row at a time. */
static hd_status *ref_conv(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  const ir_node *n = &p->g->nodes[s->node];
  const op_conv *c = &OP_P(s)->conv;
  const ir_tensor *xt = &p->t[n->in[0]], *wt = &p->t[n->in[1]], *yt = &p->t[n->out[0]];
  int dt = xt->dtype, last = c->channels_last;
  int copies = needs_copies(c, dt);
  size_t xn = copies ? (size_t)ir_numel(xt->rank, xt->dims) : 0;
  size_t wn = copies ? (size_t)ir_numel(wt->rank, wt->dims) : 0;
  if (scratch->floats < ref_conv_scratch(p, s)) return hd_error(HD_ERR_INTERNAL, "ref conv: scratch too small");
  geom3 g = geom_of(c, xt, wt, yt);
  int ca = last ? xt->rank - 1 : 1;
  int64_t N = xt->dims[0], C = xt->dims[ca], M = yt->dims[ca];
  int64_t G = c->group, Cg = C / G, Mg = M / G;
  int64_t in_sz = g.in[0] * g.in[1] * g.in[2], out_sz = g.out[0] * g.out[1] * g.out[2];
  int64_t k_sz = g.k[0] * g.k[1] * g.k[2];
  const void *xs = ir_tensor_addr(p, n->in[0], b), *ws = ir_tensor_addr(p, n->in[1], b);
  const float *x = last ? channels_first_f32(dt, xs, N, in_sz, C, scratch->buf)
                        : ref_as_f32(dt, xs, (size_t)ir_numel(xt->rank, xt->dims), scratch->buf);
  const float *w = last ? channels_first_f32(dt, ws, M, k_sz, Cg, scratch->buf + xn)
                        : ref_as_f32(dt, ws, (size_t)ir_numel(wt->rank, wt->dims), scratch->buf + xn);
  double *acc = (double *)(void *)(scratch->buf + acc_offset(xn, wn));
  const void *bias = c->has_bias ? ir_tensor_addr(p, n->in[2], b) : NULL;
  const void *res = c->has_residual ? ir_tensor_addr(p, n->in[3], b) : NULL;
  void *y = ir_tensor_addr(p, n->out[0], b);

  for (int64_t nb = 0; nb < N; nb++)
    for (int64_t m = 0; m < M; m++) {
      double b0 = bias ? ref_load(dt, bias, (size_t)m) : 0.0;
      for (int64_t o = 0; o < out_sz; o++) acc[o] = b0;
      int64_t grp = m / Mg;
      if (c->transpose) convt_plane(&g, x, w, nb, C, M, G, m, acc);
      for (int64_t cg = 0; cg < Cg && !c->transpose; cg++) {
        const float *xc = x + (nb * C + grp * Cg + cg) * in_sz;
        const float *wc = w + (m * Cg + cg) * k_sz;
        for (int64_t k0 = 0; k0 < g.k[0]; k0++)
          for (int64_t k1 = 0; k1 < g.k[1]; k1++)
            for (int64_t k2 = 0; k2 < g.k[2]; k2++) {
              double wv = wc[(k0 * g.k[1] + k1) * g.k[2] + k2];
              int64_t off0 = k0 * g.d[0] - g.pb[0], off1 = k1 * g.d[1] - g.pb[1], off2 = k2 * g.d[2] - g.pb[2];
              int64_t lo0, hi0, lo1, hi1, lo2, hi2;
              valid_range(off0, g.s[0], g.in[0], g.out[0], &lo0, &hi0);
              valid_range(off1, g.s[1], g.in[1], g.out[1], &lo1, &hi1);
              valid_range(off2, g.s[2], g.in[2], g.out[2], &lo2, &hi2);
              for (int64_t o0 = lo0; o0 < hi0; o0++)
                for (int64_t o1 = lo1; o1 < hi1; o1++) {
                  const float *xr = xc + ((o0 * g.s[0] + off0) * g.in[1] + o1 * g.s[1] + off1) * g.in[2];
                  double *ar = acc + (o0 * g.out[1] + o1) * g.out[2];
                  for (int64_t o2 = lo2; o2 < hi2; o2++) ar[o2] += wv * xr[o2 * g.s[2] + off2];
                }
            }
      }
      for (int64_t o = 0; o < out_sz; o++) {
        size_t at = (size_t)(last ? (nb * out_sz + o) * M + m : (nb * M + m) * out_sz + o);
        double v = acc[o];
        if (res) v += ref_load(dt, res, at);
        ref_store(dt, y, at, ref_apply_act(&c->act, (float)v));
      }
    }
  return NULL;
}

const ref_family ref_family_conv = {.run = ref_conv, .scratch = ref_conv_scratch};
