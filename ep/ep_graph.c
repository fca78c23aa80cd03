#include "ep/ep_graph.h"

#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

/* Constants up to this size are read at GetCapability time. */
#define EP_SMALL_CONST_BYTES 4096

/* ---- op_attrs over an OrtNode ---- */

static hd_status *find_attr(const OrtNode *node, const char *name, OrtOpAttrType want,
                            const OrtOpAttr **attr) {
  *attr = NULL;
  /* ORT answers an error for a name the op's schema at this opset does not
   * have (dilations on AveragePool-11): for us that is an absent attribute. */
  OrtStatus *os = ep_api->Node_GetAttributeByName(node, name, attr);
  if (os) {
    ep_api->ReleaseStatus(os);
    *attr = NULL;
  }
  if (!*attr) return NULL;
  OrtOpAttrType type;
  EP_ORT_TRY(ep_api->OpAttr_GetType(*attr, &type), "reading an attribute type");
  if (type != want) return hd_error(HD_ERR_INVALID_ARG, "attribute '%s' has the wrong type", name);
  return NULL;
}

static hd_status *read_scalar(void *ctx, const char *name, OrtOpAttrType type, void *v, size_t size,
                              int *found) {
  const OrtOpAttr *attr;
  HD_TRY(find_attr(ctx, name, type, &attr));
  *found = attr != NULL;
  if (!attr) return NULL;
  size_t got = 0;
  EP_ORT_TRY(ep_api->ReadOpAttr(attr, type, v, size, &got), name);
  return NULL;
}

static hd_status *attr_int(void *ctx, const char *name, int64_t *v, int *found) {
  return read_scalar(ctx, name, ORT_OP_ATTR_INT, v, sizeof *v, found);
}

static hd_status *attr_float(void *ctx, const char *name, float *v, int *found) {
  return read_scalar(ctx, name, ORT_OP_ATTR_FLOAT, v, sizeof *v, found);
}

/* Reads an array attribute of elem-byte values into v[max]; *n = its length. */
static hd_status *read_array(void *ctx, const char *name, OrtOpAttrType type, void *v, size_t elem,
                             int max, int *n, int *found) {
  const OrtOpAttr *attr;
  HD_TRY(find_attr(ctx, name, type, &attr));
  *found = attr != NULL;
  *n = 0;
  if (!attr) return NULL;
  size_t need = 0;
  OrtStatus *st = ep_api->ReadOpAttr(attr, type, NULL, 0, &need);
  if (st) ep_api->ReleaseStatus(st); /* expected: asks for the size */
  *n = (int)(need / elem);
  if (*n > max || *n == 0) return NULL;
  size_t got = 0;
  EP_ORT_TRY(ep_api->ReadOpAttr(attr, type, v, elem * (size_t)max, &got), name);
  *n = (int)(got / elem);
  return NULL;
}

static hd_status *attr_ints(void *ctx, const char *name, int64_t *v, int max, int *n, int *found) {
  return read_array(ctx, name, ORT_OP_ATTR_INTS, v, sizeof *v, max, n, found);
}

static hd_status *attr_floats(void *ctx, const char *name, float *v, int max, int *n, int *found) {
  return read_array(ctx, name, ORT_OP_ATTR_FLOATS, v, sizeof *v, max, n, found);
}

static hd_status *attr_string(void *ctx, const char *name, char *buf, size_t cap, int *found) {
  const OrtOpAttr *attr;
  HD_TRY(find_attr(ctx, name, ORT_OP_ATTR_STRING, &attr));
  *found = attr != NULL;
  if (!attr) return NULL;
  size_t need = 0;
  OrtStatus *st = ep_api->ReadOpAttr(attr, ORT_OP_ATTR_STRING, NULL, 0, &need);
  if (st) ep_api->ReleaseStatus(st);
  if (need >= cap) return hd_error(HD_ERR_NOT_SUPPORTED, "attribute '%s' is too long", name);
  size_t got = 0;
  EP_ORT_TRY(ep_api->ReadOpAttr(attr, ORT_OP_ATTR_STRING, buf, cap - 1, &got), name);
  buf[got < cap ? got : cap - 1] = '\0';
  return NULL;
}

static hd_status *attr_tensor(void *ctx, const char *name, int *dtype, int64_t *numel, void *buf, size_t cap,
                              int *found) {
  const OrtOpAttr *attr;
  HD_TRY(find_attr(ctx, name, ORT_OP_ATTR_TENSOR, &attr));
  *found = attr != NULL;
  if (!attr) return NULL;
  OrtValue *v = NULL;
  EP_ORT_TRY(ep_api->OpAttr_GetTensorAttributeAsOrtValue(attr, &v), name);
  OrtTensorTypeAndShapeInfo *info = NULL;
  ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  size_t count = 0, bytes = 0;
  const void *data = NULL;
  hd_status *st = ep_from_ort(ep_api->GetTensorTypeAndShape(v, &info), name);
  if (!st) st = ep_from_ort(ep_api->GetTensorElementType(info, &et), name);
  if (!st) st = ep_from_ort(ep_api->GetTensorShapeElementCount(info, &count), name);
  if (!st) st = ep_from_ort(ep_api->GetTensorSizeInBytes(v, &bytes), name);
  if (!st && bytes > cap) st = hd_error(HD_ERR_NOT_SUPPORTED, "attribute '%s' holds %zu bytes", name, bytes);
  if (!st && bytes) st = ep_from_ort(ep_api->GetTensorData(v, &data), name);
  if (!st && bytes) memcpy(buf, data, bytes);
  *dtype = (int)et;
  *numel = (int64_t)count;
  if (info) ep_api->ReleaseTensorTypeAndShapeInfo(info);
  ep_api->ReleaseValue(v);
  return st;
}

