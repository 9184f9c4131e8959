/* simplify.c — graph clean-up before scheduling: view simplification (reshape of reshape,
 * permute of permute, broadcast of broadcast, identity views and same-dtype converts removed),
 * constant folding where the result is exact, structural CSE, then DCE.
 *
 * One forward pass rewrites each node against the already-simplified graph, so chains collapse
 * in a single sweep; a second pass drops what the outputs do not need. Inputs and the size
 * table are kept as they are, so guards and symbol bindings stay valid. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

/* ---------------------------------------------------------------- helpers */
static const tc_node *node_of(const tc_graph *g, int32_t v) { return v >= g->n_inputs ? graph_value_node(g, v) : NULL; }

static bool same_shape(const tc_vtype *a, const tc_vtype *b) {
  if (a->rank != b->rank) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

/* The value of a CONSTANT node when it is known now. */
static bool const_value(const tc_graph *g, const tc_node *n, double *v) {
  if (!n || n->prim != TC_PRIM_CONSTANT || n->n_iattrs < 1) return false;
  if (n->iattrs[0] < 0) {
    *v = n->fattr;
    return true;
  }
  int64_t s = 0;
  if (!sxtab_is_const(&g->sx, (int32_t)n->iattrs[0], &s)) return false;
  *v = (double)s;
  return true;
}

static void make_constant(tc_node *n, const tc_node *src_or_null, double value) {
  n->prim = TC_PRIM_CONSTANT;
  n->n_in = 0;
  n->n_iattrs = 1;
  if (src_or_null) {
    n->iattrs[0] = src_or_null->iattrs[0];
    n->fattr = src_or_null->fattr;
  } else {
    n->iattrs[0] = -1;
    n->fattr = value;
  }
}

/* ---------------------------------------------------------------- constant folding */
static const double exact_int_limit = 9007199254740992.0; /* 2^53: integers beyond lose bits in fattr */

/* Rounds x to what a tensor of dtype d holds. false when it does not fit exactly. */
static bool as_dtype(tc_dtype d, double x, double *r) {
  switch (d) {
  case TC_F32: *r = (double)(float)x; return true;
  case TC_F64: *r = x; return true;
  case TC_BOOL: *r = x != 0; return true;
  case TC_I32:
    if (!(x >= -2147483648.0 && x <= 2147483647.0) || x != trunc(x)) return false;
    *r = x;
    return true;
  case TC_I64:
    if (!(fabs(x) <= exact_int_limit) || x != trunc(x)) return false;
    *r = x;
    return true;
  default: return false;
  }
}

/* Only operations whose result is exactly rounded in the dtype (so every backend agrees). */
static bool fold(tc_prim p, tc_dtype in_dt, tc_dtype out_dt, const double *x, double *r) {
  const bool flt = dtype_is_float(in_dt), f32 = in_dt == TC_F32;
  double a = x[0], b = x[1], v = 0;
  switch (p) {
  case TC_PRIM_NEG: v = -a; break;
  case TC_PRIM_ABS: v = fabs(a); break;
  case TC_PRIM_FLOOR: v = floor(a); break;
  case TC_PRIM_CEIL: v = ceil(a); break;
  case TC_PRIM_SIGN: v = isnan(a) ? a : (a > 0) - (a < 0); break;
  case TC_PRIM_SQRT:
    if (!flt) return false;
    v = f32 ? (double)sqrtf((float)a) : sqrt(a);
    break;
  case TC_PRIM_RECIPROCAL:
    if (!flt) return false;
    v = f32 ? (double)(1.0f / (float)a) : 1.0 / a;
    break;
  case TC_PRIM_LOGICAL_NOT: v = a == 0; break;
  case TC_PRIM_ISNAN: v = isnan(a) ? 1 : 0; break;
  case TC_PRIM_ADD: v = f32 ? (double)((float)a + (float)b) : a + b; break;
  case TC_PRIM_SUB: v = f32 ? (double)((float)a - (float)b) : a - b; break;
  case TC_PRIM_MUL: v = f32 ? (double)((float)a * (float)b) : a * b; break;
  case TC_PRIM_DIV:
    if (flt)
      v = f32 ? (double)((float)a / (float)b) : a / b;
    else
      v = b == 0 ? 0 : trunc(a / b);
    break;
  case TC_PRIM_MAX: v = isnan(a) || isnan(b) ? NAN : a > b ? a : b; break;
  case TC_PRIM_MIN: v = isnan(a) || isnan(b) ? NAN : a < b ? a : b; break;
  case TC_PRIM_EQ: v = a == b; break;
  case TC_PRIM_NE: v = a != b; break;
  case TC_PRIM_LT: v = a < b; break;
  case TC_PRIM_LE: v = a <= b; break;
  case TC_PRIM_GT: v = a > b; break;
  case TC_PRIM_GE: v = a >= b; break;
  case TC_PRIM_AND:
    if (in_dt != TC_BOOL) return false;
    v = a != 0 && b != 0;
    break;
  case TC_PRIM_OR:
    if (in_dt != TC_BOOL) return false;
    v = a != 0 || b != 0;
    break;
  case TC_PRIM_CONVERT:
    if (dtype_is_float(in_dt) && !dtype_is_float(out_dt) && out_dt != TC_BOOL) {
      v = isnan(a) ? 0 : trunc(a);
    } else {
      v = a;
    }
    break;
  default: return false;
  }
  if (!flt && p != TC_PRIM_CONVERT && fabs(v) > exact_int_limit) return false;
  return as_dtype(out_dt, v, r);
}

static bool try_fold(const tc_graph *g, tc_node *n, cap_simplify_stats *st) {
  const bool elementwise = (n->prim >= 1 && n->prim <= 17) || (n->prim >= 32 && n->prim <= 47) ||
                           n->prim == TC_PRIM_CONVERT;
  const bool view = n->prim == TC_PRIM_RESHAPE || n->prim == TC_PRIM_BROADCAST_IN_DIM || n->prim == TC_PRIM_PERMUTE;
  if (!elementwise && !view) return false;
  if (view) {
    /* A view of a splat is a splat of the new shape. */
    const tc_node *src = node_of(g, n->in[0]);
    if (!src || src->prim != TC_PRIM_CONSTANT) return false;
    make_constant(n, src, 0);
    st->folded++;
    return true;
  }
  double x[2] = {0, 0}, r = 0;
  if (n->n_in < 1 || n->n_in > 2) return false;
  for (int32_t i = 0; i < n->n_in; i++) {
    double raw;
    if (!const_value(g, node_of(g, n->in[i]), &raw)) return false;
    if (!as_dtype(graph_value_type(g, n->in[i])->dtype, raw, &x[i])) return false;
  }
  if (!fold((tc_prim)n->prim, graph_value_type(g, n->in[0])->dtype, n->out.dtype, x, &r)) return false;
  make_constant(n, NULL, r);
  st->folded++;
  return true;
}

/* ---------------------------------------------------------------- view rewrites */
/* Rewrites n in place (composing with its producer); returns a value to use instead of n, or
 * -1 to keep n. */
static int32_t rewrite_view(const tc_graph *g, tc_node *n, cap_simplify_stats *st) {
  const tc_node *src = n->n_in >= 1 ? node_of(g, n->in[0]) : NULL;
  const tc_vtype *in0 = n->n_in >= 1 ? graph_value_type(g, n->in[0]) : NULL;
  switch (n->prim) {
  case TC_PRIM_CONVERT:
    if (in0->dtype == n->out.dtype) {
      st->views++;
      return n->in[0];
    }
    return -1;
  case TC_PRIM_RESHAPE:
    if (src && src->prim == TC_PRIM_RESHAPE) {
      n->in[0] = src->in[0];
      in0 = graph_value_type(g, n->in[0]);
      st->views++;
    }
    if (same_shape(in0, &n->out)) {
      st->views++;
      return n->in[0];
    }
    return -1;
  case TC_PRIM_PERMUTE: {
    if (src && src->prim == TC_PRIM_PERMUTE && src->n_iattrs == n->n_iattrs) {
      int64_t p[TC_MAX_RANK];
      for (int32_t i = 0; i < n->n_iattrs; i++) p[i] = src->iattrs[n->iattrs[i]];
      for (int32_t i = 0; i < n->n_iattrs; i++) n->iattrs[i] = p[i];
      n->in[0] = src->in[0];
      st->views++;
    }
    for (int32_t i = 0; i < n->n_iattrs; i++)
      if (n->iattrs[i] != i) return -1;
    st->views++;
    return n->in[0];
  }
  case TC_PRIM_BROADCAST_IN_DIM: {
    if (src && src->prim == TC_PRIM_BROADCAST_IN_DIM) {
      /* x's dim i -> src's result dim src.bdims[i] -> n's result dim n.bdims[that]. */
      int64_t b[TC_MAX_RANK];
      for (int32_t i = 0; i < src->n_iattrs; i++) b[i] = n->iattrs[src->iattrs[i]];
      for (int32_t i = 0; i < src->n_iattrs; i++) n->iattrs[i] = b[i];
      n->n_iattrs = src->n_iattrs;
      n->in[0] = src->in[0];
      in0 = graph_value_type(g, n->in[0]);
      st->views++;
    }
    if (n->n_iattrs != n->out.rank || !same_shape(in0, &n->out)) return -1;
    for (int32_t i = 0; i < n->n_iattrs; i++)
      if (n->iattrs[i] != i) return -1;
    st->views++;
    return n->in[0];
  }
  default: return -1;
  }
}

/* ---------------------------------------------------------------- CSE */
static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0x100000001b3ull;
}

