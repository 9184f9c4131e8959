/* trace.c — recording a C function's prims on proxy tensors: one segment (graph) at a time,
 * with symbolic sizes for the dynamic dims and the guards the recording relied on.
 *
 * Nodes are kept in a segment-local list rather than a tc_graph because captured tensors
 * (globals used inside the function) become graph inputs in the middle of the recording, and a
 * tc_graph wants its inputs first; trace_segment_graph assembles the graph at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

static _Thread_local tc_trace *trace_top;

/* Where proxies point once their trace has ended, so a traced tensor kept past its call gives
 * an error instead of reading freed memory. Never written. */
static tc_trace trace_dead = {
    .failed = true,
    .fail_status = TC_ERR_INVALID_ARGUMENT,
    .fail_msg = "a traced tensor was used after its tc_call returned (tensors made inside a compiled function "
                "exist only while it is traced)",
};

tc_trace *trace_current(void) { return trace_top; }

tc_trace *trace_set_current(tc_trace *tr) {
  tc_trace *prev = trace_top;
  trace_top = tr;
  return prev;
}

tc_sxtab *trace_sxtab(tc_trace *tr) { return tr ? &tr->sx : NULL; }

void trace_fail(tc_trace *tr, tc_status s, const char *msg) {
  if (tr->failed) return; /* the first failure is the one to report */
  tr->failed = true;
  tr->fail_status = s;
  snprintf(tr->fail_msg, sizeof tr->fail_msg, "%s", msg);
}

tc_tensor *trace_own_ref(tc_tensor *t) {
  tc_tensor *v = tensor_new_view(t, t->rank, t->sizes, t->strides, t->offset);
  if (v) scope_unclaim(v);
  return v;
}

/* ---------------------------------------------------------------- growth */
static bool grow(void **p, int32_t *cap, int32_t need, size_t item) {
  if (need <= *cap) return true;
  int32_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * item);
  if (!q) return false;
  *p = q;
  *cap = c;
  return true;
}

static int32_t val_new(tc_trace *tr, int32_t def) {
  if (!grow((void **)&tr->val_def, &tr->cap_vals, tr->n_vals + 1, sizeof *tr->val_def)) return -1;
  tr->val_def[tr->n_vals] = def;
  return tr->n_vals++;
}

static bool proxy_track(tc_trace *tr, tc_tensor *p) {
  if (!grow((void **)&tr->proxies, &tr->cap_proxies, tr->n_proxies + 1, sizeof *tr->proxies)) return false;
  tensor_hold(p); /* ours: not the caller's retain, not the creation reference */
  tr->proxies[tr->n_proxies++] = p;
  return true;
}

/* ---------------------------------------------------------------- symbols */
/* Duck sizing, as torch does: dynamic dims of equal size at trace time share a symbol, so the
 * relations between them need no guards of their own (binding checks their consistency). */
static int32_t sym_for(tc_trace *tr, const cap_input_guard *cur, int dim, int64_t size) {
  for (int d = 0; d < dim; d++)
    if (cur->sym[d] >= 0 && cur->size[d] == size) return cur->sym[d];
  for (int32_t i = 0; i < tr->n_in; i++)
    for (int d = 0; d < tr->in[i].guard.rank; d++)
      if (tr->in[i].guard.sym[d] >= 0 && tr->in[i].guard.size[d] == size) return tr->in[i].guard.sym[d];
  return tr->n_syms++;
}

/* Adds a graph input for `real` (owned by the trace from here on). dynamic[d]: make dim d
 * symbolic (sizes 0 and 1 always stay static: they change broadcasting and emptiness). */
