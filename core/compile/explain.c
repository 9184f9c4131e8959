/* explain.c — what tc_compile did with a function: per entry its graphs (nodes traced and
 * after simplification, ops, kernels, compile time), graph breaks with the op that caused them,
 * and guards; as text, JSON, or Graphviz. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/compile.h"

static char *xdone(tck_str *b) {
  char *p = tck_str_take(b);
  return p ? p : core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_compiled_explain: out of memory");
}

static void xjson_str(tck_str *b, const char *s) {
  tck_str_printf(b, "\"");
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      tck_str_printf(b, "\\%c", ch);
    else if (ch == '\n')
      tck_str_printf(b, "\\n");
    else if (ch < 0x20)
      tck_str_printf(b, "\\u%04x", ch);
    else
      tck_str_printf(b, "%c", ch);
  }
  tck_str_printf(b, "\"");
}

/* "matmul x2, add x3": prims in order of first use. */
static void ops_summary(const tc_graph *g, tck_str *b, bool json) {
  int32_t count[128] = {0};
  int32_t order[128], n_order = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    int32_t p = g->nodes[i].prim;
    if (p < 0 || p >= 128) continue;
    if (count[p]++ == 0) order[n_order++] = p;
  }
  for (int32_t k = 0; k < n_order; k++) {
    if (json)
      tck_str_printf(b, "%s\"%s\": %d", k ? ", " : "", prim_name(order[k]), (int)count[order[k]]);
    else
      tck_str_printf(b, "%s%s x%d", k ? ", " : "", prim_name(order[k]), (int)count[order[k]]);
  }
}

static const cap_variant *segment_latest(const cap_segment *s) {
  return s->n_variants ? s->variants[s->n_variants - 1] : NULL;
}

static void indent_text(tck_str *b, const char *text, const char *indent) {
  const char *p = text;
  while (p && *p) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    tck_str_printf(b, "%s%.*s\n", indent, (int)n, p);
    p = nl ? nl + 1 : NULL;
  }
}

static void explain_text(const tc_compiled *c, tck_str *b) {
  cap_names names = compiled_names(c);
  tck_str_printf(b, "tc_compile(%s) on %s: %d entr%s, %d compile%s (%.2f ms), %d eager fallback%s\n", c->name, c->backend_name,
       (int)c->n_entries, c->n_entries == 1 ? "y" : "ies", (int)c->n_compiles, c->n_compiles == 1 ? "" : "s",
       1e3 * c->compile_seconds, (int)c->n_eager_fallbacks, c->n_eager_fallbacks == 1 ? "" : "s");
  tck_str_printf(b, "options: dynamic=%s, fullgraph=%s, cache_size_limit=%d%s%s\n",
       c->opts.dynamic == TC_DYNAMIC_ON ? "on" : c->opts.dynamic == TC_DYNAMIC_OFF ? "off" : "auto",
       c->opts.fullgraph ? "true" : "false", (int)c->opts.cache_size_limit, c->options ? ", plugin options: " : "",
       c->options ? c->options : "");
  if (c->n_entries == 0) tck_str_printf(b, "(not called yet: nothing is traced before the first tc_call)\n");
  for (int32_t k = 0; k < c->n_entries; k++) {
    const cap_entry *e = c->entries[k];
    tck_str_printf(b, "\nentry %d: %d graph%s, %d graph break%s, compiled in %.2f ms%s\n", (int)e->id, (int)e->n_segments,
         e->n_segments == 1 ? "" : "s", (int)e->n_segments - 1, e->n_segments == 2 ? "" : "s", 1e3 * e->compile_seconds,
         e->replay ? " (calls replay the function)" : "");
    for (int32_t s = 0; s < e->n_segments; s++) {
      const cap_segment *cs = &e->segments[s];
      const cap_variant *v = segment_latest(cs);
      if (!v) continue;
      tck_str_printf(b, "  graph %d (%s): %d nodes traced, %d after simplification (%d dead, %d duplicate, %d folded, %d views), "
              "%d kernel%s, %.2f ms%s\n",
           (int)s + 1, v->graph.name, (int)v->n_traced_nodes, (int)v->graph.n_nodes, (int)v->simplified.dead,
           (int)v->simplified.duplicate, (int)v->simplified.folded, (int)v->simplified.views, (int)v->n_kernels,
           v->n_kernels == 1 ? "" : "s", 1e3 * v->seconds, v->cache_hit ? ", from the disk cache" : "");
      if (cs->n_variants > 1) tck_str_printf(b, "    %d variants compiled (the traced graph changed between calls)\n", (int)cs->n_variants);
      tck_str_printf(b, "    ops: ");
      ops_summary(&v->graph, b, false);
      tck_str_printf(b, "%s\n", v->graph.n_nodes ? "" : "(none)");
      if (cs->break_op[0])
        tck_str_printf(b, "    ends at a graph break: %s reads a traced value back to the host\n", cs->break_op);
      char *gtext = graph_to_string(&v->graph);
      if (gtext) indent_text(b, gtext, "    ");
      free(gtext);
      tck_str_printf(b, "    guards:\n");
      char *guards = guards_to_string(&v->guards, &v->graph.sx, s == 0 ? c->backend : NULL, &names, "      ");
      if (guards) tck_str_printf(b, "%s", guards);
      free(guards);
    }
  }
}

