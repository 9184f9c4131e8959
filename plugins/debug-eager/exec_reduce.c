/* exec_reduce.c — REDUCE_SUM/MAX/MIN/PROD over listed dims, and ARGMAX/ARGMIN over one dim.
 * Float sums and products accumulate in double, in row-major order of the reduced elements;
 * integer ones in 64 bits with wrap-around. */
#include <math.h>
#include <stdio.h>

#include "debug_eager.h"

/* Splits x's dims into kept (the result's) and reduced ones; checks the result's sizes. */
typedef struct split {
  int32_t n_kept, n_red;
  int32_t kept[TC_MAX_RANK], red[TC_MAX_RANK];
  int64_t red_sizes[TC_MAX_RANK];
} split;

static tc_status split_dims(const de_op *op, const de_tensor *x, int32_t n_dims, const int64_t *dims, split *s) {
  s->n_kept = s->n_red = 0;
  for (int32_t d = 0; d < x->rank; d++) {
    bool reduced = false;
    for (int32_t k = 0; k < n_dims; k++) reduced |= dims[k] == d;
    if (reduced) {
      s->red_sizes[s->n_red] = x->sizes[d];
      s->red[s->n_red++] = d;
    } else {
      if (x->sizes[d] != op->out->sizes[s->n_kept]) {
        char a[160], b[160];
        return de_op_error(op, TC_ERR_INVALID_ARGUMENT, "operand %s and result %s disagree at dim %d",
                           de_shape_str(a, sizeof a, x->rank, x->sizes),
                           de_shape_str(b, sizeof b, op->out->rank, op->out->sizes), d);
      }
      s->kept[s->n_kept++] = d;
    }
  }
  return TC_OK;
}

/* Address of x's element at kept index `o` (of the result) and reduced index `r`. */
static const char *element_at(const de_tensor *x, const split *s, const int64_t *o, const int64_t *r) {
  int64_t idx[TC_MAX_RANK];
  for (int32_t k = 0; k < s->n_kept; k++) idx[s->kept[k]] = o[k];
  for (int32_t k = 0; k < s->n_red; k++) idx[s->red[k]] = r[k];
  return de_at(x, idx);
}

static double fold_float(int32_t prim, double acc, double v) {
  switch (prim) {
  case TC_PRIM_REDUCE_SUM: return acc + v;
  case TC_PRIM_REDUCE_PROD: return acc * v;
  case TC_PRIM_REDUCE_MAX: return de_float_max(acc, v);
  default: return de_float_min(acc, v);
  }
}

static int64_t fold_int(int32_t prim, int64_t acc, int64_t v) {
  switch (prim) {
  case TC_PRIM_REDUCE_SUM: return (int64_t)((uint64_t)acc + (uint64_t)v);
  case TC_PRIM_REDUCE_PROD: return (int64_t)((uint64_t)acc * (uint64_t)v);
  case TC_PRIM_REDUCE_MAX: return v > acc ? v : acc;
  default: return v < acc ? v : acc;
  }
}

/* The identity each fold starts from: what an empty reduction gives. */
static double init_float(int32_t prim) { return tck_reduce_identity_f(prim, TC_F64); }

static int64_t init_int(int32_t prim, int32_t dtype) { return tck_reduce_identity_i(prim, dtype); }

static void reduce(const de_op *op, const split *s) {
  const de_tensor *x = &op->in[0], *out = op->out;
  int32_t prim = op->node->prim, dt = x->dtype;
  size_t item = tck_dtype_size((int32_t)out->dtype);
  int64_t n_out = de_numel(out->rank, out->sizes), n_red = de_numel(s->n_red, s->red_sizes);
  int64_t o[TC_MAX_RANK], r[TC_MAX_RANK];
  for (int64_t i = 0; i < n_out; i++) {
    de_unravel(i, out->rank, out->sizes, o);
    char *q = out->data + (size_t)i * item;
    if (de_is_float(dt)) {
      double acc = init_float(prim);
      for (int64_t j = 0; j < n_red; j++) {
        de_unravel(j, s->n_red, s->red_sizes, r);
        acc = fold_float(prim, acc, de_load_f(dt, element_at(x, s, o, r)));
      }
      de_store_f(dt, q, acc);
    } else {
      int64_t acc = init_int(prim, dt);
      for (int64_t j = 0; j < n_red; j++) {
        de_unravel(j, s->n_red, s->red_sizes, r);
        acc = fold_int(prim, acc, de_load_i(dt, element_at(x, s, o, r)));
      }
      de_store_i(dt, q, acc);
    }
  }
}

/* Is v a new extreme over best? NaN is the most extreme value; ties keep the first index. */
static bool beats(int32_t prim, double v, double best) {
  if (isnan(best)) return false;
  if (isnan(v)) return true;
  return prim == TC_PRIM_ARGMAX ? v > best : v < best;
}

static bool beats_int(int32_t prim, int64_t v, int64_t best) { return prim == TC_PRIM_ARGMAX ? v > best : v < best; }

static void argreduce(const de_op *op, const split *s) {
  const de_tensor *x = &op->in[0], *out = op->out;
  int32_t prim = op->node->prim, dt = x->dtype;
  int64_t n_out = de_numel(out->rank, out->sizes), len = s->red_sizes[0];
  int64_t o[TC_MAX_RANK], r[1];
  for (int64_t i = 0; i < n_out; i++) {
    de_unravel(i, out->rank, out->sizes, o);
    int64_t best_at = 0; /* also the answer for an empty dim */
    for (int64_t j = 1; j < len; j++) {
      r[0] = best_at;
      const char *pb = element_at(x, s, o, r);
      r[0] = j;
      const char *pv = element_at(x, s, o, r);
      bool better = de_is_float(dt) ? beats(prim, de_load_f(dt, pv), de_load_f(dt, pb))
                                    : beats_int(prim, de_load_i(dt, pv), de_load_i(dt, pb));
      if (better) best_at = j;
    }
    de_store_i(TC_I64, out->data + (size_t)i * sizeof(int64_t), best_at);
  }
}

tc_status de_exec_reduce(const de_op *op) {
  const de_tensor *x = &op->in[0];
  split s;
  DE_TRY(split_dims(op, x, op->node->n_iattrs, op->node->iattrs, &s));
  if (op->node->prim == TC_PRIM_ARGMAX || op->node->prim == TC_PRIM_ARGMIN) argreduce(op, &s);
  else reduce(op, &s);
  return TC_OK;
}
