/* test_modes.c — what each compile mode does on each backend (README's mode table), through the
 * public API on the bundled tiny_mlp_b1 (launch-bound: four matmul + bias + relu layers):
 *   inductor-cpu: reduce-overhead gives small kernels serial twins (no OpenMP region per launch)
 *                 and a call allocates nothing but its result;
 *   debug-eager:  every mode is accepted and means nothing (the reference interpreter);
 *   every mode's results equal the default's; an unknown mode is an error naming the valid ones.
 * vulkan's recorded command buffers and max-autotune have suites of their own below. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "alloc_count.h"
#include "tc/tc.h"
#include "tc_models.h"
#include "test_support.h"

#define assert_contains(hay, needle)                                                                                   \
  cr_assert(strstr((hay), (needle)) != NULL, "expected \"%s\" in:\n%.4000s", (needle), (hay))
#define assert_lacks(hay, needle)                                                                                      \
  cr_assert(strstr((hay), (needle)) == NULL, "did not expect \"%s\" in:\n%.4000s", (needle), (hay))

static const char *const mode_names[] = {"default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"};
enum { N_MODES = 4, TINY_INPUTS = 9, TINY_WIDTH = 64 };

static void modes_setup(void) {
  unsetenv("TC_OPTIONS");
  setenv("TC_CACHE_DIR", "off", 1);
  /* Read once per process, at the first log call: set before anything runs. */
  setenv("TC_LOGS", "output_code", 1);
}

TestSuite(modes, .init = modes_setup, .timeout = 240);

/* tiny_mlp_b1's inputs (test size, fixed seed), on `backend`'s device when it has one. */
static void tiny_inputs_seeded(const char *backend, uint64_t seed, tc_tensor **in) {
  const tc_model *m = tc_model_find("tiny_mlp_b1");
  cr_assert(m);
  cr_assert_eq(m->make_inputs(TC_SIZE_TEST, seed, in), TC_OK, "%s", tc_last_error());
  if (!strcmp(backend, "vulkan"))
    for (int i = 0; i < TINY_INPUTS; i++) {
      tc_tensor *d = tc_to_device(in[i], backend);
      cr_assert(d, "%s", tc_last_error());
      tc_release(in[i]);
      in[i] = d;
    }
}

static void tiny_inputs(const char *backend, tc_tensor **in) { tiny_inputs_seeded(backend, 7, in); }

static tc_compiled *tiny_compile(const char *backend, int mode) {
  tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .mode = mode};
  tc_compiled *f = tc_compile(tc_model_find("tiny_mlp_b1")->fn, TINY_INPUTS, &o);
  cr_assert(f, "%s", tc_last_error());
  return f;
}

/* One call's result, read back to host floats. */
static void tiny_call(tc_compiled *f, tc_tensor **in, float *out) {
  tc_tensor *y = tc_call(f, in);
  cr_assert(y, "%s", tc_last_error());
  cr_assert_eq(tc_to_host(y, out, TINY_WIDTH * sizeof(float)), TC_OK, "%s", tc_last_error());
  tc_release(y);
}

/* Calls tiny_mlp_b1 three times in `mode` and checks every result against the default mode's. */
static void results_match_default(const char *backend, int mode) {
  if (!test_backend_available(backend)) cr_skip_test("%s is not available here", backend);
  tc_tensor *in[TINY_INPUTS];
  tiny_inputs(backend, in);
  float ref[TINY_WIDTH], got[TINY_WIDTH];
  tc_compiled *f0 = tiny_compile(backend, TC_MODE_DEFAULT);
  tiny_call(f0, in, ref);
  tc_compiled *f = tiny_compile(backend, mode);
  for (int call = 0; call < 3; call++) {
    tiny_call(f, in, got);
    for (int i = 0; i < TINY_WIDTH; i++)
      cr_assert(got[i] == ref[i] || fabsf(got[i] - ref[i]) <= 1e-5f * (1 + fabsf(ref[i])),
                "%s %s call %d: element %d is %g, default gives %g", backend, mode_names[mode], call, i, got[i], ref[i]);
  }
  tc_compiled_free(f);
  tc_compiled_free(f0);
}

