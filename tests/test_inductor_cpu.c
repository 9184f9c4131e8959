/* test_inductor_cpu.c — the inductor-cpu plugin driven by hand-built kernel descriptors:
 * pointwise, multi-loop reductions (softmax), the two-level path for long rows, matmul with a
 * fused epilogue, indexing ops, Philox, and the disk cache across contexts. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tc_kit.h"
#include "tc_plugin.h"

/* ---------------------------------------------------------------- a host for the plugin
 * The kit's test host: real errors, collected logs, the kit's disk cache in a fresh directory. */
static char cache_dir[256];
static tck_test_host *th;
static const tc_host_api *host;
static tc_plugin_api api;
static void *plugin_dl;
static tc_plugin_ctx *ctx;

/* Runs init with the given CONTEXT options (NULL: unset, as the host hands unset options). */
static tc_status init_ctx(const char *threads, const char *cc, const char **msg) {
  tc_option opts[2] = {
      {.struct_size = sizeof(tc_option), .name = "cpu.threads", .value = threads ? threads : "0", .set = threads != NULL},
      {.struct_size = sizeof(tc_option), .name = "cpu.cc", .value = cc, .set = cc != NULL}};
  tc_init_args a = {.struct_size = sizeof a, .host = host, .device = -1, .n_options = 2, .options = opts,
                    .option_size = sizeof opts[0]};
  tc_status st = tck_test_host_take(th, api.init(&a), msg);
  ctx = a.ctx;
  return st;
}

static void reinit(const char *threads, const char *cc) {
  if (ctx) api.release(&(tc_release_args){.struct_size = sizeof(tc_release_args), .ctx = ctx});
  ctx = NULL;
  const char *msg;
  cr_assert_eq(init_ctx(threads, cc, &msg), TC_OK, "init: %s", msg);
}

static void setup(void) {
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tc-test-icpu-XXXXXX");
  cr_assert(mkdtemp(cache_dir));
  th = tck_test_host_new(cache_dir, "cache,profile,init");
  cr_assert(th);
  host = tck_test_host_api(th);
  char err[512];
  cr_assert(tck_test_plugin_open(th, TC_BUILD_PLUGIN_DIR "/tc-inductor-cpu.so", &api, &plugin_dl, err, sizeof err), "%s", err);
  cr_assert_str_eq(api.name, "inductor-cpu");
  tc_probe_args probe = {.struct_size = sizeof probe, .host = host};
  cr_assert_eq(tck_test_host_take(th, api.probe(&probe), NULL), TC_OK);
  cr_assert(probe.available, "%s", probe.reason);
  reinit("2", NULL);
  tck_test_host_log_clear(th);
}

static void teardown(void) {
  if (ctx) api.release(&(tc_release_args){.struct_size = sizeof(tc_release_args), .ctx = ctx});
  ctx = NULL;
  tck_test_host_free(th);
  th = NULL;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  cr_assert_eq(system(cmd), 0);
}

/* ---------------------------------------------------------------- building descriptors */
#include "kernel_builder.h"

/* compile; the status, the executable (NULL on failure) and the message (valid until the next
 * call on the test host). */
static tc_status compile(const tc_kernel_list *list, tc_executable **exe, const char **msg) {
  tc_compile_args a = {.struct_size = sizeof a, .ctx = ctx, .kernels = list};
  tc_status st = tck_test_host_take(th, api.compile(&a), msg);
  *exe = a.exe;
  return st;
}

static const char *source_of(tc_executable *exe) {
  tc_executable_info_args a = {.struct_size = sizeof a, .ctx = ctx, .exe = exe};
  cr_assert_eq(tck_test_host_take(th, api.executable_info(&a), NULL), TC_OK);
  cr_assert(a.source && strlen(a.source) == a.source_len);
  return a.source;
}

static bool from_cache(tc_executable *exe) {
  tc_executable_info_args a = {.struct_size = sizeof a, .ctx = ctx, .exe = exe};
  cr_assert_eq(tck_test_host_take(th, api.executable_info(&a), NULL), TC_OK);
  return a.from_cache;
}

static tc_executable *compile_ok(const tc_kernel_list *list) {
  tc_executable *exe = NULL;
  const char *msg;
  tc_status st = compile(list, &exe, &msg);
  cr_assert_eq(st, TC_OK, "compile: %s", msg);
  cr_assert(exe);
  if (getenv("TC_TEST_DUMP")) fputs(source_of(exe), stderr);
  return exe;
}

static void exe_free(tc_executable *exe) {
  api.executable_free(&(tc_executable_free_args){.struct_size = sizeof(tc_executable_free_args), .ctx = ctx, .exe = exe});
}

static tc_status launch(tc_executable *exe, int32_t kernel, void *const *ptrs, int32_t n, const int64_t *syms,
                        int32_t n_syms, const char **msg) {
  tc_buffer_arg args[8];
  for (int i = 0; i < n; i++) args[i] = (tc_buffer_arg){.struct_size = sizeof args[i], .buffer = (tc_buffer *)ptrs[i]};
  tc_launch_args a = {.struct_size = sizeof a, .ctx = ctx, .exe = exe, .kernel = kernel, .n_args = n, .args = args,
                      .arg_size = sizeof args[0], .n_syms = n_syms, .syms = syms, .call_id = 1};
  return tck_test_host_take(th, api.launch(&a), msg);
}

/* Launches kernel with up to four buffers (the kernel takes the first ones) and two symbols. */
static void launch2(tc_executable *exe, int32_t kernel, void *b0, void *b1, void *b2, void *b3, const int64_t *syms) {
  void *ptrs[4] = {b0, b1, b2, b3};
  int32_t n = b3 ? 4 : b2 ? 3 : 2;
  const char *msg;
  cr_assert_eq(launch(exe, kernel, ptrs, n, syms, syms ? 2 : 0, &msg), TC_OK, "launch: %s", msg);
}

static float frand(unsigned *state) {
  *state = *state * 1103515245u + 12345u;
  return ((float)((*state >> 8) & 0xffff) / 65536.0f) * 4.0f - 2.0f;
}

/* ---------------------------------------------------------------- tests */
TestSuite(inductor_cpu, .init = setup, .fini = teardown);

/* y = gelu(x) over (s0, 1000): one compiled kernel serves two row counts. */
Test(inductor_cpu, pointwise_gelu_dynamic_rows) {
  kl l = {0};
  int32_t s0 = S(&l, 0), n = C(&l, 1000), one = C(&l, 1), numel = MUL(&l, s0, n);
  int32_t outer[2] = {s0, n};
  K(&l, "gelu", TC_KERNEL_LOOP, 2, outer, -1);
  int32_t bx = BUF(&l, "in_x", TC_F32, TC_BUF_INPUT, numel), by = BUF(&l, "out_y", TC_F32, TC_BUF_OUTPUT, numel);
  int32_t x = LOAD(&l, -1, bx, IX(-1, n, one, -1));
  int32_t h = PRIM(&l, -1, TC_PRIM_MUL, x, CONSTF(&l, -1, 0.70710678118654752));
  int32_t e = PRIM(&l, -1, TC_PRIM_ERF, h, -1);
  int32_t p = PRIM(&l, -1, TC_PRIM_ADD, e, CONSTF(&l, -1, 1.0));
  int32_t y = PRIM(&l, -1, TC_PRIM_MUL, PRIM(&l, -1, TC_PRIM_MUL, x, p), CONSTF(&l, -1, 0.5));
  STORE(&l, -1, by, IX(-1, n, one, -1), y);
  tc_kernel_list list = LIST(&l, "gelu_test", 1);
  tc_executable *exe = compile_ok(&list);
  const char *src = source_of(exe);
  cr_assert(strstr(src, "void k_gelu_launch(void **bufs, const int64_t *syms)"), "%s", src);
  cr_assert(strstr(src, "tc_erf_f32("), "f32 erf is the inline rational approximation");
  cr_assert(strstr(src, "#pragma omp parallel for"));
  unsigned seed = 1;
  for (int rows = 3; rows <= 7; rows += 4) {
    float *in = malloc(sizeof(float) * 1000 * (size_t)rows), *out = malloc(sizeof(float) * 1000 * (size_t)rows);
    for (int i = 0; i < 1000 * rows; i++) in[i] = frand(&seed);
    int64_t syms[2] = {rows, 0};
    launch2(exe, 0, in, out, NULL, NULL, syms);
    for (int i = 0; i < 1000 * rows; i++) {
      float want = 0.5f * in[i] * (1.0f + erff(in[i] * 0.70710678f));
      cr_assert_float_eq(out[i], want, 1e-6f, "rows %d elem %d: %g vs %g", rows, i, out[i], want);
    }
    free(in);
    free(out);
  }
  exe_free(exe);
}

/* softmax over rows of length s1: three inner loops in one kernel (max; sum of exp; store). */
static void build_softmax(kl *l) {
  int32_t s0 = S(l, 0), s1 = S(l, 1), one = C(l, 1), numel = MUL(l, s0, s1);
  int32_t outer[1] = {s0};
  K(l, "softmax", TC_KERNEL_LOOP, 1, outer, s1);
  int32_t bx = BUF(l, "in_x", TC_F32, TC_BUF_INPUT, numel), by = BUF(l, "out_y", TC_F32, TC_BUF_OUTPUT, numel);
  ixspec row = IX(-1, s1, one, -1);
  int32_t m = RED(l, 0, TC_PRIM_REDUCE_MAX, LOAD(l, 0, bx, row));
  int32_t x1 = LOAD(l, 1, bx, row);
  int32_t sum = RED(l, 1, TC_PRIM_REDUCE_SUM, PRIM(l, 1, TC_PRIM_EXP, PRIM(l, 1, TC_PRIM_SUB, x1, m), -1));
  int32_t inv = PRIM(l, -1, TC_PRIM_RECIPROCAL, sum, -1);
  int32_t x2 = LOAD(l, 2, bx, row);
  int32_t y = PRIM(l, 2, TC_PRIM_MUL, PRIM(l, 2, TC_PRIM_EXP, PRIM(l, 2, TC_PRIM_SUB, x2, m), -1), inv);
  STORE(l, 2, by, row, y);
}

static void check_softmax(tc_executable *exe, int rows, int cols) {
  unsigned seed = 7;
  float *in = malloc(sizeof(float) * (size_t)rows * (size_t)cols), *out = malloc(sizeof(float) * (size_t)rows * (size_t)cols);
  for (int i = 0; i < rows * cols; i++) in[i] = frand(&seed) * 3;
  if (cols > 3) in[2] = -INFINITY; /* a -inf entry gives exactly 0 */
  int64_t syms[2] = {rows, cols};
  launch2(exe, 0, in, out, NULL, NULL, syms);
  for (int r = 0; r < rows; r++) {
    double m = -INFINITY, s = 0;
    for (int c = 0; c < cols; c++) m = fmax(m, in[r * cols + c]);
    for (int c = 0; c < cols; c++) s += exp(in[r * cols + c] - m);
    for (int c = 0; c < cols; c++) {
      double want = exp(in[r * cols + c] - m) / s;
      cr_assert(fabs(out[r * cols + c] - want) <= 1e-5 * fmax(1, want) + 1e-7, "row %d col %d: %g vs %g", r, c,
                out[r * cols + c], want);
    }
  }
  free(in);
  free(out);
}

