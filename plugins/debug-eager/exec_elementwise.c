/* exec_elementwise.c — unary, binary, WHERE and CONVERT, one element at a time.
 *
 * Floats are computed in double and rounded once to the result dtype (for f32, add/sub/mul/div
 * and sqrt then equal the correctly rounded f32 result; transcendentals are at least as
 * accurate as libm's float versions). Integers are computed in 64 bits with wrap-around
 * (unsigned arithmetic: no undefined behaviour) and i32 results keep the low 32 bits. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "debug_eager.h"

static bool is_comparison(int32_t prim) { return prim >= TC_PRIM_EQ && prim <= TC_PRIM_GE; }

/* ---------------------------------------------------------------- unary */
static double unary_float(int32_t prim, double x) {
  switch (prim) {
  case TC_PRIM_NEG: return -x;
  case TC_PRIM_ABS: return fabs(x);
#ifdef DE_WRONG_EXP
  case TC_PRIM_EXP: return x < 0 ? exp(x) * (1.0 + 1e-3) : exp(x); /* deliberately wrong (see DE_NAME) */
#else
  case TC_PRIM_EXP: return exp(x);
#endif
  case TC_PRIM_LOG: return log(x);
  case TC_PRIM_SQRT: return sqrt(x);
  case TC_PRIM_RSQRT: return 1.0 / sqrt(x); /* rsqrt(-0) = -inf, as 1/sqrt(-0) */
  case TC_PRIM_SIN: return sin(x);
  case TC_PRIM_COS: return cos(x);
  case TC_PRIM_TANH: return tanh(x);
  case TC_PRIM_ERF: return erf(x);
  case TC_PRIM_FLOOR: return floor(x);
  case TC_PRIM_CEIL: return ceil(x);
  case TC_PRIM_ROUND: return nearbyint(x); /* the default rounding mode: half to even */
  /* -1, +1, and x itself for +-0 and NaN (so sign(-0) = -0 and sign(NaN) = NaN). */
  case TC_PRIM_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
  case TC_PRIM_RECIPROCAL: return 1.0 / x;
  default: return NAN;
  }
}

static int64_t unary_int(int32_t prim, int64_t x) {
  uint64_t u = (uint64_t)x;
  switch (prim) {
  case TC_PRIM_NEG: return (int64_t)(0u - u);
  case TC_PRIM_ABS: return x < 0 ? (int64_t)(0u - u) : x;
  case TC_PRIM_SIGN: return (x > 0) - (x < 0);
  case TC_PRIM_LOGICAL_NOT: return !x;
  default: return x; /* FLOOR, CEIL, ROUND: integers are already whole */
  }
}

/* ---------------------------------------------------------------- binary */
static bool compare(int32_t prim, double a, double b) {
  switch (prim) {
  case TC_PRIM_EQ: return a == b;
  case TC_PRIM_NE: return a != b; /* NaN != anything */
  case TC_PRIM_LT: return a < b;
  case TC_PRIM_LE: return a <= b;
  case TC_PRIM_GT: return a > b;
  default: return a >= b;
  }
}

static bool compare_int(int32_t prim, int64_t a, int64_t b) {
  switch (prim) {
  case TC_PRIM_EQ: return a == b;
  case TC_PRIM_NE: return a != b;
  case TC_PRIM_LT: return a < b;
  case TC_PRIM_LE: return a <= b;
  case TC_PRIM_GT: return a > b;
  default: return a >= b;
  }
}

static double binary_float(int32_t prim, double a, double b) {
  switch (prim) {
  case TC_PRIM_ADD: return a + b;
  case TC_PRIM_SUB: return a - b;
  case TC_PRIM_MUL: return a * b;
  case TC_PRIM_DIV: return a / b;
  case TC_PRIM_POW: return pow(a, b);
  case TC_PRIM_MAX: return de_float_max(a, b);
  case TC_PRIM_MIN: return de_float_min(a, b);
  case TC_PRIM_REMAINDER: {
    /* PyTorch's definition: fmod, moved into the divisor's sign. A zero keeps fmod's sign. */
    double m = fmod(a, b);
    if (m != 0 && ((b < 0) != (m < 0))) m += b;
    return m;
  }
  case TC_PRIM_FMOD: return fmod(a, b);
  default: return NAN;
  }
}

