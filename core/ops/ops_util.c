/* ops_util.c — helpers shared by the op files: scopes, dims, broadcasting, promotion. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/ops_util.h"

/* ---------------------------------------------------------------- scopes and results */
tc_scope *ops_begin(void) { return tc_scope_open(); }

tc_tensor *ops_end(tc_scope *s, tc_tensor *y) {
  if (y) tc_scope_keep(s, y);
  tc_scope_close(s);
  return y;
}

/* A new handle rather than tc_retain(x), so the result is claimed by the caller's scope like
 * every other op result: a real tensor gets a view of the same storage, a proxy a same-shape
 * reshape (simplification folds it away). A tensor whose gradient is wanted also takes the
 * reshape (a view too, in eager mode), so the tape links the result to x. */
tc_tensor *ops_identity(tc_tensor *x) {
  if (!x) return NULL;
  if (!tensor_is_proxy(x) && !(tape_enabled() && tape_needs_grad(x)))
    return tensor_new_view(x, x->rank, x->sizes, x->strides, x->offset);
  tc_sz shape[TC_MAX_RANK];
  ops_shape_sz(x, shape);
  return prim_reshape(x, x->rank, shape);
}

/* ---------------------------------------------------------------- text for messages */
const char *ops_shape(const tc_tensor *x, char *buf, size_t cap) {
  return tc_shape_str(buf, cap, x->rank, x->sizes);
}

/* ---------------------------------------------------------------- dims and sizes */
int ops_dim_in(const char *op, const char *arg, int dim, int rank, const tc_tensor *x) {
  int lo = rank > 0 ? -rank : -1, hi = rank > 0 ? rank - 1 : 0;
  if (dim < lo || dim > hi) {
    core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: %s %d is out of range for a rank-%d tensor (x: %s; expected %d..%d)",
                  op, arg, dim, x->rank, OPS_SHAPE(x), lo, hi);
    return -1;
  }
  return dim < 0 ? dim + rank : dim;
}

int ops_dim(const char *op, const char *arg, int dim, const tc_tensor *x) {
  if (x->rank == 0) {
    core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: %s %d given for a rank-0 tensor (x: [])", op, arg, dim);
    return -1;
  }
  return ops_dim_in(op, arg, dim, x->rank, x);
}

int ops_dims(const char *op, int n, const int *dims, const tc_tensor *x, int *out) {
  if (n == 0) {
    for (int i = 0; i < x->rank; i++) out[i] = i;
    return x->rank;
  }
  if (n < 0 || n > x->rank || !dims) {
    core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: %d dims given for a rank-%d tensor (x: %s)", op, n, x->rank,
                  OPS_SHAPE(x));
    return -1;
  }
  bool seen[TC_MAX_RANK] = {false};
  for (int i = 0; i < n; i++) {
    int d = ops_dim(op, "dim", dims[i], x);
    if (d < 0) return -1;
    if (seen[d]) {
      core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: dim %d appears more than once in dims (x: %s)", op, d, OPS_SHAPE(x));
      return -1;
    }
    seen[d] = true;
  }
  int k = 0;
  for (int d = 0; d < x->rank; d++)
    if (seen[d]) out[k++] = d;
  return k;
}

void ops_shape_sz(const tc_tensor *x, tc_sz *shape) {
  for (int i = 0; i < x->rank; i++) shape[i] = sz_of(x, i);
}

tc_sz ops_numel_range(const tc_tensor *x, int from, int to) {
  tc_sz n = sz_const(1);
  for (int i = from; i < to; i++) n = sz_mul(n, sz_of(x, i));
  return n;
}

bool ops_sz_same(tc_sz a, tc_sz b) { return a.e == b.e && (a.e >= 0 || a.v == b.v); }

bool ops_dtype_valid(tc_dtype d) {
  return d == TC_F32 || d == TC_F64 || d == TC_I32 || d == TC_I64 || d == TC_BOOL;
}

bool ops_check_sizes(const char *op, int rank, const int64_t *sizes) {
  if (rank < 0 || rank > TC_MAX_RANK) {
    core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: rank %d is out of range (0..%d)", op, rank, TC_MAX_RANK);
    return false;
  }
  if (rank > 0 && !sizes) {
    core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: sizes is NULL for rank %d", op, rank);
    return false;
  }
  for (int i = 0; i < rank; i++)
    if (sizes[i] < 0) {
      core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: size %lld at dim %d is negative", op, (long long)sizes[i], i);
      return false;
    }
  return true;
}

/* ---------------------------------------------------------------- broadcasting */
/* One result dim from the two operand sizes. Static 1s and identical sizes decide without a
 * guard; a decision on a symbolic size is guarded through sz_eq. */
