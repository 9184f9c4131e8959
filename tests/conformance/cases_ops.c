/* cases_ops.c — conformance cases for the public ops (tc.h): each op on seeded random inputs,
 * compared with a double-precision reference computed here in plain C. Covers broadcasting,
 * type promotion, keepdim, negative dims, non-contiguous (permuted, sliced) inputs, and
 * reshapes that stay valid when a size changes (each such case runs at two sizes). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* ---------------------------------------------------------------- helpers */
#define SIZES(...) ((const int64_t[]){__VA_ARGS__})
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Runs a model body in a scope and returns its result alive: models release nothing by hand. */
#define SCOPED(expr)                                                                               \
  do {                                                                                             \
    tc_scope *s_ = tc_scope_open();                                                                \
    tc_tensor *y_ = (expr);                                                                        \
    tc_scope_keep(s_, y_);                                                                         \
    tc_scope_close(s_);                                                                            \
    return y_;                                                                                     \
  } while (0)

static int64_t numel_of(int rank, const int64_t *sizes) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= sizes[i];
  return n;
}

/* A tensor of dtype holding v (converted: ints truncate, bools are v != 0). */
static tc_tensor *mk(tc_dtype d, const double *v, int rank, const int64_t *sizes) {
  int64_t n = numel_of(rank, sizes);
  void *buf = malloc((size_t)(n ? n : 1) * 8);
  for (int64_t i = 0; i < n; i++) {
    switch (d) {
    case TC_F32: ((float *)buf)[i] = (float)v[i]; break;
    case TC_F64: ((double *)buf)[i] = v[i]; break;
    case TC_I32: ((int32_t *)buf)[i] = (int32_t)v[i]; break;
    case TC_I64: ((int64_t *)buf)[i] = (int64_t)v[i]; break;
    default: ((uint8_t *)buf)[i] = v[i] != 0; break;
    }
  }
  tc_tensor *t = tc_from_host(buf, d, rank, sizes);
  free(buf);
  return t;
}

/* x rounded to f32. Through a volatile: GCC 12's vectorizer drops the narrowing in loops of
 * `v[i] = (float)v[i]` at -O2, leaving the values unrounded. */
static double f32(double x) {
  volatile float f = (float)x;
  return f;
}

/* n seeded normal values, rounded to f32 so the reference sees what the tensor holds. */
static double *randf(unsigned long long seed, int64_t n) {
  double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  conf_randn(seed, v, n);
  for (int64_t i = 0; i < n; i++) v[i] = f32(v[i]);
  return v;
}

/* Small integers in [lo, hi) from a seed. */
static double *randint(unsigned long long seed, int64_t n, int lo, int hi) {
  double *v = randf(seed, n);
  for (int64_t i = 0; i < n; i++) {
    uint64_t h = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull ^ seed * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    v[i] = lo + (double)(h % (uint64_t)(hi - lo));
  }
  return v;
}

static double *zalloc(int64_t n) { return calloc((size_t)(n ? n : 1), sizeof(double)); }

/* conf_check's comparison, failing the case with `what` (the op under test) in the message:
 * these cases check many ops each, and only the first failure of a case is reported. */
static bool check_labeled(conf_ctx *c, const char *what, tc_tensor *y, int rank, const int64_t *sizes,
                          const double *want, double rtol, double atol) {
  bool ok = tc_rank(y) == rank;
  for (int d = 0; ok && d < rank; d++) ok = tc_size(y, d) == sizes[d];
  if (!ok) {
    conf_fail(c, "%s: result has rank %d, want %d (or the sizes differ)", what, tc_rank(y), rank);
    return false;
  }
  int64_t n = tc_numel(y);
  double *got = zalloc(n);
  tc_tensor *y64 = tc_to_dtype(y, TC_F64);
  if (!y64 || tc_to_host(y64, got, (size_t)n * sizeof *got) != TC_OK) {
    conf_fail(c, "%s: reading the result: %s", what, tc_last_error());
    ok = false;
  }
  for (int64_t i = 0; ok && i < n; i++) {
    double g = got[i], w = want[i];
    bool match = isnan(w) ? isnan(g)
                 : isnan(g) ? false
                 : isinf(w) ? g == w
                 : rtol == 0 && atol == 0 ? g == w && (w != 0 || signbit(g) == signbit(w))
                 : fabs(g - w) <= atol + rtol * fabs(w);
    if (!match) {
      conf_fail(c, "%s: element %lld of %lld: got %.9g, want %.9g (rtol %g, atol %g)", what, (long long)i,
                (long long)n, g, w, rtol, atol);
      ok = false;
    }
  }
  tc_release(y64);
  free(got);
  return ok && conf_check(c, y, rank, sizes, want, rtol, atol);
}

/* Runs fn on the inputs, checks (rank, sizes, want), releases the output and the inputs. */
static bool run_check(conf_ctx *c, const char *what, tc_model_fn fn, int n_in, tc_tensor **in, int rank,
                      const int64_t *sizes, const double *want, double rtol, double atol) {
  bool ok = false;
  for (int i = 0; i < n_in; i++)
    if (!in[i]) {
      conf_fail(c, "%s: could not build input %d: %s", what, i, tc_last_error());
      goto done;
    }
  tc_tensor *y = conf_run(c, fn, n_in, in);
  if (y) ok = check_labeled(c, what, y, rank, sizes, want, rtol, atol);
  else conf_fail(c, "%s: %s", what, tc_last_error());
  tc_release(y);
done:
  for (int i = 0; i < n_in; i++) tc_release(in[i]);
  return ok;
}

static bool expect_dtype(conf_ctx *c, const char *what, tc_model_fn fn, int n_in, tc_tensor **in, tc_dtype want) {
  tc_tensor *y = conf_run(c, fn, n_in, in);
  bool ok = y && tc_dtype_of(y) == want;
  if (y && !ok) conf_fail(c, "%s: dtype %s, want %s", what, tc_dtype_name(tc_dtype_of(y)), tc_dtype_name(want));
  tc_release(y);
  return ok;
}

/* Flat index into an operand of shape (rank_in, in) broadcast to (rank, out), at flat index i
 * of the result (trailing dims aligned, size-1 dims repeat). */
static int64_t bidx(int rank, const int64_t *out, int64_t i, int rank_in, const int64_t *in) {
  int64_t idx = 0, stride = 1;
  for (int d = rank - 1; d >= 0; d--) {
    int64_t coord = i % out[d];
    i /= out[d];
    int di = d - (rank - rank_in);
    if (di >= 0) {
      if (in[di] != 1) idx += coord * stride;
      stride *= in[di];
    }
  }
  return idx;
}

/* Philox4x32-10 as docs/primitives.md states it, written independently of the backends. */
static double philox_uniform(uint64_t seed, uint64_t counter) {
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
  for (int r = 0; r < 10; r++) {
    if (r) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1, c3 = (uint32_t)p0, c0 = n0, c2 = n2;
  }
  return (double)(c0 >> 8) * 0x1p-24;
}

/* ---------------------------------------------------------------- creation */
static tc_tensor *m_full(void) { return tc_full(2.5, TC_F32, 2, SIZES(2, 3)); }
static tc_tensor *m_zeros_ones(void) {
  SCOPED(tc_add(tc_zeros(TC_I64, 1, SIZES(4)), tc_mul_scalar(tc_ones(TC_I64, 1, SIZES(4)), 3)));
}
static tc_tensor *m_scalar(void) { return tc_scalar(-1.25, TC_F64); }

CONF_CASE(ops, create_full_zeros_ones_scalar) {
  double full[6] = {2.5, 2.5, 2.5, 2.5, 2.5, 2.5}, three[4] = {3, 3, 3, 3}, s = -1.25;
  run_check(c, "tc_full", TC_FN(m_full), 0, NULL, 2, SIZES(2, 3), full, 0, 0);
  run_check(c, "tc_zeros/tc_ones", TC_FN(m_zeros_ones), 0, NULL, 1, SIZES(4), three, 0, 0);
  expect_dtype(c, "tc_zeros/tc_ones", TC_FN(m_zeros_ones), 0, NULL, TC_I64);
  run_check(c, "tc_scalar", TC_FN(m_scalar), 0, NULL, 0, NULL, &s, 0, 0);
}

static tc_tensor *m_full_like_bool(tc_tensor *x) { return tc_full_like(tc_transpose(x, 0, 1), 1.0, TC_BOOL); }
static tc_tensor *m_zeros_like(tc_tensor *x) { return tc_add(tc_zeros_like(x), tc_ones_like(x)); }

CONF_CASE(ops, create_like) {
  double ones[6] = {1, 1, 1, 1, 1, 1};
  tc_tensor *in[1] = {tc_randn(5, TC_F32, 2, SIZES(2, 3))};
  expect_dtype(c, "tc_full_like bool", TC_FN(m_full_like_bool), 1, in, TC_BOOL);
  run_check(c, "tc_full_like bool of a transposed view", TC_FN(m_full_like_bool), 1, in, 2, SIZES(3, 2), ones, 0, 0);
  tc_tensor *in2[1] = {tc_randn(6, TC_F32, 2, SIZES(2, 3))};
  run_check(c, "tc_zeros_like + tc_ones_like", TC_FN(m_zeros_like), 1, in2, 2, SIZES(2, 3), ones, 0, 0);
}

static tc_tensor *m_arange_f32(void) { return tc_arange(-1, 4, 0.5, TC_F32); }
static tc_tensor *m_arange_i64(void) { return tc_arange(10, 0, -3, TC_I64); }

CONF_CASE(ops, create_arange) {
  double f[10], i64[4] = {10, 7, 4, 1};
  for (int i = 0; i < 10; i++) f[i] = -1 + 0.5 * i;
  run_check(c, "tc_arange f32", TC_FN(m_arange_f32), 0, NULL, 1, SIZES(10), f, 0, 0);
  run_check(c, "tc_arange i64 step -3", TC_FN(m_arange_i64), 0, NULL, 1, SIZES(4), i64, 0, 0);
  expect_dtype(c, "tc_arange i64", TC_FN(m_arange_i64), 0, NULL, TC_I64);
}

static tc_tensor *m_rand(void) { return tc_rand(1234, TC_F32, 2, SIZES(3, 5)); }
static tc_tensor *m_rand64(void) { return tc_rand(0x123456789ABCull, TC_F64, 1, SIZES(7)); }
static tc_tensor *m_randn(void) { return tc_randn(42, TC_F32, 2, SIZES(4, 8)); }

CONF_CASE(ops, create_rand_randn) {
  double u[15], u64[7], z[32];
  for (int i = 0; i < 15; i++) u[i] = philox_uniform(1234, (uint64_t)i);
  for (int i = 0; i < 7; i++) u64[i] = philox_uniform(0x123456789ABCull, (uint64_t)i);
  for (int i = 0; i < 32; i++) {
    double u1 = philox_uniform(42, (uint64_t)i), u2 = philox_uniform(42, (uint64_t)(32 + i));
    z[i] = sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
  }
  run_check(c, "tc_rand f32", TC_FN(m_rand), 0, NULL, 2, SIZES(3, 5), u, 0, 0);
  run_check(c, "tc_rand f64", TC_FN(m_rand64), 0, NULL, 1, SIZES(7), u64, 0, 0);
  run_check(c, "tc_randn", TC_FN(m_randn), 0, NULL, 2, SIZES(4, 8), z, 1e-5, 1e-5);
}

