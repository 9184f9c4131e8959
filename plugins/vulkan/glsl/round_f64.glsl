// v (>= +0) with the sign bit s (0 or 0x80000000u), by integer operations: a driver need not
// keep the sign of a zero in f64 (lavapipe on an AVX2 host lost it). Also f32_bits.glsl's.
double tc_f64_with_sign(double v, uint s) {
  uvec2 w = unpackDouble2x32(v);
  return packDouble2x32(uvec2(w.x, w.y | s));
}

// Round half to even for double without roundEven(), which lavapipe on an AVX2 host got wrong
// (1.5 -> 1, -0.4 -> +0). Below 2^52, adding 2^52 leaves no fraction bits, so the addition
// itself rounds to nearest even; precise: the sum and the difference are not folded back into
// the operand. x's sign goes back by integer operations (-0.4 -> -0, -0 -> -0). From 2^52 up
// every double is an integer; inf and NaN stay as they are.
double tc_round_f64(double x) {
  double a = abs(x);
  if (!(a < 4503599627370496.0lf)) return x; // 2^52
  precise double big = a + 4503599627370496.0lf;
  precise double n = big - 4503599627370496.0lf;
  return tc_f64_with_sign(n, unpackDouble2x32(x).y & 0x80000000u);
}
