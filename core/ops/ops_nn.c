/* ops_nn.c — neural-network ops: softmax, log_softmax, layer_norm, rms_norm, matmul, linear,
 * cat, cross_entropy, dropout. Row statistics are reductions broadcast back (ops_unreduce), so
 * the scheduler sees the reduction/epilogue pattern it fuses into one kernel. */
#include <stdlib.h>

#include <stdio.h>
#include "ops/ops_util.h"

/* ---------------------------------------------------------------- softmax */
/* Stable: the row max is subtracted before exp, so no term overflows. */
static tc_tensor *softmax_rows(tc_tensor *x, int d, bool log) {
  tc_tensor *z = prim_binary(TC_PRIM_SUB, x, ops_reduce_back(TC_PRIM_REDUCE_MAX, x, 1, &d));
  tc_tensor *e = prim_unary(TC_PRIM_EXP, z);
  tc_tensor *sum = ops_reduce_back(TC_PRIM_REDUCE_SUM, e, 1, &d);
  return log ? prim_binary(TC_PRIM_SUB, z, prim_unary(TC_PRIM_LOG, sum)) : prim_binary(TC_PRIM_DIV, e, sum);
}

/* A rank-0 x is a row of one element (dim 0 or -1), as in PyTorch. */
static tc_tensor *softmax_op(const char *op, tc_tensor *x, int dim, bool log) {
  if (!x || !ops_require_float(op, "x", x)) return NULL;
  bool scalar = x->rank == 0 && (dim == 0 || dim == -1);
  int d = scalar ? 0 : ops_dim(op, "dim", dim, x);
  if (d < 0) return NULL;
  tc_scope *s = ops_begin();
  tc_sz one[1] = {sz_const(1)};
  /* No element, nothing to normalize (PyTorch returns the empty tensor): the row statistics of
   * an empty dim would be a tensor of every other dim, -inf and 0, e.g. 811800 x 811800 for an
   * (811800, 0, 811800) x over dim 1. Zero sizes are specialized (static), so testing the static
 * ones decides without guarding a symbolic size. */
  bool empty = false;
  for (int i = 0; i < x->rank && !empty; i++) empty = sz_is_static(sz_of(x, i)) && sz_of(x, i).v == 0;
  if (empty) return ops_end(s, prim_binary(TC_PRIM_SUB, x, x));
  tc_tensor *y = softmax_rows(scalar ? prim_reshape(x, 1, one) : x, d, log);
  return ops_end(s, scalar ? prim_reshape(y, 0, one) : y);
}

tc_tensor *tc_softmax(tc_tensor *x, int dim) { return softmax_op("tc_softmax", x, dim, false); }
tc_tensor *tc_log_softmax(tc_tensor *x, int dim) { return softmax_op("tc_log_softmax", x, dim, true); }

/* ---------------------------------------------------------------- normalization */
/* Checks the normalized dims and that a weight/bias has exactly their shape; fills dims. */
static bool check_norm(const char *op, tc_tensor *x, int n_norm, const tc_tensor *w, const char *wname, int *dims) {
  if (!ops_require_float(op, "x", x)) return false;
  if (n_norm < 1 || n_norm > x->rank)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: n_norm %d is out of range for x: %s (expected 1..%d)", op,
                         n_norm, OPS_SHAPE(x), x->rank), false;
  int lead = x->rank - n_norm;
  for (int i = 0; i < n_norm; i++) dims[i] = lead + i;
  bool fits = !w || w->rank == n_norm;
  for (int i = 0; fits && w && i < n_norm; i++) fits = w->sizes[i] == x->sizes[lead + i];
  if (!fits)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: %s must have the normalized shape of x's last %d dims (x: %s, "
                         "%s: %s)", op, wname, n_norm, OPS_SHAPE(x), wname, OPS_SHAPE(w)), false;
  return true;
}

