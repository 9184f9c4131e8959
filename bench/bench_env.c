/* bench_env.c — the process a measurement runs in: the BLAS's kernels and the thread count
 * the backends use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TC_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "bench.h"

/* OpenBLAS 0.3.21 (Debian's DYNAMIC_ARCH build) takes CPUs it does not know, Sapphire Rapids
 * among them, for a Prescott and runs SSE3 kernels at a fraction of the machine's GEMM rate:
 * the ceiling comes out far too low, and so does every backend that calls OpenBLAS in this
 * process (it is loaded with `tc`, before any plugin could set the hint). The core type is
 * read when the library loads, so the fix is to run again with OPENBLAS_CORETYPE set. */
static void env_fix_blas_core(int argc, char **argv) {
#if defined(TC_HAVE_OPENBLAS) && defined(__x86_64__)
  const char *core = openblas_get_corename();
  if (getenv("OPENBLAS_CORETYPE") || !core || (strcmp(core, "Prescott") && strcmp(core, "Core2"))) return;
  __builtin_cpu_init();
  const char *better = __builtin_cpu_supports("avx512f") ? "SkylakeX" : __builtin_cpu_supports("avx2") ? "Haswell" : NULL;
  if (!better) return;
  fprintf(stderr, "tc %s: OpenBLAS took this CPU for a %s; running again with OPENBLAS_CORETYPE=%s\n", argv[0], core,
          better);
  setenv("OPENBLAS_CORETYPE", better, 1);
  char **again = calloc((size_t)argc + 2, sizeof *again);
  if (!again) return;
  again[0] = "tc";
  for (int i = 0; i < argc; i++) again[i + 1] = argv[i];
  fflush(NULL);
  execv("/proc/self/exe", again);
  free(again); /* exec failed: carry on with the slow kernels */
#else
  (void)argc;
  (void)argv;
#endif
}

/* Appends cpu.threads=N to $TC_OPTIONS: the last setting of a key wins. */
static void env_set_threads(int threads) {
  if (threads <= 0) return;
  const char *old = getenv("TC_OPTIONS");
  char buf[4096];
  snprintf(buf, sizeof buf, "%s%scpu.threads=%d", old ? old : "", old && *old ? "," : "", threads);
  setenv("TC_OPTIONS", buf, 1);
}

void bench_env_prepare(int argc, char **argv, int threads) {
  env_fix_blas_core(argc, argv);
  env_set_threads(threads);
  bench_set_threads(threads);
}

const char *bench_blas_name(void) {
#ifdef TC_HAVE_OPENBLAS
  static char name[160];
  const char *v = OPENBLAS_VERSION; /* " OpenBLAS 0.3.21 " */
  while (*v == ' ') v++;
  int n = (int)strlen(v);
  while (n > 0 && v[n - 1] == ' ') n--;
  snprintf(name, sizeof name, "%.*s, core %s", n, v, openblas_get_corename());
  return name;
#else
  return "none";
#endif
}
