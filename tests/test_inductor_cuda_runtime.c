/* test_inductor_cuda_runtime.c — the inductor-cuda plugin's runtime half as far as it runs
 * anywhere: the built plugin loads with no CUDA at all, its table (name, options, hand-off,
 * memory, entries, the capabilities extension chained to the codegen check), probe saying why
 * it is unavailable (or, on a machine with a GPU, listing the devices), init failing cleanly
 * without a driver, no link-time dependency on libcuda / NVRTC / cuBLASLt, and the CLI's
 * `tc list-backends` line. The GPU paths are exercised by the conformance runs on a GPU host. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tc_kit.h"
#include "tc_plugin.h"

#define ICUDA_SO TC_BUILD_PLUGIN_DIR "/tc-inductor-cuda.so"
#define ICUDA_EXT_CODEGEN_CHECK_TYPE (TC_EXT_VENDOR_FIRST + 0x100) /* icuda.h's ICUDA_EXT_CODEGEN_CHECK */

static tck_test_host *th;
static const tc_host_api *host;
static tc_plugin_api api;
static void *dl;

static void setup(void) {
  th = tck_test_host_new(NULL, "init");
  cr_assert(th);
  host = tck_test_host_api(th);
  char err[512];
  cr_assert(tck_test_plugin_open(th, ICUDA_SO, &api, &dl, err, sizeof err), "%s", err);
}

static void teardown(void) {
  if (dl) dlclose(dl);
  dl = NULL;
  tck_test_host_free(th);
  th = NULL;
}

static const tc_option_decl *option(const char *name) {
  return tck_option_decl_find(api.options, api.n_options, api.option_size, name);
}

TestSuite(inductor_cuda_runtime, .init = setup, .fini = teardown);

Test(inductor_cuda_runtime, table) {
  cr_assert_str_eq(api.name, "inductor-cuda");
  cr_assert_eq(api.abi_major, TC_ABI_MAJOR);
  cr_assert_str_eq(api.option_prefix, "cuda");
  cr_assert_eq(api.handoff, TC_HANDOFF_KERNELS);
  cr_assert_eq(api.memory, TC_MEMORY_DEVICE);
  cr_assert(api.description && *api.description);
  /* every entry a device-memory kernels plugin needs, and the optional ones it has */
  cr_assert(api.probe && api.init && api.release && api.compile && api.executable_free && api.synchronize);
  cr_assert(api.launch);
  cr_assert_null(api.run_graph);
  cr_assert(api.buffer_alloc && api.buffer_free && api.buffer_write && api.buffer_read);
  cr_assert(api.flush && api.executable_info);

  const tc_option_decl *dev = option("cuda.device");
  cr_assert_not_null(dev);
  cr_assert_eq(dev->type, TC_OPTION_INT);
  cr_assert_eq(dev->scope, TC_OPTION_CONTEXT);
  cr_assert_str_eq(dev->default_value, "0");
  cr_assert_eq(dev->min, 0);
  cr_assert_eq(dev->max, 63);
  const tc_option_decl *tf32 = option("cuda.allow_tf32");
  cr_assert_not_null(tf32);
  cr_assert_eq(tf32->type, TC_OPTION_BOOL);
  cr_assert_eq(tf32->scope, TC_OPTION_COMPILE);
  cr_assert_str_eq(tf32->default_value, "0");
  for (int32_t i = 0; i < api.n_options; i++) {
    const tc_option_decl *d = TC_ELEM(tc_option_decl, api.options, api.option_size, i);
    cr_assert(!strncmp(d->name, "cuda.", 5), "option %s lacks the prefix", d->name);
    cr_assert(d->meaning && *d->meaning, "option %s has no meaning", d->name);
    if (d->default_value) {
      char norm[64], err[256];
      cr_assert(tck_option_check(d, d->default_value, norm, sizeof norm, err, sizeof err), "%s", err);
    }
  }
}

/* cuda.gemm: an enum of the three GEMM choices, auto by default, a compile option (it changes
 * the generated module); a bad value is refused naming the key and the valid values. */
Test(inductor_cuda_runtime, gemm_option) {
  const tc_option_decl *d = option("cuda.gemm");
  cr_assert_not_null(d);
  cr_assert_eq(d->type, TC_OPTION_ENUM);
  cr_assert_eq(d->scope, TC_OPTION_COMPILE);
  cr_assert_str_eq(d->default_value, "auto");
  cr_assert_str_eq(d->values, "auto|cublaslt|generated");
  char norm[64], err[256];
  const char *good[] = {"auto", "cublaslt", "generated"};
  for (int i = 0; i < 3; i++) cr_assert(tck_option_check(d, good[i], norm, sizeof norm, err, sizeof err), "%s", err);
  cr_assert(!tck_option_check(d, "cublas", norm, sizeof norm, err, sizeof err));
  cr_assert(strstr(err, "cuda.gemm") && strstr(err, "'cublas'") && strstr(err, "auto|cublaslt|generated"), "%s", err);
}

