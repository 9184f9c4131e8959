/* preload.c — a context's start-up thread: NVRTC and cuBLASLt loaded, then (once the context is
 * open) cuBLASLt's handle made and its heuristic warmed, all off the calls' thread, so that a
 * new process's first cuBLASLt matmul stalls on none of it (a warm attn_block's first call took
 * 116 ms with the handle and the heuristic's first query inside its first matmul, 7.9 ms with
 * them here). Until the thread is done, cuda.gemm=auto runs a call's matmuls on the generated
 * GEMM (gemm.c asks icuda_blaslt_ready_now, which says ready only once all of it is done).
 *
 * Exit. A short process may call exit() while the thread is inside cuBLASLt or the driver (the
 * context is released, and the thread joined, only when the application frees it); exit() then
 * tears cuBLASLt and the driver down under the thread, and `tc run` crashed at exit on the H200
 * (session 8: the thread was inside cublasLtCreate). So the thread counts itself in (g_inside)
 * before its first CUDA call and registers wait_at_exit with atexit, which waits until it has
 * counted itself out. Why that is enough:
 *  - exit() runs atexit/__cxa_atexit handlers newest first, then the ELF destructors (_dl_fini:
 *    libcuda's, cuBLASLt's). The handler is registered after the dlopen of cuBLASLt returned,
 *    so it runs before the destructors of cuBLASLt's C++ statics (registered by its
 *    constructors during that dlopen) and before _dl_fini.
 *  - A library may register a handler lazily, at its first use: the CUDA runtime inside
 *    cuBLASLt registers its teardown at its first call (cublasLtCreate). Such a handler is newer
 *    than ours and would run first; so the handler is registered again after cublasLtCreate
 *    returns, before the heuristic's query. (A process that exits during cublasLtCreate itself,
 *    some 2 ms, after the runtime's registration, is the one window left.)
 *  - glibc runs a handler registered while exit() runs them (restarting its walk), and refuses
 *    one registered after they have all run: a thread that starts its CUDA work while the
 *    process exits is waited for, or (atexit fails, or the handler has run) does not start it.
 *  - The handler only waits: it takes no lock the thread holds while inside, and exit is never
 *    called from the thread. It tells the thread to skip what is left (the heuristic's query)
 *    so that exit waits for one call at most. It does nothing when no thread is inside (every
 *    thread joined by a context release, or done), nor in a forked child (which has none of
 *    the parent's threads, and may hold a copy of the lock taken).
 * Hidden state, documented: the count is process-wide because exit has no context to ask. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "icuda.h"

static pthread_mutex_t g_inside_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_inside_cv = PTHREAD_COND_INITIALIZER;
static int g_inside;       /* preload threads inside cuBLASLt or the driver now */
static int g_exiting;      /* atomic: wait_at_exit has run; no thread starts CUDA work any more */
static pid_t g_inside_pid; /* the process whose threads g_inside counts */

static void wait_at_exit(void) {
  if (getpid() != __atomic_load_n(&g_inside_pid, __ATOMIC_ACQUIRE)) return; /* a forked child */
  __atomic_store_n(&g_exiting, 1, __ATOMIC_RELEASE);
  pthread_mutex_lock(&g_inside_mu);
  while (g_inside > 0)
    pthread_cond_wait(&g_inside_cv, &g_inside_mu);
  pthread_mutex_unlock(&g_inside_mu);
}

static void inside_leave(void) {
  pthread_mutex_lock(&g_inside_mu);
  g_inside--;
  pthread_cond_broadcast(&g_inside_cv);
  pthread_mutex_unlock(&g_inside_mu);
}

/* Counts the calling thread in before CUDA work, the exit handler registered; false when the
 * process is exiting (the thread then does no CUDA work). */
static bool inside_enter(void) {
  pthread_mutex_lock(&g_inside_mu);
  const bool exiting = __atomic_load_n(&g_exiting, __ATOMIC_ACQUIRE);
  if (!exiting) {
    __atomic_store_n(&g_inside_pid, getpid(), __ATOMIC_RELEASE);
    g_inside++;
  }
  pthread_mutex_unlock(&g_inside_mu);
  if (exiting) return false;
  if (atexit(wait_at_exit) != 0) { /* exit's handlers have all run: nothing would wait */
    inside_leave();
    return false;
  }
  return true;
}