/* ---------------------------------------------------------------- views */
static tc_tensor *m_reshape_infer(tc_tensor *x) { SCOPED(tc_mul_scalar(tc_reshape(x, 2, SIZES(-1, 3)), 2)); }

/* Two sizes of the leading dim: a compiled backend must infer -1 from the actual size. */
CONF_CASE(ops, view_reshape_infer) {
  for (int64_t rows = 4; rows <= 6; rows += 2) {
    int64_t n = rows * 6;
    double *x = randf(10 + rows, n), *want = zalloc(n);
    for (int64_t i = 0; i < n; i++) want[i] = 2 * x[i];
    run_check(c, "tc_reshape -1", TC_FN(m_reshape_infer), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(rows, 6))}, 2,
              SIZES(n / 3, 3), want, 0, 0);
    free(x), free(want);
  }
}

static tc_tensor *m_flatten_unflatten(tc_tensor *x) {
  SCOPED(tc_add_scalar(tc_unflatten(tc_flatten(x, 1, -1), 1, 2, SIZES(-1, 4)), 1));
}
static tc_tensor *m_flatten_all(tc_tensor *x) { SCOPED(tc_add_scalar(tc_flatten(x, 0, -1), 0)); }

CONF_CASE(ops, view_flatten_unflatten) {
  for (int64_t b = 2; b <= 3; b++) {
    int64_t n = b * 3 * 4;
    double *x = randf(20 + b, n), *want = zalloc(n);
    for (int64_t i = 0; i < n; i++) want[i] = f32(x[i] + 1);
    run_check(c, "tc_flatten/tc_unflatten", TC_FN(m_flatten_unflatten), 1,
              (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(b, 3, 4))}, 3, SIZES(b, 3, 4), want, 0, 0);
    run_check(c, "tc_flatten all", TC_FN(m_flatten_all), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(b, 3, 4))}, 1,
              SIZES(n), x, 0, 0);
    free(x), free(want);
  }
}

static tc_tensor *m_permute(tc_tensor *x) { SCOPED(tc_contiguous(tc_permute(x, (const int[]){2, 0, -2}))); }
static tc_tensor *m_transpose(tc_tensor *x) { SCOPED(tc_add_scalar(tc_transpose(x, -1, 0), 0)); }

CONF_CASE(ops, view_permute_transpose) {
  double *x = randf(30, 24), p[24], t[24];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 4; k++) {
        p[(k * 2 + i) * 3 + j] = x[(i * 3 + j) * 4 + k]; /* (4, 2, 3) */
        t[(k * 3 + j) * 2 + i] = x[(i * 3 + j) * 4 + k]; /* (4, 3, 2) */
      }
  run_check(c, "tc_permute", TC_FN(m_permute), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(2, 3, 4))}, 3,
            SIZES(4, 2, 3), p, 0, 0);
  run_check(c, "tc_transpose", TC_FN(m_transpose), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(2, 3, 4))}, 3,
            SIZES(4, 3, 2), t, 0, 0);
  free(x);
}

/* Python slicing: x[-100:-1, -3:100:2] on a (3, 7). */
static tc_tensor *m_slice(tc_tensor *x) { SCOPED(tc_add_scalar(tc_slice(tc_slice(x, 1, -3, 100, 2), 0, -100, -1, 1), 0)); }
static tc_tensor *m_slice_empty(tc_tensor *x) { SCOPED(tc_add_scalar(tc_slice(x, -1, 5, 2, 1), 0)); }
static tc_tensor *m_slice_to_end(tc_tensor *x) { SCOPED(tc_add_scalar(tc_slice(x, 0, 1, INT64_MAX, 2), 0)); }

CONF_CASE(ops, view_slice) {
  double *x = randf(40, 21), want[4], odd[7];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) want[i * 2 + j] = x[i * 7 + 4 + 2 * j];
  run_check(c, "tc_slice negative/clamped", TC_FN(m_slice), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(3, 7))}, 2,
            SIZES(2, 2), want, 0, 0);
  run_check(c, "tc_slice empty", TC_FN(m_slice_empty), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(3, 7))}, 2,
            SIZES(3, 0), want, 0, 0);
  for (int j = 0; j < 7; j++) odd[j] = x[7 + j];
  run_check(c, "tc_slice to the end", TC_FN(m_slice_to_end), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(3, 7))}, 2,
            SIZES(1, 7), odd, 0, 0);
  free(x);
}

static tc_tensor *m_expand(tc_tensor *x) { SCOPED(tc_add_scalar(tc_expand(x, 3, SIZES(2, -1, 4)), 0)); }
static tc_tensor *m_unsqueeze_squeeze(tc_tensor *x) {
  SCOPED(tc_add_scalar(tc_squeeze(tc_squeeze(tc_unsqueeze(tc_unsqueeze(x, -1), 0), -1), 1), 0));
}

CONF_CASE(ops, view_expand_unsqueeze_squeeze) {
  double *x = randf(50, 3), want[24];
  for (int i = 0; i < 24; i++) want[i] = x[(i / 4) % 3];
  run_check(c, "tc_expand", TC_FN(m_expand), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(3, 1))}, 3, SIZES(2, 3, 4),
            want, 0, 0);
  /* (3) -> (1, 3, 1) -> squeeze(-1) -> (1, 3) -> squeeze(1) leaves the size-3 dim alone. */
  run_check(c, "tc_unsqueeze/tc_squeeze", TC_FN(m_unsqueeze_squeeze), 1, (tc_tensor *[]){mk(TC_F32, x, 1, SIZES(3))},
            2, SIZES(1, 3), x, 0, 0);
  free(x);
}

static tc_tensor *m_contiguous(tc_tensor *x) { return tc_contiguous(x); }
static tc_tensor *m_to_i32(tc_tensor *x) { SCOPED(tc_to_dtype(tc_mul_scalar(x, 3), TC_I32)); }
static tc_tensor *m_to_bool(tc_tensor *x) { return tc_to_dtype(x, TC_BOOL); }

CONF_CASE(ops, view_contiguous_to_dtype) {
  double *x = randf(60, 12), t[12], i32[12], b[12];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) t[j * 3 + i] = x[i * 4 + j];
  tc_tensor *xt = mk(TC_F32, x, 2, SIZES(3, 4));
  tc_tensor *tr = tc_transpose(xt, 0, 1); /* a non-contiguous input */
  tc_release(xt);
  run_check(c, "tc_contiguous of a transpose", TC_FN(m_contiguous), 1, (tc_tensor *[]){tr}, 2, SIZES(4, 3), t, 0, 0);
  x[5] = 0;
  for (int i = 0; i < 12; i++) i32[i] = trunc(f32(3 * x[i])) + 0.0, b[i] = x[i] != 0;
  run_check(c, "tc_to_dtype i32", TC_FN(m_to_i32), 1, (tc_tensor *[]){mk(TC_F32, x, 1, SIZES(12))}, 1, SIZES(12), i32,
            0, 0);
  run_check(c, "tc_to_dtype bool", TC_FN(m_to_bool), 1, (tc_tensor *[]){mk(TC_F32, x, 1, SIZES(12))}, 1, SIZES(12), b,
            0, 0);
  free(x);
}

/* ---------------------------------------------------------------- binary elementwise */
typedef tc_tensor *(*binop_fn)(tc_tensor *, tc_tensor *);
static tc_tensor *m_add(tc_tensor *a, tc_tensor *b) { return tc_add(a, b); }
static tc_tensor *m_sub(tc_tensor *a, tc_tensor *b) { return tc_sub(a, b); }
static tc_tensor *m_mul(tc_tensor *a, tc_tensor *b) { return tc_mul(a, b); }
static tc_tensor *m_div(tc_tensor *a, tc_tensor *b) { return tc_div(a, b); }
static tc_tensor *m_pow(tc_tensor *a, tc_tensor *b) { return tc_pow(a, b); }
static tc_tensor *m_maximum(tc_tensor *a, tc_tensor *b) { return tc_maximum(a, b); }
static tc_tensor *m_minimum(tc_tensor *a, tc_tensor *b) { return tc_minimum(a, b); }
static tc_tensor *m_eq(tc_tensor *a, tc_tensor *b) { return tc_eq(a, b); }
static tc_tensor *m_ne(tc_tensor *a, tc_tensor *b) { return tc_ne(a, b); }
static tc_tensor *m_lt(tc_tensor *a, tc_tensor *b) { return tc_lt(a, b); }
static tc_tensor *m_le(tc_tensor *a, tc_tensor *b) { return tc_le(a, b); }
static tc_tensor *m_gt(tc_tensor *a, tc_tensor *b) { return tc_gt(a, b); }
static tc_tensor *m_ge(tc_tensor *a, tc_tensor *b) { return tc_ge(a, b); }
static tc_tensor *m_and(tc_tensor *a, tc_tensor *b) { return tc_logical_and(a, b); }
static tc_tensor *m_or(tc_tensor *a, tc_tensor *b) { return tc_logical_or(a, b); }

static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_max(double a, double b) { return a > b ? a : b; }
static double r_min(double a, double b) { return a < b ? a : b; }
static double r_eq(double a, double b) { return a == b; }
static double r_ne(double a, double b) { return a != b; }
static double r_lt(double a, double b) { return a < b; }
static double r_le(double a, double b) { return a <= b; }
static double r_gt(double a, double b) { return a > b; }
static double r_ge(double a, double b) { return a >= b; }
static double r_and(double a, double b) { return a != 0 && b != 0; }
static double r_or(double a, double b) { return a != 0 || b != 0; }

typedef struct binop_case {
  const char *name;
  tc_model_fn fn;
  double (*ref)(double, double);
} binop_case;

static const binop_case binops[] = {
    {"tc_add", TC_FN(m_add), r_add},       {"tc_sub", TC_FN(m_sub), r_sub},
    {"tc_mul", TC_FN(m_mul), r_mul},       {"tc_div", TC_FN(m_div), r_div},
    {"tc_maximum", TC_FN(m_maximum), r_max}, {"tc_minimum", TC_FN(m_minimum), r_min},
    {"tc_eq", TC_FN(m_eq), r_eq},          {"tc_ne", TC_FN(m_ne), r_ne},
    {"tc_lt", TC_FN(m_lt), r_lt},          {"tc_le", TC_FN(m_le), r_le},
    {"tc_gt", TC_FN(m_gt), r_gt},          {"tc_ge", TC_FN(m_ge), r_ge},
    {"tc_logical_and", TC_FN(m_and), r_and}, {"tc_logical_or", TC_FN(m_or), r_or},
};

