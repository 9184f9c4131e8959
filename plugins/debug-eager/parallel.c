/* parallel.c — a large elementwise or creating prim split over the host's cores.
 *
 * Each output element of those prims depends on its own position only, so the split changes no
 * value. It exists for the time of eager code on big tensors, the inputs every benchmark and
 * test draws with tc_randn: 8M elements took 2.3 s on one core here (a dozen prims, each a pass
 * of this interpreter), and a GPU benchmark process draws 20M or more. Small prims stay on the
 * calling thread; threads are joined before the prim returns. */
#include <pthread.h>
#include <unistd.h>

#include "debug_eager.h"

enum { DE_PARALLEL_MIN = 1 << 18, DE_PARALLEL_MAX_THREADS = 16 };

typedef struct de_chunk {
  de_range_fn fn;
  const de_op *op;
  int64_t begin, end;
  tc_status st;
} de_chunk;

static void *chunk_main(void *arg) {
  de_chunk *c = arg;
  c->st = c->fn(c->op, c->begin, c->end);
  return NULL;
}

/* The host's cores, asked once (sysconf reads /sys: not for every prim). */
static long g_cores = 1;
static pthread_once_t g_cores_once = PTHREAD_ONCE_INIT;
static void cores_init(void) {
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  g_cores = c > 1 ? c : 1;
}

tc_status de_parallel_for(const de_op *op, int64_t n, de_range_fn fn) {
  int64_t threads = n / DE_PARALLEL_MIN;
  if (threads < 2) return fn(op, 0, n); /* small: the calling thread, nothing asked */
  pthread_once(&g_cores_once, cores_init);
  if (threads > g_cores) threads = g_cores;
  if (threads > DE_PARALLEL_MAX_THREADS) threads = DE_PARALLEL_MAX_THREADS;
  if (threads < 2) return fn(op, 0, n);
  de_chunk chunks[DE_PARALLEL_MAX_THREADS];
  pthread_t th[DE_PARALLEL_MAX_THREADS];
  bool started[DE_PARALLEL_MAX_THREADS] = {false};
  for (int64_t t = 0; t < threads; t++)
    chunks[t] = (de_chunk){.fn = fn, .op = op, .begin = n * t / threads, .end = n * (t + 1) / threads, .st = TC_OK};
  for (int64_t t = 1; t < threads; t++) started[t] = pthread_create(&th[t], NULL, chunk_main, &chunks[t]) == 0;
  chunk_main(&chunks[0]);
  tc_status st = chunks[0].st;
  for (int64_t t = 1; t < threads; t++) {
    if (started[t]) pthread_join(th[t], NULL);
    else chunk_main(&chunks[t]); /* no thread: this one does it */
    if (st == TC_OK) st = chunks[t].st;
  }
  return st;
}
