/* aot.c — gradients through a compiled function whose inputs require grad (AOTAutograd's
 * part). When the traced result depends on call inputs that require grad, the backward prims
 * are traced right after the forward, from a new graph input standing for the result's
 * gradient: the joint graph. Its backward part is compiled as the entry's backward variant,
 * and every call's result gets a tape node whose rule runs that variant, so tc_backward and
 * tc_grad on the result (or on anything computed from it) reach the inputs.
 *
 * The partition is the simplest one: the forward keeps nothing for the backward, which
 * recomputes the forward values it needs from the inputs (TC_LOGS=aot prints the joint graph
 * and what keeping every intermediate instead would have cost). Saving the expensive values
 * (a min-cut over the joint graph) is still to do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "compile/compile.h"

/* ---------------------------------------------------------------- building the backward */
static int64_t value_bytes(const tc_vtype *t, const int64_t *vals) {
  int64_t n = (int64_t)tck_dtype_size(t->dtype);
  for (int d = 0; d < t->rank; d++)
    n *= vals[t->shape[d]];
  return n;
}

/* How many of the backward's nodes do not depend on the seed input: forward values it
 * recomputes (constants included). */
static int32_t recomputed_nodes(const tc_graph *g, int32_t seed) {
  bool *dep = calloc((size_t)(g->n_inputs + g->n_nodes), sizeof *dep);
  if (!dep) return -1;
  dep[seed] = true;
  int32_t n = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const tc_node *nd = &g->nodes[i];
    bool d = false;
    for (int32_t k = 0; k < nd->n_in && !d; k++)
      d = dep[nd->in[k]];
    dep[g->n_inputs + i] = d;
    n += !d;
  }
  free(dep);
  return n;
}

/* TC_LOGS=aot: the joint graph's backward, and the bytes the forward would keep if it saved
 * every intermediate, against the nothing it keeps. */
static void aot_log(const tc_compiled *c, const cap_entry *e, const cap_variant *fwd, const cap_variant *bwd,
                    const int64_t *syms) {
  if (!tc_logs_on("aot")) return;
  char header[256];
  snprintf(header, sizeof header, "joint graph of %s (entry %d): the backward, %d nodes after simplification", c->name,
           (int)e->id, (int)bwd->graph.n_nodes);
  char *text = graph_to_string(&bwd->graph);
  tc_logs_text("aot", header, text);
  free(text);
  /* Every forward intermediate, at the sizes of this call. */
  int64_t *vals = malloc((size_t)(fwd->graph.sx.n ? fwd->graph.sx.n : 1) * sizeof *vals);
  int64_t all = 0;
  if (vals) {
    sxtab_eval(&fwd->graph.sx, syms, vals);
    for (int32_t i = 0; i < fwd->graph.n_nodes; i++)
      all += value_bytes(&fwd->graph.nodes[i].out, vals);
    free(vals);
  }
  tc_logs("aot",
          "partition of %s: the forward saves 0 bytes for the backward (keeping every intermediate: %lld bytes in %d "
          "values); the backward recomputes %d nodes from the inputs, %d nodes follow the gradient",
          c->name, (long long)all, (int)fwd->graph.n_nodes, (int)recomputed_nodes(&bwd->graph, e->backward_seed),
          (int)(bwd->graph.n_nodes - recomputed_nodes(&bwd->graph, e->backward_seed)));
}