/* Every binary op on (3, 1, 4) with (2, 4): broadcast both ways. Values are rounded to 1/8 so
 * that equal elements occur and comparisons are exercised on ties. */
CONF_CASE(ops, binary_broadcast) {
  int64_t na = 12, nb = 8, n = 24;
  double *a = randf(70, na), *b = randf(71, nb), *want = zalloc(n);
  for (int i = 0; i < na; i++) a[i] = round(a[i] * 4) / 8;
  for (int i = 0; i < nb; i++) b[i] = round(b[i] * 4) / 8;
  b[1] = a[1], b[6] = 0; /* a tie, and a zero for the logical ops */
  for (int k = 0; k < NELEM(binops); k++) {
    for (int64_t i = 0; i < n; i++) {
      double x = a[bidx(3, SIZES(3, 2, 4), i, 3, SIZES(3, 1, 4))], y = b[bidx(3, SIZES(3, 2, 4), i, 2, SIZES(2, 4))];
      want[i] = binops[k].ref(x, y);
    }
    if (binops[k].ref == r_div) /* a rounded f32 quotient */
      for (int64_t i = 0; i < n; i++) want[i] = f32(want[i]);
    run_check(c, binops[k].name, binops[k].fn, 2,
              (tc_tensor *[]){mk(TC_F32, a, 3, SIZES(3, 1, 4)), mk(TC_F32, b, 2, SIZES(2, 4))}, 3, SIZES(3, 2, 4),
              want, 1e-7, 0);
  }
  free(a), free(b), free(want);
}

/* PyTorch's promotion: i32 + f32 -> f32, i64 * i32 -> i64, bool + i32 -> i32, f32 + f64 ->
 * f64, i64 / i64 -> f32 (true division), comparisons -> bool. */
CONF_CASE(ops, binary_promotion) {
  double ai[6] = {1, -2, 3, 7, -9, 4}, bi[6] = {2, 5, -3, 2, 4, -8}, bo[6] = {1, 0, 1, 1, 0, 0};
  double *f = randf(80, 6), want[6];
  struct {
    const char *name;
    tc_model_fn fn;
    tc_dtype da, db, dout;
    const double *a, *b;
    double (*ref)(double, double);
  } cases[] = {
      {"i32 + f32", TC_FN(m_add), TC_I32, TC_F32, TC_F32, ai, f, r_add},
      {"i64 * i32", TC_FN(m_mul), TC_I64, TC_I32, TC_I64, ai, bi, r_mul},
      {"bool + i32", TC_FN(m_add), TC_BOOL, TC_I32, TC_I32, bo, bi, r_add},
      {"f32 + f64", TC_FN(m_add), TC_F32, TC_F64, TC_F64, f, ai, r_add},
      {"i64 / i64", TC_FN(m_div), TC_I64, TC_I64, TC_F32, ai, bi, r_div},
      {"i32 - i64", TC_FN(m_sub), TC_I32, TC_I64, TC_I64, ai, bi, r_sub},
      {"i32 < f32", TC_FN(m_lt), TC_I32, TC_F32, TC_BOOL, ai, f, r_lt},
      {"i64 max i32", TC_FN(m_maximum), TC_I64, TC_I32, TC_I64, ai, bi, r_max},
      {"i32 and f32", TC_FN(m_and), TC_I32, TC_F32, TC_BOOL, ai, bo, r_and},
  };
  for (int k = 0; k < NELEM(cases); k++) {
    for (int i = 0; i < 6; i++) want[i] = cases[k].ref(cases[k].a[i], cases[k].b[i]);
    if (cases[k].dout == TC_F32)
      for (int i = 0; i < 6; i++) want[i] = f32(want[i]);
    tc_tensor *in[2] = {mk(cases[k].da, cases[k].a, 1, SIZES(6)), mk(cases[k].db, cases[k].b, 1, SIZES(6))};
    expect_dtype(c, cases[k].name, cases[k].fn, 2, in, cases[k].dout);
    run_check(c, cases[k].name, cases[k].fn, 2, in, 1, SIZES(6), want, 1e-7, 0);
  }
  free(f);
}

static tc_tensor *m_pow_scalar3(tc_tensor *x) { return tc_pow_scalar(x, 3); }
static tc_tensor *m_pow_scalar2(tc_tensor *x) { return tc_pow_scalar(x, 2); }
static tc_tensor *m_pow_scalar_half(tc_tensor *x) { return tc_pow_scalar(x, 0.5); }
static tc_tensor *m_add_scalar_int(tc_tensor *x) { return tc_add_scalar(x, 2); }
static tc_tensor *m_add_scalar_frac(tc_tensor *x) { return tc_add_scalar(x, 0.5); }
static tc_tensor *m_mul_scalar(tc_tensor *x) { return tc_mul_scalar(x, -1.5); }

CONF_CASE(ops, binary_pow_and_scalars) {
  double *x = randf(90, 8), *e = randf(91, 8), ax[8], want[8], ints[8] = {-3, -2, -1, 0, 1, 2, 3, 4};
  double ie[8] = {3, 2, 0, 5, 7, 1, 2, -1};
  for (int i = 0; i < 8; i++) ax[i] = fabs(x[i]) + 0.25;
  for (int i = 0; i < 8; i++) want[i] = pow(ax[i], e[i]);
  run_check(c, "tc_pow f32", TC_FN(m_pow), 2, (tc_tensor *[]){mk(TC_F32, ax, 1, SIZES(8)), mk(TC_F32, e, 1, SIZES(8))},
            1, SIZES(8), want, 2e-6, 0);
  for (int i = 0; i < 8; i++) want[i] = trunc(pow(ints[i], ie[i]));
  want[7] = 0; /* 4 ** -1 in integers */
  tc_tensor *ip[2] = {mk(TC_I64, ints, 1, SIZES(8)), mk(TC_I32, ie, 1, SIZES(8))};
  expect_dtype(c, "tc_pow i64 ** i32", TC_FN(m_pow), 2, ip, TC_I64);
  run_check(c, "tc_pow i64 ** i32", TC_FN(m_pow), 2, ip, 1, SIZES(8), want, 0, 0);
  for (int i = 0; i < 8; i++) want[i] = x[i] * x[i] * x[i];
  run_check(c, "tc_pow_scalar 3", TC_FN(m_pow_scalar3), 1, (tc_tensor *[]){mk(TC_F32, x, 1, SIZES(8))}, 1, SIZES(8),
            want, 2e-6, 0);
  for (int i = 0; i < 8; i++) want[i] = x[i] * x[i];
  run_check(c, "tc_pow_scalar 2", TC_FN(m_pow_scalar2), 1, (tc_tensor *[]){mk(TC_F32, x, 1, SIZES(8))}, 1, SIZES(8),
            want, 1e-7, 0);
  for (int i = 0; i < 8; i++) want[i] = sqrt(ax[i]);
  run_check(c, "tc_pow_scalar 0.5", TC_FN(m_pow_scalar_half), 1, (tc_tensor *[]){mk(TC_F32, ax, 1, SIZES(8))}, 1,
            SIZES(8), want, 1e-6, 0);
  for (int i = 0; i < 8; i++) want[i] = ints[i] * ints[i] * ints[i];
  run_check(c, "tc_pow_scalar i32", TC_FN(m_pow_scalar3), 1, (tc_tensor *[]){mk(TC_I32, ints, 1, SIZES(8))}, 1,
            SIZES(8), want, 0, 0);
  for (int i = 0; i < 8; i++) want[i] = ints[i] + 2;
  tc_tensor *ii = mk(TC_I32, ints, 1, SIZES(8));
  expect_dtype(c, "tc_add_scalar i32 + 2", TC_FN(m_add_scalar_int), 1, &ii, TC_I32);
  run_check(c, "tc_add_scalar i32 + 2", TC_FN(m_add_scalar_int), 1, &ii, 1, SIZES(8), want, 0, 0);
  for (int i = 0; i < 8; i++) want[i] = ints[i] + 0.5;
  ii = mk(TC_I64, ints, 1, SIZES(8));
  expect_dtype(c, "tc_add_scalar i64 + 0.5", TC_FN(m_add_scalar_frac), 1, &ii, TC_F32);
  run_check(c, "tc_add_scalar i64 + 0.5", TC_FN(m_add_scalar_frac), 1, &ii, 1, SIZES(8), want, 0, 0);
  for (int i = 0; i < 8; i++) want[i] = x[i] * -1.5;
  run_check(c, "tc_mul_scalar", TC_FN(m_mul_scalar), 1, (tc_tensor *[]){mk(TC_F32, x, 1, SIZES(8))}, 1, SIZES(8),
            want, 1e-7, 0);
  free(x), free(e);
}

static tc_tensor *m_not(tc_tensor *x) { return tc_logical_not(x); }
static tc_tensor *m_where(tc_tensor *cond, tc_tensor *a, tc_tensor *b) { return tc_where(cond, a, b); }
static tc_tensor *m_masked_fill(tc_tensor *x, tc_tensor *mask) { return tc_masked_fill(x, mask, -1e9); }
static tc_tensor *m_where_gt(tc_tensor *a, tc_tensor *b) { SCOPED(tc_where(tc_gt(a, b), a, b)); }

CONF_CASE(ops, logic_where_masked_fill) {
  double *x = randf(100, 12), *y = randf(101, 4), cond[3] = {1, 0, 1}, want[12], nx[12];
  x[3] = 0;
  for (int i = 0; i < 12; i++) nx[i] = x[i] == 0;
  run_check(c, "tc_logical_not", TC_FN(m_not), 1, (tc_tensor *[]){mk(TC_F32, x, 1, SIZES(12))}, 1, SIZES(12), nx, 0, 0);
  /* cond (3, 1) with a (3, 4) f32 and b (4) i32: broadcast all three, promote to f32. */
  for (int i = 0; i < 12; i++) want[i] = cond[i / 4] ? x[i] : trunc(y[i % 4]) + 0.0; /* ints have no -0 */
  run_check(c, "tc_where", TC_FN(m_where), 3,
            (tc_tensor *[]){mk(TC_BOOL, cond, 2, SIZES(3, 1)), mk(TC_F32, x, 2, SIZES(3, 4)), mk(TC_I32, y, 1, SIZES(4))},
            2, SIZES(3, 4), want, 0, 0);
  for (int i = 0; i < 12; i++) want[i] = x[i] > y[i % 4] ? x[i] : y[i % 4];
  run_check(c, "tc_where of tc_gt", TC_FN(m_where_gt), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(3, 4)), mk(TC_F32, y, 1, SIZES(4))}, 2, SIZES(3, 4), want, 0, 0);
  double mask[4] = {0, 1, 1, 0};
  for (int i = 0; i < 12; i++) want[i] = mask[i % 4] ? f32(-1e9) : x[i];
  run_check(c, "tc_masked_fill", TC_FN(m_masked_fill), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(3, 4)), mk(TC_BOOL, mask, 1, SIZES(4))}, 2, SIZES(3, 4), want, 0, 0);
  free(x), free(y);
}

