/* partition.c — a graph split between its backend and a fallback, for nodes the backend declines
 * (its capabilities extension). Nodes keep their order; each maximal run of nodes on one backend
 * becomes a part, a graph of its own lowered on that backend as usual. Values crossing from one
 * part to the next are the parts' inputs and outputs; lowering copies them to the backend that
 * reads them (tensor_to_backend), so the copies are planned, not improvised. ggml's scheduler
 * splits graphs by its backends' supports_op the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

typedef struct part {
  tc_backend *be;
  tc_graph graph;
  tc_lowered *lowered;
  int32_t n_in, n_out;
  int32_t *in_values;  /* the original graph's value id of each part input */
  int32_t *out_values; /* ... of each part output */
} part;

typedef struct partitioned {
  tc_lowered base;
  part *parts;
  int32_t n_parts;
  char *source; /* every part's source, headed by its backend */
} partitioned;

static void partitioned_free(tc_lowered *l) {
  partitioned *p = (partitioned *)l;
  for (int32_t i = 0; i < p->n_parts; i++) {
    lowered_free(p->parts[i].lowered);
    graph_free(&p->parts[i].graph);
    free(p->parts[i].in_values);
    free(p->parts[i].out_values);
  }
  free(p->parts);
  free(p->source);
  free(p);
}

static const char *partitioned_source(const tc_lowered *l) { return ((const partitioned *)l)->source; }

static tc_status partitioned_run(tc_lowered *l, const int64_t *syms, tc_tensor *const *inputs, tc_tensor **outputs) {
  partitioned *p = (partitioned *)l;
  const tc_graph *g = l->graph;
  const int32_t n_values = g->n_inputs + g->n_nodes;
  tc_tensor **vals = calloc((size_t)n_values + 1, sizeof *vals);
  bool *owned = calloc((size_t)n_values + 1, sizeof *owned);
  tc_status s = TC_OK;
  for (int32_t k = 0; k < g->n_outputs; k++) outputs[k] = NULL;
  if (!vals || !owned) {
    s = core_error(TC_ERR_OUT_OF_MEMORY, "graph %s: out of memory running its parts", g->name);
    goto out;
  }
  for (int32_t i = 0; i < g->n_inputs; i++) vals[i] = inputs[i];
  for (int32_t k = 0; k < p->n_parts && s == TC_OK; k++) {
    part *pt = &p->parts[k];
    tc_tensor *ins[64], *outs[64];
    if (pt->n_in > 64 || pt->n_out > 64) {
      s = core_error(TC_ERR_UNSUPPORTED, "graph %s: part %d has more than 64 inputs or outputs", g->name, (int)k + 1);
      break;
    }
    for (int32_t i = 0; i < pt->n_in; i++) ins[i] = vals[pt->in_values[i]];
    s = lowered_run(pt->lowered, syms, ins, outs);
    for (int32_t i = 0; i < pt->n_out && s == TC_OK; i++) {
      vals[pt->out_values[i]] = outs[i];
      owned[pt->out_values[i]] = true;
    }
  }
  for (int32_t k = 0; k < g->n_outputs && s == TC_OK; k++) {
    /* A handle of its own (a view): an alias made with tc_retain would be counted as the
     * caller's retain (tensor.c). */
    tc_tensor *v = vals[g->outputs[k]];
    outputs[k] = v ? tensor_new_view(v, v->rank, v->sizes, v->strides, v->offset) : NULL;
    if (!outputs[k]) s = core_error(TC_ERR_INTERNAL, "graph %s: output %d was not computed by any part", g->name, (int)k);
  }
  if (s != TC_OK)
    for (int32_t k = 0; k < g->n_outputs; k++) {
      tc_release(outputs[k]);
      outputs[k] = NULL;
    }
out:
  for (int32_t v = 0; vals && owned && v < n_values; v++)
    if (owned[v]) tc_release(vals[v]);
  free(vals);
  free(owned);
  return s;
}

static const tc_lowered_vt partitioned_vt = {partitioned_run, partitioned_source, partitioned_free, NULL};

/* The part of nodes [first, last) of g. */
static tc_status part_build(const tc_graph *g, int32_t first, int32_t last, part *pt, int32_t index) {
  const int32_t ni = g->n_inputs;
  /* Outputs: values the run defines that a later node or the graph's outputs read. (Its
   * inputs, the values it reads and does not define, are graph_extract's.) */
  uint8_t *keep = calloc((size_t)g->n_nodes + 1, 1);
  int32_t *outs = malloc((size_t)(last - first + 1) * sizeof *outs);
  if (!keep || !outs) {
    free(keep);
    free(outs);
    return core_error(TC_ERR_OUT_OF_MEMORY, "graph %s: out of memory partitioning it", g->name);
  }
  for (int32_t i = first; i < last; i++) {
    int32_t v = ni + i;
    bool needed = false;
    for (int32_t j = last; j < g->n_nodes && !needed; j++)
      for (int32_t k = 0; k < g->nodes[j].n_in; k++) needed |= g->nodes[j].in[k] == v;
    for (int32_t k = 0; k < g->n_outputs; k++) needed |= g->outputs[k] == v;
    if (needed) outs[pt->n_out++] = v;
    keep[i] = 1;
  }
  char name[96];
  snprintf(name, sizeof name, "%.60s_part%d", g->name, (int)index + 1);
  tc_status s = graph_extract(g, keep, pt->n_out, outs, name, &pt->graph, &pt->in_values, &pt->n_in);
  free(keep);
  if (s == TC_OK) pt->out_values = outs;
  else free(outs);
  return s;
}

