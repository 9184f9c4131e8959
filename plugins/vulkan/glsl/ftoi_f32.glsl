// float -> int truncates toward zero; NaN -> 0; out of range saturates
int tc_ftoi_f32_i32(float x) { return isnan(x) ? 0 : (x >= 2147483648.0 ? 2147483647 : (x <= -2147483648.0 ? (-2147483647 - 1) : int(x))); }
