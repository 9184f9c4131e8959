/* aot_partition.c — splitting a joint forward+backward graph: which forward values the
 * forward saves for the backward and which the backward recomputes.
 *
 * AOTAutograd finds the cut with a min-cut over the joint graph. This is the rule its cut
 * mostly lands on, without the solver: a value the backward reads is saved when its prim is
 * expensive to recompute (matmul, reductions, gather, scatter-add) and recomputed when it is
 * cheap (pointwise, movement, constants), in which case its own operands are decided the same
 * way. Cheap values recomputed in the backward fuse into its kernels instead of costing a
 * round trip through memory. */
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

/* Marks what the backward needs, from its outputs back: nodes that follow the seed, and the
 * forward values they read, each either saved (save[i]) or recomputed (keep[i]). */
static bool decide(const tc_graph *j, int32_t n_fwd, const bool *dep, bool *keep, bool *save) {
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
    if (!dep[v] && i < n_fwd && expensive(nd->prim)) {
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

tc_status aot_partition_build(const tc_graph *j, int32_t n_fwd, int32_t seed, tc_graph *bwd, aot_partition *p) {
  memset(p, 0, sizeof *p);
  const int32_t ni = j->n_inputs, nn = j->n_nodes, nv = ni + nn;
  bool *dep = calloc((size_t)nv, sizeof *dep), *keep = calloc((size_t)(nn ? nn : 1), sizeof *keep);
  bool *save = calloc((size_t)(nn ? nn : 1), sizeof *save);
  int32_t *map = malloc((size_t)nv * sizeof *map), *in = NULL;
  p->saved = malloc((size_t)(nn ? nn : 1) * sizeof *p->saved);
  graph_init(bwd, j->name);
  tc_status s = TC_OK;
  if (!dep || !keep || !save || !map || !p->saved) goto oom;
  /* Which values follow the seed (the result's gradient): the backward proper. */
  dep[seed] = true;
  for (int32_t i = 0; i < nn; i++)
    for (int32_t k = 0; k < j->nodes[i].n_in && !dep[ni + i]; k++)
      dep[ni + i] = dep[j->nodes[i].in[k]];
  if (!decide(j, n_fwd, dep, keep, save)) goto oom;

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
  free(map);
  free(in);
  return s;
}
