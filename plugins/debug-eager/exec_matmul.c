/* exec_matmul.c — batched MATMUL, (..., M, K) x (..., K, N) -> (..., M, N), as three plain
 * loops per batch with a double accumulator (so the reference is at least as accurate as any
 * backend's f32 or f64 summation order). */
#include "debug_eager.h"

tc_status de_exec_matmul(const de_op *op) {
  const de_tensor *a = &op->in[0], *b = &op->in[1], *out = op->out;
  int32_t r = a->rank;
  int64_t M = a->sizes[r - 2], K = a->sizes[r - 1], N = b->sizes[r - 1];
  bool ok = b->sizes[r - 2] == K && out->sizes[r - 2] == M && out->sizes[r - 1] == N;
  for (int32_t d = 0; ok && d < r - 2; d++) ok = a->sizes[d] == b->sizes[d] && a->sizes[d] == out->sizes[d];
  if (!ok) {
    char sa[160], sb[160], so[160];
    return de_op_error(op, TC_ERR_INVALID_ARGUMENT, "a %s, b %s, result %s: need (..., M, K) x (..., K, N) -> "
                       "(..., M, N) with equal batch dims",
                       de_shape_str(sa, sizeof sa, a->rank, a->sizes), de_shape_str(sb, sizeof sb, b->rank, b->sizes),
                       de_shape_str(so, sizeof so, out->rank, out->sizes));
  }
  int64_t batch = de_numel(r - 2, a->sizes), idx[TC_MAX_RANK];
  size_t item = tck_dtype_size((int32_t)out->dtype);
  char *q = out->data;
  for (int64_t bi = 0; bi < batch; bi++) {
    de_unravel(bi, r - 2, a->sizes, idx);
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        double acc = 0.0;
        for (int64_t k = 0; k < K; k++) {
          idx[r - 2] = m;
          idx[r - 1] = k;
          double x = de_load_f(a->dtype, de_at(a, idx));
          idx[r - 2] = k;
          idx[r - 1] = n;
          acc += x * de_load_f(b->dtype, de_at(b, idx));
        }
        de_store_f(out->dtype, q, acc);
        q += item;
      }
  }
  return TC_OK;
}