static void explain_json(const tc_compiled *c, tck_str *b) {
  cap_names names = compiled_names(c);
  tck_str_printf(b, "{\"name\": ");
  xjson_str(b, c->name);
  tck_str_printf(b, ", \"backend\": ");
  xjson_str(b, c->backend_name);
  tck_str_printf(b, ", \"dynamic\": \"%s\", \"fullgraph\": %s, \"cache_size_limit\": %d",
       c->opts.dynamic == TC_DYNAMIC_ON ? "on" : c->opts.dynamic == TC_DYNAMIC_OFF ? "off" : "auto",
       c->opts.fullgraph ? "true" : "false", (int)c->opts.cache_size_limit);
  tck_str_printf(b, ", \"n_entries\": %d, \"n_compiles\": %d, \"n_eager_fallbacks\": %d, \"compile_seconds\": %.6f",
       (int)c->n_entries, (int)c->n_compiles, (int)c->n_eager_fallbacks, c->compile_seconds);
  tck_str_printf(b, ", \"entries\": [");
  for (int32_t k = 0; k < c->n_entries; k++) {
    const cap_entry *e = c->entries[k];
    tck_str_printf(b, "%s{\"id\": %d, \"n_graphs\": %d, \"n_graph_breaks\": %d, \"compile_seconds\": %.6f, \"replay\": %s",
         k ? ", " : "", (int)e->id, (int)e->n_segments, (int)e->n_segments - 1, e->compile_seconds,
         e->replay ? "true" : "false");
    tck_str_printf(b, ", \"breaks\": [");
    bool first = true;
    for (int32_t s = 0; s < e->n_segments; s++) {
      if (!e->segments[s].break_op[0]) continue;
      tck_str_printf(b, "%s{\"after_graph\": %d, \"op\": ", first ? "" : ", ", (int)s + 1);
      xjson_str(b, e->segments[s].break_op);
      tck_str_printf(b, "}");
      first = false;
    }
    tck_str_printf(b, "], \"graphs\": [");
    for (int32_t s = 0; s < e->n_segments; s++) {
      const cap_segment *cs = &e->segments[s];
      const cap_variant *v = segment_latest(cs);
      tck_str_printf(b, "%s{\"index\": %d", s ? ", " : "", (int)s + 1);
      if (v) {
        tck_str_printf(b, ", \"name\": ");
        xjson_str(b, v->graph.name);
        tck_str_printf(b,
             ", \"variants\": %d, \"nodes_traced\": %d, \"nodes\": %d, \"dead\": %d, \"duplicate\": %d, "
             "\"folded\": %d, \"views\": %d, \"kernels\": %d, \"compile_seconds\": %.6f, \"cache_hit\": %s, \"ops\": {",
             (int)cs->n_variants, (int)v->n_traced_nodes, (int)v->graph.n_nodes, (int)v->simplified.dead,
             (int)v->simplified.duplicate, (int)v->simplified.folded, (int)v->simplified.views, (int)v->n_kernels,
             v->seconds, v->cache_hit ? "true" : "false");
        ops_summary(&v->graph, b, true);
        tck_str_printf(b, "}, \"graph\": ");
        char *gtext = graph_to_string(&v->graph);
        xjson_str(b, gtext ? gtext : "");
        free(gtext);
        tck_str_printf(b, ", \"guards\": [");
        char *guards = guards_to_string(&v->guards, &v->graph.sx, s == 0 ? c->backend : NULL, &names, "");
        const char *p = guards;
        bool gfirst = true;
        while (p && *p) {
          const char *nl = strchr(p, '\n');
          size_t n = nl ? (size_t)(nl - p) : strlen(p);
          char line[512];
          snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
          tck_str_printf(b, "%s", gfirst ? "" : ", ");
          xjson_str(b, line);
          gfirst = false;
          p = nl ? nl + 1 : NULL;
        }
        free(guards);
        tck_str_printf(b, "]");
      }
      if (cs->break_op[0]) {
        tck_str_printf(b, ", \"break_op\": ");
        xjson_str(b, cs->break_op);
      }
      tck_str_printf(b, "}");
    }
    tck_str_printf(b, "]}");
  }
  tck_str_printf(b, "]}\n");
}

char *tc_compiled_explain(const tc_compiled *c, bool json) {
  if (!c) return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_compiled_explain: the compiled function is NULL");
  tck_str b = {0};
  if (json)
    explain_json(c, &b);
  else
    explain_text(c, &b);
  return xdone(&b);
}

/* ---------------------------------------------------------------- Graphviz */
static void dot_type(tck_str *b, const tc_graph *g, const tc_vtype *t) {
  char e[128];
  tck_str_printf(b, "%s[", tc_dtype_name(t->dtype));
  for (int d = 0; d < t->rank; d++) tck_str_printf(b, "%s%s", d ? "x" : "", sxtab_str(&g->sx, t->shape[d], e, sizeof e));
  tck_str_printf(b, "]");
}

