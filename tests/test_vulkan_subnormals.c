/* test_vulkan_subnormals.c — vulkan.f32_subnormals: the option's validation; f32 emulated in
 * f64 (plugins/vulkan/glsl/f32_bits.glsl, f32_ops.glsl) computing the host's IEEE f32 results
 * bit for bit over random bit patterns of every exponent, subnormals and the edges included
 * (+ - * / sqrt are correctly rounded, so the host's float arithmetic, SSE, which keeps
 * subnormals, is the reference); and, on a device simulating NVIDIA's flushing
 * (TC_VULKAN_SIMULATE_FTZ: lavapipe keeps subnormals and cannot be told to flush), auto
 * choosing the emulation, and the conformance suite excusing flushed elements only when the
 * run keeps f32 native. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "tc/tc.h"
#include "test_support.h"

#define assert_contains(hay, needle)                                                                                   \
  cr_assert(strstr((hay), (needle)) != NULL, "expected \"%s\" in \"%s\"", (needle), (hay))

static void setup(void) {
  setenv("TC_CACHE_DIR", "off", 1);
  unsetenv("TC_OPTIONS");
}

TestSuite(vulkan_subnormals, .init = setup, .timeout = 240);

static tc_tensor *arith(tc_tensor *a, tc_tensor *b) {
  tc_scope *s = tc_scope_open();
  /* one output of 5 rows: a+b, a-b, a*b, a/b, sqrt|a| */
  tc_tensor *parts[5] = {tc_add(a, b), tc_sub(a, b), tc_mul(a, b), tc_div(a, b), tc_sqrt(tc_abs(a))};
  tc_tensor *y = tc_cat(5, parts, 0);
  return tc_scope_keep(s, y), tc_scope_close(s), y;
}

Test(vulkan_subnormals, option_is_validated) {
  if (!test_backend_available("vulkan")) cr_skip("vulkan is unavailable here");
  tc_compile_options o = {.struct_size = sizeof o, .backend = "vulkan", .options = "vulkan.f32_subnormals=sometimes"};
  cr_assert_null(tc_compile(TC_FN(arith), 2, &o), "a bad value must be refused");
  assert_contains(tc_last_error(), "vulkan.f32_subnormals");
  assert_contains(tc_last_error(), "auto|emulate|native");
  tc_option_info infos[32];
  int n = tc_backend_options("vulkan", infos, 32);
  bool listed = false;
  for (int i = 0; i < n && i < 32; i++)
    listed |= !strcmp(infos[i].name, "vulkan.f32_subnormals") && infos[i].default_value &&
              !strcmp(infos[i].default_value, "auto");
  cr_assert(listed, "tc_backend_options lists vulkan.f32_subnormals (default auto)");
}

/* Random f32 bit patterns whose exponents cover the whole range (a third subnormal), and the
 * edges; b is a permutation of a's kind, so quotients and products under- and overflow. */
static uint32_t next_bits(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  uint32_t r = (uint32_t)(*s >> 32);
  switch (r % 6) {
  case 0: return r & 0x807fffffu;                 /* subnormal (or zero) */
  case 1: return (r & 0x80ffffffu) | 0x00800000u; /* just above: exponent 1 or 2 */
  case 2: return r & 0xfff00007u;                 /* few significant bits: products land on ties */
  default: return r;                              /* any exponent, NaN and inf too */
  }
}

