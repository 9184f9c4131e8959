/* bench_ceiling.c — what a workload could reach on this machine, measured in the same run
 * (BENCHMARKS.md, "How to report"): a streaming copy of the same bytes for memory-bound
 * models; the bare GEMMs of the model at the same shapes for models with matmuls. On a host
 * backend these are the faster of two OpenMP copies (memcpy, and a copy with non-temporal
 * stores) and OpenBLAS; on a device backend, the CUDA
 * driver's copy where a CUDA GPU is present (bench_cuda_copy.c), else single-op kernels compiled
 * through that backend, timed in groups like the model. The workload is opened
 * once and sampled one at a time, so bench_rounds.c can interleave it with the model's calls. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#ifdef TC_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "bench.h"

enum { CEILING_MAX_GEMMS = 8 };

typedef struct bench_gemm {
  int64_t batch, m, n, k;
} bench_gemm;

enum { CEILING_WARMUP = 2 };

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


double bench_gemm_flops(const tc_model *m, tc_tensor *const *inputs) {
  bench_gemm g[CEILING_MAX_GEMMS];
  int n = ceiling_gemms(m, inputs, g);
  double flops = 0;
  for (int i = 0; i < n; i++) flops += 2.0 * (double)g[i].batch * (double)g[i].m * (double)g[i].n * (double)g[i].k;
  return flops;
}

/* ---------------------------------------------------------------- the workload, opened */
typedef struct ceiling_sgemm {
  bench_gemm g;
  float *a, *b, *c;
  int how; /* the fastest way (ceiling_sgemm_run) */
} ceiling_sgemm;

/* Device: one compiled single-op model over its own input sets. */
typedef struct ceiling_op {
  bench_runner runner;
  tc_tensor *bufs[8][2];
  tc_tensor **sets[8];
  int n_sets;
  bench_calls calls;
} ceiling_op;

struct bench_ceiling_run {
  enum { CEILING_HOST_COPY, CEILING_HOST_GEMMS, CEILING_DEVICE_OPS, CEILING_CUDA_COPY } what;
  bench_cuda_copy *cuda; /* the CUDA driver's copy */
  int threads;
  /* host copy: n floats per set, copied the faster way (ceiling_host_copy_open) */
  float *src, *dst;
  int64_t n;
  int n_sets, next;
  bool streaming;
  /* host GEMMs */
  int n_gemms;
  ceiling_sgemm gemm[CEILING_MAX_GEMMS];
  /* device */
  int n_ops;
  ceiling_op op[CEILING_MAX_GEMMS];
};

/* ---------------------------------------------------------------- host: OpenMP copy */
/* A copy that streams: non-temporal stores, which write lines without reading them first. glibc's
 * memcpy streams only above a threshold set from the cache sizes (Debian 12 on the AVX2 EPYC
 * development VM: not for 8 MiB a thread), so its copy moves a third more over the memory bus
 * than the bytes it copies: 27 GB/s there against 36 GB/s streaming, 2 threads (session 16), and
 * the ceiling would be glibc's, not the machine's. The generated kernels store their rows this way. */
static void ceiling_stream_copy(float *dst, const float *src, int64_t n) {
#if defined(__x86_64__) && defined(__SSE2__)
  int64_t i = 0;
  for (; i < n && ((uintptr_t)(dst + i) & 15) != 0; i++) dst[i] = src[i];
  for (; i + 16 <= n; i += 16) {
    _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
    _mm_stream_ps(dst + i + 4, _mm_loadu_ps(src + i + 4));
    _mm_stream_ps(dst + i + 8, _mm_loadu_ps(src + i + 8));
    _mm_stream_ps(dst + i + 12, _mm_loadu_ps(src + i + 12));
  }
  for (; i < n; i++) dst[i] = src[i];
  _mm_sfence();
#else
  memcpy(dst, src, (size_t)n * sizeof(float));
#endif
}

static void ceiling_copy_once(float *dst, const float *src, int64_t n, bool streaming) {
#ifdef _OPENMP
#pragma omp parallel
  {
    int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
    int64_t lo = n * id / nt, hi = n * (id + 1) / nt;
    if (streaming) ceiling_stream_copy(dst + lo, src + lo, hi - lo);
    else memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(float));
  }
#else
  if (streaming) ceiling_stream_copy(dst, src, n);
  else memcpy(dst, src, (size_t)n * sizeof(float));
#endif
}

/* The faster of memcpy and the streaming copy, by the best of three alternating copies each
 * over the rotated sets: the machine's copy rate, whichever way reaches it there. */
