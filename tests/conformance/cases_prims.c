/* cases_prims.c — one or more conformance cases per primitive (docs/primitives.md). Each case
 * is a tiny model built on the public op that maps to the prim (tc_neg -> NEG, tc_sum ->
 * REDUCE_SUM, tc_permute -> PERMUTE, ...), checked against hand-computed values including the
 * NaN / Inf / -0 edge cases. REMAINDER, FMOD, REVERSE, PAD, integer DIV and bitwise AND/OR come
 * through tc_remainder, tc_fmod, tc_flip, tc_pad, tc_div_trunc and tc_bitwise_*; out-of-range GATHER and
 * SCATTER_ADD indices through tc_gather and tc_scatter_add, which pass index values through.
 *
 * Exact checks (rtol = atol = 0) also compare the sign of zero; transcendental values use a
 * relative tolerance of a few f32 ulps. Expected f32 values are written F(x): x rounded to f32. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

#define D(...) ((const double[]){__VA_ARGS__})
#define LEN(arr) ((int)(sizeof(arr) / sizeof((arr)[0])))
#define F(x) ((double)(float)(x))
#define RT32 2e-6 /* relative tolerance for f32 transcendentals: ~16 ulps */

/* A tensor of dtype dt holding v (row-major), converted from double. */
static tc_tensor *tensor_of(tc_dtype dt, int rank, const int64_t *sizes, const double *v) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  size_t item = tc_dtype_size(dt);
  unsigned char *buf = malloc(n > 0 ? (size_t)n * item : 1);
  if (!buf) return NULL;
  for (int64_t i = 0; i < n; i++) {
    unsigned char *p = buf + (size_t)i * item;
    switch (dt) {
    case TC_F32: { float x = (float)v[i]; memcpy(p, &x, sizeof x); break; }
    case TC_F64: memcpy(p, &v[i], sizeof(double)); break;
    case TC_I32: { int32_t x = (int32_t)v[i]; memcpy(p, &x, sizeof x); break; }
    case TC_I64: { int64_t x = (int64_t)v[i]; memcpy(p, &x, sizeof x); break; }
    default: *p = v[i] != 0; break;
    }
  }
  tc_tensor *t = tc_from_host(buf, dt, rank, sizes);
  free(buf);
  return t;
}

#define VEC(dt, x) tensor_of(dt, 1, (int64_t[]){LEN(x)}, x)

/* y = fn(x) for a 1-D x; want has x's length. */
static void check_unary(conf_ctx *c, tc_model_fn fn, tc_dtype dt, int n, const double *x, const double *want,
                        double rtol) {
  tc_tensor *in = tensor_of(dt, 1, (int64_t[]){n}, x);
  conf_check(c, conf_run(c, fn, 1, &in), 1, (int64_t[]){n}, want, rtol, 0);
}

static void check_binary(conf_ctx *c, tc_model_fn fn, tc_dtype dt, int n, const double *a, const double *b,
                         const double *want, double rtol) {
  tc_tensor *in[2] = {tensor_of(dt, 1, (int64_t[]){n}, a), tensor_of(dt, 1, (int64_t[]){n}, b)};
  conf_check(c, conf_run(c, fn, 2, in), 1, (int64_t[]){n}, want, rtol, 0);
}

#define UNARY(fn, dt, x, want, rtol)                                                               \
  do {                                                                                             \
    _Static_assert(LEN(x) == LEN(want), "input and expected lengths differ");                      \
    check_unary(c, TC_FN(fn), dt, LEN(x), x, want, rtol);                                          \
  } while (0)
#define BINARY(fn, dt, a, b, want, rtol)                                                           \
  do {                                                                                             \
    _Static_assert(LEN(a) == LEN(want) && LEN(b) == LEN(want), "input and expected lengths differ"); \
    check_binary(c, TC_FN(fn), dt, LEN(a), a, b, want, rtol);                                      \
  } while (0)

/* ================================================================ unary elementwise */
static tc_tensor *m_neg(tc_tensor *x) { return tc_neg(x); }
CONF_CASE(prims, neg) {
  UNARY(m_neg, TC_F32, D(0.0, -0.0, 1.5, -INFINITY, NAN), D(-0.0, 0.0, -1.5, INFINITY, NAN), 0);
}
CONF_CASE(prims, neg_int) {
  UNARY(m_neg, TC_I32, D(5, -7, 0), D(-5, 7, 0), 0);
  UNARY(m_neg, TC_I64, D(3e12, -1), D(-3e12, 1), 0);
}

static tc_tensor *m_abs(tc_tensor *x) { return tc_abs(x); }
CONF_CASE(prims, abs) {
  UNARY(m_abs, TC_F32, D(-0.0, -2.5, 3.0, -INFINITY, NAN), D(0.0, 2.5, 3.0, INFINITY, NAN), 0);
  UNARY(m_abs, TC_I32, D(-3, 4, 0), D(3, 4, 0), 0);
}

static tc_tensor *m_exp(tc_tensor *x) { return tc_exp(x); }
CONF_CASE(prims, exp) {
  UNARY(m_exp, TC_F32, D(1.0, -1.0, 0.5, 10.0), D(exp(1.0), exp(-1.0), exp(0.5), exp(10.0)), RT32);
  UNARY(m_exp, TC_F32, D(0.0, -0.0, -INFINITY, INFINITY, NAN), D(1.0, 1.0, 0.0, INFINITY, NAN), 0);
  UNARY(m_exp, TC_F64, D(1.0, -2.0), D(exp(1.0), exp(-2.0)), 1e-14);
}

static tc_tensor *m_log(tc_tensor *x) { return tc_log(x); }
CONF_CASE(prims, log) {
  UNARY(m_log, TC_F32, D(2.0, 0.5, 10.0), D(log(2.0), log(0.5), log(10.0)), RT32);
  UNARY(m_log, TC_F32, D(1.0, 0.0, -0.0, -1.0, INFINITY, NAN), D(0.0, -INFINITY, -INFINITY, NAN, INFINITY, NAN), 0);
}

static tc_tensor *m_sqrt(tc_tensor *x) { return tc_sqrt(x); }
CONF_CASE(prims, sqrt) {
  UNARY(m_sqrt, TC_F32, D(2.0, 10.0), D(sqrt(2.0), sqrt(10.0)), RT32);
  UNARY(m_sqrt, TC_F32, D(4.0, 0.0, -0.0, -1.0, INFINITY, NAN), D(2.0, 0.0, -0.0, NAN, INFINITY, NAN), 0);
}

static tc_tensor *m_rsqrt(tc_tensor *x) { return tc_rsqrt(x); }
CONF_CASE(prims, rsqrt) {
  UNARY(m_rsqrt, TC_F32, D(2.0, 0.25, 10.0), D(1 / sqrt(2.0), 2.0, 1 / sqrt(10.0)), RT32);
  UNARY(m_rsqrt, TC_F32, D(0.0, -0.0, INFINITY, -1.0, NAN), D(INFINITY, -INFINITY, 0.0, NAN, NAN), 0);
}

