/* test_debug_eager.c — the debug-eager plugin on its own: dlopen'd from the build tree through
 * the kit's test host (ABI 2), queried, and fed hand-built prim graphs (every prim family,
 * strided inputs, symbolic sizes, bad input). No part of the core is involved. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tc_kit.h"
#include "tc_plugin.h"

static tck_test_host *th;
static const tc_host_api *host;
static void *dl;
static tc_plugin_api api;
static tc_plugin_ctx *ctx;
static char last_error[2048];

/* An entry's result as a status; its message (or "") in last_error. Frees the error. */
static tc_status took(tc_error *e) {
  const char *m = "";
  tc_status st = tck_test_host_take(th, e, &m);
  snprintf(last_error, sizeof last_error, "%s", m ? m : "");
  return st;
}

/* dlsym returns an object pointer; copying it is the ISO-C-clean way to get the function. */
static tc_plugin_query_fn find_query(void) {
  void *sym = dlsym(dl, TC_PLUGIN_ENTRY_SYMBOL);
  tc_plugin_query_fn query;
  memcpy(&query, &sym, sizeof query);
  return query;
}

static void setup(void) {
  th = tck_test_host_new(NULL, NULL);
  cr_assert(th);
  host = tck_test_host_api(th);
  char err[512];
  cr_assert(tck_test_plugin_open(th, TC_BUILD_PLUGIN_DIR "/tc-debug-eager.so", &api, &dl, err, sizeof err), "%s",
            err);
  cr_assert(find_query(), "no %s", TC_PLUGIN_ENTRY_SYMBOL);
  tc_init_args a = {.struct_size = sizeof a, .host = host, .device = 0};
  cr_assert_eq(took(api.init(&a)), TC_OK, "%s", last_error);
  ctx = a.ctx;
  cr_assert(ctx);
}

static void teardown(void) {
  if (ctx) api.release(&(tc_release_args){.struct_size = sizeof(tc_release_args), .ctx = ctx});
  ctx = NULL;
  if (dl) dlclose(dl);
  dl = NULL;
  tck_test_host_free(th);
  th = NULL;
  host = NULL;
}

TestSuite(debug_eager, .init = setup, .fini = teardown);

/* ---------------------------------------------------------------- the ABI's entries */
static tc_status compile_graph(const tc_graph_desc *desc, tc_executable **exe) {
  tc_compile_args a = {.struct_size = sizeof a, .ctx = ctx, .graph = desc, .mode = TC_MODE_DEFAULT};
  last_error[0] = 0;
  tc_status s = took(api.compile(&a));
  *exe = a.exe;
  return s;
}

static tc_status run_graph(tc_executable *exe, int32_t n_syms, const int64_t *syms, int32_t n_inputs,
                           const tc_tensor_ref *ins, int32_t n_outputs, const tc_tensor_ref *outs) {
  tc_run_graph_args a = {.struct_size = sizeof a, .ctx = ctx, .exe = exe, .n_syms = n_syms, .syms = syms,
                         .n_inputs = n_inputs, .inputs = ins, .input_size = sizeof(tc_tensor_ref),
                         .n_outputs = n_outputs, .outputs = outs, .output_size = sizeof(tc_tensor_ref),
                         .call_id = 1};
  last_error[0] = 0;
  return took(api.run_graph(&a));
}

static void executable_free(tc_executable *exe) {
  api.executable_free(&(tc_executable_free_args){.struct_size = sizeof(tc_executable_free_args), .ctx = ctx,
                                                 .exe = exe});
}

/* ---------------------------------------------------------------- a small graph builder
 * Everything the descriptor points to (expressions, value types, their shapes, node operands
 * and attributes) lives in the builder. */
typedef struct gb {
  tc_size_expr exprs[64];
  int32_t n_exprs, n_syms;
  int32_t shapes[32][TC_MAX_RANK]; /* storage of every type's shape */
  int32_t n_shapes;
  tc_value_type inputs[8];
  int32_t n_inputs;
  tc_prim_node nodes[16];
  tc_value_type node_types[16];
  int32_t n_nodes;
  int32_t ins[16][8];
  int64_t attrs[16][24];
  int32_t outputs[4];
  int32_t n_outputs;
} gb;

static int32_t gb_expr(gb *g, int32_t op, int32_t a, int32_t b, int64_t value) {
  g->exprs[g->n_exprs] = (tc_size_expr){sizeof(tc_size_expr), op, a, b, value};
  return g->n_exprs++;
}
static int32_t gb_const(gb *g, int64_t v) { return gb_expr(g, TC_SX_CONST, 0, 0, v); }
static int32_t gb_sym(gb *g, int64_t k) {
  if (k + 1 > g->n_syms) g->n_syms = (int32_t)k + 1;
  return gb_expr(g, TC_SX_SYM, 0, 0, k);
}

/* A type whose shape is the given expression ids (copied into the builder). */
static tc_value_type gb_type_ids(gb *g, tc_dtype dt, int rank, const int32_t *ids) {
  int32_t *shape = g->shapes[g->n_shapes++];
  for (int d = 0; d < rank; d++) shape[d] = ids[d];
  return (tc_value_type){sizeof(tc_value_type), dt, rank, rank ? shape : NULL};
}

/* A type with static sizes. */
static tc_value_type gb_type(gb *g, tc_dtype dt, int rank, const int64_t *sizes) {
  int32_t ids[TC_MAX_RANK] = {0};
  for (int d = 0; d < rank; d++) ids[d] = gb_const(g, sizes[d]);
  return gb_type_ids(g, dt, rank, ids);
}

static int32_t gb_input(gb *g, tc_value_type t) {
  g->inputs[g->n_inputs] = t;
  return g->n_inputs++;
}

static int32_t gb_node(gb *g, tc_prim p, tc_value_type out, int n_in, const int32_t *in, int n_attr,
                       const int64_t *attr, double fattr) {
  int32_t i = g->n_nodes++;
  if (n_in) memcpy(g->ins[i], in, sizeof(int32_t) * (size_t)n_in);
  if (n_attr) memcpy(g->attrs[i], attr, sizeof(int64_t) * (size_t)n_attr);
  g->node_types[i] = out;
  g->nodes[i] = (tc_prim_node){sizeof(tc_prim_node), p, &g->node_types[i], n_in, g->ins[i], n_attr, g->attrs[i], fattr};
  return g->n_inputs + i;
}

