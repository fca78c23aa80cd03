/* cu_cudnn_table: cuDNN's dnn_table, plain data. Every value is pasted from
 * cudnn_backend.h / cudnn_graph.h (cuDNN 9), so the builder's vocabulary is
 * cuDNN's own spelling; the compiler checks each name exists. Linked by the
 * cuda module and by tests/test_dnn_tables.c (which needs no cuDNN library). */
#include <cudnn_backend.h>
#include <cudnn_graph.h>

#include "backends/cuda/cu_cudnn.h"

/* Some values (the graph/plan HANDLE attributes) are marked deprecated in
 * cuDNN 9 but are still what a plan built without a device-properties
 * descriptor uses. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static const int64_t cu_values[DNN_NAME_COUNT] = {
#define CU_VALUE_(n) [DNN_##n] = (int64_t)CUDNN_##n,
    DNN_NAMES(CU_VALUE_)
#undef CU_VALUE_
};
#pragma GCC diagnostic pop

static const char *const cu_names[DNN_NAME_COUNT] = {
#define CU_NAME_(n) [DNN_##n] = "CUDNN_" #n,
    DNN_NAMES(CU_NAME_)
#undef CU_NAME_
};

#define DNN_SYMBOL_PREFIX "cudnn"
static const char *const cu_symbols[DNN_ENTRY_COUNT] = {DNN_ENTRY_POINTS(DNN_SYMBOL)};

const dnn_table cu_cudnn_table = {
    .vendor = "cuDNN",
    .prefix = "CUDNN_",
    .names = cu_names,
    .values = cu_values,
    .symbols = cu_symbols,
    /* CUDNN_STATUS_NOT_SUPPORTED is 3000; its sub-statuses run to 3999. */
    .not_supported_span = 1000,
};