static bool broadcast_dim(tc_sz a, tc_sz b, tc_sz *out) {
  if (ops_sz_same(a, b) || (sz_is_static(b) && b.v == 1)) return *out = a, true;
  if (sz_is_static(a) && a.v == 1) return *out = b, true;
  if (sz_eq_const(a, 1)) return *out = b, true;
  if (sz_eq_const(b, 1)) return *out = a, true;
  if (sz_eq(a, b)) return *out = sz_is_static(a) ? a : b, true;
  return false;
}

/* Broadcasts two sz shapes (trailing dims aligned); returns the rank, or -1 with the failing
 * result dim and its two sizes in bad[0..2]. */
static int broadcast_sz(int ra, const tc_sz *sa, int rb, const tc_sz *sb, tc_sz *shape, int64_t *bad) {
  int rank = ra > rb ? ra : rb;
  for (int i = 0; i < rank; i++) {
    int da = i - (rank - ra), db = i - (rank - rb);
    tc_sz a = da >= 0 ? sa[da] : sz_const(1), b = db >= 0 ? sb[db] : sz_const(1);
    if (!broadcast_dim(a, b, &shape[i])) {
      bad[0] = i, bad[1] = a.v, bad[2] = b.v;
      return -1;
    }
  }
  return rank;
}

int ops_broadcast_sizes(int ra, const tc_sz *sa, int rb, const tc_sz *sb, tc_sz *shape) {
  int64_t bad[3];
  return broadcast_sz(ra, sa, rb, sb, shape, bad);
}

int ops_broadcast_shape(const char *op, const char *an, const tc_tensor *a, const char *bn, const tc_tensor *b,
                        tc_sz *shape) {
  tc_sz sa[TC_MAX_RANK], sb[TC_MAX_RANK];
  int64_t bad[3];
  ops_shape_sz(a, sa);
  ops_shape_sz(b, sb);
  int rank = broadcast_sz(a->rank, sa, b->rank, sb, shape, bad);
  if (rank < 0)
    core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: shapes cannot be broadcast (%s: %s, %s: %s): sizes %lld and %lld at dim %d",
                  op, an, OPS_SHAPE(a), bn, OPS_SHAPE(b), (long long)bad[1], (long long)bad[2], (int)bad[0]);
  return rank;
}

tc_tensor *ops_broadcast_to(tc_tensor *x, int rank, const tc_sz *shape) {
  if (!x) return NULL;
  bool same = x->rank == rank;
  for (int i = 0; same && i < rank; i++) same = ops_sz_same(sz_of(x, i), shape[i]);
  if (same) return x;
  int bdims[TC_MAX_RANK];
  for (int i = 0; i < x->rank; i++) bdims[i] = i + rank - x->rank;
  return prim_broadcast_in_dim(x, rank, shape, bdims);
}

bool ops_broadcast2(const char *op, const char *const names[2], tc_tensor **a, tc_tensor **b) {
  tc_sz shape[TC_MAX_RANK];
  int rank = ops_broadcast_shape(op, names[0], *a, names[1], *b, shape);
  if (rank < 0) return false;
  *a = ops_broadcast_to(*a, rank, shape);
  *b = ops_broadcast_to(*b, rank, shape);
  return *a && *b;
}

bool ops_broadcast3(const char *op, const char *const names[3], tc_tensor **a, tc_tensor **b, tc_tensor **c) {
  tc_sz s1[TC_MAX_RANK], sc[TC_MAX_RANK], shape[TC_MAX_RANK];
  int rank = ops_broadcast_shape(op, names[0], *a, names[1], *b, s1);
  if (rank < 0) return false;
  int64_t bad[3];
  ops_shape_sz(*c, sc);
  rank = broadcast_sz(rank, s1, (*c)->rank, sc, shape, bad);
  if (rank < 0) {
    core_error_null(TC_ERR_INVALID_ARGUMENT,
                  "%s: shapes cannot be broadcast (%s: %s, %s: %s, %s: %s): sizes %lld and %lld at dim %d", op,
                  names[0], OPS_SHAPE(*a), names[1], OPS_SHAPE(*b), names[2], OPS_SHAPE(*c), (long long)bad[1],
                  (long long)bad[2], (int)bad[0]);
    return false;
  }
  *a = ops_broadcast_to(*a, rank, shape);
  *b = ops_broadcast_to(*b, rank, shape);
  *c = ops_broadcast_to(*c, rank, shape);
  return *a && *b && *c;
}

/* ---------------------------------------------------------------- dtypes and scalars */
tc_tensor *ops_convert(tc_tensor *x, tc_dtype dtype) {
  if (!x) return NULL;
  return x->dtype == dtype ? x : prim_convert(x, dtype);
}

tc_dtype ops_scalar_dtype(tc_dtype x, double s) {
  bool integral = isfinite(s) && s == floor(s);
  if (dtype_is_float(x)) return x;
  if (!integral) return TC_F32;
  return x == TC_BOOL ? TC_I64 : x;
}

