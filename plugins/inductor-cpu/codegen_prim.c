/* codegen_prim.c — elementwise prims as C expressions, and the prelude of helpers they use.
 * Semantics follow docs/primitives.md: NaN propagates through max/min, integer division by zero
 * gives 0, remainder takes the divisor's sign, float->int conversion truncates (NaN -> 0). */
#include <string.h>

#include "icpu.h"

const char *dtype_c(int32_t d) {
  switch (d) {
  case TC_F32: return "float";
  case TC_F64: return "double";
  case TC_I32: return "int32_t";
  case TC_I64: return "int64_t";
  case TC_BOOL: return "uint8_t";
  default: return "void";
  }
}

const char *dtype_suffix(int32_t d) {
  switch (d) {
  case TC_F32: return "f32";
  case TC_F64: return "f64";
  case TC_I32: return "i32";
  case TC_I64: return "i64";
  case TC_BOOL: return "bool";
  default: return "x";
  }
}

bool dtype_float(int32_t d) { return d == TC_F32 || d == TC_F64; }

/* libm name of a float function for the dtype: "expf" or "exp". */
static void fn(icpu_str *s, const char *name, int32_t d, const char *a) {
  str_printf(s, "%s%s(%s)", name, d == TC_F32 ? "f" : "", a);
}

bool prim_c_expr(icpu_str *s, int32_t prim, int32_t in, int32_t out, const char *a, const char *b, const char *c) {
  bool fl = dtype_float(in);
  const char *T = dtype_c(in);
  switch (prim) {
  case TC_PRIM_NEG: str_printf(s, fl ? "-%s" : "(%s)(0 - %s)", fl ? a : T, a); break;
  case TC_PRIM_ABS:
    if (fl) fn(s, "fabs", in, a);
    else str_printf(s, "(%s < 0 ? (%s)(0 - %s) : %s)", a, T, a, a);
    break;
  case TC_PRIM_EXP:
    if (in == TC_F32) str_printf(s, "tc_exp_f32(%s)", a);
    else fn(s, "exp", in, a);
    break;
  case TC_PRIM_LOG: fn(s, "log", in, a); break;
  case TC_PRIM_SQRT: fn(s, "sqrt", in, a); break;
  case TC_PRIM_RSQRT: str_printf(s, "(%s)1 / ", T); fn(s, "sqrt", in, a); break;
  case TC_PRIM_SIN: fn(s, "sin", in, a); break;
  case TC_PRIM_COS: fn(s, "cos", in, a); break;
  case TC_PRIM_TANH: fn(s, "tanh", in, a); break;
  case TC_PRIM_ERF:
    if (in == TC_F32) str_printf(s, "tc_erf_f32(%s)", a);
    else fn(s, "erf", in, a);
    break;
  case TC_PRIM_FLOOR: fn(s, "floor", in, a); break;
  case TC_PRIM_CEIL: fn(s, "ceil", in, a); break;
  case TC_PRIM_ROUND: fn(s, "nearbyint", in, a); break; /* default rounding: half to even */
  case TC_PRIM_SIGN:
    if (fl) str_printf(s, "(%s > 0 ? (%s)1 : %s < 0 ? (%s)-1 : %s)", a, T, a, T, a);
    else str_printf(s, "(%s)((%s > 0) - (%s < 0))", T, a, a);
    break;
  case TC_PRIM_RECIPROCAL: str_printf(s, "(%s)1 / %s", T, a); break;
  case TC_PRIM_LOGICAL_NOT: str_printf(s, "(uint8_t)!%s", a); break;
  case TC_PRIM_ISNAN: str_printf(s, "(uint8_t)(%s != %s)", a, a); break;
  case TC_PRIM_ADD: str_printf(s, fl ? "%s + %s" : "tc_add_%s(%s, %s)", fl ? a : dtype_suffix(in), fl ? b : a, b); break;
  case TC_PRIM_SUB: str_printf(s, fl ? "%s - %s" : "tc_sub_%s(%s, %s)", fl ? a : dtype_suffix(in), fl ? b : a, b); break;
  case TC_PRIM_MUL: str_printf(s, fl ? "%s * %s" : "tc_mul_%s(%s, %s)", fl ? a : dtype_suffix(in), fl ? b : a, b); break;
  case TC_PRIM_DIV:
    if (fl) str_printf(s, "%s / %s", a, b);
    else str_printf(s, "tc_div_%s(%s, %s)", dtype_suffix(in), a, b);
    break;
  case TC_PRIM_POW: fn(s, "pow", in, ""); s->len--; s->data[s->len] = 0; str_printf(s, "%s, %s)", a, b); break;
  case TC_PRIM_MAX:
    if (fl) str_printf(s, "tc_max_%s(%s, %s)", dtype_suffix(in), a, b);
    else str_printf(s, "(%s > %s ? %s : %s)", a, b, a, b);
    break;
  case TC_PRIM_MIN:
    if (fl) str_printf(s, "tc_min_%s(%s, %s)", dtype_suffix(in), a, b);
    else str_printf(s, "(%s < %s ? %s : %s)", a, b, a, b);
    break;
  case TC_PRIM_REMAINDER: str_printf(s, "tc_rem_%s(%s, %s)", dtype_suffix(in), a, b); break;
  case TC_PRIM_EQ: str_printf(s, "(uint8_t)(%s == %s)", a, b); break;
  case TC_PRIM_NE: str_printf(s, "(uint8_t)(%s != %s)", a, b); break;
  case TC_PRIM_LT: str_printf(s, "(uint8_t)(%s < %s)", a, b); break;
  case TC_PRIM_LE: str_printf(s, "(uint8_t)(%s <= %s)", a, b); break;
  case TC_PRIM_GT: str_printf(s, "(uint8_t)(%s > %s)", a, b); break;
  case TC_PRIM_GE: str_printf(s, "(uint8_t)(%s >= %s)", a, b); break;
  case TC_PRIM_AND:
    if (in == TC_BOOL) str_printf(s, "(uint8_t)(%s && %s)", a, b);
    else str_printf(s, "(%s)(%s & %s)", T, a, b);
    break;
  case TC_PRIM_OR:
    if (in == TC_BOOL) str_printf(s, "(uint8_t)(%s || %s)", a, b);
    else str_printf(s, "(%s)(%s | %s)", T, a, b);
    break;
  case TC_PRIM_WHERE: str_printf(s, "(%s ? %s : %s)", a, b, c); break;
  case TC_PRIM_CONVERT:
    if (out == TC_BOOL) str_printf(s, "(uint8_t)(%s != 0)", a);
    else if (fl && !dtype_float(out)) str_printf(s, "tc_%s_to_%s(%s)", dtype_suffix(in), dtype_suffix(out), a);
    else str_printf(s, "(%s)%s", dtype_c(out), a);
    break;
  default: return false;
  }
  return true;
}

