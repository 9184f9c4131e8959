/* test_bundled_models.c — the bundled models (examples/) compiled on each available compiler
 * backend agree with eager mode (and inductor-cpu's two tiers with each other, bit for bit),
 * and the bundled MLP recompiles once, with the failing guard logged, when its batch changes
 * from 32 to 64. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_models.h"
#include "test_support.h"

static double *host_f64(tc_tensor *t, int64_t *n) {
  tc_tensor *d = tc_to_dtype(t, TC_F64);
  cr_assert_not_null(d, "%s", tc_last_error());
  *n = tc_numel(d);
  double *v = malloc((size_t)*n * sizeof *v);
  cr_assert_eq(tc_to_host(d, v, (size_t)*n * sizeof *v), TC_OK, "%s", tc_last_error());
  tc_release(d);
  return v;
}

static tc_tensor *call_model(const tc_model *m, const char *backend, tc_tensor **in) {
  tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .fullgraph = true, .name = m->name};
  tc_compiled *c = tc_compile(m->fn, m->n_inputs, &o);
  cr_assert_not_null(c, "%s on %s: %s", m->name, backend, tc_last_error());
  tc_tensor *y = tc_call(c, in);
  cr_assert_not_null(y, "%s on %s: %s", m->name, backend, tc_last_error());
  tc_compiled_free(c);
  return y;
}

static void check_models_on(const char *backend) {
  if (!test_backend_available(backend)) cr_skip_test("%s is not available here", backend);
  int n_models;
  const tc_model *models = tc_models_all(&n_models);
  cr_assert(n_models >= 5, "the BENCHMARKS workloads are bundled (found %d models)", n_models);
  for (int k = 0; k < n_models; k++) {
    const tc_model *m = &models[k];
    tc_tensor *in[16] = {0};
    cr_assert_eq(m->make_inputs(TC_SIZE_TEST, 7, in), TC_OK, "%s: %s", m->name, tc_last_error());
    tc_tensor *want = ((tc_tensor * (*)(tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *,
                                        tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *,
                                        tc_tensor *, tc_tensor *, tc_tensor *, tc_tensor *))m->fn)(
        in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7], in[8], in[9], in[10], in[11], in[12], in[13], in[14],
        in[15]);
    cr_assert_not_null(want, "%s eager: %s", m->name, tc_last_error());
    tc_tensor *got = call_model(m, backend, in);
    int64_t n_w, n_g;
    double *w = host_f64(want, &n_w), *g = host_f64(got, &n_g);
    cr_assert_eq(n_w, n_g, "%s on %s: %lld elements, eager gave %lld", m->name, backend, (long long)n_g,
                 (long long)n_w);
    for (int64_t i = 0; i < n_w; i++)
      cr_assert(fabs(g[i] - w[i]) <= 1e-4 + 1e-3 * fabs(w[i]), "%s on %s: element %lld is %g, eager gave %g",
                m->name, backend, (long long)i, g[i], w[i]);
    free(w);
    free(g);
    tc_release(want);
    tc_release(got);
    for (int i = 0; i < m->n_inputs; i++) tc_release(in[i]);
  }
}

Test(bundled_models, agree_with_eager_on_debug_eager) { check_models_on("debug-eager"); }
Test(bundled_models, agree_with_eager_on_inductor_cpu) { check_models_on("inductor-cpu"); }
Test(bundled_models, agree_with_eager_on_vulkan) { check_models_on("vulkan"); }

/* The raw bytes of t (any dtype), malloc'd; *bytes their count. */
static unsigned char *host_bytes(tc_tensor *t, size_t *bytes) {
  *bytes = (size_t)tc_numel(t) * tc_dtype_size(tc_dtype_of(t));
  unsigned char *v = malloc(*bytes ? *bytes : 1);
  cr_assert(v);
  cr_assert_eq(tc_to_host(t, v, *bytes), TC_OK, "%s", tc_last_error());
  return v;
}

static tc_tensor *call_model_with(const tc_model *m, const char *options, tc_tensor **in) {
  tc_compile_options o = {
      .struct_size = sizeof o, .backend = "inductor-cpu", .fullgraph = true, .name = m->name, .options = options};
  tc_compiled *c = tc_compile(m->fn, m->n_inputs, &o);
  cr_assert_not_null(c, "%s (%s): %s", m->name, options, tc_last_error());
  tc_tensor *y = tc_call(c, in);
  cr_assert_not_null(y, "%s (%s): %s", m->name, options, tc_last_error());
  tc_compiled_free(c);
  return y;
}

/* inductor-cpu's two builds of a cold compile compute the same bits (the first calls run the
 * fast build, the -O3 build is swapped in later: plugins/inductor-cpu/tiered.c): every bundled
 * model at test size, and attn_block at CPU size (the first-call benchmark), under
 * cpu.tier=fast and cpu.tier=full. */
