/* autograd_check.h — the finite-difference check the autograd suites share: the analytic
 * gradient (tc_grad_with) of sum(f(x) * r) for a fixed weight tensor r, against central
 * differences of the same sum in f64, element by element. Public API only. */
#ifndef TC_AUTOGRAD_CHECK_H
#define TC_AUTOGRAD_CHECK_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tc/tc.h"

typedef tc_tensor *(*ag_fn)(tc_tensor *const *x);

/* Deterministic values in [lo, hi) (a small LCG: the same data on every run). */
static inline void ag_fill(double *v, int64_t n, uint64_t seed, double lo, double hi) {
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    v[i] = lo + (hi - lo) * (double)(s >> 11) / 9007199254740992.0;
  }
}

static inline int64_t ag_numel(int rank, const int64_t *sizes) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= sizes[i];
  return n;
}

/* An f64 tensor of deterministic values in [lo, hi). */
static inline tc_tensor *ag_rand(uint64_t seed, double lo, double hi, int rank, const int64_t *sizes) {
  int64_t n = ag_numel(rank, sizes);
  double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  ag_fill(v, n, seed, lo, hi);
  tc_tensor *t = tc_from_host(v, TC_F64, rank, sizes);
  free(v);
  cr_assert(t, "tc_from_host: %s", tc_last_error());
  return t;
}
#define AG_R(seed, lo, hi, ...)                                                                                        \
  ag_rand((seed), (lo), (hi), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__})

static inline double *ag_host(tc_tensor *t) {
  int64_t n = tc_numel(t);
  double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  tc_tensor *d = tc_to_dtype(t, TC_F64);
  cr_assert(d && tc_to_host(d, v, sizeof *v * (size_t)n) == TC_OK, "to_host: %s", tc_last_error());
  tc_release(d);
  return v;
}

/* sum(f(x) * r) on the host, with gradients off (nothing recorded). */
static inline double ag_eval(ag_fn f, tc_tensor *const *x, const double *r) {
  tc_scope *s = tc_scope_open();
  bool was = tc_set_grad_enabled(false);
  tc_tensor *y = f(x);
  tc_set_grad_enabled(was);
  cr_assert(y, "forward: %s", tc_last_error());
  double *v = ag_host(y);
  double sum = 0;
  for (int64_t i = 0; i < tc_numel(y); i++)
    sum += v[i] * r[i];
  free(v);
  tc_scope_close(s);
  return sum;
}

/* Checks every input's gradient of sum(f(x) * r) against central differences (step h). The
 * inputs are f64 leaves; they are marked requires_grad here. */
static inline void ag_check(const char *name, ag_fn f, int n, tc_tensor **x, double atol, double rtol) {
  tc_scope *s = tc_scope_open();
  for (int k = 0; k < n; k++)
    cr_assert_eq(tc_set_requires_grad(x[k], true), TC_OK, "%s", tc_last_error());
  tc_tensor *y = f(x);
  cr_assert(y, "%s: forward: %s", name, tc_last_error());
  int64_t ny = tc_numel(y);
  int64_t ys[8];
  for (int d = 0; d < tc_rank(y); d++)
    ys[d] = tc_size(y, d);
  double *r = malloc(sizeof *r * (size_t)(ny ? ny : 1));
  ag_fill(r, ny, 99, -1.5, 1.5);
  tc_tensor *rt = tc_to_dtype(tc_from_host(r, TC_F64, tc_rank(y), ys), tc_dtype_of(y));
  tc_tensor *g[8];
  cr_assert_eq(tc_grad_with(y, rt, x, n, g), TC_OK, "%s: tc_grad_with: %s", name, tc_last_error());
  const double h = 1e-6;
  for (int k = 0; k < n; k++) {
    cr_assert_eq(tc_rank(g[k]), tc_rank(x[k]), "%s: grad %d rank", name, k);
    for (int d = 0; d < tc_rank(x[k]); d++)
      cr_assert_eq(tc_size(g[k], d), tc_size(x[k], d), "%s: grad %d size", name, k);
    cr_assert_eq(tc_dtype_of(g[k]), tc_dtype_of(x[k]), "%s: grad %d dtype", name, k);
    double *ga = ag_host(g[k]), *xv = ag_host(x[k]);
    int64_t nx = tc_numel(x[k]);
    int64_t xs[8];
    for (int d = 0; d < tc_rank(x[k]); d++)
      xs[d] = tc_size(x[k], d);
    for (int64_t i = 0; i < nx; i++) {
      tc_tensor *xp[8];
      for (int j = 0; j < n; j++)
        xp[j] = x[j];
      double keep = xv[i];
      xv[i] = keep + h;
      xp[k] = tc_from_host(xv, TC_F64, tc_rank(x[k]), xs);
      double up = ag_eval(f, xp, r);
      tc_release(xp[k]);
      xv[i] = keep - h;
      xp[k] = tc_from_host(xv, TC_F64, tc_rank(x[k]), xs);
      double down = ag_eval(f, xp, r);
      tc_release(xp[k]);
      xv[i] = keep;
      double num = (up - down) / (2 * h);
      cr_assert(fabs(ga[i] - num) <= atol + rtol * fabs(num),
                "%s: d/dx%d[%lld]: autograd %.10g, finite differences %.10g", name, k, (long long)i, ga[i], num);
    }
    free(ga);
    free(xv);
  }
  free(r);
  tc_scope_close(s);
}

#define AG_CHECK(name, f, ...)                                                                                         \
  do {                                                                                                                 \
    tc_tensor *xs_[] = {__VA_ARGS__};                                                                                  \
    ag_check((name), (f), (int)(sizeof xs_ / sizeof *xs_), xs_, 1e-6, 1e-5);                                           \
  } while (0)

#endif
