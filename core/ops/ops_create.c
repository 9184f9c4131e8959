/* ops_create.c — creation ops: constants, ranges and seeded random tensors. */
#include <math.h>

#include "ops/ops_util.h"

static bool check_create(const char *op, tc_dtype dtype, int rank, const int64_t *sizes, tc_sz *shape) {
  if (!ops_dtype_valid(dtype))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: dtype %s is not supported", op, tc_dtype_name(dtype)), false;
  if (!ops_check_sizes(op, rank, sizes)) return false;
  for (int i = 0; i < rank; i++) shape[i] = sz_const(sizes[i]);
  return true;
}

static bool check_random(const char *op, tc_dtype dtype) {
  if (dtype == TC_F32 || dtype == TC_F64) return true;
  core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: dtype must be f32 or f64, got %s", op, tc_dtype_name(dtype));
  return false;
}

tc_tensor *tc_full(double value, tc_dtype dtype, int rank, const int64_t *sizes) {
  tc_sz shape[TC_MAX_RANK];
  if (!check_create("tc_full", dtype, rank, sizes, shape)) return NULL;
  return prim_constant(value, dtype, rank, shape);
}

tc_tensor *tc_zeros(tc_dtype dtype, int rank, const int64_t *sizes) {
  tc_sz shape[TC_MAX_RANK];
  if (!check_create("tc_zeros", dtype, rank, sizes, shape)) return NULL;
  return prim_constant(0.0, dtype, rank, shape);
}

tc_tensor *tc_ones(tc_dtype dtype, int rank, const int64_t *sizes) {
  tc_sz shape[TC_MAX_RANK];
  if (!check_create("tc_ones", dtype, rank, sizes, shape)) return NULL;
  return prim_constant(1.0, dtype, rank, shape);
}

tc_tensor *tc_full_like(tc_tensor *x, double value, tc_dtype dtype) {
  if (!x) return NULL;
  if (!ops_dtype_valid(dtype))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_full_like: dtype %s is not supported", tc_dtype_name(dtype));
  tc_sz shape[TC_MAX_RANK];
  for (int i = 0; i < x->rank; i++) shape[i] = sz_of(x, i);
  return prim_constant(value, dtype, x->rank, shape);
}

tc_tensor *tc_zeros_like(tc_tensor *x) { return x ? tc_full_like(x, 0.0, x->dtype) : NULL; }
tc_tensor *tc_ones_like(tc_tensor *x) { return x ? tc_full_like(x, 1.0, x->dtype) : NULL; }

tc_tensor *tc_scalar(double value, tc_dtype dtype) {
  tc_sz shape[1];
  if (!check_create("tc_scalar", dtype, 0, NULL, shape)) return NULL;
  return prim_constant(value, dtype, 0, shape);
}

/* Values are start + i*step computed in f64 (as PyTorch's CPU kernel accumulates), then
 * converted, so integer ranges are exact. */
tc_tensor *tc_arange(double start, double end, double step, tc_dtype dtype) {
  if (!ops_dtype_valid(dtype) || dtype == TC_BOOL)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_arange: dtype %s is not supported", tc_dtype_name(dtype));
  if (!isfinite(start) || !isfinite(end) || !isfinite(step) || step == 0)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_arange: start, end and step must be finite and step nonzero "
                         "(start %g, end %g, step %g)", start, end, step);
  if ((end - start) / step < 0)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_arange: the sign of step does not lead from start to end "
                         "(start %g, end %g, step %g)", start, end, step);
  double n = ceil((end - start) / step);
  if (n > (double)INT64_MAX / 2)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_arange: too many elements (start %g, end %g, step %g)",
                         start, end, step);
  tc_sz shape[1] = {sz_const((int64_t)n)};
  tc_scope *s = ops_begin();
  tc_tensor *i = prim_iota(TC_F64, 1, shape, 0);
  tc_tensor *v = ops_binary_scalar(TC_PRIM_ADD, ops_binary_scalar(TC_PRIM_MUL, i, step), start);
  return ops_end(s, ops_convert(v, dtype));
}

tc_tensor *tc_rand(uint64_t seed, tc_dtype dtype, int rank, const int64_t *sizes) {
  tc_sz shape[TC_MAX_RANK];
  if (!check_random("tc_rand", dtype) || !check_create("tc_rand", dtype, rank, sizes, shape)) return NULL;
  return prim_random(seed, 0, dtype, rank, shape);
}

/* Box-Muller on two uniform streams of one seed: offsets 0 and numel, so no element shares a
 * Philox counter. 1 - u1 lies in (0, 1], keeping the log finite. */
tc_tensor *tc_randn(uint64_t seed, tc_dtype dtype, int rank, const int64_t *sizes) {
  tc_sz shape[TC_MAX_RANK];
  if (!check_random("tc_randn", dtype) || !check_create("tc_randn", dtype, rank, sizes, shape)) return NULL;
  uint64_t numel = 1;
  for (int i = 0; i < rank; i++) numel *= (uint64_t)sizes[i];
  tc_scope *s = ops_begin();
  tc_tensor *u1 = prim_random(seed, 0, dtype, rank, shape);
  tc_tensor *u2 = prim_random(seed, numel, dtype, rank, shape);
  tc_tensor *one_minus = ops_binary_scalar(TC_PRIM_ADD, prim_unary(TC_PRIM_NEG, u1), 1.0);
  tc_tensor *radius = prim_unary(TC_PRIM_SQRT, ops_binary_scalar(TC_PRIM_MUL, prim_unary(TC_PRIM_LOG, one_minus), -2.0));
  tc_tensor *angle = prim_unary(TC_PRIM_COS, ops_binary_scalar(TC_PRIM_MUL, u2, 2.0 * M_PI));
  return ops_end(s, prim_binary(TC_PRIM_MUL, radius, angle));
}
