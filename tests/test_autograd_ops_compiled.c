/* test_autograd_ops_compiled.c — every differentiable op's gradient, compiled against eager:
 * a function that computes the op, a loss sum(sin(y)) and tc_grad with respect to its inputs
 * is compiled on every backend available here (debug-eager, inductor-cpu, vulkan), and its
 * gradients must equal the same function's eager ones (f32). The rules are checked against
 * finite differences in test_autograd.c; this checks that the traced backward prims are
 * fused, scheduled and generated correctly on each backend. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc/tc.h"
#include "test_support.h"

TC_SCOPED_TEST_SUITE(autograd_ops_compiled);

typedef tc_tensor *(*op_fn)(tc_tensor *const *x);

typedef struct op_case {
  const char *name;
  op_fn f;
  int n;               /* inputs */
  int rank[3];         /* per input */
  int64_t sizes[3][4]; /* per input */
  float lo, hi;        /* value range */
} op_case;

static tc_tensor *index_of(int rank, const int64_t *sizes, const int64_t *v) {
  return tc_from_host(v, TC_I64, rank, sizes);
}

static tc_tensor *f_exp(tc_tensor *const *x) {
  return tc_exp(x[0]);
}
static tc_tensor *f_log(tc_tensor *const *x) {
  return tc_log(x[0]);
}
static tc_tensor *f_sqrt(tc_tensor *const *x) {
  return tc_mul(tc_sqrt(x[0]), tc_rsqrt(x[0]));
}
static tc_tensor *f_trig(tc_tensor *const *x) {
  return tc_add(tc_sin(x[0]), tc_mul(tc_cos(x[0]), tc_tanh(x[0])));
}
static tc_tensor *f_act(tc_tensor *const *x) {
  return tc_add(tc_add(tc_gelu(x[0]), tc_gelu_tanh(x[0])), tc_add(tc_silu(x[0]), tc_sigmoid(x[0])));
}
static tc_tensor *f_relu_abs(tc_tensor *const *x) {
  return tc_add(tc_relu(x[0]), tc_mul(tc_abs(x[0]), tc_erf(x[0])));
}
static tc_tensor *f_recip(tc_tensor *const *x) {
  return tc_add(tc_reciprocal(x[0]), tc_pow_scalar(x[0], 1.5));
}
static tc_tensor *f_arith(tc_tensor *const *x) {
  return tc_div(tc_sub(tc_mul(x[0], x[1]), x[1]), tc_add_scalar(tc_mul(x[1], x[1]), 1.0));
}
static tc_tensor *f_pow(tc_tensor *const *x) {
  return tc_pow(x[0], x[1]);
}
static tc_tensor *f_minmax(tc_tensor *const *x) {
  return tc_add(tc_maximum(x[0], x[1]), tc_minimum(x[0], x[1]));
}
static tc_tensor *f_where(tc_tensor *const *x) {
  return tc_where(tc_gt(x[0], x[1]), tc_exp(x[0]), x[1]);
}
static tc_tensor *f_sums(tc_tensor *const *x) {
  return tc_add(tc_sum(x[0], 1, (int[]){1}, true), tc_mean(x[0], 1, (int[]){0}, true));
}
static tc_tensor *f_maxmin(tc_tensor *const *x) {
  return tc_add(tc_max(x[0], 1, (int[]){1}, false), tc_min(x[0], 1, (int[]){1}, false));
}
static tc_tensor *f_prod_var(tc_tensor *const *x) {
  return tc_add(tc_prod(x[0], 1, (int[]){0}, false), tc_var(x[0], 1, (int[]){0}, 1, false));
}
static tc_tensor *f_views(tc_tensor *const *x) {
  tc_tensor *t = tc_transpose(tc_reshape(x[0], 3, (int64_t[]){2, 3, 4}), 0, 2);
  return tc_mul(tc_flatten(t, 0, -1), tc_flatten(tc_flip(t, 1, (int[]){1}), 0, -1));
}
static tc_tensor *f_slice_pad(tc_tensor *const *x) {
  return tc_pad(tc_slice(x[0], 1, 1, 8, 3), 4, (int64_t[]){2, 1, 0, 1}, 0.5);
}
static tc_tensor *f_expand_cat(tc_tensor *const *x) {
  tc_tensor *e = tc_expand(x[1], 2, (int64_t[]){3, -1});
  return tc_cat(2, (tc_tensor *[]){x[0], e}, 1);
}
static tc_tensor *f_gather(tc_tensor *const *x) {
  return tc_gather(x[0], 1, index_of(2, (int64_t[]){3, 2}, (int64_t[]){0, 3, 3, 3, 1, 2}));
}
static tc_tensor *f_embedding(tc_tensor *const *x) {
  return tc_embedding(x[0], index_of(1, (int64_t[]){5}, (int64_t[]){1, 1, 3, 0, 1}));
}
static tc_tensor *f_scatter(tc_tensor *const *x) {
  return tc_scatter_add(x[0], 0, index_of(2, (int64_t[]){2, 4}, (int64_t[]){0, 2, 0, 1, 2, 2, 1, 0}), x[1]);
}
static tc_tensor *f_matvec(tc_tensor *const *x) {
  return tc_matmul(x[0], x[1]);
}
static tc_tensor *f_matmul_bcast(tc_tensor *const *x) {
  return tc_matmul(x[0], x[1]);
}
static tc_tensor *f_softmax(tc_tensor *const *x) {
  return tc_add(tc_softmax(x[0], 1), tc_log_softmax(x[0], 0));
}
static tc_tensor *f_norms(tc_tensor *const *x) {
  return tc_add(tc_layer_norm(x[0], 1, x[1], x[2], 1e-5), tc_rms_norm(x[0], 1, x[1], 1e-6));
}
static tc_tensor *f_xent(tc_tensor *const *x) {
  return tc_cross_entropy(x[0], index_of(1, (int64_t[]){4}, (int64_t[]){2, -100, 0, 4}));
}
static tc_tensor *f_dropout(tc_tensor *const *x) {
  return tc_dropout(x[0], 0.3, 11, true);
}

