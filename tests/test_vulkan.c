/* test_vulkan.c — the vulkan plugin on its own: dlopen'd from the build tree, fed hand-built
 * kernel descriptors, results compared with plain C references. Every SPIR-V module the
 * plugin generates is dumped (vulkan.dump_spirv) and must pass spirv-val. Skipped when no
 * Vulkan device is present (lavapipe counts). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schedule/schedule_reuse.h"
#include "tc_kit.h"
#include "tc_plugin.h"

/* ------------------------------------------------------------------ the kit's test host */

static char g_err[2048];
static char g_dump_dir[256], g_cache_dir[256];
static int g_cache_hits;
/* Every test runs under the Khronos validation layer with synchronization validation when the
 * layer is installed (scripts/deps.sh installs it): any message it reports fails the test, a
 * missing barrier between dependent dispatches included. */
static int g_validation_msgs;
static char g_validation_first[1024];
static char g_queue_last[256]; /* the last TC_LOGS=queue line: dispatches, barriers, submissions */
static bool g_profile;          /* TC_LOGS=profile on (read by the plugin at init) */
static char g_profile_last[512];
static bool g_log_vulkan;   /* the plugin's own INFO lines on */
static const char *g_matmul_tile; /* vulkan.matmul_tile for the next init */
static const char *g_device_opt;  /* vulkan.device for the next init */
static int g_sets_dropped; /* "dropping them" lines: an executable's descriptor sets were dropped */
static char g_init_line[512]; /* the "init" log line of the last init */
/* "cache" lines about pipelines: how many compile made ahead (the last compile's line; -1:
 * none logged) and how many a launch had to create because compile had not */
static int g_prepared = -1, g_prepared_threads;
static int g_lazy_pipelines;

static tck_test_host *g_th;
static void *g_dl;
static tc_plugin_api g_api;
static tc_plugin_ctx *g_ctx;

/* Reads what the plugin logged since the last call into the counters above. */
static void logs_pump(void) {
  const char *log = tck_test_host_log(g_th);
  for (const char *line = log; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    char l[2048];
    snprintf(l, sizeof l, "%.*s", (int)(n < sizeof l - 1 ? n : sizeof l - 1), line);
    const char *m = strchr(l, ']') ? strchr(l, ']') + 2 : l;
    if (strncmp(l, "[cache]", 7) == 0 && strstr(m, "cache hit")) g_cache_hits++;
    if (strncmp(l, "[vulkan]", 8) == 0 && strncmp(m, "validation: ", 12) == 0 && g_validation_msgs++ == 0)
      snprintf(g_validation_first, sizeof g_validation_first, "%.500s", m);
    if (strncmp(l, "[queue]", 7) == 0) snprintf(g_queue_last, sizeof g_queue_last, "%.200s", m);
    if (strncmp(l, "[profile]", 9) == 0) snprintf(g_profile_last, sizeof g_profile_last, "%.500s", m);
    if (strncmp(l, "[init]", 6) == 0) snprintf(g_init_line, sizeof g_init_line, "%.500s", m);
    if (strncmp(l, "[vulkan]", 8) == 0 && strstr(m, "descriptor sets; dropping them")) g_sets_dropped++;
    const char *made = strncmp(l, "[cache]", 7) == 0 ? strstr(m, "': ") : NULL;
    int n_made, n_threads;
    if (made && strstr(m, " pipelines created in ") && sscanf(made, "': %d pipelines created in %*f ms on %d threads", &n_made, &n_threads) == 2)
      g_prepared = n_made, g_prepared_threads = n_threads;
    if (strncmp(l, "[cache]", 7) == 0 && strstr(m, " created at its launch in ")) g_lazy_pipelines++;
    if (getenv("TC_VK_TEST_VERBOSE")) fprintf(stderr, "%s\n", l);
    line = end ? end + 1 : NULL;
  }
  tck_test_host_log_clear(g_th);
}

static void logs_config(void) {
  char cats[128];
  snprintf(cats, sizeof cats, "cache,queue,init%s%s", g_profile ? ",profile" : "", g_log_vulkan ? ",vulkan" : "");
  tck_test_host_set_logs(g_th, getenv("TC_VK_TEST_VERBOSE") ? "cache,queue,init,profile,vulkan" : cats);
}

/* An entry's result as a status, its message in g_err; the logs read. */
static tc_status took(tc_error *e) {
  const char *m = "";
  tc_status st = tck_test_host_take(g_th, e, &m);
  snprintf(g_err, sizeof g_err, "%s", m ? m : "");
  logs_pump();
  return st;
}

/* The ABI's entries with the test's arguments. */
static tc_status api_init(tc_plugin_ctx **ctx) {
  logs_config();
  const char *validation = getenv("TC_VK_TEST_NO_VALIDATION") ? "0" : "sync";
  tc_option opts[3] = {
      {.struct_size = sizeof(tc_option), .name = "vulkan.validation", .value = validation, .set = true},
      {.struct_size = sizeof(tc_option), .name = "vulkan.matmul_tile", .value = g_matmul_tile ? g_matmul_tile : "0",
       .set = g_matmul_tile != NULL},
      {.struct_size = sizeof(tc_option), .name = "vulkan.device", .value = g_device_opt, .set = g_device_opt != NULL},
  };
  tc_init_args a = {.struct_size = sizeof a, .host = tck_test_host_api(g_th), .device = -1, .n_options = 3,
                    .options = opts, .option_size = sizeof(tc_option)};
  tc_status st = took(g_api.init(&a));
  *ctx = a.ctx;
  return st;
}
static void api_release(tc_plugin_ctx *ctx) {
  tc_release_args a = {.struct_size = sizeof a, .ctx = ctx};
  g_api.release(&a);
  logs_pump();
}
/* Each executable's symbol count, for tc_launch_args.n_syms. */
static struct {
  tc_executable *exe;
  int32_t n_syms;
} g_exe_syms[64];
static int32_t exe_n_syms(tc_executable *exe) {
  for (int i = 0; i < 64; i++)
    if (g_exe_syms[i].exe == exe) return g_exe_syms[i].n_syms;
  return 0;
}
static tc_status api_launch(tc_executable *exe, int32_t kernel, const tc_buffer_arg *args, int32_t n_args,
                            const int64_t *syms, uint64_t call_id) {
  logs_config();
  tc_launch_args a = {.struct_size = sizeof a, .ctx = g_ctx, .exe = exe, .kernel = kernel, .n_args = n_args,
                      .args = args, .arg_size = sizeof(tc_buffer_arg), .n_syms = exe_n_syms(exe), .syms = syms,
                      .call_id = call_id};
  return took(g_api.launch(&a));
}
#define LAUNCH(exe, args, syms) api_launch(exe, 0, args, (int32_t)(sizeof(args) / sizeof((args)[0])), syms, 1)
static tc_status api_flush(void) {
  tc_queue_args a = {.struct_size = sizeof a, .ctx = g_ctx};
  return took(g_api.flush(&a));
}
static tc_status api_synchronize(void) {
  tc_queue_args a = {.struct_size = sizeof a, .ctx = g_ctx};
  return took(g_api.synchronize(&a));
}
static tc_status api_buffer_alloc(size_t bytes, tc_buffer **out) {
  tc_buffer_alloc_args a = {.struct_size = sizeof a, .ctx = g_ctx, .bytes = bytes};
  tc_status st = took(g_api.buffer_alloc(&a));
  *out = a.buffer;
  return st;
}
static void api_buffer_free(tc_buffer *b) {
  tc_buffer_free_args a = {.struct_size = sizeof a, .ctx = g_ctx, .buffer = b};
  g_api.buffer_free(&a);
}
static tc_status api_buffer_write(tc_buffer *b, size_t off, const void *src, size_t bytes) {
  tc_buffer_copy_args a = {.struct_size = sizeof a, .ctx = g_ctx, .buffer = b, .offset = off, .host = (void *)src, .bytes = bytes};
  return took(g_api.buffer_write(&a));
}
static tc_status api_buffer_read(tc_buffer *b, size_t off, void *dst, size_t bytes) {
  tc_buffer_copy_args a = {.struct_size = sizeof a, .ctx = g_ctx, .buffer = b, .offset = off, .host = dst, .bytes = bytes};
  return took(g_api.buffer_read(&a));
}
static void api_executable_free(tc_executable *exe) {
  tc_executable_free_args a = {.struct_size = sizeof a, .ctx = g_ctx, .exe = exe};
  g_api.executable_free(&a);
  logs_pump();
}
static const char *api_source(tc_executable *exe) {
  tc_executable_info_args a = {.struct_size = sizeof a, .ctx = g_ctx, .exe = exe};
  cr_assert_eq(took(g_api.executable_info(&a)), TC_OK, "%s", g_err);
  return a.source;
}
static tc_status api_probe(tc_probe_args *a) {
  *a = (tc_probe_args){.struct_size = sizeof *a, .host = tck_test_host_api(g_th)};
  return took(g_api.probe(a));
}

static void rm_dir_files(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char p[512];
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  closedir(d);
}