static uint64_t node_hash(const tc_node *n) {
  uint64_t h = mix(14695981039346656037ull, (uint64_t)n->prim);
  h = mix(h, (uint64_t)n->out.dtype);
  h = mix(h, (uint64_t)n->out.rank);
  for (int d = 0; d < n->out.rank; d++) h = mix(h, (uint64_t)(uint32_t)n->out.shape[d]);
  h = mix(h, (uint64_t)n->n_in);
  for (int32_t i = 0; i < n->n_in; i++) h = mix(h, (uint64_t)(uint32_t)n->in[i]);
  h = mix(h, (uint64_t)n->n_iattrs);
  for (int32_t i = 0; i < n->n_iattrs; i++) h = mix(h, (uint64_t)n->iattrs[i]);
  uint64_t bits;
  memcpy(&bits, &n->fattr, sizeof bits);
  return mix(h, bits);
}

static bool node_same(const tc_node *a, const tc_node *b) {
  if (a->prim != b->prim || a->out.dtype != b->out.dtype || !same_shape(&a->out, &b->out) || a->n_in != b->n_in ||
      a->n_iattrs != b->n_iattrs || memcmp(&a->fattr, &b->fattr, sizeof a->fattr) != 0 || a->index_op != b->index_op)
    return false; /* index_op: two ops' gathers keep their own names for an out-of-range index */
  for (int32_t i = 0; i < a->n_in; i++)
    if (a->in[i] != b->in[i]) return false;
  for (int32_t i = 0; i < a->n_iattrs; i++)
    if (a->iattrs[i] != b->iattrs[i]) return false;
  return true;
}