static tc_graph_desc gb_desc(gb *g) {
  return (tc_graph_desc){.struct_size = sizeof(tc_graph_desc), .name = "test", .n_exprs = g->n_exprs,
                         .exprs = g->exprs, .expr_size = sizeof(tc_size_expr), .n_syms = g->n_syms,
                         .n_inputs = g->n_inputs, .inputs = g->inputs, .input_size = sizeof(tc_value_type),
                         .n_nodes = g->n_nodes, .nodes = g->nodes, .node_size = sizeof(tc_prim_node),
                         .n_outputs = g->n_outputs, .outputs = g->outputs};
}

static tc_tensor_ref ref_contiguous(void *data, tc_dtype dt, int rank, const int64_t *sizes) {
  tc_tensor_ref r = {sizeof r, (tc_buffer *)data, 0, dt, rank, {0}, {0}};
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    r.sizes[d] = sizes[d];
    r.strides[d] = s;
    s *= sizes[d];
  }
  return r;
}

static tc_status gb_run(gb *g, const int64_t *syms, const tc_tensor_ref *ins, const tc_tensor_ref *outs) {
  tc_graph_desc desc = gb_desc(g);
  tc_executable *exe = NULL;
  tc_status s = compile_graph(&desc, &exe);
  if (s != TC_OK) return s;
  s = run_graph(exe, g->n_syms, syms, g->n_inputs, ins, g->n_outputs, outs);
  executable_free(exe);
  return s;
}

/* One prim on contiguous operands, with static shapes. */
typedef struct operand {
  tc_dtype dt;
  int rank;
  int64_t sizes[TC_MAX_RANK];
  const void *data;
} operand;

static tc_status run_op(tc_prim p, operand out, int n_in, const operand *in, int n_attr, const int64_t *attr,
                        double fattr) {
  gb g = {0};
  int32_t ids[8];
  tc_tensor_ref refs[8];
  for (int k = 0; k < n_in; k++) {
    ids[k] = gb_input(&g, gb_type(&g, in[k].dt, in[k].rank, in[k].sizes));
    refs[k] = ref_contiguous((void *)in[k].data, in[k].dt, in[k].rank, in[k].sizes);
  }
  g.outputs[g.n_outputs++] = gb_node(&g, p, gb_type(&g, out.dt, out.rank, out.sizes), n_in, ids, n_attr, attr, fattr);
  tc_tensor_ref o = ref_contiguous((void *)out.data, out.dt, out.rank, out.sizes);
  last_error[0] = 0;
  return gb_run(&g, NULL, refs, &o);
}

#define F32(...) ((const float[]){__VA_ARGS__})
#define F64(...) ((const double[]){__VA_ARGS__})
#define I32(...) ((const int32_t[]){__VA_ARGS__})
#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define BOOLS(...) ((const uint8_t[]){__VA_ARGS__})

/* Exact comparison that also tells -0 from +0 and matches NaN with NaN. */
static void expect_f64(const double *got, const double *want, int n) {
  for (int i = 0; i < n; i++) {
    if (isnan(want[i])) {
      cr_expect(isnan(got[i]), "[%d]: got %g, want nan", i, got[i]);
      continue;
    }
    cr_expect(got[i] == want[i] && signbit(got[i]) == signbit(want[i]), "[%d]: got %.17g, want %.17g", i, got[i],
              want[i]);
  }
}

static void expect_f32(const float *got, const double *want, int n) {
  double g[64];
  for (int i = 0; i < n; i++) g[i] = got[i];
  expect_f64(g, want, n);
}

/* ---------------------------------------------------------------- the entry point */
Test(debug_eager, negotiation) {
  tc_plugin_query_fn query = find_query();
  cr_assert_str_eq(api.name, "debug-eager");
  cr_assert_eq(api.abi_major, TC_ABI_MAJOR);
  cr_assert_eq(api.handoff, TC_HANDOFF_GRAPH);
  cr_assert_eq(api.memory, TC_MEMORY_HOST);

  /* A host of a newer major: refused with an error naming the ABI; nothing written. */
  tc_host_api future = *host;
  future.abi_major = TC_ABI_MAJOR + 1;
  tc_plugin_api out;
  memset(&out, 0, sizeof out);
  tc_query_args qa = {.struct_size = sizeof qa, .abi_major = future.abi_major, .host = &future, .table = &out,
                      .table_size = sizeof out};
  cr_assert_eq(took(query(&qa)), TC_ERR_VERSION);
  cr_assert(strstr(last_error, "ABI"), "message: %s", last_error);
  cr_assert_eq(out.struct_size, 0);

  /* An older host with a smaller table: only that much is written. */
  size_t small_size = TC_STRUCT_SIZE(tc_plugin_api, buffer_read);
  _Alignas(tc_plugin_api) unsigned char buf[sizeof(tc_plugin_api) + 16];
  memset(buf, 0xAB, sizeof buf);
  tc_plugin_api *small = (tc_plugin_api *)(void *)buf;
  qa = (tc_query_args){.struct_size = sizeof qa, .abi_major = host->abi_major, .abi_minor = host->abi_minor,
                       .host = host, .table = small, .table_size = small_size};
  cr_assert_eq(took(query(&qa)), TC_OK, "%s", last_error);
  cr_assert_eq(small->struct_size, small_size);
  cr_assert(small->run_graph != NULL);
  for (size_t i = small_size; i < sizeof buf; i++) cr_assert_eq(buf[i], 0xAB, "byte %zu written", i);
}

Test(debug_eager, probe_and_capabilities) {
  tc_probe_args info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  info.host = host;
  cr_assert_eq(took(api.probe(&info)), TC_OK, "%s", last_error);
  cr_assert(info.available);
  cr_assert_eq(info.n_devices, 1);
  /* 2.0: capabilities are an extension of the plugin's table, not an entry */
  const tc_capabilities_ext *caps = (const tc_capabilities_ext *)tc_ext_find(api.extensions, TC_EXT_CAPABILITIES);
  cr_assert_not_null(caps, "debug-eager declares its capabilities");
  cr_assert_geq(caps->base.struct_size, sizeof(tc_capabilities_ext));
  cr_assert_gt(caps->n_prim_words, TC_PRIM_MATMUL / 64);
  cr_assert(caps->prims[TC_PRIM_MATMUL / 64] & (1ull << (TC_PRIM_MATMUL % 64)));
  cr_assert(caps->prims[0] & (1ull << TC_PRIM_NEG));
  cr_assert_eq(caps->dtypes & (1u << TC_F16), 0);
}