static bool ceiling_copy_streams_faster(bench_ceiling_run *run) {
  double best[2] = {INFINITY, INFINITY};
  for (int r = 0; r < 3; r++)
    for (int way = 0; way < 2; way++) {
      size_t off = (size_t)(run->next++ % run->n_sets) * (size_t)run->n;
      double t0 = bench_now();
      ceiling_copy_once(run->dst + off, run->src + off, run->n, way == 1);
      double t = bench_now() - t0;
      if (t < best[way]) best[way] = t;
    }
  return best[1] < best[0];
}

static tc_status ceiling_host_copy_open(bench_ceiling_run *run, double bytes, int n_sets, const char **kind) {
  run->what = CEILING_HOST_COPY;
  run->n = (int64_t)(bytes / sizeof(float));
  run->n_sets = n_sets > 0 ? n_sets : 1;
  size_t total = (size_t)run->n * (size_t)run->n_sets * sizeof(float);
  if (posix_memalign((void **)&run->src, 64, total ? total : 64)) run->src = NULL;
  if (!run->src || posix_memalign((void **)&run->dst, 64, total ? total : 64)) {
    run->dst = NULL;
    return TC_ERR_OUT_OF_MEMORY;
  }
  /* First touch by the threads that copy, so pages sit near them; copy once to warm up. */
  for (int s = 0; s < run->n_sets; s++) {
    size_t off = (size_t)s * (size_t)run->n;
    ceiling_copy_once(run->src + off, run->dst + off, run->n, false);
    ceiling_copy_once(run->dst + off, run->src + off, run->n, false);
  }
  run->streaming = ceiling_copy_streams_faster(run);
  *kind = run->streaming ? "stream-copy" : "memcpy";
  return TC_OK;
}

static double ceiling_host_copy_sample(bench_ceiling_run *run) {
  size_t off = (size_t)(run->next++ % run->n_sets) * (size_t)run->n;
  double t0 = bench_now();
  ceiling_copy_once(run->dst + off, run->src + off, run->n, run->streaming);
  return bench_now() - t0;
}

/* ---------------------------------------------------------------- host: OpenBLAS */
#ifdef TC_HAVE_OPENBLAS
/* One GEMM (all its batch) in one of three ways; the ceiling uses the fastest per GEMM:
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

/* The BLAS thread count a way needs: its own threads for way 0, one otherwise. */
static void ceiling_sgemm_threads(int how, int threads) { openblas_set_num_threads(how == 0 ? threads : 1); }

/* A quick median of one way, to choose it: a few runs, not a measurement. */
static double ceiling_sgemm_probe(const ceiling_sgemm *s, int how, int threads) {
  double times[5], spent = 0;
  int done = 0;
  ceiling_sgemm_threads(how, threads);
  for (int w = 0; w < CEILING_WARMUP; w++) ceiling_sgemm_run(&s->g, s->a, s->b, s->c, how);
  while (done < 5 && (done < 3 || spent < 0.1)) {
    double t0 = bench_now();
    ceiling_sgemm_run(&s->g, s->a, s->b, s->c, how);
    times[done] = bench_now() - t0;
    spent += times[done++];
  }
  return bench_median(times, done);
}
#endif

static tc_status ceiling_host_gemms_open(bench_ceiling_run *run, const bench_gemm *g, int n, const char **note) {
  run->what = CEILING_HOST_GEMMS;
#ifdef TC_HAVE_OPENBLAS
  /* The process's thread count, not the BLAS's current one: a backend's generated code may have
   * set the BLAS to one thread (it splits the work over its own threads). */
  run->threads = bench_default_threads();
  for (int i = 0; i < n; i++) {
    ceiling_sgemm *s = &run->gemm[run->n_gemms++];
    s->g = g[i];
    size_t na = (size_t)(g[i].batch * g[i].m * g[i].k), nb = (size_t)(g[i].batch * g[i].k * g[i].n),
           nc = (size_t)(g[i].batch * g[i].m * g[i].n);
    s->a = malloc(na * sizeof(float));
    s->b = malloc(nb * sizeof(float));
    s->c = malloc(nc * sizeof(float));
    if (!s->a || !s->b || !s->c) return TC_ERR_OUT_OF_MEMORY;
    /* Small nonzero values: denormals or NaNs would change the speed. */
    for (size_t j = 0; j < na; j++) s->a[j] = (float)((int)(j * 7 % 13) - 6) * 0.01f;
    for (size_t j = 0; j < nb; j++) s->b[j] = (float)((int)(j * 5 % 11) - 5) * 0.01f;
    double t[3] = {ceiling_sgemm_probe(s, 0, run->threads), INFINITY, ceiling_sgemm_probe(s, 2, run->threads)};
    if (run->threads > 1) t[1] = ceiling_sgemm_probe(s, 1, run->threads);
    s->how = t[1] < t[0] && t[1] <= t[2] ? 1 : t[2] < t[0] ? 2 : 0;
    if (getenv("TC_BENCH_DEBUG")) /* the three ways, for checking the BLAS */
      fprintf(stderr,
              "tc bench: gemm %lldx%lldx%lldx%lld: blas threads %.3f ms, split %.3f ms, one thread %.3f ms: way %d\n",
              (long long)g[i].batch, (long long)g[i].m, (long long)g[i].n, (long long)g[i].k, t[0] * 1e3, t[1] * 1e3,
              t[2] * 1e3, s->how);
  }
  openblas_set_num_threads(run->threads);
  return TC_OK;
#else
  (void)g;
  (void)n;
  *note = "built without OpenBLAS";
  return TC_ERR_UNAVAILABLE;
#endif
}

