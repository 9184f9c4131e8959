/* test_optim.c — tc_sgd_step and tc_adam_step against torch.optim's SGD, Adam and AdamW (four
 * steps with a changing learning rate; figures in optim_expected.h, made by
 * gen_optim_expected.py), eagerly and compiled on every backend available here, and tc_assign:
 * a compiled step updates its caller's tensors, in place in the memory plan on inductor-cpu. */
#include <criterion/criterion.h>
#include <math.h>

#include "optim_expected.h"
#include "tc/tc.h"
#include "test_support.h"

TC_SCOPED_TEST_SUITE(optim);

typedef enum optim_kind { SGD_MOMENTUM, SGD_NESTEROV, ADAM, ADAMW } optim_kind;

static const float (*optim_expected(optim_kind k))[OPTIM_NUMEL] {
  switch (k) {
  case SGD_MOMENTUM: return optim_sgd_momentum;
  case SGD_NESTEROV: return optim_sgd_nesterov;
  case ADAM: return optim_adam;
  default: return optim_adamw;
  }
}

/* The generator's hyperparameters. s0, s1: the momentum buffer, or Adam's two moments. */
static tc_status optim_apply(optim_kind k, tc_tensor *p, tc_tensor *s0, tc_tensor *s1, tc_tensor *t, tc_tensor *g,
                             tc_tensor *lr) {
  if (k == SGD_MOMENTUM || k == SGD_NESTEROV) {
    tc_sgd_options o = {.struct_size = sizeof o, .lr_tensor = lr, .momentum = 0.9};
    if (k == SGD_MOMENTUM)
      o.weight_decay = 0.01;
    else
      o.nesterov = true;
    return tc_sgd_step(1, &p, &g, &s0, &o);
  }
  tc_adam_options o = {
      .struct_size = sizeof o, .lr_tensor = lr, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.1};
  if (k == ADAMW) {
    o.beta1 = 0.8;
    o.beta2 = 0.99;
    o.eps = 1e-6;
    o.decoupled_weight_decay = true;
  }
  (void)s1;
  return tc_adam_step(1, &p, &g, &s0, &s1, t, &o);
}

/* A compiled function returns one tensor: the step returns sum(p) of the updated p. */
#define OPTIM_STEP_FN(name, kind)                                                                                      \
  static tc_tensor *name(tc_tensor *p, tc_tensor *s0, tc_tensor *s1, tc_tensor *t, tc_tensor *g, tc_tensor *lr) {      \
    return optim_apply(kind, p, s0, s1, t, g, lr) == TC_OK ? tc_sum(p, 0, NULL, false) : NULL;                         \
  }
OPTIM_STEP_FN(sgd_momentum_step, SGD_MOMENTUM)
OPTIM_STEP_FN(sgd_nesterov_step, SGD_NESTEROV)
OPTIM_STEP_FN(adam_step, ADAM)
OPTIM_STEP_FN(adamw_step, ADAMW)
static tc_model_fn const optim_fns[] = {TC_FN(sgd_momentum_step), TC_FN(sgd_nesterov_step), TC_FN(adam_step),
                                        TC_FN(adamw_step)};
static const char *const optim_names[] = {"sgd momentum", "sgd nesterov", "adam", "adamw"};
typedef tc_tensor *(*optim_step_fn)(tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *);
static const optim_step_fn optim_direct[] = {sgd_momentum_step, sgd_nesterov_step, adam_step, adamw_step};

/* Runs the four steps on backend (NULL: eagerly) and checks p after each against PyTorch's;
 * returns the compiled function's stats. */
static tc_compile_stats optim_run_on(optim_kind k, const char *backend, const char *device) {
  const int64_t shape[2] = {2, 3};
  tc_tensor *p = tc_from_f32(optim_p0, 2, shape), *s0 = tc_zeros(TC_F32, 2, shape), *s1 = tc_zeros(TC_F32, 2, shape);
  tc_tensor *t = tc_scalar(0, TC_F32);
  if (device) { /* the state lives on the device (the rates and gradients come from the host) */
    p = tc_to_device(p, device);
    s0 = tc_to_device(s0, device);
    s1 = tc_to_device(s1, device);
    t = tc_to_device(t, device);
    cr_assert(p && s0 && s1 && t, "%s", tc_last_error());
  }
  tc_compiled *c = NULL;
  if (backend) {
    tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .name = optim_names[k], .fullgraph = true};
    c = tc_compile(optim_fns[k], 6, &o);
    cr_assert_not_null(c, "%s: %s", backend, tc_last_error());
  }
  const float(*want)[OPTIM_NUMEL] = optim_expected(k);
  for (int s = 0; s < OPTIM_STEPS; s++) {
    tc_tensor *g = tc_from_f32(optim_grads[s], 2, shape), *lr = tc_scalar(optim_lr[s], TC_F32);
    tc_tensor *in[6] = {p, s0, s1, t, g, lr};
    tc_tensor *r = c ? tc_call(c, in) : optim_direct[k](p, s0, s1, t, g, lr);
    cr_assert_not_null(r, "%s on %s, step %d: %s", optim_names[k], backend ? backend : "eager", s + 1, tc_last_error());
    float got[OPTIM_NUMEL];
    cr_assert_eq(tc_to_host(p, got, sizeof got), TC_OK);
    double sum = 0;
    for (int i = 0; i < OPTIM_NUMEL; i++) {
      cr_assert(fabsf(got[i] - want[s][i]) <= 2e-6f + 2e-6f * fabsf(want[s][i]),
                "%s on %s, step %d, element %d: %.9g, PyTorch %.9g", optim_names[k], backend ? backend : "eager", s + 1,
                i, got[i], want[s][i]);
      sum += got[i];
    }
    cr_assert(fabs(tc_item(r) - sum) <= 1e-5, "the step's result is sum(p) after the update");
    if (k == ADAM || k == ADAMW) cr_assert_eq(tc_item(t), s + 1, "the step count is updated in place");
  }
  tc_compile_stats st = {.struct_size = sizeof st};
  if (c) cr_assert_eq(tc_compiled_stats(c, &st), TC_OK);
  tc_compiled_free(c);
  return st;
}

