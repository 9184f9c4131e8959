/*
 * tc_scalar.h — the scalar helpers every C-like code generator's output needs (inductor-cpu's
 * C, inductor-cuda's CUDA C): integer size arithmetic, exp/erf for f32, NaN-exact max/min,
 * wrapping integer ops, remainder, float->int conversion, Philox. One text, so a prim computes
 * the same bits on every C-like backend. docs/primitives.md is the specification.
 *
 * Not included by anything: plugins embed it at build time (plugin-api/kit/embed_text.cmake)
 * and paste it after their own preamble, which must define:
 *   TC_FN           the storage of every function: "static inline" (C),
 *                   "static __device__ __forceinline__" (CUDA);
 *   TC_FMAF(a,b,c)  a*b+c for f32, fused or not (the includer decides; CUDA: fmaf);
 *   TC_F32_BITS(x) / TC_BITS_F32(i)   float <-> int32_t bit casts;
 *   int32_t, int64_t, uint32_t, uint64_t, INT32_MIN/MAX, INT64_MIN/MAX, INFINITY,
 *   fabsf, copysignf, fmodf, fmod, signbit;
 * and may define TC_PRELUDE_MINMAX_F32 with its own tc_max_f32 / tc_min_f32 (same results).
 * Everything before the marker line below (this comment) is left out when pasted.
 */
//@section scalar

/* exp for f32, inline so it vectorizes in any loop. Cephes' polynomial on r = x - n*ln2
 * (n = x/ln2 rounded, read from the bits of big = x/ln2 + 1.5*2^23), then scaled by 2^n. This
 * part is e^r, in [0.70, 1.42]; tc_exp_core_f32 and tc_exp_normal_f32 scale it. The polynomial
 * in Estrin's form: three pairs of coefficients side by side, joined by r^2 (the r*r the last
 * step needs anyway), so three FMAs deep instead of Horner's five with no more operations.
 * Where a row's exps are bound by the chain's latency rather than the FMA count (softmax on the
 * AVX2 Zen 3: the scheduler holds about four rows' chains), its unit in L2 runs 4.5% faster
 * (10.38 against 10.85 TSC cycles per 8 floats, three alternating runs each). */
TC_FN float tc_exp_big_f32(float x) { return TC_FMAF(x, 1.44269504088896341f, 12582912.0f); }
TC_FN float tc_exp_mantissa_f32(float x, float big) {
  const float n = big - 12582912.0f;
  float r = TC_FMAF(n, -0.693359375f, x);
  r = TC_FMAF(n, 2.12194440e-4f, r);
  const float r2 = r * r;
  const float hi = TC_FMAF(1.9875691500e-4f, r, 1.3981999507e-3f);
  const float mid = TC_FMAF(8.3334519073e-3f, r, 4.1665795894e-2f);
  const float lo = TC_FMAF(1.6666665459e-1f, r, 5.0000001201e-1f);
  const float y = TC_FMAF(TC_FMAF(hi, r2, mid), r2, lo);
  return TC_FMAF(y, r2, r) + 1.0f;
}

/* e^r scaled by 2^n in two steps, so subnormal results round once: within 1.03 ulp of exp over
 * every third float of [-103.9, 88.7] (1.01 with Horner's form; 2 without FMA). No
 * clamp at the start: out-of-range lanes compute garbage that the callers' selects replace, and
 * NaN flows through the arithmetic (compares with NaN are false). This is the arithmetic alone,
 * right for x in [-103.97, 88.72]. */
TC_FN float tc_exp_core_f32(float x) {
  const float big = tc_exp_big_f32(x);
  const float y = tc_exp_mantissa_f32(x, big);
  const int32_t ni = TC_F32_BITS(big) - 0x4B400000; /* n as an integer */
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  return y * TC_BITS_F32((n1 + 127) << 23) * TC_BITS_F32((n2 + 127) << 23);
}

/* The smallest x whose exp tc_exp_normal_f32 takes (exp(-86.5) = 2^-124.8, a normal number). */
#define TC_EXP_NORMAL_MIN (-86.5f)

