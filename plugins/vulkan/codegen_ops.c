/* codegen_ops.c — what every generated shader shares: GLSL types and literals, size expressions (computed in the shader from the push-constant symbols, so one
 * pipeline serves every size), buffer bindings, and one kernel op as a GLSL statement. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

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

int32_t vk_value_dtype(const vk_gen *g, int32_t dtype) { return dtype == TC_F32 && g->f32_emulate ? TC_F64 : dtype; }

const char *vk_value_type(const vk_gen *g, int32_t dtype) { return vk_glsl_type(vk_value_dtype(g, dtype)); }

const char *vk_vec4_type(const vk_gen *g, int32_t dtype) {
  if (dtype == TC_F32) return g->f32_emulate ? "uvec4" : "vec4";
  return "ivec4";
}

/* The type a buffer of dtype holds in memory (bool is one byte; an emulated f32 its bits). */
static const char *storage_type(const vk_gen *g, int32_t dtype) {
  if (dtype == TC_F32 && g->f32_emulate) return "uint";
  return dtype == TC_BOOL ? "uint8_t" : vk_glsl_type(dtype);
}

void vk_gen_from_storage(const vk_gen *g, tck_str *t, int32_t dtype, const char *raw) {
  if (dtype == TC_BOOL) tck_str_printf(t, "(uint(%s) != 0u)", raw);
  else if (dtype == TC_F32 && g->f32_emulate) tck_str_printf(t, "tc_f32_widen(%s)", raw);
  else if (dtype == TC_F32 && vk_gen_simulates_ftz(g)) tck_str_printf(t, "tc_ftz(%s)", raw);
  else tck_str_puts(t, raw);
}

void vk_gen_to_storage(const vk_gen *g, tck_str *t, int32_t dtype, const char *val) {
  if (dtype == TC_BOOL) tck_str_printf(t, "uint8_t(%s ? 1u : 0u)", val);
  else if (dtype == TC_F32 && g->f32_emulate) tck_str_printf(t, "tc_f32_narrow(%s)", val);
  else tck_str_puts(t, val);
}


bool vk_expr_is_const(const vk_gen *g, int32_t id, int64_t c) { return tck_exprs_is_const(&g->x, id, c); }

void vk_gen_expr_ref(vk_gen *g, tck_str *t, int32_t id) {
  if (id >= 0) tck_exprs_mark(&g->x, id);
  tck_exprs_ref(t, &g->x, id);
}

void vk_gen_exprs_declare(vk_gen *g, tck_str *t, int indent) { tck_exprs_declare(t, &g->x, indent / 2); }

