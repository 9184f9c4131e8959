/* codegen_expr.c — size expressions and affine indices as C text. Every symbolic size in a
 * kernel stays symbolic here: the generated code reads s0, s1... at run time, so one compiled
 * kernel serves every value of a dynamic dimension. */
#include "icpu.h"

static const tc_size_expr *expr_at(const icpu_exprs *x, int32_t id) {
  return TC_AT(tc_size_expr, x->list->exprs, id);
}

static bool expr_is_leaf(const tc_size_expr *e) { return e->op == TC_SX_CONST || e->op == TC_SX_SYM; }

void expr_mark(icpu_exprs *x, int32_t id) {
  if (id < 0 || id >= x->list->n_exprs || x->used[id]) return;
  x->used[id] = true;
  const tc_size_expr *e = expr_at(x, id);
  if (!expr_is_leaf(e)) {
    expr_mark(x, e->a);
    expr_mark(x, e->b);
  }
}

void expr_mark_index(icpu_exprs *x, const tc_index *ix, int32_t n_vars) {
  expr_mark(x, ix->offset);
  for (int32_t v = 0; v < n_vars; v++) expr_mark(x, ix->strides[v]);
  if (ix->indirect >= 0) expr_mark(x, ix->indirect_stride);
}

void expr_ref(icpu_str *s, const icpu_exprs *x, int32_t id) {
  if (id < 0) { str_puts(s, "0"); return; }
  const tc_size_expr *e = expr_at(x, id);
  if (e->op == TC_SX_CONST) str_printf(s, e->value < 0 ? "(%lld)" : "%lld", (long long)e->value);
  else if (e->op == TC_SX_SYM) str_printf(s, "s%lld", (long long)e->value);
  else str_printf(s, "x%d", id);
}

void expr_emit_locals(icpu_str *s, const icpu_exprs *x, int depth) {
  static const char *const infix[] = {[TC_SX_ADD] = " + ", [TC_SX_SUB] = " - ", [TC_SX_MUL] = "*"};
  static const char *const call[] = {[TC_SX_FLOORDIV] = "tc_floordiv", [TC_SX_MOD] = "tc_mod",
                                     [TC_SX_MAX] = "tc_imax", [TC_SX_MIN] = "tc_imin"};
  /* Ids are topologically ordered (children first), so one forward pass declares in order. */
  for (int32_t id = 0; id < x->list->n_exprs; id++) {
    if (!x->used[id]) continue;
    const tc_size_expr *e = expr_at(x, id);
    if (expr_is_leaf(e)) continue;
    str_indent(s, depth);
    str_printf(s, "const int64_t x%d = ", id);
    if (e->op <= TC_SX_MUL) {
      expr_ref(s, x, e->a);
      str_puts(s, infix[e->op]);
      expr_ref(s, x, e->b);
    } else if (e->op <= TC_SX_MIN) {
      str_printf(s, "%s(", call[e->op]);
      expr_ref(s, x, e->a);
      str_puts(s, ", ");
      expr_ref(s, x, e->b);
      str_puts(s, ")");
    } else {
      str_puts(s, "0 /* unknown size op */");
    }
    str_puts(s, ";\n");
  }
}

static bool expr_is_const(const icpu_exprs *x, int32_t id, int64_t v) {
  if (id < 0) return v == 0;
  const tc_size_expr *e = expr_at(x, id);
  return e->op == TC_SX_CONST && e->value == v;
}

bool expr_index_uses_var(const tc_index *ix, int32_t var) { return ix->strides[var] >= 0; }

void expr_index(icpu_str *s, const icpu_exprs *x, const tc_index *ix, int32_t n_vars, const char *const *var_names) {
  bool any = false;
  if (!expr_is_const(x, ix->offset, 0)) {
    expr_ref(s, x, ix->offset);
    any = true;
  }
  for (int32_t v = 0; v < n_vars; v++) {
    int32_t st = ix->strides[v];
    if (st < 0 || expr_is_const(x, st, 0) || (var_names[v][0] == '0' && var_names[v][1] == 0)) continue;
    if (any) str_puts(s, " + ");
    if (expr_is_const(x, st, 1)) {
      str_puts(s, var_names[v]);
    } else {
      str_printf(s, "%s*", var_names[v]);
      expr_ref(s, x, st);
    }
    any = true;
  }
  if (!any) str_puts(s, "0");
}