Test(inductor_cpu, softmax_one_kernel_three_loops) {
  kl l = {0};
  build_softmax(&l);
  tc_kernel_list list = LIST(&l, "softmax_test", 2);
  tc_executable *exe = compile_ok(&list);
  const char *src = source_of(exe);
  /* The max runs on integer keys: one vector max per step. */
  cr_assert(strstr(src, "reduction(max:v"), "%s", src);
  cr_assert(strstr(src, "reduction(+:"), "%s", src);
  /* The sum runs as four quarter rows with their own accumulators, plus the leftovers. */
  cr_assert(strstr(src, "const int64_t tc_q = ") && strstr(src, "/* the leftovers */"), "%s", src);
  check_softmax(exe, 33, 1000);
  check_softmax(exe, 5, 77); /* 77 = 4 * 19 + 1: one leftover */
  check_softmax(exe, 4, 3);  /* no quarter at all: leftovers only */
  check_softmax(exe, 1, 200003); /* one long row: the two-level (parallel inner) path */
  exe_free(exe);
}

/* Runs a row kernel over rows of 1000 (s0 rows: 1200, 4.8 MB, streamed; then 5, not) with its
 * output 4 bytes past a 64-byte boundary, and compares each row with expect(in_row, want_row)
 * within rel * |want| + abs. */
static void check_rows_1000(tc_executable *exe, unsigned seed, void (*expect)(const float *, double *), double rel,
                            double abs_tol) {
  double want[1000];
  for (int rows = 1200; rows >= 5; rows -= 1195) {
    size_t count = (size_t)rows * 1000;
    float *in = malloc(sizeof(float) * count), *out = NULL;
    cr_assert(in && posix_memalign((void **)&out, 64, sizeof(float) * (count + 16)) == 0);
    for (size_t i = 0; i < count; i++) in[i] = frand(&seed) * 3;
    int64_t syms[2] = {rows, 0};
    launch2(exe, 0, in, out + 1, NULL, NULL, syms);
    for (int r = 0; r < rows; r++) {
      expect(in + (size_t)r * 1000, want);
      for (int c = 0; c < 1000; c++) {
        float got = out[1 + r * 1000 + c];
        cr_assert(fabs(got - want[c]) <= rel * fabs(want[c]) + abs_tol, "rows %d: row %d col %d: %g vs %g", rows, r, c,
                  got, want[c]);
      }
    }
    free(in);
    free(out);
  }
}

static void softmax_row(const float *x, double *want) {
  double mx = -INFINITY, s = 0;
  for (int c = 0; c < 1000; c++) mx = fmax(mx, x[c]);
  for (int c = 0; c < 1000; c++) s += exp(x[c] - mx);
  for (int c = 0; c < 1000; c++) want[c] = exp(x[c] - mx) / s;
}

static void center_row(const float *x, double *want) {
  double m = 0;
  for (int c = 0; c < 1000; c++) m += x[c];
  m /= 1000;
  for (int c = 0; c < 1000; c++) want[c] = x[c] - m;
}

/* softmax as the scheduler emits it, rows of a static 1000: exp(x - max) parked in the output by
 * loop 1, read back and scaled by loop 2. The output row lives in a scratch row and leaves once,
 * with streaming stores when the output is big (s0 dynamic: decided at run time); loop 2, a
 * division by the row's sum alone, is folded into that store (no third loop over the row). */
/* Softmax over rows of `cols` (s0 rows) as the scheduler emits it; returns the max's op. */
/* Softmax over rows of cols; with_max: each row's max goes out too (a third buffer, out_m). */
static int32_t softmax_kernel_with(kl *l, const char *name, int64_t cols, bool with_max) {
  int32_t s0 = S(l, 0), n = C(l, cols), one = C(l, 1), numel = MUL(l, s0, n);
  int32_t outer[1] = {s0};
  K(l, name, TC_KERNEL_LOOP, 1, outer, n);
  int32_t bx = BUF(l, "in_x", TC_F32, TC_BUF_INPUT, numel), by = BUF(l, "out_y", TC_F32, TC_BUF_OUTPUT, numel);
  ixspec row = IX(-1, n, one, -1);
  int32_t m = RED(l, 0, TC_PRIM_REDUCE_MAX, LOAD(l, 0, bx, row));
  int32_t e = PRIM(l, 1, TC_PRIM_EXP, PRIM(l, 1, TC_PRIM_SUB, LOAD(l, 1, bx, row), m), -1);
  int32_t sum = RED(l, 1, TC_PRIM_REDUCE_SUM, e);
  STORE(l, 1, by, row, e);
  STORE(l, 2, by, row, PRIM(l, 2, TC_PRIM_DIV, LOAD(l, 2, by, row), sum));
  if (with_max) STORE(l, -1, BUF(l, "out_m", TC_F32, TC_BUF_OUTPUT, s0), IX(-1, one, -1, -1), m);
  return m;
}

static int32_t softmax_kernel(kl *l, const char *name, int64_t cols) { return softmax_kernel_with(l, name, cols, false); }

Test(inductor_cpu, softmax_scratch_row_streaming_stores) {
  kl l = {0};
  softmax_kernel(&l, "softmax", 1000);
  tc_kernel_list list = LIST(&l, "softmax_stream_test", 1);
  tc_executable *exe = compile_ok(&list);
  const char *src = source_of(exe);
  cr_assert(strstr(src, "row_out_y[r] = "), "%s", src);
  cr_assert(strstr(src, "tc_row_store_scaled_f32(&out_y[") && !strstr(src, "row_out_y[r];"), "%s", src);
  cr_assert(strstr(src, "tc_stream_fence();"), "%s", src);
  /* exp(x - max(x)) takes the exp without its overflow select */
  cr_assert(strstr(src, "tc_exp_nonpos_f32(v") && !strstr(src, "tc_exp_f32(v"), "%s", src);
  /* 1200 rows (4.8 MB: streamed) and 5 (memcpy); the output 4 bytes past a 64-byte boundary, so
   * every row has a plain head and tail around its streamed middle. */
  check_rows_1000(exe, 3, softmax_row, 1e-5, 1e-8);
  exe_free(exe);
}

/* y = x / sum(x) shaped as softmax without its exp (x parked in the output's scratch row, the
 * division folded into the row's store): rows whose sum is above 2^125 or below 2^-125 take the
 * store's second multiply (tc_recip_scale's 2^-64 / 2^64), the others one multiply; every
 * quotient must be right to 2 ulp, subnormal and huge ones included. */
Test(inductor_cpu, scaled_store_divides_by_huge_and_tiny_sums) {
  kl l = {0};
  int32_t s0 = S(&l, 0), n = C(&l, 64), one = C(&l, 1), numel = MUL(&l, s0, n);
  int32_t outer[1] = {s0};
  K(&l, "normalize", TC_KERNEL_LOOP, 1, outer, n);
  int32_t bx = BUF(&l, "in_x", TC_F32, TC_BUF_INPUT, numel), by = BUF(&l, "out_y", TC_F32, TC_BUF_OUTPUT, numel);
  ixspec row = IX(-1, n, one, -1);
  RED(&l, 0, TC_PRIM_REDUCE_MAX, LOAD(&l, 0, bx, row)); /* a first loop, as softmax's */
  int32_t x = LOAD(&l, 1, bx, row), sum = RED(&l, 1, TC_PRIM_REDUCE_SUM, x);
  STORE(&l, 1, by, row, x);
  STORE(&l, 2, by, row, PRIM(&l, 2, TC_PRIM_DIV, LOAD(&l, 2, by, row), sum));
  tc_kernel_list list = LIST(&l, "normalize_test", 1);
  tc_executable *exe = compile_ok(&list);
  cr_assert(strstr(source_of(exe), "tc_row_store_scaled_f32(&out_y["), "%s", source_of(exe));
  enum { ROWS = 3 };
  const float scale[ROWS] = {1.0f, 1e36f, 1e-40f}; /* sums about 64, 6e37, 6e-39 */
  float xs[ROWS * 64], y[ROWS * 64];
  unsigned seed = 5;
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < 64; c++) xs[r * 64 + c] = (frand(&seed) + 2.5f) * scale[r];
  int64_t syms[2] = {ROWS, 0};
  launch2(exe, 0, xs, y, NULL, NULL, syms);
  for (int r = 0; r < ROWS; r++) {
    float s = 0;
    for (int c = 0; c < 64; c++) s += xs[r * 64 + c];
    for (int c = 0; c < 64; c++) {
      double want = (double)xs[r * 64 + c] / s;
      cr_assert(fabs(y[r * 64 + c] - want) <= 2.5e-7 * want, "row %d col %d: %g vs %g", r, c, y[r * 64 + c], want);
    }
  }
  exe_free(exe);
}

/* Softmax rows of 64 whose exps take either copy of the sum loop: rows spanning less than 86.5
 * (min - max >= -86.5: every exp(x - max) a normal number) run tc_exp_normal_f32, the rest
 * tc_exp_nonpos_f32. Row 1 (x - max = -86.4 somewhere: the fast copy's smallest results, near
 * FLT_MIN) and row 0 (small spans) must match exp; rows 2-5 must not take the fast copy: a
 * subnormal result (e^-100), -inf (0), +inf and NaN (rows of NaN, as in PyTorch). Taking the fast
 * copy for any of them wraps the exponent field: garbage, caught here. */
Test(inductor_cpu, softmax_exp_fast_copy_only_where_every_exp_is_normal) {
  kl l = {0};
  int32_t m = softmax_kernel_with(&l, "softmax64", 64, true);
  tc_kernel_list list = LIST(&l, "softmax_exp_fast_test", 1);
  tc_executable *exe = compile_ok(&list);
  const char *src = source_of(exe);
  char check[96];
  snprintf(check, sizeof check, "if (tc_exp_normal_row_f32(v%d_lo, v%d))", (int)m, (int)m);
  cr_assert(strstr(src, check) && strstr(src, "tc_exp_normal_f32(v") && strstr(src, "tc_exp_nonpos_f32(v"), "%s", src);
  enum { ROWS = 7 };
  float x[ROWS * 64], y[ROWS * 64], mx_out[ROWS];
  unsigned seed = 11;
  for (int i = 0; i < ROWS * 64; i++) x[i] = frand(&seed);
  x[64 + 5] = 2.5f, x[64 + 9] = 2.5f - 86.4f;                  /* row 1: span 86.4 */
  x[128 + 3] = 2.5f, x[128 + 40] = 2.5f - 100.0f;              /* row 2: e^-100, subnormal */
  x[192 + 17] = -INFINITY;                                     /* row 3 */
  x[256 + 30] = INFINITY;                                      /* row 4 */
  x[320 + 63] = NAN;                                           /* row 5 */
  x[384 + 20] = -NAN;                                          /* row 6: a NaN with its sign set */
  int64_t syms[2] = {ROWS, 0};
  launch2(exe, 0, x, y, mx_out, NULL, syms);
  for (int r = 0; r < ROWS; r++) {
    double mx = -INFINITY, s = 0;
    for (int c = 0; c < 64; c++) mx = isnan(mx) || isnan(x[r * 64 + c]) ? NAN : fmax(mx, x[r * 64 + c]);
    /* the max itself: NaN for rows 5 and 6 (either sign: its key is above +inf's or below -inf's) */
    cr_assert(isnan(mx) ? isnan(mx_out[r]) : mx_out[r] == (float)mx, "row %d: max %g, want %g", r, mx_out[r], mx);
    for (int c = 0; c < 64; c++) s += exp((double)x[r * 64 + c] - mx);
    for (int c = 0; c < 64; c++) {
      float got = y[r * 64 + c];
      if (r >= 4) { /* +inf or NaN in the row: the sum is NaN (inf - inf), so is every result */
        cr_assert(isnan(got), "row %d col %d: %g", r, c, got);
        continue;
      }
      double want = exp((double)x[r * 64 + c] - mx) / s;
      cr_assert(fabs(got - want) <= 1e-5 * want + 3e-45, "row %d col %d: %g vs %g", r, c, got, want);
    }
  }
  cr_assert(y[128 + 40] > 0 && y[128 + 40] < 1.2e-38f, "e^-100 / sum: %g", y[128 + 40]);
  exe_free(exe);
}

