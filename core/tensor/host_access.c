/* host_access.c — tensors from and to host memory, and between devices. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "tensor/tensor.h"

void host_copy_strided(void *dst, const void *src, size_t itemsize, int rank, const int64_t *sizes,
                       const int64_t *strides) {
  int64_t numel = 1;
  for (int i = 0; i < rank; i++)
    numel *= sizes[i];
  if (numel == 0) return;
  if (rank == 0) {
    memcpy(dst, src, itemsize);
    return;
  }
  int64_t idx[TC_MAX_RANK] = {0};
  const int last = rank - 1;
  const int64_t n_last = sizes[last], st_last = strides[last];
  char *d = dst;
  const char *s = src;
  for (int64_t done = 0; done < numel; done += n_last) {
    int64_t off = 0;
    for (int i = 0; i < last; i++)
      off += idx[i] * strides[i];
    const char *row = s + off * (int64_t)itemsize;
    if (st_last == 1) {
      memcpy(d, row, (size_t)n_last * itemsize);
      d += (size_t)n_last * itemsize;
    } else {
      for (int64_t j = 0; j < n_last; j++, d += itemsize)
        memcpy(d, row + j * st_last * (int64_t)itemsize, itemsize);
    }
    for (int i = last - 1; i >= 0; i--) {
      if (++idx[i] < sizes[i]) break;
      idx[i] = 0;
    }
  }
}

static bool dtype_supported(tc_dtype d) {
  return d == TC_F32 || d == TC_F64 || d == TC_I32 || d == TC_I64 || d == TC_BOOL;
}

tc_tensor *tc_from_host(const void *data, tc_dtype dtype, int rank, const int64_t *sizes) {
  if (!dtype_supported(dtype))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_from_host: dtype %s is not supported", tc_dtype_name(dtype));
  if (rank < 0 || rank > TC_MAX_RANK)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_from_host: rank %d out of range (0..%d)", rank, TC_MAX_RANK);
  if (rank > 0 && !sizes) return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_from_host: sizes is NULL");
  for (int i = 0; i < rank; i++)
    if (sizes[i] < 0)
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_from_host: size %lld at dim %d is negative",
                           (long long)sizes[i], i);
  tc_tensor *t = tensor_new_host(dtype, rank, sizes);
  if (!t) return NULL;
  size_t bytes = (size_t)tensor_numel(t) * tck_dtype_size(dtype);
  if (bytes && !data) {
    tc_release(t);
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_from_host: data is NULL");
  }
  if (bytes) memcpy(t->storage->host, data, bytes);
  if (dtype == TC_BOOL) /* stored as exactly 0 or 1, whatever the caller's bytes were */
    for (size_t i = 0; i < bytes; i++)
      ((uint8_t *)t->storage->host)[i] = ((uint8_t *)t->storage->host)[i] != 0;
  return t;
}

tc_tensor *tc_from_f32(const float *data, int rank, const int64_t *sizes) {
  return tc_from_host(data, TC_F32, rank, sizes);
}

/* Wraps the plugin's message (tc_last_error) with what was being done; copies it first since
 * the message buffer is rewritten. */
static tc_status backend_fail(tc_status s, const char *op, const char *what, const tc_backend *be) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tc_last_error());
  return core_error(s, "%s: %s on '%s' failed: %s", op, what, be->name, msg);
}

