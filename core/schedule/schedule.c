/* schedule.c — the fusion driver: decides which values are realized, builds one kernel per
 * realized value (schedule_kernel.c), realizes more where a kernel cannot express a read, and
 * finishes with the memory plan (schedule_memplan.c). TC_LOGS=fusion reports each kernel, what
 * it fused, and why values were realized; TC_LOGS=schedule the buffer plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/schedule.h"

typedef struct users {
  int32_t *start, *list; /* CSR: consumers (node values) of each value */
} users;

static bool users_build(const tc_graph *g, int32_t n_values, users *u) {
  u->start = calloc((size_t)n_values + 2, sizeof(int32_t));
  int32_t total = 0;
  for (int32_t i = 0; i < g->n_nodes; i++) total += g->nodes[i].n_in;
  u->list = malloc(sizeof(int32_t) * (size_t)(total + 1));
  if (!u->start || !u->list) return false;
  for (int32_t i = 0; i < g->n_nodes; i++)
    for (int32_t j = 0; j < g->nodes[i].n_in; j++) u->start[g->nodes[i].in[j] + 1]++;
  for (int32_t v = 0; v < n_values; v++) u->start[v + 1] += u->start[v];
  int32_t *fill = calloc((size_t)n_values + 1, sizeof(int32_t));
  if (!fill) return false;
  for (int32_t i = 0; i < g->n_nodes; i++)
    for (int32_t j = 0; j < g->nodes[i].n_in; j++) {
      int32_t v = g->nodes[i].in[j];
      u->list[u->start[v] + fill[v]++] = g->n_inputs + i;
    }
  free(fill);
  return true;
}

static bool prim_elementwise(tc_prim p) { return tck_prim_is_elementwise(p); }
static bool prim_view(tc_prim p) {
  return p == TC_PRIM_RESHAPE || p == TC_PRIM_BROADCAST_IN_DIM || p == TC_PRIM_PERMUTE || p == TC_PRIM_SLICE ||
         p == TC_PRIM_REVERSE;
}

typedef struct driver {
  sched_ctx c;
  users u;
  bool *is_output;
  bool *epi_only; /* realized only as the end of a matmul epilogue */
  char (*reason)[160];
} driver;

static void set_reason(driver *d, int32_t v, const char *fmt, ...) TC_PRINTF(3, 4);
static void set_reason(driver *d, int32_t v, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->reason[v], sizeof d->reason[v], fmt, ap);
  va_end(ap);
}

/* The end of matmul M's epilogue: the latest value E such that E and everything between M and
 * E are elementwise over M's shape and nothing between them is needed outside (so it need not
 * be stored). */
static int32_t epilogue_end(driver *d, int32_t M, int32_t limit) {
  sched_ctx *c = &d->c;
  const tc_graph *g = c->g;
  if (d->is_output[M]) return M;
  const tc_vtype *tm = graph_value_type(g, M);
  bool *region = calloc((size_t)c->n_values, sizeof(bool));
  bool *anc = calloc((size_t)c->n_values, sizeof(bool));
  int32_t best = M;
  if (!region || !anc) goto out;
  region[M] = true;
  for (int32_t v = M + 1; v < c->n_values; v++) {
    const tc_node *n = graph_value_node(g, v);
    /* Elementwise work (comparisons' bools included: relu is where(x <= 0, 0, x)), and
     * reshapes/permutes that the product's strides can absorb. */
    bool ok = prim_elementwise(n->prim) || n->prim == TC_PRIM_RESHAPE || n->prim == TC_PRIM_PERMUTE;
    if (!ok) continue;
    for (int32_t i = 0; i < n->n_in; i++)
      if (region[n->in[i]]) region[v] = true;
  }
  for (int32_t E = M + 1; E < limit; E++) {
    /* the end is stored where the product lies (cuBLASLt writes it there first): its dtype */
    if (!region[E] || graph_value_type(g, E)->dtype != tm->dtype) continue;
    memset(anc, 0, sizeof(bool) * (size_t)c->n_values);
    anc[E] = true;
    for (int32_t v = E; v >= M; v--) {
      if (!anc[v] || v == M) continue;
      const tc_node *n = graph_value_node(g, v);
      for (int32_t i = 0; i < n->n_in; i++)
        if (region[n->in[i]]) anc[n->in[i]] = true;
    }
    bool valid = anc[M];
    for (int32_t v = M; v < E && valid; v++) {
      if (!anc[v]) continue;
      if (v != M && (c->realized[v] || d->is_output[v])) valid = false;
      for (int32_t j = d->u.start[v]; j < d->u.start[v + 1] && valid; j++)
        if (!anc[d->u.list[j]]) valid = false;
    }
    if (valid) best = E;
  }
out:
  free(region);
  free(anc);
  return best;
}