/* Fused groups: which kernel of the plan computes each value. A kernel computes its root (the
 * value it stores) and every value inlined into it: walking back from the root through values
 * the plan does not store. A value inlined into several kernels takes the first; -1: none (an
 * input, or no plan). */
static int32_t *dot_kernel_of(const tc_graph *g, const tc_schedule *s) {
  const int32_t nv = g->n_inputs + g->n_nodes;
  int32_t *of = malloc(sizeof(int32_t) * (size_t)(nv + 1)), *stack = malloc(sizeof(int32_t) * (size_t)(nv + 1));
  if (!of || !stack) {
    free(of);
    free(stack);
    return NULL;
  }
  for (int32_t v = 0; v < nv; v++) of[v] = -1;
  for (int32_t k = 0; s && k < s->n_kernels; k++) {
    int32_t n = 0, root = s->kernels[k].root;
    if (root < g->n_inputs || root >= nv) continue;
    stack[n++] = root;
    while (n > 0) {
      int32_t v = stack[--n];
      if (of[v] >= 0 || v < g->n_inputs) continue;
      of[v] = k;
      const tc_node *node = &g->nodes[v - g->n_inputs];
      for (int32_t i = 0; i < node->n_in; i++) {
        int32_t u = node->in[i];
        if (u >= g->n_inputs && u < nv && s->value_buf[u] < 0 && of[u] < 0) stack[n++] = u;
      }
    }
  }
  free(stack);
  return of;
}

static const char *const dot_colors[] = {"#cfe2ff", "#d1e7dd", "#fff3cd", "#f8d7da", "#e2d9f3", "#d2f4ea",
                                         "#ffe5d0", "#e9ecef", "#cff4fc", "#f7d6e6", "#dde9c9", "#fde2c0"};

static void dot_graph(tck_str *b, const tc_graph *g, const tc_schedule *s, const char *title) {
  tck_str_printf(b, "digraph \"%s\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n", title);
  int32_t *kernel_of = s ? dot_kernel_of(g, s) : NULL;
  const int n_colors = (int)(sizeof dot_colors / sizeof dot_colors[0]);
  for (int32_t k = 0; kernel_of && k < s->n_kernels; k++) /* the legend: one box per kernel */
    tck_str_printf(b, "  kernel%d [shape=note, style=filled, fillcolor=\"%s\", label=\"kernel %d: %s\"];\n", (int)k,
                   dot_colors[k % n_colors], (int)k, s->kernels[k].name);
  for (int32_t i = 0; i < g->n_inputs; i++) {
    tck_str_printf(b, "  v%d [shape=ellipse, label=\"input v%d\\n", (int)i, (int)i);
    dot_type(b, g, &g->inputs[i]);
    tck_str_printf(b, "\"];\n");
  }
  for (int32_t j = 0; j < g->n_nodes; j++) {
    const tc_node *n = &g->nodes[j];
    const int32_t v = g->n_inputs + j;
    const int32_t k = kernel_of ? kernel_of[v] : -1;
    tck_str_printf(b, "  v%d [label=\"v%d = %s\\n", (int)v, (int)v, prim_name(n->prim));
    dot_type(b, g, &n->out);
    if (k >= 0) {
      tck_str_printf(b, "\\nkernel %d%s\", style=filled, fillcolor=\"%s\"", (int)k,
                     s->kernels[k].root == v ? " (stored)" : "", dot_colors[k % n_colors]);
      tck_str_printf(b, "%s];\n", s->kernels[k].root == v ? ", penwidth=2" : "");
    } else {
      tck_str_printf(b, "\"];\n");
    }
    for (int32_t k = 0; k < n->n_in; k++) tck_str_printf(b, "  v%d -> v%d;\n", (int)n->in[k], (int)v);
  }
  for (int32_t k = 0; k < g->n_outputs; k++)
    tck_str_printf(b, "  out%d [shape=ellipse, style=bold, label=\"output %d\"];\n  v%d -> out%d;\n", (int)k, (int)k,
         (int)g->outputs[k], (int)k);
  tck_str_printf(b, "}\n");
  free(kernel_of);
}

char *graph_to_dot(const tc_graph *g) {
  tck_str b = {0};
  dot_graph(&b, g, NULL, g->name);
  return xdone(&b);
}

char *tc_compiled_dot(const tc_compiled *c) {
  if (!c) return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_compiled_dot: the compiled function is NULL");
  tck_str b = {0};
  for (int32_t k = 0; k < c->n_entries; k++) {
    const cap_entry *e = c->entries[k];
    for (int32_t s = 0; s < e->n_segments; s++) {
      const cap_variant *v = segment_latest(&e->segments[s]);
      if (!v) continue;
      char title[160];
      snprintf(title, sizeof title, "%s: entry %d, graph %d", c->name, (int)e->id, (int)s + 1);
      dot_graph(&b, &v->graph, lowered_schedule(v->lowered), title);
    }
  }
  if (!b.data) tck_str_puts(&b, "");
  return xdone(&b);
}