/* cuda.attention_kernel (v1 by default) and cuda.attention_tile (8x8): compile options, enums
 * of the kernels and the tiles the tiled kernel has. */
Test(inductor_cuda_runtime, attention_kernel_options) {
  const tc_option_decl *k = option("cuda.attention_kernel"), *t = option("cuda.attention_tile");
  cr_assert(k && t);
  cr_assert(k->type == TC_OPTION_ENUM && t->type == TC_OPTION_ENUM);
  cr_assert(k->scope == TC_OPTION_COMPILE && t->scope == TC_OPTION_COMPILE);
  cr_assert_str_eq(k->default_value, "v1");
  cr_assert_str_eq(k->values, "v1|tiled");
  cr_assert_str_eq(t->default_value, "8x8");
  cr_assert_str_eq(t->values, "4x4|4x8|8x4|8x8");
  char norm[64], err[256];
  cr_assert(!tck_option_check(t, "8x16", norm, sizeof norm, err, sizeof err));
  cr_assert(strstr(err, "cuda.attention_tile") && strstr(err, "4x4|4x8|8x4|8x8"), "%s", err);
}

Test(inductor_cuda_runtime, capabilities_then_codegen_check) {
  const tc_capabilities_ext *caps = (const tc_capabilities_ext *)tc_ext_find(api.extensions, TC_EXT_CAPABILITIES);
  cr_assert_not_null(caps);
  cr_assert_geq(caps->base.struct_size, sizeof *caps);
  uint32_t want = (1u << TC_F32) | (1u << TC_F64) | (1u << TC_I32) | (1u << TC_I64) | (1u << TC_BOOL);
  cr_assert_eq(caps->dtypes, want);
  cr_assert_eq(caps->kernel_kinds, (1u << TC_KERNEL_LOOP) | (1u << TC_KERNEL_MATMUL) | (1u << TC_KERNEL_ATTENTION));
  cr_assert_geq(caps->n_prim_words, 2);
  /* every prim the ABI defines */
  const int prims[] = {TC_PRIM_NEG, TC_PRIM_ISNAN, TC_PRIM_ADD, TC_PRIM_OR, TC_PRIM_WHERE, TC_PRIM_CONVERT,
                       TC_PRIM_REDUCE_SUM, TC_PRIM_ARGMIN, TC_PRIM_RESHAPE, TC_PRIM_REVERSE, TC_PRIM_GATHER,
                       TC_PRIM_SCATTER_ADD, TC_PRIM_IOTA, TC_PRIM_CONSTANT, TC_PRIM_RANDOM, TC_PRIM_MATMUL};
  for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
    cr_assert(caps->prims[prims[i] / 64] >> (prims[i] % 64) & 1, "prim %s not accepted", tck_prim_name(prims[i]));
  const tc_ext_base *check = tc_ext_find(api.extensions, ICUDA_EXT_CODEGEN_CHECK_TYPE);
  cr_assert_not_null(check, "the codegen check extension is not in the chain");
}

Test(inductor_cuda_runtime, probe_says_why_or_lists_devices) {
  tc_probe_args p = {.struct_size = sizeof p, .host = host};
  const char *msg;
  cr_assert_eq(tck_test_host_take(th, api.probe(&p), &msg), TC_OK, "%s", msg);
  cr_assert_not_null(p.reason);
  if (p.available) { /* a machine with a GPU */
    cr_assert_eq(p.score, 95);
    cr_assert_gt(p.n_devices, 0);
    const tc_device_desc *d = TC_ELEM(tc_device_desc, p.devices, p.device_size, 0);
    cr_assert(d->name && strstr(d->name, "GPU"), "%s", d->name);
    cr_assert_gt(d->memory_bytes, 0);
    return;
  }
  cr_assert_eq(p.score, 0);
  cr_assert_eq(p.n_devices, 0);
  cr_assert(strstr(p.reason, "driver") || strstr(p.reason, "device") || strstr(p.reason, "DEVICE"),
            "reason: %s", p.reason);
  /* probing twice gives the same answer (the driver is tried once per process) */
  tc_probe_args q = {.struct_size = sizeof q, .host = host};
  cr_assert_eq(tck_test_host_take(th, api.probe(&q), NULL), TC_OK);
  cr_assert_not(q.available);
  cr_assert_str_eq(q.reason, p.reason);
}