/* Inputs that are views from the caller: a strided slice and a transpose. */
static tc_tensor *m_mul_add(tc_tensor *a, tc_tensor *b) { SCOPED(tc_add(tc_mul(a, b), a)); }
static tc_tensor *m_softmax_0_of(tc_tensor *x) { return tc_softmax(x, 0); }

CONF_CASE(ops, strided_inputs) {
  double *x = randf(105, 24), *y = randf(106, 12), want[12];
  /* a = x(4, 6)[:, 1::2] is (4, 3); b = y(3, 4)^T is (4, 3) */
  for (int r = 0; r < 4; r++)
    for (int k = 0; k < 3; k++) {
      double a = x[r * 6 + 1 + 2 * k], b = y[k * 4 + r];
      want[r * 3 + k] = f32(f32(a * b) + a);
    }
  tc_tensor *xt = mk(TC_F32, x, 2, SIZES(4, 6)), *yt = mk(TC_F32, y, 2, SIZES(3, 4));
  tc_tensor *in[2] = {tc_slice(xt, 1, 1, 6, 2), tc_transpose(yt, 0, 1)};
  tc_release(xt), tc_release(yt);
  run_check(c, "tc_mul/tc_add of views", TC_FN(m_mul_add), 2, in, 2, SIZES(4, 3), want, 0, 0);
  /* softmax over dim 0 of y^T (4, 3) is softmax along y's rows */
  double sm[12];
  for (int k = 0; k < 3; k++) {
    double m = -INFINITY, s = 0;
    for (int r = 0; r < 4; r++) m = fmax(m, y[k * 4 + r]);
    for (int r = 0; r < 4; r++) s += exp(y[k * 4 + r] - m);
    for (int r = 0; r < 4; r++) sm[r * 3 + k] = exp(y[k * 4 + r] - m) / s;
  }
  yt = mk(TC_F32, y, 2, SIZES(3, 4));
  in[0] = tc_transpose(yt, 0, 1);
  tc_release(yt);
  run_check(c, "tc_softmax of a transpose", TC_FN(m_softmax_0_of), 1, in, 2, SIZES(4, 3), sm, 1e-6, 1e-7);
  free(x), free(y);
}

/* Rank-0 tensors reduce and normalize as one-element vectors (dim 0 or -1), as in PyTorch. */
static tc_tensor *m_sum_scalar(tc_tensor *x) { return tc_sum(x, 1, (const int[]){-1}, true); }
static tc_tensor *m_mean_scalar(tc_tensor *x) { return tc_mean(x, 0, NULL, false); }
static tc_tensor *m_softmax_scalar(tc_tensor *x) { return tc_softmax(x, 0); }
static tc_tensor *m_argmax_scalar(tc_tensor *x) { return tc_argmax(x, 0, false); }

CONF_CASE(ops, rank0) {
  double v = -2.5, one = 1, zero = 0;
  run_check(c, "tc_sum of a scalar", TC_FN(m_sum_scalar), 1, (tc_tensor *[]){mk(TC_F32, &v, 0, NULL)}, 0, NULL, &v, 0, 0);
  run_check(c, "tc_mean of a scalar", TC_FN(m_mean_scalar), 1, (tc_tensor *[]){mk(TC_F64, &v, 0, NULL)}, 0, NULL, &v, 0,
            0);
  run_check(c, "tc_softmax of a scalar", TC_FN(m_softmax_scalar), 1, (tc_tensor *[]){mk(TC_F32, &v, 0, NULL)}, 0, NULL,
            &one, 0, 0);
  run_check(c, "tc_argmax of a scalar", TC_FN(m_argmax_scalar), 1, (tc_tensor *[]){mk(TC_F32, &v, 0, NULL)}, 0, NULL,
            &zero, 0, 0);
}

/* softmax over an empty dim of a value with large other dims: the empty result, as PyTorch
 * (its row statistics would be 70000 x 70000 values; the fuzzer met 811800 x 811800). */
static tc_tensor *m_log_softmax_1(tc_tensor *x) { return tc_log_softmax(x, 1); }
static tc_tensor *m_softmax_1(tc_tensor *x) { return tc_softmax(x, 1); }

CONF_CASE(ops, softmax_of_empty) {
  double none = 0;
  run_check(c, "tc_softmax over an empty dim", TC_FN(m_softmax_1), 1,
            (tc_tensor *[]){tc_zeros(TC_F32, 3, SIZES(70000, 0, 70000))}, 3, SIZES(70000, 0, 70000), &none, 0, 0);
  run_check(c, "tc_log_softmax over an empty dim", TC_FN(m_log_softmax_1), 1,
            (tc_tensor *[]){tc_zeros(TC_F32, 3, SIZES(70000, 0, 70000))}, 3, SIZES(70000, 0, 70000), &none, 0, 0);
}

/* ---------------------------------------------------------------- unary */
#define UNARY_MODEL(name) \
  static tc_tensor *m_##name(tc_tensor *x) { return tc_##name(x); }
UNARY_MODEL(neg)
UNARY_MODEL(abs)
UNARY_MODEL(exp)
UNARY_MODEL(log)
UNARY_MODEL(sqrt)
UNARY_MODEL(rsqrt)
UNARY_MODEL(sin)
UNARY_MODEL(cos)
UNARY_MODEL(tanh)
UNARY_MODEL(erf)
UNARY_MODEL(floor)
UNARY_MODEL(ceil)
UNARY_MODEL(round)
UNARY_MODEL(sign)
UNARY_MODEL(reciprocal)
UNARY_MODEL(isnan)
UNARY_MODEL(sigmoid)
UNARY_MODEL(relu)
UNARY_MODEL(gelu)
UNARY_MODEL(gelu_tanh)
UNARY_MODEL(silu)

static double r_neg(double x) { return -x; }
static double r_rsqrt(double x) { return 1 / sqrt(x); }
static double r_round(double x) { return nearbyint(x); } /* half to even in the default mode */
static double r_sign(double x) { return (x > 0) - (x < 0); }
static double r_reciprocal(double x) { return 1 / x; }
static double r_isnan(double x) { return isnan(x); }
static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_relu(double x) { return x > 0 ? x : 0; }
static double r_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double r_gelu_tanh(double x) { return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
static double r_silu(double x) { return x / (1 + exp(-x)); }

typedef struct unary_case {
  const char *name;
  tc_model_fn fn;
  double (*ref)(double);
  int domain; /* 0: any, 1: positive */
  double rtol, atol;
} unary_case;

static const unary_case unaries[] = {
    {"tc_neg", TC_FN(m_neg), r_neg, 0, 0, 0},
    {"tc_abs", TC_FN(m_abs), fabs, 0, 0, 0},
    {"tc_exp", TC_FN(m_exp), exp, 0, 1e-6, 1e-30}, /* exp(-100) is subnormal: may flush */
    {"tc_log", TC_FN(m_log), log, 1, 1e-6, 1e-7},
    {"tc_sqrt", TC_FN(m_sqrt), sqrt, 1, 1e-6, 0},
    {"tc_rsqrt", TC_FN(m_rsqrt), r_rsqrt, 1, 1e-6, 0},
    {"tc_sin", TC_FN(m_sin), sin, 0, 1e-6, 1e-7},
    {"tc_cos", TC_FN(m_cos), cos, 0, 1e-6, 1e-7},
    {"tc_tanh", TC_FN(m_tanh), tanh, 0, 1e-6, 1e-7},
    {"tc_erf", TC_FN(m_erf), erf, 0, 1e-6, 1e-7},
    {"tc_floor", TC_FN(m_floor), floor, 0, 0, 0},
    {"tc_ceil", TC_FN(m_ceil), ceil, 0, 0, 0},
    {"tc_round", TC_FN(m_round), r_round, 0, 0, 0},
    {"tc_sign", TC_FN(m_sign), r_sign, 0, 0, 0},
    {"tc_reciprocal", TC_FN(m_reciprocal), r_reciprocal, 0, 1e-6, 0},
    {"tc_isnan", TC_FN(m_isnan), r_isnan, 0, 0, 0},
    {"tc_sigmoid", TC_FN(m_sigmoid), r_sigmoid, 0, 1e-6, 1e-7},
    {"tc_relu", TC_FN(m_relu), r_relu, 0, 0, 0},
    {"tc_gelu", TC_FN(m_gelu), r_gelu, 0, 1e-5, 1e-6},
    {"tc_gelu_tanh", TC_FN(m_gelu_tanh), r_gelu_tanh, 0, 1e-5, 1e-6},
    {"tc_silu", TC_FN(m_silu), r_silu, 0, 1e-5, 1e-6},
};

/* Random values scaled by 3, plus edge values: halves (rounding), large magnitudes
 * (saturating activations), NaN (tc_isnan, NaN propagation) and signed zeros. */
CONF_CASE(ops, unary_float) {
  enum { N = 40 };
  double *x = randf(110, N), want[N], in[N];
  for (int i = 0; i < N; i++) x[i] = f32(3 * x[i]);
  const double edge[] = {0.5, 1.5, 2.5, -0.5, -2.5, 30, -30, 100, -100, 0.0};
  for (int i = 0; i < NELEM(edge); i++) x[i] = edge[i];
  for (int k = 0; k < NELEM(unaries); k++) {
    for (int i = 0; i < N; i++) in[i] = unaries[k].domain ? f32(fabs(x[i]) + 0.125) : x[i];
    if (unaries[k].ref == r_isnan) in[N - 1] = NAN;
    /* Rounded to f32: exp(100) is inf there, as the tensor's value must be. */
    for (int i = 0; i < N; i++) want[i] = f32(unaries[k].ref(in[i]));
    run_check(c, unaries[k].name, unaries[k].fn, 1, (tc_tensor *[]){mk(TC_F32, in, 1, SIZES(N))}, 1, SIZES(N), want,
              unaries[k].rtol, unaries[k].atol);
  }
  free(x);
}

/* Integers: rounding and sign are identities / exact, abs and neg stay integer, reciprocal
 * promotes to f32, isnan is all false, relu clamps. */
CONF_CASE(ops, unary_int) {
  double v[6] = {-7, -1, 0, 1, 3, 100}, want[6];
  const struct {
    const char *name;
    tc_model_fn fn;
    double (*ref)(double);
    tc_dtype out;
  } cases[] = {
      {"tc_neg i32", TC_FN(m_neg), r_neg, TC_I32},     {"tc_abs i32", TC_FN(m_abs), fabs, TC_I32},
      {"tc_floor i32", TC_FN(m_floor), floor, TC_I32}, {"tc_round i32", TC_FN(m_round), r_round, TC_I32},
      {"tc_sign i32", TC_FN(m_sign), r_sign, TC_I32},  {"tc_isnan i32", TC_FN(m_isnan), r_isnan, TC_BOOL},
      {"tc_relu i32", TC_FN(m_relu), r_relu, TC_I32},  {"tc_reciprocal i32", TC_FN(m_reciprocal), r_reciprocal, TC_F32},
  };
  for (int k = 0; k < NELEM(cases); k++) {
    /* + 0.0: integers have no -0 (the reference's -0 for neg(0) is +0 there) */
    for (int i = 0; i < 6; i++) want[i] = (cases[k].out == TC_F32 ? f32(cases[k].ref(v[i])) : cases[k].ref(v[i])) + 0.0;
    tc_tensor *in = mk(TC_I32, v, 1, SIZES(6));
    expect_dtype(c, cases[k].name, cases[k].fn, 1, &in, cases[k].out);
    run_check(c, cases[k].name, cases[k].fn, 1, &in, 1, SIZES(6), want, 0, 0);
  }
}

/* ---------------------------------------------------------------- reductions */
static tc_tensor *m_sum_02_keep(tc_tensor *x) { return tc_sum(x, 2, (const int[]){-1, 0}, true); }
static tc_tensor *m_sum_all(tc_tensor *x) { return tc_sum(x, 0, NULL, false); }
static tc_tensor *m_sum_1(tc_tensor *x) { return tc_sum(x, 1, (const int[]){1}, false); }
static tc_tensor *m_mean_last(tc_tensor *x) { return tc_mean(x, 1, (const int[]){-1}, false); }
static tc_tensor *m_mean_all_keep(tc_tensor *x) { return tc_mean(x, 0, NULL, true); }
static tc_tensor *m_max_1(tc_tensor *x) { return tc_max(x, 1, (const int[]){1}, false); }
static tc_tensor *m_min_01_keep(tc_tensor *x) { return tc_min(x, 2, (const int[]){0, 1}, true); }
static tc_tensor *m_prod_last(tc_tensor *x) { return tc_prod(x, 1, (const int[]){-1}, false); }
static tc_tensor *m_var1(tc_tensor *x) { return tc_var(x, 1, (const int[]){-1}, 1, false); }
static tc_tensor *m_var0_keep(tc_tensor *x) { return tc_var(x, 2, (const int[]){0, 2}, 0, true); }
static tc_tensor *m_argmax(tc_tensor *x) { return tc_argmax(x, -1, true); }
static tc_tensor *m_argmin(tc_tensor *x) { return tc_argmin(x, 0, false); }
static tc_tensor *m_sum_of_transpose(tc_tensor *x) { SCOPED(tc_sum(tc_transpose(x, 0, 2), 1, (const int[]){0}, false)); }

/* x is (3, 4, 5): out-of-place reference reductions by explicit loops. */
CONF_CASE(ops, reduce_sum_mean) {
  double *x = randf(120, 60), s02[4] = {0}, s1[15] = {0}, all = 0, ml[12] = {0}, mall;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 5; k++) {
        double v = x[(i * 4 + j) * 5 + k];
        s02[j] += v, s1[i * 5 + k] += v, all += v, ml[i * 4 + j] += v / 5;
      }
  mall = all / 60;
  run_check(c, "tc_sum dims (-1, 0) keepdim", TC_FN(m_sum_02_keep), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(3, 4, 5))},
            3, SIZES(1, 4, 1), s02, 1e-5, 1e-5);
  run_check(c, "tc_sum all", TC_FN(m_sum_all), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(3, 4, 5))}, 0, NULL, &all,
            1e-5, 1e-5);
  run_check(c, "tc_sum dim 1", TC_FN(m_sum_1), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(3, 4, 5))}, 2, SIZES(3, 5),
            s1, 1e-5, 1e-5);
  run_check(c, "tc_mean dim -1", TC_FN(m_mean_last), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(3, 4, 5))}, 2,
            SIZES(3, 4), ml, 1e-5, 1e-6);
  run_check(c, "tc_mean all keepdim", TC_FN(m_mean_all_keep), 1, (tc_tensor *[]){mk(TC_F64, x, 3, SIZES(3, 4, 5))}, 3,
            SIZES(1, 1, 1), &mall, 1e-12, 1e-12);
  /* A transposed (non-contiguous) input: x^T is (5, 4, 3); summing its dim 0 sums x's dim 2. */
  double st[12] = {0};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 5; k++) st[j * 3 + i] += x[(i * 4 + j) * 5 + k];
  run_check(c, "tc_sum of a transpose", TC_FN(m_sum_of_transpose), 1,
            (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(3, 4, 5))}, 2, SIZES(4, 3), st, 1e-5, 1e-5);
  free(x);
}

