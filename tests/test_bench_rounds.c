/* test_bench_rounds.c — tc bench's interleaved rounds (bench/bench_rounds.c) against scripted
 * samplers: every ratio the bench prints comes from here, so what it promises is checked with
 * times whose answer is known. A machine that speeds up or slows down between samples must
 * cancel out of the per-round ratio (each model sample against the two ceiling samples around
 * it), a burst on one side must not move the median, and a sampler's failure must come back
 * as the status, not as a figure. */
#include <criterion/criterion.h>
#include <math.h>

#include "bench.h"

/* A sampler that hands out times[0], times[1], ... and fails with TC_ERR_DEVICE at fail_at. */
typedef struct scripted {
  const double *times;
  int n, next, fail_at;
} scripted;

static tc_status scripted_sample(void *ctx, double *seconds) {
  scripted *s = ctx;
  if (s->next == s->fail_at || s->next >= s->n) return TC_ERR_DEVICE;
  *seconds = s->times[s->next++];
  return TC_OK;
}

enum { ROUNDS = 10 };
static const bench_timing exactly_ten = {.iters = ROUNDS, .min_iters = ROUNDS, .budget_s = 0};

/* The machine slows by 1.2x per sample slot (ceiling at slot 2i, model at 2i + 1), and the model
 * takes twice the ceiling's time at any moment. Round i: mean(1.2^2i, 1.2^(2i+2)) / (2 * 1.2^(2i+1))
 * = (1 + 1.44) / 4.8 in every round; the ratio of the two medians is 1.2 / 2.44 instead. */
Test(bench_rounds, ratio_pairs_each_model_sample_with_the_ceilings_around_it) {
  double c[ROUNDS + 1], m[ROUNDS];
  for (int i = 0; i <= ROUNDS; i++) c[i] = pow(1.2, 2 * i);
  for (int i = 0; i < ROUNDS; i++) m[i] = 2 * pow(1.2, 2 * i + 1);
  scripted cs = {c, ROUNDS + 1, 0, -1}, ms = {m, ROUNDS, 0, -1};
  bench_sampler model = {scripted_sample, &ms}, ceiling = {scripted_sample, &cs};
  bench_rounds r;
  cr_assert_eq(bench_rounds_measure(&model, &ceiling, NULL, &exactly_ten, &r), TC_OK);
  cr_assert_eq(r.rounds, ROUNDS);
  const double per_round = 2.44 / 4.8;
  cr_assert_float_eq(r.ratio, per_round, 1e-12, "ratio %.9f, want %.9f", r.ratio, per_round);
  cr_assert_float_eq(r.ratio_q1, per_round, 1e-12);
  cr_assert_float_eq(r.ratio_q3, per_round, 1e-12);
  cr_assert_float_eq(r.ratio_of_medians, 1.2 / 2.44, 1e-12, "ratio of medians %.9f", r.ratio_of_medians);
  cr_assert_float_eq(r.ceiling_s, pow(1.2, 10), 1e-9, "the median of 11 ceiling samples is the 6th");
  cr_assert_float_eq(r.model_s, pow(1.2, 9) + pow(1.2, 11), 1e-9, "the median of 10 model samples");
}

/* A steady machine (ceiling 1 s, model 2 s) where other load hit the model in rounds 2 and 6 and
 * the ceiling once: the median round still reads 0.5. */
Test(bench_rounds, a_burst_on_one_side_leaves_the_median_round) {
  double c[ROUNDS + 1], m[ROUNDS];
  for (int i = 0; i <= ROUNDS; i++) c[i] = i == 8 ? 5.0 : 1.0;
  for (int i = 0; i < ROUNDS; i++) m[i] = i == 2 || i == 6 ? 20.0 : 2.0;
  scripted cs = {c, ROUNDS + 1, 0, -1}, ms = {m, ROUNDS, 0, -1};
  bench_sampler model = {scripted_sample, &ms}, ceiling = {scripted_sample, &cs};
  bench_rounds r;
  cr_assert_eq(bench_rounds_measure(&model, &ceiling, NULL, &exactly_ten, &r), TC_OK);
  cr_assert_float_eq(r.ratio, 0.5, 1e-12, "ratio %.9f", r.ratio);
  cr_assert_float_eq(r.model_s, 2.0, 1e-12);
  cr_assert_float_eq(r.ceiling_s, 1.0, 1e-12);
  /* rounds 2 and 6 read 0.05, 7 and 8 (around the ceiling's burst) 1.5: outside the quartiles */
  cr_assert(r.ratio_q1 == 0.5 && r.ratio_q3 == 0.5, "quartiles %g %g", r.ratio_q1, r.ratio_q3);
}

