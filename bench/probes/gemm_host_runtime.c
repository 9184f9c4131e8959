/* gemm_host_runtime.c — one variant of the generated GEMM's runtime for gemm_host.sh: the
 * plugin's runtime/gemm_runtime.c (edited as the variant says, pasted in by #include, named
 * probe_gemm_runtime), and its micro-kernel alone, one thread, on a micro-panel of A and panels
 * of B that stay in L1 (one panel, short K) or stream from L2 (many panels), as flop/s:
 * gemm_host.c compares it with the one-thread peak. */
#include <time.h>

#include RUNTIME

double probe_ukr(int64_t kc, int64_t panels, int64_t reps);
double probe_ukr(int64_t kc, int64_t panels, int64_t reps) {
  float *pa = aligned_alloc(64, (size_t)(kc * TC_GEMM_MR * 4 + 64)), *pb = aligned_alloc(64, (size_t)(panels * kc * TC_GEMM_NR * 4 + 64));
  float c[TC_GEMM_MR * TC_GEMM_NR] __attribute__((aligned(64)));
  for (int64_t i = 0; i < kc * TC_GEMM_MR; i++) pa[i] = 1e-3f * (float)(i % 97);
  for (int64_t i = 0; i < panels * kc * TC_GEMM_NR; i++) pb[i] = 1e-3f * (float)(i % 89);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int64_t r = 0; r < reps; r++)
    for (int64_t p = 0; p < panels; p++) {
      tc_gemm_ukr_f32(TC_GEMM_MR, 0, kc, pa, 0, pb + p * kc * TC_GEMM_NR, TC_GEMM_NR, r ? c : NULL, TC_GEMM_NR, c, TC_GEMM_NR);
      __asm__ volatile("" : : "r"(c) : "memory"); /* the whole tile is wanted */
    }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double t = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  free(pa), free(pb);
  return 2.0 * TC_GEMM_MR * TC_GEMM_NR * (double)kc * (double)(panels * reps) / t;
}
