/* aot_partition.c — splitting a joint forward+backward graph: which forward values the
 * forward saves for the backward and which the backward recomputes.
 *
 * As AOTAutograd does, by a minimum cut over the forward part of the joint graph: each forward
 * value is an edge in -> out costing its bytes (saving it), its uses are edges the cut may not
 * take, the values the backward reads lead to the sink, and expensive prims (matmul,
 * reductions, gather, scatter-add) hang from the source, so the backward never recomputes
 * them. The values whose edge the cut takes are saved; the forward values on the sink side are
 * recomputed in the backward from them and from the call's inputs (which the backward gets
 * anyway: free). Cheap values recomputed in the backward fuse into its kernels instead of
 * costing a round trip through memory. */
#include <stdlib.h>
#include <string.h>

#include "compile/compile.h"

static bool expensive(tc_prim p) {
  switch (p) {
  case TC_PRIM_MATMUL:
  case TC_PRIM_REDUCE_SUM:
  case TC_PRIM_REDUCE_MAX:
  case TC_PRIM_REDUCE_MIN:
  case TC_PRIM_REDUCE_PROD:
  case TC_PRIM_ARGMAX:
  case TC_PRIM_ARGMIN:
  case TC_PRIM_GATHER:
  case TC_PRIM_SCATTER_ADD: return true;
  default: return false;
  }
}

void aot_partition_free(aot_partition *p) {
  free(p->saved);
  memset(p, 0, sizeof *p);
}

int64_t aot_value_bytes(const tc_vtype *t, const int64_t *vals) {
  int64_t n = (int64_t)tck_dtype_size(t->dtype);
  for (int d = 0; d < t->rank; d++)
    n *= vals[t->shape[d]] > 0 ? vals[t->shape[d]] : 0;
  return n;
}

/* The minimum cut: cut[i] for the forward nodes whose values the forward saves. Network nodes:
 * 0 source, 1 sink, then in and out of each forward node, then one per graph input (available
 * to the backward for free: nothing leads to it from the source). */
static bool min_cut_saved(const tc_graph *j, int32_t n_fwd, const bool *dep, const int64_t *syms, bool *cut) {
  const int32_t ni = j->n_inputs, n = 2 + 2 * n_fwd + ni;
  int64_t *vals = malloc((size_t)(j->sx.n ? j->sx.n : 1) * sizeof *vals);
  bool *side = malloc((size_t)n * sizeof *side);
  min_cut *g = min_cut_new(n);
  bool ok = vals && side && g;
  if (ok) sxtab_eval(&j->sx, syms, vals);
#define MC_IN(i) (2 + 2 * (i))
#define MC_OUT(v) ((v) < ni ? 2 + 2 * n_fwd + (v) : 3 + 2 * ((v)-ni))
  for (int32_t i = 0; ok && i < n_fwd; i++) {
    const tc_node *nd = &j->nodes[i];
    int64_t bytes = aot_value_bytes(&nd->out, vals);
    ok = min_cut_edge(g, MC_IN(i), MC_OUT(ni + i), bytes < MIN_CUT_INF ? bytes : MIN_CUT_INF - 1);
    if (ok && expensive(nd->prim)) ok = min_cut_edge(g, 0, MC_IN(i), MIN_CUT_INF);
    for (int32_t k = 0; ok && k < nd->n_in; k++)
      ok = min_cut_edge(g, MC_OUT(nd->in[k]), MC_IN(i), MIN_CUT_INF);
  }
  /* What the backward reads of the forward (and forward values that are gradients). */
  for (int32_t i = n_fwd; ok && i < j->n_nodes; i++)
    for (int32_t k = 0; ok && k < j->nodes[i].n_in; k++) {
      int32_t v = j->nodes[i].in[k];
      if (v >= ni && v - ni < n_fwd && !dep[v]) ok = min_cut_edge(g, MC_OUT(v), 1, MIN_CUT_INF);
    }
  for (int32_t k = 0; ok && k < j->n_outputs; k++) {
    int32_t v = j->outputs[k];
    if (v >= ni && v - ni < n_fwd && !dep[v]) ok = min_cut_edge(g, MC_OUT(v), 1, MIN_CUT_INF);
  }
  ok = ok && min_cut_solve(g, 0, 1, side);
  for (int32_t i = 0; ok && i < n_fwd; i++)
    cut[i] = side[MC_IN(i)] && !side[MC_OUT(ni + i)];
#undef MC_IN
#undef MC_OUT
  free(vals);
  free(side);
  min_cut_free(g);
  return ok;
}

/* Marks what the backward needs, from its outputs back: nodes that follow the seed, and the
 * forward values they read, each either saved (save[i], where the cut is) or recomputed
 * (keep[i]). */