/* The second ceiling (the peak FMA rate) is sampled right after each sample of the first and
 * paired the same way: aux 0.5 s against a 2 s model in every round reads 0.25. */
Test(bench_rounds, the_second_ceiling_has_ratios_of_its_own) {
  double c[ROUNDS + 1], a[ROUNDS + 1], m[ROUNDS];
  for (int i = 0; i <= ROUNDS; i++) c[i] = 1.0, a[i] = 0.5;
  for (int i = 0; i < ROUNDS; i++) m[i] = 2.0;
  scripted cs = {c, ROUNDS + 1, 0, -1}, as = {a, ROUNDS + 1, 0, -1}, ms = {m, ROUNDS, 0, -1};
  bench_sampler model = {scripted_sample, &ms}, ceiling = {scripted_sample, &cs}, aux = {scripted_sample, &as};
  bench_rounds r;
  cr_assert_eq(bench_rounds_measure(&model, &ceiling, &aux, &exactly_ten, &r), TC_OK);
  cr_assert_float_eq(r.ratio, 0.5, 1e-12);
  cr_assert_float_eq(r.aux_ratio, 0.25, 1e-12, "aux ratio %g", r.aux_ratio);
  cr_assert_float_eq(r.aux_s, 0.5, 1e-12);
  cr_assert_eq(as.next, ROUNDS + 1, "aux sampled %d times, want one more than the rounds", as.next);
}

/* No ceiling: the model alone, its median and no ratio. */
Test(bench_rounds, without_a_ceiling_only_the_model_is_timed) {
  double m[ROUNDS] = {3, 1, 2, 5, 4, 9, 8, 7, 6, 10};
  scripted ms = {m, ROUNDS, 0, -1};
  bench_sampler model = {scripted_sample, &ms};
  bench_rounds r;
  cr_assert_eq(bench_rounds_measure(&model, NULL, NULL, &exactly_ten, &r), TC_OK);
  cr_assert_eq(r.rounds, ROUNDS);
  cr_assert_float_eq(r.model_s, 5.5, 1e-12);
  cr_assert(r.ratio == 0 && isnan(r.ceiling_s), "ratio %g ceiling %g", r.ratio, r.ceiling_s);
}

/* A ceiling that fails halfway: its status comes back (a figure from half a window would be
 * printed as if whole), as does a model that fails at once. */
Test(bench_rounds, a_sampler_failure_is_the_status) {
  double c[ROUNDS + 1], m[ROUNDS];
  for (int i = 0; i <= ROUNDS; i++) c[i] = 1.0;
  for (int i = 0; i < ROUNDS; i++) m[i] = 2.0;
  scripted cs = {c, ROUNDS + 1, 0, 5}, ms = {m, ROUNDS, 0, -1};
  bench_sampler model = {scripted_sample, &ms}, ceiling = {scripted_sample, &cs};
  bench_rounds r;
  cr_assert_eq(bench_rounds_measure(&model, &ceiling, NULL, &exactly_ten, &r), TC_ERR_DEVICE);
  scripted cs2 = {c, ROUNDS + 1, 0, -1}, ms2 = {m, ROUNDS, 0, 0};
  bench_sampler model2 = {scripted_sample, &ms2}, ceiling2 = {scripted_sample, &cs2};
  cr_assert_eq(bench_rounds_measure(&model2, &ceiling2, NULL, &exactly_ten, &r), TC_ERR_DEVICE);
  cr_assert_eq(r.rounds, 0, "no round completed: rounds %d", r.rounds);
  cr_assert(isnan(r.model_s), "no model figure without a round");
}

/* min_iters holds when the time budget is already spent; iters caps the rounds. */
Test(bench_rounds, rounds_run_from_min_iters_to_iters) {
  double c[ROUNDS + 1], m[ROUNDS];
  for (int i = 0; i <= ROUNDS; i++) c[i] = 1.0;
  for (int i = 0; i < ROUNDS; i++) m[i] = 2.0;
  scripted cs = {c, ROUNDS + 1, 0, -1}, ms = {m, ROUNDS, 0, -1};
  bench_sampler model = {scripted_sample, &ms}, ceiling = {scripted_sample, &cs};
  bench_rounds r;
  const bench_timing three = {.iters = ROUNDS, .min_iters = 3, .budget_s = 0};
  cr_assert_eq(bench_rounds_measure(&model, &ceiling, NULL, &three, &r), TC_OK);
  cr_assert_eq(r.rounds, 3, "rounds %d with no budget left, want min_iters 3", r.rounds);
  cr_assert_eq(ms.next, 3);
  cr_assert_eq(cs.next, 4, "ceiling, model, ..., ceiling: %d ceiling samples", cs.next);
}