static tc_tensor *m_sin(tc_tensor *x) { return tc_sin(x); }
CONF_CASE(prims, sin) {
  UNARY(m_sin, TC_F32, D(0.5, -1.0, 3.0), D(sin(F(0.5)), sin(-1.0), sin(3.0)), RT32);
  UNARY(m_sin, TC_F32, D(0.0, -0.0, INFINITY, NAN), D(0.0, -0.0, NAN, NAN), 0);
}

static tc_tensor *m_cos(tc_tensor *x) { return tc_cos(x); }
CONF_CASE(prims, cos) {
  UNARY(m_cos, TC_F32, D(0.5, -1.0, 3.0), D(cos(0.5), cos(-1.0), cos(3.0)), RT32);
  UNARY(m_cos, TC_F32, D(0.0, -0.0, INFINITY, NAN), D(1.0, 1.0, NAN, NAN), 0);
}

static tc_tensor *m_tanh(tc_tensor *x) { return tc_tanh(x); }
CONF_CASE(prims, tanh) {
  UNARY(m_tanh, TC_F32, D(0.5, -1.0, 3.0), D(tanh(0.5), tanh(-1.0), tanh(3.0)), RT32);
  UNARY(m_tanh, TC_F32, D(-0.0, INFINITY, -INFINITY, 20.0, NAN), D(-0.0, 1.0, -1.0, 1.0, NAN), 0);
}

static tc_tensor *m_erf(tc_tensor *x) { return tc_erf(x); }
CONF_CASE(prims, erf) {
  UNARY(m_erf, TC_F32, D(0.5, -1.0, 2.0), D(erf(0.5), erf(-1.0), erf(2.0)), RT32);
  UNARY(m_erf, TC_F32, D(-0.0, INFINITY, -INFINITY, NAN), D(-0.0, 1.0, -1.0, NAN), 0);
}

static tc_tensor *m_floor(tc_tensor *x) { return tc_floor(x); }
CONF_CASE(prims, floor) {
  UNARY(m_floor, TC_F32, D(-0.5, 1.5, -0.0, 2.0, -2.5, -INFINITY, NAN), D(-1.0, 1.0, -0.0, 2.0, -3.0, -INFINITY, NAN),
        0);
}

static tc_tensor *m_ceil(tc_tensor *x) { return tc_ceil(x); }
CONF_CASE(prims, ceil) {
  UNARY(m_ceil, TC_F32, D(-0.5, 1.5, -0.0, 2.0, INFINITY, NAN), D(-0.0, 2.0, -0.0, 2.0, INFINITY, NAN), 0);
}

static tc_tensor *m_round(tc_tensor *x) { return tc_round(x); }
CONF_CASE(prims, round_half_even) {
  UNARY(m_round, TC_F32, D(0.5, 1.5, 2.5, -0.5, -2.5, 2.6, -0.0, 3.5),
        D(0.0, 2.0, 2.0, -0.0, -2.0, 3.0, -0.0, 4.0), 0);
  UNARY(m_round, TC_F64, D(4.5, -4.5, 0.49999999999999994), D(4.0, -4.0, 0.0), 0);
}

static tc_tensor *m_sign(tc_tensor *x) { return tc_sign(x); }
/* The SIGN prim keeps +-0 and NaN (docs/primitives.md), but tc_sign is PyTorch's (x > 0) - (x < 0),
 * +0 there; the prim's edges are reached through abs's gradient, sign(x) * 1. */
static tc_tensor *m_sign_prim(tc_tensor *x) {
  tc_scope *s = tc_scope_open();
  tc_tensor *g = NULL;
  tc_set_requires_grad(x, true);
  tc_grad(tc_sum(tc_abs(x), 0, NULL, false), &x, 1, &g);
  if (g) tc_scope_keep(s, g);
  tc_scope_close(s);
  return g;
}
CONF_CASE(prims, sign) {
  UNARY(m_sign_prim, TC_F32, D(-2.0, -0.0, 0.0, 3.0, INFINITY, -INFINITY, NAN), D(-1.0, -0.0, 0.0, 1.0, 1.0, -1.0, NAN), 0);
  UNARY(m_sign, TC_F32, D(-2.0, -0.0, 0.0, 3.0, INFINITY, -INFINITY, NAN), D(-1.0, 0.0, 0.0, 1.0, 1.0, -1.0, 0.0), 0);
  UNARY(m_sign, TC_I32, D(-5, 0, 7), D(-1, 0, 1), 0);
}

static tc_tensor *m_reciprocal(tc_tensor *x) { return tc_reciprocal(x); }
CONF_CASE(prims, reciprocal) {
  UNARY(m_reciprocal, TC_F32, D(4.0, -0.0, 0.0, INFINITY, -INFINITY, NAN, -0.5),
        D(0.25, -INFINITY, INFINITY, 0.0, -0.0, NAN, -2.0), 0);
  UNARY(m_reciprocal, TC_F32, D(3.0), D(1.0 / 3.0), RT32);
}

static tc_tensor *m_logical_not(tc_tensor *x) { return tc_logical_not(x); }
CONF_CASE(prims, logical_not) { UNARY(m_logical_not, TC_BOOL, D(1, 0, 1), D(0, 1, 0), 0); }

static tc_tensor *m_isnan(tc_tensor *x) { return tc_isnan(x); }
CONF_CASE(prims, isnan) {
  UNARY(m_isnan, TC_F32, D(NAN, 1.0, INFINITY, -INFINITY, -0.0), D(1, 0, 0, 0, 0), 0);
  UNARY(m_isnan, TC_F64, D(NAN, 0.0), D(1, 0), 0);
}

/* ================================================================ binary elementwise */
static tc_tensor *m_add(tc_tensor *a, tc_tensor *b) { return tc_add(a, b); }
CONF_CASE(prims, add) {
  BINARY(m_add, TC_F32, D(1.0, INFINITY, -0.0, -0.0, 1e30, NAN), D(2.0, -INFINITY, -0.0, 0.0, 1e30, 1.0),
         D(3.0, NAN, -0.0, 0.0, 2 * F(1e30), NAN), 0);
  BINARY(m_add, TC_I32, D(2, -4), D(3, 1), D(5, -3), 0);
  BINARY(m_add, TC_I64, D(4e12, 1), D(4e12, -1), D(8e12, 0), 0);
}

static tc_tensor *m_sub(tc_tensor *a, tc_tensor *b) { return tc_sub(a, b); }
CONF_CASE(prims, sub) {
  BINARY(m_sub, TC_F32, D(5.0, INFINITY, 0.0, -0.0), D(3.0, INFINITY, 0.0, 0.0), D(2.0, NAN, 0.0, -0.0), 0);
  BINARY(m_sub, TC_I32, D(2, -4), D(3, 1), D(-1, -5), 0);
}

