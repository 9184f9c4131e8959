/* tool_kit.h — what the two vulkan bench tools (vk_bench.c, vk_diag.c) share: a minimal host
 * for loading the plugin directly (errors kept for CHECK, plugin logs printed when TC_LOGS
 * names their category) and a small builder for hand-made kernel descriptors. Header-only:
 * each tool is one translation unit built outside the library. */
#ifndef TC_VK_TOOL_KIT_H
#define TC_VK_TOOL_KIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_plugin.h"

static char g_err[4096];
static void kit_err(void *c, const char *m) { (void)c; snprintf(g_err, sizeof g_err, "%s", m); }
static bool kit_on(void *c, const char *cat) { (void)c; const char *e = getenv("TC_LOGS"); return e && strstr(e, cat); }
static void kit_log(void *c, tc_log_level l, const char *cat, const char *m) {
  if (l >= TC_LOG_WARN || kit_on(c, cat)) fprintf(stderr, "[%s] %s\n", cat, m);
}
static const char *kit_opt(void *c, const char *k) { (void)c; (void)k; return NULL; }
static tc_host_api kit_host = {.struct_size = sizeof(tc_host_api), .abi_major = TC_ABI_MAJOR, .abi_minor = TC_ABI_MINOR,
                               .set_error = kit_err, .log = kit_log, .log_enabled = kit_on, .get_option = kit_opt};

#define CHECK(x) do { tc_status st_ = (x); if (st_ != TC_OK) { fprintf(stderr, "%s:%d: %s -> %d: %s\n", __FILE__, __LINE__, #x, st_, g_err); exit(1); } } while (0)

/* Kernel descriptors by hand: expressions, buffers, ops (f32 throughout). */
typedef struct kb { tc_size_expr ex[64]; int n_ex; tc_kop ops[64]; int n_ops; tc_kbuffer bufs[16]; int n_bufs; } kb;
static int ex(kb *b, int op, int a, int c, int64_t v) { b->ex[b->n_ex] = (tc_size_expr){sizeof(tc_size_expr), op, a, c, v}; return b->n_ex++; }
static int C(kb *b, int64_t v) { return ex(b, TC_SX_CONST, 0, 0, v); }
static int bf(kb *b, const char *n, int role, int numel) { b->bufs[b->n_bufs] = (tc_kbuffer){sizeof(tc_kbuffer), n, TC_F32, role, numel}; return b->n_bufs++; }
static tc_index IX(int off, int s0, int s1, int s2) {
  tc_index ix = {.struct_size = sizeof(tc_index), .offset = off, .indirect = -1, .indirect_stride = -1};
  for (int i = 0; i <= TC_MAX_RANK; i++) ix.strides[i] = -1;
  ix.strides[0] = s0, ix.strides[1] = s1, ix.strides[2] = s2;
  return ix;
}
static int op(kb *b, int kind, int loop, int prim, int a0, int a1) {
  b->ops[b->n_ops] = (tc_kop){.struct_size = sizeof(tc_kop), .kind = kind, .dtype = TC_F32, .loop = loop, .prim = prim, .args = {a0, a1, -1}, .buffer = -1};
  b->ops[b->n_ops].index = IX(-1, -1, -1, -1);
  return b->n_ops++;
}
static int ld(kb *b, int loop, int buf, tc_index ix) { int i = op(b, TC_KOP_LOAD, loop, 0, -1, -1); b->ops[i].buffer = buf; b->ops[i].index = ix; return i; }
static int st(kb *b, int loop, int buf, tc_index ix, int v) { int i = op(b, TC_KOP_STORE, loop, 0, v, -1); b->ops[i].buffer = buf; b->ops[i].index = ix; return i; }
static int P1(kb *b, int loop, int p, int x) { return op(b, TC_KOP_PRIM, loop, p, x, -1); }
static int P2(kb *b, int loop, int p, int x, int y) { return op(b, TC_KOP_PRIM, loop, p, x, y); }
static int K(kb *b, int loop, double f) { int i = op(b, TC_KOP_CONST, loop, 0, -1, -1); b->ops[i].fconst = f; return i; }
/* exact GELU: 0.5 * h * (1 + erf(h / sqrt(2))) */
static int gelu(kb *b, int loop, int h) {
  int e = P1(b, loop, TC_PRIM_ERF, P2(b, loop, TC_PRIM_MUL, h, K(b, loop, 0.70710678118654752)));
  return P2(b, loop, TC_PRIM_MUL, P2(b, loop, TC_PRIM_MUL, h, K(b, loop, 0.5)), P2(b, loop, TC_PRIM_ADD, e, K(b, loop, 1.0)));
}