static const char *const prelude[] = {
    "#include <math.h>\n",
    "#include <stdint.h>\n",
    "#include <stdlib.h>\n",
    "#include <string.h>\n",
    "#include <omp.h>\n",
    "\n",
    "/* glibc's libmvec has SIMD versions of these (max error 4 ulp): declaring them `declare simd`\n",
    " * lets the vectorizer call them from `omp simd` loops instead of one scalar call per element. */\n",
    "#pragma omp declare simd notinbranch\n",
    "float expf(float);\n",
    "#pragma omp declare simd notinbranch\n",
    "float logf(float);\n",
    "#pragma omp declare simd notinbranch\n",
    "float erff(float);\n",
    "#pragma omp declare simd notinbranch\n",
    "float tanhf(float);\n",
    "#pragma omp declare simd notinbranch\n",
    "float sinf(float);\n",
    "#pragma omp declare simd notinbranch\n",
    "float cosf(float);\n",
    "#pragma omp declare simd notinbranch\n",
    "float powf(float, float);\n",
    "#pragma omp declare simd notinbranch\n",
    "double exp(double);\n",
    "#pragma omp declare simd notinbranch\n",
    "double log(double);\n",
    "#pragma omp declare simd notinbranch\n",
    "double erf(double);\n",
    "#pragma omp declare simd notinbranch\n",
    "double tanh(double);\n",
    "\n",
    "/* exp for f32, inline so it vectorizes in any loop (libmvec's SIMD clones only serve loops\n",
    " * whose lanes are all 32-bit; an iota or a mask makes 64-bit lanes). Cephes' polynomial on\n",
    " * r = x - n*ln2 (n = x/ln2 rounded, read from the bits of x/ln2 + 1.5*2^23), scaled by 2^n in\n",
    " * two steps so subnormal results round once: < 1 ulp (2 without FMA). No clamp at the start:\n",
    " * out-of-range lanes compute garbage that the final selects replace, and NaN flows through\n",
    " * the arithmetic (compares with NaN are false). */\n",
    "#ifdef __FMA__\n",
    "#define TC_FMAF(a, b, c) fmaf(a, b, c)\n",
    "#else\n",
    "#define TC_FMAF(a, b, c) ((a) * (b) + (c))\n",
    "#endif\n",
    "static inline float tc_exp_f32(float x) {\n",
    "  const union { float f; int32_t i; } big = {.f = TC_FMAF(x, 1.44269504088896341f, 12582912.0f)};\n",
    "  const float n = big.f - 12582912.0f;\n",
    "  const int32_t ni = big.i - 0x4B400000; /* n as an integer */\n",
    "  float r = TC_FMAF(n, -0.693359375f, x);\n",
    "  r = TC_FMAF(n, 2.12194440e-4f, r);\n",
    "  float y = TC_FMAF(1.9875691500e-4f, r, 1.3981999507e-3f);\n",
    "  y = TC_FMAF(y, r, 8.3334519073e-3f);\n",
    "  y = TC_FMAF(y, r, 4.1665795894e-2f);\n",
    "  y = TC_FMAF(y, r, 1.6666665459e-1f);\n",
    "  y = TC_FMAF(y, r, 5.0000001201e-1f);\n",
    "  y = TC_FMAF(y, r * r, r) + 1.0f;\n",
    "  const int32_t n1 = ni >> 1, n2 = ni - n1;\n",
    "  const union { int32_t i; float f; } s1 = {.i = (n1 + 127) << 23}, s2 = {.i = (n2 + 127) << 23};\n",
    "  const float e = y * s1.f * s2.f;\n",
    "  return x > 88.7228394f ? INFINITY : x < -103.972084f ? 0.0f : e;\n",
    "}\n",
    "\n",
    "/* erf for f32, inline: libmvec's erff costs several times the memory traffic of a GELU or\n",
    " * layer_norm+GELU row. The rational form x*P(x^2)/Q(x^2) of Eigen and XLA for |x| < 4, +-1\n",
    " * beyond; measured against double erf over every 61st float: relative error <= 4e-7 for normal\n",
    " * results (2.7 ulp near 0, up to 7 ulp just below 1 where erf(x) > 0.99999), 0 at +-0, +-1 at\n",
    " * +-inf, NaN stays NaN (|NaN| >= 4 is false). The select comes last, so the polynomials do not\n",
    " * wait for a clamp (large |x| computes garbage that the select drops). x*(P/Q), not x*P/Q, so\n",
    " * tiny x does not underflow. */\n",
    "static inline float tc_erf_f32(float x) {\n",
    "  const float t = x * x;\n",
    "  float p = TC_FMAF(t, -2.72614225801306e-10f, 2.77068142495902e-08f);\n",
    "  p = TC_FMAF(p, t, -2.10102402082508e-06f);\n",
    "  p = TC_FMAF(p, t, -5.69250639462346e-05f);\n",
    "  p = TC_FMAF(p, t, -7.34990630326855e-04f);\n",
    "  p = TC_FMAF(p, t, -2.95459980854025e-03f);\n",
    "  p = TC_FMAF(p, t, -1.60960333262415e-02f);\n",
    "  float q = TC_FMAF(t, -1.45660718464996e-05f, -2.13374055278905e-04f);\n",
    "  q = TC_FMAF(q, t, -1.68282697438203e-03f);\n",
    "  q = TC_FMAF(q, t, -7.37332916720468e-03f);\n",
    "  q = TC_FMAF(q, t, -1.42647390514189e-02f);\n",
    "  const float r = x * (p / q);\n",
    "  return fabsf(x) >= 4.0f ? copysignf(1.0f, x) : r;\n",
    "}\n",
    "\n",
    "/* Float max/min reductions run on integer keys: the bits of x with the magnitude flipped for\n",
    " * negatives order like the floats (and -0 < +0), NaN takes the extreme key so it wins. A plain\n",
    " * integer max vectorizes into one instruction per vector, where tc_max_f32 takes a dozen. */\n",
    "static inline int32_t tc_key_f32(float x) { const union { float f; int32_t i; } u = {.f = x}; return u.i ^ ((u.i >> 31) & INT32_MAX); }\n",
    "static inline int32_t tc_maxkey_f32(float x) { return x != x ? INT32_MAX : tc_key_f32(x); }\n",
    "static inline int32_t tc_minkey_f32(float x) { return x != x ? INT32_MIN : tc_key_f32(x); }\n",
    "static inline float tc_unkey_f32(int32_t k) {\n",
    "  const union { int32_t i; float f; } u = {.i = k ^ ((k >> 31) & INT32_MAX)};\n",
    "  return k == INT32_MAX || k == INT32_MIN ? NAN : u.f;\n",
    "}\n",
    "static inline int64_t tc_key_f64(double x) { const union { double f; int64_t i; } u = {.f = x}; return u.i ^ ((u.i >> 63) & INT64_MAX); }\n",
    "static inline int64_t tc_maxkey_f64(double x) { return x != x ? INT64_MAX : tc_key_f64(x); }\n",
    "static inline int64_t tc_minkey_f64(double x) { return x != x ? INT64_MIN : tc_key_f64(x); }\n",
    "static inline double tc_unkey_f64(int64_t k) {\n",
    "  const union { int64_t i; double f; } u = {.i = k ^ ((k >> 63) & INT64_MAX)};\n",
    "  return k == INT64_MAX || k == INT64_MIN ? (double)NAN : u.f;\n",
    "}\n",
    "\n",
    "/* x / d for a d fixed over a loop, as x * tc_recip(d) * tc_recip_scale(d): one division per\n",
    " * loop instead of one per element (within 2 ulp of the quotient). Where 1/d would leave the\n",
    " * normal range, d is scaled by 2^64 first and the scale multiplied back after. */\n",
    "#define TC_RECIP(S, T, TINY, HUGE)                                                               \\\n",
    "  static inline T tc_recip_##S(T d) {                                                            \\\n",
    "    const T a = d < 0 ? -d : d;                                                                  \\\n",
    "    return a > (T)(HUGE) && a < (T)INFINITY ? (T)1 / (d * (T)0x1p-64) : a > 0 && a < (T)(TINY) ? (T)1 / (d * (T)0x1p64) : (T)1 / d; \\\n",
    "  }                                                                                              \\\n",
    "  static inline T tc_recip_scale_##S(T d) {                                                      \\\n",
    "    const T a = d < 0 ? -d : d;                                                                  \\\n",
    "    return a > (T)(HUGE) && a < (T)INFINITY ? (T)0x1p-64 : a > 0 && a < (T)(TINY) ? (T)0x1p64 : (T)1; \\\n",
    "  }\n",
    "TC_RECIP(f32, float, 0x1p-125, 0x1p125)\n",
    "TC_RECIP(f64, double, 0x1p-1021, 0x1p1021)\n",
    "\n",
    "/* Threads for every parallel region; set once by tc_module_init. */\n",
    "static int tc_nthreads = 1;\n",
    "\n",
    "static inline int64_t tc_floordiv(int64_t a, int64_t b) { return b ? a / b - ((a % b != 0) && ((a < 0) != (b < 0))) : 0; }\n",
    "static inline int64_t tc_mod(int64_t a, int64_t b) { int64_t r = b ? a % b : 0; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n",
    "static inline int64_t tc_imax(int64_t a, int64_t b) { return a > b ? a : b; }\n",
    "static inline int64_t tc_imin(int64_t a, int64_t b) { return a < b ? a : b; }\n",
    "\n",
    "/* max/min as docs/primitives.md defines them: NaN propagates, +0 > -0. The reductions use the\n",
    " * same functions to combine SIMD lanes and threads, so no order can change a result. */\n",
    "#define TC_MINMAX(S, T)                                                                       \\\n",
    "  static inline T tc_max_##S(T a, T b) { return a != a ? a : b != b ? b : a == b ? (signbit(a) ? b : a) : a > b ? a : b; } \\\n",
    "  static inline T tc_min_##S(T a, T b) { return a != a ? a : b != b ? b : a == b ? (signbit(a) ? a : b) : a < b ? a : b; }\n",
    "TC_MINMAX(f32, float)\n",
    "TC_MINMAX(f64, double)\n",
    "#pragma omp declare reduction(tc_max_f32 : float : omp_out = tc_max_f32(omp_out, omp_in)) initializer(omp_priv = -INFINITY)\n",
    "#pragma omp declare reduction(tc_min_f32 : float : omp_out = tc_min_f32(omp_out, omp_in)) initializer(omp_priv = INFINITY)\n",
    "#pragma omp declare reduction(tc_max_f64 : double : omp_out = tc_max_f64(omp_out, omp_in)) initializer(omp_priv = -INFINITY)\n",
    "#pragma omp declare reduction(tc_min_f64 : double : omp_out = tc_min_f64(omp_out, omp_in)) initializer(omp_priv = INFINITY)\n",
    "\n",
    "/* Integer arithmetic wraps (two's complement) instead of being undefined on overflow. */\n",
    "#define TC_INT_OPS(S, T, U)                                                                 \\\n",
    "  static inline T tc_add_##S(T a, T b) { return (T)((U)a + (U)b); }                          \\\n",
    "  static inline T tc_sub_##S(T a, T b) { return (T)((U)a - (U)b); }                          \\\n",
    "  static inline T tc_mul_##S(T a, T b) { return (T)((U)a * (U)b); }                          \\\n",
    "  static inline T tc_div_##S(T a, T b) { return b == 0 ? 0 : b == -1 ? (T)(0 - (U)a) : a / b; } \\\n",
    "  static inline T tc_rem_##S(T a, T b) {                                                    \\\n",
    "    if (b == 0 || b == -1) return 0;                                                        \\\n",
    "    T r = a % b;                                                                            \\\n",
    "    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                                    \\\n",
    "  }\n",
    "TC_INT_OPS(i32, int32_t, uint32_t)\n",
    "TC_INT_OPS(i64, int64_t, uint64_t)\n",
    "static inline float tc_rem_f32(float a, float b) { float r = fmodf(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n",
    "static inline double tc_rem_f64(double a, double b) { double r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n",
    "\n",
    "/* Float -> int truncates toward zero; NaN gives 0 and out-of-range values saturate. */\n",
    "#define TC_F2I(S, F, D, T, LO, HI) \\\n",
    "  static inline T tc_##S##_to_##D(F x) { return x != x ? 0 : x <= (F)(LO) ? (T)(LO) : x >= (F)(HI) ? (T)(HI) : (T)x; }\n",
    "TC_F2I(f32, float, i32, int32_t, INT32_MIN, INT32_MAX)\n",
    "TC_F2I(f32, float, i64, int64_t, INT64_MIN, INT64_MAX)\n",
    "TC_F2I(f64, double, i32, int32_t, INT32_MIN, INT32_MAX)\n",
    "TC_F2I(f64, double, i64, int64_t, INT64_MIN, INT64_MAX)\n",
    "\n",
    "/* Philox4x32-10, word 0, as docs/primitives.md defines RANDOM: uniform [0,1) from the top\n",
    " * 24 bits, identical for f32 and f64. */\n",
    "static inline double tc_philox_uniform(uint64_t seed, uint64_t counter) {\n",
    "  uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;\n",
    "  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);\n",
    "  for (int i = 0; i < 10; i++) {\n",
    "    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;\n",
    "    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;\n",
    "    c1 = (uint32_t)p1; c3 = (uint32_t)p0; c0 = n0; c2 = n2;\n",
    "    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;\n",
    "  }\n",
    "  return (double)(c0 >> 8) * (1.0 / 16777216.0);\n",
    "}\n",
};

