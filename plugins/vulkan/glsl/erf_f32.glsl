// erf: 2.5 ulp (see codegen_math.c); both halves computed and selected, since the lanes
// of a warp usually straddle |x| = 0.92 and would run both branches anyway
float tc_erf_f32(float x) {
  float z = abs(x), s = x * x;
  // |x| < 0.921875: x * P(x^2), minimax in relative error
  float p = -5.991065042e-04;
  p = fma(p, s, 4.993230090e-03); p = fma(p, s, -2.676665904e-02); p = fma(p, s, 1.128181778e-01);
  p = fma(p, s, -3.761249393e-01); p = fma(p, s, 1.128379150e+00);
  precise float small = x * p;
  // otherwise 1 - exp(L(z)), L minimax for log(erfc(z)) on [0.921875, 4] in u = z - 2.4609375;
  // erfc(4) is below half an ulp of 1, so z is clamped there
  float u = min(z, 4.0) - 2.4609375;
  float l = -2.733202306e-08;
  l = fma(l, u, 1.614091377e-06); l = fma(l, u, -1.366756430e-05); l = fma(l, u, 8.110227095e-05);
  l = fma(l, u, -4.389767448e-04); l = fma(l, u, 2.249020400e-03); l = fma(l, u, -1.120315489e-02);
  l = fma(l, u, -9.426010829e-01); l = fma(l, u, -5.278989249e+00); l = fma(l, u, -7.599165803e+00);
  precise float big = 1.0 - tc_exp_f32(l);
  float r = z < 0.921875 ? small : (x < 0.0 ? -big : big);
  return isnan(x) ? x : r;
}
