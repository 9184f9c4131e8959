/* base/base.h — the bottom stage, used by every other: errors, logs and the clock, the text
 * builder, shape strings. Depends on nothing but the public header. */
#ifndef TC_BASE_H
#define TC_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc/tc.h"
#include "kit/tc_kit.h" /* strings, dtype sizes, size evaluation: the one implementation, shared with plugins */
#include "tc_plugin.h" /* the core speaks the ABI's prims, size expressions and descriptors */

#if defined(__GNUC__)
#define TC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TC_PRINTF(a, b)
#endif

/* ---------------------------------------------------------------- errors (error.c) */
/* Sets this thread's error message (printf-style) and returns `s`, so call sites read
 * `return core_error(TC_ERR_INVALID_ARGUMENT, "tc_add: ...")`. */
tc_status core_error(tc_status s, const char *fmt, ...) TC_PRINTF(2, 3);
/* Same, for functions returning a pointer: sets the error and returns NULL. */
void *core_error_null(tc_status s, const char *fmt, ...) TC_PRINTF(2, 3);
#define TC_RETURN_IF_ERROR(expr)                                                                   \
  do {                                                                                             \
    tc_status tc_s_ = (expr);                                                                      \
    if (tc_s_ != TC_OK) return tc_s_;                                                              \
  } while (0)

/* ---------------------------------------------------------------- logs (log.c)
 * TC_LOGS=graph,guards,recompiles,graph_breaks,fusion,output_code,schedule,cache,all */
bool tc_logs_on(const char *category);
/* Reads TC_LOGS now (once per process; tc_logs_on does it on first use), so a misspelt category
 * is reported even by a program that logs nothing. */
void tc_logs_init(void);
void tc_logs(const char *category, const char *fmt, ...) TC_PRINTF(2, 3);
/* Logs a long text (a graph, generated source) whole, under a one-line header. */
void tc_logs_text(const char *category, const char *header, const char *text);


/* Monotonic clock in seconds (log.c), for compile-time statistics. */
double tc_now_seconds(void);

/* Formats a shape as "8x64" (or "[]" for rank 0) into buf; returns buf. */
char *tc_shape_str(char *buf, size_t cap, int rank, const int64_t *sizes);

#endif
