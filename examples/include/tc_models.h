/* tc_models.h — the bundled models: the workloads of BENCHMARKS.md as ordinary C model
 * functions, with their input makers. Used by `tc models`, `tc run`, `tc explain`, `tc bench`
 * and the tests. */
#ifndef TC_MODELS_H
#define TC_MODELS_H

#include <stdio.h>

#include "tc/tc.h"

typedef enum tc_size_class { TC_SIZE_CPU = 0, TC_SIZE_GPU = 1, TC_SIZE_TEST = 2 } tc_size_class;

/* What a training model's loop reports. */
typedef struct tc_train_result {
  int32_t epochs;
  double loss[128]; /* mean training loss of each epoch */
  double accuracy; /* on the test set, after the last epoch */
} tc_train_result;

typedef struct tc_model {
  const char *name;        /* "ln_gelu", "softmax", "mlp", "attn_block", ... */
  const char *description; /* one line */
  int n_inputs;
  tc_model_fn fn; /* the model: tc_tensor *f(tc_tensor *, ...) with n_inputs parameters */
  /* Makes the inputs for a size class (seeded normal data, weights scaled by 1/sqrt(fan_in)):
   * fills inputs[0..n_inputs-1] with new references. */
  tc_status (*make_inputs)(tc_size_class size, uint64_t seed, tc_tensor **inputs /* out */);
  const char *unit; /* the figure BENCHMARKS.md reports: "GB/s", "TF/s", "ms", "us" */
  /* Bytes (GB/s) or flops (TF/s) one call moves or computes at this size; 0 for time figures. */
  double (*work)(tc_size_class size);
  /* Optional (NULL for models that only run): the model's whole training loop on `backend`
   * ("eager": uncompiled; options as tc_compile_options.options, may be NULL) for `epochs`
   * epochs (0: the model's own count, at most 128), printing the loss of each epoch and the test
   * accuracy to log (may be NULL). `tc run` calls it. */
  tc_status (*train)(const char *backend, const char *options, int epochs, FILE *log, tc_train_result *out);
} tc_model;

/* All bundled models (static storage); *n receives the count. */
const tc_model *tc_models_all(int *n);
/* The model named `name`, or NULL. */
const tc_model *tc_model_find(const char *name);

#endif
