/* codegen_math.c — GLSL helper functions the shaders call: what GLSL lacks (erf, floor
 * division/modulo, Python-style remainder, NaN-propagating max/min, Philox4x32-10) and
 * accurate replacements for built-ins whose Vulkan precision is too loose (exp, log, sin, cos,
 * tanh, pow: drivers may use fast approximations, e.g. sin with 2^-11 absolute error).
 *
 * Accuracy (f32, measured on the host by evaluating the same formulas in float against double
 * libm over every float in the range):
 *   tc_erf_f32: max error 2.5 ulp over every float (relative 1.6e-8 + rounding for normal
 *     results): |x| < 0.921875 is x * P(x^2), P of degree 5 minimax in relative error;
 *     above, 1 - exp(L(z)) with L of degree 9 fitted to log(erfc(z)) on [0.921875, 4]
 *     (abs error 8e-9). No division and no branch: erf runs in GELU epilogues over every
 *     element, where the former erfcc form (a division, two exps' worth of work and a branch
 *     per warp) made ln_gelu compute-bound on the H200. Odd symmetry holds exactly.
 *   tc_exp_f32: Cody-Waite reduction by ln2 (two-part) and a degree-7 polynomial: ~2 ulp;
 *     identical over all 2^32 inputs to the former ldexp form.
 *   tc_log_f32: m * 2^e with m in [0.707, 1.414), 2*atanh(s) series in s = (m-1)/(m+1): ~2 ulp.
 *   tc_sin/cos_f32: reduction by pi/2 in three parts (accurate for |x| < 1e5), cephes minimax
 *     polynomials on [-pi/4, pi/4]: ~2 ulp there.
 * The f64 versions use the same reductions with longer series (~1e-15 relative). */
#include <string.h>

#include "vk_internal.h"

static const char *k_always =
    "int tc_floordiv(int a, int b) { if (b == 0) return 0; int q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }\n"
    "int tc_floormod(int a, int b) { if (b == 0) return 0; int r = a - (a / b) * b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n\n";

static const char *k_minmax_f32 =
    "// max/min propagate NaN (GLSL's max/min leave it undefined)\n"
    "// equal values differ only for zeros: max(-0, +0) = +0, min = -0 (sign bits and / or)\n"
    "float tc_max_f32(float a, float b) { return (isnan(a) || isnan(b)) ? a + b : (a == b ? uintBitsToFloat(floatBitsToUint(a) & floatBitsToUint(b)) : max(a, b)); }\n"
    "float tc_min_f32(float a, float b) { return (isnan(a) || isnan(b)) ? a + b : (a == b ? uintBitsToFloat(floatBitsToUint(a) | floatBitsToUint(b)) : min(a, b)); }\n"
    "int tc_max_i32(int a, int b) { return max(a, b); }\n"
    "int tc_min_i32(int a, int b) { return min(a, b); }\n";
static const char *k_minmax_64 =
    "double tc_max_f64(double a, double b) { return (isnan(a) || isnan(b)) ? a + b : (a == b ? (unpackDouble2x32(a).y >= 0x80000000u ? b : a) : max(a, b)); }\n"
    "double tc_min_f64(double a, double b) { return (isnan(a) || isnan(b)) ? a + b : (a == b ? (unpackDouble2x32(a).y >= 0x80000000u ? a : b) : min(a, b)); }\n"
    "int64_t tc_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }\n"
    "int64_t tc_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }\n";

static const char *k_rem_f32 =
    "// remainder with the sign of the divisor (Python / PyTorch): fmod, then shift by b\n"
    "float tc_rem_f32(float a, float b) { float r = a - b * trunc(a / b); if (isinf(b) && !isinf(a)) r = a; if (r == 0.0) return uintBitsToFloat(floatBitsToUint(a) & 0x80000000u); return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r; }\n"
    "int tc_rem_i32(int a, int b) { if (b == 0) return 0; int r = a - (a / b) * b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n";
