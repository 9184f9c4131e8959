/* lowered.c — a graph compiled for one backend: checks what the backend accepts (a declined
 * node sends the graph down the partitioned path), picks the hand-off level the plugin takes (the
 * whole primitive graph, or a plan of the core's fused kernels) and forwards to it. */
#include <stdio.h>

#include "runtime/runtime.h"

/* The kernel kind a node becomes on a kernel-level backend. */
static int32_t node_kernel_kind(const tc_backend *be, const tc_node *n) {
  if (!(be->api->handoff & TC_HANDOFF_KERNELS) || (be->api->handoff & TC_HANDOFF_GRAPH)) return -1;
  return n->prim == TC_PRIM_MATMUL ? TC_KERNEL_MATMUL : TC_KERNEL_LOOP;
}

bool lowered_node_declined(const tc_backend *be, const tc_graph *g, int32_t i, char *why, size_t cap) {
  const tc_node *n = &g->nodes[i];
  bool ok = backend_accepts(be, n->prim, n->out.dtype, node_kernel_kind(be, n));
  int32_t bad_dtype = ok ? -1 : (int32_t)n->out.dtype;
  for (int32_t k = 0; ok && k < n->n_in; k++) {
    const tc_vtype *t = graph_value_type(g, n->in[k]);
    if (t && !backend_accepts(be, -1, t->dtype, -1)) {
      ok = false;
      bad_dtype = t->dtype;
    }
  }
  if (ok) return false;
  if (why) {
    if (!backend_accepts(be, n->prim, -1, -1))
      snprintf(why, cap, "prim %s", prim_name(n->prim));
    else if (bad_dtype >= 0 && !backend_accepts(be, -1, bad_dtype, -1))
      snprintf(why, cap, "dtype %s", tc_dtype_name((tc_dtype)bad_dtype));
    else
      snprintf(why, cap, "kernel kind %s", n->prim == TC_PRIM_MATMUL ? "matmul" : "loop");
  }
  return true;
}

int32_t lowered_first_declined(const tc_backend *be, const tc_graph *g, char *why, size_t cap) {
  for (int32_t i = 0; i < g->n_nodes; i++)
    if (lowered_node_declined(be, g, i, why, cap)) return g->n_inputs + i;
  return -1;
}

tc_status lowered_build(tc_backend *be, const tc_graph *g, const lower_options *lo, tc_lowered **out,
                        tc_lower_stats *stats) {
  *out = NULL;
  if (stats) *stats = (tc_lower_stats){0};
  if (!be) return core_error(TC_ERR_INTERNAL, "lowered_build: no backend");
  const lower_options none = {0};
  if (!lo) lo = &none;
  char why[128];
  int32_t declined = lowered_first_declined(be, g, why, sizeof why);
  if (declined >= 0) {
    if (lo->fullgraph)
      return core_error(TC_ERR_UNSUPPORTED,
                        "graph %s: backend '%s' declines node v%d (%s; its capabilities), and fullgraph forbids running "
                        "it on a fallback backend",
                        g->name, be->name, declined, why);
    return lower_partition_build(be, g, lo, out, stats);
  }
  /* A plugin that takes whole graphs has its own scheduler: it gets the graph even when it
   * also accepts kernels. */
  if (be->api->handoff & TC_HANDOFF_GRAPH) return lower_graph_build(be, g, lo, out, stats);
  if (be->api->handoff & TC_HANDOFF_KERNELS) {
    tc_schedule *plan = NULL;
    /* Index checks (ABI 2.3): an older plugin would not know TC_KOP_INDEX_CHECK. */
    const sched_options so = {.matmul_batch2 = true,
                              .attention = backend_accepts_kind_under(be, TC_KERNEL_ATTENTION, lo->options),
                              .index_check = be->api->abi_minor >= 3};
    TC_RETURN_IF_ERROR(schedule_build_opts(g, &so, &plan));
    tc_status s = lower_kernels_bind(be, plan, lo, out, stats);
    schedule_release(plan); /* the executable holds its own reference */
    return s;
  }
  return core_error(TC_ERR_UNSUPPORTED, "backend '%s' declares no usable hand-off (handoff bits 0x%x)", be->name,
                    (unsigned)be->api->handoff);
}

tc_status lowered_run(tc_lowered *l, const int64_t *syms, tc_tensor *const *inputs, tc_tensor **outputs) {
  return l->vt->run(l, syms, inputs, outputs);
}

const char *lowered_source(const tc_lowered *l) { return l && l->vt->source ? l->vt->source(l) : NULL; }

const struct tc_schedule *lowered_schedule(const tc_lowered *l) { return l && l->vt->schedule ? l->vt->schedule(l) : NULL; }

void lowered_free(tc_lowered *l) {
  if (l) l->vt->free(l);
}

tc_status lowered_plugin_fail(tc_status s, const tc_backend *be, const char *what, const char *graph) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tc_last_error());
  return core_error(s == TC_OK ? TC_ERR_INTERNAL : s, "%s: %s of graph %s failed: %s", be->name, what, graph,
                    msg[0] ? msg : tc_status_name(s));
}