/* The end of the chain of reshapes and permutes that alone read v, one after another. */
static int32_t view_chain_end(driver *d, int32_t v) {
  const tc_graph *g = d->c.g;
  while (!d->is_output[v] && d->u.start[v + 1] - d->u.start[v] == 1) {
    int32_t u = d->u.list[d->u.start[v]];
    const tc_node *n = graph_value_node(g, u);
    if (!n || (n->prim != TC_PRIM_RESHAPE && n->prim != TC_PRIM_PERMUTE) || n->in[0] != v) break;
    v = u;
  }
  return v;
}

static void realize(driver *d, int32_t v, const char *why) {
  d->epi_only[v] = false;
  if (!d->c.realized[v]) {
    d->c.realized[v] = true;
    set_reason(d, v, "%s", why);
  }
}

static void kernels_clear(tc_schedule *s) {
  for (int32_t k = 0; k < s->n_kernels; k++) {
    free(s->kernels[k].ops);
    free(s->kernels[k].abi_ops);
    free(s->kernels[k].abi_index);
    free(s->kernels[k].abi_ints);
    free(s->kernels[k].kbufs);
    free(s->kernels[k].kbuf_names);
    free(s->kernels[k].buf_ids);
  }
  s->n_kernels = 0;
  s->n_bufs = 0;
}

static void buffers_create(driver *d) {
  sched_ctx *c = &d->c;
  tc_schedule *s = c->s;
  const tc_graph *g = c->g;
  for (int32_t v = 0; v < c->n_values; v++) s->value_buf[v] = -1;
  for (int32_t v = 0; v < c->n_values; v++) {
    if (!c->realized[v]) continue;
    const tc_vtype *t = graph_value_type(g, v);
    int32_t numel = sx_prod(c, t, 0, t->rank);
    if (v < g->n_inputs) { sched_buffer_for(s, v, SBUF_INPUT, v, t->dtype, numel); continue; }
    int32_t out = -1;
    for (int32_t k = 0; k < g->n_outputs && out < 0; k++)
      if (g->outputs[k] == v) out = k;
    sched_buffer_for(s, v, out >= 0 ? SBUF_OUTPUT : SBUF_TEMP, out, t->dtype, numel);
  }
  /* One record for the whole call, shared by every kernel that checks an index. */
  s->index_error_buf = -1;
  if (c->opts.index_check && graph_reads_index(g))
    s->index_error_buf = sched_buffer_for(s, -1, SBUF_INDEX_ERROR, -1, TC_I64,
                                          sx_c(c, (int64_t)(sizeof(tc_index_error) / sizeof(int64_t))));
}

/* One attempt at building every kernel. Returns 1 when done, 0 to retry after realizing more,
 * -1 on error. */
