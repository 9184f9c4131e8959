/* modules.c — an executable's code as one CUDA module per kernel, compiled in parallel.
 *
 * NVRTC compiles one program on one thread, and a graph's kernels are independent: each kernel
 * with a function becomes its own program (the prelude + its text, as codegen_module.c laid
 * them out), and so does each MATMUL kernel's generated GEMM; each is looked up in the host's
 * disk cache first, and the missing ones are compiled at once on up to one thread per core
 * (NVRTC is thread-safe across programs). The cache stores and the driver calls stay on the
 * calling thread. A cached cubin the driver refuses is compiled again, once.
 *
 * The generated GEMMs that miss the cache are not on the first call's path: they cost some 0.9 s
 * of NVRTC for attn_block (the rest 0.24 s), and a cold first call under cuda.gemm=auto has
 * cuBLASLt ready long before (it loads in ~80 ms on the preload thread). gemm_background.c
 * compiles them on a thread and puts them in the cache, so a warm start loads them with the
 * rest and its first call runs on them while cuBLASLt warms up. cuda.gemm=generated (and a
 * process where cuBLASLt failed to load) compiles them here, with the rest: its calls need them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "icuda.h"

#define ICUDA_MAX_COMPILE_THREADS 32

typedef struct pool {
  const icuda_nvrtc *nv;
  int32_t sm;
  icuda_program **todo;
  int32_t n_todo;
  int32_t next; /* atomically taken */
} pool;

/* A cached cubin (malloc'd) or NULL; an entry that is not a cubin is logged and compiled again. */
static void *cache_load(tc_plugin_ctx *ctx, const icuda_program *u, size_t *n) {
  size_t size = 0;
  void *data = tck_host_cache_load(ctx->host, "inductor-cuda", u->key, u->key_len, "cubin", &size);
  if (data && (size < 4 || memcmp(data, "\x7f" "ELF", 4))) {
    tck_log(ctx->host, TC_LOG_WARN, "cache", "inductor-cuda cache: an entry of %zu bytes is not a cubin; compiling again", size);
    free(data);
    return NULL;
  }
  if (data) *n = size;
  return data;
}

static void compile_program(const icuda_nvrtc *nv, int32_t sm, icuda_program *u, const char *name) {
  u->st = icuda_nvrtc_compile(nv, u->source, name, sm, &u->cubin, &u->size, u->err, sizeof u->err);
}

static void *compile_worker(void *arg) {
  pool *p = arg;
  for (;;) {
    int32_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
    if (i >= p->n_todo) return NULL;
    compile_program(p->nv, p->sm, p->todo[i], NULL);
  }
}

int32_t icuda_compile_threads(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores < 1 ? 1 : cores > ICUDA_MAX_COMPILE_THREADS ? ICUDA_MAX_COMPILE_THREADS : (int32_t)cores;
}

void icuda_programs_compile(const icuda_nvrtc *nv, int32_t sm, icuda_program **todo, int32_t n, int32_t threads,
                            void (*meanwhile)(void *), void *arg) {
  pool p = {.nv = nv, .sm = sm, .todo = todo, .n_todo = n, .next = 0};
  int32_t n_threads = n < threads ? n : threads;
  if (n_threads > ICUDA_MAX_COMPILE_THREADS) n_threads = ICUDA_MAX_COMPILE_THREADS;
  pthread_t th[ICUDA_MAX_COMPILE_THREADS];
  int32_t started = 0;
  for (int32_t t = 0; t < n_threads; t++)
    if (pthread_create(&th[started], NULL, compile_worker, &p) == 0) started++;
  if (meanwhile) meanwhile(arg);
  compile_worker(&p); /* what no thread took (none could start: all of it) */
  for (int32_t t = 0; t < started; t++) pthread_join(th[t], NULL);
}

/* While NVRTC runs: cuBLASLt's handle and workspace, which the first matmul would otherwise make
 * after the compile (its start-up is a large part of a first call). A failure is left to that
 * matmul to report. */
