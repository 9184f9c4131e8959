/* ops_elementwise.c — arithmetic, comparisons, logic, where, unary math and activations.
 * Binary ops broadcast and promote as PyTorch does; the prims then see one shape and dtype. */
#include <math.h>

#include "ops/ops_util.h"

static bool both_bool(const tc_tensor *a, const tc_tensor *b) { return a->dtype == TC_BOOL && b->dtype == TC_BOOL; }

/* Broadcast a and b, convert both to dtype, apply p. */
static tc_tensor *binary_as(const char *op, tc_prim p, tc_tensor *a, tc_tensor *b, tc_dtype dtype) {
  tc_scope *s = ops_begin();
  if (!ops_broadcast2(op, OPS_AB, &a, &b)) return ops_end(s, NULL);
  return ops_end(s, prim_binary(p, ops_convert(a, dtype), ops_convert(b, dtype)));
}

static tc_tensor *binary(const char *op, tc_prim p, tc_tensor *a, tc_tensor *b) {
  return binary_as(op, p, a, b, dtype_promote(a->dtype, b->dtype));
}

/* Integer powers are computed in f64 and rounded back: exact while the result fits 2^53, and
 * a negative exponent gives the integer result 0 (or +-1 for a base of +-1), as in PyTorch. */
static tc_tensor *pow_int(tc_tensor *a, tc_tensor *b, tc_dtype dtype) {
  tc_tensor *y = prim_binary(TC_PRIM_POW, ops_convert(a, TC_F64), ops_convert(b, TC_F64));
  return prim_convert(prim_unary(TC_PRIM_ROUND, y), dtype);
}

/* x^value for floats as PyTorch computes it: its CPU and CUDA kernels turn the exponents 2, 3,
 * 0.5, -0.5, -1 and -2 into products, square roots and reciprocals (so pow(-inf, 0.5) is NaN and
 * pow(-0, 0.5) is -0, as sqrt has them, where C's pow gives +inf and +0), and call pow otherwise. */
static tc_tensor *pow_float_scalar(tc_tensor *x, double value) {
  if (value == 2.0) return prim_binary(TC_PRIM_MUL, x, x);
  if (value == 3.0) return prim_binary(TC_PRIM_MUL, prim_binary(TC_PRIM_MUL, x, x), x);
  if (value == 0.5) return prim_unary(TC_PRIM_SQRT, x);
  if (value == -0.5) return prim_unary(TC_PRIM_RSQRT, x);
  if (value == -1.0) return prim_unary(TC_PRIM_RECIPROCAL, x);
  if (value == -2.0) return prim_unary(TC_PRIM_RECIPROCAL, prim_binary(TC_PRIM_MUL, x, x));
  return ops_binary_scalar(TC_PRIM_POW, x, value);
}

/* ---------------------------------------------------------------- arithmetic */
tc_tensor *tc_add(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  return binary("tc_add", both_bool(a, b) ? TC_PRIM_OR : TC_PRIM_ADD, a, b);
}

tc_tensor *tc_sub(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  if (both_bool(a, b))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_sub: subtracting bool tensors is not supported (a: %s bool, "
                         "b: %s bool); use tc_logical_* ops", OPS_SHAPE(a), OPS_SHAPE(b));
  return binary("tc_sub", TC_PRIM_SUB, a, b);
}

tc_tensor *tc_mul(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  return binary("tc_mul", both_bool(a, b) ? TC_PRIM_AND : TC_PRIM_MUL, a, b);
}

tc_tensor *tc_div(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  tc_dtype d = dtype_promote(a->dtype, b->dtype);
  return binary_as("tc_div", TC_PRIM_DIV, a, b, dtype_is_float(d) ? d : TC_F32);
}

/* torch.div(a, b, rounding_mode="trunc"): integers divide truncating toward zero (DIV's own
 * rule, division by zero giving 0); floats round a / b toward zero, keeping -0, NaN and Inf. */
tc_tensor *tc_div_trunc(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  tc_dtype d = dtype_promote(a->dtype, b->dtype);
  if (d == TC_BOOL)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_div_trunc: bool operands are not supported (a: %s, b: %s)",
                           OPS_SHAPE(a), OPS_SHAPE(b));
  if (!dtype_is_float(d)) return binary("tc_div_trunc", TC_PRIM_DIV, a, b);
  tc_scope *s = ops_begin();
  tc_tensor *q = binary("tc_div_trunc", TC_PRIM_DIV, a, b);
  tc_tensor *neg = q ? prim_binary(TC_PRIM_LT, q, ops_convert(tc_zeros_like(q), q->dtype)) : NULL;
  return ops_end(s, prim_where(neg, prim_unary(TC_PRIM_CEIL, q), prim_unary(TC_PRIM_FLOOR, q)));
}

