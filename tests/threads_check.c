/* threads_check.c — the threads scenario as a plain program (tc_threads_check), for the
 * ThreadSanitizer build of scripts/test.sh: Criterion cannot start under TSan. Prints one line
 * per backend and "N passed, N failed"; exits 1 on a failure (TSan's own reports fail the run
 * through its exit code). */
#include <stdio.h>
#include <stdlib.h>

#include "test_support.h"
#include "threads_scenario.h"

int main(void) {
  setenv("TC_CACHE_DIR", "off", 1);
  const char *backends[][2] = {{"debug-eager", NULL}, {"inductor-cpu", "cpu.threads=1"}};
  int passed = 0, failed = 0;
  for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
    if (!test_backend_available(backends[i][0])) {
      printf("skip %s: unavailable\n", backends[i][0]);
      continue;
    }
    char err[512];
    bool ok = threads_one_function(backends[i][0], backends[i][1], err, sizeof err);
    printf("%s %s%s%s\n", ok ? "ok" : "FAIL", backends[i][0], ok ? "" : ": ", ok ? "" : err);
    ok ? passed++ : failed++;
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
