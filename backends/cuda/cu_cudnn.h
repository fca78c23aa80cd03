/* cu_cudnn: the cuDNN half of the CUDA backend. */
#ifndef CU_CUDNN_H
#define CU_CUDNN_H

#include "backends/dnn/dnn.h"

/* cuDNN's names, values and entry points (cu_cudnn_table.c): plain data. */
extern const dnn_table cu_cudnn_table;

#endif
