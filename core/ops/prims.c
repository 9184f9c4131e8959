/* prims.c — the prim layer: operand checks, result dtype and (symbolic) shape, then recording
 * into the current trace or running eagerly. The rules are docs/primitives.md's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"

#define SHAPE_CAP 160

static char *shape_of(const tc_tensor *t, char *buf) {
  return tc_shape_str(buf, SHAPE_CAP, t->rank, t->sizes);
}

static char *shape_sz(int rank, const tc_sz *s, char *buf) {
  int64_t v[TC_MAX_RANK];
  for (int i = 0; i < rank && i < TC_MAX_RANK; i++)
    v[i] = s[i].v;
  return tc_shape_str(buf, SHAPE_CAP, rank, v);
}

static tc_node node_make(tc_prim p, tc_dtype dtype, int rank) {
  tc_node n;
  memset(&n, 0, sizeof n);
  n.prim = p;
  n.out.dtype = dtype;
  n.out.rank = rank;
  for (int i = 0; i < TC_MAX_RANK; i++)
    n.out.shape[i] = -1;
  return n;
}

/* Records the node when an operand is traced (or a creation prim runs while tracing); otherwise
 * runs it now. */
static tc_tensor *dispatch(tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape, bool creation) {
  struct tc_trace *tr = ops_trace_current();
  bool traced = creation && tr;
  for (int i = 0; i < n_in; i++) {
    if (!tensor_is_proxy(in[i])) continue;
    if (in[i]->trace != tr)
      return core_error_null(TC_ERR_INVALID_ARGUMENT,
                           "prim %s: operand %d belongs to a trace that is not being recorded (a tensor of a "
                           "compiled function used outside it?)",
                           prim_name(node->prim), i);
    traced = true;
  }
  tc_tensor *y = traced ? ops_record(tr, node, n_in, in, shape) : ops_run_eager(node, n_in, in, shape);
  if (y && !tape_attach(y, node, n_in, in)) {
    tc_release(y);
    return NULL;
  }
  return y;
}

/* ---------------------------------------------------------------- checks */
typedef enum dkind { DK_FLOAT = 1, DK_INT = 2, DK_BOOL = 4 } dkind;

static bool dtype_known(tc_dtype d) {
  return d == TC_F32 || d == TC_F64 || d == TC_I32 || d == TC_I64 || d == TC_BOOL;
}

static unsigned dtype_kind(tc_dtype d) {
  if (!dtype_known(d)) return 0;
  return dtype_is_float(d) ? DK_FLOAT : dtype_is_int(d) ? DK_INT : DK_BOOL;
}

static const char *kinds_text(unsigned kinds) {
  switch (kinds) {
  case DK_FLOAT: return "floats only";
  case DK_INT | DK_FLOAT: return "ints and floats only";
  case DK_BOOL: return "bool only";
  case DK_BOOL | DK_INT: return "bool or ints only";
  case DK_FLOAT | DK_INT | DK_BOOL: return "f32, f64, i32, i64 or bool";
  case DK_INT: return "i32 or i64 only";
  default: return "not accepted";
  }
}

static bool check_kind(tc_prim p, const char *arg, tc_dtype d, unsigned kinds) {
  if (dtype_kind(d) & kinds) return true;
  if (arg)
    core_error(TC_ERR_INVALID_ARGUMENT, "prim %s: %s: dtype %s not supported (%s)", prim_name(p), arg, tc_dtype_name(d),
             kinds_text(kinds));
  else
    core_error(TC_ERR_INVALID_ARGUMENT, "prim %s: dtype %s not supported (%s)", prim_name(p), tc_dtype_name(d),
             kinds_text(kinds));
  return false;
}

static bool check_same_shape(tc_prim p, const char *an, const tc_tensor *a, const char *bn, const tc_tensor *b) {
  bool same = a->rank == b->rank;
  for (int i = 0; same && i < a->rank; i++)
    same = sz_eq(sz_of(a, i), sz_of(b, i));
  if (same) return true;
  char sa[SHAPE_CAP], sb[SHAPE_CAP];
  core_error(TC_ERR_INVALID_ARGUMENT, "prim %s: shapes differ (%s: %s, %s: %s)", prim_name(p), an, shape_of(a, sa), bn,
           shape_of(b, sb));
  return false;
}