static int attempt(driver *d) {
  sched_ctx *c = &d->c;
  tc_schedule *s = c->s;
  const tc_graph *g = c->g;
  kernels_clear(s);
  memset(c->inline_count, 0, sizeof(int32_t) * (size_t)c->n_values);
  buffers_create(d);
  for (int32_t v = g->n_inputs; v < c->n_values; v++) {
    if (!c->realized[v]) continue;
    const tc_node *n = graph_value_node(g, v);
    if (n->prim == TC_PRIM_MATMUL && c->epi_end[v] != v) continue; /* built with its epilogue */
    tc_status err;
    if (kernel_build(c, v, &err)) continue;
    if (err != TC_OK) return -1;
    int32_t f = c->fail_value;
    char why[300];
    snprintf(why, sizeof why, "%s", c->why);
    if (f >= 0 && graph_value_node(g, f) && graph_value_node(g, f)->prim == TC_PRIM_MATMUL && c->epi_end[f] != f) {
      /* Try a shorter epilogue (its end is realized anyway). */
      int32_t old = c->epi_end[f], E = epilogue_end(d, f, old);
      tc_logs("fusion", "matmul v%d: epilogue up to v%d not fused (%s); trying up to v%d", f, old, why, E);
      c->epi_end[f] = E;
      /* The old end needs no buffer of its own unless something else asked for one. */
      if (d->epi_only[old]) {
        c->realized[old] = false;
        d->epi_only[old] = false;
      }
      if (E == f) realize(d, f, "matmul (its epilogue could not be fused)");
      else {
        char r[96];
        snprintf(r, sizeof r, "epilogue of matmul v%d", f);
        bool only = !d->c.realized[E];
        d->c.realized[E] = false;
        realize(d, E, r);
        d->epi_only[E] = only;
      }
      return 0;
    }
    if (f < 0 || c->realized[f]) {
      core_error(TC_ERR_UNSUPPORTED, "scheduler: cannot build the kernel for v%d (%s) of graph %s: %s", v,
               prim_name(n->prim), g->name, why[0] ? why : "no affine index for a read");
      return -1;
    }
    const tc_node *fn = graph_value_node(g, f);
    tc_logs("fusion", "realize v%d (%s) instead of recomputing it in the kernel for v%d: %s", f,
            fn ? prim_name(fn->prim) : "input", v, why);
    char r[200];
    snprintf(r, sizeof r, "not fusable into v%d: %.160s", v, why);
    realize(d, f, r);
    return 0;
  }
  /* A reduction recomputed in several kernels is computed once instead. */
  bool changed = false;
  for (int32_t v = 0; v < c->n_values; v++)
    if (c->inline_count[v] > 1 && !c->realized[v]) {
      char r[120];
      snprintf(r, sizeof r, "a reduction read by %d kernels: computed once", c->inline_count[v]);
      tc_logs("fusion", "realize v%d (%s): %s", v, prim_name(graph_value_node(g, v)->prim), r);
      realize(d, v, r);
      changed = true;
    }
  return changed ? 0 : 1;
}

static void log_fusion(driver *d) {
  if (!tc_logs_on("fusion")) return;
  const sched_ctx *c = &d->c;
  const tc_schedule *s = c->s;
  const tc_graph *g = c->g;
  tc_logs("fusion", "graph %s: %d nodes -> %d kernels", g->name, g->n_nodes, s->n_kernels);
  for (int32_t k = 0; k < s->n_kernels; k++) {
    const sched_kernel *sk = &s->kernels[k];
    int32_t loops = 0;
    for (int32_t i = 0; i < sk->n_ops; i++)
      if (sk->ops[i].loop + 1 > loops) loops = sk->ops[i].loop + 1;
    const tc_node *n = graph_value_node(g, sk->root);
    tc_logs("fusion", "  kernel %d %s: computes v%d (%s, %s), %d ops, %d inner loop%s, %d buffers", k, sk->name, sk->root,
            n ? prim_name(n->prim) : "?", d->reason[sk->root][0] ? d->reason[sk->root] : "realized", sk->n_ops, loops,
            loops == 1 ? "" : "s", sk->n_bufs);
  }
}

static void driver_free(driver *d) {
  free(d->c.attns);
  free(d->c.attn_of);
  free(d->c.sx_map);
  free(d->c.realized);
  free(d->c.epi_end);
  free(d->c.inline_count);
  free(d->u.start);
  free(d->u.list);
  free(d->is_output);
  free(d->epi_only);
  free(d->reason);
}

tc_schedule *schedule_retain(tc_schedule *s) {
  if (s) __atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED);
  return s;
}

void schedule_release(tc_schedule *s) {
  if (!s || __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) > 0) return;
  kernels_clear(s);
  free(s->kernels);
  free(s->bufs);
  free(s->value_buf);
  free(s->descs);
  sxtab_free(&s->sx);
  free(s);
}

tc_status schedule_build(const tc_graph *g, tc_schedule **out) {
  const sched_options all = {.matmul_batch2 = true, .attention = false};
  return schedule_build_opts(g, &all, out);
}

