/* cmd_run.c — `tc run MODEL`: makes the model's inputs, compiles it for a backend (or runs it
 * eagerly), and prints the first-call time, the median call, the figure and a checksum. A model
 * that trains (train_digits) runs its training loop instead: the loss per epoch, the test
 * accuracy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "tc_cli.h"

static void run_usage(FILE *f) {
  fprintf(f, "usage: tc run MODEL [--backend NAME|eager] [--size cpu|gpu|test] [--iters N] [--warmup N]\n"
             "                 [--threads N] [--seed N] [--batches N,N,...] [--compile-async]\n"
             "--batches calls the compiled model again with input 0's first dim set to each N, and\n"
             "prints how many compiles that took (TC_LOGS=recompiles shows why each one happened).\n"
             "--compile-async compiles in the background (tc_compile_options.compile_async): calls run\n"
             "eagerly until the compile is done; it prints how long that took and how many calls ran eagerly.\n");
}

static void run_print_inputs(const tc_model *m, tc_tensor *const *in) {
  printf("inputs     ");
  for (int i = 0; i < m->n_inputs; i++) {
    printf("%s", i ? ", " : "");
    for (int d = 0; d < tc_rank(in[i]); d++) printf("%s%lld", d ? "x" : "", (long long)tc_size(in[i], d));
    if (tc_rank(in[i]) == 0) printf("scalar");
    if (tc_dtype_of(in[i]) != TC_F32) printf(" %s", tc_dtype_name(tc_dtype_of(in[i])));
  }
  printf("\n");
}

static int run_fail(const char *what) {
  fflush(stdout);
  fprintf(stderr, "tc run: %s: %s\n", what, tc_last_error());
  return 1;
}

typedef struct run_args {
  const char *model, *backend, *size, *batches;
  int iters, warmup, threads; /* -1: not given */
  bool compile_async;
  uint64_t seed;
} run_args;

static int run_parse(int argc, char **argv, run_args *a) {
  for (int i = 1; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(k, "-h") || !strcmp(k, "--help")) return run_usage(stdout), 0;
    if (!strcmp(k, "--compile-async")) {
      a->compile_async = true;
      continue;
    }
    if (k[0] != '-') {
      if (a->model) return fprintf(stderr, "tc run: one model at a time ('%s' and '%s')\n", a->model, k), 2;
      a->model = k;
      continue;
    }
    if (!v) return fprintf(stderr, "tc run: %s needs a value\n", k), 2;
    if (!strcmp(k, "--backend")) a->backend = v;
    else if (!strcmp(k, "--size")) a->size = v;
    else if (!strcmp(k, "--iters")) a->iters = atoi(v);
    else if (!strcmp(k, "--warmup")) a->warmup = atoi(v);
    else if (!strcmp(k, "--threads")) a->threads = atoi(v);
    else if (!strcmp(k, "--seed")) a->seed = strtoull(v, NULL, 10);
    else if (!strcmp(k, "--batches")) a->batches = v;
    else return fprintf(stderr, "tc run: unknown option '%s'\n", k), run_usage(stderr), 2;
    i++;
  }
  if (!a->model) return run_usage(stderr), 2;
  return -1;
}

/* --batches: the same compiled model on new leading sizes of input 0. Shows recompiles and,
 * under dynamic=auto, the symbolic entry that serves later sizes. */
static int run_batches(const run_args *a, const tc_model *m, bench_runner *run, tc_tensor **in, const char *backend) {
  const char *p = a->batches;
  while (*p) {
    char *end;
    long long b = strtoll(p, &end, 10);
    if (end == p || b <= 0) {
      fprintf(stderr, "tc run: --batches takes positive sizes separated by commas (at '%s')\n", p);
      return 2;
    }
    int64_t sizes[TC_MAX_RANK];
    int rank = tc_rank(in[0]);
    for (int d = 0; d < rank; d++) sizes[d] = tc_size(in[0], d);
    sizes[0] = b;
    tc_tensor *x = tc_randn(a->seed + (uint64_t)b, tc_dtype_of(in[0]), rank, sizes);
    tc_tensor *x_dev = x && strcmp(tc_device_of(in[0]), "host") ? tc_to_device(x, backend) : tc_retain(x);
    tc_tensor *args[16];
    for (int i = 0; i < m->n_inputs; i++) args[i] = in[i];
    args[0] = x_dev;
    tc_tensor *y = x_dev ? bench_runner_call(run, args) : NULL;
    tc_release(x);
    tc_release(x_dev);
    if (!y) return run_fail("batched call");
    tc_compile_stats st = {.struct_size = sizeof st};
    if (run->compiled && tc_compiled_stats(run->compiled, &st) == TC_OK)
      printf("batch %-5lld compiles so far %d (entries %d)\n", b, st.n_compiles, st.n_entries);
    else
      printf("batch %-5lld ok (eager)\n", b);
    tc_release(y);
    p = *end == ',' ? end + 1 : end;
  }
  return 0;
}

