/* compile.c — tc_compile and tc_call: the cache of compiled entries per wrapped function.
 *
 * A call checks the entries newest first against the call inputs. A hit without graph breaks
 * runs the compiled graph directly; a hit with breaks replays the C function under tracing,
 * each segment matched to its cached graph. A miss traces and compiles a new entry (with the
 * failing guard logged under TC_LOGS=recompiles), up to cache_size_limit entries, after which
 * misses run the function eagerly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile/compile.h"

#define CAP_DEFAULT_CACHE_LIMIT 8

cap_names compiled_names(const tc_compiled *c) { return (cap_names){c->n_params, c->names}; }

/* ---------------------------------------------------------------- tc_compile */
static char *dup_str(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static void names_parse(tc_compiled *c) {
  if (!c->input_names) return;
  char *p = c->input_names;
  for (int32_t i = 0; i < c->n_params && p; i++) {
    while (*p == ' ') p++;
    c->names[i] = p;
    char *comma = strchr(p, ',');
    char *end = comma ? comma : p + strlen(p);
    while (end > p && end[-1] == ' ') end--;
    if (comma) {
      *end = 0;
      p = comma + 1;
    } else {
      *end = 0;
      p = NULL;
    }
  }
}

tc_compiled *tc_compile(tc_model_fn fn, int n_inputs, const tc_compile_options *opts) {
  tc_compile_options o = {.struct_size = sizeof o};
  if (opts) {
    /* An older caller's smaller struct leaves the newer fields at their defaults; a zero
     * struct_size is taken as this header's struct. */
    size_t have = opts->struct_size && opts->struct_size < sizeof o ? opts->struct_size : sizeof o;
    memcpy(&o, opts, have);
    o.struct_size = sizeof o;
  }
  const char *name = o.name && o.name[0] ? o.name : "fn";
  if (!fn) return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_compile(%s): fn is NULL", name);
  if (n_inputs < 0 || n_inputs > CAP_MAX_PARAMS)
    return core_error_null(TC_ERR_INVALID_ARGUMENT,
                         "tc_compile(%s): n_inputs is %d; functions of 0..%d tensor parameters are supported", name,
                         n_inputs, CAP_MAX_PARAMS);
  if (o.dynamic < TC_DYNAMIC_AUTO || o.dynamic > TC_DYNAMIC_ON)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_compile(%s): dynamic is %d (expected TC_DYNAMIC_AUTO, _OFF or _ON)",
                         name, (int)o.dynamic);
  if (o.mode < TC_MODE_DEFAULT || o.mode > TC_MODE_MAX_AUTOTUNE_NO_CUDAGRAPHS)
    return core_error_null(TC_ERR_INVALID_ARGUMENT,
                           "tc_compile(%s): mode is %d (expected TC_MODE_DEFAULT, _REDUCE_OVERHEAD, _MAX_AUTOTUNE or "
                           "_MAX_AUTOTUNE_NO_CUDAGRAPHS)",
                           name, (int)o.mode);
  if (o.cache_size_limit < 0)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_compile(%s): cache_size_limit is %d (expected >= 0)", name,
                         (int)o.cache_size_limit);
  const char *backend = o.backend && o.backend[0] ? o.backend : "auto";
  /* Options are parsed once, checked against the backend's declared table, and handed to its
   * context (context-scope options pick the context) and to every compile. */
  tc_options *parsed = options_parse(o.options);
  tc_backend *be = parsed ? backend_find(backend, parsed) : NULL;
  if (!be) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tc_last_error());
    options_free(parsed);
    return core_error_null(tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_UNAVAILABLE, "tc_compile(%s): %s", name,
                         msg);
  }
  tc_compiled *c = calloc(1, sizeof *c);
  if (!c) {
    options_free(parsed);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_compile(%s): out of memory", name);
  }
  c->parsed = parsed;
  c->refs = 1;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  /* Recursive: a graph break inside the call compiles its segment while the call holds it. */
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&c->lock, &attr);
  pthread_mutexattr_destroy(&attr);
  c->fn = fn;
  c->n_params = n_inputs;
  snprintf(c->name, sizeof c->name, "%s", name);
  snprintf(c->backend_name, sizeof c->backend_name, "%s", be->name);
  c->backend = be;
  c->options = dup_str(o.options);
  c->input_names = dup_str(o.input_names);
  if ((o.options && !c->options) || (o.input_names && !c->input_names)) {
    tc_compiled_free(c);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_compile(%s): out of memory", name);
  }
  names_parse(c);
  c->opts = o;
  c->opts.name = c->name;
  c->opts.backend = c->backend_name;
  c->opts.options = c->options;
  c->opts.input_names = c->input_names;
  if (c->opts.cache_size_limit == 0) c->opts.cache_size_limit = CAP_DEFAULT_CACHE_LIMIT;
  for (int32_t i = 0; i < n_inputs; i++) c->arg_types[i] = &ffi_type_pointer;
  if (ffi_prep_cif(&c->cif, FFI_DEFAULT_ABI, (unsigned)n_inputs, &ffi_type_pointer, n_inputs ? c->arg_types : NULL) !=
      FFI_OK) {
    tc_compiled_free(c);
    return core_error_null(TC_ERR_INTERNAL, "tc_compile(%s): libffi could not prepare a call of %d pointers", name,
                         n_inputs);
  }
  return c;
}

