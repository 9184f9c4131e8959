/* trace.c — placeholder until capture lands: nothing is ever traced. */
#include "trace.h"

tc_trace *trace_current(void) { return NULL; }
tc_sxtab *trace_sxtab(tc_trace *tr) { (void)tr; return NULL; }
tc_tensor *trace_record(tc_trace *tr, const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape) {
  (void)tr; (void)node; (void)n_in; (void)in; (void)shape;
  return tc_error_null(TC_ERR_INTERNAL, "tracing is not built yet");
}
void trace_guard_eq(tc_trace *tr, tc_sz a, tc_sz b, bool equal) { (void)tr; (void)a; (void)b; (void)equal; }
tc_status trace_materialize(const char *op, const tc_tensor *proxy, tc_tensor **real) {
  (void)proxy; *real = NULL;
  return tc_error(TC_ERR_INTERNAL, "%s: tracing is not built yet", op);
}
void trace_pin_size(const tc_tensor *proxy, int dim) { (void)proxy; (void)dim; }