/* exp(x - m) with m the max of another row (w): x - m may be positive, so the exp keeps its
 * overflow select (tc_exp_f32), and x = 1e10 and +inf over a row of w = 0 give +inf as PyTorch
 * does (without the select: -inf and NaN). */
Test(inductor_cpu, exp_minus_another_rows_max_keeps_the_overflow_select) {
  kl l = {0};
  int32_t s0 = S(&l, 0), n = C(&l, 8), one = C(&l, 1), numel = MUL(&l, s0, n);
  int32_t outer[1] = {s0};
  K(&l, "exp_other_max", TC_KERNEL_LOOP, 1, outer, n);
  int32_t bx = BUF(&l, "in_x", TC_F32, TC_BUF_INPUT, numel), bw = BUF(&l, "in_w", TC_F32, TC_BUF_INPUT, numel),
          by = BUF(&l, "out_y", TC_F32, TC_BUF_OUTPUT, numel);
  ixspec row = IX(-1, n, one, -1);
  int32_t m = RED(&l, 0, TC_PRIM_REDUCE_MAX, LOAD(&l, 0, bw, row));
  STORE(&l, 1, by, row, PRIM(&l, 1, TC_PRIM_EXP, PRIM(&l, 1, TC_PRIM_SUB, LOAD(&l, 1, bx, row), m), -1));
  tc_kernel_list list = LIST(&l, "exp_other_max_test", 1);
  tc_executable *exe = compile_ok(&list);
  const char *src = source_of(exe);
  cr_assert(strstr(src, "tc_exp_f32(v") && !strstr(src, "tc_exp_nonpos_f32(v"), "%s", src);
  float x[16], w[16] = {0}, y[16];
  for (int i = 0; i < 16; i++) x[i] = i == 3 ? 1e10f : i == 12 ? INFINITY : (float)i * 0.5f - 4.0f;
  int64_t syms[2] = {2, 0};
  launch2(exe, 0, x, w, y, NULL, syms);
  for (int i = 0; i < 16; i++) {
    bool big = i == 3 || i == 12;
    float want = big ? INFINITY : expf(x[i]);
    cr_assert(big ? isinf(y[i]) && y[i] > 0 : fabsf(y[i] - want) <= 1e-6f * want, "%d: %g vs %g", i, y[i], want);
  }
  exe_free(exe);
}

/* y = x - mean(x) over rows of 1000, as layer_norm's last pass: the output is written only by
 * the last inner loop, which then runs in blocks of ICPU_ROW_BLOCK, each block streamed out
 * right after it is computed (the last block short: 1000 = 3 * 256 + 232). */
/* A kernel `name` over rows of 1000 of in_x (s0 of them) writing out_y, whose loop 0 sums each row:
 * returns the mean (a per-row value) and sets the buffers and the row's index. */
static int32_t row_mean_kernel(kl *l, const char *name, int32_t *bx, int32_t *by, ixspec *row) {
  int32_t s0 = S(l, 0), n = C(l, 1000), one = C(l, 1), numel = MUL(l, s0, n);
  int32_t outer[1] = {s0};
  K(l, name, TC_KERNEL_LOOP, 1, outer, n);
  *bx = BUF(l, "in_x", TC_F32, TC_BUF_INPUT, numel);
  *by = BUF(l, "out_y", TC_F32, TC_BUF_OUTPUT, numel);
  *row = IX(-1, n, one, -1);
  int32_t sum = RED(l, 0, TC_PRIM_REDUCE_SUM, LOAD(l, 0, *bx, *row));
  return PRIM(l, -1, TC_PRIM_DIV, sum, CONSTF(l, -1, 1000.0));
}

Test(inductor_cpu, last_loop_streams_its_row_per_block) {
  kl l = {0};
  int32_t bx, by;
  ixspec row;
  int32_t mean = row_mean_kernel(&l, "center", &bx, &by, &row);
  STORE(&l, 1, by, row, PRIM(&l, 1, TC_PRIM_SUB, LOAD(&l, 1, bx, row), mean));
  tc_kernel_list list = LIST(&l, "center_test", 1);
  tc_executable *exe = compile_ok(&list);
  const char *src = source_of(exe);
  cr_assert(strstr(src, "tc_rb += 256"), "%s", src);
  cr_assert(strstr(src, "+ tc_rb], row_out_y + tc_rb, tc_re - tc_rb, stream_out_y);"), "%s", src);
  cr_assert(!strstr(src, "row_out_y, 1000, stream_out_y"), "the row also goes out whole:\n%s", src);
  check_rows_1000(exe, 5, center_row, 0, 1e-5);
  exe_free(exe);
}

static void erf_tail_row(const float *x, double *want) {
  double m = 0;
  for (int c = 0; c < 1000; c++) m += x[c];
  m /= 1000;
  for (int c = 0; c < 1000; c++) want[c] = erf((x[c] - m) * 0.5) * 2 + (x[c] - m);
}

/* y = erf(d * 0.5) * 2 + d, d = x - mean(x), as ln_gelu's last pass: the blocked last loop
 * splits before its erf where one value crosses (d: the product d * 0.5 and d itself both need
 * it, so the cut is before the product), parked in the output's scratch row, then the erf (with
 * the product it needs) gets a loop of its own; each block touches its share of the row after
 * next instead of slices before every pass. A split that loses or misplaces a value fails the
 * comparison. */
Test(inductor_cpu, last_loop_splits_before_its_erf) {
  kl l = {0};
  int32_t bx, by;
  ixspec row;
  int32_t mean = row_mean_kernel(&l, "erf_tail", &bx, &by, &row);
  int32_t half = CONSTF(&l, -1, 0.5), two = CONSTF(&l, -1, 2.0);
  int32_t d = PRIM(&l, 1, TC_PRIM_SUB, LOAD(&l, 1, bx, row), mean);
  int32_t e = PRIM(&l, 1, TC_PRIM_ERF, PRIM(&l, 1, TC_PRIM_MUL, d, half), -1);
  STORE(&l, 1, by, row, PRIM(&l, 1, TC_PRIM_ADD, PRIM(&l, 1, TC_PRIM_MUL, e, two), d));
  tc_kernel_list list = LIST(&l, "erf_tail_test", 1);
  tc_executable *exe = compile_ok(&list);
  const char *src = source_of(exe);
  char park[64], take[64];
  snprintf(park, sizeof park, "row_out_y[r] = v%d; /* the next loops", (int)d);
  snprintf(take, sizeof take, "const float v%d = row_out_y[r];", (int)d);
  cr_assert(strstr(src, park) && strstr(src, take), "no split at v%d:\n%s", (int)d, src);
  /* and the erf alone in a loop of its own, its values handed over in a block-sized array */
  char part[64];
  snprintf(part, sizeof part, "tc_part[r - tc_rb] = v%d;", (int)e);
  cr_assert(strstr(src, part) && strstr(src, "= tc_part[r - tc_rb];"), "%s", src);
  cr_assert(strstr(src, "prefetch this block of a later row of in_x"), "%s", src);
  cr_assert(!strstr(src, "prefetch a later row"), "slices before the passes as well:\n%s", src);
  check_rows_1000(exe, 7, erf_tail_row, 1e-5, 1e-5);
  exe_free(exe);
}

/* y = gelu(a @ b + bias) with b given transposed (strides k: 1, n: K), c = y in place. */
/* compile_ok with cpu.blas set (a COMPILE option). */
static tc_executable *compile_blas(const tc_kernel_list *list, const char *blas) {
  tc_option opt = {.struct_size = sizeof opt, .name = "cpu.blas", .value = blas, .set = true};
  tc_compile_args a = {.struct_size = sizeof a, .ctx = ctx, .kernels = list, .n_options = 1, .options = &opt,
                       .option_size = sizeof opt};
  const char *msg;
  cr_assert_eq(tck_test_host_take(th, api.compile(&a), &msg), TC_OK, "compile (cpu.blas=%s): %s", blas, msg);
  cr_assert(a.exe);
  return a.exe;
}

/* y = gelu(a @ w^T + bias) with cpu.blas = blas; `call` must be in the source. */
static void check_bias_gelu(const char *blas, const char *call) {
  kl l = {0};
  tc_kernel_list list = matmul_bias_gelu_list(&l);
  tc_executable *exe = compile_blas(&list, blas);
  cr_assert(strstr(source_of(exe), call), "cpu.blas=%s: no %s", blas, call);
  int rows = 37;
  unsigned seed = 3;
  float *a = malloc(sizeof(float) * (size_t)rows * 40), w[48 * 40], bvals[48], *out = malloc(sizeof(float) * (size_t)rows * 48);
  for (int i = 0; i < rows * 40; i++) a[i] = frand(&seed);
  for (int i = 0; i < 48 * 40; i++) w[i] = frand(&seed) * 0.2f;
  for (int i = 0; i < 48; i++) bvals[i] = frand(&seed);
  int64_t syms[2] = {rows, 0};
  launch2(exe, 0, a, w, bvals, out, syms);
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < 48; j++) {
      double acc_v = bvals[j];
      for (int q = 0; q < 40; q++) acc_v += (double)a[i * 40 + q] * w[j * 40 + q];
      double want = 0.5 * acc_v * (1 + erf(acc_v / sqrt(2.0)));
      cr_assert(fabs(out[i * 48 + j] - want) < 1e-4, "(%d,%d): %g vs %g", i, j, out[i * 48 + j], want);
    }
  free(a);
  free(out);
  exe_free(exe);
}

/* The same kernel through OpenBLAS and as the generated GEMM. */
Test(inductor_cpu, matmul_bias_gelu_epilogue) {
  check_bias_gelu("openblas", "cblas_sgemm(");
  check_bias_gelu("generated", "tc_gemm_tile_f32(");
}

