/* ab_plan.c — the plan a compiled function's graph schedules into, read kernel by kernel: the
 * fused groups the A/B report draws, and each kernel as a graph of its own for the bisector.
 * The plan does not depend on a backend (schedule.h), so the kernels named here are those
 * every kernel-level backend compiled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab/ab.h"

tc_status ab_plan_open(const tc_compiled *c, ab_plan *p) {
  memset(p, 0, sizeof *p);
  const cap_entry *e = c->n_entries > 0 ? c->entries[c->n_entries - 1] : NULL;
  if (!e || e->n_segments < 1 || e->segments[0].n_variants < 1)
    return core_error(TC_ERR_INVALID_ARGUMENT, "%s: nothing was compiled (the function computes nothing)", c->name);
  if (e->n_segments > 1)
    return core_error(TC_ERR_UNSUPPORTED, "%s: the function has graph breaks (%d graphs); its plan is one per graph",
                      c->name, (int)e->n_segments);
  p->c = c;
  p->v = e->segments[0].variants[0];
  return schedule_build(&p->v->graph, &p->s);
}

void ab_plan_close(ab_plan *p) {
  if (p->s) schedule_release(p->s);
  memset(p, 0, sizeof *p);
}

/* Nodes of kernel k: everything between its root and the realized values it reads. */
static uint8_t *kernel_nodes(const ab_plan *p, int32_t k) {
  const tc_graph *g = &p->v->graph;
  const int32_t ni = g->n_inputs, root = p->s->kernels[k].root;
  uint8_t *keep = calloc((size_t)g->n_nodes + 1, 1);
  int32_t *stack = malloc((size_t)(g->n_nodes + 1) * sizeof *stack);
  int32_t top = 0;
  if (keep && stack && root >= ni) stack[top++] = root;
  while (keep && stack && top > 0) {
    int32_t v = stack[--top];
    if (keep[v - ni]) continue;
    keep[v - ni] = 1;
    const tc_node *n = &g->nodes[v - ni];
    for (int32_t i = 0; i < n->n_in; i++) {
      int32_t u = n->in[i];
      if (u >= ni && p->s->value_buf[u] < 0 && !keep[u - ni]) stack[top++] = u;
    }
  }
  free(stack);
  return keep;
}

tc_status ab_plan_kernel_graph(const ab_plan *p, int32_t k, tc_graph *sub, int32_t **in_values, int32_t *n_in) {
  uint8_t *keep = kernel_nodes(p, k);
  if (!keep) return core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
  const sched_kernel *sk = &p->s->kernels[k];
  tc_status s = graph_extract(&p->v->graph, keep, 1, &sk->root, sk->name, sub, in_values, n_in);
  free(keep);
  return s;
}

tc_status ab_kernel_lower(const tc_compiled *c, const tc_graph *sub, tc_lowered **l) {
  lower_options lo = {.options = c->parsed, .mode = c->opts.mode};
  *l = NULL;
  tc_status s = lowered_build(c->backend, sub, &lo, l, NULL);
  if (s == TC_OK) return TC_OK;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tc_last_error());
  return core_error(s, "kernel %s alone on %s: %s", sub->name, c->backend->name, msg);
}

tc_status ab_plan_kernel_source(const ab_plan *p, int32_t k, const tc_compiled *c, char **source) {
  tc_graph sub;
  int32_t *in_values = NULL, n_in = 0;
  tc_lowered *l = NULL;
  *source = NULL;
  tc_status s = ab_plan_kernel_graph(p, k, &sub, &in_values, &n_in);
  if (s != TC_OK) return s;
  s = ab_kernel_lower(c, &sub, &l);
  const char *src = s == TC_OK ? lowered_source(l) : NULL;
  if (src && !(*source = strdup(src))) s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
  lowered_free(l);
  free(in_values);
  graph_free(&sub);
  return s;
}

void ab_plan_value_name(const ab_plan *p, int32_t v, char *buf, size_t cap) {
  const tc_compiled *c = p->c;
  if (v < p->v->graph.n_inputs) {
    if (v < c->n_params && c->names[v])
      snprintf(buf, cap, "input %d (%s)", (int)v, c->names[v]);
    else if (v < c->n_params)
      snprintf(buf, cap, "input %d", (int)v);
    else
      snprintf(buf, cap, "captured %d", (int)(v - c->n_params));
    return;
  }
  for (int32_t k = 0; k < p->s->n_kernels; k++)
    if (p->s->kernels[k].root == v) {
      snprintf(buf, cap, "%s", p->s->kernels[k].name);
      return;
    }
  snprintf(buf, cap, "v%d", (int)v);
}

void ab_kernels_free(tc_ab_kernel *k, int32_t n) {
  for (int32_t i = 0; k && i < n; i++) {
    free((char *)k[i].name);
    free((char *)k[i].prims);
    free((char *)k[i].reads);
    free((char *)k[i].output);
  }
  free(k);
}

tc_status ab_plan_describe(const ab_plan *p, tc_ab_kernel **out, int32_t *n) {
  const tc_graph *g = &p->v->graph;
  const int32_t nk = p->s->n_kernels;
  tc_ab_kernel *ks = calloc((size_t)nk + 1, sizeof *ks);
  if (!ks) return core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
  tc_status s = TC_OK;
  for (int32_t k = 0; k < nk && s == TC_OK; k++) {
    const sched_kernel *sk = &p->s->kernels[k];
    ks[k].struct_size = sizeof ks[k];
    uint8_t *keep = kernel_nodes(p, k);
    tck_str prims = {0}, reads = {0};
    int32_t *seen = malloc((size_t)(g->n_inputs + g->n_nodes + 1) * sizeof *seen);
    int32_t n_seen = 0;
    for (int32_t i = 0; keep && seen && i < g->n_nodes; i++) {
      if (!keep[i]) continue;
      tck_str_printf(&prims, "%s%s", prims.len ? " " : "", prim_name(g->nodes[i].prim));
      for (int32_t a = 0; a < g->nodes[i].n_in; a++) {
        int32_t v = g->nodes[i].in[a];
        bool inside = v >= g->n_inputs && keep[v - g->n_inputs], dup = false;
        for (int32_t j = 0; j < n_seen; j++)
          dup |= seen[j] == v;
        if (inside || dup) continue;
        seen[n_seen++] = v;
        char name[96];
        ab_plan_value_name(p, v, name, sizeof name);
        tck_str_printf(&reads, "%s%s", reads.len ? ", " : "", name);
      }
    }
    const tc_vtype *t = graph_value_type(g, sk->root);
    char shape[128] = "", dim[40];
    for (int32_t d = 0; t && d < t->rank; d++)
      snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%s", d ? "x" : "",
               sxtab_str(&g->sx, t->shape[d], dim, sizeof dim));
    char output[160];
    snprintf(output, sizeof output, "%s %s", t && t->rank ? shape : "[]", t ? tc_dtype_name(t->dtype) : "?");
    ks[k].name = strdup(sk->name);
    ks[k].prims = tck_str_take(&prims);
    ks[k].reads = tck_str_take(&reads);
    ks[k].output = strdup(output);
    if (!keep || !seen || !ks[k].name || !ks[k].prims || !ks[k].reads || !ks[k].output)
      s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_ab_compare: out of memory");
    free(keep);
    free(seen);
  }
  if (s != TC_OK) {
    ab_kernels_free(ks, nk);
    return s;
  }
  *out = ks;
  *n = nk;
  return TC_OK;
}
