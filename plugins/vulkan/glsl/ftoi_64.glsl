int64_t tc_ftoi_f32_i64(float x) { return isnan(x) ? 0l : (x >= 9.2233720e18 ? 9223372036854775807l : (x <= -9.2233720e18 ? (-9223372036854775807l - 1l) : int64_t(x))); }
int tc_ftoi_f64_i32(double x) { return isnan(x) ? 0 : int(clamp(x, -2147483648.0lf, 2147483647.0lf)); }
int64_t tc_ftoi_f64_i64(double x) { return isnan(x) ? 0l : (x >= 9.2233720368547758e18lf ? 9223372036854775807l : (x <= -9.2233720368547758e18lf ? (-9223372036854775807l - 1l) : int64_t(x))); }
