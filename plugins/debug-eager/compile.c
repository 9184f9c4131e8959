/* compile.c — compile_graph's work: a deep copy of the (borrowed) graph descriptor into the
 * executable, plus each value's last use so the interpreter can free intermediates early. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "debug_eager.h"

static de_vtype vtype_copy(const tc_value_type *t) {
  de_vtype v = {t->dtype, t->rank, {0}};
  for (int32_t d = 0; d < t->rank; d++) v.shape[d] = t->shape[d];
  return v;
}

static void *alloc_array(size_t n, size_t size) { return calloc(n ? n : 1, size); }

void de_graph_free(tc_executable *exe) {
  if (!exe) return;
  for (int32_t i = 0; i < exe->n_nodes && exe->nodes; i++) {
    free(exe->nodes[i].inputs);
    free(exe->nodes[i].iattrs);
  }
  free(exe->nodes);
  free(exe->exprs);
  free(exe->values);
  free(exe->outputs);
  free(exe->last_use);
  free(exe);
}

static tc_status copy_nodes(const tc_graph_desc *g, tc_executable *exe) {
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const tc_prim_node *n = TC_AT(tc_prim_node, g->nodes, i);
    de_node *d = &exe->nodes[i];
    d->prim = n->prim;
    d->out = vtype_copy(&n->out);
    d->n_inputs = n->n_inputs;
    d->n_iattrs = n->n_iattrs;
    d->fattr = n->fattr;
    d->inputs = alloc_array((size_t)n->n_inputs, sizeof(int32_t));
    d->iattrs = alloc_array((size_t)n->n_iattrs, sizeof(int64_t));
    if (!d->inputs || !d->iattrs) return TC_ERR_OUT_OF_MEMORY;
    if (n->n_inputs) memcpy(d->inputs, n->inputs, (size_t)n->n_inputs * sizeof(int32_t));
    if (n->n_iattrs) memcpy(d->iattrs, n->iattrs, (size_t)n->n_iattrs * sizeof(int64_t));
    exe->values[g->n_inputs + i] = d->out;
  }
  return TC_OK;
}

static void compute_last_use(tc_executable *exe) {
  for (int32_t v = 0; v < exe->n_values; v++) exe->last_use[v] = -1;
  for (int32_t i = 0; i < exe->n_nodes; i++)
    for (int32_t k = 0; k < exe->nodes[i].n_inputs; k++) exe->last_use[exe->nodes[i].inputs[k]] = i;
  for (int32_t k = 0; k < exe->n_outputs; k++) exe->last_use[exe->outputs[k]] = exe->n_nodes;
}

tc_status de_graph_copy(const tc_host_api *host, const tc_graph_desc *g, tc_executable **out) {
  tc_executable *exe = calloc(1, sizeof *exe);
  if (!exe) return de_error(host, TC_ERR_OUT_OF_MEMORY, "compile_graph: out of memory");
  snprintf(exe->name, sizeof exe->name, "%s", g->name ? g->name : "graph");
  exe->n_exprs = g->n_exprs;
  exe->n_syms = g->n_syms;
  exe->n_inputs = g->n_inputs;
  exe->n_nodes = g->n_nodes;
  exe->n_values = g->n_inputs + g->n_nodes;
  exe->n_outputs = g->n_outputs;
  exe->exprs = alloc_array((size_t)g->n_exprs, sizeof(tc_size_expr));
  exe->values = alloc_array((size_t)exe->n_values, sizeof(de_vtype));
  exe->nodes = alloc_array((size_t)g->n_nodes, sizeof(de_node));
  exe->outputs = alloc_array((size_t)g->n_outputs, sizeof(int32_t));
  exe->last_use = alloc_array((size_t)exe->n_values, sizeof(int32_t));
  if (!exe->exprs || !exe->values || !exe->nodes || !exe->outputs || !exe->last_use) goto oom;
  for (int32_t i = 0; i < g->n_exprs; i++) {
    const tc_size_expr *e = TC_AT(tc_size_expr, g->exprs, i);
    exe->exprs[i] = (tc_size_expr){sizeof(tc_size_expr), e->op, e->a, e->b, e->value};
  }
  for (int32_t i = 0; i < g->n_inputs; i++) exe->values[i] = vtype_copy(TC_AT(tc_value_type, g->inputs, i));
  if (copy_nodes(g, exe) != TC_OK) goto oom;
  if (g->n_outputs) memcpy(exe->outputs, g->outputs, (size_t)g->n_outputs * sizeof(int32_t));
  compute_last_use(exe);
  *out = exe;
  return TC_OK;
oom:
  de_graph_free(exe);
  return de_error(host, TC_ERR_OUT_OF_MEMORY, "compile_graph: out of memory copying graph '%s'",
                  g->name ? g->name : "?");
}
