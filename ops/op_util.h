/* Helpers shared by the op files: dtype tests, constant inputs, axes and
 * the spatial attributes that Conv-like ops (pools) read. */
#ifndef OP_UTIL_H
#define OP_UTIL_H

#include "ops/op_defs.h"

/* The dtypes our ops compute in: fp32, fp16 and bf16. */
int op_is_float(int dtype);
/* Types whose bytes ops may move as they are (views, gathers, copies):
 * every numeric type and bool; not strings. */
int op_is_data(int dtype);
/* Integer types (signed and unsigned, 8 to 64 bits). */
int op_is_int(int dtype);

/* Input k of n, or IR_NONE when absent (also when k >= nin). */
int op_input(const ir_node *n, int k);
/* 1 when output k of n is present (a name the model uses). */
int op_has_output(const ir_node *n, int k);


/* NOT_SUPPORTED unless every present input and output 0 has dtype `dt`
 * (fp32, fp16 or bf16) and a known rank. */
hd_status *op_check_float_io(const ir_graph *g, const ir_node *n, const char *what);

/* Like op_check_float_io for ops that move bytes as they are: every
 * present input and output 0 of one op_is_data dtype, ranks known. */
hd_status *op_check_data_io(const ir_graph *g, const ir_node *n, const char *what);

/* A constant input's contents. GetCapability imports constants without
 * their data (ep_graph_import with_data 0), so *have is 0 there: callers
 * accept the node and read the values again when Compile imports them. */
typedef struct op_const_info {
  int have;   /* the values were read */
  int n;      /* number of elements (when have) */
} op_const_info;
/* int64 or int32 constant of at most max elements. */
hd_status *op_const_ints(const ir_graph *g, int v, int64_t *out, int max, op_const_info *ci);
/* At infer: the values of input v (int32 or int64, at most max of them)
 * from t[v].host, where plans keep what is known on the host (constants,
 * values computed at plan time). NOT_SUPPORTED when they are not known. */
hd_status *op_value_ints(const ir_graph *g, const ir_tensor *t, int v, int64_t *out, int max, int *n);
/* fp32, fp16 or bf16 scalar (1 element) constant. */
hd_status *op_const_scalar(const ir_graph *g, int v, float *out, op_const_info *ci);

/* Normalises axis a of a rank-r tensor (-r <= a < r) into *out. */
hd_status *op_norm_axis(int64_t a, int r, int *out, const char *what);

/* A 0/1 flag attribute (ceil_mode, count_include_pad, ...): other values
 * are NOT_SUPPORTED, since runtimes read them differently. */
hd_status *op_attr_flag(const op_attrs *a, const char *name, int *v);

/* numpy broadcasting's input axis for output axis d (op_def.elementwise_axis):
 * the same axis counted from the right, -1 where the input has none. */
int op_broadcast_axis(const ir_node *n, int k, int d, int out_rank, int in_rank);

/* Output dims of numpy broadcasting of two shapes. */
hd_status *op_broadcast(int ra, const int64_t *da, int rb, const int64_t *db, int *rout, int64_t *dout);

/* Window attributes of Conv and pools within the hard limits (hd_math.h):
 * kernel (0 allowed when min_kernel is 0: Conv reads it from W), strides
 * and dilations in [1, HD_MAX_WINDOW], pads in [0, HD_MAX_WINDOW].
 * NOT_SUPPORTED past a limit (the CPU EP may still run it). */
hd_status *op_window_limits(const char *op, int ns, const int64_t *kernel, int min_kernel, const int64_t *strides,
                            const int64_t *dilations, const int64_t *pads_begin, const int64_t *pads_end);

/* One spatial dim of a sliding window: resolves auto_pad into *pb and *pe and
 * gives the output size. SAME pads as ONNX Runtime computes them: total =
 * (ceil(in/s) - 1) * s + span - in, leading pad total/2 (SAME_UPPER) or
 * (total+1)/2 (SAME_LOWER); a negative trailing pad reads as 0 (the same
 * windows), a negative leading one is NOT_SUPPORTED. ceil_mode as ONNX's
 * pools (a last window starting in the end padding is dropped). */
hd_status *op_window_out(const char *op, int64_t in, int64_t k, int64_t s, int64_t d, op_auto_pad ap, int ceil_mode,
                         int64_t *pb, int64_t *pe, int64_t *out);

/* Reads an ints attribute of exactly `len` values into dst, or fills dst
 * with dflt when it is absent; INVALID_ARG for another length. */
hd_status *op_attr_ints_exact(const op_attrs *a, const char *name, int64_t dflt, int64_t *dst, int len);

/* op_def_<KIND> of family `fam` (its fam_parse, fam_check, fam_infer);
 * further op_def fields (.domain, .value_inputs, ...) after the opsets. */
#define OP_DEF(fam, KIND, TYPE, MIN, MAX, ...)                                                            \
  const op_def op_def_##KIND = {.kind = OP_##KIND, .onnx_type = TYPE, .min_opset = MIN, .max_opset = MAX, \
                                .parse = fam##_parse, .check = fam##_check, .infer = fam##_infer, __VA_ARGS__};

#endif
