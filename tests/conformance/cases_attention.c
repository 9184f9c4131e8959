/* cases_attention.c — scaled dot-product attention written with tc ops, as models write it
 * (softmax(masked_fill(q.kT * scale, mask, -inf)).v), against a double-precision reference.
 * A backend that takes TC_KERNEL_ATTENTION runs these as one fused kernel (inductor-cuda's flash
 * attention, inductor-cpu's codegen_attention.c); the others run the unfused kernels: every backend must give the same values,
 * including NaN for a query whose keys are all masked. The shapes cross the flash kernel's
 * 64-query and 64-key tiles and use head sizes that are not multiples of 4. */
#include <math.h>
#include <stdlib.h>

#include "conformance.h"

/* q, k: (B, H, T, d); v: (B, H, T, dv); masked when j - i >= diag (causal), else no mask. */
typedef struct attn_case {
  int64_t b, h, t, d, dv;
  double scale;
  bool causal;
  int64_t diag;
} attn_case;

static void attention_ref(const attn_case *a, const double *q, const double *k, const double *v, double *out) {
  double *s = malloc(sizeof(double) * (size_t)a->t);
  for (int64_t bh = 0; bh < a->b * a->h; bh++)
    for (int64_t i = 0; i < a->t; i++) {
      const double *qi = q + (bh * a->t + i) * a->d;
      double m = -INFINITY;
      for (int64_t j = 0; j < a->t; j++) {
        const double *kj = k + (bh * a->t + j) * a->d;
        double dot = 0;
        for (int64_t e = 0; e < a->d; e++) dot += qi[e] * kj[e];
        s[j] = a->causal && j - i >= a->diag ? -INFINITY : (double)(float)dot * a->scale;
        if (s[j] > m) m = s[j];
      }
      double *o = out + (bh * a->t + i) * a->dv;
      double l = 0;
      for (int64_t j = 0; j < a->t; j++) l += m == -INFINITY ? 0 : exp(s[j] - m);
      for (int64_t f = 0; f < a->dv; f++) {
        double acc = 0;
        for (int64_t j = 0; j < a->t && m != -INFINITY; j++) acc += exp(s[j] - m) * v[(bh * a->t + j) * a->dv + f];
        o[f] = m == -INFINITY ? NAN : acc / l; /* all keys masked: softmax of all -inf */
      }
    }
  free(s);
}

static tc_tensor *f32_tensor(const double *v, int64_t n, int rank, const int64_t *sizes) {
  float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
  tc_tensor *t = tc_from_f32(f, rank, sizes);
  free(f);
  return t;
}

static double g_scale;
static int64_t g_diag;

/* softmax(masked_fill(q.kT * scale, triu(ones, diag), -inf)).v, the ones shaped like a (1, 1, T, T)
 * plane of the scores (from_plane) or like the scores themselves. */
static tc_tensor *masked_attention(tc_tensor *q, tc_tensor *k, tc_tensor *v, bool from_plane) {
  tc_scope *sc = tc_scope_open();
  tc_tensor *s = tc_mul_scalar(tc_matmul(q, tc_transpose(k, -2, -1)), g_scale);
  tc_tensor *plane = from_plane ? tc_slice(tc_slice(s, 0, 0, 1, 1), 1, 0, 1, 1) : s;
  tc_tensor *above = tc_triu(tc_full_like(plane, 1.0, TC_BOOL), g_diag);
  tc_tensor *y = tc_matmul(tc_softmax(tc_masked_fill(s, above, -INFINITY), -1), v);
  tc_scope_keep(sc, y);
  tc_scope_close(sc);
  return y;
}

/* attn_block's mask: triu of a (1, 1, T, T) plane cut from the scores' own shape. */
static tc_tensor *m_causal(tc_tensor *q, tc_tensor *k, tc_tensor *v) { return masked_attention(q, k, v, true); }
/* The mask as a full (B, H, T, T) tensor. */
static tc_tensor *m_causal_full(tc_tensor *q, tc_tensor *k, tc_tensor *v) { return masked_attention(q, k, v, false); }

static tc_tensor *m_plain(tc_tensor *q, tc_tensor *k, tc_tensor *v) {
  tc_scope *sc = tc_scope_open();
  tc_tensor *y = tc_matmul(tc_softmax(tc_mul_scalar(tc_matmul(q, tc_transpose(k, -2, -1)), g_scale), -1), v);
  tc_scope_keep(sc, y);
  tc_scope_close(sc);
  return y;
}

static void run_attention(conf_ctx *c, const attn_case *a, tc_model_fn fn, unsigned long long seed) {
  int64_t nq = a->b * a->h * a->t * a->d, nv = a->b * a->h * a->t * a->dv;
  double *q = malloc(sizeof(double) * (size_t)nq), *k = malloc(sizeof(double) * (size_t)nq);
  double *v = malloc(sizeof(double) * (size_t)nv), *want = malloc(sizeof(double) * (size_t)nv);
  conf_randn(seed, q, (long)nq);
  conf_randn(seed + 1, k, (long)nq);
  conf_randn(seed + 2, v, (long)nv);
  /* the reference's dot products from the f32 inputs */
  for (int64_t i = 0; i < nq; i++) q[i] = (float)q[i], k[i] = (float)k[i];
  for (int64_t i = 0; i < nv; i++) v[i] = (float)v[i];
  attention_ref(a, q, k, v, want);
  const int64_t sq[4] = {a->b, a->h, a->t, a->d}, sv[4] = {a->b, a->h, a->t, a->dv};
  tc_tensor *in[3] = {f32_tensor(q, nq, 4, sq), f32_tensor(k, nq, 4, sq), f32_tensor(v, nv, 4, sv)};
  g_scale = a->scale;
  g_diag = a->diag;
  tc_tensor *y = conf_run(c, fn, 3, in);
  if (y) conf_check(c, y, 4, sv, want, 2e-4, 2e-5);
  tc_release(y);
  for (int i = 0; i < 3; i++) tc_release(in[i]);
  free(q);
  free(k);
  free(v);
  free(want);
}

/* Causal, as attn_block: 70 queries (a full and a partial 64-query tile), head size 16. */
CONF_CASE(ops, attention_causal) {
  const attn_case a = {.b = 2, .h = 3, .t = 70, .d = 16, .dv = 16, .scale = 0.25, .causal = true, .diag = 1};
  run_attention(c, &a, TC_FN(m_causal), 101);
}

/* No mask; value heads wider than query heads, neither a multiple of 4. */
CONF_CASE(ops, attention_unmasked) {
  const attn_case a = {.b = 1, .h = 2, .t = 5, .d = 7, .dv = 10, .scale = 0.37796447, .causal = false, .diag = 0};
  run_attention(c, &a, TC_FN(m_plain), 202);
}

/* triu(0): the diagonal masked too, so query 0 sees no key and is NaN (PyTorch's softmax of
 * all -inf); the mask a full (B, H, T, T) tensor. */
CONF_CASE(ops, attention_masked_row_is_nan) {
  const attn_case a = {.b = 1, .h = 1, .t = 9, .d = 4, .dv = 4, .scale = 0.5, .causal = true, .diag = 0};
  run_attention(c, &a, TC_FN(m_causal_full), 303);
}
