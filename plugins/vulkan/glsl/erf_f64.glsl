double tc_erf_f64(double x) {
  double z = abs(x);
  if (isnan(x) || x == 0.0lf) return x;
  if (z > 6.0lf) return sign(x);
  if (z < 2.5lf) {
    // Taylor series: 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))
    double s = x * x, term = x, sum = x;
    for (int n = 1; n < 60; n++) {
      term *= -s / double(n);
      double add = term / double(2 * n + 1);
      sum += add;
      if (abs(add) < 1e-17lf * abs(sum)) break;
    }
    return sum * 1.12837916709551257390lf;
  }
  // erfc by its continued fraction, evaluated backwards: converges fast for z >= 2.5
  double k = z;
  for (int n = 60; n >= 1; n--) k = z + (double(n) * 0.5lf) / k;
  double erfc = tc_exp_f64(-z * z) / (k * 1.77245385090551602730lf);
  double r = 1.0lf - erfc;
  return x < 0.0lf ? -r : r;
}
