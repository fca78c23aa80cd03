/* Building models in memory with OrtModelEditorApi, and the single-Conv
 * model the op tests use. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "tools/harness/harness.h"

#define HH_MODEL_MAX_IO 64

struct hh_model {
  hh_ort *h;
  OrtGraph *graph; /* owned until AddGraphToModel */
  OrtModel *model; /* after hh_model_finish */
  OrtValueInfo *ins[HH_MODEL_MAX_IO], *outs[HH_MODEL_MAX_IO];
  size_t n_in, n_out;
};

hh_attr hh_attr_int(const char *name, int64_t v) {
  hh_attr a = {.name = name, .kind = HH_ATTR_INT, .i = v, .n = 1};
  return a;
}

hh_attr hh_attr_ints(const char *name, const int64_t *v, size_t n) {
  hh_attr a = {.name = name, .kind = HH_ATTR_INTS, .ints = v, .n = n};
  return a;
}

hh_attr hh_attr_float(const char *name, float v) {
  hh_attr a = {.name = name, .kind = HH_ATTR_FLOAT, .f = v, .n = 1};
  return a;
}

hh_attr hh_attr_string(const char *name, const char *s) {
  hh_attr a = {.name = name, .kind = HH_ATTR_STRING, .s = s, .n = strlen(s)};
  return a;
}

hh_model *hh_model_new(hh_ort *h) {
  hh_model *m = calloc(1, sizeof *m);
  if (!m) {
    hh_fail(h, "out of memory");
    return NULL;
  }
  m->h = h;
  if (hh_check(h, h->ed->CreateGraph(&m->graph), "CreateGraph")) {
    free(m);
    return NULL;
  }
  return m;
}

static int make_value_info(hh_ort *h, const char *name, int dtype, int rank, const int64_t *dims,
                           OrtValueInfo **out) {
  const OrtApi *a = h->api;
  OrtTensorTypeAndShapeInfo *tsi = NULL;
  OrtTypeInfo *ti = NULL;
  int rc = 1;
  if (hh_check(h, a->CreateTensorTypeAndShapeInfo(&tsi), "CreateTensorTypeAndShapeInfo")) return 1;
  if (hh_check(h, a->SetTensorElementType(tsi, (ONNXTensorElementDataType)dtype), "SetTensorElementType"))
    goto done;
  /* rank < 0: leave the shape unset so inference decides it. */
  if (rank >= 0 && hh_check(h, a->SetDimensions(tsi, dims, (size_t)rank), "SetDimensions")) goto done;
  if (hh_check(h, h->ed->CreateTensorTypeInfo(tsi, &ti), "CreateTensorTypeInfo")) goto done;
  if (hh_check(h, h->ed->CreateValueInfo(name, ti, out), "CreateValueInfo")) goto done;
  rc = 0;
done:
  if (ti) a->ReleaseTypeInfo(ti);
  a->ReleaseTensorTypeAndShapeInfo(tsi);
  return rc;
}

int hh_model_input(hh_model *m, const char *name, int dtype, int rank, const int64_t *dims) {
  if (m->model || m->n_in >= HH_MODEL_MAX_IO) return hh_fail(m->h, "hh_model_input: too late or too many");
  if (make_value_info(m->h, name, dtype, rank, dims, &m->ins[m->n_in])) return 1;
  m->n_in++;
  return 0;
}

int hh_model_output(hh_model *m, const char *name, int dtype, int rank, const int64_t *dims) {
  if (m->model || m->n_out >= HH_MODEL_MAX_IO) return hh_fail(m->h, "hh_model_output: too late or too many");
  if (make_value_info(m->h, name, dtype, rank, dims, &m->outs[m->n_out])) return 1;
  m->n_out++;
  return 0;
}