/* ---------------------------------------------------------------- entries and variants */
static void variant_free(cap_variant *v) {
  if (!v) return;
  lowered_free(v->lowered);
  if (v->held)
    for (int32_t i = 0; i < v->graph.n_inputs; i++) tc_release(v->held[i]);
  free(v->held);
  free(v->out_map);
  guards_free(&v->guards);
  graph_free(&v->graph);
  free(v);
}

static void entry_free(cap_entry *e) {
  if (!e) return;
  variant_free(e->backward);
  for (int32_t s = 0; s < e->n_segments; s++) {
    for (int32_t k = 0; k < e->segments[s].n_variants; k++) variant_free(e->segments[s].variants[k]);
    free(e->segments[s].variants);
  }
  free(e->segments);
  free(e);
}

tc_compiled *compiled_retain(tc_compiled *c) {
  __atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
  return c;
}

void tc_compiled_free(tc_compiled *c) { compiled_release(c); }

void compiled_release(tc_compiled *c) {
  if (!c || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
  if (atomic_load(&c->async_state) != 0) pthread_join(c->async_thread, NULL); /* compile_async's thread */
  for (int32_t i = 0; i < c->n_entries; i++) entry_free(c->entries[i]);
  free(c->entries);
  free(c->options);
  free(c->input_names);
  options_free(c->parsed);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

/* Wraps the current error with the function's name, keeping its status. */
static tc_status fail_wrap(const tc_compiled *c, const char *what) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tc_last_error());
  tc_status s = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
  return core_error(s, "tc_compile(%s): %s: %s", c->name, what, msg);
}

tc_status compiled_run_variant(tc_compiled *c, cap_variant *v, tc_tensor *const *sources, const int64_t *syms,
                               tc_tensor **outputs) {
  const int32_t ng = v->graph.n_outputs;
  tc_tensor *gouts_stack[8] = {0};
  tc_tensor **gouts = ng <= 8 ? gouts_stack : calloc((size_t)ng, sizeof *gouts);
  bool used_stack[8] = {0};
  bool *used = ng <= 8 ? used_stack : calloc((size_t)ng, sizeof *used);
  tc_status s = TC_OK;
  if (!gouts || !used) {
    s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
    goto out;
  }
  if (v->lowered) {
    s = lowered_run(v->lowered, syms, sources, gouts);
    if (s != TC_OK) {
      char what[192];
      snprintf(what, sizeof what, "running graph %s on %s", v->graph.name, c->backend_name);
      s = fail_wrap(c, what);
      goto out;
    }
  }
  for (int32_t k = 0; k < v->n_outputs; k++) {
    int32_t m = v->out_map[k];
    tc_tensor *src = m >= 0 ? gouts[m] : sources[-1 - m];
    if (m >= 0 && !used[m]) {
      outputs[k] = src;
      used[m] = true;
    } else {
      /* An input passed through, or an output listed twice: a new tensor object on its storage. */
      outputs[k] = tensor_new_view(src, src->rank, src->sizes, src->strides, src->offset);
    }
    if (!outputs[k]) {
      s = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
      for (int32_t j = 0; j < k; j++) {
        if (v->out_map[j] >= 0 && outputs[j] == gouts[v->out_map[j]]) used[v->out_map[j]] = false;
        tc_release(outputs[j]);
        outputs[j] = NULL;
      }
      break;
    }
  }
  for (int32_t m = 0; m < ng; m++)
    if (!used[m]) tc_release(gouts[m]);
out:
  if (gouts != gouts_stack) free(gouts);
  if (used != used_stack) free(used);
  return s;
}

