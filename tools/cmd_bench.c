/* cmd_bench.c — `tc bench`: the benchmark driver lives in bench/ (also a library, so tests and
 * other tools can reuse its pieces). */
#include "bench.h"
#include "tc_cli.h"

int cmd_bench(int argc, char **argv) { return bench_main(argc, argv); }
