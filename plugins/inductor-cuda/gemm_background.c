/* gemm_background.c — an executable's generated GEMMs that missed the disk cache, compiled off
 * the first call's path (modules.c says why), the way inductor-cpu's tiered.c makes its -O3
 * build: a thread per executable, at nice 10 (Linux's nice is per thread, and the compile
 * workers it starts inherit it: the program's own threads come first), one executable's GEMMs
 * compiling at a time in the process on half the cores, each cubin stored in the disk cache as
 * it would have been in the foreground. The thread makes no CUDA call: the cubins are loaded on
 * the calls' thread (icuda_gemm_background_collect, from gemm.c and graphs.c), with the context
 * current and outside any capture.
 *
 * No thread outlives its executable: executable_free joins it, waiting for the compile. A
 * process that exits without freeing waits at exit for the compiles still running: NVRTC is a
 * C++ library with static state that exit would tear down under the thread, and the wait is what
 * puts the cubins in the cache for the next process. The wait runs before NVRTC's exit handlers,
 * even those it registers lazily during a background compile (exit_wait.c: a thread-local
 * destructor of the starting thread, and an atexit handler). A forked child has none of its
 * parent's threads: it waits for nothing.
 * Hidden state, documented: the count of running jobs is process-wide because exit has no
 * context to ask; guarded by g_lock. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "icuda.h"

struct icuda_gemm_job {
  pthread_t thread;
  const tc_host_api *host;
  const icuda_nvrtc *nv;
  int32_t sm;
  char graph[128];
  icuda_program *progs;
  int32_t n;
  bool threaded; /* a thread compiles them (else they were compiled at start) */
  int done;      /* atomic: the thread has finished (progs hold cubins or errors) */
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_running;    /* jobs whose thread has not finished */
static bool g_compiling; /* one job compiles at a time */
static pid_t g_pid;      /* the process the jobs belong to: written once, before the handler exists */
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;

static void wait_for_jobs(void) {
  if (getpid() != g_pid) return;
  pthread_mutex_lock(&g_lock);
  while (g_running > 0)
    pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
}

static void background_init(void) { g_pid = getpid(); }

/* progs[0..n) compiled on `threads` threads (batches of 64: the list on the stack), then each
 * cubin made stored in the disk cache; how many, and their bytes. */
static int32_t compile_and_store(const tc_host_api *host, const icuda_nvrtc *nv, int32_t sm, icuda_program *progs,
                                 int32_t n, int32_t threads, size_t *bytes) {
  icuda_program *todo[64];
  for (int32_t from = 0; from < n; from += 64) {
    int32_t m = n - from < 64 ? n - from : 64;
    for (int32_t i = 0; i < m; i++)
      todo[i] = &progs[from + i];
    icuda_programs_compile(nv, sm, todo, m, threads, NULL, NULL);
  }
  int32_t ok = 0;
  *bytes = 0;
  for (int32_t i = 0; i < n; i++) {
    if (progs[i].st != TC_OK) continue;
    tck_host_cache_store(host, "inductor-cuda", progs[i].key, progs[i].key_len, "cubin", progs[i].cubin, progs[i].size);
    ok++;
    *bytes += progs[i].size;
  }
  return ok;
}

static void *job_main(void *arg) {
  icuda_gemm_job *job = arg;
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
  pthread_mutex_lock(&g_lock);
  while (g_compiling)
    pthread_cond_wait(&g_cond, &g_lock);
  g_compiling = true;
  pthread_mutex_unlock(&g_lock);
  double t0 = tck_now_s();
  const int32_t threads = icuda_compile_threads() / 2 > 0 ? icuda_compile_threads() / 2 : 1;
  size_t bytes = 0;
  int32_t ok = compile_and_store(job->host, job->nv, job->sm, job->progs, job->n, threads, &bytes);
  pthread_mutex_lock(&g_lock);
  g_compiling = false;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
  tck_log(
      job->host, TC_LOG_INFO, "init",
      "inductor-cuda: graph '%s': generated GEMMs compiled in the background: %d of %d modules, %.1f ms (%zu bytes, "
      "nice 10, %d threads), stored in the cache",
      job->graph, (int)ok, (int)job->n, (tck_now_s() - t0) * 1e3, bytes, (int)threads);
  __atomic_store_n(&job->done, 1, __ATOMIC_RELEASE);
  pthread_mutex_lock(&g_lock);
  g_running--;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
  return NULL;
}

