/* ref: the reference backend. Plain C on the CPU, written to be obviously
 * right rather than fast: it is the oracle the GPU backends are tested
 * against. fp16 and bf16 are computed in fp32 (accumulated in double). */
#ifndef REF_H
#define REF_H

#include "backends/backend.h"
#include "ops/ops.h"

/* Scratch for converting half-precision operands to fp32, sized per plan. */
typedef struct ref_scratch {
  float *buf;
  size_t floats;
} ref_scratch;

/* One op implementation: reads and writes tensors of plan step s. */
typedef hd_status *(*ref_op_fn)(const ir_plan *p, const ir_step *s, const ir_bindings *b,
                                ref_scratch *scratch);

/* An op family's reference implementation: ref_family_<family> in
 * ref_<family>.c, for each OP_FAMILY (ops/op_registry.h). scratch: the
 * fp32 scratch floats step s needs (NULL: none). */
typedef struct ref_family {
  ref_op_fn run;
  size_t (*scratch)(const ir_plan *p, const ir_step *s);
} ref_family;

/* Element strides of t's dims aligned right to rank r; 0 where t has size 1
 * or no dim (numpy broadcasting). */
void ref_bcast_strides(const ir_tensor *t, int r, int64_t *st);

/* Element access for any float dtype. */
float ref_load(int dtype, const void *base, size_t i);
void ref_store(int dtype, void *base, size_t i, float v);
/* Copies n elements of dtype into fp32 dst (or returns src when already fp32). */
const float *ref_as_f32(int dtype, const void *src, size_t n, float *dst);
/* Element access for every numeric type and bool: as a double (exact for
 * every float type and for integers up to 2^53), or as an int64 (exact for
 * integer types; floats convert as ref_f64_to_i64 says). Stores convert to
 * the element type: integers saturate, NaN becomes 0, bool is x != 0. */
double ref_load_f64(int dtype, const void *base, size_t i);
void ref_store_f64(int dtype, void *base, size_t i, double v);
int64_t ref_load_i64(int dtype, const void *base, size_t i);
void ref_store_i64(int dtype, void *base, size_t i, int64_t v);
/* A float to an integer of [lo, hi]: truncated toward zero, saturated, NaN 0. */
int64_t ref_f64_to_i64(double v, int64_t lo, int64_t hi);
float ref_apply_act(const op_act *a, float x);
/* One head row of head_dim elements rotated (ops/rotary.h's formula) from
 * x at xo into y at yo (y may be x), with the cos/sin row at element to of
 * cs/sn (dtype dt, rot / 2 of them). */
void ref_rope_row(int dt, const void *x, size_t xo, void *y, size_t yo, const void *cs, const void *sn, size_t to,
                  int64_t head_dim, int64_t rot, int interleaved);

#endif
