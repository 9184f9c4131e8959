/* ops_util.h — helpers shared by the op files (ops_*.c): operand scopes, dims, broadcasting,
 * type promotion and scalars, all written on the prim layer so traced sizes stay symbolic.
 *
 * Lifetime convention: an op opens a scope (ops_begin), builds its result from prims and
 * helpers without releasing anything by hand, and returns through ops_end, which keeps the
 * result and closes the scope. Helpers return tensors owned by that scope (or NULL with the
 * error set); a NULL operand gives NULL without touching the error, so chains stay flat. */
#ifndef TC_OPS_UTIL_H
#define TC_OPS_UTIL_H

#include "ops/ops.h"

/* ---------------------------------------------------------------- scopes and results */
tc_scope *ops_begin(void);
/* Keeps y (may be NULL) out of s, closes s and returns y. */
tc_tensor *ops_end(tc_scope *s, tc_tensor *y);
/* A new reference to x's value for ops whose result is their operand unchanged. */
tc_tensor *ops_identity(tc_tensor *x);

/* ---------------------------------------------------------------- text for messages */
/* "8x64" (or "[]"): x's sizes as seen now (a traced dynamic size shows its current value). */
const char *ops_shape(const tc_tensor *x, char *buf, size_t cap);
#define OPS_SHAPE(x) ops_shape((x), (char[96]){0}, 96)
#define OPS_DTYPE(x) tc_dtype_name((x)->dtype)

/* ---------------------------------------------------------------- dims and sizes */
/* dim normalized against rank (negative counts from the end), or -1 with an error naming op,
 * the argument and x's shape. */
int ops_dim(const char *op, const char *arg, int dim, const tc_tensor *x);
/* Same for a rank of `rank` (e.g. unsqueeze accepts rank + 1 positions). */
int ops_dim_in(const char *op, const char *arg, int dim, int rank, const tc_tensor *x);
/* Normalizes n dims into out (sorted, increasing); n == 0 means every dim. Returns the count
 * or -1 with an error (out of range, repeated). */
int ops_dims(const char *op, int n, const int *dims, const tc_tensor *x, int *out);
/* x's sizes as tc_sz (symbolic inside a trace). */
void ops_shape_sz(const tc_tensor *x, tc_sz *shape);
/* Product of x's sizes over dims [from, to). */
tc_sz ops_numel_range(const tc_tensor *x, int from, int to);
/* True when a and b are the same size without deciding anything (no guard). */
bool ops_sz_same(tc_sz a, tc_sz b);
bool ops_dtype_valid(tc_dtype d);
bool ops_check_sizes(const char *op, int rank, const int64_t *sizes);

/* ---------------------------------------------------------------- broadcasting */
/* The broadcast shape of a and b (PyTorch rules); returns its rank, or -1 with an error naming
 * op and the operands (an, bn: their argument names). */
int ops_broadcast_shape(const char *op, const char *an, const tc_tensor *a, const char *bn, const tc_tensor *b,
                        tc_sz *shape);
/* The broadcast of two shapes (trailing dims aligned); -1 (no error set) when they do not. */
int ops_broadcast_sizes(int ra, const tc_sz *sa, int rb, const tc_sz *sb, tc_sz *shape);
/* x broadcast to (rank, shape), aligning trailing dims; x itself when already that shape. */
tc_tensor *ops_broadcast_to(tc_tensor *x, int rank, const tc_sz *shape);
/* Broadcasts the operands to one shape, in place; names are their argument names for the
 * message. false on error. */
#define OPS_AB ((const char *const[]){"a", "b"})
bool ops_broadcast2(const char *op, const char *const names[2], tc_tensor **a, tc_tensor **b);
bool ops_broadcast3(const char *op, const char *const names[3], tc_tensor **a, tc_tensor **b, tc_tensor **c);

/* ---------------------------------------------------------------- dtypes and scalars */
/* x converted to dtype (x itself when it has it). */
tc_tensor *ops_convert(tc_tensor *x, tc_dtype dtype);
/* The dtype of "x op s" for a Python-style scalar s (an integral value keeps ints). */
tc_dtype ops_scalar_dtype(tc_dtype x, double s);
/* A tensor of x's shape (symbolic) where every element is value, of dtype. */
tc_tensor *ops_full_like(const tc_tensor *x, double value, tc_dtype dtype);
/* p(x, value) with the scalar as a constant of x's shape and dtype. */
tc_tensor *ops_binary_scalar(tc_prim p, tc_tensor *x, double value);

/* ---------------------------------------------------------------- reductions */
/* x reduced by p over the (normalized, increasing) dims, then broadcast back to x's shape:
 * the row statistic that softmax and the norms subtract or divide by. */
tc_tensor *ops_reduce_back(tc_prim p, tc_tensor *x, int n, const int *dims);
/* y, the result of reducing x over dims, broadcast back to x's shape. */
tc_tensor *ops_unreduce(tc_tensor *y, const tc_tensor *x, int n, const int *dims);
/* The element count over dims as a constant of dtype and shape (x's shape), symbolic. */
tc_tensor *ops_count_like(const tc_tensor *x, int n, const int *dims, const tc_tensor *like);
/* Reinserts the reduced dims of x as size-1 dims into y (the keepdim layout). */
tc_tensor *ops_keepdim(tc_tensor *y, const tc_tensor *x, int n, const int *dims);

/* Requires a floating dtype: false with "op: x must be a floating tensor (got i64)". */
bool ops_require_float(const char *op, const char *arg, const tc_tensor *x);
bool ops_require_index(const char *op, const char *arg, const tc_tensor *x);
/* PyTorch's index check, in eager mode (no-op on a traced index): every value of index in
 * [0, bound), or equal to `ignore` when has_ignore; else false with an error naming op, arg, the
 * first bad position and value, and `against` ("dim 0 of x"). */
bool ops_check_index_values(const char *op, const char *arg, tc_tensor *index, int64_t bound, bool has_ignore,
                            int64_t ignore, const char *against);

#endif