/* x * broadcast(rsqrt(ss / N + eps)), where ss was reduced over dims of x. */
static tc_tensor *scale_by_rstd(tc_tensor *x, tc_tensor *ss, int n, const int *dims, double eps) {
  if (!ss) return NULL;
  tc_tensor *var = prim_binary(TC_PRIM_DIV, ss, ops_count_like(x, n, dims, ss));
  tc_tensor *rstd = prim_unary(TC_PRIM_RSQRT, ops_binary_scalar(TC_PRIM_ADD, var, eps));
  return prim_binary(TC_PRIM_MUL, x, ops_unreduce(rstd, x, n, dims));
}

/* Population variance, eps inside the rsqrt, as torch.nn.functional.layer_norm. */
tc_tensor *tc_layer_norm(tc_tensor *x, int n_norm, tc_tensor *weight, tc_tensor *bias, double eps) {
  if (!x) return NULL;
  int dims[TC_MAX_RANK];
  if (!check_norm("tc_layer_norm", x, n_norm, weight, "weight", dims) ||
      !check_norm("tc_layer_norm", x, n_norm, bias, "bias", dims))
    return NULL;
  tc_scope *s = ops_begin();
  tc_tensor *mean = prim_binary(TC_PRIM_DIV, ops_reduce_back(TC_PRIM_REDUCE_SUM, x, n_norm, dims),
                                ops_count_like(x, n_norm, dims, x));
  tc_tensor *xc = prim_binary(TC_PRIM_SUB, x, mean);
  tc_tensor *ss = prim_reduce(TC_PRIM_REDUCE_SUM, prim_binary(TC_PRIM_MUL, xc, xc), n_norm, dims);
  tc_tensor *y = scale_by_rstd(xc, ss, n_norm, dims, eps);
  if (weight) y = tc_mul(y, weight);
  if (bias) y = tc_add(y, bias);
  return ops_end(s, y);
}

tc_tensor *tc_rms_norm(tc_tensor *x, int n_norm, tc_tensor *weight, double eps) {
  if (!x) return NULL;
  int dims[TC_MAX_RANK];
  if (!check_norm("tc_rms_norm", x, n_norm, weight, "weight", dims)) return NULL;
  tc_scope *s = ops_begin();
  tc_tensor *ss = prim_reduce(TC_PRIM_REDUCE_SUM, prim_binary(TC_PRIM_MUL, x, x), n_norm, dims);
  tc_tensor *y = scale_by_rstd(x, ss, n_norm, dims, eps);
  return ops_end(s, weight ? tc_mul(y, weight) : y);
}

/* ---------------------------------------------------------------- matmul */
/* (..., M, K) x (K, N): the batch folds into M, one 2-D product instead of a broadcast one. */
static tc_tensor *matmul_folded(tc_tensor *a, tc_tensor *b) {
  int r = a->rank;
  tc_sz flat[2] = {ops_numel_range(a, 0, r - 1), sz_of(a, r - 1)}, shape[TC_MAX_RANK];
  tc_tensor *y = prim_matmul(prim_reshape(a, 2, flat), b);
  ops_shape_sz(a, shape);
  shape[r - 1] = sz_of(b, 1);
  return prim_reshape(y, r, shape);
}

/* Both operands rank >= 2: broadcast the batch dims, then one batched product. */
static tc_tensor *matmul_batched(tc_tensor *a, tc_tensor *b) {
  tc_sz sa[TC_MAX_RANK], sb[TC_MAX_RANK], batch[TC_MAX_RANK];
  ops_shape_sz(a, sa);
  ops_shape_sz(b, sb);
  int rb = ops_broadcast_sizes(a->rank - 2, sa, b->rank - 2, sb, batch);
  if (rb < 0)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_matmul: batch dims cannot be broadcast (a: %s, b: %s)",
                         OPS_SHAPE(a), OPS_SHAPE(b));
  tc_sz shape_a[TC_MAX_RANK], shape_b[TC_MAX_RANK];
  for (int i = 0; i < rb; i++) shape_a[i] = shape_b[i] = batch[i];
  shape_a[rb] = sa[a->rank - 2], shape_a[rb + 1] = sa[a->rank - 1];
  shape_b[rb] = sb[b->rank - 2], shape_b[rb + 1] = sb[b->rank - 1];
  return prim_matmul(ops_broadcast_to(a, rb + 2, shape_a), ops_broadcast_to(b, rb + 2, shape_b));
}