static tc_tensor *m_mul(tc_tensor *a, tc_tensor *b) { return tc_mul(a, b); }
CONF_CASE(prims, mul) {
  BINARY(m_mul, TC_F32, D(2.0, 0.0, -0.0, -2.0, INFINITY), D(3.0, INFINITY, 5.0, -0.5, -1.0),
         D(6.0, NAN, -0.0, 1.0, -INFINITY), 0);
  BINARY(m_mul, TC_I32, D(-3, 7), D(4, 6), D(-12, 42), 0);
}

static tc_tensor *m_div(tc_tensor *a, tc_tensor *b) { return tc_div(a, b); }
CONF_CASE(prims, div) {
  BINARY(m_div, TC_F32, D(1.0, -1.0, 0.0, 6.0, -0.0, 1.0), D(0.0, 0.0, 0.0, -3.0, 5.0, -INFINITY),
         D(INFINITY, -INFINITY, NAN, -2.0, -0.0, -0.0), 0);
  BINARY(m_div, TC_F32, D(1.0, 2.0), D(3.0, 7.0), D(1.0 / 3, 2.0 / 7), RT32);
}

/* Integer DIV: tc_div is true division, tc_div_trunc keeps integers. */
static tc_tensor *m_div_prim(tc_tensor *a, tc_tensor *b) { return tc_div_trunc(a, b); }
CONF_CASE(prims, div_int_truncates) {
  BINARY(m_div_prim, TC_I32, D(7, -7, 7, -7, 5, 0), D(2, 2, -2, -2, 0, 3), D(3, -3, -3, 3, 0, 0), 0);
  BINARY(m_div_prim, TC_I64, D(9e12, -9), D(3, 0), D(3e12, 0), 0);
}

static tc_tensor *m_pow(tc_tensor *a, tc_tensor *b) { return tc_pow(a, b); }
CONF_CASE(prims, pow) {
  BINARY(m_pow, TC_F32, D(2.0, 9.0, 2.0, 0.5), D(0.5, 0.5, -1.5, 3.0), D(sqrt(2.0), 3.0, pow(2.0, -1.5), 0.125), RT32);
  /* C pow: x^0 = 1 and 1^y = 1 even for NaN; negative base, fractional power: NaN */
  BINARY(m_pow, TC_F32, D(NAN, 1.0, -8.0, 0.0, 2.0, -2.0, INFINITY), D(0.0, NAN, F(1.0 / 3), -1.0, 10.0, 3.0, -1.0),
         D(1.0, 1.0, NAN, INFINITY, 1024.0, -8.0, 0.0), 0);
}

static tc_tensor *m_maximum(tc_tensor *a, tc_tensor *b) { return tc_maximum(a, b); }
CONF_CASE(prims, max_nan_and_zero) {
  BINARY(m_maximum, TC_F32, D(NAN, 1.0, -0.0, 0.0, 2.0, -INFINITY), D(1.0, NAN, 0.0, -0.0, -3.0, -5.0),
         D(NAN, NAN, 0.0, 0.0, 2.0, -5.0), 0);
  BINARY(m_maximum, TC_I32, D(3, -5), D(4, -6), D(4, -5), 0);
}

static tc_tensor *m_minimum(tc_tensor *a, tc_tensor *b) { return tc_minimum(a, b); }
CONF_CASE(prims, min_nan_and_zero) {
  BINARY(m_minimum, TC_F32, D(NAN, 1.0, -0.0, 0.0, 2.0, INFINITY), D(1.0, NAN, 0.0, -0.0, -3.0, 5.0),
         D(NAN, NAN, -0.0, -0.0, -3.0, 5.0), 0);
  BINARY(m_minimum, TC_I64, D(3, -5), D(4, -6), D(3, -6), 0);
}

static tc_tensor *m_remainder(tc_tensor *a, tc_tensor *b) { return tc_remainder(a, b); }
CONF_CASE(prims, remainder_divisor_sign) {
  BINARY(m_remainder, TC_F32, D(5.0, -5.0, 5.0, -5.0, -3.0, 1.0, INFINITY, -1.0, 5.5),
         D(3.0, 3.0, -3.0, -3.0, 3.0, 0.0, 2.0, INFINITY, 2.0), D(2.0, 1.0, -1.0, -2.0, -0.0, NAN, NAN, INFINITY, 1.5), 0);
  BINARY(m_remainder, TC_I32, D(5, -5, 5, -5, 4, 6), D(3, 3, -3, -3, 0, 3), D(2, 1, -1, -2, 0, 0), 0);
}

/* torch.fmod: the dividend's sign; integer division by zero gives 0 as for REMAINDER (PyTorch
 * raises there). */
static tc_tensor *m_fmod(tc_tensor *a, tc_tensor *b) { return tc_fmod(a, b); }
CONF_CASE(prims, fmod_dividend_sign) {
  BINARY(m_fmod, TC_F32, D(5.0, -5.0, 5.0, -5.0, -3.0, 1.0, INFINITY, -1.0, 5.5),
         D(3.0, 3.0, -3.0, -3.0, 3.0, 0.0, 2.0, INFINITY, 2.0), D(2.0, -2.0, 2.0, -2.0, -0.0, NAN, NAN, -1.0, 1.5), 0);
  BINARY(m_fmod, TC_I32, D(5, -5, 5, -5, 4, 6), D(3, 3, -3, -3, 0, 3), D(2, -2, 2, -2, 0, 0), 0);
  BINARY(m_fmod, TC_I64, D(7, -7), D(-2, 2), D(1, -1), 0);
}

static tc_tensor *m_eq(tc_tensor *a, tc_tensor *b) { return tc_eq(a, b); }
static tc_tensor *m_ne(tc_tensor *a, tc_tensor *b) { return tc_ne(a, b); }
static tc_tensor *m_lt(tc_tensor *a, tc_tensor *b) { return tc_lt(a, b); }
static tc_tensor *m_le(tc_tensor *a, tc_tensor *b) { return tc_le(a, b); }
static tc_tensor *m_gt(tc_tensor *a, tc_tensor *b) { return tc_gt(a, b); }
static tc_tensor *m_ge(tc_tensor *a, tc_tensor *b) { return tc_ge(a, b); }
#define CMP_A D(NAN, 1.0, 2.0, -0.0, 1.0, -INFINITY)
#define CMP_B D(NAN, 1.0, 1.0, 0.0, NAN, -INFINITY)
CONF_CASE(prims, eq) {
  BINARY(m_eq, TC_F32, CMP_A, CMP_B, D(0, 1, 0, 1, 0, 1), 0);
  BINARY(m_eq, TC_I32, D(1, 2), D(1, 3), D(1, 0), 0);
}
CONF_CASE(prims, ne) {
  BINARY(m_ne, TC_F32, CMP_A, CMP_B, D(1, 0, 1, 0, 1, 0), 0);
  BINARY(m_ne, TC_BOOL, D(1, 1, 0), D(1, 0, 0), D(0, 1, 0), 0);
}
CONF_CASE(prims, lt) {
  BINARY(m_lt, TC_F32, CMP_A, CMP_B, D(0, 0, 0, 0, 0, 0), 0);
  BINARY(m_lt, TC_I64, D(1, 2, -3), D(2, 2, -4), D(1, 0, 0), 0);
}
CONF_CASE(prims, le) {
  BINARY(m_le, TC_F32, CMP_A, CMP_B, D(0, 1, 0, 1, 0, 1), 0);
  BINARY(m_le, TC_I32, D(1, 2, -3), D(2, 2, -4), D(1, 1, 0), 0);
}
CONF_CASE(prims, gt) {
  BINARY(m_gt, TC_F32, CMP_A, CMP_B, D(0, 0, 1, 0, 0, 0), 0);
  BINARY(m_gt, TC_I32, D(1, 2, -3), D(2, 2, -4), D(0, 0, 1), 0);
}
CONF_CASE(prims, ge) {
  BINARY(m_ge, TC_F32, CMP_A, CMP_B, D(0, 1, 1, 1, 0, 1), 0);
  BINARY(m_ge, TC_F64, D(1, 2, -3), D(2, 2, -4), D(0, 1, 1), 0);
}