/* ---------------------------------------------------------------- every backend, every mode */

Test(modes, every_mode_matches_default_on_inductor_cpu) {
  for (int m = 1; m < N_MODES; m++) results_match_default("inductor-cpu", m);
}

Test(modes, every_mode_matches_default_on_debug_eager) {
  for (int m = 1; m < N_MODES; m++) results_match_default("debug-eager", m);
}

Test(modes, every_mode_matches_default_on_vulkan) {
  for (int m = 1; m < N_MODES; m++) results_match_default("vulkan", m);
}

Test(modes, unknown_mode_is_an_error_naming_the_modes) {
  tc_compile_options o = {.struct_size = sizeof o, .backend = "debug-eager", .mode = 7};
  cr_assert_null(tc_compile(tc_model_find("tiny_mlp_b1")->fn, TINY_INPUTS, &o));
  const char *e = tc_last_error();
  assert_contains(e, "mode is 7");
  assert_contains(e, "TC_MODE_DEFAULT");
  assert_contains(e, "_REDUCE_OVERHEAD");
  assert_contains(e, "_MAX_AUTOTUNE");
  assert_contains(e, "_MAX_AUTOTUNE_NO_CUDAGRAPHS");
}

/* The command line takes modes by name: a misspelt one is an error listing the four. */
Test(modes, unknown_mode_name_on_the_command_line_lists_the_modes) {
  static const char *const cmds[] = {"conformance debug-eager --mode bogus", "bench --backend debug-eager --mode fast"};
  for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
    char cmd[512], out[1024] = "";
    snprintf(cmd, sizeof cmd, "%s/bin/tc %s 2>&1", TC_BINARY_DIR, cmds[i]);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int rc = pclose(p);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "%s: exit status %d", cmd, rc);
    assert_contains(out, "expected default, reduce-overhead, max-autotune or max-autotune-no-cudagraphs");
  }
}

/* ---------------------------------------------------------------- inductor-cpu reduce-overhead */

/* The generated source of tiny_mlp_b1 in `mode` (TC_LOGS=output_code), caller frees. */
static char *inductor_cpu_source(int mode) {
  tc_tensor *in[TINY_INPUTS];
  tiny_inputs("inductor-cpu", in);
  stderr_capture c = stderr_begin();
  tc_compiled *f = tiny_compile("inductor-cpu", mode);
  float out[TINY_WIDTH];
  tiny_call(f, in, out);
  char *text = stderr_end(c);
  tc_compiled_free(f);
  return text;
}

Test(modes, inductor_cpu_reduce_overhead_small_kernels_skip_openmp) {
  if (!test_backend_available("inductor-cpu")) cr_skip_test("inductor-cpu is not available here");
  char *dflt = inductor_cpu_source(TC_MODE_DEFAULT);
  assert_contains(dflt, "#pragma omp parallel");
  assert_lacks(dflt, "_serial(");
  free(dflt);
  for (int m = 1; m < N_MODES; m++) {
    char *src = inductor_cpu_source(m);
    if (m == TC_MODE_REDUCE_OVERHEAD || m == TC_MODE_MAX_AUTOTUNE) {
      /* every kernel has a twin without OpenMP, chosen when its sizes keep it small */
      assert_contains(src, "static void k_matmul_add_where_serial(");
      assert_contains(src, "static int k_matmul_add_where_is_small(const int64_t *syms)");
      assert_contains(src, "(k_matmul_add_where_is_small(syms) ? k_matmul_add_where_serial : k_matmul_add_where)(");
    } else {
      assert_lacks(src, "_serial(");
    }
    free(src);
  }
}