/* Every GEMM once, each in its chosen way; the thread switches are not timed. */
static double ceiling_host_gemms_sample(bench_ceiling_run *run) {
  double total = 0;
#ifdef TC_HAVE_OPENBLAS
  for (int i = 0; i < run->n_gemms; i++) {
    ceiling_sgemm *s = &run->gemm[i];
    ceiling_sgemm_threads(s->how, run->threads);
    double t0 = bench_now();
    ceiling_sgemm_run(&s->g, s->a, s->b, s->c, s->how);
    total += bench_now() - t0;
  }
  openblas_set_num_threads(run->threads);
#else
  (void)run;
#endif
  return total;
}

/* ---------------------------------------------------------------- device: single-op kernels */
static tc_tensor *ceiling_neg(tc_tensor *x) { return tc_neg(x); }
static tc_tensor *ceiling_matmul(tc_tensor *a, tc_tensor *b) { return tc_matmul(a, b); }
static const tc_model ceiling_copy_model = {.name = "ceiling_copy", .n_inputs = 1, .fn = TC_FN(ceiling_neg)};
static const tc_model ceiling_matmul_model = {.name = "ceiling_matmul", .n_inputs = 2, .fn = TC_FN(ceiling_matmul)};

/* Moves op's input sets (made on the host) to the device, compiles op and warms it up. */
static tc_status ceiling_op_open(ceiling_op *o, const tc_model *model, const char *backend, const char *options) {
  bool on_device;
  tc_status st = TC_OK;
  for (int s = 0; s < o->n_sets; s++) {
    o->sets[s] = o->bufs[s];
    for (int i = 0; i < model->n_inputs; i++)
      if (!o->bufs[s][i]) st = TC_ERR_OUT_OF_MEMORY;
    if (st == TC_OK) st = bench_place_inputs(o->bufs[s], model->n_inputs, backend, &on_device);
  }
  if (st == TC_OK) st = bench_runner_init(&o->runner, model, backend, options);
  if (st == TC_OK)
    st = bench_calls_init(&o->calls, &o->runner, (tc_tensor **const *)o->sets, o->n_sets, CEILING_WARMUP,
                          BENCH_GROUP_S);
  return st;
}

static tc_status ceiling_device_copy_open(bench_ceiling_run *run, double bytes, int n_sets, const char *backend,
                                          const char *options) {
  run->what = CEILING_DEVICE_OPS;
  ceiling_op *o = &run->op[run->n_ops++];
  int64_t n = (int64_t)(bytes / sizeof(float));
  o->n_sets = n_sets < 1 ? 1 : n_sets > 8 ? 8 : n_sets;
  for (int s = 0; s < o->n_sets; s++) o->bufs[s][0] = tc_full(1.0 + s, TC_F32, 1, &n);
  return ceiling_op_open(o, &ceiling_copy_model, backend, options);
}