/* ---------------------------------------------------------------- elementwise */
#define UNARY_F64(prim, n, in_, want_)                                                             \
  do {                                                                                             \
    double out_[n];                                                                                \
    operand x_ = {TC_F64, 1, {n}, in_};                                                            \
    cr_assert_eq(run_op(prim, (operand){TC_F64, 1, {n}, out_}, 1, &x_, 0, NULL, 0), TC_OK, "%s", last_error); \
    expect_f64(out_, want_, n);                                                                    \
  } while (0)

Test(debug_eager, unary_float_edge_cases) {
  UNARY_F64(TC_PRIM_NEG, 3, F64(0.0, -0.0, INFINITY), F64(-0.0, 0.0, -INFINITY));
  UNARY_F64(TC_PRIM_ABS, 3, F64(-0.0, -2.5, -INFINITY), F64(0.0, 2.5, INFINITY));
  UNARY_F64(TC_PRIM_EXP, 4, F64(0.0, -INFINITY, INFINITY, NAN), F64(1.0, 0.0, INFINITY, NAN));
  UNARY_F64(TC_PRIM_LOG, 4, F64(1.0, 0.0, -1.0, INFINITY), F64(0.0, -INFINITY, NAN, INFINITY));
  UNARY_F64(TC_PRIM_SQRT, 4, F64(4.0, -0.0, -1.0, INFINITY), F64(2.0, -0.0, NAN, INFINITY));
  UNARY_F64(TC_PRIM_RSQRT, 4, F64(4.0, 0.0, -0.0, INFINITY), F64(0.5, INFINITY, -INFINITY, 0.0));
  UNARY_F64(TC_PRIM_SIN, 2, F64(0.0, -0.0), F64(0.0, -0.0));
  UNARY_F64(TC_PRIM_COS, 2, F64(0.0, INFINITY), F64(1.0, NAN));
  UNARY_F64(TC_PRIM_TANH, 3, F64(-0.0, INFINITY, -INFINITY), F64(-0.0, 1.0, -1.0));
  UNARY_F64(TC_PRIM_ERF, 3, F64(0.0, INFINITY, -INFINITY), F64(0.0, 1.0, -1.0));
  UNARY_F64(TC_PRIM_FLOOR, 4, F64(-0.5, 1.5, -0.0, NAN), F64(-1.0, 1.0, -0.0, NAN));
  UNARY_F64(TC_PRIM_CEIL, 4, F64(-0.5, 1.5, -0.0, INFINITY), F64(-0.0, 2.0, -0.0, INFINITY));
  UNARY_F64(TC_PRIM_ROUND, 6, F64(0.5, 1.5, 2.5, -0.5, -2.5, 2.6), F64(0.0, 2.0, 2.0, -0.0, -2.0, 3.0));
  UNARY_F64(TC_PRIM_SIGN, 5, F64(-2.0, -0.0, 0.0, NAN, INFINITY), F64(-1.0, -0.0, 0.0, NAN, 1.0));
  UNARY_F64(TC_PRIM_RECIPROCAL, 3, F64(4.0, -0.0, INFINITY), F64(0.25, -INFINITY, 0.0));
}

Test(debug_eager, unary_f32_int_and_bool) {
  float f[3];
  operand x = {TC_F32, 1, {3}, F32(1.0f, -1.0f, 0.5f)};
  cr_assert_eq(run_op(TC_PRIM_EXP, (operand){TC_F32, 1, {3}, f}, 1, &x, 0, NULL, 0), TC_OK);
  cr_expect_eq(f[0], (float)exp(1.0));
  cr_expect_eq(f[1], (float)exp(-1.0));

  int32_t i[4];
  operand xi = {TC_I32, 1, {4}, I32(INT32_MIN, -3, 0, 7)};
  cr_assert_eq(run_op(TC_PRIM_ABS, (operand){TC_I32, 1, {4}, i}, 1, &xi, 0, NULL, 0), TC_OK);
  cr_expect(i[0] == INT32_MIN && i[1] == 3 && i[2] == 0 && i[3] == 7); /* abs(INT_MIN) wraps */
  cr_assert_eq(run_op(TC_PRIM_SIGN, (operand){TC_I32, 1, {4}, i}, 1, &xi, 0, NULL, 0), TC_OK);
  cr_expect(i[0] == -1 && i[1] == -1 && i[2] == 0 && i[3] == 1);
  cr_assert_eq(run_op(TC_PRIM_NEG, (operand){TC_I32, 1, {4}, i}, 1, &xi, 0, NULL, 0), TC_OK);
  cr_expect(i[0] == INT32_MIN && i[1] == 3 && i[3] == -7);

  uint8_t b[3];
  operand xn = {TC_F64, 1, {3}, F64(NAN, 1.0, INFINITY)};
  cr_assert_eq(run_op(TC_PRIM_ISNAN, (operand){TC_BOOL, 1, {3}, b}, 1, &xn, 0, NULL, 0), TC_OK);
  cr_expect(b[0] == 1 && b[1] == 0 && b[2] == 0);
  operand xb = {TC_BOOL, 1, {3}, BOOLS(1, 0, 1)};
  cr_assert_eq(run_op(TC_PRIM_LOGICAL_NOT, (operand){TC_BOOL, 1, {3}, b}, 1, &xb, 0, NULL, 0), TC_OK);
  cr_expect(b[0] == 0 && b[1] == 1 && b[2] == 0);
}

static tc_status binary(tc_prim p, tc_dtype dt, tc_dtype out_dt, int n, const void *a, const void *b, void *out) {
  operand in[2] = {{dt, 1, {n}, a}, {dt, 1, {n}, b}};
  return run_op(p, (operand){out_dt, 1, {n}, out}, 2, in, 0, NULL, 0);
}