Test(modes, inductor_cpu_reduce_overhead_call_allocates_only_its_result) {
  if (!test_backend_available("inductor-cpu")) cr_skip_test("inductor-cpu is not available here");
  if (!alloc_counting()) cr_skip_test("allocations are not counted under a sanitizer");
  /* the -O3 build before the first call: a tiered compile's background build (it starts after
   * the first call) would allocate in this process while the calls below are counted */
  setenv("TC_OPTIONS", "cpu.tier=full", 1);
  tc_tensor *in[TINY_INPUTS];
  tiny_inputs("inductor-cpu", in);
  tc_compiled *f = tiny_compile("inductor-cpu", TC_MODE_REDUCE_OVERHEAD);
  unsetenv("TC_OPTIONS");
  for (int i = 0; i < 3; i++) tc_release(tc_call(f, in));
  enum { CALLS = 200 };
  long before = alloc_count();
  for (int i = 0; i < CALLS; i++) {
    tc_tensor *y = tc_call(f, in);
    cr_assert(y, "%s", tc_last_error());
    tc_release(y);
  }
  double per_call = (double)(alloc_count() - before) / CALLS;
  /* The result is the caller's: its tensor, its storage and its bytes. Intermediates live in
   * the plan's slots, made at the first call; the run's tables on its stack (10 per call before). */
  cr_assert(per_call <= 3.0, "%.2f heap allocations per call, expected 3 (the result's tensor, storage and bytes)",
            per_call);
  tc_compiled_free(f);
}

/* ---------------------------------------------------------------- vulkan reduce-overhead
 * TC_LOGS=queue says, at each wait, how many calls were replayed from recorded command buffers
 * and how many were recorded. */

static void modes_vulkan_setup(void) {
  /* under the Khronos validation layer with synchronization validation (when installed): a
   * missing barrier at a replay's boundary, or a recorded buffer misused, is reported */
  setenv("TC_OPTIONS", "vulkan.validation=sync", 1);
  setenv("TC_CACHE_DIR", "off", 1);
  setenv("TC_LOGS", "queue", 1);
}

TestSuite(modes_vulkan, .init = modes_vulkan_setup, .timeout = 240);

/* `calls` calls of f (results checked against ref when given), then a wait; what TC_LOGS=queue
 * printed. Caller frees. */
static char *vulkan_calls(tc_compiled *f, tc_tensor **in, int calls, const float *ref) {
  stderr_capture c = stderr_begin();
  for (int i = 0; i < calls; i++) {
    tc_tensor *y = tc_call(f, in);
    cr_assert(y, "%s", tc_last_error());
    if (ref) {
      float got[TINY_WIDTH];
      cr_assert_eq(tc_to_host(y, got, sizeof got), TC_OK, "%s", tc_last_error());
      for (int j = 0; j < TINY_WIDTH; j++)
        cr_assert(fabsf(got[j] - ref[j]) <= 1e-5f * (1 + fabsf(ref[j])), "call %d element %d: %g, default gives %g", i, j,
                  got[j], ref[j]);
    }
    tc_release(y);
  }
  cr_assert_eq(tc_synchronize("vulkan"), TC_OK, "%s", tc_last_error());
  char *log = stderr_end(c);
  assert_lacks(log, "validation");
  return log;
}

/* The calls replayed and recorded, summed over the log's queue lines (one per wait); false when
 * no line mentions replays. */
static bool replay_counts(const char *log, long *replayed, long *recorded) {
  *replayed = *recorded = 0;
  bool any = false;
  static const char tail[] = " calls replayed from recorded command buffers";
  for (const char *p = log; (p = strstr(p, tail)); p++) {
    const char *n = p;
    while (n > log && n[-1] != ';') n--;
    long a, b;
    if (sscanf(n, " %ld calls replayed from recorded command buffers, %ld recorded", &a, &b) != 2) return false;
    *replayed += a;
    *recorded += b;
    any = true;
  }
  return any;
}