static bool check_same_dtype(tc_prim p, const char *an, const tc_tensor *a, const char *bn, const tc_tensor *b) {
  if (a->dtype == b->dtype) return true;
  core_error(TC_ERR_INVALID_ARGUMENT, "prim %s: dtypes differ (%s: %s, %s: %s)", prim_name(p), an,
           tc_dtype_name(a->dtype), bn, tc_dtype_name(b->dtype));
  return false;
}

static bool check_rank(tc_prim p, int rank) {
  if (rank >= 0 && rank <= TC_MAX_RANK) return true;
  core_error(TC_ERR_INVALID_ARGUMENT, "prim %s: rank %d out of range (0..%d)", prim_name(p), rank, TC_MAX_RANK);
  return false;
}

static bool check_shape(tc_prim p, int rank, const tc_sz *shape) {
  if (!check_rank(p, rank)) return false;
  if (rank > 0 && !shape) {
    core_error(TC_ERR_INVALID_ARGUMENT, "prim %s: shape is NULL", prim_name(p));
    return false;
  }
  for (int i = 0; i < rank; i++)
    if (shape[i].v < 0) {
      char s[SHAPE_CAP];
      core_error(TC_ERR_INVALID_ARGUMENT, "prim %s: negative size at dim %d (shape %s)", prim_name(p), i,
               shape_sz(rank, shape, s));
      return false;
    }
  return true;
}

/* Normalizes dims (negative count from the end), sorts them, rejects repeats; writes them to
 * out. */
static bool dims_sorted(tc_prim p, int rank, int n, const int *dims, int64_t *out) {
  if (n < 0 || n > rank || (n > 0 && !dims)) {
    core_error(TC_ERR_INVALID_ARGUMENT, "prim %s: %d dims given for a tensor of rank %d", prim_name(p), n, rank);
    return false;
  }
  char what[64];
  snprintf(what, sizeof what, "prim %s", prim_name(p));
  for (int i = 0; i < n; i++) {
    int d = tensor_dim(what, dims[i], rank);
    if (d < 0) return false;
    int j = i;
    while (j > 0 && out[j - 1] > d) {
      out[j] = out[j - 1];
      j--;
    }
    if (j > 0 && out[j - 1] == d) {
      core_error(TC_ERR_INVALID_ARGUMENT, "prim %s: dim %d listed twice", prim_name(p), d);
      return false;
    }
    out[j] = d;
  }
  return true;
}

static void sizes_of(const tc_tensor *x, tc_sz *out) {
  for (int i = 0; i < x->rank; i++)
    out[i] = sz_of(x, i);
}

/* ---------------------------------------------------------------- elementwise */
static unsigned unary_kinds(tc_prim p) {
  switch (p) {
  case TC_PRIM_EXP:
  case TC_PRIM_LOG:
  case TC_PRIM_SQRT:
  case TC_PRIM_RSQRT:
  case TC_PRIM_SIN:
  case TC_PRIM_COS:
  case TC_PRIM_TANH:
  case TC_PRIM_ERF:
  case TC_PRIM_RECIPROCAL:
  case TC_PRIM_ISNAN: return DK_FLOAT;
  case TC_PRIM_NEG:
  case TC_PRIM_ABS:
  case TC_PRIM_SIGN:
  case TC_PRIM_FLOOR:
  case TC_PRIM_CEIL:
  case TC_PRIM_ROUND: return DK_INT | DK_FLOAT;
  case TC_PRIM_LOGICAL_NOT: return DK_BOOL;
  default: return 0;
  }
}

tc_tensor *prim_unary(tc_prim p, tc_tensor *x) {
  if (!x) return NULL;
  unsigned kinds = unary_kinds(p);
  if (!kinds)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim_unary: %s (id %d) is not a unary prim", prim_name(p), (int)p);
  if (!check_kind(p, NULL, x->dtype, kinds)) return NULL;
  tc_node n = node_make(p, p == TC_PRIM_ISNAN ? TC_BOOL : x->dtype, x->rank);
  tc_sz shape[TC_MAX_RANK];
  sizes_of(x, shape);
  return dispatch(&n, 1, &x, shape, false);
}

