/* graph_desc.c — the ABI view of a graph (tc_graph_desc) for graph-level plugins. The view
 * borrows the graph's arrays where their layout is already the ABI's (size expressions, value
 * ids, attributes) and builds the rest in `storage`. */
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

struct tc_graph_desc_storage {
  tc_value_type *inputs;
  tc_value_type *outs; /* per node: its result type */
  tc_prim_node *nodes;
};

/* Shapes are borrowed from the graph's own types (valid while g lives). */
static tc_value_type desc_vtype(const tc_vtype *t) {
  tc_value_type v;
  memset(&v, 0, sizeof v);
  v.struct_size = sizeof v;
  v.dtype = t->dtype;
  v.rank = t->rank;
  v.shape = t->shape;
  return v;
}

tc_status graph_to_desc(const tc_graph *g, tc_graph_desc *desc, tc_graph_desc_storage **storage) {
  *storage = NULL;
  memset(desc, 0, sizeof *desc);
  tc_graph_desc_storage *st = calloc(1, sizeof *st);
  if (!st) return core_error(TC_ERR_OUT_OF_MEMORY, "graph %s: out of memory building its descriptor", g->name);
  st->inputs = calloc((size_t)(g->n_inputs ? g->n_inputs : 1), sizeof *st->inputs);
  st->nodes = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *st->nodes);
  st->outs = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *st->outs);
  if (!st->inputs || !st->nodes || !st->outs) {
    graph_desc_free(st);
    return core_error(TC_ERR_OUT_OF_MEMORY, "graph %s: out of memory building its descriptor", g->name);
  }
  for (int32_t i = 0; i < g->n_inputs; i++)
    st->inputs[i] = desc_vtype(&g->inputs[i]);
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const tc_node *n = &g->nodes[i];
    tc_prim_node *d = &st->nodes[i];
    d->struct_size = sizeof *d;
    d->prim = n->prim;
    st->outs[i] = desc_vtype(&n->out);
    d->out = &st->outs[i];
    d->n_inputs = n->n_in;
    d->inputs = n->in;
    d->n_iattrs = n->n_iattrs;
    d->iattrs = n->iattrs;
    d->fattr = n->fattr;
  }
  desc->struct_size = sizeof *desc;
  desc->name = g->name;
  desc->n_exprs = g->sx.n;
  desc->exprs = g->sx.nodes; /* every node's struct_size is set when interned */
  desc->expr_size = sizeof(tc_size_expr);
  desc->n_syms = g->n_syms;
  desc->n_inputs = g->n_inputs;
  desc->inputs = st->inputs;
  desc->input_size = sizeof(tc_value_type);
  desc->n_nodes = g->n_nodes;
  desc->nodes = st->nodes;
  desc->node_size = sizeof(tc_prim_node);
  desc->n_outputs = g->n_outputs;
  desc->outputs = g->outputs;
  *storage = st;
  return TC_OK;
}

void graph_desc_free(tc_graph_desc_storage *storage) {
  if (!storage) return;
  free(storage->inputs);
  free(storage->outs);
  free(storage->nodes);
  free(storage);
}
