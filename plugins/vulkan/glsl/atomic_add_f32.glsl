// STORE_ADD into the f32 buffer BUF: a compare-and-swap loop on the bits, portable to devices
// without float atomics (BUF is replaced by the buffer's name)
void tc_atomic_add_f32_BUF(int ix, float v) {
  uint old = BUF_u[ix];
  for (;;) {
    uint want = floatBitsToUint(uintBitsToFloat(old) + v);
    uint seen = atomicCompSwap(BUF_u[ix], old, want);
    if (seen == old) break;
    old = seen;
  }
}

