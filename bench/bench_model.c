/* bench_model.c — the measurement of one bundled model: eager time, cold and warm first calls
 * (in fresh processes), then timed calls after warm-up interleaved with its ceiling workload
 * (bench_rounds.c), with input sets rotated when they fit in cache. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_driver.h"

enum { MODEL_MAX_SETS = 8, MODEL_MAX_INPUTS = 16 };
#define MODEL_ROTATION_BYTES (256.0 * 1024 * 1024) /* at most this much in rotated copies */

/* The last-level cache the inputs would sit in: the host's L3 (or L2), or for a device a
 * figure that covers today's GPU L2 caches (an H200 has 50 MB). */
static double model_cache_bytes(bool on_device) {
  if (on_device) return 64.0 * 1024 * 1024;
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l3 > 0) return (double)l3;
  if (l2 > 0) return (double)l2;
  return 32.0 * 1024 * 1024;
}

/* How many input sets to cycle through: enough to span twice the cache when one set fits in
 * it, within MODEL_MAX_SETS and MODEL_ROTATION_BYTES. */
static int model_rotation(double bytes, bool on_device) {
  double cache = model_cache_bytes(on_device);
  if (bytes <= 0 || bytes > cache) return 1;
  int n = (int)ceil(2.0 * cache / bytes);
  if (n > MODEL_MAX_SETS) n = MODEL_MAX_SETS;
  while (n > 1 && n * bytes > MODEL_ROTATION_BYTES) n--;
  return n;
}

/* A copy of a host tensor in new storage: the rotated sets need distinct buffers, not new
 * random numbers (and copying is much faster than drawing them). */
static tc_tensor *model_clone(tc_tensor *t) {
  size_t bytes = (size_t)tc_numel(t) * tc_dtype_size(tc_dtype_of(t));
  int64_t sizes[TC_MAX_RANK];
  for (int d = 0; d < tc_rank(t); d++) sizes[d] = tc_size(t, d);
  void *host = malloc(bytes ? bytes : 1);
  tc_tensor *c = host && tc_to_host(t, host, bytes) == TC_OK ? tc_from_host(host, tc_dtype_of(t), tc_rank(t), sizes)
                                                             : NULL;
  free(host);
  return c;
}

static void model_fail(bench_result *r, const char *what) {
  if (!r->error[0]) snprintf(r->error, sizeof r->error, "%s: %s", what, tc_last_error());
}

static tc_status model_sample(void *ctx, double *seconds) { return bench_calls_sample(ctx, seconds); }

/* The options of the timed run. inductor-cpu's default tier runs the first calls on a fast build
 * while the -O3 build compiles in the background and is swapped in: the timed calls would
 * measure some of each, and share the cores with the compiler (all of them, under taskset on
 * two cores). A process that runs for long runs the -O3 build, so that is what is timed
 * (cpu.tier=full), unless TC_OPTIONS names a tier; the first-call columns come from child
 * processes with the default options. */
static const char *timed_options(const bench_config *cfg, char *buf, size_t cap) {
  const char *env = getenv("TC_OPTIONS");
  if (strcmp(cfg->backend, "inductor-cpu") || (env && strstr(env, "cpu.tier"))) return cfg->options;
  snprintf(buf, cap, "%s%scpu.tier=full", cfg->options ? cfg->options : "", cfg->options ? "," : "");
  return buf;
}

/* Compiles m, makes the first call (checksum), then times calls interleaved with the ceiling
 * workload (bench_rounds.c): the figure and the ceiling come from the same window. */