tc_tensor *tc_matmul(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  if (a->rank == 0 || b->rank == 0)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_matmul: both operands need at least 1 dim (a: %s, b: %s)",
                         OPS_SHAPE(a), OPS_SHAPE(b));
  tc_dtype d = dtype_promote(a->dtype, b->dtype);
  if (!dtype_is_float(d))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_matmul: operands must be floating (a: %s %s, b: %s %s)",
                         OPS_DTYPE(a), OPS_SHAPE(a), OPS_DTYPE(b), OPS_SHAPE(b));
  int64_t ka = a->sizes[a->rank - 1], kb = b->sizes[b->rank == 1 ? 0 : b->rank - 2];
  if (ka != kb)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_matmul: inner sizes differ (a: %s, b: %s)", OPS_SHAPE(a),
                         OPS_SHAPE(b));
  tc_scope *s = ops_begin();
  /* 1-D operands become a row (a) or a column (b); that dim is dropped from the result. */
  tc_tensor *A = a->rank == 1 ? tc_unsqueeze(a, 0) : a, *B = b->rank == 1 ? tc_unsqueeze(b, 1) : b;
  A = ops_convert(A, d), B = ops_convert(B, d);
  if (!A || !B) return ops_end(s, NULL);
  tc_tensor *y = B->rank == 2 && A->rank > 2 ? matmul_folded(A, B) : matmul_batched(A, B);
  if (y && a->rank == 1) y = tc_squeeze(y, -2);
  if (y && b->rank == 1) y = tc_squeeze(y, -1);
  return ops_end(s, y);
}

tc_tensor *tc_linear(tc_tensor *x, tc_tensor *w, tc_tensor *b) {
  if (!x || !w) return NULL;
  if (w->rank != 2 || x->rank < 1 || x->sizes[x->rank - 1] != w->sizes[1])
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_linear: w must be (out_features, in_features) with in_features "
                         "= x's last size (x: %s, w: %s)", OPS_SHAPE(x), OPS_SHAPE(w));
  if (b && (b->rank != 1 || b->sizes[0] != w->sizes[0]))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_linear: b must be (out_features) (w: %s, b: %s)", OPS_SHAPE(w),
                         OPS_SHAPE(b));
  tc_scope *s = ops_begin();
  tc_tensor *y = tc_matmul(x, tc_permute(w, (int[]){1, 0}));
  return ops_end(s, b ? tc_add(y, b) : y);
}

/* ---------------------------------------------------------------- cat */
static bool check_cat(int n, tc_tensor *const *xs, int d) {
  const tc_tensor *x0 = xs[0];
  for (int i = 1; i < n; i++) {
    const tc_tensor *x = xs[i];
    if (x->rank != x0->rank)
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_cat: rank mismatch (xs[0]: %s, xs[%d]: %s)", OPS_SHAPE(x0), i,
                           OPS_SHAPE(x)), false;
    for (int k = 0; k < x->rank; k++)
      if (k != d && x->sizes[k] != x0->sizes[k])
        return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_cat: sizes differ at dim %d (xs[0]: %s, xs[%d]: %s); only "
                             "dim %d may differ", k, OPS_SHAPE(x0), i, OPS_SHAPE(x), d), false;
  }
  return true;
}

