/* bench_rounds.c — a model timed against its ceiling in one interleaved window.
 *
 * On a shared machine the ceiling moves (this 2-core VM's copy bandwidth goes from 13 to 29 GB/s
 * and back within seconds), so a ratio built from a model median taken at one moment and a
 * ceiling median taken at another measures the moments as much as the model. Here the two are
 * sampled alternately, ceiling first and last:
 *
 *   c0 m0 c1 m1 c2 ... m(n-1) cn
 *
 * and round i's ratio is mean(c_i, c_(i+1)) / m_i: the model sample against the ceiling samples
 * just before and just after it, so a change of machine state slower than a round cancels out
 * (a linear drift exactly). The reported ratio is the median of these per-round ratios rather
 * than the ratio of the two medians: pairing samples taken milliseconds apart is what removes
 * the drift, and the median then drops the rounds where a burst of other load hit only one side.
 * The ratio of medians over the same window is kept for comparison, and the absolute medians of
 * each side are what the figure and the ceiling value are computed from. A second ceiling (the
 * cores' peak FMA rate beside a GEMM model's BLAS) is sampled right after each sample of the
 * first, c0 a0 m0 c1 a1 m1 ..., with per-round ratios of its own (or alone, a0 m0 a1 ...). */
#include <math.h>
#include <stdlib.h>

#include "bench.h"

static int rounds_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Quantile q of sorted xs[0..n-1], interpolated. */
static double rounds_quantile(const double *xs, int n, double q) {
  if (n <= 0) return NAN;
  double pos = q * (n - 1);
  int lo = (int)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
  return xs[lo] + (pos - lo) * (xs[hi] - xs[lo]);
}

/* The median and quartiles of ratio[0..n-1] (sorted here). */
static void rounds_ratios(double *ratio, int n, double *median, double *q1, double *q3) {
  qsort(ratio, (size_t)n, sizeof *ratio, rounds_cmp);
  *median = rounds_quantile(ratio, n, 0.5);
  *q1 = rounds_quantile(ratio, n, 0.25);
  *q3 = rounds_quantile(ratio, n, 0.75);
}

tc_status bench_rounds_measure(const bench_sampler *model, const bench_sampler *ceiling, const bench_sampler *aux,
                               const bench_timing *t, bench_rounds *out) {
  *out = (bench_rounds){.model_s = NAN, .ceiling_s = NAN, .aux_s = NAN};
  int cap = t->iters > 0 ? t->iters : 1;
  double *m = malloc((size_t)cap * sizeof(double)), *c = malloc((size_t)(cap + 1) * sizeof(double)),
         *ratio = malloc((size_t)cap * sizeof(double)), *a = malloc((size_t)(cap + 1) * sizeof(double)),
         *aux_ratio = malloc((size_t)cap * sizeof(double));
  tc_status st = m && c && ratio && a && aux_ratio ? TC_OK : TC_ERR_OUT_OF_MEMORY;
  int n = 0;
  double start = bench_now();
  if (st == TC_OK && ceiling) st = ceiling->sample(ceiling->ctx, &c[0]);
  if (st == TC_OK && aux) st = aux->sample(aux->ctx, &a[0]);
  while (st == TC_OK && n < cap && (n < t->min_iters || bench_now() - start < t->budget_s)) {
    st = model->sample(model->ctx, &m[n]);
    if (st == TC_OK && ceiling) st = ceiling->sample(ceiling->ctx, &c[n + 1]);
    if (st == TC_OK && aux) st = aux->sample(aux->ctx, &a[n + 1]);
    if (st != TC_OK) break;
    if (ceiling) ratio[n] = 0.5 * (c[n] + c[n + 1]) / m[n];
    if (aux) aux_ratio[n] = 0.5 * (a[n] + a[n + 1]) / m[n];
    n++;
  }
  if (n > 0) {
    out->rounds = n;
    if (ceiling) {
      rounds_ratios(ratio, n, &out->ratio, &out->ratio_q1, &out->ratio_q3);
      out->ceiling_s = bench_median(c, n + 1);
    }
    if (aux) {
      rounds_ratios(aux_ratio, n, &out->aux_ratio, &out->aux_q1, &out->aux_q3);
      out->aux_s = bench_median(a, n + 1);
    }
    out->model_s = bench_median(m, n);
    if (ceiling) out->ratio_of_medians = out->ceiling_s / out->model_s;
  }
  free(m);
  free(c);
  free(ratio);
  free(a);
  free(aux_ratio);
  return st;
}
