/* preload.c — a context's start-up thread: NVRTC and cuBLASLt loaded (dlopen and relocation,
 * tens of milliseconds each) off the calls' thread, while the host traces and compiles. Until it
 * is done, cuda.gemm=auto runs a call's matmuls on the generated GEMM where it is loaded (gemm.c
 * asks icuda_blaslt_ready_now).
 *
 * Loading only: the thread makes no CUDA call and no cuBLASLt call. Twice a thread that made
 * cuBLASLt's handle (and warmed its heuristic) crashed short processes at exit on the H200:
 * session 8 (inside cublasLtCreate), and session 9 with an exit handler that waited for the
 * thread: 20 of 20 `tc run ln_gelu --size test` died with SIGSEGV inside cuBLASLt (cuda-gdb:
 * the thread in libcublasLt, the main thread in that handler). cuBLASLt registers teardown
 * handlers lazily, during the calls the thread makes, so they are newer than any handler of
 * ours and run first, destroying what the thread is using. The handle is made on the calls'
 * thread (blaslt.c), after which cuBLASLt's own start-up can go to a thread whose exit handler
 * runs before cuBLASLt's (blaslt_warmup.c). */
#include <pthread.h>

#include "icuda.h"

/* NVRTC, then cuBLASLt: the order a warm first call needs them in (NVRTC's version is part of
 * the cubin cache's key). */
static void *preload_main(void *arg) {
  tc_plugin_ctx *ctx = arg;
  char why[8];
  icuda_nvrtc_load(why, sizeof why);
  icuda_blaslt_load();
  __atomic_store_n(&ctx->lt_done, 1, __ATOMIC_RELEASE);
  return NULL;
}

void icuda_libraries_preload(tc_plugin_ctx *ctx) {
  ctx->preloading = pthread_create(&ctx->preload, NULL, preload_main, ctx) == 0;
}

void icuda_libraries_preload_join(tc_plugin_ctx *ctx) {
  if (!ctx->preloading) return;
  pthread_join(ctx->preload, NULL);
  ctx->preloading = false;
}
