/* graph.c — the primitive graph: building it, reading it, printing it, hashing it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

void graph_init(tc_graph *g, const char *name) {
  memset(g, 0, sizeof *g);
  snprintf(g->name, sizeof g->name, "%s", name ? name : "graph");
  sxtab_init(&g->sx);
}

void graph_free(tc_graph *g) {
  if (!g) return;
  for (int32_t i = 0; i < g->n_nodes; i++)
    free(g->nodes[i].in);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  free(g->output_into);
  sxtab_free(&g->sx);
  memset(g, 0, sizeof *g);
}

int32_t graph_add_input(tc_graph *g, const tc_vtype *t) {
  if (g->n_nodes > 0) {
    core_error(TC_ERR_INTERNAL, "graph %s: input added after nodes", g->name);
    return -1;
  }
  tc_vtype *inputs = realloc(g->inputs, (size_t)(g->n_inputs + 1) * sizeof *inputs);
  if (!inputs) {
    core_error(TC_ERR_OUT_OF_MEMORY, "graph %s: out of memory", g->name);
    return -1;
  }
  g->inputs = inputs;
  g->inputs[g->n_inputs] = *t;
  return g->n_inputs++;
}

int32_t graph_add_node(tc_graph *g, const tc_node *n) {
  if (n->n_in < 0 || n->n_iattrs < 0 || n->n_iattrs > TC_NODE_MAX_IATTRS) {
    core_error(TC_ERR_INTERNAL, "graph %s: bad %s node (%d inputs, %d iattrs)", g->name, prim_name(n->prim), n->n_in,
             n->n_iattrs);
    return -1;
  }
  if (g->n_nodes == g->cap_nodes) {
    int32_t cap = g->cap_nodes ? g->cap_nodes * 2 : 16;
    tc_node *nodes = realloc(g->nodes, (size_t)cap * sizeof *nodes);
    if (!nodes) {
      core_error(TC_ERR_OUT_OF_MEMORY, "graph %s: out of memory", g->name);
      return -1;
    }
    g->nodes = nodes;
    g->cap_nodes = cap;
  }
  int32_t *in = malloc((size_t)(n->n_in ? n->n_in : 1) * sizeof *in);
  if (!in) {
    core_error(TC_ERR_OUT_OF_MEMORY, "graph %s: out of memory", g->name);
    return -1;
  }
  if (n->n_in) memcpy(in, n->in, (size_t)n->n_in * sizeof *in);
  tc_node *dst = &g->nodes[g->n_nodes];
  *dst = *n;
  dst->in = in;
  return g->n_inputs + g->n_nodes++;
}

const tc_vtype *graph_value_type(const tc_graph *g, int32_t value) {
  if (value < 0) return NULL;
  if (value < g->n_inputs) return &g->inputs[value];
  if (value < g->n_inputs + g->n_nodes) return &g->nodes[value - g->n_inputs].out;
  return NULL;
}

const tc_node *graph_value_node(const tc_graph *g, int32_t value) {
  if (value < g->n_inputs || value >= g->n_inputs + g->n_nodes) return NULL;
  return &g->nodes[value - g->n_inputs];
}

void graph_set_outputs(tc_graph *g, int32_t n, const int32_t *values) {
  int32_t *outs = malloc((size_t)(n > 0 ? n : 1) * sizeof *outs);
  if (!outs) {
    core_error(TC_ERR_OUT_OF_MEMORY, "graph %s: out of memory", g->name);
    return;
  }
  if (n > 0) memcpy(outs, values, (size_t)n * sizeof *outs);
  free(g->outputs);
  free(g->output_into); /* it numbered the old outputs */
  g->output_into = NULL;
  g->outputs = outs;
  g->n_outputs = n > 0 ? n : 0;
}

static bool values_add(int32_t **list, int32_t *n, int32_t v) {
  for (int32_t i = 0; i < *n; i++)
    if ((*list)[i] == v) return true;
  int32_t *grown = realloc(*list, (size_t)(*n + 1) * sizeof *grown);
  if (!grown) return false;
  grown[(*n)++] = v;
  *list = grown;
  return true;
}

