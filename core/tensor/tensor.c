/* tensor.c — tensors and storage: allocation, reference counting, views and metadata. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "tensor/tensor.h"

tc_storage *storage_new_host(size_t bytes) {
  tc_storage *s = calloc(1, sizeof *s);
  if (!s) return core_error_null(TC_ERR_OUT_OF_MEMORY, "out of memory allocating a storage");
  /* An empty tensor still gets a real block so that its data pointer is valid. */
  if (!host_block_size(bytes)) {
    free(s);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "storage of %zu bytes is too large", bytes);
  }
  s->host = host_block_alloc(bytes);
  if (!s->host) {
    free(s);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes", bytes);
  }
  s->refcount = 1;
  s->bytes = bytes;
  return s;
}

void storage_release(tc_storage *s) {
  /* Atomic: a compiled function called from several threads shares its captured weights. */
  if (!s || __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) > 0) return;
  if (s->backend) {
    if (s->buffer) backend_buffer_free(s->backend, s->buffer);
  } else {
    host_block_free(s->host, s->bytes);
  }
  free(s);
}

tc_tensor *tensor_new_on_backend(struct tc_backend *be, const char *op, tc_dtype dtype, int rank,
                                 const int64_t *sizes) {
  if (!be || be->host_memory) return tensor_new_host(dtype, rank, sizes);
  size_t bytes = tck_dtype_size(dtype);
  for (int d = 0; d < rank; d++) bytes *= (size_t)(sizes[d] > 0 ? sizes[d] : 0);
  tc_buffer *buf = NULL;
  tc_status s = backend_buffer_alloc(be, bytes ? bytes : 1, &buf);
  if (s != TC_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tc_last_error());
    return core_error_null(s, "%s: %s could not allocate %zu bytes: %s", op, be->name, bytes,
                         msg[0] ? msg : tc_status_name(s));
  }
  tc_storage *st = calloc(1, sizeof *st);
  tc_tensor *t = st ? tensor_new(dtype, rank, sizes) : NULL;
  if (!t) {
    free(st);
    backend_buffer_free(be, buf);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  }
  st->refcount = 1;
  st->backend = be;
  st->buffer = buf;
  st->bytes = bytes;
  t->storage = st;
  return t;
}

void tensor_contiguous_strides(int rank, const int64_t *sizes, int64_t *strides) {
  tck_contiguous_strides(rank, sizes, strides);
}

static bool numel_bytes(tc_dtype dtype, int rank, const int64_t *sizes, size_t *bytes);

tc_tensor *tensor_new(tc_dtype dtype, int rank, const int64_t *sizes) {
  if (rank < 0 || rank > TC_MAX_RANK)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "rank %d out of range (0..%d)", rank, TC_MAX_RANK);
  /* Every view's elements must be countable in bytes too: sizes whose product overflows would
   * otherwise wrap to a small numel and give silently wrong results (an expand to 2^40 x 2^40). */
  size_t bytes;
  if (!numel_bytes(dtype, rank, sizes, &bytes)) {
    char shape[160];
    tc_shape_str(shape, sizeof shape, rank, sizes);
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "a %s tensor of shape %s has more elements than memory can address",
                           tc_dtype_name(dtype), shape);
  }
  tc_tensor *t = calloc(1, sizeof *t);
  if (!t) return core_error_null(TC_ERR_OUT_OF_MEMORY, "out of memory allocating a tensor");
  t->refcount = 1;
  t->dtype = dtype;
  t->rank = rank;
  for (int i = 0; i < rank; i++)
    t->sizes[i] = sizes[i];
  tensor_contiguous_strides(rank, t->sizes, t->strides);
  t->value = -1;
  for (int i = 0; i < TC_MAX_RANK; i++)
    t->sym[i] = -1;
  scope_claim(t);
  return t;
}

static bool numel_bytes(tc_dtype dtype, int rank, const int64_t *sizes, size_t *bytes) {
  uint64_t n = tck_dtype_size(dtype);
  for (int i = 0; i < rank; i++) {
    if (sizes[i] < 0) return false;
    if (sizes[i] && n > UINT64_MAX / (uint64_t)sizes[i]) return false;
    n *= (uint64_t)sizes[i];
  }
  if (n > SIZE_MAX) return false;
  *bytes = (size_t)n;
  return true;
}

tc_tensor *tensor_new_host(tc_dtype dtype, int rank, const int64_t *sizes) {
  size_t bytes = 0;
  if (rank < 0 || rank > TC_MAX_RANK)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "rank %d out of range (0..%d)", rank, TC_MAX_RANK);
  if (!numel_bytes(dtype, rank, sizes, &bytes)) {
    char sh[160];
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "cannot allocate a %s tensor of shape %s", tc_dtype_name(dtype),
                         tc_shape_str(sh, sizeof sh, rank, sizes));
  }
  tc_storage *s = storage_new_host(bytes);
  if (!s) return NULL;
  tc_tensor *t = tensor_new(dtype, rank, sizes);
  if (!t) {
    storage_release(s);
    return NULL;
  }
  t->storage = s;
  return t;
}

