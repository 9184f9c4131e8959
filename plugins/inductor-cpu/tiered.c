/* tiered.c — a compile that misses the disk cache, in two builds of one source. The first calls
 * run the FAST build (compile_cc.c: -O3 without the costly RTL passes, in parts compiled at
 * once: build.c); the FULL build (-O3, one object) is made on a thread of its own and swapped
 * in once loaded. Launches read exe->live, which the thread stores once (release; launch.c
 * loads it with acquire); the FAST unit stays loaded until the executable goes, so a launch
 * already running on it finishes there. Both builds compute the same bits (compile_cc.c's tier
 * flags; tested), so where a call runs is invisible but for its speed. Only the FULL build goes
 * to the disk cache: a warm start loads it directly, and a compile of the same unit while its
 * FULL build runs waits for it (tiered_wait_for) rather than build it again. The FULL build
 * starts once the executable's first call is done (as many launches as it has kernels:
 * launch.c), so that call, the one a cold start waits for, shares the cores with no compiler;
 * it starts at once when something waits for it (tiered_wait_for, executable_free, exit). A
 * process's FULL
 * builds compile on at most half its cores at once (one on two cores), at nice 10: the calls
 * that run meanwhile come first (dyn_attn's 40 cold calls took 3.9-4.4 s at nice 0, 3.4-3.7 s
 * at nice 10, 3.4-3.8 s before the tiers).
 *
 * No thread outlives its executable: executable_free joins it, waiting for the compile (which
 * is also what puts the object into the cache for the next process). A process that exits
 * without freeing waits at exit for the builds still running (an atexit handler, so before the
 * host removes the scratch directory the compiler writes into), and the object is cached. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "icpu.h"

struct icpu_upgrade {
  pthread_t thread;
  icpu_exe *exe;
  icpu_build_job job;
  icpu_unit *full;           /* the FULL unit once built (exe->live then), freed with the executable */
  bool go;                   /* it may start (the first call is done, or it is waited for); running_lock */
  struct icpu_upgrade *next; /* in in_flight while its thread builds */
};

/* The background builds of this process: how many there are (for the exit handler) and how many
 * compile now (at most `slots`, half the cores: a program that compiles many graphs keeps the
 * other cores for their fast builds and its calls; the rest wait their turn). Hidden state, the
 * plugin's only besides probe's answers: builds of every context count, and exit has no
 * context to ask. Guarded by running_lock. */
static pthread_mutex_t running_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t running_cond = PTHREAD_COND_INITIALIZER;
static int running, compiling, slots = 1;
static icpu_upgrade *in_flight; /* the builds not done yet, so a compile of the same unit can wait */
static pid_t running_pid; /* the process whose builds they are: written once, before the handler exists */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* At exit (or at the plugin's dlclose, which runs a library's atexit handlers): wait for the
 * builds, whose threads would otherwise run on while the process is torn down. A forked child
 * has none of its parent's threads (and may have copied the lock held): it waits for nothing. */
static void wait_for_builds(void) {
  if (getpid() != running_pid) return;
  pthread_mutex_lock(&running_lock);
  for (icpu_upgrade *up = in_flight; up; up = up->next) up->go = true;
  pthread_cond_broadcast(&running_cond);
  while (running > 0)
    pthread_cond_wait(&running_cond, &running_lock);
  pthread_mutex_unlock(&running_lock);
}

static void tiered_init(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  slots = cores >= 4 ? (int)(cores / 2) : 1;
  running_pid = getpid();
  atexit(wait_for_builds);
}

/* Under running_lock. */
static void in_flight_remove(icpu_upgrade *up) {
  for (icpu_upgrade **at = &in_flight; *at; at = &(*at)->next)
    if (*at == up) {
      *at = up->next;
      return;
    }
}

