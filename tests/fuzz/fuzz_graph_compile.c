/* fuzz_graph_compile.c — libFuzzer target: bytes as a small tensor program, run eagerly and
 * compiled (capture, simplify, schedule, debug-eager), over two inputs whose shapes and values
 * come from the bytes too (NaN, infinities, -0 and denormals among them).
 *
 * The program is a stack machine read by one fixed C function, prog(): each byte picks an op
 * (unary, binary with broadcasting, a reduction over a dim, a view, matmul, softmax, where,
 * cat, ...) applied to the top of the stack; operand and dim choices come from the following
 * bytes. Bad combinations are expected (shape mismatches, dims out of range): they must be
 * errors. Properties beyond "no crash, no sanitizer report, no leak":
 *   - when both the eager and the compiled call succeed, their results agree (same shape and
 *     dtype; values within a tolerance, NaN where NaN);
 *   - an eager error is never a compiled success with a different shape. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc/tc.h"

enum { PROG_MAX = 48, STACK_MAX = 8 };

static const uint8_t *g_prog;
static size_t g_len;

static uint8_t next_byte(size_t *pc) { return *pc < g_len ? g_prog[(*pc)++] : 0; }

static tc_tensor *unary(uint8_t which, tc_tensor *x) {
  switch (which % 14) {
  case 0: return tc_neg(x);
  case 1: return tc_exp(x);
  case 2: return tc_relu(x);
  case 3: return tc_tanh(x);
  case 4: return tc_abs(x);
  case 5: return tc_sqrt(x);
  case 6: return tc_log(x);
  case 7: return tc_gelu(x);
  case 8: return tc_sigmoid(x);
  case 9: return tc_erf(x);
  case 10: return tc_floor(x);
  case 11: return tc_reciprocal(x);
  case 12: return tc_mul_scalar(x, 0.5);
  default: return tc_add_scalar(x, -1.25);
  }
}

static tc_tensor *binary(uint8_t which, tc_tensor *a, tc_tensor *b) {
  switch (which % 8) {
  case 0: return tc_add(a, b);
  case 1: return tc_sub(a, b);
  case 2: return tc_mul(a, b);
  case 3: return tc_div(a, b);
  case 4: return tc_maximum(a, b);
  case 5: return tc_minimum(a, b);
  case 6: return tc_where(tc_gt(a, b), a, b);
  default: return tc_matmul(a, b);
  }
}

/* The elements of x, its zero sizes counted as one. */
static int64_t extent(const tc_tensor *x) {
  int64_t n = 1;
  for (int d = 0; d < tc_rank(x); d++) n *= tc_size(x, d) > 0 ? tc_size(x, d) : 1;
  return n;
}

/* The program over inputs a and b: every op's result is pushed; the top is returned. */
static tc_tensor *prog(tc_tensor *a, tc_tensor *b) {
  tc_tensor *st[STACK_MAX] = {a, b};
  int n = 2;
  size_t pc = 0;
  for (int step = 0; step < PROG_MAX && pc < g_len; step++) {
    uint8_t op = next_byte(&pc), arg = next_byte(&pc);
    tc_tensor *top = st[n - 1], *second = st[n >= 2 ? n - 2 : 0], *r = NULL;
    int rank = top ? tc_rank(top) : 0, dim = rank > 0 ? (int)(arg % (uint8_t)rank) - (arg & 0x80 ? rank : 0) : 0;
    switch (op % 12) {
    case 0: case 1: case 2: r = unary(arg, top); break;
    case 3: case 4: r = binary(arg, second, top); break;
    case 5: r = tc_sum(top, 1, &dim, arg & 1); break;
    case 6: r = tc_max(top, 1, &dim, arg & 1); break;
    case 7: r = tc_softmax(top, dim); break;
    case 8: r = tc_transpose(top, 0, dim); break;
    case 9: r = tc_slice(top, dim, arg % 3, 1 + arg % 5, 1 + arg % 2); break;
    case 10: {
      int64_t all = -1;
      r = tc_reshape(top, 1, &all);
      break;
    }
    default: r = tc_cat(2, (tc_tensor *[]){second, top}, dim); break;
    }
    if (!r) return NULL; /* the error stands */
    /* repeated cat doubles the sizes, and debug-eager's reductions are slow by design (3.6 s for
     * one program of 4096-element values): keep each input fast. An empty value counts its other
     * dims: a sum over its empty dim is that big (cats grew (1, 0, 811800) before the cap did). */
    if (extent(r) > 1024) return r;
    if (n == STACK_MAX) {
      memmove(st, st + 1, sizeof st[0] * (STACK_MAX - 1));
      n--;
    }
    st[n++] = r;
  }
  return st[n - 1] == a || st[n - 1] == b ? tc_neg(st[n - 1]) : st[n - 1];
}