static const char *k_rem_64 =
    "double tc_rem_f64(double a, double b) { double r = a - b * trunc(a / b); if (isinf(b) && !isinf(a)) r = a; if (r == 0.0lf) return a < 0.0lf ? -0.0lf : 0.0lf; return (r != 0.0lf && ((r < 0.0lf) != (b < 0.0lf))) ? r + b : r; }\n"
    "int64_t tc_rem_i64(int64_t a, int64_t b) { if (b == 0l) return 0l; int64_t r = a - (a / b) * b; return (r != 0l && ((r < 0l) != (b < 0l))) ? r + b : r; }\n";

static const char *k_ftoi =
    "// float -> int truncates toward zero; NaN -> 0; out of range saturates\n"
    "int tc_ftoi_f32_i32(float x) { return isnan(x) ? 0 : (x >= 2147483648.0 ? 2147483647 : (x <= -2147483648.0 ? (-2147483647 - 1) : int(x))); }\n";
static const char *k_ftoi_64 =
    "int64_t tc_ftoi_f32_i64(float x) { return isnan(x) ? 0l : (x >= 9.2233720e18 ? 9223372036854775807l : (x <= -9.2233720e18 ? (-9223372036854775807l - 1l) : int64_t(x))); }\n"
    "int tc_ftoi_f64_i32(double x) { return isnan(x) ? 0 : int(clamp(x, -2147483648.0lf, 2147483647.0lf)); }\n"
    "int64_t tc_ftoi_f64_i64(double x) { return isnan(x) ? 0l : (x >= 9.2233720368547758e18lf ? 9223372036854775807l : (x <= -9.2233720368547758e18lf ? (-9223372036854775807l - 1l) : int64_t(x))); }\n";

static const char *k_exp_f32 =
    "// exp: the special cases as selects, 2^n as two exact power-of-two factors made from\n"
    "// exponent bits (ldexp is a slow path on some drivers; same result bit for bit)\n"
    "float tc_exp_f32(float x) {\n"
    "  float xc = clamp(x, -104.0, 89.0);\n"
    "  float n = roundEven(xc * 1.44269504);\n"
    "  float r = fma(n, -0.693145751953125, xc);\n"
    "  r = fma(n, -1.428606765330187e-06, r);\n"
    "  float q = 1.0 / 5040.0;\n"
    "  q = fma(q, r, 1.0 / 720.0); q = fma(q, r, 1.0 / 120.0); q = fma(q, r, 1.0 / 24.0);\n"
    "  q = fma(q, r, 1.0 / 6.0); q = fma(q, r, 0.5); q = fma(q, r, 1.0); q = fma(q, r, 1.0);\n"
    "  int e = int(n), h = e >> 1;\n"
    "  precise float y = (q * intBitsToFloat((h + 127) << 23)) * intBitsToFloat((e - h + 127) << 23);\n"
    "  y = x > 88.72284 ? uintBitsToFloat(0x7f800000u) : y;\n"
    "  y = x < -103.97208 ? 0.0 : y;\n"
    "  return isnan(x) ? x : y;\n"
    "}\n";
static const char *k_div_f32 =
    "// a / b with IEEE results for a zero divisor (x / 0 is undefined in Vulkan: lavapipe returns\n"
    "// garbage), the sign of the infinity from both signs (1 / -0 = -inf), 0 / 0 and NaN / 0 NaN\n"
    "float tc_div_f32(float a, float b) {\n"
    "  if (b != 0.0) return a / b;\n"
    "  if (a == 0.0 || isnan(a)) return uintBitsToFloat(0x7fc00000u);\n"
    "  return uintBitsToFloat(((floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u) | 0x7f800000u);\n"
    "}\n";