/* sum of bool and i32 counts in i64, as PyTorch. */
CONF_CASE(ops, reduce_sum_int_bool) {
  double b[6] = {1, 0, 1, 1, 1, 0}, i[6] = {1, 2, 3, 2000000000, 2000000000, 5};
  double wb[2] = {2, 2}, wi[2] = {6, 4000000005.0};
  tc_tensor *tb = mk(TC_BOOL, b, 2, SIZES(2, 3)), *ti = mk(TC_I32, i, 2, SIZES(2, 3));
  expect_dtype(c, "tc_sum bool", TC_FN(m_sum_1), 1, &tb, TC_I64);
  run_check(c, "tc_sum bool", TC_FN(m_sum_1), 1, &tb, 1, SIZES(2), wb, 0, 0);
  expect_dtype(c, "tc_sum i32", TC_FN(m_sum_1), 1, &ti, TC_I64);
  run_check(c, "tc_sum i32 (no overflow)", TC_FN(m_sum_1), 1, &ti, 1, SIZES(2), wi, 0, 0);
}

CONF_CASE(ops, reduce_max_min_prod) {
  double *x = randf(130, 24), mx[8], mn[4], pr[8];
  /* x (2, 3, 4) */
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) {
      mx[i * 4 + k] = -INFINITY;
      for (int j = 0; j < 3; j++) mx[i * 4 + k] = fmax(mx[i * 4 + k], x[(i * 3 + j) * 4 + k]);
    }
  for (int k = 0; k < 4; k++) {
    mn[k] = INFINITY;
    for (int i = 0; i < 6; i++) mn[k] = fmin(mn[k], x[i * 4 + k]);
  }
  for (int r = 0; r < 6; r++) {
    pr[r] = 1;
    for (int k = 0; k < 4; k++) pr[r] *= x[r * 4 + k];
  }
  run_check(c, "tc_max dim 1", TC_FN(m_max_1), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(2, 3, 4))}, 2, SIZES(2, 4),
            mx, 0, 0);
  run_check(c, "tc_min dims (0, 1) keepdim", TC_FN(m_min_01_keep), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(2, 3, 4))},
            3, SIZES(1, 1, 4), mn, 0, 0);
  run_check(c, "tc_prod dim -1", TC_FN(m_prod_last), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(6, 4))}, 1, SIZES(6),
            pr, 1e-6, 1e-7);
  double ints[6] = {3, -2, 4, 1, 5, -1}, ip[2] = {-24, -5};
  tc_tensor *ti = mk(TC_I32, ints, 2, SIZES(2, 3));
  expect_dtype(c, "tc_prod i32", TC_FN(m_prod_last), 1, &ti, TC_I64);
  run_check(c, "tc_prod i32", TC_FN(m_prod_last), 1, &ti, 1, SIZES(2), ip, 0, 0);
  free(x);
}

CONF_CASE(ops, reduce_var) {
  double *x = randf(140, 24), v1[6], v0[3];
  for (int r = 0; r < 6; r++) { /* (6, 4) over dim -1, unbiased */
    double m = 0, s = 0;
    for (int k = 0; k < 4; k++) m += x[r * 4 + k] / 4;
    for (int k = 0; k < 4; k++) s += (x[r * 4 + k] - m) * (x[r * 4 + k] - m);
    v1[r] = s / 3;
  }
  for (int j = 0; j < 3; j++) { /* (2, 3, 4) over dims (0, 2), population */
    double m = 0, s = 0;
    for (int i = 0; i < 2; i++)
      for (int k = 0; k < 4; k++) m += x[(i * 3 + j) * 4 + k] / 8;
    for (int i = 0; i < 2; i++)
      for (int k = 0; k < 4; k++) s += pow(x[(i * 3 + j) * 4 + k] - m, 2);
    v0[j] = s / 8;
  }
  run_check(c, "tc_var correction 1", TC_FN(m_var1), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(6, 4))}, 1, SIZES(6), v1,
            1e-5, 1e-6);
  run_check(c, "tc_var correction 0 keepdim", TC_FN(m_var0_keep), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(2, 3, 4))},
            3, SIZES(1, 3, 1), v0, 1e-5, 1e-6);
  /* rows of one element with correction 1: 0 / 0 is NaN (a GPU may not divide by zero IEEE-style) */
  double nan3[3] = {NAN, NAN, NAN};
  run_check(c, "tc_var correction 1 of one element", TC_FN(m_var1), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(3, 1))}, 1,
            SIZES(3), nan3, 0, 0);
  free(x);
}

CONF_CASE(ops, reduce_argmax_argmin) {
  double *x = randf(150, 12), am[3], an[4];
  x[5] = x[6] = 10; /* a tie in row 1: the first index wins */
  for (int r = 0; r < 3; r++) {
    am[r] = 0;
    for (int k = 1; k < 4; k++)
      if (x[r * 4 + k] > x[r * 4 + (int)am[r]]) am[r] = k;
  }
  for (int k = 0; k < 4; k++) {
    an[k] = 0;
    for (int r = 1; r < 3; r++)
      if (x[r * 4 + k] < x[(int)an[k] * 4 + k]) an[k] = r;
  }
  tc_tensor *in = mk(TC_F32, x, 2, SIZES(3, 4));
  expect_dtype(c, "tc_argmax", TC_FN(m_argmax), 1, &in, TC_I64);
  run_check(c, "tc_argmax dim -1 keepdim", TC_FN(m_argmax), 1, &in, 2, SIZES(3, 1), am, 0, 0);
  run_check(c, "tc_argmin dim 0", TC_FN(m_argmin), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(3, 4))}, 1, SIZES(4), an,
            0, 0);
  free(x);
}

/* ---------------------------------------------------------------- softmax and norms */
static tc_tensor *m_softmax_last(tc_tensor *x) { return tc_softmax(x, -1); }
static tc_tensor *m_softmax_0(tc_tensor *x) { return tc_softmax(x, 0); }
static tc_tensor *m_log_softmax_last(tc_tensor *x) { return tc_log_softmax(x, -1); }

static void softmax_ref(const double *x, int rows, int cols, int rstride, int cstride, double *out, bool log_) {
  for (int r = 0; r < rows; r++) {
    double m = -INFINITY, s = 0;
    for (int k = 0; k < cols; k++) m = fmax(m, x[r * rstride + k * cstride]);
    for (int k = 0; k < cols; k++) s += exp(x[r * rstride + k * cstride] - m);
    for (int k = 0; k < cols; k++) {
      double z = x[r * rstride + k * cstride] - m;
      out[r * rstride + k * cstride] = log_ ? z - log(s) : exp(z) / s;
    }
  }
}