/* Values with the edge cases among them: NaN, +-Inf, -0, denormals, and plain numbers. */
static float value_of(uint8_t b) {
  switch (b % 16) {
  case 0: return NAN;
  case 1: return INFINITY;
  case 2: return -INFINITY;
  case 3: return -0.0f;
  case 4: return 1e-40f;
  default: return ((float)b - 128.0f) / 16.0f;
  }
}

static tc_tensor *input(const uint8_t *d, size_t n, size_t *at) {
  int64_t sizes[3];
  int rank = 1 + (*at < n ? d[*at] % 3 : 0);
  (*at)++;
  int64_t numel = 1;
  for (int i = 0; i < rank; i++) {
    sizes[i] = 1 + (*at < n ? d[*at] % 4 : 0);
    (*at)++;
    numel *= sizes[i];
  }
  float v[64];
  for (int64_t i = 0; i < numel; i++) v[i] = value_of(*at < n ? d[(*at + (size_t)i) % n] : (uint8_t)i);
  *at += (size_t)numel;
  return tc_from_host(v, TC_F32, rank, sizes);
}

static bool same_values(const tc_tensor *x, const tc_tensor *y) {
  int64_t n = tc_numel(x);
  if (tc_dtype_of(x) != TC_F32 || n > 4096) return true; /* only f32 results are compared */
  float *a = malloc(sizeof(float) * (size_t)(n ? n : 1)), *b = malloc(sizeof(float) * (size_t)(n ? n : 1));
  bool ok = a && b && tc_to_host(x, a, sizeof(float) * (size_t)n) == TC_OK && tc_to_host(y, b, sizeof(float) * (size_t)n) == TC_OK;
  for (int64_t i = 0; ok && i < n; i++) {
    if (isnan(a[i]) || isnan(b[i])) ok = isnan(a[i]) && isnan(b[i]);
    else if (isinf(a[i]) || isinf(b[i])) ok = a[i] == b[i] || fabsf(a[i] - b[i]) <= 1e-3f * fmaxf(fabsf(a[i]), fabsf(b[i]));
    else ok = fabsf(a[i] - b[i]) <= 1e-4f + 1e-3f * fabsf(a[i]);
  }
  free(a);
  free(b);
  return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  /* debug-eager alone on the plugin path: the other plugins' probes (a Vulkan driver's one-time
   * allocations) are not what this target tests */
  static char dir[] = "/tmp/tc-fuzz-plugins-XXXXXX";
  char cmd[512];
  if (!mkdtemp(dir)) return 0;
  snprintf(cmd, sizeof cmd, "cp '%s/tc-debug-eager.so' '%s/'", TC_FUZZ_PLUGIN_DIR, dir);
  if (system(cmd) != 0) return 0;
  setenv("TC_PLUGIN_PATH", dir, 1);
  setenv("TC_PLUGIN_DEFAULT_DIR", dir, 1);
  setenv("TC_CACHE_DIR", "/tmp/tc-fuzz-graph-cache", 1);
  /* The registry's scan and debug-eager's context live for the whole process: made here, not
   * inside the first input (where libFuzzer's leak check would count them). */
  static const uint8_t warm[] = {1, 2, 3, 0, 1, 2, 0, 5, 3, 1, 4, 2};
  for (int i = 0; i < 2; i++) LLVMFuzzerTestOneInput(warm, sizeof warm);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t at = 0;
  tc_scope *scope = tc_scope_open();
  tc_tensor *a = input(data, size, &at), *b = input(data, size, &at);
  g_prog = data + (at < size ? at : size);
  g_len = at < size ? size - at : 0;
  if (a && b) {
    tc_tensor *eager = prog(a, b);
    tc_compile_options o = {.struct_size = sizeof o, .backend = "debug-eager", .name = "fuzz"};
    tc_compiled *c = tc_compile(TC_FN(prog), 2, &o);
    tc_tensor *compiled = c ? tc_call(c, (tc_tensor *[]){a, b}) : NULL;
    if (eager && compiled) {
      bool shapes = tc_rank(eager) == tc_rank(compiled) && tc_dtype_of(eager) == tc_dtype_of(compiled);
      for (int d = 0; shapes && d < tc_rank(eager); d++) shapes = tc_size(eager, d) == tc_size(compiled, d);
      if (!shapes || !same_values(eager, compiled)) {
        fprintf(stderr, "fuzz_graph_compile: eager and compiled results differ\n");
        abort();
      }
    }
    tc_release(compiled);
    tc_compiled_free(c);
  }
  tc_scope_close(scope);
  tc_error_clear();
  return 0;
}
