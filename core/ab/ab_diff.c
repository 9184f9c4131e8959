/* ab_diff.c — how far one output is from the reference's: absolute, relative and ULP errors,
 * NaN and infinity mismatches, pass or fail under a tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab/ab.h"

void ab_tolerance(tc_dtype dt, const tc_ab_options *o, double *rtol, double *atol) {
  /* f32: reductions and GEMMs sum in different orders on each backend (the pointwise math is
   * exact, docs/architecture.md); 1e-4 of an element plus 1e-5 of the output's scale leaves
   * room for that at the bundled sizes, and still catches a prim off by a relative 1e-4. */
  switch (dt) {
  case TC_F32: *rtol = 1e-4, *atol = 1e-5; break;
  case TC_F64: *rtol = 1e-10, *atol = 1e-12; break;
  default: *rtol = 0.0, *atol = 0.0; break; /* integers and bool: exact */
  }
  if (o && o->rtol > 0) *rtol = o->rtol;
  if (o && o->atol > 0) *atol = o->atol;
}

char *ab_tensor_str(const tc_tensor *t, char *buf, size_t cap) {
  char shape[96];
  int64_t sizes[TC_MAX_RANK];
  int rank = tc_rank(t);
  for (int d = 0; d < rank && d < TC_MAX_RANK; d++)
    sizes[d] = tc_size(t, d);
  snprintf(buf, cap, "%s %s", tc_shape_str(shape, sizeof shape, rank, sizes), tc_dtype_name(tc_dtype_of(t)));
  return buf;
}

/* A float's position on the number line, counted in representable values (+0 and -0 are one). */
static int64_t ulp_key32(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}

static int64_t ulp_key64(double f) {
  uint64_t u;
  memcpy(&u, &f, sizeof u);
  return (u & 0x8000000000000000ull) ? -(int64_t)(u & 0x7fffffffffffffffull) : (int64_t)u;
}

static int64_t ulp_dist(int64_t a, int64_t b) {
  /* Keys of opposite signs can be 2^64 apart: saturate rather than overflow. */
  if ((a < 0) != (b < 0)) {
    uint64_t d = (uint64_t)(a < 0 ? -(a + 1) : a) + (uint64_t)(b < 0 ? -(b + 1) : b) + 1;
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
  }
  return a > b ? a - b : b - a;
}

/* The tensor's elements as doubles, and for f32/f64 their ULP keys, on the host. */
static tc_status read_values(const tc_tensor *t, int64_t n, double *vals, int64_t *keys) {
  tc_dtype dt = tc_dtype_of(t);
  if (dt == TC_F32) {
    float *f = malloc((size_t)n * sizeof *f + 1);
    if (!f) return core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory reading an output");
    tc_status s = tc_to_host(t, f, (size_t)n * sizeof *f);
    for (int64_t i = 0; s == TC_OK && i < n; i++) {
      vals[i] = f[i];
      keys[i] = ulp_key32(f[i]);
    }
    free(f);
    return s;
  }
  tc_scope *scope = tc_scope_open();
  const tc_tensor *d = dt == TC_F64 ? t : tc_to_dtype((tc_tensor *)t, TC_F64);
  tc_status s = d ? tc_to_host(d, vals, (size_t)n * sizeof *vals) : tc_last_status();
  for (int64_t i = 0; s == TC_OK && i < n; i++)
    keys[i] = dt == TC_F64 ? ulp_key64(vals[i]) : 0;
  tc_scope_close(scope);
  return s;
}

tc_status ab_diff_tensors(const tc_tensor *ref, const tc_tensor *out, double rtol, double atol, ab_diff *d) {
  memset(d, 0, sizeof *d);
  d->rtol = rtol;
  d->atol = atol;
  d->worst = -1;
  char a[128], b[128];
  bool same = tc_rank(ref) == tc_rank(out) && tc_dtype_of(ref) == tc_dtype_of(out);
  for (int k = 0; same && k < tc_rank(ref); k++)
    same = tc_size(ref, k) == tc_size(out, k);
  if (!same)
    return core_error(TC_ERR_INVALID_ARGUMENT, "the output is %s where the reference's is %s",
                      ab_tensor_str(out, a, sizeof a), ab_tensor_str(ref, b, sizeof b));
  const int64_t n = tc_numel(ref);
  d->n = n;
  double *rv = malloc((size_t)n * sizeof *rv + 1), *ov = malloc((size_t)n * sizeof *ov + 1);
  int64_t *rk = malloc((size_t)n * sizeof *rk + 1), *ok = malloc((size_t)n * sizeof *ok + 1);
  tc_status s = rv && ov && rk && ok ? TC_OK : core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
  if (s == TC_OK) s = read_values(ref, n, rv, rk);
  if (s == TC_OK) s = read_values(out, n, ov, ok);
  if (s == TC_OK) {
    /* atol is relative to the output's scale: a sum whose terms cancel ends near zero with the
     * rounding error of its terms, which no per-element tolerance can bound. */
    double scale = 0.0;
    for (int64_t i = 0; i < n; i++)
      if (isfinite(rv[i]) && fabs(rv[i]) > scale) scale = fabs(rv[i]);
    double worst_err = -1.0;
    int64_t first_special = -1;
    for (int64_t i = 0; i < n; i++) {
      double r = rv[i], o = ov[i];
      if (isnan(r) || isnan(o)) {
        if (isnan(r) != isnan(o)) {
          d->nan_mismatches++;
          if (first_special < 0) first_special = i;
        } else {
          d->n_nonfinite++;
        }
        continue;
      }
      if (isinf(r) || isinf(o)) {
        if (r != o) {
          d->inf_mismatches++;
          if (first_special < 0) first_special = i;
        } else {
          d->n_nonfinite++;
        }
        continue;
      }
      double err = fabs(o - r);
      if (err > d->max_abs) d->max_abs = err;
      if (r != 0.0 && err / fabs(r) > d->max_rel) d->max_rel = err / fabs(r);
      int64_t u = ulp_dist(rk[i], ok[i]);
      if (u > d->max_ulp) d->max_ulp = u;
      if (err > atol * scale + rtol * fabs(r)) {
        d->n_failed++;
        if (err > worst_err) worst_err = err, d->worst = i;
      }
    }
    if (d->worst < 0) d->worst = first_special;
    if (d->worst >= 0) d->worst_ref = rv[d->worst], d->worst_out = ov[d->worst];
    d->pass = d->n_failed == 0 && d->nan_mismatches == 0 && d->inf_mismatches == 0;
  }
  free(rv);
  free(ov);
  free(rk);
  free(ok);
  return s;
}
