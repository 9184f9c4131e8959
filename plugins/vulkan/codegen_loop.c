/* codegen_loop.c — a GLSL compute shader for one TC_KERNEL_LOOP kernel.
 *
 * Pointwise kernels (no inner loop): a flat grid-stride loop over the outer domain. When the
 * last outer dimension is a multiple of 4 and every contiguous f32/i32 access is 16-byte
 * aligned (checked in the shader, from the sizes), each invocation handles 4 neighbours with
 * vec4 loads and stores.
 *
 * Kernels with inner loops (layer norm, softmax, ...): TPR threads per outer point ("row"),
 * WG / TPR rows per workgroup, TPR chosen at launch from the row length (a specialization
 * constant: one SPIR-V module, a pipeline per TPR and body). Reductions fold per thread, then
 * across the row with subgroup shuffles (when the device has them) and shared memory. Three
 * bodies, the one to run chosen at launch from the sizes and offsets (specialization constant
 * MODE, so each pipeline holds one body and its registers only):
 *   mode 2: vec4 accesses and the row kept in registers: a value an earlier inner loop loaded
 *           or stored is not read again, and a store a later loop overwrites is not made (one
 *           pass over memory), when the row fits in TPR*4*R;
 *   mode 1: vec4 accesses, re-reading per loop (long rows);
 *   mode 0: scalar (unaligned or strided layouts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"



/* Contiguous along variable `var` with a 4-byte element: can be read/written as vec4. */
static bool access_vectorizable(vk_gen *g, const tc_kop *op, int32_t var) {
  if (op->kind != TC_KOP_LOAD && op->kind != TC_KOP_STORE) return false;
  if (op->buffer < 0 || op->buffer >= g->k->n_buffers || op->index->indirect >= 0) return false;
  int32_t bd = tck_kernel_buffer(g->k, op->buffer)->dtype;
  if ((bd != TC_F32 && bd != TC_I32) || op->dtype != bd) return false;
  return vk_expr_is_const(g, op->index->strides[var], 1);
}

/* Appends "&& (x % 4 == 0)" for every term that must be a multiple of 4 for op's vec4
 * accesses to be aligned (the buffer's element offset, the index offset, other strides). */
static void vec_record_expr(vk_gen *g, int32_t id) {
  if (g->n_vec_exprs < (int32_t)(sizeof g->vec_exprs / sizeof g->vec_exprs[0]))
    g->vec_exprs[g->n_vec_exprs++] = id;
  else
    g->rows_vec = false; /* too many to check at launch: the scalar body only */
}

/* Also records the terms in g (vec_bufs, vec_exprs): row kernels check them at launch. */
static void vec_conditions(vk_gen *g, tck_str *t, const tc_kop *op, int32_t var) {
  tck_str_printf(t, " && (p.o%d %% 4 == 0)", (int)op->buffer);
  if (g->n_vec_bufs < (int32_t)(sizeof g->vec_bufs / sizeof g->vec_bufs[0]))
    g->vec_bufs[g->n_vec_bufs++] = op->buffer;
  else
    g->rows_vec = false;
  if (!vk_expr_is_const(g, op->index->offset, 0) && op->index->offset >= 0) {
    tck_str_printf(t, " && (");
    vk_gen_expr_ref(g, t, op->index->offset);
    tck_str_printf(t, " %% 4 == 0)");
    vec_record_expr(g, op->index->offset);
  }
  for (int32_t d = 0; d < g->k->n_outer + 1 && d <= TC_MAX_RANK; d++) {
    int32_t s = op->index->strides[d];
    if (d == var || s < 0 || vk_expr_is_const(g, s, 0)) continue;
    tck_str_printf(t, " && (");
    vk_gen_expr_ref(g, t, s);
    tck_str_printf(t, " %% 4 == 0)");
    vec_record_expr(g, s);
  }
}

/* The vec4 view's index of op's access at vars (component 0). */
static void vec_index(vk_gen *g, tck_str *t, const tc_kop *op, const char *const *vars) {
  tck_str_printf(t, "((p.o%d + ", (int)op->buffer);
  vk_gen_index(g, t, op->index, vars, "");
  tck_str_printf(t, ") >> 2)");
}

static const char *comp_name[4] = {"x", "y", "z", "w"};

/* Into out: the value of component c of the vec4 register `reg` read from a dtype buffer. */
static void vec_component(const vk_gen *g, char *out, size_t n, int32_t dtype, const char *reg, int c) {
  char raw[48];
  snprintf(raw, sizeof raw, "%s.%s", reg, comp_name[c]);
  tck_str s = {0};
  vk_gen_from_storage(g, &s, dtype, raw);
  snprintf(out, n, "%s", s.data ? s.data : raw);
  tck_str_free(&s);
}

/* Into out: the vec4 to store for value v<a> of dtype (per component: v<a>_0..3, else v<a>). */
static void vec_pack(const vk_gen *g, char *out, size_t n, int32_t dtype, int a, bool per_component) {
  tck_str s = {0};
  tck_str_printf(&s, "%s(", vk_vec4_type(g, dtype));
  for (int c = 0; c < (per_component ? 4 : 1); c++) {
    char v[32];
    snprintf(v, sizeof v, per_component ? "v%d_%d" : "v%d", a, c);
    if (c) tck_str_puts(&s, ", ");
    vk_gen_to_storage(g, &s, dtype, v);
  }
  tck_str_puts(&s, ")");
  snprintf(out, n, "%s", s.data ? s.data : "");
  tck_str_free(&s);
}

/* ------------------------------------------------------------------ pointwise */

static void gen_decompose(vk_gen *g, tck_str *t, int indent, const char *lin) {
  const tc_kernel_desc *k = g->k;
  if (k->n_outer == 0) return;
  tck_str_indent(t, indent);
  tck_str_printf(t, "int rest = %s;\n", lin);
  for (int32_t d = k->n_outer - 1; d >= 0; d--) {
    tck_str_indent(t, indent);
    if (d == 0)
      tck_str_printf(t, "int i0 = rest;\n");
    else
      tck_str_printf(t, "int i%d = rest %% n%d; rest /= n%d;\n", (int)d, (int)d, (int)d);
  }
}

