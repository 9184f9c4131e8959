/* validate.c — compile-time checks of a tc_graph_desc. The ABI (struct and element sizes, ids
 * in range, values defined before use) is the kit's tck_graph_validate; here are the
 * interpreter's own: each prim's rules from docs/primitives.md (operand count, dtypes, ranks,
 * attributes) and the reserved dtypes it declines. Sizes are symbolic, so size agreement is
 * checked by the executors at run time. */
#include <stdio.h>

#include "debug_eager.h"

typedef struct vnode {
  de_call *call;
  const tc_graph_desc *g;
  int32_t index;
  const tc_prim_node *n;
  const tc_value_type *in[3]; /* the first three operands' types (enough for every check) */
} vnode;


static tc_status node_error(const vnode *v, tc_status s, const char *fmt, ...) DE_PRINTF(3, 4);
static tc_status node_error(const vnode *v, tc_status s, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return de_error(v->call, s, "graph '%s': node %d (%s): %s", v->g->name ? v->g->name : "?", v->index,
                  de_prim_name(v->n->prim), msg);
}

/* The kit checked the type against the ABI; the interpreter declines the reserved dtypes. */
static tc_status check_type(de_call *call, const tc_value_type *t, const char *what) {
  if (t->dtype == TC_F16 || t->dtype == TC_BF16)
    return de_error(call, TC_ERR_UNSUPPORTED, "%s: dtype %s is reserved and not supported", what,
                    tck_dtype_name(t->dtype));
  return TC_OK;
}

static tc_status expect_inputs(const vnode *v, int32_t n) {
  if (v->n->n_inputs != n) return node_error(v, TC_ERR_INVALID_ARGUMENT, "takes %d operands, got %d", n, v->n->n_inputs);
  return TC_OK;
}

static tc_status expect_iattrs(const vnode *v, int32_t n) {
  if (v->n->n_iattrs != n)
    return node_error(v, TC_ERR_INVALID_ARGUMENT, "takes %d integer attributes, got %d", n, v->n->n_iattrs);
  return TC_OK;
}

static tc_status expect_out(const vnode *v, int32_t dtype, int32_t rank) {
  if (v->n->out->dtype != dtype)
    return node_error(v, TC_ERR_INVALID_ARGUMENT, "result dtype must be %s, node says %s", tck_dtype_name(dtype),
                      tck_dtype_name(v->n->out->dtype));
  if (v->n->out->rank != rank)
    return node_error(v, TC_ERR_INVALID_ARGUMENT, "result rank must be %d, node says %d", rank, v->n->out->rank);
  return TC_OK;
}

static tc_status expect_dtype(const vnode *v, int32_t dtype, uint32_t allowed, const char *what) {
  if (!(allowed & (1u << dtype)))
    return node_error(v, TC_ERR_INVALID_ARGUMENT, "%s: dtype %s is not accepted", what, tck_dtype_name(dtype));
  return TC_OK;
}

/* Dims listed in iattrs[first..first+n): each in [0, rank), strictly increasing. */
static tc_status expect_dims(const vnode *v, int32_t first, int32_t n, int32_t rank, const char *what) {
  for (int32_t i = 0; i < n; i++) {
    int64_t d = v->n->iattrs[first + i];
    if (d < 0 || d >= rank)
      return node_error(v, TC_ERR_INVALID_ARGUMENT, "%s[%d] = %lld out of range for rank %d", what, i, (long long)d,
                        rank);
    if (i > 0 && d <= v->n->iattrs[first + i - 1])
      return node_error(v, TC_ERR_INVALID_ARGUMENT, "%s must be strictly increasing", what);
  }
  return TC_OK;
}

static bool is_comparison(int32_t prim) { return prim >= TC_PRIM_EQ && prim <= TC_PRIM_GE; }