static unsigned binary_kinds(tc_prim p, bool *to_bool) {
  *to_bool = false;
  switch (p) {
  case TC_PRIM_ADD:
  case TC_PRIM_SUB:
  case TC_PRIM_MUL:
  case TC_PRIM_DIV:
  case TC_PRIM_MAX:
  case TC_PRIM_MIN:
  case TC_PRIM_REMAINDER:
  case TC_PRIM_FMOD: return DK_INT | DK_FLOAT;
  case TC_PRIM_POW: return DK_FLOAT;
  case TC_PRIM_EQ:
  case TC_PRIM_NE:
  case TC_PRIM_LT:
  case TC_PRIM_LE:
  case TC_PRIM_GT:
  case TC_PRIM_GE: *to_bool = true; return DK_INT | DK_FLOAT | DK_BOOL;
  case TC_PRIM_AND:
  case TC_PRIM_OR: return DK_BOOL | DK_INT;
  default: return 0;
  }
}

tc_tensor *prim_binary(tc_prim p, tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  bool to_bool;
  unsigned kinds = binary_kinds(p, &to_bool);
  if (!kinds)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim_binary: %s (id %d) is not a binary prim", prim_name(p), (int)p);
  if (!check_same_dtype(p, "a", a, "b", b) || !check_kind(p, NULL, a->dtype, kinds) ||
      !check_same_shape(p, "a", a, "b", b))
    return NULL;
  tc_node n = node_make(p, to_bool ? TC_BOOL : a->dtype, a->rank);
  tc_sz shape[TC_MAX_RANK];
  sizes_of(a, shape);
  tc_tensor *in[2] = {a, b};
  return dispatch(&n, 2, in, shape, false);
}

tc_tensor *prim_where(tc_tensor *cond, tc_tensor *a, tc_tensor *b) {
  if (!cond || !a || !b) return NULL;
  const tc_prim p = TC_PRIM_WHERE;
  if (!check_kind(p, "cond", cond->dtype, DK_BOOL) || !check_same_dtype(p, "a", a, "b", b) ||
      !check_kind(p, NULL, a->dtype, DK_FLOAT | DK_INT | DK_BOOL) || !check_same_shape(p, "cond", cond, "a", a) ||
      !check_same_shape(p, "a", a, "b", b))
    return NULL;
  tc_node n = node_make(p, a->dtype, a->rank);
  tc_sz shape[TC_MAX_RANK];
  sizes_of(a, shape);
  tc_tensor *in[3] = {cond, a, b};
  return dispatch(&n, 3, in, shape, false);
}

tc_tensor *prim_convert(tc_tensor *x, tc_dtype to) {
  if (!x) return NULL;
  const tc_prim p = TC_PRIM_CONVERT;
  if (!check_kind(p, "x", x->dtype, DK_FLOAT | DK_INT | DK_BOOL) ||
      !check_kind(p, "target", to, DK_FLOAT | DK_INT | DK_BOOL))
    return NULL;
  tc_node n = node_make(p, to, x->rank);
  tc_sz shape[TC_MAX_RANK];
  sizes_of(x, shape);
  return dispatch(&n, 1, &x, shape, false);
}

/* ---------------------------------------------------------------- reductions */
tc_tensor *prim_reduce(tc_prim p, tc_tensor *x, int n_dims, const int *dims) {
  if (!x) return NULL;
  unsigned kinds;
  switch (p) {
  case TC_PRIM_REDUCE_SUM:
  case TC_PRIM_REDUCE_PROD:
  case TC_PRIM_REDUCE_MAX:
  case TC_PRIM_REDUCE_MIN: kinds = DK_INT | DK_FLOAT; break;
  default:
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim_reduce: %s (id %d) is not a reduction", prim_name(p), (int)p);
  }
  if (!check_kind(p, NULL, x->dtype, kinds)) return NULL;
  if (n_dims < 1)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim %s: at least one dim to reduce is needed (got %d)",
                         prim_name(p), n_dims);
  tc_node n = node_make(p, x->dtype, x->rank - n_dims);
  if (!dims_sorted(p, x->rank, n_dims, dims, n.iattrs)) return NULL;
  n.n_iattrs = n_dims;
  tc_sz shape[TC_MAX_RANK];
  int r = 0;
  for (int i = 0, k = 0; i < x->rank; i++) {
    if (k < n_dims && n.iattrs[k] == i) {
      k++;
      continue;
    }
    shape[r++] = sz_of(x, i);
  }
  return dispatch(&n, 1, &x, shape, false);
}

