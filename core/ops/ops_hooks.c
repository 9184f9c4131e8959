/* ops_hooks.c — the calls the prim layer makes upward (record into a trace, run eagerly, guard a
 * size decision), through the table the top stage installs. */
#include "ops/ops.h"

static ops_hooks hooks;

void ops_set_hooks(const ops_hooks *h) {
  hooks = *h;
}

struct tc_trace *ops_trace_current(void) {
  return hooks.trace ? hooks.trace() : NULL;
}

tc_sxtab *ops_trace_sxtab(struct tc_trace *tr) {
  return hooks.sxtab && tr ? hooks.sxtab(tr) : NULL;
}

tc_tensor *ops_record(struct tc_trace *tr, const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape) {
  if (!hooks.record)
    return core_error_null(TC_ERR_INTERNAL, "prim %s: no capture hook installed to record it (ops_set_hooks not called)",
                         prim_name(node->prim));
  return hooks.record(tr, node, n_in, in, shape);
}

void ops_guard_eq(struct tc_trace *tr, tc_sz a, tc_sz b, bool equal) {
  if (!hooks.guard_eq) {
    core_error(TC_ERR_INTERNAL, "a size decision while tracing: no capture hook installed to guard it "
                              "(ops_set_hooks not called)");
    return;
  }
  hooks.guard_eq(tr, a, b, equal);
}

tc_tensor *ops_run_eager(const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape) {
  if (!hooks.run_eager)
    return core_error_null(TC_ERR_INTERNAL, "prim %s: no eager executor installed to run it (ops_set_hooks not called)",
                         prim_name(node->prim));
  return hooks.run_eager(node, n_in, in, shape);
}

tc_status ops_assign(struct tc_trace *tr, tc_tensor *dst, tc_tensor *src) {
  if (!hooks.assign)
    return core_error(TC_ERR_INTERNAL, "tc_assign: no capture hook installed to record it (ops_set_hooks not called)");
  return hooks.assign(tr, dst, src);
}
