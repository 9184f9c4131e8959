/* digits.c — a real data set through a compiled model: nearest-centroid classification of the
 * UCI handwritten digits (examples/data/digits.csv.gz). The class means of the first 1000
 * images are the centroids (no training loop: a mean is the whole fit); the model scores the
 * other 797 and returns the accuracy, so `tc run digits` prints it as the checksum's sum.
 * The data comes from digits_data.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models_internal.h"

enum { DIGITS_FIT_ROWS = 1000, DIGITS_TEST_ROWS = 64 };

/* accuracy = mean(argmax(2·x·cᵀ − |c|²) == label): the nearest centroid by squared distance
 * (|x|² is the same for every class of a row, so it drops out). */
static tc_tensor *digits(tc_tensor *x, tc_tensor *centroids, tc_tensor *labels) {
  tc_scope *s = tc_scope_open();
  const int last = 1;
  tc_tensor *c_sq = tc_sum(tc_mul(centroids, centroids), 1, &last, false);
  tc_tensor *scores = tc_sub(tc_mul_scalar(tc_matmul(x, tc_transpose(centroids, 0, 1)), 2.0), c_sq);
  tc_tensor *hit = tc_to_dtype(tc_eq(tc_argmax(scores, 1, false), labels), TC_F32);
  return model_return(s, tc_mean(hit, 0, NULL, false));
}

static void digits_centroids(const float *pixels, const int64_t *labels, float *centroids) {
  int64_t count[DIGITS_CLASSES] = {0};
  memset(centroids, 0, sizeof(float) * DIGITS_CLASSES * DIGITS_PIXELS);
  for (int r = 0; r < DIGITS_FIT_ROWS; r++) {
    count[labels[r]]++;
    for (int c = 0; c < DIGITS_PIXELS; c++) centroids[labels[r] * DIGITS_PIXELS + c] += pixels[r * DIGITS_PIXELS + c];
  }
  for (int k = 0; k < DIGITS_CLASSES; k++)
    for (int c = 0; c < DIGITS_PIXELS; c++)
      if (count[k]) centroids[k * DIGITS_PIXELS + c] /= (float)count[k];
}

static tc_status digits_inputs(tc_size_class size, uint64_t seed, tc_tensor **in) {
  (void)seed; /* the data set is the input */
  float *pixels = malloc(sizeof(float) * DIGITS_ROWS * DIGITS_PIXELS);
  int64_t *labels = malloc(sizeof(int64_t) * DIGITS_ROWS);
  float centroids[DIGITS_CLASSES * DIGITS_PIXELS];
  bool ok = pixels && labels && digits_load(pixels, labels);
  in[0] = in[1] = in[2] = NULL;
  if (ok) {
    digits_centroids(pixels, labels, centroids);
    int64_t n = size == TC_SIZE_TEST ? DIGITS_TEST_ROWS : DIGITS_ROWS - DIGITS_FIT_ROWS;
    int64_t xs[2] = {n, DIGITS_PIXELS}, cs[2] = {DIGITS_CLASSES, DIGITS_PIXELS};
    in[0] = tc_from_f32(pixels + DIGITS_FIT_ROWS * DIGITS_PIXELS, 2, xs);
    in[1] = tc_from_f32(centroids, 2, cs);
    in[2] = tc_from_host(labels + DIGITS_FIT_ROWS, TC_I64, 1, &n);
  }
  free(pixels);
  free(labels);
  if (!ok) return TC_ERR_UNAVAILABLE;
  return model_inputs_check(in, 3);
}

static double digits_work(tc_size_class size) {
  (void)size;
  return 0.0;
}

const tc_model model_digits = {
    .name = "digits",
    .description = "nearest-centroid digit classifier on UCI digits (examples/data); returns the accuracy",
    .n_inputs = 3,
    .fn = TC_FN(digits),
    .make_inputs = digits_inputs,
    .unit = "ms",
    .work = digits_work,
};