tc_status graph_extract(const tc_graph *g, const uint8_t *keep, int32_t n_outs, const int32_t *outs, const char *name,
                        tc_graph *sub, int32_t **in_values, int32_t *n_in) {
  const int32_t ni = g->n_inputs;
  *in_values = NULL;
  *n_in = 0;
  graph_init(sub, name);
  int32_t *map = malloc((size_t)(ni + g->n_nodes + 1) * sizeof *map);
  if (!map) goto oom;
  for (int32_t i = 0; i < g->n_nodes; i++)
    for (int32_t k = 0; keep[i] && k < g->nodes[i].n_in; k++) {
      int32_t v = g->nodes[i].in[k];
      if ((v < ni || !keep[v - ni]) && !values_add(in_values, n_in, v)) goto oom;
    }
  if (sxtab_copy(&g->sx, &sub->sx) != TC_OK) goto fail;
  sub->n_syms = g->n_syms;
  memcpy(sub->sym_pin, g->sym_pin, sizeof sub->sym_pin);
  for (int32_t i = 0; i < *n_in; i++)
    if ((map[(*in_values)[i]] = graph_add_input(sub, graph_value_type(g, (*in_values)[i]))) < 0) goto fail;
  int32_t in_stack[64];
  for (int32_t i = 0; i < g->n_nodes; i++) {
    if (!keep[i]) continue;
    tc_node n = g->nodes[i];
    int32_t *in = n.n_in <= 64 ? in_stack : malloc((size_t)n.n_in * sizeof *in);
    if (!in) goto oom;
    for (int32_t k = 0; k < n.n_in; k++) in[k] = map[n.in[k]];
    n.in = in;
    map[ni + i] = graph_add_node(sub, &n);
    if (in != in_stack) free(in);
    if (map[ni + i] < 0) goto fail;
  }
  int32_t *sub_outs = malloc((size_t)(n_outs + 1) * sizeof *sub_outs);
  if (!sub_outs) goto oom;
  for (int32_t i = 0; i < n_outs; i++) sub_outs[i] = map[outs[i]];
  graph_set_outputs(sub, n_outs, sub_outs);
  free(sub_outs);
  free(map);
  return TC_OK;
oom:
  core_error(TC_ERR_OUT_OF_MEMORY, "graph %s: out of memory extracting %s", g->name, sub->name);
fail:
  free(map);
  free(*in_values);
  *in_values = NULL;
  *n_in = 0;
  graph_free(sub);
  return tc_last_status() != TC_OK ? tc_last_status() : TC_ERR_INTERNAL;
}

/* ---------------------------------------------------------------- names */
const char *prim_name(int32_t prim) {
  /* The kit's table, shared with every plugin; the core's messages print "?" for unknown ids. */
  const char *n = tck_prim_name(prim);
  return strcmp(n, "prim?") ? n : "?";
}

/* ---------------------------------------------------------------- text */
static void sb_type(tck_str *b, const tc_graph *g, const tc_vtype *t) {
  char e[128];
  tck_str_printf(b, "%s[", tc_dtype_name(t->dtype));
  for (int i = 0; i < t->rank; i++)
    tck_str_printf(b, "%s%s", i ? "x" : "", sxtab_str(&g->sx, t->shape[i], e, sizeof e));
  tck_str_printf(b, "]");
}

/* Attributes follow the operands: ", " before each, except first for creation prims. */
static void sb_attr(tck_str *b, bool *first) {
  if (!*first) tck_str_printf(b, ", ");
  *first = false;
}

static void sb_list(tck_str *b, bool *first, const char *label, const int64_t *v, int n) {
  sb_attr(b, first);
  tck_str_printf(b, "%s=[", label);
  for (int i = 0; i < n; i++)
    tck_str_printf(b, "%s%lld", i ? ", " : "", (long long)v[i]);
  tck_str_printf(b, "]");
}

static void sb_attrs(tck_str *b, const tc_graph *g, const tc_node *n) {
  const int r = n->n_iattrs / 2;
  bool first = n->n_in == 0;
  char e[128];
  switch (n->prim) {
  case TC_PRIM_REDUCE_SUM:
  case TC_PRIM_REDUCE_MAX:
  case TC_PRIM_REDUCE_MIN:
  case TC_PRIM_REDUCE_PROD:
  case TC_PRIM_REVERSE: sb_list(b, &first, "dims", n->iattrs, n->n_iattrs); break;
  case TC_PRIM_ARGMAX:
  case TC_PRIM_ARGMIN:
  case TC_PRIM_CONCATENATE:
  case TC_PRIM_GATHER:
  case TC_PRIM_SCATTER_ADD:
  case TC_PRIM_IOTA:
    if (n->n_iattrs > 0) {
      sb_attr(b, &first);
      tck_str_printf(b, "dim=%lld", (long long)n->iattrs[0]);
    }
    break;
  case TC_PRIM_BROADCAST_IN_DIM: sb_list(b, &first, "bdims", n->iattrs, n->n_iattrs); break;
  case TC_PRIM_PERMUTE: sb_list(b, &first, "perm", n->iattrs, n->n_iattrs); break;
  case TC_PRIM_SLICE:
    sb_list(b, &first, "start", n->iattrs, r);
    sb_list(b, &first, "step", n->iattrs + r, r);
    break;
  case TC_PRIM_PAD:
    sb_list(b, &first, "lo", n->iattrs, r);
    sb_list(b, &first, "hi", n->iattrs + r, r);
    sb_attr(b, &first);
    tck_str_printf(b, "value=%.9g", n->fattr);
    break;
  case TC_PRIM_CONSTANT:
    sb_attr(b, &first);
    if (n->n_iattrs > 0 && n->iattrs[0] >= 0)
      tck_str_printf(b, "value=%s", sxtab_str(&g->sx, (int32_t)n->iattrs[0], e, sizeof e));
    else
      tck_str_printf(b, "value=%.9g", n->fattr);
    break;
  case TC_PRIM_RANDOM:
    if (n->n_iattrs >= 2) {
      sb_attr(b, &first);
      tck_str_printf(b, "seed=%llu, offset=%lld", (unsigned long long)n->iattrs[0], (long long)n->iattrs[1]);
    }
    break;
  default: break;
  }
}

