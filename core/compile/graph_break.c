/* graph_break.c — host reads of traced tensors (tc_item, tc_to_host). Under fullgraph they are
 * an error naming the op. Otherwise the segment recorded so far ends there: it is compiled (or
 * found again when the function is replayed) and run, the host gets the real value, and
 * tracing goes on in a new segment whose inputs are the values still referenced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/compile.h"

/* Proxies the function can still use: referenced by someone besides the trace (their scope's
 * creation reference, or one the function holds). C gives us no liveness beyond that. */
static bool proxy_live(const tc_tensor *p, const tc_tensor *wanted) {
  return p->value >= 0 && (p == wanted || p->refcount >= 2);
}

/* Creation prims of a static shape (splat constants, iota, random) are recorded again in the
 * next segment rather than carried over as outputs: recomputing them costs nothing, writing
 * them out costs memory traffic. Returns the node, or NULL for values to carry. */
static const tc_node *remat_node(const tc_trace *tr, const tc_tensor *p) {
  int32_t def = tr->val_def[p->value];
  if (def < 0) return NULL;
  const tc_node *n = &tr->nodes[def];
  if (n->n_in != 0) return NULL;
  if (n->prim == TC_PRIM_CONSTANT && (n->n_iattrs < 1 || n->iattrs[0] >= 0)) return NULL;
  if (n->prim != TC_PRIM_CONSTANT && n->prim != TC_PRIM_IOTA && n->prim != TC_PRIM_RANDOM) return NULL;
  for (int d = 0; d < p->rank; d++)
    if (p->sym[d] >= 0) return NULL;
  return n;
}

static tc_status break_fail(tc_trace *tr) {
  trace_fail(tr, tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL, tc_last_error());
  return tr->fail_status;
}

