/* schedule_index.c — index maps for the scheduler: affine forms over kernel vars with symbolic
 * coefficients, and how each view prim (reshape, permute, broadcast_in_dim, slice, reverse)
 * maps a read of its result to a read of its input. Views are never materialized when this
 * succeeds; when it cannot (a merge of dims that are not adjacent in memory, say), it says why
 * and the scheduler realizes the view's input instead. */
#include <stdio.h>
#include <string.h>

#include "schedule/schedule.h"

/* ---------------------------------------------------------------- size expressions */
static bool sx_is_zero(sched_ctx *c, int32_t id) {
  int64_t v;
  return id < 0 || (sxtab_is_const(c->sx, id, &v) && v == 0);
}

int32_t sx_c(sched_ctx *c, int64_t v) { return sxtab_const(c->sx, v); }
int32_t sx_g(sched_ctx *c, int32_t graph_expr) { return graph_expr < 0 ? -1 : c->sx_map[graph_expr]; }

int32_t sx_add(sched_ctx *c, int32_t a, int32_t b) {
  if (sx_is_zero(c, a)) return sx_is_zero(c, b) ? -1 : b;
  if (sx_is_zero(c, b)) return a;
  int32_t r = sxtab_bin(c->sx, TC_SX_ADD, a, b);
  return sx_is_zero(c, r) ? -1 : r;
}

int32_t sx_mul(sched_ctx *c, int32_t a, int32_t b) {
  if (sx_is_zero(c, a) || sx_is_zero(c, b)) return -1;
  int32_t r = sxtab_bin(c->sx, TC_SX_MUL, a, b);
  return sx_is_zero(c, r) ? -1 : r;
}

