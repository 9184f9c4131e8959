/* blas_host.c — the candidate BLAS libraries of issue 15 (OpenBLAS, BLIS, oneDNN), each dlopen'd
 * into this one process, timed on the sgemms of mlp and attn_block at CPU shapes (row-major
 * C = A·B, beta 0) on THREADS threads, round after round, each round also sampling the cores'
 * peak FMA rate on the same threads (bench/bench_peak.c's loop). The hosts' speed moves from
 * minute to minute, so libraries compare only side by side and each against the peak of its own
 * round. Prints per library and shape the median time, TF/s and fraction of the peak (q1-q3),
 * then the sum over mlp's two GEMMs and over attn_block's four linear layers.
 * KIND cblas-rows is tc's own way with OpenBLAS (codegen_matmul.c): the rows split over this
 * process's OpenMP threads, the library single-threaded inside each.
 * Usage: blas_host THREADS ROUNDS NAME=KIND:PATH ...  (KIND cblas, cblas-rows or dnnl)
 * Session 17, the AVX2 Zen 3 VM, 2 threads, fractions of the peak over mlp's two GEMMs / attn_block's
 * four (two runs an hour apart, the VM slower in the second): OpenBLAS 0.3.21 (core Zen) threaded
 * by itself 0.66 / 0.87 and 0.59 / 0.74 (its own split of x.W1, 1024x512x2048, runs at 0.49-0.53),
 * split by rows as tc calls it 0.73 / 0.74, BLIS 0.9.0 (config zen3) 0.76 / 0.80 and 0.63 / 0.75,
 * oneDNN 2.6.3 0.84 / 0.88 and 0.80 / 0.79; the generated GEMM, mlp with its epilogues
 * (gemm_host.sh, beside the first run), 0.86. */
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "probe_host.h"

typedef void (*cblas_sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                               const float *b, int ldb, float beta, float *c, int ldc);
typedef int (*dnnl_sgemm_fn)(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                             int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

typedef struct shape {
  const char *name;
  int m, k, n;
  int model; /* 0 mlp, 1 attn_block */
} shape;
static const shape shapes[] = {
    {"mlp x.W1", 1024, 512, 2048, 0},   {"mlp h.W2", 1024, 2048, 512, 0},  {"attn qkv", 512, 768, 2304, 1},
    {"attn proj", 512, 768, 768, 1},    {"attn W1", 512, 768, 3072, 1},    {"attn W2", 512, 3072, 768, 1},
};
enum { NS = sizeof shapes / sizeof shapes[0], SETS = 4 };

typedef struct lib {
  const char *name;
  cblas_sgemm_fn cblas;
  dnnl_sgemm_fn dnnl;
  int rows;                      /* cblas-rows */
  void (*set_threads)(int);      /* OpenBLAS's, set before each call: two entries may share it */
  int threads;
  double *t[NS], *frac[NS], *model_t[2], *model_frac[2];
  double checksum;
} lib;

static void run(const lib *l, const shape *s, const float *a, const float *b, float *c) {
  if (l->set_threads) l->set_threads(l->rows ? 1 : l->threads);
  if (l->rows) {
#pragma omp parallel num_threads(l->threads)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int lo = s->m * t / nt, hi = s->m * (t + 1) / nt;
      l->cblas(101, 111, 111, hi - lo, s->n, s->k, 1.0f, a + (int64_t)lo * s->k, s->k, b, s->n, 0.0f,
               c + (int64_t)lo * s->n, s->n);
    }
  } else if (l->cblas) l->cblas(101 /* row major */, 111, 111, s->m, s->n, s->k, 1.0f, a, s->k, b, s->n, 0.0f, c, s->n);
  else l->dnnl('N', 'N', s->m, s->n, s->k, 1.0f, a, s->k, b, s->n, 0.0f, c, s->n);
}

