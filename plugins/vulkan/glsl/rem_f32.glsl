// fmod: exact, as C's (torch.fmod), with the dividend's sign. a - b*trunc(a/b) is wrong where
// a/b is large or overflows (fmod(3e38, 3) was 2e31); this is long division instead: |b|
// doubled up to the largest |b|*2^k <= |a|, then subtracted where it fits while halving back,
// each subtraction exact (Sterbenz: s <= r < 2s). At most ~280 steps, for the widest ranges.
float tc_fmod_f32(float a, float b) {
  if (isnan(a) || isnan(b) || isinf(a) || b == 0.0) return uintBitsToFloat(0x7fc00000u);
  if (isinf(b)) return a;
  float r = abs(a), d = abs(b), s = d;
  while (2.0 * s <= r) s *= 2.0;
  for (; s >= d; s *= 0.5) if (r >= s) r -= s;
  return uintBitsToFloat(floatBitsToUint(r) | (floatBitsToUint(a) & 0x80000000u));
}
int tc_fmod_i32(int a, int b) { if (b == 0 || b == -1) return 0; return a - (a / b) * b; }
// remainder with the sign of the divisor (Python / PyTorch): fmod, then shift by b
float tc_rem_f32(float a, float b) { float r = tc_fmod_f32(a, b); return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r; }
int tc_rem_i32(int a, int b) { int r = tc_fmod_i32(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