static const char *const prelude_blas[] = {
    "\n",
    "/* OpenBLAS, declared here so the unit needs no BLAS headers. */\n",
    "void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,\n",
    "                 const float *b, int ldb, float beta, float *c, int ldc);\n",
    "void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,\n",
    "                 const double *b, int ldb, double beta, double *c, int ldc);\n",
    "void openblas_set_num_threads(int n);\n",
    "enum { TC_ROW_MAJOR = 101, TC_NO_TRANS = 111, TC_TRANS = 112 };\n",
    "\n",
    "/* C[rows x n] = A[rows x k] * B[k x n] for strided operands: BLAS takes a transposed or plain\n",
    " * layout with a leading dimension; anything else is packed into a contiguous copy first. */\n",
    "#define TC_GEMM(S, T, BLAS)                                                                    \\\n",
    "  static void tc_gemm_##S(int64_t m, int64_t n, int64_t k, const T *a, int64_t sam, int64_t sak, \\\n",
    "                          const T *b, int64_t sbk, int64_t sbn, T *c, int64_t scm, int64_t scn) { \\\n",
    "    if (m <= 0 || n <= 0) return;                                                             \\\n",
    "    T *pa = NULL, *pb = NULL, *pc = NULL;                                                     \\\n",
    "    int ta = TC_NO_TRANS, tb = TC_NO_TRANS;                                                   \\\n",
    "    int64_t lda, ldb, ldc;                                                                    \\\n",
    "    if (k <= 0) {                                                                             \\\n",
    "      for (int64_t i = 0; i < m; i++)                                                         \\\n",
    "        for (int64_t j = 0; j < n; j++) c[i * scm + j * scn] = 0;                             \\\n",
    "      return;                                                                                 \\\n",
    "    }                                                                                         \\\n",
    "    if ((sak == 1 || k == 1) && (sam >= k || m == 1)) lda = m == 1 ? k : sam;                 \\\n",
    "    else if ((sam == 1 || m == 1) && (sak >= m || k == 1)) { ta = TC_TRANS; lda = k == 1 ? m : sak; } \\\n",
    "    else {                                                                                    \\\n",
    "      pa = malloc(sizeof(T) * (size_t)(m * k));                                               \\\n",
    "      if (!pa) return;                                                                        \\\n",
    "      for (int64_t i = 0; i < m; i++)                                                         \\\n",
    "        for (int64_t j = 0; j < k; j++) pa[i * k + j] = a[i * sam + j * sak];                 \\\n",
    "      a = pa; lda = k;                                                                        \\\n",
    "    }                                                                                         \\\n",
    "    if ((sbn == 1 || n == 1) && (sbk >= n || k == 1)) ldb = k == 1 ? n : sbk;                 \\\n",
    "    else if ((sbk == 1 || k == 1) && (sbn >= k || n == 1)) { tb = TC_TRANS; ldb = n == 1 ? k : sbn; } \\\n",
    "    else {                                                                                    \\\n",
    "      pb = malloc(sizeof(T) * (size_t)(k * n));                                               \\\n",
    "      if (!pb) { free(pa); return; }                                                          \\\n",
    "      for (int64_t i = 0; i < k; i++)                                                         \\\n",
    "        for (int64_t j = 0; j < n; j++) pb[i * n + j] = b[i * sbk + j * sbn];                 \\\n",
    "      b = pb; ldb = n;                                                                        \\\n",
    "    }                                                                                         \\\n",
    "    T *out = c;                                                                               \\\n",
    "    if ((scn == 1 || n == 1) && (scm >= n || m == 1)) ldc = m == 1 ? n : scm;                 \\\n",
    "    else {                                                                                    \\\n",
    "      pc = malloc(sizeof(T) * (size_t)(m * n));                                               \\\n",
    "      if (!pc) { free(pa); free(pb); return; }                                                \\\n",
    "      out = pc; ldc = n;                                                                      \\\n",
    "    }                                                                                         \\\n",
    "    BLAS(TC_ROW_MAJOR, ta, tb, (int)m, (int)n, (int)k, 1, a, (int)lda, b, (int)ldb, 0, out, (int)ldc); \\\n",
    "    if (pc)                                                                                   \\\n",
    "      for (int64_t i = 0; i < m; i++)                                                         \\\n",
    "        for (int64_t j = 0; j < n; j++) c[i * scm + j * scn] = pc[i * n + j];                 \\\n",
    "    free(pa); free(pb); free(pc);                                                             \\\n",
    "  }\n",
    "TC_GEMM(f32, float, cblas_sgemm)\n",
    "TC_GEMM(f64, double, cblas_dgemm)\n",
};

