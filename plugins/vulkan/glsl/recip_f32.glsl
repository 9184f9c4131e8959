// x / d for a d fixed over a row, as x * tc_recip(d) * tc_recip_scale(d): one division per
// row instead of one per element (within 2 ulp of the quotient, as inductor-cpu). Where 1/d
// would leave the normal range, d is scaled by 2^64 first and the scale multiplied back.
float tc_recip_f32(float d) {
  float a = abs(d);
  return (a > uintBitsToFloat(0x7e000000u) && !isinf(a)) ? 1.0 / (d * uintBitsToFloat(0x1f800000u))
       : (a > 0.0 && a < uintBitsToFloat(0x01000000u)) ? 1.0 / (d * uintBitsToFloat(0x5f800000u)) : tc_div_f32(1.0, d);
}
float tc_recip_scale_f32(float d) {
  float a = abs(d);
  return (a > uintBitsToFloat(0x7e000000u) && !isinf(a)) ? uintBitsToFloat(0x1f800000u)
       : (a > 0.0 && a < uintBitsToFloat(0x01000000u)) ? uintBitsToFloat(0x5f800000u) : 1.0;
}