static bool exiting(void) {
  return __atomic_load_n(&g_exiting, __ATOMIC_ACQUIRE);
}

/* Waits until plugin.c says whether the context opened; true when it did. */
static bool context_open(tc_plugin_ctx *ctx) {
  pthread_mutex_lock(&ctx->preload_mu);
  while (ctx->ctx_state == 0)
    pthread_cond_wait(&ctx->preload_cv, &ctx->preload_mu);
  const bool open = ctx->ctx_state > 0;
  pthread_mutex_unlock(&ctx->preload_mu);
  return open;
}

/* ctx's cuBLASLt handle, made with ctx's primary context current (cuBLASLt's runtime finds the
 * device through it), then the heuristic warmed; NULL on any failure (the first cuBLASLt
 * matmul then makes the handle itself and reports what fails). Inside: see the file comment. */
static void *handle_make(tc_plugin_ctx *ctx) {
  if (!inside_enter()) return NULL;
  void *h = NULL;
  if (ctx->cu->cuCtxPushCurrent(ctx->cuctx) == CUDA_SUCCESS) {
    double t0 = tck_now_s();
    h = icuda_blaslt_handle_new();
    ctx->lt_create_seconds = tck_now_s() - t0;
    /* again: after any handler cublasLtCreate registered (the runtime's teardown), so this one
     * runs before it. It cannot fail here: the first one has not run (we are counted in). */
    (void)atexit(wait_at_exit);
    t0 = tck_now_s();
    /* skipped when the process exits or the context is released meanwhile: they wait for it */
    if (h && !exiting() && !__atomic_load_n(&ctx->preload_stop, __ATOMIC_ACQUIRE))
      icuda_blaslt_heuristic_warm(h, ctx->workspace_bytes);
    ctx->lt_warm_seconds = tck_now_s() - t0;
    CUcontext popped = NULL;
    ctx->cu->cuCtxPopCurrent(&popped);
  }
  inside_leave();
  return h;
}

/* NVRTC, cuBLASLt, then ctx's handle: the order a warm first call needs them in (NVRTC's
 * version is part of the cubin cache's key). */
static void *preload_main(void *arg) {
  tc_plugin_ctx *ctx = arg;
  char why[8];
  icuda_nvrtc_load(why, sizeof why);
  void *handle = NULL;
  if (icuda_blaslt_load() && context_open(ctx)) handle = handle_make(ctx);
  ctx->lt_handle = handle;
  __atomic_store_n(&ctx->lt_done, 1, __ATOMIC_RELEASE); /* publishes lt_handle */
  return NULL;
}

void icuda_libraries_preload(tc_plugin_ctx *ctx) {
  ctx->ctx_state = 0;
  if (pthread_mutex_init(&ctx->preload_mu, NULL) != 0) return;
  if (pthread_cond_init(&ctx->preload_cv, NULL) != 0) {
    pthread_mutex_destroy(&ctx->preload_mu);
    return;
  }
  ctx->preloading = pthread_create(&ctx->preload, NULL, preload_main, ctx) == 0;
  if (!ctx->preloading) {
    pthread_cond_destroy(&ctx->preload_cv);
    pthread_mutex_destroy(&ctx->preload_mu);
  }
}

void icuda_libraries_preload_context(tc_plugin_ctx *ctx, bool open) {
  if (!ctx->preloading) return;
  pthread_mutex_lock(&ctx->preload_mu);
  if (ctx->ctx_state == 0) ctx->ctx_state = open ? 1 : -1;
  pthread_cond_broadcast(&ctx->preload_cv);
  pthread_mutex_unlock(&ctx->preload_mu);
}

void icuda_libraries_preload_release(tc_plugin_ctx *ctx) {
  if (!ctx->preloading) return;
  __atomic_store_n(&ctx->preload_stop, 1, __ATOMIC_RELEASE); /* the heuristic's query is skipped if not begun */
  icuda_libraries_preload_join(ctx);
}

void icuda_libraries_preload_join(tc_plugin_ctx *ctx) {
  if (!ctx->preloading) return;
  icuda_libraries_preload_context(ctx, false); /* a context never opened: the thread stops waiting */
  pthread_join(ctx->preload, NULL);
  pthread_cond_destroy(&ctx->preload_cv);
  pthread_mutex_destroy(&ctx->preload_mu);
  ctx->preloading = false;
}