cap_variant *compiled_build_variant(tc_compiled *c, cap_entry *e, int32_t seg, tc_graph *g, cap_guards *guards,
                                    uint64_t hash, tc_tensor *const *sources) {
  const double t0 = tc_now_seconds();
  cap_variant *v = calloc(1, sizeof *v);
  int32_t *values = malloc((size_t)(g->n_outputs ? g->n_outputs : 1) * sizeof *values);
  int32_t *uniq = malloc((size_t)(g->n_outputs ? g->n_outputs : 1) * sizeof *uniq);
  if (!v || !values || !uniq) {
    free(v);
    free(values);
    free(uniq);
    graph_free(g);
    guards_free(guards);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_compile(%s): out of memory", c->name);
  }
  v->hash = hash;
  v->n_traced_nodes = g->n_nodes;
  v->guards = *guards;
  memset(guards, 0, sizeof *guards);
  tc_status s = graph_simplify(g, &v->graph, values, &v->simplified);
  const int32_t n_out = g->n_outputs;
  graph_free(g);
  if (s != TC_OK) {
    memset(&v->graph, 0, sizeof v->graph);
    fail_wrap(c, "simplifying the graph");
    goto fail;
  }
  v->n_outputs = n_out;
  v->out_map = malloc((size_t)(n_out ? n_out : 1) * sizeof *v->out_map);
  v->held = calloc((size_t)(v->graph.n_inputs ? v->graph.n_inputs : 1), sizeof *v->held);
  if (!v->out_map || !v->held) {
    core_error(TC_ERR_OUT_OF_MEMORY, "tc_compile(%s): out of memory", c->name);
    goto fail;
  }
  int32_t n_uniq = 0;
  for (int32_t k = 0; k < n_out; k++) {
    if (values[k] < v->graph.n_inputs) {
      v->out_map[k] = -1 - values[k];
      continue;
    }
    int32_t u = 0;
    while (u < n_uniq && uniq[u] != values[k]) u++;
    if (u == n_uniq) uniq[n_uniq++] = values[k];
    v->out_map[k] = u;
  }
  graph_set_outputs(&v->graph, n_uniq, uniq);
  if (assign_mark_outputs(e, v) != TC_OK) goto fail;
  for (int32_t i = 0; i < v->graph.n_inputs; i++)
    if (v->guards.inputs[i].kind == CAP_SRC_CAPTURED) {
      v->held[i] = trace_own_ref(sources[i]);
      if (!v->held[i]) goto fail;
    }

  if (tc_logs_on("graph")) {
    char header[256];
    snprintf(header, sizeof header, "graph %s (entry %d, graph %d): %d nodes traced, %d after simplification", v->graph.name,
             (int)e->id, (int)seg + 1, (int)v->n_traced_nodes, (int)v->graph.n_nodes);
    char *text = graph_to_string(&v->graph);
    tc_logs_text("graph", header, text);
    free(text);
  }
  if (tc_logs_on("guards")) {
    char header[256];
    snprintf(header, sizeof header, "guards of %s (entry %d, graph %d):", c->name, (int)e->id, (int)seg + 1);
    cap_names names = compiled_names(c);
    char *text = guards_to_string(&v->guards, &v->graph.sx, c->backend, &names, "  ");
    tc_logs_text("guards", header, text);
    free(text);
  }
  if (n_uniq > 0) {
    tc_lower_stats st = {0};
    const lower_options lo = {.options = c->parsed, .mode = c->opts.mode, .fullgraph = c->opts.fullgraph};
    s = lowered_build(c->backend, &v->graph, &lo, &v->lowered, &st);
    if (s != TC_OK) {
      char what[192];
      snprintf(what, sizeof what, "compiling graph %s for %s", v->graph.name, c->backend_name);
      fail_wrap(c, what);
      v->lowered = NULL;
      goto fail;
    }
    v->n_kernels = st.n_kernels;
    v->cache_hit = st.cache_hit;
  }
  free(values);
  free(uniq);
  v->seconds = tc_now_seconds() - t0;
  c->n_compiles++;
  c->compile_seconds += v->seconds;
  c->last_compile_seconds = v->seconds;
  e->compile_seconds += v->seconds;
  return v;
fail:
  free(values);
  free(uniq);
  variant_free(v);
  return NULL;
}

static bool segment_add_variant(const tc_compiled *c, int32_t seg, cap_segment *cs, cap_variant *v) {
  /* A segment whose graph depends on host values read at a break (tc_item feeding a constant)
   * can see a new graph every call: keep the newest few. Variant 0 of the first segment
   * carries the entry's guards and stays. */
  const int32_t keep_from = seg == 0 ? 1 : 0;
  if (cs->n_variants >= c->opts.cache_size_limit && cs->n_variants > keep_from) {
    tc_logs("recompiles", "%s graph %d: %d compiled variants (cache_size_limit), dropping the oldest", c->name,
            (int)seg + 1, (int)cs->n_variants);
    variant_free(cs->variants[keep_from]);
    memmove(&cs->variants[keep_from], &cs->variants[keep_from + 1],
            (size_t)(cs->n_variants - keep_from - 1) * sizeof *cs->variants);
    cs->n_variants--;
  }
  if (cs->n_variants == cs->cap_variants) {
    int32_t cap = cs->cap_variants ? cs->cap_variants * 2 : 2;
    cap_variant **q = realloc(cs->variants, (size_t)cap * sizeof *q);
    if (!q) return false;
    cs->variants = q;
    cs->cap_variants = cap;
  }
  cs->variants[cs->n_variants++] = v;
  return true;
}

