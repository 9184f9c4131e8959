/* test_inductor_cuda.c — inductor-cuda's code generator without a GPU: hand-built kernel lists
 * (softmax and layer_norm+gelu rows, gather/argmax/random, scatter-add, a matmul epilogue, the
 * generated GEMM) must generate CUDA C that NVRTC compiles for sm_90; the generated GEMM also
 * runs on the CPU (cuda_gemm_emulation.cpp) against an exact reference; and the CI check: every conformance graph,
 * compiled by a backend that wraps inductor-cpu but first runs the plugin's codegen check on the
 * same kernel list (and a list with a matmul again with cuda.gemm=generated, each kernel's and
 * each generated GEMM's program compiled on its own as the runtime does), so a graph whose CUDA
 * does not compile fails the suite. Skipped where NVRTC
 * cannot be loaded. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "conformance.h"
#include "tc/tc.h"
#include "plugin_entry.h"
#include "tc_kit.h"
#include "tc_plugin.h"

/* The extension's layout (plugins/inductor-cuda/icuda.h), restated: tests see only the ABI. */
#define ICUDA_EXT_CODEGEN_CHECK (TC_EXT_VENDOR_FIRST + 0x100)
typedef struct icuda_codegen_check_ext {
  tc_ext_base base;
  tc_error *(*check)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, char **source_out);
  tc_error *(*check_row_threads)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t row_threads,
                                 char **source_out);
  tc_error *(*check_attention_tiles)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t queries,
                                     int32_t keys, char **source_out);
  tc_error *(*check_attention_variant)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t queries,
                                       int32_t keys, int32_t thread_queries, char **source_out);
  tc_error *(*check_gemm)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t gemm, int32_t tile,
                          char **source_out);
  tc_error *(*check_attention_tiled)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t tile_m,
                                     int32_t tile_n, char **source_out);
  tc_error *(*check_programs)(const tc_host_api *host, const tc_kernel_list *list, int32_t sm, int32_t gemm,
                              int32_t *n_kernels, int32_t *n_gemms);
} icuda_codegen_check_ext;
enum { GEMM_AUTO = 0, GEMM_CUBLASLT = 1, GEMM_GENERATED = 2 }; /* cuda.gemm (icuda_gemm_mode) */

static tck_test_host *th;
static tc_plugin_api cuda_table;
static void *cuda_dl;
static const icuda_codegen_check_ext *ext;

/* Loads tc-inductor-cuda.so and finds the check; skips the test when NVRTC is missing. */
static void open_cuda(void) {
  th = tck_test_host_new(NULL, NULL);
  cr_assert_not_null(th);
  char path[1024], err[512] = "";
  snprintf(path, sizeof path, "%s/tc-inductor-cuda.so", TC_BUILD_PLUGIN_DIR);
  if (!tck_test_plugin_open(th, path, &cuda_table, &cuda_dl, err, sizeof err)) cr_skip_test("%s", err);
  ext = (const icuda_codegen_check_ext *)tc_ext_find(cuda_table.extensions, ICUDA_EXT_CODEGEN_CHECK);
  cr_assert_not_null(ext, "inductor-cuda has no codegen-check extension");
  /* an empty list: generates a prelude only; tells whether NVRTC is there */
  tc_kernel_list empty = {.struct_size = sizeof empty, .name = "empty", .expr_size = sizeof(tc_size_expr),
                          .kernel_size = sizeof(tc_kernel_desc)};
  const char *msg = NULL;
  tc_status st = tck_test_host_take(th, ext->check(tck_test_host_api(th), &empty, 90, NULL), &msg);
  if (st == TC_ERR_UNAVAILABLE) cr_skip_test("NVRTC: %s", msg);
  cr_assert_eq(st, TC_OK, "%s", msg);
}

static void close_cuda(void) {
  if (th) tck_test_host_free(th);
  th = NULL;
}

/* ---------------------------------------------------------------- building descriptors */
#include "kernel_builder.h"

/* Generates and compiles list for sm_90 with cuda.row_threads (0: automatic); returns the
 * source (caller frees). */
static char *check_ok_rt(const tc_kernel_list *list, int32_t row_threads) {
  char *source = NULL;
  const char *msg = NULL;
  cr_assert(ext->base.struct_size >= sizeof(icuda_codegen_check_ext) && ext->check_row_threads);
  tc_status st =
      tck_test_host_take(th, ext->check_row_threads(tck_test_host_api(th), list, 90, row_threads, &source), &msg);
  cr_assert_eq(st, TC_OK, "%s\n--- source ---\n%s", msg, source ? source : "(none)");
  cr_assert_not_null(source);
  if (getenv("TC_TEST_DUMP_CUDA")) fprintf(stderr, "%s\n", source); /* to read the generated code */
  return source;
}

/* Generates and compiles list for sm_90; returns the source (caller frees). */
static char *check_ok(const tc_kernel_list *list) {
  char *source = NULL;
  const char *msg = NULL;
  tc_status st = tck_test_host_take(th, ext->check(tck_test_host_api(th), list, 90, &source), &msg);
  cr_assert_eq(st, TC_OK, "%s\n--- source ---\n%s", msg, source ? source : "(none)");
  cr_assert_not_null(source);
  if (getenv("TC_TEST_DUMP_CUDA")) fprintf(stderr, "%s\n", source); /* to read the generated code */
  return source;
}

static void assert_has(const char *text, const char *needle) {
  cr_assert(strstr(text, needle), "'%s' not in the generated source:\n%s", needle, text);
}

/* Builds tests/<cpp> (a CPU emulation of generated kernels over cuda_emulation.h) in dir, where
 * the test wrote kernels.inc, runs it with args and returns its exit status, its output (the
 * compiler's complaints about the generated code, or the emulation's results) in out; removes
 * dir unless keep. Skips the test where no C++20 compiler with <barrier> is installed. */
static int run_emulation(const char *dir, const char *cpp, const char *args, bool keep, char *out, size_t cap) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cd %s && echo '#include <barrier>' >probe.cpp && ${CXX:-c++} -std=c++20 -c probe.cpp >/dev/null 2>&1",
           dir);
  if (system(cmd) != 0) {
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    cr_skip_test("no C++20 compiler with <barrier> for the emulation (${CXX:-c++})");
  }
  snprintf(cmd, sizeof cmd,
           "cd %s && ${CXX:-c++} -std=c++20 -O1 -w -pthread -I. -o emu %s/tests/%s 2>&1 | head -40 && test -x emu && ./emu %s 2>&1",
           dir, TC_SOURCE_DIR, cpp, args);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = '\0';
  const int rc = pclose(p);
  if (keep) {
    fprintf(stderr, "emulation in %s\n", dir);
  } else {
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
  }
  return rc;
}
static void assert_lacks(const char *text, const char *needle) {
  cr_assert(!strstr(text, needle), "'%s' in the generated source:\n%s", needle, text);
}
/* The text of kernel fname: from its row-layout comment (the line before its signature) to the
 * #undef closing it. Caller frees. */
