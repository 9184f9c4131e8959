/* model_inputs.c — seeded inputs for the bundled models (BENCHMARKS.md: normal data, weights
 * scaled by 1/sqrt(fan_in)). */
#include <math.h>

#include "models_internal.h"

uint64_t model_seed(uint64_t seed, int index) {
  /* splitmix64 of (seed, index): neighbouring seeds and indices give unrelated streams. */
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (uint64_t)(index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

tc_tensor *model_normal(uint64_t seed, double mean, double std, int rank, const int64_t *sizes) {
  tc_scope *s = tc_scope_open();
  tc_tensor *t = tc_randn(seed, TC_F32, rank, sizes);
  if (std != 1.0) t = tc_mul_scalar(t, std);
  if (mean != 0.0) t = tc_add_scalar(t, mean);
  return model_return(s, t);
}

tc_tensor *model_weight(uint64_t seed, int64_t fan_in, int64_t fan_out) {
  int64_t sizes[2] = {fan_in, fan_out};
  return model_normal(seed, 0.0, 1.0 / sqrt((double)fan_in), 2, sizes);
}

tc_tensor *model_bias(uint64_t seed, int64_t fan_in, int64_t n) {
  return model_normal(seed, 0.0, 1.0 / sqrt((double)fan_in), 1, &n);
}

tc_status model_inputs_check(tc_tensor **inputs, int n) {
  int bad = -1;
  for (int i = 0; i < n && bad < 0; i++)
    if (!inputs[i]) bad = i;
  if (bad < 0) return TC_OK;
  /* tc_last_error() keeps the failing op's message, which names the shapes involved. */
  for (int i = 0; i < n; i++) {
    tc_release(inputs[i]);
    inputs[i] = NULL;
  }
  return TC_ERR_INVALID_ARGUMENT;
}

tc_tensor *model_return(tc_scope *s, tc_tensor *y) {
  if (y) tc_scope_keep(s, y);
  tc_scope_close(s);
  return y;
}
