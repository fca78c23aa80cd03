/* hip_hipdnn: the hipDNN half of the HIP backend. */
#ifndef HIP_HIPDNN_H
#define HIP_HIPDNN_H

#include "backends/dnn/dnn.h"

/* hipDNN's names, values and entry points (hip_hipdnn_table.c): plain data. */
extern const dnn_table hip_hipdnn_table;

#endif
