double tc_fmod_f64(double a, double b) { double r = a - b * trunc(a / b); if (isinf(b) && !isinf(a)) r = a; if (r == 0.0lf) return a < 0.0lf ? -0.0lf : 0.0lf; return r; }
int64_t tc_fmod_i64(int64_t a, int64_t b) { if (b == 0l || b == -1l) return 0l; return a - (a / b) * b; }
double tc_rem_f64(double a, double b) { double r = tc_fmod_f64(a, b); return (r != 0.0lf && ((r < 0.0lf) != (b < 0.0lf))) ? r + b : r; }
int64_t tc_rem_i64(int64_t a, int64_t b) { int64_t r = tc_fmod_i64(a, b); return (r != 0l && ((r < 0l) != (b < 0l))) ? r + b : r; }