/* Large logits (+-1000 offsets) would overflow exp without the max subtraction. */
CONF_CASE(ops, nn_softmax) {
  double *x = randf(160, 20), want[20];
  for (int k = 0; k < 5; k++) x[k] = f32(x[k] + 1000), x[15 + k] = f32(x[15 + k] - 1000);
  softmax_ref(x, 4, 5, 5, 1, want, false);
  run_check(c, "tc_softmax dim -1", TC_FN(m_softmax_last), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5))}, 2,
            SIZES(4, 5), want, 1e-5, 1e-7);
  softmax_ref(x, 4, 5, 5, 1, want, true);
  run_check(c, "tc_log_softmax dim -1", TC_FN(m_log_softmax_last), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5))}, 2,
            SIZES(4, 5), want, 1e-5, 1e-5);
  double *y = randf(161, 20);
  softmax_ref(y, 5, 4, 1, 5, want, false); /* columns of a (4, 5) */
  run_check(c, "tc_softmax dim 0", TC_FN(m_softmax_0), 1, (tc_tensor *[]){mk(TC_F32, y, 2, SIZES(4, 5))}, 2, SIZES(4, 5),
            want, 1e-5, 1e-7);
  free(x), free(y);
}

/* Softmax chains whose reductions share a row: each model is one kernel with several inner
 * loops on a kernel-level backend, where an earlier loop's exp can be reused by the store loop
 * (parked in the output). Two such values must not share that one place: softmax(softmax(x) * x)
 * + softmax(x) once read the same exp back for both terms. */
static tc_tensor *m_sm_of_sm_times_x_plus_sm(tc_tensor *x) {
  SCOPED(tc_add(tc_softmax(tc_mul(tc_softmax(x, -1), x), -1), tc_softmax(x, -1)));
}
static tc_tensor *m_lsm_of_sm_times_x_plus_sm(tc_tensor *x) {
  SCOPED(tc_add(tc_log_softmax(tc_mul(tc_softmax(x, -1), x), -1), tc_softmax(x, -1)));
}
static tc_tensor *m_sm_of_lsm_times_sm(tc_tensor *x) {
  SCOPED(tc_mul(tc_softmax(tc_log_softmax(x, -1), -1), tc_softmax(tc_mul_scalar(x, 2), -1)));
}
static tc_tensor *m_sm_sm_sm_plus_sm(tc_tensor *x) {
  SCOPED(tc_add(tc_softmax(tc_softmax(tc_softmax(x, -1), -1), -1), tc_softmax(x, -1)));
}

CONF_CASE(ops, nn_softmax_chains_share_rows) {
  static const int64_t shapes[2][2] = {{3, 7}, {2, 257}};
  for (int sh = 0; sh < 2; sh++) {
    int rows = (int)shapes[sh][0], cols = (int)shapes[sh][1], n = rows * cols;
    double *x = randf(162 + (unsigned long long)sh, n), *a = zalloc(n), *t = zalloc(n), *u = zalloc(n), *want = zalloc(n);
    for (int i = 0; i < n; i++) x[i] = f32(x[i] * 2);
    char what[96];
    softmax_ref(x, rows, cols, cols, 1, a, false);
    for (int i = 0; i < n; i++) t[i] = a[i] * x[i];
    softmax_ref(t, rows, cols, cols, 1, u, false);
    for (int i = 0; i < n; i++) want[i] = u[i] + a[i];
    snprintf(what, sizeof what, "softmax(softmax(x) * x) + softmax(x), x %dx%d", rows, cols);
    run_check(c, what, TC_FN(m_sm_of_sm_times_x_plus_sm), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(rows, cols))}, 2,
              SIZES(rows, cols), want, 2e-5, 1e-6);
    softmax_ref(t, rows, cols, cols, 1, u, true);
    for (int i = 0; i < n; i++) want[i] = u[i] + a[i];
    snprintf(what, sizeof what, "log_softmax(softmax(x) * x) + softmax(x), x %dx%d", rows, cols);
    run_check(c, what, TC_FN(m_lsm_of_sm_times_x_plus_sm), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(rows, cols))}, 2,
              SIZES(rows, cols), want, 2e-5, 1e-5);
    softmax_ref(x, rows, cols, cols, 1, t, true);
    softmax_ref(t, rows, cols, cols, 1, u, false);
    for (int i = 0; i < n; i++) t[i] = 2 * x[i];
    softmax_ref(t, rows, cols, cols, 1, a, false);
    for (int i = 0; i < n; i++) want[i] = u[i] * a[i];
    snprintf(what, sizeof what, "softmax(log_softmax(x)) * softmax(2x), x %dx%d", rows, cols);
    run_check(c, what, TC_FN(m_sm_of_lsm_times_sm), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(rows, cols))}, 2,
              SIZES(rows, cols), want, 2e-5, 1e-7);
    softmax_ref(x, rows, cols, cols, 1, a, false);
    softmax_ref(a, rows, cols, cols, 1, t, false);
    softmax_ref(t, rows, cols, cols, 1, u, false);
    for (int i = 0; i < n; i++) want[i] = u[i] + a[i];
    snprintf(what, sizeof what, "softmax(softmax(softmax(x))) + softmax(x), x %dx%d", rows, cols);
    run_check(c, what, TC_FN(m_sm_sm_sm_plus_sm), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(rows, cols))}, 2,
              SIZES(rows, cols), want, 2e-5, 1e-7);
    free(x), free(a), free(t), free(u), free(want);
  }
}

static tc_tensor *m_layer_norm_wb(tc_tensor *x, tc_tensor *w, tc_tensor *b) { return tc_layer_norm(x, 1, w, b, 1e-5); }
static tc_tensor *m_layer_norm_2(tc_tensor *x) { return tc_layer_norm(x, 2, NULL, NULL, 1e-3); }
static tc_tensor *m_rms_norm(tc_tensor *x, tc_tensor *w) { return tc_rms_norm(x, 1, w, 1e-6); }

/* rows of length n at x + r*n: (x - mean) / sqrt(var + eps) * w + b */
static void norm_ref(const double *x, int rows, int n, const double *w, const double *b, double eps, bool rms,
                     double *out) {
  for (int r = 0; r < rows; r++) {
    const double *xr = x + r * n;
    double m = 0, v = 0;
    for (int k = 0; k < n; k++) m += rms ? 0 : xr[k] / n;
    for (int k = 0; k < n; k++) v += (xr[k] - m) * (xr[k] - m) / n;
    for (int k = 0; k < n; k++) out[r * n + k] = (xr[k] - m) / sqrt(v + eps) * (w ? w[k] : 1) + (b ? b[k] : 0);
  }
}

CONF_CASE(ops, nn_layer_norm_rms_norm) {
  double *x = randf(170, 48), *w = randf(171, 8), *b = randf(172, 8), want[48];
  for (int i = 0; i < 48; i++) x[i] = f32(x[i] * 3 + 2); /* a nonzero mean */
  norm_ref(x, 6, 8, w, b, 1e-5, false, want);
  run_check(c, "tc_layer_norm weight bias", TC_FN(m_layer_norm_wb), 3,
            (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(2, 3, 8)), mk(TC_F32, w, 1, SIZES(8)), mk(TC_F32, b, 1, SIZES(8))}, 3,
            SIZES(2, 3, 8), want, 1e-5, 1e-5);
  norm_ref(x, 2, 24, NULL, NULL, 1e-3, false, want);
  run_check(c, "tc_layer_norm last 2 dims", TC_FN(m_layer_norm_2), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(2, 3, 8))},
            3, SIZES(2, 3, 8), want, 1e-5, 1e-5);
  norm_ref(x, 6, 8, w, NULL, 1e-6, true, want);
  run_check(c, "tc_rms_norm", TC_FN(m_rms_norm), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(6, 8)), mk(TC_F32, w, 1, SIZES(8))}, 2, SIZES(6, 8), want, 1e-5, 1e-5);
  free(x), free(w), free(b);
}

/* ---------------------------------------------------------------- matmul and linear */
static tc_tensor *m_matmul(tc_tensor *a, tc_tensor *b) { return tc_matmul(a, b); }
static tc_tensor *m_matmul_bt(tc_tensor *a, tc_tensor *b) { SCOPED(tc_matmul(a, tc_transpose(b, -1, -2))); }
static tc_tensor *m_linear(tc_tensor *x, tc_tensor *w, tc_tensor *b) { return tc_linear(x, w, b); }
static tc_tensor *m_linear_nobias(tc_tensor *x, tc_tensor *w) { return tc_linear(x, w, NULL); }

/* a (batch_a..., M, K) @ b (batch_b..., K, N) with broadcast batches, as nested loops. */
static void matmul_ref(const double *a, const double *b, int rb, const int64_t *batch, const int64_t *ba,
                       const int64_t *bb, int64_t M, int64_t K, int64_t N, double *out) {
  int64_t nbatch = numel_of(rb, batch);
  for (int64_t p = 0; p < nbatch; p++) {
    const double *A = a + bidx(rb, batch, p, rb, ba) * M * K, *B = b + bidx(rb, batch, p, rb, bb) * K * N;
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double s = 0;
        for (int64_t k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
        out[(p * M + i) * N + j] = s;
      }
  }
}

