// STORE_ADD into the f64 buffer BUF (see atomic_add_f32.glsl)
void tc_atomic_add_f64_BUF(int ix, double v) {
  uint64_t old = BUF_u[ix];
  for (;;) {
    uint64_t want = doubleBitsToUint64(uint64BitsToDouble(old) + v);
    uint64_t seen = atomicCompSwap(BUF_u[ix], old, want);
    if (seen == old) break;
    old = seen;
  }
}