static const char *k_div_f64 =
    "double tc_div_f64(double a, double b) {\n"
    "  if (b != 0.0lf) return a / b;\n"
    "  if (a == 0.0lf || isnan(a)) return uintBitsToFloat(0x7fc00000u);\n"
    "  bool neg = (unpackDouble2x32(a).y ^ unpackDouble2x32(b).y) >= 0x80000000u;\n"
    "  return double(uintBitsToFloat(neg ? 0xff800000u : 0x7f800000u));\n"
    "}\n";
static const char *k_recip_f32 =
    "// x / d for a d fixed over a row, as x * tc_recip(d) * tc_recip_scale(d): one division per\n"
    "// row instead of one per element (within 2 ulp of the quotient, as inductor-cpu). Where 1/d\n"
    "// would leave the normal range, d is scaled by 2^64 first and the scale multiplied back.\n"
    "float tc_recip_f32(float d) {\n"
    "  float a = abs(d);\n"
    "  return (a > uintBitsToFloat(0x7e000000u) && !isinf(a)) ? 1.0 / (d * uintBitsToFloat(0x1f800000u))\n"
    "       : (a > 0.0 && a < uintBitsToFloat(0x01000000u)) ? 1.0 / (d * uintBitsToFloat(0x5f800000u)) : tc_div_f32(1.0, d);\n"
    "}\n"
    "float tc_recip_scale_f32(float d) {\n"
    "  float a = abs(d);\n"
    "  return (a > uintBitsToFloat(0x7e000000u) && !isinf(a)) ? uintBitsToFloat(0x1f800000u)\n"
    "       : (a > 0.0 && a < uintBitsToFloat(0x01000000u)) ? uintBitsToFloat(0x5f800000u) : 1.0;\n"
    "}\n";
static const char *k_log_f32 =
    "float tc_log_f32(float x) {\n"
    "  if (isnan(x) || x < 0.0) return uintBitsToFloat(0x7fc00000u);\n"
    "  if (x == 0.0) return uintBitsToFloat(0xff800000u);\n"
    "  if (isinf(x)) return x;\n"
    "  int e; float m = frexp(x, e);\n"
    "  if (m < 0.70710678) { m *= 2.0; e -= 1; }\n"
    "  float f = m - 1.0;\n"
    "  float s = f / (2.0 + f), z = s * s;\n"
    "  float w = z * fma(z, fma(z, fma(z, 2.0 / 9.0, 2.0 / 7.0), 2.0 / 5.0), 2.0 / 3.0);\n"
    "  float fe = float(e);\n"
    "  return fma(fe, 0.693145751953125, fma(s, w, 2.0 * s) + fe * 1.428606765330187e-06);\n"
    "}\n";
static const char *k_trig_f32 =
    "// sin/cos: x = q*pi/2 + r (three-part pi/2), |r| <= pi/4, cephes polynomials\n"
    "float tc_sinpoly_f32(float r) { float z = r * r; return fma(r * z, fma(z, fma(z, -1.9515295891e-4, 8.3321608736e-3), -1.6666654611e-1), r); }\n"
    "float tc_cospoly_f32(float r) { float z = r * r; return fma(z * z, fma(z, fma(z, 2.443315711809948e-5, -1.388731625493765e-3), 4.166664568298827e-2), fma(-0.5, z, 1.0)); }\n"
    "float tc_trig_f32(float x, int shift) {\n"
    "  if (isinf(x) || isnan(x)) return uintBitsToFloat(0x7fc00000u);\n"
    "  if (x == 0.0 && shift == 0) return x; // sin(-0) = -0\n"
    "  float q = roundEven(x * 0.63661977236758134);\n"
    "  float r = fma(q, -1.5703125, x);\n"
    "  r = fma(q, -4.837512969970703125e-4, r);\n"
    "  r = fma(q, -7.54978995489188216e-8, r);\n"
    "  int k = (int(q) + shift) & 3;\n"
    "  float v = (k & 1) == 0 ? tc_sinpoly_f32(r) : tc_cospoly_f32(r);\n"
    "  return k >= 2 ? -v : v;\n"
    "}\n"
    "float tc_sin_f32(float x) { return tc_trig_f32(x, 0); }\n"
    "float tc_cos_f32(float x) { return tc_trig_f32(x, 1); }\n";