static char *kernel_text(const char *src, const char *fname) {
  const char *sig = strstr(src, fname);
  cr_assert(sig, "no kernel %s in:\n%s", fname, src);
  const char *start = sig;
  for (int nl = 0; start > src && nl < 5; start--) /* back over the #defines to the comment */
    if (start[-1] == '\n') nl++;
  const char *end = strstr(sig, "#undef TC_RT");
  cr_assert(end, "kernel %s not closed", fname);
  return strndup(start, (size_t)(end - start));
}

TestSuite(inductor_cuda, .init = open_cuda, .fini = close_cuda);

/* softmax as the scheduler emits it: rows of a static `cols`, exp(x - max) parked in the output
 * (a store a later loop overwrites) and read back through `reuse`. */
static tc_kernel_list softmax_list(kl *l, int64_t cols) {
  int32_t s0 = S(l, 0), n = C(l, cols), one = C(l, 1), numel = MUL(l, s0, n);
  int32_t outer[1] = {s0};
  K(l, "softmax", TC_KERNEL_LOOP, 1, outer, n);
  int32_t bx = BUF(l, "in_x", TC_F32, TC_BUF_INPUT, numel), by = BUF(l, "out_y", TC_F32, TC_BUF_OUTPUT, numel);
  ixspec row = IX(-1, n, one, -1);
  int32_t x0 = LOAD(l, 0, bx, row);
  int32_t m = RED(l, 0, TC_PRIM_REDUCE_MAX, x0);
  int32_t x1 = LOAD(l, 1, bx, row);
  int32_t e = PRIM(l, 1, TC_PRIM_EXP, PRIM(l, 1, TC_PRIM_SUB, x1, m), -1);
  int32_t st1 = STORE(l, 1, by, row, e);
  int32_t sum = RED(l, 1, TC_PRIM_REDUCE_SUM, e);
  int32_t e2 = LOAD(l, 2, by, row);
  STORE(l, 2, by, row, PRIM(l, 2, TC_PRIM_DIV, e2, sum));
  l->ops[0][x1].reuse = x0;
  l->ops[0][e2].reuse = st1;
  l->ops[0][st1].flags = TC_KOP_OVERWRITTEN | TC_KOP_ROW_VALUE;
  l->ops[0][x0].flags = TC_KOP_ROW_VALUE;
  return LIST(l, "softmax_test", 1);
}

/* Rows of 1024: a warp per row (4 rows per block of 128), reductions by shuffles only. */
Test(inductor_cuda, softmax_row_kernel) {
  kl l = {0};
  tc_kernel_list list = softmax_list(&l, 1024);
  char *src = check_ok(&list);
  assert_has(src, "extern \"C\" __global__ void __launch_bounds__(128) k_softmax(const tc_cu_args a)");
  char *kt = kernel_text(src, "k_softmax(");
  assert_has(kt, "/* warp per row: a block of 4 warps on 4 rows at a time");
  assert_has(kt, "row = (long long)blockIdx.x * TC_WARPS + warp; row < rows; row += (long long)gridDim.x * TC_WARPS");
  assert_has(kt, "const int rt = lane;");
  assert_has(kt, "float4 c0[8]");
  assert_has(kt, "*(const float4 *)&in_x[");
  assert_has(kt, "from registers");
  assert_has(kt, "not stored, a later inner loop overwrites it");
  assert_has(kt, "v1 = tc_max_f32(v1, tc_shfl_xor(v1, o));");
  assert_has(kt, "v1 = __shfl_sync(0xffffffffu, v1, 0);");
  assert_has(kt, "__syncwarp();"); /* the scalar fallback reads back what it stored */
  assert_lacks(kt, "__syncthreads");
  assert_lacks(kt, "__shared__");
  assert_has(kt, "v1 = tc_max_f32(v1, t0.x);"); /* a warp per row keeps one chain (0.5% faster) */
  free(kt);
  free(src);
}

/* cuda.row_threads forces a block per row; rows not a multiple of 128 keep one too. */
Test(inductor_cuda, softmax_block_per_row) {
  kl l = {0};
  tc_kernel_list list = softmax_list(&l, 1024);
  char *src = check_ok_rt(&list, 64);
  char *kt = kernel_text(src, "k_softmax(");
  assert_has(src, "__launch_bounds__(64) k_softmax(");
  assert_has(kt, "/* one block of 64 threads per row");
  assert_has(kt, "for (long long row = blockIdx.x; row < rows; row += gridDim.x)");
  assert_has(kt, "__syncthreads");
  assert_has(kt, "__shared__ float red1[TC_WARPS]");
  assert_lacks(kt, "warp per row");
  free(kt);
  free(src);
  kl l2 = {0};
  list = softmax_list(&l2, 1000);
  src = check_ok(&list);
  assert_has(src, "one block of 64 threads per row"); /* 1000 % 128 != 0 */
  assert_lacks(src, "warp per row");
  free(src);
}

/* layer_norm + gelu over rows of 4096 (three inner loops), gamma and beta per column. */
Test(inductor_cuda, layer_norm_gelu_rows) {
  kl l = {0};
  int32_t s0 = S(&l, 0), n = C(&l, 4096), one = C(&l, 1), numel = MUL(&l, s0, n);
  int32_t outer[1] = {s0};
  K(&l, "layer_norm_gelu", TC_KERNEL_LOOP, 1, outer, n);
  int32_t bx = BUF(&l, "in_x", TC_F32, TC_BUF_INPUT, numel), bg = BUF(&l, "in_g", TC_F32, TC_BUF_INPUT, n);
  int32_t bb = BUF(&l, "in_b", TC_F32, TC_BUF_INPUT, n), by = BUF(&l, "out_y", TC_F32, TC_BUF_OUTPUT, numel);
  ixspec row = IX(-1, n, one, -1), col = IX(-1, -1, one, -1);
  int32_t x0 = LOAD(&l, 0, bx, row);
  int32_t sum = RED(&l, 0, TC_PRIM_REDUCE_SUM, x0);
  int32_t mean = PRIM(&l, -1, TC_PRIM_DIV, sum, CONSTF(&l, -1, 4096));
  int32_t x1 = LOAD(&l, 1, bx, row);
  int32_t d = PRIM(&l, 1, TC_PRIM_SUB, x1, mean);
  int32_t var = RED(&l, 1, TC_PRIM_REDUCE_SUM, PRIM(&l, 1, TC_PRIM_MUL, d, d));
  int32_t rstd = PRIM(&l, -1, TC_PRIM_RSQRT,
                      PRIM(&l, -1, TC_PRIM_ADD, PRIM(&l, -1, TC_PRIM_DIV, var, CONSTF(&l, -1, 4096)), CONSTF(&l, -1, 1e-5)), -1);
  int32_t x2 = LOAD(&l, 2, bx, row);
  int32_t z = PRIM(&l, 2, TC_PRIM_ADD,
                   PRIM(&l, 2, TC_PRIM_MUL, PRIM(&l, 2, TC_PRIM_MUL, PRIM(&l, 2, TC_PRIM_SUB, x2, mean), rstd), LOAD(&l, 2, bg, col)),
                   LOAD(&l, 2, bb, col));
  int32_t er = PRIM(&l, 2, TC_PRIM_ERF, PRIM(&l, 2, TC_PRIM_MUL, z, CONSTF(&l, 2, 0.70710678118654752)), -1);
  int32_t y = PRIM(&l, 2, TC_PRIM_MUL, PRIM(&l, 2, TC_PRIM_MUL, z, PRIM(&l, 2, TC_PRIM_ADD, er, CONSTF(&l, 2, 1))),
                   CONSTF(&l, 2, 0.5));
  STORE(&l, 2, by, row, y);
  l.ops[0][x1].reuse = x0;
  l.ops[0][x2].reuse = x0;
  l.ops[0][x0].flags = TC_KOP_ROW_VALUE;
  tc_kernel_list list = LIST(&l, "ln_gelu_test", 1);
  char *src = check_ok(&list);
  assert_has(src, "__launch_bounds__(256) k_layer_norm_gelu");
  assert_has(src, "tc_erf_f32(");
  assert_has(src, "float4 c0[4]");
  assert_has(src, "/* one block of 256 threads per row"); /* rows of 4096 keep a block per row */
  assert_has(src, "__syncthreads");
  assert_lacks(src, "warp per row");
  /* the alignment test chooses between two row loops (not inside one), and a thread's float4
   * components are summed in pairs: 6% and 2.5% of ln_gelu's time on the H200 */
  assert_has(src, "if (vec_ok) { /* every row in registers, float4 accesses */\n"
                  "    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {");
  assert_has(src, "v1 = v1 + ((t0.x + t0.y) + (t0.z + t0.w));");
  free(src);
}