static bool decide(const tc_graph *j, int32_t n_fwd, const bool *dep, const bool *cut, bool *keep, bool *save) {
  const int32_t ni = j->n_inputs;
  int32_t cap = j->n_outputs + 16, top = 0;
  int32_t *stack = malloc((size_t)cap * sizeof *stack);
  bool *seen = calloc((size_t)(j->n_nodes ? j->n_nodes : 1), sizeof *seen);
  bool ok = stack && seen;
  for (int32_t k = 0; ok && k < j->n_outputs; k++)
    stack[top++] = j->outputs[k];
  while (ok && top > 0) {
    int32_t v = stack[--top];
    if (v < ni || seen[v - ni]) continue;
    const int32_t i = v - ni;
    const tc_node *nd = &j->nodes[i];
    seen[i] = true;
    if (!dep[v] && i < n_fwd && (cut[i] || expensive(nd->prim))) { /* (the cut takes every expensive one read) */
      save[i] = true;
      continue;
    }
    keep[i] = true;
    if (top + nd->n_in > cap) {
      cap = 2 * (top + nd->n_in);
      int32_t *q = realloc(stack, (size_t)cap * sizeof *q);
      if (!q) {
        ok = false;
        break;
      }
      stack = q;
    }
    for (int32_t k = 0; k < nd->n_in; k++)
      stack[top++] = nd->in[k];
  }
  free(stack);
  free(seen);
  return ok;
}

tc_status aot_partition_build(const tc_graph *j, int32_t n_fwd, int32_t seed, const int64_t *syms, tc_graph *bwd,
                              aot_partition *p) {
  memset(p, 0, sizeof *p);
  const int32_t ni = j->n_inputs, nn = j->n_nodes, nv = ni + nn;
  bool *dep = calloc((size_t)nv, sizeof *dep), *keep = calloc((size_t)(nn ? nn : 1), sizeof *keep);
  bool *save = calloc((size_t)(nn ? nn : 1), sizeof *save), *cut = calloc((size_t)(nn ? nn : 1), sizeof *cut);
  int32_t *map = malloc((size_t)nv * sizeof *map), *in = NULL;
  p->saved = malloc((size_t)(nn ? nn : 1) * sizeof *p->saved);
  graph_init(bwd, j->name);
  tc_status s = TC_OK;
  if (!dep || !keep || !save || !cut || !map || !p->saved) goto oom;
  /* Which values follow the seed (the result's gradient): the backward proper. */
  dep[seed] = true;
  for (int32_t i = 0; i < nn; i++)
    for (int32_t k = 0; k < j->nodes[i].n_in && !dep[ni + i]; k++)
      dep[ni + i] = dep[j->nodes[i].in[k]];
  if (!min_cut_saved(j, n_fwd, dep, syms, cut) || !decide(j, n_fwd, dep, cut, keep, save)) goto oom;

  sxtab_free(&bwd->sx);
  if (sxtab_copy(&j->sx, &bwd->sx) != TC_OK) goto oom;
  bwd->n_syms = j->n_syms;
  for (int32_t i = 0; i < ni; i++)
    if ((map[i] = graph_add_input(bwd, &j->inputs[i])) < 0) goto oom;
  for (int32_t i = 0; i < nn; i++) {
    if (!save[i]) continue;
    if ((map[ni + i] = graph_add_input(bwd, &j->nodes[i].out)) < 0) goto oom;
    p->saved[p->n_saved++] = i;
  }
  for (int32_t i = 0; i < nn; i++) {
    if (!keep[i]) continue;
    tc_node n = j->nodes[i];
    free(in);
    in = malloc((size_t)(n.n_in ? n.n_in : 1) * sizeof *in);
    if (!in) goto oom;
    for (int32_t k = 0; k < n.n_in; k++)
      in[k] = map[n.in[k]];
    n.in = in;
    if ((map[ni + i] = graph_add_node(bwd, &n)) < 0) goto oom;
    p->n_recomputed += !dep[ni + i];
    p->n_backward += dep[ni + i];
  }
  int32_t *outs = malloc((size_t)(j->n_outputs ? j->n_outputs : 1) * sizeof *outs);
  if (!outs) goto oom;
  for (int32_t k = 0; k < j->n_outputs; k++)
    outs[k] = map[j->outputs[k]];
  graph_set_outputs(bwd, j->n_outputs, outs);
  free(outs);
  goto done;
oom:
  s = core_error(TC_ERR_OUT_OF_MEMORY, "partitioning the joint graph %s: out of memory", j->name);
  graph_free(bwd);
  aot_partition_free(p);
done:
  free(dep);
  free(keep);
  free(save);
  free(cut);
  free(map);
  free(in);
  return s;
}
