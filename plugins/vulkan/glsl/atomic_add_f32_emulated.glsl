// STORE_ADD into the f32 buffer BUF with f32 emulated in f64 (f32_bits.glsl): the same
// compare-and-swap loop on the bits, the sum made in double and rounded once to f32
void tc_atomic_add_f32_BUF(int ix, double v) {
  uint old = BUF_u[ix];
  for (;;) {
    uint want = tc_f32_narrow(tc_f32_widen(old) + v);
    uint seen = atomicCompSwap(BUF_u[ix], old, want);
    if (seen == old) break;
    old = seen;
  }
}

