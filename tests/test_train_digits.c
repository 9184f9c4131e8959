/* test_train_digits.c — the train_digits example (examples/models/train_digits.c): a compiled
 * step (forward, tc_grad, AdamW updating its state in place) follows uncompiled eager code's
 * loss curve on every backend available here, and the whole run (20 epochs) classifies at
 * least 95% of the held-out test images on inductor-cpu and on vulkan, with inductor-cpu's loss
 * curve. The full run on eager and debug-eager (the interpreters: about 100 s of CPU each, 96%
 * by hand) is too long for the suite; their first epochs are checked against eager's. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "tc/tc.h"
#include "tc_models.h"
#include "test_support.h"

enum { TD_FULL_EPOCHS = 20, TD_CURVE_EPOCHS = 3 };

static const tc_model *trainer(void) {
  const tc_model *m = tc_model_find("train_digits");
  cr_assert_not_null(m);
  cr_assert_not_null(m->train);
  return m;
}

static void train(const char *backend, int epochs, tc_train_result *r) {
  cr_assert_eq(trainer()->train(backend, NULL, epochs, NULL, r), TC_OK, "%s: %s", backend, tc_last_error());
  cr_assert_eq(r->epochs, epochs ? epochs : TD_FULL_EPOCHS, "%s", backend);
}

/* The loss of every epoch within 1% of the reference's (summation orders differ between
 * backends and the differences grow over the steps), the test accuracy within two images. */
static void same_curve(const char *backend, const tc_train_result *got, const char *ref_name,
                       const tc_train_result *ref) {
  for (int e = 0; e < ref->epochs; e++)
    cr_assert(fabs(got->loss[e] - ref->loss[e]) <= 1e-2 * ref->loss[e], "%s epoch %d: loss %.6f, %s %.6f", backend,
              e + 1, got->loss[e], ref_name, ref->loss[e]);
  cr_assert(fabs(got->accuracy - ref->accuracy) <= 2.0 / 360 + 1e-9, "%s: accuracy %.4f, %s %.4f", backend,
            got->accuracy, ref_name, ref->accuracy);
}

Test(train_digits, first_epochs_follow_eager_on_every_backend) {
  tc_train_result ref, got;
  train("eager", TD_CURVE_EPOCHS, &ref);
  const char *backends[] = {"debug-eager", "inductor-cpu", "vulkan"};
  for (size_t b = 0; b < sizeof backends / sizeof *backends; b++) {
    if (!test_backend_available(backends[b])) continue;
    train(backends[b], TD_CURVE_EPOCHS, &got);
    same_curve(backends[b], &got, "eager", &ref);
  }
}

static void reaches_95_percent(const char *backend, const tc_train_result *r) {
  cr_assert(r->loss[r->epochs - 1] < 0.1 * r->loss[0], "%s: training loss %g, first epoch %g", backend,
            r->loss[r->epochs - 1], r->loss[0]);
  cr_assert(r->accuracy >= 0.95, "%s: test accuracy %.4f (%d of 360)", backend, r->accuracy,
            (int)lround(r->accuracy * 360));
}

/* 95.8% (345 of 360) on every backend; 95.3-96.4% with other initial weights. */
Test(train_digits, full_run_reaches_95_percent) {
  if (!test_backend_available("inductor-cpu")) cr_skip_test("inductor-cpu is not available");
  tc_train_result ref, got;
  train("inductor-cpu", 0, &ref);
  reaches_95_percent("inductor-cpu", &ref);
  if (!test_backend_available("vulkan")) return; /* as under AddressSanitizer, where its driver is hidden */
  train("vulkan", 0, &got);
  reaches_95_percent("vulkan", &got);
  same_curve("vulkan", &got, "inductor-cpu", &ref);
}