int cmd_run(int argc, char **argv) {
  run_args a = {.backend = "auto", .iters = -1, .warmup = -1, .seed = 1};
  int rc = run_parse(argc, argv, &a);
  if (rc >= 0) return rc;
  if (a.threads <= 0) a.threads = bench_default_threads();
  bench_env_prepare(argc, argv, a.threads);
  const tc_model *m = tc_model_find(a.model);
  if (!m) {
    fprintf(stderr, "tc run: unknown model '%s' (tc models lists them)\n", a.model);
    return 2;
  }
  bool eager = !strcmp(a.backend, "eager");
  const char *backend = eager ? "eager" : strcmp(a.backend, "auto") ? a.backend : tc_backend_auto();
  if (!backend) return run_fail("no backend available");
  if (!eager) { /* an unknown or unavailable backend fails here, before making big inputs */
    tc_tensor *probe = tc_scalar(0.0, TC_F32), *moved = tc_to_device(probe, backend);
    tc_release(probe);
    if (!moved) return run_fail("backend");
    tc_release(moved);
  }
  if (m->train) { /* a training model: its loop, not timed calls of one step */
    printf("model      %s: %s\nbackend    %s\n", m->name, m->description, backend);
    char opt_buf[64];
    tc_train_result res;
    tc_status s = m->train(backend, bench_thread_options(a.threads, opt_buf, sizeof opt_buf), 0, stdout, &res);
    return s == TC_OK ? 0 : run_fail("training");
  }
  tc_size_class size = eager ? TC_SIZE_CPU : bench_default_size(backend);
  if (a.size && !bench_parse_size(a.size, &size)) {
    fprintf(stderr, "tc run: --size must be cpu, gpu or test (not '%s')\n", a.size);
    return 2;
  }
  char opt_buf[64], tbuf[32];
  const char *options = bench_thread_options(a.threads, opt_buf, sizeof opt_buf);

  tc_tensor *in[16] = {0};
  bench_runner run = {0};
  tc_tensor *out = NULL;
  bool on_device = false;
  rc = 1;
  /* the device first, as an application opens it at start-up: its libraries load while the
   * inputs are made (inductor-cuda's NVRTC and cuBLASLt) */
  if (!eager && tc_backend_open(backend) != TC_OK) {
    run_fail("opening the backend");
    goto done;
  }
  if (m->n_inputs > 16 || m->make_inputs(size, a.seed, in) != TC_OK) {
    run_fail("making inputs");
    goto done;
  }
  printf("model      %s: %s\n", m->name, m->description);
  run_print_inputs(m, in);
  if (bench_place_inputs(in, m->n_inputs, backend, &on_device) != TC_OK) {
    run_fail("moving inputs to the backend");
    goto done;
  }
  printf("backend    %s (size %s, %d threads%s)\n", backend, bench_size_name(size), a.threads,
         on_device ? ", inputs on the device" : "");
  bench_set_compile_async(a.compile_async && !eager);
  if (bench_runner_init(&run, m, backend, options) != TC_OK) {
    run_fail("tc_compile");
    goto done;
  }
  double t0 = bench_now();
  out = bench_runner_call(&run, in);
  double first = bench_now() - t0;
  if (!out) {
    run_fail(eager ? "eager call" : "first call");
    goto done;
  }
  tc_compile_stats st = {.struct_size = sizeof st};
  if (a.compile_async && run.compiled && tc_compiled_stats(run.compiled, &st) == TC_OK && st.n_async_eager_calls > 0) {
    /* the first call ran eagerly; later calls do too until the background compile is done */
    printf("first call %s (eager: the compile runs in the background)\n", cli_time_str(first, tbuf, sizeof tbuf));
    while (tc_compiled_stats(run.compiled, &st) == TC_OK && st.compiling) {
      tc_tensor *again = bench_runner_call(&run, in);
      if (!again) {
        run_fail("an eager call while compiling");
        goto done;
      }
      tc_release(again);
    }
    printf("compiled   %s after the first call began (compile %.3f s; %d calls ran eagerly meanwhile)\n",
           cli_time_str(bench_now() - t0, tbuf, sizeof tbuf), st.compile_seconds, st.n_async_eager_calls);
  } else if (run.compiled && tc_compiled_stats(run.compiled, &st) == TC_OK)
    printf("first call %s (capture + compile + run: %d graph%s, %d kernels, compile %.3f s)\n",
           cli_time_str(first, tbuf, sizeof tbuf), st.n_graphs, st.n_graphs == 1 ? "" : "s", st.n_kernels,
           st.compile_seconds);
  else printf("first call %s\n", cli_time_str(first, tbuf, sizeof tbuf));

  /* Without --iters: up to 20 calls within about 2 s (one at least), so a slow backend (the
   * reference interpreter at CPU sizes) still answers; warm-up is skipped when calls are slow. */
  tc_tensor **sets[1] = {in};
  bench_timing timing = {.warmup = a.warmup >= 0 ? a.warmup : first > 0.5 ? 0 : 3,
                         .iters = a.iters > 0 ? a.iters : 20,
                         .min_iters = a.iters > 0 ? a.iters : 1,
                         .budget_s = a.iters > 0 ? 0 : 2.0};
  double median;
  int n_timed;
  if (bench_time_calls(&run, (tc_tensor **const *)sets, 1, &timing, &median, &n_timed) != TC_OK) {
    run_fail("timed calls");
    goto done;
  }
  printf("median     %s over %d calls (after %d warm-up)\n", cli_time_str(median, tbuf, sizeof tbuf), n_timed,
         timing.warmup);
  if (m->work && m->work(size) > 0) printf("figure     %.4g %s\n", bench_figure(m, size, median), m->unit);
  double sum, abs_sum;
  if (bench_checksum(out, &sum, &abs_sum) != TC_OK) {
    run_fail("reading the output back");
    goto done;
  }
  printf("checksum   sum %.6g  abs %.6g  (%lld elements)\n", sum, abs_sum, (long long)tc_numel(out));
  rc = a.batches ? run_batches(&a, m, &run, in, backend) : 0;
done:
  tc_release(out);
  bench_runner_free(&run);
  for (int i = 0; i < 16; i++) tc_release(in[i]);
  return rc;
}
