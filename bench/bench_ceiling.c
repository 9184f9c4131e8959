/* bench_ceiling.c — what a workload could reach on this machine, measured in the same run
 * (BENCHMARKS.md, "How to report"): a streaming copy of the same bytes for memory-bound
 * models; the bare GEMMs of the model at the same shapes for models with matmuls. On a host
 * backend these are a plain OpenMP copy loop and OpenBLAS; on a device backend, single-op
 * kernels compiled through that backend. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef TC_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "bench.h"

enum { CEILING_MAX_GEMMS = 8 };

typedef struct bench_gemm {
  int64_t batch, m, n, k;
} bench_gemm;

static const bench_timing ceiling_timing = {.warmup = 2, .iters = 200, .min_iters = 5, .budget_s = 1.0};

/* ---------------------------------------------------------------- the GEMMs of each model */
static int ceiling_gemms(const tc_model *m, tc_tensor *const *in, bench_gemm *g) {
  if (!strcmp(m->name, "mlp")) {
    int64_t rows = tc_size(in[0], 0), d = tc_size(in[0], 1), h = tc_size(in[1], 1);
    g[0] = (bench_gemm){1, rows, h, d};
    g[1] = (bench_gemm){1, rows, d, h};
    return 2;
  }
  if (!strcmp(m->name, "tiny_mlp_b1")) {
    for (int l = 0; l < 4; l++) g[l] = (bench_gemm){1, tc_size(in[0], 0), tc_size(in[1 + 2 * l], 1), tc_size(in[0], 1)};
    return 4;
  }
  if (!strcmp(m->name, "attn_block")) {
    int64_t b = tc_size(in[0], 0), t = tc_size(in[0], 1), c = tc_size(in[0], 2), heads = 12, d = c / heads;
    g[0] = (bench_gemm){1, b * t, 3 * c, c};  /* qkv */
    g[1] = (bench_gemm){b * heads, t, t, d};  /* q·kᵀ */
    g[2] = (bench_gemm){b * heads, t, d, t};  /* a·v */
    g[3] = (bench_gemm){1, b * t, c, c};      /* out projection */
    g[4] = (bench_gemm){1, b * t, 4 * c, c};  /* mlp up */
    g[5] = (bench_gemm){1, b * t, c, 4 * c};  /* mlp down */
    return 6;
  }
  if (!strcmp(m->name, "digits")) {
    g[0] = (bench_gemm){1, tc_size(in[0], 0), tc_size(in[1], 0), tc_size(in[0], 1)};
    return 1;
  }
  return 0;
}

/* ---------------------------------------------------------------- host: OpenMP copy */
static void ceiling_copy_once(float *dst, const float *src, int64_t n) {
#ifdef _OPENMP
#pragma omp parallel
  {
    int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
    int64_t lo = n * id / nt, hi = n * (id + 1) / nt;
    memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(float));
  }
#else
  memcpy(dst, src, (size_t)n * sizeof(float));
#endif
}

static tc_status ceiling_host_copy(double bytes, int n_sets, double *seconds) {
  int64_t n = (int64_t)(bytes / sizeof(float));
  size_t total = (size_t)n * (size_t)n_sets * sizeof(float);
  float *src = NULL, *dst = NULL;
  if (posix_memalign((void **)&src, 64, total) || posix_memalign((void **)&dst, 64, total)) {
    free(src);
    return TC_ERR_OUT_OF_MEMORY;
  }
  /* First touch by the threads that copy, so pages sit near them; copy once to warm up. */
  for (int s = 0; s < n_sets; s++) {
    ceiling_copy_once(src + (size_t)s * (size_t)n, dst + (size_t)s * (size_t)n, n);
    ceiling_copy_once(dst + (size_t)s * (size_t)n, src + (size_t)s * (size_t)n, n);
  }
  double times[200];
  int done = 0;
  double spent = 0;
  while (done < ceiling_timing.iters && (done < ceiling_timing.min_iters || spent < ceiling_timing.budget_s)) {
    size_t off = (size_t)(done % n_sets) * (size_t)n;
    double t0 = bench_now();
    ceiling_copy_once(dst + off, src + off, n);
    times[done] = bench_now() - t0;
    spent += times[done++];
  }
  *seconds = bench_median(times, done);
  free(src);
  free(dst);
  return TC_OK;
}