tc_tensor *prim_argreduce(tc_prim p, tc_tensor *x, int dim) {
  if (!x) return NULL;
  if (p != TC_PRIM_ARGMAX && p != TC_PRIM_ARGMIN)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim_argreduce: %s (id %d) is not argmax/argmin", prim_name(p),
                         (int)p);
  if (!check_kind(p, NULL, x->dtype, DK_INT | DK_FLOAT)) return NULL;
  char what[64];
  snprintf(what, sizeof what, "prim %s", prim_name(p));
  int d = tensor_dim(what, dim, x->rank);
  if (d < 0) return NULL;
  tc_node n = node_make(p, TC_I64, x->rank - 1);
  n.iattrs[0] = d;
  n.n_iattrs = 1;
  tc_sz shape[TC_MAX_RANK];
  for (int i = 0, r = 0; i < x->rank; i++)
    if (i != d) shape[r++] = sz_of(x, i);
  return dispatch(&n, 1, &x, shape, false);
}

/* ---------------------------------------------------------------- movement */
tc_tensor *prim_reshape(tc_tensor *x, int rank, const tc_sz *shape) {
  if (!x) return NULL;
  const tc_prim p = TC_PRIM_RESHAPE;
  if (!check_shape(p, rank, shape)) return NULL;
  tc_sz want = sz_const(1);
  for (int i = 0; i < rank; i++)
    want = sz_mul(want, shape[i]);
  tc_sz have = sz_numel(x);
  if (!sz_eq(have, want)) {
    char sx[SHAPE_CAP], ss[SHAPE_CAP];
    return core_error_null(TC_ERR_INVALID_ARGUMENT,
                         "prim reshape: element counts differ (x: %s has %lld, shape %s has %lld)", shape_of(x, sx),
                         (long long)have.v, shape_sz(rank, shape, ss), (long long)want.v);
  }
  tc_node n = node_make(p, x->dtype, rank);
  return dispatch(&n, 1, &x, shape, false);
}

tc_tensor *prim_broadcast_in_dim(tc_tensor *x, int rank, const tc_sz *shape, const int *bdims) {
  if (!x) return NULL;
  const tc_prim p = TC_PRIM_BROADCAST_IN_DIM;
  if (!check_shape(p, rank, shape)) return NULL;
  char sx[SHAPE_CAP], ss[SHAPE_CAP];
  if (rank < x->rank)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim broadcast_in_dim: result rank %d is below x's (x: %s)", rank,
                         shape_of(x, sx));
  if (x->rank > 0 && !bdims) return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim broadcast_in_dim: bdims is NULL");
  tc_node n = node_make(p, x->dtype, rank);
  for (int i = 0; i < x->rank; i++) {
    int b = bdims[i];
    if (b < 0 || b >= rank || (i > 0 && b <= bdims[i - 1]))
      return core_error_null(
          TC_ERR_INVALID_ARGUMENT,
          "prim broadcast_in_dim: bdims[%d] = %d must be in 0..%d and above bdims[%d] (x: %s, shape %s)", i, b,
          rank - 1, i - 1, shape_of(x, sx), shape_sz(rank, shape, ss));
    tc_sz xs = sz_of(x, i);
    /* Try the test that needs no guard first: a static 1, then equality, then a dynamic 1. */
    bool ok = (sz_is_static(xs) && xs.v == 1) || sz_eq(xs, shape[b]) || sz_eq_const(xs, 1);
    if (!ok)
      return core_error_null(TC_ERR_INVALID_ARGUMENT,
                           "prim broadcast_in_dim: x's dim %d (size %lld) is neither 1 nor the result's size %lld at "
                           "dim %d (x: %s, shape %s)",
                           i, (long long)xs.v, (long long)shape[b].v, b, shape_of(x, sx), shape_sz(rank, shape, ss));
    n.iattrs[i] = b;
  }
  n.n_iattrs = x->rank;
  return dispatch(&n, 1, &x, shape, false);
}