static bool plugin_load(void) {
  char path[512], err[512];
  snprintf(path, sizeof path, "%s/tc-vulkan.so", TC_BUILD_PLUGIN_DIR);
  g_th = tck_test_host_new(g_cache_dir, "cache,queue,init");
  cr_assert(g_th);
  cr_assert(tck_test_plugin_open(g_th, path, &g_api, &g_dl, err, sizeof err), "%s", err);
  cr_assert_str_eq(g_api.name, "vulkan");
  cr_assert_eq(g_api.memory, TC_MEMORY_DEVICE);
  tc_probe_args info;
  cr_assert_eq(api_probe(&info), TC_OK, "%s", g_err);
  return info.available;
}

static void setup(void) {
  snprintf(g_dump_dir, sizeof g_dump_dir, "/tmp/tc-vulkan-test-spv-%d", (int)getpid());
  snprintf(g_cache_dir, sizeof g_cache_dir, "/tmp/tc-vulkan-test-cache-%d", (int)getpid());
  mkdir(g_dump_dir, 0755);
  mkdir(g_cache_dir, 0755);
  if (!plugin_load()) cr_skip_test("no Vulkan device");
  cr_assert_eq(api_init(&g_ctx), TC_OK, "%s", g_err);
}

/* Every dumped module must pass spirv-val. */
static void spirv_validate_all(void) {
  DIR *d = opendir(g_dump_dir);
  cr_assert(d);
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "spirv-val --target-env vulkan1.2 '%s/%s' 2>&1", g_dump_dir, e->d_name);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char out[4096] = "";
    size_t got = fread(out, 1, sizeof out - 1, p);
    out[got] = '\0';
    int rc = pclose(p);
    cr_expect_eq(rc, 0, "spirv-val %s failed: %s", e->d_name, out);
    n++;
  }
  closedir(d);
  cr_expect_gt(n, 0, "no SPIR-V was dumped to %s", g_dump_dir);
}

static void teardown(void) {
  if (g_ctx) {
    spirv_validate_all();
    api_release(g_ctx);
  }
  g_validation_msgs = 0;
  g_ctx = NULL;
  if (g_dl) dlclose(g_dl);
  g_dl = NULL;
  if (g_th) tck_test_host_free(g_th);
  g_th = NULL;
  rm_dir_files(g_dump_dir);
  rmdir(g_dump_dir);
  rm_dir_files(g_cache_dir);
  rmdir(g_cache_dir);
}

/* ------------------------------------------------------------------ descriptor builders */

typedef struct kbuild {
  tc_size_expr ex[64];
  int32_t n_ex;
  tc_kop ops[64];
  tc_index ixs[64];  /* ops[i].index points here */
  int32_t argv[64][3];
  int32_t n_ops;
  tc_kbuffer bufs[16];
  int32_t n_bufs;
  int32_t outer[TC_MAX_RANK];
  tc_matmul_desc mm;
} kbuild;

static int32_t ex_add(kbuild *b, int32_t op, int32_t a, int32_t c, int64_t v) {
  b->ex[b->n_ex] = (tc_size_expr){.struct_size = sizeof(tc_size_expr), .op = op, .a = a, .b = c, .value = v};
  return b->n_ex++;
}
static int32_t E_c(kbuild *b, int64_t v) { return ex_add(b, TC_SX_CONST, 0, 0, v); }
static int32_t E_s(kbuild *b, int64_t s) { return ex_add(b, TC_SX_SYM, 0, 0, s); }
static int32_t E_mul(kbuild *b, int32_t x, int32_t y) { return ex_add(b, TC_SX_MUL, x, y, 0); }

static int32_t buf(kbuild *b, const char *name, int32_t dtype, int32_t role, int32_t numel) {
  b->bufs[b->n_bufs] = (tc_kbuffer){.struct_size = sizeof(tc_kbuffer), .name = name, .dtype = dtype, .role = role, .numel = numel};
  return b->n_bufs++;
}

/* Stride arrays of the indices the tests build (n_vars is set by kdesc). */
static int32_t g_strides[1024][TC_MAX_RANK + 1];
static int g_n_strides;

static tc_index IX(int32_t off, int32_t s0, int32_t s1, int32_t s2) {
  int32_t *st = g_strides[g_n_strides++ % 1024];
  for (int i = 0; i <= TC_MAX_RANK; i++) st[i] = -1;
  st[0] = s0;
  st[1] = s1;
  st[2] = s2;
  return (tc_index){.struct_size = sizeof(tc_index), .offset = off, .n_vars = 3, .strides = st, .indirect = -1,
                    .indirect_stride = -1};
}

static void set_ix(kbuild *b, int32_t i, tc_index ix) {
  b->ixs[i] = ix;
  b->ops[i].index = &b->ixs[i];
}

static int32_t op(kbuild *b, int32_t kind, int32_t dtype, int32_t loop, int32_t prim, int32_t a0, int32_t a1, int32_t a2) {
  int32_t i = b->n_ops;
  tc_kop *o = &b->ops[i];
  b->argv[i][0] = a0, b->argv[i][1] = a1, b->argv[i][2] = a2;
  int32_t n = a0 < 0 ? 0 : a1 < 0 ? 1 : a2 < 0 ? 2 : 3;
  *o = (tc_kop){.struct_size = sizeof(tc_kop), .kind = kind, .dtype = dtype, .loop = loop, .prim = prim, .n_args = n,
                .args = b->argv[i], .buffer = -1, .reuse = -1};
  return b->n_ops++;
}
static int32_t load(kbuild *b, int32_t loop, int32_t bf, int32_t dtype, tc_index ix) {
  int32_t i = op(b, TC_KOP_LOAD, dtype, loop, 0, -1, -1, -1);
  b->ops[i].buffer = bf;
  set_ix(b, i, ix);
  return i;
}
static int32_t store(kbuild *b, int32_t loop, int32_t bf, int32_t dtype, tc_index ix, int32_t v) {
  int32_t i = op(b, TC_KOP_STORE, dtype, loop, 0, v, -1, -1);
  b->ops[i].buffer = bf;
  set_ix(b, i, ix);
  return i;
}
static int32_t prim1(kbuild *b, int32_t loop, int32_t p, int32_t dtype, int32_t x) { return op(b, TC_KOP_PRIM, dtype, loop, p, x, -1, -1); }
static int32_t prim2(kbuild *b, int32_t loop, int32_t p, int32_t dtype, int32_t x, int32_t y) {
  return op(b, TC_KOP_PRIM, dtype, loop, p, x, y, -1);
}
static int32_t cnst(kbuild *b, int32_t loop, int32_t dtype, double f) {
  int32_t i = op(b, TC_KOP_CONST, dtype, loop, 0, -1, -1, -1);
  b->ops[i].fconst = f;
  b->ops[i].iconst = (int64_t)f;
  return i;
}
static int32_t reduce(kbuild *b, int32_t loop, int32_t p, int32_t dtype, int32_t x) { return op(b, TC_KOP_REDUCE, dtype, loop, p, x, -1, -1); }

/* The kernel descriptor over b, with what the scheduler would decide: every index has
 * n_outer + 1 variables, and reuse / TC_KOP_OVERWRITTEN come from schedule_fill_reuse. */
static tc_kernel_desc kdesc(kbuild *b, const char *name, int32_t kind, int32_t n_outer, const int32_t *outer, int32_t inner) {
  for (int i = 0; i < n_outer; i++) b->outer[i] = outer[i];
  for (int32_t i = 0; i < b->n_ops; i++)
    if (b->ops[i].index) b->ixs[i].n_vars = n_outer + 1;
  if (kind == TC_KERNEL_LOOP) schedule_fill_reuse(b->ops, b->n_ops, n_outer + 1);
  return (tc_kernel_desc){.struct_size = sizeof(tc_kernel_desc), .name = name, .kind = kind, .n_outer = n_outer,
                          .outer = b->outer, .inner = inner, .n_buffers = b->n_bufs, .buffers = b->bufs,
                          .buffer_size = sizeof(tc_kbuffer), .n_ops = b->n_ops, .ops = b->ops, .op_size = sizeof(tc_kop)};
}

/* Compiles kernels k[0..n_kernels-1] over b's expressions as graph `name`. */
static tc_executable *compile_list(const char *name, kbuild *b, tc_kernel_desc *k, int32_t n_kernels, int32_t n_syms) {
  tc_kernel_list list = {.struct_size = sizeof list, .name = name, .n_exprs = b->n_ex, .exprs = b->ex,
                         .expr_size = sizeof(tc_size_expr), .n_syms = n_syms, .n_kernels = n_kernels, .kernels = k,
                         .kernel_size = sizeof(tc_kernel_desc)};
  tc_option opts[2] = {
      {.struct_size = sizeof(tc_option), .name = "vulkan.dump_spirv", .value = g_dump_dir, .set = true},
      {.struct_size = sizeof(tc_option), .name = "vulkan.spirv_opt", .value = "0", .set = false},
  };
  tc_compile_args a = {.struct_size = sizeof a, .ctx = g_ctx, .kernels = &list, .n_options = 2, .options = opts,
                       .option_size = sizeof(tc_option)};
  tc_status st = took(g_api.compile(&a));
  cr_assert_eq(st, TC_OK, "compile(%s): %s", name, g_err);
  const char *src = api_source(a.exe);
  cr_assert(src && strstr(src, "#version 450"));
  if (getenv("TC_VK_TEST_SOURCE")) fprintf(stderr, "%s\n", src);
  static int next;
  g_exe_syms[next++ % 64].exe = a.exe, g_exe_syms[(next - 1) % 64].n_syms = n_syms;
  return a.exe;
}