/* A GLSL identifier for buffer i: its name when that is one, else buf<i>. */
void vk_buffer_ident(const tc_kernel_desc *k, int32_t i, char *out, size_t n) {
  const tc_kbuffer *b = tck_kernel_buffer(k, i);
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

/* IEEE behaviour where the device can promise it: without these execution modes a driver may
 * flush subnormals (NVIDIA's did: 1e-40 + 0 gave 0, eq(0, 1e-40) was true) and assume no NaN,
 * inf or -0 (lavapipe folded NaN * -0.0 to 0). SPIR-V ids: DenormPreserve mode 4459 (capability
 * 4464), SignedZeroInfNanPreserve mode 4461 (capability 4466); the operand is the float width. */
static void gen_float_controls(const vk_gen *g, tck_str *h) {
  const vk_device_caps *c = &g->ctx->caps;
  bool any = c->denorm_preserve[0] || c->signed_zero_inf_nan_preserve[0];
  if (!any) return;
  tck_str_printf(h, "#extension GL_EXT_spirv_intrinsics : require\n");
  for (int w = 0; w < (g->uses_f64 ? 2 : 1); w++) {
    if (c->denorm_preserve[w]) tck_str_printf(h, "spirv_execution_mode(capabilities = [4464], 4459, %d);\n", 32 << w);
    if (c->signed_zero_inf_nan_preserve[w])
      tck_str_printf(h, "spirv_execution_mode(capabilities = [4466], 4461, %d);\n", 32 << w);
  }
}

/* True when an index check of the kernel records its errors in buffer b. */
static bool is_index_record(const tc_kernel_desc *k, int32_t b) {
  for (int32_t i = 0; i < k->n_ops; i++)
    if (tck_kernel_op(k, i)->kind == TC_KOP_INDEX_CHECK && tck_kernel_op(k, i)->buffer == b) return true;
  return false;
}

/* ABI 2.3's record of the call's first out-of-range index (tc_index_error: flag, site, value,
 * bound, 64-bit words at the buffer's offset), one helper per record buffer: the flag's low
 * word is claimed with a 32-bit compare-and-swap (every Vulkan device has 32-bit buffer atomics;
 * 64-bit ones are optional), so of the invocations that meet a bad index exactly one writes. */
static void gen_index_error_helpers(const vk_gen *g, tck_str *h) {
  const tc_kernel_desc *k = g->k;
  for (int32_t b = 0; g->uses_index_error && b < k->n_buffers; b++) {
    if (!is_index_record(k, b)) continue;
    char id[64];
    vk_buffer_ident(k, b, id, sizeof id);
    tck_str_printf(h, "// the call's first out-of-range index: claim the flag, then write site, value, bound\n");
    tck_str_printf(h, "void tc_index_error_%s(int64_t site, int64_t value, int64_t bound) {\n", id);
    tck_str_printf(h, "  if (atomicCompSwap(%s_w[uint(p.o%d) * 2u], 0u, 1u) == 0u) {\n", id, (int)b);
    for (int w = 1; w <= 3; w++)
      tck_str_printf(h, "    %s[p.o%d + %d] = %s;\n", id, (int)b, w, w == 1 ? "site" : w == 2 ? "value" : "bound");
    tck_str_printf(h, "  }\n}\n\n");
  }
}

void vk_gen_index_locals(vk_gen *g, tck_str *t) {
  const tc_kernel_desc *k = g->k;
  for (int32_t b = 0; g->uses_index_error && b < k->n_buffers; b++) {
    if (!is_index_record(k, b)) continue;
    tck_str_printf(t, "  // an out-of-range index of this invocation, recorded once at the end (ABI 2.3)\n");
    tck_str_printf(t, "  bool bad%d = false;\n  int64_t bad%d_site = 0l, bad%d_value = 0l, bad%d_bound = 0l;\n", (int)b, (int)b,
                   (int)b, (int)b);
    g->index_local = true;
  }
}

void vk_gen_index_flush(vk_gen *g, tck_str *t, int indent) {
  const tc_kernel_desc *k = g->k;
  for (int32_t b = 0; g->index_local && b < k->n_buffers; b++) {
    if (!is_index_record(k, b)) continue;
    char id[64];
    vk_buffer_ident(k, b, id, sizeof id);
    tck_str_indent(t, indent);
    tck_str_printf(t, "if (bad%d) tc_index_error_%s(bad%d_site, bad%d_value, bad%d_bound);\n", (int)b, id, (int)b, (int)b,
                   (int)b);
  }
}

void vk_gen_prologue(vk_gen *g, tck_str *h, const tck_str *body) {
  const tc_kernel_desc *k = g->k;
  tck_str_printf(h, "#version 450\n");
  tck_str_printf(h, "// tc kernel '%s' of graph '%s' (generated by the vulkan plugin)\n", k->name ? k->name : "?",
                 g->list->name ? g->list->name : "?");
  if (g->uses_i64) tck_str_printf(h, "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n");
  if (g->uses_u8) tck_str_printf(h, "#extension GL_EXT_shader_8bit_storage : require\n");
  if (g->uses_subgroups) {
    tck_str_printf(h, "#extension GL_KHR_shader_subgroup_basic : require\n");
    tck_str_printf(h, "#extension GL_KHR_shader_subgroup_shuffle : require\n");
  }
  if (g->uses_unroll) tck_str_printf(h, "#extension GL_EXT_control_flow_attributes : require\n");
  gen_float_controls(g, h);
  tck_str_printf(h, "\n");
  for (int32_t i = 0; i < k->n_buffers; i++) {
    const tc_kbuffer *b = tck_kernel_buffer(k, i);
    char id[64];
    vk_buffer_ident(k, i, id, sizeof id);
    const char *ro = b->role == TC_BUF_INPUT ? "readonly " : "";
    tck_str_printf(h, "layout(std430, set = 0, binding = %d) %sbuffer B%d { %s %s[]; };%s\n", (int)i, ro, (int)i,
                   storage_type(g, b->dtype), id, b->dtype == TC_F32 && g->f32_emulate ? " // f32 bits" : "");
    char v4[80];
    snprintf(v4, sizeof v4, "%s_v4[", id);
    if ((b->dtype == TC_F32 || b->dtype == TC_I32) && body && body->data && strstr(body->data, v4))
      tck_str_printf(h, "layout(std430, set = 0, binding = %d) %sbuffer B%dv { %s %s_v4[]; };\n", (int)i, ro, (int)i,
                     vk_vec4_type(g, b->dtype), id);
    if (b->dtype == TC_F32 && g->uses_atomic)
      tck_str_printf(h, "layout(std430, set = 0, binding = %d) buffer B%du { uint %s_u[]; };\n", (int)i, (int)i, id);
    if (b->dtype == TC_F64 && g->uses_atomic)
      tck_str_printf(h, "layout(std430, set = 0, binding = %d) buffer B%du { uint64_t %s_u[]; };\n", (int)i, (int)i, id);
    if (g->uses_index_error && is_index_record(k, i)) /* the record's 32-bit words, for the flag's atomic */
      tck_str_printf(h, "layout(std430, set = 0, binding = %d) buffer B%dw { uint %s_w[]; };\n", (int)i, (int)i, id);
  }
  tck_str_printf(h, "\n// sizes: symbols s*, and each buffer's element offset o* (bound at a coarser offset)\n");
  tck_str_printf(h, "layout(push_constant) uniform tc_push {\n");
  for (int32_t s = 0; s < g->list->n_syms; s++) tck_str_printf(h, "  int s%d;\n", (int)s);
  for (int32_t i = 0; i < k->n_buffers; i++) tck_str_printf(h, "  int o%d;\n", (int)i);
  if (g->list->n_syms + k->n_buffers == 0) tck_str_printf(h, "  int unused;\n");
  tck_str_printf(h, "} p;\n\n");
  if (vk_gen_simulates_ftz(g))
    tck_str_printf(h, "// TC_VULKAN_SIMULATE_FTZ: a flushing driver's f32 (subnormal loads and results become +-0)\n"
                      "float tc_ftz(float x) { uint u = floatBitsToUint(x); return (u & 0x7f800000u) == 0u ? "
                      "uintBitsToFloat(u & 0x80000000u) : x; }\n\n");
  vk_gen_math_helpers(g, h, body ? body->data : NULL);
  vk_gen_atomic_helpers(g, h);
  gen_index_error_helpers(g, h);
  if (body && body->data) tck_str_printf(h, "%s", body->data);
}

void vk_gen_const(tck_str *t, int32_t dtype, double f, int64_t i) {
  switch (dtype) {
  case TC_BOOL: tck_str_printf(t, "%s", f != 0.0 || i != 0 ? "true" : "false"); break;
  case TC_I32: tck_str_printf(t, i < 0 ? "(%lld)" : "%lld", (long long)i); break;
  case TC_I64:
    if (i == INT64_MIN)
      tck_str_printf(t, "(-9223372036854775807l - 1l)");
    else
      tck_str_printf(t, i < 0 ? "(%lldl)" : "%lldl", (long long)i);
    break;
  case TC_F32:
    if (isnan(f))
      tck_str_printf(t, "uintBitsToFloat(0x7fc00000u)");
    else if (isinf(f))
      tck_str_printf(t, f > 0 ? "uintBitsToFloat(0x7f800000u)" : "uintBitsToFloat(0xff800000u)");
    else if (f == 0.0)
      tck_str_printf(t, signbit(f) ? "(-0.0)" : "0.0");
    else
      tck_str_printf(t, "float(%.9g)", (double)(float)f);
    break;
  case TC_F64:
    if (isnan(f) || isinf(f)) {
      uint64_t bits;
      memcpy(&bits, &f, sizeof bits);
      tck_str_printf(t, "packDouble2x32(uvec2(0x%08xu, 0x%08xu))", (unsigned)(bits & 0xffffffffu), (unsigned)(bits >> 32));
    } else if (f == 0.0) {
      tck_str_printf(t, signbit(f) ? "(-0.0lf)" : "0.0lf");
    } else {
      tck_str_printf(t, "%.17elf", f); /* exponent form: always a valid double literal */
    }
    break;
  default: tck_str_printf(t, "0");
  }
}


/* The element index (offset, strides, indirect term) over vars, parenthesized. A variable
 * not in scope (NULL) with a nonzero stride is an error. */
void vk_gen_index(vk_gen *g, tck_str *t, const tc_index *ix, const char *const *vars, const char *suffix) {
  const char *names[TC_MAX_RANK + 1];
  for (int32_t d = 0; d < ix->n_vars && d <= TC_MAX_RANK; d++) {
    names[d] = vars[d] ? vars[d] : "0";
    if (!vars[d] && !vk_expr_is_const(g, tck_index_stride(ix, d), 0))
      snprintf(g->err, sizeof g->err, "an index uses loop variable %d outside its loop", (int)d);
  }
  tck_exprs_mark_index(&g->x, ix);
  tck_str_puts(t, "(");
  tck_index_emit(t, &g->x, ix, names);
  if (ix->indirect >= 0) {
    bool comp = g->percomp && g->percomp[ix->indirect];
    tck_str_printf(t, " + int(v%d%s) * ", (int)ix->indirect, comp ? suffix : "");
    vk_gen_expr_ref(g, t, ix->indirect_stride);
  }
  tck_str_puts(t, ")");
}

static bool is_float(int32_t d) { return d == TC_F32 || d == TC_F64; }

/* With f32 emulated, whether an f32 result of prim computed in double is already an f32 value
 * (no rounding): sign and magnitude operations, selections, rounding to integers, fmod. */
static bool exact_in_double(int32_t prim) {
  switch (prim) {
  case TC_PRIM_NEG: case TC_PRIM_ABS: case TC_PRIM_FLOOR: case TC_PRIM_CEIL: case TC_PRIM_ROUND: case TC_PRIM_SIGN:
  case TC_PRIM_MAX: case TC_PRIM_MIN: case TC_PRIM_WHERE: case TC_PRIM_FMOD:
    return true;
  default: return false;
  }
}

/* An emulated f32 op whose double form needs its own helper to round once and correctly:
 * division, square root and its reciprocal (Vulkan's f64 ones are not correctly rounded, so
 * f32_ops.glsl fixes the last bit exactly), and conversions into f32. True when emitted. */
static bool emulated_f32_expr(vk_gen *g, tck_str *t, const tc_kop *op, const char *a, const char *b, int32_t d) {
  int32_t od = op->dtype;
  if (!g->f32_emulate || od != TC_F32) return false;
  switch (op->prim) {
  case TC_PRIM_DIV: tck_str_printf(t, "tc_f32_div(%s, %s)", a, b); return true;
  case TC_PRIM_RECIPROCAL: tck_str_printf(t, "tc_f32_div(1.0lf, %s)", a); return true;
  case TC_PRIM_SQRT: tck_str_printf(t, "tc_f32_sqrt(%s)", a); return true;
  case TC_PRIM_RSQRT: tck_str_printf(t, "tc_f32_rsqrt(%s)", a); return true;
  case TC_PRIM_ERF: tck_str_printf(t, "tc_f32r(tc_f32_erf(%s))", a); return true;
  case TC_PRIM_CONVERT:
    if (d == TC_F32) tck_str_printf(t, "%s", a);
    else if (d == TC_F64) tck_str_printf(t, "tc_f32r(%s)", a);
    else if (d == TC_BOOL) tck_str_printf(t, "(%s ? 1.0lf : 0.0lf)", a);
    /* an integer's f32 is never subnormal: the device's conversion, then exactly to double */
    else tck_str_printf(t, "double(float(%s))", a);
    return true;
  default: return false;
  }
}
static const char *fsuf(int32_t d) { return d == TC_F64 ? "f64" : d == TC_I64 ? "i64" : d == TC_I32 ? "i32" : "f32"; }

/* The name of op a's value as seen from the op being emitted (component suffix when a varies
 * per component in the current emission). */
static void arg_name(vk_gen *g, tck_str *t, int32_t a, const char *suffix, const bool *percomp) {
  tck_str_printf(t, "v%d%s", (int)a, percomp && percomp[a] ? suffix : "");
}

static void prim_expr_value(vk_gen *g, tck_str *t, const tc_kop *op, const char *a, const char *b, const char *c,
                            int32_t in_dtype);

/* op's value from operands a, b, c of dtype in_dtype. With f32 emulated, an f32 result computed
 * in double is rounded once to f32 (tc_f32r): exact for + - * of f32 operands (their double
 * results round correctly to f32: 53 >= 2 * 24 + 2), within the f64 functions' error for exp,
 * log, sin, cos, tanh, erf, pow. */
static void prim_expr(vk_gen *g, tck_str *t, const tc_kop *op, const char *a, const char *b, const char *c,
                      int32_t in_dtype) {
  if (emulated_f32_expr(g, t, op, a, b, in_dtype)) return;
  bool round = g->f32_emulate && op->dtype == TC_F32 && !exact_in_double(op->prim);
  bool flush = vk_gen_simulates_ftz(g) && op->dtype == TC_F32; /* TC_VULKAN_SIMULATE_FTZ */
  if (round || flush) tck_str_puts(t, round ? "tc_f32r(" : "tc_ftz(");
  prim_expr_value(g, t, op, a, b, c, in_dtype);
  if (round || flush) tck_str_puts(t, ")");
}

static void prim_expr_value(vk_gen *g, tck_str *t, const tc_kop *op, const char *a, const char *b, const char *c,
                            int32_t in_dtype) {
  int32_t d = vk_value_dtype(g, in_dtype), od = vk_value_dtype(g, op->dtype);
  const char *T = vk_glsl_type(d);
  bool f = is_float(d), isint = d == TC_I32 || d == TC_I64;
  switch (op->prim) {
  case TC_PRIM_NEG: tck_str_printf(t, "(-%s)", a); return;
  case TC_PRIM_ABS:
    if (f) tck_str_printf(t, "abs(%s)", a);
    else tck_str_printf(t, "(%s < %s(0) ? -%s : %s)", a, T, a, a);
    return;
  case TC_PRIM_EXP: tck_str_printf(t, "tc_exp_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_LOG: tck_str_printf(t, "tc_log_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_SQRT: tck_str_printf(t, "sqrt(%s)", a); return;
  case TC_PRIM_RSQRT: tck_str_printf(t, "inversesqrt(%s)", a); return;
  case TC_PRIM_SIN: tck_str_printf(t, "tc_sin_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_COS: tck_str_printf(t, "tc_cos_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_TANH: tck_str_printf(t, "tc_tanh_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_ERF: tck_str_printf(t, "tc_erf_%s(%s)", fsuf(d), a); return;
  case TC_PRIM_FLOOR: tck_str_printf(t, f ? "floor(%s)" : "(%s)", a); return;
  case TC_PRIM_CEIL: tck_str_printf(t, f ? "ceil(%s)" : "(%s)", a); return;
  case TC_PRIM_ROUND: /* f64 (and f32 emulated in it): glsl/round_f64.glsl, not roundEven */
    tck_str_printf(t, d == TC_F64 ? "tc_round_f64(%s)" : f ? "roundEven(%s)" : "(%s)", a);
    return;
  case TC_PRIM_SIGN:
    if (f) tck_str_printf(t, "(isnan(%s) ? %s : (%s > %s(0) ? %s(1) : (%s < %s(0) ? %s(-1) : %s)))", a, a, a, T, T, a, T, T, a);
    else tck_str_printf(t, "(%s > %s(0) ? %s(1) : (%s < %s(0) ? %s(-1) : %s(0)))", a, T, T, a, T, T, T);
    return;
  case TC_PRIM_RECIPROCAL: tck_str_printf(t, "(%s(1) / %s)", T, a); return;
  case TC_PRIM_LOGICAL_NOT: tck_str_printf(t, "(!%s)", a); return;
  case TC_PRIM_ISNAN: tck_str_printf(t, f ? "isnan(%s)" : "false", a); return;
  case TC_PRIM_ADD: tck_str_printf(t, d == TC_BOOL ? "(%s || %s)" : "(%s + %s)", a, b); return;
  case TC_PRIM_SUB: tck_str_printf(t, "(%s - %s)", a, b); return;
  case TC_PRIM_MUL: tck_str_printf(t, d == TC_BOOL ? "(%s && %s)" : "(%s * %s)", a, b); return;
  case TC_PRIM_DIV:
    if (isint) tck_str_printf(t, "(%s == %s(0) ? %s(0) : %s / %s)", b, T, T, a, b);
    else tck_str_printf(t, "tc_div_%s(%s, %s)", fsuf(d), a, b);
    return;
  case TC_PRIM_POW: tck_str_printf(t, "tc_pow_%s(%s, %s)", fsuf(d), a, b); return;
  case TC_PRIM_MAX:
    if (d == TC_BOOL) tck_str_printf(t, "(%s || %s)", a, b);
    else tck_str_printf(t, "tc_max_%s(%s, %s)", fsuf(d), a, b);
    return;
  case TC_PRIM_MIN:
    if (d == TC_BOOL) tck_str_printf(t, "(%s && %s)", a, b);
    else tck_str_printf(t, "tc_min_%s(%s, %s)", fsuf(d), a, b);
    return;
  case TC_PRIM_REMAINDER: tck_str_printf(t, "tc_rem_%s(%s, %s)", fsuf(d), a, b); return;
  case TC_PRIM_FMOD: tck_str_printf(t, "tc_fmod_%s(%s, %s)", fsuf(d), a, b); return;
  case TC_PRIM_EQ: tck_str_printf(t, "(%s == %s)", a, b); return;
  case TC_PRIM_NE: tck_str_printf(t, "(%s != %s)", a, b); return;
  case TC_PRIM_LT: tck_str_printf(t, d == TC_BOOL ? "(int(%s) < int(%s))" : "(%s < %s)", a, b); return;
  case TC_PRIM_LE: tck_str_printf(t, d == TC_BOOL ? "(int(%s) <= int(%s))" : "(%s <= %s)", a, b); return;
  case TC_PRIM_GT: tck_str_printf(t, d == TC_BOOL ? "(int(%s) > int(%s))" : "(%s > %s)", a, b); return;
  case TC_PRIM_GE: tck_str_printf(t, d == TC_BOOL ? "(int(%s) >= int(%s))" : "(%s >= %s)", a, b); return;
  case TC_PRIM_AND: tck_str_printf(t, d == TC_BOOL ? "(%s && %s)" : "(%s & %s)", a, b); return;
  case TC_PRIM_OR: tck_str_printf(t, d == TC_BOOL ? "(%s || %s)" : "(%s | %s)", a, b); return;
  case TC_PRIM_WHERE: tck_str_printf(t, "(%s ? %s : %s)", a, b, c); return;
  case TC_PRIM_CONVERT:
    if (od == d) tck_str_printf(t, "%s", a);
    else if (od == TC_BOOL) tck_str_printf(t, d == TC_BOOL ? "%s" : "(%s != %s(0))", a, T);
    else if (d == TC_BOOL) tck_str_printf(t, "%s(%s ? 1 : 0)", vk_glsl_type(od), a);
    else if (f && (od == TC_I32 || od == TC_I64)) tck_str_printf(t, "tc_ftoi_%s_%s(%s)", fsuf(d), fsuf(od), a);
    /* Sign extension spelled out: Mesa 22.3 (lavapipe) folds int64_t(int) compared with a
     * 64-bit constant wrongly (an i32 gather index then reads as out of range). */
    else if (d == TC_I32 && od == TC_I64) tck_str_printf(t, "packInt2x32(ivec2(%s, %s >> 31))", a, a);
    else tck_str_printf(t, "%s(%s)", vk_glsl_type(od), a);
    return;
  default:
    snprintf(g->err, sizeof g->err, "prim %d is not elementwise", (int)op->prim);
    tck_str_printf(t, "%s(0)", vk_glsl_type(od));
  }
}

/* The store of value expression `val` (of dtype) into buffer b at element index `idx`. */
static void store_stmt(vk_gen *g, tck_str *t, const tc_kop *op, const char *bufid, const char *idx, const char *val) {
  int32_t bd = tck_kernel_buffer(g->k, op->buffer)->dtype;
  if (op->kind == TC_KOP_STORE) {
    tck_str_printf(t, "%s[%s] = ", bufid, idx);
    vk_gen_to_storage(g, t, bd, val);
    tck_str_puts(t, ";");
    return;
  }
  /* STORE_ADD: atomic, since an indirect index (scatter-add) may collide across invocations. */
  switch (bd) {
  case TC_I32: tck_str_printf(t, "atomicAdd(%s[%s], %s);", bufid, idx, val); break;
  case TC_I64: tck_str_printf(t, "atomicAdd(%s[%s], %s);", bufid, idx, val); break;
  case TC_BOOL: tck_str_printf(t, "if (%s) %s[%s] = uint8_t(1u);", val, bufid, idx); break;
  default: break;
  }
}

void vk_gen_op(vk_gen *g, tck_str *t, int indent, int32_t i, const char *const *vars, const char *suffix,
               const char *value_override) {
  const bool *pc = g->percomp;
  const tc_kernel_desc *k = g->k;
  const tc_kop *op = tck_kernel_op(k, i);
  const char *T = vk_value_type(g, op->dtype);
  char bufid[64] = "";
  if (op->kind == TC_KOP_LOAD || op->kind == TC_KOP_STORE || op->kind == TC_KOP_STORE_ADD ||
      op->kind == TC_KOP_INDEX_CHECK) {
    if (op->buffer < 0 || op->buffer >= k->n_buffers) {
      snprintf(g->err, sizeof g->err, "op %d: buffer %d out of range", (int)i, (int)op->buffer);
      return;
    }
    vk_buffer_ident(k, op->buffer, bufid, sizeof bufid);
  }
  tck_str_indent(t, indent);
  if (value_override) {
    tck_str_printf(t, "%s v%d%s = %s;\n", T, (int)i, suffix, value_override);
    return;
  }
  switch (op->kind) {
  case TC_KOP_LOAD: {
    const tc_kbuffer *b = tck_kernel_buffer(k, op->buffer);
    tck_str_printf(t, "%s v%d%s;", T, (int)i, suffix);
    tck_str_printf(t, " { int ix = p.o%d + ", (int)op->buffer);
    vk_gen_index(g, t, op->index, vars, suffix);
    tck_str_printf(t, "; ");
    char raw[80];
    snprintf(raw, sizeof raw, "%s[ix]", bufid);
    if (op->index->indirect >= 0) {
      /* gather: an index outside the buffer reads 0, never out of bounds */
      tck_str_printf(t, "v%d%s = (ix >= p.o%d && ix < p.o%d + ", (int)i, suffix, (int)op->buffer, (int)op->buffer);
      vk_gen_expr_ref(g, t, b->numel);
      tck_str_printf(t, ") ? ");
      vk_gen_from_storage(g, t, b->dtype, raw);
      tck_str_printf(t, " : %s(0); }\n", T);
    } else {
      tck_str_printf(t, "v%d%s = ", (int)i, suffix);
      vk_gen_from_storage(g, t, b->dtype, raw);
      tck_str_printf(t, "; }\n");
    }
    return;
  }
  case TC_KOP_CONST:
    tck_str_printf(t, "%s v%d%s = ", T, (int)i, suffix);
    if (op->dtype == TC_F32 && g->f32_emulate) /* the f32 constant's exact value, as a double */
      vk_gen_const(t, TC_F64, (double)(float)op->fconst, op->iconst);
    else
      vk_gen_const(t, op->dtype, op->fconst, op->iconst);
    tck_str_printf(t, ";\n");
    return;
  case TC_KOP_INDEX:
    if (op->dtype == TC_F32 && g->f32_emulate) { /* an integer's f32: never subnormal */
      tck_str_printf(t, "double v%d%s = double(float(", (int)i, suffix);
      vk_gen_index(g, t, op->index, vars, suffix);
      tck_str_printf(t, "));\n");
      return;
    }
    tck_str_printf(t, "%s v%d%s = %s(", T, (int)i, suffix, T);
    vk_gen_index(g, t, op->index, vars, suffix);
    tck_str_printf(t, ");\n");
    return;
  case TC_KOP_RANDOM: {
    uint64_t key = (uint64_t)op->iconst;
    tck_str_printf(t, "%s v%d%s = %s(tc_philox_u01(0x%08xu, 0x%08xu, ", T, (int)i, suffix, T, (unsigned)(key & 0xffffffffu),
                   (unsigned)(key >> 32));
    vk_gen_index(g, t, op->index, vars, suffix);
    tck_str_printf(t, ", %s));\n", op->dtype == TC_F64 ? "true" : "false");
    return;
  }
  case TC_KOP_PRIM: {
    tck_str names[3] = {{0}, {0}, {0}};
    int32_t in_dtype = op->dtype;
    int n_args = 0;
    for (int a = 0; a < op->n_args && a < 3; a++) {
      if (op->args[a] < 0) continue;
      if (op->args[a] >= i) {
        snprintf(g->err, sizeof g->err, "op %d: operand %d is not an earlier op", (int)i, (int)op->args[a]);
        return;
      }
      arg_name(g, &names[a], op->args[a], suffix, pc);
      n_args++;
    }
    if (n_args > 0) in_dtype = tck_kernel_op(k, op->args[op->prim == TC_PRIM_WHERE ? 1 : 0])->dtype;
    /* precise: the driver must not contract a * b + c into an fma, so elementwise results
     * match the reference bit for bit (the matmul's own accumulation may still use fma). */
    tck_str_printf(t, "%s%s v%d%s = ", op->dtype == TC_F32 || op->dtype == TC_F64 ? "precise " : "", T, (int)i,
                   suffix);
    prim_expr(g, t, op, names[0].data ? names[0].data : "0", names[1].data ? names[1].data : "0", names[2].data ? names[2].data : "0",
              in_dtype);
    tck_str_printf(t, ";\n");
    for (int a = 0; a < 3; a++) free(names[a].data);
    return;
  }
  case TC_KOP_STORE:
  case TC_KOP_STORE_ADD: {
    tck_str val = {0};
    if (op->n_args < 1 || op->args[0] < 0 || op->args[0] >= i) {
      snprintf(g->err, sizeof g->err, "op %d: store of a missing value", (int)i);
      return;
    }
    arg_name(g, &val, op->args[0], suffix, pc);
    tck_str idx = {0};
    tck_str_printf(&idx, "p.o%d + ", (int)op->buffer);
    vk_gen_index(g, &idx, op->index, vars, suffix);
    if (g->err[0]) {
      free(val.data);
      free(idx.data);
      return;
    }
    if (op->index->indirect >= 0) {
      /* scatter: an index outside the buffer is skipped */
      tck_str_printf(t, "{ int ix = %s; if (ix >= p.o%d && ix < p.o%d + ", idx.data, (int)op->buffer, (int)op->buffer);
      vk_gen_expr_ref(g, t, tck_kernel_buffer(k, op->buffer)->numel);
      tck_str_printf(t, ") { ");
      if (op->kind == TC_KOP_STORE_ADD && tck_kernel_buffer(k, op->buffer)->dtype == TC_F32)
        tck_str_printf(t, "tc_atomic_add_f32_%s(ix, %s);", bufid, val.data);
      else if (op->kind == TC_KOP_STORE_ADD && tck_kernel_buffer(k, op->buffer)->dtype == TC_F64)
        tck_str_printf(t, "tc_atomic_add_f64_%s(ix, %s);", bufid, val.data);
      else
        store_stmt(g, t, op, bufid, "ix", val.data);
      tck_str_printf(t, " } }\n");
    } else {
      if (op->kind == TC_KOP_STORE_ADD && tck_kernel_buffer(k, op->buffer)->dtype == TC_F32)
        tck_str_printf(t, "tc_atomic_add_f32_%s(%s, %s);\n", bufid, idx.data, val.data);
      else if (op->kind == TC_KOP_STORE_ADD && tck_kernel_buffer(k, op->buffer)->dtype == TC_F64)
        tck_str_printf(t, "tc_atomic_add_f64_%s(%s, %s);\n", bufid, idx.data, val.data);
      else {
        store_stmt(g, t, op, bufid, idx.data, val.data);
        tck_str_printf(t, "\n");
      }
    }
    free(val.data);
    free(idx.data);
    return;
  }
  case TC_KOP_INDEX_CHECK: {
    /* ABI 2.3: the value keeps the prims' rule (the kernel reads 0 / skips with it); an
     * out-of-range index also records the call's first error, which the host reports. */
    tck_str a = {0}, b = {0};
    if (op->n_args < 2 || op->args[0] < 0 || op->args[0] >= i || op->args[1] < 0 || op->args[1] >= i) {
      snprintf(g->err, sizeof g->err, "op %d: index check of missing values", (int)i);
      return;
    }
    arg_name(g, &a, op->args[0], suffix, pc);
    arg_name(g, &b, op->args[1], suffix, pc);
    tck_str_printf(t, "// index check (site %lld): out of range -> %s the call's first error, then read 0 / skip\n",
                   (long long)op->iconst, g->index_local ? "note it for" : "record");
    tck_str_indent(t, indent);
    /* One unsigned compare (a negative index reads as a huge one; bounds are sizes, >= 0), not
     * GLSL's &&, which short-circuits into a branch. */
    tck_str_printf(t, "bool v%d%s = uint64_t(%s) < uint64_t(%s);\n", (int)i, suffix, a.data, b.data);
    tck_str_indent(t, indent);
    const int B = (int)op->buffer;
    if (g->index_local) /* noted in registers, recorded when the invocation ends (vk_gen_index_flush) */
      tck_str_printf(t, "if (!v%d%s) { bad%d = true; bad%d_site = %lldl; bad%d_value = %s; bad%d_bound = %s; }\n", (int)i,
                     suffix, B, B, (long long)op->iconst, B, a.data, B, b.data);
    else
      tck_str_printf(t, "if (!v%d%s) tc_index_error_%s(%lldl, %s, %s);\n", (int)i, suffix, bufid, (long long)op->iconst,
                     a.data, b.data);
    free(a.data);
    free(b.data);
    return;
  }
  case TC_KOP_ACC:
    snprintf(g->err, sizeof g->err, "op %d: ACC outside a matmul epilogue", (int)i);
    return;
  default:
    snprintf(g->err, sizeof g->err, "op %d: kind %d not handled here", (int)i, (int)op->kind);
  }
}

bool vk_gen_check_kernel(vk_gen *g) {
  const tc_kernel_desc *k = g->k;
  const vk_device_caps *c = &g->ctx->caps;
  for (int32_t i = 0; i < k->n_buffers; i++) {
    const tc_kbuffer *b = tck_kernel_buffer(k, i);
    if (b->dtype == TC_I64 || b->dtype == TC_F64) g->uses_i64 = true;
    if (b->dtype == TC_BOOL) g->uses_u8 = true;
  }
  for (int32_t i = 0; i < k->n_ops; i++) {
    const tc_kop *op = tck_kernel_op(k, i);
    int32_t d = op->dtype;
    if (d == TC_I64 || d == TC_F64) g->uses_i64 = true;
    if (d == TC_F64) g->uses_f64 = true;
    if (op->kind == TC_KOP_STORE_ADD) g->uses_atomic = true;
    if (op->kind == TC_KOP_INDEX_CHECK) g->uses_index_error = g->uses_i64 = true;
    if (d != TC_F32 && d != TC_F64 && d != TC_I32 && d != TC_I64 && d != TC_BOOL) {
      snprintf(g->err, sizeof g->err, "op %d: dtype %d is not supported", (int)i, (int)d);
      return false;
    }
  }
  if (g->f32_emulate) g->uses_i64 = g->uses_f64 = true; /* f32 values are doubles (vulkan.f32_subnormals) */
  if (g->uses_i64 && !c->i64) {
    snprintf(g->err, sizeof g->err, "the device lacks shaderInt64 (64-bit values in the kernel)");
    return false;
  }
  if (g->uses_u8 && !c->storage8) {
    snprintf(g->err, sizeof g->err, "the device lacks storageBuffer8BitAccess (bool buffers)");
    return false;
  }
  for (int32_t i = 0; i < k->n_ops; i++)
    if ((tck_kernel_op(k, i)->dtype == TC_F64 || g->f32_emulate) && !c->f64) {
      snprintf(g->err, sizeof g->err, "the device lacks shaderFloat64");
      return false;
    }
  return true;
}
