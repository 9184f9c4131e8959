/* schedule_attention.c — finds scaled dot-product attention in a primitive graph, for a plugin
 * that takes TC_KERNEL_ATTENTION: the region
 *
 *   S  = matmul(q, kT)                     (..., tq, tk)
 *   S1 = mul(S, scale)                     optional (a constant)
 *   X  = where(mask, -inf, S1)             optional; mask a causal pattern of iotas
 *   P  = div(E, bcast(reduce_sum(E)))      with E = exp(sub(X, bcast(reduce_max(X)))): softmax
 *   O  = matmul(P, v)
 *
 * exactly as tc_softmax, tc_masked_fill and tc_triu decompose. Every value between S and O must
 * be used only inside the region (nothing else reads the scores or the probabilities), so the
 * backend may compute O without ever storing them (flash attention). The mask is recognized
 * structurally, never guessed from values: ge(iota(col) - iota(row), c) (or gt, c + 1), possibly
 * through where(m, true, false), broadcasts and reshapes that only add leading 1-dims. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/schedule.h"

static const tc_node *node_of(const tc_graph *g, int32_t v) { return graph_value_node(g, v); }

static bool const_value(const tc_graph *g, int32_t v, double *out) {
  const tc_node *n = node_of(g, v);
  if (!n || n->prim != TC_PRIM_CONSTANT || n->n_iattrs < 1 || n->iattrs[0] != -1) return false;
  *out = n->fattr;
  return true;
}

static bool dim_is_one(const tc_graph *g, int32_t expr) {
  int64_t v;
  return sxtab_is_const(&g->sx, expr, &v) && v == 1;
}

/* Through broadcasts and reshapes that keep the last two dims and add or drop only 1-dims in
 * front: the value whose last two dims are the same (tq, tk) plane. */
static int32_t strip_plane(sched_ctx *c, int32_t v) {
  const tc_graph *g = c->g;
  for (int guard = 0; guard < 64; guard++) {
    const tc_node *n = node_of(g, v);
    if (!n || n->n_in < 1) return v;
    const tc_vtype *ti = graph_value_type(g, n->in[0]);
    int32_t ro = n->out.rank, ri = ti->rank;
    if (ri < 2 || ro < 2) return v;
    bool same_plane = sx_equal(c, sx_g(c, n->out.shape[ro - 2]), sx_g(c, ti->shape[ri - 2])) &&
                      sx_equal(c, sx_g(c, n->out.shape[ro - 1]), sx_g(c, ti->shape[ri - 1]));
    if (!same_plane) return v;
    bool ones = true;
    for (int32_t d = 0; d < ri - 2; d++) ones = ones && dim_is_one(g, ti->shape[d]);
    if (n->prim == TC_PRIM_BROADCAST_IN_DIM) {
      if (n->n_iattrs != ri || n->iattrs[ri - 2] != ro - 2 || n->iattrs[ri - 1] != ro - 1 || !ones) return v;
    } else if (n->prim == TC_PRIM_RESHAPE) {
      for (int32_t d = 0; d < ro - 2; d++) ones = ones && dim_is_one(g, n->out.shape[d]);
      if (!ones) return v;
    } else {
      return v;
    }
    v = n->in[0];
  }
  return v;
}

static bool is_iota_along(const tc_graph *g, int32_t v, int32_t from_end) {
  const tc_node *n = node_of(g, v);
  return n && n->prim == TC_PRIM_IOTA && n->n_iattrs >= 1 && n->out.rank >= 2 &&
         n->iattrs[0] == n->out.rank - from_end && n->out.dtype != TC_BOOL && n->out.dtype != TC_F32 &&
         n->out.dtype != TC_F64;
}

/* The mask as "key j of query i masked when j - i >= offset". */
static bool causal_mask(sched_ctx *c, int32_t mask, int64_t *offset) {
  const tc_graph *g = c->g;
  int32_t m = strip_plane(c, mask);
  const tc_node *n = node_of(g, m);
  double t, f;
  if (n && n->prim == TC_PRIM_WHERE && const_value(g, n->in[1], &t) && const_value(g, n->in[2], &f) && t != 0 && f == 0)
    m = strip_plane(c, n->in[0]);
  n = node_of(g, m);
  double k;
  if (!n || (n->prim != TC_PRIM_GE && n->prim != TC_PRIM_GT) || !const_value(g, n->in[1], &k) || k != floor(k) ||
      fabs(k) > 1e15)
    return false;
  const tc_node *diff = node_of(g, strip_plane(c, n->in[0]));
  if (!diff || diff->prim != TC_PRIM_SUB) return false;
  if (!is_iota_along(g, strip_plane(c, diff->in[0]), 1) || !is_iota_along(g, strip_plane(c, diff->in[1]), 2))
    return false;
  *offset = (int64_t)k + (n->prim == TC_PRIM_GT);
  return true;
}

/* The value reduced by a last-dim reduction `r` of prim `prim`, broadcast back by `b` over x's
 * shape: true when b = broadcast_in_dim(reduce(x, dims=[last]), bdims=[0..rank-2]). */
