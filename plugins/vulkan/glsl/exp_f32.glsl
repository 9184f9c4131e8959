// exp: the special cases as selects, 2^n as two exact power-of-two factors made from
// exponent bits (ldexp is a slow path on some drivers; same result bit for bit)
float tc_exp_f32(float x) {
  float xc = clamp(x, -104.0, 89.0);
  float n = roundEven(xc * 1.44269504);
  float r = fma(n, -0.693145751953125, xc);
  r = fma(n, -1.428606765330187e-06, r);
  float q = 1.0 / 5040.0;
  q = fma(q, r, 1.0 / 720.0); q = fma(q, r, 1.0 / 120.0); q = fma(q, r, 1.0 / 24.0);
  q = fma(q, r, 1.0 / 6.0); q = fma(q, r, 0.5); q = fma(q, r, 1.0); q = fma(q, r, 1.0);
  int e = int(n), h = e >> 1;
  precise float y = (q * intBitsToFloat((h + 127) << 23)) * intBitsToFloat((e - h + 127) << 23);
  y = x > 88.72284 ? uintBitsToFloat(0x7f800000u) : y;
  y = x < -103.97208 ? 0.0 : y;
  return isnan(x) ? x : y;
}