Test(modes_vulkan, reduce_overhead_replays_the_recorded_call) {
  if (!test_backend_available("vulkan")) cr_skip_test("vulkan is not available here");
  tc_tensor *in[TINY_INPUTS];
  tiny_inputs("vulkan", in);
  float ref[TINY_WIDTH];
  tc_compiled *f0 = tiny_compile("vulkan", TC_MODE_DEFAULT);
  tiny_call(f0, in, ref);
  char *log = vulkan_calls(f0, in, 2, NULL);
  assert_lacks(log, "replayed");
  free(log);

  tc_compiled *f = tiny_compile("vulkan", TC_MODE_REDUCE_OVERHEAD);
  /* the first call records, the next ones replay (the pool hands the result's buffer back) */
  log = vulkan_calls(f, in, 1, ref);
  long replayed = -1, recorded = -1;
  cr_assert(replay_counts(log, &replayed, &recorded), "no replay line in:\n%s", log);
  cr_assert_eq(recorded, 1, "%s", log);
  cr_assert_eq(replayed, 0, "%s", log);
  free(log);
  log = vulkan_calls(f, in, 4, ref);
  cr_assert(replay_counts(log, &replayed, &recorded), "no replay line in:\n%s", log);
  cr_assert_eq(recorded, 0, "%s", log);
  cr_assert_eq(replayed, 4, "%s", log);
  free(log);

  /* other buffers: a new recording, then replays of it */
  tc_tensor *in2[TINY_INPUTS];
  tiny_inputs_seeded("vulkan", 8, in2);
  float ref2[TINY_WIDTH];
  tiny_call(f0, in2, ref2);
  log = vulkan_calls(f, in2, 3, ref2);
  cr_assert(replay_counts(log, &replayed, &recorded), "no replay line in:\n%s", log);
  cr_assert_eq(recorded, 1, "%s", log);
  cr_assert_eq(replayed, 2, "%s", log);
  free(log);
  tc_compiled_free(f);
  tc_compiled_free(f0);
}

/* More buffer sets than recordings kept (8): the least recently used one is dropped (after the
 * device is done with it) and recorded again when its buffers come back; results stay right. */
Test(modes_vulkan, reduce_overhead_cache_is_bounded) {
  if (!test_backend_available("vulkan")) cr_skip_test("vulkan is not available here");
  enum { SETS = 10 };
  tc_tensor *in[SETS][TINY_INPUTS];
  float ref[SETS][TINY_WIDTH];
  tc_compiled *f0 = tiny_compile("vulkan", TC_MODE_DEFAULT);
  for (int i = 0; i < SETS; i++) {
    tiny_inputs_seeded("vulkan", 100 + (uint64_t)i, in[i]);
    tiny_call(f0, in[i], ref[i]);
  }
  tc_compiled *f = tiny_compile("vulkan", TC_MODE_REDUCE_OVERHEAD);
  long replayed = 0, recorded = 0, r, c;
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < SETS; i++) {
      char *log = vulkan_calls(f, in[i], 2, ref[i]);
      cr_assert(replay_counts(log, &r, &c), "no replay line in:\n%s", log);
      replayed += r;
      recorded += c;
      free(log);
    }
  /* each set records at its first call, and again in round 2 (evicted by the 8 after it) */
  cr_assert_eq(recorded, 2 * SETS, "recorded %ld", recorded);
  cr_assert_eq(replayed, 2 * SETS, "replayed %ld", replayed);
  tc_compiled_free(f);
  tc_compiled_free(f0);
}

Test(modes_vulkan, max_autotune_replays_and_no_cudagraphs_does_not) {
  if (!test_backend_available("vulkan")) cr_skip_test("vulkan is not available here");
  tc_tensor *in[TINY_INPUTS];
  tiny_inputs("vulkan", in);
  tc_compiled *f = tiny_compile("vulkan", TC_MODE_MAX_AUTOTUNE);
  char *log = vulkan_calls(f, in, 3, NULL);
  long replayed = -1, recorded = -1;
  cr_assert(replay_counts(log, &replayed, &recorded), "no replay line in:\n%s", log);
  cr_assert_eq(recorded, 1, "%s", log);
  cr_assert_eq(replayed, 2, "%s", log);
  free(log);
  tc_compiled_free(f);
  f = tiny_compile("vulkan", TC_MODE_MAX_AUTOTUNE_NO_CUDAGRAPHS);
  log = vulkan_calls(f, in, 3, NULL);
  assert_contains(log, "dispatches");
  assert_lacks(log, "replayed");
  free(log);
  tc_compiled_free(f);
}