static const char *k_tanh_f32 =
    "float tc_tanh_f32(float x) {\n"
    "  float a = abs(x);\n"
    "  if (isnan(x) || x == 0.0) return x;\n"
    "  if (a < 0.5) {\n"
    "    // Taylor series to x^15: relative error < 1e-7 on |x| < 0.5\n"
    "    float z = x * x;\n"
    "    float q = fma(z, -929569.0 / 638512875.0, 21844.0 / 6081075.0);\n"
    "    q = fma(q, z, -1382.0 / 155925.0); q = fma(q, z, 62.0 / 2835.0); q = fma(q, z, -17.0 / 315.0);\n"
    "    q = fma(q, z, 2.0 / 15.0); q = fma(q, z, -1.0 / 3.0);\n"
    "    return fma(x * z, q, x);\n"
    "  }\n"
    "  if (a > 9.1) return sign(x);\n"
    "  float r = 1.0 - 2.0 / (tc_exp_f32(2.0 * a) + 1.0);\n"
    "  return x < 0.0 ? -r : r;\n"
    "}\n";
static const char *k_erf_f32 =
    "// erf: 2.5 ulp (see codegen_math.c); both halves computed and selected, since the lanes\n"
    "// of a warp usually straddle |x| = 0.92 and would run both branches anyway\n"
    "float tc_erf_f32(float x) {\n"
    "  float z = abs(x), s = x * x;\n"
    "  // |x| < 0.921875: x * P(x^2), minimax in relative error\n"
    "  float p = -5.991065042e-04;\n"
    "  p = fma(p, s, 4.993230090e-03); p = fma(p, s, -2.676665904e-02); p = fma(p, s, 1.128181778e-01);\n"
    "  p = fma(p, s, -3.761249393e-01); p = fma(p, s, 1.128379150e+00);\n"
    "  precise float small = x * p;\n"
    "  // otherwise 1 - exp(L(z)), L minimax for log(erfc(z)) on [0.921875, 4] in u = z - 2.4609375;\n"
    "  // erfc(4) is below half an ulp of 1, so z is clamped there\n"
    "  float u = min(z, 4.0) - 2.4609375;\n"
    "  float l = -2.733202306e-08;\n"
    "  l = fma(l, u, 1.614091377e-06); l = fma(l, u, -1.366756430e-05); l = fma(l, u, 8.110227095e-05);\n"
    "  l = fma(l, u, -4.389767448e-04); l = fma(l, u, 2.249020400e-03); l = fma(l, u, -1.120315489e-02);\n"
    "  l = fma(l, u, -9.426010829e-01); l = fma(l, u, -5.278989249e+00); l = fma(l, u, -7.599165803e+00);\n"
    "  precise float big = 1.0 - tc_exp_f32(l);\n"
    "  float r = z < 0.921875 ? small : (x < 0.0 ? -big : big);\n"
    "  return isnan(x) ? x : r;\n"
    "}\n";
static const char *k_pow_f32 =
    "float tc_pow_f32(float a, float b) {\n"
    "  if (b == 0.0 || a == 1.0) return 1.0;\n"
    "  if (isnan(a) || isnan(b)) return a + b;\n"
    "  bool bint = floor(b) == b;\n"
    "  bool odd = bint && abs(b) < 16777216.0 && (int(abs(b)) & 1) == 1;\n"
    "  float aa = abs(a);\n"
    "  if (a < 0.0 && !bint) return uintBitsToFloat(0x7fc00000u);\n"
    "  float r;\n"
    "  if (aa == 0.0) r = b < 0.0 ? uintBitsToFloat(0x7f800000u) : 0.0;\n"
    "  else if (isinf(aa)) r = b < 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);\n"
    "  else if (isinf(b)) r = (aa == 1.0) ? 1.0 : ((aa > 1.0) == (b > 0.0) ? uintBitsToFloat(0x7f800000u) : 0.0);\n"
    "  else r = tc_exp_f32(b * tc_log_f32(aa));\n"
    "  return (odd && (a < 0.0 || (a == 0.0 && floatBitsToUint(a) != 0u))) ? -r : r;\n"
    "}\n";

