/* softmax.c — y = softmax(x, dim=-1) (BENCHMARKS.md). A memory-bound row kernel. */
#include "models_internal.h"

static void softmax_shape(tc_size_class size, int64_t *m, int64_t *n) {
  static const int64_t shapes[3][2] = {[TC_SIZE_CPU] = {8192, 1024}, [TC_SIZE_GPU] = {32768, 1024}, [TC_SIZE_TEST] = {16, 64}};
  *m = shapes[size][0];
  *n = shapes[size][1];
}

static tc_tensor *softmax(tc_tensor *x) {
  tc_scope *s = tc_scope_open();
  return model_return(s, tc_softmax(x, -1));
}

static tc_status softmax_inputs(tc_size_class size, uint64_t seed, tc_tensor **in) {
  int64_t m, n;
  softmax_shape(size, &m, &n);
  int64_t xs[2] = {m, n};
  in[0] = model_normal(model_seed(seed, 0), 0.0, 1.0, 2, xs);
  return model_inputs_check(in, 1);
}

static double softmax_bytes(tc_size_class size) {
  int64_t m, n;
  softmax_shape(size, &m, &n);
  return 2.0 * (double)m * (double)n * 4.0;
}

const tc_model model_softmax = {
    .name = "softmax",
    .description = "y = softmax(x, dim=-1); x 8192x1024 (cpu), 32768x1024 (gpu)",
    .n_inputs = 1,
    .fn = TC_FN(softmax),
    .make_inputs = softmax_inputs,
    .unit = "GB/s",
    .work = softmax_bytes,
};