/* Two float4 loads in one body, each operand its own component name: y = x - w elementwise
 * (POINTS) and, per row, sum(x * w) (ROWS). A generator that gave both loads one name computed
 * x - x (conformance on the H200 caught it: prims.sub got 0, want 2). */
Test(inductor_cuda, two_float4_loads_keep_their_names) {
  kl l = {0};
  int32_t rows = S(&l, 0), n = C(&l, 1024), one = C(&l, 1), numel = MUL(&l, rows, n);
  int32_t outer2[2] = {rows, n};
  K(&l, "sub", TC_KERNEL_LOOP, 2, outer2, -1);
  int32_t bx = BUF(&l, "in_x", TC_F32, TC_BUF_INPUT, numel), bw = BUF(&l, "in_w", TC_F32, TC_BUF_INPUT, numel);
  int32_t by = BUF(&l, "out_y", TC_F32, TC_BUF_OUTPUT, numel);
  ixspec flat = IX(-1, n, one, -1);
  int32_t x = LOAD(&l, -1, bx, flat), w = LOAD(&l, -1, bw, flat);
  STORE(&l, -1, by, flat, PRIM(&l, -1, TC_PRIM_SUB, x, w));
  int32_t outer1[1] = {rows};
  K(&l, "dot_rows", TC_KERNEL_LOOP, 1, outer1, n);
  bx = BUF(&l, "in_x", TC_F32, TC_BUF_INPUT, numel), bw = BUF(&l, "in_w", TC_F32, TC_BUF_INPUT, numel);
  int32_t bs = BUF(&l, "out_s", TC_F32, TC_BUF_OUTPUT, rows);
  x = LOAD(&l, 0, bx, flat), w = LOAD(&l, 0, bw, flat);
  int32_t sum = RED(&l, 0, TC_PRIM_REDUCE_SUM, PRIM(&l, 0, TC_PRIM_MUL, x, w));
  STORE(&l, -1, bs, IX(-1, one, -1, -1), sum);
  tc_kernel_list list = LIST(&l, "two_loads", 1);
  char *src = check_ok(&list);
  assert_has(src, "= t0.x - t1.x;");
  assert_has(src, "= t0.w - t1.w;");
  assert_has(src, "= t0.y * t1.y;");
  assert_lacks(src, "= t1.x - t1.x;");
  assert_lacks(src, "= t1.x * t1.x;");
  free(src);
}

/* gather (indirect load), argmax over short rows (POINTS), random and iota. */
Test(inductor_cuda, gather_argmax_random) {
  kl l = {0};
  int32_t n = C(&l, 6), one = C(&l, 1), cols = C(&l, 5), zero = C(&l, 0), off = C(&l, 100), big = C(&l, 512);
  int32_t outer[1] = {n};
  K(&l, "gather", TC_KERNEL_LOOP, 1, outer, -1);
  int32_t bx = BUF(&l, "in_x", TC_F32, TC_BUF_INPUT, cols), bi = BUF(&l, "in_idx", TC_I64, TC_BUF_INPUT, n);
  int32_t by = BUF(&l, "out_y", TC_F32, TC_BUF_OUTPUT, n);
  int32_t iv = OP(&l, TC_KOP_LOAD, TC_I64, -1, 0, -1, -1, -1, bi, IX(-1, one, -1, -1));
  ixspec g = IX(-1, -1, -1, -1);
  g.indirect = iv;
  g.indirect_stride = one;
  STORE(&l, -1, by, IX(-1, one, -1, -1), LOAD(&l, -1, bx, g));
  for (int pass = 0; pass < 2; pass++) { /* short rows (POINTS), then long ones (ROWS) */
    int32_t w = pass ? big : cols;
    K(&l, pass ? "argmax_long" : "argmax", TC_KERNEL_LOOP, 1, outer, w);
    int32_t bm = BUF(&l, "in_m", TC_F32, TC_BUF_INPUT, MUL(&l, n, w)), bo = BUF(&l, "out_arg", TC_I64, TC_BUF_OUTPUT, n);
    int32_t br = BUF(&l, "out_rand", TC_F32, TC_BUF_OUTPUT, n), bio = BUF(&l, "out_iota", TC_I64, TC_BUF_OUTPUT, n);
    int32_t mv = LOAD(&l, 0, bm, IX(-1, w, one, -1));
    int32_t am = OP(&l, TC_KOP_REDUCE, TC_I64, 0, pass ? TC_PRIM_ARGMAX : TC_PRIM_ARGMIN, mv, -1, -1, -1, NOIX);
    OP(&l, TC_KOP_STORE, TC_I64, -1, 0, am, -1, -1, bo, IX(-1, one, -1, -1));
    int32_t rv = OP(&l, TC_KOP_RANDOM, TC_F32, -1, 0, -1, -1, -1, -1, IX(off, one, -1, -1));
    l.ops[l.nk - 1][rv].iconst = 42;
    STORE(&l, -1, br, IX(-1, one, -1, -1), rv);
    int32_t io = OP(&l, TC_KOP_INDEX, TC_I64, -1, 0, -1, -1, -1, -1, IX(zero, one, -1, -1));
    OP(&l, TC_KOP_STORE, TC_I64, -1, 0, io, -1, -1, bio, IX(-1, one, -1, -1));
  }
  tc_kernel_list list = LIST(&l, "index_test", 0);
  char *src = check_ok(&list);
  assert_has(src, "tc_philox_uniform(UINT64_C(42)");
  assert_has(src, "tc_better_max_f32(");
  /* argmax over rows of 512: a warp per row, the first index's rule through the butterfly */
  char *kt = kernel_text(src, "k_argmax_long(");
  assert_has(kt, "warp per row");
  assert_has(kt, "v1 = __shfl_sync(0xffffffffu, v1, 0);");
  assert_has(kt, "if (rt == 0) {");
  assert_lacks(kt, "__syncthreads");
  free(kt);
  free(src);
}

