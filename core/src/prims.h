/* prims.h — the prim layer: one function per primitive. Each validates its operands (errors
 * name the prim, the argument, shapes and dtypes), infers the result's dtype and shape
 * (symbolically, through tc_sz), then either records a node in the current trace (when any
 * operand is a proxy, or a creation prim runs while tracing) or runs the prim eagerly on the
 * eager backend. Every public op is written on these functions, so eager and compiled modes
 * share one definition of each op.
 *
 * Ownership: operands are borrowed; the result is a new reference (NULL with tc_last_error set
 * on failure). A NULL operand returns NULL without touching the error. */
#ifndef TC_PRIMS_H
#define TC_PRIMS_H

#include "internal.h"

tc_tensor *prim_unary(tc_prim p, tc_tensor *x);
tc_tensor *prim_binary(tc_prim p, tc_tensor *a, tc_tensor *b); /* same shape and dtype */
tc_tensor *prim_where(tc_tensor *cond, tc_tensor *a, tc_tensor *b);
tc_tensor *prim_convert(tc_tensor *x, tc_dtype to);
/* Reduces over the listed dims (dropped from the result). */
tc_tensor *prim_reduce(tc_prim p, tc_tensor *x, int n_dims, const int *dims);
tc_tensor *prim_argreduce(tc_prim p, tc_tensor *x, int dim); /* ARGMAX/ARGMIN, dim dropped */
tc_tensor *prim_reshape(tc_tensor *x, int rank, const tc_sz *shape);
/* bdims[i]: the result dim that x's dim i maps to (increasing); x's size there is 1 or equal. */
tc_tensor *prim_broadcast_in_dim(tc_tensor *x, int rank, const tc_sz *shape, const int *bdims);
tc_tensor *prim_permute(tc_tensor *x, const int *perm);
/* Per dim: start (>= 0), step (>= 1) and the result's size. */
tc_tensor *prim_slice(tc_tensor *x, const int64_t *start, const int64_t *step, const tc_sz *size);
tc_tensor *prim_pad(tc_tensor *x, const int64_t *lo, const int64_t *hi, double value);
tc_tensor *prim_concatenate(int n, tc_tensor *const *xs, int dim);
tc_tensor *prim_reverse(tc_tensor *x, int n_dims, const int *dims);
tc_tensor *prim_gather(tc_tensor *x, int dim, tc_tensor *index);
tc_tensor *prim_scatter_add(tc_tensor *x, int dim, tc_tensor *index, tc_tensor *src);
tc_tensor *prim_iota(tc_dtype dtype, int rank, const tc_sz *shape, int dim);
tc_tensor *prim_constant(double value, tc_dtype dtype, int rank, const tc_sz *shape);
/* A constant whose value is a size (e.g. the element count a mean divides by). */
tc_tensor *prim_constant_size(tc_sz value, tc_dtype dtype, int rank, const tc_sz *shape);
/* Uniform [0,1) of dtype f32/f64 from Philox4x32-10 with key `seed`, counter = offset + i. */
tc_tensor *prim_random(uint64_t seed, uint64_t offset, tc_dtype dtype, int rank, const tc_sz *shape);
tc_tensor *prim_matmul(tc_tensor *a, tc_tensor *b); /* (..., M, K) x (..., K, N), equal batch */

#endif
