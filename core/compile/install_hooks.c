/* install_hooks.c — connects the lower stages to the ones above them. The prim layer (ops) and
 * the tensor stage must reach capture and runtime, which they may not include; they call
 * through hook tables that this, the top stage, fills.
 *
 * Installed by a library constructor, when libtc is loaded: eager ops can be the first calls a
 * program makes (before any tc_compile), and no entry point of the lower stages may call up to
 * install them lazily. A pthread_once would need exactly such a call in every entry point. The
 * tables are written once, before main, and only read afterwards. */
#include "compile/compile.h"

__attribute__((constructor)) static void install_hooks(void) {
  ops_set_hooks(&(ops_hooks){
      .trace = trace_current,
      .sxtab = trace_sxtab,
      .record = trace_record,
      .guard_eq = trace_guard_eq,
      .run_eager = eager_run,
      .assign = trace_assign,
  });
  tensor_set_hooks(&(tensor_hooks){
      .materialize = graph_break_materialize,
      .pin_size = trace_pin_size,
  });
}
