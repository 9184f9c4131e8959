/* profile.c — per-kernel launch statistics and their TC_LOGS=profile line, one format for
 * every backend ("graph / kernel: N launches, mean, min, max"); the clock and the median the
 * host's timings use too. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "tc_kit.h"

double tck_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tck_launch_stats_add(tck_launch_stats *st, double seconds) {
  if (st->launches == 0 || seconds < st->min_s) st->min_s = seconds;
  if (seconds > st->max_s) st->max_s = seconds;
  st->total_s += seconds;
  st->launches++;
}

void tck_launch_stats_log(const tc_host_api *h, const char *graph, const char *kernel, const tck_launch_stats *st,
                          const char *suffix) {
  if (!st || st->launches == 0) return;
  tck_log(h, TC_LOG_INFO, "profile", "%s / %s: %llu launches, mean %.1f us, min %.1f us, max %.1f us%s",
          graph ? graph : "?", kernel ? kernel : "?", (unsigned long long)st->launches,
          st->total_s / (double)st->launches * 1e6, st->min_s * 1e6, st->max_s * 1e6, suffix ? suffix : "");
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double tck_median(double *xs, int n) {
  if (n <= 0) return NAN;
  qsort(xs, (size_t)n, sizeof *xs, cmp_double);
  return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}
