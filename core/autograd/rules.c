/* rules.c — one derivative rule (vector-Jacobian product) per prim, written on the prim layer.
 * The rules follow PyTorch's derivatives.yaml where a choice exists: ties of max/min split the
 * gradient evenly, sign/floor/ceil/round have zero gradient, abs at 0 has 0 (sign(0) = 0), and
 * pow's gradients are masked where PyTorch masks them. Rules may recompute a cheap forward
 * value from the operands rather than keep it: inside a trace CSE merges it with the forward. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"

#define U(p, a) prim_unary(TC_PRIM_##p, (a))
#define B(p, a, b) prim_binary(TC_PRIM_##p, (a), (b))
#define K(like, v) k_like((like), (v))

/* A constant of like's shape and dtype. */
static tc_tensor *k_like(const tc_tensor *like, double v) {
  return like ? ops_full_like(like, v, like->dtype) : NULL;
}

static tc_tensor *zeros_like(const tc_tensor *x) {
  return ops_full_like(x, 0.0, x->dtype);
}

/* The node's int attributes as ints (reduced or reversed dims). */
static int attrs_int(const tape_node *n, int *out) {
  for (int i = 0; i < n->node.n_iattrs; i++)
    out[i] = (int)n->node.iattrs[i];
  return n->node.n_iattrs;
}

/* ---------------------------------------------------------------- elementwise */
static tc_tensor *unary_rule(tc_prim p, tc_tensor *x, tc_tensor *y, tc_tensor *g) {
  switch (p) {
  case TC_PRIM_NEG: return U(NEG, g);
  case TC_PRIM_ABS: return B(MUL, g, U(SIGN, x)); /* sign(0) = 0: PyTorch's subgradient */
  case TC_PRIM_EXP: return B(MUL, g, y);
  case TC_PRIM_LOG: return B(DIV, g, x);
  case TC_PRIM_SQRT: return B(DIV, g, B(MUL, y, K(y, 2.0)));
  case TC_PRIM_RSQRT: return B(MUL, B(MUL, g, K(g, -0.5)), B(MUL, y, B(MUL, y, y)));
  case TC_PRIM_SIN: return B(MUL, g, U(COS, x));
  case TC_PRIM_COS: return U(NEG, B(MUL, g, U(SIN, x)));
  case TC_PRIM_TANH: return B(MUL, g, B(SUB, K(y, 1.0), B(MUL, y, y)));
  case TC_PRIM_ERF: return B(MUL, B(MUL, g, K(g, 2.0 / sqrt(M_PI))), U(EXP, U(NEG, B(MUL, x, x))));
  case TC_PRIM_RECIPROCAL: return U(NEG, B(MUL, g, B(MUL, y, y)));
  case TC_PRIM_FLOOR:
  case TC_PRIM_CEIL:
  case TC_PRIM_ROUND:
  case TC_PRIM_SIGN: return zeros_like(x); /* piecewise constant */
  default: return core_error_null(TC_ERR_INTERNAL, "autograd: prim %s has no unary rule", prim_name(p));
  }
}

/* trunc(q), for fmod: rounds toward zero. */
static tc_tensor *trunc_of(tc_tensor *q) {
  return prim_where(B(LT, q, K(q, 0.0)), U(CEIL, q), U(FLOOR, q));
}

/* PyTorch's maximum/minimum backward: equal operands share the gradient, the losing side gets
 * 0, and NaN (unordered) gives both sides the whole gradient. `loses` is a < b for maximum's
 * a. */
static tc_tensor *extremum_side(tc_tensor *g, tc_tensor *loses, tc_tensor *a, tc_tensor *b) {
  tc_tensor *half = B(MUL, g, K(g, 0.5));
  return prim_where(loses, K(g, 0.0), prim_where(B(EQ, a, b), half, g));
}

