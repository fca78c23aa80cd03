/* The handle calls of a mock DNN library (dnn_vendor's create, destroy,
 * set_stream, get_error_string), shared by the tests that drive the
 * descriptor builder without cuDNN or hipDNN (test_dnn_tables.c,
 * test_engine_cache.c); each test mocks the descriptor calls its own way.
 * Both tables' SUCCESS is 0. */
#ifndef TESTS_DNN_MOCK_H
#define TESTS_DNN_MOCK_H

#include "backends/dnn/dnn.h"

static int dnn_mock_handle;

static int dnn_mock_create(void **h) {
  *h = &dnn_mock_handle;
  return 0;
}
static int dnn_mock_destroy(void *h) {
  (void)h;
  return 0;
}
static int dnn_mock_set_stream(void *h, void *s) {
  (void)h, (void)s;
  return 0;
}
static const char *dnn_mock_error_string(int st) { return st == 0 ? "ok" : "mock error"; }

static inline void dnn_mock_handle_calls(dnn_vendor *vd) {
  vd->create = dnn_mock_create;
  vd->destroy = dnn_mock_destroy;
  vd->set_stream = dnn_mock_set_stream;
  vd->get_error_string = dnn_mock_error_string;
}

#endif