Test(vulkan_subnormals, emulated_arith_is_ieee_f32_bit_for_bit) {
  if (!test_backend_available("vulkan")) cr_skip("vulkan is unavailable here");
  enum { N = 4096 };
  /* the smallest and largest of each kind, zeros, inf, and operands whose products and
   * quotients are exact ties (3 * 2^-149 / 2, (1 + 2^-23) * 1.5) */
  static const uint32_t edges[] = {0x00000001u, 0x80000001u, 0x007fffffu, 0x00800000u, 0x7f7fffffu, 0xff7fffffu,
                                   0x00000000u, 0x80000000u, 0x7f800000u, 0x3f800000u, 0x00400000u, 0x00000003u,
                                   0x3f000000u, 0x3fc00000u, 0x3f800001u, 0x00000005u};
  enum { N_EDGES = sizeof edges / sizeof edges[0] };
  static float a[N], b[N];
  uint64_t s = 12345;
  for (int i = 0; i < N; i++) {
    uint32_t ua = next_bits(&s), ub = next_bits(&s);
    if (i < N_EDGES * N_EDGES) ua = edges[i % N_EDGES], ub = edges[i / N_EDGES];
    memcpy(&a[i], &ua, 4);
    memcpy(&b[i], &ub, 4);
  }
  int64_t n = N;
  tc_tensor *ta = tc_from_f32(a, 1, &n), *tb = tc_from_f32(b, 1, &n);
  tc_compile_options o = {
      .struct_size = sizeof o, .backend = "vulkan", .fullgraph = true, .options = "vulkan.f32_subnormals=emulate"};
  tc_compiled *f = tc_compile(TC_FN(arith), 2, &o);
  cr_assert_not_null(f, "%s", tc_last_error());
  tc_tensor *y = tc_call(f, (tc_tensor *[]){ta, tb});
  cr_assert_not_null(y, "%s", tc_last_error());
  static float got[5 * N];
  cr_assert_eq(tc_to_host(y, got, sizeof got), TC_OK, "%s", tc_last_error());
  static const char *const names[5] = {"a + b", "a - b", "a * b", "a / b", "sqrt|a|"};
  for (int op = 0; op < 5; op++)
    for (int i = 0; i < N; i++) {
      volatile float x = a[i], z = b[i];
      float want = op == 0 ? x + z : op == 1 ? x - z : op == 2 ? x * z : op == 3 ? x / z : sqrtf(fabsf(x));
      float g = got[op * N + i];
      uint32_t gw, ww;
      memcpy(&gw, &g, 4);
      memcpy(&ww, &want, 4);
      if (isnan(want) && isnan(g)) continue;
      cr_assert_eq(gw, ww, "%s at a = %a, b = %a: got %a (0x%08x), IEEE %a (0x%08x)", names[op], (double)a[i],
                   (double)b[i], (double)g, gw, (double)want, ww);
    }
  tc_release(y);
  tc_compiled_free(f);
  tc_release(ta);
  tc_release(tb);
}

static tc_tensor *add2(tc_tensor *a, tc_tensor *b) {
  return tc_add(a, b);
}

/* 1e-40 + 0 on vulkan with these options. */
static float probe_add(const char *options) {
  float x = 1e-40f, zero = 0.0f, r = -1.0f;
  int64_t one = 1;
  tc_tensor *a = tc_from_f32(&x, 1, &one), *b = tc_from_f32(&zero, 1, &one);
  tc_compile_options o = {.struct_size = sizeof o, .backend = "vulkan", .options = options};
  tc_compiled *f = tc_compile(TC_FN(add2), 2, &o);
  cr_assert_not_null(f, "%s", tc_last_error());
  tc_tensor *y = tc_call(f, (tc_tensor *[]){a, b});
  cr_assert_not_null(y, "%s", tc_last_error());
  cr_assert_eq(tc_to_host(y, &r, sizeof r), TC_OK, "%s", tc_last_error());
  tc_release(y);
  tc_compiled_free(f);
  tc_release(a);
  tc_release(b);
  return r;
}

/* The PyTorch cases of ops that meet subnormals, under options: their results, log in *text. */
static conf_result run_cases(const char *options, char **text) {
  size_t len = 0;
  FILE *log = open_memstream(text, &len);
  cr_assert(log);
  conf_set_options(options);
  conf_result r = {0, 0, 0, 0};
  static const char *const filters[] = {"pytorch.add_", "pytorch.neg_", "pytorch.eq_", "pytorch.sum_rows"};
  for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
    conf_result q = conf_run_all("vulkan", filters[i], false, log);
    r.passed += q.passed, r.failed += q.failed, r.known += q.known;
  }
  conf_set_options(NULL);
  fclose(log);
  return r;
}

Test(vulkan_subnormals, simulated_flushing_device) {
  if (!test_backend_available("vulkan")) cr_skip("vulkan is unavailable here");
  setenv("TC_VULKAN_SIMULATE_FTZ", "1", 1); /* read when the vulkan context is made, below */
  cr_assert_eq(probe_add("vulkan.f32_subnormals=native"), 0.0f, "native f32 on a flushing device flushes 1e-40");
  cr_assert_eq(probe_add(NULL), 1e-40f, "auto emulates f32 there and keeps 1e-40");
  cr_assert_eq(probe_add("vulkan.f32_subnormals=emulate"), 1e-40f);
  char *text = NULL;
  conf_result native = run_cases("vulkan.f32_subnormals=native", &text);
  cr_assert_eq(native.failed, 0, "native: differences beyond the flushed elements:\n%s", text);
  cr_assert_gt(native.known, 0, "native f32 on a flushing device: cases listed KNOWN for flushing:\n%s", text);
  cr_assert(strstr(text, "flushes f32 subnormals"), "%s", text);
  free(text);
  conf_result emulated = run_cases(NULL, &text);
  cr_assert_eq(emulated.failed + emulated.known, 0, "auto (emulated) must match PyTorch without excuses:\n%s", text);
  cr_assert_gt(emulated.passed, 4);
  free(text);
}
