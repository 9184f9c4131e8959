/* expr.c — size expressions: evaluation, and emission as source text for any C-like target.
 * Constants print inline, symbols through sym_format, every other node as a local declared
 * once at the top of the kernel (tck_exprs_declare), children first. With tck_syntax_c the
 * text is exactly what inductor-cpu has always generated. */
#include <stdio.h>
#include <stdlib.h>

#include "tc_kit.h"

const tck_expr_syntax tck_syntax_c = {"int64_t", "s%d", "x%d", "tc_floordiv", "tc_mod", "tc_imax", "tc_imin", ""};
const tck_expr_syntax tck_syntax_glsl = {"int", "p.s%d", "e%d", "tc_floordiv", "tc_floormod", "max", "min", ""};
const tck_expr_syntax tck_syntax_cuda = {"long long", "s%d", "x%d", "tc_floordiv", "tc_mod", "tc_imax", "tc_imin",
                                         "LL"};

static int64_t floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int64_t)(0u - (uint64_t)a); /* INT64_MIN / -1 wraps instead of trapping */
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t mod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

int64_t tck_size_apply(int32_t op, int64_t a, int64_t b) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b; /* wrap, never overflow (UB) */
  switch (op) {
  case TC_SX_ADD: return (int64_t)(ua + ub);
  case TC_SX_SUB: return (int64_t)(ua - ub);
  case TC_SX_MUL: return (int64_t)(ua * ub);
  case TC_SX_FLOORDIV: return floordiv(a, b);
  case TC_SX_MOD: return mod(a, b);
  case TC_SX_MAX: return a > b ? a : b;
  case TC_SX_MIN: return a < b ? a : b;
  default: return 0;
  }
}

void tck_size_eval_all(const tc_size_expr *exprs, size_t expr_size, int32_t n, const int64_t *syms,
                       int64_t *vals) {
  for (int32_t i = 0; i < n; i++) {
    const tc_size_expr *e = TC_ELEM(tc_size_expr, exprs, expr_size, i);
    if (e->op == TC_SX_CONST) {
      vals[i] = e->value;
    } else if (e->op == TC_SX_SYM) {
      vals[i] = syms ? syms[e->value] : 0;
    } else {
      bool ok = e->a >= 0 && e->a < i && e->b >= 0 && e->b < i;
      vals[i] = tck_size_apply(e->op, ok ? vals[e->a] : 0, ok ? vals[e->b] : 0);
    }
  }
}

static const tc_size_expr *expr_at(const tck_exprs *x, int32_t id) {
  return TC_ELEM(tc_size_expr, x->exprs, x->expr_size, id);
}

static bool is_leaf(const tc_size_expr *e) { return e->op == TC_SX_CONST || e->op == TC_SX_SYM; }

bool tck_exprs_init(tck_exprs *x, const tc_size_expr *exprs, size_t expr_size, int32_t n,
                    const tck_expr_syntax *syntax) {
  *x = (tck_exprs){exprs, expr_size, n, syntax ? syntax : &tck_syntax_c, NULL};
  x->used = calloc(n > 0 ? (size_t)n : 1, sizeof(bool));
  return x->used != NULL;
}

void tck_exprs_free(tck_exprs *x) {
  free(x->used);
  x->used = NULL;
}

void tck_exprs_mark(tck_exprs *x, int32_t id) {
  /* Children have smaller ids, so the recursion depth is bounded and every id is checked. */
  if (id < 0 || id >= x->n || x->used[id]) return;
  x->used[id] = true;
  const tc_size_expr *e = expr_at(x, id);
  if (!is_leaf(e)) {
    if (e->a < id) tck_exprs_mark(x, e->a);
    if (e->b < id) tck_exprs_mark(x, e->b);
  }
}

void tck_exprs_mark_index(tck_exprs *x, const tc_index *ix) {
  if (!ix) return;
  tck_exprs_mark(x, ix->offset);
  for (int32_t v = 0; v < ix->n_vars; v++) tck_exprs_mark(x, ix->strides[v]);
  if (ix->indirect >= 0) tck_exprs_mark(x, ix->indirect_stride);
}

void tck_exprs_mark_matmul(tck_exprs *x, const tc_matmul_desc *mm) {
  const bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  const int32_t ids[] = {mm->batch, mm->m, mm->n, mm->k,
                         mm->a_offset, mm->a_stride_batch, mm->a_stride_m, mm->a_stride_k,
                         mm->b_offset, mm->b_stride_batch, mm->b_stride_k, mm->b_stride_n,
                         mm->c_offset, mm->c_stride_batch, mm->c_stride_m, mm->c_stride_n,
                         two ? mm->batch2 : -1, two ? mm->a_stride_batch2 : -1, two ? mm->b_stride_batch2 : -1,
                         two ? mm->c_stride_batch2 : -1};
  for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
    if (ids[i] >= 0) tck_exprs_mark(x, ids[i]);
}

