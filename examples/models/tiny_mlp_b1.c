/* tiny_mlp_b1.c — 4 × (x·W + b, relu) on one 64-wide row (BENCHMARKS.md): all overhead, no
 * work; measures the cost of a call (guards, launches) rather than arithmetic. */
#include "models_internal.h"

enum { TINY_WIDTH = 64, TINY_LAYERS = 4 };

static tc_tensor *tiny_layer(tc_tensor *x, tc_tensor *w, tc_tensor *b) {
  return tc_relu(tc_add(tc_matmul(x, w), b));
}

static tc_tensor *tiny_mlp_b1(tc_tensor *x, tc_tensor *w0, tc_tensor *b0, tc_tensor *w1, tc_tensor *b1,
                              tc_tensor *w2, tc_tensor *b2, tc_tensor *w3, tc_tensor *b3) {
  tc_scope *s = tc_scope_open();
  tc_tensor *y = tiny_layer(x, w0, b0);
  y = tiny_layer(y, w1, b1);
  y = tiny_layer(y, w2, b2);
  return model_return(s, tiny_layer(y, w3, b3));
}

static tc_status tiny_mlp_b1_inputs(tc_size_class size, uint64_t seed, tc_tensor **in) {
  (void)size; /* one shape for every size class */
  int64_t xs[2] = {1, TINY_WIDTH};
  in[0] = model_normal(model_seed(seed, 0), 0.0, 1.0, 2, xs);
  for (int l = 0; l < TINY_LAYERS; l++) {
    in[1 + 2 * l] = model_weight(model_seed(seed, 1 + 2 * l), TINY_WIDTH, TINY_WIDTH);
    in[2 + 2 * l] = model_bias(model_seed(seed, 2 + 2 * l), TINY_WIDTH, TINY_WIDTH);
  }
  return model_inputs_check(in, 1 + 2 * TINY_LAYERS);
}

static double tiny_mlp_b1_work(tc_size_class size) {
  (void)size;
  return 0.0; /* reported as time per call */
}

const tc_model model_tiny_mlp_b1 = {
    .name = "tiny_mlp_b1",
    .description = "4 x (x*W + b, relu); x 1x64, W 64x64: per-call overhead",
    .n_inputs = 1 + 2 * TINY_LAYERS,
    .fn = TC_FN(tiny_mlp_b1),
    .make_inputs = tiny_mlp_b1_inputs,
    .unit = "us",
    .work = tiny_mlp_b1_work,
};
