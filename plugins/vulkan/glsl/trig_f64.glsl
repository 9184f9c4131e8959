double tc_trig_f64(double x, int shift) {
  if (isinf(x) || isnan(x)) return packDouble2x32(uvec2(0u, 0x7ff80000u));
  if (x == 0.0lf && shift == 0) return x;
  double q = roundEven(x * 0.63661977236758134308lf);
  double r = fma(q, -1.57079632673412561417e+00lf, x);
  r = fma(q, -6.07710050650619224932e-11lf, r);
  r = fma(q, -2.02226624879595063154e-21lf, r);
  int k = (int(q) + shift) & 3;
  double z = r * r, v;
  if ((k & 1) == 0) {
    double t = 1.0lf;  // sin: r * sum (-z)^n / (2n+1)!, n <= 10
    for (int n = 10; n >= 1; n--) t = fma(-t * z, 1.0lf / double((2 * n) * (2 * n + 1)), 1.0lf);
    v = r * t;
  } else {
    double t = 1.0lf;  // cos: sum (-z)^n / (2n)!, n <= 10
    for (int n = 10; n >= 1; n--) t = fma(-t * z, 1.0lf / double((2 * n - 1) * (2 * n)), 1.0lf);
    v = t;
  }
  return k >= 2 ? -v : v;
}
double tc_sin_f64(double x) { return tc_trig_f64(x, 0); }
double tc_cos_f64(double x) { return tc_trig_f64(x, 1); }
