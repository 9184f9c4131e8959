/* sxtab.c — the size-expression table: hash-consed nodes, so equal expressions have equal ids,
 * with constant folding and the identities that keep shapes readable (s0*64, not s0*8*8). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

void sxtab_init(tc_sxtab *t) {
  memset(t, 0, sizeof *t);
}

void sxtab_free(tc_sxtab *t) {
  free(t->nodes);
  free(t->hash);
  memset(t, 0, sizeof *t);
}

static uint64_t sx_hash(int32_t op, int32_t a, int32_t b, int64_t value) {
  uint64_t h = 1469598103934665603ull;
  const uint64_t parts[4] = {(uint64_t)(uint32_t)op, (uint64_t)(uint32_t)a, (uint64_t)(uint32_t)b, (uint64_t)value};
  for (int i = 0; i < 4; i++) {
    h ^= parts[i];
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  return h;
}

static bool sx_same(const tc_size_expr *e, int32_t op, int32_t a, int32_t b, int64_t value) {
  return e->op == op && e->a == a && e->b == b && e->value == value;
}

static bool sx_rehash(tc_sxtab *t, int32_t cap) {
  int32_t *h = malloc((size_t)cap * sizeof *h);
  if (!h) return false;
  for (int32_t i = 0; i < cap; i++)
    h[i] = -1;
  for (int32_t id = 0; id < t->n; id++) {
    const tc_size_expr *e = &t->nodes[id];
    uint64_t k = sx_hash(e->op, e->a, e->b, e->value) & (uint64_t)(cap - 1);
    while (h[k] >= 0)
      k = (k + 1) & (uint64_t)(cap - 1);
    h[k] = id;
  }
  free(t->hash);
  t->hash = h;
  t->hash_cap = cap;
  return true;
}

/* Finds or appends the node; -1 only when out of memory. */
static int32_t sx_intern(tc_sxtab *t, int32_t op, int32_t a, int32_t b, int64_t value) {
  if ((t->n + 1) * 2 > t->hash_cap && !sx_rehash(t, t->hash_cap ? t->hash_cap * 2 : 64)) return -1;
  uint64_t mask = (uint64_t)(t->hash_cap - 1), k = sx_hash(op, a, b, value) & mask;
  for (; t->hash[k] >= 0; k = (k + 1) & mask)
    if (sx_same(&t->nodes[t->hash[k]], op, a, b, value)) return t->hash[k];
  if (t->n == t->cap) {
    int32_t cap = t->cap ? t->cap * 2 : 32;
    tc_size_expr *nodes = realloc(t->nodes, (size_t)cap * sizeof *nodes);
    if (!nodes) return -1;
    t->nodes = nodes;
    t->cap = cap;
  }
  int32_t id = t->n++;
  t->nodes[id] = (tc_size_expr){.struct_size = sizeof(tc_size_expr), .op = op, .a = a, .b = b, .value = value};
  t->hash[k] = id;
  return id;
}

int32_t sxtab_const(tc_sxtab *t, int64_t v) {
  return sx_intern(t, TC_SX_CONST, -1, -1, v);
}
int32_t sxtab_sym(tc_sxtab *t, int64_t k) {
  return sx_intern(t, TC_SX_SYM, -1, -1, k);
}

bool sxtab_is_const(const tc_sxtab *t, int32_t id, int64_t *value) {
  if (id < 0 || id >= t->n || t->nodes[id].op != TC_SX_CONST) return false;
  if (value) *value = t->nodes[id].value;
  return true;
}

static int64_t sx_apply(tc_sx_op op, int64_t a, int64_t b) {
  /* One evaluator for folding and for run time: the kit's. */
  return tck_size_apply(op, a, b);
}

static bool sx_commutes(tc_sx_op op) {
  return op == TC_SX_ADD || op == TC_SX_MUL || op == TC_SX_MAX || op == TC_SX_MIN;
}