static int64_t binary_int(int32_t prim, int64_t a, int64_t b) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (prim) {
  case TC_PRIM_ADD: return (int64_t)(ua + ub);
  case TC_PRIM_SUB: return (int64_t)(ua - ub);
  case TC_PRIM_MUL: return (int64_t)(ua * ub);
  case TC_PRIM_DIV:
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0u - ua); /* INT64_MIN / -1 wraps instead of trapping */
    return a / b;                           /* C truncates toward zero */
  case TC_PRIM_MAX: return a > b ? a : b;
  case TC_PRIM_MIN: return a < b ? a : b;
  case TC_PRIM_REMAINDER: {
    if (b == 0 || b == -1) return 0;
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
  }
  case TC_PRIM_FMOD: return b == 0 || b == -1 ? 0 : a % b; /* as REMAINDER: no trap on 0 or INT_MIN % -1 */
  case TC_PRIM_AND: return a & b;
  case TC_PRIM_OR: return a | b;
  default: return 0;
  }
}

/* ---------------------------------------------------------------- one element */
static void element(int32_t prim, const de_tensor *in, char *const *p, int32_t out_dtype, char *q) {
  int32_t dt = in[0].dtype;
  switch (de_prim_info_of(prim).family) {
  case DE_FAMILY_UNARY:
    if (prim == TC_PRIM_ISNAN) de_store_i(TC_BOOL, q, isnan(de_load_f(dt, p[0])));
    else if (de_is_float(dt)) de_store_f(out_dtype, q, unary_float(prim, de_load_f(dt, p[0])));
    else de_store_i(out_dtype, q, unary_int(prim, de_load_i(dt, p[0])));
    break;
  case DE_FAMILY_BINARY:
    if (is_comparison(prim)) {
      bool r = de_is_float(dt) ? compare(prim, de_load_f(dt, p[0]), de_load_f(dt, p[1]))
                               : compare_int(prim, de_load_i(dt, p[0]), de_load_i(dt, p[1]));
      de_store_i(TC_BOOL, q, r);
    } else if (de_is_float(dt)) {
      de_store_f(out_dtype, q, binary_float(prim, de_load_f(dt, p[0]), de_load_f(dt, p[1])));
    } else {
      de_store_i(out_dtype, q, binary_int(prim, de_load_i(dt, p[0]), de_load_i(dt, p[1])));
    }
    break;
  case DE_FAMILY_WHERE:
    memcpy(q, *p[0] ? p[1] : p[2], tck_dtype_size((int32_t)out_dtype));
    break;
  default: /* CONVERT */
    if (de_is_float(dt)) de_store_f(out_dtype, q, de_load_f(dt, p[0]));
    else de_store_i(out_dtype, q, de_load_i(dt, p[0]));
    break;
  }
}

/* Output positions [begin, end) in row-major order; each operand's address follows the
 * multi-index as an odometer (a step in the last dimension, a carry into the ones before): the
 * same elements as unravelling every position, without its divisions (a third of eager time). */
static tc_status elementwise_range(const de_op *op, int64_t begin, int64_t end) {
  const de_tensor *out = op->out;
  size_t item = tck_dtype_size((int32_t)out->dtype);
  const int32_t n_in = op->node->n_inputs, rank = out->rank;
  int64_t idx[TC_MAX_RANK] = {0};
  int64_t bytes[3][TC_MAX_RANK];
  char *p[3] = {NULL, NULL, NULL};
  if (begin < end) de_unravel(begin, rank, out->sizes, idx);
  for (int32_t k = 0; k < n_in; k++) {
    p[k] = de_at(&op->in[k], idx);
    for (int32_t d = 0; d < rank; d++) bytes[k][d] = op->in[k].strides[d] * (int64_t)tck_dtype_size((int32_t)op->in[k].dtype);
  }
  for (int64_t i = begin; i < end; i++) {
    element(op->node->prim, op->in, p, out->dtype, out->data + (size_t)i * item);
    for (int32_t d = rank - 1; d >= 0; d--) {
      for (int32_t k = 0; k < n_in; k++) p[k] += bytes[k][d];
      if (++idx[d] < out->sizes[d]) break;
      for (int32_t k = 0; k < n_in; k++) p[k] -= bytes[k][d] * out->sizes[d];
      idx[d] = 0;
    }
  }
  return TC_OK;
}

tc_status de_exec_elementwise(const de_op *op) {
  const de_tensor *out = op->out;
  for (int32_t k = 0; k < op->node->n_inputs; k++) {
    char what[32];
    snprintf(what, sizeof what, "operand %d", k);
    DE_TRY(de_op_check_same_shape(op, &op->in[k], what));
  }
  return de_parallel_for(op, de_numel(out->rank, out->sizes), elementwise_range);
}