/* ---------------------------------------------------------------- host: OpenBLAS */
#ifdef TC_HAVE_OPENBLAS
/* One GEMM (all its batch) in one of three ways; the ceiling takes the fastest per GEMM:
 * 0: the BLAS's own threads, batch after batch (OpenBLAS splits some shapes poorly);
 * 1: batch × row blocks split over OpenMP threads, each calling a single-threaded BLAS (what a
 *    backend calling the BLAS does; right for many small products such as attention's heads);
 * 2: one thread (right for tiny products, where waking threads costs more than the work). */
static void ceiling_sgemm_run(const bench_gemm *g, const float *a, const float *b, float *c, int how) {
  int64_t sa = g->m * g->k, sb = g->k * g->n, sc = g->m * g->n, blocks = 1;
#ifdef _OPENMP
  int64_t nt = omp_get_max_threads();
  if (how == 1 && g->batch < nt) blocks = (nt + g->batch - 1) / g->batch;
#endif
  if (blocks > g->m) blocks = g->m;
  int64_t items = g->batch * blocks;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (how == 1)
#endif
  for (int64_t it = 0; it < items; it++) {
    int64_t p = it / blocks, blk = it % blocks, m0 = g->m * blk / blocks, m1 = g->m * (blk + 1) / blocks;
    if (m1 > m0)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(m1 - m0), (int)g->n, (int)g->k, 1.0f,
                  a + p * sa + m0 * g->k, (int)g->k, b + p * sb, (int)g->n, 0.0f, c + p * sc + m0 * g->n, (int)g->n);
  }
}

static double ceiling_sgemm_time(const bench_gemm *g, const float *a, const float *b, float *c, int how) {
  double times[200], spent = 0;
  int done = 0;
  for (int w = 0; w < ceiling_timing.warmup; w++) ceiling_sgemm_run(g, a, b, c, how);
  while (done < ceiling_timing.iters && (done < ceiling_timing.min_iters || spent < ceiling_timing.budget_s / 4)) {
    double t0 = bench_now();
    ceiling_sgemm_run(g, a, b, c, how);
    times[done] = bench_now() - t0;
    spent += times[done++];
  }
  return bench_median(times, done);
}
#endif

static tc_status ceiling_host_gemms(const bench_gemm *g, int n, double *seconds, const char **note) {
#ifdef TC_HAVE_OPENBLAS
  tc_status st = TC_OK;
  /* The process's thread count, not the BLAS's current one: a backend's generated code may have
   * set the BLAS to one thread (it splits the work over its own threads). */
  int threads = bench_default_threads();
  *seconds = 0;
  for (int i = 0; i < n && st == TC_OK; i++) {
    size_t na = (size_t)(g[i].batch * g[i].m * g[i].k), nb = (size_t)(g[i].batch * g[i].k * g[i].n),
           nc = (size_t)(g[i].batch * g[i].m * g[i].n);
    float *a = malloc(na * sizeof(float)), *b = malloc(nb * sizeof(float)), *c = malloc(nc * sizeof(float));
    if (a && b && c) {
      /* Small nonzero values: denormals or NaNs would change the speed. */
      for (size_t j = 0; j < na; j++) a[j] = (float)((int)(j * 7 % 13) - 6) * 0.01f;
      for (size_t j = 0; j < nb; j++) b[j] = (float)((int)(j * 5 % 11) - 5) * 0.01f;
      double t[3] = {0, INFINITY, 0};
      openblas_set_num_threads(threads);
      t[0] = ceiling_sgemm_time(&g[i], a, b, c, 0);
      openblas_set_num_threads(1);
      if (threads > 1) t[1] = ceiling_sgemm_time(&g[i], a, b, c, 1);
      t[2] = ceiling_sgemm_time(&g[i], a, b, c, 2);
      openblas_set_num_threads(threads);
      double best = fmin(t[0], fmin(t[1], t[2]));
      if (getenv("TC_BENCH_DEBUG")) /* the three ways, for checking the BLAS */
        fprintf(stderr, "tc bench: gemm %lldx%lldx%lldx%lld: blas threads %.3f ms, split %.3f ms, one thread %.3f ms\n",
                (long long)g[i].batch, (long long)g[i].m, (long long)g[i].n, (long long)g[i].k, t[0] * 1e3,
                t[1] * 1e3, t[2] * 1e3);
      *seconds += best;
    } else {
      st = TC_ERR_OUT_OF_MEMORY;
    }
    free(a);
    free(b);
    free(c);
  }
  return st;
#else
  (void)g;
  (void)n;
  (void)seconds;
  *note = "built without OpenBLAS";
  return TC_ERR_UNAVAILABLE;
#endif
}

