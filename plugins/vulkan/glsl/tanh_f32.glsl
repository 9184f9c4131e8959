float tc_tanh_f32(float x) {
  float a = abs(x);
  if (isnan(x) || x == 0.0) return x;
  if (a < 0.5) {
    // Taylor series to x^15: relative error < 1e-7 on |x| < 0.5
    float z = x * x;
    float q = fma(z, -929569.0 / 638512875.0, 21844.0 / 6081075.0);
    q = fma(q, z, -1382.0 / 155925.0); q = fma(q, z, 62.0 / 2835.0); q = fma(q, z, -17.0 / 315.0);
    q = fma(q, z, 2.0 / 15.0); q = fma(q, z, -1.0 / 3.0);
    return fma(x * z, q, x);
  }
  if (a > 9.1) return sign(x);
  float r = 1.0 - 2.0 / (tc_exp_f32(2.0 * a) + 1.0);
  return x < 0.0 ? -r : r;
}
