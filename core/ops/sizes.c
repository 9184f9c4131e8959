/* sizes.c — size arithmetic for the op layer: concrete values always, plus size expressions in
 * the current trace's table when an operand is symbolic. */
#include "ops/ops.h"

tc_sz sz_const(int64_t v) {
  return (tc_sz){v, -1};
}

tc_sz sz_of(const tc_tensor *t, int dim) {
  if (!t || dim < 0 || dim >= t->rank) return sz_const(0);
  return (tc_sz){t->sizes[dim], tensor_is_proxy(t) ? t->sym[dim] : -1};
}

bool sz_is_static(tc_sz a) {
  return a.e < 0;
}

static int64_t sz_eval(tc_sx_op op, int64_t a, int64_t b) {
  /* One evaluator for folding and for run time: the kit's. */
  return tck_size_apply(op, a, b);
}

static tc_sz sz_bin(tc_sx_op op, tc_sz a, tc_sz b) {
  tc_sz r = {sz_eval(op, a.v, b.v), -1};
  if (a.e < 0 && b.e < 0) return r;
  tc_sxtab *tab = ops_trace_sxtab(ops_trace_current());
  /* A symbolic size outside a trace cannot happen through the public API; the value is still
   * right, only its symbol is lost. */
  if (!tab) return r;
  int32_t ea = a.e >= 0 ? a.e : sxtab_const(tab, a.v);
  int32_t eb = b.e >= 0 ? b.e : sxtab_const(tab, b.v);
  int32_t e = sxtab_bin(tab, op, ea, eb);
  if (e >= 0 && !sxtab_is_const(tab, e, NULL)) r.e = e;
  return r;
}

tc_sz sz_add(tc_sz a, tc_sz b) {
  return sz_bin(TC_SX_ADD, a, b);
}
tc_sz sz_sub(tc_sz a, tc_sz b) {
  return sz_bin(TC_SX_SUB, a, b);
}
tc_sz sz_mul(tc_sz a, tc_sz b) {
  return sz_bin(TC_SX_MUL, a, b);
}
tc_sz sz_floordiv(tc_sz a, tc_sz b) {
  return sz_bin(TC_SX_FLOORDIV, a, b);
}
tc_sz sz_mod(tc_sz a, tc_sz b) {
  return sz_bin(TC_SX_MOD, a, b);
}
tc_sz sz_max(tc_sz a, tc_sz b) {
  return sz_bin(TC_SX_MAX, a, b);
}
tc_sz sz_min(tc_sz a, tc_sz b) {
  return sz_bin(TC_SX_MIN, a, b);
}

bool sz_eq(tc_sz a, tc_sz b) {
  bool equal = a.v == b.v;
  if ((a.e >= 0 || b.e >= 0) && a.e != b.e) {
    struct tc_trace *tr = ops_trace_current();
    if (tr) ops_guard_eq(tr, a, b, equal);
  }
  return equal;
}

bool sz_eq_const(tc_sz a, int64_t c) {
  return sz_eq(a, sz_const(c));
}

tc_sz sz_numel(const tc_tensor *t) {
  tc_sz n = sz_const(1);
  if (!t) return n;
  for (int i = 0; i < t->rank; i++)
    n = sz_mul(n, sz_of(t, i));
  return n;
}
