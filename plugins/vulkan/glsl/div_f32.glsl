// a / b with IEEE results for a zero divisor (x / 0 is undefined in Vulkan: lavapipe returns
// garbage), the sign of the infinity from both signs (1 / -0 = -inf), 0 / 0 and NaN / 0 NaN
float tc_div_f32(float a, float b) {
  if (b != 0.0) return a / b;
  if (a == 0.0 || isnan(a)) return uintBitsToFloat(0x7fc00000u);
  return uintBitsToFloat(((floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u) | 0x7f800000u);
}
