// f32 emulated in f64 (vulkan.f32_subnormals=emulate): on a device that flushes f32 subnormals
// to zero, every f32 value lives in a double that holds it exactly, f32 buffers are read and
// written as raw bits (uint), and each f32 result is rounded to an f32 value once. The two
// conversions are integer operations: an f32<->f64 conversion instruction may flush too.
// No double made here is ever subnormal (an f32 value is >= 2^-149, a product of two >= 2^-298),
// so the emulation needs no f64 denormal support.

// tc_f64_with_sign and tc_round_f64: round_f64.glsl, pasted before this file.

// The double equal to the f32 with bits u (subnormals included: m * 2^-149, exact).
double tc_f32_widen(uint u) {
  uint e = (u >> 23) & 0xffu, m = u & 0x7fffffu, s = u & 0x80000000u;
  if (e == 255u) return packDouble2x32(uvec2(m << 29, s | 0x7ff00000u | (m >> 3))); // inf, NaN (payload kept)
  if (e != 0u) return packDouble2x32(uvec2(m << 29, s | ((e + 896u) << 20) | (m >> 3)));
  double v = double(m) * packDouble2x32(uvec2(0u, 0x36a00000u)); // 2^-149
  return tc_f64_with_sign(v, s);
}

// The bits of x rounded to f32, to nearest even: subnormal results, overflow to inf, -0 kept.
uint tc_f32_narrow(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint s = w.y & 0x80000000u, e = (w.y >> 20) & 0x7ffu;
  uint frac = ((w.y & 0xfffffu) << 3) | (w.x >> 29); // the top 23 fraction bits
  uint rest = w.x & 0x1fffffffu;                      // the 29 dropped
  if (e == 0x7ffu) return (frac | rest) == 0u ? s | 0x7f800000u : s | 0x7fc00000u | frac;
  int E = int(e) - 896; // the f32 biased exponent
  if (E >= 255) return s | 0x7f800000u;
  if (E >= 1) { // normal: drop 29 bits; a carry into the exponent is the right result (inf too)
    uint b = (uint(E) << 23) | frac;
    if (rest > 0x10000000u || (rest == 0x10000000u && (b & 1u) != 0u)) b++;
    return s | b;
  }
  int sh = 1 - E; // subnormal: the 24-bit significand shifted right by sh
  if (sh > 24) return s; // below 2^-150: zero
  uint sig = frac | 0x800000u, q = sig >> sh, r = sig & ((1u << sh) - 1u), hlf = 1u << (sh - 1);
  if (r > hlf || (r == hlf && (rest != 0u || (q & 1u) != 0u))) q++;
  return s | q; // q = 2^23 after a carry: the smallest normal, encoded right
}

// x rounded to f32 precision, as a double, in floating point. Below 2^-126 the f32 values are
// the multiples of 2^-149, so |x| * 2^149 rounded to an integer (to even) and scaled back is the
// rounded magnitude (every step exact in double: |x| >= 2^-298 when not 0), given x's sign
// (-0 and the sign of an underflow to zero kept). From 2^-126 up the f64->f32 conversion rounds to nearest even (to
// inf past the largest f32) and its result is normal, which no driver flushes; inf and NaN
// stay as they are (the store's narrowing keeps a NaN's payload). The integer form,
// widen(narrow(x)), is some 30 instructions and branches at every f32 result: a fused kernel's
// hundreds of them took NVIDIA's driver seconds to compile (attn_block's pipelines 3.75 s on
// the H200) and lavapipe's LLVM 3 s for one layer_norm.
double tc_f32r(double x) {
  double a = abs(x);
  if (a < packDouble2x32(uvec2(0u, 0x38100000u))) // 2^-126: |x| rounded (round_f64.glsl), x's sign
    return tc_f64_with_sign(tc_round_f64(a * packDouble2x32(uvec2(0u, 0x49400000u))) * packDouble2x32(uvec2(0u, 0x36a00000u)),
                            unpackDouble2x32(x).y & 0x80000000u); // 2^149, 2^-149
  if (!(a <= packDouble2x32(uvec2(0xffffffffu, 0x7fefffffu)))) return x; // inf, NaN
  return double(float(x));
}

