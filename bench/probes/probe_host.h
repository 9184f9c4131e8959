/* probe_host.h — what the host CPU probes (row_kernel_host.c, gemm_host.c) share: a monotonic
 * clock and a comparison for qsort of doubles. Header-only: each probe is one program. */
#ifndef TC_PROBE_HOST_H
#define TC_PROBE_HOST_H
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
#endif