/* ---- values ---- */

/* Finds or adds the value a value info names, with its type and shape. */
static hd_status *import_value(ep_graph *eg, const OrtValueInfo *vi, int with_data, int *idx) {
  *idx = IR_NONE;
  if (!vi) return NULL; /* absent optional input */
  const char *name = NULL;
  EP_ORT_TRY(ep_api->GetValueInfoName(vi, &name), "reading a value name");
  if (!name || !name[0]) return NULL;
  int found = ir_graph_find_value(eg->g, name);
  if (found != IR_NONE) {
    *idx = found;
    return NULL;
  }
  int dtype = HD_DT_UNDEFINED, rank = -1;
  int64_t dims[IR_MAX_RANK] = {0};
  const char *syms[IR_MAX_RANK] = {0};
  const OrtTypeInfo *ti = NULL;
  EP_ORT_TRY(ep_api->GetValueInfoTypeInfo(vi, &ti), name);
  const OrtTensorTypeAndShapeInfo *tsi = NULL;
  OrtStatus *cast = ti ? ep_api->CastTypeInfoToTensorInfo(ti, &tsi) : NULL;
  if (cast) ep_api->ReleaseStatus(cast); /* not a tensor: leave it untyped */
  if (tsi) {
    ONNXTensorElementDataType et;
    EP_ORT_TRY(ep_api->GetTensorElementType(tsi, &et), name);
    dtype = (int)et;
    size_t r = 0;
    EP_ORT_TRY(ep_api->GetDimensionsCount(tsi, &r), name);
    /* No shape at all reads as 0 dims, like a scalar: tell them apart. */
    if (!ep_api->TensorTypeAndShape_HasShape(tsi)) r = IR_MAX_RANK + 1;
    if (r <= IR_MAX_RANK) {
      EP_ORT_TRY(ep_api->GetDimensions(tsi, dims, r), name);
      EP_ORT_TRY(ep_api->GetSymbolicDimensions(tsi, syms, r), name);
      rank = (int)r;
      for (int i = 0; i < rank; i++)
        if (dims[i] < 0) dims[i] = IR_DIM_DYNAMIC;
    }
  }
  HD_TRY(ir_graph_add_value(eg->g, name, dtype, rank, dims, idx));
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0 && syms[i] && syms[i][0]) eg->g->values[*idx].sym[i] = ir_sym_hash(syms[i]);
  bool is_const = false;
  EP_ORT_TRY(ep_api->ValueInfo_IsConstantInitializer(vi, &is_const), name);
  if (!is_const) return NULL;
  eg->g->values[*idx].is_const = 1;
  const OrtValue *init = NULL;
  EP_ORT_TRY(ep_api->ValueInfo_GetInitializerValue(vi, &init), name);
  if (!init) return hd_error(HD_ERR_INTERNAL, "initializer '%s' has no value", name);
  const void *data = NULL;
  size_t bytes = 0;
  EP_ORT_TRY(ep_api->GetTensorSizeInBytes(init, &bytes), name);
  /* GetCapability reads small constants too (shapes, axes, Clip bounds,
   * flags), so ops decide on their values before claiming; weights wait
   * for Compile. */
  if (!with_data && bytes > EP_SMALL_CONST_BYTES) return NULL;
  EP_ORT_TRY(ep_api->GetTensorData(init, &data), name);
  return ir_value_set_data(eg->g, *idx, data, bytes);
}

/* Imports a node's inputs or outputs (get_n/get_all pick which). */
static hd_status *import_values(ep_graph *eg, const OrtNode *node, int outputs, int with_data,
                                int **idx, int *n) {
  size_t count = 0;
  EP_ORT_TRY(outputs ? ep_api->Node_GetNumOutputs(node, &count) : ep_api->Node_GetNumInputs(node, &count),
             "counting node values");
  const OrtValueInfo **vis = calloc(count ? count : 1, sizeof *vis);
  *idx = calloc(count ? count : 1, sizeof(int));
  *n = (int)count;
  if (!vis || !*idx) {
    free(vis);
    return hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory importing a node");
  }
  hd_status *st = ep_from_ort(outputs ? ep_api->Node_GetOutputs(node, vis, count)
                                      : ep_api->Node_GetInputs(node, vis, count),
                              "reading node values");
  for (size_t i = 0; i < count && !st; i++) st = import_value(eg, vis[i], with_data, &(*idx)[i]);
  free(vis);
  return st;
}

