/* internal.h — core-private types shared by the pipeline stages: errors and logs, tensors and
 * storage, symbolic sizes. Stage-specific interfaces live in their own headers (prims.h,
 * graph.h, trace.h, backend.h, lowered.h). */
#ifndef TC_INTERNAL_H
#define TC_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc/tc.h"

#if defined(__GNUC__)
#define TC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TC_PRINTF(a, b)
#endif

/* ---------------------------------------------------------------- errors (error.c) */
/* Sets this thread's error message (printf-style) and returns `s`, so call sites read
 * `return tc_error(TC_ERR_INVALID_ARGUMENT, "tc_add: ...")`. */
tc_status tc_error(tc_status s, const char *fmt, ...) TC_PRINTF(2, 3);
/* Same, for functions returning a pointer: sets the error and returns NULL. */
void *tc_error_null(tc_status s, const char *fmt, ...) TC_PRINTF(2, 3);
tc_status tc_last_status(void);
#define TC_RETURN_IF_ERROR(expr)                                                                   \
  do {                                                                                             \
    tc_status tc_s_ = (expr);                                                                      \
    if (tc_s_ != TC_OK) return tc_s_;                                                              \
  } while (0)

/* ---------------------------------------------------------------- logs (log.c)
 * TC_LOGS=graph,guards,recompiles,graph_breaks,fusion,output_code,schedule,cache,all */
bool tc_logs_on(const char *category);
void tc_logs(const char *category, const char *fmt, ...) TC_PRINTF(2, 3);
/* Logs a long text (a graph, generated source) whole, under a one-line header. */
void tc_logs_text(const char *category, const char *header, const char *text);

/* A growable string (text.c) for readable output. Start from (tc_text){0}; printf appends;
 * take returns the string (caller frees) or NULL when memory ran out, and resets t. */
typedef struct tc_text {
  char *p;
  size_t len, cap;
  bool oom;
} tc_text;
void tc_text_printf(tc_text *t, const char *fmt, ...) TC_PRINTF(2, 3);
char *tc_text_take(tc_text *t);

/* Monotonic clock in seconds (log.c), for compile-time statistics. */
double tc_now_seconds(void);

/* Formats a shape as "8x64" (or "[]" for rank 0) into buf; returns buf. */
char *tc_shape_str(char *buf, size_t cap, int rank, const int64_t *sizes);

/* ---------------------------------------------------------------- tensors (tensor.c) */
struct tc_backend;

typedef struct tc_storage {
  int32_t refcount;
  struct tc_backend *backend; /* NULL: host memory owned by the core */
  void *host;                 /* host memory (backend == NULL) */
  tc_buffer *buffer;          /* device buffer (backend != NULL) */
  size_t bytes;
} tc_storage;

struct tc_trace;

struct tc_tensor {
  int32_t refcount;
  tc_dtype dtype;
  int32_t rank;
  int64_t sizes[TC_MAX_RANK]; /* concrete; for proxies, the sizes seen while tracing */
  int64_t strides[TC_MAX_RANK]; /* in elements; proxies: contiguous */
  int64_t offset;               /* in elements */
  tc_storage *storage;          /* NULL for proxies */
  /* Proxies (tensors of a trace): */
  struct tc_trace *trace;      /* NULL for real tensors */
  int32_t value;               /* value id in the trace's graph */
  int32_t sym[TC_MAX_RANK];    /* size-expression id per dim, -1 when the size is static */
  /* The open scope holding the creation reference (scope.c), or NULL. */
  struct tc_scope *scope;
  int32_t scope_slot;
};

/* Allocates a tensor with refcount 1, registered in the innermost open scope. */
tc_tensor *tensor_new(tc_dtype dtype, int rank, const int64_t *sizes);
/* New real tensor with fresh contiguous host storage (uninitialized). */
tc_tensor *tensor_new_host(tc_dtype dtype, int rank, const int64_t *sizes);
/* New contiguous tensor on backend be's memory: host storage when be is NULL or a host-memory
 * backend, else a buffer from be->api.buffer_alloc. `op` names the caller in errors. */
tc_tensor *tensor_new_on_backend(struct tc_backend *be, const char *op, tc_dtype dtype, int rank,
                                 const int64_t *sizes);
/* New tensor sharing x's storage with the given geometry (a view). */
tc_tensor *tensor_new_view(tc_tensor *x, int rank, const int64_t *sizes, const int64_t *strides, int64_t offset);
tc_storage *storage_new_host(size_t bytes); /* 64-byte aligned, refcount 1 */
/* Host blocks for storage (host_alloc.c): 64-byte aligned; large freed blocks are cached and
 * reused for the same size. host_block_size is the rounded size (0 on overflow). */
void *host_block_alloc(size_t bytes);
void host_block_free(void *p, size_t bytes);
size_t host_block_size(size_t bytes);
void storage_release(tc_storage *s);
void tensor_contiguous_strides(int rank, const int64_t *sizes, int64_t *strides);
bool tensor_is_proxy(const tc_tensor *t);
int64_t tensor_numel(const tc_tensor *t);
/* Host pointer to element 0 of the view (offset applied); NULL for device storage. */
void *tensor_host_data(const tc_tensor *t);
/* Normalizes a possibly negative dim against rank; -1 with an error naming `op` when out of
 * range. */
int tensor_dim(const char *op, int dim, int rank);

/* ---------------------------------------------------------------- symbolic sizes (sizes.c)
 * A size as the op layer sees it: a concrete value plus, inside a trace, a size-expression id
 * in the current trace (e == -1 means the size is the static constant v). Arithmetic on sizes
 * goes through these helpers so dynamic dims stay symbolic. */
typedef struct tc_sz {
  int64_t v;
  int32_t e;
} tc_sz;

tc_sz sz_const(int64_t v);
tc_sz sz_of(const tc_tensor *t, int dim); /* the tensor's size at dim (symbolic for proxies) */
tc_sz sz_add(tc_sz a, tc_sz b);
tc_sz sz_sub(tc_sz a, tc_sz b);
tc_sz sz_mul(tc_sz a, tc_sz b);
tc_sz sz_floordiv(tc_sz a, tc_sz b);
tc_sz sz_mod(tc_sz a, tc_sz b);
tc_sz sz_max(tc_sz a, tc_sz b);
tc_sz sz_min(tc_sz a, tc_sz b);
bool sz_is_static(tc_sz a);
/* Equality of two sizes that a decision depends on. Compares the concrete values; when
 * either side is symbolic and the two are not the same expression, records a guard that they
 * stay equal (or unequal) for the compiled entry. */
bool sz_eq(tc_sz a, tc_sz b);
/* Like sz_eq against a constant (e.g. "is this dim 1?", for broadcasting). */
bool sz_eq_const(tc_sz a, int64_t c);
/* Numel of a tensor, symbolically. */
tc_sz sz_numel(const tc_tensor *t);

/* ---------------------------------------------------------------- dtypes (dtype.c) */
bool dtype_is_float(tc_dtype d);
bool dtype_is_int(tc_dtype d); /* i32, i64 (not bool) */
/* PyTorch's promotion for two tensor operands. */
tc_dtype dtype_promote(tc_dtype a, tc_dtype b);

#endif