/* ---------------------------------------------------------------- device: single-op kernels */
static tc_tensor *ceiling_neg(tc_tensor *x) { return tc_neg(x); }
static tc_tensor *ceiling_matmul(tc_tensor *a, tc_tensor *b) { return tc_matmul(a, b); }

/* Median seconds of one compiled single-op model over n_sets input sets made on the host. */
static tc_status ceiling_device_op(const tc_model *op, tc_tensor ***sets, int n_sets, const char *backend,
                                   const char *options, double *seconds) {
  bool on_device;
  tc_status st = TC_OK;
  for (int s = 0; s < n_sets && st == TC_OK; s++) st = bench_place_inputs(sets[s], op->n_inputs, backend, &on_device);
  bench_runner r;
  if (st == TC_OK) st = bench_runner_init(&r, op, backend, options);
  if (st != TC_OK) return st;
  int n_timed;
  st = bench_time_calls(&r, (tc_tensor **const *)sets, n_sets, &ceiling_timing, seconds, &n_timed);
  bench_runner_free(&r);
  return st;
}

static tc_status ceiling_device_copy(double bytes, int n_sets, const char *backend, const char *options,
                                     double *seconds) {
  const tc_model op = {.name = "ceiling_copy", .n_inputs = 1, .fn = TC_FN(ceiling_neg)};
  int64_t n = (int64_t)(bytes / sizeof(float));
  tc_tensor *bufs[8] = {0}, **sets[8];
  if (n_sets > 8) n_sets = 8;
  for (int s = 0; s < n_sets; s++) {
    bufs[s] = tc_full(1.0 + s, TC_F32, 1, &n);
    sets[s] = &bufs[s];
  }
  tc_status st = TC_OK;
  for (int s = 0; s < n_sets; s++)
    if (!bufs[s]) st = TC_ERR_OUT_OF_MEMORY;
  if (st == TC_OK) st = ceiling_device_op(&op, sets, n_sets, backend, options, seconds);
  for (int s = 0; s < n_sets; s++) tc_release(bufs[s]);
  return st;
}

static tc_status ceiling_device_gemms(const bench_gemm *g, int n, const char *backend, const char *options,
                                      double *seconds) {
  const tc_model op = {.name = "ceiling_matmul", .n_inputs = 2, .fn = TC_FN(ceiling_matmul)};
  tc_status st = TC_OK;
  *seconds = 0;
  for (int i = 0; i < n && st == TC_OK; i++) {
    int64_t as[3] = {g[i].batch, g[i].m, g[i].k}, bs[3] = {g[i].batch, g[i].k, g[i].n};
    int rank = g[i].batch > 1 ? 3 : 2, skip = g[i].batch > 1 ? 0 : 1;
    tc_tensor *ab[2] = {tc_randn(1, TC_F32, rank, as + skip), tc_randn(2, TC_F32, rank, bs + skip)}, **sets[1] = {ab};
    double t = 0;
    st = ab[0] && ab[1] ? ceiling_device_op(&op, sets, 1, backend, options, &t) : TC_ERR_OUT_OF_MEMORY;
    *seconds += t;
    tc_release(ab[0]);
    tc_release(ab[1]);
  }
  return st;
}

/* ---------------------------------------------------------------- the ceiling of a model */
tc_status bench_ceiling_measure(const tc_model *m, tc_size_class size, tc_tensor *const *inputs, const char *backend,
                                bool on_device, int n_sets, const char *options, bench_ceiling *out) {
  memset(out, 0, sizeof *out);
  double work = m->work ? m->work(size) : 0.0;
  tc_status st;
  if (!strcmp(m->unit, "GB/s")) {
    /* work counts bytes read + written; a copy of half of them moves the same. */
    out->kind = on_device ? "backend-copy" : "copy";
    st = on_device ? ceiling_device_copy(work / 2, n_sets, backend, options, &out->seconds)
                   : ceiling_host_copy(work / 2, n_sets, &out->seconds);
  } else {
    bench_gemm g[CEILING_MAX_GEMMS];
    int n = ceiling_gemms(m, inputs, g);
    if (n == 0) {
      out->note = "no ceiling for this model";
      return TC_OK;
    }
    out->kind = on_device ? "backend-matmul" : "sgemm";
    st = on_device ? ceiling_device_gemms(g, n, backend, options, &out->seconds)
                   : ceiling_host_gemms(g, n, &out->seconds, &out->note);
  }
  if (st != TC_OK) {
    out->kind = NULL;
    if (!out->note) out->note = "ceiling measurement failed";
    return st;
  }
  out->value = bench_figure(m, size, out->seconds);
  return TC_OK;
}
