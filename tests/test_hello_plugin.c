/* test_hello_plugin.c — the example plugin of docs/plugin-abi.md (examples/plugins/hello) loaded
 * the way a user would load it: TC_PLUGIN_PATH names <build>/example-plugins, the install's
 * plugin directory stays (debug-eager runs the eager reference), and tc rescans. Then it is
 * listed, compiled for, run, and its declared option and its declines are checked.
 * Criterion runs each test in its own process, so the environment set here stays here. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "tc/tc.h"
#include "tc_kit.h" /* the kit's test host: the plugin on its own, without tc */

#define HELLO_DIR TC_BINARY_DIR "/example-plugins"
#define HELLO_SO HELLO_DIR "/tc-hello.so"

static void hello_setup(void) {
  setenv("TC_PLUGIN_PATH", HELLO_DIR, 1);
  setenv("TC_PLUGIN_DEFAULT_DIR", TC_BUILD_PLUGIN_DIR, 1); /* debug-eager, the eager backend */
  setenv("TC_CACHE_DIR", "off", 1);
  unsetenv("TC_OPTIONS");
  unsetenv("TC_EAGER_BACKEND");
  cr_assert_eq(tc_backend_rescan(), TC_OK, "%s", tc_last_error());
}

TestSuite(hello_plugin, .init = hello_setup, .timeout = 60);

/* tc_tests depends on hello-plugin (examples/plugins/hello/CMakeLists.txt); a build of only
 * some targets may still lack it. */
static void need_plugin(void) {
  if (access(HELLO_SO, R_OK) != 0) cr_skip("%s is not built (cmake --build ... --target hello-plugin)", HELLO_SO);
}

static tc_tensor *neg_plus(tc_tensor *x, tc_tensor *w) { return tc_add(tc_neg(x), w); }
static tc_tensor *exp_of(tc_tensor *x) { return tc_exp(x); }

static tc_compile_options hello_opts(const char *name, const char *options) {
  return (tc_compile_options){.struct_size = sizeof(tc_compile_options), .backend = "hello", .name = name,
                              .options = options};
}

Test(hello_plugin, is_listed_as_available) {
  need_plugin();
  tc_backend_info infos[32];
  int n = tc_backend_list(infos, 32);
  const tc_backend_info *hello = NULL, *eager = NULL;
  for (int i = 0; i < n && i < 32; i++) {
    if (!strcmp(infos[i].name, "hello")) hello = &infos[i];
    if (!strcmp(infos[i].name, "debug-eager")) eager = &infos[i];
  }
  cr_assert_not_null(hello, "hello is not listed (%d backends)", n);
  cr_assert(hello->available, "hello is unavailable: %s", hello->reason);
  cr_assert_str_eq(hello->version, "0.1.0");
  cr_assert_str_eq(hello->path, HELLO_SO);
  cr_assert_eq(hello->score, 0);
  cr_assert_eq(hello->n_devices, 1);
  cr_assert_str_eq(hello->devices[0].name, "host CPU");
  cr_assert_not_null(eager, "the install's plugin directory must still be searched");
  cr_assert(eager->available);
}