static const char *k_exp_f64_real =
    "double tc_exp_f64(double x) {\n"
    "  if (isnan(x)) return x;\n"
    "  if (x > 709.782712893384lf) return packDouble2x32(uvec2(0u, 0x7ff00000u));\n"
    "  if (x < -745.2lf) return 0.0lf;\n"
    "  double n = roundEven(x * 1.4426950408889634lf);\n"
    "  double r = fma(n, -6.93147180369123816490e-01lf, x);\n"
    "  r = fma(n, -1.90821492927058770002e-10lf, r);\n"
    "  // Horner over r^k / k!, k = 0..13: truncation < 1e-17 for |r| <= ln2/2\n"
    "  double q = 1.0lf;\n"
    "  for (int k = 13; k >= 1; k--) q = fma(q, r / double(k), 1.0lf);\n"
    "  int e = int(n);\n"
    "  return ldexp(ldexp(q, e / 2), e - e / 2);\n"
    "}\n";
static const char *k_log_f64 =
    "double tc_log_f64(double x) {\n"
    "  if (isnan(x) || x < 0.0lf) return packDouble2x32(uvec2(0u, 0x7ff80000u));\n"
    "  if (x == 0.0lf) return packDouble2x32(uvec2(0u, 0xfff00000u));\n"
    "  if (isinf(x)) return x;\n"
    "  int e; double m = frexp(x, e);\n"
    "  if (m < 0.70710678118654752lf) { m *= 2.0lf; e -= 1; }\n"
    "  double f = m - 1.0lf;\n"
    "  double s = f / (2.0lf + f), z = s * s;\n"
    "  double w = 0.0lf;\n"
    "  for (int k = 12; k >= 1; k--) w = fma(w, z, 2.0lf / double(2 * k + 1));\n"
    "  w *= z;\n"
    "  double de = double(e);\n"
    "  return fma(de, 6.93147180369123816490e-01lf, fma(s, w, 2.0lf * s) + de * 1.90821492927058770002e-10lf);\n"
    "}\n";
static const char *k_trig_f64 =
    "double tc_trig_f64(double x, int shift) {\n"
    "  if (isinf(x) || isnan(x)) return packDouble2x32(uvec2(0u, 0x7ff80000u));\n"
    "  if (x == 0.0lf && shift == 0) return x;\n"
    "  double q = roundEven(x * 0.63661977236758134308lf);\n"
    "  double r = fma(q, -1.57079632673412561417e+00lf, x);\n"
    "  r = fma(q, -6.07710050650619224932e-11lf, r);\n"
    "  r = fma(q, -2.02226624879595063154e-21lf, r);\n"
    "  int k = (int(q) + shift) & 3;\n"
    "  double z = r * r, v;\n"
    "  if ((k & 1) == 0) {\n"
    "    double t = 1.0lf;  // sin: r * sum (-z)^n / (2n+1)!, n <= 10\n"
    "    for (int n = 10; n >= 1; n--) t = fma(-t * z, 1.0lf / double((2 * n) * (2 * n + 1)), 1.0lf);\n"
    "    v = r * t;\n"
    "  } else {\n"
    "    double t = 1.0lf;  // cos: sum (-z)^n / (2n)!, n <= 10\n"
    "    for (int n = 10; n >= 1; n--) t = fma(-t * z, 1.0lf / double((2 * n - 1) * (2 * n)), 1.0lf);\n"
    "    v = t;\n"
    "  }\n"
    "  return k >= 2 ? -v : v;\n"
    "}\n"
    "double tc_sin_f64(double x) { return tc_trig_f64(x, 0); }\n"
    "double tc_cos_f64(double x) { return tc_trig_f64(x, 1); }\n";