tc_status aot_build(tc_compiled *c, cap_entry *e, tc_trace *tr, tc_tensor *ret, tc_tensor *result,
                    tc_tensor *const *proxies, const int64_t *syms) {
  int32_t wrt_index[CAP_MAX_PARAMS], n = 0;
  for (int32_t i = 0; i < c->n_params; i++)
    if (tr->in[i].guard.requires_grad) wrt_index[n++] = i;
  if (n == 0 || !ret->trace || !tape_needs_grad(ret) || !dtype_is_float(ret->dtype)) return TC_OK;

  /* The backward prims go into the same trace, after the forward's. */
  tc_trace *prev = trace_set_current(tr);
  tc_scope *sc = tc_scope_open();
  tc_tensor *wrt[CAP_MAX_PARAMS], *grads[CAP_MAX_PARAMS] = {0};
  for (int32_t k = 0; k < n; k++)
    wrt[k] = proxies[wrt_index[k]];
  tc_tensor *seed = trace_input_like(tr, ret, result, &e->backward_seed);
  tc_status s = seed ? grad_backward("tc_call", ret, seed, n, wrt, grads, false) : tc_last_status();
  int32_t outs[CAP_MAX_PARAMS];
  for (int32_t k = 0; s == TC_OK && k < n; k++) {
    /* An input the result does not depend on gets zeros, as tc_grad gives. */
    tc_tensor *g = grads[k] ? grads[k] : ops_full_like(wrt[k], 0.0, wrt[k]->dtype);
    outs[k] = g ? trace_operand_value(tr, "a gradient", g) : -1;
    if (outs[k] < 0) s = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
  }
  for (int32_t k = 0; k < n; k++)
    tensor_drop(grads[k]);
  tc_scope_close(sc);
  trace_set_current(prev);
  if (s != TC_OK) return s;

  tc_graph g;
  cap_guards guards;
  if (trace_segment_graph(tr, n, outs, &g, &guards) != TC_OK) return tc_last_status();
  snprintf(g.name, sizeof g.name, "%.50s_backward", c->name);
  tc_tensor **sources = malloc((size_t)tr->n_in * sizeof *sources);
  if (!sources) {
    graph_free(&g);
    guards_free(&guards);
    return core_error(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
  }
  for (int32_t i = 0; i < tr->n_in; i++)
    sources[i] = tr->in[i].real;
  cap_variant *bwd = compiled_build_variant(c, e, 0, &g, &guards, 0, sources);
  free(sources);
  if (!bwd) return tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
  e->backward = bwd;
  aot_log(c, e, e->segments[0].variants[0], bwd, syms);
  return TC_OK;
}

/* ---------------------------------------------------------------- running it */
typedef struct aot_call {
  tc_compiled *c;
  const cap_variant *bwd;
  int32_t n_params, seed;            /* seed: the graph input that takes the result's gradient */
  tc_tensor *inputs[CAP_MAX_PARAMS]; /* held: the backward recomputes the forward from them */
  int32_t n_syms;
  int64_t syms[]; /* this call's symbol values */
} aot_call;

static void aot_call_free(void *ctx) {
  aot_call *a = ctx;
  for (int32_t i = 0; i < a->n_params; i++)
    tensor_drop(a->inputs[i]);
  compiled_release(a->c);
  free(a);
}

/* The tape rule of a compiled call: the backward variant on (inputs, captured, g). */
static tc_status aot_vjp(void *ctx, tc_tensor *y, tc_tensor *g, tc_tensor **dx) {
  (void)y;
  aot_call *a = ctx;
  const cap_variant *v = a->bwd;
  tc_tensor *src_stack[32];
  tc_tensor **sources = v->graph.n_inputs <= 32 ? src_stack : malloc((size_t)v->graph.n_inputs * sizeof *sources);
  if (!sources) return core_error(TC_ERR_OUT_OF_MEMORY, "tc_backward: out of memory");
  /* The backward reads the gradient as a plain buffer: a broadcast seed (ones of a sum's
   * rank-0 result, expanded) becomes contiguous first. */
  tc_tensor *gc = tc_contiguous(g);
  for (int32_t i = 0; i < v->graph.n_inputs; i++)
    sources[i] = i < a->n_params ? a->inputs[i] : i == a->seed ? gc : v->held[i];
  tc_tensor *outs[CAP_MAX_PARAMS] = {0};
  tc_status s = gc ? compiled_run_variant(a->c, (cap_variant *)v, sources, a->syms, outs) : tc_last_status();
  if (sources != src_stack) free(sources);
  tc_release(gc);
  for (int32_t k = 0; s == TC_OK && k < v->n_outputs; k++)
    dx[k] = outs[k];
  return s;
}

tc_tensor *aot_attach(tc_compiled *c, const cap_entry *e, tc_tensor *const *inputs, const int64_t *syms,
                      tc_tensor *result) {
  const cap_variant *bwd = e->backward;
  if (!bwd || !result) return result;
  int32_t n_syms = e->segments[0].variants[0]->guards.n_syms;
  aot_call *a = calloc(1, sizeof *a + (size_t)(n_syms ? n_syms : 1) * sizeof *a->syms);
  tc_tensor *wrt[CAP_MAX_PARAMS];
  int32_t n = 0;
  if (!a) {
    tc_release(result);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
  }
  a->c = compiled_retain(c);
  a->bwd = bwd;
  a->n_params = c->n_params;
  a->seed = e->backward_seed;
  a->n_syms = n_syms;
  memcpy(a->syms, syms, (size_t)n_syms * sizeof *syms);
  for (int32_t i = 0; i < c->n_params; i++) {
    tensor_hold(inputs[i]);
    a->inputs[i] = inputs[i];
    if (tape_needs_grad(inputs[i])) wrt[n++] = inputs[i];
  }
  if (!tape_attach_custom(result, n, wrt, aot_vjp, a, aot_call_free)) {
    aot_call_free(a);
    tc_release(result);
    return NULL;
  }
  return result;
}