/* scatter_add: out = x, then out[idx[i]] += src[i] with atomics, for each dtype. */
Test(inductor_cuda, scatter_add_atomics) {
  kl l = {0};
  int32_t n = C(&l, 8), one = C(&l, 1), m = C(&l, 4);
  int32_t outer[1] = {n};
  const int32_t dts[] = {TC_F32, TC_F64, TC_I32, TC_I64, TC_BOOL};
  static const char *const names[] = {"scatter_f32", "scatter_f64", "scatter_i32", "scatter_i64", "scatter_bool"};
  for (int t = 0; t < 5; t++) {
    K(&l, names[t], TC_KERNEL_LOOP, 1, outer, -1);
    int32_t bi = BUF(&l, "in_idx", TC_I32, TC_BUF_INPUT, n), bs = BUF(&l, "in_src", dts[t], TC_BUF_INPUT, n);
    int32_t bo = BUF(&l, "out_y", dts[t], TC_BUF_INOUT, m);
    int32_t iv = OP(&l, TC_KOP_LOAD, TC_I32, -1, 0, -1, -1, -1, bi, IX(-1, one, -1, -1));
    int32_t sv = OP(&l, TC_KOP_LOAD, dts[t], -1, 0, -1, -1, -1, bs, IX(-1, one, -1, -1));
    ixspec g = IX(-1, -1, -1, -1);
    g.indirect = iv;
    g.indirect_stride = one;
    OP(&l, TC_KOP_STORE_ADD, dts[t], -1, 0, sv, -1, -1, bo, g);
  }
  tc_kernel_list list = LIST(&l, "scatter_test", 0);
  char *src = check_ok(&list);
  assert_has(src, "tc_atomic_add(&out_y[");
  free(src);
}

/* matmul + bias + gelu: the epilogue reads the product from c (cuBLASLt's output). */
Test(inductor_cuda, matmul_epilogue) {
  kl l = {0};
  tc_kernel_list list = matmul_bias_gelu_list(&l);
  char *src = check_ok(&list);
  assert_has(src, "k_matmul_add_gelu(const tc_cu_args a)");
  /* scalar: the product's element; float4: 4 neighbours along n, bias and output as float4 */
  assert_has(src, "out_y[0LL + i0*0LL + i1*48LL + i2*1LL]");
  assert_has(src, "const float4 acc4 = *(const float4 *)&out_y[0LL + i0*0LL + i1*48LL + i2*1LL];");
  assert_has(src, "if (vec_ok) {");
  assert_has(src, "*(float4 *)&out_y[a");
  free(src);
}

/* Generates and compiles list for sm_90 with cuda.gemm; returns the source (caller frees). */
static char *check_ok_gemm(const tc_kernel_list *list, int32_t gemm) {
  char *source = NULL;
  const char *msg = NULL;
  cr_assert(ext->base.struct_size >= sizeof(icuda_codegen_check_ext) && ext->check_gemm);
  tc_status st = tck_test_host_take(th, ext->check_gemm(tck_test_host_api(th), list, 90, gemm, 0, &source), &msg);
  cr_assert_eq(st, TC_OK, "%s\n--- source ---\n%s", msg, source ? source : "(none)");
  cr_assert_not_null(source);
  if (getenv("TC_TEST_DUMP_CUDA")) fprintf(stderr, "%s\n", source);
  return source;
}

/* The generated GEMM (cuda.gemm auto and generated: the same module) next to the epilogue
 * kernel: the epilogue fused on the register tile; none under cuda.gemm=cublaslt. */
Test(inductor_cuda, matmul_generated_gemm) {
  kl l = {0};
  tc_kernel_list list = matmul_bias_gelu_list(&l);
  char *src = check_ok(&list); /* auto */
  char *gen = check_ok_gemm(&list, GEMM_GENERATED);
  cr_assert_str_eq(src, gen, "auto and generated generate different modules");
  assert_has(src, "k_matmul_add_gelu(const tc_cu_args a)");
  assert_has(src, "__launch_bounds__(64) k_matmul_add_gelu_gemm(const tc_cu_args a)");
  assert_has(src, "enum { BM = 64, BN = 64, BK = 8, THREADS = 64,"); /* M symbolic: the small tile */
  assert_has(src, "acc[i][j] = tc_fma(av[i], bv[j], acc[i][j]);");
  assert_has(src, "const float v0 = acc[i][j];");
  assert_has(src, "out_y[j11] = (float)v10;");
  free(gen);
  free(src);
  src = check_ok_gemm(&list, GEMM_CUBLASLT);
  assert_has(src, "k_matmul_add_gelu(const tc_cu_args a)");
  assert_lacks(src, "_gemm(");
  free(src);
  kl small = {0};
  tc_kernel_list inl = matmul_bias_gelu_list_m(&small, 1); /* an inline product needs no GEMM ... */
  src = check_ok(&inl);
  assert_lacks(src, "_gemm(");
  free(src);
  src = check_ok_gemm(&inl, GEMM_GENERATED); /* ... but cuda.gemm=generated takes every product */
  assert_has(src, "k_matmul_add_gelu_gemm(const tc_cu_args a)");
  assert_lacks(src, "a small matmul");
  free(src);
}

/* The programs a compile makes, each compiled on its own as the runtime does: a MATMUL kernel's
 * generated GEMM is a program apart from its epilogue's (compiled in the background on a cold
 * start), with a cache key of its own; under cuda.gemm=cublaslt there is none, and an inline
 * product has none under auto. */
static void check_programs_ok(const tc_kernel_list *list, int32_t gemm, int32_t want_kernels, int32_t want_gemms) {
  const char *msg = NULL;
  int32_t nk = -1, ng = -1;
  cr_assert(ext->base.struct_size >= sizeof(icuda_codegen_check_ext) && ext->check_programs);
  tc_status st = tck_test_host_take(th, ext->check_programs(tck_test_host_api(th), list, 90, gemm, &nk, &ng), &msg);
  cr_assert_eq(st, TC_OK, "%s", msg);
  cr_expect_eq(nk, want_kernels, "%s (cuda.gemm %d): %d kernel programs, expected %d", list->name, (int)gemm, (int)nk,
               (int)want_kernels);
  cr_expect_eq(ng, want_gemms, "%s (cuda.gemm %d): %d generated GEMM programs, expected %d", list->name, (int)gemm, (int)ng,
               (int)want_gemms);
}

static tc_kernel_list gemm_symbolic_list(kl *l, int32_t dtype);

