/* bench_peak.c — the host cores' peak fp32 FMA rate: the ceiling of GEMM-heavy workloads on the
 * CPU that is the machine's and not a library's (a BLAS, even the one tc calls, is a figure, not
 * a ceiling: BENCHMARKS.md).
 *
 * Each thread runs a loop of fused multiply-adds on the widest vectors the CPU has (AVX-512,
 * else AVX2 + FMA, else scalar fmaf), on ACCS independent accumulators kept in registers: more
 * than the FMA latency times the FMA units, so the loop is bound by the units' throughput, not by
 * a dependency chain; nothing touches memory. It runs on the bench's thread count (what the
 * model's kernels get), sampled between the model's calls like the other ceilings
 * (bench_rounds.c), so a machine busy with other work lowers both sides alike. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PEAK_X86 1
#endif

#include "bench.h"

enum { ACCS = 12 };
static const long PEAK_ITERS = 1000000; /* about 3-10 ms per sample */

#ifdef PEAK_X86
__attribute__((target("avx512f"))) static float loop_avx512(long iters) {
  __m512 acc[ACCS];
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
  for (int i = 0; i < ACCS; i++) acc[i] = _mm512_set1_ps((float)i);
  for (long it = 0; it < iters; it++)
#pragma GCC unroll 12 /* the accumulators must live in registers */
    for (int i = 0; i < ACCS; i++) acc[i] = _mm512_fmadd_ps(acc[i], m, c);
  __m512 s = acc[0];
  for (int i = 1; i < ACCS; i++) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float loop_avx2(long iters) {
  __m256 acc[ACCS];
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
  for (int i = 0; i < ACCS; i++) acc[i] = _mm256_set1_ps((float)i);
  for (long it = 0; it < iters; it++)
#pragma GCC unroll 12
    for (int i = 0; i < ACCS; i++) acc[i] = _mm256_fmadd_ps(acc[i], m, c);
  __m256 s = acc[0];
  for (int i = 1; i < ACCS; i++) s = _mm256_add_ps(s, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}
#endif

static float loop_scalar(long iters) {
  float acc[ACCS];
  for (int i = 0; i < ACCS; i++) acc[i] = (float)i;
  for (long it = 0; it < iters; it++)
#pragma GCC unroll 12
    for (int i = 0; i < ACCS; i++) acc[i] = fmaf(acc[i], 0.999999f, 1e-6f);
  float s = 0;
  for (int i = 0; i < ACCS; i++) s += acc[i];
  return s;
}

/* The widest FMA this CPU runs: its loop and lanes per vector. */
static float (*peak_loop(int *lanes, const char **isa))(long) {
#ifdef PEAK_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return *lanes = 16, *isa = "avx512", loop_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return *lanes = 8, *isa = "avx2+fma", loop_avx2;
#endif
  return *lanes = 1, *isa = "scalar fmaf", loop_scalar;
}

void bench_peak_open(bench_peak *p, int threads) {
#ifdef _OPENMP
  p->threads = threads > 0 ? threads : bench_default_threads();
#else
  p->threads = 1;
  (void)threads;
#endif
  p->loop = peak_loop(&p->lanes, &p->isa);
  p->flops = 2.0 * ACCS * p->lanes * (double)PEAK_ITERS * p->threads;
  double warm;
  bench_peak_sample(p, &warm); /* the team up, the cores at their vector clock */
}

tc_status bench_peak_sample(void *peak, double *seconds) {
  const bench_peak *p = peak;
  volatile float sink = 0;
  double t0 = bench_now();
#ifdef _OPENMP
#pragma omp parallel num_threads(p->threads)
#endif
  {
    float s = p->loop(PEAK_ITERS);
#ifdef _OPENMP
#pragma omp atomic
#endif
    sink += s;
  }
  *seconds = bench_now() - t0;
  (void)sink;
  return TC_OK;
}