typedef struct cse_table {
  int32_t *slots; /* value ids, -1 empty */
  uint64_t mask;
} cse_table;

static int32_t cse_find_or_add(cse_table *t, const tc_graph *g, const tc_node *n, int32_t value_if_new) {
  uint64_t k = node_hash(n) & t->mask;
  for (; t->slots[k] >= 0; k = (k + 1) & t->mask)
    if (node_same(graph_value_node(g, t->slots[k]), n)) return t->slots[k];
  if (value_if_new >= 0) t->slots[k] = value_if_new;
  return -1;
}

/* ---------------------------------------------------------------- the passes */
static tc_status graph_start(const tc_graph *in, tc_graph *out) {
  graph_init(out, in->name);
  sxtab_free(&out->sx);
  TC_RETURN_IF_ERROR(sxtab_copy(&in->sx, &out->sx));
  out->n_syms = in->n_syms;
  memcpy(out->sym_pin, in->sym_pin, sizeof out->sym_pin);
  for (int32_t i = 0; i < in->n_inputs; i++)
    if (graph_add_input(out, &in->inputs[i]) < 0) return core_error(TC_ERR_OUT_OF_MEMORY, "simplify: out of memory");
  return TC_OK;
}

static tc_status rewrite_pass(const tc_graph *in, tc_graph *out, int32_t *map, cap_simplify_stats *st) {
  TC_RETURN_IF_ERROR(graph_start(in, out));
  uint64_t cap = 64;
  while (cap < (uint64_t)in->n_nodes * 2 + 2) cap *= 2;
  cse_table cse = {malloc(cap * sizeof(int32_t)), cap - 1};
  if (!cse.slots) return core_error(TC_ERR_OUT_OF_MEMORY, "simplify: out of memory");
  for (uint64_t i = 0; i < cap; i++) cse.slots[i] = -1;
  for (int32_t i = 0; i < in->n_inputs; i++) map[i] = i;
  int32_t stack_in[16];
  tc_status s = TC_OK;
  for (int32_t j = 0; j < in->n_nodes; j++) {
    tc_node n = in->nodes[j];
    int32_t *ins = n.n_in <= 16 ? stack_in : malloc((size_t)n.n_in * sizeof *ins);
    if (!ins) {
      s = core_error(TC_ERR_OUT_OF_MEMORY, "simplify: out of memory");
      break;
    }
    for (int32_t k = 0; k < n.n_in; k++) ins[k] = map[in->nodes[j].in[k]];
    n.in = ins;
    int32_t v = rewrite_view(out, &n, st);
    if (v < 0 && try_fold(out, &n, st)) v = -1;
    if (v < 0) {
      v = cse_find_or_add(&cse, out, &n, -1);
      if (v >= 0) {
        st->duplicate++;
      } else {
        v = graph_add_node(out, &n);
        if (v >= 0) cse_find_or_add(&cse, out, &n, v);
      }
    }
    if (ins != stack_in) free(ins);
    if (v < 0) {
      s = core_error(TC_ERR_OUT_OF_MEMORY, "simplify: out of memory");
      break;
    }
    map[in->n_inputs + j] = v;
  }
  free(cse.slots);
  return s;
}