Test(inductor_cuda, generated_gemm_is_a_program_of_its_own) {
  kl l = {0};
  tc_kernel_list list = matmul_bias_gelu_list(&l);
  check_programs_ok(&list, GEMM_AUTO, 1, 1);
  check_programs_ok(&list, GEMM_GENERATED, 1, 1);
  check_programs_ok(&list, GEMM_CUBLASLT, 1, 0);
  kl small = {0};
  tc_kernel_list inl = matmul_bias_gelu_list_m(&small, 1);
  check_programs_ok(&inl, GEMM_AUTO, 1, 0);
  check_programs_ok(&inl, GEMM_GENERATED, 1, 1);
  for (int d = 0; d < 2; d++) { /* a bare product: the GEMM is its only program */
    kl b = {0};
    tc_kernel_list bare = gemm_symbolic_list(&b, d ? TC_F64 : TC_F32);
    check_programs_ok(&bare, GEMM_AUTO, 0, 1);
    check_programs_ok(&bare, GEMM_CUBLASLT, 0, 0);
  }
}

/* A bare product (no epilogue) whose every size, offset and stride is a symbol, two batch
 * levels, f32 and f64: the GEMM stores at C's strides; the GPU-free reference for its index
 * arithmetic (any stride pattern at launch). Large constant sizes take the 128 x 128 tile. */
static tc_kernel_list gemm_symbolic_list(kl *l, int32_t dtype) {
  int32_t sy[20];
  for (int i = 0; i < 20; i++) sy[i] = S(l, i);
  int32_t outer[4] = {sy[0], sy[1], sy[2], sy[3]};
  K(l, "matmul", TC_KERNEL_MATMUL, 4, outer, -1);
  int32_t ba = BUF(l, "in_a", dtype, TC_BUF_INPUT, S(l, 20)), bb = BUF(l, "in_b", dtype, TC_BUF_INPUT, S(l, 21));
  int32_t bc = BUF(l, "out_c", dtype, TC_BUF_OUTPUT, S(l, 22));
  *MM(l) = (tc_matmul_desc){.struct_size = sizeof(tc_matmul_desc), .a = ba, .b = bb, .c = bc, .batch2 = sy[0],
                            .batch = sy[1], .m = sy[2], .n = sy[3], .k = sy[4], .a_offset = sy[5],
                            .a_stride_batch2 = sy[6], .a_stride_batch = sy[7], .a_stride_m = sy[8], .a_stride_k = sy[9],
                            .b_offset = sy[10], .b_stride_batch2 = sy[11], .b_stride_batch = sy[12], .b_stride_k = sy[13],
                            .b_stride_n = sy[14], .c_offset = sy[15], .c_stride_batch2 = sy[16], .c_stride_batch = sy[17],
                            .c_stride_m = sy[18], .c_stride_n = sy[19], .batch_levels = 2};
  return LIST(l, dtype == TC_F64 ? "gemm_symbolic_f64" : "gemm_symbolic_f32", 23);
}

Test(inductor_cuda, generated_gemm_any_strides) {
  for (int d = 0; d < 2; d++) {
    kl l = {0};
    tc_kernel_list list = gemm_symbolic_list(&l, d ? TC_F64 : TC_F32);
    char *src = check_ok(&list);
    assert_has(src, "k_matmul_gemm(const tc_cu_args a)");
    assert_has(src, d ? "typedef double T;" : "typedef float T;");
    assert_has(src, "const long long a_sm = s8;");
    assert_has(src, "out_c[c_off + bi2 * c_sb2 + bi * c_sb + i2 * c_sm + i3 * c_sn] = acc[i][j];");
    free(src);
  }
  kl l = {0};
  int32_t Mv = C(&l, 4096), Nv = C(&l, 3072), Kv = C(&l, 768), one = C(&l, 1), zero = C(&l, 0);
  int32_t outer[3] = {one, Mv, Nv};
  K(&l, "matmul_big", TC_KERNEL_MATMUL, 3, outer, -1);
  int32_t ba = BUF(&l, "in_a", TC_F32, TC_BUF_INPUT, MUL(&l, Mv, Kv)), bb = BUF(&l, "in_w", TC_F32, TC_BUF_INPUT, MUL(&l, Kv, Nv));
  int32_t bc = BUF(&l, "out_y", TC_F32, TC_BUF_OUTPUT, MUL(&l, Mv, Nv));
  *MM(&l) = (tc_matmul_desc){.struct_size = sizeof(tc_matmul_desc), .a = ba, .b = bb, .c = bc, .batch = one, .m = Mv, .n = Nv,
                             .k = Kv, .a_offset = zero, .a_stride_batch = zero, .a_stride_m = Kv, .a_stride_k = one,
                             .b_offset = zero, .b_stride_batch = zero, .b_stride_k = Nv, .b_stride_n = one,
                             .c_offset = zero, .c_stride_batch = zero, .c_stride_m = Nv, .c_stride_n = one,
                             .batch_levels = 1, .batch2 = -1, .a_stride_batch2 = -1, .b_stride_batch2 = -1,
                             .c_stride_batch2 = -1};
  tc_kernel_list big = LIST(&l, "gemm_big", 0);
  char *src = check_ok(&big);
  assert_has(src, "__launch_bounds__(256) k_matmul_big_gemm(const tc_cu_args a)");
  assert_has(src, "enum { BM = 128, BN = 128, BK = 8, THREADS = 256,");
  free(src);
}

/* The generated GEMM run on the CPU (tests/cuda_gemm_emulation.cpp, compiled here by the
 * system's C++ compiler): gemm_symbolic_list's kernel in both dtypes and both tiles, over every
 * stride pattern, batch level, broadcast and edge of its cases, compared bit for bit with FMAs
 * in the order of k. Skipped without a C++20 compiler. */
Test(inductor_cuda, generated_gemm_emulated, .timeout = 300) {
  char dir[] = "/tmp/tc-gemm-emu-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char path[512];
  snprintf(path, sizeof path, "%s/kernels.inc", dir);
  FILE *inc = fopen(path, "w");
  cr_assert_not_null(inc);
  for (int d = 0; d < 2; d++)
    for (int t = 0; t < 2; t++) {
      kl l = {0};
      tc_kernel_list list = gemm_symbolic_list(&l, d ? TC_F64 : TC_F32);
      char *src = NULL;
      const char *msg = NULL;
      tc_status st = tck_test_host_take(th, ext->check_gemm(tck_test_host_api(th), &list, 90, GEMM_GENERATED, t ? 128 : 64, &src),
                                        &msg);
      cr_assert_eq(st, TC_OK, "%s", msg);
      /* the kernel's text: from its signature's line to the closing brace at column 0 */
      const char *name = strstr(src, "k_matmul_gemm(const tc_cu_args a)");
      cr_assert_not_null(name, "%s", src);
      const char *begin = name;
      while (begin > src && begin[-1] != '\n') begin--;
      const char *end = strstr(name, "\n}\n");
      cr_assert_not_null(end);
      fprintf(inc, "%.*sgemm_%s_%d%.*s\n", (int)(name - begin), begin, d ? "f64" : "f32", t ? 128 : 64,
              (int)(end + 3 - (name + strlen("k_matmul_gemm"))), name + strlen("k_matmul_gemm"));
      free(src);
    }
  fclose(inc);
  static char out[16384];
  const int rc = run_emulation(dir, "cuda_gemm_emulation.cpp", "", false, out, sizeof out);
  cr_assert_eq(rc, 0, "the emulated GEMM's results:\n%s", out);
  assert_has(out, "all exact");
}