/* f(x, w) = neg(x) + w: prims neg and add on f32, all hello accepts. */
static void run_neg_plus(const char *options) {
  float xd[6] = {1, -2, 3.5f, 0, 10, -0.25f}, wd[6] = {0.5f, 0.5f, 1, 2, 3, 4};
  tc_tensor *in[2] = {tc_from_f32(xd, 2, (int64_t[]){2, 3}), tc_from_f32(wd, 2, (int64_t[]){2, 3})};
  tc_compile_options o = hello_opts("neg_plus", options);
  tc_compiled *c = tc_compile(TC_FN(neg_plus), 2, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  for (int round = 0; round < 2; round++) { /* the second call reuses the compiled entry */
    tc_tensor *y = tc_call(c, in);
    cr_assert_not_null(y, "%s", tc_last_error());
    float got[6];
    cr_assert_eq(tc_to_host(y, got, sizeof got), TC_OK, "%s", tc_last_error());
    for (int i = 0; i < 6; i++) cr_assert_float_eq(got[i], wd[i] - xd[i], 0, "element %d: %g", i, (double)got[i]);
    tc_release(y);
  }
  tc_compile_stats st = {.struct_size = sizeof st};
  cr_assert_eq(tc_compiled_stats(c, &st), TC_OK);
  cr_assert_eq(st.n_compiles, 1);
  tc_compiled_free(c);
  tc_release(in[0]);
  tc_release(in[1]);
}

Test(hello_plugin, runs_neg_and_add) {
  need_plugin();
  run_neg_plus(NULL);
}

Test(hello_plugin, takes_its_declared_option) {
  need_plugin();
  run_neg_plus("hello.greeting=bonjour"); /* another context-scope value: another context */
}

Test(hello_plugin, unknown_key_names_the_valid_ones) {
  need_plugin();
  tc_tensor *x = tc_from_f32((float[]){1, 2}, 1, (int64_t[]){2});
  tc_compile_options o = hello_opts("typo", "hello.greting=hi");
  tc_compiled *c = tc_compile(TC_FN(neg_plus), 2, &o);
  tc_tensor *y = c ? tc_call(c, (tc_tensor *[]){x, x}) : NULL;
  cr_assert_null(y, "an unknown key must be rejected");
  const char *e = tc_last_error();
  cr_assert(strstr(e, "'hello.greting': backend 'hello' has no such option (valid keys: hello.greeting)"), "error: %s",
            e);
  tc_compiled_free(c);
  tc_release(x);
}

Test(hello_plugin, bad_value_names_the_key) {
  need_plugin();
  /* A STRING option has one way to be bad: more than the host's 255 characters (a ',' would
   * end the item). */
  char options[400];
  int len = snprintf(options, sizeof options, "hello.greeting=");
  memset(options + len, 'a', 300);
  options[len + 300] = 0;
  tc_tensor *x = tc_from_f32((float[]){1, 2}, 1, (int64_t[]){2});
  tc_compile_options o = hello_opts("long_greeting", options);
  tc_compiled *c = tc_compile(TC_FN(neg_plus), 2, &o);
  tc_tensor *y = c ? tc_call(c, (tc_tensor *[]){x, x}) : NULL;
  cr_assert_null(y, "a value the declaration does not allow must be rejected");
  const char *e = tc_last_error();
  cr_assert(strstr(e, "backend 'hello': option hello.greeting: value 'aaa"), "error: %s", e);
  cr_assert(strstr(e, "is too long (valid keys: hello.greeting)"), "error: %s", e);
  tc_compiled_free(c);
  tc_release(x);
}

Test(hello_plugin, other_prims_get_the_plugins_error) {
  need_plugin();
  tc_tensor *x = tc_from_f32((float[]){1, 2}, 1, (int64_t[]){2});
  tc_compile_options o = hello_opts("exp_of", NULL);
  tc_compiled *c = tc_compile(TC_FN(exp_of), 1, &o);
  cr_assert_not_null(c, "%s", tc_last_error());
  tc_tensor *y = tc_call(c, &x);
  cr_assert_null(y, "hello must decline exp");
  cr_assert_eq(tc_last_status(), TC_ERR_UNSUPPORTED, "status %d: %s", tc_last_status(), tc_last_error());
  const char *e = tc_last_error();
  cr_assert(strstr(e, "hello: graph "), "error: %s", e);
  cr_assert(strstr(e, "prim 3 is not supported (only neg and add)"), "error: %s", e);
  tc_compiled_free(c);
  tc_release(x);
}

/* ---------------------------------------------------------------- the plugin alone
 * What docs/plugin-abi.md shows for a plugin's own unit tests: the kit's test host, no libtc. */
Test(hello_plugin, unit_test_with_the_kit_test_host) {
  need_plugin();
  tck_test_host *th = tck_test_host_new(NULL, "hello"); /* no disk cache; TC_LOGS=hello */
  tc_plugin_api api;
  void *dl = NULL;
  char why[512];
  cr_assert(tck_test_plugin_open(th, HELLO_SO, &api, &dl, why, sizeof why), "%s", why);
  const tc_host_api *host = tck_test_host_api(th);
  const char *msg = NULL;

  tc_option greeting = {sizeof(tc_option), "hello.greeting", "ciao", true};
  tc_init_args init = {.struct_size = sizeof init, .host = host, .device = -1, .n_options = 1,
                       .options = &greeting, .option_size = sizeof(tc_option)};
  cr_assert_eq(tck_test_host_take(th, api.init(&init), &msg), TC_OK, "%s", msg);
  cr_assert_str_eq(tck_test_host_log(th), "[hello] ciao from a new context\n");

  /* y = neg(x), x: f32[3]. */
  tc_size_expr three = {sizeof(tc_size_expr), TC_SX_CONST, 0, 0, 3};
  int32_t shape[1] = {0}, operand[1] = {0}, outputs[1] = {1};
  tc_value_type f32_3 = {sizeof(tc_value_type), TC_F32, 1, shape};
  tc_prim_node neg = {.struct_size = sizeof neg, .prim = TC_PRIM_NEG, .out = &f32_3, .n_inputs = 1, .inputs = operand};
  tc_graph_desc g = {.struct_size = sizeof g, .name = "neg3", .n_exprs = 1, .exprs = &three,
                     .expr_size = sizeof three, .n_inputs = 1, .inputs = &f32_3, .input_size = sizeof f32_3,
                     .n_nodes = 1, .nodes = &neg, .node_size = sizeof neg, .n_outputs = 1, .outputs = outputs};
  tc_compile_args comp = {.struct_size = sizeof comp, .ctx = init.ctx, .graph = &g};
  cr_assert_eq(tck_test_host_take(th, api.compile(&comp), &msg), TC_OK, "%s", msg);

  float x[3] = {1, -2, 0.5f}, y[3] = {0};
  tc_tensor_ref in = {.struct_size = sizeof in, .buffer = (tc_buffer *)x, .dtype = TC_F32, .rank = 1,
                      .sizes = {3}, .strides = {1}};
  tc_tensor_ref out = in;
  out.buffer = (tc_buffer *)y;
  tc_run_graph_args run = {.struct_size = sizeof run, .ctx = init.ctx, .exe = comp.exe, .n_inputs = 1,
                           .inputs = &in, .input_size = sizeof in, .n_outputs = 1, .outputs = &out,
                           .output_size = sizeof out, .call_id = 1};
  cr_assert_eq(tck_test_host_take(th, api.run_graph(&run), &msg), TC_OK, "%s", msg);
  cr_assert(y[0] == -1 && y[1] == 2 && y[2] == -0.5f);
  api.executable_free(&(tc_executable_free_args){sizeof(tc_executable_free_args), init.ctx, comp.exe});

  neg.prim = TC_PRIM_EXP; /* anything but neg and add is declined */
  comp.exe = NULL;
  cr_assert_eq(tck_test_host_take(th, api.compile(&comp), &msg), TC_ERR_UNSUPPORTED);
  cr_assert_str_eq(msg, "hello: graph neg3, node 0: prim 3 is not supported (only neg and add)");
  cr_assert_null(comp.exe);

  api.release(&(tc_release_args){sizeof(tc_release_args), init.ctx});
  dlclose(dl);
  tck_test_host_free(th);
}

/* docs/plugin-abi.md shows hello.c whole: the page and the file must not drift apart. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot read %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = calloc(1, (size_t)n + 1);
  cr_assert_not_null(text);
  cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  return text;
}

Test(hello_plugin, the_doc_shows_hello_c_verbatim) {
  char *doc = slurp(TC_SOURCE_DIR "/docs/plugin-abi.md");
  char *src = slurp(TC_SOURCE_DIR "/examples/plugins/hello/hello.c");
  cr_assert(strstr(doc, src), "docs/plugin-abi.md no longer contains examples/plugins/hello/hello.c verbatim");
  free(doc);
  free(src);
}
