/* Element types, numbered as ONNX's TensorProto.DataType (a public standard,
 * the same numbers ORT's ONNXTensorElementDataType uses), plus fp16/bf16
 * conversions for host code. */
#ifndef HD_DTYPE_H
#define HD_DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum hd_dtype {
  HD_DT_UNDEFINED = 0,
  HD_DT_F32 = 1,
  HD_DT_U8 = 2,
  HD_DT_I8 = 3,
  HD_DT_U16 = 4,
  HD_DT_I16 = 5,
  HD_DT_I32 = 6,
  HD_DT_I64 = 7,
  HD_DT_STRING = 8,
  HD_DT_BOOL = 9,
  HD_DT_F16 = 10,
  HD_DT_F64 = 11,
  HD_DT_U32 = 12,
  HD_DT_U64 = 13,
  HD_DT_BF16 = 16,
} hd_dtype;

/* Bytes per element; 0 for types we never store (string, undefined, ...). */
size_t hd_dtype_size(int dtype);
const char *hd_dtype_name(int dtype);

float hd_f16_to_f32(uint16_t h);
uint16_t hd_f32_to_f16(float f); /* round to nearest even */
float hd_bf16_to_f32(uint16_t b);
uint16_t hd_f32_to_bf16(float f); /* round to nearest even */

#endif
