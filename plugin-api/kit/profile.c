/* profile.c — per-kernel launch statistics and their TC_LOGS=profile line, one format for
 * every backend ("graph / kernel: N launches, mean, min, max"). */
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
