/* aot.c — gradients through a compiled function whose inputs require grad (AOTAutograd's
 * part). On the first trace of such an entry, the backward prims are traced right after the
 * forward, from a new graph input standing for the result's gradient: the joint graph.
 * aot_partition.c splits it: the forward graph gains the values the backward reads and cannot
 * cheaply recompute as extra outputs, and the backward graph takes them as inputs. Both are
 * compiled by the entry's backend; every call's result gets a tape node holding that call's
 * saved values, whose rule runs the backward graph, so tc_backward and tc_grad on the result
 * (or on anything computed from it) reach the inputs. TC_LOGS=aot prints the backward graph
 * and the partition. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "compile/compile.h"

/* ---------------------------------------------------------------- the log */
/* TC_LOGS=aot: the backward graph, and what the forward saves for it against keeping every
 * forward intermediate, at the sizes of this call. */
static void aot_log(const tc_compiled *c, const cap_entry *e, const tc_graph *joint, int32_t n_fwd,
                    const aot_partition *p, const int64_t *syms) {
  if (!tc_logs_on("aot")) return;
  const cap_variant *bwd = e->backward;
  char header[256];
  snprintf(header, sizeof header,
           "joint graph of %s (entry %d): %d forward and %d backward nodes traced; the backward "
           "graph after partition and simplification:",
           c->name, (int)e->id, (int)n_fwd, (int)(joint->n_nodes - n_fwd));
  char *text = graph_to_string(&bwd->graph);
  tc_logs_text("aot", header, text);
  free(text);
  int64_t *vals = malloc((size_t)(joint->sx.n ? joint->sx.n : 1) * sizeof *vals);
  if (!vals) return;
  sxtab_eval(&joint->sx, syms, vals);
  int64_t all = 0, saved = 0;
  for (int32_t i = 0; i < n_fwd; i++)
    all += aot_value_bytes(&joint->nodes[i].out, vals);
  for (int32_t k = 0; k < p->n_saved; k++)
    saved += aot_value_bytes(&joint->nodes[p->saved[k]].out, vals);
  free(vals);
  tc_logs("aot",
          "partition of %s: the forward saves %lld bytes in %d values for the backward (keeping every "
          "intermediate: %lld bytes in %d values); the backward recomputes %d cheap nodes",
          c->name, (long long)saved, (int)p->n_saved, (long long)all, (int)n_fwd, (int)p->n_recomputed);
}

/* ---------------------------------------------------------------- the first call */
/* Traces the backward of ret with respect to wrt into tr; the joint graph's outputs (one
 * gradient per wrt) are written to outs. */
static tc_status trace_backward(tc_trace *tr, tc_tensor *ret, tc_tensor *result, int32_t n, tc_tensor *const *wrt,
                                int32_t *seed, int32_t *outs) {
  tc_trace *prev = trace_set_current(tr);
  tc_scope *sc = tc_scope_open();
  tc_tensor *grads[CAP_MAX_PARAMS] = {0};
  tc_tensor *g0 = trace_input_like(tr, ret, result, seed);
  tc_status s = g0 ? grad_backward("tc_call", ret, g0, n, wrt, grads, false) : tc_last_status();
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
  return s;
}

/* The backward graph's guards: the joint graph's inputs, then one per saved value. */
static tc_status guards_extend(cap_guards *g, int32_t n_more) {
  cap_input_guard *q = realloc(g->inputs, (size_t)(g->n_inputs + n_more + 1) * sizeof *q);
  if (!q) return core_error(TC_ERR_OUT_OF_MEMORY, "tc_call: out of memory");
  memset(q + g->n_inputs, 0, (size_t)n_more * sizeof *q);
  for (int32_t k = 0; k < n_more; k++)
    q[g->n_inputs + k].kind = CAP_SRC_CARRIED;
  g->inputs = q;
  g->n_inputs += n_more;
  return TC_OK;
}

