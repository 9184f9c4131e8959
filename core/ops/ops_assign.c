/* ops_assign.c — tc_assign: the one op that changes a tensor's elements. Eagerly it writes into
 * the destination's storage; inside a trace the capture stage records it (ops_assign hook), so
 * a compiled call updates its caller's tensor instead of returning a new one. */
#include "ops/ops_util.h"

tc_status tc_assign(tc_tensor *dst, tc_tensor *src) {
  if (!dst || !src) {
    tc_status s = tc_last_status();
    return s != TC_OK ? s : core_error(TC_ERR_INVALID_ARGUMENT, "tc_assign: %s is NULL", dst ? "src" : "dst");
  }
  if (dst->dtype != src->dtype || dst->rank != src->rank)
    return core_error(TC_ERR_INVALID_ARGUMENT, "tc_assign: dst is %s %s, src is %s %s (they must agree)",
                      OPS_DTYPE(dst), OPS_SHAPE(dst), OPS_DTYPE(src), OPS_SHAPE(src));
  for (int d = 0; d < dst->rank; d++)
    if (!sz_eq(sz_of(dst, d), sz_of(src, d)))
      return core_error(TC_ERR_INVALID_ARGUMENT, "tc_assign: dst is %s, src is %s (they must agree)", OPS_SHAPE(dst),
                        OPS_SHAPE(src));
  /* A value recorded on the tape would no longer be the one its gradient rule assumed. */
  if (tape_node_of(dst))
    return core_error(TC_ERR_INVALID_ARGUMENT,
                      "tc_assign: dst is the result of an op that records a gradient (assign to a leaf)");
  struct tc_trace *tr = ops_trace_current();
  if (dst->trace || (tr && src->trace)) {
    if (!dst->trace)
      return core_error(
          TC_ERR_INVALID_ARGUMENT,
          "tc_assign: inside a compiled function dst must be one of its parameters (it is a real tensor)");
    return ops_assign(tr, dst, src);
  }
  if (src->trace)
    return core_error(TC_ERR_INVALID_ARGUMENT, "tc_assign: src is a traced tensor that escaped its compiled function");
  return tensor_write("tc_assign", dst, src);
}
