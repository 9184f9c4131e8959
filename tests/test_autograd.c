/* test_autograd.c — eager gradients on debug-eager: every differentiable public op against
 * central finite differences in f64 (autograd_check.h), then the points where the derivative
 * is a convention (relu/abs at 0, ties of max/min), accumulation (embedding with repeated
 * indices, tc_backward twice), and the errors of bad calls. */
#include "autograd_check.h"
#include "test_support.h"

TC_SCOPED_TEST_SUITE(autograd);

static tc_tensor *i64(int rank, const int64_t *sizes, const int64_t *v) {
  tc_tensor *t = tc_from_host(v, TC_I64, rank, sizes);
  cr_assert(t, "%s", tc_last_error());
  return t;
}

static tc_tensor *f64(int rank, const int64_t *sizes, const double *v) {
  tc_tensor *t = tc_from_host(v, TC_F64, rank, sizes);
  cr_assert(t, "%s", tc_last_error());
  return t;
}

/* The gradient of sum(y) with respect to x, on the host (caller frees). */
static double *grad_of_sum(tc_tensor *y, tc_tensor *x) {
  tc_tensor *g = NULL;
  cr_assert_eq(tc_grad(tc_sum(y, 0, NULL, false), &x, 1, &g), TC_OK, "%s", tc_last_error());
  return ag_host(g);
}

static void expect_values(const double *got, const double *want, int n, const char *what) {
  for (int i = 0; i < n; i++)
    cr_assert(fabs(got[i] - want[i]) < 1e-12, "%s[%d]: %g, expected %g", what, i, got[i], want[i]);
}

/* ---------------------------------------------------------------- unary elementwise */
#define UNARY(name, lo, hi)                                                                                            \
  static tc_tensor *f_##name(tc_tensor *const *x) {                                                                    \
    return tc_##name(x[0]);                                                                                            \
  }                                                                                                                    \
  Test(autograd, name) {                                                                                               \
    AG_CHECK(#name, f_##name, AG_R(__LINE__, (lo), (hi), 2, 3));                                                       \
  }

UNARY(neg, -2, 2)
UNARY(abs, -2, 2)
UNARY(exp, -2, 2)
UNARY(log, 0.2, 3)
UNARY(sqrt, 0.2, 3)
UNARY(rsqrt, 0.2, 3)
UNARY(sin, -3, 3)
UNARY(cos, -3, 3)
UNARY(tanh, -2, 2)
UNARY(erf, -2, 2)
UNARY(reciprocal, 0.5, 2)
UNARY(sigmoid, -3, 3)
UNARY(relu, -2, 2)
UNARY(gelu, -3, 3)
UNARY(gelu_tanh, -3, 3)
UNARY(silu, -3, 3)
UNARY(floor, -2.9, 2.9)
UNARY(ceil, -2.9, 2.9)
UNARY(round, -2.9, 2.9)
UNARY(sign, -2, 2)
UNARY(contiguous, -2, 2)

/* ---------------------------------------------------------------- binary, with broadcasting */
#define BINARY(name, call, lo, hi, sa, sb)                                                                             \
  static tc_tensor *f_##name(tc_tensor *const *x) {                                                                    \
    return call;                                                                                                       \
  }                                                                                                                    \
  Test(autograd, name) {                                                                                               \
    AG_CHECK(#name, f_##name, ag_rand(__LINE__, (lo), (hi), sizeof((int64_t[])sa) / 8, (int64_t[])sa),                 \
             ag_rand(__LINE__ + 1000, (lo), (hi), sizeof((int64_t[])sb) / 8, (int64_t[])sb));                          \
  }
#define S(...)                                                                                                         \
  { __VA_ARGS__ }

