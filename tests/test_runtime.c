/* test_runtime.c — what tc_compile hands a backend: its options (validated against the plugin's
 * declared table, reaching init and compile), the mode, and what a backend declines (its
 * capabilities): declined nodes run on the fallback backend, or are an error under fullgraph.
 * Backends here are the build tree's plugins, some wrapped in process to decline or record. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/runtime.h" /* one plan bound to two backends, below */
#include "tc/tc.h"
#include "plugin_entry.h"
#include "tc_plugin.h"
#include "test_support.h"

#define assert_contains(hay, needle)                                                                                   \
  cr_assert(strstr((hay), (needle)) != NULL, "expected \"%s\" in \"%s\"", (needle), (hay))

static void runtime_setup(void) {
  setenv("TC_CACHE_DIR", "off", 1);
  unsetenv("TC_OPTIONS");
  /* Read once per process, at the first log call: set before anything runs. */
  setenv("TC_LOGS", "init,fallback,perf_hints", 1);
}

TestSuite(runtime, .init = runtime_setup, .timeout = 120);

static tc_tensor *exp_plus_x(tc_tensor *x) {
  tc_scope *s = tc_scope_open();
  tc_tensor *y = tc_add(tc_mul_scalar(tc_exp(tc_neg(x)), 2.0), tc_softmax(x, -1));
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

static tc_tensor *input_4x8(void) {
  float d[32];
  for (int i = 0; i < 32; i++) d[i] = 0.25f * (float)(i % 9) - 1.0f;
  return tc_from_f32(d, 2, (int64_t[]){4, 8});
}

static void assert_same(tc_tensor *got, tc_tensor *want) {
  cr_assert_not_null(got, "%s", tc_last_error());
  cr_assert_not_null(want, "%s", tc_last_error());
  float a[32], b[32];
  cr_assert_eq(tc_to_host(got, a, sizeof a), TC_OK, "%s", tc_last_error());
  cr_assert_eq(tc_to_host(want, b, sizeof b), TC_OK, "%s", tc_last_error());
  for (int i = 0; i < 32; i++) cr_assert(fabsf(a[i] - b[i]) <= 1e-6f * (1 + fabsf(b[i])), "element %d: %g vs %g", i, a[i], b[i]);
}

/* ---------------------------------------------------------------- options */

Test(runtime, compile_options_reach_init) {
  if (!test_backend_available("inductor-cpu")) cr_skip("inductor-cpu is unavailable here");
  stderr_capture cap = stderr_begin();
  tc_compile_options o = {.struct_size = sizeof o, .backend = "inductor-cpu", .options = "cpu.threads=3", .name = "t3"};
  tc_compiled *c = tc_compile(TC_FN(exp_plus_x), 1, &o);
  char *log = stderr_end(cap);
  cr_assert_not_null(c, "%s", tc_last_error());
  assert_contains(log, "inductor-cpu: context with 3 threads");
  /* The result is right on that context. */
  tc_tensor *x = input_4x8();
  tc_tensor *y = tc_call(c, (tc_tensor *[]){x});
  tc_tensor *want = exp_plus_x(x);
  assert_same(y, want);
  tc_release(x);
  tc_release(y);
  tc_release(want);
  tc_compiled_free(c);
  free(log);
}

Test(runtime, bad_option_values_name_key_backend_and_valid_keys) {
  if (!test_backend_available("inductor-cpu")) cr_skip("inductor-cpu is unavailable here");
  tc_compile_options o = {.struct_size = sizeof o, .backend = "inductor-cpu", .options = "cpu.threads=abc"};
  cr_assert_null(tc_compile(TC_FN(exp_plus_x), 1, &o));
  assert_contains(tc_last_error(), "cpu.threads=abc");
  assert_contains(tc_last_error(), "backend 'inductor-cpu'");
  assert_contains(tc_last_error(), "valid keys: cpu.threads, cpu.cc");
  o.options = "cpu.threads=5000";
  cr_assert_null(tc_compile(TC_FN(exp_plus_x), 1, &o));
  assert_contains(tc_last_error(), "cpu.threads=5000");
  o.options = "cpu.blas=mkl"; /* an enum: the message lists what it takes */
  cr_assert_null(tc_compile(TC_FN(exp_plus_x), 1, &o));
  assert_contains(tc_last_error(), "cpu.blas=mkl");
  assert_contains(tc_last_error(), "auto|generated|openblas");
  o.options = "cpu.attention=maybe";
  cr_assert_null(tc_compile(TC_FN(exp_plus_x), 1, &o));
  assert_contains(tc_last_error(), "cpu.attention=maybe");
  assert_contains(tc_last_error(), "fused|unfused");
  o.options = "cpu.thread=2";
  cr_assert_null(tc_compile(TC_FN(exp_plus_x), 1, &o));
  assert_contains(tc_last_error(), "option 'cpu.thread': backend 'inductor-cpu' has no such option");
  assert_contains(tc_last_error(), "valid keys: cpu.threads, cpu.cc");
}

Test(runtime, vulkan_device_option_reaches_init) {
  if (!test_backend_available("vulkan")) cr_skip("vulkan is unavailable here");
  tc_compile_options o = {.struct_size = sizeof o, .backend = "vulkan", .options = "vulkan.device=7"};
  cr_assert_null(tc_compile(TC_FN(exp_plus_x), 1, &o), "device 7 must not silently become device 0");
  assert_contains(tc_last_error(), "vulkan.device=7");
  assert_contains(tc_last_error(), "out of range");
  o.options = "vulkan.matmul_tile=7";
  cr_assert_null(tc_compile(TC_FN(exp_plus_x), 1, &o));
  assert_contains(tc_last_error(), "vulkan.matmul_tile=7");
  assert_contains(tc_last_error(), "valid keys:");
  stderr_capture cap = stderr_begin();
  o.options = "vulkan.device=0";
  tc_compiled *c = tc_compile(TC_FN(exp_plus_x), 1, &o);
  char *log = stderr_end(cap);
  cr_assert_not_null(c, "%s", tc_last_error());
  assert_contains(log, "vulkan: context on device 0");
  tc_compiled_free(c);
  free(log);
}

/* ---------------------------------------------------------------- wrapped plugins
 * A plugin of the build tree, registered in process under another name, with its table
 * changed: it declines some prims (a capabilities extension) and records the mode it compiled
 * with. The wrapped plugin's entries do the work. */
static tc_plugin_query_fn wrapped_query;
static tc_error *(*wrapped_compile)(tc_compile_args *);
static int32_t seen_mode = -1;
static int compiles;

static const uint64_t declined_prims[2] = {~(1ull << TC_PRIM_EXP), ~0ull};
static const tc_capabilities_ext no_exp = {
    .base = {sizeof(tc_capabilities_ext), TC_EXT_CAPABILITIES, NULL},
    .dtypes = (1u << TC_F32) | (1u << TC_F64) | (1u << TC_I32) | (1u << TC_I64) | (1u << TC_BOOL),
    .n_prim_words = 2,
    .prims = declined_prims,
    .kernel_kinds = (1u << TC_KERNEL_LOOP) | (1u << TC_KERNEL_MATMUL)};

static tc_error *recording_compile(tc_compile_args *a) {
  seen_mode = a->mode;
  compiles++;
  return wrapped_compile(a);
}

static const char *wrapped_name;

static tc_error *wrapper_query(tc_query_args *q) {
  tc_error *err = wrapped_query(q);
  if (err) return err;
  q->table->name = wrapped_name;
  q->table->option_prefix = wrapped_name;
  q->table->n_options = 0;
  q->table->extensions = &no_exp.base;
  wrapped_compile = q->table->compile;
  q->table->compile = recording_compile;
  return NULL;
}

/* Registers plugin file `file` of the build tree as `name`. */
static void wrap(const char *file, const char *name) {
  char why[1200];
  if (!test_plugin_entry(file, &wrapped_query, why, sizeof why)) cr_skip("%s", why);
  cr_assert_not_null(wrapped_query);
  wrapped_name = name;
  cr_assert_eq(tc_backend_register(wrapper_query), TC_OK, "%s", tc_last_error());
}

Test(runtime, mode_reaches_the_plugin) {
  wrap("tc-debug-eager.so", "modal");
  tc_compile_options o = {.struct_size = sizeof o, .backend = "modal", .mode = TC_MODE_MAX_AUTOTUNE};
  tc_compiled *c = tc_compile(TC_FN(exp_plus_x), 1, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  tc_tensor *x = input_4x8();
  tc_tensor *y = tc_call(c, (tc_tensor *[]){x});
  cr_assert_not_null(y, "%s", tc_last_error());
  cr_assert_eq(seen_mode, TC_MODE_MAX_AUTOTUNE);
  tc_release(y);
  tc_release(x);
  tc_compiled_free(c);
  o.mode = 9;
  cr_assert_null(tc_compile(TC_FN(exp_plus_x), 1, &o));
  assert_contains(tc_last_error(), "mode is 9");
}

/* exp is declined: it runs on debug-eager, the rest on the backend, with the same result. */
static void declined_node_runs_on_fallback(const char *file, const char *name) {
  wrap(file, name);
  stderr_capture cap = stderr_begin();
  tc_compile_options o = {.struct_size = sizeof o, .backend = name, .name = "exp_plus_x"};
  tc_compiled *c = tc_compile(TC_FN(exp_plus_x), 1, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  tc_tensor *x = input_4x8();
  tc_tensor *y = tc_call(c, (tc_tensor *[]){x});
  char *log = stderr_end(cap);
  tc_tensor *want = exp_plus_x(x); /* eager: debug-eager */
  assert_same(y, want);
  assert_contains(log, "declines");
  assert_contains(log, "(prim exp); it runs on debug-eager");
  assert_contains(log, "parts");
  assert_contains(log, "[tc:perf_hints] graph exp_plus_x");
  assert_contains(log, "which run on debug-eager");
  cr_assert_gt(compiles, 0, "the backend compiled its own parts");
  /* Under fullgraph the same graph is an error naming the node and the reason. */
  o.fullgraph = true;
  tc_compiled *strict = tc_compile(TC_FN(exp_plus_x), 1, &o);
  cr_assert_not_null(strict, "%s", tc_last_error());
  cr_assert_null(tc_call(strict, (tc_tensor *[]){x}));
  assert_contains(tc_last_error(), "declines node");
  assert_contains(tc_last_error(), "prim exp");
  assert_contains(tc_last_error(), "fullgraph");
  tc_compiled_free(strict);
  tc_release(x);
  tc_release(y);
  tc_release(want);
  tc_compiled_free(c);
  free(log);
}

Test(runtime, declined_node_runs_on_fallback_graph_level) {
  declined_node_runs_on_fallback("tc-debug-eager.so", "picky");
}

Test(runtime, declined_node_runs_on_fallback_kernel_level) {
  if (!test_backend_available("inductor-cpu")) cr_skip("inductor-cpu is unavailable here");
  declined_node_runs_on_fallback("tc-inductor-cpu.so", "picky-cpu");
}

/* ---------------------------------------------------------------- one plan, two backends
 * The scheduler's plan (kernel list + memory plan) does not depend on a backend: bound to two,
 * it runs on each with the same kernels (what an A/B comparison and its bisector need). */
Test(runtime, one_plan_bound_to_two_backends) {
  tc_backend *a = backend_find("inductor-cpu", NULL);
  if (!a) cr_skip("inductor-cpu is unavailable here: %s", tc_last_error());
  tc_backend *b = backend_find("vulkan", NULL);
  if (!b) {
    tc_options *o = options_parse("cpu.threads=1");
    b = backend_find("inductor-cpu", o); /* another context of the same plugin */
    options_free(o);
  }
  cr_assert_not_null(b, "%s", tc_last_error());
  /* softmax(x) * 2 over a 4x8 input, built as a graph. */
  tc_graph g;
  graph_init(&g, "plan2");
  int32_t r = sxtab_const(&g.sx, 4), c = sxtab_const(&g.sx, 8), one = sxtab_const(&g.sx, 1);
  tc_vtype t = {.dtype = TC_F32, .rank = 2, .shape = {r, c}};
  tc_vtype rt = {.dtype = TC_F32, .rank = 2, .shape = {r, one}};
  int32_t x = graph_add_input(&g, &t);
  tc_node n = {.prim = TC_PRIM_REDUCE_MAX, .out = {.dtype = TC_F32, .rank = 1, .shape = {r}}, .n_in = 1, .in = &x,
               .n_iattrs = 1, .iattrs = {1}};
  int32_t m = graph_add_node(&g, &n);
  n = (tc_node){.prim = TC_PRIM_RESHAPE, .out = rt, .n_in = 1, .in = &m};
  int32_t m2 = graph_add_node(&g, &n);
  n = (tc_node){.prim = TC_PRIM_BROADCAST_IN_DIM, .out = t, .n_in = 1, .in = &m2, .n_iattrs = 2, .iattrs = {0, 1}};
  int32_t mb = graph_add_node(&g, &n);
  int32_t xs[2] = {x, mb};
  n = (tc_node){.prim = TC_PRIM_SUB, .out = t, .n_in = 2, .in = xs};
  int32_t y = graph_add_node(&g, &n);
  cr_assert_geq(y, 0, "%s", tc_last_error());
  graph_set_outputs(&g, 1, &y);
  tc_schedule *plan = NULL;
  cr_assert_eq(schedule_build(&g, &plan), TC_OK, "%s", tc_last_error());
  tc_lowered *la = NULL, *lb = NULL;
  cr_assert_eq(lower_kernels_bind(a, plan, NULL, &la, NULL), TC_OK, "%s", tc_last_error());
  cr_assert_eq(lower_kernels_bind(b, plan, NULL, &lb, NULL), TC_OK, "%s", tc_last_error());
  schedule_release(plan); /* each executable holds the plan */
  cr_assert_eq(la->n_kernels, lb->n_kernels, "the same kernels");
  tc_tensor *in = input_4x8();
  tc_tensor *ya = NULL, *yb = NULL;
  cr_assert_eq(lowered_run(la, NULL, (tc_tensor *[]){in}, &ya), TC_OK, "%s", tc_last_error());
  cr_assert_eq(lowered_run(lb, NULL, (tc_tensor *[]){in}, &yb), TC_OK, "%s", tc_last_error());
  assert_same(ya, yb);
  float h[32], xin[32];
  cr_assert_eq(tc_to_host(ya, h, sizeof h), TC_OK);
  cr_assert_eq(tc_to_host(in, xin, sizeof xin), TC_OK);
  for (int i = 0; i < 4; i++) {
    float mx = xin[8 * i];
    for (int j = 1; j < 8; j++) mx = xin[8 * i + j] > mx ? xin[8 * i + j] : mx;
    for (int j = 0; j < 8; j++) cr_assert_eq(h[8 * i + j], xin[8 * i + j] - mx);
  }
  tc_release(ya);
  tc_release(yb);
  tc_release(in);
  lowered_free(la);
  lowered_free(lb);
  graph_free(&g);
}

/* ---------------------------------------------------------------- listing options */
Test(runtime, backend_options_are_listed) {
  if (!test_backend_available("inductor-cpu")) cr_skip("inductor-cpu is unavailable here");
  tc_option_info o[16];
  int n = tc_backend_options("inductor-cpu", o, 16);
  cr_assert_geq(n, 2, "%s", tc_last_error());
  bool threads = false;
  for (int i = 0; i < n && i < 16; i++)
    if (!strcmp(o[i].name, "cpu.threads")) {
      threads = true;
      cr_assert_str_eq(o[i].type, "int");
      cr_assert_str_eq(o[i].scope, "context");
      cr_assert_eq(o[i].max, 1024);
      cr_assert_not_null(o[i].meaning);
    }
  cr_assert(threads, "cpu.threads is declared");
  cr_assert_eq(tc_backend_options("nosuch", o, 16), -1);
  assert_contains(tc_last_error(), "unknown backend 'nosuch'");
  char cmd[1024], out[8192];
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' options inductor-cpu", TC_BINARY_DIR);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t got = fread(out, 1, sizeof out - 1, p);
  out[got] = 0;
  cr_assert_eq(pclose(p), 0, "%s", out);
  assert_contains(out, "cpu.threads");
  assert_contains(out, "0..1024");
}