static const char *k_tanh_f64 =
    "double tc_tanh_f64(double x) {\n"
    "  double a = abs(x);\n"
    "  if (isnan(x) || x == 0.0lf) return x;\n"
    "  if (a > 19.1lf) return sign(x);\n"
    "  if (a < 0.5lf) {\n"
    "    // expm1(2x) by its series (|2x| < 1: 18 terms), then tanh = e / (e + 2)\n"
    "    double y = 2.0lf * x, t = 1.0lf;\n"
    "    for (int k = 18; k >= 2; k--) t = fma(t, y / double(k), 1.0lf);\n"
    "    double em1 = y * t;\n"
    "    return em1 / (em1 + 2.0lf);\n"
    "  }\n"
    "  double r = 1.0lf - 2.0lf / (tc_exp_f64(2.0lf * a) + 1.0lf);\n"
    "  return x < 0.0lf ? -r : r;\n"
    "}\n";
static const char *k_erf_f64 =
    "double tc_erf_f64(double x) {\n"
    "  double z = abs(x);\n"
    "  if (isnan(x) || x == 0.0lf) return x;\n"
    "  if (z > 6.0lf) return sign(x);\n"
    "  if (z < 2.5lf) {\n"
    "    // Taylor series: 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))\n"
    "    double s = x * x, term = x, sum = x;\n"
    "    for (int n = 1; n < 60; n++) {\n"
    "      term *= -s / double(n);\n"
    "      double add = term / double(2 * n + 1);\n"
    "      sum += add;\n"
    "      if (abs(add) < 1e-17lf * abs(sum)) break;\n"
    "    }\n"
    "    return sum * 1.12837916709551257390lf;\n"
    "  }\n"
    "  // erfc by its continued fraction, evaluated backwards: converges fast for z >= 2.5\n"
    "  double k = z;\n"
    "  for (int n = 60; n >= 1; n--) k = z + (double(n) * 0.5lf) / k;\n"
    "  double erfc = tc_exp_f64(-z * z) / (k * 1.77245385090551602730lf);\n"
    "  double r = 1.0lf - erfc;\n"
    "  return x < 0.0lf ? -r : r;\n"
    "}\n";
static const char *k_pow_f64 =
    "double tc_pow_f64(double a, double b) {\n"
    "  if (b == 0.0lf || a == 1.0lf) return 1.0lf;\n"
    "  if (isnan(a) || isnan(b)) return a + b;\n"
    "  bool bint = floor(b) == b;\n"
    "  bool odd = bint && abs(b) < 9007199254740992.0lf && (int64_t(abs(b)) & 1l) == 1l;\n"
    "  double aa = abs(a);\n"
    "  double inf = packDouble2x32(uvec2(0u, 0x7ff00000u));\n"
    "  if (a < 0.0lf && !bint) return packDouble2x32(uvec2(0u, 0x7ff80000u));\n"
    "  double r;\n"
    "  if (aa == 0.0lf) r = b < 0.0lf ? inf : 0.0lf;\n"
    "  else if (isinf(aa)) r = b < 0.0lf ? 0.0lf : inf;\n"
    "  else if (isinf(b)) r = (aa == 1.0lf) ? 1.0lf : ((aa > 1.0lf) == (b > 0.0lf) ? inf : 0.0lf);\n"
    "  else r = tc_exp_f64(b * tc_log_f64(aa));\n"
    "  return (odd && (a < 0.0lf || (a == 0.0lf && unpackDouble2x32(a).y != 0u))) ? -r : r;\n"
    "}\n";

