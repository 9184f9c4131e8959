double tc_div_f64(double a, double b) {
  if (b != 0.0lf) return a / b;
  if (a == 0.0lf || isnan(a)) return uintBitsToFloat(0x7fc00000u);
  bool neg = (unpackDouble2x32(a).y ^ unpackDouble2x32(b).y) >= 0x80000000u;
  return double(uintBitsToFloat(neg ? 0xff800000u : 0x7f800000u));
}
