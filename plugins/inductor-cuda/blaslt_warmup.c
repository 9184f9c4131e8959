/* blaslt_warmup.c — cuBLASLt's own start-up on a thread, after the handle is made.
 *
 * A new process's first cuBLASLt call that does work (the heuristic's first query, or a first
 * GEMM run with an algorithm known in advance) takes about 80 ms on the H200, every time:
 * cuBLASLt initialises itself lazily there (bench/probes/cublaslt_startup.c, session 10: load
 * 48-70 ms on the preload thread, cublasLtCreate 2 ms, first query 79-112 ms, second query
 * 0.1 ms; with the algorithms read from a file the first GEMM took the 78-97 ms instead). So
 * the calls' thread makes the handle (blaslt.c) and this thread makes a heuristic query of its
 * own; cuda.gemm=auto runs the calls that come meanwhile on the generated GEMM (gemm.c).
 *
 * Why the handle is not made here too: a thread inside cublasLtCreate, or in the queries of a
 * handle it made itself, crashes a process that exits meanwhile (10 of 10 in the probe's
 * exit-thread mode; 20 of 20 `tc run` in session 9): cuBLASLt registers its exit handlers while
 * the handle is made, newer than any of ours, so they run first and tear down what the thread
 * uses. Made on the calls' thread, then a wait for the warm-ups still running registered to
 * run before cuBLASLt's handlers (exit_wait.c: an atexit handler newer than what
 * cublasLtCreate registers was not enough: the query registers more, and a warm `tc run` died
 * at exit 2 of 2 in session 10; the calls' thread's exit now waits first).
 *
 * The thread touches only its own query's objects and the handle, which no other thread uses
 * until blaslt.c's first matmul joins it (icuda_blaslt_warmup_join).
 * Hidden state, documented: the count of running warm-ups is process-wide, as exit has no
 * context to ask; guarded by g_lock. */
#include <pthread.h>
#include <unistd.h>

#include "icuda.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_running;
static pid_t g_pid; /* the process the threads belong to (a forked child has none of them) */

static void wait_for_warmups(void) {
  pthread_mutex_lock(&g_lock);
  if (getpid() == g_pid)
    while (g_running > 0)
      pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
}

/* One warm-up fewer running: what wait_for_warmups waits on. */
static void running_less(void) {
  pthread_mutex_lock(&g_lock);
  g_running--;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
}

static void *warmup_main(void *arg) {
  tc_plugin_ctx *ctx = arg;
  icuda_ctx_scope sc;
  tc_error *e = icuda_ctx_enter(ctx, "cuBLASLt warm-up", &sc); /* the device the handle is for */
  if (e) {
    ctx->host->error_free(ctx->host->host_ctx, e);
  } else {
    icuda_blaslt_first_query(ctx);
    icuda_ctx_leave(ctx, &sc);
  }
  __atomic_store_n(&ctx->lt_warm_done, 1, __ATOMIC_RELEASE);
  running_less();
  return NULL;
}

void icuda_blaslt_warmup_start(tc_plugin_ctx *ctx) {
  icuda_wait_before_exit(wait_for_warmups); /* on this thread, after cublasLtCreate returned */
  pthread_mutex_lock(&g_lock);
  g_pid = getpid();
  g_running++;
  pthread_mutex_unlock(&g_lock);
  ctx->lt_warm_done = 0;
  ctx->lt_warming = pthread_create(&ctx->lt_warm, NULL, warmup_main, ctx) == 0;
  if (!ctx->lt_warming) running_less(); /* no thread: the first matmul warms it up, as it would have */
}

bool icuda_blaslt_warmup_done(tc_plugin_ctx *ctx) {
  return !ctx->lt_warming || __atomic_load_n(&ctx->lt_warm_done, __ATOMIC_ACQUIRE);
}

void icuda_blaslt_warmup_join(tc_plugin_ctx *ctx) {
  if (!ctx->lt_warming) return;
  pthread_join(ctx->lt_warm, NULL);
  ctx->lt_warming = false;
}