BINARY(add_broadcast, tc_add(x[0], x[1]), -2, 2, S(2, 3), S(3))
BINARY(sub_broadcast, tc_sub(x[0], x[1]), -2, 2, S(2, 1, 3), S(4, 1))
BINARY(mul_broadcast, tc_mul(x[0], x[1]), -2, 2, S(2, 3), S(2, 1))
BINARY(div_broadcast, tc_div(x[0], x[1]), 0.5, 2, S(3), S(2, 3))
BINARY(pow_tensor, tc_pow(x[0], x[1]), 0.5, 2, S(2, 3), S(2, 3))
BINARY(maximum, tc_maximum(x[0], x[1]), -2, 2, S(2, 3), S(2, 3))
BINARY(minimum, tc_minimum(x[0], x[1]), -2, 2, S(3), S(2, 3))
BINARY(remainder, tc_remainder(x[0], x[1]), 0.3, 3, S(2, 3), S(2, 3))
BINARY(fmod, tc_fmod(x[0], tc_neg(x[1])), 0.3, 3, S(2, 3), S(2, 3))
BINARY(where_broadcast, tc_where(tc_gt(x[0], tc_scalar(0.0, TC_F64)), x[0], x[1]), -2, 2, S(2, 3), S(3))
BINARY(scalar_ops, tc_add_scalar(tc_mul_scalar(tc_pow_scalar(x[0], 3.0), -1.5), 2.0), -2, 2, S(4), S(1))
BINARY(masked_fill, tc_masked_fill(tc_mul(x[0], x[1]), tc_lt(x[1], tc_scalar(0.0, TC_F64)), 7.0), -2, 2, S(2, 3), S(3))

/* ---------------------------------------------------------------- reductions */
static tc_tensor *f_sum_dims(tc_tensor *const *x) {
  return tc_sum(x[0], 2, (int[]){0, 2}, true);
}
static tc_tensor *f_sum_all(tc_tensor *const *x) {
  return tc_sum(x[0], 0, NULL, false);
}
static tc_tensor *f_mean(tc_tensor *const *x) {
  return tc_mean(x[0], 1, (int[]){-1}, false);
}
static tc_tensor *f_max(tc_tensor *const *x) {
  return tc_max(x[0], 1, (int[]){1}, false);
}
static tc_tensor *f_min_all(tc_tensor *const *x) {
  return tc_min(x[0], 0, NULL, true);
}
static tc_tensor *f_prod(tc_tensor *const *x) {
  return tc_prod(x[0], 1, (int[]){0}, false);
}
static tc_tensor *f_var(tc_tensor *const *x) {
  return tc_var(x[0], 1, (int[]){1}, 1, true);
}
static tc_tensor *f_var_pop(tc_tensor *const *x) {
  return tc_var(x[0], 0, NULL, 0, false);
}

Test(autograd, reductions) {
  AG_CHECK("sum dims keepdim", f_sum_dims, AG_R(1, -2, 2, 2, 3, 2));
  AG_CHECK("sum all", f_sum_all, AG_R(2, -2, 2, 2, 3));
  AG_CHECK("mean", f_mean, AG_R(3, -2, 2, 2, 3));
  AG_CHECK("max", f_max, AG_R(4, -2, 2, 3, 4));
  AG_CHECK("min all", f_min_all, AG_R(5, -2, 2, 3, 4));
  AG_CHECK("prod", f_prod, AG_R(6, 0.5, 2, 3, 2));
  AG_CHECK("var", f_var, AG_R(7, -2, 2, 2, 4));
  AG_CHECK("var population", f_var_pop, AG_R(8, -2, 2, 2, 4));
}

/* ---------------------------------------------------------------- views and movement */
static tc_tensor *f_reshape(tc_tensor *const *x) {
  return tc_reshape(x[0], 2, (int64_t[]){3, -1});
}
static tc_tensor *f_flatten(tc_tensor *const *x) {
  return tc_unflatten(tc_flatten(x[0], 0, 1), 0, 2, (int64_t[]){3, 2});
}
static tc_tensor *f_permute(tc_tensor *const *x) {
  return tc_mul(tc_permute(x[0], (int[]){2, 0, 1}), tc_permute(x[0], (int[]){2, 0, 1}));
}
static tc_tensor *f_transpose(tc_tensor *const *x) {
  return tc_contiguous(tc_transpose(x[0], 0, 1));
}
static tc_tensor *f_slice_step(tc_tensor *const *x) {
  return tc_slice(x[0], 1, 1, 7, 2);
}
static tc_tensor *f_slice_two(tc_tensor *const *x) {
  return tc_slice(tc_slice(x[0], 0, 1, 3, 1), 1, 0, 8, 3);
}
static tc_tensor *f_expand(tc_tensor *const *x) {
  return tc_expand(x[0], 3, (int64_t[]){2, -1, 4});
}
static tc_tensor *f_squeeze(tc_tensor *const *x) {
  return tc_unsqueeze(tc_squeeze(x[0], 1), 0);
}
static tc_tensor *f_flip(tc_tensor *const *x) {
  return tc_mul(tc_flip(x[0], 1, (int[]){1}), x[0]);
}
static tc_tensor *f_pad(tc_tensor *const *x) {
  return tc_pad(x[0], 4, (int64_t[]){1, 2, 0, 1}, 3.0);
}
static tc_tensor *f_tril(tc_tensor *const *x) {
  return tc_add(tc_tril(x[0], 0), tc_triu(x[0], 1));
}

