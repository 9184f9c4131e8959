/* test_ab.c — tc_ab_compare: backends that agree pass with their timings filled; a backend with
 * one deliberately wrong prim (test-wrong-exp: debug-eager built with exp off by a relative 1e-3,
 * <build>/test-plugins-ab) fails, and the bisector names the first kernel that uses exp; bad
 * arguments are errors naming what was wrong. Public API only.
 * Criterion runs each test in its own process, so the environment set here stays here. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc/tc.h"
#include "test_support.h"

static void ab_setup(void) {
  setenv("TC_PLUGIN_PATH", TC_BINARY_DIR "/test-plugins-ab", 1);
  setenv("TC_PLUGIN_DEFAULT_DIR", TC_BUILD_PLUGIN_DIR, 1);
  unsetenv("TC_OPTIONS");
  unsetenv("TC_EAGER_BACKEND");
  cr_assert_eq(tc_backend_rescan(), TC_OK, "%s", tc_last_error());
}

TestSuite(ab, .init = ab_setup, .timeout = 120);

/* Three kernels: layer_norm (a matmul operand is realized), the matmul with its epilogue, and
 * softmax; exp first appears after the first kernel (in sigmoid and softmax). */
static tc_tensor *ln_mm_softmax(tc_tensor *x, tc_tensor *w) {
  return tc_softmax(tc_sigmoid(tc_matmul(tc_layer_norm(x, 1, NULL, NULL, 1e-5), w)), -1);
}

static void make_inputs(tc_tensor **in) {
  in[0] = tc_randn(11, TC_F32, 2, (int64_t[]){8, 32});
  in[1] = tc_mul_scalar(tc_randn(12, TC_F32, 2, (int64_t[]){32, 16}), 0.5);
  cr_assert(in[0] && in[1], "%s", tc_last_error());
}

static const tc_ab_result *result_of(const tc_ab_report *r, const char *backend) {
  for (int32_t i = 0; i < r->n_results; i++)
    if (!strcmp(r->results[i].backend, backend)) return &r->results[i];
  cr_assert_fail("no result for %s", backend);
  return NULL;
}

Test(ab, backends_that_agree_pass_with_timings) {
  if (!test_backend_available("inductor-cpu")) cr_skip("inductor-cpu is unavailable here");
  tc_tensor *in[2];
  make_inputs(in);
  const char *backends[] = {"debug-eager", "inductor-cpu"};
  tc_ab_options o = {.struct_size = sizeof o, .name = "ln_mm_softmax", .iters = 5};
  tc_ab_report *r = NULL;
  cr_assert_eq(tc_ab_compare(TC_FN(ln_mm_softmax), 2, in, backends, 2, &o, &r), TC_OK, "%s", tc_last_error());
  cr_assert_str_eq(r->reference, "debug-eager");
  cr_assert_str_eq(r->output, "8x16 f32");
  cr_assert_eq(r->n_results, 2);
  cr_assert_geq(r->n_kernels, 3, "the plan has %d kernels", (int)r->n_kernels);
  for (int32_t i = 0; i < r->n_results; i++) {
    const tc_ab_result *x = &r->results[i];
    cr_assert_eq(x->status, TC_OK, "%s: %s", x->backend, x->error);
    cr_assert(x->pass, "%s: max abs err %g, max rel err %g", x->backend, x->max_abs_err, x->max_rel_err);
    cr_assert_eq(x->n_elements, 8 * 16);
    cr_assert_lt(x->max_abs_err, 1e-5);
    cr_assert_eq(x->nan_mismatches + x->inf_mismatches, 0);
    cr_assert_gt(x->first_call_s, 0);
    cr_assert(x->n_calls >= 1 && x->n_calls <= 5, "%d steady calls", (int)x->n_calls);
    cr_assert(x->min_s > 0 && x->min_s <= x->median_s && x->median_s <= x->max_s, "%s: min %g median %g max %g",
              x->backend, x->min_s, x->median_s, x->max_s);
    cr_assert_gt(x->cold_compile_s, 0);
    cr_assert_gt(x->warm_compile_s, 0);
    cr_assert_eq(x->rtol, 1e-4, "the f32 default");
    cr_assert_null(x->divergence, "not bisected without bisect");
  }
  cr_assert_eq(result_of(r, "debug-eager")->max_abs_err, 0.0, "the reference against itself");
  cr_assert_not_null(result_of(r, "inductor-cpu")->source, "inductor-cpu exposes its C source");
  cr_assert_eq(result_of(r, "inductor-cpu")->n_kernel_sources, 0, "not asked for");
  tc_ab_report_free(r);
  tc_release(in[0]);
  tc_release(in[1]);
}