CONF_CASE(ops, nn_matmul) {
  double *a = randf(180, 8 * 64), *b = randf(181, 64 * 16), *want = zalloc(2 * 5 * 3 * 6 + 8 * 16);
  matmul_ref(a, b, 0, NULL, NULL, NULL, 8, 64, 16, want);
  run_check(c, "tc_matmul 2-D", TC_FN(m_matmul), 2,
            (tc_tensor *[]){mk(TC_F32, a, 2, SIZES(8, 64)), mk(TC_F32, b, 2, SIZES(64, 16))}, 2, SIZES(8, 16), want, 1e-5,
            1e-4);
  /* (2, 1, 3, 4) @ (5, 4, 6) -> (2, 5, 3, 6) */
  matmul_ref(a, b, 2, SIZES(2, 5), SIZES(2, 1), SIZES(1, 5), 3, 4, 6, want);
  run_check(c, "tc_matmul broadcast batch", TC_FN(m_matmul), 2,
            (tc_tensor *[]){mk(TC_F32, a, 4, SIZES(2, 1, 3, 4)), mk(TC_F32, b, 3, SIZES(5, 4, 6))}, 4, SIZES(2, 5, 3, 6),
            want, 1e-5, 1e-5);
  /* (3, 2, 4) @ (4, 5): the batch folds into rows */
  matmul_ref(a, b, 0, NULL, NULL, NULL, 6, 4, 5, want);
  run_check(c, "tc_matmul 3-D @ 2-D", TC_FN(m_matmul), 2,
            (tc_tensor *[]){mk(TC_F32, a, 3, SIZES(3, 2, 4)), mk(TC_F32, b, 2, SIZES(4, 5))}, 3, SIZES(3, 2, 5), want,
            1e-5, 1e-5);
  /* 1-D operands: (4) @ (4, 5) -> (5); (3, 4) @ (4) -> (3); (4) @ (4) -> [] */
  matmul_ref(a, b, 0, NULL, NULL, NULL, 1, 4, 5, want);
  run_check(c, "tc_matmul 1-D @ 2-D", TC_FN(m_matmul), 2,
            (tc_tensor *[]){mk(TC_F32, a, 1, SIZES(4)), mk(TC_F32, b, 2, SIZES(4, 5))}, 1, SIZES(5), want, 1e-5, 1e-5);
  matmul_ref(a, b, 0, NULL, NULL, NULL, 3, 4, 1, want);
  run_check(c, "tc_matmul 2-D @ 1-D", TC_FN(m_matmul), 2,
            (tc_tensor *[]){mk(TC_F32, a, 2, SIZES(3, 4)), mk(TC_F32, b, 1, SIZES(4))}, 1, SIZES(3), want, 1e-5, 1e-5);
  matmul_ref(a, b, 0, NULL, NULL, NULL, 1, 4, 1, want);
  run_check(c, "tc_matmul 1-D @ 1-D", TC_FN(m_matmul), 2,
            (tc_tensor *[]){mk(TC_F32, a, 1, SIZES(4)), mk(TC_F32, b, 1, SIZES(4))}, 0, NULL, want, 1e-5, 1e-5);
  /* a (2, 3, 4) @ b^T where b is (2, 5, 4): the right operand is a transposed view */
  double bt[40];
  for (int p = 0; p < 2; p++)
    for (int n = 0; n < 5; n++)
      for (int k = 0; k < 4; k++) bt[(p * 4 + k) * 5 + n] = b[(p * 5 + n) * 4 + k];
  matmul_ref(a, bt, 1, SIZES(2), SIZES(2), SIZES(2), 3, 4, 5, want);
  run_check(c, "tc_matmul with a transposed operand", TC_FN(m_matmul_bt), 2,
            (tc_tensor *[]){mk(TC_F32, a, 3, SIZES(2, 3, 4)), mk(TC_F32, b, 3, SIZES(2, 5, 4))}, 3, SIZES(2, 3, 5), want,
            1e-5, 1e-5);
  /* f32 @ f64 promotes to f64 */
  matmul_ref(a, b, 0, NULL, NULL, NULL, 3, 4, 2, want);
  tc_tensor *mixed[2] = {mk(TC_F32, a, 2, SIZES(3, 4)), mk(TC_F64, b, 2, SIZES(4, 2))};
  expect_dtype(c, "tc_matmul f32 @ f64", TC_FN(m_matmul), 2, mixed, TC_F64);
  run_check(c, "tc_matmul f32 @ f64", TC_FN(m_matmul), 2, mixed, 2, SIZES(3, 2), want, 1e-12, 1e-12);
  free(a), free(b), free(want);
}

/* Attention's head split and merge around two batched matmuls: qkv (B, T, 3*H*D) is split into
 * q, k, v (B, H, T, D) views by unflatten + permute + slice, and the (B, H) batch of q·kᵀ and of
 * (q·kᵀ)·v is not one strided run of qkv, nor is the merged (B, T, H*D) result's: a backend must
 * honor a matmul with two batch levels (or copy). */
enum { MH_B = 2, MH_T = 5, MH_H = 3, MH_D = 4 };
static tc_tensor *m_matmul_heads(tc_tensor *qkv) {
  tc_scope *s = tc_scope_open();
  const int64_t split[3] = {3, MH_H, MH_D};
  tc_tensor *heads = tc_permute(tc_unflatten(qkv, -1, 3, split), (const int[]){2, 0, 3, 1, 4});
  tc_tensor *q = tc_squeeze(tc_slice(heads, 0, 0, 1, 1), 0), *k = tc_squeeze(tc_slice(heads, 0, 1, 2, 1), 0),
            *v = tc_squeeze(tc_slice(heads, 0, 2, 3, 1), 0);
  tc_tensor *y = tc_matmul(tc_matmul(q, tc_transpose(k, -2, -1)), v);
  y = tc_flatten(tc_contiguous(tc_permute(y, (const int[]){0, 2, 1, 3})), 2, 3);
  tc_scope_keep(s, y);
  tc_scope_close(s);
  return y;
}

CONF_CASE(ops, nn_matmul_two_batch_levels) {
  const int64_t C3 = 3 * MH_H * MH_D;
  double *x = randf(185, MH_B * MH_T * C3), want[MH_B * MH_T * MH_H * MH_D], sc[MH_T];
#define QKV(b, t, part, h, d) x[((b) * MH_T + (t)) * C3 + (part) * MH_H * MH_D + (h) * MH_D + (d)]
  for (int b = 0; b < MH_B; b++)
    for (int h = 0; h < MH_H; h++)
      for (int t = 0; t < MH_T; t++) {
        for (int u = 0; u < MH_T; u++) {
          double s = 0;
          for (int d = 0; d < MH_D; d++) s += QKV(b, t, 0, h, d) * QKV(b, u, 1, h, d);
          sc[u] = f32(s);
        }
        for (int d = 0; d < MH_D; d++) {
          double s = 0;
          for (int u = 0; u < MH_T; u++) s += sc[u] * QKV(b, u, 2, h, d);
          want[((b * MH_T + t) * MH_H + h) * MH_D + d] = s;
        }
      }
#undef QKV
  run_check(c, "tc_matmul over (B, heads) views of one qkv tensor, merged back to (B, T, H*D)", TC_FN(m_matmul_heads), 1,
            (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(MH_B, MH_T, C3))}, 3, SIZES(MH_B, MH_T, MH_H * MH_D), want, 1e-4, 1e-4);
  free(x);
}

CONF_CASE(ops, nn_linear) {
  /* x (2, 3, 16), w (8, 16), b (8): y = x @ w^T + b */
  double *x = randf(190, 96), *w = randf(191, 128), *b = randf(192, 8), want[48], nb[48];
  for (int r = 0; r < 6; r++)
    for (int o = 0; o < 8; o++) {
      double s = 0;
      for (int k = 0; k < 16; k++) s += x[r * 16 + k] * w[o * 16 + k];
      nb[r * 8 + o] = s, want[r * 8 + o] = s + b[o];
    }
  run_check(c, "tc_linear", TC_FN(m_linear), 3,
            (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(2, 3, 16)), mk(TC_F32, w, 2, SIZES(8, 16)), mk(TC_F32, b, 1, SIZES(8))},
            3, SIZES(2, 3, 8), want, 1e-5, 1e-5);
  run_check(c, "tc_linear without bias", TC_FN(m_linear_nobias), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(6, 16)), mk(TC_F32, w, 2, SIZES(8, 16))}, 2, SIZES(6, 8), nb, 1e-5,
            1e-5);
  free(x), free(w), free(b);
}

/* ---------------------------------------------------------------- cat, losses, dropout */
static tc_tensor *m_cat_1(tc_tensor *a, tc_tensor *b) { return tc_cat(2, (tc_tensor *const[]){a, b}, 1); }
static tc_tensor *m_cat_neg(tc_tensor *a, tc_tensor *b, tc_tensor *d) {
  return tc_cat(3, (tc_tensor *const[]){a, b, d}, -2);
}

CONF_CASE(ops, nn_cat) {
  double *a = randf(200, 6), ib[4] = {1, -2, 3, 4}, want[24];
  /* (2, 3) f32 with (2, 2) i32 along dim 1 -> (2, 5) f32 */
  for (int r = 0; r < 2; r++) {
    for (int k = 0; k < 3; k++) want[r * 5 + k] = a[r * 3 + k];
    for (int k = 0; k < 2; k++) want[r * 5 + 3 + k] = ib[r * 2 + k];
  }
  tc_tensor *in[2] = {mk(TC_F32, a, 2, SIZES(2, 3)), mk(TC_I32, ib, 2, SIZES(2, 2))};
  expect_dtype(c, "tc_cat f32 with i32", TC_FN(m_cat_1), 2, in, TC_F32);
  run_check(c, "tc_cat dim 1", TC_FN(m_cat_1), 2, in, 2, SIZES(2, 5), want, 0, 0);
  /* three (k, 2) pieces along dim -2 -> (1 + 2 + 3, 2) */
  for (int i = 0; i < 2; i++) want[i] = a[i];
  for (int i = 0; i < 4; i++) want[2 + i] = ib[i];
  for (int i = 0; i < 6; i++) want[6 + i] = a[i];
  run_check(c, "tc_cat dim -2", TC_FN(m_cat_neg), 3,
            (tc_tensor *[]){mk(TC_F32, a, 2, SIZES(1, 2)), mk(TC_F32, ib, 2, SIZES(2, 2)), mk(TC_F32, a, 2, SIZES(3, 2))},
            2, SIZES(6, 2), want, 0, 0);
  free(a);
}

static tc_tensor *m_cross_entropy(tc_tensor *logits, tc_tensor *target) { return tc_cross_entropy(logits, target); }

CONF_CASE(ops, nn_cross_entropy) {
  double *x = randf(210, 40), t[8] = {0, 4, 2, 1, 3, 3, 0, 4}, lsm[40], want = 0;
  for (int i = 0; i < 5; i++) x[i] = f32(x[i] + 50); /* a confident row */
  softmax_ref(x, 8, 5, 5, 1, lsm, true);
  for (int r = 0; r < 8; r++) want -= lsm[r * 5 + (int)t[r]] / 8;
  run_check(c, "tc_cross_entropy i64 target", TC_FN(m_cross_entropy), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(8, 5)), mk(TC_I64, t, 1, SIZES(8))}, 0, NULL, &want, 1e-5, 1e-6);
  run_check(c, "tc_cross_entropy i32 target", TC_FN(m_cross_entropy), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(8, 5)), mk(TC_I32, t, 1, SIZES(8))}, 0, NULL, &want, 1e-5, 1e-6);
  /* PyTorch's ignore_index -100: rows 1 and 6 take no part in the sum or the count. */
  double ti[8] = {0, -100, 2, 1, 3, 3, -100, 4}, want_kept = 0;
  for (int r = 0; r < 8; r++)
    if (ti[r] != -100) want_kept -= lsm[r * 5 + (int)ti[r]] / 6;
  run_check(c, "tc_cross_entropy ignore_index -100", TC_FN(m_cross_entropy), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(8, 5)), mk(TC_I64, ti, 1, SIZES(8))}, 0, NULL, &want_kept, 1e-5,
            1e-6);
  double all_ignored[8] = {-100, -100, -100, -100, -100, -100, -100, -100}, nan_want = NAN;
  run_check(c, "tc_cross_entropy all rows ignored (0/0)", TC_FN(m_cross_entropy), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(8, 5)), mk(TC_I64, all_ignored, 1, SIZES(8))}, 0, NULL, &nan_want, 0,
            0);
  /* Out of range is an error (PyTorch's too), -100 is not: eager mode checks the values on the
   * host, a compiled graph's kernels on the device (ABI 2.3), reported when the host waits. */
  const bool eager = !strcmp(conf_backend(c), "eager");
  double bad[8] = {0, 4, 2, 77777, 3, -100, 0, 4}, neg[8] = {0, 4, -1, 1, 3, -100, 0, 4};
  conf_expect_error(c, TC_FN(m_cross_entropy), 2,
                    (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(8, 5)), mk(TC_I64, bad, 1, SIZES(8))},
                    eager ? "tc_cross_entropy: target[3] is 77777, out of range for the classes of logits"
                          : "tc_cross_entropy: target value 77777 is out of range for the classes of logits of size 5");
  conf_expect_error(c, TC_FN(m_cross_entropy), 2,
                    (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(8, 5)), mk(TC_I32, neg, 1, SIZES(8))},
                    eager ? "tc_cross_entropy: target[2] is -1, out of range for the classes of logits"
                          : "tc_cross_entropy: target value -1 is out of range for the classes of logits of size 5");
  run_check(c, "tc_cross_entropy after an out-of-range target", TC_FN(m_cross_entropy), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(8, 5)), mk(TC_I64, ti, 1, SIZES(8))}, 0, NULL, &want_kept, 1e-5,
            1e-6);
  free(x);
}