static tc_status check_elementwise(const vnode *v, de_prim_info info) {
  const tc_prim_node *n = v->n;
  DE_TRY(expect_iattrs(v, 0));
  int32_t want_inputs = info.family == DE_FAMILY_BINARY ? 2 : info.family == DE_FAMILY_WHERE ? 3 : 1;
  DE_TRY(expect_inputs(v, want_inputs));
  for (int32_t i = 0; i < want_inputs; i++)
    if (v->in[i]->rank != n->out->rank)
      return node_error(v, TC_ERR_INVALID_ARGUMENT, "operand %d has rank %d, the result %d (operands must have one "
                        "shape; broadcast explicitly)", i, v->in[i]->rank, n->out->rank);
  switch (info.family) {
  case DE_FAMILY_UNARY:
    DE_TRY(expect_dtype(v, v->in[0]->dtype, info.dtypes, "operand"));
    return expect_out(v, n->prim == TC_PRIM_ISNAN ? TC_BOOL : v->in[0]->dtype, v->in[0]->rank);
  case DE_FAMILY_BINARY:
    if (v->in[0]->dtype != v->in[1]->dtype)
      return node_error(v, TC_ERR_INVALID_ARGUMENT, "operand dtypes differ (%s, %s); convert explicitly",
                        tck_dtype_name(v->in[0]->dtype), tck_dtype_name(v->in[1]->dtype));
    DE_TRY(expect_dtype(v, v->in[0]->dtype, info.dtypes, "operands"));
    return expect_out(v, is_comparison(n->prim) ? TC_BOOL : v->in[0]->dtype, v->in[0]->rank);
  case DE_FAMILY_WHERE:
    if (v->in[0]->dtype != TC_BOOL)
      return node_error(v, TC_ERR_INVALID_ARGUMENT, "condition must be bool, got %s", tck_dtype_name(v->in[0]->dtype));
    if (v->in[1]->dtype != v->in[2]->dtype)
      return node_error(v, TC_ERR_INVALID_ARGUMENT, "branch dtypes differ (%s, %s)", tck_dtype_name(v->in[1]->dtype),
                        tck_dtype_name(v->in[2]->dtype));
    return expect_out(v, v->in[1]->dtype, v->in[1]->rank);
  default: /* CONVERT: any dtype to any dtype */
    return expect_out(v, n->out->dtype, v->in[0]->rank);
  }
}

static tc_status check_reduce(const vnode *v, de_prim_info info) {
  const tc_value_type *x = v->in[0];
  DE_TRY(expect_inputs(v, 1));
  DE_TRY(expect_dtype(v, x->dtype, info.dtypes, "operand"));
  if (info.family == DE_FAMILY_ARGREDUCE) {
    DE_TRY(expect_iattrs(v, 1));
    DE_TRY(expect_dims(v, 0, 1, x->rank, "dim"));
    return expect_out(v, TC_I64, x->rank - 1);
  }
  if (v->n->n_iattrs < 1)
    return node_error(v, TC_ERR_INVALID_ARGUMENT, "needs at least one reduced dim");
  DE_TRY(expect_dims(v, 0, v->n->n_iattrs, x->rank, "dims"));
  return expect_out(v, x->dtype, x->rank - v->n->n_iattrs);
}

