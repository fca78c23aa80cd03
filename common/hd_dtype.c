#include "common/hd_dtype.h"

#include <string.h>

size_t hd_dtype_size(int dtype) {
  switch (dtype) {
    case HD_DT_F32: case HD_DT_I32: case HD_DT_U32: return 4;
    case HD_DT_U8: case HD_DT_I8: case HD_DT_BOOL: return 1;
    case HD_DT_U16: case HD_DT_I16: case HD_DT_F16: case HD_DT_BF16: return 2;
    case HD_DT_I64: case HD_DT_U64: case HD_DT_F64: return 8;
    default: return 0;
  }
}

const char *hd_dtype_name(int dtype) {
  switch (dtype) {
    case HD_DT_F32: return "float32";
    case HD_DT_U8: return "uint8";
    case HD_DT_I8: return "int8";
    case HD_DT_U16: return "uint16";
    case HD_DT_I16: return "int16";
    case HD_DT_I32: return "int32";
    case HD_DT_I64: return "int64";
    case HD_DT_STRING: return "string";
    case HD_DT_BOOL: return "bool";
    case HD_DT_F16: return "float16";
    case HD_DT_F64: return "float64";
    case HD_DT_U32: return "uint32";
    case HD_DT_U64: return "uint64";
    case HD_DT_BF16: return "bfloat16";
    default: return "unsupported";
  }
}

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float hd_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (man << 13)); /* inf / nan */
  if (exp == 0) {
    if (man == 0) return bits_f32(sign);
    /* subnormal: value = man * 2^-24 */
    float v = (float)man * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t hd_f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);          /* nan */
  if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);         /* overflow to inf */
  if (abs < 0x38800000u) {                                             /* subnormal or zero */
    float a = bits_f32(abs);
    /* scale so that one f16 subnormal ulp (2^-24) becomes 1, round to even */
    float scaled = a * 16777216.0f;
    uint32_t m = (uint32_t)scaled;
    float rem = scaled - (float)m;
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) m++;
    return (uint16_t)(sign | m);
  }
  uint32_t mant_round = abs + 0x0fffu + ((abs >> 13) & 1u); /* round to nearest even */
  return (uint16_t)(sign | ((mant_round - 0x38000000u) >> 13));
}

float hd_bf16_to_f32(uint16_t b) { return bits_f32((uint32_t)b << 16); }

uint16_t hd_f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
