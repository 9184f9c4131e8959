/* probe_bench_stubs.c — what bench/bench_peak.c needs from the bench, for the probes that link
 * it alone (core_speed.c, gemm_host.c): the clock, and a thread count no probe relies on (each
 * passes its own). The bench's bench_clock.c would bring the kit's medians with it. */
#include "bench.h"
#include "probe_host.h"

double bench_now(void) { return now(); }
int bench_default_threads(void) { return 1; }