tc_tensor *prim_permute(tc_tensor *x, const int *perm) {
  if (!x) return NULL;
  const tc_prim p = TC_PRIM_PERMUTE;
  if (x->rank > 0 && !perm) return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim permute: perm is NULL");
  tc_node n = node_make(p, x->dtype, x->rank);
  tc_sz shape[TC_MAX_RANK];
  bool seen[TC_MAX_RANK] = {false};
  for (int i = 0; i < x->rank; i++) {
    int d = tensor_dim("prim permute", perm[i], x->rank);
    if (d < 0) return NULL;
    if (seen[d]) {
      char sx[SHAPE_CAP];
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim permute: dim %d appears twice in perm (x: %s)", d,
                           shape_of(x, sx));
    }
    seen[d] = true;
    n.iattrs[i] = d;
    shape[i] = sz_of(x, d);
  }
  n.n_iattrs = x->rank;
  return dispatch(&n, 1, &x, shape, false);
}

tc_tensor *prim_slice(tc_tensor *x, const int64_t *start, const int64_t *step, const tc_sz *size) {
  if (!x) return NULL;
  const tc_prim p = TC_PRIM_SLICE;
  const int r = x->rank;
  if (r > 0 && (!start || !step || !size))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim slice: start, step and size are required");
  char sx[SHAPE_CAP];
  tc_node n = node_make(p, x->dtype, r);
  for (int i = 0; i < r; i++) {
    if (start[i] < 0 || step[i] < 1 || size[i].v < 0)
      return core_error_null(TC_ERR_INVALID_ARGUMENT,
                           "prim slice: dim %d: start %lld must be >= 0, step %lld >= 1, size %lld >= 0 (x: %s)", i,
                           (long long)start[i], (long long)step[i], (long long)size[i].v, shape_of(x, sx));
    if (size[i].v > 0 && start[i] + (size[i].v - 1) * step[i] >= x->sizes[i])
      return core_error_null(
          TC_ERR_INVALID_ARGUMENT, "prim slice: dim %d: %lld elements from %lld by %lld run past size %lld (x: %s)", i,
          (long long)size[i].v, (long long)start[i], (long long)step[i], (long long)x->sizes[i], shape_of(x, sx));
    n.iattrs[i] = start[i];
    n.iattrs[r + i] = step[i];
  }
  n.n_iattrs = 2 * r;
  return dispatch(&n, 1, &x, size, false);
}

tc_tensor *prim_pad(tc_tensor *x, const int64_t *lo, const int64_t *hi, double value) {
  if (!x) return NULL;
  const tc_prim p = TC_PRIM_PAD;
  const int r = x->rank;
  if (r > 0 && (!lo || !hi)) return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim pad: lo and hi are required");
  tc_node n = node_make(p, x->dtype, r);
  tc_sz shape[TC_MAX_RANK];
  for (int i = 0; i < r; i++) {
    if (lo[i] < 0 || hi[i] < 0) {
      char sx[SHAPE_CAP];
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim pad: dim %d: lo %lld and hi %lld must be >= 0 (x: %s)", i,
                           (long long)lo[i], (long long)hi[i], shape_of(x, sx));
    }
    n.iattrs[i] = lo[i];
    n.iattrs[r + i] = hi[i];
    shape[i] = sz_add(sz_add(sz_of(x, i), sz_const(lo[i])), sz_const(hi[i]));
  }
  n.n_iattrs = 2 * r;
  n.fattr = value;
  return dispatch(&n, 1, &x, shape, false);
}

