/* bench_group.c — timed samples of a compiled model: on the host each call alone, waited for;
 * on a device a group of back-to-back calls and one wait, divided by the calls (what
 * bench/torch_compare.py does for CUDA), so a sample is the device's work and not a host<->device
 * round trip per call. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

bool bench_inputs_on_device(tc_tensor *const *inputs, int n) {
  for (int i = 0; i < n; i++)
    if (inputs[i] && strcmp(tc_device_of(inputs[i]), "host")) return true;
  return false;
}

/* k calls back to back, one wait on the last output. Each earlier output is released as soon as
 * the next call is made: the backend keeps its storage alive while queued work still uses it. */
static tc_status calls_run(bench_calls *c, int k) {
  tc_tensor *last = NULL;
  for (int j = 0; j < k; j++) {
    bench_runner *r = c->runner;
    tc_tensor *const *in = c->sets[c->next++ % c->n_sets];
    tc_tensor *out = r->compiled ? tc_call(r->compiled, in) : bench_call_eager(r->model, in);
    tc_release(last);
    last = out;
    if (!out) return TC_ERR_INTERNAL;
  }
  /* tc_synchronize is one fence wait; bench_wait (a one-element read) would add an eager op and
   * a staging copy to every sample */
  const char *dev = last ? tc_device_of(last) : "host";
  tc_status st = strcmp(dev, "host") ? tc_synchronize(dev) : last ? bench_wait(last) : TC_OK;
  tc_release(last);
  return st;
}

tc_status bench_calls_init(bench_calls *c, bench_runner *r, tc_tensor **const *sets, int n_sets, int warmup,
                           double group_s) {
  *c = (bench_calls){.runner = r, .sets = sets, .n_sets = n_sets > 0 ? n_sets : 1, .group = 1};
  bool grouped = group_s > 0 && bench_inputs_on_device(sets[0], r->model->n_inputs);
  /* On a device the warm-up calls queue up; one wait settles them before the timing call. */
  tc_status st = TC_OK;
  if (grouped) st = warmup > 0 ? calls_run(c, warmup) : TC_OK;
  else
    for (int w = 0; w < warmup && st == TC_OK; w++) st = calls_run(c, 1);
  if (st != TC_OK || !grouped) return st;
  /* One call with its wait overstates a call's device time (it includes the round trip, which
   * can be several calls' worth), so the size is taken from a first guess that way, then from a
   * trial group of that size: the wait's share of a sample stays small. */
  for (int pass = 0; pass < 2 && st == TC_OK; pass++) {
    double t0 = bench_now();
    st = calls_run(c, c->group);
    double per = (bench_now() - t0) / c->group;
    double k = round(group_s / fmax(per, 1e-7));
    c->group = k < 1 ? 1 : k > BENCH_MAX_GROUP ? BENCH_MAX_GROUP : (int)k;
  }
  return st;
}

tc_status bench_calls_sample(bench_calls *c, double *seconds) {
  double t0 = bench_now();
  tc_status st = calls_run(c, c->group);
  *seconds = (bench_now() - t0) / c->group;
  if (st == TC_OK) c->timed += c->group;
  return st;
}

static tc_status group_sample(void *ctx, double *seconds) { return bench_calls_sample(ctx, seconds); }

tc_status bench_time_calls(bench_runner *r, tc_tensor **const *sets, int n_sets, const bench_timing *t,
                           double *median, int *n_timed) {
  bench_calls c;
  tc_status st = bench_calls_init(&c, r, sets, n_sets, t->warmup, t->group_s);
  bench_rounds rounds = {0};
  if (st == TC_OK) st = bench_rounds_measure(&(bench_sampler){group_sample, &c}, NULL, NULL, t, &rounds);
  *median = rounds.model_s;
  *n_timed = (int)c.timed;
  return st;
}
