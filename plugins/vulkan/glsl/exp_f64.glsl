double tc_exp_f64(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893384lf) return packDouble2x32(uvec2(0u, 0x7ff00000u));
  if (x < -745.2lf) return 0.0lf;
  double n = roundEven(x * 1.4426950408889634lf);
  double r = fma(n, -6.93147180369123816490e-01lf, x);
  r = fma(n, -1.90821492927058770002e-10lf, r);
  // Horner over r^k / k!, k = 0..13: truncation < 1e-17 for |r| <= ln2/2. The coefficients are
  // constants: the nested form 1 + r/1 (1 + r/2 (...)) divided 13 times, and a double division
  // is a few dozen instructions on a GPU (f32 emulated in f64 calls this at every exp).
  double q = 1.6059043836821613e-10lf; // 1/13!
  q = fma(q, r, 2.08767569878681e-09lf);
  q = fma(q, r, 2.505210838544172e-08lf);
  q = fma(q, r, 2.755731922398589e-07lf);
  q = fma(q, r, 2.7557319223985893e-06lf);
  q = fma(q, r, 2.48015873015873e-05lf);
  q = fma(q, r, 1.984126984126984e-04lf);
  q = fma(q, r, 1.388888888888889e-03lf);
  q = fma(q, r, 8.333333333333333e-03lf);
  q = fma(q, r, 4.1666666666666664e-02lf);
  q = fma(q, r, 1.6666666666666666e-01lf);
  q = fma(q, r, 0.5lf);
  q = fma(q, r, 1.0lf);
  q = fma(q, r, 1.0lf);
  int e = int(n);
  return ldexp(ldexp(q, e / 2), e - e / 2);
}
