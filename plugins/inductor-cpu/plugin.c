/* plugin.c — inductor-cpu's entry point: the query handshake and its table, options, probe,
 * contexts, and the compile path (validate -> generate one C unit -> the host's disk cache or
 * the system cc -> dlopen; on a miss, by default, a fast build now and the -O3 one in the
 * background: tiered.c). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "icpu.h"

#define ICPU_VERSION "0.2.0"

/* ---------------------------------------------------------------- options */
static const tc_option_decl icpu_options[] = {
    {.struct_size = sizeof(tc_option_decl), .name = "cpu.threads", .type = TC_OPTION_INT, .scope = TC_OPTION_CONTEXT,
     .default_value = "0", .min = 0, .max = 1024, .values = "0 = one per online core",
     .meaning = "OpenMP threads of the generated kernels"},
    {.struct_size = sizeof(tc_option_decl), .name = "cpu.cc", .type = TC_OPTION_STRING, .scope = TC_OPTION_CONTEXT,
     .default_value = NULL, .values = "a command on PATH or a path; unset: $CC, else cc",
     .meaning = "the C compiler"},
    {.struct_size = sizeof(tc_option_decl), .name = "cpu.blas", .type = TC_OPTION_ENUM, .scope = TC_OPTION_COMPILE,
     .default_value = "auto", .values = "auto|generated|openblas",
     .meaning = "f32 matmuls: the generated GEMM (its epilogue fused on each tile; needs AVX2+FMA or AVX-512 to be "
                "fast, and 0.3 s more of cc per unit) or OpenBLAS; auto: the generated GEMM with AVX-512, else OpenBLAS "
                "(f64 always OpenBLAS)"},
    {.struct_size = sizeof(tc_option_decl), .name = "cpu.tier", .type = TC_OPTION_ENUM, .scope = TC_OPTION_COMPILE,
     .default_value = "tiered", .values = "tiered|full|fast",
     .meaning = "a compile that misses the disk cache: tiered runs the first calls on a fast build (-O3 without the "
                "costly register passes, in parts at once) and swaps in the -O3 build made in the background (GCC; "
                "else full); full builds -O3 before the first call; fast builds the fast one only, never cached"},
    {.struct_size = sizeof(tc_option_decl), .name = "cpu.attention", .type = TC_OPTION_ENUM, .scope = TC_OPTION_COMPILE,
     .default_value = "unfused", .values = "fused|unfused",
     .meaning = "softmax(mask(q.kT*scale)).v: fused, one kernel whose scores never reach memory (online softmax over "
                "key tiles); unfused (the default: on the GPU machine's Xeon, 2 threads, attn_block ran at 0.97 of its "
                "GEMMs' OpenBLAS time unfused, 0.80 fused) declines the kernel kind, so the scheduler makes its three "
                "kernels (q.kT, the masked softmax writing the T x T scores, p.v)"},
};

/* The compiler: the option's value, else $CC, else "cc" (probe sees no options: opt NULL). */
static const char *configured_cc(const char *opt) {
  const char *cc = opt && opt[0] ? opt : getenv("CC");
  return cc && cc[0] ? cc : "cc";
}

/* ---------------------------------------------------------------- probe and context */
/* probe's answers: plugin memory valid until the next probe (the host probes one at a time). */
static char probe_reason[320];
static char probe_device_name[256];
static tc_device_desc probe_device;

