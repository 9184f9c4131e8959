/* bench.h — the benchmark driver behind `tc bench`, and the measuring pieces `tc run` shares:
 * clocks and medians, calling a model eagerly or compiled, waiting for a result, checksums,
 * ceilings (streaming copy, bare GEMM) and the per-model measurement (BENCHMARKS.md, "How to
 * report"). */
#ifndef TC_BENCH_H
#define TC_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "tc/tc.h"
#include "tc_models.h"

/* ---------------------------------------------------------------- clocks (bench_clock.c) */
double bench_now(void); /* monotonic seconds */
/* Median of xs[0..n-1] (sorts xs); NaN when n == 0. */
double bench_median(double *xs, int n);

/* ---------------------------------------------------------------- calls (bench_call.c) */
/* Calls m->fn directly (eager mode) with its natural signature. */
tc_tensor *bench_call_eager(const tc_model *m, tc_tensor *const *inputs);

/* A model ready to call: compiled for a backend, or eager when c is NULL. */
typedef struct bench_runner {
  const tc_model *model;
  tc_compiled *compiled; /* NULL: eager */
} bench_runner;
/* The dynamic option (tc_dynamic) every later bench_runner_init compiles with (default auto);
 * "auto", "on", "off" <-> TC_DYNAMIC_*. */
void bench_set_dynamic(int32_t dynamic);
bool bench_parse_dynamic(const char *s, int32_t *out);
const char *bench_dynamic_name(int32_t dynamic);
/* The same for the mode (tc_mode): "default", "reduce-overhead", "max-autotune",
 * "max-autotune-no-cudagraphs". */
void bench_set_mode(int32_t mode);
/* compile_async for every compile after it (tc run --compile-async) */
void bench_set_compile_async(bool on);
bool bench_parse_mode(const char *s, int32_t *out);
const char *bench_mode_name(int32_t mode);
/* Compiles m for backend (NULL or "eager": no compile); options are plugin options or NULL. */
tc_status bench_runner_init(bench_runner *r, const tc_model *m, const char *backend, const char *options);
void bench_runner_free(bench_runner *r);
/* One call that has finished when it returns (see bench_wait); NULL on error. */
tc_tensor *bench_runner_call(bench_runner *r, tc_tensor *const *inputs);

/* Waits until out's value exists: reads one element back, which a device backend can only
 * answer after the work before it is done. (The public API has no synchronize of its own.) */
tc_status bench_wait(const tc_tensor *out);
/* Sum and sum of |x| of a float tensor, read back with tc_to_host. */
tc_status bench_checksum(const tc_tensor *out, double *sum, double *abs_sum);
/* Moves inputs to backend's own memory when it has memory of its own (a device backend);
 * *on_device tells which. Host backends keep the inputs as they are. */
tc_status bench_place_inputs(tc_tensor **inputs, int n, const char *backend, bool *on_device);
/* Total bytes of the tensors. */
double bench_bytes(tc_tensor *const *inputs, int n);

/* Plugin options giving the thread count ("cpu.threads=N"), or NULL for threads <= 0. */
const char *bench_thread_options(int threads, char *buf, int cap);
/* Sets the thread count of this process's own OpenMP loops and of the BLAS. */
void bench_set_threads(int threads);
/* The thread count OpenMP would use. */
int bench_default_threads(void);

/* How to time calls: `warmup` untimed, then samples until `iters` or until budget_s is spent (at
 * least min_iters). group_s: when the inputs live on a device, each sample is a group of
 * back-to-back calls worth about group_s seconds followed by one wait, divided by its calls (how
 * bench/torch_compare.py times CUDA: a device backend's per-call host<->device round trip is not
 * the kernels' cost); 0, or host inputs: each call is timed alone and waited for. */
typedef struct bench_timing {
  int warmup, iters, min_iters;
  double budget_s;
  double group_s;
} bench_timing;

#define BENCH_GROUP_S 0.020 /* a device sample: about 20 ms of work */
enum { BENCH_MAX_GROUP = 1000 };

/* Calls of one runner, taken a sample at a time: rotating over n_sets input sets, each output
 * released as soon as the next call is made. */
typedef struct bench_calls {
  bench_runner *runner;
  tc_tensor **const *sets;
  int n_sets;
  int next;      /* input set of the next call */
  int group;     /* calls per sample: 1 on the host */
  int64_t timed; /* calls made in samples so far */
} bench_calls;
/* Makes `warmup` untimed calls, then picks the group size: 1 for host inputs or group_s <= 0;
 * on a device, group_s over one timed call (call + wait), within 1..BENCH_MAX_GROUP. */
tc_status bench_calls_init(bench_calls *c, bench_runner *r, tc_tensor **const *sets, int n_sets, int warmup,
                           double group_s);
/* One sample; *seconds: per call. */
tc_status bench_calls_sample(bench_calls *c, double *seconds);
/* True when some input lives in a device's own memory (see bench_place_inputs). */
bool bench_inputs_on_device(tc_tensor *const *inputs, int n);

/* Times calls of r as t says (groups on a device when t->group_s > 0). *median: seconds per
 * call; *n_timed: calls timed. */
tc_status bench_time_calls(bench_runner *r, tc_tensor **const *sets, int n_sets, const bench_timing *t,
                           double *median, int *n_timed);

/* ---------------------------------------------------------------- interleaved rounds (bench_rounds.c) */
/* Something to time: one sample, in seconds. */
typedef struct bench_sampler {
  tc_status (*sample)(void *ctx, double *seconds);
  void *ctx;
} bench_sampler;

