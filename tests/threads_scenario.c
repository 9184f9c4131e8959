/* threads_scenario.c — one compiled function called from four threads at once: every result
 * right, one compile per guard set however the calls race. Plain C (no Criterion), so the same
 * scenario runs in the Criterion suite (test_threads.c) and under ThreadSanitizer
 * (tc_threads_check, where Criterion itself cannot run). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "threads_scenario.h"

#define N_THREADS 4
#define N_CALLS 12

/* A weight captured from a global: every thread's call reads (and references) the same tensor. */
static tc_tensor *shared_w;

static tc_tensor *layer(tc_tensor *x) {
  tc_scope *s = tc_scope_open();
  tc_tensor *h = tc_tanh(tc_matmul(x, shared_w));
  tc_tensor *y = tc_add(tc_softmax(h, -1), tc_mul_scalar(h, 0.5));
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

static tc_tensor *filled(int64_t rows, int64_t cols, float scale) {
  float *d = malloc((size_t)(rows * cols) * sizeof *d);
  for (int64_t i = 0; i < rows * cols; i++) d[i] = scale * (float)((i * 5) % 11 - 5);
  tc_tensor *t = tc_from_f32(d, 2, (int64_t[]){rows, cols});
  free(d);
  return t;
}

/* Two guard sets: 3 and 5 rows. */
static const int64_t rows_of[2] = {3, 5};

typedef struct work {
  tc_compiled *c;
  int id;
  tc_tensor *x[2];      /* this thread's own inputs */
  const float *want[2]; /* eager results */
  int bad;              /* calls whose result was wrong or missing */
  char why[256];
} work;

static void *worker(void *arg) {
  work *w = arg;
  float got[5 * 6];
  for (int i = 0; i < N_CALLS; i++) {
    int k = (i + w->id) % 2; /* threads start on different guard sets */
    tc_tensor *y = tc_call(w->c, (tc_tensor *[]){w->x[k]});
    if (!y) {
      w->bad++;
      snprintf(w->why, sizeof w->why, "call failed: %s", tc_last_error());
      continue;
    }
    size_t n = (size_t)rows_of[k] * 6;
    if (tc_to_host(y, got, n * sizeof(float)) != TC_OK) {
      w->bad++;
      snprintf(w->why, sizeof w->why, "read failed: %s", tc_last_error());
    }
    for (size_t j = 0; j < n; j++)
      if (fabsf(got[j] - w->want[k][j]) > 1e-5f * (1 + fabsf(w->want[k][j]))) {
        w->bad++;
        snprintf(w->why, sizeof w->why, "element %zu: %g, want %g", j, got[j], w->want[k][j]);
        break;
      }
    tc_release(y);
  }
  return NULL;
}

bool threads_one_function(const char *backend, const char *options, char *err, size_t cap) {
  err[0] = 0;
  shared_w = filled(4, 6, 0.1f);
  float want[2][5 * 6];
  for (int k = 0; k < 2; k++) {
    tc_tensor *x = filled(rows_of[k], 4, 0.2f + 0.1f * (float)k);
    tc_tensor *y = layer(x); /* eager */
    if (!y || tc_to_host(y, want[k], (size_t)rows_of[k] * 6 * sizeof(float)) != TC_OK) {
      snprintf(err, cap, "eager reference: %s", tc_last_error());
      return false;
    }
    tc_release(y);
    tc_release(x);
  }
  tc_compile_options o = {.struct_size = sizeof o,
                          .backend = backend,
                          .options = options,
                          .dynamic = TC_DYNAMIC_OFF, /* one entry per row count: two guard sets */
                          .name = "layer"};
  tc_compiled *c = tc_compile(TC_FN(layer), 1, &o);
  if (!c) {
    snprintf(err, cap, "tc_compile: %s", tc_last_error());
    return false;
  }
  work w[N_THREADS];
  memset(w, 0, sizeof w);
  for (int t = 0; t < N_THREADS; t++) {
    w[t].c = c;
    w[t].id = t;
    for (int k = 0; k < 2; k++) {
      w[t].x[k] = filled(rows_of[k], 4, 0.2f + 0.1f * (float)k);
      w[t].want[k] = want[k];
    }
  }
  pthread_t th[N_THREADS];
  for (int t = 0; t < N_THREADS; t++) pthread_create(&th[t], NULL, worker, &w[t]);
  for (int t = 0; t < N_THREADS; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < N_THREADS && !err[0]; t++)
    if (w[t].bad) snprintf(err, cap, "thread %d: %d bad calls (%s)", t, w[t].bad, w[t].why);
  tc_compile_stats st = {.struct_size = sizeof st};
  if (!err[0] && tc_compiled_stats(c, &st) != TC_OK) snprintf(err, cap, "stats: %s", tc_last_error());
  if (!err[0] && (st.n_entries != 2 || st.n_compiles != 2))
    snprintf(err, cap, "%d entries and %d compiles for two guard sets (want 2 and 2)", st.n_entries, st.n_compiles);
  for (int t = 0; t < N_THREADS; t++)
    for (int k = 0; k < 2; k++) tc_release(w[t].x[k]);
  tc_compiled_free(c);
  tc_release(shared_w);
  return !err[0];
}