/* Indexing: out[i] = x[idx[i]] (out of range reads 0); argmax over rows; iota; Philox. */
Test(inductor_cpu, gather_argmax_iota_random) {
  kl l = {0};
  int32_t n = C(&l, 6), one = C(&l, 1), cols = C(&l, 5), zero = C(&l, 0), off = C(&l, 100);
  int32_t outer[1] = {n};
  K(&l, "gather", TC_KERNEL_LOOP, 1, outer, -1);
  int32_t bx = BUF(&l, "in_x", TC_F32, TC_BUF_INPUT, cols), bi = BUF(&l, "in_idx", TC_I64, TC_BUF_INPUT, n);
  int32_t by = BUF(&l, "out_y", TC_F32, TC_BUF_OUTPUT, n);
  int32_t iv = OP(&l, TC_KOP_LOAD, TC_I64, -1, 0, -1, -1, -1, bi, IX(-1, one, -1, -1));
  ixspec g = IX(-1, -1, -1, -1);
  g.indirect = iv;
  g.indirect_stride = one;
  int32_t xv = LOAD(&l, -1, bx, g);
  STORE(&l, -1, by, IX(-1, one, -1, -1), xv);
  /* argmax over (6 rows, 5 cols) -> i64, plus iota and random into separate outputs */
  K(&l, "argmax", TC_KERNEL_LOOP, 1, outer, cols);
  int32_t bm = BUF(&l, "in_m", TC_F32, TC_BUF_INPUT, MUL(&l, n, cols)), bo = BUF(&l, "out_arg", TC_I64, TC_BUF_OUTPUT, n);
  int32_t br = BUF(&l, "out_rand", TC_F32, TC_BUF_OUTPUT, n), bio = BUF(&l, "out_iota", TC_I64, TC_BUF_OUTPUT, n);
  int32_t mv = LOAD(&l, 0, bm, IX(-1, cols, one, -1));
  int32_t am = OP(&l, TC_KOP_REDUCE, TC_I64, 0, TC_PRIM_ARGMAX, mv, -1, -1, -1, NOIX);
  OP(&l, TC_KOP_STORE, TC_I64, -1, 0, am, -1, -1, bo, IX(-1, one, -1, -1));
  int32_t rv = OP(&l, TC_KOP_RANDOM, TC_F32, -1, 0, -1, -1, -1, -1, IX(off, one, -1, -1));
  l.ops[1][rv].iconst = 42;
  STORE(&l, -1, br, IX(-1, one, -1, -1), rv);
  int32_t io = OP(&l, TC_KOP_INDEX, TC_I64, -1, 0, -1, -1, -1, -1, IX(zero, one, -1, -1));
  OP(&l, TC_KOP_STORE, TC_I64, -1, 0, io, -1, -1, bio, IX(-1, one, -1, -1));
  tc_kernel_list list = LIST(&l, "index_test", 0);
  tc_executable *exe = compile_ok(&list);
  float x[5] = {10, 11, 12, 13, 14}, y[6];
  int64_t idx[6] = {4, 0, -1, 5, 2, 99};
  launch2(exe, 0, x, idx, y, NULL, NULL);
  float want[6] = {14, 10, 0, 0, 12, 0};
  for (int i = 0; i < 6; i++) cr_assert_eq(y[i], want[i], "gather %d: %g", i, y[i]);
  float m[30];
  for (int i = 0; i < 30; i++) m[i] = (float)((i * 7) % 11);
  m[5 * 3 + 2] = NAN; /* row 3: NaN counts as the maximum */
  int64_t arg[6], iota[6];
  float rnd[6];
  void *ptrs[4] = {m, arg, rnd, iota};
  const char *msg;
  cr_assert_eq(launch(exe, 1, ptrs, 4, NULL, 0, &msg), TC_OK, "launch: %s", msg);
  for (int r = 0; r < 6; r++) {
    int best = 0;
    for (int c = 1; c < 5; c++)
      if (m[r * 5 + c] > m[r * 5 + best]) best = c;
    if (r == 3) best = 2;
    cr_assert_eq(arg[r], best, "argmax row %d: %lld", r, (long long)arg[r]);
    cr_assert_eq(iota[r], r);
    cr_assert(rnd[r] >= 0 && rnd[r] < 1);
  }
  /* Philox4x32-10 (key 42, counter 100): an independent computation of word 0. */
  uint32_t c0 = 100, c1 = 0, c2 = 0, c3 = 0, k0 = 42, k1 = 0;
  for (int i = 0; i < 10; i++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1; c3 = (uint32_t)p0; c0 = n0; c2 = n2;
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  cr_assert_eq(rnd[0], (float)((double)(c0 >> 8) / 16777216.0));
  exe_free(exe);
}

/* A second context compiling the same list is served from disk without running cc; a
 * corrupted entry is discarded and rebuilt. */
Test(inductor_cpu, disk_cache_hit_and_corruption) {
  kl l = {0};
  build_softmax(&l);
  tc_kernel_list list = LIST(&l, "cache_test", 2);
  tc_executable *exe = compile_ok(&list);
  cr_assert(strstr(tck_test_host_log(th), "miss"), "%s", tck_test_host_log(th));
  exe_free(exe);
  reinit("2", NULL); /* a second context: nothing in memory */
  tck_test_host_log_clear(th);
  exe = compile_ok(&list);
  cr_assert(strstr(tck_test_host_log(th), "hit"), "%s", tck_test_host_log(th));
  cr_assert_null(strstr(tck_test_host_log(th), "miss"), "%s", tck_test_host_log(th));
  cr_assert(from_cache(exe), "executable_info says the second context compiled");
  check_softmax(exe, 5, 77);
  exe_free(exe);
  /* Corrupt the cached object: the next compile must notice and rebuild. */
  char cmd[600];
  snprintf(cmd, sizeof cmd, "for f in '%s'/*.so; do printf 'garbage' | dd of=\"$f\" bs=1 seek=100 conv=notrunc 2>/dev/null; done",
           cache_dir);
  cr_assert_eq(system(cmd), 0);
  tck_test_host_log_clear(th);
  exe = compile_ok(&list);
  cr_assert(strstr(tck_test_host_log(th), "discard"), "%s", tck_test_host_log(th));
  cr_assert(strstr(tck_test_host_log(th), "miss"), "%s", tck_test_host_log(th));
  check_softmax(exe, 5, 77);
  exe_free(exe);
}

static int count_lines(const char *path, const char *needle) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[4096];
  int n = 0;
  while (fgets(line, sizeof line, f)) n += !needle || strstr(line, needle) != NULL;
  fclose(f);
  return n;
}

/* A warm start runs no compiler at all: not to build (the object is cached) and not to ask its
 * version for the cache key (remembered per compiler executable). A compiler that changes on
 * disk is asked again. The compiler here is a script that logs each run and calls cc. */
Test(inductor_cpu, warm_start_runs_no_compiler) {
  char script[400], runs[400];
  snprintf(script, sizeof script, "%s/logging-cc.sh", cache_dir);
  snprintf(runs, sizeof runs, "%s/cc-runs.txt", cache_dir);
  FILE *f = fopen(script, "w");
  cr_assert(f);
  fprintf(f, "#!/bin/sh\necho \"$@\" >> '%s'\nexec cc \"$@\"\n", runs);
  fclose(f);
  cr_assert_eq(chmod(script, 0755), 0);
  reinit("2", script);
  kl l = {0};
  build_softmax(&l);
  tc_kernel_list list = LIST(&l, "warm_start_test", 2);
  tc_executable *exe = compile_ok(&list);
  exe_free(exe);
  int cold = count_lines(runs, NULL);
  cr_assert(cold >= 2 && count_lines(runs, "--version") == 1, "cold start: %d compiler runs", cold);
  reinit("2", script); /* a second context, the same compiler */
  tck_test_host_log_clear(th);
  exe = compile_ok(&list);
  cr_assert(strstr(tck_test_host_log(th), "hit"), "%s", tck_test_host_log(th));
  check_softmax(exe, 5, 77);
  exe_free(exe);
  cr_assert_eq(count_lines(runs, NULL), cold, "the warm start ran the compiler");
  /* the compiler changes on disk: asked for its version again, once */
  struct timespec later[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = time(NULL) + 5}};
  cr_assert_eq(utimensat(AT_FDCWD, script, later, 0), 0);
  reinit("2", script);
  exe = compile_ok(&list);
  exe_free(exe);
  cr_assert_eq(count_lines(runs, "--version"), 2, "a changed compiler is asked its version again");
}

/* TC_LOGS=profile: every launch is timed, one line per kernel when the executable is freed. */
Test(inductor_cpu, profile_reports_each_kernel) {
  reinit("2", NULL); /* TC_LOGS=profile is read at init */
  kl l = {0};
  build_softmax(&l);
  tc_kernel_list list = LIST(&l, "profile_test", 2);
  tc_executable *exe = compile_ok(&list);
  for (int i = 0; i < 3; i++) check_softmax(exe, 5, 77);
  tck_test_host_log_clear(th);
  exe_free(exe);
  const char *at = strstr(tck_test_host_log(th), "profile_test / ");
  unsigned long long launches = 0;
  double mean = -1;
  cr_assert(at && sscanf(strchr(at, ':') + 1, " %llu launches, mean %lf us", &launches, &mean) == 2, "%s", tck_test_host_log(th));
  cr_assert(launches == 3 && mean >= 0, "%s", tck_test_host_log(th));
}

/* A kernel list the kit's validator rejects: an error naming the kernel and the op, no crash. */
Test(inductor_cpu, bad_descriptor_is_an_error_not_a_crash) {
  kl l = {0};
  int32_t n = C(&l, 4), one = C(&l, 1);
  int32_t outer[1] = {n};
  K(&l, "bad_kernel", TC_KERNEL_LOOP, 1, outer, -1);
  int32_t by = BUF(&l, "out_y", TC_F32, TC_BUF_OUTPUT, n);
  STORE(&l, -1, by, IX(-1, one, -1, -1), 3); /* operand is a later op */
  CONSTF(&l, -1, 1);
  tc_kernel_list list = LIST(&l, "bad_test", 0);
  tc_executable *exe = NULL;
  const char *msg;
  cr_assert_eq(compile(&list, &exe, &msg), TC_ERR_INVALID_ARGUMENT, "%s", msg);
  cr_assert_null(exe);
  cr_assert(strstr(msg, "bad_kernel") && strstr(msg, "not an earlier op"), "%s", msg);
}

/* A second kernel whose index has the wrong number of vars and a buffer out of range: the
 * message names the failing kernel (not the good one before it). */