static void gen_pointwise(vk_gen *g, tck_str *t) {
  const tc_kernel_desc *k = g->k;
  int32_t last = k->n_outer - 1;
  char vnames[TC_MAX_RANK + 1][32];
  const char *vars[TC_MAX_RANK + 1] = {0};
  for (int32_t d = 0; d < k->n_outer; d++) {
    snprintf(vnames[d], sizeof vnames[d], "i%d", (int)d);
    vars[d] = vnames[d];
  }
  bool any_vec = false;
  for (int32_t i = 0; i < k->n_ops && last >= 0; i++) any_vec |= access_vectorizable(g, tck_kernel_op(k, i), last);
  bool *percomp = calloc((size_t)k->n_ops + 1, 1);

  tck_str_printf(t, "layout(local_size_x = %d) in;\n\n", VK_POINTWISE_WG);
  tck_str_printf(t, "void main() {\n");
  tck_str body = {0};
  int32_t ind = 2;
  vk_gen_index_locals(g, &body);
  tck_str_printf(&body, "  int total = 1;\n");
  for (int32_t d = 0; d < k->n_outer; d++) {
    tck_str_printf(&body, "  int n%d = ", (int)d);
    vk_gen_expr_ref(g, &body, k->outer[d]);
    tck_str_printf(&body, "; total *= n%d;\n", (int)d);
  }
  tck_str_printf(&body, "  int nthreads = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);\n");
  tck_str_printf(&body, "  int gid = int(gl_GlobalInvocationID.x);\n");
  if (any_vec) {
    tck_str_printf(&body, "  bool vec_ok = (n%d %% 4 == 0)", (int)last);
    for (int32_t i = 0; i < k->n_ops; i++)
      if (access_vectorizable(g, tck_kernel_op(k, i), last)) vec_conditions(g, &body, tck_kernel_op(k, i), last);
    tck_str_printf(&body, ";\n");
    tck_str_printf(&body, "  if (vec_ok) {\n");
    tck_str_printf(&body, "    // 4 neighbours along the last dimension per invocation, vec4 loads and stores\n");
    tck_str_printf(&body, "    for (int q = gid; q < total / 4; q += nthreads) {\n");
    gen_decompose(g, &body, ind + 4, "q * 4");
    for (int32_t i = 0; i < k->n_ops; i++) percomp[i] = true;
    g->percomp = percomp;
    for (int32_t i = 0; i < k->n_ops; i++) {
      const tc_kop *op = tck_kernel_op(k, i);
      if (op->kind == TC_KOP_LOAD && access_vectorizable(g, op, last)) {
        char bid[64];
        vk_buffer_ident(g->k, op->buffer, bid, sizeof bid);
        tck_str_printf(&body, "      %s t%d = %s_v4[", vk_vec4_type(g, op->dtype), (int)i, bid);
        vec_index(g, &body, op, vars);
        tck_str_printf(&body, "];\n");
      }
    }
    char cvar[32];
    const char *cvars[TC_MAX_RANK + 1];
    for (int c = 0; c < 4; c++) {
      memcpy(cvars, vars, sizeof cvars);
      snprintf(cvar, sizeof cvar, "(i%d + %d)", (int)last, c);
      if (c > 0) cvars[last] = cvar;
      char suf[8], ov[64], reg[16];
      snprintf(suf, sizeof suf, "_%d", c);
      for (int32_t i = 0; i < k->n_ops; i++) {
        const tc_kop *op = tck_kernel_op(k, i);
        if (op->kind == TC_KOP_STORE && access_vectorizable(g, op, last)) continue;
        if (op->kind == TC_KOP_LOAD && access_vectorizable(g, op, last)) {
          snprintf(reg, sizeof reg, "t%d", (int)i);
          vec_component(g, ov, sizeof ov, op->dtype, reg, c);
          vk_gen_op(g, &body, 6, i, cvars, suf, ov);
        } else {
          vk_gen_op(g, &body, 6, i, cvars, suf, NULL);
        }
      }
    }
    for (int32_t i = 0; i < k->n_ops; i++) {
      const tc_kop *op = tck_kernel_op(k, i);
      if (op->kind != TC_KOP_STORE || !access_vectorizable(g, op, last)) continue;
      char bid[64];
      vk_buffer_ident(g->k, op->buffer, bid, sizeof bid);
      char val[256];
      vec_pack(g, val, sizeof val, op->dtype, op->args[0], true);
      tck_str_printf(&body, "      %s_v4[", bid);
      vec_index(g, &body, op, vars);
      tck_str_printf(&body, "] = %s;\n", val);
    }
    tck_str_printf(&body, "    }\n");
    vk_gen_index_flush(g, &body, 4);
    tck_str_printf(&body, "    return;\n");
    tck_str_printf(&body, "  }\n");
  }
  memset(percomp, 0, (size_t)k->n_ops + 1);
  g->percomp = percomp;
  tck_str_printf(&body, "  for (int lin = gid; lin < total; lin += nthreads) {\n");
  gen_decompose(g, &body, ind + 2, "lin");
  for (int32_t i = 0; i < k->n_ops; i++) vk_gen_op(g, &body, 4, i, vars, "", NULL);
  tck_str_printf(&body, "  }\n");
  vk_gen_index_flush(g, &body, 2);
  tck_str_printf(&body, "}\n");
  vk_gen_exprs_declare(g, t, 2);
  tck_str_printf(t, "%s", body.data ? body.data : "");
  free(body.data);
  free(percomp);
  g->percomp = NULL;
}

/* ------------------------------------------------------------------ rows */

typedef struct red_kind {
  int32_t prim;  /* REDUCE_SUM/MAX/MIN/PROD, ARGMAX/ARGMIN */
  int32_t dtype; /* operand dtype */
} red_kind;