/* Reads the elements of a real tensor (host or device storage) row-major into dst. */
static tc_status read_real(const char *op, const tc_tensor *t, void *dst) {
  const size_t item = tck_dtype_size(t->dtype);
  const int64_t numel = tensor_numel(t);
  if (numel == 0) return TC_OK;
  if (!t->storage) return core_error(TC_ERR_INTERNAL, "%s: tensor has no storage", op);
  if (!t->storage->backend) {
    host_copy_strided(dst, tensor_host_data(t), item, t->rank, t->sizes, t->strides);
    return TC_OK;
  }
  /* Device storage: read the span the view covers (strides are never negative), then gather. */
  tc_backend *be = t->storage->backend;
  int64_t hi = 0;
  for (int i = 0; i < t->rank; i++)
    hi += (t->sizes[i] - 1) * t->strides[i];
  size_t span = (size_t)(hi + 1) * item, at = (size_t)t->offset * item;
  if (tc_is_contiguous(t)) {
    tc_status s = backend_buffer_read(be, t->storage->buffer, at, dst, (size_t)numel * item);
    return s == TC_OK ? TC_OK : backend_fail(s, op, "reading a buffer", be);
  }
  void *tmp = malloc(span);
  if (!tmp) return core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes)", op, span);
  tc_status s = backend_buffer_read(be, t->storage->buffer, at, tmp, span);
  if (s == TC_OK) host_copy_strided(dst, tmp, item, t->rank, t->sizes, t->strides);
  free(tmp);
  return s == TC_OK ? TC_OK : backend_fail(s, op, "reading a buffer", be);
}

/* A NULL tensor is usually the result of an earlier failure: keep that message. */
static tc_status null_tensor(const char *op) {
  tc_status s = tc_last_status();
  return s != TC_OK ? s : core_error(TC_ERR_INVALID_ARGUMENT, "%s: tensor is NULL", op);
}

static tc_status read_any(const char *op, const tc_tensor *t, void *dst) {
  if (!tensor_is_proxy(t)) return read_real(op, t, dst);
  tc_tensor *real = NULL;
  TC_RETURN_IF_ERROR(tensor_materialize(op, t, &real));
  tc_status s = read_real(op, real, dst);
  tc_release(real);
  return s;
}

tc_status tc_to_host(const tc_tensor *t, void *dst, size_t bytes) {
  if (!t) return null_tensor("tc_to_host");
  size_t want = (size_t)tensor_numel(t) * tck_dtype_size(t->dtype);
  if (bytes != want) {
    char sh[160];
    return core_error(TC_ERR_INVALID_ARGUMENT, "tc_to_host: %zu bytes given, the %s tensor of shape %s needs %zu", bytes,
                    tc_dtype_name(t->dtype), tc_shape_str(sh, sizeof sh, t->rank, t->sizes), want);
  }
  if (want && !dst) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_to_host: dst is NULL");
  return read_any("tc_to_host", t, dst);
}

double tc_item(const tc_tensor *t) {
  if (!t) {
    null_tensor("tc_item");
    return NAN;
  }
  if (tensor_numel(t) != 1) {
    char sh[160];
    core_error(TC_ERR_INVALID_ARGUMENT, "tc_item: tensor has %lld elements (shape %s), expected 1",
             (long long)tensor_numel(t), tc_shape_str(sh, sizeof sh, t->rank, t->sizes));
    return NAN;
  }
  union {
    float f32;
    double f64;
    int32_t i32;
    int64_t i64;
    uint8_t b;
  } v;
  if (read_any("tc_item", t, &v) != TC_OK) return NAN;
  switch (t->dtype) {
  case TC_F32: return v.f32;
  case TC_F64: return v.f64;
  case TC_I32: return v.i32;
  case TC_I64: return (double)v.i64;
  case TC_BOOL: return v.b ? 1.0 : 0.0;
  default: core_error(TC_ERR_UNSUPPORTED, "tc_item: dtype %s", tc_dtype_name(t->dtype)); return NAN;
  }
}

/* ---------------------------------------------------------------- devices */
static tc_tensor *host_copy_of(const char *op, tc_tensor *t) {
  tc_tensor *h = tensor_new_host(t->dtype, t->rank, t->sizes);
  if (!h) return NULL;
  if (read_real(op, t, h->storage->host) != TC_OK) {
    tc_release(h);
    return NULL;
  }
  return h;
}

tc_tensor *tensor_on_host(const char *op, tc_tensor *t) {
  if (!t) return NULL;
  if (tensor_is_proxy(t)) return core_error_null(TC_ERR_INTERNAL, "%s: a traced tensor has no data", op);
  if (!t->storage->backend) return tensor_new_view(t, t->rank, t->sizes, t->strides, t->offset);
  return host_copy_of(op, t);
}