Test(debug_eager, binary_float_edge_cases) {
  double r[5];
  const double *a = F64(NAN, 1.0, -0.0, 0.0, 2.0), *b = F64(1.0, NAN, 0.0, -0.0, -3.0);
  cr_assert_eq(binary(TC_PRIM_MAX, TC_F64, TC_F64, 5, a, b, r), TC_OK);
  expect_f64(r, F64(NAN, NAN, 0.0, 0.0, 2.0), 5);
  cr_assert_eq(binary(TC_PRIM_MIN, TC_F64, TC_F64, 5, a, b, r), TC_OK);
  expect_f64(r, F64(NAN, NAN, -0.0, -0.0, -3.0), 5);

  /* remainder takes the divisor's sign; a zero result keeps fmod's (the dividend's) sign */
  cr_assert_eq(binary(TC_PRIM_REMAINDER, TC_F64, TC_F64, 5, F64(5.0, -5.0, 5.0, -3.0, 1.0),
                      F64(3.0, 3.0, -3.0, 3.0, 0.0), r), TC_OK);
  expect_f64(r, F64(2.0, 1.0, -1.0, -0.0, NAN), 5);
  cr_assert_eq(binary(TC_PRIM_DIV, TC_F64, TC_F64, 4, F64(1.0, -1.0, 0.0, 6.0), F64(0.0, 0.0, 0.0, -3.0), r), TC_OK);
  expect_f64(r, F64(INFINITY, -INFINITY, NAN, -2.0), 4);
  cr_assert_eq(binary(TC_PRIM_POW, TC_F64, TC_F64, 4, F64(2.0, NAN, 1.0, -8.0), F64(10.0, 0.0, NAN, 1.0 / 3), r),
               TC_OK);
  expect_f64(r, F64(1024.0, 1.0, 1.0, NAN), 4);
  cr_assert_eq(binary(TC_PRIM_SUB, TC_F64, TC_F64, 2, F64(INFINITY, 0.0), F64(INFINITY, 0.0), r), TC_OK);
  expect_f64(r, F64(NAN, 0.0), 2);

  uint8_t c[3];
  const double *x = F64(NAN, 1.0, 2.0), *y = F64(NAN, 1.0, 1.0);
  cr_assert_eq(binary(TC_PRIM_EQ, TC_F64, TC_BOOL, 3, x, y, c), TC_OK);
  cr_expect(c[0] == 0 && c[1] == 1 && c[2] == 0);
  cr_assert_eq(binary(TC_PRIM_NE, TC_F64, TC_BOOL, 3, x, y, c), TC_OK);
  cr_expect(c[0] == 1 && c[1] == 0 && c[2] == 1);
  cr_assert_eq(binary(TC_PRIM_GE, TC_F64, TC_BOOL, 3, x, y, c), TC_OK);
  cr_expect(c[0] == 0 && c[1] == 1 && c[2] == 1);
  cr_assert_eq(binary(TC_PRIM_LT, TC_F64, TC_BOOL, 3, x, y, c), TC_OK);
  cr_expect(c[0] == 0 && c[1] == 0 && c[2] == 0);
}

Test(debug_eager, binary_integers) {
  int32_t r[5];
  const int32_t *a = I32(7, -7, 7, -7, INT32_MIN), *b = I32(2, 2, -2, 0, -1);
  cr_assert_eq(binary(TC_PRIM_DIV, TC_I32, TC_I32, 5, a, b, r), TC_OK);
  cr_expect(r[0] == 3 && r[1] == -3 && r[2] == -3 && r[3] == 0 && r[4] == INT32_MIN, "%d %d %d %d %d", r[0], r[1],
            r[2], r[3], r[4]);
  cr_assert_eq(binary(TC_PRIM_REMAINDER, TC_I32, TC_I32, 5, a, b, r), TC_OK);
  cr_expect(r[0] == 1 && r[1] == 1 && r[2] == -1 && r[3] == 0 && r[4] == 0, "%d %d %d %d %d", r[0], r[1], r[2], r[3],
            r[4]);
  cr_assert_eq(binary(TC_PRIM_ADD, TC_I32, TC_I32, 1, I32(INT32_MAX), I32(1), r), TC_OK);
  cr_expect_eq(r[0], INT32_MIN);
  int64_t q[2];
  cr_assert_eq(binary(TC_PRIM_DIV, TC_I64, TC_I64, 2, I64(INT64_MIN, 9), I64(-1, 4), q), TC_OK);
  cr_expect(q[0] == INT64_MIN && q[1] == 2);
  cr_assert_eq(binary(TC_PRIM_AND, TC_I64, TC_I64, 1, I64(12), I64(10), q), TC_OK);
  cr_expect_eq(q[0], 8);
  cr_assert_eq(binary(TC_PRIM_OR, TC_I64, TC_I64, 1, I64(12), I64(10), q), TC_OK);
  cr_expect_eq(q[0], 14);
  uint8_t c[2];
  cr_assert_eq(binary(TC_PRIM_AND, TC_BOOL, TC_BOOL, 2, BOOLS(1, 1), BOOLS(1, 0), c), TC_OK);
  cr_expect(c[0] == 1 && c[1] == 0);
  cr_assert_eq(binary(TC_PRIM_EQ, TC_BOOL, TC_BOOL, 2, BOOLS(1, 1), BOOLS(1, 0), c), TC_OK);
  cr_expect(c[0] == 1 && c[1] == 0);
}