static void prepare_blaslt(void *ctx_) {
  tc_plugin_ctx *ctx = ctx_;
  tc_error *e = icuda_blaslt_start(ctx);
  if (e) ctx->host->error_free(ctx->host->host_ctx, e);
}

void icuda_programs_free(icuda_program *u, int32_t n) {
  for (int32_t i = 0; u && i < n; i++) {
    free(u[i].source);
    free(u[i].key);
    free(u[i].cubin);
  }
  free(u);
}

tc_error *icuda_program_load(tc_plugin_ctx *ctx, tc_executable *exe, icuda_program *u, CUresult *load_result) {
  icuda_kernel *k = &exe->kernels[u->kernel];
  CUmodule mod = NULL;
  *load_result = ctx->cu->cuModuleLoadData(&mod, u->cubin);
  if (*load_result != CUDA_SUCCESS) return NULL; /* the caller decides: compile again, or fail */
  CUresult r;
  if (u->gemm) { /* a MATMUL's generated GEMM (codegen_gemm.c), its only function */
    exe->gemm_modules[u->kernel] = mod;
    r = ctx->cu->cuModuleGetFunction(&k->gemm_fn, mod, k->plan.gemm_name);
    if (r != CUDA_SUCCESS)
      return icuda_cu_error(ctx, r, "cuModuleGetFunction", "compile '%s' (function %s)", k->name, k->plan.gemm_name);
    return NULL;
  }
  exe->modules[u->kernel] = mod;
  r = ctx->cu->cuModuleGetFunction(&k->fn, mod, k->plan.name);
  if (r != CUDA_SUCCESS) return icuda_cu_error(ctx, r, "cuModuleGetFunction", "compile '%s' (function %s)", k->name, k->plan.name);
  if (k->plan.smem_bytes > ICUDA_SMEM_DEFAULT) {
    r = ctx->cu->cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k->plan.smem_bytes);
    if (r != CUDA_SUCCESS)
      return icuda_cu_error(ctx, r, "cuFuncSetAttribute", "compile '%s' (MAX_DYNAMIC_SHARED_SIZE_BYTES = %d)", k->name,
                            (int)k->plan.smem_bytes);
  }
  return NULL;
}

/* The program of kernel i (or its generated GEMM) with its key, looked up in the cache; false
 * when it has none. */
static tc_error *program_make(tc_plugin_ctx *ctx, tc_executable *exe, const icuda_kernel_plan *plans, const icuda_nvrtc *nv,
                              int32_t i, bool gemm, icuda_program *u, bool *made) {
  bool oom = false;
  *made = false;
  u->source = icuda_program_source(exe->source, plans, exe->n_kernels, i, gemm, &oom);
  if (!u->source) return oom ? tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda compile: out of memory") : NULL;
  u->kernel = i;
  u->gemm = gemm;
  u->key = icuda_cubin_key(ctx->facts.sm, nv ? icuda_nvrtc_version(nv) : "?", u->source, &u->key_len);
  if (!u->key) return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda compile: out of memory");
  u->cubin = cache_load(ctx, u, &u->size);
  u->hit = u->cubin != NULL;
  *made = true;
  return NULL;
}

/* Whether the generated GEMMs that miss the cache are compiled now rather than in the background:
 * when the first call needs them (cuda.gemm=generated; cuBLASLt already known not to load). */
static bool gemms_now(const tc_executable *exe) { return exe->gemm == ICUDA_GEMM_GENERATED || icuda_blaslt_unavailable(); }