int hh_model_initializer(hh_model *m, const char *name, const hh_tensor *t) {
  hh_ort *h = m->h;
  const OrtApi *a = h->api;
  OrtValue *v = NULL;
  void *dst = NULL;
  if (m->model) return hh_fail(h, "hh_model_initializer: model already finished");
  /* CreateTensorAsOrtValue copies into ORT-owned memory: no lifetime ties to t
   * and no 128-byte minimum as with external data. */
  if (hh_check(h,
               a->CreateTensorAsOrtValue(h->alloc, t->dims, (size_t)t->rank, (ONNXTensorElementDataType)t->dtype,
                                         &v),
               "CreateTensorAsOrtValue"))
    return 1;
  if (hh_check(h, a->GetTensorMutableData(v, &dst), "GetTensorMutableData")) goto fail;
  if (t->n) memcpy(dst, t->data, t->n * hd_dtype_size(t->dtype));
  if (hh_check(h, h->ed->AddInitializerToGraph(m->graph, name, v, false), "AddInitializerToGraph")) goto fail;
  return 0;
fail:
  a->ReleaseValue(v);
  return 1;
}

int hh_model_random_initializer(hh_model *m, const char *name, int rank, const int64_t *dims, uint64_t seed,
                                double scale, size_t *bytes) {
  hh_tensor t;
  if (hh_tensor_alloc(&t, HD_DT_F32, rank, dims)) return 1;
  hh_tensor_fill_random(&t, seed);
  for (size_t i = 0; i < t.n; i++) hh_tensor_set(&t, i, hh_tensor_get(&t, i) * scale);
  if (bytes) *bytes += t.n * sizeof(float);
  int rc = hh_model_initializer(m, name, &t);
  hh_tensor_free(&t);
  return rc;
}

int hh_model_node(hh_model *m, const char *op, const char *domain, const char *name, const char *const *ins,
                  size_t n_in, const char *const *outs, size_t n_out, const hh_attr *attrs, size_t n_attrs) {
  hh_ort *h = m->h;
  const OrtApi *a = h->api;
  OrtOpAttr *oa[32] = {0};
  OrtNode *node = NULL;
  int rc = 1;
  if (m->model) return hh_fail(h, "hh_model_node: model already finished");
  if (n_attrs > 32) return hh_fail(h, "hh_model_node: too many attributes");
  for (size_t i = 0; i < n_attrs; i++) {
    const hh_attr *at = &attrs[i];
    OrtStatus *st = NULL;
    /* Lengths: element counts for arrays, bytes for strings, 1 for scalars;
     * ints are int64 as in ONNX's AttributeProto. */
    switch (at->kind) {
      case HH_ATTR_INT: st = a->CreateOpAttr(at->name, &at->i, 1, ORT_OP_ATTR_INT, &oa[i]); break;
      case HH_ATTR_INTS: st = a->CreateOpAttr(at->name, at->ints, (int)at->n, ORT_OP_ATTR_INTS, &oa[i]); break;
      case HH_ATTR_FLOAT: st = a->CreateOpAttr(at->name, &at->f, 1, ORT_OP_ATTR_FLOAT, &oa[i]); break;
      case HH_ATTR_FLOATS:
        st = a->CreateOpAttr(at->name, at->floats, (int)at->n, ORT_OP_ATTR_FLOATS, &oa[i]);
        break;
      case HH_ATTR_STRING: st = a->CreateOpAttr(at->name, at->s, (int)strlen(at->s), ORT_OP_ATTR_STRING, &oa[i]); break;
      default: hh_fail(h, "attribute '%s': unknown kind %d", at->name, at->kind); goto done;
    }
    if (hh_check(h, st, "CreateOpAttr")) goto done;
  }
  /* CreateNode copies the attributes; we release ours below. */
  if (hh_check(h,
               h->ed->CreateNode(op, domain ? domain : "", name, ins, n_in, outs, n_out, n_attrs ? oa : NULL,
                                 n_attrs, &node),
               "CreateNode"))
    goto done;
  if (hh_check(h, h->ed->AddNodeToGraph(m->graph, node), "AddNodeToGraph")) {
    a->ReleaseNode(node);
    goto done;
  }
  rc = 0;
done:
  for (size_t i = 0; i < n_attrs; i++)
    if (oa[i]) a->ReleaseOpAttr(oa[i]);
  return rc;
}