Test(autograd, views) {
  AG_CHECK("reshape", f_reshape, AG_R(1, -2, 2, 2, 3));
  AG_CHECK("flatten", f_flatten, AG_R(2, -2, 2, 2, 3));
  AG_CHECK("permute", f_permute, AG_R(3, -2, 2, 2, 3, 2));
  AG_CHECK("transpose", f_transpose, AG_R(4, -2, 2, 2, 3));
  AG_CHECK("slice step 2", f_slice_step, AG_R(5, -2, 2, 2, 8));
  AG_CHECK("slice two dims, step 3", f_slice_two, AG_R(6, -2, 2, 4, 8));
  AG_CHECK("expand", f_expand, AG_R(7, -2, 2, 3, 1));
  AG_CHECK("squeeze", f_squeeze, AG_R(8, -2, 2, 3, 1, 2));
  AG_CHECK("flip", f_flip, AG_R(9, -2, 2, 2, 3));
  AG_CHECK("pad", f_pad, AG_R(10, -2, 2, 2, 3));
  AG_CHECK("tril + triu", f_tril, AG_R(11, -2, 2, 3, 3));
}

static tc_tensor *f_cat(tc_tensor *const *x) {
  return tc_cat(3, (tc_tensor *[]){x[0], x[1], x[0]}, 1);
}
Test(autograd, cat) {
  AG_CHECK("cat", f_cat, AG_R(1, -2, 2, 2, 3), AG_R(2, -2, 2, 2, 1));
}

/* ---------------------------------------------------------------- indexing */
static tc_tensor *f_gather(tc_tensor *const *x) {
  return tc_gather(x[0], 1, i64(2, (int64_t[]){2, 3}, (int64_t[]){0, 2, 2, 1, 1, 0}));
}
static tc_tensor *f_index_select(tc_tensor *const *x) {
  return tc_index_select(x[0], 0, i64(1, (int64_t[]){4}, (int64_t[]){2, 0, 2, 2}));
}
static tc_tensor *f_embedding(tc_tensor *const *x) {
  return tc_embedding(x[0], i64(2, (int64_t[]){2, 3}, (int64_t[]){1, 1, 3, 0, 1, 3}));
}
static tc_tensor *f_scatter_add(tc_tensor *const *x) {
  return tc_scatter_add(x[0], 0, i64(2, (int64_t[]){2, 3}, (int64_t[]){0, 2, 0, 0, 0, 1}), x[1]);
}

Test(autograd, indexing) {
  AG_CHECK("gather", f_gather, AG_R(1, -2, 2, 2, 4));
  AG_CHECK("index_select", f_index_select, AG_R(2, -2, 2, 3, 2));
  AG_CHECK("embedding", f_embedding, AG_R(3, -2, 2, 4, 2));
  AG_CHECK("scatter_add", f_scatter_add, AG_R(4, -2, 2, 3, 3), AG_R(5, -2, 2, 2, 3));
}

/* Repeated indices accumulate: row 1 is picked three times, row 3 twice, row 2 never. */
Test(autograd, embedding_repeated_indices) {
  tc_tensor *w = AG_R(1, -1, 1, 4, 2);
  tc_set_requires_grad(w, true);
  tc_tensor *e = tc_embedding(w, i64(2, (int64_t[]){2, 3}, (int64_t[]){1, 1, 3, 0, 1, 3}));
  double *g = grad_of_sum(e, w);
  expect_values(g, (double[]){1, 1, 3, 3, 0, 0, 2, 2}, 8, "embedding grad");
  free(g);
}

/* ---------------------------------------------------------------- matmul, every shape */
#define MATMUL(name, sa, sb)                                                                                           \
  Test(autograd, matmul_##name) {                                                                                      \
    AG_CHECK("matmul " #name, f_matmul, ag_rand(1, -1, 1, sizeof((int64_t[])sa) / 8, (int64_t[])sa),                   \
             ag_rand(2, -1, 1, sizeof((int64_t[])sb) / 8, (int64_t[])sb));                                             \
  }
