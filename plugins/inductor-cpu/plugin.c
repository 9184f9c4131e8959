/* plugin.c — inductor-cpu's entry point: version negotiation, probe, context, and the compile
 * path (generate one C unit -> disk cache or system cc -> dlopen). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "icpu.h"

#define ICPU_VERSION "0.1.0"

/* ---------------------------------------------------------------- logging and errors */
bool icpu_log_on(const icpu_ctx *ctx, const char *category) {
  const tc_host_api *h = ctx->host;
  return h && h->log_enabled && h->log_enabled(h->host_ctx, category);
}

static void vlog(const tc_host_api *h, tc_log_level lvl, const char *category, const char *fmt, va_list ap) {
  if (!h || !h->log) return;
  char line[4096];
  vsnprintf(line, sizeof line, fmt, ap);
  h->log(h->host_ctx, lvl, category, line);
}

void icpu_log(const icpu_ctx *ctx, const char *category, const char *fmt, ...) {
  if (!icpu_log_on(ctx, category)) return;
  va_list ap;
  va_start(ap, fmt);
  vlog(ctx->host, TC_LOG_INFO, category, fmt, ap);
  va_end(ap);
}

static tc_status host_fail(const tc_host_api *h, tc_status s, const char *msg) {
  if (h && h->set_error) h->set_error(h->host_ctx, msg);
  return s;
}

tc_status icpu_fail(const icpu_ctx *ctx, tc_status s, const char *fmt, ...) {
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return host_fail(ctx->host, s, msg);
}

/* ---------------------------------------------------------------- probe and context */
static const char *configured_cc(const tc_host_api *host) {
  const char *cc = host && host->get_option ? host->get_option(host->host_ctx, "cpu.cc") : NULL;
  if (!cc || !cc[0]) cc = getenv("CC");
  return cc && cc[0] ? cc : "cc";
}

/* Finds an executable on PATH (or the path itself when it has a slash). */
static bool find_program(const char *name, char *out, size_t cap) {
  if (strchr(name, '/')) {
    snprintf(out, cap, "%s", name);
    return access(name, X_OK) == 0;
  }
  const char *path = getenv("PATH");
  if (!path) path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    size_t n = strcspn(path, ":");
    snprintf(out, cap, "%.*s/%s", (int)n, path, name);
    if (n && access(out, X_OK) == 0) return true;
    path += n + (path[n] == ':');
  }
  return false;
}

static tc_status icpu_probe(const tc_host_api *host, tc_probe_info *info) {
  char cc_path[1024];
  const char *cc = configured_cc(host);
  info->available = find_program(cc, cc_path, sizeof cc_path);
  if (info->available) snprintf(info->reason, sizeof info->reason, "C compiler %.200s", cc_path);
  else snprintf(info->reason, sizeof info->reason, "no C compiler: '%s' is not on PATH (set CC or cpu.cc)", cc);
  info->score = 60;
  info->n_devices = 1;
  tc_device_info *d = &info->devices[0];
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->type = TC_DEVICE_CPU;
  snprintf(d->name, sizeof d->name, "CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
        char *v = strchr(line, ':') + 1;
        v += strspn(v, " \t");
        v[strcspn(v, "\n")] = 0;
        snprintf(d->name, sizeof d->name, "%s", v);
        break;
      }
    fclose(f);
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  d->memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  return TC_OK;
}

/* OpenBLAS 0.3.21 does not recognize every recent CPU and then falls back to its SSE3
 * (Prescott) kernels, 4-5x slower than its AVX-512 ones on this class of machine. Before the
 * library is first loaded (it comes in with the first unit that has a matmul), name the core
 * type from the CPU's features, unless the user already chose one. */
static void openblas_core_hint(void) {
  if (getenv("OPENBLAS_CORETYPE")) return;
  void *loaded = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
  if (loaded) {
    dlclose(loaded);
    return;
  }
  __builtin_cpu_init();
  const char *core = NULL;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    core = "SKYLAKEX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    core = "HASWELL";
  if (core) setenv("OPENBLAS_CORETYPE", core, 0);
}

static tc_status icpu_init(const tc_host_api *host, int32_t device, tc_plugin_ctx **out) {
  *out = NULL;
  if (device != 0) return host_fail(host, TC_ERR_INVALID_ARGUMENT, "inductor-cpu: there is one device (0)");
  icpu_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return host_fail(host, TC_ERR_OUT_OF_MEMORY, "inductor-cpu: out of memory");
  ctx->host = host;
  snprintf(ctx->cc, sizeof ctx->cc, "%s", configured_cc(host));
  const char *t = host->get_option ? host->get_option(host->host_ctx, "cpu.threads") : NULL;
  long n = t ? strtol(t, NULL, 10) : 0;
  if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
  ctx->threads = (int32_t)(n > 0 ? (n > 1024 ? 1024 : n) : 1);
  ctx->profiling = icpu_log_on(ctx, "profile");
  openblas_core_hint();
  *out = (tc_plugin_ctx *)ctx;
  return TC_OK;
}

