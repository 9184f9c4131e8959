/* parallel.c — compile's independent jobs (a kernel's SPIR-V and module, one pipeline) on a few
 * threads. The calling thread is one of them, and every thread is joined before
 * vk_parallel_run returns: no thread outlives the compile that started it. */
#include <unistd.h>

#include "vk_internal.h"

typedef struct run {
  int32_t n;
  int32_t next; /* the next item, taken atomically */
  void (*job)(void *arg, int32_t i);
  void *arg;
} run;

static void *worker(void *p) {
  run *r = p;
  for (;;) {
    int32_t i = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
    if (i >= r->n) return NULL;
    r->job(r->arg, i);
  }
}

int32_t vk_parallel_run(int32_t n, void (*job)(void *arg, int32_t i), void *arg) {
  if (n <= 0) return 0;
  run r = {.n = n, .next = 0, .job = job, .arg = arg};
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int32_t want = n;
  if (cores > 0 && want > cores) want = (int32_t)cores;
  if (want > VK_PARALLEL_MAX) want = VK_PARALLEL_MAX;
  pthread_t th[VK_PARALLEL_MAX];
  int32_t started = 0;
  /* a thread that cannot start leaves its share to the others (the caller does all of it at
   * worst): the jobs run either way */
  for (int32_t t = 1; t < want; t++)
    if (pthread_create(&th[started], NULL, worker, &r) == 0) started++;
  worker(&r);
  for (int32_t t = 0; t < started; t++) pthread_join(th[t], NULL);
  return started + 1;
}
