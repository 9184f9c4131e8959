/* modules.c — an executable's code as one CUDA module per kernel, compiled in parallel.
 *
 * NVRTC compiles one program on one thread, and a graph's kernels are independent: each kernel
 * with a function becomes its own program (the prelude + its text, as codegen_module.c laid
 * them out), looked up in the host's disk cache first, and the missing ones are compiled at once
 * on up to one thread per core (NVRTC is thread-safe across programs). The cache stores and the
 * driver calls stay on the calling thread. A cached cubin the driver refuses is compiled again,
 * once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "icuda.h"

#define ICUDA_MAX_COMPILE_THREADS 32

typedef struct unit {
  int32_t kernel;
  char *source;   /* prelude + the kernel's text */
  char *key;      /* the cache key: what the cubin depends on, then the source */
  size_t key_len;
  void *cubin;
  size_t size;
  bool hit;
  tc_status st;
  char err[2048];
} unit;

typedef struct pool {
  const icuda_nvrtc *nv;
  int32_t sm;
  unit **todo;
  int32_t n_todo;
  int32_t next; /* atomically taken */
} pool;

/* A cached cubin (malloc'd) or NULL; an entry that is not a cubin is logged and compiled again. */
static void *cache_load(tc_plugin_ctx *ctx, const unit *u, size_t *n) {
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

static void compile_unit(const icuda_nvrtc *nv, int32_t sm, unit *u, const char *name) {
  u->st = icuda_nvrtc_compile(nv, u->source, name, sm, &u->cubin, &u->size, u->err, sizeof u->err);
}

static void *compile_worker(void *arg) {
  pool *p = arg;
  for (;;) {
    int32_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
    if (i >= p->n_todo) return NULL;
    compile_unit(p->nv, p->sm, p->todo[i], NULL);
  }
}

/* Compiles every unit of todo on min(n, cores) threads; the caller runs `meanwhile` (if any)
 * first, then joins them as one more worker. */
static void compile_all(const icuda_nvrtc *nv, int32_t sm, unit **todo, int32_t n, void (*meanwhile)(void *), void *arg) {
  pool p = {.nv = nv, .sm = sm, .todo = todo, .n_todo = n, .next = 0};
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int32_t n_threads = n < cores ? n : (int32_t)(cores > 0 ? cores : 1);
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
  tc_error *e = icuda_blaslt_prepare(ctx);
  if (e) ctx->host->error_free(ctx->host->host_ctx, e);
}

static void units_free(unit *u, int32_t n) {
  for (int32_t i = 0; u && i < n; i++) {
    free(u[i].source);
    free(u[i].key);
    free(u[i].cubin);
  }
  free(u);
}

/* Loads u's cubin as kernel u->kernel's module and takes its function. */
static tc_error *load_unit(tc_plugin_ctx *ctx, tc_executable *exe, unit *u, CUresult *load_result) {
  icuda_kernel *k = &exe->kernels[u->kernel];
  CUmodule mod = NULL;
  *load_result = ctx->cu->cuModuleLoadData(&mod, u->cubin);
  if (*load_result != CUDA_SUCCESS) return NULL; /* the caller decides: compile again, or fail */
  exe->modules[u->kernel] = mod;
  CUresult r;
  if (k->plan.gemm_name[0]) { /* a MATMUL's generated GEMM (codegen_gemm.c) */
    r = ctx->cu->cuModuleGetFunction(&k->gemm_fn, mod, k->plan.gemm_name);
    if (r != CUDA_SUCCESS)
      return icuda_cu_error(ctx, r, "cuModuleGetFunction", "compile '%s' (function %s)", k->name, k->plan.gemm_name);
  }
  if (k->kind == TC_KERNEL_MATMUL && !k->plan.has_epilogue) return NULL; /* the GEMM is its only function */
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

tc_error *icuda_modules_build(tc_plugin_ctx *ctx, tc_executable *exe) {
  const char *graph = exe->name;
  char why[512];
  exe->modules = calloc((size_t)exe->n_kernels + 1, sizeof *exe->modules);
  unit *units = calloc((size_t)exe->n_kernels + 1, sizeof *units);
  unit **todo = calloc((size_t)exe->n_kernels + 1, sizeof *todo);
  if (!exe->modules || !units || !todo) {
    free(units);
    free(todo);
    return tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda compile: out of memory");
  }
  const icuda_nvrtc *nv = icuda_nvrtc_load(why, sizeof why);
  int32_t sm = ctx->facts.sm, n_units = 0, n_todo = 0;
  size_t prelude = exe->n_kernels > 0 ? exe->kernels[0].plan.src_begin : 0;
  tc_error *e = NULL;
  size_t bytes = 0;
  for (int32_t i = 0; i < exe->n_kernels && !e; i++) {
    const icuda_kernel *k = &exe->kernels[i];
    if (k->kind == TC_KERNEL_MATMUL && !k->plan.has_epilogue && !k->plan.gemm_name[0]) continue; /* cuBLASLt alone */
    unit *u = &units[n_units++];
    u->kernel = i;
    tck_str src = {0};
    tck_str_printf(&src, "%.*s%.*s", (int)prelude, exe->source, (int)(k->plan.src_end - k->plan.src_begin),
                   exe->source + k->plan.src_begin);
    u->source = tck_str_take(&src);
    tck_str key = {0};
    tck_str_printf(&key, "inductor-cuda cubin\nsm_%d\nnvrtc %s\nflags %s\n", (int)sm, nv ? icuda_nvrtc_version(nv) : "?",
                   icuda_nvrtc_flags(sm));
    if (u->source) tck_str_puts(&key, u->source);
    u->key_len = key.len;
    u->key = tck_str_take(&key);
    if (!u->source || !u->key) {
      e = tck_error(ctx->host, TC_ERR_OUT_OF_MEMORY, "inductor-cuda compile: out of memory");
      break;
    }
    u->cubin = cache_load(ctx, u, &u->size);
    u->hit = u->cubin != NULL;
    if (!u->hit) todo[n_todo++] = u;
  }
  if (!e && n_todo > 0 && !nv) e = tck_error(ctx->host, TC_ERR_UNAVAILABLE, "inductor-cuda compile '%s': NVRTC: %s", graph, why);
  double t0 = tck_now_s();
  bool cublas = false;
  for (int32_t i = 0; i < exe->n_kernels; i++)
    cublas = cublas || (exe->kernels[i].kind == TC_KERNEL_MATMUL && !exe->kernels[i].plan.inline_product &&
                        exe->gemm != ICUDA_GEMM_GENERATED);
  if (!e && n_todo > 0) compile_all(nv, sm, todo, n_todo, cublas ? prepare_blaslt : NULL, ctx);
  for (int32_t i = 0; i < n_todo && !e; i++) {
    unit *u = todo[i];
    if (u->st != TC_OK)
      e = tck_error(ctx->host, u->st, "inductor-cuda compile '%s' (kernel %s): NVRTC (sm_%d): %s", graph,
                    exe->kernels[u->kernel].name, (int)sm, u->err);
    else {
      tck_host_cache_store(ctx->host, "inductor-cuda", u->key, u->key_len, "cubin", u->cubin, u->size);
      bytes += u->size;
    }
  }
  if (!e && n_todo > 0)
    tck_log(ctx->host, TC_LOG_INFO, "cache",
            "inductor-cuda cache miss: graph '%s': %d of %d kernels compiled by NVRTC in %.1f ms (parallel, %zu bytes, sm_%d)",
            graph, (int)n_todo, (int)n_units, (tck_now_s() - t0) * 1e3, bytes, (int)sm);
  else if (!e && n_units > 0)
    tck_log(ctx->host, TC_LOG_INFO, "cache", "inductor-cuda cache hit: graph '%s': %d cubins for sm_%d, NVRTC skipped", graph,
            (int)n_units, (int)sm);
  double t_load = tck_now_s();
  for (int32_t i = 0; i < n_units && !e; i++) {
    unit *u = &units[i];
    CUresult r;
    e = load_unit(ctx, exe, u, &r);
    if (!e && r != CUDA_SUCCESS && u->hit && nv) {
      char nb[48];
      tck_log(ctx->host, TC_LOG_WARN, "cache", "inductor-cuda cache: the cached cubin of '%s' does not load (%s); compiling again",
              exe->kernels[u->kernel].name, icuda_cu_name(ctx->cu, r, nb, sizeof nb));
      free(u->cubin);
      u->cubin = NULL;
      u->hit = false;
      compile_unit(nv, sm, u, graph);
      if (u->st != TC_OK)
        e = tck_error(ctx->host, u->st, "inductor-cuda compile '%s': NVRTC (sm_%d): %s", graph, (int)sm, u->err);
      else
        e = load_unit(ctx, exe, u, &r);
    }
    if (!e && r != CUDA_SUCCESS)
      e = icuda_cu_error(ctx, r, "cuModuleLoadData", "compile '%s' (kernel %s: a %zu-byte cubin for sm_%d)", graph,
                         exe->kernels[u->kernel].name, u->size, (int)sm);
  }
  if (!e && n_units > 0)
    tck_log(ctx->host, TC_LOG_INFO, "init", "inductor-cuda: graph '%s': %d modules loaded in %.1f ms (NVRTC %s, loaded in %.1f ms)",
            graph, (int)n_units, (tck_now_s() - t_load) * 1e3, nv ? icuda_nvrtc_version(nv) : "absent",
            icuda_nvrtc_load_seconds() * 1e3);
  /* every cubin from the cache, including none compiled again because the driver refused it */
  exe->from_cache = !e && n_units > 0;
  for (int32_t i = 0; i < n_units; i++) exe->from_cache = exe->from_cache && units[i].hit;
  units_free(units, n_units);
  free(todo);
  return e;
}

void icuda_modules_free(tc_plugin_ctx *ctx, tc_executable *exe) {
  if (!exe->modules) return;
  bool any = false;
  for (int32_t i = 0; i < exe->n_kernels; i++) any = any || exe->modules[i];
  if (any) {
    /* launches of their functions may still be queued */
    tc_error *e = icuda_stream_wait(ctx, "executable_free");
    if (e) {
      tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "%s", ctx->host->error_message(ctx->host->host_ctx, e));
      ctx->host->error_free(ctx->host->host_ctx, e);
    }
  }
  for (int32_t i = 0; i < exe->n_kernels; i++) {
    if (!exe->modules[i]) continue;
    CUresult r = ctx->cu->cuModuleUnload(exe->modules[i]);
    if (r != CUDA_SUCCESS) {
      char nb[48];
      tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "inductor-cuda executable_free '%s': cuModuleUnload failed: %s",
              exe->name ? exe->name : "?", icuda_cu_name(ctx->cu, r, nb, sizeof nb));
    }
  }
  free(exe->modules);
  exe->modules = NULL;
}
