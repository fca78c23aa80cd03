/* cf_tensor: a host tensor read from an ONNX TensorProto (.pb) file.
 *
 * Data is held the way ONNX Runtime lays a tensor out in host memory:
 * little-endian, row-major, 4-bit types two to a byte (low nibble first),
 * 2-bit types four to a byte. Element types are the TensorProto.DataType
 * numbers, which are also ONNX Runtime's ONNXTensorElementDataType values. */
#ifndef CF_TENSOR_H
#define CF_TENSOR_H

#include <stddef.h>
#include <stdint.h>

/* TensorProto.DataType values (onnx.proto). Newer values than the proto
 * Debian ships (1.12) are listed here by number. */
enum {
  CF_UNDEFINED = 0, CF_FLOAT = 1, CF_UINT8 = 2, CF_INT8 = 3, CF_UINT16 = 4,
  CF_INT16 = 5, CF_INT32 = 6, CF_INT64 = 7, CF_STRING = 8, CF_BOOL = 9,
  CF_FLOAT16 = 10, CF_DOUBLE = 11, CF_UINT32 = 12, CF_UINT64 = 13,
  CF_COMPLEX64 = 14, CF_COMPLEX128 = 15, CF_BFLOAT16 = 16,
  CF_FLOAT8E4M3FN = 17, CF_FLOAT8E4M3FNUZ = 18, CF_FLOAT8E5M2 = 19,
  CF_FLOAT8E5M2FNUZ = 20, CF_UINT4 = 21, CF_INT4 = 22, CF_FLOAT4E2M1 = 23,
  CF_FLOAT8E8M0 = 24, CF_UINT2 = 25, CF_INT2 = 26
};

typedef struct cf_tensor {
  int32_t dtype;     /* TensorProto.DataType */
  size_t rank;
  int64_t *dims;     /* rank entries (NULL when rank == 0) */
  size_t count;      /* number of elements */
  size_t nbytes;     /* bytes of data */
  void *data;        /* nbytes bytes (non-NULL even when nbytes == 0) */
  char *name;        /* TensorProto.name, may be "" */
} cf_tensor;

/* Name of a data type ("float", "int64", ...) or "type<N>" for unknown ones
 * (into a static buffer). */
const char *cf_dtype_name(int32_t dtype);

/* Bits per element, 0 for types the runner does not handle (string,
 * complex, undefined, unknown). */
unsigned cf_dtype_bits(int32_t dtype);

/* Bytes needed for count elements of dtype (sub-byte types rounded up). */
size_t cf_dtype_nbytes(int32_t dtype, size_t count);

/* Reads one TensorProto file. Returns 0 on success; otherwise non-zero and a
 * message in err: 1 = the file cannot be read or parsed, 2 = a tensor the
 * runner does not support (string, complex, external data, segments). */
int cf_tensor_read(const char *path, cf_tensor *t, char *err, size_t errlen);

/* Allocates an empty tensor of the given type and shape (data zeroed). */
int cf_tensor_alloc(cf_tensor *t, int32_t dtype, size_t rank, const int64_t *dims);

void cf_tensor_free(cf_tensor *t);

/* Element i as double, for the float-like and integer types (bool as 0/1,
 * sub-byte and 8-bit float types decoded). */
double cf_tensor_get_f64(const cf_tensor *t, size_t i);

/* Element i as exact integer, for the integer and bool types. */
int64_t cf_tensor_get_i64(const cf_tensor *t, size_t i);
uint64_t cf_tensor_get_u64(const cf_tensor *t, size_t i);

#endif