static tc_executable *compile1(kbuild *b, tc_kernel_desc *k, int32_t n_syms) { return compile_list(k->name, b, k, 1, n_syms); }

/* ------------------------------------------------------------------ device buffers */

static tc_buffer *dev_from(const void *host, size_t bytes) {
  tc_buffer *b = NULL;
  cr_assert_eq(api_buffer_alloc(bytes ? bytes : 4, &b), TC_OK, "%s", g_err);
  if (host && bytes) cr_assert_eq(api_buffer_write(b, 0, host, bytes), TC_OK, "%s", g_err);
  return b;
}
static void dev_read(tc_buffer *b, void *host, size_t bytes) {
  cr_assert_eq(api_synchronize(), TC_OK, "%s", g_err);
  cr_assert_eq(api_buffer_read(b, 0, host, bytes), TC_OK, "%s", g_err);
}
static tc_buffer_arg A(tc_buffer *b) { return (tc_buffer_arg){.struct_size = sizeof(tc_buffer_arg), .buffer = b}; }

static float frand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void expect_close(const float *got, const double *want, int64_t n, double rtol, double atol, const char *what) {
  for (int64_t i = 0; i < n; i++) {
    double tol = atol + rtol * fabs(want[i]);
    if (!(fabs((double)got[i] - want[i]) <= tol)) {
      cr_assert_fail("%s: element %lld: got %.9g, want %.9g", what, (long long)i, (double)got[i], want[i]);
    }
  }
}

/* ------------------------------------------------------------------ tests */

TestSuite(vulkan, .init = setup, .fini = teardown, .timeout = 300);

/* A test whose body must leave the validation layer silent (assertions in .fini do not fail a
 * test, so the check runs at the end of each body). */
static void expect_no_validation_messages(void) {
  if (g_ctx && g_api.synchronize) api_synchronize();
  cr_assert_eq(g_validation_msgs, 0, "the validation layer reported %d message(s), the first: %s", g_validation_msgs,
               g_validation_first);
}
#define VK_TEST(name)                                                                                                  \
  static void name##_body(void);                                                                                       \
  Test(vulkan, name) {                                                                                                 \
    name##_body();                                                                                                     \
    expect_no_validation_messages();                                                                                   \
  }                                                                                                                    \
  static void name##_body(void)

VK_TEST(probe_lists_devices) {
  tc_probe_args info;
  cr_assert_eq(api_probe(&info), TC_OK, "%s", g_err);
  cr_assert(info.available);
  cr_assert_gt(info.n_devices, 0);
  cr_assert(info.devices && info.devices[0].name && info.devices[0].name[0] != '\0');
  const tc_capabilities_ext *caps = (const tc_capabilities_ext *)tc_ext_find(g_api.extensions, TC_EXT_CAPABILITIES);
  cr_assert_not_null(caps, "the vulkan plugin declares its capabilities");
  cr_assert(caps->dtypes & (1u << TC_F32));
  cr_assert(caps->kernel_kinds & (1u << TC_KERNEL_MATMUL));
  cr_assert(caps->n_prim_words >= 2 && (caps->prims[TC_PRIM_MATMUL / 64] & (1ull << (TC_PRIM_MATMUL % 64))));
  /* a trivial kernel so the teardown's spirv-val has a module to check */
  kbuild b = {0};
  int32_t n = E_s(&b, 0), one = E_c(&b, 1), z = E_c(&b, 0);
  int32_t x = buf(&b, "in_x", TC_F32, TC_BUF_INPUT, n), y = buf(&b, "out_y", TC_F32, TC_BUF_OUTPUT, n);
  int32_t l = load(&b, -1, x, TC_F32, IX(z, one, -1, -1));
  store(&b, -1, y, TC_F32, IX(z, one, -1, -1), prim1(&b, -1, TC_PRIM_NEG, TC_F32, l));
  tc_kernel_desc k = kdesc(&b, "neg", TC_KERNEL_LOOP, 1, &n, -1);
  tc_executable *exe = compile1(&b, &k, 1);
  float in[5] = {1, -2, 3, -4, 5}, out[5];
  tc_buffer *bx = dev_from(in, sizeof in), *by = dev_from(NULL, sizeof out);
  tc_buffer_arg args[2] = {A(bx), A(by)};
  int64_t syms[1] = {5};
  cr_assert_eq(LAUNCH(exe, args, syms), TC_OK, "%s", g_err);
  dev_read(by, out, sizeof out);
  for (int i = 0; i < 5; i++) cr_assert_eq(out[i], -in[i]);
  api_buffer_free(bx);
  api_buffer_free(by);
  api_executable_free(exe);
}

/* y[i, j] = tanh(x[i, j] * w[j] + b[i]) with broadcast strides; symbolic M, N run at several
 * sizes with one executable (vectorized when N % 4 == 0, scalar otherwise). */
VK_TEST(pointwise_broadcast_symbolic) {
  kbuild b = {0};
  int32_t M = E_s(&b, 0), N = E_s(&b, 1), MN = E_mul(&b, M, N), one = E_c(&b, 1), z = E_c(&b, 0);
  int32_t bx = buf(&b, "in_x", TC_F32, TC_BUF_INPUT, MN), bw = buf(&b, "in_w", TC_F32, TC_BUF_INPUT, N);
  int32_t bb = buf(&b, "in_b", TC_F32, TC_BUF_INPUT, M), by = buf(&b, "out_y", TC_F32, TC_BUF_OUTPUT, MN);
  int32_t x = load(&b, -1, bx, TC_F32, IX(z, N, one, -1));
  int32_t w = load(&b, -1, bw, TC_F32, IX(z, -1, one, -1));
  int32_t bi = load(&b, -1, bb, TC_F32, IX(z, one, -1, -1));
  int32_t t = prim2(&b, -1, TC_PRIM_ADD, TC_F32, prim2(&b, -1, TC_PRIM_MUL, TC_F32, x, w), bi);
  store(&b, -1, by, TC_F32, IX(z, N, one, -1), prim1(&b, -1, TC_PRIM_TANH, TC_F32, t));
  int32_t outer[2] = {M, N};
  tc_kernel_desc k = kdesc(&b, "mul_add_tanh", TC_KERNEL_LOOP, 2, outer, -1);
  tc_executable *exe = compile1(&b, &k, 2);
  int64_t sizes[][2] = {{37, 64}, {5, 30}, {300, 1028}};
  for (int c = 0; c < 3; c++) {
    int64_t m = sizes[c][0], n = sizes[c][1];
    float *hx = malloc(sizeof(float) * m * n), *hw = malloc(sizeof(float) * n), *hb = malloc(sizeof(float) * m);
    float *hy = malloc(sizeof(float) * m * n);
    double *want = malloc(sizeof(double) * m * n);
    unsigned s = 1;
    for (int64_t i = 0; i < m * n; i++) hx[i] = frand(&s) * 3;
    for (int64_t i = 0; i < n; i++) hw[i] = frand(&s);
    for (int64_t i = 0; i < m; i++) hb[i] = frand(&s);
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) want[i * n + j] = tanh((double)hx[i * n + j] * hw[j] + hb[i]);
    tc_buffer *dx = dev_from(hx, sizeof(float) * m * n), *dw = dev_from(hw, sizeof(float) * n);
    tc_buffer *db = dev_from(hb, sizeof(float) * m), *dy = dev_from(NULL, sizeof(float) * m * n);
    tc_buffer_arg args[4] = {A(dx), A(dw), A(db), A(dy)};
    int64_t syms[2] = {m, n};
    cr_assert_eq(LAUNCH(exe, args, syms), TC_OK, "%s", g_err);
    dev_read(dy, hy, sizeof(float) * m * n);
    expect_close(hy, want, m * n, 1e-5, 1e-6, "pointwise");
    api_buffer_free(dx);
    api_buffer_free(dw);
    api_buffer_free(db);
    api_buffer_free(dy);
    free(hx), free(hw), free(hb), free(hy), free(want);
  }
  api_executable_free(exe);
}

/* The shader's exp and erf against libm in double over a dense sweep (every 4096th float of
 * the range, plus the specials): the worst relative error over normal results, the edge values
 * exactly. A drift of the hand-written approximations fails here. The formulas themselves are
 * within 7.7e-8 (exp) and 1.6e-8 + rounding (erf) when evaluated in C with fmaf; lavapipe
 * (Mesa 22) runs the same exp up to 4e-6 off at large arguments, so exp's bound is 1e-5. */
