/* bench_driver.h — the pieces of `tc bench`, private to bench/: its configuration, one result
 * per model, the child processes that measure first calls in a fresh process, and the
 * report. */
#ifndef TC_BENCH_DRIVER_H
#define TC_BENCH_DRIVER_H

#include "bench.h"

typedef struct bench_config {
  const char *backend; /* resolved name (never "auto") */
  tc_size_class size;
  int threads;
  const char *options; /* plugin options: "cpu.threads=N" */
  int32_t dynamic;     /* tc_dynamic of every compile (--dynamic) */
  int32_t mode;        /* tc_mode of every compile (--mode) */
  bool json, eager;
  double eager_limit_s;      /* the eager child is stopped after this long */
  bench_timing timing;       /* compiled calls */
  bench_timing eager_timing; /* eager calls: few, they are slow on the reference interpreter */
  const char *tmp_root;      /* this run's temp folder (caches of the child processes) */
} bench_config;

/* A warm start is one first call in a fresh process: a single sample that a burst on the
 * machine can double, so the figure is the median of this many. */
#define BENCH_WARM_STARTS 3

typedef struct bench_first_call {
  bool ok;
  double seconds;      /* first call (capture + compile + run), measured in the child */
  double process_s;    /* the child process, start to exit, seen from the parent */
  double compile_s;    /* tc_compile_stats.compile_seconds */
  int kernels, graphs, compiles, entries;
  double total_s;      /* dyn_attn: all 40 calls */
  double median_s;     /* eager: median call */
  int calls;           /* eager: calls timed */
  bool timed_out;      /* stopped at the time limit */
  char error[256];
} bench_first_call;

typedef struct bench_result {
  const char *name;
  const tc_model *model; /* NULL for dyn_attn */
  const char *unit;
  char error[512]; /* empty when it ran */
  bench_ceiling ceiling;
  bench_first_call eager;     /* a child process too: on the reference interpreter it can take minutes */
  bench_first_call cold, warm; /* fresh processes: empty cache, then the cache the first left
                                * (warm: the median of BENCH_WARM_STARTS processes) */
  double warm_s[BENCH_WARM_STARTS]; /* each warm start's first call */
  int n_warm;
  double first_call_s;         /* in this process */
  double median_s;             /* median model sample: seconds per call */
  int n_timed, n_sets;         /* calls timed; rotated input sets */
  int rounds, group;           /* interleaved rounds (model samples); calls per sample (1 on the host) */
  double figure, ratio;        /* ratio: median of per-round ratios (bench_rounds.c) */
  double ratio_q1, ratio_q3, ratio_of_medians;
  double sum, abs_sum;
  int kernels, graphs;
  /* GEMM-heavy models on the host: the cores' peak fp32 FMA rate (sampled between the calls)
   * and the median over rounds of the GEMMs' time at that rate / the call's time (for mlp: the
   * figure / the peak), with its quartiles */
  double peak_tflops, peak_ratio, peak_q1, peak_q3;
  const char *peak_isa;
} bench_result;

/* Measures one bundled model into r. */
void bench_model_measure(const bench_config *cfg, const tc_model *m, bench_result *r);
/* dyn_attn: 40 calls of attn_block with T = 64 + 16·((37·i) mod 61), cold and warm cache. */
void bench_dyn_attn_measure(const bench_config *cfg, bench_result *r);

/* The warm start: BENCH_WARM_STARTS children on the warm cache_dir; r->warm is the median run
 * (or the first that failed), r->warm_s every run's first call. */
void bench_warm_starts(const bench_config *cfg, const char *kind, const char *name, const char *cache_dir,
                       bench_result *r);
/* Runs this executable again as `tc bench --child KIND --models NAME ...` with TC_CACHE_DIR set
 * to cache_dir, and reads back its one-line answer. KIND: "first-call" (compile and call once),
 * "eager" (timed eager calls), "dyn" (dyn_attn). A child still running after limit_s seconds
 * (0: no limit) is killed and reported as timed out. */
void bench_child_spawn(const bench_config *cfg, const char *kind, const char *name, const char *cache_dir,
                       double limit_s, bench_first_call *out);
/* The child's side: measures and prints the answer line; returns the exit code. */
int bench_child_main(const char *kind, const char *name, const char *backend, const bench_config *cfg);
/* The dyn_attn child: the 40 calls, timed; fills out. */
void bench_dyn_attn_child(const char *backend, tc_size_class size, const char *options, bench_first_call *out);

/* The report: a table on stdout, or JSON. */
void bench_report(const bench_config *cfg, const bench_result *rs, int n);

#endif