int hh_model_finish(hh_model *m, int opset) {
  hh_ort *h = m->h;
  /* ORT's contrib ops (SkipLayerNormalization, ...) are com.microsoft
   * version 1; importing the domain costs nothing when no node uses it. */
  const char *domains[] = {"", "com.microsoft"};
  int opsets[] = {opset ? opset : 17, 1};
  if (m->model) return 0;
  /* On success these take ownership and null the array slots. */
  if (hh_check(h, h->ed->SetGraphInputs(m->graph, m->ins, m->n_in), "SetGraphInputs")) return 1;
  m->n_in = 0;
  if (hh_check(h, h->ed->SetGraphOutputs(m->graph, m->outs, m->n_out), "SetGraphOutputs")) return 1;
  m->n_out = 0;
  if (hh_check(h, h->ed->CreateModel(domains, opsets, 2, &m->model), "CreateModel")) return 1;
  if (hh_check(h, h->ed->AddGraphToModel(m->model, m->graph), "AddGraphToModel")) {
    h->api->ReleaseModel(m->model);
    m->model = NULL;
    return 1;
  }
  m->graph = NULL;
  return 0;
}

const OrtModel *hh_model_ort(const hh_model *m) { return m ? m->model : NULL; }

void hh_model_free(hh_model *m) {
  if (!m) return;
  const OrtApi *a = m->h->api;
  for (size_t i = 0; i < m->n_in; i++)
    if (m->ins[i]) a->ReleaseValueInfo(m->ins[i]);
  for (size_t i = 0; i < m->n_out; i++)
    if (m->outs[i]) a->ReleaseValueInfo(m->outs[i]);
  if (m->graph) a->ReleaseGraph(m->graph);
  if (m->model) a->ReleaseModel(m->model);
  free(m);
}

/* ---- Conv ------------------------------------------------------------------- */

static int is_same(const char *ap) { return ap && (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0); }

int64_t hh_conv_out_dim(const hh_conv_desc *d, int i, int64_t in) {
  int64_t s = d->strides[0] ? d->strides[i] : 1;
  int64_t dl = d->dilations[0] ? d->dilations[i] : 1;
  int64_t ek = dl * (d->k[i] - 1) + 1;
  if (is_same(d->auto_pad)) return (in + s - 1) / s;
  int64_t pb = 0, pe = 0;
  if (!(d->auto_pad && strcmp(d->auto_pad, "VALID") == 0) && d->has_pads) {
    pb = d->pads[i];
    pe = d->pads[d->nd + i];
  }
  int64_t span = in + pb + pe - ek;
  return span < 0 ? 0 : span / s + 1;
}

int hh_residual_block_model(hh_ort *h, int channels, int64_t spatial, hh_model **out, size_t *weight_bytes) {
  const int64_t C = channels, S = spatial < 0 ? -1 : spatial;
  size_t bytes = 0;
  hh_model *m = hh_model_new(h);
  int64_t xd[4] = {-1, C, S, S}, wd[4] = {C, C, 3, 3}, bd[1] = {C}, pd[4] = {-1, C, 1, 1};
  int64_t ks[2] = {3, 3}, pads[4] = {1, 1, 1, 1};
  hh_attr at[2] = {hh_attr_ints("kernel_shape", ks, 2), hh_attr_ints("pads", pads, 4)};
  double sc = sqrt(3.0 / (double)(C * 9));
  int rc = !m || hh_model_input(m, "X", HD_DT_F32, 4, xd) ||
           hh_model_random_initializer(m, "W1", 4, wd, 11, sc, &bytes) ||
           hh_model_random_initializer(m, "B1", 1, bd, 12, 0.1, &bytes) ||
           hh_model_random_initializer(m, "W2", 4, wd, 13, sc, &bytes) ||
           hh_model_random_initializer(m, "B2", 1, bd, 14, 0.1, &bytes);
  const char *c1[3] = {"X", "W1", "B1"}, *c2[3] = {"r1", "W2", "B2"}, *add[2] = {"c2", "X"};
  const char *o_c1[1] = {"c1"}, *o_r1[1] = {"r1"}, *o_c2[1] = {"c2"}, *o_s[1] = {"s"}, *o_y[1] = {"Y"},
             *o_p[1] = {"P"}, *i_c1[1] = {"c1"}, *i_s[1] = {"s"}, *i_y[1] = {"Y"};
  rc = rc || hh_model_node(m, "Conv", "", "conv1", c1, 3, o_c1, 1, at, 2) ||
       hh_model_node(m, "Relu", "", "relu1", i_c1, 1, o_r1, 1, NULL, 0) ||
       hh_model_node(m, "Conv", "", "conv2", c2, 3, o_c2, 1, at, 2) ||
       hh_model_node(m, "Add", "", "residual", add, 2, o_s, 1, NULL, 0) ||
       hh_model_node(m, "Relu", "", "relu2", i_s, 1, o_y, 1, NULL, 0) ||
       hh_model_node(m, "GlobalAveragePool", "", "pool", i_y, 1, o_p, 1, NULL, 0) ||
       hh_model_output(m, "Y", HD_DT_F32, 4, xd) || hh_model_output(m, "P", HD_DT_F32, 4, pd) ||
       hh_model_finish(m, 17);
  if (rc) {
    hh_model_free(m);
    return 1;
  }
  *out = m;
  if (weight_bytes) *weight_bytes = bytes;
  return 0;
}