static tc_status ceiling_device_gemms_open(bench_ceiling_run *run, const bench_gemm *g, int n, const char *backend,
                                           const char *options) {
  run->what = CEILING_DEVICE_OPS;
  tc_status st = TC_OK;
  for (int i = 0; i < n && st == TC_OK; i++) {
    ceiling_op *o = &run->op[run->n_ops++];
    int64_t as[3] = {g[i].batch, g[i].m, g[i].k}, bs[3] = {g[i].batch, g[i].k, g[i].n};
    int rank = g[i].batch > 1 ? 3 : 2, skip = g[i].batch > 1 ? 0 : 1;
    o->n_sets = 1;
    o->bufs[0][0] = tc_randn(1, TC_F32, rank, as + skip);
    o->bufs[0][1] = tc_randn(2, TC_F32, rank, bs + skip);
    st = ceiling_op_open(o, &ceiling_matmul_model, backend, options);
  }
  return st;
}

/* Every op once (a group of calls each on a device): the sum of their per-call times. */
static tc_status ceiling_device_sample(bench_ceiling_run *run, double *seconds) {
  tc_status st = TC_OK;
  *seconds = 0;
  for (int i = 0; i < run->n_ops && st == TC_OK; i++) {
    double t = 0;
    st = bench_calls_sample(&run->op[i].calls, &t);
    *seconds += t;
  }
  return st;
}

/* ---------------------------------------------------------------- the ceiling of a model */
tc_status bench_ceiling_open(const tc_model *m, tc_size_class size, tc_tensor *const *inputs, const char *backend,
                             bool on_device, int n_sets, const char *options, bench_ceiling *out,
                             bench_ceiling_run **run) {
  memset(out, 0, sizeof *out);
  *run = NULL;
  double work = m->work ? m->work(size) : 0.0;
  bench_ceiling_run *r = calloc(1, sizeof *r);
  if (!r) {
    out->note = "ceiling: out of memory";
    return TC_ERR_OUT_OF_MEMORY;
  }
  tc_status st;
  if (!strcmp(m->unit, "GB/s")) {
    /* work counts bytes read + written; a copy of half of them moves the same. */
    /* On a device: the CUDA driver's copy where there is a CUDA GPU (the hardware's copy rate;
     * every GPU backend on that machine runs on it), else the backend's own copy kernel. */
    char why[160] = "";
    if (on_device && (r->cuda = bench_cuda_copy_open(work / 2, n_sets, why, sizeof why))) {
      r->what = CEILING_CUDA_COPY;
      out->kind = "cuda-memcpy";
      st = TC_OK;
    } else {
      if (on_device && getenv("TC_BENCH_DEBUG")) fprintf(stderr, "tc bench: no CUDA copy ceiling: %s\n", why);
      out->kind = "backend-copy";
      st = on_device ? ceiling_device_copy_open(r, work / 2, n_sets, backend, options)
                     : ceiling_host_copy_open(r, work / 2, n_sets, &out->kind);
    }
  } else {
    bench_gemm g[CEILING_MAX_GEMMS];
    int n = ceiling_gemms(m, inputs, g);
    if (n == 0) {
      out->note = "no ceiling for this model";
      free(r);
      return TC_OK;
    }
    out->kind = on_device ? "backend-matmul" : "sgemm";
    st = on_device ? ceiling_device_gemms_open(r, g, n, backend, options) : ceiling_host_gemms_open(r, g, n, &out->note);
  }
  if (st != TC_OK) {
    out->kind = NULL;
    if (!out->note) out->note = st == TC_ERR_OUT_OF_MEMORY ? "ceiling: out of memory" : "ceiling measurement failed";
    bench_ceiling_close(r);
    return st;
  }
  *run = r;
  return TC_OK;
}

tc_status bench_ceiling_sample(void *ctx, double *seconds) {
  bench_ceiling_run *run = ctx;
  switch (run->what) {
  case CEILING_HOST_COPY: *seconds = ceiling_host_copy_sample(run); return TC_OK;
  case CEILING_HOST_GEMMS: *seconds = ceiling_host_gemms_sample(run); return TC_OK;
  case CEILING_CUDA_COPY: return bench_cuda_copy_sample(run->cuda, seconds);
  default: return ceiling_device_sample(run, seconds);
  }
}

void bench_ceiling_close(bench_ceiling_run *run) {
  if (!run) return;
  bench_cuda_copy_close(run->cuda);
  free(run->src);
  free(run->dst);
  for (int i = 0; i < run->n_gemms; i++) {
    free(run->gemm[i].a);
    free(run->gemm[i].b);
    free(run->gemm[i].c);
  }
  for (int i = 0; i < run->n_ops; i++) {
    bench_runner_free(&run->op[i].runner);
    for (int s = 0; s < 8; s++) {
      tc_release(run->op[i].bufs[s][0]);
      tc_release(run->op[i].bufs[s][1]);
    }
  }
  free(run);
}
