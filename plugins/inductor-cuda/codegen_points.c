/* codegen_points.c — ops as CUDA C, and the generic POINTS kernel: one thread per outer point
 * (grid-stride over the flattened outer domain), inner loops serial in that thread, exactly the
 * semantics of inductor-cpu's C (the same scalar helpers, the same expressions from the kit's
 * tck_c_prim_expr). MATMUL epilogues are POINTS kernels over (batch2,) batch, m, n reading the
 * product from buffer c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"

static const tc_kop *op_at(const tc_kernel_desc *k, int32_t i) { return tck_kernel_op(k, i); }
static int32_t indirect_of(const tc_kop *op) { return op->index ? op->index->indirect : -1; }

void cg_value_name(const icuda_gen *g, int32_t j, const char *sfx, char *out, size_t cap) {
  if (j >= 0 && g->value_of && g->value_of[j]) {
    snprintf(out, cap, "%s", g->value_of[j]);
    return;
  }
  bool mine = j >= 0 && g->percomp && g->percomp[j];
  snprintf(out, cap, "v%d%s", (int)j, mine ? sfx : "");
}

const char *cg_reduce_identity(int32_t prim, int32_t dtype, char *buf) {
  if (prim == TC_PRIM_ARGMAX) prim = TC_PRIM_REDUCE_MAX;
  if (prim == TC_PRIM_ARGMIN) prim = TC_PRIM_REDUCE_MIN;
  if (tck_dtype_is_float(dtype)) {
    double v = tck_reduce_identity_f(prim, dtype);
    if (isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
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

static void const_literal(tck_str *s, const tc_kop *op) {
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
    if (!strpbrk(lit, ".eEn")) strcat(lit, ".0");
    tck_str_printf(s, "%s%s", lit, op->dtype == TC_F32 ? "f" : "");
  }
}

/* Declares op id's element index "j<id><sfx>", with its bounds check "ok<id><sfx>" when the
 * index is indirect (a gather out of range reads 0, a scatter skips). */
static bool emit_index(tck_str *s, icuda_gen *g, int32_t id, const tc_kop *op, const char *const *vars, int depth,
                       const char *sfx, const char *indirect) {
  tck_str_indent(s, depth);
  tck_str_printf(s, "const long long j%d%s = ", (int)id, sfx);
  tck_index_emit(s, &g->x, op->index, vars);
  if (indirect_of(op) >= 0) {
    tck_str_printf(s, " + (long long)%s*", indirect);
    tck_exprs_ref(s, &g->x, op->index->indirect_stride);
    tck_str_puts(s, ";\n");
    tck_str_indent(s, depth);
    tck_str_printf(s, "const bool ok%d%s = j%d%s >= 0 && j%d%s < ", (int)id, sfx, (int)id, sfx, (int)id, sfx);
    tck_exprs_ref(s, &g->x, tck_kernel_buffer(g->k, op->buffer)->numel);
    tck_str_puts(s, ";\n");
    return true;
  }
  tck_str_puts(s, ";\n");
  return false;
}

void cg_declare_accumulators(tck_str *s, const icuda_gen *g, int32_t loop, int depth, const char *arg_none) {
  const tc_kernel_desc *k = g->k;
  char idb[48];
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->loop != loop || op->kind != TC_KOP_REDUCE) continue;
    int32_t vt = op_at(k, tck_op_arg(op, 0))->dtype;
    tck_str_indent(s, depth);
    if (op->prim == TC_PRIM_ARGMAX || op->prim == TC_PRIM_ARGMIN) {
      tck_str_printf(s, "%s v%d_best = %s;\n", tck_c_dtype(vt), (int)i, cg_reduce_identity(op->prim, vt, idb));
      tck_str_indent(s, depth);
      tck_str_printf(s, "long long v%d = %s;\n", (int)i, arg_none);
      continue;
    }
    tck_str_printf(s, "%s v%d = %s;\n", tck_c_dtype(op->dtype), (int)i, cg_reduce_identity(op->prim, op->dtype, idb));
  }
}

