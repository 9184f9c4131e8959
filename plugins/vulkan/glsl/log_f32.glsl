float tc_log_f32(float x) {
  if (isnan(x) || x < 0.0) return uintBitsToFloat(0x7fc00000u);
  if (x == 0.0) return uintBitsToFloat(0xff800000u);
  if (isinf(x)) return x;
  // frexp is undefined for subnormals in GLSL (lavapipe: log(1e-40) = -88): scale them by 2^23 first
  bool sub = x < 1.17549435e-38;
  int e; float m = frexp(sub ? x * 8388608.0 : x, e);
  e -= sub ? 23 : 0;
  if (m < 0.70710678) { m *= 2.0; e -= 1; }
  float f = m - 1.0;
  float s = f / (2.0 + f), z = s * s;
  float w = z * fma(z, fma(z, fma(z, 2.0 / 9.0, 2.0 / 7.0), 2.0 / 5.0), 2.0 / 3.0);
  float fe = float(e);
  return fma(fe, 0.693145751953125, fma(s, w, 2.0 * s) + fe * 1.428606765330187e-06);
}
