/* c_expr.c — elementwise prims as C expressions, shared by the generators of C-like languages
 * (inductor-cpu's C, inductor-cuda's CUDA C). The expressions call libm's names (expf, fabs,
 * nearbyint, ...) and the helpers of prelude/tc_scalar.h (tc_exp_f32, tc_erf_f32, tc_max_f32,
 * tc_div_i32, tc_rem_f64, tc_f32_to_i64, ...), which the generated code must have in scope.
 * Semantics follow docs/primitives.md: NaN propagates through max/min, integer division by zero
 * gives 0, remainder takes the divisor's sign, float->int conversion truncates (NaN -> 0). */
#include <stdio.h>
#include <string.h>

#include "tc_kit.h"

const char *tck_c_dtype(int32_t d) {
  switch (d) {
  case TC_F32: return "float";
  case TC_F64: return "double";
  case TC_I32: return "int32_t";
  case TC_I64: return "int64_t";
  case TC_BOOL: return "uint8_t";
  default: return "void";
  }
}

/* libm name of a float function for the dtype: "expf" or "exp". */
static void fn(tck_str *s, const char *name, int32_t d, const char *a) {
  tck_str_printf(s, "%s%s(%s)", name, d == TC_F32 ? "f" : "", a);
}

bool tck_c_prim_expr(tck_str *s, int32_t prim, int32_t in, int32_t out, const char *a, const char *b, const char *c) {
  bool fl = tck_dtype_is_float(in);
  const char *T = tck_c_dtype(in);
  switch (prim) {
  case TC_PRIM_NEG: tck_str_printf(s, fl ? "-%s" : "(%s)(0 - %s)", fl ? a : T, a); break;
  case TC_PRIM_ABS:
    if (fl) fn(s, "fabs", in, a);
    else tck_str_printf(s, "(%s < 0 ? (%s)(0 - %s) : %s)", a, T, a, a);
    break;
  case TC_PRIM_EXP:
    if (in == TC_F32) tck_str_printf(s, "tc_exp_f32(%s)", a);
    else fn(s, "exp", in, a);
    break;
  case TC_PRIM_LOG: fn(s, "log", in, a); break;
  case TC_PRIM_SQRT: fn(s, "sqrt", in, a); break;
  case TC_PRIM_RSQRT: tck_str_printf(s, "(%s)1 / ", T); fn(s, "sqrt", in, a); break;
  case TC_PRIM_SIN: fn(s, "sin", in, a); break;
  case TC_PRIM_COS: fn(s, "cos", in, a); break;
  case TC_PRIM_TANH: fn(s, "tanh", in, a); break;
  case TC_PRIM_ERF:
    if (in == TC_F32) tck_str_printf(s, "tc_erf_f32(%s)", a);
    else fn(s, "erf", in, a);
    break;
  case TC_PRIM_FLOOR: fn(s, "floor", in, a); break;
  case TC_PRIM_CEIL: fn(s, "ceil", in, a); break;
  case TC_PRIM_ROUND: fn(s, "nearbyint", in, a); break; /* default rounding: half to even */
  case TC_PRIM_SIGN:
    if (fl) tck_str_printf(s, "(%s > 0 ? (%s)1 : %s < 0 ? (%s)-1 : %s)", a, T, a, T, a);
    else tck_str_printf(s, "(%s)((%s > 0) - (%s < 0))", T, a, a);
    break;
  case TC_PRIM_RECIPROCAL: tck_str_printf(s, "(%s)1 / %s", T, a); break;
  case TC_PRIM_LOGICAL_NOT: tck_str_printf(s, "(uint8_t)!%s", a); break;
  case TC_PRIM_ISNAN: tck_str_printf(s, "(uint8_t)(%s != %s)", a, a); break;
  case TC_PRIM_ADD: tck_str_printf(s, fl ? "%s + %s" : "tc_add_%s(%s, %s)", fl ? a : tck_dtype_name(in), fl ? b : a, b); break;
  case TC_PRIM_SUB: tck_str_printf(s, fl ? "%s - %s" : "tc_sub_%s(%s, %s)", fl ? a : tck_dtype_name(in), fl ? b : a, b); break;
  case TC_PRIM_MUL: tck_str_printf(s, fl ? "%s * %s" : "tc_mul_%s(%s, %s)", fl ? a : tck_dtype_name(in), fl ? b : a, b); break;
  case TC_PRIM_DIV:
    if (fl) tck_str_printf(s, "%s / %s", a, b);
    else tck_str_printf(s, "tc_div_%s(%s, %s)", tck_dtype_name(in), a, b);
    break;
  case TC_PRIM_POW: tck_str_printf(s, "pow%s(%s, %s)", in == TC_F32 ? "f" : "", a, b); break;
  case TC_PRIM_MAX:
    if (fl) tck_str_printf(s, "tc_max_%s(%s, %s)", tck_dtype_name(in), a, b);
    else tck_str_printf(s, "(%s > %s ? %s : %s)", a, b, a, b);
    break;
  case TC_PRIM_MIN:
    if (fl) tck_str_printf(s, "tc_min_%s(%s, %s)", tck_dtype_name(in), a, b);
    else tck_str_printf(s, "(%s < %s ? %s : %s)", a, b, a, b);
    break;
  case TC_PRIM_REMAINDER: tck_str_printf(s, "tc_rem_%s(%s, %s)", tck_dtype_name(in), a, b); break;
  case TC_PRIM_FMOD: tck_str_printf(s, "tc_fmod_%s(%s, %s)", tck_dtype_name(in), a, b); break;
  case TC_PRIM_EQ: tck_str_printf(s, "(uint8_t)(%s == %s)", a, b); break;
  case TC_PRIM_NE: tck_str_printf(s, "(uint8_t)(%s != %s)", a, b); break;
  case TC_PRIM_LT: tck_str_printf(s, "(uint8_t)(%s < %s)", a, b); break;
  case TC_PRIM_LE: tck_str_printf(s, "(uint8_t)(%s <= %s)", a, b); break;
  case TC_PRIM_GT: tck_str_printf(s, "(uint8_t)(%s > %s)", a, b); break;
  case TC_PRIM_GE: tck_str_printf(s, "(uint8_t)(%s >= %s)", a, b); break;
  case TC_PRIM_AND:
    if (in == TC_BOOL) tck_str_printf(s, "(uint8_t)(%s && %s)", a, b);
    else tck_str_printf(s, "(%s)(%s & %s)", T, a, b);
    break;
  case TC_PRIM_OR:
    if (in == TC_BOOL) tck_str_printf(s, "(uint8_t)(%s || %s)", a, b);
    else tck_str_printf(s, "(%s)(%s | %s)", T, a, b);
    break;
  case TC_PRIM_WHERE: tck_str_printf(s, "(%s ? %s : %s)", a, b, c); break;
  case TC_PRIM_CONVERT:
    if (out == TC_BOOL) tck_str_printf(s, "(uint8_t)(%s != 0)", a);
    else if (fl && !tck_dtype_is_float(out)) tck_str_printf(s, "tc_%s_to_%s(%s)", tck_dtype_name(in), tck_dtype_name(out), a);
    else tck_str_printf(s, "(%s)%s", tck_c_dtype(out), a);
    break;
  default: return false;
  }
  return true;
}

void tck_text_section(tck_str *s, const char *const *lines, size_t n_lines, const char *section) {
  static const char mark[] = "//@section ";
  const size_t ml = sizeof mark - 1, want = strlen(section);
  bool in = false;
  for (size_t i = 0; i < n_lines; i++) {
    const char *line = lines[i];
    if (strncmp(line, mark, ml) == 0) {
      const char *name = line + ml;
      size_t n = strcspn(name, "\r\n");
      in = n == want && strncmp(name, section, n) == 0;
      continue;
    }
    if (in) tck_str_puts(s, line);
  }
}

void tck_c_ident(const char *prefix, const char *name, int32_t i, char *out, size_t cap) {
  char base[80];
  size_t j = 0;
  for (const char *p = name ? name : ""; *p && j < sizeof base - 1; p++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    base[j++] = ok ? c : '_';
  }
  base[j] = 0;
  if (!j) snprintf(base, sizeof base, "kernel%d", (int)i);
  snprintf(out, cap, "%s%s", prefix, base);
}
