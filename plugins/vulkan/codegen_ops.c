/* codegen_ops.c — what every generated shader shares: the text builder, GLSL types and
 * literals, size expressions (computed in the shader from the push-constant symbols, so one
 * pipeline serves every size), buffer bindings, and one kernel op as a GLSL statement. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

void vk_text_printf(vk_text *t, const char *fmt, ...) {
  if (t->oom) return;
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    va_end(ap2);
    t->oom = true;
    return;
  }
  if (t->len + (size_t)n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + (size_t)n + 1) cap *= 2;
    char *s = realloc(t->s, cap);
    if (!s) {
      va_end(ap2);
      t->oom = true;
      return;
    }
    t->s = s;
    t->cap = cap;
  }
  vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  t->len += (size_t)n;
}

void vk_text_indent(vk_text *t, int level) {
  for (int i = 0; i < level; i++) vk_text_printf(t, "  ");
}

const char *vk_glsl_type(int32_t dtype) {
  switch (dtype) {
  case TC_F32: return "float";
  case TC_F64: return "double";
  case TC_I32: return "int";
  case TC_I64: return "int64_t";
  case TC_BOOL: return "bool";
  default: return "void";
  }
}

/* The type a buffer of dtype holds in memory (bool is one byte). */
static const char *storage_type(int32_t dtype) { return dtype == TC_BOOL ? "uint8_t" : vk_glsl_type(dtype); }

static const tc_size_expr *expr_at(const tc_kernel_list *l, int32_t id) { return TC_AT(tc_size_expr, l->exprs, id); }

bool vk_expr_is_const(const tc_kernel_list *list, int32_t id, int64_t c) {
  if (id < 0) return c == 0;
  if (id >= list->n_exprs) return false;
  const tc_size_expr *e = expr_at(list, id);
  return e->op == TC_SX_CONST && e->value == c;
}

void vk_gen_expr_ref(vk_gen *g, vk_text *t, int32_t id) {
  if (id < 0) {
    vk_text_printf(t, "0");
    return;
  }
  if (id >= g->list->n_exprs) {
    snprintf(g->err, sizeof g->err, "size expression id %d out of range (%d)", id, g->list->n_exprs);
    vk_text_printf(t, "0");
    return;
  }
  const tc_size_expr *e = expr_at(g->list, id);
  if (e->op == TC_SX_CONST && e->value >= INT32_MIN && e->value <= INT32_MAX) {
    vk_text_printf(t, e->value < 0 ? "(%lld)" : "%lld", (long long)e->value);
    return;
  }
  if (e->op == TC_SX_SYM) {
    vk_text_printf(t, "p.s%lld", (long long)e->value);
    return;
  }
  g->expr_used[id] = true;
  vk_text_printf(t, "e%d", id);
}