tc_status compiled_run_segment(tc_compiled *c, cap_entry *e, int32_t seg, tc_graph *g, cap_guards *guards,
                               tc_tensor *const *sources, tc_tensor **outputs) {
  if (seg >= e->cap_segments) {
    int32_t cap = e->cap_segments ? e->cap_segments * 2 : 2;
    while (cap <= seg) cap *= 2;
    cap_segment *q = realloc(e->segments, (size_t)cap * sizeof *q);
    if (!q) {
      graph_free(g);
      guards_free(guards);
      return core_error(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
    }
    memset(q + e->cap_segments, 0, (size_t)(cap - e->cap_segments) * sizeof *q);
    e->segments = q;
    e->cap_segments = cap;
  }
  if (seg >= e->n_segments) e->n_segments = seg + 1;
  cap_segment *cs = &e->segments[seg];
  const uint64_t hash = graph_hash(g);
  const int32_t n_src = guards->n_inputs;
  int64_t syms_stack[32];
  int64_t *syms = guards->n_syms <= 32 ? syms_stack : malloc((size_t)guards->n_syms * sizeof *syms);
  if (!syms) {
    graph_free(g);
    guards_free(guards);
    return core_error(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
  }
  cap_names names = compiled_names(c);
  cap_variant *hit = NULL;
  char why[512] = "";
  for (int32_t k = cs->n_variants - 1; k >= 0 && !hit; k--) {
    cap_variant *v = cs->variants[k];
    if (v->hash != hash) {
      if (k == cs->n_variants - 1) snprintf(why, sizeof why, "the traced graph differs from the one compiled");
      continue;
    }
    if (v->guards.n_syms > guards->n_syms) continue;
    if (guards_check(&v->guards, &v->graph.sx, sources, n_src, syms, &names, k == cs->n_variants - 1 ? why : NULL,
                     sizeof why))
      hit = v;
  }
  tc_status s = TC_OK;
  if (hit) {
    graph_free(g);
    guards_free(guards);
  } else {
    if (cs->n_variants > 0)
      tc_logs("recompiles", "recompiling %s (entry %d, graph %d): %s", c->name, (int)e->id, (int)seg + 1, why);
    hit = compiled_build_variant(c, e, seg, g, guards, hash, sources);
    if (!hit) {
      s = tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
    } else if (!segment_add_variant(c, seg, cs, hit)) {
      variant_free(hit);
      hit = NULL;
      s = core_error(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
    } else if (!guards_check(&hit->guards, &hit->graph.sx, sources, n_src, syms, &names, why, sizeof why)) {
      s = core_error(TC_ERR_INTERNAL, "tc_compile(%s): a freshly traced graph fails its own guards: %s", c->name, why);
    }
  }
  if (s == TC_OK) s = compiled_run_variant(c, hit, sources, syms, outputs);
  if (syms != syms_stack) free(syms);
  return s;
}

/* ---------------------------------------------------------------- calling */
static tc_tensor *call_fn(const tc_compiled *c, tc_tensor *const *args) {
  tc_tensor *a[CAP_MAX_PARAMS];
  void *vals[CAP_MAX_PARAMS];
  for (int32_t i = 0; i < c->n_params; i++) {
    a[i] = args[i];
    vals[i] = &a[i];
  }
  ffi_arg r = 0;
  ffi_call((ffi_cif *)&c->cif, FFI_FN(c->fn), &r, vals);
  return (tc_tensor *)(uintptr_t)r;
}

/* The C function called eagerly through the wrapper (disabled, or past the recompile limit):
 * in a scope of the wrapper's own, so its intermediates are freed with the call and only the
 * result survives into the caller's scope; without it every call of an eager model leaked its
 * intermediates unless the caller opened a scope. */
static tc_tensor *call_fn_scoped(const tc_compiled *c, tc_tensor *const *args) {
  tc_scope *scope = tc_scope_open();
  if (!scope) return NULL;
  tc_tensor *r = call_fn(c, args);
  if (r) tc_scope_keep(scope, r);
  tc_scope_close(scope);
  return r;
}

static void input_dynamic(const tc_compiled *c, const cap_entry *e, int32_t i, const tc_tensor *x, bool *dyn) {
  for (int d = 0; d < TC_MAX_RANK; d++) {
    switch (c->opts.dynamic) {
    case TC_DYNAMIC_ON: dyn[d] = d < x->rank; break;
    case TC_DYNAMIC_OFF: dyn[d] = false; break;
    default: dyn[d] = e ? e->dyn[i][d] : c->dyn[i][d]; break;
    }
  }
}

/* Ends tracing with the function's result ret: compiles and runs the last segment. Returns the
 * call's result (new reference) or NULL with the error set. */
static tc_tensor *run_last_segment(tc_trace *tr, tc_tensor *ret) {
  tc_compiled *c = tr->c;
  if (tr->failed) return core_error_null(tr->fail_status, "%s", tr->fail_msg);
  if (!ret) {
    if (tc_last_status() == TC_OK) core_error(TC_ERR_INVALID_ARGUMENT, "tc_call(%s): the function returned NULL", c->name);
    return NULL;
  }
  /* The graph's outputs: the result (when the function returns a traced value), then the new
   * value of each parameter it assigned (assign.c). */
  int32_t n_outs = 0, outs[1 + CAP_MAX_PARAMS];
  if (ret->trace) {
    outs[0] = trace_operand_value(tr, "return value", ret);
    if (outs[0] < 0) return NULL;
    n_outs = 1;
  }
  const int32_t n_ret = n_outs;
  if (tr->n_assign > CAP_MAX_PARAMS)
    return core_error_null(TC_ERR_INTERNAL, "tc_call(%s): more assignments than parameters", c->name);
  for (int32_t k = 0; k < tr->n_assign; k++) outs[n_outs++] = tr->assign_value[k];
  if (tr->entry) {
    tr->entry->n_ret = n_ret;
    assign_record(tr->entry, tr);
  }
  tc_graph g;
  cap_guards guards;
  if (trace_segment_graph(tr, n_outs, outs, &g, &guards) != TC_OK) return NULL;
  tc_tensor **sources = malloc((size_t)(tr->n_in ? tr->n_in : 1) * sizeof *sources);
  if (!sources) {
    graph_free(&g);
    guards_free(&guards);
    return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
  }
  for (int32_t i = 0; i < tr->n_in; i++) sources[i] = tr->in[i].real;
  tc_tensor *results[1 + CAP_MAX_PARAMS] = {0};
  tc_status s = compiled_run_segment(c, tr->entry, tr->segment, &g, &guards, sources, results);
  /* Parameters are the first inputs of an unbroken trace, sharing the caller's storage. */
  if (s == TC_OK && tr->n_assign > 0 && tr->entry) s = assign_apply(c, tr->entry, sources, results + n_ret);
  free(sources);
  if (s != TC_OK) {
    for (int32_t k = 0; k < n_outs; k++) tc_release(results[k]);
    return NULL;
  }
  /* A real tensor returned by the function is its own new reference: hand it on. The fast path
   * (run the graph without calling the function) cannot produce it, so calls replay. */
  if (!ret->trace && tr->entry) tr->entry->replay = true;
  return ret->trace ? results[0] : ret;
}

bool compiled_entry_syms(tc_compiled *c, const cap_entry *e, tc_tensor *const *inputs, int64_t *syms) {
  const cap_variant *v = e->n_segments > 0 && e->segments[0].n_variants > 0 ? e->segments[0].variants[0] : NULL;
  if (!v || v->guards.n_syms > 64) return false;
  cap_names names = compiled_names(c);
  return guards_check(&v->guards, &v->graph.sx, inputs, c->n_params, syms, &names, NULL, 0);
}

/* Runs the function under tracing for entry e: compiles what e lacks, runs every segment. */
static tc_tensor *trace_call(tc_compiled *c, cap_entry *e, tc_tensor *const *inputs) {
  tc_scope *scope = tc_scope_open();
  if (!scope) return NULL;
  tc_trace tr;
  tc_tensor *proxies[CAP_MAX_PARAMS] = {0};
  bool dyn[CAP_MAX_PARAMS][TC_MAX_RANK];
  for (int32_t i = 0; i < c->n_params; i++) input_dynamic(c, e, i, inputs[i], dyn[i]);
  tc_status s = trace_begin(&tr, c->name, c->n_params, dyn, inputs, proxies);
  tr.c = c;
  tr.entry = e;
  tc_tensor *ret = s == TC_OK ? call_fn(c, proxies) : NULL;
  trace_set_current(tr.prev);
  /* Proxies live on through our references; a real result must survive the scope. */
  if (ret && !ret->trace) tc_scope_keep(scope, ret);
  tc_scope_close(scope);
  /* A function returning its parameter returns tc_retain(x): with the scope closed, that is
   * the one reference beside ours, and it is ours to drop. (Op results are claimed by the
   * scope; dropping a reference the function kept elsewhere would free it under it.) */
  bool ret_owned = false;
  for (int32_t i = 0; ret && i < c->n_params; i++) ret_owned |= ret == proxies[i] && ret->refcount >= 2;
  /* A first trace whose result needs a gradient w.r.t. the inputs: the joint graph (aot.c). */
  bool handled = false;
  /* (Not for a function that assigns its parameters: it is a training step of its own.) */
  tc_tensor *result = s == TC_OK && e && !e->backward && tr.n_assign == 0
                          ? aot_first_call(c, e, &tr, ret, inputs, proxies, &handled)
                          : NULL;
  if (!handled) result = s == TC_OK ? run_last_segment(&tr, ret) : NULL;
  if (ret_owned) tc_release(ret);
  trace_end(&tr);
  return result;
}

static cap_variant *entry_head(const cap_entry *e) {
  return e->n_segments > 0 && e->segments[0].n_variants > 0 ? e->segments[0].variants[0] : NULL;
}

/* What TC_LOGS=perf_hints adds to a recompile, by the dynamic setting. */
static const char *recompile_advice(tc_dynamic d) {
  switch (d) {
  case TC_DYNAMIC_OFF:
    return "; if the sizes vary from call to call, dynamic=TC_DYNAMIC_ON (or tc_mark_dynamic on the varying "
           "dimension) compiles one graph for all of them";
  case TC_DYNAMIC_AUTO:
    return "; dynamic=auto now compiles the sizes that changed as symbols, and dynamic=TC_DYNAMIC_ON (or "
           "tc_mark_dynamic) from the first call would have saved this compile";
  default: return "";
  }
}

/* dynamic=auto: the sizes that differ from the newest entry's become symbols from now on. */
static void dynamic_update(tc_compiled *c, tc_tensor *const *inputs) {
  if (c->opts.dynamic != TC_DYNAMIC_AUTO || c->n_entries == 0) return;
  const cap_variant *v = entry_head(c->entries[c->n_entries - 1]);
  if (!v) return;
  for (int32_t i = 0; i < c->n_params && i < v->guards.n_inputs; i++) {
    const cap_input_guard *ig = &v->guards.inputs[i];
    if (ig->rank != inputs[i]->rank) continue;
    for (int d = 0; d < ig->rank; d++)
      if (ig->sym[d] < 0 && ig->size[d] != inputs[i]->sizes[d]) c->dyn[i][d] = true;
  }
}

static tc_tensor *run_entry(tc_compiled *c, cap_entry *e, tc_tensor *const *inputs, const int64_t *syms) {
  cap_variant *v = entry_head(e);
  tc_tensor *src_stack[32];
  tc_tensor **sources = v->graph.n_inputs <= 32 ? src_stack : malloc((size_t)v->graph.n_inputs * sizeof *sources);
  if (!sources) return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
  for (int32_t i = 0; i < v->graph.n_inputs; i++) sources[i] = i < c->n_params ? inputs[i] : v->held[i];
  /* The result, then the values saved for a backward (aot.c) or the parameters' new values
   * (assign.c). */
  const int32_t n_outs = 1 + e->n_saved + e->n_assign;
  tc_tensor *out_stack[8] = {0};
  tc_tensor **outs = n_outs <= 8 ? out_stack : calloc((size_t)n_outs, sizeof *outs);
  tc_status s = outs ? compiled_run_variant(c, v, sources, syms, outs)
                     : core_error(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
  if (sources != src_stack) free(sources);
  if (s == TC_OK && e->n_assign > 0) s = assign_apply(c, e, inputs, outs + 1);
  if (s != TC_OK && outs)
    for (int32_t k = 0; k < n_outs; k++) tc_release(outs[k]);
  tc_tensor *result = s == TC_OK ? aot_attach(c, e, inputs, syms, outs[0], outs + 1) : NULL;
  if (outs != out_stack) free(outs);
  return result;
}

static tc_tensor *call_locked(tc_compiled *c, tc_tensor *const *inputs, bool *unlocked);

static bool compile_disabled(const tc_compiled *c) {
  const char *env = getenv("TC_COMPILE_DISABLE");
  return c->opts.disable || (env && env[0] && strcmp(env, "0") != 0);
}

/* Threading: one lock per compiled function. Looking up and compiling an entry happen under it
 * (so one guard set compiles once however many threads call); running a compiled entry does not
 * (its executable orders its own temporaries; tensor reference counts are atomic), except for
 * entries with graph breaks, whose calls re-trace and may add variants. */
/* compile_async: the background thread makes the first compiled call itself (trace, compile,
 * run), on references to the first call's inputs, and discards its result. The calling thread
 * meanwhile runs the function eagerly, as every call does until the thread is done. */
typedef struct async_job {
  tc_compiled *c;
  tc_tensor *inputs[CAP_MAX_PARAMS];
} async_job;

static tc_tensor *call_sync(tc_compiled *c, tc_tensor *const *inputs);

static void *async_compile_main(void *arg) {
  async_job *j = arg;
  tc_tensor *r = call_sync(j->c, j->inputs);
  if (!r) tc_logs("recompiles", "%s: the background compile failed (%s); calls will compile on their own", j->c->name,
                  tc_last_error());
  tc_release(r);
  for (int32_t i = 0; i < j->c->n_params; i++) tc_release(j->inputs[i]);
  atomic_store(&j->c->async_state, 2);
  free(j);
  return NULL;
}

/* true when the call is to run eagerly because the background compile is not done */
static bool async_pending(tc_compiled *c, tc_tensor *const *inputs) {
  if (!c->opts.compile_async || trace_current() || atomic_load(&c->async_state) == 2) return false;
  for (int32_t i = 0; i < c->n_params; i++)
    if (!inputs || !inputs[i]) return false; /* the usual path reports it */
  int expected = 0;
  if (atomic_compare_exchange_strong(&c->async_state, &expected, 1)) {
    async_job *j = calloc(1, sizeof *j);
    bool started = false;
    if (j) {
      j->c = c;
      for (int32_t i = 0; i < c->n_params; i++) j->inputs[i] = tc_retain(inputs[i]);
      started = pthread_create(&c->async_thread, NULL, async_compile_main, j) == 0;
      if (!started) {
        for (int32_t i = 0; i < c->n_params; i++) tc_release(j->inputs[i]);
        free(j);
      }
    }
    if (!started) {
      atomic_store(&c->async_state, 0); /* compile on this thread instead */
      return false;
    }
  }
  return atomic_load(&c->async_state) == 1;
}

tc_tensor *tc_call(tc_compiled *c, tc_tensor *const *inputs) {
  if (!c) return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_call: the compiled function is NULL");
  if (!compile_disabled(c) && async_pending(c, inputs)) {
    atomic_fetch_add(&c->n_async_eager_calls, 1);
    return call_fn_scoped(c, inputs);
  }
  return call_sync(c, inputs);
}

static tc_tensor *call_sync(tc_compiled *c, tc_tensor *const *inputs) {
  pthread_mutex_lock(&c->lock);
  bool unlocked = false;
  tc_tensor *r = call_locked(c, inputs, &unlocked);
  if (!unlocked) pthread_mutex_unlock(&c->lock);
  return r;
}

/* tc_call's body, with c->lock held on entry; it releases the lock (and sets *unlocked) before
 * running an entry without graph breaks. */

static tc_tensor *call_locked(tc_compiled *c, tc_tensor *const *inputs, bool *unlocked) {
  if (c->n_params > 0 && !inputs)
    return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_call(%s): inputs is NULL (the function takes %d inputs)", c->name,
                         (int)c->n_params);
  for (int32_t i = 0; i < c->n_params; i++) {
    if (!inputs[i]) {
      if (tc_last_status() != TC_OK) return NULL; /* an earlier failure made this input: keep its message */
      return core_error_null(TC_ERR_INVALID_ARGUMENT, "tc_call(%s): input %d is NULL (the function takes %d inputs)",
                           c->name, (int)i, (int)c->n_params);
    }
  }
  /* A compiled function called from a traced one is inlined into the caller's trace; a disabled
   * one is just the C function, called eagerly (torch.compile's disable). */
  if (trace_current()) return call_fn(c, inputs);
  if (compile_disabled(c)) return call_fn_scoped(c, inputs);
  for (int32_t i = 0; i < c->n_params; i++)
    if (inputs[i]->trace)
      return core_error_null(TC_ERR_INVALID_ARGUMENT,
                           "tc_call(%s): input %d is a traced tensor that escaped another compiled function", c->name,
                           (int)i);

  cap_names names = compiled_names(c);
  char why[512] = "";
  int64_t syms[64];
  cap_entry *hit = NULL;
  for (int32_t k = c->n_entries - 1; k >= 0 && !hit; k--) {
    cap_entry *e = c->entries[k];
    cap_variant *v = entry_head(e);
    if (!v) continue;
    if (v->guards.n_syms > 64) {
      if (k == c->n_entries - 1) snprintf(why, sizeof why, "more than 64 symbols");
      continue;
    }
    if (guards_check(&v->guards, &v->graph.sx, inputs, c->n_params, syms, &names, k == c->n_entries - 1 ? why : NULL,
                     sizeof why))
      hit = e;
  }
  if (hit && hit->replay) return trace_call(c, hit, inputs);
  if (hit) {
    /* Entries are only added, never freed, while c lives: hit stays valid unlocked. A trace in
     * progress on this thread (a compiled function called from a traced one) was handled above. */
    pthread_mutex_unlock(&c->lock);
    *unlocked = true;
    return run_entry(c, hit, inputs, syms);
  }

  if (c->n_entries >= c->opts.cache_size_limit) {
    if (!c->warned_limit) {
      c->warned_limit = true;
      fprintf(stderr,
              "[tc] WARNING: tc_compile(%s) hit cache_size_limit (%d compiled entries); calls that match none of them "
              "now run eagerly, uncompiled. Last guard failure: %s. Consider dynamic=TC_DYNAMIC_ON or a larger "
              "cache_size_limit.\n",
              c->name, (int)c->opts.cache_size_limit, why);
    }
    tc_logs("recompiles", "%s: cache_size_limit (%d) reached, running eagerly: guard failed: %s", c->name,
            (int)c->opts.cache_size_limit, why);
    c->n_eager_fallbacks++;
    return call_fn_scoped(c, inputs);
  }
  if (c->n_entries > 0) {
    tc_logs("recompiles", "recompiling %s (entry %d): guard failed: %s", c->name, (int)c->n_entries + 1, why);
    tc_logs("perf_hints", "%s: compiled again (entry %d: %s)%s", c->name, (int)c->n_entries + 1, why,
            recompile_advice(c->opts.dynamic));
  }
  dynamic_update(c, inputs);
  if (c->n_entries == c->cap_entries) {
    int32_t cap = c->cap_entries ? c->cap_entries * 2 : 4;
    cap_entry **q = realloc(c->entries, (size_t)cap * sizeof *q);
    if (!q) return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
    c->entries = q;
    c->cap_entries = cap;
  }
  cap_entry *e = calloc(1, sizeof *e);
  if (!e) return core_error_null(TC_ERR_OUT_OF_MEMORY, "tc_call(%s): out of memory", c->name);
  e->id = c->n_entries + 1;
  memcpy(e->dyn, c->dyn, sizeof e->dyn);
  tc_tensor *result = trace_call(c, e, inputs);
  if (!result || !entry_head(e)) {
    entry_free(e);
    return result;
  }
  c->entries[c->n_entries++] = e;
  return result;
}

/* ---------------------------------------------------------------- stats */
tc_status tc_compiled_stats(const tc_compiled *c, tc_compile_stats *out) {
  if (!c) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_compiled_stats: the compiled function is NULL");
  if (!out) return core_error(TC_ERR_INVALID_ARGUMENT, "tc_compiled_stats(%s): out is NULL", c->name);
  tc_compile_stats st = {.struct_size = sizeof st};
  st.n_async_eager_calls = atomic_load(&((tc_compiled *)c)->n_async_eager_calls);
  st.compiling = atomic_load(&((tc_compiled *)c)->async_state) == 1;
  st.n_updates_in_place = atomic_load(&((tc_compiled *)c)->n_updates_in_place);
  st.n_updates_copied = atomic_load(&((tc_compiled *)c)->n_updates_copied);
  if (st.compiling) { /* the background compile holds the lock: only what is known without it */
    size_t have = out->struct_size && out->struct_size < sizeof st ? out->struct_size : sizeof st;
    memcpy(out, &st, have);
    out->struct_size = have;
    return TC_OK;
  }
  pthread_mutex_lock(&((tc_compiled *)c)->lock);
  st.n_entries = c->n_entries;
  st.n_compiles = c->n_compiles;
  st.n_eager_fallbacks = c->n_eager_fallbacks;
  st.compile_seconds = c->compile_seconds;
  st.last_compile_seconds = c->last_compile_seconds;
  if (c->n_entries > 0) {
    const cap_entry *e = c->entries[c->n_entries - 1];
    st.n_graphs = e->n_segments;
    st.n_graph_breaks = e->n_segments - 1;
    for (int32_t s = 0; s < e->n_segments; s++)
      if (e->segments[s].n_variants > 0)
        st.n_kernels += e->segments[s].variants[e->segments[s].n_variants - 1]->n_kernels;
  }
  pthread_mutex_unlock(&((tc_compiled *)c)->lock);
  size_t have = out->struct_size && out->struct_size < sizeof st ? out->struct_size : sizeof st;
  memcpy(out, &st, have);
  out->struct_size = have;
  return TC_OK;
}