static tc_tensor *f_matmul(tc_tensor *const *x) {
  return tc_matmul(x[0], x[1]);
}
MATMUL(dot, S(3), S(3))
MATMUL(matrix_vector, S(2, 3), S(3))
MATMUL(vector_matrix, S(3), S(3, 4))
MATMUL(matrix, S(2, 3), S(3, 4))
MATMUL(batched_2d, S(2, 2, 3), S(3, 4))
MATMUL(batched, S(2, 2, 3), S(2, 3, 4))
MATMUL(broadcast_batch, S(2, 1, 2, 3), S(3, 3, 4))
MATMUL(vector_batched, S(3), S(2, 3, 2))

static tc_tensor *f_linear(tc_tensor *const *x) {
  return tc_linear(x[0], x[1], x[2]);
}
Test(autograd, linear) {
  AG_CHECK("linear", f_linear, AG_R(1, -1, 1, 2, 3, 4), AG_R(2, -1, 1, 5, 4), AG_R(3, -1, 1, 5));
}

/* ---------------------------------------------------------------- neural network */
static tc_tensor *f_softmax(tc_tensor *const *x) {
  return tc_softmax(x[0], 1);
}
static tc_tensor *f_log_softmax(tc_tensor *const *x) {
  return tc_log_softmax(x[0], -1);
}
static tc_tensor *f_layer_norm(tc_tensor *const *x) {
  return tc_layer_norm(x[0], 1, x[1], x[2], 1e-5);
}
static tc_tensor *f_layer_norm2(tc_tensor *const *x) {
  return tc_layer_norm(x[0], 2, NULL, NULL, 1e-5);
}
static tc_tensor *f_rms_norm(tc_tensor *const *x) {
  return tc_rms_norm(x[0], 1, x[1], 1e-6);
}
static tc_tensor *f_cross_entropy(tc_tensor *const *x) {
  return tc_cross_entropy(x[0], i64(1, (int64_t[]){4}, (int64_t[]){2, 0, -100, 2}));
}
static tc_tensor *f_dropout(tc_tensor *const *x) {
  return tc_dropout(x[0], 0.4, 7, true);
}

Test(autograd, nn) {
  AG_CHECK("softmax", f_softmax, AG_R(1, -2, 2, 2, 4));
  AG_CHECK("log_softmax", f_log_softmax, AG_R(2, -2, 2, 2, 4));
  AG_CHECK("layer_norm", f_layer_norm, AG_R(3, -2, 2, 2, 5), AG_R(4, 0.5, 1.5, 5), AG_R(5, -1, 1, 5));
  AG_CHECK("layer_norm over 2 dims", f_layer_norm2, AG_R(6, -2, 2, 2, 2, 3));
  AG_CHECK("rms_norm", f_rms_norm, AG_R(7, -2, 2, 3, 4), AG_R(8, 0.5, 1.5, 4));
  AG_CHECK("cross_entropy", f_cross_entropy, AG_R(9, -2, 2, 4, 3));
  AG_CHECK("dropout", f_dropout, AG_R(10, -2, 2, 3, 5));
}

/* The same dropout mask in backward: dropped elements get no gradient, kept ones 1/(1-p). */
Test(autograd, dropout_mask) {
  tc_tensor *x = AG_R(1, 1, 2, 64);
  tc_set_requires_grad(x, true);
  tc_tensor *y = tc_dropout(x, 0.5, 3, true);
  double *g = grad_of_sum(y, x), *yv = ag_host(y);
  for (int i = 0; i < 64; i++)
    cr_assert_eq(g[i], yv[i] == 0 ? 0.0 : 2.0, "element %d", i);
  free(g);
  free(yv);
}

/* ---------------------------------------------------------------- conventions at kinks */
Test(autograd, relu_abs_at_zero) {
  tc_tensor *x = f64(1, (int64_t[]){4}, (double[]){-1, 0, -0.0, 2});
  tc_set_requires_grad(x, true);
  double *g = grad_of_sum(tc_relu(x), x);
  expect_values(g, (double[]){0, 0, 0, 1}, 4, "relu");
  free(g);
  g = grad_of_sum(tc_abs(x), x);
  expect_values(g, (double[]){-1, 0, 0, 1}, 4, "abs");
  free(g);
}

