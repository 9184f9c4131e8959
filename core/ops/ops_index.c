/* ops_index.c — indexing: gather, index_select, embedding, scatter_add, tril, triu. All are
 * GATHER / SCATTER_ADD / IOTA compositions, so sizes stay symbolic. */
#include <stdio.h>
#include "ops/ops_util.h"

/* PyTorch's rule for gather and scatter: index may not be larger than `other` in any dim but
 * `skip` (-1: none). */
static bool check_index_fits(const char *op, const char *oname, const tc_tensor *other, const tc_tensor *index, int skip) {
  for (int k = 0; k < index->rank; k++)
    if (k != skip && index->sizes[k] > other->sizes[k])
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: index is larger than %s at dim %d (index: %s, %s: %s)", op,
                           oname, k, OPS_SHAPE(index), oname, OPS_SHAPE(other)), false;
  return true;
}

/* "dim 1 of x (x: 3x4)" for index messages. */
static const char *dim_of(char *buf, size_t cap, int d, const char *oname, const tc_tensor *other) {
  snprintf(buf, cap, "dim %d of %s (%s: %s)", d, oname, oname, OPS_SHAPE(other));
  return buf;
}
#define DIM_OF(d, oname, other) dim_of((char[160]){0}, 160, (d), (oname), (other))

static bool check_same_rank(const char *op, const char *oname, const tc_tensor *other, const tc_tensor *index) {
  if (index->rank == other->rank) return true;
  core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: index must have the rank of %s (index: %s, %s: %s)", op, oname,
                OPS_SHAPE(index), oname, OPS_SHAPE(other));
  return false;
}

tc_tensor *tc_gather(tc_tensor *x, int dim, tc_tensor *index) {
  if (!x || !index) return NULL;
  if (!ops_require_index("tc_gather", "index", index)) return NULL;
  int d = ops_dim("tc_gather", "dim", dim, x);
  if (d < 0 || !check_same_rank("tc_gather", "x", x, index) || !check_index_fits("tc_gather", "x", x, index, d) ||
      !ops_check_index_values("tc_gather", "index", index, x->sizes[d], false, 0, DIM_OF(d, "x", x)))
    return NULL;
  return prim_gather(x, d, index, GRAPH_INDEX_GATHER);
}

/* Rows of x along d picked by a 1-D index: the index broadcast over the other dims, gathered.
 * op: the public op, for a compiled kernel's out-of-range message. */
static tc_tensor *select_along(tc_tensor *x, int d, tc_tensor *index, graph_index_op op) {
  tc_sz shape[TC_MAX_RANK];
  ops_shape_sz(x, shape);
  shape[d] = sz_of(index, 0);
  return prim_gather(x, d, prim_broadcast_in_dim(index, x->rank, shape, &d), op);
}

tc_tensor *tc_index_select(tc_tensor *x, int dim, tc_tensor *index) {
  if (!x || !index) return NULL;
  if (!ops_require_index("tc_index_select", "index", index)) return NULL;
  int d = ops_dim("tc_index_select", "dim", dim, x);
  if (d < 0) return NULL;
  if (index->rank > 1)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_index_select: index must be 1-D (index: %s, x: %s)",
                         OPS_SHAPE(index), OPS_SHAPE(x));
  if (!ops_check_index_values("tc_index_select", "index", index, x->sizes[d], false, 0, DIM_OF(d, "x", x)))
    return NULL;
  tc_scope *s = ops_begin();
  tc_tensor *idx = index->rank == 0 ? prim_reshape(index, 1, (tc_sz[]){sz_const(1)}) : index;
  return ops_end(s, select_along(x, d, idx, GRAPH_INDEX_INDEX_SELECT));
}

