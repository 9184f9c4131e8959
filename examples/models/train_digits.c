/* train_digits.c — training on a real data set: an MLP classifier (64 -> 1024, ReLU, -> 10) on
 * the UCI digits (examples/data), fixed split: the first 1437 images train, the last 360 test.
 * Minibatches of 64 in a seeded order, 80 epochs of SGD with momentum 0.9 (PyTorch's form) and
 * a cosine learning rate from 0.03. With 1437 images the net overfits (92.5% on the test
 * images without help), so it is regularized: dropout 0.6 on the hidden layer, Gaussian noise
 * (std 0.25) on the inputs, label smoothing 0.2 in the loss.
 *
 * One training step (forward, cross entropy, tc_grad, the momentum update, all tc ops) is one
 * compiled function: the backward prims are traced with the forward ones into one graph. A
 * compiled function returns one tensor, so the step returns the loss and the new parameters
 * and velocities as one vector, which the loop cuts back into views for the next step. The
 * last minibatch of an epoch (29 images) recompiles once, with the batch size symbolic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models_internal.h"

enum { TD_IN = DIGITS_PIXELS, TD_HIDDEN = 1024, TD_OUT = DIGITS_CLASSES, TD_BATCH = 64, TD_EPOCHS = 80 };
enum { TD_TRAIN = 1437, TD_TEST = 360, TD_N_STATE = 8, TD_N_STEP_INPUTS = 12 };
static const double td_lr = 0.03, td_momentum = 0.9, td_dropout = 0.6, td_noise = 0.25, td_smoothing = 0.2;

/* The state: w1 (1024x64), b1 (1024), w2 (10x1024), b2 (10), then a velocity of each. */
static const int64_t td_shape[TD_N_STATE / 2][2] = {
    {TD_HIDDEN, TD_IN}, {TD_HIDDEN, 0}, {TD_OUT, TD_HIDDEN}, {TD_OUT, 0}};

static int td_rank(int i) {
  return td_shape[i % 4][1] ? 2 : 1;
}
static int64_t td_numel(int i) {
  return td_shape[i % 4][0] * (td_shape[i % 4][1] ? td_shape[i % 4][1] : 1);
}

/* [loss, w1', b1', w2', b2', v_w1', v_b1', v_w2', v_b2'], each flattened. `keep` is the
 * dropout mask of the hidden layer, already scaled (0 or 1/(1-p)): it changes every step, and
 * tc_dropout's seed is part of the graph, so the loop draws it; `lr` is this step's rate. */
static tc_tensor *train_step(tc_tensor *x, tc_tensor *y, tc_tensor *w1, tc_tensor *b1, tc_tensor *w2, tc_tensor *b2,
                             tc_tensor *vw1, tc_tensor *vb1, tc_tensor *vw2, tc_tensor *vb2, tc_tensor *keep,
                             tc_tensor *lr) {
  tc_scope *s = tc_scope_open();
  tc_tensor *p[4] = {w1, b1, w2, b2}, *v[4] = {vw1, vb1, vw2, vb2}, *g[4] = {0};
  for (int i = 0; i < 4; i++)
    tc_set_requires_grad(p[i], true);
  tc_tensor *logits = tc_linear(tc_mul(tc_relu(tc_linear(x, w1, b1)), keep), w2, b2);
  /* Label smoothing as PyTorch's: (1 - e) * cross entropy + e * the mean of -log p over classes. */
  tc_tensor *uniform = tc_neg(tc_mean(tc_log_softmax(logits, 1), 0, NULL, false));
  tc_tensor *loss =
      tc_add(tc_mul_scalar(tc_cross_entropy(logits, y), 1.0 - td_smoothing), tc_mul_scalar(uniform, td_smoothing));
  if (tc_grad(loss, p, 4, g) != TC_OK) return model_return(s, NULL);
  /* The update is not differentiated: recording it would only keep the step's tape alive. */
  bool was = tc_set_grad_enabled(false);
  tc_tensor *parts[1 + TD_N_STATE];
  parts[0] = tc_reshape(loss, 1, (int64_t[]){1});
  for (int i = 0; i < 4; i++) {
    tc_tensor *vel = tc_add(tc_mul_scalar(v[i], td_momentum), g[i]); /* v = m v + g */
    parts[1 + i] = tc_flatten(tc_sub(p[i], tc_mul(vel, lr)), 0, -1);
    parts[5 + i] = tc_flatten(vel, 0, -1);
  }
  tc_tensor *out = tc_cat(1 + TD_N_STATE, parts, 0);
  tc_set_grad_enabled(was);
  return model_return(s, out);
}