void vk_gen_exprs_declare(vk_gen *g, vk_text *t, int indent) {
  const tc_kernel_list *l = g->list;
  /* Children have smaller ids: one backward pass marks everything a used node needs. */
  for (int32_t i = l->n_exprs - 1; i >= 0; i--) {
    const tc_size_expr *e = expr_at(l, i);
    if (!g->expr_used[i] || e->op < TC_SX_ADD) continue;
    if (e->a >= 0 && e->a < i) g->expr_used[e->a] = true;
    if (e->b >= 0 && e->b < i) g->expr_used[e->b] = true;
  }
  for (int32_t i = 0; i < l->n_exprs; i++) {
    const tc_size_expr *e = expr_at(l, i);
    if (!g->expr_used[i]) continue;
    if (e->op == TC_SX_CONST) {
      vk_text_indent(t, indent);
      vk_text_printf(t, "const int e%d = %lld;\n", i, (long long)e->value);
      continue;
    }
    if (e->op == TC_SX_SYM) {
      vk_text_indent(t, indent);
      vk_text_printf(t, "int e%d = p.s%lld;\n", i, (long long)e->value);
      continue;
    }
    vk_text a = {0}, b = {0};
    bool ua = g->expr_used[e->a], ub = g->expr_used[e->b];
    g->expr_used[e->a] = g->expr_used[e->b] = false; /* render children as literal/sym/eN */
    vk_gen_expr_ref(g, &a, e->a);
    vk_gen_expr_ref(g, &b, e->b);
    g->expr_used[e->a] = ua;
    g->expr_used[e->b] = ub;
    const char *sa = a.s ? a.s : "0", *sb = b.s ? b.s : "0";
    vk_text_indent(t, indent);
    switch (e->op) {
    case TC_SX_ADD: vk_text_printf(t, "int e%d = %s + %s;\n", i, sa, sb); break;
    case TC_SX_SUB: vk_text_printf(t, "int e%d = %s - %s;\n", i, sa, sb); break;
    case TC_SX_MUL: vk_text_printf(t, "int e%d = %s * %s;\n", i, sa, sb); break;
    case TC_SX_FLOORDIV: vk_text_printf(t, "int e%d = tc_floordiv(%s, %s);\n", i, sa, sb); break;
    case TC_SX_MOD: vk_text_printf(t, "int e%d = tc_floormod(%s, %s);\n", i, sa, sb); break;
    case TC_SX_MAX: vk_text_printf(t, "int e%d = max(%s, %s);\n", i, sa, sb); break;
    case TC_SX_MIN: vk_text_printf(t, "int e%d = min(%s, %s);\n", i, sa, sb); break;
    default:
      vk_text_printf(t, "int e%d = 0;\n", i);
      snprintf(g->err, sizeof g->err, "size expression %d: unknown op %d", i, e->op);
    }
    free(a.s);
    free(b.s);
  }
}

/* A GLSL identifier for buffer i: its name when that is one, else buf<i>. */
void vk_buffer_ident(const tc_kernel_desc *k, int32_t i, char *out, size_t n) {
  const tc_kbuffer *b = TC_AT(tc_kbuffer, k->buffers, i);
  const char *s = b->name;
  bool ok = s && *s && !(s[0] >= '0' && s[0] <= '9') && strncmp(s, "gl_", 3) != 0 && strlen(s) < 40;
  for (const char *c = s; ok && *c; c++)
    ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || (*c == '_' && c[1] != '_');
  /* Names are only readable decoration: make them unique by index. */
  if (ok)
    snprintf(out, n, "%s_%d", s, (int)i);
  else
    snprintf(out, n, "buf%d", (int)i);
}

