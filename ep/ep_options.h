/* ep_options: the provider options, parsed and validated once per EP. */
#ifndef EP_OPTIONS_H
#define EP_OPTIONS_H

#include <stddef.h>

#include "backends/backend.h"
#include "ep/ep_ort.h"

typedef struct ep_options {
  char backend[16];       /* auto | ref | cuda | hip */
  int backend_explicit;   /* set by the option or HIPDNN_EP_BACKEND, not defaulted */
  int device_id;          /* -1: not given */
  size_t gpu_mem_limit;   /* bytes; 0: no limit */
  int enable_cuda_graph;
  int precision;          /* hd_dtype an fp32 partition computes in: F32 (default), F16, BF16 */
  int half_gelu_exact;    /* half_gelu=exact: under precision fp16/bf16 a matmul's GELU keeps erf */
  int fp32_first_layers;  /* under precision fp16/bf16: each partition's first N tensor-core ops stay fp32 */
  int use_tf32_explicit;  /* use_tf32 was given */
  int layout;             /* plan_layout_mode (prefer_nhwc): ALWAYS (default) or NEVER */
  char profile_file[4096]; /* "": none; else the Chrome-trace file of every run's steps */
  be_options be;          /* what the backend sees */
} ep_options;

/* Reads the session config entries "<prefix><key>" (prefix: "ep.<lowercase
 * EP name>."), and "ep.hipdnnexecutionprovider.<key>" under any name, and
 * the HIPDNN_EP_BACKEND environment variable. An unknown key
 * or a bad value is an INVALID_ARG status naming the key. */
hd_status *ep_options_parse(const OrtSessionOptions *so, const char *prefix, ep_options *out);
/* Parses one key/value pair into out (exposed for unit tests). */
hd_status *ep_options_set(ep_options *out, const char *key, const char *value);
void ep_options_default(ep_options *out);

#endif