/* Streaming stores: a row kernel whose output is far bigger than the caches writes each row
 * with non-temporal stores, which skip the read-for-ownership a cached store makes (3 units of
 * memory traffic per element become 2, as in memcpy). GCC ignores `omp simd nontemporal`, so
 * the row is computed into a scratch row and copied out here. Compiler builtins rather than
 * <immintrin.h>, whose parsing alone costs ~0.2 s of every compile. */
static const char *const prelude_stream[] = {
    "\n",
    "/* Writes n floats of a scratch row to dst: with non-temporal stores when stream (the output\n",
    " * will not be read again while still in cache), else memcpy. The head up to dst's first\n",
    " * 64-byte boundary and the tail are plain stores. */\n",
    "typedef float tc_v16sf __attribute__((vector_size(64), aligned(4), may_alias));      /* a load from the row */\n",
    "typedef float tc_v8sf __attribute__((vector_size(32), aligned(4), may_alias));\n",
    "typedef float tc_v16sf_a __attribute__((vector_size(64), may_alias)); /* aligned: a store to dst */\n",
    "typedef float tc_v8sf_a __attribute__((vector_size(32), may_alias));\n",
    "static inline void tc_row_store_f32(float *restrict dst, const float *restrict src, int64_t n, int stream) {\n",
    "  int64_t i = 0;\n",
    "  if (stream) {\n",
    "    for (; i < n && ((uintptr_t)(dst + i) & 63) != 0; i++) dst[i] = src[i];\n",
    "#if defined(__clang__) && defined(__AVX512F__)\n",
    "    /* clang takes the store's alignment from the value's type: an aligned vector value. */\n",
    "    for (; i + 16 <= n; i += 16) { const tc_v16sf_a v = *(const tc_v16sf *)(src + i); __builtin_nontemporal_store(v, (tc_v16sf_a *)(dst + i)); }\n",
    "#elif defined(__clang__) && defined(__AVX__)\n",
    "    for (; i + 8 <= n; i += 8) { const tc_v8sf_a v = *(const tc_v8sf *)(src + i); __builtin_nontemporal_store(v, (tc_v8sf_a *)(dst + i)); }\n",
    "#elif defined(__GNUC__) && defined(__AVX512F__)\n",
    "    for (; i + 16 <= n; i += 16) __builtin_ia32_movntps512(dst + i, *(const tc_v16sf *)(src + i));\n",
    "#elif defined(__GNUC__) && defined(__AVX__)\n",
    "    for (; i + 8 <= n; i += 8) __builtin_ia32_movntps256(dst + i, *(const tc_v8sf *)(src + i));\n",
    "#endif\n",
    "  }\n",
    "  memcpy(dst + i, src + i, (size_t)(n - i) * sizeof(float));\n",
    "}\n",
    "/* Streaming stores are weakly ordered: each thread fences its own before the parallel\n",
    " * region's closing barrier, so every store is visible when the kernel returns. */\n",
    "static inline void tc_stream_fence(void) {\n",
    "#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))\n",
    "  __builtin_ia32_sfence();\n",
    "#endif\n",
    "}\n",
};

void prim_emit_prelude(icpu_str *s, bool with_blas, bool with_stream) {
  for (size_t i = 0; i < sizeof prelude / sizeof prelude[0]; i++) str_puts(s, prelude[i]);
  if (with_stream)
    for (size_t i = 0; i < sizeof prelude_stream / sizeof prelude_stream[0]; i++) str_puts(s, prelude_stream[i]);
  if (with_blas)
    for (size_t i = 0; i < sizeof prelude_blas / sizeof prelude_blas[0]; i++) str_puts(s, prelude_blas[i]);
}
