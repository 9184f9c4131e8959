/* probe_host.h — what the host CPU probes (row_kernel_host.c, gemm_host.c, blas_host.c) share: a
 * monotonic clock, a comparison for qsort of doubles, medians with quartiles, and pseudo-random
 * matrices. Header-only: each probe is one program. */
#ifndef TC_PROBE_HOST_H
#define TC_PROBE_HOST_H
#include <stdint.h>
#include <stdlib.h>
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
/* The median of v[0..n-1] (sorted here) and, with q1 non-NULL, its quartiles. */
static inline __attribute__((unused)) double median(double *v, int n, double *q1, double *q3) {
  qsort(v, (size_t)n, sizeof v[0], cmp);
  if (q1) *q1 = v[n / 4], *q3 = v[(3 * n) / 4];
  return v[n / 2];
}
/* n floats uniform in [-scale, scale) from a linear congruential generator, 64-byte aligned. */
static inline __attribute__((unused)) float *randn(int64_t n, float scale, unsigned seed) {
  float *p = (float *)aligned_alloc(64, (size_t)((n * 4 + 63) / 64 * 64));
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = scale * ((float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f);
  }
  return p;
}
#endif