void vk_gen_prologue(vk_gen *g, vk_text *h, const vk_text *body) {
  const tc_kernel_desc *k = g->k;
  vk_text_printf(h, "#version 450\n");
  vk_text_printf(h, "// tc kernel '%s' of graph '%s' (generated by the vulkan plugin)\n", k->name ? k->name : "?",
                 g->list->name ? g->list->name : "?");
  if (g->uses_i64) vk_text_printf(h, "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n");
  if (g->uses_u8) vk_text_printf(h, "#extension GL_EXT_shader_8bit_storage : require\n");
  if (g->uses_subgroups) {
    vk_text_printf(h, "#extension GL_KHR_shader_subgroup_basic : require\n");
    vk_text_printf(h, "#extension GL_KHR_shader_subgroup_shuffle : require\n");
  }
  if (g->uses_unroll) vk_text_printf(h, "#extension GL_EXT_control_flow_attributes : require\n");
  vk_text_printf(h, "\n");
  for (int32_t i = 0; i < k->n_buffers; i++) {
    const tc_kbuffer *b = TC_AT(tc_kbuffer, k->buffers, i);
    char id[64];
    vk_buffer_ident(k, i, id, sizeof id);
    const char *ro = b->role == TC_BUF_INPUT ? "readonly " : "";
    vk_text_printf(h, "layout(std430, set = 0, binding = %d) %sbuffer B%d { %s %s[]; };\n", (int)i, ro, (int)i,
                   storage_type(b->dtype), id);
    char v4[80];
    snprintf(v4, sizeof v4, "%s_v4[", id);
    if ((b->dtype == TC_F32 || b->dtype == TC_I32) && body && body->s && strstr(body->s, v4))
      vk_text_printf(h, "layout(std430, set = 0, binding = %d) %sbuffer B%dv { %s %s_v4[]; };\n", (int)i, ro, (int)i,
                     b->dtype == TC_F32 ? "vec4" : "ivec4", id);
    if (b->dtype == TC_F32 && g->uses_atomic)
      vk_text_printf(h, "layout(std430, set = 0, binding = %d) buffer B%du { uint %s_u[]; };\n", (int)i, (int)i, id);
    if (b->dtype == TC_F64 && g->uses_atomic)
      vk_text_printf(h, "layout(std430, set = 0, binding = %d) buffer B%du { uint64_t %s_u[]; };\n", (int)i, (int)i, id);
  }
  vk_text_printf(h, "\n// sizes: symbols s*, and each buffer's element offset o* (bound at a coarser offset)\n");
  vk_text_printf(h, "layout(push_constant) uniform tc_push {\n");
  for (int32_t s = 0; s < g->list->n_syms; s++) vk_text_printf(h, "  int s%d;\n", (int)s);
  for (int32_t i = 0; i < k->n_buffers; i++) vk_text_printf(h, "  int o%d;\n", (int)i);
  if (g->list->n_syms + k->n_buffers == 0) vk_text_printf(h, "  int unused;\n");
  vk_text_printf(h, "} p;\n\n");
  vk_gen_math_helpers(g, h, body ? body->s : NULL);
  vk_gen_atomic_helpers(g, h);
  if (body && body->s) vk_text_printf(h, "%s", body->s);
}

void vk_gen_const(vk_text *t, int32_t dtype, double f, int64_t i) {
  switch (dtype) {
  case TC_BOOL: vk_text_printf(t, "%s", f != 0.0 || i != 0 ? "true" : "false"); break;
  case TC_I32: vk_text_printf(t, i < 0 ? "(%lld)" : "%lld", (long long)i); break;
  case TC_I64:
    if (i == INT64_MIN)
      vk_text_printf(t, "(-9223372036854775807l - 1l)");
    else
      vk_text_printf(t, i < 0 ? "(%lldl)" : "%lldl", (long long)i);
    break;
  case TC_F32:
    if (isnan(f))
      vk_text_printf(t, "uintBitsToFloat(0x7fc00000u)");
    else if (isinf(f))
      vk_text_printf(t, f > 0 ? "uintBitsToFloat(0x7f800000u)" : "uintBitsToFloat(0xff800000u)");
    else if (f == 0.0)
      vk_text_printf(t, signbit(f) ? "(-0.0)" : "0.0");
    else
      vk_text_printf(t, "float(%.9g)", (double)(float)f);
    break;
  case TC_F64:
    if (isnan(f) || isinf(f)) {
      uint64_t bits;
      memcpy(&bits, &f, sizeof bits);
      vk_text_printf(t, "packDouble2x32(uvec2(0x%08xu, 0x%08xu))", (unsigned)(bits & 0xffffffffu), (unsigned)(bits >> 32));
    } else if (f == 0.0) {
      vk_text_printf(t, signbit(f) ? "(-0.0lf)" : "0.0lf");
    } else {
      vk_text_printf(t, "%.17elf", f); /* exponent form: always a valid double literal */
    }
    break;
  default: vk_text_printf(t, "0");
  }
}

static const tc_kop *op_at(const tc_kernel_desc *k, int32_t i) { return TC_AT(tc_kop, k->ops, i); }

void vk_gen_index_terms(vk_gen *g, vk_text *t, const tc_index *ix, const char *const *vars, int32_t nv) {
  for (int32_t d = 0; d < nv && d <= TC_MAX_RANK; d++) {
    int32_t s = ix->strides[d];
    if (s < 0 || vk_expr_is_const(g->list, s, 0)) continue;
    if (!vars[d]) {
      snprintf(g->err, sizeof g->err, "an index uses loop variable %d outside its loop", (int)d);
      continue;
    }
    vk_text_printf(t, " + ");
    if (vk_expr_is_const(g->list, s, 1)) {
      vk_text_printf(t, "%s", vars[d]);
    } else {
      vk_gen_expr_ref(g, t, s);
      vk_text_printf(t, " * %s", vars[d]);
    }
  }
}