static hd_status *import_node(ep_graph *eg, const OrtNode *node, int with_data) {
  const char *name = NULL, *type = NULL, *domain = NULL;
  int since = 0;
  EP_ORT_TRY(ep_api->Node_GetName(node, &name), "reading a node name");
  EP_ORT_TRY(ep_api->Node_GetOperatorType(node, &type), "reading an op type");
  EP_ORT_TRY(ep_api->Node_GetDomain(node, &domain), "reading an op domain");
  EP_ORT_TRY(ep_api->Node_GetSinceVersion(node, &since), "reading an op version");
  int *in = NULL, *out = NULL, nin = 0, nout = 0;
  hd_status *st = import_values(eg, node, 0, with_data, &in, &nin);
  if (!st) st = import_values(eg, node, 1, with_data, &out, &nout);
  const op_def *def = st ? NULL : op_find(domain, type, since);
  int idx = 0;
  if (!st) st = ir_graph_add_node(eg->g, def ? def->kind : OP_UNKNOWN, name, type, since, in, nin, out, nout, &idx);
  free(in);
  free(out);
  if (st) return st;
  eg->nodes[idx] = node;
  ir_node *n = &eg->g->nodes[idx];
  if (!def) {
    const char *dom = domain && domain[0] ? domain : "ai.onnx";
    int lo = 0, hi = 0;
    if (op_opsets(domain, type, &lo, &hi))
      eg->why[idx] = hd_error(HD_ERR_NOT_SUPPORTED, "%s of opset %d: the EP runs %s %s at opsets %d to %d", type, since,
                              dom, type, lo, hi);
    else
      eg->why[idx] = hd_error(HD_ERR_NOT_SUPPORTED,
                              "the EP has no %s op of domain %s at any opset (this node: opset %d)", type, dom, since);
    return NULL;
  }
  op_attrs attrs = {(void *)node, attr_int, attr_float, attr_ints, attr_floats, attr_string, attr_tensor};
  hd_status *why = def->parse(eg->g, n, &attrs);
  if (!why) why = def->check(eg->g, n);
  eg->why[idx] = why;
  return NULL;
}

hd_status *ep_graph_import(const OrtGraph *graph, int with_data, ep_graph *eg) {
  memset(eg, 0, sizeof *eg);
  size_t count = 0;
  EP_ORT_TRY(ep_api->Graph_GetNumNodes(graph, &count), "counting graph nodes");
  HD_TRY(ir_graph_create(&eg->g));
  const OrtNode **nodes = calloc(count ? count : 1, sizeof *nodes);
  eg->nodes = calloc(count ? count : 1, sizeof *eg->nodes);
  eg->why = calloc(count ? count : 1, sizeof *eg->why);
  hd_status *st = (!nodes || !eg->nodes || !eg->why)
                      ? hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory importing a graph")
                      : ep_from_ort(ep_api->Graph_GetNodes(graph, nodes, count), "listing graph nodes");
  for (size_t i = 0; i < count && !st; i++) st = import_node(eg, nodes[i], with_data);
  free(nodes);
  if (eg->g) eg->nimported = eg->g->nnodes;
  /* GetCapability: nodes with static shapes are inferred now, so none is
   * claimed that would fail or differ from ORT's shapes at run time. */
  if (!st && !with_data) {
    ir_tensor *t = calloc((size_t)eg->g->nvalues + 1, sizeof *t);
    if (!t) st = hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory importing a graph");
    for (int i = 0; t && i < eg->g->nnodes; i++)
      if (!eg->why[i]) eg->why[i] = op_check_static(eg->g, &eg->g->nodes[i], t);
    free(t);
  }
  if (st) ep_graph_free(eg);
  return st;
}

static hd_status *names_to_values(ir_graph *g, const char *const *names, int n, int *out) {
  for (int i = 0; i < n; i++) {
    out[i] = ir_graph_find_value(g, names[i]);
    if (out[i] == IR_NONE) return hd_error(HD_ERR_INTERNAL, "fused graph has no value '%s'", names[i]);
  }
  return NULL;
}

hd_status *ep_graph_set_io(ep_graph *eg, const char *const *inputs, int ninputs,
                           const char *const *outputs, int noutputs) {
  int *in = calloc((size_t)ninputs + 1, sizeof(int)), *out = calloc((size_t)noutputs + 1, sizeof(int));
  hd_status *st = (!in || !out) ? hd_error(HD_ERR_OUT_OF_MEMORY, "out of host memory") : NULL;
  if (!st) st = names_to_values(eg->g, inputs, ninputs, in);
  if (!st) st = names_to_values(eg->g, outputs, noutputs, out);
  if (!st) st = ir_graph_set_io(eg->g, in, ninputs, out, noutputs);
  if (!st) st = ir_graph_finalize(eg->g);
  free(in);
  free(out);
  return st;
}

void ep_graph_free(ep_graph *eg) {
  if (!eg) return;
  if (eg->g && eg->why)
    for (int i = 0; i < eg->nimported && i < eg->g->nnodes; i++) hd_status_free(eg->why[i]);
  ir_graph_free(eg->g);
  free(eg->nodes);
  free(eg->why);
  memset(eg, 0, sizeof *eg);
}