Test(inductor_cpu, validation_failure_names_the_kernel) {
  kl l = {0};
  int32_t n = C(&l, 4), one = C(&l, 1);
  int32_t outer[1] = {n};
  K(&l, "good_kernel", TC_KERNEL_LOOP, 1, outer, -1);
  int32_t by = BUF(&l, "out_y", TC_F32, TC_BUF_OUTPUT, n);
  STORE(&l, -1, by, IX(-1, one, -1, -1), CONSTF(&l, -1, 1));
  K(&l, "broken_kernel", TC_KERNEL_LOOP, 1, outer, -1);
  BUF(&l, "out_z", TC_F32, TC_BUF_OUTPUT, n);
  STORE(&l, -1, 5, IX(-1, one, -1, -1), CONSTF(&l, -1, 2)); /* buffer 5 of 1 */
  tc_kernel_list list = LIST(&l, "validate_test", 0);
  tc_executable *exe = NULL;
  const char *msg;
  cr_assert_eq(compile(&list, &exe, &msg), TC_ERR_INVALID_ARGUMENT, "%s", msg);
  cr_assert(strstr(msg, "broken_kernel") && !strstr(msg, "good_kernel"), "%s", msg);
  cr_assert(strstr(msg, "inductor-cpu: validate_test: "), "%s", msg);
}

/* Options are data: the table declares them; CONTEXT options reach init (its "init" log line). */
Test(inductor_cpu, options_reach_init) {
  cr_assert_str_eq(api.option_prefix, "cpu");
  const tc_option_decl *threads = tck_option_decl_find(api.options, api.n_options, api.option_size, "cpu.threads");
  const tc_option_decl *cc = tck_option_decl_find(api.options, api.n_options, api.option_size, "cpu.cc");
  cr_assert(threads && cc);
  cr_assert(threads->type == TC_OPTION_INT && threads->scope == TC_OPTION_CONTEXT && threads->min == 0 &&
            threads->max == 1024 && strcmp(threads->default_value, "0") == 0);
  cr_assert(cc->type == TC_OPTION_STRING && cc->scope == TC_OPTION_CONTEXT && cc->default_value == NULL);
  tck_test_host_log_clear(th);
  reinit("3", NULL);
  cr_assert(strstr(tck_test_host_log(th), "[init] inductor-cpu: context with 3 threads, compiler "),
            "%s", tck_test_host_log(th));
  /* the default (0): one thread per online core */
  tck_test_host_log_clear(th);
  reinit(NULL, NULL);
  char want[96];
  snprintf(want, sizeof want, "context with %ld threads", sysconf(_SC_NPROCESSORS_ONLN));
  cr_assert(strstr(tck_test_host_log(th), want), "%s", tck_test_host_log(th));
  /* the threads reach the generated code */
  kl l = {0};
  build_softmax(&l);
  tc_kernel_list list = LIST(&l, "threads_test", 2);
  tc_executable *exe = compile_ok(&list);
  check_softmax(exe, 1, 200003);
  exe_free(exe);
}

/* ---------------------------------------------------------------- the generated GEMM
 * f32 matmul kernels as codegen_gemm.c writes them (cpu.blas=generated), against a naive
 * reference that sums each element as the generated GEMM promises to: one fmaf chain in the order
 * of k from 0. The results must agree bit for bit (NaN with NaN), so a micro-kernel that drops,
 * repeats or reorders a product, or a tile written to the wrong place, fails. Shapes are odd for
 * the tile (12 x 32 with AVX-512, 6 x 16 with AVX2), K spans several blocks of 256, N several
 * blocks of 512, operands are transposed or strided as the scheduler hands them (attention reads
 * q and k in place in the qkv projection), and the epilogue adds a bias, takes a ReLU and adds a
 * residual on each tile. */
typedef struct gemm_case {
  int64_t b2, b, m, n, k; /* b2 = 0: one batch level */
  bool a_t, b_t;          /* A stored as (k, m), B as (n, k) */
  int64_t c_pad;          /* extra elements at the end of each row of C (of each column, c_t) */
  bool c_t;               /* C stored as (n, m): a column stride that is not 1 */
  bool epilogue;          /* bias, relu, residual; else the bare product */
} gemm_case;

/* C's layout in an entry: its leading dimension, element strides and size. */
static int64_t gemm_ldc(const gemm_case *gc) { return (gc->c_t ? gc->m : gc->n) + gc->c_pad; }
static int64_t gemm_csm(const gemm_case *gc) { return gc->c_t ? 1 : gemm_ldc(gc); }
static int64_t gemm_csn(const gemm_case *gc) { return gc->c_t ? gemm_ldc(gc) : 1; }
static int64_t gemm_per_c(const gemm_case *gc) { return (gc->c_t ? gc->n : gc->m) * gemm_ldc(gc); }

/* Each operand: 3 elements of padding, then the batch entries one after another (b2-major). */
static tc_kernel_list gemm_list(kl *l, const gemm_case *gc, bool symbolic_m) {
  const bool two = gc->b2 > 0;
  const int64_t nb2 = two ? gc->b2 : 1;
  int32_t M = symbolic_m ? S(l, 0) : C(l, gc->m), N = C(l, gc->n), Kd = C(l, gc->k), one = C(l, 1);
  int32_t per_a = C(l, gc->m * gc->k), per_b = C(l, gc->k * gc->n), per_c = C(l, gemm_per_c(gc)), per_r = C(l, gc->m * gc->n);
  int32_t csm = C(l, gemm_csm(gc)), csn = C(l, gemm_csn(gc));
  int32_t lead = C(l, 3);
  int32_t outer[4], n_outer = 0;
  if (two) outer[n_outer++] = C(l, gc->b2);
  outer[n_outer++] = C(l, gc->b);
  outer[n_outer++] = M;
  outer[n_outer++] = N;
  K(l, "matmul_add_max_add", TC_KERNEL_MATMUL, n_outer, outer, -1);
  int32_t total_a = C(l, 3 + nb2 * gc->b * gc->m * gc->k), total_b = C(l, 3 + nb2 * gc->b * gc->k * gc->n);
  int32_t total_c = C(l, 3 + nb2 * gc->b * gemm_per_c(gc));
  int32_t ba = BUF(l, "in_a", TC_F32, TC_BUF_INPUT, total_a), bb = BUF(l, "in_b", TC_F32, TC_BUF_INPUT, total_b);
  int32_t by = BUF(l, "out_y", TC_F32, gc->epilogue ? TC_BUF_INOUT : TC_BUF_OUTPUT, total_c);
  tc_matmul_desc *mm = MM(l);
  *mm = (tc_matmul_desc){.struct_size = sizeof(tc_matmul_desc), .a = ba, .b = bb, .c = by, .batch = outer[n_outer - 3],
                         .m = M, .n = N, .k = Kd, .a_offset = lead, .a_stride_batch = per_a,
                         .a_stride_m = gc->a_t ? one : Kd, .a_stride_k = gc->a_t ? M : one, .b_offset = lead,
                         .b_stride_batch = per_b, .b_stride_k = gc->b_t ? one : N, .b_stride_n = gc->b_t ? Kd : one,
                         .c_offset = lead, .c_stride_batch = per_c, .c_stride_m = csm, .c_stride_n = csn,
                         .batch_levels = two ? 2 : 1, .batch2 = two ? outer[0] : -1,
                         .a_stride_batch2 = two ? MUL(l, C(l, gc->b), per_a) : -1,
                         .b_stride_batch2 = two ? MUL(l, C(l, gc->b), per_b) : -1,
                         .c_stride_batch2 = two ? MUL(l, C(l, gc->b), per_c) : -1};
  if (gc->epilogue) {
    int32_t bias = BUF(l, "in_bias", TC_F32, TC_BUF_INPUT, N), res = BUF(l, "in_res", TC_F32, TC_BUF_INPUT, C(l, nb2 * gc->b * gc->m * gc->n));
    int32_t acc = OP(l, TC_KOP_ACC, TC_F32, -1, 0, -1, -1, -1, -1, NOIX);
    /* vars: (b2,) b, m, n; IX takes three strides, a fourth is set by hand below */
    ixspec bias_ix = two ? IX(-1, -1, -1, -1) : IX(-1, -1, -1, one);
    int32_t bv = LOAD(l, -1, bias, bias_ix);
    int32_t relu = PRIM(l, -1, TC_PRIM_MAX, PRIM(l, -1, TC_PRIM_ADD, acc, bv), CONSTF(l, -1, 0));
    ixspec res_ix = two ? IX(-1, MUL(l, C(l, gc->b), per_r), per_r, C(l, gc->n)) : IX(-1, per_r, C(l, gc->n), one);
    int32_t rv = LOAD(l, -1, res, res_ix);
    ixspec y_ix = two ? IX(lead, mm->c_stride_batch2, per_c, csm) : IX(lead, per_c, csm, csn);
    int32_t st = STORE(l, -1, by, y_ix, PRIM(l, -1, TC_PRIM_ADD, relu, rv));
    if (two) { /* the n var's stride: vars are (b2, b, m, n, inner) */
      l->strides[l->nk - 1][bv][3] = one;
      l->strides[l->nk - 1][rv][3] = one;
      l->strides[l->nk - 1][st][3] = csn;
    }
  }
  return LIST(l, "gemm_test", symbolic_m ? 1 : 0);
}

static uint32_t f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* Compiles gc with cpu.blas=generated, runs it on seeded values (with a NaN and an Inf planted
 * in A when asked) and compares the whole output buffer with the reference: C's elements, and
 * the padding around and between them untouched. */
static void gemm_check(const gemm_case *gc, bool symbolic_m, bool specials) {
  kl l = {0};
  tc_kernel_list list = gemm_list(&l, gc, symbolic_m);
  tc_executable *exe = compile_blas(&list, "generated");
  const char *msg;
  const char *src = source_of(exe);
  cr_assert(strstr(src, "tc_gemm_tile_f32(") && !strstr(src, "cblas_sgemm("), "the generated GEMM, not OpenBLAS");
  const int64_t nb2 = gc->b2 > 0 ? gc->b2 : 1, ne = nb2 * gc->b;
  const int64_t na = 3 + ne * gc->m * gc->k, nbv = 3 + ne * gc->k * gc->n, nc = 3 + ne * gemm_per_c(gc), nr = ne * gc->m * gc->n;
  float *a = malloc(sizeof(float) * (size_t)na), *b = malloc(sizeof(float) * (size_t)nbv);
  float *y = malloc(sizeof(float) * (size_t)nc), *want = malloc(sizeof(float) * (size_t)nc);
  float *res = malloc(sizeof(float) * (size_t)(nr > 0 ? nr : 1)), *bias = malloc(sizeof(float) * (size_t)(gc->n > 0 ? gc->n : 1));
  cr_assert(a && b && y && want && res && bias);
  unsigned seed = (unsigned)(gc->m * 7919 + gc->n * 31 + gc->k);
  for (int64_t i = 0; i < na; i++) a[i] = frand(&seed);
  for (int64_t i = 0; i < nbv; i++) b[i] = frand(&seed);
  for (int64_t i = 0; i < nr; i++) res[i] = frand(&seed);
  for (int64_t i = 0; i < gc->n; i++) bias[i] = frand(&seed);
  const float sentinel = 12345.0f;
  for (int64_t i = 0; i < nc; i++) y[i] = want[i] = sentinel;
#define A_AT(e, i, q) a[3 + (e) * gc->m * gc->k + (gc->a_t ? (q) * gc->m + (i) : (i) * gc->k + (q))]
#define B_AT(e, q, j) b[3 + (e) * gc->k * gc->n + (gc->b_t ? (j) * gc->k + (q) : (q) * gc->n + (j))]
  if (specials && gc->m > 1 && gc->k > 1) {
    A_AT(ne - 1, gc->m - 1, gc->k / 2) = NAN;     /* a row of NaN */
    A_AT(0, 0, gc->k - 1) = INFINITY;             /* +-Inf (or NaN where B's entry is 0) */
  }
  int64_t syms[1] = {gc->m};
  void *ptrs[5] = {a, b, y, bias, res};
  cr_assert_eq(launch(exe, 0, ptrs, gc->epilogue ? 5 : 3, syms, symbolic_m ? 1 : 0, &msg), TC_OK, "launch: %s", msg);
  for (int64_t e = 0; e < ne; e++)
    for (int64_t i = 0; i < gc->m; i++)
      for (int64_t j = 0; j < gc->n; j++) {
        float v = 0;
        for (int64_t q = 0; q < gc->k; q++) v = fmaf(A_AT(e, i, q), B_AT(e, q, j), v);
        if (gc->epilogue) {
          v = v + bias[j];
          v = v != v ? v : v > 0 ? v : 0.0f;
          v = v + res[(e * gc->m + i) * gc->n + j];
        }
        want[3 + e * gemm_per_c(gc) + i * gemm_csm(gc) + j * gemm_csn(gc)] = v;
      }
#undef A_AT
#undef B_AT
  for (int64_t x = 0; x < nc; x++)
    cr_assert(f32_bits(y[x]) == f32_bits(want[x]) || (y[x] != y[x] && want[x] != want[x]),
              "%lldx%lldx%lldx%lld, element %lld of the output buffer: got %a, want %a%s", (long long)ne,
              (long long)gc->m, (long long)gc->n, (long long)gc->k, (long long)x, y[x], want[x],
              want[x] == sentinel ? " (padding: must stay)" : "");
  free(a);
  free(b);
  free(y);
  free(want);
  free(res);
  free(bias);
  exe_free(exe);
}