tc_tensor *aot_first_call(tc_compiled *c, cap_entry *e, tc_trace *tr, tc_tensor *ret, tc_tensor *const *inputs,
                          tc_tensor *const *proxies, bool *handled) {
  *handled = false;
  tc_tensor *wrt[CAP_MAX_PARAMS];
  int32_t n = 0;
  for (int32_t i = 0; i < c->n_params; i++)
    if (tr->in[i].guard.requires_grad) wrt[n++] = proxies[i];
  if (n == 0 || tr->failed || tr->segment > 0 || !ret || !ret->trace || !tape_needs_grad(ret) ||
      !dtype_is_float(ret->dtype))
    return NULL;
  *handled = true;
  int32_t out = trace_operand_value(tr, "return value", ret);
  if (out < 0) return NULL;
  /* The forward graph first: its nodes are the joint graph's first n_fwd, in order. */
  tc_graph fwd, joint, bwd;
  cap_guards fguards, jguards;
  const int32_t n_fwd = tr->n_nodes, n_fwd_in = tr->n_in;
  if (trace_segment_graph(tr, 1, &out, &fwd, &fguards) != TC_OK) return NULL;
  memset(&joint, 0, sizeof joint);
  memset(&bwd, 0, sizeof bwd);
  memset(&jguards, 0, sizeof jguards);
  aot_partition part = {0};
  tc_tensor **sources = NULL, **outs = NULL, *result = NULL;
  int32_t gouts[CAP_MAX_PARAMS];
  /* A placeholder for the seed input while tracing: any real tensor of the result's shape. */
  tc_tensor *shape_of_y = tc_zeros(ret->dtype, ret->rank, ret->sizes);
  tc_status s = shape_of_y ? trace_backward(tr, ret, shape_of_y, n, wrt, &e->backward_seed, gouts) : tc_last_status();
  tc_release(shape_of_y);
  if (s == TC_OK) s = trace_segment_graph(tr, n, gouts, &joint, &jguards);
  /* The partition weighs bytes at the sizes this call traced. */
  int64_t traced_syms[64] = {0};
  for (int32_t i = 0; s == TC_OK && i < jguards.n_inputs; i++)
    for (int d = 0; d < jguards.inputs[i].rank; d++)
      if (jguards.inputs[i].sym[d] >= 0 && jguards.inputs[i].sym[d] < 64)
        traced_syms[jguards.inputs[i].sym[d]] = jguards.inputs[i].size[d];
  if (s == TC_OK) s = aot_partition_build(&joint, n_fwd, e->backward_seed, traced_syms, &bwd, &part);
  if (s == TC_OK) s = guards_extend(&jguards, part.n_saved);
  sources = calloc((size_t)tr->n_in + (size_t)part.n_saved + 1, sizeof *sources);
  outs = calloc((size_t)part.n_saved + 1, sizeof *outs);
  if (s == TC_OK && (!sources || !outs)) s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
  for (int32_t i = 0; s == TC_OK && i < tr->n_in; i++)
    sources[i] = tr->in[i].real;
  if (s == TC_OK) {
    /* The backward graph, then the forward with the saved values as extra outputs (run now). */
    snprintf(bwd.name, sizeof bwd.name, "%.50s_backward", c->name);
    e->backward = compiled_build_variant(c, e, 0, &bwd, &jguards, 0, sources);
    if (!e->backward) s = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
  }
  if (s == TC_OK) {
    int32_t *fo = malloc((size_t)(1 + part.n_saved) * sizeof *fo);
    if (!fo)
      s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
    else {
      fo[0] = fwd.outputs[0];
      for (int32_t k = 0; k < part.n_saved; k++)
        fo[1 + k] = n_fwd_in + part.saved[k];
      graph_set_outputs(&fwd, 1 + part.n_saved, fo);
      free(fo);
      e->n_saved = part.n_saved;
      s = compiled_run_segment(c, e, 0, &fwd, &fguards, sources, outs);
      memset(&fwd, 0, sizeof fwd); /* consumed */
      memset(&fguards, 0, sizeof fguards);
    }
  }
  int64_t syms[64];
  if (s == TC_OK && !compiled_entry_syms(c, e, inputs, syms)) {
    for (int32_t k = 0; k <= part.n_saved; k++)
      tc_release(outs[k]);
    s = core_error(TC_ERR_INTERNAL, "the entry's guards do not hold for the call that traced it");
  }
  if (s == TC_OK) {
    aot_log(c, e, &joint, n_fwd, &part, syms);
    result = aot_attach(c, e, inputs, syms, outs[0], outs + 1);
  } else {
    /* Its inputs asked for gradients: a backward that cannot be built fails the call. */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tc_last_error());
    core_error(s, "tc_call(%s): building the joint forward+backward graph: %s", c->name, msg);
  }
  graph_free(&fwd);
  guards_free(&fguards);
  graph_free(&joint);
  guards_free(&jguards);
  graph_free(&bwd);
  aot_partition_free(&part);
  free(sources);
  free(outs);
  return result;
}

