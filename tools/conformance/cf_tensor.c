/* cf_tensor: TensorProto (.pb) file -> host tensor, with protobuf-c code
 * generated at build time from Debian's onnx.proto (see CMakeLists.txt). */
#include "tools/conformance/cf_tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hd_dtype.h"
#include "onnx/onnx.pb-c.h"

const char *cf_dtype_name(int32_t dtype) {
  static const char *names[] = {
    "undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64",
    "string", "bool", "float16", "double", "uint32", "uint64", "complex64",
    "complex128", "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
    "float8e5m2fnuz", "uint4", "int4", "float4e2m1", "float8e8m0", "uint2", "int2"};
  static _Thread_local char buf[24];
  if (dtype >= 0 && (size_t)dtype < sizeof names / sizeof names[0]) return names[dtype];
  snprintf(buf, sizeof buf, "type%d", (int)dtype);
  return buf;
}

unsigned cf_dtype_bits(int32_t dtype) {
  switch (dtype) {
  case CF_FLOAT: case CF_INT32: case CF_UINT32: return 32;
  case CF_DOUBLE: case CF_INT64: case CF_UINT64: return 64;
  case CF_UINT16: case CF_INT16: case CF_FLOAT16: case CF_BFLOAT16: return 16;
  case CF_UINT8: case CF_INT8: case CF_BOOL: case CF_FLOAT8E4M3FN:
  case CF_FLOAT8E4M3FNUZ: case CF_FLOAT8E5M2: case CF_FLOAT8E5M2FNUZ:
  case CF_FLOAT8E8M0: return 8;
  case CF_UINT4: case CF_INT4: case CF_FLOAT4E2M1: return 4;
  case CF_UINT2: case CF_INT2: return 2;
  default: return 0; /* string, complex, undefined, unknown */
  }
}

size_t cf_dtype_nbytes(int32_t dtype, size_t count) {
  return (count * cf_dtype_bits(dtype) + 7) / 8;
}

int cf_tensor_alloc(cf_tensor *t, int32_t dtype, size_t rank, const int64_t *dims) {
  memset(t, 0, sizeof *t);
  t->dtype = dtype;
  t->rank = rank;
  t->count = 1;
  if (rank) {
    t->dims = malloc(rank * sizeof *t->dims);
    if (!t->dims) return -1;
    for (size_t i = 0; i < rank; ++i) {
      t->dims[i] = dims[i];
      t->count *= dims[i] > 0 ? (size_t)dims[i] : 0;
    }
  }
  t->nbytes = cf_dtype_nbytes(dtype, t->count);
  t->data = calloc(t->nbytes ? t->nbytes : 1, 1);
  t->name = calloc(1, 1);
  if (!t->data || !t->name) { cf_tensor_free(t); return -1; }
  return 0;
}

void cf_tensor_free(cf_tensor *t) {
  free(t->dims);
  free(t->data);
  free(t->name);
  memset(t, 0, sizeof *t);
}

static unsigned char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  unsigned char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    unsigned char *nb = realloc(buf, cap * 2);
    if (!nb) { free(buf); buf = NULL; break; }
    buf = nb;
    cap *= 2;
  }
  if (buf && ferror(f)) { free(buf); buf = NULL; }
  fclose(f);
  *len = n;
  return buf;
}

/* Stores the low `bits` bits of v as element i of a packed sub-byte or
 * byte-multiple buffer. */
static void put_elem(cf_tensor *t, size_t i, uint64_t v) {
  unsigned bits = cf_dtype_bits(t->dtype);
  unsigned char *d = t->data;
  if (bits >= 8) {
    size_t bytes = bits / 8;
    for (size_t k = 0; k < bytes; ++k) d[i * bytes + k] = (unsigned char)(v >> (8 * k));
  } else {
    size_t per = 8 / bits, byte = i / per, shift = (i % per) * bits;
    unsigned mask = (1u << bits) - 1u;
    d[byte] = (unsigned char)((d[byte] & ~(mask << shift)) | ((v & mask) << shift));
  }
}