static int32_t input_add(tc_trace *tr, tc_tensor *real, const tc_tensor *orig, int32_t kind, int32_t index,
                         const bool *dynamic) {
  if (!grow((void **)&tr->in, &tr->cap_in, tr->n_in + 1, sizeof *tr->in)) return -1;
  trace_input *ti = &tr->in[tr->n_in];
  memset(ti, 0, sizeof *ti);
  ti->real = real;
  ti->orig = orig;
  ti->guard.kind = kind;
  ti->guard.index = index;
  ti->guard.dtype = real->dtype;
  ti->guard.rank = real->rank;
  ti->guard.requires_grad = kind == CAP_SRC_CALL && orig && tape_needs_grad(orig);
  /* The trace's own reference stands for the parameter when the fresh graph's guards are
   * checked, so it carries the mark too (it is never differentiated itself). */
  real->requires_grad = ti->guard.requires_grad;
  for (int d = 0; d < real->rank; d++) {
    ti->guard.size[d] = real->sizes[d];
    ti->guard.sym[d] = -1;
    if (dynamic && dynamic[d] && real->sizes[d] >= 2) {
      ti->guard.sym[d] = sym_for(tr, &ti->guard, d, real->sizes[d]);
      ti->shape[d] = sxtab_sym(&tr->sx, ti->guard.sym[d]);
    } else {
      ti->shape[d] = sxtab_const(&tr->sx, real->sizes[d]);
    }
    if (ti->shape[d] < 0) return -1;
  }
  int32_t v = val_new(tr, -1 - tr->n_in);
  if (v < 0) return -1;
  ti->value = v;
  tr->n_in++;
  return tr->n_in - 1;
}

/* A proxy for graph input i (claimed by the innermost scope, like any op result). */
static tc_tensor *proxy_for_input(tc_trace *tr, int32_t i, tc_tensor *reuse) {
  const trace_input *ti = &tr->in[i];
  tc_tensor *p = reuse ? reuse : tensor_new(ti->guard.dtype, ti->guard.rank, ti->guard.size);
  if (!p) return NULL;
  p->trace = tr;
  p->value = ti->value;
  /* A parameter that requires grad gives a proxy that does, so tc_grad inside the function can
   * differentiate with respect to it. */
  if (!reuse) p->requires_grad = ti->guard.requires_grad;
  for (int d = 0; d < TC_MAX_RANK; d++) p->sym[d] = d < ti->guard.rank && ti->guard.sym[d] >= 0 ? ti->shape[d] : -1;
  if (!reuse && !proxy_track(tr, p)) {
    tc_release(p);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory tracing");
  }
  return p;
}

tc_tensor *trace_input_like(tc_trace *tr, const tc_tensor *like, tc_tensor *real, int32_t *index) {
  tc_tensor *own = trace_own_ref(real);
  if (!own) return NULL;
  int32_t i = input_add(tr, own, NULL, CAP_SRC_CARRIED, tr->n_carried, NULL);
  if (i < 0) {
    tc_release(own);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory tracing");
  }
  tr->n_carried++;
  trace_input *ti = &tr->in[i];
  for (int d = 0; d < like->rank; d++)
    if (like->sym[d] >= 0) ti->shape[d] = like->sym[d];
  *index = i;
  tc_tensor *p = proxy_for_input(tr, i, NULL);
  if (p)
    for (int d = 0; d < like->rank; d++) p->sym[d] = like->sym[d];
  return p;
}

/* ---------------------------------------------------------------- begin / end */
static void segment_clear(tc_trace *tr) {
  for (int32_t j = 0; j < tr->n_nodes; j++) free(tr->nodes[j].in);
  tr->n_nodes = 0;
  for (int32_t i = 0; i < tr->n_in; i++) tc_release(tr->in[i].real);
  tr->n_in = 0;
  tr->n_vals = 0;
  tr->n_rel = 0;
  tr->n_syms = 0;
  tr->n_captured = 0;
  tr->n_carried = 0;
  sxtab_free(&tr->sx);
  sxtab_init(&tr->sx);
}