/* The fraction of rows whose largest logit is their label. */
static tc_tensor *td_accuracy(tc_tensor *x, tc_tensor *y, tc_tensor *w1, tc_tensor *b1, tc_tensor *w2, tc_tensor *b2) {
  tc_scope *s = tc_scope_open();
  tc_tensor *logits = tc_linear(tc_relu(tc_linear(x, w1, b1)), w2, b2);
  tc_tensor *hit = tc_to_dtype(tc_eq(tc_argmax(logits, 1, false), y), TC_F32);
  return model_return(s, tc_mean(hit, 0, NULL, false));
}

/* ---------------------------------------------------------------- state and data */
/* Weights N(0, 2/fan_in) (He, for ReLU), biases and velocities zero. */
static void td_init_state(uint64_t seed, tc_tensor **st) {
  for (int i = 0; i < TD_N_STATE; i++) {
    const int64_t *sh = td_shape[i % 4];
    st[i] = i < 4 && td_rank(i) == 2 ? model_normal(model_seed(seed, i), 0.0, sqrt(2.0 / (double)sh[1]), 2, sh)
                                     : tc_zeros(TC_F32, td_rank(i), sh);
  }
}

/* The state's views into a step's output vector (new references). */
static void td_split(tc_tensor *vec, tc_tensor **st) {
  int64_t at = 1;
  for (int i = 0; i < TD_N_STATE; i++) {
    st[i] = tc_reshape(tc_slice(vec, 0, at, at + td_numel(i), 1), td_rank(i), td_shape[i % 4]);
    at += td_numel(i);
  }
}

/* A uniform [0, 1) double from a counter (splitmix64), the same on every backend. */
static double td_uniform(uint64_t seed, uint64_t i) {
  return (double)(model_seed(seed, (int)(i & 0x7fffffff)) >> 11) / 9007199254740992.0;
}

/* Rows `order[from..from+n)` of the training set as a batch, with Gaussian noise of std
 * `noise` (Box-Muller, seeded by `seed`). */
static void td_batch(const float *pixels, const int64_t *labels, const int *order, int from, int n, double noise,
                     uint64_t seed, tc_tensor **x, tc_tensor **y) {
  float *xb = malloc(sizeof *xb * (size_t)n * TD_IN);
  int64_t *yb = malloc(sizeof *yb * (size_t)n);
  for (int r = 0; r < n && xb && yb; r++) {
    for (int c = 0; c < TD_IN; c++) {
      uint64_t k = (uint64_t)r * TD_IN + (uint64_t)c;
      double u1 = td_uniform(seed, 2 * k), u2 = td_uniform(seed, 2 * k + 1);
      double z = noise > 0 ? sqrt(-2.0 * log(u1 + 1e-300)) * cos(2.0 * M_PI * u2) : 0.0;
      xb[(size_t)r * TD_IN + (size_t)c] = pixels[(size_t)order[from + r] * TD_IN + (size_t)c] + (float)(noise * z);
    }
    yb[r] = labels[order[from + r]];
  }
  int64_t nn = n;
  *x = xb ? tc_from_f32(xb, 2, (int64_t[]){nn, TD_IN}) : NULL;
  *y = yb ? tc_from_host(yb, TC_I64, 1, &nn) : NULL;
  free(xb);
  free(yb);
}

