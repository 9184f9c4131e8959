/* core_speed.c — each core's fp32 FMA rate, one thread pinned to it in turn (the bench's own peak
 * loop, bench/bench_peak.c), over several passes so a core busy in one pass shows in the spread.
 * On the GPU machine's host (a VM whose cores are shared) the same kernels ran 1.3x faster on
 * some cores than on others; tc and PyTorch compared there should run on the same cores, and
 * those should be quiet ones. Prints "core C: median GF/s (min-max)" per core, then "fastest: a,b"
 * (the N fastest by median, N = argv[1], default 2) for taskset -c.
 * Build: cc -O2 -fopenmp -Ibench -Icore/include -Iplugin-api -Iexamples/include bench/probes/core_speed.c
 *        bench/probes/probe_bench_stubs.c bench/bench_peak.c -o core_speed */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "probe_host.h"

enum { PASSES = 5, SAMPLES = 3, MAX_CPUS = 1024 };

int main(int argc, char **argv) {
  int want = argc > 1 ? atoi(argv[1]) : 2;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return perror("sched_getaffinity"), 1;
  int cpus[MAX_CPUS], n = 0;
  for (int c = 0; c < CPU_SETSIZE && n < MAX_CPUS; c++)
    if (CPU_ISSET(c, &allowed)) cpus[n++] = c;
  static double rate[MAX_CPUS][PASSES];
  bench_peak p;
  for (int pass = 0; pass < PASSES; pass++)
    for (int i = 0; i < n; i++) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus[i], &one);
      sched_setaffinity(0, sizeof one, &one);
      if (pass == 0 && i == 0) bench_peak_open(&p, 1); /* warms the vector units */
      double best = 1e30, s;
      for (int k = 0; k < SAMPLES; k++)
        if (bench_peak_sample(&p, &s) == TC_OK && s < best) best = s;
      rate[i][pass] = p.flops / best * 1e-9;
    }
  sched_setaffinity(0, sizeof allowed, &allowed);
  double med[MAX_CPUS];
  for (int i = 0; i < n; i++) {
    qsort(rate[i], PASSES, sizeof rate[i][0], cmp);
    med[i] = rate[i][PASSES / 2];
    printf("core %d: %.1f GF/s (%.1f-%.1f)\n", cpus[i], med[i], rate[i][0], rate[i][PASSES - 1]);
  }
  printf("fastest:");
  for (int k = 0; k < want && k < n; k++) {
    int top = -1;
    for (int i = 0; i < n; i++)
      if (med[i] >= 0 && (top < 0 || med[i] > med[top])) top = i;
    printf("%s%d", k ? "," : " ", cpus[top]);
    med[top] = -1;
  }
  printf("\n");
  return 0;
}