static const char *red_name(int32_t prim) {
  switch (prim) {
  case TC_PRIM_REDUCE_SUM: return "sum";
  case TC_PRIM_REDUCE_MAX: return "max";
  case TC_PRIM_REDUCE_MIN: return "min";
  case TC_PRIM_REDUCE_PROD: return "prod";
  case TC_PRIM_ARGMAX: return "argmax";
  case TC_PRIM_ARGMIN: return "argmin";
  default: return "?";
  }
}

static const char *tsuf(int32_t d) {
  switch (d) {
  case TC_F32: return "f32";
  case TC_F64: return "f64";
  case TC_I32: return "i32";
  case TC_I64: return "i64";
  default: return "b";
  }
}

/* Bool reductions run on int 0/1 (sum/max: any, prod/min: all). */
static int32_t acc_dtype(const vk_gen *g, int32_t d) { return d == TC_BOOL ? TC_I32 : vk_value_dtype(g, d); }
static int32_t acc_prim(int32_t prim, int32_t d) {
  if (d != TC_BOOL) return prim;
  return prim == TC_PRIM_REDUCE_SUM ? TC_PRIM_REDUCE_MAX : prim == TC_PRIM_REDUCE_PROD ? TC_PRIM_REDUCE_MIN : prim;
}

static void identity(tck_str *t, int32_t prim, int32_t d) {
  int64_t i = tck_reduce_identity_i(prim, d);
  if (d == TC_I32 && i == INT32_MIN)
    tck_str_puts(t, "(-2147483647 - 1)"); /* 2147483648 is no GLSL int literal */
  else
    vk_gen_const(t, d, tck_reduce_identity_f(prim, d), i);
}

static void combine(tck_str *t, int32_t prim, int32_t d, const char *a, const char *b) {
  switch (prim) {
  case TC_PRIM_REDUCE_SUM: tck_str_printf(t, "(%s + %s)", a, b); break;
  case TC_PRIM_REDUCE_PROD: tck_str_printf(t, "(%s * %s)", a, b); break;
  case TC_PRIM_REDUCE_MAX: tck_str_printf(t, "tc_max_%s(%s, %s)", tsuf(d), a, b); break;
  case TC_PRIM_REDUCE_MIN: tck_str_printf(t, "tc_min_%s(%s, %s)", tsuf(d), a, b); break;
  default: break;
  }
}

/* The group (row) reduction helper for one kind: per-thread values in, the row's result out
 * in every thread of the row. */
static void gen_group_reduce(vk_gen *g, tck_str *t, red_kind rk) {
  const char *T = vk_glsl_type(rk.dtype), *s = tsuf(rk.dtype);
  bool arg = rk.prim == TC_PRIM_ARGMAX || rk.prim == TC_PRIM_ARGMIN;
  const char *n = red_name(rk.prim);
  /* 64-bit subgroup shuffles need shaderSubgroupExtendedTypes: 64-bit kinds use shared memory */
  bool sg = g->ctx->caps.subgroup_shuffle && rk.dtype != TC_F64 && rk.dtype != TC_I64;
  if (arg) {
    tck_str_printf(t,
                   "// true when (b, ib) beats (a, ia): the %s, NaN counting as the extreme, the first index on ties\n"
                   "bool tc_better_%s_%s(%s a, int ia, %s b, int ib) {\n",
                   rk.prim == TC_PRIM_ARGMAX ? "maximum" : "minimum", n, s, T, T);
    if (rk.dtype == TC_F32 || rk.dtype == TC_F64)
      tck_str_printf(t, "  if (isnan(b)) return !isnan(a) || ib < ia;\n  if (isnan(a)) return false;\n");
    tck_str_printf(t, "  return b %s a || (b == a && ib < ia);\n}\n", rk.prim == TC_PRIM_ARGMAX ? ">" : "<");
    tck_str_printf(t, "void tc_group_%s_%s(inout %s v, inout int ix) {\n", n, s, T);
    if (sg) {
      tck_str_printf(t,
                     "  for (uint o = min(uint(TPR), gl_SubgroupSize) >> 1; o > 0u; o >>= 1) {\n"
                     "    %s w = subgroupShuffleXor(v, o); int iw = subgroupShuffleXor(ix, o);\n"
                     "    if (tc_better_%s_%s(v, ix, w, iw)) { v = w; ix = iw; }\n"
                     "  }\n"
                     "  if (TPR > int(gl_SubgroupSize)) {\n"
                     "    if (gl_SubgroupInvocationID == 0u) { red_%s[gl_SubgroupID] = v; redi[gl_SubgroupID] = ix; }\n"
                     "    barrier();\n"
                     "    int nsub = TPR / int(gl_SubgroupSize), first = (int(gl_LocalInvocationID.x) / TPR) * nsub;\n"
                     "    v = red_%s[first]; ix = redi[first];\n"
                     "    for (int q = 1; q < nsub; q++)\n"
                     "      if (tc_better_%s_%s(v, ix, red_%s[first + q], redi[first + q])) { v = red_%s[first + q]; ix = redi[first + q]; }\n"
                     "    barrier();\n"
                     "  }\n",
                     T, n, s, s, s, n, s, s, s);
    } else {
      tck_str_printf(t,
                     "  int lid = int(gl_LocalInvocationID.x), first = (lid / TPR) * TPR;\n"
                     "  red_%s[lid] = v; redi[lid] = ix;\n"
                     "  barrier();\n"
                     "  for (int h = TPR / 2; h > 0; h >>= 1) {\n"
                     "    if (lid - first < h && tc_better_%s_%s(red_%s[lid], redi[lid], red_%s[lid + h], redi[lid + h])) {\n"
                     "      red_%s[lid] = red_%s[lid + h]; redi[lid] = redi[lid + h];\n"
                     "    }\n"
                     "    barrier();\n"
                     "  }\n"
                     "  v = red_%s[first]; ix = redi[first];\n"
                     "  barrier();\n",
                     s, n, s, s, s, s, s, s);
    }
    tck_str_printf(t, "}\n\n");
    return;
  }
  tck_str_printf(t, "%s tc_group_%s_%s(%s v) {\n", T, n, s, T);
  tck_str c = {0};
  if (sg) {
    combine(&c, rk.prim, rk.dtype, "v", "subgroupShuffleXor(v, o)");
    tck_str_printf(t, "  for (uint o = min(uint(TPR), gl_SubgroupSize) >> 1; o > 0u; o >>= 1) v = %s;\n", c.data);
    free(c.data);
    c = (tck_str){0};
    char arr[64];
    snprintf(arr, sizeof arr, "red_%s[first + q]", s);
    combine(&c, rk.prim, rk.dtype, "v", arr);
    tck_str_printf(t,
                   "  if (TPR > int(gl_SubgroupSize)) {\n"
                   "    if (gl_SubgroupInvocationID == 0u) red_%s[gl_SubgroupID] = v;\n"
                   "    barrier();\n"
                   "    int nsub = TPR / int(gl_SubgroupSize), first = (int(gl_LocalInvocationID.x) / TPR) * nsub;\n"
                   "    v = red_%s[first];\n"
                   "    for (int q = 1; q < nsub; q++) v = %s;\n"
                   "    barrier();\n"
                   "  }\n",
                   s, s, c.data);
  } else {
    char a[64], b[64];
    snprintf(a, sizeof a, "red_%s[lid]", s);
    snprintf(b, sizeof b, "red_%s[lid + h]", s);
    combine(&c, rk.prim, rk.dtype, a, b);
    tck_str_printf(t,
                   "  int lid = int(gl_LocalInvocationID.x), first = (lid / TPR) * TPR;\n"
                   "  red_%s[lid] = v;\n"
                   "  barrier();\n"
                   "  for (int h = TPR / 2; h > 0; h >>= 1) {\n"
                   "    if (lid - first < h) red_%s[lid] = %s;\n"
                   "    barrier();\n"
                   "  }\n"
                   "  v = red_%s[first];\n"
                   "  barrier();\n",
                   s, s, c.data, s);
  }
  free(c.data);
  tck_str_printf(t, "  return v;\n}\n\n");
}

