/* exit_wait.c — waiting for this plugin's threads before exit tears down the libraries they
 * are inside.
 *
 * cuBLASLt and NVRTC are C++ libraries whose static state exit destroys through handlers they
 * register lazily, during the calls a thread of ours may be making at that moment: newer than
 * any atexit handler of ours, they run first. Session 10 on the H200: a warm `tc run attn_block`
 * exited while blaslt_warmup.c's thread was in cuBLASLt's first heuristic query; the main thread
 * waited in our atexit handler, the thread called a null function pointer inside cuBLASLt (2 of
 * 2, SIGSEGV; cuda-gdb). So the wait is also registered as a thread-local destructor of the
 * thread that starts the work (a library's calling thread, usually the one that exits): glibc's
 * exit runs the exiting thread's thread-local destructors before any atexit handler. The atexit
 * handler stays for an exit from another thread (and for a dlclose, which runs it). A
 * thread-local destructor holds the plugin loaded until that thread ends (glibc takes a
 * reference on the object for it): a dlclose of the plugin unmaps it only then. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "exit_wait.h"

/* glibc (2.18+): what C++'s thread_local destructors use; weak, so a libc without it leaves
 * the atexit handler alone. */
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso_symbol) __attribute__((weak));
extern void *__dso_handle __attribute__((weak));

/* Hidden state, documented: the waits registered (process-wide, as exit is), under g_lock; a slot
 * is written once, before any destructor can name it. */
enum { EXIT_WAITS = 4 };
static icuda_exit_wait_fn g_waits[EXIT_WAITS]; /* registered with atexit, in order */
static int g_n_waits;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread bool t_registered[EXIT_WAITS]; /* this thread's destructor, per wait */

static void run_wait(void *slot) { (*(icuda_exit_wait_fn *)slot)(); }

void icuda_wait_before_exit(icuda_exit_wait_fn wait) {
  pthread_mutex_lock(&g_lock);
  int i = 0;
  while (i < g_n_waits && g_waits[i] != wait) i++;
  if (i == g_n_waits && i < EXIT_WAITS) {
    g_waits[g_n_waits++] = wait;
    atexit(wait);
  }
  pthread_mutex_unlock(&g_lock);
  if (i >= EXIT_WAITS || t_registered[i] || !__cxa_thread_atexit_impl || !&__dso_handle) return;
  t_registered[i] = __cxa_thread_atexit_impl(run_wait, &g_waits[i], &__dso_handle) == 0;
}
