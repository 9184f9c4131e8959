/* row_kernel_host.c — times one generated inductor-cpu row kernel (its unit linked in, built by
 * row_kernel_host.sh in variants) against a streaming copy of the same bytes, on N threads, with
 * input sets rotated so nothing is served from the caches. Prints "kernel MS copy MS ratio R"
 * (medians). A probe for issue 15's "why is ln_gelu 0.55-0.62 of the copy on the GPU machine's
 * Xeon": each variant leaves one thing out (streaming stores, prefetch, 512-bit vectors). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_host.h"

void KERNEL_LAUNCH(void **bufs, const int64_t *syms);
void tc_module_init(int threads);

#define SETS 4
#define RUNS 41
int main(int argc, char **argv) {
  const int64_t m = atoll(argv[1]), n = atoll(argv[2]);
  const int threads = atoi(argv[3]), with_params = atoi(argv[4]); /* gamma and beta (ln_gelu) */
  float *in[SETS], *out[SETS], *g = aligned_alloc(64, n * 4), *b = aligned_alloc(64, n * 4);
  for (int64_t j = 0; j < n; j++) g[j] = 1.0f + 0.001f * (float)j, b[j] = 0.01f * (float)(j % 7);
  for (int s = 0; s < SETS; s++) {
    in[s] = aligned_alloc(64, (size_t)(m * n * 4));
    out[s] = aligned_alloc(64, (size_t)(m * n * 4));
    for (int64_t i = 0; i < m * n; i++) in[s][i] = (float)((i * 2654435761u) % 1000) * 0.002f - 1.0f;
    memset(out[s], 0, (size_t)(m * n * 4));
  }
  tc_module_init(threads);
  double tk[RUNS], tcopy[RUNS];
  for (int r = -3; r < RUNS; r++) {
    const int s = (r + 3) % SETS;
    void *bufs4[4] = {in[s], g, b, out[s]}, *bufs2[2] = {in[s], out[s]};
    double t0 = now();
    KERNEL_LAUNCH(with_params ? bufs4 : bufs2, NULL);
    double t1 = now();
    const int s2 = (r + 5) % SETS;
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int64_t lo = m * n * t / nt, hi = m * n * (t + 1) / nt;
      memcpy(out[s2] + lo, in[s2] + lo, (size_t)(hi - lo) * 4);
    }
    double t2 = now();
    if (r >= 0) tk[r] = t1 - t0, tcopy[r] = t2 - t1;
  }
  qsort(tk, RUNS, sizeof tk[0], cmp);
  qsort(tcopy, RUNS, sizeof tcopy[0], cmp);
  printf("kernel %.3f ms copy %.3f ms ratio %.3f\n", tk[RUNS / 2] * 1e3, tcopy[RUNS / 2] * 1e3, tcopy[RUNS / 2] / tk[RUNS / 2]);
  return 0;
}