static bool touches(const tc_kop *op, int32_t buffer) {
  return (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD) && op->buffer == buffer;
}

/* What MODE 2 keeps in registers (c<op>[R], a vec4 per TPR-strided slot of the row): */
typedef struct rows_plan {
  int32_t *cache_of; /* per load: the earlier load or store whose registers hold its value, or -1 */
  bool *cached;      /* per op: its value is kept in registers for later loops */
  bool *dead;        /* per store: a later loop overwrites it and nothing reads it from memory */
  bool *vecable;     /* per op: vec4 access along the inner variable */
} rows_plan;

/* MODE 2 runs each inner loop over the same TPR-strided vec4 slots of the row, so a load the
 * scheduler marked `reuse` (an earlier inner loop loaded or stored the same element) takes the
 * value from that op's registers when both accesses are vec4; softmax's exp(x - max), parked in
 * the output by the core, is then never read back. A store marked TC_KOP_OVERWRITTEN is not
 * emitted when every access to its buffer after it is vec4 (so every load in between that the
 * scheduler counted on reads registers here too). */
static void rows_plan_build(vk_gen *g, rows_plan *pl) {
  const tc_kernel_desc *k = g->k;
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = tck_kernel_op(k, i);
    if (!pl->vecable[i] || op->kind != TC_KOP_LOAD || op->reuse < 0 || op->reuse >= i || !pl->vecable[op->reuse])
      continue;
    pl->cache_of[i] = op->reuse;
    pl->cached[op->reuse] = true;
  }
  for (int32_t s = 0; s < k->n_ops; s++) {
    const tc_kop *so = tck_kernel_op(k, s);
    if (!pl->vecable[s] || so->kind != TC_KOP_STORE || !(so->flags & TC_KOP_OVERWRITTEN)) continue;
    bool all_vec = true;
    for (int32_t e = s + 1; e < k->n_ops && all_vec; e++) {
      const tc_kop *eo = tck_kernel_op(k, e);
      if (touches(eo, so->buffer)) all_vec = pl->vecable[e] && (eo->kind != TC_KOP_LOAD || pl->cache_of[e] >= 0 || eo->reuse < 0);
    }
    pl->dead[s] = all_vec;
  }
}

/* "(p.oB + offset + outer terms) >> 2": the vec4 index of op's element at inner position 0.
 * Exact for any inner position j = 4 * j4: ((x + 4 * j4) >> 2) == (x >> 2) + j4. */
static void vec_row_base(vk_gen *g, tck_str *t, const tc_kop *op, const char *const *vars) {
  const char *names[TC_MAX_RANK + 1];
  for (int32_t d = 0; d < g->k->n_outer; d++) names[d] = vars[d];
  names[g->k->n_outer] = "0"; /* the outer variables only */
  tck_exprs_mark_index(&g->x, op->index);
  tck_str_printf(t, "(p.o%d + ", (int)op->buffer);
  tck_index_emit(t, &g->x, op->index, names);
  tck_str_printf(t, ") >> 2");
}