/* weight (V, D) and indices of any shape: result indices.shape + (D). */
tc_tensor *tc_embedding(tc_tensor *weight, tc_tensor *indices) {
  if (!weight || !indices) return NULL;
  if (!ops_require_index("tc_embedding", "indices", indices)) return NULL;
  if (weight->rank != 2 || indices->rank >= TC_MAX_RANK)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_embedding: expected weight (num_embeddings, dim) and indices of "
                         "rank < %d (weight: %s, indices: %s)", TC_MAX_RANK, OPS_SHAPE(weight), OPS_SHAPE(indices));
  if (!ops_check_index_values("tc_embedding", "indices", indices, weight->sizes[0], false, 0,
                              DIM_OF(0, "weight", weight)))
    return NULL;
  tc_scope *s = ops_begin();
  tc_sz flat[1] = {sz_numel(indices)}, shape[TC_MAX_RANK];
  tc_tensor *rows = select_along(weight, 0, prim_reshape(indices, 1, flat), GRAPH_INDEX_EMBEDDING);
  ops_shape_sz(indices, shape);
  shape[indices->rank] = sz_of(weight, 1);
  return ops_end(s, prim_reshape(rows, indices->rank + 1, shape));
}

tc_tensor *tc_scatter_add(tc_tensor *x, int dim, tc_tensor *index, tc_tensor *src) {
  if (!x || !index || !src) return NULL;
  const char *op = "tc_scatter_add";
  if (!ops_require_index(op, "index", index)) return NULL;
  if (src->dtype != x->dtype)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: src must have x's dtype (x: %s, src: %s)", op, OPS_DTYPE(x),
                         OPS_DTYPE(src));
  int d = ops_dim(op, "dim", dim, x);
  if (d < 0 || !check_same_rank(op, "x", x, index) || !check_same_rank(op, "src", src, index) ||
      !check_index_fits(op, "x", x, index, d) || !check_index_fits(op, "src", src, index, -1) ||
      !ops_check_index_values(op, "index", index, x->sizes[d], false, 0, DIM_OF(d, "x", x)))
    return NULL;
  /* Only src's leading index-shaped block takes part, as in PyTorch. */
  int64_t start[TC_MAX_RANK], step[TC_MAX_RANK];
  tc_sz shape[TC_MAX_RANK];
  bool whole = true;
  for (int k = 0; k < src->rank; k++) {
    start[k] = 0, step[k] = 1, shape[k] = sz_of(index, k);
    whole = whole && ops_sz_same(shape[k], sz_of(src, k));
  }
  tc_scope *s = ops_begin();
  return ops_end(s, prim_scatter_add(x, d, index, whole ? src : prim_slice(src, start, step, shape),
                                     GRAPH_INDEX_SCATTER_ADD));
}

/* Keeps x where (col - row) compares with diagonal (<= for tril, >= for triu), else 0. The
 * mask is built from IOTA over the last two sizes, so it stays symbolic. */
static tc_tensor *triangle(const char *op, tc_tensor *x, int64_t diagonal, tc_prim cmp) {
  if (!x) return NULL;
  if (x->rank < 2)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "%s: x must have at least 2 dims (x: %s)", op, OPS_SHAPE(x));
  int r = x->rank;
  tc_sz rc[2] = {sz_of(x, r - 2), sz_of(x, r - 1)}, shape[TC_MAX_RANK];
  tc_scope *s = ops_begin();
  tc_tensor *diff = prim_binary(TC_PRIM_SUB, prim_iota(TC_I64, 2, rc, 1), prim_iota(TC_I64, 2, rc, 0));
  tc_tensor *keep = ops_binary_scalar(cmp, diff, (double)diagonal);
  ops_shape_sz(x, shape);
  keep = ops_broadcast_to(keep, r, shape);
  return ops_end(s, prim_where(keep, x, ops_full_like(x, 0.0, x->dtype)));
}

tc_tensor *tc_tril(tc_tensor *x, int64_t diagonal) { return triangle("tc_tril", x, diagonal, TC_PRIM_LE); }
tc_tensor *tc_triu(tc_tensor *x, int64_t diagonal) { return triangle("tc_triu", x, diagonal, TC_PRIM_GE); }
