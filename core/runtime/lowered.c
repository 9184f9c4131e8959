/* lowered.c — a graph compiled for one backend: picks the hand-off level the plugin takes
 * (the whole primitive graph, or the core's fused kernels) and forwards to it. */
#include <stdio.h>

#include "runtime/runtime.h"

tc_status lowered_build(tc_backend *be, const tc_graph *g, const tc_compile_options *opts, tc_lowered **out,
                        tc_lower_stats *stats) {
  *out = NULL;
  if (stats) *stats = (tc_lower_stats){0};
  if (!be) return tc_error(TC_ERR_INTERNAL, "lowered_build: no backend");
  /* A plugin that takes whole graphs has its own scheduler: it gets the graph even when it
   * also accepts kernels. */
  if ((be->api.handoff & TC_HANDOFF_GRAPH) && be->api.compile_graph && be->api.run_graph)
    return lower_graph_build(be, g, opts, out, stats);
  if ((be->api.handoff & TC_HANDOFF_KERNELS) && be->api.compile_kernels && be->api.launch)
    return lower_kernels_build(be, g, opts, out, stats);
  return tc_error(TC_ERR_UNSUPPORTED,
                  "backend '%s' declares no usable hand-off (handoff bits 0x%x): it needs compile_graph + run_graph or "
                  "compile_kernels + launch",
                  be->name, (unsigned)be->api.handoff);
}

tc_status lowered_run(tc_lowered *l, const int64_t *syms, tc_tensor *const *inputs, tc_tensor **outputs) {
  return l->vt->run(l, syms, inputs, outputs);
}

const char *lowered_source(const tc_lowered *l) { return l && l->vt->source ? l->vt->source(l) : NULL; }

void lowered_free(tc_lowered *l) {
  if (l) l->vt->free(l);
}

tc_status lowered_after_run(const tc_backend *be, const char *graph) {
  if (be->api.memory == TC_MEMORY_HOST) return TC_OK;
  bool flush = be->api.flush != NULL;
  tc_status s = flush ? be->api.flush(be->ctx) : be->api.synchronize ? be->api.synchronize(be->ctx) : TC_OK;
  return s == TC_OK ? TC_OK : lowered_plugin_fail(s, be, flush ? "starting the device work" : "synchronizing after running", graph);
}

tc_status lowered_plugin_fail(tc_status s, const tc_backend *be, const char *what, const char *graph) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tc_last_error());
  return tc_error(s == TC_OK ? TC_ERR_INTERNAL : s, "%s: %s of graph %s failed: %s", be->name, what, graph,
                  msg[0] ? msg : tc_status_name(s));
}

bool lowered_from_cache(const tc_backend *be, tc_executable *exe) {
  if (!TC_HAS_FIELD(&be->api, tc_plugin_api, executable_info) || !be->api.executable_info || !exe) return false;
  tc_executable_info info = {.struct_size = sizeof info};
  return be->api.executable_info(be->ctx, exe, &info) == TC_OK && TC_HAS_FIELD(&info, tc_executable_info, from_cache) &&
         info.from_cache;
}
