/* mlp.c — y = gelu(x·W1 + b1)·W2 + b2 + x (BENCHMARKS.md). Two GEMMs with fusable epilogues:
 * bias + gelu after the first, bias + residual after the second. Weights are (in, out), as the
 * formula writes them, so this is tc_matmul rather than tc_linear's (out, in). */
#include "models_internal.h"

mlp_dims mlp_shape(tc_size_class size) {
  static const mlp_dims dims[3] = {
      [TC_SIZE_CPU] = {1024, 512, 2048}, [TC_SIZE_GPU] = {8192, 1024, 4096}, [TC_SIZE_TEST] = {8, 16, 32}};
  return dims[size];
}

static tc_tensor *mlp(tc_tensor *x, tc_tensor *w1, tc_tensor *b1, tc_tensor *w2, tc_tensor *b2) {
  tc_scope *s = tc_scope_open();
  tc_tensor *h = tc_gelu(tc_add(tc_matmul(x, w1), b1));
  return model_return(s, tc_add(tc_add(tc_matmul(h, w2), b2), x));
}

static tc_status mlp_inputs(tc_size_class size, uint64_t seed, tc_tensor **in) {
  mlp_dims k = mlp_shape(size);
  int64_t xs[2] = {k.m, k.d};
  in[0] = model_normal(model_seed(seed, 0), 0.0, 1.0, 2, xs);
  in[1] = model_weight(model_seed(seed, 1), k.d, k.h);
  in[2] = model_bias(model_seed(seed, 2), k.d, k.h);
  in[3] = model_weight(model_seed(seed, 3), k.h, k.d);
  in[4] = model_bias(model_seed(seed, 4), k.h, k.d);
  return model_inputs_check(in, 5);
}

static double mlp_flops(tc_size_class size) {
  mlp_dims k = mlp_shape(size);
  return 4.0 * (double)k.m * (double)k.d * (double)k.h;
}

const tc_model model_mlp = {
    .name = "mlp",
    .description = "y = gelu(x*W1 + b1)*W2 + b2 + x; M 1024 D 512 H 2048 (cpu), M 8192 D 1024 H 4096 (gpu)",
    .n_inputs = 5,
    .fn = TC_FN(mlp),
    .make_inputs = mlp_inputs,
    .unit = "TF/s",
    .work = mlp_flops,
};
