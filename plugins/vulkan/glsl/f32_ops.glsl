// f32 emulated in f64, its correctly rounded operations (see f32_bits.glsl)

// The exponent k of the spacing 2^k of the f32 values at q (an f32 value in a double, finite):
// frexp gives |q| = m 2^e with m in [0.5, 1), where f32's spacing is 2^(e-24); below 2^-126
// (and at 0) it is 2^-149. Floating point rather than the bits (tc_f32_narrow): a fraction of
// the code at each division and square root, which NVIDIA's driver compiles for seconds.
int tc_f32_ulp_exp(double q) {
  int e;
  frexp(q, e);
  return (q == 0.0lf ? -125 : max(e, -125)) - 24;
}
// The f32 values next to q (finite) away from zero and toward it, as doubles; the latter is q
// itself for q = 0, the former 2^128 in magnitude past the largest f32 (callers check for it).
// Used to check a candidate against the midpoints on either side.
double tc_f32_next_up(double q) {
  double u = ldexp(1.0lf, tc_f32_ulp_exp(q));
  return unpackDouble2x32(q).y >= 0x80000000u ? q - u : q + u; // -0 goes to -2^-149
}
double tc_f32_next_down(double q) {
  if (q == 0.0lf) return q;
  int e;
  double m = frexp(abs(q), e);
  double u = ldexp(1.0lf, tc_f32_ulp_exp(q));
  if (m == 0.5lf && e > -125) u *= 0.5lf; // at a power of two, the binade below is twice as fine
  return q > 0.0lf ? q - u : q + u;
}
// Whether q's f32 significand is odd: |q| / 2^k is an integer, odd when half of it is not.
bool tc_f32_odd(double q) { return fract(ldexp(abs(q), -tc_f32_ulp_exp(q) - 1)) != 0.0lf; }

// a / b correctly rounded to f32. The f64 quotient (Vulkan promises 2.5 ulps) rounded to f32 is
// within an f32 ulp; each midpoint m next to it decides exactly: m has 25 bits and |b| 24, so
// m * |b| is exact in double and compares with |a| (ties, possible for subnormal results, go
// to even).
double tc_f32_div(double a, double b) {
  double q = tc_f32r(tc_div_f64(a, b));
  if (isnan(q) || isinf(q) || isinf(a) || isinf(b) || b == 0.0lf || a == 0.0lf) return q;
  double aa = abs(a), ab = abs(b), aq = abs(q);
  double up = abs(tc_f32_next_up(q)), down = abs(tc_f32_next_down(q));
  double hi = (aq + up) * 0.5lf * ab, lo = (aq + down) * 0.5lf * ab;
  bool odd = tc_f32_odd(q);
  if (aa > hi || (aa == hi && odd)) aq = up;
  else if (aq != down && (aa < lo || (aa == lo && odd))) aq = down;
  aq = up == packDouble2x32(uvec2(0u, 0x47f00000u)) && aq == up ? double(uintBitsToFloat(0x7f800000u)) : aq;
  return (a < 0.0lf) != (b < 0.0lf) ? -aq : aq;
}

// sqrt(x) correctly rounded to f32: the f64 square root (not correctly rounded in Vulkan)
// rounded to f32, then the midpoints next to it squared (50 bits: exact) against x.
double tc_f32_sqrt(double x) {
  double q = tc_f32r(sqrt(x));
  if (!(x > 0.0lf) || isinf(x)) return x == 0.0lf ? x : (x < 0.0lf || isnan(x) ? double(uintBitsToFloat(0x7fc00000u)) : x);
  double up = tc_f32_next_up(q), down = tc_f32_next_down(q);
  double hi = (q + up) * 0.5lf, lo = (q + down) * 0.5lf;
  if (x > hi * hi) return up;
  if (x < lo * lo) return down;
  return q; // no ties: the square of a 25-bit midpoint is no f32
}

// f32 reciprocal square root: 1 / sqrt(x) in double, rounded once (within 1 ulp).
double tc_f32_rsqrt(double x) {
  if (x == 0.0lf) return tc_div_f64(1.0lf, x);
  return tc_f32r(1.0lf / sqrt(x));
}