/* ---------------------------------------------------------------- running it */
typedef struct aot_call {
  tc_compiled *c;
  const cap_variant *bwd;
  int32_t n_params, seed;            /* seed: the graph input that takes the result's gradient */
  tc_tensor *inputs[CAP_MAX_PARAMS]; /* held: the backward reads them */
  int32_t n_saved, first_saved;      /* the saved values are graph inputs first_saved.. */
  tc_tensor **saved;                 /* held: this call's saved values */
  int32_t n_syms;
  int64_t syms[]; /* this call's symbol values */
} aot_call;

static void aot_call_free(void *ctx) {
  aot_call *a = ctx;
  for (int32_t i = 0; i < a->n_params; i++)
    tensor_drop(a->inputs[i]);
  for (int32_t k = 0; k < a->n_saved; k++)
    tensor_drop(a->saved[k]);
  free(a->saved);
  compiled_release(a->c);
  free(a);
}

/* The tape rule of a compiled call: the backward graph on (inputs, captured, g, saved). */
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
    sources[i] = i < a->n_params       ? a->inputs[i]
                 : i == a->seed        ? gc
                 : i >= a->first_saved ? a->saved[i - a->first_saved]
                                       : v->held[i];
  tc_tensor *outs[CAP_MAX_PARAMS] = {0};
  tc_status s = gc ? compiled_run_variant(a->c, (cap_variant *)v, sources, a->syms, outs) : tc_last_status();
  if (sources != src_stack) free(sources);
  tc_release(gc);
  for (int32_t k = 0; s == TC_OK && k < v->n_outputs; k++)
    dx[k] = outs[k];
  return s;
}

tc_tensor *aot_attach(tc_compiled *c, const cap_entry *e, tc_tensor *const *inputs, const int64_t *syms,
                      tc_tensor *result, tc_tensor *const *saved) {
  const cap_variant *bwd = e->backward;
  if (!result) {
    for (int32_t k = 0; k < e->n_saved; k++)
      tc_release(saved[k]);
    return NULL;
  }
  if (!bwd) return result;
  if (!tape_enabled()) { /* called under tc_set_grad_enabled(false): nothing is recorded */
    for (int32_t k = 0; k < e->n_saved; k++)
      tc_release(saved[k]);
    return result;
  }
  int32_t n_syms = e->segments[0].variants[0]->guards.n_syms;
  aot_call *a = calloc(1, sizeof *a + (size_t)(n_syms ? n_syms : 1) * sizeof *a->syms);
  tc_tensor *wrt[CAP_MAX_PARAMS];
  int32_t n = 0;
  tc_tensor **keep = calloc((size_t)e->n_saved + 1, sizeof *keep);
  if (!a || !keep) {
    free(a);
    free(keep);
    tc_release(result);
    for (int32_t k = 0; k < e->n_saved; k++)
      tc_release(saved[k]);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
  }
  /* The saved values become ours alone: held, and given up by the caller's scope. */
  for (int32_t k = 0; k < e->n_saved; k++) {
    tensor_hold(saved[k]);
    tc_release(saved[k]);
    keep[k] = saved[k];
  }
  a->saved = keep;
  a->n_saved = e->n_saved;
  a->first_saved = bwd->graph.n_inputs - e->n_saved;
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