static int64_t sx_eval(const tc_sxtab *t, int32_t id, const int64_t *syms) {
  if (id < 0) return 0;
  const tc_size_expr *e = &t->nodes[id];
  if (e->op == TC_SX_CONST) return e->value;
  if (e->op == TC_SX_SYM) return syms[e->value & 63];
  int64_t a = sx_eval(t, e->a, syms), b = sx_eval(t, e->b, syms);
  /* Wrapping arithmetic: probes may overflow, and must not be undefined when they do. */
  switch (e->op) {
  case TC_SX_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
  case TC_SX_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
  case TC_SX_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
  case TC_SX_FLOORDIV: return b && !(a == INT64_MIN && b == -1) ? (a / b - ((a % b != 0) && ((a < 0) != (b < 0)))) : 0;
  case TC_SX_MOD: { int64_t r = b && b != -1 ? a % b : 0; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
  case TC_SX_MAX: return a > b ? a : b;
  case TC_SX_MIN: return a < b ? a : b;
  default: return 0;
  }
}

bool sx_equal(sched_ctx *c, int32_t a, int32_t b) {
  if (a == b) return true;
  if (sx_is_zero(c, a) && sx_is_zero(c, b)) return true;
  /* Polynomial identity testing at two unrelated symbol assignments. */
  for (int k = 0; k < 2; k++)
    if (sx_eval(c->sx, a, c->probe[k]) != sx_eval(c->sx, b, c->probe[k])) return false;
  return true;
}

static int64_t sx_probe(sched_ctx *c, int32_t a) { return sx_eval(c->sx, a, c->probe[0]); }

static bool sx_is_one(sched_ctx *c, int32_t id) {
  int64_t v;
  return id >= 0 && sxtab_is_const(c->sx, id, &v) && v == 1;
}

int32_t sx_prod(sched_ctx *c, const tc_vtype *t, int32_t lo, int32_t hi) {
  int32_t p = sx_c(c, 1);
  for (int32_t d = lo; d < hi; d++) p = sx_mul(c, p, sx_g(c, t->shape[d]));
  return p < 0 ? sx_c(c, 0) : p;
}

/* ---------------------------------------------------------------- affine forms */
aff aff_zero(void) {
  aff a;
  memset(&a, 0xff, sizeof a);
  return a;
}

aff aff_var(sched_ctx *c, int32_t v) {
  aff a = aff_zero();
  a.k[v] = sx_c(c, 1);
  return a;
}

aff aff_add(sched_ctx *c, aff a, aff b) {
  aff r;
  r.c = sx_add(c, a.c, b.c);
  for (int v = 0; v < SCHED_MAX_VARS; v++) r.k[v] = sx_add(c, a.k[v], b.k[v]);
  return r;
}

aff aff_scale(sched_ctx *c, aff a, int32_t e) {
  aff r;
  r.c = sx_mul(c, a.c, e);
  for (int v = 0; v < SCHED_MAX_VARS; v++) r.k[v] = sx_mul(c, a.k[v], e);
  return r;
}

bool aff_uses_var(const aff *a, int32_t v) { return a->k[v] >= 0; }

/* ---------------------------------------------------------------- accesses */
void access_clear(sched_access *a) { memset(a, 0xff, sizeof *a); a->n = 0; }

sched_access access_vars(int32_t rank) {
  sched_access a;
  access_clear(&a);
  a.n = rank;
  for (int32_t d = 0; d < rank; d++) {
    a.s[d].lo = d;
    a.s[d].hi = d + 1;
    a.s[d].L = aff_zero();
    a.s[d].ind = -1;
    a.s[d].ind_coef = -1;
  }
  return a;
}

static seg seg_make(int32_t lo, int32_t hi, aff L) {
  seg s;
  memset(&s, 0xff, sizeof s);
  s.lo = lo;
  s.hi = hi;
  s.L = L;
  s.ind = -1;
  s.ind_coef = -1;
  return s;
}

bool access_uses_var(const sched_access *a, int32_t v) {
  for (int32_t i = 0; i < a->n; i++)
    if (aff_uses_var(&a->s[i].L, v)) return true;
  return false;
}

bool access_same(const sched_access *a, const sched_access *b) {
  if (a->n != b->n) return false;
  return memcmp(a->s, b->s, sizeof(seg) * (size_t)a->n) == 0;
}

static void access_sort(sched_access *a) {
  for (int32_t i = 1; i < a->n; i++)
    for (int32_t j = i; j > 0 && a->s[j].lo < a->s[j - 1].lo; j--) {
      seg t = a->s[j];
      a->s[j] = a->s[j - 1];
      a->s[j - 1] = t;
    }
}

static bool sx_is_const1(sched_ctx *c, const tc_vtype *t, int32_t d) { return sx_is_one(c, sx_g(c, t->shape[d])); }

bool access_split(sched_ctx *c, sched_access *a, int32_t i, const tc_vtype *t) {
  seg s = a->s[i];
  int32_t len = s.hi - s.lo;
  if (len <= 1) return true;
  aff comp[TC_MAX_RANK];
  int32_t ind_dim = -1;
  for (int32_t d = 0; d < len; d++) comp[d] = aff_zero();
  int32_t n_big = 0, big = -1;
  for (int32_t d = s.lo; d < s.hi; d++)
    if (!sx_is_const1(c, t, d)) { n_big++; big = d; }
  if (n_big <= 1) {
    if (big >= 0) { comp[big - s.lo] = s.L; ind_dim = big; }
  } else {
    /* L = sum_v k_v * var_v must be a sum of one var per dim, each with that dim's row-major
     * weight and ranging over exactly that dim. */
    if (s.ind >= 0 || !sx_is_zero(c, s.L.c)) goto fail;
    bool taken[TC_MAX_RANK] = {false};
    for (int32_t v = 0; v < SCHED_MAX_VARS; v++) {
      if (s.L.k[v] < 0) continue;
      int32_t hit = -1;
      for (int32_t d = s.lo; d < s.hi && hit < 0; d++) {
        if (taken[d - s.lo]) continue;
        int32_t w = sx_prod(c, t, d + 1, s.hi);
        if (sx_equal(c, s.L.k[v], w) && v < c->n_vars && sx_equal(c, c->var_extent[v], sx_g(c, t->shape[d]))) hit = d;
      }
      if (hit < 0) goto fail;
      taken[hit - s.lo] = true;
      comp[hit - s.lo] = aff_zero();
      comp[hit - s.lo].k[v] = sx_c(c, 1);
    }
  }
  /* Replace run i by len single-dim runs. */
  if (a->n - 1 + len > TC_MAX_RANK) goto fail;
  sched_access b;
  access_clear(&b);
  for (int32_t j = 0; j < a->n; j++) {
    if (j != i) { b.s[b.n++] = a->s[j]; continue; }
    for (int32_t d = 0; d < len; d++) {
      seg one = seg_make(s.lo + d, s.lo + d + 1, comp[d]);
      if (s.lo + d == ind_dim) { one.ind = s.ind; one.ind_coef = s.ind_coef; }
      b.s[b.n++] = one;
    }
  }
  *a = b;
  return true;
fail:
  snprintf(c->why, sizeof c->why, "the index over dims %d..%d is not a sum of per-dim indices", s.lo, s.hi - 1);
  return false;
}

bool access_isolate(sched_ctx *c, sched_access *a, int32_t d, const tc_vtype *t) {
  for (int32_t i = 0; i < a->n; i++)
    if (a->s[i].lo <= d && d < a->s[i].hi) return access_split(c, a, i, t);
  return true;
}

/* ---------------------------------------------------------------- views */
static bool through_permute(sched_ctx *c, const tc_node *n, const sched_access *out, sched_access *in) {
  sched_access o = *out;
  for (int32_t i = 0; i < o.n; i++) {
    bool consecutive = true;
    for (int32_t d = o.s[i].lo; d + 1 < o.s[i].hi; d++) consecutive &= n->iattrs[d + 1] == n->iattrs[d] + 1;
    if (!consecutive) {
      if (!access_split(c, &o, i, &n->out)) return false;
      i = -1;
    }
  }
  access_clear(in);
  in->n = o.n;
  for (int32_t i = 0; i < o.n; i++) {
    in->s[i] = o.s[i];
    in->s[i].lo = (int32_t)n->iattrs[o.s[i].lo];
    in->s[i].hi = in->s[i].lo + (o.s[i].hi - o.s[i].lo);
  }
  access_sort(in);
  return true;
}

static bool through_broadcast(sched_ctx *c, const tc_node *n, const tc_vtype *tin, const sched_access *out, sched_access *in) {
  int32_t src[TC_MAX_RANK];
  bool bcast[TC_MAX_RANK];
  for (int32_t j = 0; j < n->out.rank; j++) src[j] = -1;
  for (int32_t i = 0; i < tin->rank; i++) {
    int32_t j = (int32_t)n->iattrs[i];
    src[j] = i;
    bcast[i] = sx_is_const1(c, tin, i) && !sx_is_const1(c, &n->out, j);
  }
  sched_access o = *out;
  access_clear(in);
  bool covered[TC_MAX_RANK] = {false};
  for (int32_t i = 0; i < o.n; i++) {
    seg s = o.s[i];
    int32_t n_real = 0;
    bool consecutive = true;
    int32_t prev = -1;
    for (int32_t j = s.lo; j < s.hi; j++) {
      bool real = src[j] >= 0 && !bcast[src[j]];
      n_real += real;
      if (real) {
        if (prev >= 0 && src[j] != prev + 1) consecutive = false;
        prev = src[j];
      }
    }
    if (n_real == 0) continue; /* read at a broadcast position: the input index is 0 there */
    if (n_real == s.hi - s.lo && consecutive) {
      seg t = s;
      t.lo = src[s.lo];
      t.hi = src[s.hi - 1] + 1;
      for (int32_t d = t.lo; d < t.hi; d++) covered[d] = true;
      in->s[in->n++] = t;
      continue;
    }
    if (!access_split(c, &o, i, &n->out)) return false;
    i--; /* revisit the first of the split runs */
  }
  for (int32_t d = 0; d < tin->rank; d++)
    if (!covered[d]) in->s[in->n++] = seg_make(d, d + 1, aff_zero());
  access_sort(in);
  return true;
}

static bool through_slice(sched_ctx *c, const tc_node *n, const tc_vtype *tin, const sched_access *out, sched_access *in) {
  const int32_t r = n->out.rank;
  sched_access o = *out;
  for (int32_t i = 0; i < o.n; i++) {
    seg *s = &o.s[i];
    bool ok = n->iattrs[r + s->lo] == 1;
    for (int32_t d = s->lo + 1; d < s->hi && ok; d++)
      ok = n->iattrs[d] == 0 && n->iattrs[r + d] == 1 && sx_equal(c, sx_g(c, n->out.shape[d]), sx_g(c, tin->shape[d]));
    if (s->hi - s->lo > 1 && !ok) {
      if (!access_split(c, &o, i, &n->out)) return false;
      i = -1;
    }
  }
  *in = o;
  for (int32_t i = 0; i < in->n; i++) {
    seg *s = &in->s[i];
    int32_t step = sx_c(c, n->iattrs[r + s->lo]);
    int32_t start = sx_mul(c, sx_c(c, n->iattrs[s->lo]), sx_prod(c, tin, s->lo + 1, s->hi));
    s->L = aff_scale(c, s->L, step);
    s->L.c = sx_add(c, s->L.c, start);
    if (s->ind >= 0) s->ind_coef = sx_mul(c, s->ind_coef, step);
  }
  return true;
}

static bool through_reverse(sched_ctx *c, const tc_node *n, const tc_vtype *tin, const sched_access *out, sched_access *in) {
  bool rev[TC_MAX_RANK] = {false};
  for (int32_t i = 0; i < n->n_iattrs; i++) rev[n->iattrs[i]] = true;
  sched_access o = *out;
  for (int32_t i = 0; i < o.n; i++) {
    bool any = false;
    for (int32_t d = o.s[i].lo; d < o.s[i].hi; d++) any |= rev[d];
    if (any && o.s[i].hi - o.s[i].lo > 1) {
      if (!access_split(c, &o, i, &n->out)) return false;
      i = -1;
    }
  }
  *in = o;
  int32_t minus1 = sx_c(c, -1);
  for (int32_t i = 0; i < in->n; i++) {
    seg *s = &in->s[i];
    if (!rev[s->lo]) continue;
    /* size - 1 - L */
    s->L = aff_scale(c, s->L, minus1);
    s->L.c = sx_add(c, s->L.c, sx_add(c, sx_g(c, tin->shape[s->lo]), minus1));
    if (s->ind >= 0) s->ind_coef = sx_mul(c, s->ind_coef, minus1);
  }
  return true;
}

typedef struct rgroup {
  int32_t olo, ohi, ilo, ihi;
} rgroup;

static bool through_reshape(sched_ctx *c, const tc_node *n, const tc_vtype *tin, const sched_access *out, sched_access *in) {
  const tc_vtype *to = &n->out;
  rgroup grp[2 * TC_MAX_RANK + 2];
  int32_t ng = 0, j = 0, i = 0;
  while (j < to->rank || i < tin->rank) {
    rgroup gr = {j, j, i, i};
    if (j < to->rank && sx_is_const1(c, to, j)) { gr.ohi = ++j; grp[ng++] = gr; continue; }
    if (i < tin->rank && sx_is_const1(c, tin, i)) { gr.ihi = ++i; grp[ng++] = gr; continue; }
    if (j >= to->rank || i >= tin->rank) break;
    int32_t po = sx_g(c, to->shape[j++]), pi = sx_g(c, tin->shape[i++]);
    while (!sx_equal(c, po, pi)) {
      if (sx_probe(c, po) < sx_probe(c, pi)) {
        if (j >= to->rank) break;
        po = sx_mul(c, po, sx_g(c, to->shape[j++]));
      } else {
        if (i >= tin->rank) break;
        pi = sx_mul(c, pi, sx_g(c, tin->shape[i++]));
      }
    }
    if (!sx_equal(c, po, pi)) break;
    gr.ohi = j;
    gr.ihi = i;
    grp[ng++] = gr;
  }
  if (j < to->rank || i < tin->rank) {
    snprintf(c->why, sizeof c->why, "reshape: cannot pair the dims of the two shapes symbolically");
    return false;
  }
  /* Runs must not straddle a group boundary. */
  sched_access o = *out;
  for (int32_t k = 0; k < o.n; k++) {
    bool straddles = false;
    for (int32_t q = 0; q < ng; q++)
      if (o.s[k].lo < grp[q].ohi && o.s[k].hi > grp[q].ohi && grp[q].ohi > grp[q].olo) straddles = true;
    if (straddles) {
      if (!access_split(c, &o, k, to)) return false;
      k = -1;
    }
  }
  access_clear(in);
  for (int32_t q = 0; q < ng; q++) {
    if (grp[q].ihi == grp[q].ilo) continue;
    aff G = aff_zero();
    int32_t ind = -1, ind_coef = -1;
    for (int32_t k = 0; k < o.n; k++) {
      const seg *s = &o.s[k];
      if (s->lo < grp[q].olo || s->hi > grp[q].ohi || s->hi == s->lo) continue;
      int32_t w = sx_prod(c, to, s->hi, grp[q].ohi);
      G = aff_add(c, G, aff_scale(c, s->L, w));
      if (s->ind >= 0) {
        if (ind >= 0) { snprintf(c->why, sizeof c->why, "reshape merges two gathered dims"); return false; }
        ind = s->ind;
        ind_coef = sx_mul(c, s->ind_coef, w);
      }
    }
    seg t = seg_make(grp[q].ilo, grp[q].ihi, G);
    t.ind = ind;
    t.ind_coef = ind_coef;
    in->s[in->n++] = t;
  }
  return true;
}

bool access_through_view(sched_ctx *c, const tc_node *n, const sched_access *out, sched_access *in) {
  const tc_vtype *tin = graph_value_type(c->g, n->in[0]);
  switch (n->prim) {
  case TC_PRIM_PERMUTE: return through_permute(c, n, out, in);
  case TC_PRIM_BROADCAST_IN_DIM: return through_broadcast(c, n, tin, out, in);
  case TC_PRIM_SLICE: return through_slice(c, n, tin, out, in);
  case TC_PRIM_REVERSE: return through_reverse(c, n, tin, out, in);
  case TC_PRIM_RESHAPE: return through_reshape(c, n, tin, out, in);
  default:
    snprintf(c->why, sizeof c->why, "%s is not a view", prim_name(n->prim));
    return false;
  }
}

bool access_forward(sched_ctx *c, const tc_node *n, const sched_access *in, sched_access *out) {
  const tc_vtype *tin = graph_value_type(c->g, n->in[0]);
  tc_node f = *n;
  f.out = *tin;
  if (n->prim == TC_PRIM_RESHAPE) return through_reshape(c, &f, &n->out, in, out);
  if (n->prim == TC_PRIM_PERMUTE) {
    for (int32_t i = 0; i < n->out.rank; i++) f.iattrs[n->iattrs[i]] = i;
    return through_permute(c, &f, in, out);
  }
  snprintf(c->why, sizeof c->why, "cannot map an index forward through %s", prim_name(n->prim));
  return false;
}

bool access_address(sched_ctx *c, const sched_access *a, const tc_vtype *t, aff *addr, int32_t *ind, int32_t *ind_coef) {
  *addr = aff_zero();
  *ind = -1;
  *ind_coef = -1;
  for (int32_t i = 0; i < a->n; i++) {
    const seg *s = &a->s[i];
    int32_t stride = sx_prod(c, t, s->hi, t->rank);
    *addr = aff_add(c, *addr, aff_scale(c, s->L, stride));
    if (s->ind >= 0) {
      if (*ind >= 0) {
        snprintf(c->why, sizeof c->why, "two gathered dims in one load");
        return false;
      }
      *ind = s->ind;
      *ind_coef = sx_mul(c, s->ind_coef, stride);
      if (*ind_coef < 0) *ind_coef = sx_c(c, 0);
    }
  }
  return true;
}