tc_tensor *ops_full_like(const tc_tensor *x, double value, tc_dtype dtype) {
  tc_sz shape[TC_MAX_RANK];
  ops_shape_sz(x, shape);
  return prim_constant(value, dtype, x->rank, shape);
}

tc_tensor *ops_binary_scalar(tc_prim p, tc_tensor *x, double value) {
  if (!x) return NULL;
  return prim_binary(p, x, ops_full_like(x, value, x->dtype));
}

/* ---------------------------------------------------------------- reductions */
tc_tensor *ops_unreduce(tc_tensor *y, const tc_tensor *x, int n, const int *dims) {
  if (!y) return NULL;
  tc_sz shape[TC_MAX_RANK];
  ops_shape_sz(x, shape);
  int bdims[TC_MAX_RANK], k = 0;
  for (int d = 0, j = 0; d < x->rank; d++) {
    if (j < n && dims[j] == d) j++;
    else bdims[k++] = d;
  }
  return prim_broadcast_in_dim(y, x->rank, shape, bdims);
}

tc_tensor *ops_reduce_back(tc_prim p, tc_tensor *x, int n, const int *dims) {
  if (!x) return NULL;
  return ops_unreduce(prim_reduce(p, x, n, dims), x, n, dims);
}

tc_tensor *ops_count_like(const tc_tensor *x, int n, const int *dims, const tc_tensor *like) {
  if (!like) return NULL;
  tc_sz count = sz_const(1), shape[TC_MAX_RANK];
  for (int i = 0; i < n; i++) count = sz_mul(count, sz_of(x, dims[i]));
  ops_shape_sz(like, shape);
  return prim_constant_size(count, like->dtype, like->rank, shape);
}

tc_tensor *ops_keepdim(tc_tensor *y, const tc_tensor *x, int n, const int *dims) {
  if (!y) return NULL;
  tc_sz shape[TC_MAX_RANK];
  for (int d = 0, j = 0; d < x->rank; d++) {
    bool reduced = j < n && dims[j] == d;
    if (reduced) j++;
    shape[d] = reduced ? sz_const(1) : sz_of(x, d);
  }
  return prim_reshape(y, x->rank, shape);
}

bool ops_require_float(const char *op, const char *arg, const tc_tensor *x) {
  if (dtype_is_float(x->dtype)) return true;
  core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: %s must be a floating tensor (f32 or f64), got %s (%s: %s)", op, arg,
                OPS_DTYPE(x), arg, OPS_SHAPE(x));
  return false;
}

bool ops_require_index(const char *op, const char *arg, const tc_tensor *x) {
  if (x->dtype == TC_I32 || x->dtype == TC_I64) return true;
  core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: %s must be an i32 or i64 tensor, got %s (%s: %s)", op, arg, OPS_DTYPE(x),
                arg, OPS_SHAPE(x));
  return false;
}

/* Eager only: a traced index has no values yet, and a compiled kernel keeps the prim's rule
 * (out of range reads 0 / is skipped; docs/primitives.md). Walks the view in row-major order
 * so the message can name the first bad position, as PyTorch's does. */
bool ops_check_index_values(const char *op, const char *arg, tc_tensor *index, int64_t bound, bool has_ignore,
                            int64_t ignore, const char *against) {
  if (tensor_is_proxy(index) || bound < 0) return true;
  int64_t n = tensor_numel(index);
  if (n == 0) return true;
  tc_scope *s = ops_begin();
  tc_tensor *h = tensor_on_host(op, index);
  bool ok = h != NULL;
  const char *base = h ? tensor_host_data(h) : NULL;
  int64_t at[TC_MAX_RANK] = {0};
  for (int64_t k = 0; ok && k < n; k++) {
    int64_t off = 0;
    for (int d = 0; d < h->rank; d++) off += at[d] * h->strides[d];
    int64_t v = h->dtype == TC_I32 ? ((const int32_t *)base)[off] : ((const int64_t *)base)[off];
    if ((v < 0 || v >= bound) && !(has_ignore && v == ignore)) {
      char pos[16 * TC_MAX_RANK + 4] = "[";
      for (int d = 0; d < h->rank; d++)
        snprintf(pos + strlen(pos), sizeof pos - strlen(pos), "%s%" PRId64, d ? ", " : "", at[d]);
      strcat(pos, "]");
      core_error(TC_ERR_INVALID_ARGUMENT, "%s: %s%s is %" PRId64 ", out of range for %s of size %" PRId64 " (%s: %s)",
                 op, arg, h->rank ? pos : "", v, against, bound, arg, OPS_SHAPE(index));
      ok = false;
    }
    for (int d = h->rank - 1; d >= 0 && ++at[d] == h->sizes[d]; d--) at[d] = 0;
  }
  ops_end(s, NULL);
  return ok;
}