Test(bundled_models, inductor_cpu_tiers_agree_bit_for_bit, .timeout = 600) {
  if (!test_backend_available("inductor-cpu")) cr_skip_test("inductor-cpu is not available here");
  int n_models;
  const tc_model *models = tc_models_all(&n_models);
  for (int k = 0; k <= n_models; k++) {
    const tc_model *m = k < n_models ? &models[k] : tc_model_find("attn_block");
    cr_assert_not_null(m);
    tc_tensor *in[16] = {0};
    cr_assert_eq(m->make_inputs(k < n_models ? TC_SIZE_TEST : TC_SIZE_CPU, 7, in), TC_OK, "%s: %s", m->name,
                 tc_last_error());
    tc_tensor *fast = call_model_with(m, "cpu.tier=fast,cpu.threads=2", in);
    tc_tensor *full = call_model_with(m, "cpu.tier=full,cpu.threads=2", in);
    size_t n_fast, n_full;
    unsigned char *a = host_bytes(fast, &n_fast), *b = host_bytes(full, &n_full);
    cr_assert(n_fast == n_full && memcmp(a, b, n_fast) == 0, "%s: the fast and the -O3 build differ", m->name);
    free(a);
    free(b);
    tc_release(fast);
    tc_release(full);
    for (int i = 0; i < m->n_inputs; i++)
      tc_release(in[i]);
  }
}

/* attn_block's attention is one fused kernel on inductor-cpu (codegen_attention.c): with
 * cpu.attention=unfused the same graph has the three unfused kernels (q·kᵀ, the masked softmax,
 * p·v) where the fused one was, and both agree with each other. */
Test(bundled_models, attn_block_attention_is_one_kernel_on_inductor_cpu, .timeout = 300) {
  if (!test_backend_available("inductor-cpu")) cr_skip_test("inductor-cpu is not available here");
  const tc_model *m = tc_model_find("attn_block");
  cr_assert_not_null(m);
  tc_tensor *in[16] = {0};
  cr_assert_eq(m->make_inputs(TC_SIZE_TEST, 7, in), TC_OK, "%s", tc_last_error());
  int32_t kernels[2];
  tc_tensor *y[2];
  static const char *const options[2] = {"cpu.attention=fused", "cpu.attention=unfused"};
  for (int k = 0; k < 2; k++) {
    tc_compile_options o = {
        .struct_size = sizeof o, .backend = "inductor-cpu", .fullgraph = true, .name = m->name, .options = options[k]};
    tc_compiled *c = tc_compile(m->fn, m->n_inputs, &o);
    cr_assert_not_null(c, "%s: %s", options[k], tc_last_error());
    y[k] = tc_call(c, in);
    cr_assert_not_null(y[k], "%s: %s", options[k], tc_last_error());
    tc_compile_stats st = {.struct_size = sizeof st};
    cr_assert_eq(tc_compiled_stats(c, &st), TC_OK);
    kernels[k] = st.n_kernels;
    tc_compiled_free(c);
  }
  cr_assert_eq(kernels[0], 7, "fused: %d kernels", kernels[0]);
  cr_assert_eq(kernels[1], kernels[0] + 2, "unfused: %d kernels, fused %d", kernels[1], kernels[0]);
  int64_t n0, n1;
  double *a = host_f64(y[0], &n0), *b = host_f64(y[1], &n1);
  cr_assert_eq(n0, n1);
  for (int64_t i = 0; i < n0; i++)
    cr_assert(fabs(a[i] - b[i]) <= 1e-4 + 1e-3 * fabs(b[i]), "element %lld: fused %g, unfused %g", (long long)i, a[i], b[i]);
  free(a);
  free(b);
  tc_release(y[0]);
  tc_release(y[1]);
  for (int i = 0; i < m->n_inputs; i++) tc_release(in[i]);
}