Test(debug_eager, where_and_convert) {
  float r[3];
  operand w[3] = {{TC_BOOL, 1, {3}, BOOLS(1, 0, 1)}, {TC_F32, 1, {3}, F32(1, 2, 3)}, {TC_F32, 1, {3}, F32(-1, -2, -3)}};
  cr_assert_eq(run_op(TC_PRIM_WHERE, (operand){TC_F32, 1, {3}, r}, 3, w, 0, NULL, 0), TC_OK);
  expect_f32(r, F64(1, -2, 3), 3);

  int32_t i[7];
  operand x = {TC_F64, 1, {7}, F64(NAN, 3.9, -3.9, INFINITY, -INFINITY, 1e20, -0.0)};
  cr_assert_eq(run_op(TC_PRIM_CONVERT, (operand){TC_I32, 1, {7}, i}, 1, &x, 0, NULL, 0), TC_OK);
  cr_expect(i[0] == 0 && i[1] == 3 && i[2] == -3 && i[3] == INT32_MAX && i[4] == INT32_MIN && i[5] == INT32_MAX &&
            i[6] == 0);
  uint8_t b[4];
  operand y = {TC_F64, 1, {4}, F64(0.0, -0.0, NAN, 0.5)};
  cr_assert_eq(run_op(TC_PRIM_CONVERT, (operand){TC_BOOL, 1, {4}, b}, 1, &y, 0, NULL, 0), TC_OK);
  cr_expect(b[0] == 0 && b[1] == 0 && b[2] == 1 && b[3] == 1);
  double d[2];
  operand z = {TC_BOOL, 1, {2}, BOOLS(1, 0)};
  cr_assert_eq(run_op(TC_PRIM_CONVERT, (operand){TC_F64, 1, {2}, d}, 1, &z, 0, NULL, 0), TC_OK);
  expect_f64(d, F64(1.0, 0.0), 2);
  operand big = {TC_I64, 1, {1}, I64(((int64_t)1 << 32) + 5)};
  cr_assert_eq(run_op(TC_PRIM_CONVERT, (operand){TC_I32, 1, {1}, i}, 1, &big, 0, NULL, 0), TC_OK);
  cr_expect_eq(i[0], 5); /* i64 -> i32 keeps the low 32 bits */
  float f[1];
  operand third = {TC_F64, 1, {1}, F64(1.0 / 3)};
  cr_assert_eq(run_op(TC_PRIM_CONVERT, (operand){TC_F32, 1, {1}, f}, 1, &third, 0, NULL, 0), TC_OK);
  cr_expect_eq(f[0], 1.0f / 3);
}

