double tc_max_f64(double a, double b) { return (isnan(a) || isnan(b)) ? a + b : (a == b ? (unpackDouble2x32(a).y >= 0x80000000u ? b : a) : max(a, b)); }
double tc_min_f64(double a, double b) { return (isnan(a) || isnan(b)) ? a + b : (a == b ? (unpackDouble2x32(a).y >= 0x80000000u ? a : b) : min(a, b)); }
int64_t tc_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t tc_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
