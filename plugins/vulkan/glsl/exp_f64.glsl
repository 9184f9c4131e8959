double tc_exp_f64(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893384lf) return packDouble2x32(uvec2(0u, 0x7ff00000u));
  if (x < -745.2lf) return 0.0lf;
  double n = roundEven(x * 1.4426950408889634lf);
  double r = fma(n, -6.93147180369123816490e-01lf, x);
  r = fma(n, -1.90821492927058770002e-10lf, r);
  // Horner over r^k / k!, k = 0..13: truncation < 1e-17 for |r| <= ln2/2
  double q = 1.0lf;
  for (int k = 13; k >= 1; k--) q = fma(q, r / double(k), 1.0lf);
  int e = int(n);
  return ldexp(ldexp(q, e / 2), e - e / 2);
}
