/* Reference MaxPool / AveragePool / global pools, 1D-3D handled as 3D with
 * unit dims. Windows are clipped to the input; an average divides by the
 * taps inside the input, or (count_include_pad) inside input + pads. */
#include <float.h>

#include "backends/ref/ref.h"

typedef struct pgeom {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} pgeom;

static pgeom geom_of(const op_pool *pp, const ir_tensor *x, const ir_tensor *y) {
  pgeom g;
  int off = 3 - pp->nspatial, s0 = pp->channels_last ? 1 : 2;
  for (int i = 0; i < 3; i++) {
    g.in[i] = g.out[i] = g.k[i] = g.s[i] = g.d[i] = 1;
    g.pb[i] = g.pe[i] = 0;
  }
  for (int i = 0; i < pp->nspatial; i++) {
    g.in[off + i] = x->dims[s0 + i];
    g.out[off + i] = y->dims[s0 + i];
    g.k[off + i] = pp->kernel[i];
    g.s[off + i] = pp->strides[i];
    g.d[off + i] = pp->dilations[i];
    g.pb[off + i] = pp->pads_begin[i];
    g.pe[off + i] = pp->pads_end[i];
  }
  return g;
}

/* Taps of one dim at output o: *lo..*hi index the kernel taps inside the
 * input; *padded counts those inside input + pads. */
static void taps(const pgeom *g, int i, int64_t o, int64_t *lo, int64_t *hi, int64_t *padded) {
  int64_t start = o * g->s[i] - g->pb[i];
  *lo = 0;
  *hi = -1;
  *padded = 0;
  int first = 1;
  for (int64_t k = 0; k < g->k[i]; k++) {
    int64_t pos = start + k * g->d[i];
    if (pos >= -g->pb[i] && pos < g->in[i] + g->pe[i]) (*padded)++;
    if (pos < 0 || pos >= g->in[i]) continue;
    if (first) *lo = k, first = 0;
    *hi = k;
  }
}

static hd_status *ref_pool(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const op_pool *pp = &OP_P(s)->pool;
  const ir_tensor *xt = &p->t[n->in[0]], *yt = &p->t[n->out[0]];
  const void *x = ir_tensor_addr(p, n->in[0], b);
  void *y = ir_tensor_addr(p, n->out[0], b);
  int dt = xt->dtype;
  pgeom g = geom_of(pp, xt, yt);
  /* a plane is one (image, channel): channels first, its elements are
   * consecutive (step 1); channels last, C apart */
  int64_t C = xt->dims[pp->channels_last ? xt->rank - 1 : 1];
  int64_t planes = xt->dims[0] * C, step = pp->channels_last ? C : 1;
  int64_t in_sz = g.in[0] * g.in[1] * g.in[2], out_sz = g.out[0] * g.out[1] * g.out[2];
  for (int64_t pl = 0; pl < planes; pl++) {
    int64_t nb = pl / C, ch = pl % C;
    size_t xb = (size_t)(pp->channels_last ? nb * in_sz * C + ch : pl * in_sz);
    size_t yb = (size_t)(pp->channels_last ? nb * out_sz * C + ch : pl * out_sz), yi = 0;
    for (int64_t o0 = 0; o0 < g.out[0]; o0++) {
      int64_t l0, h0, c0;
      taps(&g, 0, o0, &l0, &h0, &c0);
      for (int64_t o1 = 0; o1 < g.out[1]; o1++) {
        int64_t l1, h1, c1;
        taps(&g, 1, o1, &l1, &h1, &c1);
        for (int64_t o2 = 0; o2 < g.out[2]; o2++, yi++) {
          int64_t l2, h2, c2;
          taps(&g, 2, o2, &l2, &h2, &c2);
          double sum = 0.0, mx = -DBL_MAX;
          int64_t cnt = 0;
          for (int64_t k0 = l0; k0 <= h0; k0++) {
            int64_t i0 = o0 * g.s[0] - g.pb[0] + k0 * g.d[0];
            if (i0 < 0 || i0 >= g.in[0]) continue;
            for (int64_t k1 = l1; k1 <= h1; k1++) {
              int64_t i1 = o1 * g.s[1] - g.pb[1] + k1 * g.d[1];
              if (i1 < 0 || i1 >= g.in[1]) continue;
              for (int64_t k2 = l2; k2 <= h2; k2++) {
                int64_t i2 = o2 * g.s[2] - g.pb[2] + k2 * g.d[2];
                if (i2 < 0 || i2 >= g.in[2]) continue;
                double v = ref_load(dt, x, xb + (size_t)(((i0 * g.in[1] + i1) * g.in[2] + i2) * step));
                sum += v;
                if (v > mx || cnt == 0) mx = v;
                cnt++;
              }
            }
          }
          double r;
          if (pp->is_max) r = cnt ? mx : -FLT_MAX;
          else {
            int64_t div = pp->count_include_pad ? c0 * c1 * c2 : cnt;
            r = div ? sum / (double)div : 0.0;
          }
          ref_store(dt, y, yb + yi * (size_t)step, (float)r);
        }
      }
    }
  }
  return NULL;
}

const ref_family ref_family_pool = {.run = ref_pool};