/* remainder and fmod: numbers only, as in PyTorch (bool has no remainder). */
static tc_tensor *binary_numbers(const char *op, tc_prim p, tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  if (dtype_promote(a->dtype, b->dtype) == TC_BOOL)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: bool operands are not supported (a: %s, b: %s)", op,
                           OPS_SHAPE(a), OPS_SHAPE(b));
  return binary(op, p, a, b);
}

/* torch.remainder: the result takes the divisor's sign; torch.fmod: the dividend's. */
tc_tensor *tc_remainder(tc_tensor *a, tc_tensor *b) { return binary_numbers("tc_remainder", TC_PRIM_REMAINDER, a, b); }
tc_tensor *tc_fmod(tc_tensor *a, tc_tensor *b) { return binary_numbers("tc_fmod", TC_PRIM_FMOD, a, b); }

tc_tensor *tc_pow(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  tc_dtype d = dtype_promote(a->dtype, b->dtype);
  if (d == TC_BOOL)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_pow: bool operands are not supported (a: %s, b: %s)",
                         OPS_SHAPE(a), OPS_SHAPE(b));
  if (dtype_is_float(d)) return binary("tc_pow", TC_PRIM_POW, a, b);
  tc_scope *s = ops_begin();
  if (!ops_broadcast2("tc_pow", OPS_AB, &a, &b)) return ops_end(s, NULL);
  return ops_end(s, pow_int(a, b, d));
}

tc_tensor *tc_maximum(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  return binary("tc_maximum", both_bool(a, b) ? TC_PRIM_OR : TC_PRIM_MAX, a, b);
}

tc_tensor *tc_minimum(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  return binary("tc_minimum", both_bool(a, b) ? TC_PRIM_AND : TC_PRIM_MIN, a, b);
}

/* ---------------------------------------------------------------- scalar variants */
/* x converted to the dtype of "x op s", then p against s as a constant of that dtype. */
static tc_tensor *scalar_op(tc_prim p, tc_tensor *x, double value) {
  tc_scope *s = ops_begin();
  return ops_end(s, ops_binary_scalar(p, ops_convert(x, ops_scalar_dtype(x->dtype, value)), value));
}

tc_tensor *tc_add_scalar(tc_tensor *a, double value) {
  if (!a) return NULL;
  return scalar_op(TC_PRIM_ADD, a, value);
}

tc_tensor *tc_mul_scalar(tc_tensor *a, double value) {
  if (!a) return NULL;
  return scalar_op(TC_PRIM_MUL, a, value);
}

tc_tensor *tc_pow_scalar(tc_tensor *a, double value) {
  if (!a) return NULL;
  tc_dtype d = ops_scalar_dtype(a->dtype, value);
  if (dtype_is_float(d)) {
    tc_scope *s = ops_begin();
    return ops_end(s, pow_float_scalar(ops_convert(a, d), value));
  }
  if (value < 0)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_pow_scalar: integers to negative integer powers are not "
                         "supported (a: %s %s, exponent %g)", OPS_SHAPE(a), OPS_DTYPE(a), value);
  tc_scope *s = ops_begin();
  return ops_end(s, pow_int(a, ops_full_like(a, value, TC_F64), d));
}

/* ---------------------------------------------------------------- comparisons and logic */
#define COMPARE(name, prim)                                                                        \
  tc_tensor *tc_##name(tc_tensor *a, tc_tensor *b) {                                               \
    if (!a || !b) return NULL;                                                                     \
    return binary("tc_" #name, prim, a, b);                                                        \
  }
COMPARE(eq, TC_PRIM_EQ)
COMPARE(ne, TC_PRIM_NE)
COMPARE(lt, TC_PRIM_LT)
COMPARE(le, TC_PRIM_LE)
COMPARE(gt, TC_PRIM_GT)
COMPARE(ge, TC_PRIM_GE)

tc_tensor *tc_logical_and(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  return binary_as("tc_logical_and", TC_PRIM_AND, a, b, TC_BOOL);
}

tc_tensor *tc_logical_or(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  return binary_as("tc_logical_or", TC_PRIM_OR, a, b, TC_BOOL);
}