static void unary_sweep(int32_t prim, double (*ref)(double), float lo, float hi, double rtol, const char *what) {
  kbuild b = {0};
  int32_t N = E_s(&b, 0), one = E_c(&b, 1), z = E_c(&b, 0);
  int32_t bx = buf(&b, "in_x", TC_F32, TC_BUF_INPUT, N), by = buf(&b, "out_y", TC_F32, TC_BUF_OUTPUT, N);
  store(&b, -1, by, TC_F32, IX(z, one, -1, -1), prim1(&b, -1, prim, TC_F32, load(&b, -1, bx, TC_F32, IX(z, one, -1, -1))));
  int32_t outer[1] = {N};
  tc_kernel_desc k = kdesc(&b, what, TC_KERNEL_LOOP, 1, outer, -1);
  tc_executable *exe = compile1(&b, &k, 1);
  enum { CAP = 1 << 21 };
  float *x = malloc(sizeof(float) * CAP), *y = malloc(sizeof(float) * CAP);
  int64_t n = 0;
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f, 88.7f, 88.8f, -103.9f, -104.0f};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) x[n++] = specials[i];
  for (uint32_t u = 0; u < 0x7f800000u && n < CAP - 1; u += 4096) {
    float f;
    memcpy(&f, &u, sizeof f);
    if (f >= lo && f <= hi) x[n++] = f;
    if (-f >= lo && -f <= hi) x[n++] = -f;
  }
  tc_buffer *dx = dev_from(x, sizeof(float) * (size_t)n), *dy = dev_from(NULL, sizeof(float) * (size_t)n);
  tc_buffer_arg args[2] = {A(dx), A(dy)};
  cr_assert_eq(LAUNCH(exe, args, &n), TC_OK, "%s", g_err);
  dev_read(dy, y, sizeof(float) * (size_t)n);
  double worst = 0;
  float worst_at = 0;
  for (int64_t i = 0; i < n; i++) {
    double want = ref((double)x[i]);
    if (isnan(want) || isinf(want) || want == 0.0) {
      cr_assert(isnan(want) ? isnan(y[i]) : (double)y[i] == want, "%s(%a) = %a, want %a", what, (double)x[i],
                (double)y[i], want);
      continue;
    }
    if (fabs(want) < 1.2e-38 || fabs(want) > 3.4e38) continue; /* subnormal or overflowing results */
    double e = fabs((double)y[i] - want) / fabs(want);
    if (e > worst) {
      worst = e;
      worst_at = x[i];
    }
  }
  fprintf(stderr, "vulkan %s: worst relative error %.3g at %a over %lld values\n", what, worst, (double)worst_at,
          (long long)n);
  cr_assert(worst <= rtol, "%s: relative error %.3g at %a (allowed %.3g)", what, worst, (double)worst_at, rtol);
  api_buffer_free(dx);
  api_buffer_free(dy);
  free(x);
  free(y);
  api_executable_free(exe);
}

VK_TEST(exp_and_erf_match_libm) {
  unary_sweep(TC_PRIM_EXP, exp, -110.0f, 90.0f, 1e-5, "exp");
  unary_sweep(TC_PRIM_ERF, erf, -10.0f, 10.0f, 5e-7, "erf");
}

/* y = x + 1 over s0 elements: the kernel of the queue-ordering tests. */
static tc_executable *compile_add_one(void) {
  kbuild b = {0};
  int32_t N = E_s(&b, 0), one = E_c(&b, 1), z = E_c(&b, 0);
  int32_t bx = buf(&b, "in_x", TC_F32, TC_BUF_INPUT, N), by = buf(&b, "out_y", TC_F32, TC_BUF_OUTPUT, N);
  int32_t x = load(&b, -1, bx, TC_F32, IX(z, one, -1, -1));
  store(&b, -1, by, TC_F32, IX(z, one, -1, -1), prim2(&b, -1, TC_PRIM_ADD, TC_F32, x, cnst(&b, -1, TC_F32, 1.0)));
  int32_t outer[1] = {N};
  tc_kernel_desc k = kdesc(&b, "add_one", TC_KERNEL_LOOP, 1, outer, -1);
  tc_executable *exe = compile1(&b, &k, 1);
  return exe;
}

/* Calls return once their work is submitted (flush), and freed buffers are handed out again
 * at once: a chain of launches that frees each intermediate and reuses it for the next one
 * must still see every value in order, with no synchronize between them. */
VK_TEST(flush_and_buffer_reuse_keep_order) {
  tc_executable *exe = compile_add_one();
  cr_assert_not_null(g_api.flush, "the vulkan plugin fills flush");
  const int64_t n = 100003;
  const size_t bytes = sizeof(float) * (size_t)n;
  float *h = malloc(bytes);
  for (int64_t i = 0; i < n; i++) h[i] = (float)(i % 1000);
  /* 40 launches, each reading the previous result and writing a buffer that was freed just
   * before (the cache hands the same memory back), flushed every few launches. */
  tc_buffer *cur = dev_from(h, bytes);
  tc_buffer *first = cur;
  bool reused = false;
  for (int step = 0; step < 40; step++) {
    tc_buffer *next = dev_from(NULL, bytes);
    reused |= next == first;
    tc_buffer_arg args[2] = {A(cur), A(next)};
    cr_assert_eq(LAUNCH(exe, args, &n), TC_OK, "%s", g_err);
    api_buffer_free(cur);
    if (step % 3 == 2) cr_assert_eq(api_flush(), TC_OK, "%s", g_err);
    cur = next;
  }
  cr_assert(reused, "a freed buffer of the same size is handed out again");
  /* buffer_read orders itself after the launches: no synchronize first */
  float *got = malloc(bytes);
  cr_assert_eq(api_buffer_read(cur, 0, got, bytes), TC_OK, "%s", g_err);
  for (int64_t i = 0; i < n; i++)
    if (got[i] != h[i] + 40.0f) cr_assert_fail("element %lld: %g, want %g", (long long)i, got[i], h[i] + 40.0f);
  api_buffer_free(cur);
  free(h);
  free(got);
  api_executable_free(exe);
}

/* Barriers by hazard: eight launches reading one input into eight outputs need none between
 * them; a ninth reading one of those outputs needs one (synchronization validation fails the
 * test if it is missing, the count fails it if barriers go in where nothing conflicts). */
VK_TEST(barriers_only_between_conflicting_dispatches) {
  tc_executable *exe = compile_add_one();
  const int64_t n = 4099;
  const size_t bytes = sizeof(float) * (size_t)n;
  float *h = malloc(bytes), *got = malloc(bytes);
  for (int64_t i = 0; i < n; i++) h[i] = (float)i;
  tc_buffer *in = dev_from(h, bytes), *outs[8], *last = dev_from(NULL, bytes);
  for (int i = 0; i < 8; i++) outs[i] = dev_from(NULL, bytes);
  cr_assert_eq(api_synchronize(), TC_OK, "%s", g_err);
  for (int i = 0; i < 8; i++) {
    tc_buffer_arg args[2] = {A(in), A(outs[i])};
    cr_assert_eq(LAUNCH(exe, args, &n), TC_OK, "%s", g_err);
  }
  tc_buffer_arg args[2] = {A(outs[3]), A(last)};
  cr_assert_eq(LAUNCH(exe, args, &n), TC_OK, "%s", g_err);
  g_queue_last[0] = 0;
  cr_assert_eq(api_synchronize(), TC_OK, "%s", g_err);
  unsigned long long d = 0, bar = 0, sub = 0;
  cr_assert(sscanf(g_queue_last, "%llu dispatches, %llu barriers, %llu submissions", &d, &bar, &sub) == 3,
            "TC_LOGS=queue line: '%s'", g_queue_last);
  cr_assert(d == 9 && bar == 1, "9 dispatches with 1 barrier expected: %s", g_queue_last);
  cr_assert_eq(api_buffer_read(last, 0, got, bytes), TC_OK, "%s", g_err);
  for (int64_t i = 0; i < n; i++)
    if (got[i] != h[i] + 2.0f) cr_assert_fail("element %lld: %g, want %g", (long long)i, got[i], h[i] + 2.0f);
  for (int i = 0; i < 8; i++) api_buffer_free(outs[i]);
  api_buffer_free(in);
  api_buffer_free(last);
  free(h);
  free(got);
  api_executable_free(exe);
}

/* Descriptor sets are cached per buffer identity: launching over 1100 distinct output buffers
 * must not grow that cache without end. Past VK_POOLS_MAX pools (1024 sets) the launch waits for
 * the device and drops them; results stay right, also for buffers bound before the drop. */
VK_TEST(descriptor_sets_are_dropped_past_the_cap) {
  g_log_vulkan = true;
  g_sets_dropped = 0;
  tc_executable *exe = compile_add_one();
  const int64_t n = 64;
  const size_t bytes = sizeof(float) * (size_t)n;
  float h[64], got[64];
  for (int i = 0; i < 64; i++) h[i] = (float)i;
  tc_buffer *x = dev_from(h, bytes), *kept = dev_from(NULL, bytes);
  tc_buffer_arg rargs[2] = {A(x), A(kept)};
  cr_assert_eq(LAUNCH(exe, rargs, &n), TC_OK, "%s", g_err);
  enum { OUTS = 1100 };
  tc_buffer **outs = calloc(OUTS, sizeof *outs);
  for (int i = 0; i < OUTS; i++) {
    outs[i] = dev_from(NULL, bytes);
    tc_buffer_arg args[2] = {A(x), A(outs[i])};
    cr_assert_eq(LAUNCH(exe, args, &n), TC_OK, "%s", g_err);
    if (i % 64 == 63) cr_assert_eq(api_flush(), TC_OK, "%s", g_err);
  }
  cr_assert_eq(g_sets_dropped, 1, "1100 distinct buffers: %d drops of the descriptor sets", g_sets_dropped);
  dev_read(outs[OUTS - 1], got, bytes);
  for (int i = 0; i < 64; i++) cr_assert_eq(got[i], h[i] + 1.0f, "last output, element %d: %g", i, got[i]);
  memset(got, 0, sizeof got);
  api_buffer_write(kept, 0, got, bytes);
  cr_assert_eq(LAUNCH(exe, rargs, &n), TC_OK, "%s", g_err);
  dev_read(kept, got, bytes);
  for (int i = 0; i < 64; i++) cr_assert_eq(got[i], h[i] + 1.0f, "launch after the drop, element %d: %g", i, got[i]);
  for (int i = 0; i < OUTS; i++) api_buffer_free(outs[i]);
  free(outs);
  api_buffer_free(x);
  api_buffer_free(kept);
  api_executable_free(exe);
  g_log_vulkan = false;
}