/* One step of reduction i over value a at inner position rvar. */
static tc_status reduce_step(tck_str *s, int32_t i, const tc_kop *op, int32_t vt, const char *rvar, int depth,
                             const char *a, char *err, size_t cap) {
  bool fl = tck_dtype_is_float(vt);
  tck_str_indent(s, depth);
  switch (op->prim) {
  case TC_PRIM_REDUCE_SUM:
    if (vt == TC_I32 || vt == TC_I64) tck_str_printf(s, "v%d = tc_add_%s(v%d, %s);\n", (int)i, tck_dtype_name(vt), (int)i, a);
    else tck_str_printf(s, "v%d += %s;\n", (int)i, a);
    break;
  case TC_PRIM_REDUCE_PROD:
    if (vt == TC_I32 || vt == TC_I64) tck_str_printf(s, "v%d = tc_mul_%s(v%d, %s);\n", (int)i, tck_dtype_name(vt), (int)i, a);
    else tck_str_printf(s, "v%d *= %s;\n", (int)i, a);
    break;
  case TC_PRIM_REDUCE_MAX:
  case TC_PRIM_REDUCE_MIN: {
    const char *mm = op->prim == TC_PRIM_REDUCE_MAX ? "max" : "min";
    if (fl) tck_str_printf(s, "v%d = tc_%s_%s(v%d, %s);\n", (int)i, mm, tck_dtype_name(vt), (int)i, a);
    else tck_str_printf(s, "v%d = %s %s v%d ? %s : v%d;\n", (int)i, a, op->prim == TC_PRIM_REDUCE_MAX ? ">" : "<", (int)i, a, (int)i);
    break;
  }
  case TC_PRIM_ARGMAX:
  case TC_PRIM_ARGMIN: {
    const char *cmp = op->prim == TC_PRIM_ARGMAX ? ">" : "<";
    if (fl)
      tck_str_printf(s, "if (%s %s v%d_best || (%s != %s && v%d_best == v%d_best)) { v%d_best = %s; v%d = %s; }\n", a, cmp,
                     (int)i, a, a, (int)i, (int)i, (int)i, a, (int)i, rvar);
    else tck_str_printf(s, "if (%s %s v%d_best) { v%d_best = %s; v%d = %s; }\n", a, cmp, (int)i, (int)i, a, (int)i, rvar);
    break;
  }
  default: snprintf(err, cap, "op %d: unknown reduction prim %d", (int)i, op->prim); return TC_ERR_UNSUPPORTED;
  }
  return TC_OK;
}