static void emit_reduce_update(vk_gen *g, tck_str *t, int indent, int32_t i, const char *suffix, const char *jexpr) {
  const tc_kop *op = tck_kernel_op(g->k, i);
  const tc_kop *src = tck_kernel_op(g->k, op->args[0]);
  int32_t d = src->dtype, ad = acc_dtype(g, d), prim = acc_prim(op->prim, d);
  char val[64];
  bool comp = g->percomp && g->percomp[op->args[0]];
  if (d == TC_BOOL)
    snprintf(val, sizeof val, "(v%d%s ? 1 : 0)", (int)op->args[0], comp ? suffix : "");
  else
    snprintf(val, sizeof val, "v%d%s", (int)op->args[0], comp ? suffix : "");
  tck_str_indent(t, indent);
  if (prim == TC_PRIM_ARGMAX || prim == TC_PRIM_ARGMIN) {
    tck_str_printf(t, "if (tc_better_%s_%s(acc%d, acci%d, %s, %s)) { acc%d = %s; acci%d = %s; }\n", red_name(prim),
                   tsuf(ad), (int)i, (int)i, val, jexpr, (int)i, val, (int)i, jexpr);
    return;
  }
  char acc[32];
  snprintf(acc, sizeof acc, "acc%d", (int)i);
  tck_str_printf(t, "%s = ", acc);
  combine(t, prim, ad, acc, val);
  tck_str_printf(t, ";\n");
}

/* One row's body for a mode (0 scalar, 1 vec4, 2 vec4 + registers). */
/* An f32 division inside inner loop `loop` by a value of the row (defined outside the loop):
 * softmax's normalization. It becomes a multiply by the reciprocal made once per row. */
static bool div_by_row_value(const vk_gen *g, int32_t r, int32_t loop) {
  const tc_kernel_desc *k = g->k;
  const tc_kop *op = tck_kernel_op(k, r);
  if (g->f32_emulate) return false; /* emulated: each division correctly rounded (tc_f32_div) */
  if (op->kind != TC_KOP_PRIM || op->prim != TC_PRIM_DIV || op->dtype != TC_F32 || op->n_args < 2 || op->args[1] < 0)
    return false;
  return tck_kernel_op(k, op->args[1])->loop != loop;
}

/* Before inner loop `loop` (ops i..end): the reciprocals its row-value divisions use, once each. */
static void emit_row_recips(vk_gen *g, tck_str *t, int32_t i, int32_t end, int32_t loop) {
  const tc_kernel_desc *k = g->k;
  for (int32_t r = i; r < end; r++) {
    if (!div_by_row_value(g, r, loop)) continue;
    int32_t d = tck_kernel_op(k, r)->args[1];
    bool seen = false;
    for (int32_t q = i; q < r && !seen; q++) seen = div_by_row_value(g, q, loop) && tck_kernel_op(k, q)->args[1] == d;
    if (seen) continue;
    tck_str_printf(t, "    float v%d_rcp%d = tc_recip_f32(v%d), v%d_rsc%d = tc_recip_scale_f32(v%d);\n", (int)d, (int)loop,
                   (int)d, (int)d, (int)loop, (int)d);
  }
}

/* Element r of the loop as x * (1/d) * scale (see emit_row_recips). */
static void emit_row_div(vk_gen *g, tck_str *t, int indent, int32_t r, const char *suffix) {
  const tc_kop *op = tck_kernel_op(g->k, r);
  int32_t a = op->args[0], d = op->args[1];
  tck_str_indent(t, indent);
  tck_str_printf(t, "precise float v%d%s = (v%d%s * v%d_rcp%d) * v%d_rsc%d; // v%d / v%d\n", (int)r, suffix, (int)a,
                 g->percomp && g->percomp[a] ? suffix : "", (int)d, (int)op->loop, (int)d, (int)op->loop, (int)a, (int)d);
}