/* (x >> 8) * 2^-24 is exact in float, so one helper serves f32 and f64 results. */
static const char *k_philox =
    "// Philox4x32-10 (Random123): key (k0, k1), counter (c0 = i low, c1 = i high, 0, 0); word 0 -> [0, 1)\n"
    "float tc_philox_u01(uint k0, uint k1, int i, bool f64) {\n"
    "  uint c0 = uint(i), c1 = i < 0 ? 0xffffffffu : 0u, c2 = 0u, c3 = 0u;\n"
    "  for (int r = 0; r < 10; r++) {\n"
    "    uint hi0, lo0, hi1, lo1;\n"
    "    umulExtended(0xD2511F53u, c0, hi0, lo0);\n"
    "    umulExtended(0xCD9E8D57u, c2, hi1, lo1);\n"
    "    uint n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;\n"
    "    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;\n"
    "    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;\n"
    "  }\n"
    "  return float(c0 >> 8) * (1.0 / 16777216.0);\n"
    "}\n";

static bool used(const char *body, const char *name) { return body && strstr(body, name) != NULL; }

void vk_gen_math_helpers(vk_gen *g, vk_text *t, const char *body) {
  vk_text_printf(t, "%s", k_always);
  if (used(body, "tc_max_") || used(body, "tc_min_")) {
    vk_text_printf(t, "%s", k_minmax_f32);
    if (g->uses_i64) vk_text_printf(t, "%s", k_minmax_64);
  }
  if (used(body, "tc_rem_")) {
    vk_text_printf(t, "%s", k_rem_f32);
    if (g->uses_i64) vk_text_printf(t, "%s", k_rem_64);
  }
  if (used(body, "tc_ftoi_")) {
    vk_text_printf(t, "%s", k_ftoi);
    if (g->uses_i64) vk_text_printf(t, "%s", k_ftoi_64);
  }
  bool f32_pow = used(body, "tc_pow_f32"), f64_pow = used(body, "tc_pow_f64");
  bool f32_tanh = used(body, "tc_tanh_f32"), f64_tanh = used(body, "tc_tanh_f64");
  bool f32_erf = used(body, "tc_erf_f32"), f64_erf = used(body, "tc_erf_f64");
  if (used(body, "tc_exp_f32") || f32_pow || f32_tanh || f32_erf) vk_text_printf(t, "%s", k_exp_f32);
  if (used(body, "tc_log_f32") || f32_pow) vk_text_printf(t, "%s", k_log_f32);
  if (used(body, "tc_div_f32") || used(body, "tc_recip_f32")) vk_text_printf(t, "%s", k_div_f32);
  if (used(body, "tc_div_f64")) vk_text_printf(t, "%s", k_div_f64);
  if (used(body, "tc_recip_f32")) vk_text_printf(t, "%s", k_recip_f32);
  if (used(body, "tc_sin_f32") || used(body, "tc_cos_f32")) vk_text_printf(t, "%s", k_trig_f32);
  if (f32_tanh) vk_text_printf(t, "%s", k_tanh_f32);
  if (f32_erf) vk_text_printf(t, "%s", k_erf_f32);
  if (f32_pow) vk_text_printf(t, "%s", k_pow_f32);
  if (used(body, "tc_exp_f64") || f64_pow || f64_tanh || f64_erf) vk_text_printf(t, "%s", k_exp_f64_real);
  if (used(body, "tc_log_f64") || f64_pow) vk_text_printf(t, "%s", k_log_f64);
  if (used(body, "tc_sin_f64") || used(body, "tc_cos_f64")) vk_text_printf(t, "%s", k_trig_f64);
  if (f64_tanh) vk_text_printf(t, "%s", k_tanh_f64);
  if (f64_erf) vk_text_printf(t, "%s", k_erf_f64);
  if (f64_pow) vk_text_printf(t, "%s", k_pow_f64);
  if (used(body, "tc_philox_u01")) vk_text_printf(t, "%s", k_philox);
  vk_text_printf(t, "\n");
}