void icuda_gemm_background_start(tc_plugin_ctx *ctx, tc_executable *exe, const icuda_nvrtc *nv, icuda_program *progs,
                                 int32_t n) {
  icuda_gemm_job *job = calloc(1, sizeof *job);
  if (!job) {
    icuda_programs_free(progs, n); /* out of memory: the matmuls run on cuBLASLt */
    return;
  }
  *job = (icuda_gemm_job){.host = ctx->host, .nv = nv, .sm = ctx->facts.sm, .progs = progs, .n = n};
  snprintf(job->graph, sizeof job->graph, "%s", exe->name ? exe->name : "graph");
  exe->gemm_job = job;
  pthread_once(&g_init_once, background_init);
  icuda_wait_before_exit(wait_for_jobs); /* this thread's exit waits first (exit_wait.c) */
  pthread_mutex_lock(&g_lock);
  g_running++;
  pthread_mutex_unlock(&g_lock);
  /* the thread takes no signals: they are the program's, for its own threads */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&job->thread, NULL, job_main, job);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc == 0) {
    job->threaded = true;
    return;
  }
  pthread_mutex_lock(&g_lock);
  g_running--;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
  /* no thread: compiled now (loaded at the first collect, as the background's would be) */
  tck_log(ctx->host, TC_LOG_WARN, "cache",
          "inductor-cuda: graph '%s': no background thread; its generated GEMMs compile now", job->graph);
  size_t bytes;
  compile_and_store(ctx->host, nv, job->sm, progs, n, icuda_compile_threads(), &bytes);
  job->done = 1;
}

/* Frees a finished job (its thread joined, or none started). */
static void job_free(icuda_gemm_job *job) {
  icuda_programs_free(job->progs, job->n);
  free(job);
}

bool icuda_gemm_background_collect(tc_plugin_ctx *ctx, tc_executable *exe, bool wait) {
  icuda_gemm_job *job = exe->gemm_job;
  if (!job) return true;
  if (!wait && !__atomic_load_n(&job->done, __ATOMIC_ACQUIRE)) return false;
  const double t0 = tck_now_s();
  if (job->threaded) pthread_join(job->thread, NULL);
  const double waited = tck_now_s() - t0;
  int32_t loaded = 0;
  for (int32_t i = 0; i < job->n; i++) {
    icuda_program *u = &job->progs[i];
    icuda_kernel *k = &exe->kernels[u->kernel];
    if (u->st != TC_OK) {
      tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda",
              "inductor-cuda: matmul '%s': its generated GEMM did not compile (%s); cuBLASLt runs it", k->name, u->err);
      continue;
    }
    CUresult r = CUDA_SUCCESS;
    tc_error *e = icuda_program_load(ctx, exe, u, &r);
    if (!e && r != CUDA_SUCCESS) {
      char nb[48];
      tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda",
              "inductor-cuda: matmul '%s': its generated GEMM does not load (%s); cuBLASLt runs it", k->name,
              icuda_cu_name(ctx->cu, r, nb, sizeof nb));
    } else if (e) {
      tck_log(ctx->host, TC_LOG_WARN, "inductor-cuda", "%s", ctx->host->error_message(ctx->host->host_ctx, e));
      ctx->host->error_free(ctx->host->host_ctx, e);
      k->gemm_fn = NULL;
    } else {
      loaded++;
    }
  }
  if (waited > 1e-4)
    tck_log(ctx->host, TC_LOG_INFO, "init",
            "inductor-cuda: graph '%s': %d generated GEMMs loaded from the background compile, waited %.1f ms for it",
            exe->name, (int)loaded, waited * 1e3);
  else
    tck_log(ctx->host, TC_LOG_INFO, "init",
            "inductor-cuda: graph '%s': %d generated GEMMs loaded from the background compile", exe->name, (int)loaded);
  exe->gemm_job = NULL;
  job_free(job);
  return true;
}

void icuda_gemm_background_finish(tc_executable *exe) {
  icuda_gemm_job *job = exe->gemm_job;
  if (!job) return;
  if (job->threaded) pthread_join(job->thread, NULL);
  exe->gemm_job = NULL;
  job_free(job);
}