static void gen_row_body(vk_gen *g, tck_str *t, int mode, const rows_plan *pl, const char *const *outer_vars) {
  const tc_kernel_desc *k = g->k;
  int32_t nv = k->n_outer + 1, inner = k->n_outer;
  bool *percomp = calloc((size_t)k->n_ops + 1, 1);
  g->percomp = percomp;
  const char *vars[TC_MAX_RANK + 1];
  memcpy(vars, outer_vars, sizeof vars);
  if (mode == 2)
    for (int32_t i = 0; i < k->n_ops; i++)
      if (pl->cached[i]) tck_str_printf(t, "    %s c%d[R];\n", vk_vec4_type(g, tck_kernel_op(k, i)->dtype), (int)i);
  for (int32_t i = 0; i < k->n_ops;) {
    const tc_kop *op = tck_kernel_op(k, i);
    if (op->loop < 0) {
      if (op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD) {
        tck_str_printf(t, "    if (live && tid == 0) {\n");
        vk_gen_op(g, t, 6, i, vars, "", NULL);
        tck_str_printf(t, "    }\n");
      } else {
        vk_gen_op(g, t, 4, i, vars, "", NULL);
      }
      i++;
      continue;
    }
    int32_t loop = op->loop, end = i;
    while (end < k->n_ops && tck_kernel_op(k, end)->loop == loop) end++;
    tck_str_printf(t, "    // inner loop %d\n", (int)loop);
    for (int32_t r = i; r < end; r++) {
      const tc_kop *ro = tck_kernel_op(k, r);
      if (ro->kind != TC_KOP_REDUCE) continue;
      int32_t d = tck_kernel_op(k, ro->args[0])->dtype, ad = acc_dtype(g, d), prim = acc_prim(ro->prim, d);
      tck_str_printf(t, "    %s acc%d = ", vk_glsl_type(ad), (int)r);
      identity(t, prim, ad);
      tck_str_printf(t, ";\n");
      if (prim == TC_PRIM_ARGMAX || prim == TC_PRIM_ARGMIN) tck_str_printf(t, "    int acci%d = 2147483647;\n", (int)r);
    }
    for (int32_t r = i; r < end; r++) percomp[r] = mode != 0 && tck_kernel_op(k, r)->kind != TC_KOP_REDUCE;
    emit_row_recips(g, t, i, end, loop);
    int ind = 6;
    if (mode == 0) {
      tck_str_printf(t, "    for (int j = tid; j < N; j += TPR) {\n");
      vars[inner] = "j";
      for (int32_t r = i; r < end; r++) {
        const tc_kop *ro = tck_kernel_op(k, r);
        if (ro->kind == TC_KOP_REDUCE) {
          emit_reduce_update(g, t, ind, r, "", "j");
        } else if (ro->kind == TC_KOP_STORE || ro->kind == TC_KOP_STORE_ADD) {
          tck_str_printf(t, "      if (live) {\n");
          vk_gen_op(g, t, ind + 2, r, vars, "", NULL);
          tck_str_printf(t, "      }\n");
        } else if (div_by_row_value(g, r, loop)) {
          emit_row_div(g, t, ind, r, "");
        } else {
          vk_gen_op(g, t, ind, r, vars, "", NULL);
        }
      }
      tck_str_printf(t, "    }\n");
    } else {
      /* each memory access's vec4 index at the row's start: the loop adds j4 only */
      for (int32_t r = i; r < end; r++) {
        const tc_kop *ro = tck_kernel_op(k, r);
        if (!pl->vecable[r] || (ro->kind != TC_KOP_LOAD && ro->kind != TC_KOP_STORE)) continue;
        if (mode == 2 && (ro->kind == TC_KOP_LOAD ? pl->cache_of[r] >= 0 : pl->dead[r])) continue;
        tck_str_printf(t, "    int a%d = ", (int)r);
        vec_row_base(g, t, ro, vars);
        tck_str_printf(t, ";\n");
      }
      if (mode == 2) {
        /* the loads kept in registers anyway are all issued before any use: inside the guarded
         * loop below the compiler must keep each load behind its branch, one memory latency per
         * vec4 (softmax on the H200: 2910 -> 3354 GB/s). Loads not kept (ln_gelu's gamma, beta)
         * stay in the loop: prefetching them too cost registers and 11% on ln_gelu. */
        bool any = false;
        for (int32_t r = i; r < end; r++)
          any |= tck_kernel_op(k, r)->kind == TC_KOP_LOAD && pl->vecable[r] && pl->cache_of[r] < 0 && pl->cached[r];
        if (any) {
          tck_str_printf(t, "    [[unroll]] for (int it = 0; it < R; it++) {\n");
          tck_str_printf(t, "      int j4 = min(tid + it * TPR, N / 4 - 1); // lanes past the row re-read its end\n");
          for (int32_t r = i; r < end; r++) {
            const tc_kop *ro = tck_kernel_op(k, r);
            if (ro->kind != TC_KOP_LOAD || !pl->vecable[r] || pl->cache_of[r] >= 0 || !pl->cached[r]) continue;
            char bid[64];
            vk_buffer_ident(g->k, ro->buffer, bid, sizeof bid);
            tck_str_printf(t, "      c%d[it] = %s_v4[a%d + j4];\n", (int)r, bid, (int)r);
          }
          tck_str_printf(t, "    }\n");
        }
      }
      if (mode == 1) {
        tck_str_printf(t, "    for (int j4 = tid; j4 < N / 4; j4 += TPR) {\n");
      } else {
        tck_str_printf(t, "    [[unroll]] for (int it = 0; it < R; it++) {\n");
        tck_str_printf(t, "      int j4 = tid + it * TPR;\n");
        tck_str_printf(t, "      if (j4 < N / 4) { // no break: the loop must unroll for c*[it] to stay in registers\n");
      }
      tck_str_printf(t, "      int j = j4 * 4;\n");
      vars[inner] = "j";
      for (int32_t r = i; r < end; r++) {
        const tc_kop *ro = tck_kernel_op(k, r);
        if (ro->kind != TC_KOP_LOAD || !pl->vecable[r]) continue;
        const char *V = vk_vec4_type(g, ro->dtype);
        int32_t src = mode == 2 ? pl->cache_of[r] : -1;
        if (src >= 0) {
          tck_str_printf(t, "      %s t%d = c%d[it]; // %s in inner loop %d, kept in registers\n", V, (int)r, (int)src,
                         tck_kernel_op(k, src)->kind == TC_KOP_STORE ? "stored" : "loaded", (int)tck_kernel_op(k, src)->loop);
          continue;
        }
        if (mode == 2 && pl->cached[r]) {
          tck_str_printf(t, "      %s t%d = c%d[it]; // prefetched\n", V, (int)r, (int)r);
          continue;
        }
        char bid[64];
        vk_buffer_ident(g->k, ro->buffer, bid, sizeof bid);
        tck_str_printf(t, "      %s t%d = %s_v4[a%d + j4];\n", V, (int)r, bid, (int)r);
      }
      char cvar[4][32];
      for (int c = 0; c < 4; c++) {
        snprintf(cvar[c], sizeof cvar[c], c == 0 ? "j" : "(j + %d)", c);
        vars[inner] = cvar[c];
        char suf[8], ov[64], reg[16];
        snprintf(suf, sizeof suf, "_%d", c);
        for (int32_t r = i; r < end; r++) {
          const tc_kop *ro = tck_kernel_op(k, r);
          if (ro->kind == TC_KOP_REDUCE) {
            emit_reduce_update(g, t, ind, r, suf, cvar[c]);
          } else if (ro->kind == TC_KOP_STORE && pl->vecable[r]) {
            continue;
          } else if (ro->kind == TC_KOP_STORE || ro->kind == TC_KOP_STORE_ADD) {
            tck_str_printf(t, "      if (live) {\n");
            vk_gen_op(g, t, ind + 2, r, vars, suf, NULL);
            tck_str_printf(t, "      }\n");
          } else if (ro->kind == TC_KOP_LOAD && pl->vecable[r]) {
            snprintf(reg, sizeof reg, "t%d", (int)r);
            vec_component(g, ov, sizeof ov, ro->dtype, reg, c);
            vk_gen_op(g, t, ind, r, vars, suf, ov);
          } else if (div_by_row_value(g, r, loop)) {
            emit_row_div(g, t, ind, r, suf);
          } else {
            vk_gen_op(g, t, ind, r, vars, suf, NULL);
          }
        }
      }
      vars[inner] = "j";
      for (int32_t r = i; r < end; r++) {
        const tc_kop *ro = tck_kernel_op(k, r);
        if (ro->kind != TC_KOP_STORE || !pl->vecable[r]) continue;
        char bid[64], val[256];
        vk_buffer_ident(g->k, ro->buffer, bid, sizeof bid);
        int a = ro->args[0];
        vec_pack(g, val, sizeof val, ro->dtype, a, percomp[a]);
        bool keep = mode == 2 && pl->cached[r], dead = mode == 2 && pl->dead[r];
        if (keep) {
          tck_str_printf(t, "      c%d[it] = %s;\n", (int)r, val);
          snprintf(val, sizeof val, "c%d[it]", (int)r);
        }
        if (dead)
          tck_str_printf(t, "      // %s: not stored, a later inner loop overwrites it\n", bid);
        else
          tck_str_printf(t, "      if (live) %s_v4[a%d + j4] = %s;\n", bid, (int)r, val);
      }
      tck_str_printf(t, mode == 2 ? "    } }\n" : "    }\n");
    }
    vars[inner] = NULL;
    for (int32_t r = i; r < end; r++) {
      const tc_kop *ro = tck_kernel_op(k, r);
      if (ro->kind != TC_KOP_REDUCE) continue;
      int32_t d = tck_kernel_op(k, ro->args[0])->dtype, ad = acc_dtype(g, d), prim = acc_prim(ro->prim, d);
      if (prim == TC_PRIM_ARGMAX || prim == TC_PRIM_ARGMIN) {
        tck_str_printf(t, "    tc_group_%s_%s(acc%d, acci%d);\n", red_name(prim), tsuf(ad), (int)r, (int)r);
        tck_str_printf(t, "    %s v%d = %s(acci%d == 2147483647 ? 0 : acci%d);\n", vk_glsl_type(ro->dtype), (int)r,
                       vk_glsl_type(ro->dtype), (int)r, (int)r);
      } else if (d == TC_BOOL) {
        tck_str_printf(t, "    bool v%d = tc_group_%s_%s(acc%d) != 0;\n", (int)r, red_name(prim), tsuf(ad), (int)r);
      } else if (g->f32_emulate && ro->dtype == TC_F32 && (prim == TC_PRIM_REDUCE_SUM || prim == TC_PRIM_REDUCE_PROD)) {
        /* summed (multiplied) in double, rounded to f32 once */
        tck_str_printf(t, "    double v%d = tc_f32r(tc_group_%s_%s(acc%d));\n", (int)r, red_name(prim), tsuf(ad), (int)r);
      } else {
        tck_str_printf(t, "    %s v%d = tc_group_%s_%s(acc%d);\n", vk_value_type(g, ro->dtype), (int)r, red_name(prim),
                       tsuf(ad), (int)r);
      }
    }
    (void)nv;
    i = end;
  }
  free(percomp);
  g->percomp = NULL;
}

