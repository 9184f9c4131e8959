/* bench_dyn_attn.c — attn_block called with 40 sequence lengths, T = 64 + 16·((37·i) mod 61)
 * (BENCHMARKS.md): the total time including every compile, and how many graphs were compiled.
 * Measured in fresh processes with an empty cache, then with the cache the first run left. */
#include <stdio.h>
#include <string.h>

#include "bench_driver.h"

enum { DYN_CALLS = 40 };

static int64_t dyn_seq_len(tc_size_class size, int i) {
  int64_t step = (37 * i) % 61;
  return size == TC_SIZE_TEST ? 4 + step : 64 + 16 * step;
}

/* GPU: B 8 as BENCHMARKS.md; the CPU and test classes (no shape there) use one sequence. */
static int64_t dyn_batch(tc_size_class size) { return size == TC_SIZE_GPU ? 8 : 1; }

void bench_dyn_attn_child(const char *backend, tc_size_class size, const char *options, bench_first_call *r) {
  const tc_model *m = tc_model_find("attn_block");
  tc_tensor *w[13] = {0}, *xs[DYN_CALLS] = {0};
  bench_runner run = {0};
  bool on_device;
  tc_status st = m ? m->make_inputs(size, 1, w) : TC_ERR_UNAVAILABLE;
  if (st == TC_OK) {
    int64_t c = tc_size(w[0], 2);
    tc_release(w[0]); /* the 40 inputs below take its place */
    w[0] = NULL;
    /* Each input is a prefix of one random vector of the longest input's size, reshaped: drawn
     * once, as 40 draws on the host's eager interpreter took 40-48 s of the bench process on the
     * H200's host (its time, not the figure's). */
    int64_t longest = 0;
    for (int i = 0; i < DYN_CALLS; i++)
      if (dyn_seq_len(size, i) > longest) longest = dyn_seq_len(size, i);
    int64_t flat_n = dyn_batch(size) * longest * c;
    tc_tensor *flat = tc_randn(100, TC_F32, 1, &flat_n);
    st = flat ? TC_OK : TC_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < DYN_CALLS && st == TC_OK; i++) {
      int64_t sizes[3] = {dyn_batch(size), dyn_seq_len(size, i), c};
      tc_tensor *prefix = tc_slice(flat, 0, 0, sizes[0] * sizes[1] * sizes[2], 1);
      xs[i] = prefix ? tc_reshape(prefix, 3, sizes) : NULL;
      tc_release(prefix);
      st = xs[i] ? bench_place_inputs(&xs[i], 1, backend, &on_device) : TC_ERR_OUT_OF_MEMORY;
    }
    tc_release(flat);
  }
  if (st == TC_OK) st = bench_place_inputs(w + 1, 12, backend, &on_device);
  if (st == TC_OK) st = bench_runner_init(&run, m, backend, options);
  if (st == TC_OK) {
    double t0 = bench_now();
    for (int i = 0; i < DYN_CALLS && st == TC_OK; i++) {
      if (i == 1) r->seconds = bench_now() - t0;
      w[0] = xs[i]; /* borrowed: xs owns it */
      tc_tensor *out = bench_runner_call(&run, w);
      st = out ? TC_OK : TC_ERR_INTERNAL;
      tc_release(out);
    }
    r->total_s = bench_now() - t0;
    tc_compile_stats s = {.struct_size = sizeof s};
    if (st == TC_OK && tc_compiled_stats(run.compiled, &s) == TC_OK) {
      r->compile_s = s.compile_seconds;
      r->kernels = s.n_kernels;
      r->graphs = s.n_graphs;
      r->compiles = s.n_compiles;
      r->entries = s.n_entries;
    }
    w[0] = NULL;
  }
  r->ok = st == TC_OK;
  if (!r->ok) snprintf(r->error, sizeof r->error, "%s", tc_last_error());
  bench_runner_free(&run);
  for (int i = 0; i < 13; i++) tc_release(w[i]);
  for (int i = 0; i < DYN_CALLS; i++) tc_release(xs[i]);
}

void bench_dyn_attn_measure(const bench_config *cfg, bench_result *r) {
  memset(r, 0, sizeof *r);
  r->name = "dyn_attn";
  r->unit = "s";
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/dyn_attn", cfg->tmp_root);
  bench_child_spawn(cfg, "dyn", "attn_block", dir, 0, &r->cold);
  if (r->cold.ok) bench_child_spawn(cfg, "dyn", "attn_block", dir, 0, &r->warm);
  const bench_first_call *bad = !r->cold.ok ? &r->cold : !r->warm.ok ? &r->warm : NULL;
  if (bad) snprintf(r->error, sizeof r->error, "%s", bad->error);
}