/* exp of an x in [TC_EXP_NORMAL_MIN, 0], no NaN (softmax's x - max where the row spans less
 * than 86.5, which the caller checks once per row with tc_exp_normal_row_f32): tc_exp_f32's
 * bits, faster. Every result there is a normal number (>= 2^-125 * 0.70), so multiplying by 2^n
 * is exact and is an integer add of n to the exponent field; n << 23 is the bits of big shifted
 * (the constant's bits shift out); no select. 14 vector instructions where tc_exp_nonpos_f32
 * takes 23 (GCC 12, AVX2): softmax's exp pass 11.1 -> 7.4 cycles per 8 floats on the AVX2 Zen 3.
 * Outside that range the exponent field wraps: garbage. */
TC_FN float tc_exp_normal_f32(float x) {
  const float big = tc_exp_big_f32(x);
  return TC_BITS_F32(TC_F32_BITS(tc_exp_mantissa_f32(x, big)) + (int32_t)((uint32_t)TC_F32_BITS(big) << 23));
}

/* Whether every exp(x - max) of a row whose smallest element is lo and largest max is in
 * tc_exp_normal_f32's range: false where lo or max is NaN or infinite (inf - inf), so such a row
 * takes tc_exp_nonpos_f32. */
TC_FN int tc_exp_normal_row_f32(float lo, float max) { return lo - max >= TC_EXP_NORMAL_MIN; }

/* exp for f32 over all of its range: 0 below -103.97, +inf above 88.72. The two selects are two
 * statements, not one nested ?:, because GCC vectorizes the nested form as four compares, two
 * ands and three blends (both conditions for each lane), the flat one as two compares and two
 * blends: softmax's unit 13% faster on an AVX2 Zen 3 (bench/probes/row_kernel_host.sh), the same
 * results (no lane meets both). */
TC_FN float tc_exp_f32(float x) {
  const float e = tc_exp_core_f32(x);
  const float e_low = x < -103.972084f ? 0.0f : e;
  return x > 88.7228394f ? INFINITY : e_low;
}

/* exp of an x that is <= 0 or NaN (softmax's x - max of its row): tc_exp_f32's results there,
 * without the overflow select, which such an x never takes (6-8% of softmax's unit on the AVX2
 * Zen 3, where the row is bound by its exp's arithmetic). */
TC_FN float tc_exp_nonpos_f32(float x) {
  const float e = tc_exp_core_f32(x);
  return x < -103.972084f ? 0.0f : e;
}

/* erf for f32: the rational form x*P(x^2)/Q(x^2) of Eigen and XLA for |x| < 4, +-1 beyond;
 * measured against double erf over every 61st float: relative error <= 4e-7 for normal results
 * (2.7 ulp near 0, up to 7 ulp just below 1 where erf(x) > 0.99999), 0 at +-0, +-1 at +-inf,
 * NaN stays NaN (|NaN| >= 4 is false). The select comes last, so the polynomials do not wait
 * for a clamp. x*(P/Q), not x*P/Q, so tiny x does not underflow. */
TC_FN float tc_erf_f32(float x) {
  const float t = x * x;
  float p = TC_FMAF(t, -2.72614225801306e-10f, 2.77068142495902e-08f);
  p = TC_FMAF(p, t, -2.10102402082508e-06f);
  p = TC_FMAF(p, t, -5.69250639462346e-05f);
  p = TC_FMAF(p, t, -7.34990630326855e-04f);
  p = TC_FMAF(p, t, -2.95459980854025e-03f);
  p = TC_FMAF(p, t, -1.60960333262415e-02f);
  float q = TC_FMAF(t, -1.45660718464996e-05f, -2.13374055278905e-04f);
  q = TC_FMAF(q, t, -1.68282697438203e-03f);
  q = TC_FMAF(q, t, -7.37332916720468e-03f);
  q = TC_FMAF(q, t, -1.42647390514189e-02f);
  const float r = x * (p / q);
  return fabsf(x) >= 4.0f ? copysignf(1.0f, x) : r;
}

