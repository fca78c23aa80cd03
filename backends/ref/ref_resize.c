/* Reference Resize: per output element and dim, the input coordinate in
 * float as ONNX Runtime computes it (ops/resize.h), then the nearest
 * element (bytes as they are) or the linear blend of the two neighbours
 * in every scaled dim (in double). */
#include <math.h>
#include <string.h>

#include "backends/ref/ref.h"

static float resize_coord(op_resize_coord mode, float x, float s, float out, float in) {
  switch (mode) {
    case OP_RESIZE_PYTORCH_HALF_PIXEL: return out > 1 ? (x + 0.5f) / s - 0.5f : 0.0f;
    case OP_RESIZE_ALIGN_CORNERS: return out == 1 ? 0.0f : x * (in - 1) / (out - 1);
    case OP_RESIZE_ASYMMETRIC: return x / s;
    case OP_RESIZE_TF_HALF_PIXEL_FOR_NN: return (x + 0.5f) / s;
    case OP_RESIZE_HALF_PIXEL_SYMMETRIC: {
      float adjustment = out / (s * in), offset = in / 2 * (1 - adjustment);
      return (float)(offset + ((double)x + 0.5) / s - 0.5);
    }
    default: return (x + 0.5f) / s - 0.5f; /* half_pixel */
  }
}

/* The element nearest coordinate c in a dim of n elements. */
static int64_t nearest_index(op_resize_nearest mode, float c, int64_t n) {
  float r;
  switch (mode) {
    case OP_RESIZE_ROUND_PREFER_FLOOR: r = c - floorf(c) == 0.5f ? floorf(c) : roundf(c); break;
    case OP_RESIZE_ROUND_PREFER_CEIL: r = roundf(c); break;
    case OP_RESIZE_FLOOR: r = floorf(c); break;
    default: r = ceilf(c); break;
  }
  if (!(r > 0.0f)) return 0;
  if (r >= 9.0e18f) return n - 1; /* past int64: clamp before converting */
  int64_t i = (int64_t)r;
  return i < n - 1 ? i : n - 1;
}

/* The two neighbours of coordinate c (clamped into the dim) and their
 * weights, as ONNX Runtime's linear modes compute them. */
static void linear_taps(float c, int64_t n, int64_t *i0, int64_t *i1, float *w0, float *w1) {
  float top = (float)(n - 1);
  c = c < 0.0f ? 0.0f : c > top ? top : c;
  *i0 = (int64_t)c < n - 1 ? (int64_t)c : n - 1;
  *i1 = *i0 + 1 < n - 1 ? *i0 + 1 : n - 1;
  *w0 = *i0 == *i1 ? 0.5f : fabsf(c - (float)*i1);
  *w1 = *i0 == *i1 ? 0.5f : fabsf(c - (float)*i0);
}

static hd_status *ref_resize(const ir_plan *p, const ir_step *s, const ir_bindings *b, ref_scratch *scratch) {
  (void)scratch;
  const ir_node *n = &p->g->nodes[s->node];
  const op_resize *q = &OP_P(s)->resize;
  op_resize_map m;
  HD_TRY(op_resize_map_of(n, q, p->t, &m));
  const char *x = ir_tensor_addr(p, n->in[0], b);
  char *y = ir_tensor_addr(p, n->out[0], b);
  int dt = p->t[n->in[0]].dtype;
  size_t es = hd_dtype_size(dt);
  int64_t st[IR_MAX_RANK], acc = 1, cnt = ir_numel(m.rank, m.dims), c[IR_MAX_RANK] = {0};
  for (int d = m.rank - 1; d >= 0; d--) st[d] = acc, acc *= m.in_dims[d];
  for (int64_t e = 0; e < cnt; e++) {
    int64_t base = 0, i0[IR_MAX_RANK], i1[IR_MAX_RANK];
    float w0[IR_MAX_RANK], w1[IR_MAX_RANK];
    int scaled[IR_MAX_RANK], ns = 0;
    for (int d = 0; d < m.rank; d++) {
      if (m.scale[d] == 1.0f) {
        base += c[d] * st[d];
        continue;
      }
      float at = resize_coord(q->coord, (float)c[d], m.scale[d], (float)m.dims[d], (float)m.in_dims[d]);
      if (q->mode == OP_RESIZE_NEAREST) {
        base += nearest_index(q->nearest, at, m.in_dims[d]) * st[d];
        continue;
      }
      linear_taps(at, m.in_dims[d], &i0[d], &i1[d], &w0[d], &w1[d]);
      scaled[ns++] = d;
    }
    if (q->mode == OP_RESIZE_NEAREST) {
      memcpy(y + (size_t)e * es, x + (size_t)base * es, es);
    } else {
      double sum = 0;
      for (int tap = 0; tap < (1 << ns); tap++) {
        double w = 1;
        int64_t off = base;
        for (int k = 0; k < ns; k++) {
          int d = scaled[k], hi = (tap >> k) & 1;
          w *= hi ? w1[d] : w0[d];
          off += (hi ? i1[d] : i0[d]) * st[d];
        }
        sum += w * ref_load(dt, x, (size_t)off);
      }
      ref_store_f64(dt, y, (size_t)e, sum);
    }
    for (int d = m.rank - 1; d >= 0; d--) {
      if (++c[d] < m.dims[d]) break;
      c[d] = 0;
    }
  }
  return NULL;
}

const ref_family ref_family_resize = {.run = ref_resize};
