/* gemm_host.c — times the two kernels of mlp's generated inductor-cpu unit (cpu.blas=generated,
 * CPU shapes: x·W1 + b1 then GELU, 1024x2048x512; then ·W2 + b2 + x, 1024x512x2048) in variants
 * built by gemm_host.sh as shared objects, all loaded into this one process and run in turn,
 * round after round, between samples of the cores' peak FMA rate on the same threads (the
 * loop of bench_peak.c). The GPU machine's host swings by 2x from minute to minute, so only
 * variants timed side by side, each against the peak of its own round, compare. Prints per
 * variant the medians of each kernel's time and of mlp's fraction of the peak (q1-q3). A probe
 * for issue 15's "mlp at 0.8 of the peak on the GPU machine's Xeon".
 * Usage: gemm_host THREADS ROUNDS NAME=unit.so ... */
#define _GNU_SOURCE /* sched_getcpu */
#include <dlfcn.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "probe_host.h"

void k_matmul_add_gelu_launch(void **bufs, const int64_t *syms);
void k_matmul_add_launch(void **bufs, const int64_t *syms);
void tc_module_init(int threads);

/* The cores' peak FMA rate on `threads` threads, flop/s: one sample of the bench's own sampler
 * (bench/bench_peak.c, linked in), whose loop uses the widest vectors the CPU has. */
static double peak(int threads) {
  static bench_peak p[64];
  static int open[64];
  const int t = threads < 64 ? threads : 63;
  if (!open[t]) bench_peak_open(&p[t], t), open[t] = 1;
  double s;
  bench_peak_sample(&p[t], &s);
  return p[t].flops / s;
}

typedef void (*launch_fn)(void **bufs, const int64_t *syms);
typedef struct variant {
  const char *name;
  launch_fn up, down;
  void (*init)(int);
  double *t_up, *t_down, *ratio;
  double checksum;
  double (*ukr)(int64_t kc, int64_t panels, int64_t reps); /* gemm_host_runtime.c */
} variant;

#define SETS 4 /* input sets rotated, as the bench does */
int main(int argc, char **argv) {
  if (argc < 4) return fprintf(stderr, "usage: gemm_host THREADS ROUNDS NAME=unit.so ...\n"), 2;
  const int threads = atoi(argv[1]), rounds = atoi(argv[2]), nv = argc - 3;
  const int64_t M = 1024, D = 512, H = 2048;
  variant *v = calloc((size_t)nv, sizeof *v);
  for (int i = 0; i < nv; i++) {
    char *eq = strchr(argv[3 + i], '=');
    if (!eq) return fprintf(stderr, "%s: want NAME=unit.so\n", argv[3 + i]), 2;
    *eq = 0;
    v[i].name = argv[3 + i];
    void *h = dlopen(eq + 1, RTLD_NOW | RTLD_LOCAL);
    if (!h) return fprintf(stderr, "%s\n", dlerror()), 1;
    v[i].up = (launch_fn)dlsym(h, "k_matmul_add_gelu_launch");
    v[i].down = (launch_fn)dlsym(h, "k_matmul_add_launch");
    v[i].init = (void (*)(int))dlsym(h, "tc_module_init");
    int (*attach)(void) = (int (*)(void))dlsym(h, "probe_attach");
    if (!v[i].up || !v[i].down || !v[i].init || !attach) return fprintf(stderr, "%s: not mlp's unit\n", eq + 1), 1;
    if (!attach()) return fprintf(stderr, "%s: its runtime is for another width or workspace\n", eq + 1), 1;
    v[i].init(threads);
    v[i].ukr = (double (*)(int64_t, int64_t, int64_t))dlsym(h, "probe_ukr");
    v[i].t_up = calloc((size_t)rounds, sizeof(double));
    v[i].t_down = calloc((size_t)rounds, sizeof(double));
    v[i].ratio = calloc((size_t)rounds, sizeof(double));
  }
  float *x[SETS], *h[SETS], *y[SETS];
  float *w1 = randn(D * H, 0.044f, 1), *b1 = randn(H, 0.1f, 2), *w2 = randn(H * D, 0.022f, 3), *b2 = randn(D, 0.1f, 4);
  for (int s = 0; s < SETS; s++) x[s] = randn(M * D, 1.0f, 10 + s), h[s] = randn(M * H, 0, 20), y[s] = randn(M * D, 0, 30);
#pragma omp parallel num_threads(threads)
  {
#pragma omp critical
    printf("thread %d on cpu %d\n", omp_get_thread_num(), sched_getcpu());
  }
  for (int i = 0; i < nv; i++) { /* what each computes, on set 0 */
    void *bufs1[4] = {x[0], w1, h[0], b1}, *bufs2[5] = {h[0], w2, y[0], b2, x[0]};
    v[i].up(bufs1, NULL);
    v[i].down(bufs2, NULL);
    for (int64_t e = 0; e < M * D; e++) v[i].checksum += y[0][e];
  }
  const double f = 2.0 * M * D * H; /* flops of each GEMM */
  double *pk = calloc((size_t)rounds, sizeof(double));
  double p0 = peak(threads);
  for (int r = -2; r < rounds; r++) {
    for (int j = 0; j < nv; j++) {
      variant *w = &v[(j + (r > 0 ? r : 0)) % nv]; /* each round starts at another variant */
      const int s = (r + 2 + j) % SETS;
      void *bufs1[4] = {x[s], w1, h[s], b1}, *bufs2[5] = {h[s], w2, y[s], b2, x[s]};
      double a = now();
      w->up(bufs1, NULL);
      double b = now();
      w->down(bufs2, NULL);
      double c = now();
      const double p1 = peak(threads);
      if (r >= 0) {
        w->t_up[r] = b - a, w->t_down[r] = c - b;
        w->ratio[r] = 2 * f / (0.5 * (p0 + p1)) / (c - a); /* the GEMMs at the peak of the samples around */
        pk[r] = p1;
      }
      p0 = p1;
    }
  }
  printf("peak %.1f GF/s median (%d threads, %d rounds)\n", median(pk, rounds, NULL, NULL) / 1e9, threads, rounds);
  for (int i = 0; i < nv; i++) {
    double q1, q3;
    const double tu = median(v[i].t_up, rounds, NULL, NULL), td = median(v[i].t_down, rounds, NULL, NULL);
    const double ra = median(v[i].ratio, rounds, &q1, &q3);
    printf("%-16s up+gelu %7.3f ms  down+add %7.3f ms  of peak %.3f (q1 %.3f q3 %.3f)  checksum %.6g\n", v[i].name, tu * 1e3,
           td * 1e3, ra, q1, q3, v[i].checksum);
  }
  /* The micro-kernel alone on one thread: B in L1 (one panel of K 128), B from L2 (16 panels of
   * K 256: 512 KB), against the one-thread peak sampled around each. */
  for (int i = 0; i < nv; i++) {
    if (!v[i].ukr) continue;
    double l1[5], l2[5];
    for (int r = 0; r < 5; r++) {
      const double a = peak(1), x1 = v[i].ukr(128, 1, 20000), x2 = v[i].ukr(256, 16, 400), b = peak(1);
      l1[r] = x1 / (0.5 * (a + b)), l2[r] = x2 / (0.5 * (a + b));
    }
    printf("%-16s micro-kernel alone, 1 thread: B in L1 %.3f of peak, B from L2 %.3f\n", v[i].name, median(l1, 5, NULL, NULL),
           median(l2, 5, NULL, NULL));
  }
  return 0;
}