/* The hidden layer's dropout mask for n rows: 0 with probability p, else 1/(1-p). */
static tc_tensor *td_keep(int n, double p, uint64_t seed) {
  float *m = malloc(sizeof *m * (size_t)n * TD_HIDDEN);
  for (int64_t k = 0; m && k < (int64_t)n * TD_HIDDEN; k++)
    m[k] = td_uniform(seed, (uint64_t)k) < p ? 0.0f : (float)(1.0 / (1.0 - p));
  tc_tensor *t = m ? tc_from_f32(m, 2, (int64_t[]){n, TD_HIDDEN}) : NULL;
  free(m);
  return t;
}

/* A seeded shuffle (Fisher-Yates on splitmix64), the same on every backend. */
static void td_shuffle(int *order, int n, uint64_t seed) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(model_seed(seed, i) % (uint64_t)(i + 1));
    int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
}

/* ---------------------------------------------------------------- the loop */
typedef struct td_fns {
  tc_compiled *step, *acc; /* NULL: eager */
} td_fns;

static tc_tensor *td_call_step(const td_fns *f, tc_tensor *const *in) {
  if (f->step) return tc_call(f->step, in);
  return train_step(in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7], in[8], in[9], in[10], in[11]);
}

static tc_tensor *td_call_acc(const td_fns *f, tc_tensor *const *in) {
  if (f->acc) return tc_call(f->acc, in);
  return td_accuracy(in[0], in[1], in[2], in[3], in[4], in[5]);
}

static tc_status td_fail(const char *what, FILE *log) {
  tc_status s = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
  if (log) fprintf(log, "train_digits: %s: %s\n", what, tc_last_error());
  return s;
}

tc_status tc_train_digits(const char *backend, const char *options, int epochs, FILE *log, tc_train_result *out) {
  memset(out, 0, sizeof *out);
  if (epochs <= 0) epochs = TD_EPOCHS;
  if (epochs > 128) epochs = 128; /* tc_train_result's room */
  float *pixels = malloc(sizeof *pixels * DIGITS_ROWS * DIGITS_PIXELS);
  int64_t *labels = malloc(sizeof *labels * DIGITS_ROWS);
  int order[TD_TRAIN];
  if (!pixels || !labels || !digits_load(pixels, labels)) {
    free(pixels);
    free(labels);
    if (log) fprintf(log, "train_digits: the data set could not be read\n");
    return TC_ERR_UNAVAILABLE;
  }
  td_fns f = {0};
  if (backend && strcmp(backend, "eager")) {
    tc_compile_options o = {.struct_size = sizeof o, .backend = backend, .options = options, .name = "train_step"};
    f.step = tc_compile(TC_FN(train_step), TD_N_STEP_INPUTS, &o);
    o.name = "accuracy";
    f.acc = f.step ? tc_compile(TC_FN(td_accuracy), 6, &o) : NULL;
  }
  tc_status s = TC_OK;
  if (backend && strcmp(backend, "eager") && !f.acc) s = td_fail("tc_compile", log);
  tc_scope *outer = tc_scope_open();
  tc_tensor *st[TD_N_STATE];
  td_init_state(0x5eed, st);
  for (int i = 0; i < TD_TRAIN; i++)
    order[i] = i;
  const int steps_per_epoch = (TD_TRAIN + TD_BATCH - 1) / TD_BATCH, total_steps = epochs * steps_per_epoch;
  int step = 0;
  for (int e = 0; s == TC_OK && e < epochs; e++) {
    td_shuffle(order, TD_TRAIN, (uint64_t)e + 1);
    double total = 0;
    for (int from = 0; s == TC_OK && from < TD_TRAIN; from += TD_BATCH, step++) {
      int n = TD_TRAIN - from < TD_BATCH ? TD_TRAIN - from : TD_BATCH;
      tc_scope *sc = tc_scope_open();
      tc_tensor *in[TD_N_STEP_INPUTS];
      td_batch(pixels, labels, order, from, n, td_noise, model_seed(0xda7a, step), &in[0], &in[1]);
      for (int i = 0; i < TD_N_STATE; i++)
        in[2 + i] = st[i];
      in[10] = td_keep(n, td_dropout, model_seed(0xd409, step));
      /* cosine decay over the whole run */
      in[11] = tc_scalar(td_lr * 0.5 * (1.0 + cos(M_PI * step / total_steps)), TC_F32);
      tc_tensor *vec = in[0] && in[1] && in[10] && in[11] ? td_call_step(&f, in) : NULL;
      double loss = vec ? tc_item(tc_slice(vec, 0, 0, 1, 1)) : NAN;
      if (!vec || isnan(loss)) {
        s = td_fail("a training step", log);
        tc_scope_close(sc);
        break;
      }
      total += loss * n;
      tc_tensor *next[TD_N_STATE];
      td_split(vec, next);
      for (int i = 0; i < TD_N_STATE; i++) {
        tc_scope_keep(sc, next[i]); /* into the outer scope; the old state goes now */
        tc_release(st[i]);
        st[i] = next[i];
      }
      tc_scope_close(sc);
    }
    if (s != TC_OK) break;
    out->loss[e] = total / TD_TRAIN;
    out->epochs = e + 1;
    if (log) fprintf(log, "epoch %2d  loss %.4f\n", e + 1, out->loss[e]);
  }
  if (s == TC_OK) {
    int64_t n = TD_TEST;
    tc_tensor *in[6] = {tc_from_f32(pixels + (size_t)TD_TRAIN * TD_IN, 2, (int64_t[]){n, TD_IN}),
                        tc_from_host(labels + TD_TRAIN, TC_I64, 1, &n),
                        st[0],
                        st[1],
                        st[2],
                        st[3]};
    tc_tensor *acc = in[0] && in[1] ? td_call_acc(&f, in) : NULL;
    out->accuracy = acc ? tc_item(acc) : NAN;
    if (!acc || isnan(out->accuracy))
      s = td_fail("the test accuracy", log);
    else if (log)
      fprintf(log, "test accuracy %.4f (%d of %d)\n", out->accuracy, (int)lround(out->accuracy * TD_TEST), TD_TEST);
  }
  tc_scope_close(outer);
  tc_compiled_free(f.step);
  tc_compiled_free(f.acc);
  free(pixels);
  free(labels);
  return s;
}