static void *upgrade_main(void *arg) {
  icpu_upgrade *up = arg;
  icpu_exe *exe = up->exe;
  const tc_host_api *h = up->job.host;
  char err[4096] = "";
  double t0 = tck_now_s();
  icpu_unit *full = NULL;
  /* Linux's nice is per thread, and the compiler inherits it: the program's own threads come
   * first; the build takes what they leave. */
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
  pthread_mutex_lock(&running_lock);
  while (!up->go || compiling >= slots) pthread_cond_wait(&running_cond, &running_lock);
  compiling++;
  pthread_mutex_unlock(&running_lock);
  tc_status st = build_unit(&up->job, exe, &full, err, sizeof err);
  pthread_mutex_lock(&running_lock);
  compiling--;
  pthread_cond_broadcast(&running_cond);
  pthread_mutex_unlock(&running_lock);
  if (st == TC_OK) {
    up->full = full;
    atomic_store_explicit(&exe->live, full, memory_order_release);
    if (tck_log_on(h, "cache"))
      tck_log(h, TC_LOG_INFO, "cache", "inductor-cpu: %s: -O3 build swapped in (%.1f ms after the fast one)",
              exe->graph, 1e3 * (tck_now_s() - t0));
  } else {
    /* The same source compiled for the FAST build, so this is the machine's trouble (disk,
     * memory), not the graph's: the calls go on, on the FAST build. */
    tck_log(h, TC_LOG_WARN, "cache", "inductor-cpu: %s: the background -O3 build failed, the fast build stays: %s",
            exe->graph, err);
  }
  pthread_mutex_lock(&running_lock);
  in_flight_remove(up);
  running--;
  pthread_cond_broadcast(&running_cond);
  pthread_mutex_unlock(&running_lock);
  return NULL;
}

/* Under running_lock; a build of key found may start now (it is waited for). */
static bool key_in_flight(const char *key, size_t key_len) {
  bool found = false;
  for (icpu_upgrade *up = in_flight; up; up = up->next)
    if (up->job.key_len == key_len && !memcmp(up->job.key, key, key_len)) {
      if (!up->go) pthread_cond_broadcast(&running_cond);
      up->go = found = true;
    }
  return found;
}

bool tiered_wait_for(const char *key, size_t key_len) {
  bool waited = false;
  pthread_mutex_lock(&running_lock);
  while (key_in_flight(key, key_len)) {
    waited = true;
    pthread_cond_wait(&running_cond, &running_lock);
  }
  pthread_mutex_unlock(&running_lock);
  return waited;
}

tc_status tiered_start(icpu_exe *exe, icpu_build_job *job, char *err, size_t cap) {
  icpu_upgrade *up = calloc(1, sizeof *up);
  if (!up) {
    free(job->key);
    job->key = NULL;
    snprintf(err, cap, "out of memory");
    return TC_ERR_OUT_OF_MEMORY;
  }
  up->exe = exe;
  up->job = *job;
  job->key = NULL;
  up->job.tier = ICPU_TIER_FULL;
  up->job.store = true;
  up->job.jobs = 1; /* the calls run meanwhile: one core for the compiler */
  pthread_once(&init_once, tiered_init);
  pthread_mutex_lock(&running_lock);
  running++;
  up->next = in_flight;
  in_flight = up;
  pthread_mutex_unlock(&running_lock);
  /* The thread takes no signals (they are the program's, for its own threads); the compiler it
   * spawns gets an empty mask back (compile_cc.c). */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&up->thread, NULL, upgrade_main, up);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    pthread_mutex_lock(&running_lock);
    in_flight_remove(up);
    running--;
    pthread_cond_broadcast(&running_cond);
    pthread_mutex_unlock(&running_lock);
    free(up->job.key);
    free(up);
    snprintf(err, cap, "cannot start a thread: %s", strerror(rc));
    return TC_ERR_INTERNAL;
  }
  exe->upgrade = up;
  return TC_OK;
}

void tiered_release(icpu_exe *exe) {
  icpu_upgrade *up = exe->upgrade;
  if (!up) return;
  pthread_mutex_lock(&running_lock);
  up->go = true;
  pthread_cond_broadcast(&running_cond);
  pthread_mutex_unlock(&running_lock);
}

void tiered_finish(icpu_exe *exe) {
  icpu_upgrade *up = exe->upgrade;
  if (!up) return;
  tiered_release(exe);
  pthread_join(up->thread, NULL);
  unit_free(up->full);
  free(up->job.key);
  free(up);
  exe->upgrade = NULL;
}