static tc_status binary_rule(tc_prim p, tc_tensor *a, tc_tensor *b, tc_tensor *y, tc_tensor *g, const bool *need,
                             tc_tensor **dx) {
  switch (p) {
  case TC_PRIM_ADD: dx[0] = g, dx[1] = g; break;
  case TC_PRIM_SUB: dx[0] = g, dx[1] = need[1] ? U(NEG, g) : NULL; break;
  case TC_PRIM_MUL:
    dx[0] = need[0] ? B(MUL, g, b) : NULL;
    dx[1] = need[1] ? B(MUL, g, a) : NULL;
    break;
  case TC_PRIM_DIV:
    dx[0] = need[0] ? B(DIV, g, b) : NULL;
    dx[1] = need[1] ? U(NEG, B(MUL, g, B(DIV, B(DIV, a, b), b))) : NULL;
    break;
  case TC_PRIM_POW:
    /* a^b: d/da = b a^(b-1), 0 where b == 0; d/db = a^b log a, 0 where a == 0 and b >= 0. */
    if (need[0]) {
      tc_tensor *d = B(MUL, b, B(POW, a, B(SUB, b, K(b, 1.0))));
      dx[0] = prim_where(B(EQ, b, K(b, 0.0)), K(g, 0.0), B(MUL, g, d));
    }
    if (need[1]) {
      tc_tensor *mask = B(AND, B(EQ, a, K(a, 0.0)), B(GE, b, K(b, 0.0)));
      dx[1] = prim_where(mask, K(g, 0.0), B(MUL, g, B(MUL, y, U(LOG, a))));
    }
    break;
  case TC_PRIM_MAX:
    dx[0] = need[0] ? extremum_side(g, B(LT, a, b), a, b) : NULL;
    dx[1] = need[1] ? extremum_side(g, B(GT, a, b), a, b) : NULL;
    break;
  case TC_PRIM_MIN:
    dx[0] = need[0] ? extremum_side(g, B(GT, a, b), a, b) : NULL;
    dx[1] = need[1] ? extremum_side(g, B(LT, a, b), a, b) : NULL;
    break;
  case TC_PRIM_REMAINDER: /* a - floor(a/b) b */
    dx[0] = g;
    dx[1] = need[1] ? U(NEG, B(MUL, g, U(FLOOR, B(DIV, a, b)))) : NULL;
    break;
  case TC_PRIM_FMOD: /* a - trunc(a/b) b */
    dx[0] = g;
    dx[1] = need[1] ? U(NEG, B(MUL, g, trunc_of(B(DIV, a, b)))) : NULL;
    break;
  default: return core_error(TC_ERR_INTERNAL, "autograd: prim %s has no binary rule", prim_name(p));
  }
  return TC_OK;
}

/* ---------------------------------------------------------------- reductions */
/* y = reduce(x) over dims; g has y's shape. Each helper returns dL/dx. */
static tc_tensor *max_min_rule(tc_tensor *x, tc_tensor *y, tc_tensor *g, int n, const int *dims) {
  /* amax/amin: the gradient is split evenly among the elements equal to the result (NaN
   * equals NaN here, so a NaN result sends its gradient to the NaNs). */
  tc_tensor *yb = ops_unreduce(y, x, n, dims);
  tc_tensor *hit = B(OR, B(EQ, x, yb), B(AND, U(ISNAN, x), U(ISNAN, yb)));
  tc_tensor *m = prim_convert(hit, x->dtype);
  tc_tensor *count = ops_unreduce(prim_reduce(TC_PRIM_REDUCE_SUM, m, n, dims), x, n, dims);
  return B(DIV, B(MUL, m, ops_unreduce(g, x, n, dims)), count);
}

static tc_tensor *prod_rule(tc_tensor *x, tc_tensor *y, tc_tensor *g, int n, const int *dims) {
  /* The product of the other elements: y / x without zeros; with one zero, the product of the
   * rest at the zero and 0 elsewhere; with two or more, 0 everywhere. */
  tc_tensor *zero = B(EQ, x, K(x, 0.0));
  tc_tensor *zeros = ops_reduce_back(TC_PRIM_REDUCE_SUM, prim_convert(zero, x->dtype), n, dims);
  tc_tensor *rest = ops_reduce_back(TC_PRIM_REDUCE_PROD, prim_where(zero, K(x, 1.0), x), n, dims);
  tc_tensor *one_zero = B(AND, B(EQ, zeros, K(zeros, 1.0)), zero);
  tc_tensor *d = prim_where(B(EQ, zeros, K(zeros, 0.0)), B(DIV, ops_unreduce(y, x, n, dims), x),
                            prim_where(one_zero, rest, K(x, 0.0)));
  return B(MUL, ops_unreduce(g, x, n, dims), d);
}

/* ---------------------------------------------------------------- movement */
/* Sums g over the dims a broadcast repeated, back to x's shape. */
static tc_tensor *broadcast_rule(const tape_node *nd, tc_tensor *x, tc_tensor *g) {
  int sum_dims[TC_MAX_RANK], n = 0, k = 0;
  for (int d = 0; d < g->rank; d++) {
    bool mapped = k < x->rank && nd->node.iattrs[k] == d;
    bool same = mapped && ops_sz_same(sz_of(x, k), sz_of(g, d));
    if (mapped) k++;
    if (!same) sum_dims[n++] = d;
  }
  tc_tensor *r = n ? prim_reduce(TC_PRIM_REDUCE_SUM, g, n, sum_dims) : g;
  tc_sz shape[TC_MAX_RANK];
  ops_shape_sz(x, shape);
  return prim_reshape(r, x->rank, shape);
}

