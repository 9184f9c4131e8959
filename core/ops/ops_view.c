/* ops_view.c — views: reshape, flatten, permute, slice, expand, squeeze, and dtype/layout
 * conversions. Inferred sizes (-1, flatten) are computed with tc_sz so they stay symbolic. */
#include <stdio.h>
#include <string.h>

#include "ops/ops_util.h"

static const char *sizes_str(int n, const int64_t *sizes, char *buf, size_t cap) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < n && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, i ? ", %lld" : "%lld", (long long)sizes[i]);
  return buf;
}
#define SIZES_STR(n, s) sizes_str((n), (s), (char[160]){0}, 160)

/* Fills out[n] from sizes where at most one is -1, inferred so the product is `total`.
 * Returns false with an error naming op when that is impossible. */
static bool infer_sizes(const char *op, const tc_tensor *x, tc_sz total, int n, const int64_t *sizes, tc_sz *out) {
  int infer = -1;
  tc_sz known = sz_const(1);
  for (int i = 0; i < n; i++) {
    if (sizes[i] == -1 && infer < 0) {
      infer = i;
      continue;
    }
    if (sizes[i] < 0)
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: invalid size %lld in (%s) (x: %s; only one -1 is allowed)",
                           op, (long long)sizes[i], SIZES_STR(n, sizes), OPS_SHAPE(x)), false;
    out[i] = sz_const(sizes[i]);
    known = sz_mul(known, out[i]);
  }
  /* Without -1, a symbolic total must equal the sizes' product: sz_eq guards it, which pins
   * the symbol (a reshape of a dynamic dim into constant sizes specializes it, as in torch). */
  bool fits = infer >= 0 ? known.v != 0 && total.v % known.v == 0 : sz_eq(known, total);
  if (!fits)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: shape (%s) is invalid for %lld elements (x: %s)", op,
                         SIZES_STR(n, sizes), (long long)total.v, OPS_SHAPE(x)), false;
  if (infer >= 0) out[infer] = sz_floordiv(total, known);
  return true;
}

tc_tensor *tc_reshape(tc_tensor *x, int rank, const int64_t *sizes) {
  if (!x) return NULL;
  if (rank < 0 || rank > TC_MAX_RANK || (rank > 0 && !sizes))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_reshape: rank %d is invalid (0..%d, sizes non-NULL)", rank,
                         TC_MAX_RANK);
  tc_sz shape[TC_MAX_RANK];
  if (!infer_sizes("tc_reshape", x, sz_numel(x), rank, sizes, shape)) return NULL;
  return prim_reshape(x, rank, shape);
}

tc_tensor *tc_flatten(tc_tensor *x, int start_dim, int end_dim) {
  if (!x) return NULL;
  if (x->rank == 0) return prim_reshape(x, 1, (tc_sz[]){sz_const(1)});
  int a = ops_dim("tc_flatten", "start_dim", start_dim, x), b = a < 0 ? -1 : ops_dim("tc_flatten", "end_dim", end_dim, x);
  if (b < 0) return NULL;
  if (a > b)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_flatten: start_dim %d comes after end_dim %d (x: %s)", start_dim,
                         end_dim, OPS_SHAPE(x));
  tc_sz shape[TC_MAX_RANK];
  int r = 0;
  for (int i = 0; i < a; i++) shape[r++] = sz_of(x, i);
  shape[r++] = ops_numel_range(x, a, b + 1);
  for (int i = b + 1; i < x->rank; i++) shape[r++] = sz_of(x, i);
  return prim_reshape(x, r, shape);
}

tc_tensor *tc_unflatten(tc_tensor *x, int dim, int n, const int64_t *sizes) {
  if (!x) return NULL;
  int d = ops_dim("tc_unflatten", "dim", dim, x);
  if (d < 0) return NULL;
  if (n < 1 || !sizes || x->rank - 1 + n > TC_MAX_RANK)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_unflatten: %d sizes cannot replace dim %d (x: %s)", n, d,
                         OPS_SHAPE(x));
  tc_sz shape[TC_MAX_RANK];
  int r = 0;
  for (int i = 0; i < d; i++) shape[r++] = sz_of(x, i);
  if (!infer_sizes("tc_unflatten", x, sz_of(x, d), n, sizes, shape + r)) return NULL;
  r += n;
  for (int i = d + 1; i < x->rank; i++) shape[r++] = sz_of(x, i);
  return prim_reshape(x, r, shape);
}