/* Size arithmetic (tc_sx_op): floor division and modulo with the divisor's sign, 0 for b = 0. */
TC_FN int64_t tc_floordiv(int64_t a, int64_t b) { return b ? a / b - ((a % b != 0) && ((a < 0) != (b < 0))) : 0; }
TC_FN int64_t tc_mod(int64_t a, int64_t b) { int64_t r = b ? a % b : 0; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
TC_FN int64_t tc_imax(int64_t a, int64_t b) { return a > b ? a : b; }
TC_FN int64_t tc_imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* max/min as docs/primitives.md defines them: NaN propagates, +0 > -0. Reductions combine
 * partial results with the same functions, so no order can change a result. */
#define TC_MINMAX(S, T)                                                                       \
  TC_FN T tc_max_##S(T a, T b) { return a != a ? a : b != b ? b : a == b ? (signbit(a) ? b : a) : a > b ? a : b; } \
  TC_FN T tc_min_##S(T a, T b) { return a != a ? a : b != b ? b : a == b ? (signbit(a) ? a : b) : a < b ? a : b; }
/* An includer with a branch-free form of the same function defines TC_PRELUDE_MINMAX_F32 and
 * its own tc_max_f32 / tc_min_f32 (inductor-cuda: nvcc turns the chain above into branches). */
#ifndef TC_PRELUDE_MINMAX_F32
TC_MINMAX(f32, float)
#endif
TC_MINMAX(f64, double)

/* Integer arithmetic wraps (two's complement) instead of being undefined on overflow; division
 * by zero gives 0, remainder takes the divisor's sign, fmod the dividend's. */
#define TC_INT_OPS(S, T, U)                                                                 \
  TC_FN T tc_add_##S(T a, T b) { return (T)((U)a + (U)b); }                                  \
  TC_FN T tc_sub_##S(T a, T b) { return (T)((U)a - (U)b); }                                  \
  TC_FN T tc_mul_##S(T a, T b) { return (T)((U)a * (U)b); }                                  \
  TC_FN T tc_div_##S(T a, T b) { return b == 0 ? 0 : b == -1 ? (T)(0 - (U)a) : a / b; }      \
  TC_FN T tc_rem_##S(T a, T b) {                                                            \
    if (b == 0 || b == -1) return 0;                                                        \
    T r = a % b;                                                                            \
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                                    \
  }                                                                                         \
  TC_FN T tc_fmod_##S(T a, T b) { return b == 0 || b == -1 ? 0 : a % b; }
TC_INT_OPS(i32, int32_t, uint32_t)
TC_INT_OPS(i64, int64_t, uint64_t)
TC_FN float tc_rem_f32(float a, float b) { float r = fmodf(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
TC_FN double tc_rem_f64(double a, double b) { double r = fmod(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
TC_FN float tc_fmod_f32(float a, float b) { return fmodf(a, b); }
TC_FN double tc_fmod_f64(double a, double b) { return fmod(a, b); }

/* Float -> int truncates toward zero; NaN gives 0 and out-of-range values saturate. */
#define TC_F2I(S, F, D, T, LO, HI) \
  TC_FN T tc_##S##_to_##D(F x) { return x != x ? 0 : x <= (F)(LO) ? (T)(LO) : x >= (F)(HI) ? (T)(HI) : (T)x; }
TC_F2I(f32, float, i32, int32_t, INT32_MIN, INT32_MAX)
TC_F2I(f32, float, i64, int64_t, INT64_MIN, INT64_MAX)
TC_F2I(f64, double, i32, int32_t, INT32_MIN, INT32_MAX)
TC_F2I(f64, double, i64, int64_t, INT64_MIN, INT64_MAX)

/* Philox4x32-10, word 0, as docs/primitives.md defines RANDOM: uniform [0,1) from the top
 * 24 bits, identical for f32 and f64. */
TC_FN double tc_philox_uniform(uint64_t seed, uint64_t counter) {
  uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int i = 0; i < 10; i++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1; c3 = (uint32_t)p0; c0 = n0; c2 = n2;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  return (double)(c0 >> 8) * (1.0 / 16777216.0);
}