Test(autograd, max_min_ties_split_evenly) {
  tc_tensor *x = f64(2, (int64_t[]){2, 4}, (double[]){1, 3, 3, 2, 5, 5, 5, 0});
  tc_set_requires_grad(x, true);
  double *g = grad_of_sum(tc_max(x, 1, (int[]){1}, false), x);
  expect_values(g, (double[]){0, 0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0}, 8, "amax");
  free(g);
  g = grad_of_sum(tc_min(x, 0, NULL, false), x);
  expect_values(g, (double[]){0, 0, 0, 0, 0, 0, 0, 1}, 8, "amin");
  free(g);
  tc_tensor *a = f64(1, (int64_t[]){3}, (double[]){1, 2, 3}), *b = f64(1, (int64_t[]){3}, (double[]){1, 5, 0});
  tc_set_requires_grad(a, true);
  tc_set_requires_grad(b, true);
  tc_tensor *g2[2];
  cr_assert_eq(tc_grad(tc_sum(tc_maximum(a, b), 0, NULL, false), (tc_tensor *[]){a, b}, 2, g2), TC_OK);
  double *ga = ag_host(g2[0]), *gb = ag_host(g2[1]);
  expect_values(ga, (double[]){0.5, 0, 1}, 3, "maximum a");
  expect_values(gb, (double[]){0.5, 1, 0}, 3, "maximum b");
  free(ga);
  free(gb);
}

Test(autograd, prod_with_zeros) {
  tc_tensor *x = f64(2, (int64_t[]){2, 3}, (double[]){2, 0, 3, 0, 4, 0});
  tc_set_requires_grad(x, true);
  double *g = grad_of_sum(tc_prod(x, 1, (int[]){1}, false), x);
  expect_values(g, (double[]){0, 6, 0, 0, 0, 0}, 6, "prod");
  free(g);
}

/* ---------------------------------------------------------------- accumulation and modes */
Test(autograd, backward_accumulates_into_leaves) {
  tc_tensor *w = f64(1, (int64_t[]){3}, (double[]){1, 2, 3});
  tc_tensor *c = f64(1, (int64_t[]){3}, (double[]){4, 5, 6});
  cr_assert_eq(tc_set_requires_grad(w, true), TC_OK);
  cr_assert_null(tc_grad_of(w));
  cr_assert_eq(tc_last_status(), TC_OK);
  tc_tensor *loss = tc_sum(tc_mul(tc_mul(w, w), c), 0, NULL, false); /* d/dw = 2 w c */
  cr_assert_eq(tc_backward(loss), TC_OK, "%s", tc_last_error());
  double *g = ag_host(tc_grad_of(w));
  expect_values(g, (double[]){8, 20, 36}, 3, "first backward");
  free(g);
  cr_assert_eq(tc_backward(loss), TC_OK, "%s", tc_last_error());
  g = ag_host(tc_grad_of(w));
  expect_values(g, (double[]){16, 40, 72}, 3, "accumulated");
  free(g);
  cr_assert_null(tc_grad_of(c), "c does not require grad");
  cr_assert_eq(tc_zero_grad(w), TC_OK);
  cr_assert_null(tc_grad_of(w));
}

Test(autograd, backward_with_grad_output) {
  tc_tensor *w = f64(1, (int64_t[]){3}, (double[]){1, 2, 3});
  tc_set_requires_grad(w, true);
  tc_tensor *y = tc_mul_scalar(w, 3.0);
  cr_assert_eq(tc_backward_with(y, f64(1, (int64_t[]){3}, (double[]){1, -1, 2})), TC_OK, "%s", tc_last_error());
  double *g = ag_host(tc_grad_of(w));
  expect_values(g, (double[]){3, -3, 6}, 3, "vjp");
  free(g);
}

Test(autograd, unused_and_intermediate_wrt) {
  tc_tensor *a = f64(1, (int64_t[]){2}, (double[]){1, 2}), *b = f64(1, (int64_t[]){2}, (double[]){3, 4});
  tc_set_requires_grad(a, true);
  tc_set_requires_grad(b, true);
  tc_tensor *h = tc_mul_scalar(a, 2.0);
  tc_tensor *loss = tc_sum(tc_mul(h, h), 0, NULL, false);
  tc_tensor *g[3];
  cr_assert_eq(tc_grad(loss, (tc_tensor *[]){a, b, h}, 3, g), TC_OK, "%s", tc_last_error());
  double *ga = ag_host(g[0]), *gb = ag_host(g[1]), *gh = ag_host(g[2]);
  expect_values(ga, (double[]){8, 16}, 2, "a");
  expect_values(gb, (double[]){0, 0}, 2, "b (unused: zeros)");
  expect_values(gh, (double[]){4, 8}, 2, "h (an intermediate)");
  free(ga);
  free(gb);
  free(gh);
}