/* A model timed against its ceiling in one interleaved window. */
typedef struct bench_rounds {
  int rounds;               /* model samples */
  double model_s;           /* median model sample */
  double ceiling_s;         /* median ceiling sample (rounds + 1 of them) */
  double ratio;             /* median over rounds of ceiling / model time (see bench_rounds.c) */
  double ratio_q1, ratio_q3; /* quartiles of the per-round ratios */
  double ratio_of_medians;  /* ceiling_s / model_s, for comparison */
  double aux_s;             /* median sample of the second ceiling, when there is one */
  double aux_ratio, aux_q1, aux_q3; /* its per-round ratios (aux time / model time), as ratio */
} bench_rounds;
/* Samples ceiling, model, ceiling, model, ..., ceiling: rounds until t->iters or until
 * t->budget_s of wall time is spent (at least t->min_iters). ceiling NULL: the model alone
 * (ratios 0). aux, or NULL: a second ceiling sampled right after each ceiling sample. Warm-up is
 * the samplers' own business. */
tc_status bench_rounds_measure(const bench_sampler *model, const bench_sampler *ceiling, const bench_sampler *aux,
                               const bench_timing *t, bench_rounds *out);

/* ---------------------------------------------------------------- ceilings (bench_ceiling.c) */
typedef struct bench_ceiling {
  const char *kind;  /* "copy", "cuda-memcpy", "backend-copy", "sgemm", "backend-matmul", or NULL */
  double seconds;    /* median time of the ceiling workload */
  double value;      /* in the model's unit: GB/s, TF/s, or ms / us for time figures */
  const char *note;  /* why there is none, or NULL */
} bench_ceiling;
/* The ceiling workload of model m at inputs on backend, with n_sets rotated buffers, ready to
 * sample: memory-bound models (GB/s) get a streaming copy of the same bytes; models with matmuls
 * get the bare GEMMs at the same shapes (each in the fastest of the BLAS's ways, chosen here).
 * Warmed up. Fills out->kind and out->note (seconds and value come from the samples); *run is
 * NULL when the model has no ceiling or it cannot be measured (out->note says why). */
typedef struct bench_ceiling_run bench_ceiling_run;
tc_status bench_ceiling_open(const tc_model *m, tc_size_class size, tc_tensor *const *inputs, const char *backend,
                             bool on_device, int n_sets, const char *options, bench_ceiling *out,
                             bench_ceiling_run **run);
/* One sample of the whole ceiling workload (all its GEMMs): seconds. On a device, each op is
 * timed in groups like the model (bench_calls). */
tc_status bench_ceiling_sample(void *run, double *seconds);
void bench_ceiling_close(bench_ceiling_run *run);

/* The host's peak fp32 FMA rate on `threads` threads (bench_peak.c), with the widest vectors the
 * CPU has, as a sampler for bench_rounds_measure: each sample is one run of a fixed count of
 * FMAs (a few ms), its seconds. Opened warm; isa names the vectors ("avx512", "avx2+fma",
 * "scalar fmaf"); flops: a sample's floating-point operations. */
typedef struct bench_peak {
  int threads, lanes;
  const char *isa;
  double flops;
  float (*loop)(long);
} bench_peak;
void bench_peak_open(bench_peak *p, int threads);
tc_status bench_peak_sample(void *peak, double *seconds);
/* The multiply-adds x 2 of the bare GEMMs of model m at inputs (its GEMM ceiling's workload);
 * 0 for a model without GEMMs. */
double bench_gemm_flops(const tc_model *m, tc_tensor *const *inputs);

/* ---------------------------------------------------------------- CUDA copy (bench_cuda_copy.c) */
/* The copy ceiling of a CUDA GPU: cuMemcpyDtoDAsync of `bytes` over n_sets buffer pairs on
 * device 0, the driver dlopen'd; NULL with why ("no CUDA driver", "no CUDA device") otherwise.
 * Warmed up; a sample is a group of copies worth about BENCH_GROUP_S and one wait. */
typedef struct bench_cuda_copy bench_cuda_copy;
bench_cuda_copy *bench_cuda_copy_open(double bytes, int n_sets, char *why, size_t cap);
tc_status bench_cuda_copy_sample(bench_cuda_copy *c, double *seconds); /* seconds per copy */
void bench_cuda_copy_close(bench_cuda_copy *c);

/* ---------------------------------------------------------------- the process (bench_env.c) */
/* Prepares this process for measuring; call first, before anything loads a plugin. Fixes a
 * mis-detected OpenBLAS core type by running the command again (exec: returns only when no
 * re-run is needed), and passes the thread count to the backends through $TC_OPTIONS
 * ("cpu.threads=N": plugins read it when their context is created, which may be before any
 * tc_compile). argv: the subcommand's (argv[0] is "run", "bench"). */
void bench_env_prepare(int argc, char **argv, int threads);
/* "OpenBLAS 0.3.21, core SkylakeX" (the BLAS of the GEMM ceilings), or "none". */
const char *bench_blas_name(void);

/* ---------------------------------------------------------------- the driver (bench_main.c) */
/* `tc bench ...`; argv[0] is "bench". Returns the exit code. */
int bench_main(int argc, char **argv);

/* Size class from "cpu", "gpu" or "test"; false when unknown. */
bool bench_parse_size(const char *s, tc_size_class *out);
const char *bench_size_name(tc_size_class s);
/* GPU shapes on a backend whose first device is a GPU, CPU shapes otherwise. */
tc_size_class bench_default_size(const char *backend);
/* The figure for a median time: GB/s or TF/s from m->work, else the time in m->unit. */
double bench_figure(const tc_model *m, tc_size_class size, double seconds);

#endif