static tc_tensor *m_dropout(tc_tensor *x) { return tc_dropout(x, 0.25, 77, true); }
static tc_tensor *m_dropout_eval(tc_tensor *x) { return tc_dropout(x, 0.25, 77, false); }

/* The mask is a function of the seed only: element i survives when its Philox uniform (seed,
 * offset 0) is >= p, and is then scaled by 1 / (1 - p). */
CONF_CASE(ops, nn_dropout) {
  double *x = randf(220, 64), want[64];
  for (int i = 0; i < 64; i++) want[i] = philox_uniform(77, (uint64_t)i) >= 0.25 ? x[i] / 0.75 : 0;
  run_check(c, "tc_dropout train", TC_FN(m_dropout), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(8, 8))}, 2, SIZES(8, 8),
            want, 1e-6, 0);
  run_check(c, "tc_dropout eval", TC_FN(m_dropout_eval), 1, (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(8, 8))}, 2,
            SIZES(8, 8), x, 0, 0);
  free(x);
}

/* ---------------------------------------------------------------- indexing */
static tc_tensor *m_gather_1(tc_tensor *x, tc_tensor *i) { return tc_gather(x, -1, i); }
static tc_tensor *m_gather_0(tc_tensor *x, tc_tensor *i) { return tc_gather(x, 0, i); }
static tc_tensor *m_index_select_0(tc_tensor *x, tc_tensor *i) { return tc_index_select(x, 0, i); }
static tc_tensor *m_index_select_last(tc_tensor *x, tc_tensor *i) { return tc_index_select(x, -1, i); }
static tc_tensor *m_embedding(tc_tensor *w, tc_tensor *i) { return tc_embedding(w, i); }
static tc_tensor *m_scatter_add_0(tc_tensor *x, tc_tensor *i, tc_tensor *s) { return tc_scatter_add(x, 0, i, s); }
static tc_tensor *m_scatter_add_1(tc_tensor *x, tc_tensor *i, tc_tensor *s) { return tc_scatter_add(x, -1, i, s); }

CONF_CASE(ops, index_gather) {
  double *x = randf(230, 20), *idx = randint(231, 12, 0, 5), *idx0 = randint(232, 6, 0, 4), want[12];
  /* x (4, 5), index (4, 3) along dim -1 */
  for (int r = 0; r < 4; r++)
    for (int k = 0; k < 3; k++) want[r * 3 + k] = x[r * 5 + (int)idx[r * 3 + k]];
  run_check(c, "tc_gather dim -1", TC_FN(m_gather_1), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5)), mk(TC_I64, idx, 2, SIZES(4, 3))}, 2, SIZES(4, 3), want, 0, 0);
  /* index (2, 3) i32 along dim 0 */
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 3; k++) want[r * 3 + k] = x[(int)idx0[r * 3 + k] * 5 + k];
  run_check(c, "tc_gather dim 0", TC_FN(m_gather_0), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5)), mk(TC_I32, idx0, 2, SIZES(2, 3))}, 2, SIZES(2, 3), want, 0, 0);
  free(x), free(idx), free(idx0);
}

CONF_CASE(ops, index_select_embedding) {
  double *x = randf(240, 20), *idx = randint(241, 6, 0, 4), want[60];
  for (int i = 0; i < 6; i++)
    for (int k = 0; k < 5; k++) want[i * 5 + k] = x[(int)idx[i] * 5 + k];
  run_check(c, "tc_index_select dim 0", TC_FN(m_index_select_0), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5)), mk(TC_I32, idx, 1, SIZES(6))}, 2, SIZES(6, 5), want, 0, 0);
  for (int r = 0; r < 4; r++)
    for (int i = 0; i < 6; i++) want[r * 6 + i] = x[r * 5 + (int)idx[i]];
  run_check(c, "tc_index_select dim -1", TC_FN(m_index_select_last), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5)), mk(TC_I64, idx, 1, SIZES(6))}, 2, SIZES(4, 6), want, 0, 0);
  /* weight (4, 5), indices (2, 3) -> (2, 3, 5) */
  for (int i = 0; i < 6; i++)
    for (int k = 0; k < 5; k++) want[i * 5 + k] = x[(int)idx[i] * 5 + k];
  run_check(c, "tc_embedding", TC_FN(m_embedding), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5)), mk(TC_I64, idx, 2, SIZES(2, 3))}, 3, SIZES(2, 3, 5), want, 0,
            0);
  /* PyTorch: no wrapping, out of range is an error: eager mode checks the values on the host, a
   * compiled graph's kernels on the device (ABI 2.3), reported when the host waits. */
  const bool eager = !strcmp(conf_backend(c), "eager");
  double neg[1] = {-1}, big[2] = {0, 4}, big_sel[3] = {1, 9, 0};
  conf_expect_error(c, TC_FN(m_index_select_0), 2,
                    (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5)), mk(TC_I64, neg, 1, SIZES(1))},
                    eager ? "tc_index_select: index[0] is -1, out of range for dim 0 of x (x: 4x5) of size 4"
                          : "tc_index_select: index value -1 is out of range for dim 0 of x of size 4");
  conf_expect_error(c, TC_FN(m_index_select_last), 2,
                    (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5)), mk(TC_I32, big_sel, 1, SIZES(3))},
                    eager ? "tc_index_select: index[1] is 9, out of range for dim 1 of x (x: 4x5) of size 5"
                          : "tc_index_select: index value 9 is out of range for dim 1 of x of size 5");
  conf_expect_error(c, TC_FN(m_embedding), 2,
                    (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5)), mk(TC_I64, big, 1, SIZES(2))},
                    eager ? "tc_embedding: indices[1] is 4, out of range for dim 0 of weight"
                          : "tc_embedding: indices value 4 is out of range for dim 0 of weight of size 4");
  conf_expect_error(c, TC_FN(m_embedding), 2,
                    (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5)), mk(TC_I64, neg, 1, SIZES(1))},
                    eager ? "tc_embedding: indices[0] is -1, out of range for dim 0 of weight"
                          : "tc_embedding: indices value -1 is out of range for dim 0 of weight of size 4");
  for (int i = 0; i < 6; i++) /* and good indices work after them */
    for (int k = 0; k < 5; k++) want[i * 5 + k] = x[(int)idx[i] * 5 + k];
  run_check(c, "tc_embedding after out-of-range indices", TC_FN(m_embedding), 2,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(4, 5)), mk(TC_I64, idx, 2, SIZES(2, 3))}, 3, SIZES(2, 3, 5), want, 0,
            0);
  free(x), free(idx);
}

CONF_CASE(ops, index_scatter_add) {
  double *x = randf(250, 12), *src = randf(251, 12), *idx = randint(252, 8, 0, 3), want[12];
  /* x (3, 4); index (2, 4) with repeats along dim 0; src (3, 4): only its (2, 4) block adds */
  memcpy(want, x, sizeof want);
  for (int r = 0; r < 2; r++)
    for (int k = 0; k < 4; k++) want[(int)idx[r * 4 + k] * 4 + k] += src[r * 4 + k];
  run_check(c, "tc_scatter_add dim 0", TC_FN(m_scatter_add_0), 3,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(3, 4)), mk(TC_I64, idx, 2, SIZES(2, 4)), mk(TC_F32, src, 2, SIZES(3, 4))},
            2, SIZES(3, 4), want, 1e-6, 1e-7);
  /* along dim -1 with an i32 index (3, 2) */
  memcpy(want, x, sizeof want);
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 2; k++) want[r * 4 + (int)idx[r * 2 + k]] += src[r * 2 + k];
  run_check(c, "tc_scatter_add dim -1", TC_FN(m_scatter_add_1), 3,
            (tc_tensor *[]){mk(TC_F32, x, 2, SIZES(3, 4)), mk(TC_I32, idx, 2, SIZES(3, 2)), mk(TC_F32, src, 2, SIZES(3, 2))},
            2, SIZES(3, 4), want, 1e-6, 1e-7);
  free(x), free(src), free(idx);
}

static tc_tensor *m_tril(tc_tensor *x) { return tc_tril(x, -1); }
static tc_tensor *m_triu(tc_tensor *x) { return tc_triu(x, 1); }
static tc_tensor *m_tril0(tc_tensor *x) { return tc_tril(x, 0); }

/* Batched (2, 3, 4) with diagonals -1 and 1; then a square mask of two sizes (a causal mask
 * whose size changes). */
CONF_CASE(ops, index_tril_triu) {
  double *x = randf(260, 24), lo[24], up[24];
  for (int p = 0; p < 2; p++)
    for (int r = 0; r < 3; r++)
      for (int k = 0; k < 4; k++) {
        int i = (p * 3 + r) * 4 + k;
        lo[i] = k - r <= -1 ? x[i] : 0;
        up[i] = k - r >= 1 ? x[i] : 0;
      }
  run_check(c, "tc_tril -1", TC_FN(m_tril), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(2, 3, 4))}, 3, SIZES(2, 3, 4), lo,
            0, 0);
  run_check(c, "tc_triu 1", TC_FN(m_triu), 1, (tc_tensor *[]){mk(TC_F32, x, 3, SIZES(2, 3, 4))}, 3, SIZES(2, 3, 4), up,
            0, 0);
  for (int64_t n = 3; n <= 4; n++) {
    double ones[16], want[16];
    for (int i = 0; i < n * n; i++) ones[i] = 1, want[i] = i % n <= i / n;
    run_check(c, "tc_tril 0 of a bool square", TC_FN(m_tril0), 1, (tc_tensor *[]){mk(TC_BOOL, ones, 2, SIZES(n, n))}, 2,
              SIZES(n, n), want, 0, 0);
  }
  free(x);
}
