/* c_body.c — the ops of a kernel body as C statements: what inductor-cpu's C and inductor-cuda's
 * CUDA C write alike for each op (loads and stores with their bounds-checked indices, literals,
 * prims through tck_c_prim_expr, index values, Philox draws, reduction steps, the matmul
 * accumulator, ABI 2.3's index checks). What the two targets write differently comes in the
 * tck_c_body emitter (names, the spelling of types, the atomic add) and in their preludes
 * (TC_UNLIKELY, tc_index_error: the record's compare-and-swap). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tc_kit.h"

static int32_t indirect_of(const tc_kop *op) { return op->index ? op->index->indirect : -1; }

const char *tck_c_reduce_identity(int32_t prim, int32_t dtype, bool typed, char buf[48]) {
  if (prim == TC_PRIM_ARGMAX) prim = TC_PRIM_REDUCE_MAX;
  if (prim == TC_PRIM_ARGMIN) prim = TC_PRIM_REDUCE_MIN;
  if (tck_dtype_is_float(dtype)) {
    double v = tck_reduce_identity_f(prim, dtype);
    if (isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
    if (!typed) {
      snprintf(buf, 48, "%.17g", v);
      return buf;
    }
    snprintf(buf, 48, dtype == TC_F32 ? "%.9gf" : "%.17g", v);
    if (!strpbrk(buf, ".eE")) snprintf(buf, 48, dtype == TC_F32 ? "%.1ff" : "%.1f", v);
    return buf;
  }
  int64_t v = tck_reduce_identity_i(prim, dtype);
  if (v == INT64_MIN) return "INT64_MIN";
  if (v == INT64_MAX) return "INT64_MAX";
  if (dtype == TC_I32 && v == INT32_MIN) return "INT32_MIN";
  if (dtype == TC_I32 && v == INT32_MAX) return "INT32_MAX";
  snprintf(buf, 48, "%lld", (long long)v);
  return buf;
}

void tck_c_literal(tck_str *s, const tc_kop *op) {
  if (op->dtype == TC_BOOL) {
    tck_str_puts(s, op->fconst != 0 ? "1" : "0");
  } else if (!tck_dtype_is_float(op->dtype)) {
    if (op->iconst == INT64_MIN) tck_str_puts(s, "INT64_MIN");
    else tck_str_printf(s, op->dtype == TC_I64 ? "INT64_C(%lld)" : "%lld", (long long)op->iconst);
  } else if (isnan(op->fconst)) {
    tck_str_puts(s, op->dtype == TC_F32 ? "NAN" : "(double)NAN");
  } else if (isinf(op->fconst)) {
    tck_str_printf(s, "%s%s", op->fconst < 0 ? "-" : "", op->dtype == TC_F32 ? "INFINITY" : "(double)INFINITY");
  } else {
    char lit[64];
    snprintf(lit, sizeof lit, op->dtype == TC_F32 ? "%.9g" : "%.17g", op->fconst);
    /* "1" must read as a float literal: give it a point. */
    if (!strpbrk(lit, ".eE")) strcat(lit, ".0");
    tck_str_printf(s, "%s%s", lit, op->dtype == TC_F32 ? "f" : "");
  }
}

void tck_c_declare_accumulator(const tck_c_body *e, tck_str *s, int32_t i, int depth, const char *arg_none) {
  const tc_kop *op = tck_kernel_op(e->k, i);
  char idb[48];
  tck_str_indent(s, depth);
  if (op->prim == TC_PRIM_ARGMAX || op->prim == TC_PRIM_ARGMIN) {
    int32_t vt = tck_kernel_op(e->k, tck_op_arg(op, 0))->dtype;
    tck_str_printf(s, "%s v%d_best = %s;\n", tck_c_dtype(vt), (int)i,
                   tck_c_reduce_identity(op->prim, vt, e->typed_identities, idb));
    tck_str_indent(s, depth);
    tck_str_printf(s, "%s v%d = %s;\n", e->index_type, (int)i, arg_none);
    return;
  }
  tck_str_printf(s, "%s v%d = %s;\n", tck_c_dtype(op->dtype), (int)i,
                 tck_c_reduce_identity(op->prim, op->dtype, e->typed_identities, idb));
}

/* Declares op id's element index "j<id><sfx>", with its bounds flag "ok<id><sfx>" when the index
 * is indirect (a gather out of range reads 0, a scatter skips); true when there is a flag.
 * indirect: the name of the index value. */