tc_error *icuda_modules_build(tc_plugin_ctx *ctx, tc_executable *exe, const icuda_kernel_plan *plans) {
  const char *graph = exe->name;
  char why[512];
  const size_t n2 = 2 * (size_t)exe->n_kernels + 1;
  exe->modules = calloc((size_t)exe->n_kernels + 1, sizeof *exe->modules);
  exe->gemm_modules = calloc((size_t)exe->n_kernels + 1, sizeof *exe->gemm_modules);
  icuda_program *units = calloc(n2, sizeof *units);
  icuda_program **todo = calloc(n2, sizeof *todo);
  icuda_program *later = calloc(n2, sizeof *later); /* the GEMMs left to the background */
  if (!exe->modules || !exe->gemm_modules || !units || !todo || !later) {
    free(units);
    free(todo);
    free(later);
    return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda compile: out of memory");
  }
  const icuda_nvrtc *nv = icuda_nvrtc_load(why, sizeof why);
  int32_t sm = ctx->facts.sm, n_units = 0, n_todo = 0, n_later = 0, n_gemms = 0;
  const bool now = gemms_now(exe);
  tc_error *e = NULL;
  size_t bytes = 0;
  for (int32_t i = 0; i < exe->n_kernels * 2 && !e; i++) {
    icuda_program *u = &units[n_units];
    bool made = false;
    e = program_make(ctx, exe, plans, nv, i / 2, i % 2 == 1, u, &made);
    if (e || !made) {
      free(u->source);
      free(u->key);
      memset(u, 0, sizeof *u);
      continue;
    }
    n_gemms += u->gemm;
    if (u->hit) n_units++;
    else if (u->gemm && !now) { /* moved to the background's list */
      later[n_later++] = *u;
      memset(u, 0, sizeof *u);
    } else
      todo[n_todo++] = &units[n_units++];
  }
  if (!e && n_todo > 0 && !nv) e = tck_error(ctx->host, TC_ERR_UNAVAILABLE, "inductor-cuda compile '%s': NVRTC: %s", graph, why);
  double t0 = tck_now_s();
  bool cublas = false;
  for (int32_t i = 0; i < exe->n_kernels; i++)
    cublas = cublas || (exe->kernels[i].kind == TC_KERNEL_MATMUL && !exe->kernels[i].plan.inline_product &&
                        exe->gemm != ICUDA_GEMM_GENERATED);
  if (!e && n_todo > 0) icuda_programs_compile(nv, sm, todo, n_todo, icuda_compile_threads(), cublas ? prepare_blaslt : NULL, ctx);
  for (int32_t i = 0; i < n_todo && !e; i++) {
    icuda_program *u = todo[i];
    if (u->st != TC_OK)
      e = tck_error(ctx->host, u->st, "inductor-cuda compile '%s' (kernel %s%s): NVRTC (sm_%d): %s", graph,
                    exe->kernels[u->kernel].name, u->gemm ? ", its generated GEMM" : "", (int)sm, u->err);
    else {
      tck_host_cache_store(ctx->host, "inductor-cuda", u->key, u->key_len, "cubin", u->cubin, u->size);
      bytes += u->size;
    }
  }
  if (!e && n_todo > 0)
    tck_log(ctx->host, TC_LOG_INFO, "cache",
            "inductor-cuda cache miss: graph '%s': %d of %d programs compiled by NVRTC in %.1f ms (parallel, %zu bytes, "
            "sm_%d)%s",
            graph, (int)n_todo, (int)(n_units + n_later), (tck_now_s() - t0) * 1e3, bytes, (int)sm,
            n_later ? "; its generated GEMMs missing from the cache compile in the background" : "");
  else if (!e && n_units > 0)
    tck_log(ctx->host, TC_LOG_INFO, "cache", "inductor-cuda cache hit: graph '%s': %d cubins for sm_%d (%d of %d generated GEMMs), NVRTC skipped%s",
            graph, (int)n_units, (int)sm, (int)(n_gemms - n_later), (int)n_gemms,
            n_later ? "; the missing GEMMs compile in the background" : "");
  double t_load = tck_now_s();
  for (int32_t i = 0; i < n_units && !e; i++) {
    icuda_program *u = &units[i];
    CUresult r;
    e = icuda_program_load(ctx, exe, u, &r);
    if (!e && r != CUDA_SUCCESS && u->hit && nv) {
      char nb[48];
      tck_log(ctx->host, TC_LOG_WARN, "cache", "inductor-cuda cache: the cached cubin of '%s'%s does not load (%s); compiling again",
              exe->kernels[u->kernel].name, u->gemm ? " (its generated GEMM)" : "", icuda_cu_name(ctx->cu, r, nb, sizeof nb));
      free(u->cubin);
      u->cubin = NULL;
      u->hit = false;
      compile_program(nv, sm, u, graph);
      if (u->st != TC_OK)
        e = tck_error(ctx->host, u->st, "inductor-cuda compile '%s': NVRTC (sm_%d): %s", graph, (int)sm, u->err);
      else
        e = icuda_program_load(ctx, exe, u, &r);
    }
    if (!e && r != CUDA_SUCCESS)
      e = icuda_cu_error(ctx, r, "cuModuleLoadData", "compile '%s' (kernel %s: a %zu-byte cubin for sm_%d)", graph,
                         exe->kernels[u->kernel].name, u->size, (int)sm);
  }
  if (!e && n_units > 0)
    tck_log(ctx->host, TC_LOG_INFO, "init", "inductor-cuda: graph '%s': %d modules loaded in %.1f ms (NVRTC %s, loaded in %.1f ms)",
            graph, (int)n_units, (tck_now_s() - t_load) * 1e3, nv ? icuda_nvrtc_version(nv) : "absent",
            icuda_nvrtc_load_seconds() * 1e3);
  /* every cubin the first call needs from the cache, including none compiled again because the
   * driver refused it (the background's GEMMs are not among them) */
  exe->from_cache = !e && n_units > 0;
  for (int32_t i = 0; i < n_units; i++) exe->from_cache = exe->from_cache && units[i].hit;
  icuda_programs_free(units, n_units);
  free(todo);
  if (!e && n_later > 0 && !nv) {
    /* no NVRTC: the GEMMs cannot be made; the matmuls run on cuBLASLt */
    tck_log(ctx->host, TC_LOG_WARN, "cache", "inductor-cuda: graph '%s': no generated GEMM (NVRTC: %s)", graph, why);
    n_later = 0;
  }
  if (!e && n_later > 0) {
    icuda_gemm_background_start(ctx, exe, nv, later, n_later); /* takes later */
    later = NULL;
  }
  icuda_programs_free(later, n_later);
  return e;
}