/* TC_LOGS=profile: each kernel's dispatches are timed on the device and reported when its
 * executable is freed. */
VK_TEST(profile_reports_device_time_per_kernel) {
  api_release(g_ctx);
  g_profile = true;
  cr_assert_eq(api_init(&g_ctx), TC_OK, "%s", g_err);
  tc_executable *exe = compile_add_one();
  const int64_t n = 1 << 16;
  const size_t bytes = sizeof(float) * (size_t)n;
  tc_buffer *x = dev_from(NULL, bytes), *y = dev_from(NULL, bytes);
  for (int i = 0; i < 3; i++) {
    tc_buffer_arg args[2] = {A(x), A(y)};
    cr_assert_eq(LAUNCH(exe, args, &n), TC_OK, "%s", g_err);
    cr_assert_eq(api_flush(), TC_OK, "%s", g_err);
  }
  g_profile_last[0] = 0;
  api_executable_free(exe);
  api_buffer_free(x);
  api_buffer_free(y);
  g_profile = false;
  unsigned long long launches = 0;
  double mean = 0;
  const char *at = strstr(g_profile_last, "add_one: ");
  cr_assert(at && sscanf(at, "add_one: %llu launches, mean %lf us", &launches, &mean) == 2, "profile line: '%s'",
            g_profile_last);
  cr_assert(launches == 3 && mean > 0, "%s", g_profile_last);
}

/* gelu(layer_norm(x) * g + b): three inner loops, two reductions; row lengths that exercise
 * every body (registers, vec4 streaming, scalar). */
static void build_ln_gelu(kbuild *b, tc_kernel_desc *k, int32_t *outer) {
  int32_t M = E_s(b, 0), N = E_s(b, 1), MN = E_mul(b, M, N), one = E_c(b, 1), z = E_c(b, 0);
  int32_t bx = buf(b, "in_x", TC_F32, TC_BUF_INPUT, MN), bg = buf(b, "in_g", TC_F32, TC_BUF_INPUT, N);
  int32_t bb = buf(b, "in_b", TC_F32, TC_BUF_INPUT, N), by = buf(b, "out_y", TC_F32, TC_BUF_OUTPUT, MN);
  /* loop 0: sum x */
  int32_t x0 = load(b, 0, bx, TC_F32, IX(z, N, one, -1));
  int32_t s0 = reduce(b, 0, TC_PRIM_REDUCE_SUM, TC_F32, x0);
  /* mean = sum / N (N as a value: an INDEX op over the expression N, converted) */
  int32_t nidx = op(b, TC_KOP_INDEX, TC_I64, -1, 0, -1, -1, -1);
  set_ix(b, nidx, IX(N, -1, -1, -1));
  int32_t nf = prim1(b, -1, TC_PRIM_CONVERT, TC_F32, nidx);
  int32_t mean = prim2(b, -1, TC_PRIM_DIV, TC_F32, s0, nf);
  /* loop 1: sum (x - mean)^2 */
  int32_t x1 = load(b, 1, bx, TC_F32, IX(z, N, one, -1));
  int32_t d1 = prim2(b, 1, TC_PRIM_SUB, TC_F32, x1, mean);
  int32_t sq = prim2(b, 1, TC_PRIM_MUL, TC_F32, d1, d1);
  int32_t s1 = reduce(b, 1, TC_PRIM_REDUCE_SUM, TC_F32, sq);
  int32_t var = prim2(b, -1, TC_PRIM_DIV, TC_F32, s1, nf);
  int32_t rstd = prim1(b, -1, TC_PRIM_RSQRT, TC_F32, prim2(b, -1, TC_PRIM_ADD, TC_F32, var, cnst(b, -1, TC_F32, 1e-5)));
  /* loop 2: normalize, affine, gelu, store */
  int32_t x2 = load(b, 2, bx, TC_F32, IX(z, N, one, -1));
  int32_t g = load(b, 2, bg, TC_F32, IX(z, -1, one, -1));
  int32_t bb2 = load(b, 2, bb, TC_F32, IX(z, -1, one, -1));
  int32_t h = prim2(b, 2, TC_PRIM_MUL, TC_F32, prim2(b, 2, TC_PRIM_SUB, TC_F32, x2, mean), rstd);
  h = prim2(b, 2, TC_PRIM_ADD, TC_F32, prim2(b, 2, TC_PRIM_MUL, TC_F32, h, g), bb2);
  int32_t e = prim1(b, 2, TC_PRIM_ERF, TC_F32, prim2(b, 2, TC_PRIM_MUL, TC_F32, h, cnst(b, 2, TC_F32, M_SQRT1_2)));
  int32_t gel = prim2(b, 2, TC_PRIM_MUL, TC_F32, prim2(b, 2, TC_PRIM_MUL, TC_F32, h, cnst(b, 2, TC_F32, 0.5)),
                      prim2(b, 2, TC_PRIM_ADD, TC_F32, e, cnst(b, 2, TC_F32, 1.0)));
  store(b, 2, by, TC_F32, IX(z, N, one, -1), gel);
  outer[0] = M;
  *k = kdesc(b, "layer_norm_gelu", TC_KERNEL_LOOP, 1, outer, N);
}

VK_TEST(layer_norm_gelu_rows) {
  kbuild b = {0};
  tc_kernel_desc k;
  int32_t outer[1];
  build_ln_gelu(&b, &k, outer);
  tc_executable *exe = compile1(&b, &k, 2);
  int64_t sizes[][2] = {{7, 1000}, {3, 4100}, {4, 33}, {2, 20000}, {300, 64}};
  for (int c = 0; c < 5; c++) {
    int64_t m = sizes[c][0], n = sizes[c][1];
    float *hx = malloc(sizeof(float) * m * n), *hg = malloc(sizeof(float) * n), *hb = malloc(sizeof(float) * n);
    float *hy = malloc(sizeof(float) * m * n);
    double *want = malloc(sizeof(double) * m * n);
    unsigned s = 7;
    for (int64_t i = 0; i < m * n; i++) hx[i] = frand(&s) * 2 + 0.5f;
    for (int64_t i = 0; i < n; i++) hg[i] = 1 + frand(&s) * 0.5f, hb[i] = frand(&s) * 0.1f;
    for (int64_t i = 0; i < m; i++) {
      double mu = 0, v = 0;
      for (int64_t j = 0; j < n; j++) mu += hx[i * n + j];
      mu /= n;
      for (int64_t j = 0; j < n; j++) v += (hx[i * n + j] - mu) * (hx[i * n + j] - mu);
      v /= n;
      double r = 1 / sqrt(v + 1e-5);
      for (int64_t j = 0; j < n; j++) {
        double h = (hx[i * n + j] - mu) * r * hg[j] + hb[j];
        want[i * n + j] = 0.5 * h * (1 + erf(h / sqrt(2.0)));
      }
    }
    tc_buffer *dx = dev_from(hx, sizeof(float) * m * n), *dg = dev_from(hg, sizeof(float) * n);
    tc_buffer *db = dev_from(hb, sizeof(float) * n), *dy = dev_from(NULL, sizeof(float) * m * n);
    tc_buffer_arg args[4] = {A(dx), A(dg), A(db), A(dy)};
    int64_t syms[2] = {m, n};
    cr_assert_eq(LAUNCH(exe, args, syms), TC_OK, "%s", g_err);
    dev_read(dy, hy, sizeof(float) * m * n);
    char what[64];
    snprintf(what, sizeof what, "ln_gelu %lldx%lld", (long long)m, (long long)n);
    expect_close(hy, want, m * n, 1e-4, 1e-5, what);
    api_buffer_free(dx);
    api_buffer_free(dg);
    api_buffer_free(db);
    api_buffer_free(dy);
    free(hx), free(hg), free(hb), free(hy), free(want);
  }
  api_executable_free(exe);
}

/* softmax over rows (max, exp-sum, divide) at two sizes, one executable. With the scheduler's
 * reuse marks (schedule_fill_reuse in kdesc) the row body that keeps the row in registers
 * reads x once and writes y once per element. */