tc_status lower_partition_build(tc_backend *be, const tc_graph *g, const lower_options *lo, tc_lowered **out,
                                tc_lower_stats *stats) {
  *out = NULL;
  const double t0 = tc_now_seconds();
  tc_backend *fb = lo->fallback ? lo->fallback : backend_eager();
  if (!fb) return tc_last_status();
  if (fb == be) return core_error(TC_ERR_UNSUPPORTED, "graph %s: backend '%s' declines nodes and is its own fallback", g->name, be->name);
  partitioned *p = calloc(1, sizeof *p);
  uint8_t *on_fb = calloc((size_t)g->n_nodes + 1, 1);
  if (!p || !on_fb) {
    free(p);
    free(on_fb);
    return core_error(TC_ERR_OUT_OF_MEMORY, "graph %s: out of memory partitioning it", g->name);
  }
  p->base.vt = &partitioned_vt;
  p->base.backend = be;
  p->base.graph = g;
  /* Which nodes the backend declines: one node at a time through the same check as the whole. */
  int32_t n_fb = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    char why[128];
    on_fb[i] = lowered_node_declined(be, g, i, why, sizeof why);
    if (on_fb[i]) {
      n_fb++;
      tc_logs("fallback", "graph %s: %s declines v%d (%s); it runs on %s", g->name, be->name, g->n_inputs + i, why,
              fb->name);
    }
  }
  /* Parts are counted first and never move: each part's executable borrows its graph. */
  int32_t n_parts = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) n_parts += i == 0 || on_fb[i] != on_fb[i - 1];
  p->parts = calloc((size_t)n_parts + 1, sizeof *p->parts);
  tc_status s = p->parts ? TC_OK : core_error(TC_ERR_OUT_OF_MEMORY, "graph %s: out of memory partitioning it", g->name);
  for (int32_t first = 0; first < g->n_nodes && s == TC_OK;) {
    int32_t last = first + 1;
    while (last < g->n_nodes && on_fb[last] == on_fb[first]) last++;
    part *pt = &p->parts[p->n_parts++];
    pt->be = on_fb[first] ? fb : be;
    s = part_build(g, first, last, pt, p->n_parts - 1);
    if (s == TC_OK) {
      lower_options sub = *lo;
      sub.fullgraph = true; /* each part's nodes are all accepted by its backend */
      tc_lower_stats st = {0};
      s = lowered_build(pt->be, &pt->graph, &sub, &pt->lowered, &st);
      p->base.n_kernels += st.n_kernels;
      if (stats) stats->cache_hit = p->n_parts == 1 ? st.cache_hit : stats->cache_hit && st.cache_hit;
    }
    first = last;
  }
  free(on_fb);
  if (s != TC_OK) {
    partitioned_free(&p->base);
    return s;
  }
  tck_str src = {0};
  for (int32_t k = 0; k < p->n_parts; k++) {
    const char *ps = lowered_source(p->parts[k].lowered);
    tck_str_printf(&src, "// part %d of %d (%s, %d nodes) on %s\n%s\n", (int)k + 1, (int)p->n_parts,
                   p->parts[k].graph.name, (int)p->parts[k].graph.n_nodes, p->parts[k].be->name, ps ? ps : "");
  }
  p->source = tck_str_take(&src);
  tc_logs("fallback", "graph %s: %d of %d nodes on %s, in %d parts", g->name, (int)n_fb, (int)g->n_nodes, fb->name,
          (int)p->n_parts);
  tc_logs("perf_hints",
          "graph %s: %s declines %d of its %d nodes, which run on %s: the graph runs in %d parts with values crossing "
          "between backends at each boundary (TC_LOGS=fallback names the nodes; another backend, or the ops "
          "rewritten, keeps it whole)",
          g->name, be->name, (int)n_fb, (int)g->n_nodes, fb->name, (int)p->n_parts);
  if (stats) {
    stats->n_kernels = p->base.n_kernels;
    stats->seconds = tc_now_seconds() - t0;
    stats->n_fallback_nodes = n_fb;
  }
  *out = &p->base;
  return TC_OK;
}
