/* compile.c — compile's work: a deep copy of the (borrowed) graph descriptor into the
 * executable, each value's last use so the interpreter can free intermediates early, and a
 * readable listing of the graph (executable_info's source). */
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
  free(exe->listing);
  free(exe);
}

static tc_status copy_nodes(const tc_graph_desc *g, tc_executable *exe) {
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const tc_prim_node *n = tck_graph_node(g, i);
    de_node *d = &exe->nodes[i];
    d->prim = n->prim;
    d->out = vtype_copy(n->out);
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

static void type_str(tck_str *s, const tc_executable *exe, const de_vtype *t) {
  tck_str_printf(s, "%s[", tck_dtype_name(t->dtype));
  for (int32_t d = 0; d < t->rank; d++) {
    const tc_size_expr *e = &exe->exprs[t->shape[d]];
    if (d) tck_str_puts(s, ", ");
    if (e->op == TC_SX_CONST) tck_str_printf(s, "%lld", (long long)e->value);
    else if (e->op == TC_SX_SYM) tck_str_printf(s, "s%lld", (long long)e->value);
    else tck_str_printf(s, "e%d", t->shape[d]);
  }
  tck_str_puts(s, "]");
}

/* "graph 'g'(v0: f32[s0, 64]) {\n  v2: f32[s0, 64] = exp(v0)\n  ...\n  return v2\n}" */
static char *listing(const tc_executable *exe) {
  tck_str s = {0};
  tck_str_printf(&s, "graph '%s'(", exe->name);
  for (int32_t i = 0; i < exe->n_inputs; i++) {
    tck_str_printf(&s, "%sv%d: ", i ? ", " : "", i);
    type_str(&s, exe, &exe->values[i]);
  }
  tck_str_puts(&s, ") {\n");
  for (int32_t i = 0; i < exe->n_nodes; i++) {
    const de_node *n = &exe->nodes[i];
    tck_str_printf(&s, "  v%d: ", exe->n_inputs + i);
    type_str(&s, exe, &n->out);
    tck_str_printf(&s, " = %s(", tck_prim_name(n->prim));
    for (int32_t k = 0; k < n->n_inputs; k++) tck_str_printf(&s, "%sv%d", k ? ", " : "", n->inputs[k]);
    if (n->n_iattrs) {
      tck_str_puts(&s, n->n_inputs ? "; " : "");
      for (int32_t k = 0; k < n->n_iattrs; k++) tck_str_printf(&s, "%s%lld", k ? ", " : "", (long long)n->iattrs[k]);
    }
    if (n->prim == TC_PRIM_CONSTANT || n->prim == TC_PRIM_PAD) tck_str_printf(&s, "; %g", n->fattr);
    tck_str_puts(&s, ")\n");
  }
  tck_str_puts(&s, "  return");
  for (int32_t k = 0; k < exe->n_outputs; k++) tck_str_printf(&s, "%s v%d", k ? "," : "", exe->outputs[k]);
  tck_str_puts(&s, "\n}\n");
  return tck_str_take(&s);
}

tc_status de_graph_copy(de_call *call, const tc_graph_desc *g, tc_executable **out) {
  tc_executable *exe = calloc(1, sizeof *exe);
  if (!exe) return de_error(call, TC_ERR_OUT_OF_MEMORY, "compile_graph: out of memory");
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
    const tc_size_expr *e = tck_graph_expr(g, i);
    exe->exprs[i] = (tc_size_expr){sizeof(tc_size_expr), e->op, e->a, e->b, e->value};
  }
  for (int32_t i = 0; i < g->n_inputs; i++) exe->values[i] = vtype_copy(tck_graph_input(g, i));
  if (copy_nodes(g, exe) != TC_OK) goto oom;
  if (g->n_outputs) memcpy(exe->outputs, g->outputs, (size_t)g->n_outputs * sizeof(int32_t));
  compute_last_use(exe);
  exe->listing = listing(exe); /* NULL when out of memory: only the listing is lost */
  *out = exe;
  return TC_OK;
oom:
  de_graph_free(exe);
  return de_error(call, TC_ERR_OUT_OF_MEMORY, "compile_graph: out of memory copying graph '%s'",
                  g->name ? g->name : "?");
}
