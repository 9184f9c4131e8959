double tc_tanh_f64(double x) {
  double a = abs(x);
  if (isnan(x) || x == 0.0lf) return x;
  if (a > 19.1lf) return sign(x);
  if (a < 0.5lf) {
    // expm1(2x) by its series (|2x| < 1: 18 terms), then tanh = e / (e + 2)
    double y = 2.0lf * x, t = 1.0lf;
    for (int k = 18; k >= 2; k--) t = fma(t, y / double(k), 1.0lf);
    double em1 = y * t;
    return em1 / (em1 + 2.0lf);
  }
  double r = 1.0lf - 2.0lf / (tc_exp_f64(2.0lf * a) + 1.0lf);
  return x < 0.0lf ? -r : r;
}