/* g placed back at positions start + i*step of dim d, whose full size is `full`; zeros
 * elsewhere. A pad when step is 1 and the sizes are static (it fuses as a pointwise op), a
 * scatter-add of an iota otherwise. */
static tc_tensor *unslice_dim(tc_tensor *g, int d, int64_t start, int64_t step, tc_sz full) {
  if (!g) return NULL;
  tc_sz shape[TC_MAX_RANK];
  ops_shape_sz(g, shape);
  if (step == 1 && sz_is_static(full) && sz_is_static(shape[d])) {
    int64_t lo[TC_MAX_RANK] = {0}, hi[TC_MAX_RANK] = {0};
    lo[d] = start;
    hi[d] = full.v - start - shape[d].v;
    return prim_pad(g, lo, hi, 0.0);
  }
  tc_tensor *index = prim_iota(TC_I64, g->rank, shape, d);
  index = ops_binary_scalar(TC_PRIM_ADD, ops_binary_scalar(TC_PRIM_MUL, index, (double)step), (double)start);
  shape[d] = full;
  return prim_scatter_add(prim_constant(0.0, g->dtype, g->rank, shape), d, index, g, GRAPH_INDEX_PRIM);
}

static tc_tensor *slice_rule(const tape_node *nd, tc_tensor *x, tc_tensor *g) {
  const int r = x->rank;
  for (int d = 0; d < r && g; d++) {
    int64_t start = nd->node.iattrs[d], step = nd->node.iattrs[r + d];
    if (start == 0 && step == 1 && ops_sz_same(sz_of(g, d), sz_of(x, d))) continue;
    g = unslice_dim(g, d, start, step, sz_of(x, d));
  }
  return g;
}

static tc_tensor *pad_rule(const tape_node *nd, tc_tensor *x, tc_tensor *g) {
  int64_t start[TC_MAX_RANK], step[TC_MAX_RANK];
  tc_sz size[TC_MAX_RANK];
  for (int d = 0; d < x->rank; d++)
    start[d] = nd->node.iattrs[d], step[d] = 1;
  ops_shape_sz(x, size);
  return prim_slice(g, start, step, size);
}

static tc_status concat_rule(const tape_node *nd, tc_tensor *g, const bool *need, tc_tensor **dx) {
  const int d = (int)nd->node.iattrs[0];
  int64_t offset = 0;
  for (int i = 0; i < nd->n_in; i++) {
    const tc_tensor *x = nd->in[i];
    int64_t start[TC_MAX_RANK] = {0}, step[TC_MAX_RANK];
    tc_sz size[TC_MAX_RANK];
    for (int k = 0; k < x->rank; k++)
      step[k] = 1;
    ops_shape_sz(x, size);
    start[d] = offset;
    if (need[i]) {
      dx[i] = prim_slice(g, start, step, size);
      if (!dx[i]) return tc_last_status();
    }
    /* Slice starts are constants: a later operand's offset cannot follow a dynamic size. */
    if (!sz_is_static(size[d]) && i + 1 < nd->n_in)
      return core_error(TC_ERR_UNSUPPORTED,
                        "autograd: the gradient of a concatenation along dim %d needs static sizes there (operand %d "
                        "has a dynamic size %lld)",
                        d, i, (long long)size[d].v);
    offset += size[d].v;
  }
  return TC_OK;
}

static tc_tensor *matmul_t(tc_tensor *m) {
  if (!m) return NULL;
  int perm[TC_MAX_RANK];
  for (int i = 0; i < m->rank; i++)
    perm[i] = i;
  perm[m->rank - 2] = m->rank - 1, perm[m->rank - 1] = m->rank - 2;
  return prim_permute(m, perm);
}