/* The benchmark kernels as the scheduler emits them, built into b (both tools use them: vk_bench
 * compiles and times them, vk_diag times their GLSL under timestamp queries). */
static tc_kernel_desc desc_copy(kb *b, int64_t n) {
  int N = C(b, n), one = C(b, 1), z = C(b, 0);
  int x = bf(b, "in_x", TC_BUF_INPUT, N), y = bf(b, "out_y", TC_BUF_OUTPUT, N);
  st(b, -1, y, IX(z, one, -1, -1), ld(b, -1, x, IX(z, one, -1, -1)));
  return (tc_kernel_desc){.name = "copy", .kind = TC_KERNEL_LOOP, .n_outer = 1, .outer = {N}, .inner = -1};
}
/* gelu(layer_norm(x) * g + b) over rows of n */
static tc_kernel_desc desc_ln_gelu(kb *b, int64_t m, int64_t n) {
  int M = C(b, m), N = C(b, n), MN = C(b, m * n), one = C(b, 1), z = C(b, 0);
  int bx = bf(b, "in_x", TC_BUF_INPUT, MN), bg = bf(b, "in_g", TC_BUF_INPUT, N), bb = bf(b, "in_b", TC_BUF_INPUT, N), by = bf(b, "out_y", TC_BUF_OUTPUT, MN);
  int s0 = op(b, TC_KOP_REDUCE, 0, TC_PRIM_REDUCE_SUM, ld(b, 0, bx, IX(z, N, one, -1)), -1);
  int nf = K(b, -1, (double)n);
  int mean = P2(b, -1, TC_PRIM_DIV, s0, nf);
  int d = P2(b, 1, TC_PRIM_SUB, ld(b, 1, bx, IX(z, N, one, -1)), mean);
  int s1 = op(b, TC_KOP_REDUCE, 1, TC_PRIM_REDUCE_SUM, P2(b, 1, TC_PRIM_MUL, d, d), -1);
  int rstd = P1(b, -1, TC_PRIM_RSQRT, P2(b, -1, TC_PRIM_ADD, P2(b, -1, TC_PRIM_DIV, s1, nf), K(b, -1, 1e-5)));
  int h = P2(b, 2, TC_PRIM_MUL, P2(b, 2, TC_PRIM_SUB, ld(b, 2, bx, IX(z, N, one, -1)), mean), rstd);
  h = P2(b, 2, TC_PRIM_ADD, P2(b, 2, TC_PRIM_MUL, h, ld(b, 2, bg, IX(z, -1, one, -1))), ld(b, 2, bb, IX(z, -1, one, -1)));
  st(b, 2, by, IX(z, N, one, -1), gelu(b, 2, h));
  return (tc_kernel_desc){.name = "layer_norm_gelu", .kind = TC_KERNEL_LOOP, .n_outer = 1, .outer = {M}, .inner = N};
}
/* softmax over rows of n */
static tc_kernel_desc desc_softmax(kb *b, int64_t m, int64_t n) {
  int M = C(b, m), N = C(b, n), MN = C(b, m * n), one = C(b, 1), z = C(b, 0);
  int bx = bf(b, "in_x", TC_BUF_INPUT, MN), by = bf(b, "out_y", TC_BUF_OUTPUT, MN);
  int mx = op(b, TC_KOP_REDUCE, 0, TC_PRIM_REDUCE_MAX, ld(b, 0, bx, IX(z, N, one, -1)), -1);
  int e1 = P1(b, 1, TC_PRIM_EXP, P2(b, 1, TC_PRIM_SUB, ld(b, 1, bx, IX(z, N, one, -1)), mx));
  int sm = op(b, TC_KOP_REDUCE, 1, TC_PRIM_REDUCE_SUM, e1, -1);
  int e2 = P1(b, 2, TC_PRIM_EXP, P2(b, 2, TC_PRIM_SUB, ld(b, 2, bx, IX(z, N, one, -1)), mx));
  st(b, 2, by, IX(z, N, one, -1), P2(b, 2, TC_PRIM_DIV, e2, sm));
  return (tc_kernel_desc){.name = "softmax", .kind = TC_KERNEL_LOOP, .n_outer = 1, .outer = {M}, .inner = N};
}

#endif