static void gen_rows(vk_gen *g, tck_str *t) {
  const tc_kernel_desc *k = g->k;
  int32_t inner = k->n_outer;
  rows_plan pl;
  pl.cache_of = malloc(sizeof(int32_t) * ((size_t)k->n_ops + 1));
  pl.cached = calloc((size_t)k->n_ops + 1, 1);
  pl.dead = calloc((size_t)k->n_ops + 1, 1);
  pl.vecable = calloc((size_t)k->n_ops + 1, 1);
  if (!pl.cache_of || !pl.cached || !pl.dead || !pl.vecable) {
    snprintf(g->err, sizeof g->err, "out of memory generating GLSL");
    free(pl.cache_of);
    free(pl.cached);
    free(pl.dead);
    free(pl.vecable);
    return;
  }
  bool any_vec = false;
  for (int32_t i = 0; i < k->n_ops; i++) {
    pl.cache_of[i] = -1;
    pl.vecable[i] = tck_kernel_op(k, i)->loop >= 0 && access_vectorizable(g, tck_kernel_op(k, i), inner);
    any_vec |= pl.vecable[i];
  }
  rows_plan_build(g, &pl);
  /* reduction kinds used, for the shared arrays and helpers */
  red_kind kinds[16];
  int n_kinds = 0;
  bool type_used[8] = {false}, need_idx = false;
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = tck_kernel_op(k, i);
    if (op->kind != TC_KOP_REDUCE) continue;
    int32_t d = tck_kernel_op(k, op->args[0])->dtype;
    red_kind rk = {acc_prim(op->prim, d), acc_dtype(g, d)};
    type_used[rk.dtype] = true;
    need_idx |= rk.prim == TC_PRIM_ARGMAX || rk.prim == TC_PRIM_ARGMIN;
    bool seen = false;
    for (int q = 0; q < n_kinds; q++) seen |= kinds[q].prim == rk.prim && kinds[q].dtype == rk.dtype;
    if (!seen && n_kinds < 16) kinds[n_kinds++] = rk;
  }
  g->uses_subgroups = false;
  for (int q = 0; q < n_kinds; q++)
    g->uses_subgroups |= g->ctx->caps.subgroup_shuffle && kinds[q].dtype != TC_F64 && kinds[q].dtype != TC_I64;

  g->uses_unroll = true;
  tck_str_printf(t, "layout(local_size_x_id = 0) in;\n");
  tck_str_printf(t, "layout(constant_id = 1) const int TPR = 256; // threads per row, chosen at launch\n");
  tck_str_printf(t, "const int R = %d; // vec4 registers per thread per value kept between inner loops\n",
                 (int)vk_row_cache(g->f32_emulate));
  if (any_vec)
    tck_str_printf(t, "// the row body, chosen at launch (a pipeline each, so the others are compiled out):\n"
                      "// 2 vec4 + row in registers, 1 vec4, 0 scalar\n"
                      "layout(constant_id = 2) const int MODE = 0;\n");
  tck_str_printf(t, "\n");
  for (int d = 0; d < 8; d++)
    if (type_used[d]) tck_str_printf(t, "shared %s red_%s[gl_WorkGroupSize.x];\n", vk_glsl_type(d), tsuf(d));
  if (need_idx) tck_str_printf(t, "shared int redi[gl_WorkGroupSize.x];\n");
  if (n_kinds) tck_str_printf(t, "\n");
  for (int q = 0; q < n_kinds; q++) gen_group_reduce(g, t, kinds[q]);

  tck_str body = {0};
  int32_t n_outer = k->n_outer;
  vk_gen_index_locals(g, &body);
  tck_str_printf(&body, "  int rows = 1;\n");
  for (int32_t d = 0; d < n_outer; d++) {
    tck_str_printf(&body, "  int n%d = ", (int)d);
    vk_gen_expr_ref(g, &body, k->outer[d]);
    tck_str_printf(&body, "; rows *= n%d;\n", (int)d);
  }
  tck_str_printf(&body, "  int N = ");
  vk_gen_expr_ref(g, &body, k->inner);
  tck_str_printf(&body, "; // the inner (reduction) extent\n");
  tck_str_printf(&body, "  int lid = int(gl_LocalInvocationID.x), tid = lid %% TPR;\n");
  tck_str_printf(&body, "  int rpw = int(gl_WorkGroupSize.x) / TPR; // rows per workgroup\n");
  if (any_vec) {
    /* the conditions go in a comment: the launch evaluates them (vk_kernel.vec_*) */
    tck_str cond = {0};
    g->rows_vec = true;
    g->n_vec_bufs = g->n_vec_exprs = 0;
    vk_gen_expr_ref(g, &cond, k->inner);
    vec_record_expr(g, k->inner);
    tck_str_printf(&cond, " %% 4 == 0");
    for (int32_t i = 0; i < k->n_ops; i++)
      if (pl.vecable[i]) vec_conditions(g, &cond, tck_kernel_op(k, i), inner);
    tck_str_printf(&body, "  // MODE 1 and 2 are chosen only when (%s);\n", cond.data ? cond.data : "");
    tck_str_printf(&body, "  // MODE 2 when also N <= TPR * 4 * R\n");
    tck_str_printf(&body, "  const int mode = MODE;\n");
    free(cond.data);
  }
  tck_str_printf(&body, "  if (rows == 0) return;\n");
  tck_str_printf(&body, "  for (int base = int(gl_WorkGroupID.x) * rpw; base < rows; base += int(gl_NumWorkGroups.x) * rpw) {\n");
  tck_str_printf(&body, "    int row = base + lid / TPR;\n");
  tck_str_printf(&body, "    bool live = row < rows; // spare rows of the last workgroup compute row rows-1, store nothing\n");
  tck_str_printf(&body, "    if (!live) row = rows - 1;\n");
  char vnames[TC_MAX_RANK][16];
  const char *vars[TC_MAX_RANK + 1] = {0};
  for (int32_t d = 0; d < n_outer; d++) {
    snprintf(vnames[d], sizeof vnames[d], "i%d", (int)d);
    vars[d] = vnames[d];
  }
  gen_decompose(g, &body, 4, "row");
  if (any_vec) {
    tck_str_printf(&body, "    if (mode == 2) {\n");
    gen_row_body(g, &body, 2, &pl, vars);
    tck_str_printf(&body, "    } else if (mode == 1) {\n");
    gen_row_body(g, &body, 1, &pl, vars);
    tck_str_printf(&body, "    } else {\n");
    gen_row_body(g, &body, 0, &pl, vars);
    tck_str_printf(&body, "    }\n");
  } else {
    tck_str_printf(&body, "    {\n");
    gen_row_body(g, &body, 0, &pl, vars);
    tck_str_printf(&body, "    }\n");
  }
  tck_str_printf(&body, "  }\n");
  vk_gen_index_flush(g, &body, 2);
  tck_str_printf(&body, "}\n");
  tck_str_printf(t, "void main() {\n");
  vk_gen_exprs_declare(g, t, 2);
  tck_str_printf(t, "%s", body.data ? body.data : "");
  free(body.data);
  free(pl.cache_of);
  free(pl.cached);
  free(pl.dead);
  free(pl.vecable);
}