static tc_tensor *m_logical_and(tc_tensor *a, tc_tensor *b) { return tc_logical_and(a, b); }
static tc_tensor *m_and_prim(tc_tensor *a, tc_tensor *b) { return tc_bitwise_and(a, b); }
CONF_CASE(prims, and) {
  BINARY(m_logical_and, TC_BOOL, D(1, 1, 0, 0), D(1, 0, 1, 0), D(1, 0, 0, 0), 0);
  BINARY(m_and_prim, TC_I32, D(12, -1, 5), D(10, 6, 2), D(8, 6, 0), 0); /* bitwise on ints */
}

static tc_tensor *m_logical_or(tc_tensor *a, tc_tensor *b) { return tc_logical_or(a, b); }
static tc_tensor *m_or_prim(tc_tensor *a, tc_tensor *b) { return tc_bitwise_or(a, b); }
CONF_CASE(prims, or) {
  BINARY(m_logical_or, TC_BOOL, D(1, 1, 0, 0), D(1, 0, 1, 0), D(1, 1, 1, 0), 0);
  BINARY(m_or_prim, TC_I64, D(12, 0, 5), D(10, 6, 2), D(14, 6, 7), 0);
}

/* ================================================================ where, convert */
static tc_tensor *m_where(tc_tensor *cond, tc_tensor *a, tc_tensor *b) { return tc_where(cond, a, b); }
CONF_CASE(prims, where) {
  /* the branch not taken may hold NaN without effect */
  tc_tensor *in[3] = {VEC(TC_BOOL, D(1, 0, 1, 0)), VEC(TC_F32, D(1.0, NAN, -0.0, INFINITY)),
                      VEC(TC_F32, D(NAN, 2.0, 5.0, -0.0))};
  conf_check(c, conf_run(c, TC_FN(m_where), 3, in), 1, (int64_t[]){4}, D(1.0, 2.0, -0.0, -0.0), 0, 0);
  tc_tensor *ints[3] = {VEC(TC_BOOL, D(0, 1)), VEC(TC_I64, D(7, 8)), VEC(TC_I64, D(-7, -8))};
  conf_check(c, conf_run(c, TC_FN(m_where), 3, ints), 1, (int64_t[]){2}, D(-7, 8), 0, 0);
}

static tc_tensor *m_to_i32(tc_tensor *x) { return tc_to_dtype(x, TC_I32); }
static tc_tensor *m_to_i64(tc_tensor *x) { return tc_to_dtype(x, TC_I64); }
static tc_tensor *m_to_f32(tc_tensor *x) { return tc_to_dtype(x, TC_F32); }
static tc_tensor *m_to_f64(tc_tensor *x) { return tc_to_dtype(x, TC_F64); }
static tc_tensor *m_to_bool(tc_tensor *x) { return tc_to_dtype(x, TC_BOOL); }
CONF_CASE(prims, convert_float_to_int) {
  /* truncation toward zero, NaN -> 0 */
  UNARY(m_to_i32, TC_F32, D(3.9, -3.9, -0.0, 0.5, -0.5, NAN, 1e6), D(3, -3, 0, 0, 0, 0, 1e6), 0);
  UNARY(m_to_i64, TC_F64, D(3e12 + 0.75, -2.5), D(3e12, -2), 0);
}
CONF_CASE(prims, convert_float_to_int_saturates) {
  UNARY(m_to_i32, TC_F32, D(INFINITY, -INFINITY, 1e10, -1e10), D(INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN), 0);
}
CONF_CASE(prims, convert_to_bool) {
  UNARY(m_to_bool, TC_F32, D(0.0, -0.0, NAN, 0.5, -INFINITY), D(0, 0, 1, 1, 1), 0);
  UNARY(m_to_bool, TC_I32, D(0, 3, -1), D(0, 1, 1), 0);
}
CONF_CASE(prims, convert_between_numbers) {
  UNARY(m_to_f32, TC_BOOL, D(1, 0), D(1.0, 0.0), 0);
  UNARY(m_to_f32, TC_F64, D(1.0 / 3, 1e300, -1e300, NAN, -0.0), D(F(1.0 / 3), INFINITY, -INFINITY, NAN, -0.0), 0);
  UNARY(m_to_f32, TC_I32, D(16777217, -3), D(16777216, -3), 0);
  UNARY(m_to_f64, TC_I64, D(-9e15, 42), D(-9e15, 42), 0);
  UNARY(m_to_i64, TC_I32, D(-2147483648.0, 7), D(-2147483648.0, 7), 0);
}

