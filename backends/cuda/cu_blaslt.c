/* cu_blaslt: the CUDA backend's optional BLAS, cuBLASLt, loaded at run time
 * like cuDNN so that the module loads without it (matmuls then run the
 * built-in gpu_gemm kernel). Fills gb_module.blas (backends/gpu/gb_internal.h).
 * The AMD side's counterpart would be hipBLASLt (same shape of API).
 *
 * Where libcublasLt comes from, in order: $HIPDNN_EP_CUBLASLT_LIBRARY (a
 * path, used alone when set), "libcublasLt.so.13" on the library path, then
 * next to this module.
 *
 * Row-major D[m, n] = op(A) op(B) is column-major D^T[n, m] = op(B)^T op(A)^T:
 * the library's "A" is our B and its "B" our A; a bias[n] is a bias over the
 * column-major rows, which is what the BIAS epilogue adds. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "backends/gpu/gb_internal.h"
#include "common/hd_dtype.h"

#define CU_BLASLT_SONAME "libcublasLt.so.13"

static struct {
  __typeof__(&cublasLtCreate) create;
  __typeof__(&cublasLtDestroy) destroy;
  __typeof__(&cublasLtMatmulDescCreate) desc_create;
  __typeof__(&cublasLtMatmulDescDestroy) desc_destroy;
  __typeof__(&cublasLtMatmulDescSetAttribute) desc_set;
  __typeof__(&cublasLtMatrixLayoutCreate) layout_create;
  __typeof__(&cublasLtMatrixLayoutDestroy) layout_destroy;
  __typeof__(&cublasLtMatrixLayoutSetAttribute) layout_set;
  __typeof__(&cublasLtMatmulPreferenceCreate) pref_create;
  __typeof__(&cublasLtMatmulPreferenceDestroy) pref_destroy;
  __typeof__(&cublasLtMatmulPreferenceSetAttribute) pref_set;
  __typeof__(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  __typeof__(&cublasLtMatmul) matmul;
  __typeof__(&cublasLtGetStatusString) status_string;
  __typeof__(&cublasLtGetVersion) version;
} lt;

static hd_status *lt_status(cublasStatus_t s, const char *call, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return NULL;
  hd_code code = s == CUBLAS_STATUS_NOT_SUPPORTED ? HD_ERR_NOT_SUPPORTED
                 : s == CUBLAS_STATUS_ALLOC_FAILED ? HD_ERR_OUT_OF_MEMORY
                                                   : HD_ERR_BACKEND;
  return hd_error(code, "%s:%d: cuBLASLt: %s failed: %s (%d)", __FILE__, line, call,
                  lt.status_string ? lt.status_string(s) : "?", (int)s);
}
#define LT(call) HD_TRY(lt_status((call), #call, __LINE__))

typedef struct cu_mm {
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatmulAlgo_t algo;
  size_t ws;
  float alpha;
  int bias;
  int accumulate;
} cu_mm;

static hd_status *lt_handle_create(void **h) {
  cublasLtHandle_t lh = NULL;
  LT(lt.create(&lh));
  *h = lh;
  return NULL;
}

static void lt_handle_destroy(void *h) {
  if (h) lt.destroy((cublasLtHandle_t)h);
}

static void lt_mm_free(void *p) {
  cu_mm *mm = p;
  if (!mm) return;
  if (mm->op) lt.desc_destroy(mm->op);
  if (mm->la) lt.layout_destroy(mm->la);
  if (mm->lb) lt.layout_destroy(mm->lb);
  if (mm->ld) lt.layout_destroy(mm->ld);
  free(mm);
}

static hd_status *layout(cublasLtMatrixLayout_t *l, cudaDataType t, int64_t rows, int64_t cols,
                         int64_t ld, int64_t batch, int64_t stride) {
  LT(lt.layout_create(l, t, (uint64_t)rows, (uint64_t)cols, ld));
  if (batch > 1) {
    int32_t b32 = (int32_t)batch;
    LT(lt.layout_set(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b32, sizeof b32));
    LT(lt.layout_set(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  }
  return NULL;
}

static hd_status *mm_build(void *h, const gb_mm_desc *d, size_t ws_limit, int rank, cu_mm *mm) {
  cudaDataType t;
  switch (d->dtype) {
    case HD_DT_F32: t = CUDA_R_32F; break;
    case HD_DT_F16: t = CUDA_R_16F; break;
    case HD_DT_BF16: t = CUDA_R_16BF; break;
    default:
      return hd_error(HD_ERR_NOT_SUPPORTED, "cuBLASLt: matmul of %s", hd_dtype_name(d->dtype));
  }
  if (d->batch > 0x7fffffff)
    return hd_error(HD_ERR_NOT_SUPPORTED, "cuBLASLt: batch of %lld", (long long)d->batch);
  cublasComputeType_t ct =
      d->dtype == HD_DT_F32 && d->allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  LT(lt.desc_create(&mm->op, ct, CUDA_R_32F));
  /* library A = our B (col-major [n, k] after op), library B = our A */
  cublasOperation_t opa = d->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opb = d->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  LT(lt.desc_set(mm->op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
  LT(lt.desc_set(mm->op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
  /* GELU: cuBLASLt's is the tanh form (Gelu approximate="tanh"); callers
   * never ask for it for the erf form */
  cublasLtEpilogue_t ep = d->bias ? (d->relu   ? CUBLASLT_EPILOGUE_RELU_BIAS
                                     : d->gelu ? CUBLASLT_EPILOGUE_GELU_BIAS
                                               : CUBLASLT_EPILOGUE_BIAS)
                                  : (d->relu   ? CUBLASLT_EPILOGUE_RELU
                                     : d->gelu ? CUBLASLT_EPILOGUE_GELU
                                               : CUBLASLT_EPILOGUE_DEFAULT);
  LT(lt.desc_set(mm->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep));
  if (d->bias) {
    LT(lt.desc_set(mm->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &t, sizeof t));
  }
  /* stored matrices, column-major view */
  if (d->trans_b) HD_TRY(layout(&mm->la, t, d->k, d->n, d->ldb, d->batch, d->stride_b));
  else HD_TRY(layout(&mm->la, t, d->n, d->k, d->ldb, d->batch, d->stride_b));
  if (d->trans_a) HD_TRY(layout(&mm->lb, t, d->m, d->k, d->lda, d->batch, d->stride_a));
  else HD_TRY(layout(&mm->lb, t, d->k, d->m, d->lda, d->batch, d->stride_a));
  HD_TRY(layout(&mm->ld, t, d->n, d->m, d->ldd ? d->ldd : d->n, d->batch, d->stride_d ? d->stride_d : d->m * d->n));
  cublasLtMatmulPreference_t pref = NULL;
  LT(lt.pref_create(&pref));
  uint64_t wl = ws_limit;
  hd_status *st = lt_status(
      lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wl, sizeof wl), "pref", __LINE__);
  /* the heuristic's list up to the rank asked for (its order is the same
   * for the same library, GPU and descriptor: a rank is a choice to keep) */
  cublasLtMatmulHeuristicResult_t res[GB_MM_RANKS];
  int got = 0;
  memset(res, 0, sizeof res);
  if (!st && (rank < 0 || rank >= GB_MM_RANKS))
    st = hd_error(HD_ERR_INVALID_ARG, "cuBLASLt: algorithm rank %d of at most %d", rank, GB_MM_RANKS);
  if (!st)
    st = lt_status(lt.heuristic((cublasLtHandle_t)h, mm->op, mm->la, mm->lb, mm->ld, mm->ld, pref,
                                rank + 1, res, &got),
                   "cublasLtMatmulAlgoGetHeuristic", __LINE__);
  lt.pref_destroy(pref);
  if (st) return st;
  if (got <= rank || res[rank].state != CUBLAS_STATUS_SUCCESS)
    return hd_error(HD_ERR_NOT_SUPPORTED, "cuBLASLt: no algorithm of rank %d for [%lld x %lld x %lld] x %lld", rank,
                    (long long)d->m, (long long)d->n, (long long)d->k, (long long)d->batch);
  mm->algo = res[rank].algo;
  mm->ws = res[rank].workspaceSize;
  mm->alpha = d->alpha;
  mm->bias = d->bias;
  mm->accumulate = d->accumulate;
  return NULL;
}

static hd_status *lt_mm_create(void *h, const gb_mm_desc *d, size_t ws_limit, int rank, void **out,
                               size_t *ws) {
  *out = NULL;
  *ws = 0;
  cu_mm *mm = calloc(1, sizeof *mm);
  if (!mm) return hd_error(HD_ERR_OUT_OF_MEMORY, "%s:%d: out of host memory", __FILE__, __LINE__);
  hd_status *st = mm_build(h, d, ws_limit, rank, mm);
  if (st) {
    lt_mm_free(mm);
    return st;
  }
  *out = mm;
  *ws = mm->ws;
  return NULL;
}

static hd_status *lt_mm_run(void *h, const void *p, const void *a, const void *b, const void *c, void *d,
                            const void *bias, void *ws, size_t ws_bytes, void *stream) {
  const cu_mm *mm = p;
  if (mm->ws > ws_bytes)
    return hd_error(HD_ERR_INTERNAL, "cuBLASLt: workspace %zu < %zu", ws_bytes, mm->ws);
  if (mm->accumulate && !c) return hd_error(HD_ERR_INTERNAL, "cuBLASLt: accumulating matmul without C");
  if (mm->bias) LT(lt.desc_set(mm->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  float beta = mm->accumulate ? 1.f : 0.f;
  LT(lt.matmul((cublasLtHandle_t)h, mm->op, &mm->alpha, b, mm->la, a, mm->lb, &beta, mm->accumulate ? c : d, mm->ld,
               d, mm->ld, &mm->algo, mm->ws ? ws : NULL, mm->ws, (cudaStream_t)stream));
  return NULL;
}

hd_status *gb_blas_load(gb_module *m) {
  static const char *const sonames[] = {CU_BLASLT_SONAME, NULL};
  void *lib = NULL;
  HD_TRY(dnn_lib_open("cuBLASLt", "HIPDNN_EP_CUBLASLT_LIBRARY", sonames, &lib));
  int missing = 0;
#define LT_SYM(field, name)                                \
  do {                                                     \
    *(void **)&lt.field = dlsym(lib, name);                \
    if (!lt.field) missing = 1;                            \
  } while (0)
  LT_SYM(create, "cublasLtCreate");
  LT_SYM(destroy, "cublasLtDestroy");
  LT_SYM(desc_create, "cublasLtMatmulDescCreate");
  LT_SYM(desc_destroy, "cublasLtMatmulDescDestroy");
  LT_SYM(desc_set, "cublasLtMatmulDescSetAttribute");
  LT_SYM(layout_create, "cublasLtMatrixLayoutCreate");
  LT_SYM(layout_destroy, "cublasLtMatrixLayoutDestroy");
  LT_SYM(layout_set, "cublasLtMatrixLayoutSetAttribute");
  LT_SYM(pref_create, "cublasLtMatmulPreferenceCreate");
  LT_SYM(pref_destroy, "cublasLtMatmulPreferenceDestroy");
  LT_SYM(pref_set, "cublasLtMatmulPreferenceSetAttribute");
  LT_SYM(heuristic, "cublasLtMatmulAlgoGetHeuristic");
  LT_SYM(matmul, "cublasLtMatmul");
  LT_SYM(status_string, "cublasLtGetStatusString");
  LT_SYM(version, "cublasLtGetVersion");
#undef LT_SYM
  if (missing) {
    memset(&lt, 0, sizeof lt);
    dlclose(lib);
    return hd_error(HD_ERR_NOT_FOUND, "cuBLASLt at %s lacks an entry point", CU_BLASLT_SONAME);
  }
  m->blas.name = "cuBLASLt";
  m->blas.version = lt.version();
  m->blas.handle_create = lt_handle_create;
  m->blas.handle_destroy = lt_handle_destroy;
  m->blas.mm_create = lt_mm_create;
  m->blas.mm_run = lt_mm_run;
  m->blas.mm_free = lt_mm_free;
  return NULL; /* the library stays mapped, like cuDNN */
}
