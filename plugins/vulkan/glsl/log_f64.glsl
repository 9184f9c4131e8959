double tc_log_f64(double x) {
  if (isnan(x) || x < 0.0lf) return packDouble2x32(uvec2(0u, 0x7ff80000u));
  if (x == 0.0lf) return packDouble2x32(uvec2(0u, 0xfff00000u));
  if (isinf(x)) return x;
  // frexp is undefined for subnormals in GLSL: scale them by 2^52 first
  bool sub = x < 2.2250738585072014e-308lf;
  int e; double m = frexp(sub ? x * 4503599627370496.0lf : x, e);
  e -= sub ? 52 : 0;
  if (m < 0.70710678118654752lf) { m *= 2.0lf; e -= 1; }
  double f = m - 1.0lf;
  double s = f / (2.0lf + f), z = s * s;
  double w = 0.0lf;
  for (int k = 12; k >= 1; k--) w = fma(w, z, 2.0lf / double(2 * k + 1));
  w *= z;
  double de = double(e);
  return fma(de, 6.93147180369123816490e-01lf, fma(s, w, 2.0lf * s) + de * 1.90821492927058770002e-10lf);
}
