/* exit_wait_scenario.c — what exit does to a thread inside a library that registers its exit
 * handlers lazily (cuBLASLt, NVRTC), with inductor-cuda's exit_wait.c. A worker thread plays the
 * library's first call: it registers the library's teardown with atexit, then keeps using the
 * library's state for 100 ms; main returns meanwhile. argv[1]:
 *   wait    main registered icuda_wait_before_exit(wait_for_worker) first: exit waits for the
 *           worker before the teardown, and the process exits 0;
 *   atexit  main registered atexit(wait_for_worker) only: the teardown, newer, runs first and the
 *           worker reads freed state (the crash of session 10): a signal, or exit status 3.
 * test_inductor_cuda.c builds and runs both. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exit_wait.h"

static int *g_state; /* the library's state: NULL once torn down */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_done, g_registered;

static void pause_ms(long ms) {
  struct timespec t = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
  nanosleep(&t, NULL);
}

static void library_teardown(void) { g_state = NULL; }

static void *worker(void *arg) {
  (void)arg;
  atexit(library_teardown); /* lazily, inside the library's first call */
  pthread_mutex_lock(&g_lock);
  g_registered = 1;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
  pause_ms(100);
  if (!g_state) _exit(3); /* torn down under the worker */
  g_state[0]++;
  pthread_mutex_lock(&g_lock);
  g_done = 1;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
  return NULL;
}

static void wait_for_worker(void) {
  pthread_mutex_lock(&g_lock);
  while (!g_done)
    pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
}

int main(int argc, char **argv) {
  if (argc < 2 || (strcmp(argv[1], "wait") && strcmp(argv[1], "atexit"))) return 2;
  static int state[1];
  g_state = state;
  if (!strcmp(argv[1], "wait")) icuda_wait_before_exit(wait_for_worker);
  else atexit(wait_for_worker);
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL)) return 2;
  pthread_mutex_lock(&g_lock);
  while (!g_registered)
    pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
  return 0; /* exit while the worker is inside the library */
}