Test(inductor_cuda_runtime, init_without_a_device_fails_cleanly) {
  tc_probe_args p = {.struct_size = sizeof p, .host = host};
  cr_assert_eq(tck_test_host_take(th, api.probe(&p), NULL), TC_OK);
  if (p.available) return; /* covered by the GPU runs */
  tc_option opts[] = {{.struct_size = sizeof(tc_option), .name = "cuda.device", .value = "0", .set = false}};
  tc_init_args a = {.struct_size = sizeof a, .host = host, .device = -1, .n_options = 1, .options = opts,
                    .option_size = sizeof opts[0]};
  const char *msg;
  cr_assert_eq(tck_test_host_take(th, api.init(&a), &msg), TC_ERR_UNAVAILABLE, "%s", msg);
  cr_assert_null(a.ctx);
  cr_assert(strstr(msg, "inductor-cuda init"), "%s", msg);
}

/* Runs cmd; its stdout (and stderr with 2>&1 in cmd) into out; the exit status. */
static int run(const char *cmd, char *out, size_t cap) {
  FILE *f = popen(cmd, "r");
  cr_assert_not_null(f, "popen %s", cmd);
  size_t n = fread(out, 1, cap - 1, f);
  out[n] = '\0';
  int st = pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(inductor_cuda_runtime, no_link_time_cuda_dependency) {
  static char out[16384];
  if (run("command -v readelf >/dev/null 2>&1 && echo yes", out, sizeof out) != 0 || !strstr(out, "yes"))
    cr_skip_test("readelf is not installed");
  cr_assert_eq(run("readelf -d '" ICUDA_SO "' 2>&1", out, sizeof out), 0, "%s", out);
  cr_assert(strstr(out, "Dynamic section"), "%s", out);
  for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
    if (!strstr(line, "NEEDED")) continue;
    cr_assert_null(strstr(line, "libcuda"), "%s", line);
    cr_assert_null(strstr(line, "libnvrtc"), "%s", line);
    cr_assert_null(strstr(line, "libcublas"), "%s", line);
    cr_assert_null(strstr(line, "libcudart"), "%s", line);
  }
}

Test(inductor_cuda_runtime, cli_lists_it) {
  static char out[65536];
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s/bin/tc' list-backends 2>&1", TC_BINARY_DIR);
  cr_assert_eq(run(cmd, out, sizeof out), 0, "%s", out);
  char *line = strstr(out, "inductor-cuda");
  cr_assert_not_null(line, "%s", out);
  char *end = strchr(line, '\n');
  if (end) *end = '\0';
  tc_probe_args p = {.struct_size = sizeof p, .host = host};
  cr_assert_eq(tck_test_host_take(th, api.probe(&p), NULL), TC_OK);
  if (!p.available) {
    /* the reason, or at least its start when the CLI shortens it */
    char head[24];
    snprintf(head, sizeof head, "%s", p.reason);
    cr_assert(strstr(line, head), "line: %s\nreason: %s", line, p.reason);
  }
}

/* With the toolkit's stub libcuda first on the library path, every driver symbol resolves
 * (the dlsym table is complete) and cuInit's failure is named. In a child: the driver is loaded
 * once per process. */
Test(inductor_cuda_runtime, stub_driver_names_cuinit_failure) {
  const char *stubs = "/usr/local/cuda/lib64/stubs";
  static char out[65536];
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "test -e %s/libcuda.so && echo yes", stubs);
  if (run(cmd, out, sizeof out) != 0 || !strstr(out, "yes")) cr_skip_test("no stub libcuda in %s", stubs);
  snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s '%s/bin/tc' list-backends 2>&1", stubs, TC_BINARY_DIR);
  cr_assert_eq(run(cmd, out, sizeof out), 0, "%s", out);
  char *line = strstr(out, "inductor-cuda");
  cr_assert_not_null(line, "%s", out);
  char *end = strchr(line, '\n');
  if (end) *end = '\0';
  if (strstr(line, " yes ")) return; /* a real driver was found first */
  cr_assert(strstr(line, "cuInit failed: CUDA_ERROR_STUB_LIBRARY") || strstr(line, "no CUDA driver"), "%s", line);
  cr_assert_null(strstr(line, "lacks"), "a driver symbol is missing: %s", line);
}
