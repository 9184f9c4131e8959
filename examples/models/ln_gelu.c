/* ln_gelu.c — y = gelu(layer_norm(x, gamma, beta)) over the last dim (BENCHMARKS.md). A
 * memory-bound row kernel: one read and one write of x when fused. */
#include "models_internal.h"

static void ln_gelu_shape(tc_size_class size, int64_t *m, int64_t *n) {
  static const int64_t shapes[3][2] = {[TC_SIZE_CPU] = {4096, 1024}, [TC_SIZE_GPU] = {8192, 4096}, [TC_SIZE_TEST] = {8, 32}};
  *m = shapes[size][0];
  *n = shapes[size][1];
}

static tc_tensor *ln_gelu(tc_tensor *x, tc_tensor *gamma, tc_tensor *beta) {
  tc_scope *s = tc_scope_open();
  return model_return(s, tc_gelu(tc_layer_norm(x, 1, gamma, beta, 1e-5)));
}

static tc_status ln_gelu_inputs(tc_size_class size, uint64_t seed, tc_tensor **in) {
  int64_t m, n;
  ln_gelu_shape(size, &m, &n);
  int64_t xs[2] = {m, n};
  in[0] = model_normal(model_seed(seed, 0), 0.0, 1.0, 2, xs);
  /* gamma near 1 and beta near 0, as a trained LayerNorm has them, but never constant. */
  in[1] = model_normal(model_seed(seed, 1), 1.0, 0.1, 1, &n);
  in[2] = model_normal(model_seed(seed, 2), 0.0, 0.1, 1, &n);
  return model_inputs_check(in, 3);
}

static double ln_gelu_bytes(tc_size_class size) {
  int64_t m, n;
  ln_gelu_shape(size, &m, &n);
  return 2.0 * (double)m * (double)n * 4.0;
}

const tc_model model_ln_gelu = {
    .name = "ln_gelu",
    .description = "y = gelu(layer_norm(x, gamma, beta)) over the last dim; x 4096x1024 (cpu), 8192x4096 (gpu)",
    .n_inputs = 3,
    .fn = TC_FN(ln_gelu),
    .make_inputs = ln_gelu_inputs,
    .unit = "GB/s",
    .work = ln_gelu_bytes,
};
