/* gpu_kernels: extern "C" launchers of the project's own GPU kernels, shared
 * by backends/cuda and backends/hip. Each family lives in one .cu file.
 * Launchers return the runtime's error code as an int (0 = success) and
 * never synchronize. Plain C declarations: host C code includes this. */
#ifndef GPU_KERNELS_H
#define GPU_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types the kernels take (values of hd_dtype, repeated here so that
 * gpu/ depends on nothing above it). */
enum { GPU_DT_F32 = 1, GPU_DT_F16 = 10, GPU_DT_BF16 = 16 };

/* Activations (the order of op_act_kind; backends map explicitly). */
enum {
  GPU_ACT_NONE = 0,
  GPU_ACT_RELU,
  GPU_ACT_LEAKY_RELU,   /* alpha */
  GPU_ACT_CLIP,         /* alpha = min, beta = max */
  GPU_ACT_SIGMOID,
  GPU_ACT_HARD_SIGMOID, /* alpha, beta */
  GPU_ACT_HARD_SWISH,
  GPU_ACT_TANH,
};

/* gpu_epilogue.cu: in place on y (dtype, n elements, NC[spatial] layout with
 * `inner` elements per channel plane and `channels` channels):
 *   y = act(y + bias[c] + residual)
 * bias (dtype, `channels` elements) and residual (dtype, like y) may be NULL.
 * Arithmetic in fp32. Returns -1 for a dtype it does not take. */
int gpu_conv_epilogue(void *y, const void *bias, const void *residual, int dtype, int64_t n,
                      int64_t channels, int64_t inner, int act, float alpha, float beta,
                      void *stream);

#ifdef __cplusplus
}
#endif

#endif