/* ---------------------------------------------------------------- the rule of each prim */
static tc_status rule_of(const tape_node *nd, tc_tensor *y, tc_tensor *g, const bool *need, tc_tensor **dx) {
  const tc_prim p = nd->node.prim;
  tc_tensor *x = nd->n_in > 0 ? nd->in[0] : NULL;
  int dims[TC_MAX_RANK];
  if (p >= TC_PRIM_NEG && p <= TC_PRIM_RECIPROCAL) {
    dx[0] = unary_rule(p, x, y, g);
    return TC_OK;
  }
  if ((p >= TC_PRIM_ADD && p <= TC_PRIM_REMAINDER) || p == TC_PRIM_FMOD)
    return binary_rule(p, nd->in[0], nd->in[1], y, g, need, dx);
  switch (p) {
  case TC_PRIM_WHERE: {
    tc_tensor *cond = nd->in[0];
    if (need[1]) dx[1] = prim_where(cond, g, K(g, 0.0));
    if (need[2]) dx[2] = prim_where(cond, K(g, 0.0), g);
    return TC_OK;
  }
  case TC_PRIM_CONVERT: dx[0] = prim_convert(g, x->dtype); return TC_OK;
  case TC_PRIM_REDUCE_SUM: dx[0] = ops_unreduce(g, x, attrs_int(nd, dims), dims); return TC_OK;
  case TC_PRIM_REDUCE_MAX:
  case TC_PRIM_REDUCE_MIN: dx[0] = max_min_rule(x, y, g, attrs_int(nd, dims), dims); return TC_OK;
  case TC_PRIM_REDUCE_PROD: dx[0] = prod_rule(x, y, g, attrs_int(nd, dims), dims); return TC_OK;
  case TC_PRIM_RESHAPE: {
    tc_sz shape[TC_MAX_RANK];
    ops_shape_sz(x, shape);
    dx[0] = prim_reshape(g, x->rank, shape);
    return TC_OK;
  }
  case TC_PRIM_BROADCAST_IN_DIM: dx[0] = broadcast_rule(nd, x, g); return TC_OK;
  case TC_PRIM_PERMUTE: {
    int inv[TC_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
      inv[nd->node.iattrs[i]] = i;
    dx[0] = prim_permute(g, inv);
    return TC_OK;
  }
  case TC_PRIM_SLICE: dx[0] = slice_rule(nd, x, g); return TC_OK;
  case TC_PRIM_PAD: dx[0] = pad_rule(nd, x, g); return TC_OK;
  case TC_PRIM_CONCATENATE: return concat_rule(nd, g, need, dx);
  case TC_PRIM_REVERSE: dx[0] = prim_reverse(g, attrs_int(nd, dims), dims); return TC_OK;
  /* The gradient reads the forward's index: an out-of-range value is named as the forward op. */
  case TC_PRIM_GATHER:
    dx[0] = prim_scatter_add(zeros_like(x), (int)nd->node.iattrs[0], nd->in[1], g, (graph_index_op)nd->node.index_op);
    return TC_OK;
  case TC_PRIM_SCATTER_ADD:
    if (need[0]) dx[0] = g;
    if (need[2]) dx[2] = prim_gather(g, (int)nd->node.iattrs[0], nd->in[1], (graph_index_op)nd->node.index_op);
    return TC_OK;
  case TC_PRIM_MATMUL:
    if (need[0]) dx[0] = prim_matmul(g, matmul_t(nd->in[1]));
    if (need[1]) dx[1] = prim_matmul(matmul_t(nd->in[0]), g);
    return TC_OK;
  default: return core_error(TC_ERR_UNSUPPORTED, "autograd: prim %s has no derivative rule", prim_name(p));
  }
}

tc_status grad_rule(const tape_node *nd, tc_tensor *y, tc_tensor *g, tc_tensor **dx) {
  bool small[8], *need = nd->n_in <= 8 ? small : calloc((size_t)nd->n_in, sizeof *need);
  if (!need) return core_error(TC_ERR_OUT_OF_MEMORY, "autograd: out of memory");
  bool any = false;
  for (int i = 0; i < nd->n_in; i++) {
    dx[i] = NULL;
    need[i] = tape_needs_grad(nd->in[i]);
    any |= need[i];
  }
  tc_status s = !any ? TC_OK : nd->vjp ? nd->vjp(nd->ctx, y, g, dx) : rule_of(nd, y, g, need, dx);
  for (int i = 0; s == TC_OK && i < nd->n_in; i++) {
    if (!need[i])
      dx[i] = NULL; /* a rule may fill every side; keep only those asked for */
    else if (!dx[i]) {
      s = tc_last_status();
      if (s == TC_OK)
        s = core_error(TC_ERR_INTERNAL, "autograd: %s gave no gradient for operand %d",
                       nd->vjp ? "a compiled call" : prim_name(nd->node.prim), i);
    }
  }
  if (need != small) free(need);
  return s;
}