int main(int argc, char **argv) {
  if (argc < 4) return fprintf(stderr, "usage: blas_host THREADS ROUNDS NAME=KIND:PATH ...\n"), 2;
  const int threads = atoi(argv[1]), rounds = atoi(argv[2]), nl = argc - 3;
  omp_set_num_threads(threads);
  lib *libs = calloc((size_t)nl, sizeof *libs);
  for (int i = 0; i < nl; i++) {
    char *eq = strchr(argv[3 + i], '='), *colon = eq ? strchr(eq, ':') : NULL;
    if (!colon) return fprintf(stderr, "%s: want NAME=KIND:PATH\n", argv[3 + i]), 2;
    *eq = *colon = 0;
    libs[i].name = argv[3 + i];
    void *h = dlopen(colon + 1, RTLD_NOW | RTLD_LOCAL);
    if (!h) return fprintf(stderr, "%s: %s\n", libs[i].name, dlerror()), 1;
    if (!strcmp(eq + 1, "dnnl")) libs[i].dnnl = (dnnl_sgemm_fn)dlsym(h, "dnnl_sgemm");
    else libs[i].cblas = (cblas_sgemm_fn)dlsym(h, "cblas_sgemm");
    if (!libs[i].cblas && !libs[i].dnnl) return fprintf(stderr, "%s: no sgemm in %s\n", libs[i].name, colon + 1), 1;
    /* each library's own thread count; oneDNN takes OpenMP's, set above */
    void (*ob)(int) = (void (*)(int))dlsym(h, "openblas_set_num_threads");
    void (*bl)(int64_t) = (void (*)(int64_t))dlsym(h, "bli_thread_set_num_threads");
    const char *(*arch)(int) = (const char *(*)(int))dlsym(h, "bli_arch_string");
    int (*arch_id)(void) = (int (*)(void))dlsym(h, "bli_arch_query_id");
    char *(*core)(void) = (char *(*)(void))dlsym(h, "openblas_get_corename");
    libs[i].rows = !strcmp(eq + 1, "cblas-rows"), libs[i].set_threads = ob, libs[i].threads = threads;
    if (bl) bl(threads);
    printf("%s: %s%s%s\n", libs[i].name, colon + 1, arch && arch_id ? ", BLIS config " : core ? ", OpenBLAS core " : "",
           arch && arch_id ? arch(arch_id()) : core ? core() : "");
    for (int s = 0; s < NS; s++) libs[i].t[s] = calloc((size_t)rounds, sizeof(double)), libs[i].frac[s] = calloc((size_t)rounds, sizeof(double));
    for (int m = 0; m < 2; m++) libs[i].model_t[m] = calloc((size_t)rounds, sizeof(double)), libs[i].model_frac[m] = calloc((size_t)rounds, sizeof(double));
  }
  float *a[NS][SETS], *b[NS], *c[NS][SETS];
  for (int s = 0; s < NS; s++) {
    b[s] = randn((int64_t)shapes[s].k * shapes[s].n, 0.1f, 7u + (unsigned)s);
    for (int q = 0; q < SETS; q++) {
      a[s][q] = randn((int64_t)shapes[s].m * shapes[s].k, 0.1f, 100u * (unsigned)s + (unsigned)q);
      c[s][q] = aligned_alloc(64, (size_t)shapes[s].m * (size_t)shapes[s].n * 4);
    }
  }
  bench_peak pk;
  bench_peak_open(&pk, threads);
  printf("peak fp32 FMA loop: %s, %d threads\n", pk.isa, threads);
  for (int i = 0; i < nl; i++) /* warm-up: thread pools, packing buffers, page faults */
    for (int s = 0; s < NS; s++)
      for (int q = 0; q < SETS; q++) run(&libs[i], &shapes[s], a[s][q], b[s], c[s][q]);
  for (int r = 0; r < rounds; r++) {
    double ps;
    bench_peak_sample(&pk, &ps);
    const double peak = pk.flops / ps;
    for (int i = 0; i < nl; i++) {
      double mt[2] = {0, 0}, mf[2] = {0, 0};
      for (int s = 0; s < NS; s++) {
        const int q = (r + s) % SETS;
        const double t0 = now();
        run(&libs[i], &shapes[s], a[s][q], b[s], c[s][q]);
        const double t = now() - t0, fl = 2.0 * shapes[s].m * shapes[s].k * shapes[s].n;
        libs[i].t[s][r] = t;
        libs[i].frac[s][r] = fl / t / peak;
        mt[shapes[s].model] += t, mf[shapes[s].model] += fl;
        if (r == 0) libs[i].checksum += c[s][q][7] + c[s][q][(int64_t)shapes[s].m * shapes[s].n - 1];
      }
      for (int m = 0; m < 2; m++) libs[i].model_t[m][r] = mt[m], libs[i].model_frac[m][r] = mf[m] / mt[m] / peak;
    }
  }
  printf("%-10s %-10s %9s %7s %7s %12s\n", "library", "gemm", "ms", "TF/s", "peak", "peak q1-q3");
  for (int i = 0; i < nl; i++) {
    for (int s = 0; s <= NS + 1; s++) {
      const char *nm = s < NS ? shapes[s].name : s == NS ? "mlp (2)" : "attn (4)";
      double *tv = s < NS ? libs[i].t[s] : libs[i].model_t[s - NS], *fv = s < NS ? libs[i].frac[s] : libs[i].model_frac[s - NS];
      double fl = 0;
      for (int x = 0; x < NS; x++)
        if (s < NS ? x == s : shapes[x].model == s - NS) fl += 2.0 * shapes[x].m * shapes[x].k * shapes[x].n;
      double q1, q3, fq1, fq3, t = median(tv, rounds, &q1, &q3), f = median(fv, rounds, &fq1, &fq3);
      printf("%-10s %-10s %9.3f %7.3f %7.3f %5.3f-%5.3f\n", libs[i].name, nm, 1e3 * t, fl / t * 1e-12, f, fq1, fq3);
    }
    printf("%-10s checksum %.6g\n", libs[i].name, libs[i].checksum);
  }
  return 0;
}