static void icpu_release(tc_plugin_ctx *c) {
  icpu_ctx *ctx = (icpu_ctx *)c;
  if (!ctx) return;
  free(ctx->cc_identity);
  free(ctx);
}

/* ---------------------------------------------------------------- compile */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void exe_destroy(icpu_exe *exe) {
  if (!exe) return;
  if (exe->dl) dlclose(exe->dl);
  free(exe->kernels);
  free(exe->source);
  free(exe);
}

static tc_status icpu_compile_kernels(tc_plugin_ctx *c, const tc_kernel_list *list, tc_executable **out) {
  icpu_ctx *ctx = (icpu_ctx *)c;
  *out = NULL;
  if (!list || list->struct_size < TC_STRUCT_SIZE(tc_kernel_list, kernels))
    return icpu_fail(ctx, TC_ERR_VERSION, "inductor-cpu: kernel list missing or too small");
  double t0 = now_s();
  icpu_exe *exe = calloc(1, sizeof *exe);
  char (*names)[96] = calloc((size_t)(list->n_kernels > 0 ? list->n_kernels : 1), sizeof *names);
  if (!exe || !names) {
    free(exe);
    free(names);
    return icpu_fail(ctx, TC_ERR_OUT_OF_MEMORY, "inductor-cpu: out of memory");
  }
  exe->n_syms = list->n_syms;
  snprintf(exe->graph, sizeof exe->graph, "%s", list->name ? list->name : "graph");
  char err[4096] = "";
  tc_status st = codegen_unit(list, &exe->source, names, err, sizeof err);
  if (st != TC_OK) {
    free(names);
    exe_destroy(exe);
    return icpu_fail(ctx, st, "inductor-cpu: %s: %s", list->name ? list->name : "graph", err);
  }
  /* The generated source reaches TC_LOGS=output_code through executable_source (the core logs it). */
  double t_gen = now_s();
  bool blas = unit_uses_blas(list);
  icpu_hash h = hash_bytes(exe->source, strlen(exe->source), hash_init());
  const char *id = cc_identity(ctx);
  h = hash_bytes(id, strlen(id), h);
  h = hash_bytes(cc_flags(blas), strlen(cc_flags(blas)), h);
  char key[33], path[4096];
  hash_hex(h, key);
  bool cached = cache_path(ctx, key, path, sizeof path);
  char tmpdir[64] = "";
  if (cached && cache_verify(ctx, path)) {
    st = exe_load(ctx, exe, path, names, list);
    if (st == TC_OK) {
      exe->cache_hit = true;
      exe->compile_seconds = now_s() - t0;
      icpu_log(ctx, "cache", "hit %s (%s, %d kernels, %.1f ms)", key, list->name ? list->name : "graph", list->n_kernels,
               1e3 * (now_s() - t0));
      free(names);
      *out = (tc_executable *)exe;
      return TC_OK;
    }
    /* Verified bytes that do not load (e.g. a library moved): rebuild it. */
    icpu_log(ctx, "cache", "entry %s does not load, rebuilding", key);
    if (exe->dl) { dlclose(exe->dl); exe->dl = NULL; }
    free(exe->kernels);
    exe->kernels = NULL;
    unlink(path);
  }
  if (!cached) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tc-icpu-XXXXXX");
    if (!mkdtemp(tmpdir)) {
      free(names);
      exe_destroy(exe);
      return icpu_fail(ctx, TC_ERR_COMPILE, "inductor-cpu: cannot create a temporary directory");
    }
    snprintf(path, sizeof path, "%s/%s.so", tmpdir, key);
  }
  icpu_log(ctx, "cache", "miss %s (%s): running %s", key, list->name ? list->name : "graph", ctx->cc);
  st = cc_compile(ctx, exe->source, blas, path, err, sizeof err);
  double t_cc = now_s();
  if (st == TC_OK && cached) st = cache_seal(ctx, path);
  if (st == TC_OK) st = exe_load(ctx, exe, path, names, list);
  else icpu_fail(ctx, st, "inductor-cpu: %s", err);
  if (!cached) {
    unlink(path);
    rmdir(tmpdir);
  }
  free(names);
  if (st != TC_OK) {
    exe_destroy(exe);
    return st;
  }
  exe->compile_seconds = now_s() - t0;
  icpu_log(ctx, "cache", "compiled %s: codegen %.1f ms, cc %.1f ms", key, 1e3 * (t_gen - t0), 1e3 * (t_cc - t_gen));
  *out = (tc_executable *)exe;
  return TC_OK;
}