/* The check: the bundled MLP, batch 32 then 64, compiles twice and names the guard. */
Test(bundled_models, mlp_batch_32_then_64_recompiles_once, .init = cr_redirect_stderr) {
  setenv("TC_LOGS", "recompiles", 1);
  const tc_model *m = tc_model_find("mlp");
  cr_assert_not_null(m);
  tc_tensor *in[5];
  cr_assert_eq(m->make_inputs(TC_SIZE_TEST, 3, in), TC_OK, "%s", tc_last_error());
  int64_t d = tc_size(in[0], 1);
  tc_tensor *x32 = tc_randn(32, TC_F32, 2, (int64_t[]){32, d});
  tc_tensor *x64 = tc_randn(64, TC_F32, 2, (int64_t[]){64, d});
  tc_compile_options o = {.struct_size = sizeof o, .backend = "auto", .name = "mlp", .input_names = "x,w1,b1,w2,b2"};
  tc_compiled *c = tc_compile(m->fn, 5, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  tc_tensor *args[5] = {x32, in[1], in[2], in[3], in[4]};
  tc_tensor *y32 = tc_call(c, args);
  args[0] = x64;
  tc_tensor *y64 = tc_call(c, args);
  cr_assert(y32 && y64, "%s", tc_last_error());
  tc_compile_stats st = {.struct_size = sizeof st};
  cr_assert_eq(tc_compiled_stats(c, &st), TC_OK);
  cr_assert_eq(st.n_compiles, 2, "batch 32 then 64: %d compiles", st.n_compiles);
  fflush(stderr);
  char log[4096] = {0};
  FILE *f = cr_get_redirected_stderr();
  size_t got = fread(log, 1, sizeof log - 1, f);
  log[got] = 0;
  cr_assert(strstr(log, "recompiling mlp (entry 2): guard failed: input 0 (x) dim 0 == 32, got 64"), "log: %s", log);
  tc_release(y32);
  tc_release(y64);
  tc_release(x32);
  tc_release(x64);
  tc_compiled_free(c);
  for (int i = 0; i < 5; i++) tc_release(in[i]);
}

/* A second compile of the same model finds the plugin's disk cache, and says so (ABI 1.2
 * executable_info, reported by tc explain): false the first time, true the second. The cache is
 * a fresh folder (TC_CACHE_DIR is read when the first compile needs it). */
static void check_cache_hit_reported(const char *backend) {
  if (!test_backend_available(backend)) cr_skip_test("%s is not available here", backend);
  char dir[64];
  snprintf(dir, sizeof dir, "/tmp/tc-test-cachehit-XXXXXX");
  cr_assert(mkdtemp(dir));
  setenv("TC_CACHE_DIR", dir, 1);
  const tc_model *m = tc_model_find("softmax");
  cr_assert_not_null(m);
  tc_tensor *in[4] = {0};
  cr_assert_eq(m->make_inputs(TC_SIZE_TEST, 5, in), TC_OK, "%s", tc_last_error());
  for (int pass = 0; pass < 2; pass++) {
    tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .name = "softmax"};
    tc_compiled *c = tc_compile(m->fn, m->n_inputs, &o);
    cr_assert_not_null(c, "%s", tc_last_error());
    tc_tensor *y = tc_call(c, in);
    cr_assert_not_null(y, "%s", tc_last_error());
    char *json = tc_compiled_explain(c, true);
    cr_assert_not_null(json);
    const char *want = pass == 0 ? "\"cache_hit\": false" : "\"cache_hit\": true";
    bool found = strstr(json, want) != NULL;
    free(json);
    tc_release(y);
    tc_compiled_free(c);
    if (!found) {
      char cmd[128];
      snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
      if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
      cr_assert_fail("%s pass %d: %s not in tc explain --json", backend, pass, want);
    }
  }
  for (int i = 0; i < m->n_inputs; i++) tc_release(in[i]);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0, "could not remove %s", dir);
}

Test(bundled_models, cache_hit_reported_on_inductor_cpu) { check_cache_hit_reported("inductor-cpu"); }
Test(bundled_models, cache_hit_reported_on_vulkan) { check_cache_hit_reported("vulkan"); }

/* Two units from the disk cache loaded at once, with the same kernel names and different
 * constants: each must run its own code. The cache hands a unit over as /proc/self/fd/N of a
 * memfd it closes after the load, and dlopen matched the second unit's reused path to the
 * first, already-loaded unit (the second function returned the first one's values). */
static tc_tensor *times_two(tc_tensor *x) { return tc_mul_scalar(x, 2.0); }
static tc_tensor *times_three(tc_tensor *x) { return tc_mul_scalar(x, 3.0); }

Test(bundled_models, cached_units_loaded_together_stay_apart) {
  if (!test_backend_available("inductor-cpu")) cr_skip_test("inductor-cpu is not available here");
  char dir[64];
  snprintf(dir, sizeof dir, "/tmp/tc-test-twounits-XXXXXX");
  cr_assert(mkdtemp(dir));
  setenv("TC_CACHE_DIR", dir, 1);
  tc_tensor *x = tc_full(1.0, TC_F32, 1, (int64_t[]){8});
  for (int pass = 0; pass < 2; pass++) { /* the first fills the cache, the second loads from it */
    tc_compile_options o = {.struct_size = sizeof o, .backend = "inductor-cpu"};
    tc_compiled *two = tc_compile(TC_FN(times_two), 1, &o), *three = tc_compile(TC_FN(times_three), 1, &o);
    tc_tensor *y2 = tc_call(two, &x), *y3 = tc_call(three, &x);
    cr_assert(y2 && y3, "%s", tc_last_error());
    cr_assert_eq(tc_item(tc_sum(y2, 0, NULL, false)), 16.0, "pass %d: x * 2", pass);
    cr_assert_eq(tc_item(tc_sum(y3, 0, NULL, false)), 24.0, "pass %d: x * 3, not the other unit's x * 2", pass);
    tc_release(y2);
    tc_release(y3);
    tc_compiled_free(two);
    tc_compiled_free(three);
  }
  tc_release(x);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0, "could not remove %s", dir);
}
