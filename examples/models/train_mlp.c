/* train_mlp.c — BENCHMARKS.md's train_mlp: one SGD step of the mlp (mlp.c: y = gelu(x·W1 +
 * b1)·W2 + b2 + x) on loss = mean((y - target)²), as one compiled function: the forward, the
 * gradients of W1, b1, W2, b2 (tc_grad: the backward prims are traced into the same graph)
 * and the update. A compiled function returns one tensor, so the step returns the loss and
 * the updated parameters as one vector. `tc bench --models train_mlp` reports ms per step. */
#include "models_internal.h"

static const double train_mlp_lr = 0.01;

static tc_tensor *train_mlp(tc_tensor *x, tc_tensor *target, tc_tensor *w1, tc_tensor *b1, tc_tensor *w2,
                            tc_tensor *b2) {
  tc_scope *s = tc_scope_open();
  tc_tensor *p[4] = {w1, b1, w2, b2}, *g[4] = {0};
  for (int i = 0; i < 4; i++)
    tc_set_requires_grad(p[i], true);
  tc_tensor *h = tc_gelu(tc_add(tc_matmul(x, w1), b1));
  tc_tensor *y = tc_add(tc_add(tc_matmul(h, w2), b2), x);
  tc_tensor *d = tc_sub(y, target);
  tc_tensor *loss = tc_mean(tc_mul(d, d), 0, NULL, false);
  if (tc_grad(loss, p, 4, g) != TC_OK) return model_return(s, NULL);
  bool was = tc_set_grad_enabled(false);
  tc_tensor *parts[5] = {tc_reshape(loss, 1, (int64_t[]){1})};
  for (int i = 0; i < 4; i++)
    parts[1 + i] = tc_flatten(tc_sub(p[i], tc_mul_scalar(g[i], train_mlp_lr)), 0, -1);
  tc_tensor *out = tc_cat(5, parts, 0);
  tc_set_grad_enabled(was);
  return model_return(s, out);
}

static tc_status train_mlp_inputs(tc_size_class size, uint64_t seed, tc_tensor **in) {
  mlp_dims k = mlp_shape(size);
  int64_t xs[2] = {k.m, k.d};
  in[0] = model_normal(model_seed(seed, 0), 0.0, 1.0, 2, xs);
  in[1] = model_normal(model_seed(seed, 5), 0.0, 1.0, 2, xs);
  in[2] = model_weight(model_seed(seed, 1), k.d, k.h);
  in[3] = model_bias(model_seed(seed, 2), k.d, k.h);
  in[4] = model_weight(model_seed(seed, 3), k.h, k.d);
  in[5] = model_bias(model_seed(seed, 4), k.h, k.d);
  return model_inputs_check(in, 6);
}

static double train_mlp_work(tc_size_class size) {
  (void)size;
  return 0.0;
}

const tc_model model_train_mlp = {
    .name = "train_mlp",
    .description = "one SGD step of mlp on mean((y - target)^2): forward, tc_grad of W1 b1 W2 b2, update; ms per step",
    .n_inputs = 6,
    .fn = TC_FN(train_mlp),
    .make_inputs = train_mlp_inputs,
    .unit = "ms",
    .work = train_mlp_work,
};