#define S1(a)                                                                                                          \
  { a }
#define SH(...)                                                                                                        \
  { __VA_ARGS__ }
static const op_case cases[] = {
    {"exp", f_exp, 1, {2}, {SH(3, 4)}, -2, 2},
    {"log", f_log, 1, {2}, {SH(3, 4)}, 0.3f, 3},
    {"sqrt, rsqrt", f_sqrt, 1, {2}, {SH(3, 4)}, 0.3f, 3},
    {"sin, cos, tanh", f_trig, 1, {2}, {SH(3, 4)}, -2, 2},
    {"gelu, silu, sigmoid", f_act, 1, {2}, {SH(3, 4)}, -3, 3},
    {"relu, abs, erf", f_relu_abs, 1, {2}, {SH(3, 4)}, -2, 2},
    {"reciprocal, pow_scalar", f_recip, 1, {2}, {SH(3, 4)}, 0.5f, 2},
    {"mul, sub, div, broadcast", f_arith, 2, {2, 1}, {SH(3, 4), SH(4)}, -2, 2},
    {"pow", f_pow, 2, {2, 2}, {SH(3, 4), SH(3, 4)}, 0.5f, 2},
    {"maximum, minimum", f_minmax, 2, {2, 2}, {SH(3, 4), SH(1, 4)}, -2, 2},
    {"where", f_where, 2, {2, 2}, {SH(3, 4), SH(3, 4)}, -1, 1},
    {"sum, mean", f_sums, 1, {2}, {SH(3, 4)}, -2, 2},
    {"max, min", f_maxmin, 1, {2}, {SH(3, 5)}, -2, 2},
    {"prod, var", f_prod_var, 1, {2}, {SH(3, 4)}, 0.5f, 1.5f},
    {"reshape, transpose, flip", f_views, 1, {2}, {SH(4, 6)}, -2, 2},
    {"slice step 3, pad", f_slice_pad, 1, {2}, {SH(3, 8)}, -2, 2},
    {"expand, cat", f_expand_cat, 2, {2, 2}, {SH(3, 2), SH(1, 3)}, -2, 2},
    {"gather", f_gather, 1, {2}, {SH(3, 4)}, -2, 2},
    {"embedding (repeated indices)", f_embedding, 1, {2}, {SH(4, 3)}, -2, 2},
    {"scatter_add", f_scatter, 2, {2, 2}, {SH(3, 4), SH(2, 4)}, -2, 2},
    {"matmul vector", f_matvec, 2, {2, 1}, {SH(3, 4), SH(4)}, -1, 1},
    {"matmul broadcast batch", f_matmul_bcast, 2, {3, 2}, {SH(2, 3, 4), SH(4, 5)}, -1, 1},
    {"softmax, log_softmax", f_softmax, 1, {2}, {SH(3, 5)}, -2, 2},
    {"layer_norm, rms_norm", f_norms, 3, {2, 1, 1}, {SH(3, 6), SH(6), SH(6)}, -1.5f, 1.5f},
    {"cross_entropy", f_xent, 1, {2}, {SH(4, 5)}, -2, 2},
    {"dropout", f_dropout, 1, {2}, {SH(4, 6)}, -2, 2},
};
#define N_CASES (int)(sizeof cases / sizeof *cases)