void icuda_modules_free(tc_plugin_ctx *ctx, tc_executable *exe) {
  if (!exe->modules) return;
  bool any = false;
  for (int32_t i = 0; i < exe->n_kernels; i++) any = any || exe->modules[i] || (exe->gemm_modules && exe->gemm_modules[i]);
  if (any) {
    /* launches of their functions may still be queued */
    tc_error *e = icuda_stream_wait(ctx, "executable_free");
    if (e) {
      tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "%s", ctx->host->error_message(ctx->host->host_ctx, e));
      ctx->host->error_free(ctx->host->host_ctx, e);
    }
  }
  for (int32_t i = 0; i < 2 * exe->n_kernels; i++) {
    CUmodule m = i < exe->n_kernels ? exe->modules[i] : exe->gemm_modules ? exe->gemm_modules[i - exe->n_kernels] : NULL;
    if (!m) continue;
    CUresult r = ctx->cu->cuModuleUnload(m);
    if (r != CUDA_SUCCESS) {
      char nb[48];
      tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "inductor-cuda executable_free '%s': cuModuleUnload failed: %s",
              exe->name ? exe->name : "?", icuda_cu_name(ctx->cu, r, nb, sizeof nb));
    }
  }
  free(exe->modules);
  free(exe->gemm_modules);
  exe->modules = NULL;
  exe->gemm_modules = NULL;
}