/* Bitwise on integers, logical on bool (torch.bitwise_and / bitwise_or). */
static tc_tensor *bitwise(const char *op, tc_prim p, tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  if (dtype_is_float(a->dtype) || dtype_is_float(b->dtype))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: integer or bool operands only (a: %s %s, b: %s %s)", op,
                           OPS_SHAPE(a), OPS_DTYPE(a), OPS_SHAPE(b), OPS_DTYPE(b));
  return binary(op, p, a, b);
}

tc_tensor *tc_bitwise_and(tc_tensor *a, tc_tensor *b) { return bitwise("tc_bitwise_and", TC_PRIM_AND, a, b); }
tc_tensor *tc_bitwise_or(tc_tensor *a, tc_tensor *b) { return bitwise("tc_bitwise_or", TC_PRIM_OR, a, b); }

tc_tensor *tc_logical_not(tc_tensor *a) {
  if (!a) return NULL;
  tc_scope *s = ops_begin();
  return ops_end(s, prim_unary(TC_PRIM_LOGICAL_NOT, ops_convert(a, TC_BOOL)));
}

tc_tensor *tc_where(tc_tensor *cond, tc_tensor *a, tc_tensor *b) {
  if (!cond || !a || !b) return NULL;
  if (cond->dtype != TC_BOOL)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_where: cond must be a bool tensor, got %s (cond: %s)",
                         OPS_DTYPE(cond), OPS_SHAPE(cond));
  tc_dtype d = dtype_promote(a->dtype, b->dtype);
  tc_scope *s = ops_begin();
  if (!ops_broadcast3("tc_where", (const char *const[]){"cond", "a", "b"}, &cond, &a, &b)) return ops_end(s, NULL);
  return ops_end(s, prim_where(cond, ops_convert(a, d), ops_convert(b, d)));
}

tc_tensor *tc_masked_fill(tc_tensor *x, tc_tensor *mask, double value) {
  if (!x || !mask) return NULL;
  if (mask->dtype != TC_BOOL)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_masked_fill: mask must be a bool tensor, got %s (mask: %s)",
                         OPS_DTYPE(mask), OPS_SHAPE(mask));
  tc_scope *s = ops_begin();
  if (!ops_broadcast2("tc_masked_fill", (const char *const[]){"x", "mask"}, &x, &mask)) return ops_end(s, NULL);
  return ops_end(s, prim_where(mask, ops_full_like(x, value, x->dtype), x));
}

/* ---------------------------------------------------------------- unary */
#define FLOAT_UNARY(name, prim)                                                                    \
  tc_tensor *tc_##name(tc_tensor *x) {                                                             \
    if (!x || !ops_require_float("tc_" #name, "x", x)) return NULL;                                \
    return prim_unary(prim, x);                                                                    \
  }
FLOAT_UNARY(exp, TC_PRIM_EXP)
FLOAT_UNARY(log, TC_PRIM_LOG)
FLOAT_UNARY(sqrt, TC_PRIM_SQRT)
FLOAT_UNARY(rsqrt, TC_PRIM_RSQRT)
FLOAT_UNARY(sin, TC_PRIM_SIN)
FLOAT_UNARY(cos, TC_PRIM_COS)
FLOAT_UNARY(tanh, TC_PRIM_TANH)
FLOAT_UNARY(erf, TC_PRIM_ERF)

/* Rounding is the identity on integers and bools, as in PyTorch. */
#define ROUNDING(name, prim)                                                                       \
  tc_tensor *tc_##name(tc_tensor *x) {                                                             \
    if (!x) return NULL;                                                                           \
    return dtype_is_float(x->dtype) ? prim_unary(prim, x) : ops_identity(x);                       \
  }
ROUNDING(floor, TC_PRIM_FLOOR)
ROUNDING(ceil, TC_PRIM_CEIL)
ROUNDING(round, TC_PRIM_ROUND)

tc_tensor *tc_neg(tc_tensor *x) {
  if (!x) return NULL;
  if (x->dtype == TC_BOOL)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_neg: negating a bool tensor is not supported (x: %s); use "
                         "tc_logical_not", OPS_SHAPE(x));
  return prim_unary(TC_PRIM_NEG, x);
}

tc_tensor *tc_abs(tc_tensor *x) {
  if (!x) return NULL;
  return x->dtype == TC_BOOL ? ops_identity(x) : prim_unary(TC_PRIM_ABS, x);
}

