/* test_autograd_compiled.c — gradients inside compiled functions: a training step that calls
 * tc_grad itself is captured like any other function (the backward prims are traced ops), and
 * its gradients equal the eager ones on every backend available here (debug-eager,
 * inductor-cpu, vulkan), with static and dynamic batch sizes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc/tc.h"
#include "tc_models.h"
#include "test_support.h"

TC_SCOPED_TEST_SUITE(autograd_compiled);

static tc_tensor *values(uint64_t seed, float lo, float hi, int rank, const int64_t *sizes) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= sizes[i];
  float *v = malloc(sizeof *v * (size_t)n);
  uint64_t s = seed * 2654435761ULL + 1;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    v[i] = lo + (hi - lo) * (float)(s >> 40) / (float)(1 << 24);
  }
  tc_tensor *t = tc_from_f32(v, rank, sizes);
  free(v);
  return t;
}

static tc_tensor *targets(int64_t n, int64_t classes) {
  int64_t *v = malloc(sizeof *v * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    v[i] = (i * 5 + 1) % classes;
  tc_tensor *t = tc_from_host(v, TC_I64, 1, &n);
  free(v);
  return t;
}

static float *host_f32(tc_tensor *t) {
  int64_t n = tc_numel(t);
  float *v = malloc(sizeof *v * (size_t)n);
  cr_assert_eq(tc_to_host(t, v, sizeof *v * (size_t)n), TC_OK, "%s", tc_last_error());
  return v;
}

static void assert_close(const char *what, tc_tensor *got, tc_tensor *want, double tol) {
  cr_assert_not_null(got, "%s: %s", what, tc_last_error());
  cr_assert_eq(tc_numel(got), tc_numel(want), "%s: sizes", what);
  float *a = host_f32(got), *b = host_f32(want);
  for (int64_t i = 0; i < tc_numel(got); i++)
    cr_assert(fabs(a[i] - b[i]) <= tol * (1 + fabs(b[i])), "%s: element %lld: compiled %g, eager %g", what,
              (long long)i, a[i], b[i]);
  free(a);
  free(b);
}

/* ---------------------------------------------------------------- the functions */
/* One MLP training step's loss and gradients, flattened into one tensor: [loss, dw1, db1, dw2]. */
static tc_tensor *mlp_grads(tc_tensor *x, tc_tensor *target, tc_tensor *w1, tc_tensor *b1, tc_tensor *w2) {
  tc_scope *s = tc_scope_open();
  tc_tensor *params[3] = {w1, b1, w2}, *g[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++)
    tc_set_requires_grad(params[i], true);
  tc_tensor *h = tc_gelu(tc_linear(x, w1, b1));
  tc_tensor *logits = tc_linear(tc_layer_norm(h, 1, NULL, NULL, 1e-5), w2, NULL);
  tc_tensor *loss = tc_cross_entropy(logits, target);
  tc_tensor *y = NULL;
  if (tc_grad(loss, params, 3, g) == TC_OK) {
    tc_tensor *parts[4] = {tc_reshape(loss, 1, (int64_t[]){1}), tc_flatten(g[0], 0, -1), g[1], tc_flatten(g[2], 0, -1)};
    y = tc_cat(4, parts, 0);
  }
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

/* Gradients of a loss with respect to a parameter that arrives requiring grad. */
static tc_tensor *param_grad(tc_tensor *x, tc_tensor *w) {
  tc_scope *s = tc_scope_open();
  tc_tensor *t = tc_tanh(tc_matmul(x, w));
  tc_tensor *loss = tc_mean(tc_mul(t, t), 0, NULL, false);
  tc_tensor *g = NULL;
  tc_tensor *y = tc_grad(loss, &w, 1, &g) == TC_OK ? g : NULL;
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

/* A broadcast, a slice with step, a max over rows, a gather and a concatenation. */
static tc_tensor *movement_grads(tc_tensor *x, tc_tensor *w) {
  tc_scope *s = tc_scope_open();
  tc_tensor *xw = tc_mul(x, w);
  tc_tensor *a = tc_slice(xw, 1, 1, 8, 3);
  tc_tensor *m = tc_max(xw, 1, (int[]){1}, true);
  int64_t iv[8] = {0, 7, 3, 3, 5, 1, 2, 6};
  tc_tensor *g = tc_gather(xw, 1, tc_from_host(iv, TC_I64, 2, (int64_t[]){4, 2}));
  tc_tensor *c = tc_cat(3, (tc_tensor *[]){a, m, g}, 1);
  tc_tensor *loss = tc_sum(tc_mul(c, c), 0, NULL, false);
  tc_tensor *gr[2] = {NULL, NULL}, *y = NULL;
  if (tc_grad(loss, (tc_tensor *[]){x, w}, 2, gr) == TC_OK)
    y = tc_cat(2, (tc_tensor *[]){tc_flatten(gr[0], 0, -1), gr[1]}, 0);
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

/* ---------------------------------------------------------------- backends */
static const char *const backends[] = {"debug-eager", "inductor-cpu", "vulkan"};
#define N_BACKENDS (int)(sizeof backends / sizeof *backends)

static tc_compiled *compile_on(tc_model_fn fn, int n, const char *backend, const char *name) {
  tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .name = name, .fullgraph = true};
  tc_compiled *c = tc_compile(fn, n, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  return c;
}

static tc_tensor *mlp_eager(tc_tensor *const *in) {
  return mlp_grads(in[0], in[1], in[2], in[3], in[4]);
}

Test(autograd_compiled, mlp_step_matches_eager) {
  int ran = 0;
  for (int b = 0; b < N_BACKENDS; b++) {
    if (!test_backend_available(backends[b])) continue;
    ran++;
    tc_compiled *c = compile_on(TC_FN(mlp_grads), 5, backends[b], "mlp_grads");
    tc_tensor *w1 = values(1, -0.5f, 0.5f, 2, (int64_t[]){5, 6}), *b1 = values(2, -0.1f, 0.1f, 1, (int64_t[]){5});
    tc_tensor *w2 = values(3, -0.5f, 0.5f, 2, (int64_t[]){3, 5});
    /* two batch sizes: the second call recompiles with the batch dim symbolic */
    for (int64_t n = 8; n <= 12; n += 4) {
      tc_tensor *in[5] = {values(4 + (uint64_t)n, -1, 1, 2, (int64_t[]){n, 6}), targets(n, 3), w1, b1, w2};
      tc_tensor *got = tc_call(c, in);
      char what[64];
      snprintf(what, sizeof what, "%s, batch %lld", backends[b], (long long)n);
      assert_close(what, got, mlp_eager(in), 2e-4);
    }
    tc_compile_stats st = {.struct_size = sizeof st};
    cr_assert_eq(tc_compiled_stats(c, &st), TC_OK);
    cr_assert_eq(st.n_graph_breaks, 0, "%s: one graph, forward and backward", backends[b]);
    tc_compiled_free(c);
  }
  cr_assert_geq(ran, 2, "debug-eager and inductor-cpu are always built");
}

Test(autograd_compiled, parameters_requiring_grad_from_the_caller) {
  for (int b = 0; b < N_BACKENDS; b++) {
    if (!test_backend_available(backends[b])) continue;
    tc_compiled *c = compile_on(TC_FN(param_grad), 2, backends[b], "param_grad");
    tc_tensor *x = values(1, -1, 1, 2, (int64_t[]){4, 3}), *w = values(2, -1, 1, 2, (int64_t[]){3, 2});
    cr_assert_eq(tc_set_requires_grad(w, true), TC_OK);
    tc_tensor *got = tc_call(c, (tc_tensor *[]){x, w});
    assert_close(backends[b], got, param_grad(x, w), 2e-4);
    /* The mark is guarded: without it the function is traced again, and tc_grad says why it fails. */
    tc_tensor *w_plain = values(2, -1, 1, 2, (int64_t[]){3, 2});
    tc_error_clear();
    cr_assert_null(tc_call(c, (tc_tensor *[]){x, w_plain}));
    cr_assert(strstr(tc_last_error(), "tc_grad") && strstr(tc_last_error(), "does not require grad"), "%s",
              tc_last_error());
    tc_compiled_free(c);
  }
}

Test(autograd_compiled, movement_matches_eager) {
  for (int b = 0; b < N_BACKENDS; b++) {
    if (!test_backend_available(backends[b])) continue;
    tc_compiled *c = compile_on(TC_FN(movement_grads), 2, backends[b], "movement_grads");
    tc_tensor *x = values(5, -1, 1, 2, (int64_t[]){4, 8}), *w = values(6, -1, 1, 1, (int64_t[]){8});
    tc_set_requires_grad(x, true);
    tc_set_requires_grad(w, true);
    tc_tensor *got = tc_call(c, (tc_tensor *[]){x, w});
    assert_close(backends[b], got, movement_grads(x, w), 2e-4);
    tc_compiled_free(c);
  }
}

/* ---------------------------------------------------------------- the joint graph (aot.c) */
/* A model that does not differentiate anything itself: its inputs require grad. */
static tc_tensor *mlp_loss(tc_tensor *x, tc_tensor *target, tc_tensor *w1, tc_tensor *b1, tc_tensor *w2) {
  tc_scope *s = tc_scope_open();
  tc_tensor *h = tc_tanh(tc_linear(x, w1, b1));
  tc_tensor *y = tc_cross_entropy(tc_linear(tc_layer_norm(h, 1, NULL, NULL, 1e-5), w2, NULL), target);
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

static tc_tensor *features(tc_tensor *x, tc_tensor *w) {
  tc_scope *s = tc_scope_open();
  tc_tensor *y = tc_softmax(tc_matmul(x, w), -1);
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

/* dL/dparams of a compiled call whose parameters require grad, by tc_backward, against the
 * same function called eagerly. */
static void backward_matches_eager(const char *backend, int64_t n, tc_compiled *c) {
  tc_tensor *x = values(11 + (uint64_t)n, -1, 1, 2, (int64_t[]){n, 6}), *t = targets(n, 3);
  tc_tensor *p[3] = {values(1, -0.5f, 0.5f, 2, (int64_t[]){5, 6}), values(2, -0.1f, 0.1f, 1, (int64_t[]){5}),
                     values(3, -0.5f, 0.5f, 2, (int64_t[]){3, 5})};
  tc_tensor *q[3];
  for (int i = 0; i < 3; i++) {
    q[i] = tc_mul_scalar(p[i], 1.0); /* separate leaves with the same values, for the eager run */
    cr_assert_eq(tc_set_requires_grad(p[i], true), TC_OK);
    cr_assert_eq(tc_set_requires_grad(q[i], true), TC_OK, "%s", tc_last_error());
  }
  tc_tensor *loss = tc_call(c, (tc_tensor *[]){x, t, p[0], p[1], p[2]});
  cr_assert_not_null(loss, "%s: %s", backend, tc_last_error());
  cr_assert(tc_requires_grad(loss), "%s: the compiled result carries a gradient", backend);
  cr_assert_eq(tc_backward(loss), TC_OK, "%s: %s", backend, tc_last_error());
  tc_tensor *ref = mlp_loss(x, t, q[0], q[1], q[2]);
  cr_assert_eq(tc_backward(ref), TC_OK, "%s", tc_last_error());
  char what[96];
  snprintf(what, sizeof what, "%s, batch %lld: loss", backend, (long long)n);
  assert_close(what, loss, ref, 2e-4);
  for (int i = 0; i < 3; i++) {
    snprintf(what, sizeof what, "%s, batch %lld: grad of parameter %d", backend, (long long)n, i);
    assert_close(what, tc_grad_of(p[i]), tc_grad_of(q[i]), 2e-4);
  }
}

Test(autograd_compiled, backward_through_a_compiled_call) {
  for (int b = 0; b < N_BACKENDS; b++) {
    if (!test_backend_available(backends[b])) continue;
    tc_compiled *c = compile_on(TC_FN(mlp_loss), 5, backends[b], "mlp_loss");
    backward_matches_eager(backends[b], 8, c);
    backward_matches_eager(backends[b], 12, c); /* a recompile, the batch dim symbolic */
    backward_matches_eager(backends[b], 16, c); /* the symbolic entry, run without tracing */
    tc_compile_stats st = {.struct_size = sizeof st};
    cr_assert_eq(tc_compiled_stats(c, &st), TC_OK);
    cr_assert_eq(st.n_entries, 2, "%s: batch 16 reuses the symbolic entry", backends[b]);
    tc_compiled_free(c);
  }
}

/* A compiled call in the middle of eager code: the gradient flows through it to an eager leaf,
 * and tc_grad works on it as on any op; the result outlives tc_compiled_free. */
Test(autograd_compiled, compiled_call_inside_eager_code) {
  tc_compile_options o = {.struct_size = sizeof o, .backend = "debug-eager", .name = "features"};
  tc_compiled *c = tc_compile(TC_FN(features), 2, &o);
  tc_tensor *a = values(1, -1, 1, 2, (int64_t[]){4, 3}), *w = values(2, -1, 1, 2, (int64_t[]){3, 5});
  tc_set_requires_grad(a, true);
  tc_set_requires_grad(w, true);
  tc_tensor *x = tc_mul_scalar(a, 2.0); /* not a leaf: still guarded as needing a gradient */
  tc_tensor *y = tc_call(c, (tc_tensor *[]){x, w});
  cr_assert_not_null(y, "%s", tc_last_error());
  tc_compiled_free(c);
  tc_tensor *loss = tc_sum(tc_mul(y, y), 0, NULL, false);
  tc_tensor *g[2];
  cr_assert_eq(tc_grad(loss, (tc_tensor *[]){a, w}, 2, g), TC_OK, "%s", tc_last_error());
  tc_tensor *ref_y = features(tc_mul_scalar(a, 2.0), w), *r[2];
  cr_assert_eq(tc_grad(tc_sum(tc_mul(ref_y, ref_y), 0, NULL, false), (tc_tensor *[]){a, w}, 2, r), TC_OK);
  assert_close("d/da", g[0], r[0], 1e-5);
  assert_close("d/dw", g[1], r[1], 1e-5);
}

/* TC_LOGS=aot prints the joint graph and the partition: the forward saves fewer bytes than
 * keeping every intermediate (softmax(x @ w): the matmul's result and the row max and sum). */
Test(autograd_compiled, aot_log) {
  setenv("TC_LOGS", "aot", 1);
  tc_compile_options o = {.struct_size = sizeof o, .backend = "debug-eager", .name = "features"};
  tc_compiled *c = tc_compile(TC_FN(features), 2, &o);
  tc_tensor *x = values(1, -1, 1, 2, (int64_t[]){4, 3}), *w = values(2, -1, 1, 2, (int64_t[]){3, 5});
  tc_set_requires_grad(w, true);
  stderr_capture cap = stderr_begin();
  tc_tensor *y = tc_call(c, (tc_tensor *[]){x, w});
  char *log = stderr_end(cap);
  cr_assert_not_null(y, "%s", tc_last_error());
  cr_assert(strstr(log, "joint graph of features"), "log: %s", log);
  const char *line = strstr(log, "partition of features: ");
  cr_assert(line, "log: %s", log);
  long long saved = -1, all = -1;
  int n_saved = -1, n_all = -1;
  cr_assert_eq(sscanf(line,
                      "partition of features: the forward saves %lld bytes in %d values for the backward (keeping "
                      "every intermediate: %lld bytes in %d values)",
                      &saved, &n_saved, &all, &n_all),
               4, "%s", line);
  cr_assert_eq(n_saved, 3, "%s", line);
  cr_assert_eq(saved, (4 * 5 + 4 + 4) * 4, "the 4x5 product, the 4 row maxima and the 4 row sums: %s", line);
  cr_assert_lt(saved, all, "%s", line);
  free(log);
  tc_compiled_free(c);
}

static tc_tensor *two_products(tc_tensor *a, tc_tensor *b, tc_tensor *w1, tc_tensor *w2) {
  tc_scope *s = tc_scope_open();
  tc_tensor *y = tc_sin(tc_add(tc_matmul(a, w1), tc_matmul(b, w2)));
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

/* The minimum cut: sin's rule reads the sum of two products, so saving the sum (4x5) beats
 * saving both products, which a rule saving every expensive value read would do; the
 * gradients are eager's. */
Test(autograd_compiled, min_cut_saves_the_sum_not_both_products) {
  setenv("TC_LOGS", "aot", 1);
  tc_compiled *c = compile_on(TC_FN(two_products), 4, "inductor-cpu", "two_products");
  tc_tensor *a = values(1, -1, 1, 2, (int64_t[]){4, 3}), *b = values(2, -1, 1, 2, (int64_t[]){4, 6});
  tc_tensor *w1 = values(3, -1, 1, 2, (int64_t[]){3, 5}), *w2 = values(4, -1, 1, 2, (int64_t[]){6, 5});
  tc_set_requires_grad(w1, true);
  tc_set_requires_grad(w2, true);
  stderr_capture cap = stderr_begin();
  tc_tensor *y = tc_call(c, (tc_tensor *[]){a, b, w1, w2});
  char *log = stderr_end(cap);
  cr_assert_not_null(y, "%s", tc_last_error());
  const char *line = strstr(log, "partition of two_products: ");
  cr_assert(line, "log: %s", log);
  long long saved = -1;
  int n_saved = -1;
  cr_assert_eq(sscanf(line, "partition of two_products: the forward saves %lld bytes in %d values", &saved, &n_saved),
               2, "%s", line);
  cr_assert_eq(n_saved, 1, "%s", line);
  cr_assert_eq(saved, 4 * 5 * 4, "%s", line);
  free(log);
  tc_tensor *g[2], *r[2];
  cr_assert_eq(tc_grad(tc_sum(y, 0, NULL, false), (tc_tensor *[]){w1, w2}, 2, g), TC_OK, "%s", tc_last_error());
  tc_tensor *ref = two_products(a, b, w1, w2);
  cr_assert_eq(tc_grad(tc_sum(ref, 0, NULL, false), (tc_tensor *[]){w1, w2}, 2, r), TC_OK, "%s", tc_last_error());
  assert_close("d/dw1", g[0], r[0], 1e-5);
  assert_close("d/dw2", g[1], r[1], 1e-5);
  tc_compiled_free(c);
}

/* The bundled mlp (BENCHMARKS.md's, at its test size) with its weights requiring grad: the
 * partitioned forward saves fewer bytes than keeping every intermediate, and the backward's
 * gradients equal eager ones. */
Test(autograd_compiled, bundled_mlp_partition) {
  setenv("TC_LOGS", "aot", 1);
  const tc_model *m = tc_model_find("mlp");
  cr_assert_not_null(m);
  tc_tensor *in[8] = {0};
  cr_assert_eq(m->make_inputs(TC_SIZE_TEST, 3, in), TC_OK, "%s", tc_last_error());
  for (int i = 1; i < m->n_inputs; i++)
    cr_assert_eq(tc_set_requires_grad(in[i], true), TC_OK, "%s", tc_last_error());
  tc_compiled *c = compile_on(m->fn, m->n_inputs, "inductor-cpu", "mlp");
  stderr_capture cap = stderr_begin();
  tc_tensor *y = tc_call(c, in);
  char *log = stderr_end(cap);
  cr_assert_not_null(y, "%s", tc_last_error());
  const char *line = strstr(log, "partition of mlp: ");
  cr_assert(line, "log: %s", log);
  long long saved = -1, all = -1;
  int n_saved = -1, n_all = -1;
  cr_assert_eq(sscanf(line,
                      "partition of mlp: the forward saves %lld bytes in %d values for the backward (keeping "
                      "every intermediate: %lld bytes in %d values)",
                      &saved, &n_saved, &all, &n_all),
               4, "%s", line);
  cr_assert_lt(saved, all, "%s", line);
  cr_log_info("%.*s", (int)strcspn(line, "\n"), line);
  free(log);
  /* d(sum y)/d(first weight), compiled backward against eager */
  tc_tensor *g = NULL, *r = NULL;
  cr_assert_eq(tc_grad(tc_sum(y, 0, NULL, false), &in[1], 1, &g), TC_OK, "%s", tc_last_error());
  tc_tensor *ref = ((tc_tensor * (*)(tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *))
                        m->fn)(in[0], in[1], in[2], in[3], in[4]);
  cr_assert_eq(tc_grad(tc_sum(ref, 0, NULL, false), &in[1], 1, &r), TC_OK, "%s", tc_last_error());
  assert_close("mlp dw1", g, r, 1e-3);
  tc_compiled_free(c);
}

/* With grad mode off, a call of an entry that has a backward records nothing. */
Test(autograd_compiled, no_tape_with_grad_mode_off) {
  tc_compile_options o = {.struct_size = sizeof o, .backend = "debug-eager", .name = "features"};
  tc_compiled *c = tc_compile(TC_FN(features), 2, &o);
  tc_tensor *x = values(1, -1, 1, 2, (int64_t[]){4, 3}), *w = values(2, -1, 1, 2, (int64_t[]){3, 5});
  tc_set_requires_grad(w, true);
  tc_tensor *y = tc_call(c, (tc_tensor *[]){x, w});
  cr_assert(tc_requires_grad(y));
  bool was = tc_set_grad_enabled(false);
  tc_tensor *z = tc_call(c, (tc_tensor *[]){x, w});
  tc_set_grad_enabled(was);
  cr_assert_not_null(z, "%s", tc_last_error());
  cr_assert_not(tc_requires_grad(z));
  assert_close("same values", z, y, 0);
  tc_compiled_free(c);
}