tc_status cg_op(tck_str *s, icuda_gen *g, int32_t i, const char *const *vars, int d, const char *sfx,
                const char *acc_expr, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  const tc_kop *op = op_at(k, i);
  const char *rvar = vars[k->n_outer];
  char V[48], A[48], B[48], C[48], X[48];
  const char *bname = op->buffer >= 0 && op->buffer < k->n_buffers ? g->bname[op->buffer] : "";
  cg_value_name(g, i, sfx, V, sizeof V);
  cg_value_name(g, tck_op_arg(op, 0), sfx, A, sizeof A);
  cg_value_name(g, tck_op_arg(op, 1), sfx, B, sizeof B);
  cg_value_name(g, tck_op_arg(op, 2), sfx, C, sizeof C);
  cg_value_name(g, indirect_of(op), sfx, X, sizeof X);
  const char *T = tck_c_dtype(op->dtype);
  switch (op->kind) {
  case TC_KOP_LOAD: {
    bool guard = emit_index(s, g, i, op, vars, d, sfx, X);
    tck_str_indent(s, d);
    if (guard) tck_str_printf(s, "const %s %s = ok%d%s ? %s[j%d%s] : (%s)0;\n", T, V, (int)i, sfx, bname, (int)i, sfx, T);
    else tck_str_printf(s, "const %s %s = %s[j%d%s];\n", T, V, bname, (int)i, sfx);
    break;
  }
  case TC_KOP_CONST:
    tck_str_indent(s, d);
    tck_str_printf(s, "const %s %s = ", T, V);
    const_literal(s, op);
    tck_str_puts(s, ";\n");
    break;
  case TC_KOP_PRIM: {
    if (tck_op_arg(op, 0) < 0) {
      snprintf(err, cap, "op %d: prim without operands", (int)i);
      return TC_ERR_INVALID_ARGUMENT;
    }
    int32_t in = op_at(k, tck_op_arg(op, op->prim == TC_PRIM_WHERE ? 1 : 0))->dtype;
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
    tck_index_emit(s, &g->x, op->index, vars);
    tck_str_puts(s, ");\n");
    break;
  case TC_KOP_RANDOM:
    tck_str_indent(s, d);
    tck_str_printf(s, "const %s %s = (%s)tc_philox_uniform(UINT64_C(%llu), (uint64_t)(", T, V, T,
                   (unsigned long long)op->iconst);
    tck_index_emit(s, &g->x, op->index, vars);
    tck_str_puts(s, "));\n");
    break;
  case TC_KOP_REDUCE:
    return reduce_step(s, i, op, op_at(k, tck_op_arg(op, 0))->dtype, rvar, d, A, err, cap);
  case TC_KOP_STORE:
  case TC_KOP_STORE_ADD: {
    bool guard = emit_index(s, g, i, op, vars, d, sfx, X);
    const char *bt = tck_c_dtype(tck_kernel_buffer(k, op->buffer)->dtype);
    tck_str_indent(s, d);
    if (guard) tck_str_printf(s, "if (ok%d%s) ", (int)i, sfx);
    if (op->kind == TC_KOP_STORE_ADD) tck_str_printf(s, "tc_atomic_add(&%s[j%d%s], (%s)%s);\n", bname, (int)i, sfx, bt, A);
    else tck_str_printf(s, "%s[j%d%s] = (%s)%s;\n", bname, (int)i, sfx, bt, A);
    break;
  }
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

void cg_mark_exprs(icuda_gen *g) {
  const tc_kernel_desc *k = g->k;
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD || op->kind == TC_KOP_INDEX ||
        op->kind == TC_KOP_RANDOM)
      tck_exprs_mark_index(&g->x, op->index);
    if ((op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD) && indirect_of(op) >= 0)
      tck_exprs_mark(&g->x, tck_kernel_buffer(k, op->buffer)->numel);
  }
  for (int32_t v = 0; v < k->n_outer; v++) tck_exprs_mark(&g->x, k->outer[v]);
  if (k->inner >= 0) tck_exprs_mark(&g->x, k->inner);
}

void cg_prologue(tck_str *s, icuda_gen *g, int block) {
  const tc_kernel_desc *k = g->k;
  tck_str_printf(s, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const tc_cu_args a) {\n", block, g->fname);
  for (int32_t b = 0; b < k->n_buffers; b++) {
    const tc_kbuffer *kb = tck_kernel_buffer(k, b);
    const char *c = kb->role == TC_BUF_INPUT ? "const " : "";
    tck_str_printf(s, "  %s%s *__restrict__ %s = (%s%s *)a.buf[%d];\n", c, tck_c_dtype(kb->dtype), g->bname[b], c,
                   tck_c_dtype(kb->dtype), (int)b);
  }
  /* the symbols the kernel refers to */
  bool *sym = NULL;
  int32_t ns = g->list->n_syms;
  if (ns > 0 && (sym = calloc((size_t)ns, 1))) {
    for (int32_t e = 0; e < g->x.n; e++) {
      const tc_size_expr *x = tck_list_expr(g->list, e);
      if (g->x.used[e] && x->op == TC_SX_SYM && x->value >= 0 && x->value < ns) sym[x->value] = true;
    }
    for (int32_t i = 0; i < ns && i < ICUDA_MAX_SYMS; i++)
      if (sym[i]) tck_str_printf(s, "  const long long s%d = a.s[%d];\n", (int)i, (int)i);
    free(sym);
  }
  tck_exprs_declare(s, &g->x, 1);
}

void cg_decompose(tck_str *s, const icuda_gen *g, const char *lin, int depth, const char *const *vars, int32_t n_outer) {
  if (n_outer == 0) return;
  tck_str_indent(s, depth);
  tck_str_printf(s, "long long rem = %s;\n", lin);
  for (int32_t v = n_outer - 1; v >= 0; v--) {
    tck_str_indent(s, depth);
    if (v == 0) {
      tck_str_printf(s, "const long long %s = rem;\n", vars[0]);
    } else {
      tck_str_printf(s, "const long long %s = rem %% n%d;\n", vars[v], (int)v);
      tck_str_indent(s, depth);
      tck_str_printf(s, "rem /= n%d;\n", (int)v);
    }
  }
}

/* The body of one point: ops in order, inner loops serial (inductor-cpu's structure). */
static tc_status point_body(tck_str *s, icuda_gen *g, const char *const *vars, int depth, const char *acc_expr,
                            char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  for (int32_t i = 0; i < k->n_ops;) {
    int32_t cur = op_at(k, i)->loop;
    if (cur < 0) {
      tc_status st = cg_op(s, g, i, vars, depth, "", acc_expr, err, cap);
      if (st != TC_OK) return st;
      i++;
      continue;
    }
    int32_t to = i;
    while (to < k->n_ops && op_at(k, to)->loop == cur) to++;
    cg_declare_accumulators(s, g, cur, depth, "0");
    tck_str_indent(s, depth);
    tck_str_printf(s, "for (long long %s = 0; %s < ", vars[k->n_outer], vars[k->n_outer]);
    tck_exprs_ref(s, &g->x, k->inner);
    tck_str_printf(s, "; %s++) { /* inner loop %d */\n", vars[k->n_outer], (int)cur);
    for (int32_t j = i; j < to; j++) {
      tc_status st = cg_op(s, g, j, vars, depth + 1, "", acc_expr, err, cap);
      if (st != TC_OK) return st;
    }
    tck_str_indent(s, depth);
    tck_str_puts(s, "}\n");
    i = to;
  }
  return TC_OK;
}

static void outer_extents(tck_str *s, icuda_gen *g, const char *total) {
  const tc_kernel_desc *k = g->k;
  for (int32_t v = 0; v < k->n_outer; v++) {
    tck_str_printf(s, "  const long long n%d = ", (int)v);
    tck_exprs_ref(s, &g->x, k->outer[v]);
    tck_str_puts(s, ";\n");
  }
  tck_str_printf(s, "  const long long %s = 1", total);
  for (int32_t v = 0; v < k->n_outer; v++) tck_str_printf(s, " * n%d", (int)v);
  tck_str_puts(s, ";\n");
}

static int32_t points_cap(const icuda_gen *g) {
  return g->o && g->o->n_sms > 0 ? g->o->n_sms * ICUDA_POINTS_BLOCKS_PER_SM : 0;
}

/* The grid-stride loop of a POINTS kernel around body(vars). */
static tc_status points_kernel(tck_str *s, icuda_gen *g, const char *acc_expr, const char *const *vars, char *err,
                               size_t cap) {
  const tc_kernel_desc *k = g->k;
  cg_prologue(s, g, ICUDA_POINTS_BLOCK);
  outer_extents(s, g, "total");
  tck_str_puts(s, "  for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < total;\n"
                  "       p += (long long)gridDim.x * blockDim.x) {\n");
  cg_decompose(s, g, "p", 2, vars, k->n_outer);
  tc_status st = point_body(s, g, vars, 2, acc_expr, err, cap);
  if (st != TC_OK) return st;
  tck_str_puts(s, "  }\n}\n");
  return s->oom ? TC_ERR_OUT_OF_MEMORY : TC_OK;
}

static const char *const point_vars[TC_MAX_RANK + 1] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "r"};

tc_status cg_points(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  const char *vars[TC_MAX_RANK + 1];
  for (int32_t v = 0; v < k->n_outer; v++) vars[v] = point_vars[v];
  vars[k->n_outer] = "r";
  plan->kind = ICUDA_LAUNCH_POINTS;
  plan->block = ICUDA_POINTS_BLOCK;
  plan->smem_bytes = 0;
  plan->max_blocks = points_cap(g);
  tck_str_printf(s, "/* one thread per outer point, grid-stride; inner loops serial per thread */\n");
  return points_kernel(s, g, NULL, vars, err, cap);
}

tc_status cg_matmul(tck_str *s, icuda_gen *g, icuda_kernel_plan *plan, char *err, size_t cap) {
  const tc_kernel_desc *k = g->k;
  const tc_matmul_desc *mm = k->matmul;
  int32_t dt = tck_kernel_buffer(k, mm->a)->dtype;
  plan->kind = ICUDA_LAUNCH_MATMUL;
  plan->has_epilogue = false;
  if (dt != TC_F32 && dt != TC_F64) {
    snprintf(err, cap, "matmul of %s is not supported (f32, f64)", tck_dtype_name(dt));
    return TC_ERR_UNSUPPORTED;
  }
  if (k->n_ops == 0) {
    plan->block = 0;
    tck_str_printf(s, "/* the product goes straight to %s (cuBLASLt): no epilogue */\n", g->bname[mm->c]);
    return TC_OK;
  }
  for (int32_t i = 0; i < k->n_ops; i++)
    if (op_at(k, i)->loop >= 0) {
      snprintf(err, cap, "op %d: a matmul epilogue has no inner loops", (int)i);
      return TC_ERR_INVALID_ARGUMENT;
    }
  const bool two = TC_HAS_FIELD(mm, tc_matmul_desc, c_stride_batch2) && mm->batch_levels == 2;
  tck_exprs_mark(&g->x, mm->c_offset);
  tck_exprs_mark(&g->x, mm->c_stride_batch);
  tck_exprs_mark(&g->x, mm->c_stride_m);
  tck_exprs_mark(&g->x, mm->c_stride_n);
  if (two) tck_exprs_mark(&g->x, mm->c_stride_batch2);
  /* The product's element (batch2,) batch, m, n of c, at c's strides (as cuBLASLt wrote it). */
  const char *vb2 = "i0", *vb = two ? "i1" : "i0", *vm = two ? "i2" : "i1", *vn = two ? "i3" : "i2";
  tck_str acc = {0};
  tck_str_printf(&acc, "%s[", g->bname[mm->c]);
  tck_exprs_ref(&acc, &g->x, mm->c_offset);
  if (two) {
    tck_str_printf(&acc, " + %s*", vb2);
    tck_exprs_ref(&acc, &g->x, mm->c_stride_batch2);
  }
  tck_str_printf(&acc, " + %s*", vb);
  tck_exprs_ref(&acc, &g->x, mm->c_stride_batch);
  tck_str_printf(&acc, " + %s*", vm);
  tck_exprs_ref(&acc, &g->x, mm->c_stride_m);
  tck_str_printf(&acc, " + %s*", vn);
  tck_exprs_ref(&acc, &g->x, mm->c_stride_n);
  tck_str_puts(&acc, "]");
  if (acc.oom) return TC_ERR_OUT_OF_MEMORY;
  plan->has_epilogue = true;
  plan->block = ICUDA_POINTS_BLOCK;
  plan->smem_bytes = 0;
  plan->max_blocks = points_cap(g);
  tck_str_printf(s, "/* the epilogue of a matmul: one thread per element of the product (%s), which cuBLASLt\n"
                    " * has written to %s; runs after it on the same stream */\n",
                 two ? "batch2, batch, m, n" : "batch, m, n", g->bname[mm->c]);
  const char *vars[TC_MAX_RANK + 1];
  for (int32_t v = 0; v < k->n_outer; v++) vars[v] = point_vars[v];
  vars[k->n_outer] = "r";
  tc_status st = points_kernel(s, g, acc.data, vars, err, cap);
  tck_str_free(&acc);
  return st;
}
