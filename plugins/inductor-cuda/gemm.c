/* gemm.c — which GEMM runs a MATMUL launch, and the generated GEMM's launch.
 *
 * Every MATMUL kernel that is not an inline product has a generated GEMM (codegen_gemm.c), a
 * module of its own, unless cuda.gemm=cublaslt. A warm start loads it from the disk cache with
 * the rest; a cold one compiles it in the background (gemm_background.c), off the first call's
 * path, and that call runs on cuBLASLt, waiting for it if need be. cuda.gemm=auto exists for a
 * new process's first calls: loading cuBLASLt (a dlopen of some 50-80 ms on the H200 host, on
 * the preload thread from context creation: preload.c) and then its own start-up (some 80 ms at
 * its first query, on blaslt_warmup.c's thread once this thread has made the handle) take longer
 * than tracing, the cache and the first kernels, so a first matmul that waited for them would
 * wait most of the call. Under auto a call's first matmul asks without waiting whether cuBLASLt
 * is ready (icuda_blaslt_ready_now), making the handle if the library is loaded; if not ready,
 * the call's matmuls run the generated GEMM, product and epilogue in one kernel; the first call
 * that finds cuBLASLt ready and later ones use cuBLASLt, at its speed. The two differ in summation order, so
 * results may differ in the last bits between the first calls and the later ones (as between
 * two cuBLASLt algorithms).
 * reduce-overhead and max-autotune(-no-cudagraphs) wait for cuBLASLt, so what they record and
 * tune is cuBLASLt. Where cuBLASLt does not load at all, auto keeps the generated GEMM. */
#include <stdint.h>

#include "icuda.h"

/* Under auto, at a call's first matmul: whether the call runs on cuBLASLt. Not when cuBLASLt
 * is still starting and exe's GEMMs are loaded (or can be: their background compile is done).
 * When they are still compiling (a cold start), the call waits for cuBLASLt, which is near:
 * its start-up began at context creation and takes less than NVRTC did for the first call's
 * modules; and where cuBLASLt turns out not to load, for the GEMMs. */
static bool call_on_blaslt(tc_plugin_ctx *ctx, tc_executable *exe) {
  /* loaded and no handle yet: the handle here (2 ms), cuBLASLt's own start-up (~80 ms) on
   * blaslt_warmup.c's thread, and this call on the generated GEMMs if they are loaded */
  if (!ctx->blaslt && icuda_blaslt_loaded_now(ctx)) {
    tc_error *e = icuda_blaslt_start(ctx);
    if (e) ctx->host->error_free(ctx->host->host_ctx, e); /* the matmul will say it again */
  }
  if (icuda_blaslt_ready_now(ctx)) return true;
  if (icuda_gemm_background_collect(ctx, exe, false)) return false;
  icuda_libraries_preload_join(ctx); /* the rest of cuBLASLt's load (the matmul joins its start-up) */
  if (icuda_blaslt_load()) { /* loaded by now (else loads here, as the first matmul would) */
    tck_log(ctx->host, TC_LOG_INFO, "init",
            "inductor-cuda: graph '%s': a call waited for cuBLASLt: its generated GEMMs are still compiling in the background",
            exe->name);
    return true;
  }
  icuda_gemm_background_collect(ctx, exe, true);
  return false;
}

bool icuda_gemm_wanted(tc_plugin_ctx *ctx, tc_executable *exe, icuda_kernel *k, uint64_t call_id) {
  if (!k->plan.gemm_name[0]) return false; /* none generated */
  if (exe->gemm == ICUDA_GEMM_GENERATED) return k->gemm_fn != NULL; /* compiled with the rest */
  if (exe->gemm != ICUDA_GEMM_AUTO) return false;
  bool lt;
  if (exe->graph_mode || exe->autotune) {
    /* reduce-overhead records and max-autotune tunes cuBLASLt: they wait for it (graphs.c has
     * it ready before a capture), and take the generated GEMM only where it cannot load */
    tc_error *e = ctx->blaslt || ctx->gemm_lt_failed ? NULL : icuda_blaslt_prepare(ctx);
    if (e) ctx->host->error_free(ctx->host->host_ctx, e);
    ctx->gemm_lt_failed |= e != NULL; /* tried once: not again, inside a capture least of all */
    lt = !ctx->gemm_lt_failed;
    /* the GEMMs, then, waiting for their compile (graphs.c did so before any capture) */
    if (!lt) icuda_gemm_background_collect(ctx, exe, true);
  } else {
    /* asked at a call's first matmul and kept for the call: cuBLASLt's first GEMMs (the lazy
     * loading of their kernels) fall on a later call rather than in the middle of the first,
     * and a call's results come from one GEMM */
    if (!ctx->gemm_call_known || ctx->gemm_call != call_id) {
      ctx->gemm_call_known = true;
      ctx->gemm_call = call_id;
      ctx->gemm_call_lt_ready = call_on_blaslt(ctx, exe);
    }
    lt = ctx->gemm_call_lt_ready;
    if (!lt && exe->gemm_job) icuda_gemm_background_collect(ctx, exe, false); /* another executable in the call */
  }
  if (lt || !k->gemm_fn) return false;
  if (!k->gemm_logged) {
    k->gemm_logged = true;
    tck_log(ctx->host, TC_LOG_INFO, "init", "inductor-cuda: matmul '%s' ran on the generated GEMM: cuBLASLt %s", k->name,
            icuda_blaslt_not_ready_why(ctx));
  }
  return true;
}

static int64_t extent(const int64_t *vals, int32_t id) { return id >= 0 ? vals[id] : 1; }

tc_error *icuda_gemm_launch(tc_plugin_ctx *ctx, const icuda_kernel *k, const int64_t *vals, icuda_args *args) {
  const tc_matmul_desc *d = &k->mm;
  const int64_t m = extent(vals, d->m), n = extent(vals, d->n), b1 = extent(vals, d->batch),
                b2 = d->batch_levels == 2 ? extent(vals, d->batch2) : 1;
  if (m <= 0 || n <= 0 || b1 <= 0 || b2 <= 0) return NULL; /* an empty product */
  const int64_t t = k->plan.gemm_tile;
  const uint64_t tiles = (uint64_t)((m + t - 1) / t) * (uint64_t)((n + t - 1) / t);
  const uint64_t batches = (uint64_t)b1 * (uint64_t)b2;
  if (tiles > INT32_MAX || batches / (uint64_t)b2 != (uint64_t)b1)
    return tck_error(ctx->host, TC_ERR_UNSUPPORTED, "inductor-cuda launch '%s': a %lld x %lld product is %llu tiles of the generated GEMM (at most %d)",
                     k->name, (long long)m, (long long)n, (unsigned long long)tiles, INT32_MAX);
  const unsigned gz = batches < 65535u ? (unsigned)batches : 65535u; /* the kernel strides over the rest */
  void *params[] = {args};
  CUresult r = icuda_launch_kernel(ctx, k->gemm_fn, (unsigned)tiles, 1, gz, (unsigned)k->plan.gemm_block, 0, params);
  if (r == CUDA_SUCCESS) return NULL;
  if (icuda_cu_is_device_failure(r)) return icuda_stream_wait(ctx, "launch");
  return icuda_cu_error(ctx, r, "cuLaunchKernel", "launch '%s' (%s: grid %llu x 1 x %u, block %d)", k->name, k->plan.gemm_name,
                        (unsigned long long)tiles, gz, (int)k->plan.gemm_block);
}
