/* exec_index.c — GATHER and SCATTER_ADD along one dim. An index outside [0, size) never
 * touches memory: GATHER reads 0 there, SCATTER_ADD skips the element; and when the host asked
 * for it (ABI 2.3), the first such index of the run is recorded, so the host reports it as the
 * error PyTorch raises. */
#include <string.h>

#include "debug_eager.h"

void de_index_error(de_call *call, int32_t site, int64_t value, int64_t bound) {
  tc_index_error *r = call->index_error;
  if (!r || r->flag) return; /* the first error of the run wins; one thread here, no atomics */
  r->site = site;
  r->value = value;
  r->bound = bound;
  r->flag = 1;
}

/* Outside `dim`, the index tensor must fit in x (as torch.gather requires). */
static tc_status check_index_fits(const de_op *op, const de_tensor *x, const de_tensor *index, int64_t dim) {
  for (int32_t d = 0; d < x->rank; d++)
    if (d != dim && index->sizes[d] > x->sizes[d]) {
      char a[160], b[160];
      return de_op_error(op, TC_ERR_INVALID_ARGUMENT, "index %s is larger than x %s at dim %d (dim is %lld)",
                         de_shape_str(a, sizeof a, index->rank, index->sizes),
                         de_shape_str(b, sizeof b, x->rank, x->sizes), d, (long long)dim);
    }
  return TC_OK;
}

static tc_status gather(const de_op *op) {
  const de_tensor *x = &op->in[0], *index = &op->in[1], *out = op->out;
  int64_t dim = op->node->iattrs[0];
  DE_TRY(de_op_check_same_shape(op, index, "index"));
  DE_TRY(check_index_fits(op, x, index, dim));
  size_t item = tck_dtype_size((int32_t)out->dtype);
  int64_t n = de_numel(out->rank, out->sizes), o[TC_MAX_RANK];
  for (int64_t i = 0; i < n; i++) {
    de_unravel(i, out->rank, out->sizes, o);
    int64_t at = de_load_i(index->dtype, de_at(index, o));
    char *q = out->data + (size_t)i * item;
    if (at < 0 || at >= x->sizes[dim]) {
      de_index_error(op->call, op->index, at, x->sizes[dim]);
      de_store_i(out->dtype, q, 0);
      continue;
    }
    o[dim] = at;
    memcpy(q, de_at(x, o), item);
  }
  return TC_OK;
}

static tc_status scatter_add(const de_op *op) {
  const de_tensor *x = &op->in[0], *index = &op->in[1], *src = &op->in[2], *out = op->out;
  int64_t dim = op->node->iattrs[0];
  DE_TRY(de_op_check_same_shape(op, x, "x"));
  bool same = src->rank == index->rank;
  for (int32_t d = 0; same && d < src->rank; d++) same = src->sizes[d] == index->sizes[d];
  if (!same) {
    char a[160], b[160];
    return de_op_error(op, TC_ERR_INVALID_ARGUMENT, "index %s and src %s differ in shape",
                       de_shape_str(a, sizeof a, index->rank, index->sizes),
                       de_shape_str(b, sizeof b, src->rank, src->sizes));
  }
  DE_TRY(check_index_fits(op, x, index, dim));
  size_t item = tck_dtype_size((int32_t)out->dtype);
  int64_t n_out = de_numel(out->rank, out->sizes), p[TC_MAX_RANK];
  for (int64_t i = 0; i < n_out; i++) memcpy(out->data + (size_t)i * item, de_at_linear(x, i), item);
  de_tensor dst = *out;
  tck_contiguous_strides(dst.rank, dst.sizes, dst.strides);
  int64_t n_src = de_numel(src->rank, src->sizes);
  for (int64_t i = 0; i < n_src; i++) { /* row-major over src: the order of the additions */
    de_unravel(i, src->rank, src->sizes, p);
    int64_t at = de_load_i(index->dtype, de_at(index, p));
    if (at < 0 || at >= x->sizes[dim]) {
      de_index_error(op->call, op->index, at, x->sizes[dim]);
      continue;
    }
    const char *v = de_at(src, p);
    p[dim] = at;
    char *q = de_at(&dst, p);
    if (de_is_float(out->dtype)) de_store_f(out->dtype, q, de_load_f(out->dtype, q) + de_load_f(src->dtype, v));
    else de_store_i(out->dtype, q, (int64_t)((uint64_t)de_load_i(out->dtype, q) + (uint64_t)de_load_i(src->dtype, v)));
  }
  return TC_OK;
}

tc_status de_exec_index(const de_op *op) {
  return op->node->prim == TC_PRIM_GATHER ? gather(op) : scatter_add(op);
}
