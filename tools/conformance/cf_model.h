/* cf_model: what the runner needs to know about a case's model.onnx, read
 * with the protobuf-c ModelProto: the op types of its top-level nodes and
 * the kind of each graph input and output. */
#ifndef CF_MODEL_H
#define CF_MODEL_H

#include <stddef.h>

enum cf_value_kind { CF_KIND_TENSOR, CF_KIND_SEQUENCE, CF_KIND_OPTIONAL, CF_KIND_OTHER };

typedef struct cf_model {
  size_t n_nodes;          /* top-level nodes */
  size_t n_ops;
  char **ops;              /* distinct op types, "domain:Op" outside ai.onnx, sorted */
  size_t n_inputs;         /* graph inputs that are not initializers */
  int *input_kinds;        /* enum cf_value_kind */
  int *input_dtypes;       /* elem type for tensors, 0 otherwise */
  size_t n_outputs;
  int *output_kinds;
  int *output_dtypes;
} cf_model;

/* The whole file at path (malloc'ed, one spare byte; *len its size), or
 * NULL when it cannot be read. */
unsigned char *cf_slurp(const char *path, size_t *len);

/* Reads path (model.onnx). Returns 0, or non-zero with a message in err. */
int cf_model_read(const char *path, cf_model *m, char *err, size_t errlen);
void cf_model_free(cf_model *m);

#endif