/* ================================================================ reductions */
static const int64_t S23[] = {2, 3};
static tc_tensor *m_sum_dim1(tc_tensor *x) { return tc_sum(x, 1, (int[]){1}, false); }
static tc_tensor *m_sum_all(tc_tensor *x) { return tc_sum(x, 0, NULL, false); }
static tc_tensor *m_sum_dims02(tc_tensor *x) { return tc_sum(x, 2, (int[]){0, 2}, false); }
CONF_CASE(prims, reduce_sum) {
  tc_tensor *x = tensor_of(TC_F32, 2, S23, D(1, 2, 3, 4, 5, 6));
  conf_check(c, conf_run(c, TC_FN(m_sum_dim1), 1, &x), 1, (int64_t[]){2}, D(6, 15), 0, 0);
  conf_check(c, conf_run(c, TC_FN(m_sum_all), 1, &x), 0, NULL, D(21), 0, 0);
  tc_tensor *y = tensor_of(TC_I32, 3, (int64_t[]){2, 2, 2}, D(1, 2, 3, 4, 5, 6, 7, 8));
  conf_check(c, conf_run(c, TC_FN(m_sum_dims02), 1, &y), 1, (int64_t[]){2}, D(1 + 2 + 5 + 6, 3 + 4 + 7 + 8), 0, 0);
}
CONF_CASE(prims, reduce_sum_nan_inf_empty) {
  tc_tensor *x = tensor_of(TC_F32, 2, (int64_t[]){3, 2}, D(1.0, NAN, INFINITY, -INFINITY, INFINITY, 1.0));
  conf_check(c, conf_run(c, TC_FN(m_sum_dim1), 1, &x), 1, (int64_t[]){3}, D(NAN, NAN, INFINITY), 0, 0);
  tc_tensor *e = tensor_of(TC_F32, 2, (int64_t[]){2, 0}, D(0));
  conf_check(c, conf_run(c, TC_FN(m_sum_dim1), 1, &e), 1, (int64_t[]){2}, D(0.0, 0.0), 0, 0);
}
CONF_CASE(prims, reduce_sum_f32_accuracy) {
  /* 4096 x 0.1f: a naive f32 running sum drifts by ~1e-4 relative; pairwise or wider is fine */
  double v[4096];
  for (int i = 0; i < 4096; i++) v[i] = 0.1;
  tc_tensor *x = tensor_of(TC_F32, 1, (int64_t[]){4096}, v);
  conf_check(c, conf_run(c, TC_FN(m_sum_all), 1, &x), 0, NULL, D(4096 * F(0.1)), 1e-5, 0);
}

static tc_tensor *m_max_dim1(tc_tensor *x) { return tc_max(x, 1, (int[]){1}, false); }
static tc_tensor *m_min_dim1(tc_tensor *x) { return tc_min(x, 1, (int[]){1}, false); }
CONF_CASE(prims, reduce_max) {
  tc_tensor *x = tensor_of(TC_F32, 2, (int64_t[]){4, 3},
                           D(1, 5, 3, /**/ 1, NAN, 3, /**/ -0.0, 0.0, -0.0, /**/ -INFINITY, -INFINITY, -1e30));
  conf_check(c, conf_run(c, TC_FN(m_max_dim1), 1, &x), 1, (int64_t[]){4}, D(5, NAN, 0.0, F(-1e30)), 0, 0);
  tc_tensor *y = tensor_of(TC_I32, 2, S23, D(3, -7, 5, -1, -2, -3));
  conf_check(c, conf_run(c, TC_FN(m_max_dim1), 1, &y), 1, (int64_t[]){2}, D(5, -1), 0, 0);
  /* No identity: PyTorch raises over an empty dim, so does tc (the prim's -inf is unreachable). */
  tc_tensor *e = tensor_of(TC_F32, 2, (int64_t[]){2, 0}, D(0));
  conf_expect_error(c, TC_FN(m_max_dim1), 1, &e, "tc_max: cannot reduce over dim 1 of size 0");
}
CONF_CASE(prims, reduce_min) {
  tc_tensor *x = tensor_of(TC_F32, 2, (int64_t[]){4, 3},
                           D(1, 5, 3, /**/ 1, 2, NAN, /**/ 0.0, -0.0, 0.0, /**/ INFINITY, INFINITY, 1e30));
  conf_check(c, conf_run(c, TC_FN(m_min_dim1), 1, &x), 1, (int64_t[]){4}, D(1, NAN, -0.0, F(1e30)), 0, 0);
  tc_tensor *y = tensor_of(TC_I64, 2, S23, D(3, -7, 5, -1, -2, -3));
  conf_check(c, conf_run(c, TC_FN(m_min_dim1), 1, &y), 1, (int64_t[]){2}, D(-7, -3), 0, 0);
  tc_tensor *e = tensor_of(TC_F32, 2, (int64_t[]){2, 0}, D(0));
  conf_expect_error(c, TC_FN(m_min_dim1), 1, &e, "tc_min: cannot reduce over dim 1 of size 0");
}

static tc_tensor *m_prod_dim1(tc_tensor *x) { return tc_prod(x, 1, (int[]){1}, false); }
CONF_CASE(prims, reduce_prod) {
  tc_tensor *x = tensor_of(TC_F32, 2, (int64_t[]){3, 3}, D(2, 3, 4, /**/ 0.0, INFINITY, 1, /**/ -1, 0.0, 5));
  conf_check(c, conf_run(c, TC_FN(m_prod_dim1), 1, &x), 1, (int64_t[]){3}, D(24, NAN, -0.0), 0, 0);
  tc_tensor *e = tensor_of(TC_F32, 2, (int64_t[]){2, 0}, D(0));
  conf_check(c, conf_run(c, TC_FN(m_prod_dim1), 1, &e), 1, (int64_t[]){2}, D(1, 1), 0, 0);
  tc_tensor *y = tensor_of(TC_I64, 2, S23, D(1, 2, 3, -1, 5, 6));
  conf_check(c, conf_run(c, TC_FN(m_prod_dim1), 1, &y), 1, (int64_t[]){2}, D(6, -30), 0, 0);
}

static tc_tensor *m_argmax1(tc_tensor *x) { return tc_argmax(x, 1, false); }
static tc_tensor *m_argmin1(tc_tensor *x) { return tc_argmin(x, 1, false); }
static tc_tensor *m_argmax0(tc_tensor *x) { return tc_argmax(x, 0, false); }
#define ARG_X D(1, 3, 3, 2, /**/ 5, NAN, 7, NAN, /**/ -1, -1, -2, -2)
CONF_CASE(prims, argmax) {
  /* first index of the maximum; NaN counts as the maximum */
  tc_tensor *x = tensor_of(TC_F32, 2, (int64_t[]){3, 4}, ARG_X);
  conf_check(c, conf_run(c, TC_FN(m_argmax1), 1, &x), 1, (int64_t[]){3}, D(1, 1, 0), 0, 0);
  conf_check(c, conf_run(c, TC_FN(m_argmax0), 1, &x), 1, (int64_t[]){4}, D(1, 1, 1, 1), 0, 0);
  tc_tensor *y = tensor_of(TC_I32, 2, S23, D(3, 9, 9, -1, -2, -3));
  conf_check(c, conf_run(c, TC_FN(m_argmax1), 1, &y), 1, (int64_t[]){2}, D(1, 0), 0, 0);
}
CONF_CASE(prims, argmin) {
  tc_tensor *x = tensor_of(TC_F32, 2, (int64_t[]){3, 4}, ARG_X);
  conf_check(c, conf_run(c, TC_FN(m_argmin1), 1, &x), 1, (int64_t[]){3}, D(0, 1, 2), 0, 0);
  tc_tensor *y = tensor_of(TC_I64, 2, S23, D(3, 1, 1, -1, -2, -3));
  conf_check(c, conf_run(c, TC_FN(m_argmin1), 1, &y), 1, (int64_t[]){2}, D(1, 2), 0, 0);
}

