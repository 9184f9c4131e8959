/* error.c — messages back to the host. Every failure of the plugin goes through de_error, so
 * each one becomes the call's tc_error with the plugin's name in front. */
#include <stdio.h>

#include "debug_eager.h"

tc_status de_error(de_call *call, tc_status s, const char *fmt, ...) {
  if (!call || call->err) return s; /* the first error explains; later ones are consequences */
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  call->err = tck_error(call->host, s, "debug-eager: %s", msg);
  return s;
}

tc_error *de_call_result(de_call *call, tc_status s) {
  if (s == TC_OK) {
    if (call->err && call->host && call->host->error_free) call->host->error_free(call->host->host_ctx, call->err);
    call->err = NULL;
    return NULL;
  }
  if (call->err) return call->err;
  return tck_error(call->host, s, "debug-eager: %s", tck_status_name(s));
}

static void shape_str(char *buf, size_t cap, int32_t rank, const int64_t *sizes) {
  if (rank == 0) {
    snprintf(buf, cap, "[]");
    return;
  }
  size_t n = 0;
  buf[0] = 0;
  for (int32_t d = 0; d < rank && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, d ? "x%lld" : "%lld", (long long)sizes[d]);
}

tc_status de_op_error(const de_op *op, tc_status s, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return de_error(op->call, s, "node %d (%s): %s", op->index, de_prim_name(op->node->prim), msg);
}

tc_status de_op_check_same_shape(const de_op *op, const de_tensor *t, const char *what) {
  bool same = t->rank == op->out->rank;
  for (int32_t d = 0; same && d < t->rank; d++) same = t->sizes[d] == op->out->sizes[d];
  if (same) return TC_OK;
  char a[160], b[160];
  shape_str(a, sizeof a, t->rank, t->sizes);
  shape_str(b, sizeof b, op->out->rank, op->out->sizes);
  return de_op_error(op, TC_ERR_INVALID_ARGUMENT, "%s is %s, the result %s", what, a, b);
}

char *de_shape_str(char *buf, size_t cap, int32_t rank, const int64_t *sizes) {
  shape_str(buf, cap, rank, sizes);
  return buf;
}