Test(autograd, detach_and_grad_mode) {
  tc_tensor *w = f64(1, (int64_t[]){2}, (double[]){1, 2});
  tc_set_requires_grad(w, true);
  cr_assert(tc_requires_grad(tc_add_scalar(w, 1.0)));
  cr_assert_not(tc_requires_grad(tc_detach(w)));
  bool was = tc_set_grad_enabled(false);
  cr_assert(was);
  cr_assert_not(tc_requires_grad(tc_add_scalar(w, 1.0)), "nothing recorded with grad mode off");
  tc_set_grad_enabled(true);
  /* d/dw of w * detach(w) is detach(w) */
  double *g = grad_of_sum(tc_mul(w, tc_detach(w)), w);
  expect_values(g, (double[]){1, 2}, 2, "detached factor");
  free(g);
  cr_assert_not(tc_requires_grad(tc_argmax(w, 0, false)), "integer results carry no gradient");
  cr_assert_not(tc_requires_grad(tc_gt(w, w)), "bool results carry no gradient");
  /* through a conversion to f32 and back: the gradient arrives in w's dtype */
  g = grad_of_sum(tc_mul_scalar(tc_to_dtype(w, TC_F32), 3.0), w);
  expect_values(g, (double[]){3, 3}, 2, "to_dtype");
  free(g);
}

/* ---------------------------------------------------------------- errors */
#define EXPECT_STATUS_HAS(call, ...)                                                                                   \
  do {                                                                                                                 \
    tc_error_clear();                                                                                                  \
    cr_assert_neq((call), TC_OK, "%s should fail", #call);                                                             \
    cr_assert_eq(tc_last_status(), TC_ERR_INVALID_ARGUMENT);                                                           \
    const char *frags_[] = {__VA_ARGS__};                                                                              \
    for (size_t i_ = 0; i_ < sizeof frags_ / sizeof *frags_; i_++)                                                     \
      cr_assert(strstr(tc_last_error(), frags_[i_]), "'%s' lacks '%s'", tc_last_error(), frags_[i_]);                  \
  } while (0)

Test(autograd, errors) {
  tc_tensor *w = f64(2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
  tc_tensor *c = f64(1, (int64_t[]){3}, (double[]){1, 2, 3});
  tc_tensor *idx = i64(1, (int64_t[]){2}, (int64_t[]){0, 1});
  tc_tensor *g[1];
  EXPECT_STATUS_HAS(tc_set_requires_grad(idx, true), "tc_set_requires_grad", "floating", "i64", "2");
  EXPECT_STATUS_HAS(tc_grad(tc_sum(w, 0, NULL, false), &w, 1, g), "tc_grad", "does not require grad");
  tc_set_requires_grad(w, true);
  EXPECT_STATUS_HAS(tc_grad(tc_mul(w, w), &w, 1, g), "tc_grad", "6 elements", "2x3", "grad_output");
  EXPECT_STATUS_HAS(tc_backward(tc_mul(w, w)), "tc_backward", "6 elements", "2x3");
  EXPECT_STATUS_HAS(tc_grad(tc_sum(w, 0, NULL, false), &c, 1, g), "tc_grad", "wrt[0]", "does not require grad",
                    "f64 3");
  EXPECT_STATUS_HAS(tc_grad_with(tc_mul(w, w), c, &w, 1, g), "tc_grad_with", "grad_output", "output: f64 2x3",
                    "grad_output: f64 3");
  EXPECT_STATUS_HAS(tc_set_requires_grad(tc_mul(w, w), false), "tc_set_requires_grad", "not a leaf", "tc_detach");
  EXPECT_STATUS_HAS(tc_grad(NULL, &w, 1, g), "tc_grad", "NULL");
  EXPECT_STATUS_HAS(tc_backward(tc_argmax(w, 1, false)), "tc_backward", "floating", "i64");
  EXPECT_STATUS_HAS(tc_grad(tc_sum(w, 0, NULL, false), &w, -1, g), "tc_grad", "n = -1");
  /* A NULL loss from an earlier failure keeps that failure's message. */
  tc_error_clear();
  tc_tensor *bad = tc_add(w, f64(1, (int64_t[]){4}, (double[]){1, 2, 3, 4}));
  cr_assert_null(bad);
  cr_assert_neq(tc_backward(bad), TC_OK);
  cr_assert(strstr(tc_last_error(), "tc_add"), "%s", tc_last_error());
}