static bool emit_index(const tck_c_body *e, tck_str *s, int32_t id, const tc_kop *op, const char *const *vars,
                       int depth, const char *sfx, const char *indirect) {
  tck_str_indent(s, depth);
  tck_str_printf(s, "const %s j%d%s = ", e->index_type, (int)id, sfx);
  tck_index_emit(s, e->x, op->index, vars);
  if (indirect_of(op) >= 0) {
    tck_str_printf(s, " + (%s)%s*", e->index_type, indirect);
    tck_exprs_ref(s, e->x, op->index->indirect_stride);
    tck_str_puts(s, ";\n");
    tck_str_indent(s, depth);
    tck_str_printf(s, "const %s ok%d%s = j%d%s >= 0 && j%d%s < ", e->bool_type, (int)id, sfx, (int)id, sfx, (int)id, sfx);
    tck_exprs_ref(s, e->x, tck_kernel_buffer(e->k, op->buffer)->numel);
    tck_str_puts(s, ";\n");
    return true;
  }
  tck_str_puts(s, ";\n");
  return false;
}

/* One step of reduction i, accumulator acc, over value a at inner position rvar. */
static tc_status reduce_step(const tck_c_body *e, tck_str *s, int32_t i, const tc_kop *op, const char *rvar, int depth,
                             const char *acc, const char *a, char *err, size_t cap) {
  int32_t vt = tck_kernel_op(e->k, tck_op_arg(op, 0))->dtype;
  bool fl = tck_dtype_is_float(vt), wrap = e->int_reduce_wraps && (vt == TC_I32 || vt == TC_I64);
  tck_str_indent(s, depth);
  switch (op->prim) {
  case TC_PRIM_REDUCE_SUM:
    if (wrap) tck_str_printf(s, "%s = tc_add_%s(%s, %s);\n", acc, tck_dtype_name(vt), acc, a);
    else tck_str_printf(s, "%s += %s;\n", acc, a);
    break;
  case TC_PRIM_REDUCE_PROD:
    if (wrap) tck_str_printf(s, "%s = tc_mul_%s(%s, %s);\n", acc, tck_dtype_name(vt), acc, a);
    else tck_str_printf(s, "%s *= %s;\n", acc, a);
    break;
  case TC_PRIM_REDUCE_MAX:
  case TC_PRIM_REDUCE_MIN: {
    const char *mm = op->prim == TC_PRIM_REDUCE_MAX ? "max" : "min";
    if (fl) tck_str_printf(s, "%s = tc_%s_%s(%s, %s);\n", acc, mm, tck_dtype_name(vt), acc, a);
    else tck_str_printf(s, "%s = %s %s %s ? %s : %s;\n", acc, a, op->prim == TC_PRIM_REDUCE_MAX ? ">" : "<", acc, a, acc);
    break;
  }
  case TC_PRIM_ARGMAX:
  case TC_PRIM_ARGMIN: {
    const char *cmp = op->prim == TC_PRIM_ARGMAX ? ">" : "<";
    if (fl)
      tck_str_printf(s, "if (%s %s %s_best || (%s != %s && %s_best == %s_best)) { %s_best = %s; %s = %s; }\n", a, cmp, acc,
                     a, a, acc, acc, acc, a, acc, rvar);
    else tck_str_printf(s, "if (%s %s %s_best) { %s_best = %s; %s = %s; }\n", a, cmp, acc, acc, a, acc, rvar);
    break;
  }
  default: snprintf(err, cap, "op %d: unknown reduction prim %d", (int)i, op->prim); return TC_ERR_UNSUPPORTED;
  }
  return TC_OK;
}