/* ================================================================ movement */
static tc_tensor *m_reshape_of_permute(tc_tensor *x) { return tc_reshape(tc_permute(x, (int[]){1, 0}), 1, (int64_t[]){6}); }
static tc_tensor *m_reshape(tc_tensor *x) { return tc_reshape(x, 3, (int64_t[]){3, 1, 2}); }
CONF_CASE(prims, reshape) {
  tc_tensor *x = tensor_of(TC_F32, 2, S23, D(0, 1, 2, 3, 4, 5));
  conf_check(c, conf_run(c, TC_FN(m_reshape), 1, &x), 3, (int64_t[]){3, 1, 2}, D(0, 1, 2, 3, 4, 5), 0, 0);
  conf_check(c, conf_run(c, TC_FN(m_reshape_of_permute), 1, &x), 1, (int64_t[]){6}, D(0, 3, 1, 4, 2, 5), 0, 0);
}

static tc_tensor *m_expand(tc_tensor *x) { return tc_contiguous(tc_expand(x, 3, (int64_t[]){2, 2, 3})); }
CONF_CASE(prims, broadcast_in_dim) {
  tc_tensor *col = tensor_of(TC_F32, 2, (int64_t[]){2, 1}, D(10, -0.0));
  conf_check(c, conf_run(c, TC_FN(m_expand), 1, &col), 3, (int64_t[]){2, 2, 3},
             D(10, 10, 10, -0.0, -0.0, -0.0, 10, 10, 10, -0.0, -0.0, -0.0), 0, 0);
  tc_tensor *ab[2] = {col, VEC(TC_F32, D(1, 2, 3))};
  conf_check(c, conf_run(c, TC_FN(m_add), 2, ab), 2, S23, D(11, 12, 13, 1, 2, 3), 0, 0);
}

static tc_tensor *m_permute(tc_tensor *x) { return tc_contiguous(tc_permute(x, (int[]){2, 0, 1})); }
CONF_CASE(prims, permute) {
  double v[24], want[24];
  for (int i = 0; i < 24; i++) v[i] = i;
  /* x: 2x3x4; result[k][i][j] = x[i][j][k], result 4x2x3 */
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) want[(k * 2 + i) * 3 + j] = (i * 3 + j) * 4 + k;
  tc_tensor *x = tensor_of(TC_I32, 3, (int64_t[]){2, 3, 4}, v);
  conf_check(c, conf_run(c, TC_FN(m_permute), 1, &x), 3, (int64_t[]){4, 2, 3}, want, 0, 0);
}

static tc_tensor *m_double(tc_tensor *x) { return tc_mul_scalar(x, 2.0); }
CONF_CASE(prims, strided_input) {
  /* a transposed view as the model's input: the backend reads it through its strides */
  tc_tensor *x = tensor_of(TC_F32, 2, S23, D(0, 1, 2, 3, 4, 5));
  tc_tensor *xt = tc_transpose(x, 0, 1);
  conf_check(c, conf_run(c, TC_FN(m_double), 1, &xt), 2, (int64_t[]){3, 2}, D(0, 6, 2, 8, 4, 10), 0, 0);
  tc_tensor *xs = tc_slice(x, 1, 0, 3, 2);
  conf_check(c, conf_run(c, TC_FN(m_double), 1, &xs), 2, (int64_t[]){2, 2}, D(0, 4, 6, 10), 0, 0);
}

static tc_tensor *m_slice(tc_tensor *x) { return tc_contiguous(tc_slice(x, 1, 1, 6, 2)); }
CONF_CASE(prims, slice) {
  double v[14];
  for (int i = 0; i < 14; i++) v[i] = i;
  tc_tensor *x = tensor_of(TC_F64, 2, (int64_t[]){2, 7}, v);
  conf_check(c, conf_run(c, TC_FN(m_slice), 1, &x), 2, (int64_t[]){2, 3}, D(1, 3, 5, 8, 10, 12), 0, 0);
}

static tc_tensor *m_pad(tc_tensor *x) { return tc_pad(x, 4, (int64_t[]){0, 2, 1, 0}, -INFINITY); }
static tc_tensor *m_pad_zero(tc_tensor *x) { return tc_pad(x, 2, (int64_t[]){2, 1}, -0.0); }
CONF_CASE(prims, pad) {
  tc_tensor *x = tensor_of(TC_F32, 2, (int64_t[]){2, 2}, D(1, 2, 3, 4));
  const double I = INFINITY;
  conf_check(c, conf_run(c, TC_FN(m_pad), 1, &x), 2, (int64_t[]){3, 4},
             D(-I, -I, -I, -I, 1, 2, -I, -I, 3, 4, -I, -I), 0, 0);
  tc_tensor *y = VEC(TC_F32, D(5));
  conf_check(c, conf_run(c, TC_FN(m_pad_zero), 1, &y), 1, (int64_t[]){4}, D(-0.0, -0.0, 5, -0.0), 0, 0);
  tc_tensor *z = VEC(TC_I32, D(5));
  conf_check(c, conf_run(c, TC_FN(m_pad_zero), 1, &z), 1, (int64_t[]){4}, D(0, 0, 5, 0), 0, 0);
}

static tc_tensor *m_cat3(tc_tensor *a, tc_tensor *b, tc_tensor *e) { return tc_cat(3, (tc_tensor *[]){a, e, b}, 1); }
static tc_tensor *m_cat0(tc_tensor *a, tc_tensor *b) { return tc_cat(2, (tc_tensor *[]){a, b}, 0); }
CONF_CASE(prims, concatenate) {
  tc_tensor *in[3] = {tensor_of(TC_F32, 2, S23, D(0, 1, 2, 3, 4, 5)), tensor_of(TC_F32, 2, (int64_t[]){2, 1}, D(10, 20)),
                      tensor_of(TC_F32, 2, (int64_t[]){2, 0}, D(0))};
  conf_check(c, conf_run(c, TC_FN(m_cat3), 3, in), 2, (int64_t[]){2, 4}, D(0, 1, 2, 10, 3, 4, 5, 20), 0, 0);
  tc_tensor *rows[2] = {VEC(TC_I64, D(1, 2)), VEC(TC_I64, D(3))};
  conf_check(c, conf_run(c, TC_FN(m_cat0), 2, rows), 1, (int64_t[]){3}, D(1, 2, 3), 0, 0);
}

static tc_tensor *m_reverse1(tc_tensor *x) { return tc_flip(x, 1, (int[]){1}); }
static tc_tensor *m_reverse01(tc_tensor *x) { return tc_flip(x, 2, (int[]){0, -1}); }
CONF_CASE(prims, reverse) {
  tc_tensor *x = tensor_of(TC_F32, 2, S23, D(0, 1, 2, 3, 4, -0.0));
  conf_check(c, conf_run(c, TC_FN(m_reverse1), 1, &x), 2, S23, D(2, 1, 0, -0.0, 4, 3), 0, 0);
  conf_check(c, conf_run(c, TC_FN(m_reverse01), 1, &x), 2, S23, D(-0.0, 4, 3, 2, 1, 0), 0, 0);
}