tc_tensor *tc_sign(tc_tensor *x) {
  if (!x) return NULL;
  if (!dtype_is_float(x->dtype)) return x->dtype == TC_BOOL ? ops_identity(x) : prim_unary(TC_PRIM_SIGN, x);
  /* PyTorch's sign is (x > 0) - (x < 0): +0 for -0 and for NaN, where the SIGN prim keeps x. */
  tc_scope *s = ops_begin();
  tc_tensor *zero = ops_full_like(x, 0.0, x->dtype);
  return ops_end(s, prim_where(prim_binary(TC_PRIM_GT, prim_unary(TC_PRIM_ABS, x), zero), prim_unary(TC_PRIM_SIGN, x), zero));
}

/* Integers promote to f32, as in PyTorch. */
tc_tensor *tc_reciprocal(tc_tensor *x) {
  if (!x) return NULL;
  tc_scope *s = ops_begin();
  return ops_end(s, prim_unary(TC_PRIM_RECIPROCAL, ops_convert(x, dtype_is_float(x->dtype) ? x->dtype : TC_F32)));
}

tc_tensor *tc_isnan(tc_tensor *x) {
  if (!x) return NULL;
  return dtype_is_float(x->dtype) ? prim_unary(TC_PRIM_ISNAN, x) : ops_full_like(x, 0.0, TC_BOOL);
}

/* ---------------------------------------------------------------- activations */
/* 1 / (1 + exp(-x)): saturates to exactly 0 and 1 without NaN at the extremes. */
static tc_tensor *sigmoid_of(tc_tensor *x) {
  return prim_unary(TC_PRIM_RECIPROCAL, ops_binary_scalar(TC_PRIM_ADD, prim_unary(TC_PRIM_EXP, prim_unary(TC_PRIM_NEG, x)), 1.0));
}

tc_tensor *tc_sigmoid(tc_tensor *x) {
  if (!x || !ops_require_float("tc_sigmoid", "x", x)) return NULL;
  tc_scope *s = ops_begin();
  return ops_end(s, sigmoid_of(x));
}

tc_tensor *tc_relu(tc_tensor *x) {
  if (!x) return NULL;
  if (x->dtype == TC_BOOL)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_relu: bool tensors are not supported (x: %s)", OPS_SHAPE(x));
  /* PyTorch's values: x < 0 gives +0, and NaN and -0 stay as they are. Its gradient is 0 where
   * x <= 0 (at 0 too), so the select is on x <= 0 and the value there comes unrecorded from
   * where(x < 0, 0, x) (+0 or -0): max's rule would split the gradient at 0 between the sides. */
  tc_scope *s = ops_begin();
  tc_tensor *zero = ops_full_like(x, 0.0, x->dtype);
  bool was = tape_set_enabled(false);
  tc_tensor *at_most_zero = prim_where(prim_binary(TC_PRIM_LT, x, zero), zero, x);
  tape_set_enabled(was);
  return ops_end(s, prim_where(prim_binary(TC_PRIM_LE, x, zero), at_most_zero, x));
}

tc_tensor *tc_gelu(tc_tensor *x) {
  if (!x || !ops_require_float("tc_gelu", "x", x)) return NULL;
  tc_scope *s = ops_begin();
  tc_tensor *phi = ops_binary_scalar(TC_PRIM_ADD, prim_unary(TC_PRIM_ERF, ops_binary_scalar(TC_PRIM_MUL, x, M_SQRT1_2)), 1.0);
  return ops_end(s, prim_binary(TC_PRIM_MUL, ops_binary_scalar(TC_PRIM_MUL, x, 0.5), phi));
}

/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
tc_tensor *tc_gelu_tanh(tc_tensor *x) {
  if (!x || !ops_require_float("tc_gelu_tanh", "x", x)) return NULL;
  tc_scope *s = ops_begin();
  tc_tensor *x3 = prim_binary(TC_PRIM_MUL, prim_binary(TC_PRIM_MUL, x, x), x);
  tc_tensor *inner = prim_binary(TC_PRIM_ADD, x, ops_binary_scalar(TC_PRIM_MUL, x3, 0.044715));
  tc_tensor *t = prim_unary(TC_PRIM_TANH, ops_binary_scalar(TC_PRIM_MUL, inner, sqrt(2.0 / M_PI)));
  return ops_end(s, prim_binary(TC_PRIM_MUL, ops_binary_scalar(TC_PRIM_MUL, x, 0.5), ops_binary_scalar(TC_PRIM_ADD, t, 1.0)));
}

tc_tensor *tc_silu(tc_tensor *x) {
  if (!x || !ops_require_float("tc_silu", "x", x)) return NULL;
  tc_scope *s = ops_begin();
  return ops_end(s, prim_binary(TC_PRIM_MUL, x, sigmoid_of(x)));
}