static int fill_typed(cf_tensor *t, const Onnx__TensorProto *p, char *err, size_t errlen) {
  size_t n = t->count;
  size_t have;
  /* Which repeated field holds which type: the comments on the fields of
   * TensorProto in onnx.proto. int32_data holds int8/16, uint8/16, bool,
   * and the 16- and 8-bit float bit patterns one per entry; for the 4- and
   * 2-bit types each entry is one byte of the packed data. */
  switch (t->dtype) {
  case CF_FLOAT:
    have = p->n_float_data;
    if (have == n && n) memcpy(t->data, p->float_data, n * sizeof(float));
    break;
  case CF_DOUBLE:
    have = p->n_double_data;
    if (have == n && n) memcpy(t->data, p->double_data, n * sizeof(double));
    break;
  case CF_INT64:
    have = p->n_int64_data;
    if (have == n && n) memcpy(t->data, p->int64_data, n * sizeof(int64_t));
    break;
  case CF_UINT32: case CF_UINT64:
    have = p->n_uint64_data;
    if (have == n) for (size_t i = 0; i < n; ++i) put_elem(t, i, p->uint64_data[i]);
    break;
  case CF_UINT4: case CF_INT4: case CF_FLOAT4E2M1: case CF_UINT2: case CF_INT2:
    have = p->n_int32_data;
    n = t->nbytes;
    if (have == n)
      for (size_t i = 0; i < n; ++i) ((unsigned char *)t->data)[i] = (unsigned char)p->int32_data[i];
    break;
  default: /* int32 and everything stored in int32_data */
    have = p->n_int32_data;
    if (have == n)
      for (size_t i = 0; i < n; ++i) put_elem(t, i, (uint64_t)(uint32_t)p->int32_data[i]);
    break;
  }
  if (have != n) {
    snprintf(err, errlen, "%s tensor with %zu elements has %zu typed values",
             cf_dtype_name(t->dtype), t->count, have);
    return 1;
  }
  return 0;
}

int cf_tensor_read(const char *path, cf_tensor *t, char *err, size_t errlen) {
  memset(t, 0, sizeof *t);
  size_t len = 0;
  unsigned char *buf = read_file(path, &len);
  if (!buf) { snprintf(err, errlen, "cannot read %s", path); return 1; }
  Onnx__TensorProto *p = onnx__tensor_proto__unpack(NULL, len, buf);
  free(buf);
  if (!p) { snprintf(err, errlen, "%s is not a TensorProto", path); return 1; }

  int rc = 0;
  int32_t dtype = p->has_data_type ? p->data_type : CF_UNDEFINED;
  if (p->segment || (p->has_data_location &&
                     p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)) {
    snprintf(err, errlen, "%s: segmented or external tensor data", path);
    rc = 2;
  } else if (cf_dtype_bits(dtype) == 0) {
    snprintf(err, errlen, "%s: %s tensor", path, cf_dtype_name(dtype));
    rc = dtype == CF_UNDEFINED ? 1 : 2;
  } else {
    for (size_t i = 0; i < p->n_dims && !rc; ++i)
      if (p->dims[i] < 0) { snprintf(err, errlen, "%s: negative dim", path); rc = 1; }
    if (!rc && cf_tensor_alloc(t, dtype, p->n_dims, p->dims)) {
      snprintf(err, errlen, "out of memory");
      rc = 1;
    }
    if (!rc && p->name) {
      free(t->name);
      t->name = strdup(p->name);
    }
    if (!rc && p->has_raw_data) {
      if (p->raw_data.len != t->nbytes) {
        snprintf(err, errlen, "%s: raw_data has %zu bytes, %s%s needs %zu", path,
                 p->raw_data.len, cf_dtype_name(dtype), t->rank ? " tensor" : " scalar",
                 t->nbytes);
        rc = 1;
      } else if (t->nbytes) {
        memcpy(t->data, p->raw_data.data, t->nbytes);
      }
    } else if (!rc) {
      rc = fill_typed(t, p, err, errlen);
    }
    if (rc) cf_tensor_free(t);
  }
  onnx__tensor_proto__free_unpacked(p, NULL);
  return rc;
}

/* ---- element access -------------------------------------------------- */