VK_TEST(softmax_rows) {
  kbuild b = {0};
  int32_t M = E_s(&b, 0), N = E_s(&b, 1), MN = E_mul(&b, M, N), one = E_c(&b, 1), z = E_c(&b, 0);
  int32_t bx = buf(&b, "in_x", TC_F32, TC_BUF_INPUT, MN), by = buf(&b, "out_y", TC_F32, TC_BUF_OUTPUT, MN);
  int32_t x0 = load(&b, 0, bx, TC_F32, IX(z, N, one, -1));
  int32_t mx = reduce(&b, 0, TC_PRIM_REDUCE_MAX, TC_F32, x0);
  int32_t x1 = load(&b, 1, bx, TC_F32, IX(z, N, one, -1));
  int32_t e1 = prim1(&b, 1, TC_PRIM_EXP, TC_F32, prim2(&b, 1, TC_PRIM_SUB, TC_F32, x1, mx));
  int32_t sm = reduce(&b, 1, TC_PRIM_REDUCE_SUM, TC_F32, e1);
  int32_t x2 = load(&b, 2, bx, TC_F32, IX(z, N, one, -1));
  int32_t e2 = prim1(&b, 2, TC_PRIM_EXP, TC_F32, prim2(&b, 2, TC_PRIM_SUB, TC_F32, x2, mx));
  store(&b, 2, by, TC_F32, IX(z, N, one, -1), prim2(&b, 2, TC_PRIM_DIV, TC_F32, e2, sm));
  tc_kernel_desc k = kdesc(&b, "softmax", TC_KERNEL_LOOP, 1, &M, N);
  tc_executable *exe = compile1(&b, &k, 2);
  int64_t cap = 64 * 1030;
  float *hx = malloc(sizeof(float) * cap), *hy = malloc(sizeof(float) * cap);
  double *want = malloc(sizeof(double) * cap);
  unsigned s = 3;
  for (int64_t i = 0; i < cap; i++) hx[i] = frand(&s) * 10;
  tc_buffer *dx = dev_from(hx, sizeof(float) * cap), *dy = dev_from(NULL, sizeof(float) * cap);
  tc_buffer_arg args[2] = {A(dx), A(dy)};
  const char *src = api_source(exe);
  cr_assert(strstr(src, "loaded in inner loop 0, kept in registers"), "softmax re-reads x in the register body:\n%s", src);
  int64_t sizes[][2] = {{64, 1024}, {33, 1030}, {64, 1024}};
  for (int c = 0; c < 3; c++) {
    int64_t m = sizes[c][0], n = sizes[c][1];
    for (int64_t i = 0; i < m; i++) {
      double mxv = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; j++) mxv = fmax(mxv, hx[i * n + j]);
      for (int64_t j = 0; j < n; j++) sum += exp(hx[i * n + j] - mxv);
      for (int64_t j = 0; j < n; j++) want[i * n + j] = exp(hx[i * n + j] - mxv) / sum;
    }
    int64_t syms[2] = {m, n};
    cr_assert_eq(LAUNCH(exe, args, syms), TC_OK, "%s", g_err);
    dev_read(dy, hy, sizeof(float) * m * n);
    expect_close(hy, want, m * n, 1e-5, 1e-8, "softmax");
  }
  api_buffer_free(dx);
  api_buffer_free(dy);
  api_executable_free(exe);
  free(hx), free(hy), free(want);
}

/* Row sums through each row body the launch picks: vec4 with the row in registers (short
 * rows), vec4 re-reading (rows longer than 1024 threads * 16), and scalar (an input bound at an
 * offset that is not a multiple of 4 elements, or a row length that is not). */
VK_TEST(row_sum_each_body) {
  kbuild b = {0};
  int32_t M = E_s(&b, 0), N = E_s(&b, 1), MN = E_mul(&b, M, N), one = E_c(&b, 1), z = E_c(&b, 0);
  int32_t bx = buf(&b, "in_x", TC_F32, TC_BUF_INPUT, MN), by = buf(&b, "out_y", TC_F32, TC_BUF_OUTPUT, M);
  int32_t x0 = load(&b, 0, bx, TC_F32, IX(z, N, one, -1));
  int32_t sm = reduce(&b, 0, TC_PRIM_REDUCE_SUM, TC_F32, x0);
  int32_t x1 = load(&b, 1, bx, TC_F32, IX(z, N, one, -1));
  int32_t sq = reduce(&b, 1, TC_PRIM_REDUCE_SUM, TC_F32, prim2(&b, 1, TC_PRIM_MUL, TC_F32, x1, sm));
  store(&b, -1, by, TC_F32, IX(z, one, -1, -1), sq);
  tc_kernel_desc k = kdesc(&b, "row_sum", TC_KERNEL_LOOP, 1, &M, N);
  tc_executable *exe = compile1(&b, &k, 2);
  int64_t cap = 4 * 20000 + 8;
  float *hx = malloc(sizeof(float) * cap), hy[8];
  unsigned s = 5;
  for (int64_t i = 0; i < cap; i++) hx[i] = frand(&s);
  tc_buffer *dx = dev_from(hx, sizeof(float) * cap), *dy = dev_from(NULL, sizeof(float) * 8);
  /* {rows, row length, input offset in elements} */
  int64_t cases[][3] = {{4, 1024, 0}, {4, 20000, 0}, {4, 1024, 1}, {4, 20000, 3}, {3, 1022, 0}};
  for (int c = 0; c < 5; c++) {
    int64_t m = cases[c][0], n = cases[c][1], off = cases[c][2];
    tc_buffer_arg args[2] = {A(dx), A(dy)};
    args[0].byte_offset = (size_t)off * sizeof(float);
    int64_t syms[2] = {m, n};
    cr_assert_eq(LAUNCH(exe, args, syms), TC_OK, "%s", g_err);
    dev_read(dy, hy, sizeof(float) * (size_t)m);
    double want[8];
    for (int64_t i = 0; i < m; i++) {
      double sum = 0;
      for (int64_t j = 0; j < n; j++) sum += hx[off + i * n + j];
      want[i] = sum * sum;
    }
    expect_close(hy, want, m, 1e-4, 1e-3, "row_sum");
  }
  api_buffer_free(dx);
  api_buffer_free(dy);
  api_executable_free(exe);
  free(hx);
}

/* argmax over rows, with ties and a NaN. */
VK_TEST(argmax_rows) {
  kbuild b = {0};
  int32_t M = E_s(&b, 0), N = E_s(&b, 1), MN = E_mul(&b, M, N), one = E_c(&b, 1), z = E_c(&b, 0);
  int32_t bx = buf(&b, "in_x", TC_F32, TC_BUF_INPUT, MN), by = buf(&b, "out_i", TC_I64, TC_BUF_OUTPUT, M);
  int32_t x0 = load(&b, 0, bx, TC_F32, IX(z, N, one, -1));
  int32_t am = reduce(&b, 0, TC_PRIM_ARGMAX, TC_I64, x0);
  store(&b, -1, by, TC_I64, IX(z, one, -1, -1), am);
  tc_kernel_desc k = kdesc(&b, "argmax", TC_KERNEL_LOOP, 1, &M, N);
  tc_executable *exe = compile1(&b, &k, 2);
  int64_t m = 4, n = 3000;
  float *hx = calloc((size_t)(m * n), sizeof(float));
  for (int64_t j = 0; j < n; j++) hx[j] = (float)(j % 100);           /* ties: first 99 at j = 99 */
  for (int64_t j = 0; j < n; j++) hx[n + j] = -(float)j;              /* max at 0 */
  for (int64_t j = 0; j < n; j++) hx[2 * n + j] = (float)j;           /* max at the end */
  hx[3 * n + 1777] = NAN;                                             /* NaN wins */
  int64_t want[4] = {99, 0, n - 1, 1777}, got[4];
  tc_buffer *dx = dev_from(hx, sizeof(float) * m * n), *dy = dev_from(NULL, sizeof got);
  tc_buffer_arg args[2] = {A(dx), A(dy)};
  int64_t syms[2] = {m, n};
  cr_assert_eq(LAUNCH(exe, args, syms), TC_OK, "%s", g_err);
  dev_read(dy, got, sizeof got);
  for (int i = 0; i < 4; i++) cr_expect_eq(got[i], want[i], "row %d: got %lld want %lld", i, (long long)got[i], (long long)want[i]);
  api_buffer_free(dx);
  api_buffer_free(dy);
  api_executable_free(exe);
  free(hx);
}

/* C = gelu(A B + bias) over a batch of 2, sizes that are and are not tile/vec4 multiples, and a
 * transposed B. */