static tc_status check_movement(const vnode *v) {
  const tc_prim_node *n = v->n;
  const tc_value_type *x = v->in[0];
  if (n->prim == TC_PRIM_CONCATENATE) {
    if (n->n_inputs < 1) return node_error(v, TC_ERR_INVALID_ARGUMENT, "needs at least one operand");
    DE_TRY(expect_iattrs(v, 1));
    DE_TRY(expect_dims(v, 0, 1, x->rank, "dim"));
    for (int32_t i = 1; i < n->n_inputs; i++) {
      const tc_value_type *t = tck_graph_value_type(v->g, n->inputs[i]);
      if (t->rank != x->rank || t->dtype != x->dtype)
        return node_error(v, TC_ERR_INVALID_ARGUMENT, "operand %d is %s rank %d, operand 0 %s rank %d", i,
                          tck_dtype_name(t->dtype), t->rank, tck_dtype_name(x->dtype), x->rank);
    }
    return expect_out(v, x->dtype, x->rank);
  }
  DE_TRY(expect_inputs(v, 1));
  switch (n->prim) {
  case TC_PRIM_RESHAPE:
    DE_TRY(expect_iattrs(v, 0));
    return expect_out(v, x->dtype, n->out->rank);
  case TC_PRIM_BROADCAST_IN_DIM:
    DE_TRY(expect_iattrs(v, x->rank));
    DE_TRY(expect_dims(v, 0, x->rank, n->out->rank, "bdims"));
    return expect_out(v, x->dtype, n->out->rank);
  case TC_PRIM_PERMUTE: {
    DE_TRY(expect_iattrs(v, x->rank));
    bool seen[TC_MAX_RANK] = {false};
    for (int32_t i = 0; i < x->rank; i++) {
      int64_t p = n->iattrs[i];
      if (p < 0 || p >= x->rank || seen[p])
        return node_error(v, TC_ERR_INVALID_ARGUMENT, "perm is not a permutation of 0..%d (entry %d = %lld)",
                          x->rank - 1, i, (long long)p);
      seen[p] = true;
    }
    return expect_out(v, x->dtype, x->rank);
  }
  case TC_PRIM_SLICE:
    DE_TRY(expect_iattrs(v, 2 * x->rank));
    for (int32_t d = 0; d < x->rank; d++)
      if (n->iattrs[d] < 0 || n->iattrs[x->rank + d] < 1)
        return node_error(v, TC_ERR_INVALID_ARGUMENT, "dim %d: start %lld must be >= 0 and step %lld >= 1", d,
                          (long long)n->iattrs[d], (long long)n->iattrs[x->rank + d]);
    return expect_out(v, x->dtype, x->rank);
  case TC_PRIM_PAD:
    DE_TRY(expect_iattrs(v, 2 * x->rank));
    for (int32_t d = 0; d < x->rank; d++)
      if (n->iattrs[d] < 0 || n->iattrs[x->rank + d] < 0)
        return node_error(v, TC_ERR_INVALID_ARGUMENT, "dim %d: padding lo %lld, hi %lld must be >= 0", d,
                          (long long)n->iattrs[d], (long long)n->iattrs[x->rank + d]);
    return expect_out(v, x->dtype, x->rank);
  default: { /* REVERSE: distinct dims in range, any order */
    bool seen[TC_MAX_RANK] = {false};
    if (n->n_iattrs > x->rank) return node_error(v, TC_ERR_INVALID_ARGUMENT, "more dims than the rank %d", x->rank);
    for (int32_t i = 0; i < n->n_iattrs; i++) {
      int64_t d = n->iattrs[i];
      if (d < 0 || d >= x->rank || seen[d])
        return node_error(v, TC_ERR_INVALID_ARGUMENT, "dims[%d] = %lld is out of range for rank %d or repeated", i,
                          (long long)d, x->rank);
      seen[d] = true;
    }
    return expect_out(v, x->dtype, x->rank);
  }
  }
}

static tc_status check_index(const vnode *v, de_prim_info info) {
  const tc_prim_node *n = v->n;
  bool scatter = n->prim == TC_PRIM_SCATTER_ADD;
  DE_TRY(expect_inputs(v, scatter ? 3 : 2));
  DE_TRY(expect_iattrs(v, 1));
  const tc_value_type *x = v->in[0], *index = v->in[1];
  DE_TRY(expect_dtype(v, x->dtype, info.dtypes, "x"));
  DE_TRY(expect_dims(v, 0, 1, x->rank, "dim"));
  if (index->dtype != TC_I32 && index->dtype != TC_I64)
    return node_error(v, TC_ERR_INVALID_ARGUMENT, "index must be i32 or i64, got %s", tck_dtype_name(index->dtype));
  if (index->rank != x->rank)
    return node_error(v, TC_ERR_INVALID_ARGUMENT, "index rank %d differs from x rank %d", index->rank, x->rank);
  if (scatter) {
    const tc_value_type *src = v->in[2];
    if (src->rank != x->rank || src->dtype != x->dtype)
      return node_error(v, TC_ERR_INVALID_ARGUMENT, "src is %s rank %d, x %s rank %d", tck_dtype_name(src->dtype),
                        src->rank, tck_dtype_name(x->dtype), x->rank);
  }
  return expect_out(v, x->dtype, x->rank);
}