tc_status tck_c_op(const tck_c_body *e, tck_str *s, int32_t i, const char *const *vars, int d, const char *sfx,
                   const char *acc_expr, char *err, size_t cap) {
  const tc_kernel_desc *k = e->k;
  const tc_kop *op = tck_kernel_op(k, i);
  const char *rvar = vars[k->n_outer];
  /* Ids (operands earlier, buffers in range) were checked by tck_kernel_list_validate. */
  char bname[80] = "", V[48], A[48], B[48], C[48], X[48];
  if (op->buffer >= 0 && op->buffer < k->n_buffers) e->buffer_name(e, op->buffer, bname, sizeof bname);
  e->value_name(e, i, sfx, V, sizeof V);
  e->value_name(e, tck_op_arg(op, 0), sfx, A, sizeof A);
  e->value_name(e, tck_op_arg(op, 1), sfx, B, sizeof B);
  e->value_name(e, tck_op_arg(op, 2), sfx, C, sizeof C);
  e->value_name(e, indirect_of(op), sfx, X, sizeof X);
  const char *T = tck_c_dtype(op->dtype);
  switch (op->kind) {
  case TC_KOP_LOAD: {
    bool guard = emit_index(e, s, i, op, vars, d, sfx, X);
    tck_str_indent(s, d);
    if (guard) tck_str_printf(s, "const %s %s = ok%d%s ? %s[j%d%s] : (%s)0;\n", T, V, (int)i, sfx, bname, (int)i, sfx, T);
    else tck_str_printf(s, "const %s %s = %s[j%d%s];\n", T, V, bname, (int)i, sfx);
    break;
  }
  case TC_KOP_CONST:
    tck_str_indent(s, d);
    tck_str_printf(s, "const %s %s = ", T, V);
    tck_c_literal(s, op);
    tck_str_puts(s, ";\n");
    break;
  case TC_KOP_PRIM: {
    if (tck_op_arg(op, 0) < 0) {
      snprintf(err, cap, "op %d: prim without operands", (int)i);
      return TC_ERR_INVALID_ARGUMENT;
    }
    int32_t in = tck_kernel_op(k, tck_op_arg(op, op->prim == TC_PRIM_WHERE ? 1 : 0))->dtype;
    tck_str_indent(s, d);
    tck_str_printf(s, "const %s %s = ", T, V);
    if (!tck_c_prim_expr(s, op->prim, in, op->dtype, A, B, C)) {
      snprintf(err, cap, "op %d: prim %d (%s) is not elementwise", (int)i, op->prim, tck_prim_name(op->prim));
      return TC_ERR_UNSUPPORTED;
    }
    tck_str_puts(s, ";\n");
    break;
  }
  case TC_KOP_INDEX:
    tck_str_indent(s, d);
    tck_str_printf(s, "const %s %s = (%s)(", T, V, T);
    tck_index_emit(s, e->x, op->index, vars);
    tck_str_puts(s, ");\n");
    break;
  case TC_KOP_RANDOM:
    tck_str_indent(s, d);
    tck_str_printf(s, "const %s %s = (%s)tc_philox_uniform(UINT64_C(%llu), (uint64_t)(", T, V, T,
                   (unsigned long long)op->iconst);
    tck_index_emit(s, e->x, op->index, vars);
    tck_str_puts(s, "));\n");
    break;
  case TC_KOP_REDUCE: return reduce_step(e, s, i, op, rvar, d, V, A, err, cap);
  case TC_KOP_STORE:
  case TC_KOP_STORE_ADD: {
    bool guard = emit_index(e, s, i, op, vars, d, sfx, X);
    const char *bt = tck_c_dtype(tck_kernel_buffer(k, op->buffer)->dtype);
    char j[48], ok[48], elem[160], val[80];
    snprintf(j, sizeof j, "j%d%s", (int)i, sfx);
    snprintf(ok, sizeof ok, "ok%d%s", (int)i, sfx);
    snprintf(elem, sizeof elem, "%s[%s]", bname, j);
    snprintf(val, sizeof val, "(%s)%s", bt, A);
    if (op->kind == TC_KOP_STORE_ADD) {
      e->atomic_add(e, s, d, guard ? ok : NULL, j, elem, val);
      break;
    }
    tck_str_indent(s, d);
    if (guard) tck_str_printf(s, "if (%s) ", ok);
    tck_str_printf(s, "%s = %s;\n", elem, val);
    break;
  }
  case TC_KOP_INDEX_CHECK:
    /* ABI 2.3: the prims' value rule stays (the kernel uses the flag to read 0 / skip); an out-of-range
     * index also records the call's first error, which the host reports naming the op. The branch
     * is almost never taken, so the in-range path pays one predictable compare. */
    tck_str_indent(s, d);
    tck_str_printf(s,
                   "/* index check (site %lld): out of range -> record the call's first error, then read 0 / skip */\n",
                   (long long)op->iconst);
    tck_str_indent(s, d);
    tck_str_printf(s, "const %s %s = %s >= 0 && %s < %s;\n", e->bool_type, V, A, A, B);
    tck_str_indent(s, d);
    tck_str_printf(s, "if (TC_UNLIKELY(!%s)) tc_index_error(%s, %lld, %s, %s);\n", V, bname, (long long)op->iconst, A,
                   B);
    break;
  case TC_KOP_ACC:
    if (!acc_expr) {
      snprintf(err, cap, "op %d: ACC outside a matmul epilogue", (int)i);
      return TC_ERR_INVALID_ARGUMENT;
    }
    tck_str_indent(s, d);
    tck_str_printf(s, "const %s %s = %s;\n", T, V, acc_expr);
    break;
  default: snprintf(err, cap, "op %d: unknown op kind %d", (int)i, op->kind); return TC_ERR_UNSUPPORTED;
  }
  return TC_OK;
}

void tck_c_describe_kernel(tck_str *s, const tc_kernel_desc *k, const tck_exprs *x) {
  int32_t loops = 0;
  for (int32_t i = 0; i < k->n_ops; i++)
    if (tck_kernel_op(k, i)->loop + 1 > loops) loops = tck_kernel_op(k, i)->loop + 1;
  tck_str_printf(s, "\n/* %s: %s over (", k->name ? k->name : "?", k->kind == TC_KERNEL_MATMUL      ? "matmul"
                 : k->kind == TC_KERNEL_ATTENTION ? "attention"
                                                  : "loop");
  for (int32_t v = 0; v < k->n_outer; v++) {
    if (v) tck_str_puts(s, ", ");
    tck_exprs_ref(s, x, k->outer[v]);
  }
  tck_str_puts(s, ")");
  if (loops) tck_str_printf(s, ", %d inner loop%s", loops, loops > 1 ? "s" : "");
  tck_str_puts(s, " */\n");
}