static tc_compile_stats optim_run(optim_kind k, const char *backend) {
  return optim_run_on(k, backend, NULL);
}

Test(optim, steps_match_pytorch_eager_and_compiled) {
  const char *backends[] = {NULL, "debug-eager", "inductor-cpu", "vulkan"};
  for (size_t b = 0; b < sizeof backends / sizeof *backends; b++) {
    if (backends[b] && !test_backend_available(backends[b])) continue;
    for (int k = SGD_MOMENTUM; k <= ADAMW; k++)
      optim_run((optim_kind)k, backends[b]);
  }
}

/* The memory plan writes the new parameter and state into the caller's buffers: no value of
 * the four steps is copied in afterwards (p, the two moments and the step count: 4 per call). */
Test(optim, adam_updates_in_place_on_inductor_cpu) {
  if (!test_backend_available("inductor-cpu")) cr_skip_test("inductor-cpu is not available");
  tc_compile_stats st = optim_run(ADAMW, "inductor-cpu");
  cr_assert_eq(st.n_updates_copied, 0, "%lld values copied after the run", (long long)st.n_updates_copied);
  cr_assert_eq(st.n_updates_in_place, 4 * OPTIM_STEPS);
  st = optim_run(SGD_MOMENTUM, "inductor-cpu");
  cr_assert_eq(st.n_updates_copied, 0);
  cr_assert_eq(st.n_updates_in_place, 2 * OPTIM_STEPS);
}

/* On a device backend with the state in device memory, the same. */
Test(optim, adam_updates_in_place_on_vulkan_device_memory) {
  if (!test_backend_available("vulkan")) cr_skip_test("vulkan is not available");
  tc_compile_stats st = optim_run_on(ADAM, "vulkan", "vulkan");
  cr_assert_eq(st.n_updates_copied, 0, "%lld values copied after the run", (long long)st.n_updates_copied);
  cr_assert_eq(st.n_updates_in_place, 4 * OPTIM_STEPS);
}

/* A graph-level backend gets the same values by a copy after the run. */
Test(optim, debug_eager_copies_updates_in) {
  tc_compile_stats st = optim_run(ADAM, "debug-eager");
  cr_assert_eq(st.n_updates_in_place + st.n_updates_copied, 4 * OPTIM_STEPS);
}

static tc_tensor *assign_intermediate(tc_tensor *x) {
  tc_tensor *y = tc_add_scalar(x, 1.0);
  return tc_assign(y, x) == TC_OK ? y : NULL;
}

static tc_tensor *assign_then_read(tc_tensor *x) {
  if (tc_assign(x, tc_add_scalar(x, 1.0)) != TC_OK) return NULL;
  return tc_item(tc_sum(x, 0, NULL, false)) > 0 ? x : tc_neg(x); /* a graph break */
}

Test(optim, assign_errors_and_eager_writes) {
  const int64_t shape[1] = {3};
  tc_tensor *a = tc_from_f32((float[]){1, 2, 3}, 1, shape), *b = tc_from_f32((float[]){4, 5, 6}, 1, shape);
  tc_tensor *view = tc_slice(a, 0, 0, 3, 1);
  cr_assert_eq(tc_assign(a, tc_mul_scalar(b, 2.0)), TC_OK, "%s", tc_last_error());
  float got[3];
  cr_assert_eq(tc_to_host(view, got, sizeof got), TC_OK);
  cr_assert(got[0] == 8 && got[1] == 10 && got[2] == 12, "every view of the storage sees the new values");
  cr_assert_eq(tc_assign(a, tc_zeros(TC_F32, 1, (int64_t[]){4})), TC_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(tc_last_error(), "tc_assign: dst is 3, src is 4"), "%s", tc_last_error());
  cr_assert_eq(tc_assign(a, tc_zeros(TC_I64, 1, shape)), TC_ERR_INVALID_ARGUMENT);
  tc_compile_options o = {.struct_size = sizeof o, .backend = "debug-eager"};
  tc_compiled *c = tc_compile(TC_FN(assign_intermediate), 1, &o);
  cr_assert_null(tc_call(c, &a));
  cr_assert(strstr(tc_last_error(), "dst must be a parameter of the compiled function"), "%s", tc_last_error());
  tc_compiled_free(c);
  c = tc_compile(TC_FN(assign_then_read), 1, &o);
  cr_assert_null(tc_call(c, &a));
  cr_assert(strstr(tc_last_error(), "graph break at tc_item after tc_assign is not supported"), "%s", tc_last_error());
  tc_compiled_free(c);
}