/* ---------------------------------------------------------------- max-autotune
 * Each kernel's variant (inductor-cpu: thread count; vulkan: threads per row, tile height) is
 * timed at its first launch and kept in the disk cache: a second compile takes it from there. */

static char autotune_cache[64];

static void modes_autotune_setup(void) {
  unsetenv("TC_OPTIONS");
  snprintf(autotune_cache, sizeof autotune_cache, "/tmp/tc-test-autotune-XXXXXX");
  cr_assert(mkdtemp(autotune_cache));
  setenv("TC_CACHE_DIR", autotune_cache, 1); /* fresh: the first compile must time */
  setenv("TC_LOGS", "autotune", 1);
}

static void modes_autotune_teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", autotune_cache);
  cr_expect_eq(system(cmd), 0);
}

TestSuite(modes_autotune, .init = modes_autotune_setup, .fini = modes_autotune_teardown, .timeout = 240);

/* What TC_LOGS=autotune printed over one compile and two calls of tiny_mlp_b1 in `mode`. */
static char *autotune_log(const char *backend, int mode) {
  tc_tensor *in[TINY_INPUTS];
  tiny_inputs(backend, in);
  stderr_capture c = stderr_begin();
  tc_compiled *f = tiny_compile(backend, mode);
  float out[TINY_WIDTH];
  tiny_call(f, in, out);
  tiny_call(f, in, out);
  char *log = stderr_end(c);
  tc_compiled_free(f);
  return log;
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static void autotune_times_once_then_uses_the_cache(const char *backend, int mode) {
  if (!test_backend_available(backend)) cr_skip_test("%s is not available here", backend);
  char *log = autotune_log(backend, TC_MODE_DEFAULT);
  assert_lacks(log, "autotune");
  free(log);
  /* the first compile times every variant of each tunable kernel, once (not again at the
   * second call) */
  log = autotune_log(backend, mode);
  int chosen = count_of(log, " chosen (");
  cr_assert(chosen >= 4, "expected a choice for each of tiny_mlp_b1's 4 matmul kernels at least, got %d in:\n%s", chosen,
            log);
  assert_lacks(log, "from the disk cache");
  free(log);
  /* a second compile: every choice from the disk cache, nothing timed */
  log = autotune_log(backend, mode);
  cr_assert_eq(count_of(log, "from the disk cache, nothing timed"), chosen, "%s", log);
  assert_lacks(log, " us\n");
  assert_lacks(log, "chosen");
  free(log);
}

Test(modes_autotune, inductor_cpu_max_autotune_times_once_then_uses_the_cache) {
  autotune_times_once_then_uses_the_cache("inductor-cpu", TC_MODE_MAX_AUTOTUNE);
}

Test(modes_autotune, inductor_cpu_max_autotune_no_cudagraphs_times_once_then_uses_the_cache) {
  autotune_times_once_then_uses_the_cache("inductor-cpu", TC_MODE_MAX_AUTOTUNE_NO_CUDAGRAPHS);
}

Test(modes_autotune, vulkan_max_autotune_times_once_then_uses_the_cache) {
  autotune_times_once_then_uses_the_cache("vulkan", TC_MODE_MAX_AUTOTUNE);
}

Test(modes_autotune, vulkan_max_autotune_no_cudagraphs_times_once_then_uses_the_cache) {
  autotune_times_once_then_uses_the_cache("vulkan", TC_MODE_MAX_AUTOTUNE_NO_CUDAGRAPHS);
}