static void matmul_case(int64_t nb, int64_t m, int64_t kk, int64_t n, bool b_trans) {
  kbuild b = {0};
  int32_t B_ = E_c(&b, nb), M = E_c(&b, m), K = E_c(&b, kk), N = E_c(&b, n), one = E_c(&b, 1), z = E_c(&b, 0);
  int32_t MK = E_c(&b, m * kk), KN = E_c(&b, kk * n), MN = E_c(&b, m * n);
  int32_t ba = buf(&b, "in_a", TC_F32, TC_BUF_INPUT, E_c(&b, nb * m * kk));
  int32_t bb = buf(&b, "in_b", TC_F32, TC_BUF_INPUT, E_c(&b, nb * kk * n));
  int32_t bbias = buf(&b, "in_bias", TC_F32, TC_BUF_INPUT, N);
  int32_t bc = buf(&b, "out_c", TC_F32, TC_BUF_OUTPUT, E_c(&b, nb * m * n));
  int32_t acc = op(&b, TC_KOP_ACC, TC_F32, -1, 0, -1, -1, -1);
  int32_t bias = load(&b, -1, bbias, TC_F32, IX(z, -1, -1, one));
  int32_t h = prim2(&b, -1, TC_PRIM_ADD, TC_F32, acc, bias);
  int32_t e = prim1(&b, -1, TC_PRIM_ERF, TC_F32, prim2(&b, -1, TC_PRIM_MUL, TC_F32, h, cnst(&b, -1, TC_F32, M_SQRT1_2)));
  int32_t gel = prim2(&b, -1, TC_PRIM_MUL, TC_F32, prim2(&b, -1, TC_PRIM_MUL, TC_F32, h, cnst(&b, -1, TC_F32, 0.5)),
                      prim2(&b, -1, TC_PRIM_ADD, TC_F32, e, cnst(&b, -1, TC_F32, 1.0)));
  store(&b, -1, bc, TC_F32, IX(z, MN, N, one), gel);
  int32_t outer[3] = {B_, M, N};
  tc_kernel_desc k = kdesc(&b, "matmul_bias_gelu", TC_KERNEL_MATMUL, 3, outer, -1);
  b.mm = (tc_matmul_desc){.struct_size = sizeof(tc_matmul_desc), .a = ba, .b = bb, .c = bc, .batch = B_, .m = M, .n = N, .k = K,
                              .a_offset = z, .a_stride_batch = MK, .a_stride_m = K, .a_stride_k = one,
                              .b_offset = z, .b_stride_batch = KN, .b_stride_k = b_trans ? one : N, .b_stride_n = b_trans ? K : one,
                              .c_offset = z, .c_stride_batch = MN, .c_stride_m = N, .c_stride_n = one,
                              .batch_levels = 1, .batch2 = -1, .a_stride_batch2 = -1, .b_stride_batch2 = -1,
                              .c_stride_batch2 = -1};
  k.matmul = &b.mm;
  tc_executable *exe = compile1(&b, &k, 0);
  float *ha = malloc(sizeof(float) * nb * m * kk), *hb = malloc(sizeof(float) * nb * kk * n), *hbias = malloc(sizeof(float) * n);
  float *hc = malloc(sizeof(float) * nb * m * n);
  double *want = malloc(sizeof(double) * nb * m * n);
  unsigned s = 11;
  for (int64_t i = 0; i < nb * m * kk; i++) ha[i] = frand(&s);
  for (int64_t i = 0; i < nb * kk * n; i++) hb[i] = frand(&s);
  for (int64_t i = 0; i < n; i++) hbias[i] = frand(&s);
  for (int64_t q = 0; q < nb; q++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double acc_ = 0;
        for (int64_t t = 0; t < kk; t++)
          acc_ += (double)ha[q * m * kk + i * kk + t] * hb[q * kk * n + (b_trans ? j * kk + t : t * n + j)];
        double hh = acc_ + hbias[j];
        want[q * m * n + i * n + j] = 0.5 * hh * (1 + erf(hh / sqrt(2.0)));
      }
  tc_buffer *da = dev_from(ha, sizeof(float) * nb * m * kk), *db = dev_from(hb, sizeof(float) * nb * kk * n);
  tc_buffer *dbias = dev_from(hbias, sizeof(float) * n), *dc = dev_from(NULL, sizeof(float) * nb * m * n);
  tc_buffer_arg args[4] = {A(da), A(db), A(dbias), A(dc)};
  cr_assert_eq(LAUNCH(exe, args, NULL), TC_OK, "%s", g_err);
  dev_read(dc, hc, sizeof(float) * nb * m * n);
  char what[96];
  snprintf(what, sizeof what, "matmul %lldx%lldx%lldx%lld%s", (long long)nb, (long long)m, (long long)kk, (long long)n,
           b_trans ? " (B transposed)" : "");
  expect_close(hc, want, nb * m * n, 1e-4, 1e-4, what);
  api_buffer_free(da);
  api_buffer_free(db);
  api_buffer_free(dbias);
  api_buffer_free(dc);
  api_executable_free(exe);
  free(ha), free(hb), free(hbias), free(hc), free(want);
}

/* Each case on both tile heights: 64x128 (what these small products get by default) and
 * 128x128 (vulkan.matmul_tile=128, what large ones get). */
VK_TEST(matmul_bias_gelu_epilogue) {
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      api_release(g_ctx);
      g_matmul_tile = "128";
      cr_assert_eq(api_init(&g_ctx), TC_OK, "%s", g_err);
    }
    matmul_case(2, 70, 50, 90, false);   /* scalar loads, partial tiles */
    matmul_case(1, 130, 64, 132, false); /* vec4 loads, partial tiles */
    matmul_case(2, 33, 40, 20, true);    /* transposed B */
  }
  g_matmul_tile = NULL;
}

/* Philox4x32-10 per the brief, on the host. */
static uint32_t philox_word0(uint64_t seed, uint64_t ctr) {
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  uint32_t c0 = (uint32_t)ctr, c1 = (uint32_t)(ctr >> 32), c2 = 0, c3 = 0;
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
    c0 = n0, c1 = n1, c2 = n2, c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c0;
}

VK_TEST(random_philox) {
  kbuild b = {0};
  int32_t N = E_s(&b, 0), one = E_c(&b, 1), off = E_c(&b, 1000);
  int32_t by = buf(&b, "out_r", TC_F32, TC_BUF_OUTPUT, N);
  int32_t r = op(&b, TC_KOP_RANDOM, TC_F32, -1, 0, -1, -1, -1);
  uint64_t seed = 0x123456789abcdefull;
  b.ops[r].iconst = (int64_t)seed;
  set_ix(&b, r, IX(off, one, -1, -1));
  store(&b, -1, by, TC_F32, IX(E_c(&b, 0), one, -1, -1), r);
  tc_kernel_desc k = kdesc(&b, "random", TC_KERNEL_LOOP, 1, &N, -1);
  tc_executable *exe = compile1(&b, &k, 1);
  int64_t n = 4099;
  float *h = malloc(sizeof(float) * n);
  tc_buffer *d = dev_from(NULL, sizeof(float) * n);
  tc_buffer_arg args[1] = {A(d)};
  int64_t syms[1] = {n};
  cr_assert_eq(LAUNCH(exe, args, syms), TC_OK, "%s", g_err);
  dev_read(d, h, sizeof(float) * n);
  for (int64_t i = 0; i < n; i++) {
    float want = (float)(philox_word0(seed, (uint64_t)(1000 + i)) >> 8) * (1.0f / 16777216.0f);
    cr_assert_eq(h[i], want, "element %lld: got %.9g want %.9g", (long long)i, (double)h[i], (double)want);
  }
  api_buffer_free(d);
  api_executable_free(exe);
  free(h);
}

/* out[i, j] = x[i, idx[i, j]] (torch.gather on dim 1) through an indirect index; indices
 * outside the buffer read 0. */
static void gather_case(bool idx32) {
  kbuild b = {0};
  int32_t M = E_c(&b, 6), NX = E_c(&b, 10), NI = E_c(&b, 7), one = E_c(&b, 1), z = E_c(&b, 0);
  int32_t bx = buf(&b, "in_x", TC_F32, TC_BUF_INPUT, E_c(&b, 60)), bi = buf(&b, "in_idx", idx32 ? TC_I32 : TC_I64, TC_BUF_INPUT, E_c(&b, 42));
  int32_t by = buf(&b, "out_y", TC_F32, TC_BUF_OUTPUT, E_c(&b, 42));
  int32_t ix = load(&b, -1, bi, idx32 ? TC_I32 : TC_I64, IX(z, NI, one, -1));
  if (idx32) ix = prim1(&b, -1, TC_PRIM_CONVERT, TC_I64, ix);
  tc_index gi = IX(z, NX, -1, -1);
  gi.indirect = ix;
  gi.indirect_stride = one;
  int32_t v = load(&b, -1, bx, TC_F32, gi);
  store(&b, -1, by, TC_F32, IX(z, NI, one, -1), v);
  int32_t outer[2] = {M, NI};
  tc_kernel_desc k = kdesc(&b, "gather", TC_KERNEL_LOOP, 2, outer, -1);
  tc_executable *exe = compile1(&b, &k, 0);
  float hx[60], hy[42];
  int64_t hi[42];
  int32_t hi32[42];
  for (int i = 0; i < 60; i++) hx[i] = (float)i * 0.5f;
  for (int i = 0; i < 42; i++) hi[i] = (i * 7) % 10;
  hi[41] = 1000; /* past the end of x: reads 0 */
  hi[0] = -1;    /* row 0, index -1: inside the buffer only by the flat offset; still before it */
  for (int i = 0; i < 42; i++) hi32[i] = (int32_t)hi[i];
  tc_buffer *dx = dev_from(hx, sizeof hx), *di = idx32 ? dev_from(hi32, sizeof hi32) : dev_from(hi, sizeof hi), *dy = dev_from(NULL, sizeof hy);
  tc_buffer_arg args[3] = {A(dx), A(di), A(dy)};
  cr_assert_eq(LAUNCH(exe, args, NULL), TC_OK, "%s", g_err);
  dev_read(dy, hy, sizeof hy);
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 7; j++) {
      int64_t flat = i * 10 + hi[i * 7 + j];
      float want = flat >= 0 && flat < 60 ? hx[flat] : 0.0f;
      cr_assert_eq(hy[i * 7 + j], want, "(%d, %d): got %g want %g", i, j, (double)hy[i * 7 + j], (double)want);
    }
  api_buffer_free(dx);
  api_buffer_free(di);
  api_buffer_free(dy);
  api_executable_free(exe);
}

