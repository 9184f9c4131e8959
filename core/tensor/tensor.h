/* tensor/tensor.h — the tensor stage: tensors and their storage, host blocks, scopes, dtype
 * promotion, and moving bytes between host memory and backends (host_access.c).
 * May use: base, backend.
 *
 * Hooks: a host read of a proxy (tc_item, tc_to_host) and tc_size/tc_numel on a proxy's dynamic
 * dim need the capture stage, which sits above this one. The top stage installs them with
 * tensor_set_hooks (see core/compile/install_hooks.c). */
#ifndef TC_TENSOR_H
#define TC_TENSOR_H

#include "base/base.h"

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

/* How a tensor was made, for gradients: the ops stage's tape node (ops/ops.h) behind this
 * header, so this stage can free it without knowing what it holds. Owned by one tensor. */
typedef struct tensor_grad_fn {
  void (*free_fn)(struct tensor_grad_fn *fn);
} tensor_grad_fn;

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
  /* References taken through the public tc_retain and not yet given back: tc_release gives
   * one of those back before it touches the creation reference (see tc_release). */
  int32_t user_refs;
  /* Gradients (core/autograd): a leaf the user marked, the prim that made a non-leaf (NULL for
   * leaves and for results of ops that need no gradient), and the gradient tc_backward
   * accumulated (a core reference, NULL until then). */
  bool requires_grad;
  tensor_grad_fn *grad_fn;
  tc_tensor *grad;
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
/* The core's own references (a trace holding its proxies): counted in refcount only, never
 * mistaken for a caller's tc_retain or for the creation reference. tensor_drop frees at 0. */
void tensor_hold(tc_tensor *t);
void tensor_drop(tc_tensor *t);
int64_t tensor_numel(const tc_tensor *t);
/* Host pointer to element 0 of the view (offset applied); NULL for device storage. */
void *tensor_host_data(const tc_tensor *t);
/* Normalizes a possibly negative dim against rank; -1 with an error naming `op` when out of
 * range. */
int tensor_dim(const char *op, int dim, int rank);

/* ---------------------------------------------------------------- scopes (scope.c)
 * How tensors and scopes meet: a tensor created while a scope is open is claimed by it; the
 * claim is the tensor's creation reference. */
/* Registers t's creation reference with the innermost open scope of this thread (if any). */
void scope_claim(tc_tensor *t);
/* Forgets t's claim (t->scope becomes NULL) without releasing anything. */
void scope_unclaim(tc_tensor *t);


/* ---------------------------------------------------------------- host access (host_access.c) */
/* Copies the view (rank, sizes, strides in elements, starting at src) row-major into dst. */
void host_copy_strided(void *dst, const void *src, size_t itemsize, int rank, const int64_t *sizes,
                       const int64_t *strides);
/* t with its elements readable from host memory: a view sharing t's storage when it is already
 * host memory, else a contiguous host copy. New reference; NULL with an error naming op. */
tc_tensor *tensor_on_host(const char *op, tc_tensor *t);
/* A copy of t on backend be (a view when t already lives there; host memory when be is NULL or a
 * host-memory backend). New reference; NULL with an error naming op. */
tc_tensor *tensor_to_backend(const char *op, tc_tensor *t, struct tc_backend *be);
/* Writes src's elements (real, same dtype and sizes, any device and layout) over dst's, in
 * dst's storage (real and contiguous), so every view of that storage sees them: tc_assign's
 * copy. A no-op when both are the same elements of one storage. */
tc_status tensor_write(const char *op, tc_tensor *dst, tc_tensor *src);


/* ---------------------------------------------------------------- dtypes (dtype.c) */
bool dtype_is_float(tc_dtype d);
bool dtype_is_int(tc_dtype d); /* i32, i64 (not bool) */
/* PyTorch's promotion for two tensor operands. */
tc_dtype dtype_promote(tc_dtype a, tc_dtype b);

/* ---------------------------------------------------------------- hooks (tensor_hooks.c)
 * Set once, by the top stage, before any tensor exists (a library constructor); read-only
 * afterwards, so no lock. An entry left NULL makes its caller fail with an error that says so. */
typedef struct tensor_hooks {
  /* A host read of a proxy (op names the public call): a graph break, or an error under
   * fullgraph. *real receives a real tensor with the proxy's value (new reference). */
  tc_status (*materialize)(const char *op, const tc_tensor *proxy, tc_tensor **real /* out */);
  /* tc_size on a proxy's dynamic dim: pins the size to its traced value with a guard. */
  void (*pin_size)(const tc_tensor *proxy, int dim);
} tensor_hooks;

/* Installs the hooks (copied). Not thread-safe: call before any other thread uses tensors. */
void tensor_set_hooks(const tensor_hooks *h);
/* Calls the materialize hook; an INTERNAL error when none is installed. */
tc_status tensor_materialize(const char *op, const tc_tensor *proxy, tc_tensor **real /* out */);
/* Calls the pin_size hook; sets an INTERNAL error when none is installed. */
void tensor_pin_size(const tc_tensor *proxy, int dim);

#endif
