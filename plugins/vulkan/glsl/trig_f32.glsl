// sin/cos: x = q*pi/2 + r (three-part pi/2), |r| <= pi/4, cephes polynomials
float tc_sinpoly_f32(float r) { float z = r * r; return fma(r * z, fma(z, fma(z, -1.9515295891e-4, 8.3321608736e-3), -1.6666654611e-1), r); }
float tc_cospoly_f32(float r) { float z = r * r; return fma(z * z, fma(z, fma(z, 2.443315711809948e-5, -1.388731625493765e-3), 4.166664568298827e-2), fma(-0.5, z, 1.0)); }
float tc_trig_f32(float x, int shift) {
  if (isinf(x) || isnan(x)) return uintBitsToFloat(0x7fc00000u);
  if (x == 0.0 && shift == 0) return x; // sin(-0) = -0
  float q = roundEven(x * 0.63661977236758134);
  float r = fma(q, -1.5703125, x);
  r = fma(q, -4.837512969970703125e-4, r);
  r = fma(q, -7.54978995489188216e-8, r);
  int k = (int(q) + shift) & 3;
  float v = (k & 1) == 0 ? tc_sinpoly_f32(r) : tc_cospoly_f32(r);
  return k >= 2 ? -v : v;
}
float tc_sin_f32(float x) { return tc_trig_f32(x, 0); }
float tc_cos_f32(float x) { return tc_trig_f32(x, 1); }