/* acc + bias + residual, as a residual block's projection: cuBLASLt may run it (bias vector,
 * residual as C); bias + gelu may not (its GELU is the tanh approximation, not PyTorch's erf). */
Test(inductor_cuda, matmul_bias_residual_goes_to_cublaslt) {
  kl l = {0};
  int32_t M = S(&l, 0), N = C(&l, 48), Kd = C(&l, 40), one = C(&l, 1), zero = C(&l, 0), nb = C(&l, 1);
  int32_t outer[3] = {nb, M, N};
  K(&l, "matmul_add_add", TC_KERNEL_MATMUL, 3, outer, -1);
  int32_t ba = BUF(&l, "in_a", TC_F32, TC_BUF_INPUT, MUL(&l, M, Kd)), bb = BUF(&l, "in_w", TC_F32, TC_BUF_INPUT, MUL(&l, N, Kd));
  int32_t bias = BUF(&l, "in_bias", TC_F32, TC_BUF_INPUT, N), bx = BUF(&l, "in_x", TC_F32, TC_BUF_INPUT, MUL(&l, M, N));
  int32_t by = BUF(&l, "out_y", TC_F32, TC_BUF_OUTPUT, MUL(&l, M, N));
  *MM(&l) = (tc_matmul_desc){.struct_size = sizeof(tc_matmul_desc), .a = ba, .b = bb, .c = by, .batch = nb, .m = M, .n = N,
                             .k = Kd, .a_offset = zero, .a_stride_batch = zero, .a_stride_m = Kd, .a_stride_k = one,
                             .b_offset = zero, .b_stride_batch = zero, .b_stride_k = one, .b_stride_n = Kd,
                             .c_offset = zero, .c_stride_batch = zero, .c_stride_m = N, .c_stride_n = one,
                             .batch_levels = 1, .batch2 = -1, .a_stride_batch2 = -1, .b_stride_batch2 = -1,
                             .c_stride_batch2 = -1};
  int32_t acc = OP(&l, TC_KOP_ACC, TC_F32, -1, 0, -1, -1, -1, -1, NOIX);
  int32_t bv = LOAD(&l, -1, bias, IX(-1, -1, -1, one));
  int32_t xv = LOAD(&l, -1, bx, IX(-1, -1, N, one));
  STORE(&l, -1, by, IX(-1, -1, N, one), PRIM(&l, -1, TC_PRIM_ADD, xv, PRIM(&l, -1, TC_PRIM_ADD, acc, bv)));
  tc_kernel_list list = LIST(&l, "residual_test", 1);
  char *src = check_ok(&list);
  assert_has(src, "cuBLASLt adds them in its own epilogue");
  free(src);
  kl l2 = {0};
  tc_kernel_list gelu = matmul_bias_gelu_list(&l2);
  src = check_ok(&gelu);
  assert_lacks(src, "cuBLASLt adds them in its own epilogue");
  free(src);
}

/* The same with one constant row: 1 x 40 x 48 multiply-adds are computed in the epilogue's own
 * kernel (no cuBLASLt call), the dot product by fmaf along k. */
Test(inductor_cuda, small_matmul_inline) {
  kl l = {0};
  tc_kernel_list list = matmul_bias_gelu_list_m(&l, 1);
  char *src = check_ok(&list);
  assert_has(src, "/* a small matmul (1920 multiply-adds) and its epilogue in one kernel");
  assert_has(src, "acc = fmaf(in_a[0LL + i0*0LL + i1*40LL + kk*1LL], in_w[0LL + i0*0LL + kk*1LL + i2*40LL], acc);");
  assert_has(src, "for (long long kk = threadIdx.x & 31; kk < 40LL; kk += 32)");
  assert_has(src, "acc += tc_shfl_xor(acc, o);");
  assert_has(src, "if ((threadIdx.x & 31) == 0) { /* lane 0 holds the sum: the epilogue */");
  assert_has(src, "const float v0 = acc;");
  assert_lacks(src, "acc4"); /* the product is not read from memory */
  free(src);
}

/* attn_block's attention at any B and T (symbols s0, s1): q, k, v read in place from the qkv
 * projection (B, T, 3, 12, d), the output written as merged heads (B, T, 12 * d), (B, heads)
 * as two batch levels. */
static tc_kernel_list attention_list_at(kl *l, int64_t d, bool causal, int64_t causal_offset) {
  int32_t b = S(l, 0), t = S(l, 1), h = C(l, 12), dd = C(l, d), zero = C(l, 0), one = C(l, 1);
  int32_t row = C(l, 36 * d), orow = C(l, 12 * d);
  int32_t n_qkv = MUL(l, MUL(l, b, t), row), n_o = MUL(l, MUL(l, b, t), orow);
  K(l, causal ? "causal_attention" : "attention", TC_KERNEL_ATTENTION, 0, NULL, -1);
  int32_t qkv = BUF(l, "in_qkv", TC_F32, TC_BUF_INPUT, n_qkv), out = BUF(l, "out_y", TC_F32, TC_BUF_OUTPUT, n_o);
  tc_attention_desc *a = AT(l);
  *a = (tc_attention_desc){.struct_size = sizeof *a, .q = qkv, .k = qkv, .v = qkv, .o = out, .batch2 = b, .batch = h,
                           .tq = t, .tk = t, .d = dd, .dv = dd,
                           .q_offset = zero, .q_stride_batch2 = MUL(l, t, row), .q_stride_batch = dd, .q_stride_t = row,
                           .q_stride_d = one,
                           .k_offset = C(l, 12 * d), .k_stride_batch2 = MUL(l, t, row), .k_stride_batch = dd,
                           .k_stride_t = row, .k_stride_d = one,
                           .v_offset = C(l, 24 * d), .v_stride_batch2 = MUL(l, t, row), .v_stride_batch = dd,
                           .v_stride_t = row, .v_stride_d = one,
                           .o_offset = zero, .o_stride_batch2 = MUL(l, t, orow), .o_stride_batch = dd,
                           .o_stride_t = orow, .o_stride_d = one,
                           .scale = 0.125, .causal = causal, .causal_offset = causal_offset};
  return LIST(l, "attention_test", 2);
}
static tc_kernel_list attention_list(kl *l, int64_t d, bool causal) { return attention_list_at(l, d, causal, 1); }

/* Flash attention compiles for sm_90 at the GPU shapes' head size (float4 rows, the p.v slice
 * as float4s) and at the test size's (4: scalar values), with and without the causal mask, in
 * every tile shape and queries per thread the options allow. */
