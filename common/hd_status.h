/* hd_status: the error type of every layer below ep/.
 * NULL means success; an error carries a code and a message that says what
 * and where. ep/ turns it into an OrtStatus; nothing below ep/ knows ORT. */
#ifndef HD_STATUS_H
#define HD_STATUS_H

#include <stdarg.h>

typedef enum hd_code {
  HD_OK = 0,
  HD_ERR_INVALID_ARG,    /* bad input: model, option, shape */
  HD_ERR_NOT_SUPPORTED,  /* valid, but we do not run it */
  HD_ERR_OUT_OF_MEMORY,  /* host or device allocation failed */
  HD_ERR_BACKEND,        /* a vendor library or runtime call failed */
  HD_ERR_NOT_FOUND,      /* a library, symbol or device is missing */
  HD_ERR_INTERNAL,       /* a bug of ours */
} hd_code;

typedef struct hd_status hd_status;

/* The layout of struct hd_status (hd_status.c), part of the backend module
 * handshake: core and modules free each other's statuses. */
#define HD_STATUS_LAYOUT 2

#if defined(__GNUC__)
#define HD_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define HD_MUST_USE __attribute__((warn_unused_result))
#else
#define HD_PRINTF(f, a)
#define HD_MUST_USE
#endif

hd_status *hd_error(hd_code code, const char *fmt, ...) HD_PRINTF(2, 3);
hd_status *hd_verror(hd_code code, const char *fmt, va_list ap);
/* Prepends context ("node conv_3: ") to an error; passes NULL through. */
hd_status *hd_status_wrap(hd_status *st, const char *fmt, ...) HD_PRINTF(2, 3);
hd_code hd_status_code(const hd_status *st);
const char *hd_status_msg(const hd_status *st);
/* Frees st unless it is the static out-of-memory status (of any copy of
 * this code: modules link their own; the flag is in the struct). */
void hd_status_free(hd_status *st);

#define HD_TRY(expr)                    \
  do {                                  \
    hd_status *hd_try_st_ = (expr);     \
    if (hd_try_st_) return hd_try_st_;  \
  } while (0)

/* Allocation helpers that turn failure into a status. */
#define HD_ALLOC_OR_RETURN(ptr, count)                                           \
  do {                                                                         \
    (ptr) = calloc((size_t)(count) ? (size_t)(count) : 1, sizeof(*(ptr)));     \
    if (!(ptr)) return hd_error(HD_ERR_OUT_OF_MEMORY, "%s:%d: out of host memory", \
                                __FILE__, __LINE__);                           \
  } while (0)

#endif
