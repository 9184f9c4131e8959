/* placeholder until the bench driver lands */
typedef int tc_bench_placeholder_;