tc_tensor *tc_permute(tc_tensor *x, const int *perm) {
  if (!x) return NULL;
  if (x->rank > 0 && !perm) return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_permute: perm is NULL (x: %s)", OPS_SHAPE(x));
  int p[TC_MAX_RANK];
  bool seen[TC_MAX_RANK] = {false};
  for (int i = 0; i < x->rank; i++) {
    p[i] = ops_dim("tc_permute", "perm entry", perm[i], x);
    if (p[i] < 0) return NULL;
    if (seen[p[i]])
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_permute: dim %d appears more than once in perm (x: %s)", p[i],
                           OPS_SHAPE(x));
    seen[p[i]] = true;
  }
  return prim_permute(x, p);
}

tc_tensor *tc_transpose(tc_tensor *x, int dim0, int dim1) {
  if (!x) return NULL;
  if (x->rank == 0 && (dim0 == 0 || dim0 == -1) && (dim1 == 0 || dim1 == -1)) return ops_identity(x);
  int a = ops_dim("tc_transpose", "dim0", dim0, x), b = a < 0 ? -1 : ops_dim("tc_transpose", "dim1", dim1, x);
  if (b < 0) return NULL;
  int p[TC_MAX_RANK];
  for (int i = 0; i < x->rank; i++) p[i] = i;
  p[a] = b, p[b] = a;
  return prim_permute(x, p);
}

/* Python slicing: negative bounds count from the end, bounds clamp to [0, size]. The start
 * must be a number for the SLICE prim, so a negative start on a dynamic size pins that size;
 * the stop stays symbolic (x[:, :-1] is s1 - 1 long). */
tc_tensor *tc_slice(tc_tensor *x, int dim, int64_t start, int64_t stop, int64_t step) {
  if (!x) return NULL;
  int d = ops_dim("tc_slice", "dim", dim, x);
  if (d < 0) return NULL;
  if (step < 1)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_slice: step must be positive, got %lld (x: %s)", (long long)step,
                         OPS_SHAPE(x));
  tc_sz size = sz_of(x, d);
  if (start < 0) {
    int64_t n = sz_is_static(size) ? size.v : tc_size(x, d);
    start = start + n < 0 ? 0 : start + n;
  }
  if (start > size.v) start = sz_is_static(size) ? size.v : tc_size(x, d);
  tc_sz end;
  if (stop < 0) end = sz_add(size, sz_const(stop));
  else if (stop >= size.v && (sz_is_static(size) || stop == INT64_MAX)) end = size;
  else end = sz_min(sz_const(stop), size);
  tc_sz len = sz_max(sz_sub(end, sz_const(start)), sz_const(0));
  /* ceil(len / step) as floor((len - 1) / step) + 1: len + step - 1 could overflow for a huge step
   * (and floor division keeps 0 at 0). */
  if (step > 1) len = sz_add(sz_floordiv(sz_sub(len, sz_const(1)), sz_const(step)), sz_const(1));
  int64_t starts[TC_MAX_RANK], steps[TC_MAX_RANK];
  tc_sz shape[TC_MAX_RANK];
  for (int i = 0; i < x->rank; i++) starts[i] = 0, steps[i] = 1, shape[i] = sz_of(x, i);
  starts[d] = start, steps[d] = step, shape[d] = len;
  return prim_slice(x, starts, steps, shape);
}

tc_tensor *tc_expand(tc_tensor *x, int rank, const int64_t *sizes) {
  if (!x) return NULL;
  if (rank < x->rank || rank > TC_MAX_RANK || (rank > 0 && !sizes))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_expand: cannot expand x: %s to rank %d", OPS_SHAPE(x), rank);
  tc_sz shape[TC_MAX_RANK];
  int lead = rank - x->rank;
  for (int i = 0; i < rank; i++) {
    int64_t want = sizes[i];
    tc_sz have = i >= lead ? sz_of(x, i - lead) : sz_const(1);
    bool ok = want >= 0 || (want == -1 && i >= lead);
    if (ok && want == -1) shape[i] = have;
    else if (ok && ops_sz_same(have, sz_const(want))) shape[i] = have;
    else if (ok && sz_eq_const(have, 1)) shape[i] = sz_const(want);
    else if (ok && sz_eq_const(have, want)) shape[i] = have;
    else
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_expand: cannot expand x: %s to (%s): size %lld at dim %d",
                           OPS_SHAPE(x), SIZES_STR(rank, sizes), (long long)want, i);
  }
  tc_tensor *y = ops_broadcast_to(x, rank, shape);
  return y == x ? ops_identity(x) : y;
}