tc_status tensor_write(const char *op, tc_tensor *dst, tc_tensor *src) {
  if (tensor_is_proxy(dst) || tensor_is_proxy(src) || !dst->storage || !src->storage)
    return core_error(TC_ERR_INTERNAL, "%s: a traced tensor has no data to write", op);
  if (!tc_is_contiguous(dst)) return core_error(TC_ERR_INVALID_ARGUMENT, "%s: the destination is not contiguous", op);
  if (dst->storage == src->storage && dst->offset == src->offset && tc_is_contiguous(src)) return TC_OK;
  const size_t bytes = (size_t)tensor_numel(dst) * tck_dtype_size(dst->dtype);
  /* Straight into host memory, unless src reads the same storage (a shifted view of it). */
  if (!dst->storage->backend && dst->storage != src->storage) return read_real(op, src, tensor_host_data(dst));
  void *tmp = malloc(bytes ? bytes : 1);
  if (!tmp) return core_error(TC_ERR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes)", op, bytes);
  tc_backend *be = dst->storage->backend;
  tc_status s = read_real(op, src, tmp);
  if (s == TC_OK && bytes && !be) memcpy(tensor_host_data(dst), tmp, bytes);
  if (s == TC_OK && bytes && be) {
    s = backend_buffer_write(be, dst->storage->buffer, (size_t)dst->offset * tck_dtype_size(dst->dtype), tmp, bytes);
    if (s != TC_OK) s = backend_fail(s, op, "writing a buffer", be);
  }
  free(tmp);
  return s;
}

tc_tensor *tc_to_device(tc_tensor *t, const char *name) {
  if (!t) return NULL;
  if (!name) return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_to_device: name is NULL");
  if (tensor_is_proxy(t))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_to_device: cannot move a traced tensor (inside tc_compile)");
  if (strcmp(name, "host") == 0) return tensor_on_host("tc_to_device", t);
  tc_backend *be = backend_find(name, NULL);
  if (!be) return NULL;
  return tensor_to_backend("tc_to_device", t, be);
}

tc_tensor *tensor_to_backend(const char *op, tc_tensor *t, tc_backend *be) {
  if (!t->storage) return core_error_null(TC_ERR_INTERNAL, "%s: tensor has no storage (a traced tensor)", op);
  if (!be || be->host_memory) return tensor_on_host(op, t);
  if (t->storage->backend == be) return tensor_new_view(t, t->rank, t->sizes, t->strides, t->offset);
  /* Stage through a contiguous host copy, then one write. */
  tc_tensor *h = tc_is_contiguous(t) && !t->storage->backend ? tensor_new_view(t, t->rank, t->sizes, t->strides, t->offset)
                                                              : host_copy_of(op, t);
  tc_tensor *d = h ? tensor_new_on_backend(be, op, t->dtype, t->rank, t->sizes) : NULL;
  const size_t bytes = (size_t)tensor_numel(t) * tck_dtype_size(t->dtype);
  tc_status s = d && bytes ? backend_buffer_write(be, d->storage->buffer, 0, tensor_host_data(h), bytes) : TC_OK;
  tc_release(h);
  if (s != TC_OK) {
    tc_release(d);
    backend_fail(s, op, "writing a buffer", be);
    return NULL;
  }
  return d;
}


tc_status tc_synchronize(const char *name) {
  if (!name) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_synchronize: name is NULL");
  if (strcmp(name, "host") == 0) return TC_OK;
  tc_backend *be = backend_find(name, NULL);
  if (!be) return tc_last_status();
  /* Host-memory backends finish every call before returning, but may still have reported an
   * asynchronous failure: synchronize delivers it. */
  tc_status s = backend_synchronize(be);
  return s == TC_OK ? TC_OK : backend_fail(s, "tc_synchronize", "waiting for the device", be);
}