static void model_compiled(const bench_config *cfg, const tc_model *m, tc_tensor ***sets, bool on_device,
                           bench_result *r) {
  bench_runner run;
  char opt_buf[128];
  const char *options = timed_options(cfg, opt_buf, sizeof opt_buf);
  if (bench_runner_init(&run, m, cfg->backend, options) != TC_OK) {
    model_fail(r, "tc_compile");
    return;
  }
  double t0 = bench_now();
  tc_tensor *out = bench_runner_call(&run, sets[0]);
  r->first_call_s = bench_now() - t0;
  if (!out || bench_checksum(out, &r->sum, &r->abs_sum) != TC_OK) {
    model_fail(r, "first call");
  } else {
    tc_compile_stats st = {.struct_size = sizeof st};
    if (tc_compiled_stats(run.compiled, &st) == TC_OK) {
      r->kernels = st.n_kernels;
      r->graphs = st.n_graphs;
    }
  }
  tc_release(out);
  bench_ceiling_run *ceiling = NULL;
  if (!r->error[0] && bench_ceiling_open(m, cfg->size, sets[0], cfg->backend, on_device, r->n_sets, options,
                                         &r->ceiling, &ceiling) != TC_OK)
    fprintf(stderr, "tc bench: %s: %s (%s)\n", m->name, r->ceiling.note, tc_last_error());
  /* GEMM-heavy models on the host: against the cores' peak FMA rate too (the BLAS is a figure) */
  const double gemm_flops = on_device || r->error[0] ? 0 : bench_gemm_flops(m, sets[0]);
  bench_peak peak;
  if (gemm_flops > 0) bench_peak_open(&peak, cfg->threads);
  bench_calls calls;
  bench_rounds rounds = {0};
  if (!r->error[0] && bench_calls_init(&calls, &run, (tc_tensor **const *)sets, r->n_sets, cfg->timing.warmup,
                                       cfg->timing.group_s) != TC_OK)
    model_fail(r, "warm-up calls");
  if (!r->error[0]) {
    r->group = calls.group;
    bench_sampler model_s = {model_sample, &calls}, ceiling_s = {bench_ceiling_sample, ceiling},
                  peak_s = {bench_peak_sample, &peak};
    if (bench_rounds_measure(&model_s, ceiling ? &ceiling_s : NULL, gemm_flops > 0 ? &peak_s : NULL, &cfg->timing,
                             &rounds) != TC_OK)
      model_fail(r, "timed calls");
    r->n_timed = (int)calls.timed;
    r->rounds = rounds.rounds;
    r->median_s = rounds.model_s;
  }
  if (!r->error[0] && gemm_flops > 0 && rounds.aux_s > 0) {
    /* the GEMMs' time at the peak rate / the call's time, round by round (for mlp, whose work is
     * its GEMMs, that is the figure / the peak) */
    r->peak_isa = peak.isa;
    r->peak_tflops = peak.flops / rounds.aux_s / 1e12;
    r->peak_ratio = rounds.aux_ratio * gemm_flops / peak.flops;
    r->peak_q1 = rounds.aux_q1 * gemm_flops / peak.flops;
    r->peak_q3 = rounds.aux_q3 * gemm_flops / peak.flops;
  }
  if (!r->error[0] && ceiling) {
    r->ceiling.seconds = rounds.ceiling_s;
    r->ceiling.value = bench_figure(m, cfg->size, rounds.ceiling_s);
    r->ratio = rounds.ratio;
    r->ratio_q1 = rounds.ratio_q1;
    r->ratio_q3 = rounds.ratio_q3;
    r->ratio_of_medians = rounds.ratio_of_medians;
  } else if (ceiling) {
    r->ceiling.kind = NULL;
    r->ceiling.note = "not measured (the model failed)";
  }
  bench_ceiling_close(ceiling);
  bench_runner_free(&run);
}

void bench_model_measure(const bench_config *cfg, const tc_model *m, bench_result *r) {
  memset(r, 0, sizeof *r);
  r->name = m->name;
  r->model = m;
  r->unit = m->unit;
  tc_tensor *store[MODEL_MAX_SETS][MODEL_MAX_INPUTS] = {{0}}, **sets[MODEL_MAX_SETS];
  for (int s = 0; s < MODEL_MAX_SETS; s++) sets[s] = store[s];
  if (m->n_inputs > MODEL_MAX_INPUTS || m->make_inputs(cfg->size, 1, sets[0]) != TC_OK) {
    model_fail(r, "making inputs");
    return;
  }
  /* Where the inputs will live decides the cache that rotation must defeat and the ceiling. */
  bool on_device = false;
  tc_tensor *probe = tc_to_device(sets[0][0], cfg->backend);
  if (probe) on_device = strcmp(tc_device_of(probe), "host") != 0;
  tc_release(probe);
  r->n_sets = model_rotation(bench_bytes(sets[0], m->n_inputs), on_device);

  char dir[4096];
  snprintf(dir, sizeof dir, "%s/%s", cfg->tmp_root, m->name);
  if (cfg->eager) bench_child_spawn(cfg, "eager", m->name, dir, cfg->eager_limit_s, &r->eager);
  bench_child_spawn(cfg, "first-call", m->name, dir, 0, &r->cold);
  if (r->cold.ok) bench_warm_starts(cfg, "first-call", m->name, dir, r);

  for (int s = 1; s < r->n_sets && !r->error[0]; s++)
    for (int i = 0; i < m->n_inputs && !r->error[0]; i++)
      if (!(sets[s][i] = model_clone(sets[0][i]))) model_fail(r, "copying inputs");
  bool placed = on_device;
  for (int s = 0; s < r->n_sets && !r->error[0]; s++)
    if (bench_place_inputs(sets[s], m->n_inputs, cfg->backend, &placed) != TC_OK) model_fail(r, "moving inputs");
  if (!r->error[0]) model_compiled(cfg, m, sets, placed, r);
  if (!r->error[0]) {
    r->figure = bench_figure(m, cfg->size, r->median_s);
    if (!(r->ratio > 0)) r->ratio = 0;
  }
  for (int s = 0; s < MODEL_MAX_SETS; s++)
    for (int i = 0; i < MODEL_MAX_INPUTS; i++) tc_release(store[s][i]);
}