tc_tensor *prim_concatenate(int count, tc_tensor *const *xs, int dim) {
  const tc_prim p = TC_PRIM_CONCATENATE;
  if (count < 1 || !xs)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim concatenate: at least one tensor is needed (got %d)", count);
  for (int i = 0; i < count; i++)
    if (!xs[i]) return NULL;
  const tc_tensor *x0 = xs[0];
  int d = tensor_dim("prim concatenate", dim, x0->rank);
  if (d < 0) return NULL;
  tc_sz shape[TC_MAX_RANK];
  sizes_of(x0, shape);
  for (int i = 1; i < count; i++) {
    const tc_tensor *x = xs[i];
    char s0[SHAPE_CAP], si[SHAPE_CAP];
    char name[32];
    snprintf(name, sizeof name, "xs[%d]", i);
    if (!check_same_dtype(p, "xs[0]", x0, name, x)) return NULL;
    bool ok = x->rank == x0->rank;
    for (int k = 0; ok && k < x->rank; k++)
      if (k != d) ok = sz_eq(sz_of(x, k), sz_of(x0, k));
    if (!ok)
      return core_error_null(TC_ERR_INVALID_ARGUMENT,
                           "prim concatenate: shapes differ outside dim %d (xs[0]: %s, xs[%d]: %s)", d,
                           shape_of(x0, s0), i, shape_of(x, si));
    shape[d] = sz_add(shape[d], sz_of(x, d));
  }
  tc_node n = node_make(p, x0->dtype, x0->rank);
  n.iattrs[0] = d;
  n.n_iattrs = 1;
  return dispatch(&n, count, xs, shape, false);
}

tc_tensor *prim_reverse(tc_tensor *x, int n_dims, const int *dims) {
  if (!x) return NULL;
  const tc_prim p = TC_PRIM_REVERSE;
  tc_node n = node_make(p, x->dtype, x->rank);
  if (!dims_sorted(p, x->rank, n_dims, dims, n.iattrs)) return NULL;
  n.n_iattrs = n_dims;
  tc_sz shape[TC_MAX_RANK];
  sizes_of(x, shape);
  return dispatch(&n, 1, &x, shape, false);
}

/* ---------------------------------------------------------------- indexing */
/* index: i32/i64 of x's rank, no larger than x outside dim. */
static bool check_index(tc_prim p, const tc_tensor *x, int d, const tc_tensor *index) {
  char sx[SHAPE_CAP], si[SHAPE_CAP];
  if (!check_kind(p, "index", index->dtype, DK_INT)) return false;
  if (index->rank != x->rank) {
    core_error(TC_ERR_INVALID_ARGUMENT, "prim %s: index has rank %d, x has %d (x: %s, index: %s)", prim_name(p),
             index->rank, x->rank, shape_of(x, sx), shape_of(index, si));
    return false;
  }
  for (int k = 0; k < x->rank; k++)
    if (k != d && index->sizes[k] > x->sizes[k]) {
      core_error(TC_ERR_INVALID_ARGUMENT, "prim %s: index is larger than x at dim %d (x: %s, index: %s)", prim_name(p), k,
               shape_of(x, sx), shape_of(index, si));
      return false;
    }
  return true;
}

tc_tensor *prim_gather(tc_tensor *x, int dim, tc_tensor *index, graph_index_op op) {
  if (!x || !index) return NULL;
  const tc_prim p = TC_PRIM_GATHER;
  int d = tensor_dim("prim gather", dim, x->rank);
  if (d < 0 || !check_kind(p, "x", x->dtype, DK_FLOAT | DK_INT | DK_BOOL) || !check_index(p, x, d, index)) return NULL;
  tc_node n = node_make(p, x->dtype, index->rank);
  n.iattrs[0] = d;
  n.n_iattrs = 1;
  n.index_op = op;
  tc_sz shape[TC_MAX_RANK];
  sizes_of(index, shape);
  tc_tensor *in[2] = {x, index};
  return dispatch(&n, 2, in, shape, false);
}

tc_tensor *prim_scatter_add(tc_tensor *x, int dim, tc_tensor *index, tc_tensor *src, graph_index_op op) {
  if (!x || !index || !src) return NULL;
  const tc_prim p = TC_PRIM_SCATTER_ADD;
  int d = tensor_dim("prim scatter_add", dim, x->rank);
  if (d < 0 || !check_kind(p, "x", x->dtype, DK_FLOAT | DK_INT) || !check_same_dtype(p, "x", x, "src", src) ||
      !check_index(p, x, d, index) || !check_same_shape(p, "index", index, "src", src))
    return NULL;
  tc_node n = node_make(p, x->dtype, x->rank);
  n.iattrs[0] = d;
  n.n_iattrs = 1;
  n.index_op = op;
  tc_sz shape[TC_MAX_RANK];
  sizes_of(x, shape);
  tc_tensor *in[3] = {x, index, src};
  return dispatch(&n, 3, in, shape, false);
}