void tck_exprs_mark_attention(tck_exprs *x, const tc_attention_desc *a) {
  const int32_t ids[] = {a->batch2, a->batch, a->tq, a->tk, a->d, a->dv,
                         a->q_offset, a->q_stride_batch2, a->q_stride_batch, a->q_stride_t, a->q_stride_d,
                         a->k_offset, a->k_stride_batch2, a->k_stride_batch, a->k_stride_t, a->k_stride_d,
                         a->v_offset, a->v_stride_batch2, a->v_stride_batch, a->v_stride_t, a->v_stride_d,
                         a->o_offset, a->o_stride_batch2, a->o_stride_batch, a->o_stride_t, a->o_stride_d};
  for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
    if (ids[i] >= 0) tck_exprs_mark(x, ids[i]);
}

void tck_exprs_ref(tck_str *s, const tck_exprs *x, int32_t id) {
  if (id < 0 || id >= x->n) {
    tck_str_puts(s, "0");
    return;
  }
  const tc_size_expr *e = expr_at(x, id);
  if (e->op == TC_SX_CONST)
    tck_str_printf(s, e->value < 0 ? "(%lld%s)" : "%lld%s", (long long)e->value, x->syntax->const_suffix);
  else if (e->op == TC_SX_SYM)
    tck_str_printf(s, x->syntax->sym_format, (int)e->value);
  else
    tck_str_printf(s, x->syntax->local_format, (int)id);
}

void tck_exprs_declare(tck_str *s, const tck_exprs *x, int depth) {
  static const char *const infix[] = {[TC_SX_ADD] = " + ", [TC_SX_SUB] = " - ", [TC_SX_MUL] = "*"};
  const tck_expr_syntax *sx = x->syntax;
  /* Ids are topologically ordered (children first), so one forward pass declares in order. */
  for (int32_t id = 0; id < x->n; id++) {
    if (!x->used[id]) continue;
    const tc_size_expr *e = expr_at(x, id);
    if (is_leaf(e)) continue;
    tck_str_indent(s, depth);
    tck_str_printf(s, "const %s ", sx->int_type);
    tck_str_printf(s, sx->local_format, (int)id);
    tck_str_puts(s, " = ");
    const char *call = e->op == TC_SX_FLOORDIV ? sx->floordiv
                       : e->op == TC_SX_MOD    ? sx->mod
                       : e->op == TC_SX_MAX    ? sx->max
                       : e->op == TC_SX_MIN    ? sx->min
                                               : NULL;
    if (e->op >= TC_SX_ADD && e->op <= TC_SX_MUL) {
      tck_exprs_ref(s, x, e->a);
      tck_str_puts(s, infix[e->op]);
      tck_exprs_ref(s, x, e->b);
    } else if (call) {
      tck_str_printf(s, "%s(", call);
      tck_exprs_ref(s, x, e->a);
      tck_str_puts(s, ", ");
      tck_exprs_ref(s, x, e->b);
      tck_str_puts(s, ")");
    } else {
      tck_str_puts(s, "0 /* unknown size op */");
    }
    tck_str_puts(s, ";\n");
  }
}

bool tck_exprs_is_const(const tck_exprs *x, int32_t id, int64_t v) {
  if (id < 0 || id >= x->n) return v == 0;
  const tc_size_expr *e = expr_at(x, id);
  return e->op == TC_SX_CONST && e->value == v;
}

void tck_index_emit(tck_str *s, const tck_exprs *x, const tc_index *ix, const char *const *var_names) {
  bool any = false;
  if (!tck_exprs_is_const(x, ix->offset, 0)) {
    tck_exprs_ref(s, x, ix->offset);
    any = true;
  }
  for (int32_t v = 0; v < ix->n_vars; v++) {
    int32_t st = ix->strides[v];
    const char *name = var_names[v];
    if (st < 0 || tck_exprs_is_const(x, st, 0) || (name[0] == '0' && name[1] == 0)) continue;
    if (any) tck_str_puts(s, " + ");
    if (tck_exprs_is_const(x, st, 1)) {
      tck_str_puts(s, name);
    } else {
      tck_str_printf(s, "%s*", name);
      tck_exprs_ref(s, x, st);
    }
    any = true;
  }
  if (!any) tck_str_puts(s, "0");
}