char *graph_to_string(const tc_graph *g) {
  tck_str b = {0};
  tck_str_printf(&b, "graph %s(", g->name);
  for (int32_t i = 0; i < g->n_inputs; i++) {
    tck_str_printf(&b, "%sv%d: ", i ? ", " : "", i);
    sb_type(&b, g, &g->inputs[i]);
  }
  tck_str_printf(&b, ")");
  if (g->n_syms) {
    tck_str_printf(&b, " syms(");
    for (int32_t s = 0; s < g->n_syms; s++)
      tck_str_printf(&b, "%ss%d", s ? ", " : "", s);
    tck_str_printf(&b, ")");
  }
  tck_str_printf(&b, " {\n");
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const tc_node *n = &g->nodes[i];
    tck_str_printf(&b, "  v%d = %s(", g->n_inputs + i, prim_name(n->prim));
    for (int32_t k = 0; k < n->n_in; k++)
      tck_str_printf(&b, "%sv%d", k ? ", " : "", n->in[k]);
    sb_attrs(&b, g, n);
    tck_str_printf(&b, ") : ");
    sb_type(&b, g, &n->out);
    tck_str_printf(&b, "\n");
  }
  tck_str_printf(&b, "  return ");
  for (int32_t i = 0; i < g->n_outputs; i++)
    tck_str_printf(&b, "%sv%d", i ? ", " : "", g->outputs[i]);
  tck_str_printf(&b, "\n}\n");
  return tck_str_take(&b);
}

/* ---------------------------------------------------------------- hash */
static void fnv(uint64_t *h, const void *data, size_t n) {
  const uint8_t *p = data;
  for (size_t i = 0; i < n; i++) {
    *h ^= p[i];
    *h *= 1099511628211ull;
  }
}

static void fnv_i64(uint64_t *h, int64_t v) {
  uint8_t le[8]; /* byte order fixed, so the hash is the same on every host */
  for (int i = 0; i < 8; i++)
    le[i] = (uint8_t)((uint64_t)v >> (8 * i));
  fnv(h, le, 8);
}

static void fnv_vtype(uint64_t *h, const tc_vtype *t) {
  fnv_i64(h, t->dtype);
  fnv_i64(h, t->rank);
  for (int i = 0; i < t->rank; i++)
    fnv_i64(h, t->shape[i]);
}

uint64_t graph_hash(const tc_graph *g) {
  uint64_t h = 1469598103934665603ull;
  fnv_i64(&h, g->sx.n);
  for (int32_t i = 0; i < g->sx.n; i++) {
    const tc_size_expr *e = &g->sx.nodes[i];
    fnv_i64(&h, e->op);
    fnv_i64(&h, e->a);
    fnv_i64(&h, e->b);
    fnv_i64(&h, e->value);
  }
  fnv_i64(&h, g->n_syms);
  for (int32_t k = 0; k < g->n_syms && k < GRAPH_MAX_PINS; k++) fnv_i64(&h, g->sym_pin[k]);
  fnv_i64(&h, g->n_inputs);
  for (int32_t i = 0; i < g->n_inputs; i++)
    fnv_vtype(&h, &g->inputs[i]);
  fnv_i64(&h, g->n_nodes);
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const tc_node *n = &g->nodes[i];
    fnv_i64(&h, n->prim);
    fnv_vtype(&h, &n->out);
    fnv_i64(&h, n->n_in);
    for (int32_t k = 0; k < n->n_in; k++)
      fnv_i64(&h, n->in[k]);
    fnv_i64(&h, n->n_iattrs);
    for (int32_t k = 0; k < n->n_iattrs; k++)
      fnv_i64(&h, n->iattrs[k]);
    int64_t bits;
    memcpy(&bits, &n->fattr, sizeof bits); /* exact bits: -0 and +0 are different constants */
    fnv_i64(&h, bits);
    fnv_i64(&h, n->index_op); /* the op an out-of-range index is reported as */
  }
  fnv_i64(&h, g->n_outputs);
  for (int32_t i = 0; i < g->n_outputs; i++)
    fnv_i64(&h, g->outputs[i]);
  return h;
}