static tc_error *icpu_probe(tc_probe_args *args) {
  char cc_path[1024];
  const char *cc = configured_cc(NULL);
  args->available = cc_locate(cc, cc_path, sizeof cc_path);
  if (args->available) snprintf(probe_reason, sizeof probe_reason, "C compiler %.200s", cc_path);
  else snprintf(probe_reason, sizeof probe_reason, "no C compiler: '%.200s' is not on PATH (set CC or cpu.cc)", cc);
  args->reason = probe_reason;
  args->score = 60;
  snprintf(probe_device_name, sizeof probe_device_name, "CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
        char *v = strchr(line, ':') + 1;
        v += strspn(v, " \t");
        v[strcspn(v, "\n")] = 0;
        snprintf(probe_device_name, sizeof probe_device_name, "%s", v);
        break;
      }
    fclose(f);
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  probe_device = (tc_device_desc){.struct_size = sizeof probe_device, .name = probe_device_name, .type = TC_DEVICE_CPU,
                                  .memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0};
  args->n_devices = 1;
  args->devices = &probe_device;
  args->device_size = sizeof probe_device;
  return NULL;
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

static tc_error *icpu_init(tc_init_args *args) {
  const tc_host_api *host = args->host;
  args->ctx = NULL;
  if (args->device > 0) return tck_error(host, TC_ERR_INVALID_ARGUMENT, "inductor-cpu: there is one device (0), not %d", args->device);
  const bool has_opts = TC_HAS_FIELD(args, tc_init_args, option_size);
  const tc_option *opts = has_opts ? args->options : NULL;
  const int32_t n_opts = has_opts && opts ? args->n_options : 0;
  const size_t opt_size = has_opts ? args->option_size : 0;
  icpu_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return tck_error(host, TC_ERR_OUT_OF_MEMORY, "inductor-cpu: out of memory");
  ctx->host = host;
  snprintf(ctx->cc, sizeof ctx->cc, "%s", configured_cc(tck_option_get(opts, n_opts, opt_size, "cpu.cc")));
  int64_t n = tck_option_int(opts, n_opts, opt_size, "cpu.threads", 0);
  if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
  ctx->threads = (int32_t)(n > 0 ? (n > 1024 ? 1024 : n) : 1);
  ctx->profiling = tck_log_on(host, "profile");
  openblas_core_hint();
  icpu_log(ctx, "init", "inductor-cpu: context with %d threads, compiler %s", (int)ctx->threads, ctx->cc);
  args->ctx = (tc_plugin_ctx *)ctx;
  return NULL;
}

static void icpu_release(const tc_release_args *args) {
  icpu_ctx *ctx = (icpu_ctx *)args->ctx;
  if (!ctx) return;
  free(ctx->cc_identity);
  free(ctx);
}

/* ---------------------------------------------------------------- compile */
static void exe_destroy(icpu_exe *exe) {
  if (!exe) return;
  tiered_finish(exe); /* first: its thread reads the source and the kernels' names */
  unit_free(exe->first);
  for (int32_t i = 0; exe->kernels && i < exe->n_kernels; i++) tck_tune_memo_free(&exe->kernels[i].tune);
  free(exe->kernels);
  free(exe->kernel_at);
  free(exe->source);
  free(exe);
}

bool icpu_host_has_cache(const tc_host_api *h) {
  return h && TC_HAS_FIELD(h, tc_host_api, scratch_dir) && h->cache_get && h->cache_put && h->cache_release;
}

/* What a compile builds when the disk cache has nothing (cpu.tier). */
typedef enum build_plan { PLAN_TIERED, PLAN_FULL, PLAN_FAST } build_plan;

static build_plan plan_of(icpu_ctx *ctx, const tc_compile_args *args, bool autotune) {
  const bool has_opts = TC_HAS_FIELD(args, tc_compile_args, option_size);
  const char *tier =
      has_opts && args->options ? tck_option_get(args->options, args->n_options, args->option_size, "cpu.tier") : NULL;
  /* max-autotune times the kernels it runs, so it runs the FULL build from the start; the tiers
   * are known to agree bit for bit with GCC only (its flags, compile_cc.c). */
  if (autotune || !cc_is_gcc(ctx) || (tier && !strcmp(tier, "full"))) return PLAN_FULL;
  return tier && !strcmp(tier, "fast") ? PLAN_FAST : PLAN_TIERED;
}

static tc_error *icpu_compile(tc_compile_args *args) {
  icpu_ctx *ctx = (icpu_ctx *)args->ctx;
  const tc_host_api *h = ctx->host;
  const tc_kernel_list *list = args->kernels;
  args->exe = NULL;
  if (!list) return tck_error(h, TC_ERR_INVALID_ARGUMENT, "inductor-cpu compile: no kernel list (it takes kernels)");
  const char *graph = list->name ? list->name : "graph";
  char err[4096] = "";
  tc_status st = tck_kernel_list_validate(list, err, sizeof err);
  if (st != TC_OK) return tck_error(h, st, "inductor-cpu: %s: %s", graph, err);
  double t0 = tck_now_s();
  icpu_exe *exe = calloc(1, sizeof *exe);
  char (*names)[96] = calloc((size_t)(list->n_kernels > 0 ? list->n_kernels : 1), sizeof *names);
  if (!exe || !names) {
    free(exe);
    free(names);
    return tck_error(h, TC_ERR_OUT_OF_MEMORY, "inductor-cpu: out of memory");
  }
  exe->n_syms = list->n_syms;
  snprintf(exe->graph, sizeof exe->graph, "%s", graph);
  exe->autotune = args->mode == TC_MODE_MAX_AUTOTUNE || args->mode == TC_MODE_MAX_AUTOTUNE_NO_CUDAGRAPHS;
  /* reduce-overhead and max-autotune (as on CUDA, max-autotune includes reduce-overhead's
   * mechanism): small kernels get serial twins. */
  const bool has_opts = TC_HAS_FIELD(args, tc_compile_args, option_size) && args->options;
  const char *why;
  const icpu_blas blas_choice = gemm_choose(
      has_opts ? tck_option_get(args->options, args->n_options, args->option_size, "cpu.blas") : NULL, &why);
  const icpu_unit_opts uo = {.serial_twins = args->mode == TC_MODE_REDUCE_OVERHEAD || args->mode == TC_MODE_MAX_AUTOTUNE,
                             .blas = blas_choice};
  exe->kernel_at = calloc((size_t)list->n_kernels + 1, sizeof *exe->kernel_at);
  st = exe->kernel_at ? codegen_unit(list, &uo, &exe->source, names, exe->kernel_at, err, sizeof err)
                      : TC_ERR_OUT_OF_MEMORY;
  if (st == TC_ERR_OUT_OF_MEMORY && !err[0]) snprintf(err, sizeof err, "out of memory");
  if (st == TC_OK) st = exe_kernels_init(exe, names, list, err, sizeof err);
  free(names);
  if (st != TC_OK) {
    exe_destroy(exe);
    return tck_error(h, st, "inductor-cpu: %s: %s", graph, err);
  }
  /* The generated source reaches TC_LOGS=output_code through executable_info (the host logs it). */
  double t_gen = tck_now_s();
  const bool blas = unit_uses_blas(list, &uo);
  for (int32_t i = 0; i < list->n_kernels; i++)
    if (tck_list_kernel(list, i)->kind == TC_KERNEL_MATMUL) {
      icpu_log(ctx, "init", "inductor-cpu: %s: f32 matmuls %s (%s)", graph,
               blas_choice == ICPU_BLAS_GENERATED ? "as the generated GEMM" : "through OpenBLAS", why);
      break;
    }
  const build_plan plan = plan_of(ctx, args, exe->autotune);
  /* The disk cache holds FULL builds only: the key is the FULL build's. */
  icpu_build_job job = {
      .host = h, .threads = ctx->threads, .jobs = 1, .tier = ICPU_TIER_FULL, .blas = blas, .store = true};
  snprintf(job.cc, sizeof job.cc, "%s", ctx->cc);
  job.key = build_key(ctx, exe, ICPU_TIER_FULL, blas, &job.key_len);
  if (!job.key) {
    exe_destroy(exe);
    return tck_error(h, TC_ERR_OUT_OF_MEMORY, "inductor-cpu: out of memory");
  }
  /* The same unit's -O3 build running in this process (an earlier compile's, tiered): wait for
   * it and take it from the cache, rather than compile it again. */
  bool hit = plan != PLAN_FAST && build_load_cached(ctx, exe, ICPU_TIER_FULL, job.key, job.key_len, &exe->first);
  const bool waited = !hit && plan != PLAN_FAST && tiered_wait_for(job.key, job.key_len);
  if (waited) hit = build_load_cached(ctx, exe, ICPU_TIER_FULL, job.key, job.key_len, &exe->first);
  if (hit) {
    exe->cache_hit = true;
    icpu_log(ctx, "cache", "inductor-cpu: hit (%s, %d kernels, %.1f ms%s)", graph, list->n_kernels,
             1e3 * (tck_now_s() - t0), waited ? ", after this process's -O3 build of it" : "");
  } else {
    if (plan != PLAN_FULL) {
      /* Not stored, so it may be built in parts at once, one per core the calls may use. */
      long cores = sysconf(_SC_NPROCESSORS_ONLN);
      job.tier = ICPU_TIER_FAST;
      job.store = false;
      job.jobs = cores > 0 && cores < ctx->threads ? (int32_t)cores : ctx->threads;
      icpu_log(ctx, "cache", "inductor-cpu: miss (%s): running %s, the fast build (up to %d at once)%s", graph, ctx->cc,
               (int)job.jobs, plan == PLAN_TIERED ? ", then the -O3 build in the background" : "");
    } else
      icpu_log(ctx, "cache", "inductor-cpu: miss (%s): running %s", graph, ctx->cc);
    double t_cc = tck_now_s();
    st = build_unit(&job, exe, &exe->first, err, sizeof err);
    if (st == TC_OK)
      icpu_log(ctx, "cache", "inductor-cpu: compiled %s%s: codegen %.1f ms, cc %.1f ms (%d part%s)", graph,
               job.tier == ICPU_TIER_FAST ? " (fast build)" : "", 1e3 * (t_gen - t0), 1e3 * (tck_now_s() - t_cc),
               (int)exe->first->n_parts, exe->first->n_parts == 1 ? "" : "s at once");
  }
  if (st == TC_OK) atomic_init(&exe->live, exe->first);
  if (st == TC_OK && plan == PLAN_TIERED && !exe->cache_hit) {
    char why[256];
    if (tiered_start(exe, &job, why, sizeof why) != TC_OK) /* job's key taken over */
      tck_log(h, TC_LOG_WARN, "cache", "inductor-cpu: %s: no background -O3 build (%s): the fast build stays", graph,
              why);
  }
  free(job.key);
  if (st != TC_OK) {
    exe_destroy(exe);
    return tck_error(h, st, "inductor-cpu: %s: %s", graph, err);
  }
  exe->compile_seconds = tck_now_s() - t0;
  args->exe = (tc_executable *)exe;
  return NULL;
}

/* ---------------------------------------------------------------- executables */
static tc_error *icpu_launch(const tc_launch_args *args) {
  return exe_launch((icpu_ctx *)args->ctx, (icpu_exe *)args->exe, args);
}

static tc_error *icpu_synchronize(const tc_queue_args *args) {
  (void)args; /* launches run to completion before returning */
  return NULL;
}

static void icpu_executable_free(const tc_executable_free_args *args) {
  icpu_exe *exe = (icpu_exe *)args->exe;
  if (exe) exe_profile_report((icpu_ctx *)args->ctx, exe);
  exe_destroy(exe);
}

static tc_error *icpu_executable_info(tc_executable_info_args *args) {
  const icpu_exe *exe = (const icpu_exe *)args->exe;
  if (!exe) return tck_error(((icpu_ctx *)args->ctx)->host, TC_ERR_INVALID_ARGUMENT, "inductor-cpu executable_info: no executable");
  tck_executable_info_fill(args, exe->source, exe->cache_hit, exe->compile_seconds);
  return NULL;
}

/* ---------------------------------------------------------------- the table */

#define ICPU_KINDS ((1u << TC_KERNEL_LOOP) | (1u << TC_KERNEL_MATMUL) | (1u << TC_KERNEL_ATTENTION))

/* Fused attention only under cpu.attention=fused (a host that predates kernel_kinds_under hands
 * it over anyway, and gets it fused). */
static uint32_t icpu_kernel_kinds_under(const tc_option *options, int32_t n_options, size_t option_size) {
  const char *v = tck_option_get(options, n_options, option_size, "cpu.attention");
  return v && !strcmp(v, "fused") ? ICPU_KINDS : ICPU_KINDS & ~(1u << TC_KERNEL_ATTENTION);
}

static const tc_capabilities_ext icpu_capabilities = {
    .base = {.struct_size = sizeof(tc_capabilities_ext), .type = TC_EXT_CAPABILITIES, .next = NULL},
    .dtypes = (1u << TC_F32) | (1u << TC_F64) | (1u << TC_I32) | (1u << TC_I64) | (1u << TC_BOOL),
    .n_prim_words = 2,
    .prims = tck_prims_all,
    .kernel_kinds = ICPU_KINDS,
    .kernel_kinds_under = icpu_kernel_kinds_under};

static const tc_plugin_api icpu_table = {
    .struct_size = sizeof(tc_plugin_api),
    .abi_major = TC_ABI_MAJOR,
    .abi_minor = TC_ABI_MINOR,
    .name = "inductor-cpu",
    .version = ICPU_VERSION,
    .description = "fused kernels as OpenMP C, compiled by the system C compiler; f32 matmuls as a generated GEMM "
                   "with fused epilogues (cpu.blas), f64 through OpenBLAS; attention as one fused kernel (cpu.attention)",
    .handoff = TC_HANDOFF_KERNELS,
    .memory = TC_MEMORY_HOST,
    .flags = 0,
    .option_prefix = "cpu",
    .n_options = (int32_t)(sizeof icpu_options / sizeof icpu_options[0]),
    .options = icpu_options,
    .option_size = sizeof(tc_option_decl),
    .extensions = &icpu_capabilities.base,
    .probe = icpu_probe,
    .init = icpu_init,
    .release = icpu_release,
    .compile = icpu_compile,
    .executable_free = icpu_executable_free,
    .synchronize = icpu_synchronize,
    .launch = icpu_launch,
    .executable_info = icpu_executable_info,
};

TC_PLUGIN_EXPORT tc_error *tc_plugin_query(tc_query_args *args) { return tck_query_answer(args, &icpu_table); }