int hh_conv_model(hh_ort *h, const hh_conv_desc *d, hh_model **out) {
  int dt = d->dtype ? d->dtype : HD_DT_F32;
  int nd = d->nd;
  int64_t group = d->group ? d->group : 1;
  int64_t xd[5], wd[5], yd[5];
  hh_tensor w = {0}, b = {0};
  hh_attr attrs[8];
  size_t na = 0;
  *out = NULL;
  if (nd < 1 || nd > 3) return hh_fail(h, "conv: nd=%d (1..3)", nd);
  if (group <= 0 || d->c % group || d->m % group)
    return hh_fail(h, "conv: channels %lld/%lld not divisible by group %lld", (long long)d->c, (long long)d->m,
                   (long long)group);
  xd[0] = d->dynamic_batch ? -1 : d->n;
  xd[1] = d->c;
  wd[0] = d->m;
  wd[1] = d->c / group;
  yd[0] = xd[0];
  yd[1] = d->m;
  for (int i = 0; i < nd; i++) {
    xd[2 + i] = d->dynamic_spatial ? -1 : d->in[i];
    wd[2 + i] = d->k[i];
    yd[2 + i] = d->dynamic_spatial ? -1 : hh_conv_out_dim(d, i, d->in[i]);
  }
  hh_model *m = hh_model_new(h);
  if (!m) return 1;
  if (hh_model_input(m, "X", dt, nd + 2, xd)) goto fail;
  if (hh_model_output(m, "Y", dt, nd + 2, yd)) goto fail;
  if (hh_tensor_alloc(&w, dt, nd + 2, wd)) {
    hh_fail(h, "conv: cannot allocate W of type %d", dt);
    goto fail;
  }
  hh_tensor_fill_random(&w, d->seed * 2654435761u + 1);
  if (d->f16_values) hh_tensor_round_f16(&w);
  if (hh_model_initializer(m, "W", &w)) goto fail;
  if (d->bias) {
    int64_t bd[1] = {d->m};
    if (hh_tensor_alloc(&b, dt, 1, bd)) {
      hh_fail(h, "conv: cannot allocate B");
      goto fail;
    }
    hh_tensor_fill_random(&b, d->seed * 2654435761u + 2);
    if (d->f16_values) hh_tensor_round_f16(&b);
    if (hh_model_initializer(m, "B", &b)) goto fail;
  }
  if (!d->no_kernel_shape) attrs[na++] = hh_attr_ints("kernel_shape", d->k, (size_t)nd);
  if (d->strides[0]) attrs[na++] = hh_attr_ints("strides", d->strides, (size_t)nd);
  if (d->dilations[0]) attrs[na++] = hh_attr_ints("dilations", d->dilations, (size_t)nd);
  if (d->has_pads) attrs[na++] = hh_attr_ints("pads", d->pads, (size_t)(2 * nd));
  if (d->auto_pad) attrs[na++] = hh_attr_string("auto_pad", d->auto_pad);
  if (d->group) attrs[na++] = hh_attr_int("group", d->group);
  {
    const char *ins[3] = {"X", "W", "B"};
    const char *outs[1] = {"Y"};
    if (hh_model_node(m, "Conv", "", "conv0", ins, d->bias ? 3 : 2, outs, 1, attrs, na)) goto fail;
  }
  if (hh_model_finish(m, d->opset)) goto fail;
  hh_tensor_free(&w);
  hh_tensor_free(&b);
  *out = m;
  return 0;
fail:
  hh_tensor_free(&w);
  hh_tensor_free(&b);
  hh_model_free(m);
  return 1;
}