tc_status schedule_build_opts(const tc_graph *g, const sched_options *opts, tc_schedule **out) {
  *out = NULL;
  tc_schedule *s = calloc(1, sizeof *s);
  if (s) s->refcount = 1;
  driver d;
  memset(&d, 0, sizeof d);
  if (!s) return core_error(TC_ERR_OUT_OF_MEMORY, "scheduler: out of memory");
  s->g = g;
  s->n_syms = g->n_syms;
  s->index_error_buf = -1;
  sxtab_init(&s->sx);
  sched_ctx *c = &d.c;
  c->g = g;
  c->s = s;
  c->sx = &s->sx;
  if (opts) c->opts = *opts;
  else c->opts.matmul_batch2 = true;
  c->n_values = g->n_inputs + g->n_nodes;
  int32_t nv = c->n_values + 1;
  c->sx_map = malloc(sizeof(int32_t) * (size_t)(g->sx.n + 1));
  c->realized = calloc((size_t)nv, sizeof(bool));
  c->epi_end = malloc(sizeof(int32_t) * (size_t)nv);
  c->inline_count = calloc((size_t)nv, sizeof(int32_t));
  s->value_buf = malloc(sizeof(int32_t) * (size_t)nv);
  d.is_output = calloc((size_t)nv, sizeof(bool));
  d.epi_only = calloc((size_t)nv, sizeof(bool));
  d.reason = calloc((size_t)nv, sizeof *d.reason);
  c->attn_of = malloc(sizeof(int32_t) * (size_t)nv);
  bool *in_attention = calloc((size_t)nv, sizeof(bool));
  tc_status st = TC_OK;
  if (!c->sx_map || !c->realized || !c->epi_end || !c->inline_count || !s->value_buf || !c->attn_of || !in_attention ||
      !d.is_output || !d.epi_only || !d.reason || !users_build(g, c->n_values, &d.u)) {
    st = core_error(TC_ERR_OUT_OF_MEMORY, "scheduler: out of memory");
    goto done;
  }
  /* Our own copy of the size expressions, which the kernels extend with strides and products. */
  for (int32_t i = 0; i < g->sx.n; i++) {
    const tc_size_expr *e = &g->sx.nodes[i];
    if (e->op == TC_SX_CONST) c->sx_map[i] = sxtab_const(c->sx, e->value);
    else if (e->op == TC_SX_SYM) c->sx_map[i] = sxtab_sym(c->sx, e->value);
    else c->sx_map[i] = sxtab_bin(c->sx, (tc_sx_op)e->op, c->sx_map[e->a], c->sx_map[e->b]);
  }
  for (int32_t k = 0; k < 64; k++) {
    /* a pinned symbol has one value at every call (graph.h): identities must hold at it */
    const int64_t pin = k < GRAPH_MAX_PINS ? g->sym_pin[k] : 0;
    c->probe[0][k] = pin ? pin : 7 + 3 * k;
    c->probe[1][k] = pin ? pin : 29 + 11 * k;
  }
  for (int32_t v = 0; v < nv; v++) c->epi_end[v] = -1;
  for (int32_t v = 0; v < nv; v++) c->attn_of[v] = -1;

  /* What must be stored. */
  for (int32_t v = 0; v < g->n_inputs; v++) realize(&d, v, "graph input");
  for (int32_t k = 0; k < g->n_outputs; k++) {
    d.is_output[g->outputs[k]] = true;
    realize(&d, g->outputs[k], "graph output");
  }
  /* Fused attention: its scores and probabilities are never stored; q, k and v are read
   * where they lie, like a matmul's operands. */
  if (c->opts.attention) {
    enum { MAX_ATTENTION = 64 };
    c->attns = calloc(MAX_ATTENTION, sizeof *c->attns);
    if (!c->attns) {
      st = core_error(TC_ERR_OUT_OF_MEMORY, "scheduler: out of memory");
      goto done;
    }
    c->n_attns = attention_find(c, d.is_output, c->attns, MAX_ATTENTION);
    for (int32_t r = 0; r < c->n_attns; r++) {
      c->attn_of[c->attns[r].out] = r;
      for (int32_t m = 0; m < c->attns[r].n_members; m++) in_attention[c->attns[r].members[m]] = true;
    }
  }
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const tc_node *n = &g->nodes[i];
    int32_t v = g->n_inputs + i;
    if (n->prim == TC_PRIM_PAD || n->prim == TC_PRIM_CONCATENATE || n->prim == TC_PRIM_SCATTER_ADD)
      realize(&d, v, "written in pieces");
    if (n->prim != TC_PRIM_MATMUL || in_attention[v]) continue;
    const sched_attention *at = c->attn_of[v] >= 0 ? &c->attns[c->attn_of[v]] : NULL;
    realize(&d, v, at ? "fused attention" : "matmul");
    c->epi_end[v] = v;
    const int32_t operands[3] = {at ? at->q : n->in[0], at ? at->kt : n->in[1], at ? at->v : -1};
    for (int32_t j = 0; j < 3 && operands[j] >= 0; j++) {
      int32_t o = operands[j];
      while (!c->realized[o] && graph_value_node(g, o) && prim_view(graph_value_node(g, o)->prim))
        o = graph_value_node(g, o)->in[0];
      realize(&d, o, "matmul operand");
    }
  }
  /* Fused epilogues: M's product is only ever seen by its epilogue. Attention's output only
   * through views (merging the heads), which its output strides absorb. */
  for (int32_t v = g->n_inputs; v < c->n_values; v++) {
    if (c->epi_end[v] != v) continue;
    int32_t E = c->attn_of[v] >= 0 ? view_chain_end(&d, v) : epilogue_end(&d, v, c->n_values);
    if (E == v) continue;
    c->epi_end[v] = E;
    c->realized[v] = false;
    char r[96];
    snprintf(r, sizeof r, "epilogue of matmul v%d", v);
    bool only = !c->realized[E];
    c->realized[E] = false;
    realize(&d, E, r);
    d.epi_only[E] = only;
    tc_logs("fusion", "matmul v%d: epilogue fused up to v%d (%s)", v, E, prim_name(graph_value_node(g, E)->prim));
  }
  int rc = 0;
  for (int round = 0; round <= c->n_values + 8 && rc == 0; round++) rc = attempt(&d);
  if (rc != 1) {
    st = rc < 0 ? tc_last_status() : core_error(TC_ERR_INTERNAL, "scheduler: no fixed point for graph %s", g->name);
    if (st == TC_OK) st = TC_ERR_INTERNAL;
    goto done;
  }
  schedule_write_in_place(s);
  memplan_assign(s);
  s->descs = calloc((size_t)s->n_kernels + 1, sizeof(tc_kernel_desc));
  if (!s->descs) {
    st = core_error(TC_ERR_OUT_OF_MEMORY, "scheduler: out of memory");
    goto done;
  }
  /* Unique kernel names: the second softmax is softmax_1. */
  for (int32_t k = 0; k < s->n_kernels; k++) {
    int32_t same = 0;
    for (int32_t j = 0; j < k; j++) {
      char base[64];
      snprintf(base, sizeof base, "%s", s->kernels[j].name);
      char *u = strrchr(base, '_');
      if (u && u[1] >= '0' && u[1] <= '9' && strncmp(base, s->kernels[k].name, (size_t)(u - base)) == 0 &&
          s->kernels[k].name[u - base] == 0)
        same++;
      else if (strcmp(s->kernels[j].name, s->kernels[k].name) == 0)
        same++;
    }
    if (same) {
      size_t len = strlen(s->kernels[k].name);
      snprintf(s->kernels[k].name + (len > 52 ? 52 : len), 12, "_%d", same % 100000);
    }
    /* The kernels array no longer moves: the ABI views may point into it now. */
    if (!schedule_kernel_abi(&s->kernels[k])) {
      st = core_error(TC_ERR_OUT_OF_MEMORY, "scheduler: out of memory");
      goto done;
    }
    s->descs[k] = s->kernels[k].desc;
  }
  s->list = (tc_kernel_list){.struct_size = sizeof(tc_kernel_list), .name = g->name, .n_exprs = s->sx.n,
                             .exprs = s->sx.nodes, .expr_size = sizeof(tc_size_expr), .n_syms = g->n_syms,
                             .n_kernels = s->n_kernels, .kernels = s->descs, .kernel_size = sizeof(tc_kernel_desc)};
  log_fusion(&d);
  if (tc_logs_on("schedule")) {
    char *plan = schedule_plan_string(s);
    char header[128];
    snprintf(header, sizeof header, "graph %s:", g->name);
    tc_logs_text("schedule", header, plan);
    free(plan);
  }
done:
  free(in_attention);
  driver_free(&d);
  if (st != TC_OK) {
    schedule_release(s);
    return st;
  }
  *out = s;
  return TC_OK;
}