Test(inductor_cpu, generated_gemm_odd_shapes_match_the_reference) {
  static const gemm_case cases[] = {
      {.b = 1, .m = 1, .n = 1, .k = 1, .epilogue = true},
      {.b = 1, .m = 1, .n = 37, .k = 19, .epilogue = true},            /* one row: B read in place, a partial panel */
      {.b = 1, .m = 3, .n = 600, .k = 17, .epilogue = true},           /* a few rows over two blocks of columns */
      {.b = 1, .m = 5, .n = 33, .k = 0, .epilogue = true},             /* k = 0: the epilogue of zeros */
      {.b = 1, .m = 13, .n = 31, .k = 7, .c_pad = 5, .epilogue = true},
      {.b = 2, .m = 29, .n = 70, .k = 300, .epilogue = true},          /* two blocks of K: partial sums in C */
      {.b = 1, .m = 25, .n = 530, .k = 520, .c_pad = 3},               /* no epilogue, three blocks of K */
      {.b = 1, .m = 3203, .n = 33, .k = 5, .epilogue = true},          /* more rows than a block of A */
      {.b = 3, .m = 17, .n = 45, .k = 33, .a_t = true, .epilogue = true},
      {.b = 2, .m = 14, .n = 50, .k = 65, .b_t = true, .epilogue = true},
      {.b = 1, .m = 1, .n = 40, .k = 9, .b_t = true},                  /* one row, B transposed: packed */
      {.b = 1, .m = 1, .n = 1000, .k = 600, .epilogue = true},         /* one wide row: every chunk, K in blocks */
      {.b = 1, .m = 1, .n = 300, .k = 300, .c_t = true, .c_pad = 2, .epilogue = true}, /* one row, C strided */
      {.b = 2, .m = 27, .n = 45, .k = 270, .c_t = true, .c_pad = 2},   /* partial sums gathered and scattered */
      {.b = 1, .m = 26, .n = 70, .k = 12, .c_t = true, .epilogue = true},
      {.b2 = 2, .b = 3, .m = 20, .n = 20, .k = 8, .b_t = true, .epilogue = true}, /* attention's q·kᵀ */
      {.b2 = 2, .b = 3, .m = 20, .n = 8, .k = 20, .c_pad = 40, .epilogue = true}, /* its a·v into merged heads */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) gemm_check(&cases[i], false, i % 2 == 0);
  /* M a symbol (dynamic shapes), bound at launch */
  gemm_check(&(gemm_case){.b = 2, .m = 37, .n = 65, .k = 40, .epilogue = true}, true, true);
}

/* The GEMM's runtime is built into the plugin once per vector width (runtime/gemm_runtime.c); a
 * unit gets the one for the width it was compiled for, not the host's: here a compiler that
 * turns vector FMA off makes units of width 4 on any x86 host, and they run on the generic
 * runtime with the same bits as the reference. */
Test(inductor_cpu, generated_gemm_unit_of_another_width_gets_that_widths_runtime) {
#if defined(__x86_64__)
  char script[400];
  snprintf(script, sizeof script, "%s/narrow-cc.sh", cache_dir);
  FILE *f = fopen(script, "w");
  cr_assert(f);
  fprintf(f, "#!/bin/sh\nexec cc \"$@\" -mno-avx512f -mno-avx2 -mno-fma\n");
  fclose(f);
  cr_assert_eq(chmod(script, 0755), 0);
  reinit("2", script);
  gemm_check(&(gemm_case){.b = 2, .m = 29, .n = 70, .k = 300, .epilogue = true}, false, true);
  gemm_check(&(gemm_case){.b = 1, .m = 1, .n = 37, .k = 19, .epilogue = true}, false, false);
#else
  cr_skip_test("x86-64 only: the narrow build is made with -mno-avx2");
#endif
}

/* ---------------------------------------------------------------- the tiers
 * A compile that misses the disk cache runs its first launches on the fast build (in parts
 * compiled at once) and swaps in the -O3 build made on a background thread (tiered.c). The
 * compiler here is a script that holds the -O3 build (the one without the fast build's flags)
 * until a gate file exists, so the test knows which build each launch ran. */
static void write_gated_cc(char *script, size_t cap, const char *gate) {
  snprintf(script, cap, "%s/gated-cc.sh", cache_dir);
  FILE *f = fopen(script, "w");
  cr_assert(f);
  fprintf(f,
          "#!/bin/sh\n"
          "case \" $* \" in *\" -O3 \"*)\n"
          "  case \" $* \" in *\" -fno-schedule-insns2 \"*) ;; *) while [ ! -e '%s' ]; do sleep 0.02; done ;; esac ;;\n"
          "esac\n"
          "exec cc \"$@\"\n",
          gate);
  fclose(f);
  cr_assert_eq(chmod(script, 0755), 0);
}

/* Threads of this process (/proc/self/task). */
static int task_count(void) {
  char cmd[64];
  snprintf(cmd, sizeof cmd, "ls /proc/%d/task | wc -l", (int)getpid());
  FILE *p = popen(cmd, "r");
  int n = -1;
  cr_assert(p && fscanf(p, "%d", &n) == 1);
  pclose(p);
  return n;
}

static bool log_says_within(const char *needle, double seconds) {
  for (double waited = 0; waited < seconds; waited += 0.02) {
    if (strstr(tck_test_host_log(th), needle)) return true;
    usleep(20000);
  }
  return false;
}

/* Three kernels over rows of s1 (two softmaxes: max and sum reductions, exp; and y =
 * log(x*x + 1) * tanh(x): libmvec calls), enough text for the fast build to come in two parts. */
static void build_tiers_list(kl *l) {
  build_softmax(l);
  int32_t s0 = S(l, 0), s1 = S(l, 1), one = C(l, 1), numel = MUL(l, s0, s1);
  int32_t outer[2] = {s0, s1};
  K(l, "log_tanh", TC_KERNEL_LOOP, 2, outer, -1);
  int32_t bx = BUF(l, "in_x", TC_F32, TC_BUF_INPUT, numel), by = BUF(l, "out_y", TC_F32, TC_BUF_OUTPUT, numel);
  ixspec at = IX(-1, s1, one, -1);
  int32_t x = LOAD(l, -1, bx, at);
  int32_t lg = PRIM(l, -1, TC_PRIM_LOG, PRIM(l, -1, TC_PRIM_ADD, PRIM(l, -1, TC_PRIM_MUL, x, x), CONSTF(l, -1, 1)), -1);
  STORE(l, -1, by, at, PRIM(l, -1, TC_PRIM_MUL, lg, PRIM(l, -1, TC_PRIM_TANH, x, -1)));
  build_softmax(l);
}

/* Every kernel of the tiers list on rows of odd lengths (vector loops with remainders), outputs
 * concatenated into out (3 * TIERS_OUT floats). */
#define TIERS_OUT (5 * 77 + 3 * 1013)
static void run_tiers_list(tc_executable *exe, float *out) {
  static const int shapes[2][2] = {{5, 77}, {3, 1013}};
  for (int k = 0; k < 3; k++)
    for (int s = 0, at = 0; s < 2; at += shapes[s][0] * shapes[s][1], s++) {
      int n = shapes[s][0] * shapes[s][1];
      unsigned seed = 11u + (unsigned)(k * 2 + s);
      float *in = malloc(sizeof(float) * (size_t)n);
      for (int i = 0; i < n; i++)
        in[i] = frand(&seed) * 3;
      int64_t syms[2] = {shapes[s][0], shapes[s][1]};
      launch2(exe, k, in, out + k * TIERS_OUT + at, NULL, NULL, syms);
      free(in);
    }
}

Test(inductor_cpu, tiers_swap_in_the_O3_build_and_agree_bit_for_bit, .timeout = 240) {
  /* A first tiered compile and launch with the plain compiler starts what stays (OpenMP's
   * team); freeing it joins its background build. */
  kl w = {0};
  build_softmax(&w);
  tc_kernel_list warm = LIST(&w, "tiers_warm_up", 2);
  tc_executable *exe = compile_ok(&warm);
  check_softmax(exe, 33, 1000);
  exe_free(exe);
  const int base = task_count();

  char gate[400], script[400];
  snprintf(gate, sizeof gate, "%s/gate", cache_dir);
  write_gated_cc(script, sizeof script, gate);
  reinit("2", script);
  kl l = {0};
  build_tiers_list(&l);
  tc_kernel_list list = LIST(&l, "tiers_test", 2);
  tck_test_host_log_clear(th);
  exe = compile_ok(&list);
  const char *log = tck_test_host_log(th);
  cr_assert(strstr(log, "miss (tiers_test)") && strstr(log, "compiled tiers_test (fast build)"), "%s", log);
  if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) cr_assert(strstr(log, "(2 parts at once)"), "%s", log);
  cr_assert_eq(task_count(), base + 1, "the -O3 build runs on a thread of its own");
  float *fast = malloc(sizeof(float) * 3 * TIERS_OUT), *full = malloc(sizeof(float) * 3 * TIERS_OUT);
  run_tiers_list(exe, fast);
  cr_assert_null(strstr(tck_test_host_log(th), "swapped in"), "the -O3 build went past the gate");

  FILE *g = fopen(gate, "w");
  cr_assert(g);
  fclose(g);
  cr_assert(log_says_within("tiers_test: -O3 build swapped in", 120), "%s", tck_test_host_log(th));
  run_tiers_list(exe, full);
  /* 3 kernels x 2 shapes ran on the fast build: the 7th launch is the first on the -O3 one */
  cr_assert(strstr(tck_test_host_log(th), "tiers_test: from launch 7 on, the -O3 build runs"), "%s",
            tck_test_host_log(th));
  cr_assert_eq(memcmp(fast, full, sizeof(float) * 3 * TIERS_OUT), 0, "the fast and the -O3 build differ");
  exe_free(exe);
  cr_assert_eq(task_count(), base, "a thread outlived its executable");

  /* The -O3 build is what the disk cache got: a second context loads it, runs no compiler. */
  reinit("2", script);
  tck_test_host_log_clear(th);
  exe = compile_ok(&list);
  cr_assert(from_cache(exe) && strstr(tck_test_host_log(th), "hit (tiers_test"), "%s", tck_test_host_log(th));
  cr_assert_eq(task_count(), base, "a cache hit starts no build");
  memset(full, 0, sizeof(float) * 3 * TIERS_OUT);
  run_tiers_list(exe, full);
  cr_assert_eq(memcmp(fast, full, sizeof(float) * 3 * TIERS_OUT), 0, "the cached -O3 build differs from the fast one");
  exe_free(exe);
  free(fast);
  free(full);
}