static tc_status icpu_launch(tc_plugin_ctx *c, tc_executable *e, int32_t kernel, const tc_buffer_arg *args,
                             const int64_t *syms) {
  return exe_launch((icpu_ctx *)c, (icpu_exe *)e, kernel, args, syms);
}

static tc_status icpu_synchronize(tc_plugin_ctx *c) {
  (void)c; /* launches run to completion before returning */
  return TC_OK;
}

static void icpu_executable_free(tc_plugin_ctx *c, tc_executable *e) {
  icpu_exe *exe = (icpu_exe *)e;
  if (exe) exe_profile_report((icpu_ctx *)c, exe, exe->graph);
  exe_destroy(exe);
}

static tc_status icpu_executable_info(tc_plugin_ctx *c, tc_executable *e, tc_executable_info *info) {
  const icpu_exe *exe = (const icpu_exe *)e;
  if (!exe || !info || info->struct_size < TC_STRUCT_SIZE(tc_executable_info, struct_size))
    return icpu_fail((icpu_ctx *)c, TC_ERR_INVALID_ARGUMENT, "inductor-cpu executable_info: NULL executable or info");
  tc_executable_info mine = {.struct_size = sizeof mine, .from_cache = exe->cache_hit, .compile_seconds = exe->compile_seconds};
  size_t n = info->struct_size < sizeof mine ? info->struct_size : sizeof mine;
  memcpy(info, &mine, n);
  info->struct_size = n;
  return TC_OK;
}

static const char *icpu_executable_source(tc_plugin_ctx *c, tc_executable *e) {
  (void)c;
  return e ? ((icpu_exe *)e)->source : NULL;
}

static tc_status icpu_capabilities(tc_plugin_ctx *c, tc_capabilities *caps) {
  (void)c;
  caps->dtypes = (1u << TC_F32) | (1u << TC_F64) | (1u << TC_I32) | (1u << TC_I64) | (1u << TC_BOOL);
  caps->prims[0] = caps->prims[1] = 0;
  for (int p = 1; p < 128; p++) {
    bool ok = (p >= TC_PRIM_NEG && p <= TC_PRIM_ISNAN) || (p >= TC_PRIM_ADD && p <= TC_PRIM_OR) || p == TC_PRIM_WHERE ||
              p == TC_PRIM_CONVERT || (p >= TC_PRIM_REDUCE_SUM && p <= TC_PRIM_ARGMIN) ||
              (p >= TC_PRIM_RESHAPE && p <= TC_PRIM_REVERSE) || p == TC_PRIM_GATHER || p == TC_PRIM_SCATTER_ADD ||
              (p >= TC_PRIM_IOTA && p <= TC_PRIM_RANDOM) || p == TC_PRIM_MATMUL;
    if (ok) caps->prims[p / 64] |= 1ull << (p % 64);
  }
  caps->kernel_kinds = (1u << TC_KERNEL_LOOP) | (1u << TC_KERNEL_MATMUL);
  return TC_OK;
}

/* ---------------------------------------------------------------- entry */
TC_PLUGIN_EXPORT tc_status tc_plugin_query(const tc_host_api *host, tc_plugin_api *out) {
  if (!host || !out) return TC_ERR_INVALID_ARGUMENT;
  if (host->abi_major != TC_ABI_MAJOR) {
    char msg[160];
    snprintf(msg, sizeof msg, "inductor-cpu speaks tc plugin ABI %d.x, the host %u.%u", TC_ABI_MAJOR, host->abi_major,
             host->abi_minor);
    return host_fail(host, TC_ERR_VERSION, msg);
  }
  tc_plugin_api api;
  memset(&api, 0, sizeof api);
  api.struct_size = sizeof api;
  api.abi_major = TC_ABI_MAJOR;
  api.abi_minor = TC_ABI_MINOR;
  api.name = "inductor-cpu";
  api.version = ICPU_VERSION;
  api.description = "fused kernels as OpenMP C, compiled by the system C compiler; matmul through OpenBLAS";
  api.handoff = TC_HANDOFF_KERNELS;
  api.memory = TC_MEMORY_HOST;
  api.probe = icpu_probe;
  api.init = icpu_init;
  api.release = icpu_release;
  api.compile_kernels = icpu_compile_kernels;
  api.launch = icpu_launch;
  api.synchronize = icpu_synchronize;
  api.executable_free = icpu_executable_free;
  api.executable_source = icpu_executable_source;
  api.executable_info = icpu_executable_info;
  api.capabilities = icpu_capabilities;
  size_t n = out->struct_size && out->struct_size < sizeof api ? out->struct_size : sizeof api;
  memcpy(out, &api, n);
  out->struct_size = n;
  return TC_OK;
}
