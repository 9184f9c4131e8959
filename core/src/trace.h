/* trace.h — capture: recording prims on proxy tensors into a graph, symbolic sizes, guards
 * and graph breaks. The prim layer calls trace_record; the size helpers call trace_guard_eq;
 * host reads of proxies (tc_to_host, tc_item, tc_size) call into here. */
#ifndef TC_TRACE_H
#define TC_TRACE_H

#include "graph.h"

typedef struct tc_trace tc_trace;

/* The trace being recorded on this thread, or NULL. */
tc_trace *trace_current(void);
/* The size-expression table of the graph being recorded. */
tc_sxtab *trace_sxtab(tc_trace *tr);

/* Appends `node` (its prim, attrs and out.dtype/rank; in/n_in are ignored) with operands `in`
 * and result shape `shape` (tc_sz: static sizes become interned constants), and returns a new
 * proxy for its result. Real (non-proxy) operands are lifted into the graph as captured
 * constants, held by reference. */
tc_tensor *trace_record(tc_trace *tr, const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape);

/* Records that the decision "a == b" (equal) was taken while tracing, for the entry's guards. */
void trace_guard_eq(tc_trace *tr, tc_sz a, tc_sz b, bool equal);

/* A host read of a proxy (op names the public call: "tc_item", "tc_to_host"). Under fullgraph:
 * an error naming op. Otherwise a graph break: the graph so far is compiled and run, and *real
 * receives a real tensor holding the proxy's value (new reference). */
tc_status trace_materialize(const char *op, const tc_tensor *proxy, tc_tensor **real /* out */);

/* tc_size on a proxy's dynamic dim: pins the size to its traced value with a guard. */
void trace_pin_size(const tc_tensor *proxy, int dim);

#endif
