// fmod: the sign of the dividend (C, torch.fmod); an exact zero keeps the dividend's sign
float tc_fmod_f32(float a, float b) { float r = a - b * trunc(a / b); if (isinf(b) && !isinf(a)) r = a; if (r == 0.0) return uintBitsToFloat(floatBitsToUint(a) & 0x80000000u); return r; }
int tc_fmod_i32(int a, int b) { if (b == 0 || b == -1) return 0; return a - (a / b) * b; }
// remainder with the sign of the divisor (Python / PyTorch): fmod, then shift by b
float tc_rem_f32(float a, float b) { float r = tc_fmod_f32(a, b); return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r; }
int tc_rem_i32(int a, int b) { int r = tc_fmod_i32(a, b); return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
