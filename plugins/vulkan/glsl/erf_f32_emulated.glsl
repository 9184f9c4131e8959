// erf of an f32 value held in a double (f32 emulated in f64): tc_erf_f32's two minimax fits
// evaluated in double, then rounded once by the caller (tc_f32r): within 1 ulp of f32, where the
// f64 erf (a Taylor series and a continued fraction of up to 60 divisions each) cost emulated
// GELU epilogues most of their time.
double tc_f32_erf(double x) {
  double z = abs(x), s = x * x;
  double p = -5.991065042e-04lf;
  p = fma(p, s, 4.993230090e-03lf); p = fma(p, s, -2.676665904e-02lf); p = fma(p, s, 1.128181778e-01lf);
  p = fma(p, s, -3.761249393e-01lf); p = fma(p, s, 1.128379150e+00lf);
  double small = x * p;
  double u = min(z, 4.0lf) - 2.4609375lf;
  double l = -2.733202306e-08lf;
  l = fma(l, u, 1.614091377e-06lf); l = fma(l, u, -1.366756430e-05lf); l = fma(l, u, 8.110227095e-05lf);
  l = fma(l, u, -4.389767448e-04lf); l = fma(l, u, 2.249020400e-03lf); l = fma(l, u, -1.120315489e-02lf);
  l = fma(l, u, -9.426010829e-01lf); l = fma(l, u, -5.278989249e+00lf); l = fma(l, u, -7.599165803e+00lf);
  double big = 1.0lf - tc_exp_f64(l);
  double r = z < 0.921875lf ? small : (x < 0.0lf ? -big : big);
  return isnan(x) ? x : r;
}