static bool last_dim_reduction(const tc_graph *g, int32_t b, tc_prim prim, int32_t x, int32_t *r_out) {
  const tc_node *nb = node_of(g, b);
  if (!nb || nb->prim != TC_PRIM_BROADCAST_IN_DIM) return false;
  const tc_node *nr = node_of(g, nb->in[0]);
  const tc_vtype *tx = graph_value_type(g, x);
  if (!nr || nr->prim != prim || nr->in[0] != x || nr->n_iattrs != 1 || nr->iattrs[0] != tx->rank - 1) return false;
  if (nb->n_iattrs != tx->rank - 1) return false;
  for (int32_t i = 0; i < nb->n_iattrs; i++)
    if (nb->iattrs[i] != i) return false;
  *r_out = nb->in[0];
  return true;
}

static void add_member(sched_attention *a, int32_t v) {
  for (int32_t m = 0; m < a->n_members; m++)
    if (a->members[m] == v) return;
  a->members[a->n_members++] = v;
}

/* Matches the region ending at matmul O. */
static bool match(sched_ctx *c, int32_t O, sched_attention *a) {
  const tc_graph *g = c->g;
  const tc_node *no = node_of(g, O);
  if (!no || no->prim != TC_PRIM_MATMUL || no->out.dtype != TC_F32) return false;
  memset(a, 0, sizeof *a);
  a->out = O;
  a->v = no->in[1];
  int32_t P = no->in[0];
  const tc_node *np = node_of(g, P);
  if (!np || np->prim != TC_PRIM_DIV) return false;
  int32_t E = np->in[0], R2, R1;
  if (!last_dim_reduction(g, np->in[1], TC_PRIM_REDUCE_SUM, E, &R2)) return false;
  const tc_node *ne = node_of(g, E);
  if (!ne || ne->prim != TC_PRIM_EXP) return false;
  const tc_node *nd = node_of(g, ne->in[0]);
  if (!nd || nd->prim != TC_PRIM_SUB) return false;
  int32_t X = nd->in[0];
  if (!last_dim_reduction(g, nd->in[1], TC_PRIM_REDUCE_MAX, X, &R1)) return false;
  int32_t members[] = {P, np->in[1], R2, E, ne->in[0], nd->in[1], R1, X};
  for (size_t i = 0; i < sizeof members / sizeof *members; i++) a->members[a->n_members++] = members[i];
  int32_t S1 = X;
  const tc_node *nx = node_of(g, X);
  double fill;
  if (nx && nx->prim == TC_PRIM_WHERE && const_value(g, nx->in[1], &fill) && isinf(fill) && fill < 0) {
    if (!causal_mask(c, nx->in[0], &a->causal_offset)) return false;
    a->causal = true;
    S1 = nx->in[2];
  }
  int32_t S = S1;
  a->scale = 1.0;
  const tc_node *ns1 = node_of(g, S1);
  double k;
  if (ns1 && ns1->prim == TC_PRIM_MUL) {
    if (const_value(g, ns1->in[1], &k)) S = ns1->in[0];
    else if (const_value(g, ns1->in[0], &k)) S = ns1->in[1];
    else return false;
    a->scale = k;
  }
  add_member(a, S1);
  add_member(a, S);
  const tc_node *ns = node_of(g, S);
  if (!ns || ns->prim != TC_PRIM_MATMUL || ns->out.dtype != TC_F32) return false;
  a->scores = S;
  a->q = ns->in[0];
  a->kt = ns->in[1];
  /* head sizes: constants, at most 256 (the ABI's promise to generators) */
  const tc_vtype *tq = graph_value_type(g, a->q), *tv = graph_value_type(g, a->v);
  int64_t d, dv;
  if (!sxtab_is_const(&g->sx, tq->shape[tq->rank - 1], &d) || !sxtab_is_const(&g->sx, tv->shape[tv->rank - 1], &dv) ||
      d < 1 || dv < 1 || d > 256 || dv > 256)
    return false;
  return true;
}

/* Every member is read only inside the region (or by O) and is not a graph output. */
static bool region_closed(sched_ctx *c, const sched_attention *a, const bool *is_output) {
  const tc_graph *g = c->g;
  for (int32_t m = 0; m < a->n_members; m++)
    if (is_output[a->members[m]]) return false;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    int32_t v = g->n_inputs + i;
    bool inside = v == a->out;
    for (int32_t m = 0; m < a->n_members && !inside; m++) inside = a->members[m] == v;
    if (inside) continue;
    const tc_node *n = &g->nodes[i];
    for (int32_t j = 0; j < n->n_in; j++)
      for (int32_t m = 0; m < a->n_members; m++)
        if (n->in[j] == a->members[m]) return false;
  }
  return true;
}

int32_t attention_find(sched_ctx *c, const bool *is_output, sched_attention *out, int32_t cap) {
  const tc_graph *g = c->g;
  int32_t n = 0;
  for (int32_t i = 0; i < g->n_nodes && n < cap; i++) {
    int32_t v = g->n_inputs + i;
    if (g->nodes[i].prim != TC_PRIM_MATMUL) continue;
    if (!match(c, v, &out[n]) || !region_closed(c, &out[n], is_output)) continue;
    tc_logs("fusion", "fused attention: v%d = softmax(%s(v%d . v%d * %g)) . v%d", v, out[n].causal ? "causal" : "",
            out[n].q, out[n].kt, out[n].scale, out[n].v);
    n++;
  }
  return n;
}
