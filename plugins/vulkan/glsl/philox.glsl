// Philox4x32-10 (Random123): key (k0, k1), counter (c0 = i low, c1 = i high, 0, 0); word 0 -> [0, 1)
float tc_philox_u01(uint k0, uint k1, int i, bool f64) {
  uint c0 = uint(i), c1 = i < 0 ? 0xffffffffu : 0u, c2 = 0u, c3 = 0u;
  for (int r = 0; r < 10; r++) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c0, hi0, lo0);
    umulExtended(0xCD9E8D57u, c2, hi1, lo1);
    uint n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  return float(c0 >> 8) * (1.0 / 16777216.0);
}