/* ---------------------------------------------------------------- the model entry */
/* For tc run / tc bench: one step on the first minibatch from the initial state. */
static tc_status td_inputs(tc_size_class size, uint64_t seed, tc_tensor **in) {
  (void)size;
  float *pixels = malloc(sizeof *pixels * DIGITS_ROWS * DIGITS_PIXELS);
  int64_t *labels = malloc(sizeof *labels * DIGITS_ROWS);
  int order[TD_BATCH];
  for (int i = 0; i < TD_N_STEP_INPUTS; i++)
    in[i] = NULL;
  bool ok = pixels && labels && digits_load(pixels, labels);
  if (ok) {
    for (int i = 0; i < TD_BATCH; i++)
      order[i] = i;
    td_batch(pixels, labels, order, 0, TD_BATCH, td_noise, seed, &in[0], &in[1]);
    td_init_state(seed, in + 2);
    in[10] = td_keep(TD_BATCH, td_dropout, seed);
    in[11] = tc_scalar(td_lr, TC_F32);
  }
  free(pixels);
  free(labels);
  if (!ok) return TC_ERR_UNAVAILABLE;
  return model_inputs_check(in, TD_N_STEP_INPUTS);
}

static double td_work(tc_size_class size) {
  (void)size;
  return 0.0;
}

const tc_model model_train_digits = {
    .name = "train_digits",
    .description = "MLP 64-1024-10 trained on UCI digits (SGD + momentum, dropout, tc_grad in the compiled step); "
                   "tc run trains it and prints the loss per epoch and the test accuracy",
    .n_inputs = TD_N_STEP_INPUTS,
    .fn = TC_FN(train_step),
    .make_inputs = td_inputs,
    .unit = "ms",
    .work = td_work,
    .train = tc_train_digits,
};
