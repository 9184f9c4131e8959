/* graph_index.c — the index-reading nodes of a graph (GATHER, SCATTER_ADD) and what an
 * out-of-range index of one is called in the terms of the public op it implements: a compiled
 * kernel reports only a site, a value and a bound (ABI 2.3's index error record), and the user
 * wrote tc_embedding, not a gather along dim 0. */
#include <inttypes.h>
#include <stdio.h>

#include "graph/graph.h"

bool graph_node_reads_index(const tc_node *n) {
  return n && (n->prim == TC_PRIM_GATHER || n->prim == TC_PRIM_SCATTER_ADD);
}

bool graph_reads_index(const tc_graph *g) {
  for (int32_t i = 0; g && i < g->n_nodes; i++)
    if (graph_node_reads_index(&g->nodes[i])) return true;
  return false;
}

void graph_index_error_text(int32_t prim, int32_t index_op, int dim, int64_t value, int64_t bound, char *buf,
                            size_t cap) {
  const char *op = prim == TC_PRIM_GATHER ? "prim gather" : "prim scatter_add", *arg = "index", *of = "x";
  switch ((graph_index_op)index_op) {
  case GRAPH_INDEX_GATHER: op = "tc_gather"; break;
  case GRAPH_INDEX_INDEX_SELECT: op = "tc_index_select"; break;
  case GRAPH_INDEX_EMBEDDING: op = "tc_embedding", arg = "indices", of = "weight"; break;
  case GRAPH_INDEX_SCATTER_ADD: op = "tc_scatter_add"; break;
  case GRAPH_INDEX_CROSS_ENTROPY:
    /* The eager message's words: the classes, not a dim of an intermediate log_softmax. */
    snprintf(buf, cap,
             "tc_cross_entropy: target value %" PRId64 " is out of range for the classes of logits of size %" PRId64,
             value, bound);
    return;
  case GRAPH_INDEX_PRIM: break;
  }
  snprintf(buf, cap, "%s: %s value %" PRId64 " is out of range for dim %d of %s of size %" PRId64, op, arg, value, dim,
           of, bound);
}
