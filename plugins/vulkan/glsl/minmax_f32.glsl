// max/min propagate NaN (GLSL's max/min leave it undefined)
// equal values differ only for zeros: max(-0, +0) = +0, min = -0 (sign bits and / or)
float tc_max_f32(float a, float b) { return (isnan(a) || isnan(b)) ? a + b : (a == b ? uintBitsToFloat(floatBitsToUint(a) & floatBitsToUint(b)) : max(a, b)); }
float tc_min_f32(float a, float b) { return (isnan(a) || isnan(b)) ? a + b : (a == b ? uintBitsToFloat(floatBitsToUint(a) | floatBitsToUint(b)) : min(a, b)); }
int tc_max_i32(int a, int b) { return max(a, b); }
int tc_min_i32(int a, int b) { return min(a, b); }
