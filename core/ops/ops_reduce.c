/* ops_reduce.c — reductions: sum, mean, max, min, prod, var, argmax, argmin. keepdim is a
 * reshape of the reduced result; counts are size constants so dynamic sizes stay symbolic. */
#include "ops/ops_util.h"

/* A reduction's operand and dims. A rank-0 x reduces as a one-element vector, so dim 0 or -1
 * is accepted for it as in PyTorch. */
typedef struct reduce_plan {
  tc_tensor *orig; /* x as given */
  tc_tensor *x;    /* x as reduced (rank >= 1) */
  int n;
  int dims[TC_MAX_RANK];
} reduce_plan;

static bool plan_reduce(const char *op, tc_tensor *x, int n, const int *dims, reduce_plan *r) {
  r->orig = x;
  r->x = x;
  if (x->rank == 0) {
    for (int i = 0; i < n; i++)
      if (!dims || (dims[i] != 0 && dims[i] != -1))
        return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: dim %d is out of range for a rank-0 tensor (x: [])", op,
                             dims ? dims[i] : 0), false;
    r->x = prim_reshape(x, 1, (tc_sz[]){sz_const(1)});
    n = 0;
  }
  if (!r->x) return false;
  r->n = ops_dims(op, n, dims, r->x, r->dims);
  return r->n >= 0;
}

/* The result in the caller's layout: rank 0 for a rank-0 x, size-1 dims kept when asked. */
static tc_tensor *finish(const reduce_plan *r, tc_tensor *y, bool keepdim) {
  if (r->orig->rank == 0) return prim_reshape(y, 0, (tc_sz[]){sz_const(1)});
  return keepdim ? ops_keepdim(y, r->x, r->n, r->dims) : y;
}

/* Bools reduce as i32 (max is any, min is all) and come back to bool: not every backend
 * reduces bools. */
static tc_tensor *reduce_as(tc_prim p, tc_tensor *x, const reduce_plan *r, tc_dtype dtype) {
  tc_dtype compute = dtype == TC_BOOL ? TC_I32 : dtype;
  return ops_convert(prim_reduce(p, ops_convert(x, compute), r->n, r->dims), dtype);
}

/* max, min, argmax and argmin have no identity: over an empty dim PyTorch raises, so do we
 * (sum and prod give 0 and 1). Sizes as seen now: a traced size of 0 is specialized anyway. */
static bool require_nonempty(const char *op, const reduce_plan *r) {
  for (int i = 0; i < r->n; i++)
    if (r->x->sizes[r->dims[i]] == 0)
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: cannot reduce over dim %d of size 0, the op has no identity "
                           "(x: %s)", op, r->dims[i], OPS_SHAPE(r->orig)), false;
  return true;
}

static tc_dtype sum_dtype(tc_dtype d) { return dtype_is_float(d) ? d : TC_I64; }

static tc_tensor *reduce_op(const char *op, tc_prim p, tc_tensor *x, int n, const int *dims, bool keepdim,
                            tc_dtype dtype) {
  tc_scope *s = ops_begin();
  reduce_plan r;
  if (!plan_reduce(op, x, n, dims, &r)) return ops_end(s, NULL);
  if ((p == TC_PRIM_REDUCE_MAX || p == TC_PRIM_REDUCE_MIN) && !require_nonempty(op, &r)) return ops_end(s, NULL);
  return ops_end(s, finish(&r, reduce_as(p, r.x, &r, dtype), keepdim));
}

tc_tensor *tc_sum(tc_tensor *x, int n_dims, const int *dims, bool keepdim) {
  if (!x) return NULL;
  return reduce_op("tc_sum", TC_PRIM_REDUCE_SUM, x, n_dims, dims, keepdim, sum_dtype(x->dtype));
}

tc_tensor *tc_prod(tc_tensor *x, int n_dims, const int *dims, bool keepdim) {
  if (!x) return NULL;
  return reduce_op("tc_prod", TC_PRIM_REDUCE_PROD, x, n_dims, dims, keepdim, sum_dtype(x->dtype));
}