tc_status vk_gen_loop(vk_gen *g, int32_t *shape) {
  const tc_kernel_desc *k = g->k;
  bool has_inner = false;
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = tck_kernel_op(k, i);
    if (op->loop >= 0) has_inner = true;
    if (op->kind == TC_KOP_ACC) {
      snprintf(g->err, sizeof g->err, "op %d: ACC in a LOOP kernel", (int)i);
      return TC_ERR_INVALID_ARGUMENT;
    }
    if (op->kind == TC_KOP_REDUCE && (op->loop < 0 || op->n_args < 1 || op->args[0] < 0 || op->args[0] >= i)) {
      snprintf(g->err, sizeof g->err, "op %d: REDUCE outside an inner loop or without an operand", (int)i);
      return TC_ERR_INVALID_ARGUMENT;
    }
  }
  if (has_inner && k->inner < 0) {
    snprintf(g->err, sizeof g->err, "ops in inner loops but the kernel has no inner extent");
    return TC_ERR_INVALID_ARGUMENT;
  }
  if (k->n_outer < 0 || k->n_outer > TC_MAX_RANK) {
    snprintf(g->err, sizeof g->err, "n_outer %d out of range", (int)k->n_outer);
    return TC_ERR_INVALID_ARGUMENT;
  }
  tck_str body = {0};
  if (has_inner) {
    *shape = VK_SHAPE_ROWS;
    gen_rows(g, &body);
  } else {
    *shape = VK_SHAPE_POINTWISE;
    gen_pointwise(g, &body);
  }
  tck_str_printf(g->t, "%s", "");
  vk_gen_prologue(g, g->t, &body);
  bool oom = body.oom;
  free(body.data);
  if (oom || g->t->oom) {
    snprintf(g->err, sizeof g->err, "out of memory generating GLSL");
    return TC_ERR_OUT_OF_MEMORY;
  }
  return g->err[0] ? TC_ERR_INVALID_ARGUMENT : TC_OK;
}