/* ---------------------------------------------------------------- creation */
tc_tensor *prim_iota(tc_dtype dtype, int rank, const tc_sz *shape, int dim) {
  const tc_prim p = TC_PRIM_IOTA;
  if (!check_kind(p, NULL, dtype, DK_INT | DK_FLOAT) || !check_shape(p, rank, shape)) return NULL;
  int d = tensor_dim("prim iota", dim, rank);
  if (d < 0) return NULL;
  tc_node n = node_make(p, dtype, rank);
  n.iattrs[0] = d;
  n.n_iattrs = 1;
  return dispatch(&n, 0, NULL, shape, true);
}

tc_tensor *prim_constant(double value, tc_dtype dtype, int rank, const tc_sz *shape) {
  const tc_prim p = TC_PRIM_CONSTANT;
  if (!check_kind(p, NULL, dtype, DK_INT | DK_FLOAT | DK_BOOL) || !check_shape(p, rank, shape)) return NULL;
  tc_node n = node_make(p, dtype, rank);
  n.iattrs[0] = -1;
  n.n_iattrs = 1;
  n.fattr = value;
  return dispatch(&n, 0, NULL, shape, true);
}

tc_tensor *prim_constant_size(tc_sz value, tc_dtype dtype, int rank, const tc_sz *shape) {
  const tc_prim p = TC_PRIM_CONSTANT;
  if (!check_kind(p, NULL, dtype, DK_INT | DK_FLOAT | DK_BOOL) || !check_shape(p, rank, shape)) return NULL;
  tc_node n = node_make(p, dtype, rank);
  /* A symbolic size only means something inside the trace whose table it indexes. */
  n.iattrs[0] = value.e >= 0 && ops_trace_current() ? value.e : -1;
  n.n_iattrs = 1;
  n.fattr = (double)value.v;
  return dispatch(&n, 0, NULL, shape, true);
}

tc_tensor *prim_random(uint64_t seed, uint64_t offset, tc_dtype dtype, int rank, const tc_sz *shape) {
  const tc_prim p = TC_PRIM_RANDOM;
  if (dtype != TC_F32 && dtype != TC_F64)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim random: dtype %s not supported (f32 or f64 only)",
                         tc_dtype_name(dtype));
  if (!check_shape(p, rank, shape)) return NULL;
  tc_node n = node_make(p, dtype, rank);
  n.iattrs[0] = (int64_t)seed;
  n.iattrs[1] = (int64_t)offset;
  n.n_iattrs = 2;
  return dispatch(&n, 0, NULL, shape, true);
}

/* ---------------------------------------------------------------- contraction */
tc_tensor *prim_matmul(tc_tensor *a, tc_tensor *b) {
  if (!a || !b) return NULL;
  const tc_prim p = TC_PRIM_MATMUL;
  char sa[SHAPE_CAP], sb[SHAPE_CAP];
  if (!check_same_dtype(p, "a", a, "b", b) || !check_kind(p, NULL, a->dtype, DK_FLOAT)) return NULL;
  if (a->rank < 2 || a->rank != b->rank)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim matmul: operands need the same rank >= 2 (a: %s, b: %s)",
                         shape_of(a, sa), shape_of(b, sb));
  const int r = a->rank;
  for (int i = 0; i < r - 2; i++)
    if (!sz_eq(sz_of(a, i), sz_of(b, i)))
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim matmul: batch sizes differ at dim %d (a: %s, b: %s)", i,
                           shape_of(a, sa), shape_of(b, sb));
  if (!sz_eq(sz_of(a, r - 1), sz_of(b, r - 2)))
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "prim matmul: inner sizes differ (a: %s, b: %s)", shape_of(a, sa),
                         shape_of(b, sb));
  tc_node n = node_make(p, a->dtype, r);
  tc_sz shape[TC_MAX_RANK];
  sizes_of(a, shape);
  shape[r - 1] = sz_of(b, r - 1);
  tc_tensor *in[2] = {a, b};
  return dispatch(&n, 2, in, shape, false);
}