Test(ab, bisect_names_the_first_kernel_using_the_wrong_prim) {
  if (!test_backend_available("test-wrong-exp")) cr_skip("test-wrong-exp is not built (tc_tests depends on it)");
  tc_tensor *in[2];
  make_inputs(in);
  const char *backends[] = {"test-wrong-exp"};
  tc_ab_options o = {.struct_size = sizeof o, .name = "ln_mm_softmax", .iters = 2, .bisect = true};
  tc_ab_report *r = NULL;
  cr_assert_eq(tc_ab_compare(TC_FN(ln_mm_softmax), 2, in, backends, 1, &o, &r), TC_OK, "%s", tc_last_error());
  const tc_ab_result *x = &r->results[0];
  cr_assert_eq(x->status, TC_OK, "%s", x->error);
  cr_assert_not(x->pass, "exp off by 1e-3 must be caught (max rel err %g)", x->max_rel_err);
  cr_assert_gt(x->n_failed, 0);
  const tc_ab_divergence *d = x->divergence;
  cr_assert_not_null(d, "bisect was asked for");
  cr_assert(d->kernel >= 1 && d->kernel < r->n_kernels, "kernel %d of %d: %s", (int)d->kernel, (int)r->n_kernels,
            d->note);
  for (int32_t k = 0; k < d->kernel; k++)
    cr_assert_null(strstr(r->kernels[k].prims, "exp"), "kernel %s before it uses exp: %s", r->kernels[k].name,
                   r->kernels[k].prims);
  cr_assert_not_null(strstr(r->kernels[d->kernel].prims, "exp"), "the named kernel %s: %s", r->kernels[d->kernel].name,
                     r->kernels[d->kernel].prims);
  cr_assert_not_null(strstr(d->note, r->kernels[d->kernel].name), "%s", d->note);
  cr_assert_gt(d->max_rel_err, 1e-4);
  cr_assert_geq(d->element, 0);
  cr_assert_neq(d->ref_value, d->value);
  /* The inputs that show it: the kernel's own, as host tensors the caller may read. */
  cr_assert_geq(d->n_inputs, 1);
  for (int32_t i = 0; i < d->n_inputs; i++) {
    cr_assert_not_null(d->inputs[i]);
    cr_assert_str_eq(tc_device_of(d->inputs[i]), "host");
  }
  cr_assert_not_null(d->inputs_text);
  cr_assert_not_null(d->ref_source, "debug-eager lists the kernel's graph");
  cr_assert_not_null(d->source);
  tc_ab_report_free(r);
  tc_release(in[0]);
  tc_release(in[1]);
}

Test(ab, special_values_in_the_same_places_pass) {
  /* exp(-inf) = 0, NaN propagates, -0 and denormals: the reference against itself and
   * inductor-cpu, which computes pointwise math exactly like it. */
  if (!test_backend_available("inductor-cpu")) cr_skip("inductor-cpu is unavailable here");
  float h[16] = {1.0f, NAN,     INFINITY, -INFINITY, -0.0f, 1e-40f, -2.5f, 3.0f,
                 0.5f, -1e-39f, 2.0f,     -3.0f,     4.0f,  NAN,    0.25f, -0.75f};
  tc_tensor *x = tc_from_f32(h, 2, (int64_t[]){2, 8});
  const char *backends[] = {"inductor-cpu"};
  tc_ab_options o = {.struct_size = sizeof o, .iters = 1};
  tc_ab_report *r = NULL;
  cr_assert_eq(tc_ab_compare(TC_FN(tc_exp), 1, &x, backends, 1, &o, &r), TC_OK, "%s", tc_last_error());
  const tc_ab_result *res = &r->results[0];
  cr_assert(res->pass, "nan %lld inf %lld failed %lld", (long long)res->nan_mismatches, (long long)res->inf_mismatches,
            (long long)res->n_failed);
  cr_assert_eq(res->n_nonfinite, 3, "two NaN and exp(inf) alike");
  tc_ab_report_free(r);
  tc_release(x);
}