Test(inductor_cuda, flash_attention_compiles) {
  const int64_t dims[2] = {64, 4};
  const int32_t tiles[5][3] = {{0, 0, 0}, {64, 64, 4}, {128, 64, 4}, {128, 32, 4}, {128, 32, 8}};
  cr_assert(ext->base.struct_size >= sizeof(icuda_codegen_check_ext) && ext->check_attention_variant);
  for (int i = 0; i < 10; i++) {
    kl l = {0};
    tc_kernel_list list = attention_list(&l, dims[i % 2], i % 2 == 0);
    char *src = NULL;
    const char *msg = NULL;
    const int32_t *t = tiles[i / 2];
    tc_status st = tck_test_host_take(th, ext->check_attention_variant(tck_test_host_api(th), &list, 90, t[0], t[1], t[2], &src),
                                      &msg);
    cr_assert_eq(st, TC_OK, "%s\n--- source ---\n%s", msg, src ? src : "(none)");
    if (getenv("TC_TEST_DUMP_CUDA")) fprintf(stderr, "%s\n", src);
    char tile[96];
    snprintf(tile, sizeof tile, "%d queries a\n * block, %d keys a tile, %d queries a thread", t[0] ? t[0] : 64,
             t[1] ? t[1] : 32, t[2] ? t[2] : 4);
    assert_has(src, tile);
    char block[64];
    snprintf(block, sizeof block, "__launch_bounds__(%d)", (t[0] ? t[0] : 64) / (t[2] ? t[2] : 4) * 8);
    assert_has(src, block);
    assert_has(src, i % 2 == 0 ? "k_causal_attention(const tc_cu_args a)" : "k_attention(const tc_cu_args a)");
    assert_has(src, "extern __shared__ float4 tc_smem4[];");
    assert_has(src, "alpha[i] = mn == -INFINITY ? 1.0f : expf(m[i] - mn);");
    assert_has(src, i % 2 == 0 ? "const float4 vv = *(const float4 *)&vs[" : "const float vv = vs[");
    assert_has(src, i % 2 == 0 ? "const bool causal = true;" : "const bool causal = false;");
    free(src);
  }
}

/* The register-tiled kernel (cuda.attention_kernel=tiled) compiles in every tile the options
 * allow, at head sizes 64 (float4 values), 4 (scalar values) and 256 (8 x n falls back to 4
 * queries a thread: 32 value columns each), causal and not. */
Test(inductor_cuda, flash_attention_tiled_compiles) {
  const int64_t dims[3] = {64, 4, 256};
  const int32_t tiles[5][2] = {{0, 0}, {4, 4}, {4, 8}, {8, 4}, {8, 8}};
  cr_assert(ext->base.struct_size >= sizeof(icuda_codegen_check_ext) && ext->check_attention_tiled);
  for (int i = 0; i < 15; i++) {
    kl l = {0};
    const int64_t d = dims[i % 3];
    tc_kernel_list list = attention_list(&l, d, i % 2 == 0);
    char *src = NULL;
    const char *msg = NULL;
    const int32_t *t = tiles[i / 3];
    tc_status st =
        tck_test_host_take(th, ext->check_attention_tiled(tck_test_host_api(th), &list, 90, t[0], t[1], &src), &msg);
    cr_assert_eq(st, TC_OK, "%s\n--- source ---\n%s", msg, src ? src : "(none)");
    if (getenv("TC_TEST_DUMP_CUDA")) fprintf(stderr, "%s\n", src);
    int32_t tm = t[0] ? t[0] : 8, tn = t[1] ? t[1] : 8;
    if (d == 256) tm = 4;
    char tile[96];
    snprintf(tile, sizeof tile, "%d queries a block, %d keys a tile, %d x %d scores a thread", 16 * tm, 8 * tn, tm, tn);
    assert_has(src, tile);
    assert_has(src, "__launch_bounds__(128)");
    assert_has(src, "flash attention, register-tiled");
    assert_has(src, i % 2 == 0 ? "const bool causal = true;" : "const bool causal = false;");
    assert_has(src, d == 4 ? "const float vv = vrow[" : "const float4 vv = *(const float4 *)&vrow[");
    free(src);
  }
}


/* An enum constant of the generated kernel ("BM = 64"); -1 when absent. */
static int enum_value(const char *src, const char *name) {
  char key[32];
  snprintf(key, sizeof key, " %s = ", name);
  const char *p = strstr(src, key);
  return p ? atoi(p + strlen(key)) : -1;
}

/* Both flash-attention kernels run on the CPU (tests/cuda_attention_emulation.cpp, compiled here
 * by the system's C++ compiler): v1 and every tile of the tiled kernel, at head sizes 64 and 5
 * (scalar copies, padded rows), causal (every query sees a key; the first two see none) and not,
 * over ragged T, compared with a double-precision reference. Skipped without a C++20 compiler. */