/* ================================================================ indexing */
static tc_tensor *m_gather1(tc_tensor *x, tc_tensor *index) { return tc_gather(x, 1, index); }
static tc_tensor *m_gather0(tc_tensor *x, tc_tensor *index) { return tc_gather(x, 0, index); }
CONF_CASE(prims, gather) {
  tc_tensor *x = tensor_of(TC_F32, 2, S23, D(1, 2, 3, 4, 5, NAN));
  tc_tensor *in[2] = {x, tensor_of(TC_I64, 2, (int64_t[]){2, 2}, D(2, 0, 1, 2))};
  conf_check(c, conf_run(c, TC_FN(m_gather1), 2, in), 2, (int64_t[]){2, 2}, D(3, 1, 5, NAN), 0, 0);
  tc_tensor *in0[2] = {x, tensor_of(TC_I32, 2, (int64_t[]){1, 3}, D(1, 0, 1))};
  conf_check(c, conf_run(c, TC_FN(m_gather0), 2, in0), 2, (int64_t[]){1, 3}, D(4, 2, NAN), 0, 0);
}
static tc_tensor *m_gather_prim(tc_tensor *x, tc_tensor *index) { return tc_gather(x, 1, index); }
/* An out-of-range index is an error, as in PyTorch: eager mode checks the values on the host; a
 * compiled graph cannot see them while tracing, so its kernels check them (ABI 2.3's index
 * error record) and the host reports the first at the call (host memory) or at the next wait
 * (a device). Too large and negative (never wrapped); then a good call works. */
CONF_CASE(prims, gather_out_of_range_is_an_error) {
  const bool eager = !strcmp(conf_backend(c), "eager");
  tc_tensor *x = tensor_of(TC_F32, 2, S23, D(1, 2, 3, 4, 5, 6));
  tc_tensor *big[2] = {x, tensor_of(TC_I64, 2, (int64_t[]){2, 2}, D(2, 0, 3, 1))};
  conf_expect_error(c, TC_FN(m_gather_prim), 2, big,
                    eager ? "tc_gather: index[1, 0] is 3, out of range for dim 1 of x (x: 2x3) of size 3"
                          : "tc_gather: index value 3 is out of range for dim 1 of x of size 3");
  tc_tensor *neg[2] = {x, tensor_of(TC_I32, 2, (int64_t[]){2, 2}, D(0, 0, 1, -1))};
  conf_expect_error(c, TC_FN(m_gather_prim), 2, neg,
                    eager ? "tc_gather: index[1, 1] is -1, out of range for dim 1 of x"
                          : "tc_gather: index value -1 is out of range for dim 1 of x of size 3");
  tc_tensor *good[2] = {x, tensor_of(TC_I64, 2, (int64_t[]){2, 2}, D(2, 0, 1, 2))};
  conf_check(c, conf_run(c, TC_FN(m_gather_prim), 2, good), 2, (int64_t[]){2, 2}, D(3, 1, 5, 6), 0, 0);
}

static tc_tensor *m_scatter_add(tc_tensor *x, tc_tensor *index, tc_tensor *src) { return tc_scatter_add(x, 1, index, src); }
CONF_CASE(prims, scatter_add) {
  /* duplicate indices accumulate */
  tc_tensor *in[3] = {tensor_of(TC_F32, 2, S23, D(1, 2, 3, 4, 5, 6)), tensor_of(TC_I64, 2, S23, D(0, 0, 2, 1, 1, 1)),
                      tensor_of(TC_F32, 2, S23, D(10, 20, 30, 0.5, 0.25, 0.125))};
  conf_check(c, conf_run(c, TC_FN(m_scatter_add), 3, in), 2, S23, D(31, 2, 33, 4, 5.875, 6), 0, 0);
  tc_tensor *ints[3] = {tensor_of(TC_I32, 2, S23, D(0, 0, 0, 0, 0, 0)), tensor_of(TC_I32, 2, (int64_t[]){2, 1}, D(2, 0)),
                        tensor_of(TC_I32, 2, (int64_t[]){2, 1}, D(7, -7))};
  conf_check(c, conf_run(c, TC_FN(m_scatter_add), 3, ints), 2, S23, D(0, 0, 7, -7, 0, 0), 0, 0);
}
static tc_tensor *m_scatter_add_prim(tc_tensor *x, tc_tensor *index, tc_tensor *src) {
  return tc_scatter_add(x, 1, index, src);
}
CONF_CASE(prims, scatter_add_out_of_range_is_an_error) {
  const bool eager = !strcmp(conf_backend(c), "eager");
  tc_tensor *x = tensor_of(TC_F32, 2, S23, D(1, 2, 3, 4, 5, 6));
  tc_tensor *src = tensor_of(TC_F32, 2, S23, D(10, 20, 30, 40, 50, 60));
  tc_tensor *big[3] = {x, tensor_of(TC_I64, 2, S23, D(0, 2, 1, 2, 99, 2)), src};
  conf_expect_error(c, TC_FN(m_scatter_add_prim), 3, big,
                    eager ? "tc_scatter_add: index[1, 1] is 99, out of range for dim 1"
                          : "tc_scatter_add: index value 99 is out of range for dim 1 of x of size 3");
  tc_tensor *neg[3] = {x, tensor_of(TC_I32, 2, S23, D(0, -1, 1, 2, 0, 2)), src};
  conf_expect_error(c, TC_FN(m_scatter_add_prim), 3, neg,
                    eager ? "tc_scatter_add: index[0, 1] is -1, out of range for dim 1"
                          : "tc_scatter_add: index value -1 is out of range for dim 1 of x of size 3");
  tc_tensor *good[3] = {x, tensor_of(TC_I64, 2, S23, D(0, 0, 2, 2, 1, 2)), src};
  conf_check(c, conf_run(c, TC_FN(m_scatter_add_prim), 3, good), 2, S23, D(31, 2, 33, 4, 55, 106), 0, 0);
}

/* ================================================================ creation */
static tc_tensor *m_arange_i64(void) { return tc_arange(0, 5, 1, TC_I64); }
static tc_tensor *m_arange_f32(void) { return tc_arange(1, 2, 0.25, TC_F32); }
static tc_tensor *m_arange_plus(tc_tensor *x) { return tc_add(x, tc_arange(0, 3, 1, TC_F32)); }
CONF_CASE(prims, iota) {
  conf_check(c, conf_run(c, TC_FN(m_arange_i64), 0, NULL), 1, (int64_t[]){5}, D(0, 1, 2, 3, 4), 0, 0);
  conf_check(c, conf_run(c, TC_FN(m_arange_f32), 0, NULL), 1, (int64_t[]){4}, D(1, 1.25, 1.5, 1.75), 0, 0);
  tc_tensor *x = tensor_of(TC_F32, 2, S23, D(10, 10, 10, 20, 20, 20));
  conf_check(c, conf_run(c, TC_FN(m_arange_plus), 1, &x), 2, S23, D(10, 11, 12, 20, 21, 22), 0, 0);
}

