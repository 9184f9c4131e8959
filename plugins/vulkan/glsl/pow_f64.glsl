double tc_pow_f64(double a, double b) {
  if (b == 0.0lf || a == 1.0lf) return 1.0lf;
  if (isnan(a) || isnan(b)) return a + b;
  bool bint = floor(b) == b;
  bool odd = bint && abs(b) < 9007199254740992.0lf && (int64_t(abs(b)) & 1l) == 1l;
  double aa = abs(a);
  double inf = packDouble2x32(uvec2(0u, 0x7ff00000u));
  if (a < 0.0lf && !bint && !isinf(a)) return packDouble2x32(uvec2(0u, 0x7ff80000u));
  double r;
  if (aa == 0.0lf) r = b < 0.0lf ? inf : 0.0lf;
  else if (isinf(aa)) r = b < 0.0lf ? 0.0lf : inf;
  else if (isinf(b)) r = (aa == 1.0lf) ? 1.0lf : ((aa > 1.0lf) == (b > 0.0lf) ? inf : 0.0lf);
  else r = tc_exp_f64(b * tc_log_f64(aa));
  return (odd && (a < 0.0lf || (a == 0.0lf && unpackDouble2x32(a).y != 0u))) ? -r : r;
}
