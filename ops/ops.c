#include "ops/ops.h"

#include <string.h>

#include "ops/op_defs.h"

static const op_def *const op_table[OP_COUNT] = {
#define OP_DEF_(kind) [OP_##kind] = &op_def_##kind,
    OP_LIST(OP_DEF_)
#undef OP_DEF_
};

const op_def *op_find(const char *domain, const char *op_type, int since_version) {
  if (domain && domain[0] && strcmp(domain, "ai.onnx") != 0) return NULL;
  for (int k = 1; k < OP_COUNT; k++) {
    const op_def *d = op_table[k];
    if (strcmp(d->onnx_type, op_type) == 0 && since_version >= d->min_opset &&
        since_version <= d->max_opset)
      return d;
  }
  return NULL;
}

const op_def *op_get(op_kind kind) {
  return (kind > OP_UNKNOWN && kind < OP_COUNT) ? op_table[kind] : NULL;
}

const char *op_name(op_kind kind) {
  const op_def *d = op_get(kind);
  return d ? d->onnx_type : "unknown";
}

hd_status *op_attr_int(const op_attrs *a, const char *name, int64_t dflt, int64_t *v) {
  int found = 0;
  HD_TRY(a->get_int(a->ctx, name, v, &found));
  if (!found) *v = dflt;
  return NULL;
}

hd_status *op_attr_float(const op_attrs *a, const char *name, float dflt, float *v) {
  int found = 0;
  HD_TRY(a->get_float(a->ctx, name, v, &found));
  if (!found) *v = dflt;
  return NULL;
}