VK_TEST(gather_indirect) {
  gather_case(false);
  gather_case(true); /* i32 indices, converted */
}

/* A graph of three kernels with constant sizes: y = tanh(rowsum(A B)), a matmul (70x48 by
 * 48x96), a row kernel and a pointwise one. Compile makes the pipeline each kernel's launch binds
 * (on its threads), so the first call creates none: a driver takes ~0.4 s per pipeline, and
 * made one by one at each first launch they were most of a cold first call on the H200. */
VK_TEST(pipelines_made_at_compile) {
  enum { M = 70, KD = 48, N = 96 };
  kbuild b[3];
  memset(b, 0, sizeof b);
  tc_kernel_desc k[3];
  /* kernel 0: C = A B (1 batch of 70x96: one tile, 64-row tiles by the tile count) */
  kbuild *m = &b[0];
  int32_t B_ = E_c(m, 1), Me = E_c(m, M), Ke = E_c(m, KD), Ne = E_c(m, N), one = E_c(m, 1), z = E_c(m, 0);
  int32_t MN = E_c(m, M * N);
  int32_t ba = buf(m, "in_a", TC_F32, TC_BUF_INPUT, E_c(m, M * KD)), bb = buf(m, "in_b", TC_F32, TC_BUF_INPUT, E_c(m, KD * N));
  int32_t bc = buf(m, "out_c", TC_F32, TC_BUF_OUTPUT, MN);
  store(m, -1, bc, TC_F32, IX(z, MN, Ne, one), op(m, TC_KOP_ACC, TC_F32, -1, 0, -1, -1, -1));
  int32_t mm_outer[3] = {B_, Me, Ne};
  k[0] = kdesc(m, "matmul", TC_KERNEL_MATMUL, 3, mm_outer, -1);
  m->mm = (tc_matmul_desc){.struct_size = sizeof(tc_matmul_desc), .a = ba, .b = bb, .c = bc, .batch = B_, .m = Me, .n = Ne,
                           .k = Ke, .a_offset = z, .a_stride_batch = z, .a_stride_m = Ke, .a_stride_k = one,
                           .b_offset = z, .b_stride_batch = z, .b_stride_k = Ne, .b_stride_n = one,
                           .c_offset = z, .c_stride_batch = z, .c_stride_m = Ne, .c_stride_n = one,
                           .batch_levels = 1, .batch2 = -1, .a_stride_batch2 = -1, .b_stride_batch2 = -1, .c_stride_batch2 = -1};
  k[0].matmul = &m->mm;
  /* kernel 1: s[i] = sum_j C[i, j] (rows of 96: vec4 body in registers); the list's
   * expressions are the last builder's, each builder starting from the one before */
  kbuild *r = &b[1];
  memcpy(r->ex, m->ex, sizeof m->ex);
  r->n_ex = m->n_ex;
  int32_t rx = buf(r, "in_c", TC_F32, TC_BUF_INPUT, MN), rs = buf(r, "out_s", TC_F32, TC_BUF_OUTPUT, Me);
  int32_t sum = reduce(r, 0, TC_PRIM_REDUCE_SUM, TC_F32, load(r, 0, rx, TC_F32, IX(z, Ne, one, -1)));
  store(r, -1, rs, TC_F32, IX(z, one, -1, -1), sum);
  k[1] = kdesc(r, "row_sum", TC_KERNEL_LOOP, 1, &Me, Ne);
  /* kernel 2: y = tanh(s) */
  kbuild *p = &b[2];
  memcpy(p->ex, r->ex, sizeof r->ex);
  p->n_ex = r->n_ex;
  int32_t ps = buf(p, "in_s", TC_F32, TC_BUF_INPUT, Me), py = buf(p, "out_y", TC_F32, TC_BUF_OUTPUT, Me);
  store(p, -1, py, TC_F32, IX(z, one, -1, -1), prim1(p, -1, TC_PRIM_TANH, TC_F32, load(p, -1, ps, TC_F32, IX(z, one, -1, -1))));
  k[2] = kdesc(p, "tanh", TC_KERNEL_LOOP, 1, &Me, -1);

  g_prepared = -1;
  g_lazy_pipelines = 0;
  tc_executable *exe = compile_list("prepared", p, k, 3, 0);
  cr_assert_eq(g_prepared, 3, "compile made %d pipelines ahead (-1: it logged none), want one per kernel", g_prepared);
  cr_assert(g_prepared_threads >= 1, "on %d threads", g_prepared_threads);

  float *ha = malloc(sizeof(float) * M * KD), *hb = malloc(sizeof(float) * KD * N), hy[M];
  unsigned seed = 3;
  for (int i = 0; i < M * KD; i++) ha[i] = frand(&seed) * 0.1f;
  for (int i = 0; i < KD * N; i++) hb[i] = frand(&seed) * 0.1f;
  tc_buffer *da = dev_from(ha, sizeof(float) * M * KD), *db = dev_from(hb, sizeof(float) * KD * N);
  tc_buffer *dc = dev_from(NULL, sizeof(float) * M * N), *ds = dev_from(NULL, sizeof(float) * M), *dy = dev_from(NULL, sizeof hy);
  tc_buffer_arg a0[3] = {A(da), A(db), A(dc)}, a1[2] = {A(dc), A(ds)}, a2[2] = {A(ds), A(dy)};
  cr_assert_eq(api_launch(exe, 0, a0, 3, NULL, 1), TC_OK, "%s", g_err);
  cr_assert_eq(api_launch(exe, 1, a1, 2, NULL, 1), TC_OK, "%s", g_err);
  cr_assert_eq(api_launch(exe, 2, a2, 2, NULL, 1), TC_OK, "%s", g_err);
  cr_assert_eq(api_flush(), TC_OK, "%s", g_err);
  dev_read(dy, hy, sizeof hy);
  cr_assert_eq(g_lazy_pipelines, 0, "the first call created %d pipelines that compile had not made", g_lazy_pipelines);
  double want[M];
  for (int i = 0; i < M; i++) {
    double row = 0;
    for (int j = 0; j < N; j++)
      for (int t = 0; t < KD; t++) row += (double)ha[i * KD + t] * hb[t * N + j];
    want[i] = tanh(row);
  }
  expect_close(hy, want, M, 1e-4, 1e-5, "tanh(rowsum(A B))");
  api_buffer_free(da);
  api_buffer_free(db);
  api_buffer_free(dc);
  api_buffer_free(ds);
  api_buffer_free(dy);
  api_executable_free(exe);
  free(ha);
  free(hb);
}

/* A second compile of the same kernels in a fresh context is served from the disk cache
 * (shaderc skipped). */
VK_TEST(warm_start_uses_cache) {
  kbuild b = {0};
  tc_kernel_desc k;
  int32_t outer[1];
  build_ln_gelu(&b, &k, outer);
  tc_executable *exe = compile1(&b, &k, 2);
  api_executable_free(exe);
  api_release(g_ctx);
  g_cache_hits = 0;
  cr_assert_eq(api_init(&g_ctx), TC_OK, "%s", g_err);
  exe = compile1(&b, &k, 2);
  cr_assert_eq(g_cache_hits, 1, "the warm compile did not hit the SPIR-V cache");
  api_executable_free(exe);
}

/* Options reach init: the context logs its device under "init". */
VK_TEST(options_reach_init) {
  cr_assert(strstr(g_init_line, "vulkan: context on device 0 ("), "init logged: '%s'", g_init_line);
  api_release(g_ctx);
  g_ctx = NULL;
  g_init_line[0] = '\0';
  g_device_opt = "0";
  tc_status st = api_init(&g_ctx);
  g_device_opt = NULL;
  cr_assert_eq(st, TC_OK, "%s", g_err);
  cr_assert(strstr(g_init_line, "vulkan: context on device 0 ("), "vulkan.device=0: init logged '%s'", g_init_line);
  /* a trivial kernel so the teardown's spirv-val has a module to check */
  api_executable_free(compile_add_one());
}

/* vulkan.device past the device list: an error naming the option and the devices there are. */
VK_TEST(device_out_of_range_is_an_error) {
  api_release(g_ctx);
  g_ctx = NULL;
  g_device_opt = "7";
  tc_plugin_ctx *ctx = NULL;
  tc_status st = api_init(&ctx);
  g_device_opt = NULL;
  cr_assert_eq(st, TC_ERR_INVALID_ARGUMENT, "vulkan.device=7 gave %d: %s", (int)st, g_err);
  cr_assert_null(ctx);
  cr_assert(strstr(g_err, "vulkan.device=7 is out of range: ") && strstr(g_err, " devices (0: "), "%s", g_err);
  cr_assert_eq(api_init(&g_ctx), TC_OK, "%s", g_err);
  api_executable_free(compile_add_one());
}
