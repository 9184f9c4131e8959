// fmod: exact long division, as tc_fmod_f32 (rem_f32.glsl); at most ~2100 steps
double tc_fmod_f64(double a, double b) {
  if (isnan(a) || isnan(b) || isinf(a) || b == 0.0lf) return packDouble2x32(uvec2(0u, 0x7ff80000u));
  if (isinf(b)) return a;
  double r = abs(a), d = abs(b), s = d;
  while (2.0lf * s <= r) s *= 2.0lf;
  for (; s >= d; s *= 0.5lf) if (r >= s) r -= s;
  uvec2 bits = unpackDouble2x32(r);
  return packDouble2x32(uvec2(bits.x, bits.y | (unpackDouble2x32(a).y & 0x80000000u)));
}
int64_t tc_fmod_i64(int64_t a, int64_t b) { if (b == 0l || b == -1l) return 0l; return a - (a / b) * b; }
double tc_rem_f64(double a, double b) { double r = tc_fmod_f64(a, b); return (r != 0.0lf && ((r < 0.0lf) != (b < 0.0lf))) ? r + b : r; }
int64_t tc_rem_i64(int64_t a, int64_t b) { int64_t r = tc_fmod_i64(a, b); return (r != 0l && ((r < 0l) != (b < 0l))) ? r + b : r; }