int32_t sxtab_bin(tc_sxtab *t, tc_sx_op op, int32_t a, int32_t b) {
  if (a < 0 || b < 0 || a >= t->n || b >= t->n || op < TC_SX_ADD || op > TC_SX_MIN) return -1;
  int64_t ca = 0, cb = 0;
  bool ka = sxtab_is_const(t, a, &ca), kb = sxtab_is_const(t, b, &cb);
  if (ka && kb) return sxtab_const(t, sx_apply(op, ca, cb));
  /* Canonical order: constants on the right, otherwise the older node first. */
  if (sx_commutes(op) && (ka || (!kb && a > b))) {
    int32_t x = a;
    a = b;
    b = x;
    int64_t cx = ca;
    ca = cb;
    cb = cx;
    bool kx = ka;
    ka = kb;
    kb = kx;
  }
  switch (op) {
  case TC_SX_ADD:
    if (kb && cb == 0) return a;
    /* (x + c1) + c2 -> x + (c1 + c2) */
    if (kb && t->nodes[a].op == TC_SX_ADD && sxtab_is_const(t, t->nodes[a].b, &ca)) {
      int32_t c = sxtab_const(t, ca + cb);
      return c < 0 ? -1 : sxtab_bin(t, TC_SX_ADD, t->nodes[a].a, c);
    }
    break;
  case TC_SX_SUB:
    if (kb && cb == 0) return a;
    if (a == b) return sxtab_const(t, 0);
    if (kb) { /* x - c -> x + (-c), so offsets fold with additions */
      int32_t c = sxtab_const(t, -cb);
      return c < 0 ? -1 : sxtab_bin(t, TC_SX_ADD, a, c);
    }
    break;
  case TC_SX_MUL:
    if (kb && cb == 1) return a;
    if (kb && cb == 0) return b;
    /* (x * c1) * c2 -> x * (c1 * c2) */
    if (kb && t->nodes[a].op == TC_SX_MUL && sxtab_is_const(t, t->nodes[a].b, &ca)) {
      int32_t c = sxtab_const(t, ca * cb);
      return c < 0 ? -1 : sxtab_bin(t, TC_SX_MUL, t->nodes[a].a, c);
    }
    break;
  case TC_SX_FLOORDIV:
    if (kb && cb == 1) return a;
    if (ka && ca == 0) return a;
    /* (x * c1) // c2 with c2 dividing c1 -> x * (c1 / c2): flatten then unflatten. */
    if (kb && cb > 0 && t->nodes[a].op == TC_SX_MUL && sxtab_is_const(t, t->nodes[a].b, &ca) && ca % cb == 0) {
      int32_t c = sxtab_const(t, ca / cb);
      return c < 0 ? -1 : sxtab_bin(t, TC_SX_MUL, t->nodes[a].a, c);
    }
    break;
  case TC_SX_MOD:
    if (kb && (cb == 1 || cb == -1)) return sxtab_const(t, 0);
    if (ka && ca == 0) return a;
    if (a == b) return sxtab_const(t, 0);
    /* (x * c1) % c2 with c2 dividing c1 is 0. */
    if (kb && cb != 0 && t->nodes[a].op == TC_SX_MUL && sxtab_is_const(t, t->nodes[a].b, &ca) && ca % cb == 0)
      return sxtab_const(t, 0);
    break;
  case TC_SX_MAX:
  case TC_SX_MIN:
    if (a == b) return a;
    break;
  default: break;
  }
  return sx_intern(t, op, a, b, 0);
}

/* ---------------------------------------------------------------- printing */
typedef struct sx_buf {
  char *p;
  size_t cap, len;
} sx_buf;

static void sx_put(sx_buf *b, const char *fmt, long long v, bool with_value) {
  if (b->len >= b->cap) return;
  int n = with_value ? snprintf(b->p + b->len, b->cap - b->len, fmt, v)
                     : snprintf(b->p + b->len, b->cap - b->len, "%s", fmt);
  if (n > 0) b->len += (size_t)n < b->cap - b->len ? (size_t)n : b->cap - b->len - 1;
}

static int sx_prec(int32_t op) {
  switch (op) {
  case TC_SX_ADD:
  case TC_SX_SUB: return 1;
  case TC_SX_MUL:
  case TC_SX_FLOORDIV:
  case TC_SX_MOD: return 2;
  default: return 3;
  }
}