tc_tensor *tensor_new_view(tc_tensor *x, int rank, const int64_t *sizes, const int64_t *strides, int64_t offset) {
  if (!x) return NULL;
  if (!x->storage) return core_error_null(TC_ERR_INTERNAL, "view of a tensor without storage (a proxy)");
  tc_tensor *t = tensor_new(x->dtype, rank, sizes);
  if (!t) return NULL;
  for (int i = 0; i < rank; i++)
    t->strides[i] = strides[i];
  t->offset = offset;
  t->storage = x->storage;
  __atomic_add_fetch(&x->storage->refcount, 1, __ATOMIC_RELAXED);
  return t;
}

bool tensor_is_proxy(const tc_tensor *t) {
  return t && t->trace != NULL;
}

int64_t tensor_numel(const tc_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++)
    n *= t->sizes[i];
  return n;
}

void *tensor_host_data(const tc_tensor *t) {
  if (!t || !t->storage || t->storage->backend) return NULL;
  return (char *)t->storage->host + (size_t)t->offset * tck_dtype_size(t->dtype);
}

int tensor_dim(const char *op, int dim, int rank) {
  int d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank) {
    core_error(TC_ERR_INVALID_ARGUMENT, "%s: dim %d out of range for a tensor of rank %d", op, dim, rank);
    return -1;
  }
  return d;
}

/* ---------------------------------------------------------------- public lifetime */
void tensor_hold(tc_tensor *t) {
  if (t) __atomic_add_fetch(&t->refcount, 1, __ATOMIC_RELAXED);
}

void tensor_drop(tc_tensor *t) {
  if (!t || __atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) > 0) return;
  if (t->grad_fn) t->grad_fn->free_fn(t->grad_fn);
  tensor_drop(t->grad);
  storage_release(t->storage);
  free(t);
}

tc_tensor *tc_retain(tc_tensor *t) {
  if (!t) return NULL;
  __atomic_add_fetch(&t->user_refs, 1, __ATOMIC_RELAXED);
  tensor_hold(t);
  return t;
}

/* Gives back one of the caller's tc_retain references if any is outstanding, so that
 * `tc_retain(t); tc_release(t)` inside a scope leaves the scope's claim in place (the scope
 * still frees t). With none outstanding the caller is releasing the creation reference: a
 * claimed tensor's scope gives it up early (see scope.c). The core never hands out a
 * tc_retain'd alias, so the count only ever holds the caller's own retains. */
void tc_release(tc_tensor *t) {
  if (!t) return;
  int32_t u = __atomic_load_n(&t->user_refs, __ATOMIC_RELAXED);
  while (u > 0 && !__atomic_compare_exchange_n(&t->user_refs, &u, u - 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  if (u <= 0) scope_unclaim(t);
  tensor_drop(t);
}

/* ---------------------------------------------------------------- public metadata */
/* A query on NULL: an error naming the query, unless an earlier failure (which usually made the
 * NULL) already said why. */
static void null_query(const char *op) {
  if (tc_last_status() == TC_OK) core_error(TC_ERR_INVALID_ARGUMENT, "%s: tensor is NULL", op);
}

int tc_rank(const tc_tensor *t) {
  if (!t) return null_query("tc_rank"), -1;
  return t->rank;
}

int64_t tc_size(const tc_tensor *t, int dim) {
  if (!t) return null_query("tc_size"), -1;
  int d = tensor_dim("tc_size", dim, t->rank);
  if (d < 0) return -1;
  if (tensor_is_proxy(t) && t->sym[d] >= 0) tensor_pin_size(t, d);
  return t->sizes[d];
}

int64_t tc_numel(const tc_tensor *t) {
  if (!t) return null_query("tc_numel"), -1;
  if (tensor_is_proxy(t))
    for (int d = 0; d < t->rank; d++)
      if (t->sym[d] >= 0) tensor_pin_size(t, d);
  return tensor_numel(t);
}

tc_dtype tc_dtype_of(const tc_tensor *t) {
  if (!t) return null_query("tc_dtype_of"), TC_F32;
  return t->dtype;
}

bool tc_is_contiguous(const tc_tensor *t) {
  if (!t) return null_query("tc_is_contiguous"), false;
  if (tensor_numel(t) == 0) return true;
  int64_t st = 1;
  for (int i = t->rank - 1; i >= 0; i--) {
    if (t->sizes[i] != 1 && t->strides[i] != st) return false;
    st *= t->sizes[i];
  }
  return true;
}

const char *tc_device_of(const tc_tensor *t) {
  if (!t) return null_query("tc_device_of"), NULL;
  if (!t->storage || !t->storage->backend) return "host";
  return t->storage->backend->name;
}