Test(inductor_cuda, flash_attention_emulated, .timeout = 900) {
  char dir[] = "/tmp/tc-attn-emu-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char path[512];
  snprintf(path, sizeof path, "%s/kernels.inc", dir);
  FILE *inc = fopen(path, "w");
  cr_assert_not_null(inc);
  /* (kernel: 0 v1, 1 tiled; tile m, tile n) x (d, causal, causal_offset) */
  const int32_t variants[][3] = {{0, 0, 0}, {1, 4, 4}, {1, 4, 8}, {1, 8, 4}, {1, 8, 8}};
  const struct { int64_t d; bool causal; int64_t offset; } shapes[] = {{64, true, 1}, {64, false, 1}, {5, true, -2}, {5, false, 1}};
  const int nv = (int)(sizeof variants / sizeof variants[0]), ns = (int)(sizeof shapes / sizeof shapes[0]);
  char table[8192] = "";
  size_t tl = 0;
  for (int v = 0; v < nv; v++)
    for (int h = 0; h < ns; h++) {
      kl l = {0};
      tc_kernel_list list = attention_list_at(&l, shapes[h].d, shapes[h].causal, shapes[h].offset);
      char *src = NULL;
      const char *msg = NULL;
      const int32_t *t = variants[v];
      tc_status st = tck_test_host_take(
          th, t[0] ? ext->check_attention_tiled(tck_test_host_api(th), &list, 90, t[1], t[2], &src)
                   : ext->check_attention_variant(tck_test_host_api(th), &list, 90, 0, 0, 0, &src),
          &msg);
      cr_assert_eq(st, TC_OK, "%s", msg);
      const char *fname = shapes[h].causal ? "k_causal_attention(const tc_cu_args a)" : "k_attention(const tc_cu_args a)";
      const char *name = strstr(src, fname);
      cr_assert_not_null(name, "%s", src);
      const char *begin = name;
      while (begin > src && begin[-1] != '\n') begin--;
      const char *end = strstr(name, "\n}\n");
      cr_assert_not_null(end);
      /* shared memory as the plan sizes it: q, k, v and p (tiled) or q and two k-or-p and v (v1) */
      const int bm = enum_value(src, "BM"), bn = enum_value(src, "BN"), d = enum_value(src, "D"),
                dv8 = enum_value(src, "DV8"), d4 = (d + 3) / 4 * 4;
      const bool tiled = strstr(src, "register-tiled") != NULL;
      const int kp = d4 + 4 > bm + 4 ? d4 + 4 : bm + 4;
      const int smem = tiled ? 4 * (d * (bm + 4) + d * (bn + 4) + bn * dv8 + bm * (bn + 4))
                             : 4 * (d4 * (bm + 4) + 2 * (bn * kp + bn * dv8));
      const char *lb = strstr(src, "__launch_bounds__(");
      cr_assert(bm > 0 && bn > 0 && d > 0 && dv8 > 0 && lb);
      const int threads = atoi(lb + strlen("__launch_bounds__("));
      /* the kernel renamed, its dynamic shared memory the emulation's */
      char kname[32];
      snprintf(kname, sizeof kname, "attn_%d_%d", v, h);
      const char *decl = "extern __shared__ float4 tc_smem4[];";
      const char *sh = strstr(name, decl);
      cr_assert(sh && sh < end);
      fprintf(inc, "%.*s%s%.*s%.*s\n", (int)(name - begin), begin, kname,
              (int)(sh - (name + strlen(fname) - strlen("(const tc_cu_args a)"))),
              name + strlen(fname) - strlen("(const tc_cu_args a)"), (int)(end + 3 - (sh + strlen(decl))),
              sh + strlen(decl));
      tl += (size_t)snprintf(table + tl, sizeof table - tl,
                             "  {\"%s %dx%dx%d d %d %s %d\", %s, %d, %d, %d, %d, %s, %lldLL},\n",
                             tiled ? "tiled" : "v1", bm, bn, tiled ? enum_value(src, "TM") : enum_value(src, "QPT"), d,
                             shapes[h].causal ? "causal" : "no mask", (int)shapes[h].offset, kname, bm, threads, smem,
                             d, shapes[h].causal ? "true" : "false", (long long)shapes[h].offset);
      free(src);
    }
  fprintf(inc, "static const emu_kernel emu_kernels[] = {\n%s};\nstatic const int n_emu_kernels = %d;\n", table, nv * ns);
  fclose(inc);
  static char out[65536];
  const int rc = run_emulation(dir, "cuda_attention_emulation.cpp", getenv("TC_TEST_ATTN_EMU_FULL") ? "" : "quick",
                               getenv("TC_TEST_ATTN_EMU_KEEP") != NULL, out, sizeof out);
  if (getenv("TC_TEST_DUMP_CUDA")) fprintf(stderr, "%s", out);
  cr_assert_eq(rc, 0, "the emulated attention's results:\n%s", out);
  assert_has(out, "all close");
}

/* ---------------------------------------------------------------- the CI check
 * Backend "cuda-check": inductor-cpu (the build tree's plugin) registered in process, whose
 * compile first runs inductor-cuda's codegen check on the same kernel list and fails with its
 * error. The whole conformance suite on it: every graph must generate CUDA that compiles. */
static tc_plugin_query_fn cpu_query;
static tc_error *(*cpu_compile)(tc_compile_args *);
static const tc_host_api *check_host;
static int checked, gemm_checked;

static tc_error *checking_compile(tc_compile_args *a) {
  if (a->kernels) {
    tc_error *e = ext->check(check_host, a->kernels, 90, NULL);
    if (e) return e;
    checked++;
    /* a list with a matmul again as cuda.gemm=generated: every product's generated GEMM, the
     * small ones that auto computes inline included, each kernel's and each GEMM's program
     * compiled on its own as the runtime compiles them (a GEMM's in the background) */
    bool matmul = false;
    for (int32_t i = 0; i < a->kernels->n_kernels; i++) matmul |= tck_list_kernel(a->kernels, i)->kind == TC_KERNEL_MATMUL;
    int32_t n_gemms = 0;
    if (matmul && (e = ext->check_programs(check_host, a->kernels, 90, GEMM_GENERATED, NULL, &n_gemms))) return e;
    if (matmul && n_gemms == 0)
      return check_host->error_new(check_host->host_ctx, TC_ERR_INTERNAL, "a list with a matmul has no generated GEMM program");
    gemm_checked += matmul;
  }
  return cpu_compile(a);
}

static tc_error *checking_query(tc_query_args *q) {
  tc_error *err = cpu_query(q);
  if (err) return err;
  check_host = q->host;
  q->table->name = "cuda-check";
  q->table->option_prefix = "cuda-check";
  q->table->n_options = 0;
  cpu_compile = q->table->compile;
  q->table->compile = checking_compile;
  return NULL;
}

Test(inductor_cuda, conformance_graphs_compile_for_sm90, .timeout = 900) {
  char why[1200];
  if (!test_plugin_entry("tc-inductor-cpu.so", &cpu_query, why, sizeof why)) cr_skip_test("%s", why);
  cr_assert_not_null(cpu_query);
  cr_assert_eq(tc_backend_register(checking_query), TC_OK, "%s", tc_last_error());
  char *text = NULL;
  size_t len = 0;
  FILE *log = open_memstream(&text, &len);
  cr_assert(log);
  conf_result r = conf_run_all("cuda-check", NULL, false, log);
  fclose(log);
  cr_expect(r.passed > 0 && checked > 0, "no case ran (%d registered, %d lists checked)", conf_case_count(), checked);
  cr_expect_eq(r.failed, 0, "%d of %d conformance graphs fail the CUDA check:\n%s", r.failed, r.passed + r.failed, text);
  cr_expect(gemm_checked > 0, "no list with a matmul was compiled with cuda.gemm=generated");
  fprintf(stderr,
          "inductor_cuda: %d conformance cases, %d kernel lists generated and compiled for sm_90 (%d with a matmul, "
          "again with cuda.gemm=generated, program by program)\n",
          r.passed + r.failed, checked, gemm_checked);
  free(text);
}

/* The exit wait that keeps a short process alive while cuBLASLt starts on a thread
 * (plugins/inductor-cuda/exit_wait.c), on a stand-in library that registers its teardown from
 * the thread (tests/exit_wait_scenario.c): with the wait, exit lets the thread finish first; with
 * a plain atexit wait (session 10's crash), the teardown runs under the thread, which the
 * scenario reports as exit status 3. The second case shows the scenario catches the fault. */
static int exit_wait_scenario(const char *dir, const char *mode) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "cd %s && ${CC:-cc} -O1 -pthread -I%s/plugins/inductor-cuda -o scenario %s/tests/exit_wait_scenario.c "
           "%s/plugins/inductor-cuda/exit_wait.c && ./scenario %s",
           dir, TC_SOURCE_DIR, TC_SOURCE_DIR, TC_SOURCE_DIR, mode);
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

Test(inductor_cuda_exit, exit_waits_for_a_thread_inside_a_lazily_torn_down_library) {
  char dir[] = "/tmp/tc_exit_wait_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  for (int i = 0; i < 3; i++) cr_expect_eq(exit_wait_scenario(dir, "wait"), 0, "run %d: exit did not wait", i);
  cr_expect_eq(exit_wait_scenario(dir, "atexit"), 3, "an atexit wait alone should lose the race (the scenario is broken)");
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert_eq(system(cmd), 0);
}
