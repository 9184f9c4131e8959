/* passes/passes.h — the passes stage: rewrites of a traced graph before it is scheduled
 * (simplify.c; autodiff lands here later). May use: base, backend, tensor, graph, ops, capture. */
#ifndef TC_PASSES_H
#define TC_PASSES_H

#include "graph/graph.h"
#include "tensor/tensor.h"

typedef struct cap_simplify_stats {
  int32_t dead, duplicate, folded, views;
} cap_simplify_stats;

/* Builds into out (uninitialized) a simplified copy of in: same inputs in the same order, the
 * same expression table (ids stay valid), no outputs set. out_values receives, for each of in's
 * outputs, the value of out that computes it (possibly a graph input). */
tc_status graph_simplify(const tc_graph *in, tc_graph *out, int32_t *out_values, cap_simplify_stats *stats);

#endif
