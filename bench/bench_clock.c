/* bench_clock.c — a monotonic clock and medians. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"
#include "tc_kit.h" /* tck_median: one implementation, shared with tc_ab_compare */

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double bench_median(double *xs, int n) { return tck_median(xs, n); }