tc_tensor *tc_cat(int n, tc_tensor *const *xs, int dim) {
  if (n < 1 || !xs) return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_cat: expected at least one tensor, got %d", n);
  for (int i = 0; i < n; i++)
    if (!xs[i]) return NULL;
  if (xs[0]->rank == 0)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_cat: rank-0 tensors cannot be concatenated (xs[0]: [])");
  int d = ops_dim("tc_cat", "dim", dim, xs[0]);
  if (d < 0 || !check_cat(n, xs, d)) return NULL;
  tc_dtype dtype = xs[0]->dtype;
  for (int i = 1; i < n; i++) dtype = dtype_promote(dtype, xs[i]->dtype);
  tc_scope *s = ops_begin();
  tc_tensor **conv = malloc(sizeof *conv * (size_t)n);
  if (!conv) return ops_end(s, core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_cat: out of memory for %d operands", n));
  for (int i = 0; i < n; i++) conv[i] = ops_convert(xs[i], dtype);
  tc_tensor *y = prim_concatenate(n, conv, d);
  free(conv);
  return ops_end(s, y);
}

/* ---------------------------------------------------------------- losses and dropout */
/* PyTorch's default ignore_index: rows whose target is -100 take no part, in the sum or in
 * the count (all rows ignored gives 0/0 = NaN, as in PyTorch). */
#define CROSS_ENTROPY_IGNORE (-100)

/* mean over the rows not ignored of -log_softmax(logits)[row, target[row]]. */
tc_tensor *tc_cross_entropy(tc_tensor *logits, tc_tensor *target) {
  if (!logits || !target) return NULL;
  if (!ops_require_float("tc_cross_entropy", "logits", logits) ||
      !ops_require_index("tc_cross_entropy", "target", target))
    return NULL;
  if (logits->rank != 2 || target->rank != 1 || target->sizes[0] != logits->sizes[0])
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_cross_entropy: expected logits (N, C) and target (N) "
                         "(logits: %s, target: %s)", OPS_SHAPE(logits), OPS_SHAPE(target));
  char against[128];
  snprintf(against, sizeof against, "the classes of logits (logits: %s)", OPS_SHAPE(logits));
  if (!ops_check_index_values("tc_cross_entropy", "target", target, logits->sizes[1], true, CROSS_ENTROPY_IGNORE,
                              against))
    return NULL;
  tc_scope *s = ops_begin();
  tc_tensor *logp = softmax_rows(logits, 1, true);
  tc_tensor *kept = ops_binary_scalar(TC_PRIM_NE, target, CROSS_ENTROPY_IGNORE); /* (N) bool */
  tc_tensor *safe = prim_where(kept, target, ops_full_like(target, 0.0, target->dtype));
  tc_tensor *kept_col = tc_unsqueeze(kept, 1);
  tc_tensor *picked = prim_gather(logp, 1, tc_unsqueeze(safe, 1), GRAPH_INDEX_CROSS_ENTROPY); /* (N, 1) */
  picked = prim_where(kept_col, picked, picked ? ops_full_like(picked, 0.0, picked->dtype) : NULL);
  tc_tensor *total = prim_reduce(TC_PRIM_REDUCE_SUM, picked, 2, (int[]){0, 1});
  tc_tensor *count = prim_reduce(TC_PRIM_REDUCE_SUM, ops_convert(kept, logits->dtype), 1, (int[]){0});
  if (!total || !count) return ops_end(s, NULL);
  return ops_end(s, prim_unary(TC_PRIM_NEG, prim_binary(TC_PRIM_DIV, total, count)));
}

tc_tensor *tc_dropout(tc_tensor *x, double p, uint64_t seed, bool train) {
  if (!x) return NULL;
  if (!(p >= 0.0 && p <= 1.0))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_dropout: p must be in [0, 1], got %g (x: %s)", p, OPS_SHAPE(x));
  if (!train || p == 0.0) return ops_identity(x);
  if (!ops_require_float("tc_dropout", "x", x)) return NULL;
  if (p == 1.0) return ops_full_like(x, 0.0, x->dtype);
  tc_scope *s = ops_begin();
  tc_sz shape[TC_MAX_RANK];
  ops_shape_sz(x, shape);
  tc_tensor *u = prim_random(seed, 0, x->dtype, x->rank, shape);
  tc_tensor *keep = ops_binary_scalar(TC_PRIM_GE, u, p);
  tc_tensor *scaled = ops_binary_scalar(TC_PRIM_MUL, x, 1.0 / (1.0 - p));
  return ops_end(s, prim_where(keep, scaled, ops_full_like(x, 0.0, x->dtype)));
}