tc_status trace_begin(tc_trace *tr, const char *name, int32_t n_inputs, bool (*dyn)[TC_MAX_RANK],
                      tc_tensor *const *inputs, tc_tensor **proxies) {
  memset(tr, 0, sizeof *tr);
  snprintf(tr->name, sizeof tr->name, "%s", name);
  sxtab_init(&tr->sx);
  tr->prev = trace_set_current(tr);
  for (int32_t i = 0; i < n_inputs; i++) {
    tc_tensor *own = trace_own_ref(inputs[i]);
    if (!own) return tc_last_status();
    if (input_add(tr, own, inputs[i], CAP_SRC_CALL, i, dyn[i]) < 0) {
      tc_release(own);
      return core_error(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory tracing", tr->name);
    }
    proxies[i] = proxy_for_input(tr, i, NULL);
    if (!proxies[i]) return tc_last_status();
    tr->n_params = i + 1;
  }
  return TC_OK;
}

void trace_end(tc_trace *tr) {
  if (trace_top == tr) trace_set_current(tr->prev);
  segment_clear(tr);
  sxtab_free(&tr->sx);
  free(tr->in);
  free(tr->val_def);
  free(tr->nodes);
  free(tr->rel);
  free(tr->assign_param);
  free(tr->assign_value);
  /* Our references only: the scope the call opened has given up the creation references. */
  for (int32_t i = 0; i < tr->n_proxies; i++) {
    tc_tensor *p = tr->proxies[i];
    p->value = -1;
    p->trace = &trace_dead;
    tensor_drop(p);
  }
  free(tr->proxies);
  memset(tr, 0, sizeof *tr);
}

/* ---------------------------------------------------------------- recording */
static int32_t capture_real(tc_trace *tr, tc_tensor *t) {
  for (int32_t i = 0; i < tr->n_in; i++)
    if (tr->in[i].guard.kind == CAP_SRC_CAPTURED && tr->in[i].orig == t) return tr->in[i].value;
  tc_tensor *own = trace_own_ref(t);
  if (!own) return -1;
  int32_t i = input_add(tr, own, t, CAP_SRC_CAPTURED, tr->n_captured, NULL);
  if (i < 0) {
    tc_release(own);
    core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory tracing");
    return -1;
  }
  tr->n_captured++;
  return tr->in[i].value;
}

/* The segment-local value of operand t, lifting real tensors; -1 with the error set. */
int32_t trace_operand_value(tc_trace *tr, const char *what, tc_tensor *t) {
  if (!t) {
    core_error(TC_ERR_INTERNAL, "tc_compile(%s): %s: NULL operand", tr->name, what);
    return -1;
  }
  if (!t->trace) return capture_real(tr, t);
  if (t->trace != tr) {
    core_error(TC_ERR_INVALID_ARGUMENT,
             "tc_compile(%s): %s: operand belongs to another traced function (a traced tensor escaped its call)",
             tr->name, what);
    return -1;
  }
  if (t->value < 0 || t->value >= tr->n_vals) {
    core_error(TC_ERR_INVALID_ARGUMENT,
             "tc_compile(%s): %s: operand was released before the graph break at %s and used after it",
             tr->name, what, tr->segment > 0 && tr->break_op[0] ? tr->break_op : "?");
    return -1;
  }
  return t->value;
}

tc_tensor *trace_record(tc_trace *tr, const tc_node *node, int n_in, tc_tensor *const *in, const tc_sz *shape) {
  if (!tr) return core_error_null(TC_ERR_INTERNAL, "trace_record: no trace");
  const char *what = prim_name(node->prim);
  if (tr->failed) return core_error_null(tr->fail_status, "%s", tr->fail_msg);
  if (node->out.rank < 0 || node->out.rank > TC_MAX_RANK || n_in < 0)
    return core_error_null(TC_ERR_INTERNAL, "trace_record: %s: bad rank %d", what, node->out.rank);
  if (!grow((void **)&tr->nodes, &tr->cap_nodes, tr->n_nodes + 1, sizeof *tr->nodes))
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory tracing");
  int32_t *ids = malloc((size_t)(n_in ? n_in : 1) * sizeof *ids);
  if (!ids) return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory tracing");
  for (int i = 0; i < n_in; i++) {
    ids[i] = trace_operand_value(tr, what, in[i]);
    if (ids[i] < 0) {
      free(ids);
      return NULL;
    }
  }
  tc_node n = *node;
  n.n_in = n_in;
  n.in = ids;
  int64_t sizes[TC_MAX_RANK];
  int32_t sym[TC_MAX_RANK];
  for (int d = 0; d < n.out.rank; d++) {
    int32_t e = shape[d].e;
    if (e >= tr->sx.n) {
      free(ids);
      return core_error_null(TC_ERR_INTERNAL, "trace_record: %s: size expression %d out of range", what, e);
    }
    if (e < 0) e = sxtab_const(&tr->sx, shape[d].v);
    if (e < 0) {
      free(ids);
      return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory tracing");
    }
    n.out.shape[d] = e;
    sizes[d] = shape[d].v;
    sym[d] = sxtab_is_const(&tr->sx, e, NULL) ? -1 : e;
  }
  int32_t v = val_new(tr, tr->n_nodes);
  tc_tensor *p = v >= 0 ? tensor_new(n.out.dtype, n.out.rank, sizes) : NULL;
  if (!p) {
    if (v >= 0) tr->n_vals--;
    free(ids);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory tracing");
  }
  tr->nodes[tr->n_nodes++] = n;
  p->trace = tr;
  p->value = v;
  for (int d = 0; d < TC_MAX_RANK; d++) p->sym[d] = d < n.out.rank ? sym[d] : -1;
  if (!proxy_track(tr, p)) {
    tc_release(p);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory tracing");
  }
  return p;
}

/* ---------------------------------------------------------------- guards from the trace */
static void rel_add(tc_trace *tr, int32_t a, int32_t b, bool equal) {
  if (a < 0 || b < 0 || a == b) return;
  int64_t ca = 0, cb = 0;
  bool ka = sxtab_is_const(&tr->sx, a, &ca), kb = sxtab_is_const(&tr->sx, b, &cb);
  if (ka && kb) return;
  /* "s != 0", "s != 1": implied by every symbol being >= 2 (sizes 0 and 1 stay static). */
  if (!equal && (ka || kb) && (ka ? ca : cb) <= 1 && tr->sx.nodes[ka ? b : a].op == TC_SX_SYM) return;
  if (a > b) {
    int32_t t = a;
    a = b;
    b = t;
  }
  for (int32_t i = 0; i < tr->n_rel; i++)
    if (tr->rel[i].a == a && tr->rel[i].b == b && tr->rel[i].equal == equal) return;
  if (!grow((void **)&tr->rel, &tr->cap_rel, tr->n_rel + 1, sizeof *tr->rel)) {
    trace_fail(tr, TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory recording a guard");
    return;
  }
  tr->rel[tr->n_rel++] = (cap_rel_guard){a, b, equal};
}

void trace_guard_eq(tc_trace *tr, tc_sz a, tc_sz b, bool equal) {
  if (!tr || (a.e < 0 && b.e < 0)) return;
  int32_t ea = a.e >= 0 ? a.e : sxtab_const(&tr->sx, a.v);
  int32_t eb = b.e >= 0 ? b.e : sxtab_const(&tr->sx, b.v);
  rel_add(tr, ea, eb, equal);
}

void trace_pin_size(const tc_tensor *proxy, int dim) {
  if (!proxy || !proxy->trace || dim < 0 || dim >= proxy->rank) return;
  tc_trace *tr = proxy->trace;
  if (tr->failed || proxy->value < 0 || proxy->sym[dim] < 0 || proxy->sym[dim] >= tr->sx.n) return;
  rel_add(tr, proxy->sym[dim], sxtab_const(&tr->sx, proxy->sizes[dim]), true);
}

/* ---------------------------------------------------------------- segments */
tc_status trace_segment_graph(tc_trace *tr, int32_t n_outs, const int32_t *outs, tc_graph *g, cap_guards *guards) {
  char name[64];
  if (tr->segment == 0)
    snprintf(name, sizeof name, "%s", tr->name);
  else
    snprintf(name, sizeof name, "%.40s_part%d", tr->name, (int)tr->segment + 1);
  graph_init(g, name);
  memset(guards, 0, sizeof *guards);
  sxtab_free(&g->sx);
  if (sxtab_copy(&tr->sx, &g->sx) != TC_OK) goto oom;
  g->n_syms = tr->n_syms;
  /* An equality guard between a symbol and a constant pins the symbol (graph.h). */
  for (int32_t i = 0; i < tr->n_rel; i++) {
    const cap_rel_guard *r = &tr->rel[i];
    int64_t v;
    if (!r->equal) continue;
    int32_t sym = sxtab_is_const(&tr->sx, r->b, &v) ? r->a : sxtab_is_const(&tr->sx, r->a, &v) ? r->b : -1;
    if (sym < 0 || tr->sx.nodes[sym].op != TC_SX_SYM) continue;
    int64_t k = tr->sx.nodes[sym].value;
    if (k >= 0 && k < GRAPH_MAX_PINS) g->sym_pin[k] = v;
  }
  for (int32_t i = 0; i < tr->n_in; i++) {
    tc_vtype vt = {.dtype = tr->in[i].guard.dtype, .rank = tr->in[i].guard.rank};
    memcpy(vt.shape, tr->in[i].shape, sizeof vt.shape);
    if (graph_add_input(g, &vt) < 0) goto oom;
  }
  const int32_t n_in = tr->n_in;
#define VAL_MAP(v) (tr->val_def[v] < 0 ? -1 - tr->val_def[v] : n_in + tr->val_def[v])
  for (int32_t j = 0; j < tr->n_nodes; j++) {
    tc_node n = tr->nodes[j];
    int32_t stack_in[8];
    int32_t *in = n.n_in <= 8 ? stack_in : malloc((size_t)n.n_in * sizeof *in);
    if (!in) goto oom;
    for (int32_t k = 0; k < n.n_in; k++) in[k] = VAL_MAP(tr->nodes[j].in[k]);
    n.in = in;
    int32_t id = graph_add_node(g, &n);
    if (in != stack_in) free(in);
    if (id < 0) goto oom;
  }
  int32_t *mapped = malloc((size_t)(n_outs ? n_outs : 1) * sizeof *mapped);
  if (!mapped) goto oom;
  for (int32_t k = 0; k < n_outs; k++) mapped[k] = VAL_MAP(outs[k]);
#undef VAL_MAP
  graph_set_outputs(g, n_outs, mapped);
  free(mapped);

  guards->n_inputs = n_in;
  guards->n_syms = tr->n_syms;
  guards->inputs = calloc((size_t)(n_in ? n_in : 1), sizeof *guards->inputs);
  guards->rel = calloc((size_t)(tr->n_rel ? tr->n_rel : 1), sizeof *guards->rel);
  if (!guards->inputs || !guards->rel) goto oom;
  for (int32_t i = 0; i < n_in; i++) guards->inputs[i] = tr->in[i].guard;
  guards->n_rel = tr->n_rel;
  if (tr->n_rel) memcpy(guards->rel, tr->rel, (size_t)tr->n_rel * sizeof *tr->rel);
  return TC_OK;
oom:
  guards_free(guards);
  graph_free(g);
  return core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile(%s): out of memory building the graph", tr->name);
}

tc_status trace_segment_restart(tc_trace *tr, int32_t n_reals, tc_tensor **reals, const tc_tensor *const *origs,
                                const int32_t *kinds, const int32_t *indices, int32_t n_proxies, tc_tensor **proxies,
                                const int32_t *slot) {
  /* Which dims stay symbolic is decided from the proxies' old symbols, before they go. */
  bool (*dyn)[TC_MAX_RANK] = calloc((size_t)(n_reals ? n_reals : 1), sizeof *dyn);
  if (!dyn) {
    for (int32_t i = 0; i < n_reals; i++) tc_release(reals[i]);
    return core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory at a graph break");
  }
  for (int32_t k = 0; k < n_proxies; k++)
    for (int d = 0; d < proxies[k]->rank; d++)
      if (proxies[k]->sym[d] >= 0) dyn[slot[k]][d] = true;

  for (int32_t i = 0; i < tr->n_proxies; i++) tr->proxies[i]->value = -1;
  segment_clear(tr);
  tr->segment++;
  tc_status s = TC_OK;
  int32_t i = 0;
  for (; i < n_reals; i++) {
    int32_t index = kinds[i] == CAP_SRC_CALL ? indices[i] : kinds[i] == CAP_SRC_CAPTURED ? tr->n_captured++ : tr->n_carried++;
    if (input_add(tr, reals[i], origs[i], kinds[i], index, dyn[i]) < 0) {
      s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory at a graph break");
      break;
    }
  }
  if (s != TC_OK)
    for (int32_t j = i; j < n_reals; j++) tc_release(reals[j]);
  else
    for (int32_t k = 0; k < n_proxies; k++) proxy_for_input(tr, slot[k], proxies[k]);
  free(dyn);
  return s;
}

tc_status trace_remat(tc_trace *tr, tc_tensor *proxy, const tc_node *node) {
  if (!grow((void **)&tr->nodes, &tr->cap_nodes, tr->n_nodes + 1, sizeof *tr->nodes))
    return core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory at a graph break");
  tc_node n = *node;
  n.n_in = 0;
  n.in = malloc(sizeof(int32_t));
  if (!n.in) return core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory at a graph break");
  for (int d = 0; d < n.out.rank; d++) {
    n.out.shape[d] = sxtab_const(&tr->sx, proxy->sizes[d]);
    if (n.out.shape[d] < 0) {
      free(n.in);
      return core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory at a graph break");
    }
  }
  int32_t v = val_new(tr, tr->n_nodes);
  if (v < 0) {
    free(n.in);
    return core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory at a graph break");
  }
  tr->nodes[tr->n_nodes++] = n;
  proxy->value = v;
  return TC_OK;
}

tc_status trace_assign(tc_trace *tr, tc_tensor *dst, tc_tensor *src) {
  if (!tr || dst->trace != tr)
    return core_error(TC_ERR_INVALID_ARGUMENT, "tc_assign: dst belongs to another traced function");
  if (tr->failed) return core_error(tr->fail_status, "%s", tr->fail_msg);
  /* The parameters' proxies are the first the trace made (trace_begin). */
  int32_t param = -1;
  for (int32_t i = 0; i < tr->n_params && i < tr->n_proxies && param < 0; i++)
    if (tr->proxies[i] == dst) param = i;
  if (param < 0)
    return core_error(TC_ERR_INVALID_ARGUMENT,
                      "tc_compile(%s): tc_assign: dst must be a parameter of the compiled function itself (not an "
                      "op's result, a view or a captured tensor)",
                      tr->name);
  if (tr->segment > 0 || tr->n_breaks > 0)
    return core_error(TC_ERR_UNSUPPORTED, "tc_compile(%s): tc_assign after a graph break is not supported", tr->name);
  int32_t v = trace_operand_value(tr, "tc_assign", src);
  if (v < 0) return tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
  int32_t k = 0;
  while (k < tr->n_assign && tr->assign_param[k] != param) k++;
  if (k == tr->n_assign) {
    if (!grow((void **)&tr->assign_param, &tr->cap_assign, k + 1, sizeof *tr->assign_param))
      return core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory tracing");
    int32_t cap = tr->cap_assign;
    int32_t *q = realloc(tr->assign_value, (size_t)cap * sizeof *q);
    if (!q) return core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile: out of memory tracing");
    tr->assign_value = q;
    tr->n_assign++;
  }
  tr->assign_param[k] = param;
  tr->assign_value[k] = v;
  dst->value = v; /* later reads of dst see the new value, as they would eagerly */
  return TC_OK;
}