void vk_gen_index(vk_gen *g, vk_text *t, const tc_index *ix, const char *const *vars, const char *suffix) {
  vk_text_printf(t, "(");
  vk_gen_expr_ref(g, t, ix->offset);
  vk_gen_index_terms(g, t, ix, vars, g->k->n_outer + 1);
  if (ix->indirect >= 0) {
    bool comp = g->percomp && g->percomp[ix->indirect];
    vk_text_printf(t, " + int(v%d%s) * ", (int)ix->indirect, comp ? suffix : "");
    vk_gen_expr_ref(g, t, ix->indirect_stride);
  }
  vk_text_printf(t, ")");
}

static bool is_float(int32_t d) { return d == TC_F32 || d == TC_F64; }
static const char *fsuf(int32_t d) { return d == TC_F64 ? "f64" : d == TC_I64 ? "i64" : d == TC_I32 ? "i32" : "f32"; }

/* The name of op a's value as seen from the op being emitted (component suffix when a varies
 * per component in the current emission). */
static void arg_name(vk_gen *g, vk_text *t, int32_t a, const char *suffix, const bool *percomp) {
  vk_text_printf(t, "v%d%s", (int)a, percomp && percomp[a] ? suffix : "");
}

static void prim_expr(vk_gen *g, vk_text *t, const tc_kop *op, const char *a, const char *b, const char *c,
                      int32_t in_dtype) {
  int32_t d = in_dtype, od = op->dtype;
  const char *T = vk_glsl_type(d);
  bool f = is_float(d), isint = d == TC_I32 || d == TC_I64;
  switch (op->prim) {
  case TC_PRIM_NEG: vk_text_printf(t, "(-%s)", a); return;
  case TC_PRIM_ABS:
    if (f) vk_text_printf(t, "abs(%s)", a);
    else vk_text_printf(t, "(%s < %s(0) ? -%s : %s)", a, T, a, a);
    return;
  case TC_PRIM_EXP: vk_text_printf(t, "tc_exp_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_LOG: vk_text_printf(t, "tc_log_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_SQRT: vk_text_printf(t, "sqrt(%s)", a); return;
  case TC_PRIM_RSQRT: vk_text_printf(t, "inversesqrt(%s)", a); return;
  case TC_PRIM_SIN: vk_text_printf(t, "tc_sin_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_COS: vk_text_printf(t, "tc_cos_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_TANH: vk_text_printf(t, "tc_tanh_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_ERF: vk_text_printf(t, "tc_erf_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_FLOOR: vk_text_printf(t, f ? "floor(%s)" : "(%s)", a); return;
  case TC_PRIM_CEIL: vk_text_printf(t, f ? "ceil(%s)" : "(%s)", a); return;
  case TC_PRIM_ROUND: vk_text_printf(t, f ? "roundEven(%s)" : "(%s)", a); return;
  case TC_PRIM_SIGN:
    if (f) vk_text_printf(t, "(isnan(%s) ? %s : (%s > %s(0) ? %s(1) : (%s < %s(0) ? %s(-1) : %s)))", a, a, a, T, T, a, T, T, a);
    else vk_text_printf(t, "(%s > %s(0) ? %s(1) : (%s < %s(0) ? %s(-1) : %s(0)))", a, T, T, a, T, T, T);
    return;
  case TC_PRIM_RECIPROCAL: vk_text_printf(t, "(%s(1) / %s)", T, a); return;
  case TC_PRIM_LOGICAL_NOT: vk_text_printf(t, "(!%s)", a); return;
  case TC_PRIM_ISNAN: vk_text_printf(t, f ? "isnan(%s)" : "false", a); return;
  case TC_PRIM_ADD: vk_text_printf(t, d == TC_BOOL ? "(%s || %s)" : "(%s + %s)", a, b); return;
  case TC_PRIM_SUB: vk_text_printf(t, "(%s - %s)", a, b); return;
  case TC_PRIM_MUL: vk_text_printf(t, d == TC_BOOL ? "(%s && %s)" : "(%s * %s)", a, b); return;
  case TC_PRIM_DIV:
    if (isint) vk_text_printf(t, "(%s == %s(0) ? %s(0) : %s / %s)", b, T, T, a, b);
    else vk_text_printf(t, "tc_div_%s(%s, %s)", fsuf(d), a, b);
    return;
  case TC_PRIM_POW: vk_text_printf(t, "tc_pow_%s(%s, %s)", fsuf(d), a, b); return;
  case TC_PRIM_MAX:
    if (d == TC_BOOL) vk_text_printf(t, "(%s || %s)", a, b);
    else vk_text_printf(t, "tc_max_%s(%s, %s)", fsuf(d), a, b);
    return;
  case TC_PRIM_MIN:
    if (d == TC_BOOL) vk_text_printf(t, "(%s && %s)", a, b);
    else vk_text_printf(t, "tc_min_%s(%s, %s)", fsuf(d), a, b);
    return;
  case TC_PRIM_REMAINDER: vk_text_printf(t, "tc_rem_%s(%s, %s)", fsuf(d), a, b); return;
  case TC_PRIM_EQ: vk_text_printf(t, "(%s == %s)", a, b); return;
  case TC_PRIM_NE: vk_text_printf(t, "(%s != %s)", a, b); return;
  case TC_PRIM_LT: vk_text_printf(t, d == TC_BOOL ? "(int(%s) < int(%s))" : "(%s < %s)", a, b); return;
  case TC_PRIM_LE: vk_text_printf(t, d == TC_BOOL ? "(int(%s) <= int(%s))" : "(%s <= %s)", a, b); return;
  case TC_PRIM_GT: vk_text_printf(t, d == TC_BOOL ? "(int(%s) > int(%s))" : "(%s > %s)", a, b); return;
  case TC_PRIM_GE: vk_text_printf(t, d == TC_BOOL ? "(int(%s) >= int(%s))" : "(%s >= %s)", a, b); return;
  case TC_PRIM_AND: vk_text_printf(t, d == TC_BOOL ? "(%s && %s)" : "(%s & %s)", a, b); return;
  case TC_PRIM_OR: vk_text_printf(t, d == TC_BOOL ? "(%s || %s)" : "(%s | %s)", a, b); return;
  case TC_PRIM_WHERE: vk_text_printf(t, "(%s ? %s : %s)", a, b, c); return;
  case TC_PRIM_CONVERT:
    if (od == d) vk_text_printf(t, "%s", a);
    else if (od == TC_BOOL) vk_text_printf(t, d == TC_BOOL ? "%s" : "(%s != %s(0))", a, T);
    else if (d == TC_BOOL) vk_text_printf(t, "%s(%s ? 1 : 0)", vk_glsl_type(od), a);
    else if (f && (od == TC_I32 || od == TC_I64)) vk_text_printf(t, "tc_ftoi_%s_%s(%s)", fsuf(d), fsuf(od), a);
    /* Sign extension spelled out: Mesa 22.3 (lavapipe) folds int64_t(int) compared with a
     * 64-bit constant wrongly (an i32 gather index then reads as out of range). */
    else if (d == TC_I32 && od == TC_I64) vk_text_printf(t, "packInt2x32(ivec2(%s, %s >> 31))", a, a);
    else vk_text_printf(t, "%s(%s)", vk_glsl_type(od), a);
    return;
  default:
    snprintf(g->err, sizeof g->err, "prim %d is not elementwise", (int)op->prim);
    vk_text_printf(t, "%s(0)", vk_glsl_type(od));
  }
}

/* The store of value expression `val` (of dtype) into buffer b at element index `idx`. */
static void store_stmt(vk_gen *g, vk_text *t, const tc_kop *op, const char *bufid, const char *idx, const char *val) {
  int32_t bd = TC_AT(tc_kbuffer, g->k->buffers, op->buffer)->dtype;
  if (op->kind == TC_KOP_STORE) {
    if (bd == TC_BOOL) vk_text_printf(t, "%s[%s] = uint8_t(%s ? 1u : 0u);", bufid, idx, val);
    else vk_text_printf(t, "%s[%s] = %s;", bufid, idx, val);
    return;
  }
  /* STORE_ADD: atomic, since an indirect index (scatter-add) may collide across invocations. */
  switch (bd) {
  case TC_I32: vk_text_printf(t, "atomicAdd(%s[%s], %s);", bufid, idx, val); break;
  case TC_I64: vk_text_printf(t, "atomicAdd(%s[%s], %s);", bufid, idx, val); break;
  case TC_BOOL: vk_text_printf(t, "if (%s) %s[%s] = uint8_t(1u);", val, bufid, idx); break;
  default: break;
  }
}

void vk_gen_op(vk_gen *g, vk_text *t, int indent, int32_t i, const char *const *vars, const char *suffix,
               const char *value_override) {
  const bool *pc = g->percomp;
  const tc_kernel_desc *k = g->k;
  const tc_kop *op = op_at(k, i);
  const char *T = vk_glsl_type(op->dtype);
  char bufid[64] = "";
  if (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD) {
    if (op->buffer < 0 || op->buffer >= k->n_buffers) {
      snprintf(g->err, sizeof g->err, "op %d: buffer %d out of range", (int)i, (int)op->buffer);
      return;
    }
    vk_buffer_ident(k, op->buffer, bufid, sizeof bufid);
  }
  vk_text_indent(t, indent);
  if (value_override) {
    vk_text_printf(t, "%s v%d%s = %s;\n", T, (int)i, suffix, value_override);
    return;
  }
  switch (op->kind) {
  case TC_KOP_LOAD: {
    const tc_kbuffer *b = TC_AT(tc_kbuffer, k->buffers, op->buffer);
    vk_text_printf(t, "%s v%d%s;", T, (int)i, suffix);
    vk_text_printf(t, " { int ix = p.o%d + ", (int)op->buffer);
    vk_gen_index(g, t, &op->index, vars, suffix);
    vk_text_printf(t, "; ");
    const char *conv = b->dtype == TC_BOOL ? "(uint(%s[ix]) != 0u)" : "%s[ix]";
    if (op->index.indirect >= 0) {
      /* gather: an index outside the buffer reads 0, never out of bounds */
      vk_text_printf(t, "v%d%s = (ix >= p.o%d && ix < p.o%d + ", (int)i, suffix, (int)op->buffer, (int)op->buffer);
      vk_gen_expr_ref(g, t, b->numel);
      vk_text_printf(t, ") ? ");
      vk_text_printf(t, conv, bufid);
      vk_text_printf(t, " : %s(0); }\n", T);
    } else {
      vk_text_printf(t, "v%d%s = ", (int)i, suffix);
      vk_text_printf(t, conv, bufid);
      vk_text_printf(t, "; }\n");
    }
    return;
  }
  case TC_KOP_CONST:
    vk_text_printf(t, "%s v%d%s = ", T, (int)i, suffix);
    vk_gen_const(t, op->dtype, op->fconst, op->iconst);
    vk_text_printf(t, ";\n");
    return;
  case TC_KOP_INDEX:
    vk_text_printf(t, "%s v%d%s = %s(", T, (int)i, suffix, T);
    vk_gen_index(g, t, &op->index, vars, suffix);
    vk_text_printf(t, ");\n");
    return;
  case TC_KOP_RANDOM: {
    uint64_t key = (uint64_t)op->iconst;
    vk_text_printf(t, "%s v%d%s = %s(tc_philox_u01(0x%08xu, 0x%08xu, ", T, (int)i, suffix, T, (unsigned)(key & 0xffffffffu),
                   (unsigned)(key >> 32));
    vk_gen_index(g, t, &op->index, vars, suffix);
    vk_text_printf(t, ", %s));\n", op->dtype == TC_F64 ? "true" : "false");
    return;
  }
  case TC_KOP_PRIM: {
    vk_text names[3] = {{0}, {0}, {0}};
    int32_t in_dtype = op->dtype;
    int n_args = 0;
    for (int a = 0; a < 3; a++) {
      if (op->args[a] < 0) continue;
      if (op->args[a] >= i) {
        snprintf(g->err, sizeof g->err, "op %d: operand %d is not an earlier op", (int)i, (int)op->args[a]);
        return;
      }
      arg_name(g, &names[a], op->args[a], suffix, pc);
      n_args++;
    }
    if (n_args > 0) in_dtype = op_at(k, op->args[op->prim == TC_PRIM_WHERE ? 1 : 0])->dtype;
    /* precise: the driver must not contract a * b + c into an fma, so elementwise results
     * match the reference bit for bit (the matmul's own accumulation may still use fma). */
    vk_text_printf(t, "%s%s v%d%s = ", op->dtype == TC_F32 || op->dtype == TC_F64 ? "precise " : "", T, (int)i,
                   suffix);
    prim_expr(g, t, op, names[0].s ? names[0].s : "0", names[1].s ? names[1].s : "0", names[2].s ? names[2].s : "0",
              in_dtype);
    vk_text_printf(t, ";\n");
    for (int a = 0; a < 3; a++) free(names[a].s);
    return;
  }
  case TC_KOP_STORE:
  case TC_KOP_STORE_ADD: {
    vk_text val = {0};
    if (op->args[0] < 0 || op->args[0] >= i) {
      snprintf(g->err, sizeof g->err, "op %d: store of a missing value", (int)i);
      return;
    }
    arg_name(g, &val, op->args[0], suffix, pc);
    vk_text idx = {0};
    vk_text_printf(&idx, "p.o%d + ", (int)op->buffer);
    vk_gen_index(g, &idx, &op->index, vars, suffix);
    if (g->err[0]) {
      free(val.s);
      free(idx.s);
      return;
    }
    if (op->index.indirect >= 0) {
      /* scatter: an index outside the buffer is skipped */
      vk_text_printf(t, "{ int ix = %s; if (ix >= p.o%d && ix < p.o%d + ", idx.s, (int)op->buffer, (int)op->buffer);
      vk_gen_expr_ref(g, t, TC_AT(tc_kbuffer, k->buffers, op->buffer)->numel);
      vk_text_printf(t, ") { ");
      if (op->kind == TC_KOP_STORE_ADD && TC_AT(tc_kbuffer, k->buffers, op->buffer)->dtype == TC_F32)
        vk_text_printf(t, "tc_atomic_add_f32_%s(ix, %s);", bufid, val.s);
      else if (op->kind == TC_KOP_STORE_ADD && TC_AT(tc_kbuffer, k->buffers, op->buffer)->dtype == TC_F64)
        vk_text_printf(t, "tc_atomic_add_f64_%s(ix, %s);", bufid, val.s);
      else
        store_stmt(g, t, op, bufid, "ix", val.s);
      vk_text_printf(t, " } }\n");
    } else {
      if (op->kind == TC_KOP_STORE_ADD && TC_AT(tc_kbuffer, k->buffers, op->buffer)->dtype == TC_F32)
        vk_text_printf(t, "tc_atomic_add_f32_%s(%s, %s);\n", bufid, idx.s, val.s);
      else if (op->kind == TC_KOP_STORE_ADD && TC_AT(tc_kbuffer, k->buffers, op->buffer)->dtype == TC_F64)
        vk_text_printf(t, "tc_atomic_add_f64_%s(%s, %s);\n", bufid, idx.s, val.s);
      else {
        store_stmt(g, t, op, bufid, idx.s, val.s);
        vk_text_printf(t, "\n");
      }
    }
    free(val.s);
    free(idx.s);
    return;
  }
  case TC_KOP_ACC:
    snprintf(g->err, sizeof g->err, "op %d: ACC outside a matmul epilogue", (int)i);
    return;
  default:
    snprintf(g->err, sizeof g->err, "op %d: kind %d not handled here", (int)i, (int)op->kind);
  }
}

/* Emits the atomic float add helpers for every f32/f64 buffer a STORE_ADD targets: a CAS loop
 * on the bits, portable to devices without float atomics. */
void vk_gen_atomic_helpers(vk_gen *g, vk_text *t) {
  const tc_kernel_desc *k = g->k;
  bool done[1024] = {false};
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = op_at(k, i);
    if (op->kind != TC_KOP_STORE_ADD || op->buffer < 0 || op->buffer >= k->n_buffers || op->buffer >= 1024 ||
        done[op->buffer])
      continue;
    done[op->buffer] = true;
    int32_t bd = TC_AT(tc_kbuffer, k->buffers, op->buffer)->dtype;
    char id[64];
    vk_buffer_ident(k, op->buffer, id, sizeof id);
    if (bd == TC_F32)
      vk_text_printf(t,
                     "void tc_atomic_add_f32_%s(int ix, float v) {\n"
                     "  uint old = %s_u[ix];\n"
                     "  for (;;) {\n"
                     "    uint want = floatBitsToUint(uintBitsToFloat(old) + v);\n"
                     "    uint seen = atomicCompSwap(%s_u[ix], old, want);\n"
                     "    if (seen == old) break;\n"
                     "    old = seen;\n"
                     "  }\n"
                     "}\n\n",
                     id, id, id);
    else if (bd == TC_F64)
      vk_text_printf(t,
                     "void tc_atomic_add_f64_%s(int ix, double v) {\n"
                     "  uint64_t old = %s_u[ix];\n"
                     "  for (;;) {\n"
                     "    uint64_t want = doubleBitsToUint64(uint64BitsToDouble(old) + v);\n"
                     "    uint64_t seen = atomicCompSwap(%s_u[ix], old, want);\n"
                     "    if (seen == old) break;\n"
                     "    old = seen;\n"
                     "  }\n"
                     "}\n\n",
                     id, id, id);
  }
}

bool vk_gen_check_kernel(vk_gen *g) {
  const tc_kernel_desc *k = g->k;
  const vk_device_caps *c = &g->ctx->caps;
  for (int32_t i = 0; i < k->n_buffers; i++) {
    const tc_kbuffer *b = TC_AT(tc_kbuffer, k->buffers, i);
    if (b->dtype == TC_I64 || b->dtype == TC_F64) g->uses_i64 = true;
    if (b->dtype == TC_BOOL) g->uses_u8 = true;
  }
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = op_at(k, i);
    int32_t d = op->dtype;
    if (d == TC_I64 || d == TC_F64) g->uses_i64 = true;
    if (op->kind == TC_KOP_STORE_ADD) g->uses_atomic = true;
    if (d != TC_F32 && d != TC_F64 && d != TC_I32 && d != TC_I64 && d != TC_BOOL) {
      snprintf(g->err, sizeof g->err, "op %d: dtype %d is not supported", (int)i, (int)d);
      return false;
    }
  }
  if (g->uses_i64 && !c->i64) {
    snprintf(g->err, sizeof g->err, "the device lacks shaderInt64 (64-bit values in the kernel)");
    return false;
  }
  if (g->uses_u8 && !c->storage8) {
    snprintf(g->err, sizeof g->err, "the device lacks storageBuffer8BitAccess (bool buffers)");
    return false;
  }
  for (int32_t i = 0; i < k->n_ops; i++)
    if (op_at(k, i)->dtype == TC_F64 && !c->f64) {
      snprintf(g->err, sizeof g->err, "the device lacks shaderFloat64");
      return false;
    }
  return true;
}