static tc_status dce_pass(const tc_graph *in, tc_graph *out, int32_t n_roots, int32_t *roots, cap_simplify_stats *st) {
  const int32_t nv = in->n_inputs + in->n_nodes;
  bool *live = calloc((size_t)(nv ? nv : 1), sizeof *live);
  int32_t *map = malloc((size_t)(nv ? nv : 1) * sizeof *map);
  if (!live || !map) {
    free(live);
    free(map);
    return core_error(TC_ERR_OUT_OF_MEMORY, "simplify: out of memory");
  }
  for (int32_t r = 0; r < n_roots; r++) live[roots[r]] = true;
  for (int32_t j = in->n_nodes - 1; j >= 0; j--)
    if (live[in->n_inputs + j])
      for (int32_t k = 0; k < in->nodes[j].n_in; k++) live[in->nodes[j].in[k]] = true;
  tc_status s = graph_start(in, out);
  for (int32_t i = 0; i < in->n_inputs; i++) map[i] = i;
  int32_t stack_in[16];
  for (int32_t j = 0; s == TC_OK && j < in->n_nodes; j++) {
    if (!live[in->n_inputs + j]) {
      st->dead++;
      continue;
    }
    tc_node n = in->nodes[j];
    int32_t *ins = n.n_in <= 16 ? stack_in : malloc((size_t)n.n_in * sizeof *ins);
    if (!ins) {
      s = core_error(TC_ERR_OUT_OF_MEMORY, "simplify: out of memory");
      break;
    }
    for (int32_t k = 0; k < n.n_in; k++) ins[k] = map[in->nodes[j].in[k]];
    n.in = ins;
    map[in->n_inputs + j] = graph_add_node(out, &n);
    if (ins != stack_in) free(ins);
    if (map[in->n_inputs + j] < 0) s = core_error(TC_ERR_OUT_OF_MEMORY, "simplify: out of memory");
  }
  for (int32_t r = 0; s == TC_OK && r < n_roots; r++) roots[r] = map[roots[r]];
  free(live);
  free(map);
  return s;
}

tc_status graph_simplify(const tc_graph *in, tc_graph *out, int32_t *out_values, cap_simplify_stats *stats) {
  cap_simplify_stats st = {0};
  const int32_t nv = in->n_inputs + in->n_nodes;
  int32_t *map = malloc((size_t)(nv ? nv : 1) * sizeof *map);
  if (!map) return core_error(TC_ERR_OUT_OF_MEMORY, "simplify: out of memory");
  tc_graph mid;
  tc_status s = rewrite_pass(in, &mid, map, &st);
  if (s == TC_OK) {
    for (int32_t k = 0; k < in->n_outputs; k++) out_values[k] = map[in->outputs[k]];
    s = dce_pass(&mid, out, in->n_outputs, out_values, &st);
    if (s != TC_OK) graph_free(out);
  }
  graph_free(&mid);
  free(map);
  if (stats) *stats = st;
  return s;
}
