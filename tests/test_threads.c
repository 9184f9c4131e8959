/* test_threads.c — one compiled function called from four threads at once (threads_scenario.c),
 * on debug-eager and inductor-cpu. scripts/test.sh also runs the scenario under
 * ThreadSanitizer (tc_threads_check), where a data race fails the run. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "test_support.h"
#include "threads_scenario.h"

static void threads_setup(void) {
  setenv("TC_CACHE_DIR", "off", 1);
  unsetenv("TC_OPTIONS");
}

TestSuite(threads, .init = threads_setup, .timeout = 240);

static void run(const char *backend, const char *options) {
  if (!test_backend_available(backend)) cr_skip("%s is unavailable here", backend);
  char err[512];
  cr_assert(threads_one_function(backend, options, err, sizeof err), "%s: %s", backend, err);
}

Test(threads, four_threads_one_compiled_function_debug_eager) {
  run("debug-eager", NULL);
}

Test(threads, four_threads_one_compiled_function_inductor_cpu) {
  /* One OpenMP thread per kernel: the calls themselves are what race here (and libgomp is not
   * built for ThreadSanitizer). */
  run("inductor-cpu", "cpu.threads=1");
}