tc_status graph_break_materialize(const char *op, const tc_tensor *proxy, tc_tensor **real) {
  *real = NULL;
  tc_trace *tr = proxy ? proxy->trace : NULL;
  if (!tr) return core_error(TC_ERR_INTERNAL, "%s: not a traced tensor", op);
  tc_compiled *c = tr->c;
  if (tr->failed) return core_error(tr->fail_status, "%s", tr->fail_msg);
  if (c->opts.fullgraph) {
    char msg[512], sh[96];
    snprintf(msg, sizeof msg, "tc_compile(%s): graph break at %s with fullgraph=true (reading a %s tensor of shape %s back to the host)",
             c->name, op, tc_dtype_name(proxy->dtype), tc_shape_str(sh, sizeof sh, proxy->rank, proxy->sizes));
    trace_fail(tr, TC_ERR_GRAPH_BREAK, msg);
    return core_error(TC_ERR_GRAPH_BREAK, "%s", msg);
  }
  if (tr->n_assign > 0) {
    /* The assigned values are this segment's; the next one could not write them back. */
    char msg[512];
    snprintf(msg, sizeof msg, "tc_compile(%s): graph break at %s after tc_assign is not supported", c->name, op);
    trace_fail(tr, TC_ERR_UNSUPPORTED, msg);
    return core_error(TC_ERR_UNSUPPORTED, "%s", msg);
  }
  if (proxy->value < 0 || proxy->value >= tr->n_vals)
    return core_error(TC_ERR_INVALID_ARGUMENT, "tc_compile(%s): %s on a traced tensor released before an earlier graph break", c->name, op);

  const int32_t np = tr->n_proxies;
  tc_tensor **live = malloc((size_t)(np ? np : 1) * sizeof *live);
  int32_t *slot = malloc((size_t)(np ? np : 1) * sizeof *slot);
  /* Slots of the next segment's inputs: one per distinct value. */
  int32_t *slot_value = malloc((size_t)(np ? np : 1) * sizeof *slot_value);
  int32_t *outs = malloc((size_t)(np ? np : 1) * sizeof *outs);
  tc_tensor **reals = calloc((size_t)(np ? np : 1), sizeof *reals);
  const tc_tensor **origs = calloc((size_t)(np ? np : 1), sizeof *origs);
  int32_t *kinds = malloc((size_t)(np ? np : 1) * sizeof *kinds);
  int32_t *indices = malloc((size_t)(np ? np : 1) * sizeof *indices);
  tc_tensor **outputs = calloc((size_t)(np ? np : 1), sizeof *outputs);
  tc_tensor **sources = malloc((size_t)(tr->n_in ? tr->n_in : 1) * sizeof *sources);
  tc_tensor **remat = malloc((size_t)(np ? np : 1) * sizeof *remat);
  tc_node *remat_nodes = malloc((size_t)(np ? np : 1) * sizeof *remat_nodes);
  tc_status s = TC_OK;
  int32_t n_live = 0, n_slots = 0, n_outs = 0, n_remat = 0;
  if (!remat || !remat_nodes || !live || !slot || !slot_value || !outs || !reals || !origs || !kinds || !indices || !outputs || !sources) {
    s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile(%s): out of memory at a graph break", c->name);
    trace_fail(tr, s, tc_last_error());
    goto done;
  }
  for (int32_t i = 0; i < np; i++) {
    tc_tensor *p = tr->proxies[i];
    if (!proxy_live(p, proxy)) continue;
    if (p != proxy && remat_node(tr, p)) {
      remat[n_remat++] = p;
      continue;
    }
    int32_t k = 0;
    while (k < n_slots && slot_value[k] != p->value) k++;
    if (k == n_slots) {
      slot_value[n_slots++] = p->value;
      if (tr->val_def[p->value] >= 0) outs[n_outs++] = p->value;
    }
    live[n_live] = p;
    slot[n_live++] = k;
  }

  const int32_t seg = tr->segment;
  tc_logs("graph_breaks", "%s: graph break at %s (graph %d of entry %d ends here, %d values carried over)", c->name, op,
          (int)seg + 1, tr->entry ? (int)tr->entry->id : 0, (int)n_slots);
  tc_logs("perf_hints",
          "%s: the graph break at %s splits every call into separately compiled graphs with eager code between "
          "(%d values go through memory between them, and no kernel fuses across): read the value outside the "
          "function and pass it in, or compile with fullgraph=true to have it reported as an error",
          c->name, op, (int)n_slots);
  tc_graph g;
  cap_guards guards;
  if (trace_segment_graph(tr, n_outs, outs, &g, &guards) != TC_OK) {
    s = break_fail(tr);
    goto done;
  }
  for (int32_t i = 0; i < tr->n_in; i++) sources[i] = tr->in[i].real;
  tc_trace *prev = trace_set_current(NULL); /* running the segment must not be traced */
  s = compiled_run_segment(c, tr->entry, seg, &g, &guards, sources, outputs);
  trace_set_current(prev);
  if (s != TC_OK) {
    s = break_fail(tr);
    goto done;
  }
  cap_segment *cs = &tr->entry->segments[seg];
  snprintf(cs->break_op, sizeof cs->break_op, "%s", op);
  snprintf(tr->break_op, sizeof tr->break_op, "%s", op);
  cs->n_breaks++;
  tr->entry->has_breaks = true;
  tr->entry->replay = true;
  tr->n_breaks++;

  /* The next segment's inputs: the same source for values that were inputs, the computed
   * tensor for the others. */
  for (int32_t k = 0; k < n_slots; k++) {
    int32_t def = tr->val_def[slot_value[k]];
    if (def < 0) {
      const trace_input *ti = &tr->in[-1 - def];
      reals[k] = trace_own_ref(ti->real);
      origs[k] = ti->orig;
      kinds[k] = ti->guard.kind;
      indices[k] = ti->guard.index;
    } else {
      int32_t o = 0;
      while (outs[o] != slot_value[k]) o++;
      reals[k] = outputs[o];
      outputs[o] = NULL;
      if (reals[k]) scope_unclaim(reals[k]); /* ours now, whatever scope is open */
      kinds[k] = CAP_SRC_CARRIED;
      indices[k] = 0;
    }
    if (!reals[k]) {
      s = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
      for (int32_t j = 0; j < k; j++) tc_release(reals[j]);
      trace_fail(tr, s, tc_last_error());
      goto done;
    }
  }
  int32_t want = 0;
  while (live[want] != proxy) want++;
  *real = tensor_new_view(reals[slot[want]], proxy->rank, reals[slot[want]]->sizes, reals[slot[want]]->strides,
                          reals[slot[want]]->offset);
  if (!*real) {
    s = break_fail(tr);
    for (int32_t k = 0; k < n_slots; k++) tc_release(reals[k]);
    goto done;
  }
  /* The nodes to record again are copied before the restart clears the segment. */
  for (int32_t k = 0; k < n_remat; k++) remat_nodes[k] = *remat_node(tr, remat[k]);
  s = trace_segment_restart(tr, n_slots, reals, origs, kinds, indices, n_live, live, slot);
  for (int32_t k = 0; s == TC_OK && k < n_remat; k++) s = trace_remat(tr, remat[k], &remat_nodes[k]);
  if (s != TC_OK) {
    tc_release(*real);
    *real = NULL;
    break_fail(tr);
  }
done:
  free(remat);
  free(remat_nodes);
  if (outputs)
    for (int32_t k = 0; k < n_outs; k++) tc_release(outputs[k]);
  free(live);
  free(slot);
  free(slot_value);
  free(outs);
  free(reals);
  free(origs);
  free(kinds);
  free(indices);
  free(outputs);
  free(sources);
  return s;
}