/* ---------------------------------------------------------------- the compiled functions */
static const op_case *current;

/* The loss sum(sin(f(x))) and its gradients with respect to every input, flattened. */
static tc_tensor *grads_of(int n, tc_tensor *const *x) {
  tc_scope *s = tc_scope_open();
  for (int i = 0; i < n; i++)
    tc_set_requires_grad(x[i], true);
  tc_tensor *loss = tc_sum(tc_sin(current->f(x)), 0, NULL, false), *g[3] = {0}, *y = NULL;
  if (tc_grad(loss, x, n, g) == TC_OK) {
    tc_tensor *parts[4] = {tc_reshape(loss, 1, (int64_t[]){1})};
    for (int i = 0; i < n; i++)
      parts[1 + i] = tc_flatten(g[i], 0, -1);
    y = tc_cat(1 + n, parts, 0);
  }
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}
static tc_tensor *grads1(tc_tensor *a) {
  return grads_of(1, (tc_tensor *[]){a});
}
static tc_tensor *grads2(tc_tensor *a, tc_tensor *b) {
  return grads_of(2, (tc_tensor *[]){a, b});
}
static tc_tensor *grads3(tc_tensor *a, tc_tensor *b, tc_tensor *c) {
  return grads_of(3, (tc_tensor *[]){a, b, c});
}
static const tc_model_fn grads_fn[4] = {NULL, TC_FN(grads1), TC_FN(grads2), TC_FN(grads3)};

static tc_tensor *input(const op_case *c, int i, uint64_t seed) {
  int64_t n = 1;
  for (int d = 0; d < c->rank[i]; d++)
    n *= c->sizes[i][d];
  float *v = malloc(sizeof *v * (size_t)n);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
  for (int64_t k = 0; k < n; k++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    v[k] = c->lo + (c->hi - c->lo) * (float)(s >> 40) / (float)(1 << 24);
  }
  tc_tensor *t = tc_from_f32(v, c->rank[i], c->sizes[i]);
  free(v);
  return t;
}

static void check_backend(const char *backend) {
  if (!test_backend_available(backend)) cr_skip_test("%s is not available here", backend);
  for (int k = 0; k < N_CASES; k++) {
    const op_case *c = &cases[k];
    current = c;
    tc_scope *s = tc_scope_open();
    tc_tensor *x[3], *xe[3];
    for (int i = 0; i < c->n; i++)
      x[i] = input(c, i, (uint64_t)(k * 3 + i + 1)), xe[i] = input(c, i, (uint64_t)(k * 3 + i + 1));
    tc_tensor *want = grads_of(c->n, xe);
    cr_assert_not_null(want, "%s eager: %s", c->name, tc_last_error());
    tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .name = c->name, .fullgraph = true};
    tc_compiled *cc = tc_compile(grads_fn[c->n], c->n, &o);
    cr_assert_not_null(cc, "%s", tc_last_error());
    tc_tensor *got = tc_call(cc, x);
    cr_assert_not_null(got, "%s on %s: %s", c->name, backend, tc_last_error());
    int64_t n = tc_numel(want);
    cr_assert_eq(tc_numel(got), n, "%s on %s: sizes", c->name, backend);
    float *a = malloc(sizeof *a * (size_t)n), *b = malloc(sizeof *b * (size_t)n);
    cr_assert_eq(tc_to_host(got, a, sizeof *a * (size_t)n), TC_OK, "%s", tc_last_error());
    cr_assert_eq(tc_to_host(want, b, sizeof *b * (size_t)n), TC_OK, "%s", tc_last_error());
    for (int64_t i = 0; i < n; i++)
      cr_assert(fabsf(a[i] - b[i]) <= 2e-4f * (1 + fabsf(b[i])),
                "%s on %s: element %lld (0 is the loss): compiled %g, eager %g", c->name, backend, (long long)i, a[i],
                b[i]);
    free(a);
    free(b);
    tc_compiled_free(cc);
    tc_scope_close(s);
  }
}

Test(autograd_ops_compiled, debug_eager) {
  check_backend("debug-eager");
}
Test(autograd_ops_compiled, inductor_cpu) {
  check_backend("inductor-cpu");
}
Test(autograd_ops_compiled, vulkan) {
  check_backend("vulkan");
}