/* Small float formats: sign, ebits exponent bits, mbits mantissa bits. */
static double small_float(unsigned v, unsigned ebits, unsigned mbits, int bias) {
  unsigned s = (v >> (ebits + mbits)) & 1u;
  unsigned e = (v >> mbits) & ((1u << ebits) - 1u);
  unsigned m = v & ((1u << mbits) - 1u);
  double r = e == 0 ? ldexp((double)m, 1 - bias - (int)mbits)
                    : ldexp((double)(m | (1u << mbits)), (int)e - bias - (int)mbits);
  return s ? -r : r;
}

static double decode_f8(int32_t dtype, unsigned v) {
  switch (dtype) {
  case CF_FLOAT8E4M3FN:
    if ((v & 0x7f) == 0x7f) return NAN;
    return small_float(v, 4, 3, 7);
  case CF_FLOAT8E4M3FNUZ:
    if (v == 0x80) return NAN;
    return small_float(v, 4, 3, 8);
  case CF_FLOAT8E5M2:
    if ((v & 0x7c) == 0x7c) return (v & 3) ? NAN : ((v & 0x80) ? -INFINITY : INFINITY);
    return small_float(v, 5, 2, 15);
  case CF_FLOAT8E5M2FNUZ:
    if (v == 0x80) return NAN;
    return small_float(v, 5, 2, 16);
  case CF_FLOAT8E8M0:
    if (v == 0xff) return NAN;
    return ldexp(1.0, (int)v - 127);
  case CF_FLOAT4E2M1:
    return small_float(v, 2, 1, 1);
  default:
    return NAN;
  }
}

static uint64_t raw_elem(const cf_tensor *t, size_t i) {
  unsigned bits = cf_dtype_bits(t->dtype);
  const unsigned char *d = t->data;
  if (bits >= 8) {
    uint64_t v = 0;
    size_t bytes = bits / 8;
    for (size_t k = 0; k < bytes; ++k) v |= (uint64_t)d[i * bytes + k] << (8 * k);
    return v;
  }
  size_t per = 8 / bits;
  return (d[i / per] >> ((i % per) * bits)) & ((1u << bits) - 1u);
}

int64_t cf_tensor_get_i64(const cf_tensor *t, size_t i) {
  uint64_t v = raw_elem(t, i);
  switch (t->dtype) {
  case CF_INT8: return (int8_t)(uint8_t)v;
  case CF_INT16: return (int16_t)(uint16_t)v;
  case CF_INT32: return (int32_t)(uint32_t)v;
  case CF_INT64: return (int64_t)v;
  case CF_INT4: return (v & 8) ? (int64_t)v - 16 : (int64_t)v;
  case CF_INT2: return (v & 2) ? (int64_t)v - 4 : (int64_t)v;
  case CF_BOOL: return v != 0;
  default: return (int64_t)v;
  }
}

uint64_t cf_tensor_get_u64(const cf_tensor *t, size_t i) {
  return raw_elem(t, i);
}

double cf_tensor_get_f64(const cf_tensor *t, size_t i) {
  uint64_t v = raw_elem(t, i);
  switch (t->dtype) {
  case CF_FLOAT: { uint32_t u = (uint32_t)v; float f; memcpy(&f, &u, 4); return f; }
  case CF_DOUBLE: { double d; memcpy(&d, &v, 8); return d; }
  case CF_FLOAT16: return hd_f16_to_f32((uint16_t)v);
  case CF_BFLOAT16: return hd_bf16_to_f32((uint16_t)v);
  case CF_FLOAT8E4M3FN: case CF_FLOAT8E4M3FNUZ: case CF_FLOAT8E5M2:
  case CF_FLOAT8E5M2FNUZ: case CF_FLOAT8E8M0: case CF_FLOAT4E2M1:
    return decode_f8(t->dtype, (unsigned)v);
  case CF_UINT8: case CF_UINT16: case CF_UINT32: case CF_UINT64: case CF_UINT4:
  case CF_UINT2:
    return (double)v;
  default:
    return (double)cf_tensor_get_i64(t, i);
  }
}