static void *open_gate_later(void *path) {
  usleep(300000);
  FILE *g = fopen(path, "w");
  if (g) fclose(g);
  return NULL;
}

/* A second compile of a unit whose -O3 build still runs in this process (held at the gate until
 * 0.3 s later) waits for that build and loads it from the disk cache instead of compiling it
 * again (tc ab's warm compile is one). */
Test(inductor_cpu, second_compile_waits_for_the_running_O3_build, .timeout = 240) {
  char gate[400], script[400];
  snprintf(gate, sizeof gate, "%s/gate", cache_dir);
  write_gated_cc(script, sizeof script, gate);
  reinit("2", script);
  kl l = {0};
  build_softmax(&l);
  tc_kernel_list list = LIST(&l, "wait_test", 2);
  tc_executable *first = compile_ok(&list);
  pthread_t opener;
  cr_assert_eq(pthread_create(&opener, NULL, open_gate_later, gate), 0);
  tck_test_host_log_clear(th);
  tc_executable *second = compile_ok(&list);
  pthread_join(opener, NULL);
  const char *log = tck_test_host_log(th);
  cr_assert(strstr(log, "hit (wait_test") && strstr(log, "after this process's -O3 build of it"), "%s", log);
  cr_assert_null(strstr(log, "miss"), "%s", log);
  cr_assert(from_cache(second));
  check_softmax(second, 5, 77);
  check_softmax(first, 5, 77);
  exe_free(second);
  exe_free(first);
}

static tc_executable *compile_tier(const tc_kernel_list *list, const char *tier) {
  tc_option opt = {.struct_size = sizeof opt, .name = "cpu.tier", .value = tier, .set = true};
  tc_compile_args a = {
      .struct_size = sizeof a, .ctx = ctx, .kernels = list, .n_options = 1, .options = &opt, .option_size = sizeof opt};
  const char *msg;
  cr_assert_eq(tck_test_host_take(th, api.compile(&a), &msg), TC_OK, "compile (cpu.tier=%s): %s", tier, msg);
  return a.exe;
}

/* cpu.tier=fast builds the fast build only and stores nothing; cpu.tier=full builds -O3 before
 * compile returns. Neither leaves a thread behind. */
Test(inductor_cpu, tier_option_fast_and_full) {
  const tc_option_decl *d = tck_option_decl_find(api.options, api.n_options, api.option_size, "cpu.tier");
  cr_assert(d && d->type == TC_OPTION_ENUM && d->scope == TC_OPTION_COMPILE && !strcmp(d->default_value, "tiered") &&
            !strcmp(d->values, "tiered|full|fast"));
  kl l = {0};
  build_softmax(&l);
  tc_kernel_list list = LIST(&l, "tier_option_test", 2);
  for (int pass = 0; pass < 2; pass++) {
    int base = task_count();
    tck_test_host_log_clear(th);
    tc_executable *exe = compile_tier(&list, "fast");
    const char *log = tck_test_host_log(th);
    cr_assert(strstr(log, "miss (tier_option_test)") && strstr(log, "compiled tier_option_test (fast build)"),
              "pass %d: %s", pass, log);
    cr_assert_null(strstr(log, "-O3"), "%s", log);
    cr_assert_eq(task_count(), base);
    check_softmax(exe, 5, 77);
    exe_free(exe);
  }
  int base = task_count();
  tck_test_host_log_clear(th);
  tc_executable *exe = compile_tier(&list, "full");
  const char *log = tck_test_host_log(th);
  cr_assert(strstr(log, "miss (tier_option_test)") && strstr(log, "compiled tier_option_test: "), "%s", log);
  cr_assert_null(strstr(log, "fast build"), "%s", log);
  cr_assert_eq(task_count(), base);
  check_softmax(exe, 5, 77);
  exe_free(exe);
  tck_test_host_log_clear(th);
  exe = compile_ok(&list); /* tiered, the default: the -O3 build is cached */
  cr_assert(strstr(tck_test_host_log(th), "hit (tier_option_test"), "%s", tck_test_host_log(th));
  exe_free(exe);
}

/* A process that exits right after its first call, freeing nothing, while its -O3 build still
 * runs (the compiler here sleeps a second before it): no crash; the exit waits for the build,
 * which reaches the disk cache (the program's second run loads it), and the scratch directory
 * goes as usual. tc_first_call_exit is that program (tests/first_call_exit.c). */
Test(inductor_cpu, exit_right_after_the_first_call, .timeout = 240) {
  char script[400], tmp[400];
  snprintf(script, sizeof script, "%s/slow-cc.sh", cache_dir);
  FILE *f = fopen(script, "w");
  cr_assert(f);
  fprintf(f, "#!/bin/sh\n"
             "case \" $* \" in *\" -O3 \"*)\n"
             "  case \" $* \" in *\" -fno-schedule-insns2 \"*) ;; *) sleep 1 ;; esac ;;\n"
             "esac\n"
             "exec cc \"$@\"\n");
  fclose(f);
  cr_assert_eq(chmod(script, 0755), 0);
  snprintf(tmp, sizeof tmp, "%s/tmp", cache_dir);
  cr_assert_eq(mkdir(tmp, 0700), 0);
  for (int pass = 0; pass < 2; pass++) {
    char cmd[2000], out[8192] = "";
    /* the program leaks on purpose: a sanitizer build's leak check must not fail it */
    snprintf(cmd, sizeof cmd,
             "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0\" TMPDIR='%s' "
             "TC_CACHE_DIR='%s/program-cache' TC_LOGS=cache '%s/bin/tc_first_call_exit' 'cpu.cc=%s,cpu.threads=2' 2>&1",
             tmp, cache_dir, TC_BINARY_DIR, script);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int status = pclose(p);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "pass %d: status %d:\n%s", pass, status, out);
    const char *done = strstr(out, "first call done");
    cr_assert(done, "pass %d:\n%s", pass, out);
    if (pass == 0) {
      const char *swapped = strstr(out, "-O3 build swapped in");
      cr_assert(swapped && swapped > done, "the exit did not wait for the -O3 build:\n%s", out);
    } else {
      cr_assert(strstr(out, "hit (first_call_exit") && !strstr(out, "miss"), "the -O3 build is not in the cache:\n%s",
                out);
    }
  }
  char cmd[600];
  snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", tmp);
  cr_assert_eq(system(cmd), 0, "the programs left files in their TMPDIR");
}

/* ---------------------------------------------------------------- fused attention
 * TC_KERNEL_ATTENTION kernels (codegen_attention.c) against a double-precision reference, with
 * symbols s0 = B, s1 = tq, s2 = tk and 3 heads. interleaved: attn_block's layout, q, k and v
 * read in place from one (B, T, 3, H, d) buffer (tq = tk = T), the output merged (B, T, H*dv);
 * else q (B, H, tq, d), k stored transposed (B, H, d, tk: k_stride_d = tk), v's element f at
 * 2f of a row of 2*dv floats (v_stride_d 2), the output (B, H, tq, dv). */
typedef struct attn_shape {
  int64_t d, dv;
  bool causal, interleaved;
  int64_t off;
  double scale;
} attn_shape;
enum { ATTN_H = 3 };

static tc_kernel_list attention_case_list(kl *l, const attn_shape *sh) {
  const int64_t H = ATTN_H, d = sh->d, dv = sh->dv;
  int32_t b = S(l, 0), tq = S(l, 1), tk = sh->interleaved ? tq : S(l, 2), h = C(l, H), one = C(l, 1), zero = C(l, 0);
  K(l, sh->causal ? "causal_attention" : "attention", TC_KERNEL_ATTENTION, 0, NULL, -1);
  tc_attention_desc *a = AT(l);
  *a = (tc_attention_desc){.struct_size = sizeof *a, .batch2 = b, .batch = h, .tq = tq, .tk = tk, .d = C(l, d),
                           .dv = C(l, dv), .scale = sh->scale, .causal = sh->causal, .causal_offset = sh->off};
  if (sh->interleaved) { /* d == dv */
    int32_t row = C(l, 3 * H * d), orow = C(l, H * dv);
    int32_t qkv = BUF(l, "in_qkv", TC_F32, TC_BUF_INPUT, MUL(l, MUL(l, b, tq), row));
    int32_t out = BUF(l, "out_y", TC_F32, TC_BUF_OUTPUT, MUL(l, MUL(l, b, tq), orow));
    a->q = a->k = a->v = qkv, a->o = out;
    a->q_offset = zero, a->k_offset = C(l, H * d), a->v_offset = C(l, 2 * H * d), a->o_offset = zero;
    a->q_stride_batch2 = a->k_stride_batch2 = a->v_stride_batch2 = MUL(l, tq, row);
    a->q_stride_batch = a->k_stride_batch = a->v_stride_batch = C(l, d);
    a->q_stride_t = a->k_stride_t = a->v_stride_t = row;
    a->q_stride_d = a->k_stride_d = a->v_stride_d = one;
    a->o_stride_batch2 = MUL(l, tq, orow), a->o_stride_batch = C(l, dv), a->o_stride_t = orow, a->o_stride_d = one;
  } else {
    int32_t qh = MUL(l, tq, C(l, d)), kh = MUL(l, tk, C(l, d)), vh = MUL(l, tk, C(l, 2 * dv)), oh = MUL(l, tq, C(l, dv));
    a->q = BUF(l, "in_q", TC_F32, TC_BUF_INPUT, MUL(l, MUL(l, b, h), qh));
    a->k = BUF(l, "in_k", TC_F32, TC_BUF_INPUT, MUL(l, MUL(l, b, h), kh));
    a->v = BUF(l, "in_v", TC_F32, TC_BUF_INPUT, MUL(l, MUL(l, b, h), vh));
    a->o = BUF(l, "out_y", TC_F32, TC_BUF_OUTPUT, MUL(l, MUL(l, b, h), oh));
    a->q_offset = a->k_offset = a->v_offset = a->o_offset = zero;
    a->q_stride_batch2 = MUL(l, h, qh), a->q_stride_batch = qh, a->q_stride_t = C(l, d), a->q_stride_d = one;
    a->k_stride_batch2 = MUL(l, h, kh), a->k_stride_batch = kh, a->k_stride_t = one, a->k_stride_d = tk;
    a->v_stride_batch2 = MUL(l, h, vh), a->v_stride_batch = vh, a->v_stride_t = C(l, 2 * dv), a->v_stride_d = C(l, 2);
    a->o_stride_batch2 = MUL(l, h, oh), a->o_stride_batch = oh, a->o_stride_t = C(l, dv), a->o_stride_d = one;
  }
  return LIST(l, "attention_test", sh->interleaved ? 2 : 3);
}

