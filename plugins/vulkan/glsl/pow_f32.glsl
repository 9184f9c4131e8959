float tc_pow_f32(float a, float b) {
  if (b == 0.0 || a == 1.0) return 1.0;
  if (isnan(a) || isnan(b)) return a + b;
  bool bint = floor(b) == b;
  bool odd = bint && abs(b) < 16777216.0 && (int(abs(b)) & 1) == 1;
  float aa = abs(a);
  if (a < 0.0 && !bint && !isinf(a)) return uintBitsToFloat(0x7fc00000u);
  float r;
  if (aa == 0.0) r = b < 0.0 ? uintBitsToFloat(0x7f800000u) : 0.0;
  else if (isinf(aa)) r = b < 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
  else if (isinf(b)) r = (aa == 1.0) ? 1.0 : ((aa > 1.0) == (b > 0.0) ? uintBitsToFloat(0x7f800000u) : 0.0);
  else r = tc_exp_f32(b * tc_log_f32(aa));
  return (odd && (a < 0.0 || (a == 0.0 && floatBitsToUint(a) != 0u))) ? -r : r;
}