Test(ab, bad_arguments_name_what_was_wrong) {
  tc_tensor *in[2];
  make_inputs(in);
  tc_ab_report *r = NULL;
  const char *unknown[] = {"debug-eager", "nope"};
  cr_assert_eq(tc_ab_compare(TC_FN(ln_mm_softmax), 2, in, unknown, 2, NULL, &r), TC_ERR_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(tc_last_error(), "unknown backend 'nope'"), "%s", tc_last_error());
  cr_assert_not_null(strstr(tc_last_error(), "debug-eager"), "lists the known ones: %s", tc_last_error());
  cr_assert_null(r);
  const char *ok[] = {"debug-eager"};
  tc_ab_options bad_ref = {.struct_size = sizeof bad_ref, .reference = "nope"};
  cr_assert_neq(tc_ab_compare(TC_FN(ln_mm_softmax), 2, in, ok, 1, &bad_ref, &r), TC_OK);
  cr_assert_not_null(strstr(tc_last_error(), "the reference"), "%s", tc_last_error());
  cr_assert_eq(tc_ab_compare(NULL, 2, in, ok, 1, NULL, &r), TC_ERR_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(tc_last_error(), "fn is NULL"), "%s", tc_last_error());
  cr_assert_eq(tc_ab_compare(TC_FN(ln_mm_softmax), 2, in, ok, 0, NULL, &r), TC_ERR_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(tc_last_error(), "no backends"), "%s", tc_last_error());
  cr_assert_eq(tc_ab_compare(TC_FN(ln_mm_softmax), 2, (tc_tensor *[]){in[0], NULL}, ok, 1, NULL, &r),
               TC_ERR_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(tc_last_error(), "input 1 is NULL"), "%s", tc_last_error());
  cr_assert_eq(tc_ab_compare(TC_FN(ln_mm_softmax), 2, in, ok, 1, NULL, NULL), TC_ERR_INVALID_ARGUMENT);
  tc_ab_options bad_opt = {.struct_size = sizeof bad_opt, .options = "cpu.nope=1"};
  cr_assert_neq(tc_ab_compare(TC_FN(ln_mm_softmax), 2, in, ok, 1, &bad_opt, &r), TC_OK);
  cr_assert_not_null(strstr(tc_last_error(), "cpu.nope"), "%s", tc_last_error());
  /* A function whose output cannot run is the reference's failure, reported as such. */
  cr_assert_null(r);
  tc_ab_report_free(NULL);
  tc_release(in[0]);
  tc_release(in[1]);
}

Test(ab, an_unavailable_backend_gets_a_row_saying_why) {
  tc_backend_info infos[32];
  int n = tc_backend_list(infos, 32);
  const char *missing = NULL;
  for (int i = 0; i < n && i < 32 && !missing; i++)
    if (!infos[i].available) missing = infos[i].name;
  if (!missing) cr_skip("every backend is available here");
  tc_tensor *in[2];
  make_inputs(in);
  const char *backends[] = {"debug-eager", missing};
  tc_ab_options o = {.struct_size = sizeof o, .iters = 1};
  tc_ab_report *r = NULL;
  cr_assert_eq(tc_ab_compare(TC_FN(ln_mm_softmax), 2, in, backends, 2, &o, &r), TC_OK, "%s", tc_last_error());
  cr_assert_eq(r->results[0].status, TC_OK);
  cr_assert_eq(r->results[1].status, TC_ERR_UNAVAILABLE, "%s", r->results[1].error);
  cr_assert_not_null(strstr(r->results[1].error, "unavailable"), "%s", r->results[1].error);
  tc_ab_report_free(r);
  tc_release(in[0]);
  tc_release(in[1]);
}

Test(ab, kernel_sources_give_each_kernel_compiled_alone) {
  if (!test_backend_available("inductor-cpu")) cr_skip("inductor-cpu is unavailable here");
  tc_tensor *in[2];
  make_inputs(in);
  const char *backends[] = {"inductor-cpu"};
  tc_ab_options o = {.struct_size = sizeof o, .iters = 1, .kernel_sources = true};
  tc_ab_report *r = NULL;
  cr_assert_eq(tc_ab_compare(TC_FN(ln_mm_softmax), 2, in, backends, 1, &o, &r), TC_OK, "%s", tc_last_error());
  const tc_ab_result *x = &r->results[0];
  cr_assert_eq(x->n_kernel_sources, r->n_kernels);
  for (int32_t k = 0; k < r->n_kernels; k++) {
    cr_assert_not_null(x->kernel_sources[k], "kernel %s", r->kernels[k].name);
    cr_assert_not_null(strstr(x->kernel_sources[k], r->kernels[k].name), "kernel %s's source names it:\n%s",
                       r->kernels[k].name, x->kernel_sources[k]);
  }
  tc_ab_report_free(r);
  tc_release(in[0]);
  tc_release(in[1]);
}