tc_tensor *tc_unsqueeze(tc_tensor *x, int dim) {
  if (!x) return NULL;
  int d = ops_dim_in("tc_unsqueeze", "dim", dim, x->rank + 1, x);
  if (d < 0) return NULL;
  if (x->rank == TC_MAX_RANK)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_unsqueeze: x: %s already has the maximum rank %d", OPS_SHAPE(x),
                         TC_MAX_RANK);
  tc_sz shape[TC_MAX_RANK];
  for (int i = 0, r = 0; i <= x->rank; i++) shape[i] = i == d ? sz_const(1) : sz_of(x, r++);
  return prim_reshape(x, x->rank + 1, shape);
}

/* Like PyTorch: a dim whose size is not 1 is left alone. */
tc_tensor *tc_squeeze(tc_tensor *x, int dim) {
  if (!x) return NULL;
  if (x->rank == 0 && (dim == 0 || dim == -1)) return ops_identity(x);
  int d = ops_dim("tc_squeeze", "dim", dim, x);
  if (d < 0) return NULL;
  if (!sz_eq_const(sz_of(x, d), 1)) return ops_identity(x);
  tc_sz shape[TC_MAX_RANK];
  for (int i = 0, r = 0; i < x->rank; i++)
    if (i != d) shape[r++] = sz_of(x, i);
  return prim_reshape(x, x->rank - 1, shape);
}

/* A row-major copy: CONVERT to the same dtype is the prims' materializing copy. Proxies are
 * always contiguous (the scheduler decides layouts). */
tc_tensor *tc_contiguous(tc_tensor *x) {
  if (!x) return NULL;
  if (tensor_is_proxy(x) || tc_is_contiguous(x)) return ops_identity(x);
  return prim_convert(x, x->dtype);
}

tc_tensor *tc_to_dtype(tc_tensor *x, tc_dtype dtype) {
  if (!x) return NULL;
  if (!ops_dtype_valid(dtype))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_to_dtype: dtype %s is not supported (x: %s %s)",
                         tc_dtype_name(dtype), OPS_DTYPE(x), OPS_SHAPE(x));
  return x->dtype == dtype ? ops_identity(x) : prim_convert(x, dtype);
}

/* torch.flip: the elements of the listed dims in reverse order. */
tc_tensor *tc_flip(tc_tensor *x, int n_dims, const int *dims) {
  if (!x) return NULL;
  if (n_dims < 0 || n_dims > x->rank || (n_dims > 0 && !dims))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_flip: %d dims for a tensor of rank %d (x: %s)", n_dims, x->rank,
                           OPS_SHAPE(x));
  int norm[TC_MAX_RANK];
  for (int i = 0; i < n_dims; i++) {
    norm[i] = ops_dim("tc_flip", "dims", dims[i], x);
    if (norm[i] < 0) return NULL;
    for (int j = 0; j < i; j++)
      if (norm[j] == norm[i])
        return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_flip: dim %d is listed twice (x: %s)", dims[i], OPS_SHAPE(x));
  }
  if (n_dims == 0) return ops_identity(x);
  return prim_reverse(x, n_dims, norm);
}

/* torch.nn.functional.pad, constant mode: pads[2k], pads[2k+1] are the elements added before
 * and after dim rank-1-k (the last dim first, as in PyTorch). */
tc_tensor *tc_pad(tc_tensor *x, int n_pads, const int64_t *pads, double value) {
  if (!x) return NULL;
  if (n_pads < 0 || n_pads % 2 || n_pads / 2 > x->rank || (n_pads > 0 && !pads))
    return core_error_null(TC_ERR_INVALID_ARGUMENT,
                           "tc_pad: %d pads for a tensor of rank %d: give a (before, after) pair for each of the last "
                           "dims, at most %d values (x: %s)",
                           n_pads, x->rank, 2 * x->rank, OPS_SHAPE(x));
  int64_t lo[TC_MAX_RANK] = {0}, hi[TC_MAX_RANK] = {0};
  for (int k = 0; k < n_pads / 2; k++) {
    if (pads[2 * k] < 0 || pads[2 * k + 1] < 0)
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_pad: pads must be >= 0, got (%lld, %lld) for dim %d (x: %s)",
                             (long long)pads[2 * k], (long long)pads[2 * k + 1], x->rank - 1 - k, OPS_SHAPE(x));
    lo[x->rank - 1 - k] = pads[2 * k];
    hi[x->rank - 1 - k] = pads[2 * k + 1];
  }
  return prim_pad(x, lo, hi, value);
}