static tc_status check_create(const vnode *v, de_prim_info info) {
  const tc_prim_node *n = v->n;
  DE_TRY(expect_inputs(v, 0));
  DE_TRY(expect_dtype(v, n->out->dtype, info.dtypes, "result"));
  switch (n->prim) {
  case TC_PRIM_IOTA:
    DE_TRY(expect_iattrs(v, 1));
    return expect_dims(v, 0, 1, n->out->rank, "dim");
  case TC_PRIM_CONSTANT:
    DE_TRY(expect_iattrs(v, 1));
    if (n->iattrs[0] < -1 || n->iattrs[0] >= v->g->n_exprs)
      return node_error(v, TC_ERR_INVALID_ARGUMENT, "iattrs[0] = %lld must be -1 or a size expression id (< %d)",
                        (long long)n->iattrs[0], v->g->n_exprs);
    return TC_OK;
  default: /* RANDOM: [seed, offset] */
    return expect_iattrs(v, 2);
  }
}

static tc_status check_matmul(const vnode *v, de_prim_info info) {
  DE_TRY(expect_inputs(v, 2));
  DE_TRY(expect_iattrs(v, 0));
  const tc_value_type *a = v->in[0], *b = v->in[1];
  if (a->dtype != b->dtype)
    return node_error(v, TC_ERR_INVALID_ARGUMENT, "operand dtypes differ (%s, %s)", tck_dtype_name(a->dtype),
                      tck_dtype_name(b->dtype));
  DE_TRY(expect_dtype(v, a->dtype, info.dtypes, "operands"));
  if (a->rank < 2 || a->rank != b->rank)
    return node_error(v, TC_ERR_INVALID_ARGUMENT, "operands need equal ranks >= 2 (a: rank %d, b: rank %d)", a->rank,
                      b->rank);
  return expect_out(v, a->dtype, a->rank);
}

static tc_status check_node(de_call *call, const tc_graph_desc *g, int32_t i) {
  vnode v = {call, g, i, tck_graph_node(g, i), {NULL, NULL, NULL}};
  const tc_prim_node *n = v.n;
  char what[64];
  snprintf(what, sizeof what, "node %d result", i);
  de_prim_info info = de_prim_info_of(n->prim);
  if (info.family == DE_FAMILY_NONE)
    return de_error(call, TC_ERR_UNSUPPORTED, "node %d: unknown prim id %d", i, n->prim);
  DE_TRY(check_type(call, n->out, what));
  for (int32_t k = 0; k < n->n_inputs && k < 3; k++) v.in[k] = tck_graph_value_type(g, n->inputs[k]);
  /* Operand counts are checked per family below; until then only in[0..n_inputs) are set. */
  static const tc_value_type none = {sizeof(tc_value_type), TC_BOOL, 0, NULL};
  for (int32_t k = n->n_inputs; k < 3; k++) v.in[k] = &none;
  switch (info.family) {
  case DE_FAMILY_UNARY: case DE_FAMILY_BINARY: case DE_FAMILY_WHERE: case DE_FAMILY_CONVERT:
    return check_elementwise(&v, info);
  case DE_FAMILY_REDUCE: case DE_FAMILY_ARGREDUCE: return check_reduce(&v, info);
  case DE_FAMILY_MOVEMENT: return check_movement(&v);
  case DE_FAMILY_INDEX: return check_index(&v, info);
  case DE_FAMILY_CREATE: return check_create(&v, info);
  case DE_FAMILY_MATMUL: return check_matmul(&v, info);
  default: return de_error(call, TC_ERR_INTERNAL, "node %d: no checks for prim %d", i, n->prim);
  }
}

tc_status de_graph_validate(de_call *call, const tc_graph_desc *g) {
  char err[512];
  tc_status s = tck_graph_validate(g, err, sizeof err);
  if (s != TC_OK) return de_error(call, s, "compile: %s", err);
  for (int32_t i = 0; i < g->n_inputs; i++) {
    char what[64];
    snprintf(what, sizeof what, "graph '%s': input %d", g->name ? g->name : "?", i);
    DE_TRY(check_type(call, tck_graph_input(g, i), what));
  }
  for (int32_t i = 0; i < g->n_nodes; i++) DE_TRY(check_node(call, g, i));
  return TC_OK;
}