/* ---------------------------------------------------------------- reductions */
Test(debug_eager, reductions) {
  /* x: 2x3x2 = 0..11 */
  const double *x = F64(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
  operand in = {TC_F64, 3, {2, 3, 2}, x};
  double r[6];
  cr_assert_eq(run_op(TC_PRIM_REDUCE_SUM, (operand){TC_F64, 1, {3}, r}, 1, &in, 2, I64(0, 2), 0), TC_OK);
  expect_f64(r, F64(0 + 1 + 6 + 7, 2 + 3 + 8 + 9, 4 + 5 + 10 + 11), 3);
  cr_assert_eq(run_op(TC_PRIM_REDUCE_PROD, (operand){TC_F64, 2, {2, 2}, r}, 1, &in, 1, I64(1), 0), TC_OK);
  expect_f64(r, F64(0, 1 * 3 * 5, 6 * 8 * 10, 7 * 9 * 11), 4);
  cr_assert_eq(run_op(TC_PRIM_REDUCE_MAX, (operand){TC_F64, 0, {0}, r}, 1, &in, 3, I64(0, 1, 2), 0), TC_OK);
  expect_f64(r, F64(11), 1);

  operand nan_in = {TC_F32, 2, {2, 3}, F32(1, NAN, 3, -0.0f, 0.0f, -0.0f)};
  float f[2];
  cr_assert_eq(run_op(TC_PRIM_REDUCE_MAX, (operand){TC_F32, 1, {2}, f}, 1, &nan_in, 1, I64(1), 0), TC_OK);
  expect_f32(f, F64(NAN, 0.0), 2);
  cr_assert_eq(run_op(TC_PRIM_REDUCE_MIN, (operand){TC_F32, 1, {2}, f}, 1, &nan_in, 1, I64(1), 0), TC_OK);
  expect_f32(f, F64(NAN, -0.0), 2);

  /* empty reductions give the identity */
  operand empty = {TC_F64, 2, {2, 0}, F64(0)};
  cr_assert_eq(run_op(TC_PRIM_REDUCE_SUM, (operand){TC_F64, 1, {2}, r}, 1, &empty, 1, I64(1), 0), TC_OK);
  expect_f64(r, F64(0, 0), 2);
  cr_assert_eq(run_op(TC_PRIM_REDUCE_PROD, (operand){TC_F64, 1, {2}, r}, 1, &empty, 1, I64(1), 0), TC_OK);
  expect_f64(r, F64(1, 1), 2);
  cr_assert_eq(run_op(TC_PRIM_REDUCE_MAX, (operand){TC_F64, 1, {2}, r}, 1, &empty, 1, I64(1), 0), TC_OK);
  expect_f64(r, F64(-INFINITY, -INFINITY), 2);
  cr_assert_eq(run_op(TC_PRIM_REDUCE_MIN, (operand){TC_F64, 1, {2}, r}, 1, &empty, 1, I64(1), 0), TC_OK);
  expect_f64(r, F64(INFINITY, INFINITY), 2);
  int32_t i[2];
  operand empty_i = {TC_I32, 2, {2, 0}, I32(0)};
  cr_assert_eq(run_op(TC_PRIM_REDUCE_MAX, (operand){TC_I32, 1, {2}, i}, 1, &empty_i, 1, I64(1), 0), TC_OK);
  cr_expect(i[0] == INT32_MIN && i[1] == INT32_MIN);

  /* float sums accumulate in double: 1 + 1e-8 * 4 is kept even in f32's neighbourhood */
  operand small = {TC_F32, 1, {5}, F32(1.0f, 1e-8f, 1e-8f, 1e-8f, 1e-8f)};
  cr_assert_eq(run_op(TC_PRIM_REDUCE_SUM, (operand){TC_F32, 0, {0}, f}, 1, &small, 1, I64(0), 0), TC_OK);
  cr_expect_eq(f[0], (float)(1.0 + 4 * (double)1e-8f));
}

Test(debug_eager, argmax_argmin) {
  operand x = {TC_F64, 2, {3, 4}, F64(1, 3, 3, 2, /**/ 5, NAN, 7, NAN, /**/ -1, -1, -2, -2)};
  int64_t r[3];
  cr_assert_eq(run_op(TC_PRIM_ARGMAX, (operand){TC_I64, 1, {3}, r}, 1, &x, 1, I64(1), 0), TC_OK);
  cr_expect(r[0] == 1 && r[1] == 1 && r[2] == 0, "%lld %lld %lld", (long long)r[0], (long long)r[1], (long long)r[2]);
  cr_assert_eq(run_op(TC_PRIM_ARGMIN, (operand){TC_I64, 1, {3}, r}, 1, &x, 1, I64(1), 0), TC_OK);
  cr_expect(r[0] == 0 && r[1] == 1 && r[2] == 2);
  int64_t c[4];
  cr_assert_eq(run_op(TC_PRIM_ARGMAX, (operand){TC_I64, 1, {4}, c}, 1, &x, 1, I64(0), 0), TC_OK);
  cr_expect(c[0] == 1 && c[1] == 1 && c[2] == 1 && c[3] == 1);
}

/* ---------------------------------------------------------------- movement */
Test(debug_eager, movement) {
  const int32_t *x = I32(0, 1, 2, 3, 4, 5); /* 2x3 */
  operand in = {TC_I32, 2, {2, 3}, x};
  int32_t r[24];
  cr_assert_eq(run_op(TC_PRIM_RESHAPE, (operand){TC_I32, 2, {3, 2}, r}, 1, &in, 0, NULL, 0), TC_OK);
  cr_expect(r[0] == 0 && r[5] == 5);
  cr_assert_eq(run_op(TC_PRIM_PERMUTE, (operand){TC_I32, 2, {3, 2}, r}, 1, &in, 2, I64(1, 0), 0), TC_OK);
  cr_expect(!memcmp(r, I32(0, 3, 1, 4, 2, 5), 6 * sizeof(int32_t)));
  cr_assert_eq(run_op(TC_PRIM_REVERSE, (operand){TC_I32, 2, {2, 3}, r}, 1, &in, 1, I64(1), 0), TC_OK);
  cr_expect(!memcmp(r, I32(2, 1, 0, 5, 4, 3), 6 * sizeof(int32_t)));
  cr_assert_eq(run_op(TC_PRIM_SLICE, (operand){TC_I32, 2, {1, 2}, r}, 1, &in, 4, I64(1, 0, 1, 2), 0), TC_OK);
  cr_expect(r[0] == 3 && r[1] == 5);
  cr_assert_eq(run_op(TC_PRIM_PAD, (operand){TC_I32, 2, {3, 4}, r}, 1, &in, 4, I64(1, 0, 0, 1), -7), TC_OK);
  cr_expect(!memcmp(r, I32(-7, -7, -7, -7, 0, 1, 2, -7, 3, 4, 5, -7), 12 * sizeof(int32_t)));
  operand col = {TC_I32, 2, {2, 1}, I32(10, 20)};
  cr_assert_eq(run_op(TC_PRIM_BROADCAST_IN_DIM, (operand){TC_I32, 3, {2, 2, 3}, r}, 1, &col, 2, I64(1, 2), 0), TC_OK);
  cr_expect(!memcmp(r, I32(10, 10, 10, 20, 20, 20, 10, 10, 10, 20, 20, 20), 12 * sizeof(int32_t)));
  operand cat[3] = {in, col, {TC_I32, 2, {2, 0}, I32(0)}};
  cr_assert_eq(run_op(TC_PRIM_CONCATENATE, (operand){TC_I32, 2, {2, 4}, r}, 3, cat, 1, I64(1), 0), TC_OK);
  cr_expect(!memcmp(r, I32(0, 1, 2, 10, 3, 4, 5, 20), 8 * sizeof(int32_t)));
  double pd[3];
  operand d = {TC_F64, 1, {1}, F64(1.5)};
  cr_assert_eq(run_op(TC_PRIM_PAD, (operand){TC_F64, 1, {3}, pd}, 1, &d, 2, I64(1, 1), -INFINITY), TC_OK);
  expect_f64(pd, F64(-INFINITY, 1.5, -INFINITY), 3);
}

/* ---------------------------------------------------------------- indexing */
Test(debug_eager, gather_and_scatter_add) {
  operand x = {TC_F32, 2, {2, 3}, F32(1, 2, 3, 4, 5, 6)};
  operand idx = {TC_I64, 2, {2, 2}, I64(2, 0, -1, 3)};
  operand g_in[2] = {x, idx};
  float r[6];
  cr_assert_eq(run_op(TC_PRIM_GATHER, (operand){TC_F32, 2, {2, 2}, r}, 2, g_in, 1, I64(1), 0), TC_OK);
  expect_f32(r, F64(3, 1, 0, 0), 4); /* out-of-range indices read 0 */

  operand idx0 = {TC_I32, 2, {1, 3}, I32(1, 0, 1)};
  operand g0[2] = {x, idx0};
  cr_assert_eq(run_op(TC_PRIM_GATHER, (operand){TC_F32, 2, {1, 3}, r}, 2, g0, 1, I64(0), 0), TC_OK);
  expect_f32(r, F64(4, 2, 6), 3);

  operand sidx = {TC_I64, 2, {2, 3}, I64(0, 0, 5, 2, -1, 2)};
  operand src = {TC_F32, 2, {2, 3}, F32(10, 20, 30, 40, 50, 60)};
  operand s_in[3] = {x, sidx, src};
  cr_assert_eq(run_op(TC_PRIM_SCATTER_ADD, (operand){TC_F32, 2, {2, 3}, r}, 3, s_in, 1, I64(1), 0), TC_OK);
  expect_f32(r, F64(31, 2, 3, 4, 5, 106), 6);
}

/* ---------------------------------------------------------------- creation */
Test(debug_eager, iota_constant_random) {
  int64_t r[6];
  cr_assert_eq(run_op(TC_PRIM_IOTA, (operand){TC_I64, 2, {2, 3}, r}, 0, NULL, 1, I64(1), 0), TC_OK);
  cr_expect(!memcmp(r, I64(0, 1, 2, 0, 1, 2), 6 * sizeof(int64_t)));
  float f[4];
  cr_assert_eq(run_op(TC_PRIM_IOTA, (operand){TC_F32, 2, {2, 2}, f}, 0, NULL, 1, I64(0), 0), TC_OK);
  expect_f32(f, F64(0, 0, 1, 1), 4);
  cr_assert_eq(run_op(TC_PRIM_CONSTANT, (operand){TC_F32, 1, {3}, f}, 0, NULL, 1, I64(-1), -0.0), TC_OK);
  expect_f32(f, F64(-0.0, -0.0, -0.0), 3);

  /* Philox4x32-10, key 0, counter 0: Random123's known answer, word 0 = 0x6627e8d5 */
  double d[3];
  cr_assert_eq(run_op(TC_PRIM_RANDOM, (operand){TC_F64, 1, {3}, d}, 0, NULL, 2, I64(0, 0), 0), TC_OK);
  cr_expect_eq(d[0], (double)(0x6627e8d5u >> 8) * 0x1p-24);
  cr_assert_eq(run_op(TC_PRIM_RANDOM, (operand){TC_F32, 1, {3}, f}, 0, NULL, 2, I64(0, 0), 0), TC_OK);
  for (int i = 0; i < 3; i++) cr_expect_eq((double)f[i], d[i], "f32 and f64 differ at %d", i);
  double e[2];
  cr_assert_eq(run_op(TC_PRIM_RANDOM, (operand){TC_F64, 1, {2}, e}, 0, NULL, 2, I64(0, 1), 0), TC_OK);
  cr_expect(e[0] == d[1] && e[1] == d[2], "offset shifts the counter");
  cr_assert_eq(run_op(TC_PRIM_RANDOM, (operand){TC_F64, 1, {2}, e}, 0, NULL, 2, I64(1, 0), 0), TC_OK);
  cr_expect(e[0] != d[0] && e[0] >= 0 && e[0] < 1);
}

/* ---------------------------------------------------------------- matmul */
Test(debug_eager, matmul_batched_strided) {
  /* a: 2x2x3, b given as b^T storage (2x2x3 read with swapped strides) -> b: 2x3x2 */
  const float *a = F32(1, 2, 3, 4, 5, 6, /**/ 1, 0, 0, 0, 1, 0);
  const float *bt = F32(1, 0, 1, 0, 1, 1, /**/ 2, 3, 4, 5, 6, 7);
  gb g = {0};
  int32_t ia = gb_input(&g, gb_type(&g, TC_F32, 3, I64(2, 2, 3)));
  int32_t ib = gb_input(&g, gb_type(&g, TC_F32, 3, I64(2, 3, 2)));
  g.outputs[g.n_outputs++] = gb_node(&g, TC_PRIM_MATMUL, gb_type(&g, TC_F32, 3, I64(2, 2, 2)), 2, (int32_t[]){ia, ib},
                                     0, NULL, 0);
  tc_tensor_ref refs[2] = {ref_contiguous((void *)a, TC_F32, 3, I64(2, 2, 3)),
                           {sizeof(tc_tensor_ref), (tc_buffer *)bt, 0, TC_F32, 3, {2, 3, 2}, {6, 1, 3}}};
  float c[8];
  tc_tensor_ref o = ref_contiguous(c, TC_F32, 3, I64(2, 2, 2));
  cr_assert_eq(gb_run(&g, NULL, refs, &o), TC_OK, "%s", last_error);
  /* batch 0: b = [[1,0],[0,1],[1,1]]; batch 1: b = [[2,5],[3,6],[4,7]] */
  expect_f32(c, F64(4, 5, 10, 11, /**/ 2, 5, 3, 6), 8);
}

/* ---------------------------------------------------------------- strided inputs */
Test(debug_eager, strided_inputs) {
  /* x = storage[1:] read backwards with stride -2 from element 7: 7, 5, 3; y broadcast (stride 0) */
  const double *storage = F64(0, 1, 2, 3, 4, 5, 6, 7);
  gb g = {0};
  int32_t ix = gb_input(&g, gb_type(&g, TC_F64, 2, I64(2, 3)));
  int32_t iy = gb_input(&g, gb_type(&g, TC_F64, 2, I64(2, 3)));
  g.outputs[g.n_outputs++] = gb_node(&g, TC_PRIM_ADD, gb_type(&g, TC_F64, 2, I64(2, 3)), 2, (int32_t[]){ix, iy}, 0,
                                     NULL, 0);
  tc_tensor_ref refs[2] = {{sizeof(tc_tensor_ref), (tc_buffer *)storage, 7, TC_F64, 2, {2, 3}, {-1, -2}},
                           {sizeof(tc_tensor_ref), (tc_buffer *)F64(100, 200, 300), 0, TC_F64, 2, {2, 3}, {0, 1}}};
  double r[6];
  tc_tensor_ref o = ref_contiguous(r, TC_F64, 2, I64(2, 3));
  cr_assert_eq(gb_run(&g, NULL, refs, &o), TC_OK, "%s", last_error);
  expect_f64(r, F64(107, 205, 303, 106, 204, 302), 6);
}

/* ---------------------------------------------------------------- symbolic sizes, multi-node */
Test(debug_eager, symbolic_sizes_and_mean) {
  /* mean over a dynamic dim: sum(x, 1) / constant(size s1), x: s0 x s1; one executable, two sizes */
  gb g = {0};
  int32_t s0 = gb_sym(&g, 0), s1 = gb_sym(&g, 1);
  tc_value_type tx = gb_type_ids(&g, TC_F32, 2, (int32_t[]){s0, s1});
  tc_value_type trow = gb_type_ids(&g, TC_F32, 1, (int32_t[]){s0});
  int32_t x = gb_input(&g, tx);
  int32_t sum = gb_node(&g, TC_PRIM_REDUCE_SUM, trow, 1, &x, 1, I64(1), 0);
  int32_t n = gb_node(&g, TC_PRIM_CONSTANT, trow, 0, NULL, 1, (int64_t[]){s1}, 0);
  int32_t mean = gb_node(&g, TC_PRIM_DIV, trow, 2, (int32_t[]){sum, n}, 0, NULL, 0);
  g.outputs[g.n_outputs++] = mean;
  g.outputs[g.n_outputs++] = x;   /* a graph input as an output: copied */
  g.outputs[g.n_outputs++] = mean; /* the same value twice */
  tc_graph_desc desc = gb_desc(&g);
  tc_executable *exe = NULL;
  cr_assert_eq(compile_graph(&desc, &exe), TC_OK, "%s", last_error);
  memset(&g, 0xFF, sizeof g); /* the descriptor was borrowed only during compile_graph */

  const float *data = F32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
  for (int trial = 0; trial < 2; trial++) {
    int64_t syms[2] = {trial ? 3 : 2, trial ? 4 : 6};
    float m[3], m2[3], copy[12];
    tc_tensor_ref in = ref_contiguous((void *)data, TC_F32, 2, syms);
    tc_tensor_ref outs[3] = {ref_contiguous(m, TC_F32, 1, syms), ref_contiguous(copy, TC_F32, 2, syms),
                             ref_contiguous(m2, TC_F32, 1, syms)};
    cr_assert_eq(run_graph(exe, 2, syms, 1, &in, 3, outs), TC_OK, "%s", last_error);
    if (trial == 0) expect_f32(m, F64(3.5, 9.5), 2);
    else expect_f32(m, F64(2.5, 6.5, 10.5), 3);
    cr_expect(!memcmp(m, m2, sizeof(float) * (size_t)syms[0]));
    cr_expect(!memcmp(copy, data, sizeof(float) * 12));
  }
  /* run-time checks: an input of the wrong size */
  int64_t syms[2] = {2, 6};
  float m[2], m2[2], copy[12];
  tc_tensor_ref in = ref_contiguous((void *)data, TC_F32, 2, I64(3, 4));
  tc_tensor_ref outs[3] = {ref_contiguous(m, TC_F32, 1, syms), ref_contiguous(copy, TC_F32, 2, syms),
                           ref_contiguous(m2, TC_F32, 1, syms)};
  cr_assert_eq(run_graph(exe, 2, syms, 1, &in, 3, outs), TC_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(last_error, "input 0"), "message: %s", last_error);
  executable_free(exe);
}

Test(debug_eager, chained_intermediates) {
  /* y = exp(-(x * x)) summed; every intermediate is a malloc'd buffer freed after its last use */
  gb g = {0};
  tc_value_type t = gb_type(&g, TC_F64, 1, I64(4));
  tc_value_type scalar = gb_type(&g, TC_F64, 0, NULL);
  int32_t x = gb_input(&g, t);
  int32_t sq = gb_node(&g, TC_PRIM_MUL, t, 2, (int32_t[]){x, x}, 0, NULL, 0);
  int32_t ng = gb_node(&g, TC_PRIM_NEG, t, 1, &sq, 0, NULL, 0);
  int32_t ex = gb_node(&g, TC_PRIM_EXP, t, 1, &ng, 0, NULL, 0);
  g.outputs[g.n_outputs++] = gb_node(&g, TC_PRIM_REDUCE_SUM, scalar, 1, &ex, 1, I64(0), 0);
  double r;
  tc_tensor_ref in = ref_contiguous((void *)F64(0, 1, -1, 2), TC_F64, 1, I64(4));
  tc_tensor_ref o = ref_contiguous(&r, TC_F64, 0, NULL);
  cr_assert_eq(gb_run(&g, NULL, &in, &o), TC_OK, "%s", last_error);
  cr_expect_float_eq(r, 1 + 2 * exp(-1.0) + exp(-4.0), 1e-15);
}

/* ---------------------------------------------------------------- bad input */
Test(debug_eager, errors_are_values) {
  float r[2];
  operand xi = {TC_I32, 1, {2}, I32(1, 2)};
  cr_assert_eq(run_op(TC_PRIM_EXP, (operand){TC_I32, 1, {2}, r}, 1, &xi, 0, NULL, 0), TC_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(last_error, "exp") && strstr(last_error, "i32"), "message: %s", last_error);

  operand xf = {TC_F32, 1, {2}, F32(1, 2)};
  /* docs/primitives.md: an unknown prim id is declined (TC_ERR_UNSUPPORTED), not bad input */
  cr_assert_eq(run_op((tc_prim)120, (operand){TC_F32, 1, {2}, r}, 1, &xf, 0, NULL, 0), TC_ERR_UNSUPPORTED, "%s",
               last_error);
  cr_assert(strstr(last_error, "120"), "message: %s", last_error);

  operand mixed[2] = {xf, xi};
  cr_assert_eq(run_op(TC_PRIM_ADD, (operand){TC_F32, 1, {2}, r}, 2, mixed, 0, NULL, 0), TC_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(last_error, "differ"), "message: %s", last_error);

  operand m2 = {TC_F32, 2, {1, 2}, F32(1, 2)};
  cr_assert_eq(run_op(TC_PRIM_PERMUTE, (operand){TC_F32, 2, {2, 1}, r}, 1, &m2, 2, I64(0, 0), 0),
               TC_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(last_error, "perm"), "message: %s", last_error);
  cr_assert_eq(run_op(TC_PRIM_REDUCE_SUM, (operand){TC_F32, 0, {0}, r}, 1, &m2, 2, I64(1, 0), 0),
               TC_ERR_INVALID_ARGUMENT);
  cr_assert_eq(run_op(TC_PRIM_RESHAPE, (operand){TC_F32, 1, {3}, r}, 1, &m2, 0, NULL, 0), TC_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(last_error, "element counts"), "message: %s", last_error);
  cr_assert_eq(run_op(TC_PRIM_SLICE, (operand){TC_F32, 2, {1, 2}, r}, 1, &m2, 4, I64(0, 1, 1, 1), 0),
               TC_ERR_INVALID_ARGUMENT);
  cr_assert_eq(run_op(TC_PRIM_ADD, (operand){TC_F32, 1, {2}, r}, 1, &xf, 0, NULL, 0), TC_ERR_INVALID_ARGUMENT);
  cr_assert_eq(run_op(TC_PRIM_RANDOM, (operand){TC_I32, 1, {2}, r}, 0, NULL, 2, I64(0, 0), 0), TC_ERR_INVALID_ARGUMENT);

  /* a node reading a value defined after it, and a symbol that does not exist */
  gb g = {0};
  tc_value_type t = gb_type(&g, TC_F32, 1, I64(2));
  int32_t x = gb_input(&g, t);
  g.outputs[g.n_outputs++] = gb_node(&g, TC_PRIM_NEG, t, 1, (int32_t[]){x + 1}, 0, NULL, 0);
  tc_graph_desc desc = gb_desc(&g);
  tc_executable *exe = NULL;
  cr_assert_eq(compile_graph(&desc, &exe), TC_ERR_INVALID_ARGUMENT);
  cr_assert_null(exe);
  g.nodes[0].inputs = g.ins[0];
  g.ins[0][0] = x;
  g.exprs[0] = (tc_size_expr){sizeof(tc_size_expr), TC_SX_SYM, 0, 0, 3};
  desc = gb_desc(&g);
  cr_assert_eq(compile_graph(&desc, &exe), TC_ERR_INVALID_ARGUMENT);
  cr_assert_null(exe);
  cr_assert(strstr(last_error, "symbol"), "message: %s", last_error);
}