static void sx_print(const tc_sxtab *t, int32_t id, sx_buf *b, int depth) {
  if (id < 0 || id >= t->n) {
    sx_put(b, "?", 0, false);
    return;
  }
  if (depth > 64) { /* tables are acyclic; this only bounds pathological depth */
    sx_put(b, "...", 0, false);
    return;
  }
  const tc_size_expr *e = &t->nodes[id];
  switch (e->op) {
  case TC_SX_CONST: sx_put(b, "%lld", (long long)e->value, true); return;
  case TC_SX_SYM: sx_put(b, "s%lld", (long long)e->value, true); return;
  case TC_SX_MAX:
  case TC_SX_MIN:
    sx_put(b, e->op == TC_SX_MAX ? "max(" : "min(", 0, false);
    sx_print(t, e->a, b, depth + 1);
    sx_put(b, ", ", 0, false);
    sx_print(t, e->b, b, depth + 1);
    sx_put(b, ")", 0, false);
    return;
  default: break;
  }
  int64_t c = 0;
  if (e->op == TC_SX_ADD && sxtab_is_const(t, e->b, &c) && c < 0 && c != INT64_MIN) { /* s0 - 1, not s0 + -1 */
    bool paren = e->a >= 0 && e->a < t->n && sx_prec(t->nodes[e->a].op) < 1;
    if (paren) sx_put(b, "(", 0, false);
    sx_print(t, e->a, b, depth + 1);
    if (paren) sx_put(b, ")", 0, false);
    sx_put(b, " - %lld", (long long)-c, true);
    return;
  }
  const char *sym = e->op == TC_SX_ADD        ? " + "
                    : e->op == TC_SX_SUB      ? " - "
                    : e->op == TC_SX_MUL      ? "*"
                    : e->op == TC_SX_FLOORDIV ? "//"
                                              : "%";
  int p = sx_prec(e->op);
  int32_t kids[2] = {e->a, e->b};
  for (int k = 0; k < 2; k++) {
    int32_t c = kids[k];
    int pc = c >= 0 && c < t->n ? sx_prec(t->nodes[c].op) : 3;
    /* The right operand of -, //, % needs parentheses at equal precedence too. */
    bool paren = pc < p || (k == 1 && pc == p && !(e->op == TC_SX_ADD || e->op == TC_SX_MUL));
    if (k == 1) sx_put(b, sym, 0, false);
    if (paren) sx_put(b, "(", 0, false);
    sx_print(t, c, b, depth + 1);
    if (paren) sx_put(b, ")", 0, false);
  }
}

char *sxtab_str(const tc_sxtab *t, int32_t id, char *buf, size_t cap) {
  if (!cap) return buf;
  buf[0] = 0;
  sx_buf b = {buf, cap, 0};
  sx_print(t, id, &b, 0);
  return buf;
}

void sxtab_eval(const tc_sxtab *t, const int64_t *syms, int64_t *vals) {
  if (t->n) tck_size_eval_all(t->nodes, sizeof(tc_size_expr), t->n, syms, vals);
}

tc_status sxtab_copy(const tc_sxtab *from, tc_sxtab *to) {
  sxtab_init(to);
  if (from->n) {
    to->nodes = malloc((size_t)from->n * sizeof *to->nodes);
    if (!to->nodes) return core_error(TC_ERR_OUT_OF_MEMORY, "out of memory copying a size table");
    memcpy(to->nodes, from->nodes, (size_t)from->n * sizeof *to->nodes);
    to->n = to->cap = from->n;
  }
  if (from->hash_cap) {
    to->hash = malloc((size_t)from->hash_cap * sizeof *to->hash);
    if (!to->hash) {
      sxtab_free(to);
      return core_error(TC_ERR_OUT_OF_MEMORY, "out of memory copying a size table");
    }
    memcpy(to->hash, from->hash, (size_t)from->hash_cap * sizeof *to->hash);
    to->hash_cap = from->hash_cap;
  }
  return TC_OK;
}