static tc_tensor *m_full_neg_zero(void) { return tc_full(-0.0, TC_F32, 2, (int64_t[]){2, 2}); }
static tc_tensor *m_full_special(void) { return tc_cat(2, (tc_tensor *[]){tc_full(INFINITY, TC_F32, 1, (int64_t[]){2}), tc_full(NAN, TC_F32, 1, (int64_t[]){1})}, 0); }
static tc_tensor *m_full_int(void) { return tc_full(3.7, TC_I32, 1, (int64_t[]){2}); }
static tc_tensor *m_plus_ones(tc_tensor *x) { return tc_add(x, tc_ones(TC_F64, 1, (int64_t[]){3})); }
CONF_CASE(prims, constant) {
  conf_check(c, conf_run(c, TC_FN(m_full_neg_zero), 0, NULL), 2, (int64_t[]){2, 2}, D(-0.0, -0.0, -0.0, -0.0), 0, 0);
  conf_check(c, conf_run(c, TC_FN(m_full_special), 0, NULL), 1, (int64_t[]){3}, D(INFINITY, INFINITY, NAN), 0, 0);
  conf_check(c, conf_run(c, TC_FN(m_full_int), 0, NULL), 1, (int64_t[]){2}, D(3, 3), 0, 0);
  tc_tensor *x = VEC(TC_F64, D(1, -1, 0.5));
  conf_check(c, conf_run(c, TC_FN(m_plus_ones), 1, &x), 1, (int64_t[]){3}, D(2, 0, 1.5), 0, 0);
}

/* CONSTANT whose value is a size: the count a mean divides by. */
static tc_tensor *m_mean1(tc_tensor *x) { return tc_mean(x, 1, (int[]){1}, false); }
CONF_CASE(prims, constant_of_size) {
  tc_tensor *x = tensor_of(TC_F32, 2, S23, D(1, 2, 3, 4, 5, 9));
  conf_check(c, conf_run(c, TC_FN(m_mean1), 1, &x), 1, (int64_t[]){2}, D(2, 6), 0, 0);
}

/* An independent Philox4x32-10, written from docs/primitives.md, to compute expected bits. */
static double philox_uniform(uint64_t seed, uint64_t counter) {
  uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int round = 0; round < 10; round++) {
    if (round) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1;
    c3 = (uint32_t)p0;
    c0 = n0;
    c2 = n2;
  }
  return (double)(c0 >> 8) * 0x1p-24;
}

static tc_tensor *m_rand_f32(void) { return tc_rand(0, TC_F32, 2, (int64_t[]){2, 3}); }
static tc_tensor *m_rand_f64(void) { return tc_rand(0x123456789abcdefull, TC_F64, 1, (int64_t[]){5}); }
CONF_CASE(prims, random_philox) {
  double want[6];
  for (int i = 0; i < 6; i++) want[i] = philox_uniform(0, (uint64_t)i);
  if (want[0] != (double)(0x6627e8d5u >> 8) * 0x1p-24) conf_fail(c, "the suite's own Philox misses Random123's vector");
  conf_check(c, conf_run(c, TC_FN(m_rand_f32), 0, NULL), 2, (int64_t[]){2, 3}, want, 0, 0);
  double w64[5];
  for (int i = 0; i < 5; i++) w64[i] = philox_uniform(0x123456789abcdefull, (uint64_t)i);
  conf_check(c, conf_run(c, TC_FN(m_rand_f64), 0, NULL), 1, (int64_t[]){5}, w64, 0, 0);
}

/* ================================================================ matmul */
static tc_tensor *m_matmul(tc_tensor *a, tc_tensor *b) { return tc_matmul(a, b); }
CONF_CASE(prims, matmul) {
  tc_tensor *in[2] = {tensor_of(TC_F32, 2, S23, D(1, 2, 3, 4, 5, 6)), tensor_of(TC_F32, 2, (int64_t[]){3, 2}, D(1, 0, 0, 1, 1, 1))};
  conf_check(c, conf_run(c, TC_FN(m_matmul), 2, in), 2, (int64_t[]){2, 2}, D(4, 5, 10, 11), 0, 0);
}
CONF_CASE(prims, matmul_batched) {
  tc_tensor *in[2] = {tensor_of(TC_F32, 3, (int64_t[]){2, 2, 3}, D(1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0)),
                      tensor_of(TC_F32, 3, (int64_t[]){2, 3, 2}, D(1, 0, 0, 1, 1, 1, 2, 5, 3, 6, 4, 7))};
  conf_check(c, conf_run(c, TC_FN(m_matmul), 2, in), 3, (int64_t[]){2, 2, 2}, D(4, 5, 10, 11, 2, 5, 3, 6), 0, 0);
}
CONF_CASE(prims, matmul_nan_inf) {
  tc_tensor *in[2] = {tensor_of(TC_F32, 2, (int64_t[]){2, 2}, D(1, INFINITY, NAN, 0)),
                      tensor_of(TC_F32, 2, (int64_t[]){2, 2}, D(0, 1, 1, 1))};
  conf_check(c, conf_run(c, TC_FN(m_matmul), 2, in), 2, (int64_t[]){2, 2}, D(INFINITY, INFINITY, NAN, NAN), 0, 0);
}
CONF_CASE(prims, matmul_random_strided) {
  /* 24x40 @ (40x16 given transposed): against a double reference */
  enum { M = 24, K = 40, N = 16 };
  double a[M * K], bt[N * K], want[M * N];
  conf_randn(1, a, M * K);
  conf_randn(2, bt, N * K);
  for (int i = 0; i < M * K; i++) a[i] = F(a[i]);
  for (int i = 0; i < N * K; i++) bt[i] = F(bt[i]);
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      double acc = 0;
      for (int k = 0; k < K; k++) acc += a[m * K + k] * bt[n * K + k];
      want[m * N + n] = acc;
    }
  tc_tensor *b = tc_transpose(tensor_of(TC_F32, 2, (int64_t[]){N, K}, bt), 0, 1);
  tc_tensor *in[2] = {tensor_of(TC_F32, 2, (int64_t[]){M, K}, a), b};
  conf_check(c, conf_run(c, TC_FN(m_matmul), 2, in), 2, (int64_t[]){M, N}, want, 1e-4, 1e-4);
}
CONF_CASE(prims, matmul_f64) {
  /* f64 all the way: an f32 accumulator would be off by ~1e-8 */
  tc_tensor *in[2] = {tensor_of(TC_F64, 2, (int64_t[]){1, 3}, D(0.1, 0.2, 0.3)),
                      tensor_of(TC_F64, 2, (int64_t[]){3, 1}, D(1, 2, 1.0 / 3))};
  conf_check(c, conf_run(c, TC_FN(m_matmul), 2, in), 2, (int64_t[]){1, 1}, D(0.1 + 0.4 + 0.1), 1e-14, 0);
}