tc_tensor *tc_max(tc_tensor *x, int n_dims, const int *dims, bool keepdim) {
  if (!x) return NULL;
  return reduce_op("tc_max", TC_PRIM_REDUCE_MAX, x, n_dims, dims, keepdim, x->dtype);
}

tc_tensor *tc_min(tc_tensor *x, int n_dims, const int *dims, bool keepdim) {
  if (!x) return NULL;
  return reduce_op("tc_min", TC_PRIM_REDUCE_MIN, x, n_dims, dims, keepdim, x->dtype);
}

tc_tensor *tc_mean(tc_tensor *x, int n_dims, const int *dims, bool keepdim) {
  if (!x || !ops_require_float("tc_mean", "x", x)) return NULL;
  tc_scope *s = ops_begin();
  reduce_plan r;
  if (!plan_reduce("tc_mean", x, n_dims, dims, &r)) return ops_end(s, NULL);
  tc_tensor *sum = prim_reduce(TC_PRIM_REDUCE_SUM, r.x, r.n, r.dims);
  tc_tensor *mean = prim_binary(TC_PRIM_DIV, sum, ops_count_like(r.x, r.n, r.dims, sum));
  return ops_end(s, finish(&r, mean, keepdim));
}

/* Two-pass: the mean is subtracted first, which keeps the sum of squares well conditioned.
 * The divisor is max(N - correction, 0), as in PyTorch (0 gives inf or NaN). */
tc_tensor *tc_var(tc_tensor *x, int n_dims, const int *dims, int correction, bool keepdim) {
  if (!x || !ops_require_float("tc_var", "x", x)) return NULL;
  tc_scope *s = ops_begin();
  reduce_plan r;
  if (!plan_reduce("tc_var", x, n_dims, dims, &r)) return ops_end(s, NULL);
  tc_tensor *xr = r.x;
  tc_tensor *mean = prim_binary(TC_PRIM_DIV, ops_reduce_back(TC_PRIM_REDUCE_SUM, xr, r.n, r.dims),
                                ops_count_like(xr, r.n, r.dims, xr));
  tc_tensor *xc = prim_binary(TC_PRIM_SUB, xr, mean);
  tc_tensor *ss = prim_reduce(TC_PRIM_REDUCE_SUM, prim_binary(TC_PRIM_MUL, xc, xc), r.n, r.dims);
  if (!ss) return ops_end(s, NULL);
  tc_sz count = sz_const(1), shape[TC_MAX_RANK];
  for (int i = 0; i < r.n; i++) count = sz_mul(count, sz_of(xr, r.dims[i]));
  ops_shape_sz(ss, shape);
  tc_sz divisor = sz_max(sz_sub(count, sz_const(correction)), sz_const(0));
  tc_tensor *var = prim_binary(TC_PRIM_DIV, ss, prim_constant_size(divisor, ss->dtype, ss->rank, shape));
  return ops_end(s, finish(&r, var, keepdim));
}

static tc_tensor *argreduce(const char *op, tc_prim p, tc_tensor *x, int dim, bool keepdim) {
  tc_scope *s = ops_begin();
  reduce_plan r;
  if (!plan_reduce(op, x, 1, &dim, &r) || !require_nonempty(op, &r)) return ops_end(s, NULL);
  tc_tensor *xr = ops_convert(r.x, r.x->dtype == TC_BOOL ? TC_I32 : r.x->dtype);
  return ops_end(s, finish(&r, prim_argreduce(p, xr, r.dims[0]), keepdim));
}

tc_tensor *tc_argmax(tc_tensor *x, int dim, bool keepdim) {
  if (!x) return NULL;
  return argreduce("tc_argmax", TC_PRIM_ARGMAX, x, dim, keepdim);
}

tc_tensor *tc_argmin(tc_tensor *x, int dim, bool keepdim) {
  if (!x) return NULL;
  return argreduce("tc_argmin", TC_PRIM_ARGMIN, x, dim, keepdim);
}
