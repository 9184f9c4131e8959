/* test_train_digits.c — the train_digits example (examples/models/train_digits.c): a compiled
 * training step (forward, tc_grad, SGD with momentum) gives the same loss (one epoch) on every
 * backend available here as uncompiled eager code, and the full run classifies the held-out
 * test images. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "tc/tc.h"
#include "tc_models.h"
#include "test_support.h"

static const tc_model *trainer(void) {
  const tc_model *m = tc_model_find("train_digits");
  cr_assert_not_null(m);
  cr_assert_not_null(m->train);
  return m;
}

Test(train_digits, loss_curve_same_on_every_backend) {
  const tc_model *m = trainer();
  tc_train_result ref, got;
  cr_assert_eq(m->train("eager", NULL, 1, NULL, &ref), TC_OK, "eager: %s", tc_last_error());
  cr_assert_eq(ref.epochs, 1);
  const char *backends[] = {"debug-eager", "inductor-cpu", "vulkan"};
  for (size_t b = 0; b < sizeof backends / sizeof *backends; b++) {
    if (!test_backend_available(backends[b])) continue;
    cr_assert_eq(m->train(backends[b], NULL, 1, NULL, &got), TC_OK, "%s: %s", backends[b], tc_last_error());
    for (int e = 0; e < 1; e++)
      cr_assert(fabs(got.loss[e] - ref.loss[e]) <= 1e-3 * ref.loss[e], "%s epoch %d: loss %.6f, eager %.6f",
                backends[b], e + 1, got.loss[e], ref.loss[e]);
    cr_assert(fabs(got.accuracy - ref.accuracy) <= 1.0 / 360, "%s: accuracy %.4f, eager %.4f", backends[b],
              got.accuracy, ref.accuracy);
  }
}

/* The full 80 epochs (about 3 s on inductor-cpu): 93.6% of the 360 test images (337); 93.6-94.2%
 * with other initial weights. */
Test(train_digits, full_run_classifies_the_test_set) {
  const tc_model *m = trainer();
  const char *backend = test_backend_available("inductor-cpu") ? "inductor-cpu" : "debug-eager";
  tc_train_result r;
  cr_assert_eq(m->train(backend, NULL, 0, NULL, &r), TC_OK, "%s: %s", backend, tc_last_error());
  cr_assert_eq(r.epochs, 80);
  cr_assert(r.loss[79] < 0.8 * r.loss[0], "training loss %g, first epoch %g", r.loss[79], r.loss[0]);
  cr_assert(r.accuracy >= 0.93, "test accuracy %.4f", r.accuracy);
}