/* Where element (b, h, i, e) of q, k, v and o lives in the case's buffers. */
typedef struct attn_at {
  int64_t q, k, v, o;
} attn_at;
static attn_at attn_index(const attn_shape *sh, int64_t B, int64_t tq, int64_t tk, int64_t b, int64_t h, int64_t i,
                          int64_t e) {
  const int64_t H = ATTN_H, d = sh->d, dv = sh->dv;
  (void)B;
  if (sh->interleaved) {
    const int64_t row = 3 * H * d;
    return (attn_at){.q = (b * tq + i) * row + h * d + e, .k = (b * tq + i) * row + H * d + h * d + e,
                     .v = (b * tq + i) * row + 2 * H * d + h * d + e, .o = (b * tq + i) * H * dv + h * dv + e};
  }
  const int64_t bh = b * H + h;
  return (attn_at){.q = (bh * tq + i) * d + e, .k = (bh * d + e) * tk + i, .v = (bh * tk + i) * 2 * dv + 2 * e,
                   .o = (bh * tq + i) * dv + e};
}

/* Runs the compiled case on B x tq x tk (buffers sized for it, filled from seed; nan_query:
 * query (0, 0, that row) gets a NaN, -1 none) and checks it against the reference; the output
 * is left in *out (malloc'd) for bit comparisons. */
static void attention_case_run(tc_executable *exe, const attn_shape *sh, int64_t B, int64_t tq, int64_t tk,
                               unsigned seed, int64_t nan_query, float **out) {
  const int64_t H = ATTN_H, d = sh->d, dv = sh->dv;
  const int64_t n_in = sh->interleaved ? B * tq * 3 * H * d : 0;
  const int64_t nq = B * H * tq * d, nk = B * H * tk * d, nv = B * H * tk * 2 * dv, no = B * H * tq * dv;
  float *qkv = sh->interleaved ? malloc(sizeof(float) * (size_t)(n_in + 1)) : NULL;
  float *q = sh->interleaved ? qkv : malloc(sizeof(float) * (size_t)(nq + 1));
  float *k = sh->interleaved ? qkv : malloc(sizeof(float) * (size_t)(nk + 1));
  float *v = sh->interleaved ? qkv : malloc(sizeof(float) * (size_t)(nv + 1));
  float *o = malloc(sizeof(float) * (size_t)(no + 1));
  const int64_t fill[4] = {n_in, nq, nk, nv};
  float *bufs[4] = {qkv, q, k, v};
  for (int t = sh->interleaved ? 0 : 1; t < (sh->interleaved ? 1 : 4); t++)
    for (int64_t i = 0; i < fill[t]; i++) bufs[t][i] = frand(&seed);
  for (int64_t i = 0; i < no; i++) o[i] = 12345.0f; /* every element must be written */
  if (nan_query >= 0) q[attn_index(sh, B, tq, tk, 0, 0, nan_query, 1 % d).q] = NAN;
  void *ptrs[4] = {q, k, v, o};
  void *ptrs_in[2] = {qkv, o};
  const int64_t syms[3] = {B, tq, tk};
  const char *msg;
  cr_assert_eq(launch(exe, 0, sh->interleaved ? ptrs_in : ptrs, sh->interleaved ? 2 : 4, syms, sh->interleaved ? 2 : 3,
                      &msg),
               TC_OK, "launch: %s", msg);
  double *s = malloc(sizeof(double) * (size_t)(tk + 1));
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t i = 0; i < tq; i++) {
        double m = -INFINITY;
        bool nan = false;
        for (int64_t j = 0; j < tk; j++) {
          double dot = 0;
          for (int64_t e = 0; e < d; e++)
            dot += (double)q[attn_index(sh, B, tq, tk, b, h, i, e).q] * k[attn_index(sh, B, tq, tk, b, h, j, e).k];
          s[j] = sh->causal && j - i >= sh->off ? -INFINITY : (double)(float)dot * sh->scale;
          nan |= isnan(s[j]);
          if (s[j] > m) m = s[j];
        }
        double l = 0;
        for (int64_t j = 0; j < tk; j++) l += m == -INFINITY ? 0 : exp(s[j] - m);
        for (int64_t f = 0; f < dv; f++) {
          double acc = 0;
          for (int64_t j = 0; j < tk && m != -INFINITY; j++)
            acc += exp(s[j] - m) * v[attn_index(sh, B, tq, tk, b, h, j, f).v];
          const double want = nan ? NAN : tk == 0 ? 0.0 : m == -INFINITY ? NAN : acc / l;
          const float got = o[attn_index(sh, B, tq, tk, b, h, i, f).o];
          cr_assert(isnan(want) ? isnan(got) : fabs(got - want) <= 2e-5 + 2e-4 * fabs(want),
                    "d %lld dv %lld B %lld tq %lld tk %lld: out[%lld, %lld, %lld, %lld] = %g, want %g", (long long)d,
                    (long long)dv, (long long)B, (long long)tq, (long long)tk, (long long)b, (long long)h, (long long)i,
                    (long long)f, got, want);
        }
      }
  free(s);
  if (sh->interleaved) free(qkv);
  else free(q), free(k), free(v);
  *out = o;
}

/* attn_block's layout at head size 64 (and 16), causal, T across several query blocks and key
 * tiles and T = 1: the reference's values, and the same bits on 1, 2 and 3 threads (fixed
 * summation order, whatever the split of the work). */
Test(inductor_cpu, fused_attention_matches_the_reference_on_any_thread_count, .timeout = 120) {
  const attn_shape shapes[2] = {{.d = 64, .dv = 64, .causal = true, .interleaved = true, .off = 1, .scale = 0.125},
                                {.d = 16, .dv = 16, .causal = true, .interleaved = true, .off = 1, .scale = 0.25}};
  const int64_t ts[3] = {70, 1, 33};
  for (int c = 0; c < 2; c++) {
    float *first[3] = {0};
    for (int th_i = 0; th_i < 3; th_i++) {
      static const char *const threads[3] = {"1", "2", "3"};
      reinit(threads[th_i], NULL);
      kl l = {0};
      tc_kernel_list list = attention_case_list(&l, &shapes[c]);
      tc_executable *exe = compile_ok(&list);
      if (c == 0 && th_i == 0) {
        const char *src = source_of(exe);
        cr_assert(strstr(src, "static void k_causal_attention(const float *restrict in_qkv, float *restrict out_y"), "%s", src);
        cr_assert(strstr(src, "tc_attn_block(qh, q_st, q_sd, oh, o_st, o_sd, kt, vs, kp, i0, nq,"), "%s", src);
      }
      for (int t = 0; t < 3; t++) {
        float *o;
        attention_case_run(exe, &shapes[c], 2, ts[t], ts[t], 5u + (unsigned)t, -1, &o);
        if (th_i == 0 && t == 0) first[0] = o;
        else if (t == 0) {
          cr_assert_eq(memcmp(first[0], o, sizeof(float) * 2 * ATTN_H * 70 * shapes[c].dv), 0,
                       "d %lld: %s threads differ from 1", (long long)shapes[c].d, threads[th_i]);
          free(o);
        } else free(o);
      }
      exe_free(exe);
    }
    free(first[0]);
  }
}

/* Strided operands (k transposed, v every other element), head sizes that are not vector
 * multiples, tq != tk, no mask and a shifted causal mask; the edge rows: a query that sees no
 * key is NaN (causal_offset 0 hides key 0 from query 0), tk = 0 gives zeros, a NaN in a query
 * makes its row NaN and no other. */
Test(inductor_cpu, fused_attention_strides_and_edge_rows, .timeout = 120) {
  const attn_shape shapes[3] = {{.d = 7, .dv = 10, .causal = false, .scale = 0.377964},
                                {.d = 5, .dv = 3, .causal = true, .off = 0, .scale = 0.5},
                                {.d = 33, .dv = 40, .causal = true, .off = 4, .scale = 0.17}};
  static const int64_t sizes[][3] = {{2, 5, 9}, {1, 40, 37}, {2, 3, 0}, {1, 1, 70}};
  for (int c = 0; c < 3; c++) {
    kl l = {0};
    tc_kernel_list list = attention_case_list(&l, &shapes[c]);
    tc_executable *exe = compile_ok(&list);
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
      float *o;
      attention_case_run(exe, &shapes[c], sizes[z][0], sizes[z][1], sizes[z][2], 17u + (unsigned)z,
                         sizes[z][1] > 2 ? 2 : -1, &o);
      free(o);
    }
    exe_free(exe);
  }
}

/* cpu.attention: declared (compile scope, unfused by default); unfused takes the kind out of what
 * the plugin accepts under those options (the host then schedules the three unfused kernels). */
Test(inductor_cpu, attention_option_declines_the_kind) {
  const tc_option_decl *d = tck_option_decl_find(api.options, api.n_options, api.option_size, "cpu.attention");
  cr_assert(d && d->type == TC_OPTION_ENUM && d->scope == TC_OPTION_COMPILE && !strcmp(d->default_value, "unfused") &&
            !strcmp(d->values, "fused|unfused"));
  const tc_capabilities_ext *caps = (const tc_capabilities_ext *)tc_ext_find(api.extensions, TC_EXT_CAPABILITIES);
  cr_assert(caps && caps->base.struct_size >= TC_STRUCT_SIZE(tc_capabilities_ext, kernel_kinds_under) &&
            caps->kernel_kinds_under);
  const uint32_t attn = 1u << TC_KERNEL_ATTENTION;
  cr_assert(caps->kernel_kinds & attn);
  tc_option opt = {.struct_size = sizeof opt, .name = "cpu.attention", .value = "fused", .set = true};
  cr_assert(caps->kernel_kinds_under(&opt, 1, sizeof opt) & attn);
  cr_assert(!(caps->kernel_kinds_under(NULL, 0, sizeof opt) & attn), "unfused is the default");
  opt.value = "unfused";
  const uint32_t under = caps->kernel_kinds_under(&opt, 1, sizeof opt);
  cr_assert(!(under & attn) && (under & (1u << TC_KERNEL_MATMUL)) && (under & (1u << TC_KERNEL_LOOP)));
}
